/* Virtual network XML (network_xml.h). */
#include "server/drivers/conf/network_xml.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

/* libvirt writes a network's elements in this order, whatever order they
 * came in. */
static const char *const net_elements[] = {
    "metadata", "forward", "bridge", "mtu", "mac", "domain", "dns", "ip", "route",
    "virtualport", "portgroup",
};

const char *rv_net_def_forward_mode(const rv_net_def *def)
{
    const rv_xml_node *fw = rv_xml_child(def->root, "forward");
    if (!fw)
        return "none";
    const char *mode = rv_xml_attr_get(fw, "mode");
    return mode ? mode : "nat";
}

/* Modes whose networks get a host bridge, with libvirt's STP defaults. */
static int has_own_bridge(const rv_net_def *def)
{
    const char *mode = rv_net_def_forward_mode(def);
    return !strcmp(mode, "none") || !strcmp(mode, "nat") || !strcmp(mode, "route") ||
           !strcmp(mode, "open");
}

int rv_net_def_parse(const char *xml, rv_net_def **out, rv_err *err)
{
    rv_xml_node *root = rv_xml_tree_read(xml, RV_NETWORK_XML_MAX, "network",
                                         "network_definition", RV_FROM_NETWORK, err);
    if (!root)
        return -1;
    rv_net_def *def = calloc(1, sizeof(*def));
    char *uuid = NULL;
    const char *bridge = rv_xml_child(root, "bridge") ? rv_xml_attr_get(rv_xml_child(root, "bridge"),
                                                                        "name") : NULL;
    int ret = -1;
    if (!def || rv_xml_text_copy(rv_xml_child(root, "name"), &def->name) < 0 ||
        rv_xml_text_copy(rv_xml_child(root, "uuid"), &uuid) < 0 ||
        (bridge && *bridge && !(def->bridge = strdup(bridge))))
        rv_err_set(err, RV_FROM_NETWORK, RV_ERR_NO_MEMORY, "out of memory");
    else if (!def->name)
        rv_err_set(err, RV_FROM_NETWORK, RV_ERR_NO_NAME, "missing name information");
    else if (rv_lx_read_uuid(uuid, def->uuid, RV_FROM_NETWORK, err) == 0)
        ret = 0;
    free(uuid);
    if (ret == 0) {
        def->root = root;
        *out = def;
    } else {
        rv_net_def_free(def);
        rv_xml_free(root);
    }
    return ret;
}

void rv_net_def_free(rv_net_def *def)
{
    if (!def)
        return;
    free(def->name);
    free(def->bridge);
    rv_xml_free(def->root);
    free(def);
}

/* Set attr of def's first <elem> (made when missing) to value. */
static int set_child_attr(rv_net_def *def, const char *elem, const char *attr, const char *value,
                          rv_err *err)
{
    rv_xml_node *root = def->root, *e = rv_xml_child(root, elem);
    char *attr_name = strdup(attr), *copy = strdup(value);
    if (!e && attr_name && copy && (e = calloc(1, sizeof(*e)))) {
        rv_xml_node **kids = realloc(root->kids, (root->nkids + 1) * sizeof(*kids));
        if (!kids || !(e->name = strdup(elem))) {
            if (kids)
                root->kids = kids;
            free(e);
            e = NULL;
        } else {
            root->kids = kids;
            kids[root->nkids++] = e;
            root->kids_cap = root->nkids;
        }
    }
    rv_xml_attr *attrs = e && attr_name && copy
                             ? realloc(e->attrs, (e->nattrs + 1) * sizeof(*attrs)) : NULL;
    if (!attrs) {
        free(attr_name);
        free(copy);
        rv_err_set(err, RV_FROM_NETWORK, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    e->attrs = attrs;
    attrs[e->nattrs].name = attr_name;
    attrs[e->nattrs].value = copy;
    e->nattrs++;
    return 0;
}

int rv_net_def_set_bridge(rv_net_def *def, const char *name, rv_err *err)
{
    char *copy = strdup(name);
    if (!copy || set_child_attr(def, "bridge", "name", name, err) < 0) {
        free(copy);
        if (!rv_err_is_set(err))
            rv_err_set(err, RV_FROM_NETWORK, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    free(def->bridge);
    def->bridge = copy;
    return 0;
}

const char *rv_net_def_mac(const rv_net_def *def)
{
    const rv_xml_node *mac = rv_xml_child(def->root, "mac");
    return mac ? rv_xml_attr_get(mac, "address") : NULL;
}

int rv_net_def_set_mac(rv_net_def *def, const char *mac, rv_err *err)
{
    return set_child_attr(def, "mac", "address", mac, err);
}

/* <bridge> as libvirt completes it: name, then stp and delay (defaults
 * "on" and "0"), then whatever else was given. */
static void put_bridge(FILE *fp, const rv_net_def *def)
{
    const rv_xml_node *br = rv_xml_child(def->root, "bridge");
    if (!has_own_bridge(def)) {
        if (br)
            rv_xml_put_node(fp, br, 2);
        return;
    }
    const char *name = br ? rv_xml_attr_get(br, "name") : NULL;
    const char *stp = br ? rv_xml_attr_get(br, "stp") : NULL;
    const char *delay = br ? rv_xml_attr_get(br, "delay") : NULL;
    fputs("  <bridge", fp);
    if (name) {
        fputs(" name='", fp);
        rv_xml_put_escaped(fp, name);
        fputc('\'', fp);
    }
    fputs(" stp='", fp);
    rv_xml_put_escaped(fp, stp ? stp : "on");
    fputs("' delay='", fp);
    rv_xml_put_escaped(fp, delay ? delay : "0");
    fputc('\'', fp);
    for (size_t i = 0; br && i < br->nattrs; i++) {
        const char *a = br->attrs[i].name;
        if (strcmp(a, "name") == 0 || strcmp(a, "stp") == 0 || strcmp(a, "delay") == 0)
            continue;
        fprintf(fp, " %s='", a);
        rv_xml_put_escaped(fp, br->attrs[i].value);
        fputc('\'', fp);
    }
    fputs("/>\n", fp);
}

/* A top-level element; libvirt opens and closes a <portgroup> even
 * when nothing is in it. */
static void put_element(FILE *fp, const rv_xml_node *k)
{
    bool empty = true;
    for (size_t i = 0; i < k->nkids && empty; i++)
        empty = !k->kids[i] || !k->kids[i]->name;
    if (strcmp(k->name, "portgroup") != 0 || !empty) {
        rv_xml_put_node(fp, k, 2);
        return;
    }
    fputs("  <portgroup", fp);
    rv_xml_put_attrs(fp, k);
    fputs(">\n  </portgroup>\n", fp);
}

char *rv_net_def_format(const rv_net_def *def)
{
    char *buf = NULL, uuid[RV_UUID_STRING_LEN];
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    const rv_xml_node *root = def->root;
    rv_uuid_format(def->uuid, uuid);
    fputs("<network", fp);
    rv_xml_put_attrs(fp, root);
    fputs(">\n", fp);
    rv_xml_put_text_element(fp, 2, "name", def->name);
    fprintf(fp, "  <uuid>%s</uuid>\n", uuid);
    for (size_t e = 0; e < sizeof(net_elements) / sizeof(net_elements[0]); e++) {
        if (strcmp(net_elements[e], "bridge") == 0) {
            put_bridge(fp, def);
            continue;
        }
        for (size_t i = 0; i < root->nkids; i++) {
            const rv_xml_node *k = root->kids[i];
            if (k && k->name && strcmp(k->name, net_elements[e]) == 0)
                put_element(fp, k);
        }
    }
    fputs("</network>\n", fp);
    return rv_xml_done(fp, &buf);
}

const char *rv_net_obj_name(const void *obj)
{
    return (*(rv_net_def *const *)obj)->name;
}

const unsigned char *rv_net_obj_uuid(const void *obj)
{
    return (*(rv_net_def *const *)obj)->uuid;
}
