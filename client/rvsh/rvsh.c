/* rvsh: the remvirt shell.
 *
 *   rvsh [-c URI] [-r] [-q] [--json] [-k SECONDS] [-K N] [COMMAND [ARGS...]]
 *
 * With a command it runs that one command; without, it reads commands
 * (readline with history in ~/.rvsh_history and completion of command
 * names, options and domain names when stdin is a terminal; plain lines
 * otherwise).  The URI defaults to $REMVIRT_DEFAULT_URI, else
 * test:///default.  Output matches virsh 9.0 for the same commands: the
 * same lines, the blank line after each command, and on failure
 * "error: ..." lines on stderr and exit status 1.
 *
 * --json (before the command, or as an option of list and dominfo)
 * prints one JSON value instead of the table:
 *   list:    [{"id": 1 | null, "name": "...", "uuid": "...", "state": "running"}, ...]
 *   dominfo: {"id", "name", "uuid", "os_type", "state", "cpus", "cpu_time_ns",
 *             "max_memory_kib", "used_memory_kib", "persistent", "autostart",
 *             "managed_save", "security_model", "security_doi",
 *             "security_label", "security_enforcing"}
 *            where a value the server could not give is null; id is null
 *            for an inactive domain.
 *   dommemstat: {"actual": KiB, "rss": KiB, ...} (libvirt's stat names)
 *   domblkstat: {"rd_req", "rd_bytes", "wr_req", "wr_bytes", "errs"}
 *   vcpuinfo: [{"vcpu", "cpu", "state", "cpu_time_ns", "affinity": "yy-"}, ...]
 *             (cpu, state and cpu_time_ns null for a shut-off domain)
 *   vcpucount: {"maximum_config", "maximum_live", "current_config",
 *               "current_live"}, null where the domain cannot tell
 *   schedinfo: {"scheduler": "...", "params": {"weight": 50, ...}}
 *   nodedev-list: [{"name", "parent": null at the top}, ...]
 *   iface-list: [{"name", "state": "active" | "inactive", "mac"}, ...]
 *   secret-list: [{"uuid", "usage_type": "volume", ..., "usage_id"}, ...]
 *   nwfilter-list: [{"uuid", "name"}, ...]
 *   nwfilter-binding-list: [{"port_dev", "filter"}, ...]
 *   net-dhcp-leases: [{"expiry_time" (epoch seconds), "mac", "protocol",
 *                      "ip_address", "prefix", "hostname", "client_id",
 *                      "iaid", "interface"}, ...], null where none given
 *   domiflist: [{"interface", "type", "source", "model", "mac"}, ...]
 *   domblklist: [{"target", "source"}, ...] (--details: "type", "device" too);
 *               null where virsh prints "-"
 *   domblkinfo: {"capacity", "allocation", "physical"} (bytes)
 *   domifstat: {"rx_bytes", "rx_packets", "rx_errs", "rx_drop", "tx_bytes", ...}
 *   memtune, blkiotune, numatune, domiftune, blkdeviotune: {"name": value, ...}
 *            as the server names them; memtune's "unlimited" is null,
 *            numa_mode its name ("strict")
 *   vcpupin: [{"vcpu": 0, "cpus": "0-7"}, ...]; iothreadinfo: [{"iothread", "cpus"}, ...]
 *   emulatorpin: {"cpus": "0-7"}
 *   domifaddr: [{"name", "mac", "addresses": [{"protocol": "ipv4", "address", "prefix"}]}, ...]
 *   domhostname: {"hostname"}; domtime: {"seconds", "nseconds"}
 *   domstats: [{"domain": "...", "stats": {"state.state": 1, ...}}, ...]
 *   freecell: {"total_kib"}, or {"cells": [{"cell", "free_kib"}, ...]}
 *             (--all: and "total_kib")
 *   nodecpustats: {"user": ns, "kernel": ns, ...} as the server names them;
 *                 --percent: {"usage": percent, "user": percent, ...}
 *   nodecpumap: {"present", "online", "online_cpus": [0, 2, ...]}
 *   cpu-models: ["486", ...]; maxvcpus: {"max_vcpus"}
 * Domain states and reasons print as virsh prints them. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "rvsh.h"

#define HISTORY_FILE ".rvsh_history"
#define HISTORY_LINES 500

static void on_connection_closed(rv_conn *conn, int reason, void *opaque)
{
    shell *sh = opaque;
    (void)conn;
    pthread_mutex_lock(&sh->lock);
    sh->closed_reason = reason;
    pthread_cond_signal(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
}

/* The connection, opened on first use.  One that died (the daemon went
 * away) is replaced, as virsh does, so an interactive session survives a
 * daemon restart. */
static rv_conn *connection(shell *sh)
{
    if (sh->conn && !rv_connect_is_alive(sh->conn)) {
        rv_connect_close(sh->conn);
        sh->conn = NULL;
        sh->reconnecting = 1;
    }
    if (sh->conn)
        return sh->conn;
    pthread_mutex_lock(&sh->lock);
    sh->closed_reason = -1;
    pthread_mutex_unlock(&sh->lock);
    sh->conn = rv_connect_open(sh->uri, sh->open_flags);
    if (!sh->conn) {
        error_line("failed to connect to the hypervisor");
        lib_error();
    } else if (rv_connect_register_close_callback(sh->conn, on_connection_closed, sh, NULL) < 0 ||
               ((sh->keepalive_interval || sh->keepalive_count >= 0) &&
                rv_connect_set_keepalive(sh->conn, sh->keepalive_interval ? sh->keepalive_interval : 5,
                                         sh->keepalive_count >= 0 ? (unsigned)sh->keepalive_count : 5) < 0)) {
        lib_error();
    } else if (sh->reconnecting) {
        error_line("Reconnected to the hypervisor");
        sh->reconnecting = 0;
    }
    return sh->conn;
}

static int cmd_help(shell *sh, const command *cmd, const cmd_args *a);
static int cmd_quit(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)sh, (void)cmd, (void)a;
    return 0;
}

static const command shell_commands[] = {
    { .name = "help", .run = cmd_help, .summary = "this list, or the usage of one command" },
    { .name = "quit", .run = cmd_quit, .summary = "leave the shell" },
    { .name = "exit", .run = cmd_quit, .summary = "leave the shell" },
    { .name = NULL },
};

/* Every command, in the order help lists them. */
static const command *const families[] = {
    rvsh_domain_commands, rvsh_dommanage_commands, rvsh_domtune_commands, rvsh_host_commands,
    rvsh_node_commands,
    rvsh_cpu_commands,
    rvsh_event_commands, rvsh_stats_commands, rvsh_domstats_commands, rvsh_network_commands,
    rvsh_storage_commands, rvsh_snapshot_commands, rvsh_nodedev_commands, rvsh_iface_commands,
    rvsh_secret_commands, rvsh_nwfilter_commands, shell_commands,
};
#define NFAMILIES (sizeof(families) / sizeof(families[0]))

/* The command after *pos (start with { 0, 0 }), or NULL after the last. */
typedef struct command_pos {
    size_t family, index;
} command_pos;

static const command *next_command(command_pos *pos)
{
    while (pos->family < NFAMILIES) {
        const command *c = &families[pos->family][pos->index];
        if (c->name) {
            pos->index++;
            return c;
        }
        pos->family++;
        pos->index = 0;
    }
    return NULL;
}


static const command *find_command(const char *name)
{
    command_pos pos = { 0, 0 };
    for (const command *c; (c = next_command(&pos));)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static int needs_connection(const command *cmd)
{
    return cmd->run != cmd_help && cmd->run != cmd_quit;
}

static void print_synopsis(const command *cmd)
{
    printf("%s", cmd->name);
    if (cmd->arg)
        printf(cmd->arg_optional ? " [<%s>]" : " <%s>", cmd->arg);
    if (cmd->arg2)
        printf(cmd->arg2_required ? " <%s>" : " [<%s>]", cmd->arg2);
    if (cmd->arg3)
        printf(" <%s>", cmd->arg3);
    for (unsigned int i = 0; cmd->options && cmd->options[i]; i++) {
        const char *o = cmd->options[i];
        size_t n = strcspn(o, "=");
        if (o[n])
            printf(" [--%.*s <value>]", (int)n, o);
        else
            printf(" [--%s]", o);
    }
}

static int cmd_help(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)sh, (void)cmd;
    if (a->value) {
        const command *c = find_command(a->value);
        if (!c) {
            error_line("command or command group '%s' doesn't exist", a->value);
            return -1;
        }
        printf("  NAME\n    %s - %s\n\n  SYNOPSIS\n    ", c->name, c->summary);
        print_synopsis(c);
        printf("\n");
        return 0;
    }
    printf(" Commands:\n\n");
    command_pos pos = { 0, 0 };
    for (const command *c; (c = next_command(&pos));)
        printf("    %-14s %s\n", c->name, c->summary);
    return 0;
}

/* Parse argv (argv[0] is the command) and run it.  Returns 0 on success,
 * -1 on failure; *quit is set by quit/exit. */
static int dispatch(shell *sh, int argc, char **argv, int *quit)
{
    const command *cmd = find_command(argv[0]);
    if (!cmd) {
        error_line("unknown command: '%s'", argv[0]);
        return -1;
    }
    cmd_args a = { .value = NULL };
    /* help takes an optional command name */
    const char *arg = cmd->run == cmd_help ? "command" : cmd->arg;
    int only_data = 0;
    for (int i = 1; i < argc; i++) {
        const char *t = argv[i];
        if (!only_data && strcmp(t, "--") == 0) {
            only_data = 1;
            continue;
        }
        if (!only_data && strncmp(t, "--", 2) == 0) {
            const char *name = t + 2;
            if (arg && strcmp(name, arg) == 0) {
                if (i + 1 >= argc || a.value) {
                    error_line("expected syntax: --%s <string>", arg);
                    return -1;
                }
                a.value = argv[++i];
                continue;
            }
            if (cmd->arg2 && strcmp(name, cmd->arg2) == 0) {
                if (i + 1 >= argc || a.value2) {
                    error_line("expected syntax: --%s <string>", cmd->arg2);
                    return -1;
                }
                a.value2 = argv[++i];
                continue;
            }
            if (cmd->arg3 && strcmp(name, cmd->arg3) == 0) {
                if (i + 1 >= argc || a.value3) {
                    error_line("expected syntax: --%s <string>", cmd->arg3);
                    return -1;
                }
                a.value3 = argv[++i];
                continue;
            }
            unsigned int k = 0;
            size_t nlen = strlen(name);
            while (cmd->options && cmd->options[k] &&
                   !(strncmp(cmd->options[k], name, nlen) == 0 &&
                     (cmd->options[k][nlen] == '\0' || cmd->options[k][nlen] == '=')))
                k++;
            if (!cmd->options || !cmd->options[k]) {
                error_line("command '%s' doesn't support option %s", cmd->name, t);
                return -1;
            }
            a.opts |= 1u << k;
            if (cmd->options[k][nlen] == '=') {
                if (i + 1 >= argc) {
                    error_line("expected syntax: --%s <value>", name);
                    return -1;
                }
                a.opt_values[k] = argv[++i];
            }
            continue;
        }
        if (arg && a.value && cmd->arg2 && !a.value2) {
            a.value2 = t;
            continue;
        }
        if (a.value2 && cmd->arg3 && !a.value3) {
            a.value3 = t;
            continue;
        }
        if (!arg || a.value) {
            error_line("unexpected data '%s'", t);
            return -1;
        }
        a.value = t;
    }
    /* Every missing required argument, in order, as virsh names them (an
     * optional first one may be left out, not given empty). */
    const char *const wanted[3] = { cmd->arg_optional && !a.value ? NULL : cmd->arg,
                                    cmd->arg2_required ? cmd->arg2 : NULL, cmd->arg3 };
    const char *const given[3] = { a.value, a.value2, a.value3 };
    int missing = 0;
    for (int k = 0; k < 3; k++) {
        if (!wanted[k] || (given[k] && *given[k]))
            continue;
        if (given[k])
            error_line("Failed to get option '%s': Option argument is empty", wanted[k]);
        else
            error_line("command '%s' requires <%s> option", cmd->name, wanted[k]);
        missing = 1;
    }
    if (missing)
        return -1;
    if (needs_connection(cmd) && !connection(sh))
        return -1;
    int rc = cmd->run(sh, cmd, &a);
    if (cmd->run == cmd_quit)
        *quit = 1;
    else if (!sh->quiet)
        putchar('\n');
    fflush(stdout);
    return rc;
}

/* ---- interactive mode ---- */

/* Split a line like a shell does for words: blanks separate, quotes
 * group, a backslash takes the next character.  The words are stored in
 * one buffer the caller frees (*store) along with the array. */
static int split_line(const char *line, char ***words_out, char **store, int *count)
{
    size_t len = strlen(line);
    char *buf = malloc(len + 1);
    char **words = calloc(len / 2 + 2, sizeof(*words));
    if (!buf || !words) {
        free(buf);
        free(words);
        error_line("out of memory");
        return -1;
    }
    int n = 0;
    char *out = buf;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        words[n++] = out;
        char quote = 0;
        while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n'))) {
            if (quote && *p == quote) {
                quote = 0;
                p++;
            } else if (!quote && (*p == '\'' || *p == '"')) {
                quote = *p++;
            } else if (*p == '\\' && quote != '\'') {
                if (!p[1]) {
                    error_line("dangling \\");
                    free(buf);
                    free(words);
                    return -1;
                }
                *out++ = p[1];
                p += 2;
            } else {
                *out++ = *p++;
            }
        }
        if (quote) {
            error_line("missing %c", quote);
            free(buf);
            free(words);
            return -1;
        }
        *out++ = '\0';
    }
    *words_out = words;
    *store = buf;
    *count = n;
    return 0;
}

static int run_line(shell *sh, const char *line, int *quit)
{
    char **words, *store;
    int n;
    if (split_line(line, &words, &store, &n) < 0)
        return -1;
    int rc = n > 0 ? dispatch(sh, n, words, quit) : 0;
    free(words);
    free(store);
    return rc;
}

static shell *completion_shell;

static char *complete_command(const char *text, int state)
{
    static command_pos pos;
    if (state == 0)
        pos = (command_pos){ 0, 0 };
    for (const command *c; (c = next_command(&pos));) {
        const char *name = c->name;
        if (strncmp(name, text, strlen(text)) == 0)
            return strdup(name);
    }
    return NULL;
}

/* Candidates for a command's arguments: its options, and domain names
 * when it takes a domain and the shell is connected. */
static char **arg_candidates;
static size_t n_candidates;
static const command *completing;

static void free_candidates(void)
{
    for (size_t i = 0; i < n_candidates; i++)
        free(arg_candidates[i]);
    free(arg_candidates);
    arg_candidates = NULL;
    n_candidates = 0;
}

/* Takes c; drops it when out of memory (completion is best effort). */
static void add_candidate(char *c)
{
    char **grown = c ? realloc(arg_candidates, (n_candidates + 1) * sizeof(char *)) : NULL;
    if (!grown) {
        free(c);
        return;
    }
    arg_candidates = grown;
    arg_candidates[n_candidates++] = c;
}

static void collect_candidates(void)
{
    free_candidates();
    for (size_t k = 0; completing->options && completing->options[k]; k++) {
        char *opt = NULL;
        if (asprintf(&opt, "--%s", completing->options[k]) < 0)
            opt = NULL;
        add_candidate(opt);
    }
    if (!completing->arg || strcmp(completing->arg, "domain") != 0 || !completion_shell->conn)
        return;
    rv_dom **doms = NULL;
    int ndoms = rv_connect_list_all_domains(completion_shell->conn, &doms, 0);
    for (int i = 0; i < ndoms; i++) {
        add_candidate(strdup(rv_domain_get_name(doms[i])));
        rv_domain_free(doms[i]);
    }
    free(doms);
}

static char *complete_argument(const char *text, int state)
{
    static size_t next;
    if (state == 0) {
        next = 0;
        collect_candidates();
    }
    while (next < n_candidates) {
        const char *c = arg_candidates[next++];
        if (strncmp(c, text, strlen(text)) == 0)
            return strdup(c);
    }
    return NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    rl_attempted_completion_over = 1;       /* never fall back to file names */
    int first_word = 1;
    for (int i = 0; i < start; i++)
        if (rl_line_buffer[i] != ' ' && rl_line_buffer[i] != '\t')
            first_word = 0;
    if (first_word)
        return rl_completion_matches(text, complete_command);

    size_t skip = strspn(rl_line_buffer, " \t");
    size_t len = strcspn(rl_line_buffer + skip, " \t");
    char name[32] = "";
    if (len < sizeof(name))
        memcpy(name, rl_line_buffer + skip, len), name[len] = '\0';
    completing = find_command(name);
    if (!completing)
        return NULL;
    return rl_completion_matches(text, complete_argument);
}

static char *history_path(void)
{
    const char *home = getenv("HOME");
    char *path = NULL;
    if (!home || !*home || asprintf(&path, "%s/%s", home, HISTORY_FILE) < 0)
        return NULL;
    return path;
}

static void interactive(shell *sh)
{
    int tty = isatty(STDIN_FILENO);
    char *hist = NULL;
    if (tty) {
        if (!sh->quiet)
            printf("Welcome to rvsh, the remvirt interactive terminal.\n\n"
                   "Type:  'help' for help with commands\n"
                   "       'quit' to quit\n\n");
        rl_readline_name = "rvsh";
        rl_attempted_completion_function = complete;
        completion_shell = sh;
        hist = history_path();
        stifle_history(HISTORY_LINES);
        if (hist)
            read_history(hist);
    }
    /* Connect now, as virsh does: problems show at once, and domain
     * names complete from the first line on.  Commands retry on failure. */
    connection(sh);
    const char *prompt = sh->open_flags & RV_CONNECT_READONLY ? "rvsh > " : "rvsh # ";
    int quit = 0;
    while (!quit) {
        char *line = NULL;
        if (tty) {
            line = readline(prompt);
        } else {
            size_t cap = 0;
            if (getline(&line, &cap, stdin) < 0) {
                free(line);
                line = NULL;
            }
        }
        if (!line) {
            if (tty)
                putchar('\n');
            break;
        }
        if (tty && line[strspn(line, " \t")])
            add_history(line);
        run_line(sh, line, &quit);
        free(line);
    }
    if (hist) {
        if (write_history(hist) != 0)
            fprintf(stderr, "warning: cannot save the history in %s\n", hist);
        free(hist);
    }
    free_candidates();
    rl_clear_history();
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rvsh [-c URI] [-r] [-q] [--json] [COMMAND [ARGS...]]\n"
            "\n"
            "  -c, --connect URI  hypervisor connection URI (default: $REMVIRT_DEFAULT_URI,\n"
            "                     else test:///default)\n"
            "  -r, --readonly     open a read-only connection\n"
            "  -q, --quiet        no welcome banner and no blank line after each command\n"
            "      --json         JSON output for list, dominfo, the statistics and the\n"
            "                     domain and host readers\n"
            "  -k, --keepalive-interval SECONDS\n"
            "                     PING a quiet server after this long (default 5; -1: off)\n"
            "  -K, --keepalive-count N\n"
            "                     give the connection up after N unanswered PINGs (default 5)\n"
            "  -h, --help         this help\n"
            "\n"
            "Without a COMMAND, rvsh reads commands interactively.  'rvsh help' lists them.\n");
}

/* The event loop's thread: events, keepalive and a lost connection are
 * noticed while the shell waits for input or for events. */
static void *run_event_loop(void *arg)
{
    (void)arg;
    for (;;)
        if (rv_event_run_default_impl() < 0) {
            lib_error();
            return NULL;
        }
}

int main(int argc, char **argv)
{
    shell sh = { 0 };
    pthread_mutex_init(&sh.lock, NULL);
    pthread_cond_init(&sh.changed, NULL);
    sh.closed_reason = -1;
    static const struct option long_opts[] = {
        { "connect", required_argument, NULL, 'c' },
        { "readonly", no_argument, NULL, 'r' },
        { "quiet", no_argument, NULL, 'q' },
        { "json", no_argument, NULL, 'j' },
        { "keepalive-interval", required_argument, NULL, 'k' },
        { "keepalive-count", required_argument, NULL, 'K' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    /* '+': options end at the command, whose own options follow it. */
    sh.keepalive_count = -1;
    while ((c = getopt_long(argc, argv, "+c:rqhk:K:", long_opts, NULL)) != -1) {
        switch (c) {
        case 'k':
        case 'K': {
            int v;
            if (parse_int(optarg, &v) < 0 || v < (c == 'k' ? -1 : 0)) {
                error_line("invalid keepalive %s '%s'", c == 'k' ? "interval" : "count", optarg);
                return 1;
            }
            *(c == 'k' ? &sh.keepalive_interval : &sh.keepalive_count) = v;
            break;
        }
        case 'c': sh.uri = optarg; break;
        case 'r': sh.open_flags |= RV_CONNECT_READONLY; break;
        case 'q': sh.quiet = 1; break;
        case 'j': sh.json = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }

    pthread_t loop_thread;
    if (rv_event_register_default_impl() < 0 ||
        pthread_create(&loop_thread, NULL, run_event_loop, NULL) != 0) {
        lib_error();
        return 1;
    }
    pthread_detach(loop_thread);

    int rc = 0;
    if (optind < argc) {
        int quit = 0;
        rc = dispatch(&sh, argc - optind, argv + optind, &quit) < 0;
    } else {
        interactive(&sh);
    }
    if (sh.conn && rv_connect_close(sh.conn) < 0) {
        lib_error();
        rc = 1;
    }
    rv_reset_last_error();
    return rc;
}
