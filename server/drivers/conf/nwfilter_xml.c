/* Network filter definitions (nwfilter_xml.h). */
#include "server/drivers/conf/nwfilter_xml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NWFILTER, (code), __VA_ARGS__)

enum {
    RULE_PRIORITY_DEFAULT = 500,
    PRIORITY_MIN = -1000, PRIORITY_MAX = 1000,
};

/* The chain prefixes libvirt knows, with their default priorities. */
static const struct {
    const char *prefix;
    int priority;
} chains[] = {
    { "stp", -810 }, { "mac", -800 }, { "vlan", -750 }, { "ipv4", -700 },
    { "ipv6", -600 }, { "arp", -500 }, { "rarp", -400 },
};

static const char *const actions[] = { "drop", "accept", "reject", "return", "continue" };
static const char *const directions[] = { "in", "out", "inout" };
/* The protocols a rule may match; a rule keeps the first it names. */
static const char *const protocols[] = {
    "mac", "vlan", "stp", "arp", "rarp", "ip", "ipv6", "tcp", "udp", "sctp", "icmp", "igmp",
    "esp", "ah", "udplite", "all", "tcp-ipv6", "udp-ipv6", "sctp-ipv6", "icmpv6", "esp-ipv6",
    "ah-ipv6", "udplite-ipv6", "all-ipv6",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static int in_list(const char *const *list, size_t n, const char *word)
{
    for (size_t i = 0; word && i < n; i++)
        if (strcmp(list[i], word) == 0)
            return (int)i;
    return -1;
}

static void put_attr(FILE *fp, const char *name, const char *value)
{
    fprintf(fp, " %s='", name);
    rv_xml_put_escaped(fp, value);
    fputc('\'', fp);
}

/* Every attribute of n, in the document's order. */
static int put_all_attrs(FILE *fp, const xmlNode *n)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        xmlChar *v = xmlNodeGetContent((const xmlNode *)a);
        if (!v)
            return -1;
        put_attr(fp, (const char *)a->name, (const char *)v);
        xmlFree(v);
    }
    return 0;
}

/* A decimal integer in [min, max]; 0 when it is not one. */
static int parse_int(const char *text, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return 0;
    *out = (int)v;
    return 1;
}

static int format_rule(FILE *fp, xmlNode *rule, rv_err *err)
{
    int failed = 0, rc = -1, prio = RULE_PRIORITY_DEFAULT;
    char *action = rv_lx_attr(rule, "action", &failed);
    char *direction = rv_lx_attr(rule, "direction", &failed);
    char *priority = rv_lx_attr(rule, "priority", &failed);
    char *statematch = rv_lx_attr(rule, "statematch", &failed);
    if (failed)
        oom(err);
    else if (!action)
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: rule node requires action attribute");
    else if (!direction)
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: rule node requires direction attribute");
    else if (in_list(actions, COUNT(actions), action) < 0)
        fail(err, RV_ERR_CONFIG_UNSUPPORTED,
             "unsupported configuration: unknown rule action attribute value");
    else if (in_list(directions, COUNT(directions), direction) < 0)
        fail(err, RV_ERR_CONFIG_UNSUPPORTED,
             "unsupported configuration: unknown rule direction attribute value");
    else
        rc = 0;
    if (rc == 0) {
        /* Out of range: the default, silently, as libvirt does. */
        if (priority)
            parse_int(priority, PRIORITY_MIN, PRIORITY_MAX, &prio);
        fprintf(fp, "  <rule action='%s' direction='%s' priority='%d'%s", action, direction, prio,
                statematch && (strcmp(statematch, "0") == 0 || strcmp(statematch, "false") == 0)
                    ? " statematch='false'" : "");
        xmlNode *proto = rule->children;
        while (proto && (proto->type != XML_ELEMENT_NODE ||
                         in_list(protocols, COUNT(protocols), (const char *)proto->name) < 0))
            proto = proto->next;
        if (!proto) {
            fputs("/>\n", fp);
        } else {
            fprintf(fp, ">\n    <%s", (const char *)proto->name);
            if (put_all_attrs(fp, proto) < 0)
                rc = oom(err);
            fputs("/>\n  </rule>\n", fp);
        }
    }
    free(action);
    free(direction);
    free(priority);
    free(statematch);
    return rc;
}

static int format_filterref(FILE *fp, xmlNode *ref, rv_err *err)
{
    int failed = 0;
    char *filter = rv_lx_attr(ref, "filter", &failed);
    if (!filter) {
        /* libvirt's words for this case, though it is not a rule. */
        return failed ? oom(err)
                      : fail(err, RV_ERR_INTERNAL_ERROR,
                             "internal error: rule node requires action attribute");
    }
    fputs("  <filterref", fp);
    put_attr(fp, "filter", filter);
    free(filter);
    int params = 0;
    for (xmlNode *p = ref->children; p; p = p->next) {
        if (p->type != XML_ELEMENT_NODE || !xmlStrEqual(p->name, BAD_CAST "parameter"))
            continue;
        char *name = rv_lx_attr(p, "name", &failed), *value = rv_lx_attr(p, "value", &failed);
        if (name && value) {
            fputs(params++ ? "" : ">\n", fp);
            fputs("    <parameter", fp);
            put_attr(fp, "name", name);
            put_attr(fp, "value", value);
            fputs("/>\n", fp);
        }
        free(name);
        free(value);
    }
    fputs(params ? "  </filterref>\n" : "/>\n", fp);
    return failed ? oom(err) : 0;
}

int rv_nwfilter_parse(const char *text, char **name, unsigned char uuid[16], char **xml,
                      rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, rc = -1, prio = 0;
    char *chain = NULL, *priority = NULL, *uuid_text = NULL, *buf = NULL;
    size_t len = 0;
    FILE *fp = NULL;
    *name = *xml = NULL;
    xmlNode *root = rv_lx_read(text, RV_NWFILTER_XML_MAX, "filter", "nwfilter_definition",
                               RV_FROM_NWFILTER, &doc, err);
    if (!root)
        goto out;
    *name = rv_lx_attr(root, "name", &failed);
    chain = rv_lx_attr(root, "chain", &failed);
    priority = rv_lx_attr(root, "priority", &failed);
    uuid_text = rv_lx_text(rv_lx_child(root, "uuid"), &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (!*name) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: filter has no name");
        goto out;
    }
    if (chain && strcmp(chain, "root") != 0) {
        size_t i = 0;
        while (i < COUNT(chains) && strncmp(chain, chains[i].prefix, strlen(chains[i].prefix)))
            i++;
        if (i == COUNT(chains)) {
            fail(err, RV_ERR_INVALID_ARG,
                 "invalid argument: Invalid chain name '%s'. Please use a chain name called "
                 "'root' or any of the following prefixes: mac, vlan, stp, arp, rarp, ipv4, ipv6",
                 chain);
            goto out;
        }
        prio = chains[i].priority;
    }
    if (priority && !parse_int(priority, PRIORITY_MIN, PRIORITY_MAX, &prio)) {
        fail(err, RV_ERR_INVALID_ARG,
             "invalid argument: Priority '%s' is outside valid range of [%d,%d]", priority,
             PRIORITY_MIN, PRIORITY_MAX);
        goto out;
    }
    if (uuid_text && rv_uuid_parse(uuid_text, uuid) < 0) {
        fail(err, RV_ERR_XML_ERROR, "XML error: malformed uuid element");
        goto out;
    }
    if (!uuid_text)
        rv_uuid_generate(uuid);
    char uuid_out[RV_UUID_STRING_LEN];
    rv_uuid_format(uuid, uuid_out);
    if (!(fp = open_memstream(&buf, &len))) {
        oom(err);
        goto out;
    }
    fputs("<filter", fp);
    put_attr(fp, "name", *name);
    put_attr(fp, "chain", chain ? chain : "root");
    if (prio)
        fprintf(fp, " priority='%d'", prio);
    fprintf(fp, ">\n  <uuid>%s</uuid>\n", uuid_out);
    for (xmlNode *n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrEqual(n->name, BAD_CAST "rule") ? format_rule(fp, n, err) < 0
            : xmlStrEqual(n->name, BAD_CAST "filterref") ? format_filterref(fp, n, err) < 0
                                                         : 0)
            goto out;
    }
    fputs("</filter>\n", fp);
    if (fclose(fp) != 0) {
        fp = NULL;
        oom(err);
        goto out;
    }
    fp = NULL;
    *xml = buf;
    buf = NULL;
    rc = 0;
out:
    if (fp)
        fclose(fp);
    free(buf);
    free(chain);
    free(priority);
    free(uuid_text);
    rv_lx_free(doc);
    if (rc < 0) {
        free(*name);
        *name = NULL;
    }
    return rc;
}
