/* rvsh: the host interface commands: iface-list, iface-dumpxml,
 * iface-mac, iface-name. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rvsh.h"

#define LIST_INACTIVE 1u
#define LIST_ACTIVE 2u
#define XML_INACTIVE 1u

/* An interface argument may also be looked up by its MAC address. */
enum { BY_MAC = 8 };

/* Six groups of one or two hex digits between colons, as libvirt reads
 * a MAC address. */
static int looks_like_mac(const char *s)
{
    for (int group = 0; group < 6; group++) {
        int digits = 0;
        while (isxdigit((unsigned char)*s) && digits < 2)
            s++, digits++;
        if (digits == 0 || *s != (group == 5 ? '\0' : ':'))
            return 0;
        s += group < 5;
    }
    return 1;
}

/* virsh's lookup: a MAC address by MAC, anything else by name, each
 * only where the command allows it; virsh's error lines otherwise. */
static int lookup_iface(shell *sh, const char *text, unsigned int how, rv_interface_ref *out)
{
    int mac = looks_like_mac(text), rc = -1, tried = 0;
    if (!mac && (how & BY_NAME)) {
        tried = 1;
        rc = rv_interface_lookup_by_name(sh->conn, text, out);
    } else if (mac && (how & BY_MAC)) {
        tried = 1;
        rc = rv_interface_lookup_by_mac_string(sh->conn, text, out);
    }
    if (rc < 0) {
        error_line("failed to get interface '%s'", text);
        if (tried)
            lib_error();
    }
    return rc;
}

static int compare_ifaces(const void *pa, const void *pb)
{
    return strcasecmp(((const rv_interface_ref *)pa)->name, ((const rv_interface_ref *)pb)->name);
}

static int cmd_iface_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = LIST_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = LIST_INACTIVE;
    rv_interface_ref *ifaces = NULL;
    int n = rv_connect_list_all_interfaces(sh->conn, &ifaces, flags);
    if (n < 0) {
        error_line("Failed to list interfaces");
        lib_error();
        return -1;
    }
    qsort(ifaces, (size_t)n, sizeof(*ifaces), compare_ifaces);
    const char **cells = calloc((size_t)n * 3 + 1, sizeof(*cells));
    int rc = cells ? 0 : -1;
    if (!cells)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int active = rv_interface_is_active(sh->conn, &ifaces[i]);
        if (active < 0) {
            lib_error();
            rc = -1;
        }
        cells[i * 3] = ifaces[i].name;
        cells[i * 3 + 1] = active ? "active" : "inactive";
        cells[i * 3 + 2] = ifaces[i].mac;
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("name", cells[i * 3], &first);
            json_str_field("state", cells[i * 3 + 1], &first);
            json_str_field("mac", cells[i * 3 + 2], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Name", "State", "MAC Address" };
        print_table(heads, 3, cells, (size_t)n);
    }
    free(cells);
    rv_interface_refs_free(ifaces, n);
    return rc;
}

static int cmd_iface_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_interface_ref iface = { 0 };
    if (lookup_iface(sh, a->value, cmd->lookup, &iface) < 0)
        return -1;
    char *xml = rv_interface_get_xml_desc(sh->conn, &iface,
                                          has_opt(cmd, a, "inactive") ? XML_INACTIVE : 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_interface_ref_clear(&iface);
    return xml ? 0 : -1;
}

/* iface-mac (by name) and iface-name (by MAC). */
static int cmd_iface_ident(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_interface_ref iface = { 0 };
    if (lookup_iface(sh, a->value, cmd->lookup, &iface) < 0)
        return -1;
    puts(cmd->lookup == BY_NAME ? iface.mac : iface.name);
    rv_interface_ref_clear(&iface);
    return 0;
}

static const char *const opts_inactive[] = { "inactive", NULL };

const command rvsh_iface_commands[] = {
    { .name = "iface-list", .run = cmd_iface_list,
      .options = opts_list,
      .summary = "list host interfaces (active ones; --all: all; --inactive: inactive ones)" },
    { .name = "iface-dumpxml", .run = cmd_iface_dumpxml, .arg = "interface",
      .lookup = BY_NAME | BY_MAC, .options = opts_inactive,
      .summary = "host interface information in XML (by name or MAC address)" },
    { .name = "iface-mac", .run = cmd_iface_ident, .arg = "interface", .lookup = BY_NAME,
      .summary = "convert a host interface name to its MAC address" },
    { .name = "iface-name", .run = cmd_iface_ident, .arg = "interface", .lookup = BY_MAC,
      .summary = "convert a host interface MAC address to its name" },
    { .name = NULL },
};
