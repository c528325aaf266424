/* rvsh: the host device commands, nodedev-list (--cap, --tree),
 * nodedev-dumpxml, nodedev-info, nodedev-create and nodedev-destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rvsh.h"

/* libvirt's list filters beyond the capability bits. */
#define LIST_ACTIVE (1u << 31)
#define LIST_INACTIVE (1u << 30)

/* The capability names virsh's --cap takes, in flag bit order. */
static const char *const cap_names[] = {
    "system", "pci", "usb_device", "usb", "net", "scsi_host", "scsi_target", "scsi",
    "storage", "fc_host", "vports", "scsi_generic", "drm", "mdev_types", "mdev", "ccw",
    "css", "vdpa", "ap_card", "ap_queue", "ap_matrix", "vpd",
};

/* --cap a,b,...: their flag bits, or -1 (an unknown name). */
static long long cap_flags(const char *list)
{
    unsigned long long flags = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof(cap_names) / sizeof(cap_names[0]) &&
               !(strlen(cap_names[k]) == n && strncmp(cap_names[k], p, n) == 0))
            k++;
        if (n > 0) {
            if (k == sizeof(cap_names) / sizeof(cap_names[0]))
                return -1;
            flags |= 1ULL << k;
        }
        p += n + (p[n] == ',');
    }
    return (long long)flags;
}

static int compare_names(const void *pa, const void *pb)
{
    return strcasecmp(*(char *const *)pa, *(char *const *)pb);
}

typedef struct dev_tree {
    char **names;
    char **parents;             /* NULL: a device at the top */
    int n;
} dev_tree;

/* The index of dev's last child, or -1. */
static int last_child(const dev_tree *t, int dev)
{
    int last = -1;
    for (int i = 0; i < t->n; i++)
        if (t->parents[i] && strcmp(t->parents[i], t->names[dev]) == 0)
            last = i;
    return last;
}

/* virsh's tree: a device under its parent after "+- ", a "|" line
 * before the first child, the columns of ancestors that have later
 * siblings kept as "|", and a line of the indent alone after each last
 * leaf.  indent holds the prefix so far, len columns of it. */
static void print_tree(const dev_tree *t, int dev, int is_last, int top, char *indent,
                       size_t len)
{
    printf("%.*s%s%s\n", (int)len, indent, top ? "" : "+- ", t->names[dev]);
    if (!top) {
        indent[len++] = is_last ? ' ' : '|';
        indent[len++] = ' ';
    }
    /* Only a server naming one device twice makes a tree deeper than
     * its device count: stop there. */
    int last = len < 4 * (size_t)t->n ? last_child(t, dev) : -1;
    if (last >= 0)
        printf("%.*s  |\n", (int)len, indent);
    indent[len] = indent[len + 1] = ' ';
    for (int i = 0; last >= 0 && i <= last; i++)
        if (t->parents[i] && strcmp(t->parents[i], t->names[dev]) == 0)
            print_tree(t, i, i == last, 0, indent, len + 2);
    if (last < 0 && is_last)
        printf("%.*s\n", (int)len, indent);
}

static int cmd_nodedev_list(shell *sh, const command *cmd, const cmd_args *a)
{
    int tree = has_opt(cmd, a, "tree");
    const char *caps = opt_value(cmd, a, "cap");
    unsigned int flags = LIST_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = LIST_ACTIVE | LIST_INACTIVE;
    else if (has_opt(cmd, a, "inactive"))
        flags = LIST_INACTIVE;
    if (tree && (caps || has_opt(cmd, a, "inactive"))) {
        error_line("Option --tree is incompatible with --cap and --inactive");
        return -1;
    }
    if (caps) {
        long long bits = cap_flags(caps);
        if (bits < 0) {
            error_line("Invalid capability type");
            return -1;
        }
        flags |= (unsigned int)bits;
    }
    char **names = NULL;
    int n = rv_connect_list_all_node_devices(sh->conn, &names, flags);
    if (n < 0) {
        error_line("Failed to list node devices");
        lib_error();
        return -1;
    }
    qsort(names, (size_t)n, sizeof(*names), compare_names);
    int json = sh->json || has_opt(cmd, a, "json");
    dev_tree t = { .names = names, .n = n };
    int rc = 0;
    if (tree || json) {
        t.parents = calloc((size_t)n + 1, sizeof(*t.parents));
        if (!t.parents) {
            error_line("out of memory");
            rc = -1;
        }
        for (int i = 0; rc == 0 && i < n; i++)
            if (rv_node_device_get_parent(sh->conn, names[i], &t.parents[i]) < 0) {
                lib_error();
                rc = -1;
            }
    }
    if (rc == 0 && json) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("name", names[i], &first);
            json_str_field("parent", t.parents[i], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0 && tree) {
        /* Four columns a level, at most n levels. */
        char *indent = malloc(4 * (size_t)n + 8);
        if (!indent) {
            error_line("out of memory");
            rc = -1;
        }
        for (int i = 0; rc == 0 && i < n; i++)
            if (!t.parents[i])
                print_tree(&t, i, 0, 1, indent, 0);
        free(indent);
    } else if (rc == 0) {
        for (int i = 0; i < n; i++)
            puts(names[i]);
    }
    for (int i = 0; i < n; i++) {
        free(names[i]);
        free(t.parents ? t.parents[i] : NULL);
    }
    free(names);
    free(t.parents);
    return rc;
}

/* After a failed call on a device by name: virsh's lines, which first
 * say when the device does not exist. */
static void device_failed(const char *name)
{
    const rv_error_info *e = rv_last_error();
    if (e && e->code == RV_ERROR_NO_NODE_DEVICE)
        error_line("Could not find matching device '%s'", name);
    lib_error();
}

static int cmd_nodedev_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    char *xml = rv_node_device_get_xml_desc(sh->conn, a->value, 0);
    if (!xml) {
        device_failed(a->value);
        return -1;
    }
    fputs(xml, stdout);
    free(xml);
    return 0;
}

static int cmd_nodedev_info(shell *sh, const command *cmd, const cmd_args *a)
{
    char *parent = NULL;
    /* Asking for the parent is also the lookup: it fails for no device. */
    if (rv_node_device_get_parent(sh->conn, a->value, &parent) < 0) {
        device_failed(a->value);
        return -1;
    }
    /* As virsh: a failed question reads as "yes" (it tests the -1 as
     * true), a failed autostart as "no autostart". */
    int active = rv_node_device_is_active(sh->conn, a->value);
    int persistent = rv_node_device_is_persistent(sh->conn, a->value);
    int autostart = 0;
    int autostart_known = rv_node_device_get_autostart(sh->conn, a->value, &autostart) == 0;
    if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", a->value, &first);
        json_str_field("parent", parent, &first);
        json_bool_field("active", active != 0, &first);
        json_bool_field("persistent", persistent != 0, &first);
        if (autostart_known)
            json_bool_field("autostart", autostart, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", a->value);
        printf("%-15s %s\n", "Parent:", parent ? parent : "");
        printf("%-15s %s\n", "Active:", yes_no(active != 0));
        printf("%-15s %s\n", "Persistent:", yes_no(persistent != 0));
        printf("%-15s %s\n", "Autostart:", autostart_known ? yes_no(autostart) : "no autostart");
    }
    free(parent);
    return 0;
}

static int cmd_nodedev_create(shell *sh, const command *cmd, const cmd_args *a)
{
    char *xml, *name = NULL;
    if (read_file(a->value, &xml) < 0)
        return -1;
    int rc = rv_node_device_create_xml(sh->conn, xml, has_opt(cmd, a, "validate") ? 1 : 0, &name);
    free(xml);
    if (rc < 0) {
        error_line("Failed to create node device from %s", a->value);
        lib_error();
        return -1;
    }
    printf("Node device %s created from %s\n", name, a->value);
    free(name);
    return 0;
}

static int cmd_nodedev_destroy(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    if (rv_node_device_destroy(sh->conn, a->value) < 0) {
        const rv_error_info *e = rv_last_error();
        if (!e || e->code != RV_ERROR_NO_NODE_DEVICE)
            error_line("Failed to destroy node device '%s'", a->value);
        device_failed(a->value);
        return -1;
    }
    printf("Destroyed node device '%s'\n", a->value);
    return 0;
}

static const char *const opts_nodedev_list[] = { "tree", "json", "cap=", "all", "inactive", NULL };
static const char *const opts_nodedev_create[] = { "validate", NULL };

const command rvsh_nodedev_commands[] = {
    { .name = "nodedev-list", .run = cmd_nodedev_list,
      .options = opts_nodedev_list,
      .summary = "list host devices (--cap a,b: with these capabilities; --tree: under their parents)" },
    { .name = "nodedev-dumpxml", .run = cmd_nodedev_dumpxml, .arg = "device",
      .summary = "host device information in XML" },
    { .name = "nodedev-info", .run = cmd_nodedev_info, .arg = "device",
      .options = opts_json,
      .summary = "a host device's name, parent, and whether it is active, persistent, autostarted" },
    { .name = "nodedev-create", .run = cmd_nodedev_create, .arg = "file",
      .options = opts_nodedev_create,
      .summary = "create a host device (a vHBA) from an XML file" },
    { .name = "nodedev-destroy", .run = cmd_nodedev_destroy, .arg = "device",
      .summary = "destroy a host device made by nodedev-create" },
    { .name = NULL },
};
