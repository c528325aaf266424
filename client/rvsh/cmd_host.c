/* rvsh: the host commands: versions, names, node information, capabilities. */
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

static void print_version(const char *what, const char *name, unsigned long long v)
{
    printf("%s: %s %llu.%llu.%llu\n", what, name, v / 1000000, v / 1000 % 1000, v % 1000);
}

static int cmd_version(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long lib = rv_get_lib_version(), hv, daemon;
    print_version("Compiled against library", "libremvirt", RV_LIB_VERSION_NUMBER);
    print_version("Using library", "libremvirt", lib);
    char *type = rv_connect_get_type(sh->conn);
    if (!type) {
        error_line("failed to get hypervisor type");
        lib_error();
        return -1;
    }
    print_version("Using API", type, lib);
    int rc = 0;
    if (rv_connect_get_version(sh->conn, &hv) < 0) {
        error_line("failed to get the hypervisor version");
        lib_error();
        rc = -1;
    } else if (hv == 0) {
        printf("Cannot extract running %s hypervisor version\n", type);
    } else {
        print_version("Running hypervisor", type, hv);
    }
    if (rc == 0 && has_opt(cmd, a, "daemon")) {
        if (rv_connect_get_lib_version(sh->conn, &daemon) < 0) {
            error_line("failed to get the daemon version");
            lib_error();
            rc = -1;
        } else {
            printf("Running against daemon: %llu.%llu.%llu\n", daemon / 1000000,
                   daemon / 1000 % 1000, daemon % 1000);
        }
    }
    free(type);
    return rc;
}

static int cmd_hostname(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    return print_line(rv_connect_get_hostname(sh->conn));
}

static int cmd_uri(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    return print_line(rv_connect_get_uri(sh->conn));
}

static int cmd_capabilities(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    return print_line(rv_connect_get_capabilities(sh->conn));
}

static int cmd_nodeinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    rv_node_info n;
    if (rv_node_get_info(sh->conn, &n) < 0) {
        error_line("failed to get node information");
        lib_error();
        return -1;
    }
    printf("%-20s %s\n", "CPU model:", n.model);
    printf("%-20s %u\n", "CPU(s):", n.cpus);
    if (n.mhz)
        printf("%-20s %u MHz\n", "CPU frequency:", n.mhz);
    printf("%-20s %u\n", "CPU socket(s):", n.sockets);
    printf("%-20s %u\n", "Core(s) per socket:", n.cores);
    printf("%-20s %u\n", "Thread(s) per core:", n.threads);
    printf("%-20s %u\n", "NUMA cell(s):", n.nodes);
    printf("%-20s %llu KiB\n", "Memory size:", n.memory);
    return 0;
}

static const char *const opts_daemon[] = { "daemon", NULL };

const command rvsh_host_commands[] = {
    { .name = "version", .run = cmd_version,
      .options = opts_daemon,
      .summary = "library and hypervisor versions (--daemon: the daemon's too)" },
    { .name = "hostname", .run = cmd_hostname,
      .summary = "the hypervisor host's name" },
    { .name = "nodeinfo", .run = cmd_nodeinfo,
      .summary = "node information" },
    { .name = "uri", .run = cmd_uri,
      .summary = "the URI of the connection" },
    { .name = "capabilities", .run = cmd_capabilities,
      .summary = "capabilities XML" },
    { .name = NULL },
};
