/* rvsh: the virtual network commands. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rvsh.h"

/* virsh's order: a UUID first (when the text is one), then a name. */
rv_net *lookup_network(shell *sh, const char *text, unsigned int how)
{
    rv_net *net = NULL;
    int tried = 0;
    if ((how & BY_UUID) && strlen(text) == RV_UUID_STRING_BUFLEN - 1) {
        tried = 1;
        net = rv_network_lookup_by_uuid_string(sh->conn, text);
    }
    if (!net && (how & BY_NAME)) {
        tried = 1;
        net = rv_network_lookup_by_name(sh->conn, text);
    }
    if (!net) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get network '%s'", text);
        /* A text that is no UUID was never sent: nothing more to say. */
        if (tried && e && e->code != RV_ERROR_INVALID_ARG)
            lib_error();
    }
    return net;
}

static int compare_nets(const void *pa, const void *pb)
{
    return strcmp(rv_network_get_name(*(rv_net *const *)pa),
                  rv_network_get_name(*(rv_net *const *)pb));
}

typedef struct net_row {
    int active, autostart, persistent;
} net_row;

static int cmd_net_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = RV_CONNECT_LIST_NETWORKS_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = RV_CONNECT_LIST_NETWORKS_INACTIVE;
    rv_net **nets = NULL;
    int n = rv_connect_list_all_networks(sh->conn, &nets, flags);
    if (n < 0) {
        error_line("Failed to list networks");
        lib_error();
        return -1;
    }
    qsort(nets, (size_t)n, sizeof(*nets), compare_nets);
    net_row *rows = calloc((size_t)n + 1, sizeof(*rows));
    int rc = rows ? 0 : -1;
    if (!rows)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int autostart = 0;
        rows[i].active = rv_network_is_active(nets[i]);
        rows[i].persistent = rv_network_is_persistent(nets[i]);
        if (rows[i].active < 0 || rows[i].persistent < 0 ||
            rv_network_get_autostart(nets[i], &autostart) < 0) {
            lib_error();
            rc = -1;
        }
        rows[i].autostart = autostart;
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            char uuid[RV_UUID_STRING_BUFLEN];
            int first = 1;
            rv_network_get_uuid_string(nets[i], uuid);
            printf("%s{", i ? ", " : "");
            json_str_field("name", rv_network_get_name(nets[i]), &first);
            json_str_field("uuid", uuid, &first);
            json_str_field("state", rows[i].active ? "active" : "inactive", &first);
            json_bool_field("autostart", rows[i].autostart, &first);
            json_bool_field("persistent", rows[i].persistent, &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[4] = { "Name", "State", "Autostart", "Persistent" };
        size_t w[4];
        for (int k = 0; k < 4; k++)
            w[k] = strlen(heads[k]);
        for (int i = 0; i < n; i++) {
            size_t c[4] = { text_width(rv_network_get_name(nets[i])),
                            strlen(rows[i].active ? "active" : "inactive"),
                            strlen(yes_no(rows[i].autostart)),
                            strlen(yes_no(rows[i].persistent)) };
            for (int k = 0; k < 4; k++)
                if (c[k] > w[k])
                    w[k] = c[k];
        }
        putchar(' ');
        for (int k = 0; k < 4; k++)
            print_cell(heads[k], w[k], k == 3);
        putchar('\n');
        for (size_t k = 0; k < w[0] + w[1] + w[2] + w[3] + 12; k++)
            putchar('-');
        putchar('\n');
        for (int i = 0; i < n; i++) {
            putchar(' ');
            print_cell(rv_network_get_name(nets[i]), w[0], 0);
            print_cell(rows[i].active ? "active" : "inactive", w[1], 0);
            print_cell(yes_no(rows[i].autostart), w[2], 0);
            print_cell(yes_no(rows[i].persistent), w[3], 1);
            putchar('\n');
        }
    }
    for (int i = 0; i < n; i++)
        rv_network_free(nets[i]);
    free(nets);
    free(rows);
    return rc;
}

static int cmd_net_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_network_get_uuid_string(net, uuid);
    /* Each query may fail alone; virsh then prints a stand-in or nothing. */
    int active = rv_network_is_active(net);
    int persistent = rv_network_is_persistent(net);
    int autostart = -1;
    if (rv_network_get_autostart(net, &autostart) < 0)
        autostart = -1;
    char *bridge = rv_network_get_bridge_name(net);
    if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", rv_network_get_name(net), &first);
        json_str_field("uuid", uuid, &first);
        if (active >= 0)
            json_bool_field("active", active, &first);
        if (persistent >= 0)
            json_bool_field("persistent", persistent, &first);
        if (autostart >= 0)
            json_bool_field("autostart", autostart, &first);
        if (bridge)
            json_str_field("bridge", bridge, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", rv_network_get_name(net));
        printf("%-15s %s\n", "UUID:", uuid);
        if (active >= 0)
            printf("%-15s %s\n", "Active:", yes_no(active));
        printf("%-15s %s\n", "Persistent:", persistent < 0 ? "unknown" : yes_no(persistent));
        printf("%-15s %s\n", "Autostart:", autostart < 0 ? "no autostart" : yes_no(autostart));
        if (bridge)
            printf("%-15s %s\n", "Bridge:", bridge);
    }
    free(bridge);
    rv_network_free(net);
    return 0;
}

static int cmd_net_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    char *xml = rv_network_get_xml_desc(net, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_network_free(net);
    return xml ? 0 : -1;
}

/* net-define and net-create: a network from an XML file. */
static int cmd_net_from_file(shell *sh, const command *cmd, const cmd_args *a)
{
    int create = strcmp(cmd->name, "net-create") == 0;
    char *xml;
    if (read_file(a->value, &xml) < 0)
        return -1;
    rv_net *net = create ? rv_network_create_xml(sh->conn, xml) : rv_network_define_xml(sh->conn, xml);
    free(xml);
    if (!net) {
        error_line("Failed to %s network from %s", create ? "create" : "define", a->value);
        lib_error();
        return -1;
    }
    printf("Network %s %s from %s\n", rv_network_get_name(net), create ? "created" : "defined",
           a->value);
    rv_network_free(net);
    return 0;
}

/* net-start, net-destroy, net-undefine: virsh names the network as typed. */
static int cmd_net_lifecycle(shell *sh, const command *cmd, const cmd_args *a)
{
    static const struct {
        const char *name;
        int (*op)(rv_net *net);
        const char *done, *verb;
    } ops[] = {
        { "net-start", rv_network_create, "started", "start" },
        { "net-destroy", rv_network_destroy, "destroyed", "destroy" },
        { "net-undefine", rv_network_undefine, "has been undefined", "undefine" },
    };
    size_t i = 0;
    while (strcmp(ops[i].name, cmd->name) != 0)
        i++;
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    int rc = ops[i].op(net);
    if (rc < 0) {
        error_line("Failed to %s network %s", ops[i].verb, a->value);
        lib_error();
    } else {
        printf("Network %s %s\n", a->value, ops[i].done);
    }
    rv_network_free(net);
    return rc;
}

static int cmd_net_autostart(shell *sh, const command *cmd, const cmd_args *a)
{
    int enable = !has_opt(cmd, a, "disable");
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    int rc = rv_network_set_autostart(net, enable);
    if (rc < 0) {
        error_line("failed to %smark network %s as autostarted", enable ? "" : "un", a->value);
        lib_error();
    } else {
        printf("Network %s %smarked as autostarted\n", a->value, enable ? "" : "un");
    }
    rv_network_free(net);
    return rc;
}

static int cmd_net_uuid(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_network_get_uuid_string(net, uuid);
    puts(uuid);
    rv_network_free(net);
    return 0;
}

static int cmd_net_name(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    puts(rv_network_get_name(net));
    rv_network_free(net);
    return 0;
}

/* virsh's order: by MAC address, leases without one last. */
static int compare_leases(const void *pa, const void *pb)
{
    const rv_network_dhcp_lease_info *x = pa, *y = pb;
    if (!x->mac || !y->mac)
        return !x->mac - !y->mac;
    return strcasecmp(x->mac, y->mac);
}

/* net-dhcp-leases <network> [--mac M] */
static int cmd_net_dhcp_leases(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_net *net = lookup_network(sh, a->value, cmd->lookup);
    if (!net)
        return -1;
    rv_network_dhcp_lease_info *leases = NULL;
    int n = rv_network_get_dhcp_leases(net, opt_value(cmd, a, "mac"), &leases, 0);
    rv_network_free(net);
    if (n < 0) {
        error_line("Failed to get leases info for %s", a->value);
        lib_error();
        return -1;
    }
    qsort(leases, (size_t)n, sizeof(*leases), compare_leases);
    enum { COLS = 6 };
    char **owned = calloc((size_t)n * 2 + 1, sizeof(*owned));  /* expiry, address */
    const char **cells = calloc((size_t)n * COLS + 1, sizeof(*cells));
    int rc = owned && cells ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        const rv_network_dhcp_lease_info *l = &leases[i];
        time_t when = (time_t)l->expiry_time;
        struct tm tm;
        char stamp[32] = "";
        if (localtime_r(&when, &tm))
            strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
        owned[i * 2] = strdup(stamp);
        if (asprintf(&owned[i * 2 + 1], "%s/%u", l->ipaddr, l->prefix) < 0)
            owned[i * 2 + 1] = NULL;
        rc = owned[i * 2] && owned[i * 2 + 1] ? 0 : -1;
        const char **row = cells + i * COLS;
        row[0] = owned[i * 2];
        row[1] = l->mac ? l->mac : "";
        row[2] = l->type == 0 ? "ipv4" : l->type == 1 ? "ipv6" : "";
        row[3] = owned[i * 2 + 1];
        row[4] = l->hostname ? l->hostname : "-";
        row[5] = l->clientid ? l->clientid : "-";
    }
    if (rc < 0) {
        error_line("out of memory");
    } else if (sh->json || has_opt(cmd, a, "json")) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            const rv_network_dhcp_lease_info *l = &leases[i];
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_num_field("expiry_time", (unsigned long long)l->expiry_time,
                           l->expiry_time >= 0, &first);
            json_str_field("mac", l->mac, &first);
            json_str_field("protocol", cells[i * COLS + 2], &first);
            json_str_field("ip_address", l->ipaddr, &first);
            json_num_field("prefix", l->prefix, 1, &first);
            json_str_field("hostname", l->hostname, &first);
            json_str_field("client_id", l->clientid, &first);
            json_str_field("iaid", l->iaid, &first);
            json_str_field("interface", l->iface, &first);
            putchar('}');
        }
        puts("]");
    } else {
        static const char *const heads[COLS] = { "Expiry Time", "MAC address", "Protocol",
                                                 "IP address", "Hostname", "Client ID or DUID" };
        print_table(heads, COLS, cells, (size_t)n);
    }
    for (int i = 0; owned && i < n * 2; i++)
        free(owned[i]);
    free(owned);
    free(cells);
    rv_network_dhcp_leases_free(leases, n);
    return rc;
}

static const char *const opts_dhcp_leases[] = { "mac=", "json", NULL };

/* The same bits as opts_event, and the event type (only "lifecycle"). */
static const char *const opts_net_event[] = { "loop", "timeout=", "network=", "event=", NULL };

const command rvsh_network_commands[] = {
    { .name = "net-list", .run = cmd_net_list,
      .options = opts_list,
      .summary = "list networks (active ones; --all: all; --inactive: inactive ones)" },
    { .name = "net-info", .run = cmd_net_info, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .options = opts_json,
      .summary = "network information" },
    { .name = "net-dumpxml", .run = cmd_net_dumpxml, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .summary = "network information in XML" },
    { .name = "net-define", .run = cmd_net_from_file, .arg = "file",
      .summary = "define (but don't start) a network from an XML file" },
    { .name = "net-create", .run = cmd_net_from_file, .arg = "file",
      .summary = "create and start a transient network from an XML file" },
    { .name = "net-start", .run = cmd_net_lifecycle, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .summary = "start a defined, inactive network" },
    { .name = "net-destroy", .run = cmd_net_lifecycle, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .summary = "stop a network" },
    { .name = "net-undefine", .run = cmd_net_lifecycle, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .summary = "undefine a persistent network" },
    { .name = "net-autostart", .run = cmd_net_autostart, .arg = "network", .lookup = BY_UUID | BY_NAME,
      .options = opts_disable,
      .summary = "start a network with the host (--disable: don't)" },
    { .name = "net-uuid", .run = cmd_net_uuid, .arg = "network", .lookup = BY_NAME,
      .summary = "convert a network name to its UUID" },
    { .name = "net-name", .run = cmd_net_name, .arg = "network", .lookup = BY_UUID,
      .summary = "convert a network UUID to its name" },
    { .name = "net-dhcp-leases", .run = cmd_net_dhcp_leases, .arg = "network",
      .lookup = BY_UUID | BY_NAME, .options = opts_dhcp_leases,
      .summary = "the network's DHCP leases (--mac: of this MAC address only)" },
    { .name = "net-event", .run = cmd_event,
      .options = opts_net_event,
      .summary = "print network lifecycle events as they come (the first; --loop: all; --timeout seconds)" },
    { .name = NULL },
};
