/* rvsh: the domain snapshot commands. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xmlwriter.h>

#include "rvsh.h"

/* What the snapshot commands read from a snapshot's XML (as virsh does):
 * its state, creation time, parent and where its data lives. */
typedef struct snap_facts {
    char *state;                /* NULL when the XML has none */
    long long created;
    char *parent;               /* NULL: a root */
    int internal, external;     /* memory or a disk kept inside / outside the images */
} snap_facts;

static void snap_facts_clear(snap_facts *f)
{
    free(f->state);
    free(f->parent);
    memset(f, 0, sizeof(*f));
}

/* Note where a <memory> or <disk> element says its snapshot goes. */
static void note_location(const xmlNode *n, snap_facts *f)
{
    xmlChar *mode = n ? xmlGetNoNsProp(n, (const xmlChar *)"snapshot") : NULL;
    if (mode) {
        f->internal |= strcmp((const char *)mode, "internal") == 0;
        f->external |= strcmp((const char *)mode, "external") == 0;
    }
    xmlFree(mode);
}

static int snap_facts_get(rv_snap *snap, snap_facts *f)
{
    memset(f, 0, sizeof(*f));
    char *xml = rv_domain_snapshot_get_xml_desc(snap, 0);
    if (!xml)
        return -1;
    /* No network, no entities: the server's XML is only read. */
    xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), "domain_snapshot.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    free(xml);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    if (!root) {
        xmlFreeDoc(doc);
        return -1;
    }
    f->state = xml_text(xml_child(root, "state"));
    f->parent = xml_text(xml_child(xml_child(root, "parent"), "name"));
    char *created = xml_text(xml_child(root, "creationTime"));
    f->created = created ? strtoll(created, NULL, 10) : 0;
    free(created);
    note_location(xml_child(root, "memory"), f);
    for (xmlNode *c = xml_child(root, "disks") ? xml_child(root, "disks")->children : NULL; c;
         c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "disk") == 0)
            note_location(c, f);
    xmlFreeDoc(doc);
    return 0;
}

/* The snapshot a command names: its <snapshotname> argument, or with
 * --current the current one.  name gets the name (valid with the result). */
static rv_snap *lookup_snapshot(const char *cmd_name, rv_dom *dom, const char *given,
                                int current, const char **name)
{
    rv_snap *snap = NULL;
    if (given) {
        snap = rv_domain_snapshot_lookup_by_name(dom, given, 0);
    } else if (current) {
        /* snapshot-current says itself that there is none; the others
         * pass on the server's error. */
        int has = strcmp(cmd_name, "snapshot-current") == 0 ? rv_domain_has_current_snapshot(dom, 0) : 1;
        if (has == 0) {
            error_line("domain '%s' has no current snapshot", rv_domain_get_name(dom));
            return NULL;
        }
        if (has > 0)
            snap = rv_domain_snapshot_current(dom, 0);
    } else {
        error_line("--snapshotname or --current is required");
        return NULL;
    }
    if (!snap) {
        lib_error();
        return NULL;
    }
    *name = rv_domain_snapshot_get_name(snap);
    return snap;
}

static void free_snaps(rv_snap **snaps, int n)
{
    for (int i = 0; snaps && i < n; i++)
        rv_domain_snapshot_free(snaps[i]);
    free(snaps);
}

static int compare_snaps(const void *pa, const void *pb)
{
    rv_snap *a = *(rv_snap *const *)pa, *b = *(rv_snap *const *)pb;
    return strcmp(rv_domain_snapshot_get_name(a), rv_domain_snapshot_get_name(b));
}

static int cmd_snapshot_create_as(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    /* The request, escaped as any XML text. */
    xmlBuffer *buf = xmlBufferCreate();
    xmlTextWriter *w = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
    const char *description = a->opt_values[0];
    int rc = w && xmlTextWriterStartElement(w, BAD_CAST "domainsnapshot") >= 0 &&
             (!a->value2 || xmlTextWriterWriteElement(w, BAD_CAST "name", BAD_CAST a->value2) >= 0) &&
             (!description || xmlTextWriterWriteElement(w, BAD_CAST "description",
                                                        BAD_CAST description) >= 0) &&
             xmlTextWriterEndElement(w) >= 0 && xmlTextWriterEndDocument(w) >= 0 ? 0 : -1;
    if (w)
        xmlFreeTextWriter(w);       /* flushes into buf */
    rv_snap *snap = NULL;
    if (rc < 0)
        error_line("out of memory");
    else if (!(snap = rv_domain_snapshot_create_xml(dom, (const char *)xmlBufferContent(buf),
                                                    has_opt(cmd, a, "halt") ?
                                                    RV_DOMAIN_SNAPSHOT_CREATE_HALT : 0)))
        rc = -1, lib_error();
    else
        printf("Domain snapshot %s created", rv_domain_snapshot_get_name(snap));
    if (buf)
        xmlBufferFree(buf);
    rv_domain_snapshot_free(snap);
    rv_domain_free(dom);
    return rc;
}

/* virsh's tree: each snapshot under its parent, "+- " before a child,
 * "|" down the side while more children of the same parent follow. */
static void print_snap_tree(rv_snap **snaps, const snap_facts *facts, int n, int at, int last,
                            int root, char *indent, size_t len)
{
    const char *name = rv_domain_snapshot_get_name(snaps[at]);
    printf("%.*s%s%s\n", (int)len, indent, root ? "" : "+- ", name);
    if (!root) {
        indent[len++] = at == last ? ' ' : '|';
        indent[len++] = ' ';
    }
    int last_child = -1;
    for (int i = 0; i < n; i++)
        if (facts[i].parent && strcmp(facts[i].parent, name) == 0)
            last_child = i;
    if (last_child >= 0)
        printf("%.*s  |\n", (int)len, indent);
    indent[len] = indent[len + 1] = ' ';
    for (int i = 0; i < n; i++)
        if (facts[i].parent && strcmp(facts[i].parent, name) == 0)
            print_snap_tree(snaps, facts, n, i, last_child, 0, indent, len + 2);
    if (last_child < 0 && at == last)
        printf("%.*s\n", (int)len, indent);
}

static int cmd_snapshot_list(shell *sh, const command *cmd, const cmd_args *a)
{
    int tree = has_opt(cmd, a, "tree"), parent = has_opt(cmd, a, "parent");
    int names_only = has_opt(cmd, a, "name"), json = sh->json || has_opt(cmd, a, "json");
    const char *from = a->opt_values[6];
    unsigned int flags = 0;
    static const struct { const char *opt; unsigned int flag; } filters[] = {
        { "roots", RV_DOMAIN_SNAPSHOT_LIST_ROOTS },
        { "leaves", RV_DOMAIN_SNAPSHOT_LIST_LEAVES },
        { "no-leaves", RV_DOMAIN_SNAPSHOT_LIST_NO_LEAVES },
        { "active", RV_DOMAIN_SNAPSHOT_LIST_ACTIVE },
        { "inactive", RV_DOMAIN_SNAPSHOT_LIST_INACTIVE },
        { "internal", RV_DOMAIN_SNAPSHOT_LIST_INTERNAL },
        { "external", RV_DOMAIN_SNAPSHOT_LIST_EXTERNAL },
    };
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        if (has_opt(cmd, a, filters[i].opt))
            flags |= filters[i].flag;
    int below = from || has_opt(cmd, a, "current");
    if (has_opt(cmd, a, "descendants")) {
        if (!below) {
            error_line("--descendants requires either --from or --current");
            return -1;
        }
        flags |= RV_DOMAIN_SNAPSHOT_LIST_DESCENDANTS;
    }
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_snap **snaps = NULL, *start = NULL;
    const char *start_name = NULL;
    int n = -1, rc = -1;
    if (below && !(start = lookup_snapshot(cmd->name, dom, from, 1, &start_name)))
        goto out;
    const char *from_root = tree ? start_name : NULL;   /* stays valid: start is in snaps */
    /* A tree below --from has the snapshot itself as its root and, as
     * virsh 9.0 prints it, its children (without --descendants). */
    n = start ? rv_domain_snapshot_list_all_children(start, &snaps, flags)
              : rv_domain_list_all_snapshots(dom, &snaps, flags);
    if (n < 0) {
        lib_error();
        goto out;
    }
    if (start && tree) {
        rv_snap **more = realloc(snaps, ((size_t)n + 2) * sizeof(*snaps));
        if (!more) {
            error_line("out of memory");
            goto out;
        }
        snaps = more;
        snaps[n++] = start;
        snaps[n] = NULL;
        start = NULL;           /* freed with the list */
    }
    qsort(snaps, (size_t)n, sizeof(*snaps), compare_snaps);
    snap_facts *facts = calloc((size_t)n + 1, sizeof(*facts));
    const char **cells = calloc((size_t)n * 4 + 1, sizeof(*cells));
    char (*times)[32] = calloc((size_t)n + 1, sizeof(*times));
    if (!facts || !cells || !times) {
        error_line("out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (snap_facts_get(snaps[i], &facts[i]) < 0) {
            lib_error();
            goto done;
        }
        /* The --from snapshot is the tree's root. */
        if (tree && from_root && strcmp(rv_domain_snapshot_get_name(snaps[i]), from_root) == 0) {
            free(facts[i].parent);
            facts[i].parent = NULL;
        }
        time_t t = (time_t)facts[i].created;
        struct tm tm;
        strftime(times[i], sizeof(times[i]), "%Y-%m-%d %H:%M:%S %z", localtime_r(&t, &tm));
        cells[i * (parent ? 4 : 3)] = rv_domain_snapshot_get_name(snaps[i]);
        cells[i * (parent ? 4 : 3) + 1] = times[i];
        cells[i * (parent ? 4 : 3) + 2] = facts[i].state ? facts[i].state : "";
        if (parent)
            cells[i * 4 + 3] = facts[i].parent ? facts[i].parent : "";
    }
    if (json) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("name", rv_domain_snapshot_get_name(snaps[i]), &first);
            json_num_field("creationTime", (unsigned long long)facts[i].created, 1, &first);
            json_str_field("state", facts[i].state, &first);
            json_str_field("parent", facts[i].parent, &first);
            putchar('}');
        }
        puts("]");
    } else if (tree) {
        size_t depth = 2 * (size_t)n + 4;
        char *indent = malloc(depth + 2);
        if (!indent) {
            error_line("out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++)
            if (!facts[i].parent)
                print_snap_tree(snaps, facts, n, i, i, 1, indent, 0);
        free(indent);
    } else if (names_only) {
        for (int i = 0; i < n; i++)
            printf("%s\n", rv_domain_snapshot_get_name(snaps[i]));
    } else {
        static const char *const heads[] = { "Name", "Creation Time", "State", "Parent" };
        print_table(heads, parent ? 4 : 3, cells, (size_t)n);
    }
    rc = 0;
done:
    for (int i = 0; facts && i < n; i++)
        snap_facts_clear(&facts[i]);
    free(facts);
    free(cells);
    free(times);
out:
    free_snaps(snaps, n);
    rv_domain_snapshot_free(start);
    rv_domain_free(dom);
    return rc;
}

static int cmd_snapshot_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *name = NULL;
    int rc = -1;
    snap_facts f = { 0 };
    rv_snap *snap = lookup_snapshot(cmd->name, dom, a->value2, has_opt(cmd, a, "current"), &name);
    int current = snap ? rv_domain_snapshot_is_current(snap, 0) : -1;
    int children = snap ? rv_domain_snapshot_num_children(snap, 0) : -1;
    int descendants = snap ? rv_domain_snapshot_num_children(
                                 snap, RV_DOMAIN_SNAPSHOT_LIST_DESCENDANTS) : -1;
    int metadata = snap ? rv_domain_snapshot_has_metadata(snap, 0) : -1;
    if (!snap)
        goto out;
    if (current < 0 || children < 0 || descendants < 0 || metadata < 0 ||
        snap_facts_get(snap, &f) < 0) {
        lib_error();
        goto out;
    }
    const char *location = f.internal && f.external ? "mixed"
                         : f.external ? "external" : f.internal ? "internal" : "N/A";
    if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", name, &first);
        json_str_field("domain", rv_domain_get_name(dom), &first);
        json_bool_field("current", current, &first);
        json_str_field("state", f.state, &first);
        json_str_field("location", location, &first);
        json_str_field("parent", f.parent, &first);
        json_num_field("children", (unsigned long long)children, 1, &first);
        json_num_field("descendants", (unsigned long long)descendants, 1, &first);
        json_bool_field("metadata", metadata, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", name);
        printf("%-15s %s\n", "Domain:", rv_domain_get_name(dom));
        printf("%-15s %s\n", "Current:", yes_no(current));
        printf("%-15s %s\n", "State:", f.state ? f.state : "");
        printf("%-15s %s\n", "Location:", location);
        printf("%-15s %s\n", "Parent:", f.parent ? f.parent : "-");
        printf("%-15s %d\n", "Children:", children);
        printf("%-15s %d\n", "Descendants:", descendants);
        printf("%-15s %s\n", "Metadata:", yes_no(metadata));
    }
    rc = 0;
out:
    snap_facts_clear(&f);
    rv_domain_snapshot_free(snap);
    rv_domain_free(dom);
    return rc;
}

/* snapshot-dumpxml, snapshot-current and snapshot-parent. */
static int cmd_snapshot_show(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int dumpxml = strcmp(cmd->name, "snapshot-dumpxml") == 0;
    int current = strcmp(cmd->name, "snapshot-current") == 0 || has_opt(cmd, a, "current");
    const char *name = NULL;
    int rc = -1;
    snap_facts f = { 0 };
    rv_snap *snap = lookup_snapshot(cmd->name, dom, dumpxml || !current ? a->value2 : NULL,
                                    current && !dumpxml, &name);
    if (!snap)
        goto out;
    if (strcmp(cmd->name, "snapshot-parent") == 0) {
        if (snap_facts_get(snap, &f) < 0) {
            lib_error();
            goto out;
        }
        if (!f.parent) {
            error_line("snapshot '%s' has no parent", name);
            goto out;
        }
        fputs(f.parent, stdout);
    } else if (!dumpxml && has_opt(cmd, a, "name")) {
        fputs(name, stdout);
    } else {
        char *xml = rv_domain_snapshot_get_xml_desc(snap, 0);
        if (!xml) {
            lib_error();
            goto out;
        }
        fputs(xml, stdout);
        free(xml);
    }
    rc = 0;
out:
    snap_facts_clear(&f);
    rv_domain_snapshot_free(snap);
    rv_domain_free(dom);
    return rc;
}

/* snapshot-revert and snapshot-delete. */
static int cmd_snapshot_change(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int revert = strcmp(cmd->name, "snapshot-revert") == 0;
    const char *name = NULL;
    rv_snap *snap = lookup_snapshot(cmd->name, dom, a->value2, has_opt(cmd, a, "current"), &name);
    int rc = -1;
    if (snap && revert) {
        unsigned int flags = (has_opt(cmd, a, "running") ? RV_DOMAIN_SNAPSHOT_REVERT_RUNNING : 0) |
                             (has_opt(cmd, a, "paused") ? RV_DOMAIN_SNAPSHOT_REVERT_PAUSED : 0);
        rc = rv_domain_revert_to_snapshot(snap, flags);
        /* --force only when the server says the revert is risky. */
        if (rc < 0 && has_opt(cmd, a, "force") && rv_last_error() &&
            rv_last_error()->code == RV_ERROR_SNAPSHOT_REVERT_RISKY)
            rc = rv_domain_revert_to_snapshot(snap, flags | RV_DOMAIN_SNAPSHOT_REVERT_FORCE);
        if (rc < 0) {
            error_line("Failed to revert snapshot %s", name);
            lib_error();
        } else {
            printf("Domain snapshot %s reverted\n", name);
        }
    } else if (snap) {
        int only = has_opt(cmd, a, "children-only");
        unsigned int flags = (has_opt(cmd, a, "children") ? RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN : 0) |
                             (only ? RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY : 0) |
                             (has_opt(cmd, a, "metadata") ? RV_DOMAIN_SNAPSHOT_DELETE_METADATA_ONLY : 0);
        rc = rv_domain_snapshot_delete(snap, flags);
        if (rc < 0) {
            error_line("Failed to delete snapshot %s", name);
            lib_error();
        } else {
            printf("Domain snapshot %s %sdeleted\n", name, only ? "children " : "");
        }
    }
    rv_domain_snapshot_free(snap);
    rv_domain_free(dom);
    return rc;
}

/* cmd_snapshot_create_as reads "description=" as opt_values[0]. */
static const char *const opts_snapshot_create[] = { "description=", "halt", NULL };
static const char *const opts_snapshot_current[] = { "name", NULL };
static const char *const opts_snapshot_delete[] = { "current", "children", "children-only",
                                                    "metadata", NULL };
static const char *const opts_snapshot_info[] = { "current", "json", NULL };
/* cmd_snapshot_list reads "from=" as opt_values[6]; the others by name. */
static const char *const opts_snapshot_list[] = {
    "parent", "roots", "leaves", "no-leaves", "tree", "current", "from=", "descendants",
    "name", "active", "inactive", "internal", "external", "json", NULL,
};
static const char *const opts_snapshot_parent[] = { "current", NULL };
static const char *const opts_snapshot_revert[] = { "current", "running", "paused", "force", NULL };

const command rvsh_snapshot_commands[] = {
    { .name = "snapshot-create-as", .run = cmd_snapshot_create_as, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "name", .options = opts_snapshot_create,
      .summary = "take a snapshot of a domain (snapshot-create-as DOMAIN [NAME] [--description TEXT] [--halt])" },
    { .name = "snapshot-list", .run = cmd_snapshot_list, .arg = "domain", .lookup = BY_ANY,
      .options = opts_snapshot_list,
      .summary = "list a domain's snapshots" },
    { .name = "snapshot-info", .run = cmd_snapshot_info, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .options = opts_snapshot_info,
      .summary = "snapshot information (snapshot-info DOMAIN NAME, or --current)" },
    { .name = "snapshot-dumpxml", .run = cmd_snapshot_show, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .arg2_required = 1,
      .summary = "snapshot information in XML (snapshot-dumpxml DOMAIN NAME)" },
    { .name = "snapshot-current", .run = cmd_snapshot_show, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .options = opts_snapshot_current,
      .summary = "the current snapshot's XML (--name: its name)" },
    { .name = "snapshot-parent", .run = cmd_snapshot_show, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .options = opts_snapshot_parent,
      .summary = "the name of a snapshot's parent (snapshot-parent DOMAIN NAME, or --current)" },
    { .name = "snapshot-revert", .run = cmd_snapshot_change, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .options = opts_snapshot_revert,
      .summary = "revert a domain to a snapshot (snapshot-revert DOMAIN NAME, or --current)" },
    { .name = "snapshot-delete", .run = cmd_snapshot_change, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "snapshotname", .options = opts_snapshot_delete,
      .summary = "delete a snapshot (snapshot-delete DOMAIN NAME, or --current)" },
    { .name = NULL },
};
