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
 * Domain states and reasons print as virsh prints them. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlwriter.h>

#include "remvirt.h"
#include "console.h"

#define HISTORY_FILE ".rvsh_history"
#define HISTORY_LINES 500
#define MAX_XML_FILE (10 * 1024 * 1024)     /* what virsh accepts too */

typedef struct shell {
    const char *uri;            /* NULL: the library's default */
    unsigned int open_flags;
    int json;
    int quiet;
    int reconnecting;           /* the last connection died */
    int keepalive_interval;     /* -k; 0: the library's default */
    int keepalive_count;        /* -K; -1: the library's default */
    rv_conn *conn;
    /* What the event loop's thread tells the command waiting for events. */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events_seen;
    int events_wanted;          /* event without --loop: 1; with it: 0 (all) */
    int closed_reason;          /* -1: open */
} shell;

/* How a command's domain argument may be resolved, as in virsh. */
enum { BY_ID = 1, BY_UUID = 2, BY_NAME = 4, BY_ANY = BY_ID | BY_UUID | BY_NAME };

#define MAX_OPTIONS 16

typedef struct cmd_args {
    const char *value;          /* the first positional argument, if any */
    const char *value2;         /* the second (second_arg()), if any */
    unsigned int opts;          /* bit i: options[i] was given */
    const char *opt_values[MAX_OPTIONS];    /* for options written "name=" */
} cmd_args;

typedef struct command command;
struct command {
    const char *name;
    int (*run)(shell *sh, const command *cmd, const cmd_args *a);
    const char *arg;            /* name of the required argument, or NULL */
    unsigned int lookup;        /* BY_* when arg is a domain */
    const char *const *options; /* NULL-terminated; "name=" takes a value */
    const char *summary;
};

static void error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void error_line(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The library's reason for the last failure. */
static void lib_error(void)
{
    const rv_error_info *e = rv_last_error();
    error_line("%s", e ? e->message : "unknown error");
}

static int has_opt(const command *cmd, const cmd_args *a, const char *name)
{
    for (unsigned int i = 0; cmd->options && cmd->options[i]; i++)
        if (strcmp(cmd->options[i], name) == 0)
            return (a->opts >> i) & 1;
    return 0;
}

/* ---- text for states and reasons (as virsh prints them) ---- */

static const char *state_name(int state)
{
    static const char *const names[] = {
        "no state", "running", "idle", "paused", "in shutdown", "shut off", "crashed",
        "pmsuspended",
    };
    if (state < 0 || state >= (int)(sizeof(names) / sizeof(names[0])))
        return "no state";
    return names[state];
}

static const char *reason_name(int state, int reason)
{
    static const char *const running[] = {
        "unknown", "booted", "migrated", "restored", "from snapshot", "unpaused",
        "migration canceled", "save canceled", "event wakeup", "crashed", "post-copy",
        "post-copy failed",
    };
    static const char *const paused[] = {
        "unknown", "user", "migrating", "saving", "dumping", "I/O error", "watchdog",
        "from snapshot", "shutting down", "creating snapshot", "crashed", "starting up",
        "post-copy", "post-copy failed",
    };
    static const char *const shutdown[] = { "unknown", "user" };
    static const char *const shutoff[] = {
        "unknown", "shutdown", "destroyed", "crashed", "migrated", "saved", "failed",
        "from snapshot", "daemon",
    };
    static const char *const crashed[] = { "unknown", "panicked" };
    const char *const *names = NULL;
    int n = 0;
#define USE(list) (names = (list), n = (int)(sizeof(list) / sizeof((list)[0])))
    switch (state) {
    case RV_DOMAIN_RUNNING: USE(running); break;
    case RV_DOMAIN_PAUSED: USE(paused); break;
    case RV_DOMAIN_SHUTDOWN: USE(shutdown); break;
    case RV_DOMAIN_SHUTOFF: USE(shutoff); break;
    case RV_DOMAIN_CRASHED: USE(crashed); break;
    default: break;
    }
#undef USE
    if (!names || reason < 0 || reason >= n)
        return "unknown";
    return names[reason];
}

/* ---- JSON ---- */

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*p < 0x20)
                printf("\\u%04x", *p);
            else
                putchar(*p);
        }
    }
    putchar('"');
}

static void json_key(const char *key, int *first)
{
    printf("%s", *first ? "" : ", ");
    *first = 0;
    json_string(key);
    fputs(": ", stdout);
}

static void json_str_field(const char *key, const char *value, int *first)
{
    json_key(key, first);
    if (value)
        json_string(value);
    else
        fputs("null", stdout);
}

/* known: 0 prints null. */
static void json_num_field(const char *key, unsigned long long value, int known, int *first)
{
    json_key(key, first);
    if (known)
        printf("%llu", value);
    else
        fputs("null", stdout);
}

/* value < 0 prints null. */
static void json_bool_field(const char *key, int value, int *first)
{
    json_key(key, first);
    fputs(value < 0 ? "null" : value ? "true" : "false", stdout);
}

/* ---- connection and domain lookup ---- */

static void on_connection_closed(rv_conn *conn, int reason, void *opaque);

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

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* A number is an id, 36 characters a UUID, anything else a name; each
 * way is tried in that order when the command allows it. */
static rv_dom *lookup_domain(shell *sh, const char *text, unsigned int how)
{
    int id;
    rv_dom *dom = NULL;
    if ((how & BY_ID) && parse_int(text, &id) == 0 && id >= 0)
        dom = rv_domain_lookup_by_id(sh->conn, id);
    if (!dom && (how & BY_UUID) && strlen(text) == RV_UUID_STRING_BUFLEN - 1)
        dom = rv_domain_lookup_by_uuid_string(sh->conn, text);
    if (!dom && (how & BY_NAME))
        dom = rv_domain_lookup_by_name(sh->conn, text);
    if (!dom) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get domain '%s'", text);
        /* "not found" says nothing more; a broken connection does. */
        if (e && e->code != RV_ERROR_NO_DOMAIN && e->code != RV_ERROR_INVALID_ARG)
            lib_error();
    }
    return dom;
}

/* ---- commands ---- */

static int read_file(const char *path, char **out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        error_line("Failed to open file '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(MAX_XML_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_XML_FILE + 1, f) : 0;
    int bad = !buf || ferror(f);
    int too_big = n > MAX_XML_FILE;
    int saved = errno;
    fclose(f);
    if (bad || too_big) {
        if (!buf)
            error_line("out of memory");
        else if (too_big)
            error_line("file '%s' is larger than %d bytes", path, MAX_XML_FILE);
        else
            error_line("Failed to read file '%s': %s", path, strerror(saved));
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* list: active domains by id, then inactive ones by name, as virsh. */
static int compare_doms(const void *pa, const void *pb)
{
    rv_dom *a = *(rv_dom *const *)pa, *b = *(rv_dom *const *)pb;
    int ia = rv_domain_get_id(a), ib = rv_domain_get_id(b);
    if (ia >= 0 && ib >= 0)
        return (ia > ib) - (ia < ib);
    if (ia < 0 && ib < 0)
        return strcasecmp(rv_domain_get_name(a), rv_domain_get_name(b));
    return ia >= 0 ? -1 : 1;
}

/* Columns are as wide as their widest cell in characters (UTF-8 code
 * points), so multi-byte names line up. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static void print_cell(const char *s, size_t width, int last)
{
    fputs(s, stdout);
    if (!last)
        printf("%*s", (int)(width - text_width(s) + 3), "");
}

static int cmd_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = RV_CONNECT_LIST_DOMAINS_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = RV_CONNECT_LIST_DOMAINS_INACTIVE;

    rv_dom **doms = NULL;
    int n = rv_connect_list_all_domains(sh->conn, &doms, flags);
    if (n < 0) {
        error_line("Failed to list domains");
        lib_error();
        return -1;
    }
    qsort(doms, (size_t)n, sizeof(*doms), compare_doms);

    /* One row per domain: id text, name, state text. */
    char (*ids)[16] = calloc((size_t)n + 1, sizeof(*ids));
    const char **states = calloc((size_t)n + 1, sizeof(*states));
    int rc = ids && states ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int id = rv_domain_get_id(doms[i]), state;
        if (id >= 0)
            snprintf(ids[i], sizeof(ids[i]), "%d", id);
        else
            strcpy(ids[i], "-");
        if (rv_domain_get_state(doms[i], &state, NULL, 0) < 0) {
            error_line("Failed to get the state of domain '%s'", rv_domain_get_name(doms[i]));
            lib_error();
            rc = -1;
            break;
        }
        states[i] = state_name(state);
    }

    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            char uuid[RV_UUID_STRING_BUFLEN];
            int first = 1;
            rv_domain_get_uuid_string(doms[i], uuid);
            printf("%s{", i ? ", " : "");
            int id = rv_domain_get_id(doms[i]);
            json_num_field("id", (unsigned long long)id, id >= 0, &first);
            json_str_field("name", rv_domain_get_name(doms[i]), &first);
            json_str_field("uuid", uuid, &first);
            json_str_field("state", states[i], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        size_t w[3] = { strlen("Id"), strlen("Name"), strlen("State") };
        for (int i = 0; i < n; i++) {
            size_t c[3] = { strlen(ids[i]), text_width(rv_domain_get_name(doms[i])),
                            strlen(states[i]) };
            for (int k = 0; k < 3; k++)
                if (c[k] > w[k])
                    w[k] = c[k];
        }
        putchar(' ');
        print_cell("Id", w[0], 0);
        print_cell("Name", w[1], 0);
        print_cell("State", w[2], 1);
        putchar('\n');
        for (size_t k = 0; k < w[0] + w[1] + w[2] + 9; k++)
            putchar('-');
        putchar('\n');
        for (int i = 0; i < n; i++) {
            putchar(' ');
            print_cell(ids[i], w[0], 0);
            print_cell(rv_domain_get_name(doms[i]), w[1], 0);
            print_cell(states[i], w[2], 1);
            putchar('\n');
        }
    }
    for (int i = 0; i < n; i++)
        rv_domain_free(doms[i]);
    free(doms);
    free(ids);
    free(states);
    return rc;
}

static int cmd_dominfo(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int json = sh->json || has_opt(cmd, a, "json");
    int id = rv_domain_get_id(dom), rc = 0;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_domain_get_uuid_string(dom, uuid);

    /* Each query may fail alone; virsh then leaves its line out. */
    char *os_type = rv_domain_get_os_type(dom);
    rv_domain_info info;
    int have_info = rv_domain_get_info(dom, &info) == 0;
    int persistent = rv_domain_is_persistent(dom);
    int autostart = -1;
    if (rv_domain_get_autostart(dom, &autostart) < 0)
        autostart = -1;
    int managed_save = rv_domain_has_managed_save_image(dom, 0);
    rv_security_model model;
    rv_security_label label;
    int have_model = rv_node_get_security_model(sh->conn, &model) == 0;
    if (!have_model && rv_last_error() && rv_last_error()->code != RV_ERROR_NO_SUPPORT) {
        lib_error();
        rc = -1;
        goto out;
    }
    int show_security = have_model && model.model[0];
    int have_label = 0;
    if (show_security) {
        if (rv_domain_get_security_label(dom, &label) < 0) {
            lib_error();
            rc = -1;
            goto out;
        }
        have_label = label.label[0] != '\0';
    }
    char **messages = NULL;
    int nmessages = rv_domain_get_messages(dom, &messages, 0);

    if (json) {
        int first = 1;
        putchar('{');
        json_num_field("id", (unsigned long long)id, id >= 0, &first);
        json_str_field("name", rv_domain_get_name(dom), &first);
        json_str_field("uuid", uuid, &first);
        json_str_field("os_type", os_type, &first);
        json_str_field("state", have_info ? state_name(info.state) : NULL, &first);
        json_num_field("cpus", have_info ? info.nr_virt_cpu : 0, have_info, &first);
        json_num_field("cpu_time_ns", have_info ? info.cpu_time : 0, have_info, &first);
        json_num_field("max_memory_kib", have_info ? info.max_mem : 0, have_info, &first);
        json_num_field("used_memory_kib", have_info ? info.memory : 0, have_info, &first);
        json_bool_field("persistent", persistent, &first);
        json_bool_field("autostart", autostart, &first);
        json_bool_field("managed_save", managed_save, &first);
        json_str_field("security_model", show_security ? model.model : NULL, &first);
        json_str_field("security_doi", show_security ? model.doi : NULL, &first);
        json_str_field("security_label", have_label ? label.label : NULL, &first);
        json_bool_field("security_enforcing", have_label ? label.enforcing : -1, &first);
        puts("}");
    } else {
        if (id >= 0)
            printf("%-15s %d\n", "Id:", id);
        else
            printf("%-15s %s\n", "Id:", "-");
        printf("%-15s %s\n", "Name:", rv_domain_get_name(dom));
        printf("%-15s %s\n", "UUID:", uuid);
        if (os_type)
            printf("%-15s %s\n", "OS Type:", os_type);
        if (have_info) {
            printf("%-15s %s\n", "State:", state_name(info.state));
            printf("%-15s %u\n", "CPU(s):", info.nr_virt_cpu);
            if (info.cpu_time != 0)
                printf("%-15s %.1lfs\n", "CPU time:", (double)info.cpu_time / 1000000000.0);
            if (info.max_mem != UINT_MAX)
                printf("%-15s %llu KiB\n", "Max memory:", info.max_mem);
            else
                printf("%-15s %s\n", "Max memory:", "no limit");
            printf("%-15s %llu KiB\n", "Used memory:", info.memory);
        }
        printf("%-15s %s\n", "Persistent:", persistent < 0 ? "unknown" : persistent ? "yes" : "no");
        if (autostart >= 0)
            printf("%-15s %s\n", "Autostart:", autostart ? "enable" : "disable");
        printf("%-15s %s\n", "Managed save:",
               managed_save < 0 ? "unknown" : managed_save ? "yes" : "no");
        if (show_security) {
            printf("%-15s %s\n", "Security model:", model.model);
            printf("%-15s %s\n", "Security DOI:", model.doi);
            if (have_label)
                printf("%-15s %s (%s)\n", "Security label:", label.label,
                       label.enforcing ? "enforcing" : "permissive");
        }
        for (int i = 0; i < nmessages; i++)
            printf("%-15s %s\n", i == 0 ? "Messages:" : "", messages[i]);
    }
    for (int i = 0; i < nmessages; i++)
        free(messages[i]);
    free(messages);
out:
    free(os_type);
    rv_domain_free(dom);
    return rc;
}

static int cmd_domstate(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int state, reason, rc = rv_domain_get_state(dom, &state, &reason, 0);
    if (rc < 0)
        lib_error();
    else if (has_opt(cmd, a, "reason"))
        printf("%s (%s)\n", state_name(state), reason_name(state, reason));
    else
        printf("%s\n", state_name(state));
    rv_domain_free(dom);
    return rc;
}

static int cmd_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    char *xml = rv_domain_get_xml_desc(dom, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_domain_free(dom);
    return xml ? 0 : -1;
}

/* define and create: a domain from an XML file. */
static int from_file(shell *sh, const char *path, int create)
{
    char *xml;
    if (read_file(path, &xml) < 0)
        return -1;
    rv_dom *dom = create ? rv_domain_create_xml(sh->conn, xml, 0) : rv_domain_define_xml(sh->conn, xml);
    free(xml);
    if (!dom) {
        error_line("Failed to %s domain from %s", create ? "create" : "define", path);
        lib_error();
        return -1;
    }
    printf("Domain '%s' %s from %s\n", rv_domain_get_name(dom), create ? "created" : "defined", path);
    rv_domain_free(dom);
    return 0;
}

static int cmd_define(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    return from_file(sh, a->value, 0);
}

static int cmd_create(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    return from_file(sh, a->value, 1);
}

/* The lifecycle commands differ in the call and the words they print. */
typedef struct lifecycle {
    const char *name;
    int (*op)(rv_dom *dom);
    const char *done;           /* "Domain 'x' <done>" */
    const char *verb;           /* "Failed to <verb> domain 'x'" */
} lifecycle;

static int op_start(rv_dom *d) { return rv_domain_create(d, 0); }
static int op_shutdown(rv_dom *d) { return rv_domain_shutdown(d, 0); }
static int op_destroy(rv_dom *d) { return rv_domain_destroy(d, 0); }
static int op_reboot(rv_dom *d) { return rv_domain_reboot(d, 0); }
static int op_undefine(rv_dom *d) { return rv_domain_undefine(d, 0); }

static const lifecycle lifecycles[] = {
    { "start", op_start, "started", "start" },
    { "shutdown", op_shutdown, "is being shutdown", "shutdown" },
    { "destroy", op_destroy, "destroyed", "destroy" },
    { "suspend", rv_domain_suspend, "suspended", "suspend" },
    { "resume", rv_domain_resume, "resumed", "resume" },
    { "reboot", op_reboot, "is being rebooted", "reboot" },
    { "undefine", op_undefine, "has been undefined", "undefine" },
};

static int cmd_lifecycle(shell *sh, const command *cmd, const cmd_args *a)
{
    const lifecycle *lc = NULL;
    for (size_t i = 0; i < sizeof(lifecycles) / sizeof(lifecycles[0]); i++)
        if (strcmp(lifecycles[i].name, cmd->name) == 0)
            lc = &lifecycles[i];
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = -1;
    const char *name = rv_domain_get_name(dom);
    if (lc->op == op_start && rv_domain_get_id(dom) >= 0) {
        error_line("Domain is already active");
    } else if (lc->op == op_undefine && rv_domain_has_managed_save_image(dom, 0) > 0) {
        error_line("Refusing to undefine while domain managed save image exists");
    } else if (lc->op(dom) < 0) {
        error_line("Failed to %s domain '%s'", lc->verb, name);
        lib_error();
    } else {
        printf("Domain '%s' %s\n", name, lc->done);
        rc = 0;
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_domid(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int id = rv_domain_get_id(dom);
    if (id >= 0)
        printf("%d\n", id);
    else
        puts("-");
    rv_domain_free(dom);
    return 0;
}

static int cmd_domuuid(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_domain_get_uuid_string(dom, uuid);
    puts(uuid);
    rv_domain_free(dom);
    return 0;
}

static int cmd_domname(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    puts(rv_domain_get_name(dom));
    rv_domain_free(dom);
    return 0;
}

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

/* hostname, uri, capabilities: print one string (and take it). */
static int print_line(char *s)
{
    if (!s) {
        lib_error();
        return -1;
    }
    printf("%s\n", s);
    free(s);
    return 0;
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

/* ---- events ---- */

static const char *lifecycle_event_name(int event)
{
    static const char *const names[] = {
        "Defined", "Undefined", "Started", "Suspended", "Resumed", "Stopped", "Shutdown",
        "PMSuspended", "Crashed",
    };
    return event >= 0 && event < (int)(sizeof(names) / sizeof(names[0])) ? names[event]
                                                                          : "unknown";
}

/* virsh's words for each event's details. */
static const char *lifecycle_detail_name(int event, int detail)
{
    static const char *const defined[] = { "Added", "Updated", "Renamed", "Snapshot" };
    static const char *const undefined[] = { "Removed", "Renamed" };
    static const char *const started[] = { "Booted", "Migrated", "Restored", "Snapshot",
                                           "Event wakeup", "Recreated" };
    static const char *const suspended[] = { "Paused", "Migrated", "I/O Error", "Watchdog",
                                             "Restored", "Snapshot", "API error", "Post-copy",
                                             "Post-copy Error" };
    static const char *const resumed[] = { "Unpaused", "Migrated", "Snapshot", "Post-copy",
                                           "Post-copy Error" };
    static const char *const stopped[] = { "Shutdown", "Destroyed", "Crashed", "Migrated",
                                           "Saved", "Failed", "Snapshot" };
    static const char *const shutdown[] = { "Finished", "Finished after guest request",
                                            "Finished after host request" };
    static const char *const pmsuspended[] = { "Memory", "Disk" };
    static const char *const crashed[] = { "Core Dump", "Crashloaded" };
    const char *const *names = NULL;
    int n = 0;
#define USE(list) (names = (list), n = (int)(sizeof(list) / sizeof((list)[0])))
    switch (event) {
    case RV_DOMAIN_EVENT_DEFINED: USE(defined); break;
    case RV_DOMAIN_EVENT_UNDEFINED: USE(undefined); break;
    case RV_DOMAIN_EVENT_STARTED: USE(started); break;
    case RV_DOMAIN_EVENT_SUSPENDED: USE(suspended); break;
    case RV_DOMAIN_EVENT_RESUMED: USE(resumed); break;
    case RV_DOMAIN_EVENT_STOPPED: USE(stopped); break;
    case RV_DOMAIN_EVENT_SHUTDOWN: USE(shutdown); break;
    case RV_DOMAIN_EVENT_PMSUSPENDED: USE(pmsuspended); break;
    case RV_DOMAIN_EVENT_CRASHED: USE(crashed); break;
    default: break;
    }
#undef USE
    return detail >= 0 && detail < n ? names[detail] : "unknown";
}

/* In the event loop's thread. */
static void on_lifecycle(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    shell *sh = opaque;
    (void)conn;
    pthread_mutex_lock(&sh->lock);
    /* Without --loop only the first counts, even if more arrive before
     * the command deregisters. */
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        /* Printed before the waiting command can print its count. */
        printf("event 'lifecycle' for domain '%s': %s %s\n", rv_domain_get_name(dom),
               lifecycle_event_name(event), lifecycle_detail_name(event, detail));
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

static void on_net_lifecycle(rv_conn *conn, rv_net *net, int event, int detail, void *opaque)
{
    static const char *const names[] = { "Defined", "Undefined", "Started", "Stopped" };
    shell *sh = opaque;
    (void)conn, (void)detail;
    pthread_mutex_lock(&sh->lock);
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        printf("event 'lifecycle' for network %s: %s\n", rv_network_get_name(net),
               event >= 0 && event < 4 ? names[event] : "unknown");
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

/* One line of pool event output, as virsh prints it, counted (without
 * --loop only the first). */
static void print_pool_event(shell *sh, const char *kind, rv_pool *pool, const char *what)
{
    pthread_mutex_lock(&sh->lock);
    if (!sh->events_wanted || sh->events_seen < sh->events_wanted) {
        printf("event '%s' for storage pool %s%s%s\n", kind, rv_storage_pool_get_name(pool),
               what ? ": " : "", what ? what : "");
        fflush(stdout);
        sh->events_seen++;
        pthread_cond_signal(&sh->changed);
    }
    pthread_mutex_unlock(&sh->lock);
}

static void on_pool_lifecycle(rv_conn *conn, rv_pool *pool, int event, int detail, void *opaque)
{
    static const char *const names[] = { "Defined", "Undefined", "Started", "Stopped",
                                         "Created", "Deleted" };
    (void)conn, (void)detail;
    print_pool_event(opaque, "lifecycle", pool, event >= 0 && event < 6 ? names[event] : "unknown");
}

static void on_pool_refresh(rv_conn *conn, rv_pool *pool, void *opaque)
{
    (void)conn;
    print_pool_event(opaque, "refresh", pool, NULL);
}

static void on_connection_closed(rv_conn *conn, int reason, void *opaque)
{
    shell *sh = opaque;
    (void)conn;
    pthread_mutex_lock(&sh->lock);
    sh->closed_reason = reason;
    pthread_cond_signal(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char *close_reason_text(int reason)
{
    switch (reason) {
    case RV_CONNECT_CLOSE_REASON_EOF: return "the server closed the connection";
    case RV_CONNECT_CLOSE_REASON_KEEPALIVE: return "the server stopped answering keepalive";
    case RV_CONNECT_CLOSE_REASON_CLIENT: return "closed";
    default: return "an error on the connection";
    }
}

/* event [--loop] [--timeout N] [--domain NAME]: print lifecycle events as
 * they come, as virsh event --event lifecycle does: the first one only,
 * or every one with --loop, until the timeout or Ctrl-C. */
static rv_net *lookup_network(shell *sh, const char *text, unsigned int how);
static rv_pool *lookup_pool(shell *sh, const char *text);

static int cmd_event(shell *sh, const command *cmd, const cmd_args *a)
{
    int loop = a->opts & 1, timeout = 0;
    const char *timeout_text = a->opt_values[1], *domain = a->opt_values[2];
    if (timeout_text && (parse_int(timeout_text, &timeout) < 0 || timeout <= 0)) {
        error_line("Numeric value '%s' for <timeout> option is malformed or out of range",
                   timeout_text);
        return -1;
    }
    /* net-event and pool-event: the same, for network lifecycle events
     * (--network) and storage pool lifecycle or refresh events (--pool). */
    int network = strcmp(cmd->name, "net-event") == 0;
    int storage = strcmp(cmd->name, "pool-event") == 0;
    const char *kind = a->opt_values[3];
    int refresh = storage && kind && strcmp(kind, "refresh") == 0;
    if ((network || storage) && kind && strcmp(kind, "lifecycle") != 0 && !refresh) {
        error_line("unknown event type %s", kind);
        return -1;
    }
    rv_dom *dom = domain && !network && !storage ? lookup_domain(sh, domain, BY_ANY) : NULL;
    rv_net *net = domain && network ? lookup_network(sh, domain, BY_UUID | BY_NAME) : NULL;
    rv_pool *pool = domain && storage ? lookup_pool(sh, domain) : NULL;
    if (domain && !dom && !net && !pool)
        return -1;
    pthread_mutex_lock(&sh->lock);
    sh->events_seen = 0;
    sh->events_wanted = loop ? 0 : 1;
    pthread_mutex_unlock(&sh->lock);
    int id;
    if (network)
        id = rv_connect_network_event_register_lifecycle(sh->conn, net, on_net_lifecycle, sh, NULL);
    else if (refresh)
        id = rv_connect_storage_pool_event_register_refresh(sh->conn, pool, on_pool_refresh, sh,
                                                            NULL);
    else if (storage)
        id = rv_connect_storage_pool_event_register_lifecycle(sh->conn, pool, on_pool_lifecycle,
                                                              sh, NULL);
    else
        id = rv_connect_domain_event_register_lifecycle(sh->conn, dom, on_lifecycle, sh, NULL);
    rv_domain_free(dom);
    rv_network_free(net);
    rv_storage_pool_free(pool);
    if (id < 0) {
        lib_error();
        return -1;
    }
    struct sigaction sa = { .sa_handler = on_sigint }, old;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout;
    int timed_out = 0, closed = -1, seen;
    pthread_mutex_lock(&sh->lock);
    for (;;) {
        seen = sh->events_seen;
        closed = sh->closed_reason;
        if ((!loop && seen > 0) || closed >= 0 || interrupted)
            break;
        /* Wake now and then to notice Ctrl-C. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (timeout && (until.tv_sec > deadline.tv_sec ||
                        (until.tv_sec == deadline.tv_sec && until.tv_nsec > deadline.tv_nsec)))
            until = deadline;
        if (pthread_cond_timedwait(&sh->changed, &sh->lock, &until) == ETIMEDOUT && timeout) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (now.tv_sec > deadline.tv_sec ||
                (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
                timed_out = 1;
                seen = sh->events_seen;
                break;
            }
        }
    }
    pthread_mutex_unlock(&sh->lock);
    sigaction(SIGINT, &old, NULL);
    if (closed >= 0) {
        error_line("the connection to the hypervisor was lost: %s", close_reason_text(closed));
        printf("events received: %d\n", seen);
        return -1;
    }
    int gone = network ? rv_connect_network_event_deregister(sh->conn, id)
             : storage ? rv_connect_storage_pool_event_deregister(sh->conn, id)
                       : rv_connect_domain_event_deregister(sh->conn, id);
    if (gone < 0)
        lib_error();
    if (timed_out)
        printf("event loop timed out\n");
    printf("events received: %d\n", seen);
    /* As virsh: a timeout with no event is a failure. */
    return timed_out && seen == 0 ? -1 : 0;
}

static int cmd_help(shell *sh, const command *cmd, const cmd_args *a);
static int cmd_quit(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)sh, (void)cmd, (void)a;
    return 0;
}

/* ---- virtual networks ---- */

/* virsh's order: a UUID first (when the text is one), then a name. */
static rv_net *lookup_network(shell *sh, const char *text, unsigned int how)
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

static const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

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

/* ---- storage pools and volumes ---- */

/* virsh's order: a UUID first (when the text is one), then a name. */
static rv_pool *lookup_pool_by(shell *sh, const char *text, unsigned int how)
{
    rv_pool *pool = NULL;
    int tried = 0;
    if ((how & BY_UUID) && strlen(text) == RV_UUID_STRING_BUFLEN - 1) {
        tried = 1;
        pool = rv_storage_pool_lookup_by_uuid_string(sh->conn, text);
    }
    if (!pool && (how & BY_NAME)) {
        tried = 1;
        pool = rv_storage_pool_lookup_by_name(sh->conn, text);
    }
    if (!pool) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get pool '%s'", text);
        /* A text that is no UUID was never sent: nothing more to say. */
        if (tried && e && e->code != RV_ERROR_INVALID_ARG)
            lib_error();
    }
    return pool;
}

static rv_pool *lookup_pool(shell *sh, const char *text)
{
    return lookup_pool_by(sh, text, BY_UUID | BY_NAME);
}

/* virsh's order for a volume: by name in --pool (when given), then by
 * key, then by path; the last failure is the one reported. */
static rv_vol *lookup_vol(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *pool_name = NULL, *text = a->value;
    int takes_pool = 0;
    for (unsigned int k = 0; cmd->options && cmd->options[k]; k++) {
        if (strcmp(cmd->options[k], "pool=") != 0)
            continue;
        takes_pool = 1;
        if (a->opts & (1u << k))
            pool_name = a->opt_values[k];
    }
    rv_vol *vol = NULL;
    if (pool_name) {
        rv_pool *pool = lookup_pool(sh, pool_name);
        if (!pool)
            return NULL;
        vol = rv_storage_vol_lookup_by_name(pool, text);
        rv_storage_pool_free(pool);
    }
    if (!vol)
        vol = rv_storage_vol_lookup_by_key(sh->conn, text);
    if (!vol)
        vol = rv_storage_vol_lookup_by_path(sh->conn, text);
    if (!vol) {
        if (takes_pool && !pool_name && text[0] == '/')
            error_line("failed to get vol '%s', specifying --pool might help", text);
        else
            error_line("failed to get vol '%s'", text);
        lib_error();
    }
    return vol;
}

/* virsh's sizes: bytes below 1 KiB, else the largest binary unit under it. */
static void print_size(const char *label, unsigned long long bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)bytes;
    size_t u = 0;
    while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= (1ULL << (10 * (u + 1))))
        u++;
    v /= (double)(1ULL << (10 * u));
    printf("%-15s %.2lf %s\n", label, v, units[u]);
}

static const char *pool_state_name(int state)
{
    static const char *const names[] = { "inactive", "building", "running", "degraded",
                                         "inaccessible" };
    return state >= 0 && state < 5 ? names[state] : "unknown";
}

static const char *vol_type_name(int type)
{
    static const char *const names[] = { "file", "block", "dir", "network", "netdir", "ploop" };
    return type >= 0 && type < 6 ? names[type] : "unknown";
}

static int compare_pools(const void *pa, const void *pb)
{
    return strcasecmp(rv_storage_pool_get_name(*(rv_pool *const *)pa),
                      rv_storage_pool_get_name(*(rv_pool *const *)pb));
}

static int compare_vols(const void *pa, const void *pb)
{
    return strcasecmp(rv_storage_vol_get_name(*(rv_vol *const *)pa),
                      rv_storage_vol_get_name(*(rv_vol *const *)pb));
}

/* A virsh table: ncols columns as wide as their widest cell, a rule. */
static void print_table(const char *const *heads, size_t ncols, const char *const *cells,
                        size_t nrows)
{
    size_t w[8], rule = 0;
    for (size_t k = 0; k < ncols; k++) {
        w[k] = text_width(heads[k]);
        for (size_t i = 0; i < nrows; i++)
            if (text_width(cells[i * ncols + k]) > w[k])
                w[k] = text_width(cells[i * ncols + k]);
        rule += w[k] + 3;
    }
    putchar(' ');
    for (size_t k = 0; k < ncols; k++)
        print_cell(heads[k], w[k], k + 1 == ncols);
    putchar('\n');
    for (size_t k = 0; k < rule; k++)
        putchar('-');
    putchar('\n');
    for (size_t i = 0; i < nrows; i++) {
        putchar(' ');
        for (size_t k = 0; k < ncols; k++)
            print_cell(cells[i * ncols + k], w[k], k + 1 == ncols);
        putchar('\n');
    }
}

static int cmd_pool_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = RV_CONNECT_LIST_STORAGE_POOLS_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = RV_CONNECT_LIST_STORAGE_POOLS_INACTIVE;
    rv_pool **pools = NULL;
    int n = rv_connect_list_all_storage_pools(sh->conn, &pools, flags);
    if (n < 0) {
        error_line("Failed to list pools");
        lib_error();
        return -1;
    }
    qsort(pools, (size_t)n, sizeof(*pools), compare_pools);
    const char **cells = calloc((size_t)n * 3 + 1, sizeof(*cells));
    int *persistent = calloc((size_t)n + 1, sizeof(*persistent));
    int rc = cells && persistent ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int active = rv_storage_pool_is_active(pools[i]), autostart = 0;
        persistent[i] = rv_storage_pool_is_persistent(pools[i]);
        if (active < 0 || persistent[i] < 0 ||
            rv_storage_pool_get_autostart(pools[i], &autostart) < 0) {
            lib_error();
            rc = -1;
            break;
        }
        cells[i * 3] = rv_storage_pool_get_name(pools[i]);
        cells[i * 3 + 1] = active ? "active" : "inactive";
        cells[i * 3 + 2] = yes_no(autostart);
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            char uuid[RV_UUID_STRING_BUFLEN];
            int first = 1;
            rv_storage_pool_get_uuid_string(pools[i], uuid);
            printf("%s{", i ? ", " : "");
            json_str_field("name", cells[i * 3], &first);
            json_str_field("uuid", uuid, &first);
            json_str_field("state", cells[i * 3 + 1], &first);
            json_bool_field("autostart", strcmp(cells[i * 3 + 2], "yes") == 0, &first);
            json_bool_field("persistent", persistent[i], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Name", "State", "Autostart" };
        print_table(heads, 3, cells, (size_t)n);
    }
    for (int i = 0; i < n; i++)
        rv_storage_pool_free(pools[i]);
    free(pools);
    free(cells);
    free(persistent);
    return rc;
}

static int cmd_pool_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_storage_pool_get_uuid_string(pool, uuid);
    rv_storage_pool_info info;
    if (rv_storage_pool_get_info(pool, &info) < 0) {
        lib_error();
        rv_storage_pool_free(pool);
        return -1;
    }
    /* Each query may fail alone; virsh then prints a stand-in. */
    int persistent = rv_storage_pool_is_persistent(pool), autostart = -1;
    if (rv_storage_pool_get_autostart(pool, &autostart) < 0)
        autostart = -1;
    int sizes = info.state == RV_STORAGE_POOL_RUNNING || info.state == RV_STORAGE_POOL_DEGRADED;
    if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", rv_storage_pool_get_name(pool), &first);
        json_str_field("uuid", uuid, &first);
        json_str_field("state", pool_state_name(info.state), &first);
        if (persistent >= 0)
            json_bool_field("persistent", persistent, &first);
        if (autostart >= 0)
            json_bool_field("autostart", autostart, &first);
        json_num_field("capacity", info.capacity, sizes, &first);
        json_num_field("allocation", info.allocation, sizes, &first);
        json_num_field("available", info.available, sizes, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", rv_storage_pool_get_name(pool));
        printf("%-15s %s\n", "UUID:", uuid);
        printf("%-15s %s\n", "State:", pool_state_name(info.state));
        printf("%-15s %s\n", "Persistent:", persistent < 0 ? "unknown" : yes_no(persistent));
        printf("%-15s %s\n", "Autostart:", autostart < 0 ? "no autostart" : yes_no(autostart));
        if (sizes) {
            print_size("Capacity:", info.capacity);
            print_size("Allocation:", info.allocation);
            print_size("Available:", info.available);
        }
    }
    rv_storage_pool_free(pool);
    return 0;
}

static int cmd_pool_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char *xml = rv_storage_pool_get_xml_desc(pool, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_storage_pool_free(pool);
    return xml ? 0 : -1;
}

/* pool-define and pool-create: a pool from an XML file. */
static int cmd_pool_define(shell *sh, const command *cmd, const cmd_args *a)
{
    int create = strcmp(cmd->name, "pool-create") == 0;
    char *xml;
    if (read_file(a->value, &xml) < 0)
        return -1;
    rv_pool *pool = create ? rv_storage_pool_create_xml(sh->conn, xml, 0)
                           : rv_storage_pool_define_xml(sh->conn, xml, 0);
    free(xml);
    if (!pool) {
        error_line("Failed to %s pool from %s", create ? "create" : "define", a->value);
        lib_error();
        return -1;
    }
    printf("Pool %s %s from %s\n", rv_storage_pool_get_name(pool),
           create ? "created" : "defined", a->value);
    rv_storage_pool_free(pool);
    return 0;
}

static int op_pool_start(rv_pool *p) { return rv_storage_pool_create(p, 0); }
static int op_pool_build(rv_pool *p) { return rv_storage_pool_build(p, 0); }
static int op_pool_refresh(rv_pool *p) { return rv_storage_pool_refresh(p, 0); }
static int op_pool_delete(rv_pool *p) { return rv_storage_pool_delete(p, 0); }

/* pool-start, pool-destroy, pool-undefine: virsh names the pool as typed. */
static int cmd_pool_lifecycle(shell *sh, const command *cmd, const cmd_args *a)
{
    static const struct {
        const char *name;
        int (*op)(rv_pool *pool);
        const char *done, *verb;
    } ops[] = {
        { "pool-start", op_pool_start, "started", "start" },
        { "pool-destroy", rv_storage_pool_destroy, "destroyed", "destroy" },
        { "pool-undefine", rv_storage_pool_undefine, "has been undefined", "undefine" },
        { "pool-build", op_pool_build, "built", "build" },
        { "pool-refresh", op_pool_refresh, "refreshed", "refresh" },
        { "pool-delete", op_pool_delete, "deleted", "delete" },
    };
    size_t i = 0;
    while (strcmp(ops[i].name, cmd->name) != 0)
        i++;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    int rc = ops[i].op(pool);
    if (rc < 0) {
        error_line("Failed to %s pool %s", ops[i].verb, a->value);
        lib_error();
    } else {
        printf("Pool %s %s\n", a->value, ops[i].done);
    }
    rv_storage_pool_free(pool);
    return rc;
}

static int cmd_pool_autostart(shell *sh, const command *cmd, const cmd_args *a)
{
    int enable = !has_opt(cmd, a, "disable");
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    int rc = rv_storage_pool_set_autostart(pool, enable);
    if (rc < 0) {
        error_line("failed to %smark pool %s as autostarted", enable ? "" : "un", a->value);
        lib_error();
    } else {
        printf("Pool %s %smarked as autostarted\n", a->value, enable ? "" : "un");
    }
    rv_storage_pool_free(pool);
    return rc;
}

/* pool-uuid (by name) and pool-name (by UUID). */
static int cmd_pool_ident(shell *sh, const command *cmd, const cmd_args *a)
{
    int uuid = strcmp(cmd->name, "pool-uuid") == 0;
    rv_pool *pool = lookup_pool_by(sh, a->value, uuid ? BY_NAME : BY_UUID);
    if (!pool)
        return -1;
    char text[RV_UUID_STRING_BUFLEN];
    rv_storage_pool_get_uuid_string(pool, text);
    puts(uuid ? text : rv_storage_pool_get_name(pool));
    rv_storage_pool_free(pool);
    return 0;
}

static int cmd_vol_list(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    rv_vol **vols = NULL;
    int n = rv_storage_pool_list_all_volumes(pool, &vols, 0);
    rv_storage_pool_free(pool);
    if (n < 0) {
        error_line("Failed to list volumes");
        lib_error();
        return -1;
    }
    qsort(vols, (size_t)n, sizeof(*vols), compare_vols);
    char **paths = calloc((size_t)n + 1, sizeof(*paths));
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    int rc = paths && cells ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!(paths[i] = rv_storage_vol_get_path(vols[i]))) {
            lib_error();
            rc = -1;
            break;
        }
        cells[i * 2] = rv_storage_vol_get_name(vols[i]);
        cells[i * 2 + 1] = paths[i];
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("name", cells[i * 2], &first);
            json_str_field("path", cells[i * 2 + 1], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Name", "Path" };
        print_table(heads, 2, cells, (size_t)n);
    }
    for (int i = 0; i < n; i++) {
        free(paths ? paths[i] : NULL);
        rv_storage_vol_free(vols[i]);
    }
    free(vols);
    free(paths);
    free(cells);
    return rc;
}

static int cmd_vol_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    rv_storage_vol_info info;
    int rc = rv_storage_vol_get_info(vol, &info);
    if (rc < 0) {
        lib_error();
    } else if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", rv_storage_vol_get_name(vol), &first);
        json_str_field("type", vol_type_name(info.type), &first);
        json_num_field("capacity", info.capacity, 1, &first);
        json_num_field("allocation", info.allocation, 1, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", rv_storage_vol_get_name(vol));
        printf("%-15s %s\n", "Type:", vol_type_name(info.type));
        print_size("Capacity:", info.capacity);
        print_size("Allocation:", info.allocation);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* vol-dumpxml, vol-path, vol-key, vol-name, vol-pool: one string about
 * the volume. */
static int cmd_vol_string(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    int xml = strcmp(cmd->name, "vol-dumpxml") == 0;
    char *s = NULL;
    if (xml)
        s = rv_storage_vol_get_xml_desc(vol, 0);
    else if (strcmp(cmd->name, "vol-path") == 0)
        s = rv_storage_vol_get_path(vol);
    else
        s = strdup(strcmp(cmd->name, "vol-key") == 0 ? rv_storage_vol_get_key(vol)
                   : strcmp(cmd->name, "vol-name") == 0 ? rv_storage_vol_get_name(vol)
                                                        : rv_storage_vol_get_pool_name(vol));
    if (!s)
        lib_error();
    else if (xml)
        fputs(s, stdout);
    else
        puts(s);
    free(s);
    rv_storage_vol_free(vol);
    return s ? 0 : -1;
}

static int cmd_vol_create(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char *xml;
    if (read_file(a->value2, &xml) < 0) {
        rv_storage_pool_free(pool);
        return -1;
    }
    rv_vol *vol = rv_storage_vol_create_xml(pool, xml, 0);
    free(xml);
    rv_storage_pool_free(pool);
    if (!vol) {
        error_line("Failed to create vol from %s", a->value2);
        lib_error();
        return -1;
    }
    printf("Vol %s created from %s\n", rv_storage_vol_get_name(vol), a->value2);
    rv_storage_vol_free(vol);
    return 0;
}

static int cmd_vol_delete(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    int rc = rv_storage_vol_delete(vol, 0);
    if (rc < 0) {
        error_line("Failed to delete vol %s", a->value);
        lib_error();
    } else {
        printf("Vol %s deleted\n", a->value);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* console <domain> [--devname NAME] [--force] [--safe]: the guest's
 * console on this terminal until ^], as virsh console. */
static int cmd_console(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    unsigned int flags = (has_opt(cmd, a, "force") ? 1 : 0) | (has_opt(cmd, a, "safe") ? 2 : 0);
    /* As virsh: a domain that is not running is refused here. */
    int state = 0, reason = 0;
    if (rv_domain_get_state(dom, &state, &reason, 0) < 0) {
        lib_error();
        rv_domain_free(dom);
        return -1;
    }
    if (state != RV_DOMAIN_RUNNING && !(flags & 1)) {
        error_line("The domain is not running");
        rv_domain_free(dom);
        return -1;
    }
    printf("Connected to domain '%s'\nEscape character is ^] (Ctrl + ])\n",
           rv_domain_get_name(dom));
    fflush(stdout);
    rv_stream *st = rv_stream_new(sh->conn, RV_STREAM_NONBLOCK);
    int rc = -1;
    if (!st || rv_domain_open_console(dom, a->opt_values[0], st, flags) < 0) {
        lib_error();
    } else {
        rc = rvsh_console_run(st);
        if (rc < 0)
            lib_error();
        else
            rv_stream_finish(st);
        printf("\n");
    }
    rv_stream_free(st);
    rv_domain_free(dom);
    return rc;
}

/* ---- vol-upload, vol-download (streams) ---- */

/* --offset and --length, as virsh reads them. */
static int parse_span(const cmd_args *a, unsigned long long *offset, unsigned long long *length)
{
    const char *names[] = { "offset", "length" };
    unsigned long long *out[] = { offset, length };
    for (int i = 0; i < 2; i++) {
        const char *text = a->opt_values[1 + i];
        *out[i] = 0;
        if (!text)
            continue;
        char *end;
        errno = 0;
        *out[i] = strtoull(text, &end, 10);
        if (errno || end == text || *end || text[0] == '-') {
            error_line("Numeric value '%s' for <%s> option is malformed or out of range", text,
                       names[i]);
            return -1;
        }
    }
    return 0;
}

#define RVSH_STREAM_BUF (256 * 1024)

/* Send the file's bytes from its current position to its end: all as
 * data, or (sparse) its holes as holes, found with SEEK_DATA/SEEK_HOLE
 * as virsh does.  0, -1 after the library failed, -2 after the file did. */
static int send_file(rv_stream *st, int fd, char *buf, int sparse)
{
    off_t pos = lseek(fd, 0, SEEK_CUR);
    off_t data_end = -1;        /* where the data at pos ends; -1: not known */
    for (;;) {
        if (sparse && (data_end < 0 || pos >= data_end)) {
            off_t data = lseek(fd, pos, SEEK_DATA);
            if (data < 0 && errno == ENXIO) {
                /* No data after pos: a hole to the end, if any. */
                struct stat sb;
                if (fstat(fd, &sb) < 0)
                    return -2;
                if (sb.st_size <= pos)
                    return 0;
                data = sb.st_size;
            } else if (data < 0) {
                return -2;
            }
            if (data > pos) {
                if (rv_stream_send_hole(st, (long long)(data - pos), 0) < 0)
                    return -1;
                pos = data;
                if (lseek(fd, pos, SEEK_SET) < 0)
                    return -2;
                continue;
            }
            if ((data_end = lseek(fd, pos, SEEK_HOLE)) < 0 || lseek(fd, pos, SEEK_SET) < 0)
                return -2;
        }
        size_t want = RVSH_STREAM_BUF;
        if (sparse && (unsigned long long)(data_end - pos) < want)
            want = (size_t)(data_end - pos);
        ssize_t n = read(fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -2;
        if (n == 0)
            return 0;
        if (rv_stream_send(st, buf, (size_t)n) < 0)
            return -1;
        pos += n;
    }
}

/* vol-upload <vol> <file> [--pool P] [--offset N] [--length N] [--sparse]:
 * the file's bytes into the volume, as virsh vol-upload. */
static int cmd_vol_upload(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long offset, length;
    if (parse_span(a, &offset, &length) < 0)
        return -1;
    int sparse = has_opt(cmd, a, "sparse");
    int fd = open(a->value2, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error_line("cannot read %s", a->value2);
        return -1;
    }
    rv_vol *vol = lookup_vol(sh, cmd, a);
    rv_stream *st = vol ? rv_stream_new(sh->conn, 0) : NULL;
    char *buf = malloc(RVSH_STREAM_BUF);
    int rc = -1;
    if (!vol || !st || !buf) {
        if (vol)
            lib_error();
    } else if (rv_storage_vol_upload(vol, st, offset, length,
                                     sparse ? RV_STORAGE_VOL_UPLOAD_SPARSE_STREAM : 0) < 0) {
        error_line("cannot upload to volume %s", a->value);
        lib_error();
    } else {
        rc = send_file(st, fd, buf, sparse);
        if (rc == -2) {
            error_line("cannot read %s", a->value2);
            rv_stream_abort(st);
            rc = -1;
        } else if (rc < 0) {
            error_line("cannot send data to volume %s", a->value);
            lib_error();
        } else if (rv_stream_finish(st) < 0) {
            error_line("cannot close volume %s", a->value);
            lib_error();
            rc = -1;
        }
    }
    free(buf);
    rv_stream_free(st);
    rv_storage_vol_free(vol);
    close(fd);
    return rc;
}

/* Write what st brings into fd until its end; with sparse, a hole moves
 * the position past it and makes the file end there (ftruncate), as
 * virsh does, so the file has the same holes.  0, -1 after the library
 * failed, -2 after the file did. */
static int receive_file(rv_stream *st, int fd, char *buf, int sparse)
{
    for (;;) {
        int n = rv_stream_recv_flags(st, buf, RVSH_STREAM_BUF,
                                     sparse ? RV_STREAM_RECV_STOP_AT_HOLE : 0);
        if (n == RV_STREAM_AT_HOLE) {
            long long hole;
            off_t end;
            if (rv_stream_recv_hole(st, &hole, 0) < 0)
                return -1;
            if ((end = lseek(fd, (off_t)hole, SEEK_CUR)) < 0 || ftruncate(fd, end) < 0)
                return -2;
            continue;
        }
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        for (int done = 0; done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                return -2;
            done += w > 0 ? (int)w : 0;
        }
    }
}

/* vol-download <vol> <file> [--pool P] [--offset N] [--length N] [--sparse]:
 * the volume's bytes into the file (a file it created is removed again if
 * the download fails), as virsh vol-download. */
static int cmd_vol_download(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long offset, length;
    if (parse_span(a, &offset, &length) < 0)
        return -1;
    int sparse = has_opt(cmd, a, "sparse");
    int created = 1;
    int fd = open(a->value2, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = open(a->value2, O_WRONLY | O_TRUNC | O_CLOEXEC);
    }
    if (fd < 0) {
        error_line("cannot create %s", a->value2);
        return -1;
    }
    rv_vol *vol = lookup_vol(sh, cmd, a);
    rv_stream *st = vol ? rv_stream_new(sh->conn, 0) : NULL;
    char *buf = malloc(RVSH_STREAM_BUF);
    int rc = -1;
    if (!vol || !st || !buf) {
        if (vol)
            lib_error();
    } else if (rv_storage_vol_download(vol, st, offset, length,
                                       sparse ? RV_STORAGE_VOL_DOWNLOAD_SPARSE_STREAM : 0) < 0) {
        error_line("cannot download from volume %s", a->value);
        lib_error();
    } else {
        int got = receive_file(st, fd, buf, sparse);
        if (got == -2) {
            error_line("cannot write %s", a->value2);
            rv_stream_abort(st);
        } else if (got < 0) {
            error_line("cannot receive data from volume %s", a->value);
            lib_error();
        } else if (rv_stream_finish(st) < 0) {
            error_line("cannot close volume %s", a->value);
            lib_error();
        } else {
            rc = 0;
        }
    }
    free(buf);
    rv_stream_free(st);
    rv_storage_vol_free(vol);
    if (close(fd) != 0 && rc == 0) {
        error_line("cannot write %s", a->value2);
        rc = -1;
    }
    if (rc < 0 && created)
        unlink(a->value2);
    return rc;
}

/* ---- statistics (as virsh prints them) ---- */

static int cmd_dommemstat(shell *sh, const command *cmd, const cmd_args *a)
{
    /* libvirt's virDomainMemoryStatTags names, by tag. */
    static const char *const names[] = {
        "swap_in", "swap_out", "major_fault", "minor_fault", "unused", "available",
        "actual", "rss", "usable", "last_update", "disk_caches", "hugetlb_pgalloc",
        "hugetlb_pgfail",
    };
    enum { NSTATS = sizeof(names) / sizeof(names[0]) };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_memory_stat stats[NSTATS];
    const char *name = rv_domain_get_name(dom);     /* (a call resets the last error) */
    int n = rv_domain_memory_stats(dom, stats, NSTATS, 0);
    if (n < 0) {
        error_line("Failed to get memory statistics for domain %s", name);
        lib_error();
    }
    int json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (n >= 0 && json)
        putchar('{');
    for (int i = 0; i < n; i++) {
        if (stats[i].tag < 0 || stats[i].tag >= NSTATS)
            continue;
        if (json)
            json_num_field(names[stats[i].tag], stats[i].val, 1, &first);
        else
            printf("%s %llu\n", names[stats[i].tag], stats[i].val);
    }
    if (n >= 0 && json)
        puts("}");
    rv_domain_free(dom);
    return n < 0 ? -1 : 0;
}

static int cmd_domblkstat(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *device = a->value2 ? a->value2 : "";
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_block_stats st;
    int rc = rv_domain_block_stats(dom, device, &st);
    if (rc < 0) {
        error_line("Failed to get block stats %s %s", a->value, device);
        lib_error();
    } else {
        const struct { const char *name; long long v; } rows[] = {
            { "rd_req", st.rd_req }, { "rd_bytes", st.rd_bytes }, { "wr_req", st.wr_req },
            { "wr_bytes", st.wr_bytes }, { "errs", st.errs },
        };
        int json = sh->json || has_opt(cmd, a, "json"), first = 1;
        if (json)
            putchar('{');
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
            if (json)           /* -1: the driver does not count it */
                json_num_field(rows[i].name, (unsigned long long)rows[i].v, rows[i].v >= 0,
                               &first);
            else if (rows[i].v >= 0)
                printf("%s %s %lld\n", device, rows[i].name, rows[i].v);
        }
        if (json)
            puts("}");
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_vcpuinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const states[] = { "offline", "running", "blocked" };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = -1, maxcpu = rv_node_get_cpu_map(sh->conn, NULL, NULL, 0);
    rv_domain_info info;
    rv_vcpu *vcpus = NULL;
    unsigned char *maps = NULL;
    if (maxcpu < 1 || rv_domain_get_info(dom, &info) < 0 || info.nr_virt_cpu < 1) {
        lib_error();
        goto out;
    }
    int maplen = (maxcpu + 7) / 8;
    vcpus = calloc(info.nr_virt_cpu, sizeof(*vcpus));
    maps = calloc(info.nr_virt_cpu, (size_t)maplen);
    if (!vcpus || !maps) {
        error_line("out of memory");
        goto out;
    }
    int n = rv_domain_get_vcpus(dom, vcpus, (int)info.nr_virt_cpu, maps, maplen);
    /* A shut-off domain has no vcpus running: like virsh, show where they
     * may run, from its definition. */
    int pinned_only = n < 0 && rv_domain_is_active(dom) == 0;
    if (pinned_only) {
        n = rv_domain_get_vcpu_pin_info(dom, (int)info.nr_virt_cpu, maps, maplen,
                                        RV_DOMAIN_VCPU_CONFIG);
        for (int i = 0; i < n; i++)
            vcpus[i] = (rv_vcpu){ .number = (unsigned int)i, .state = -1, .cpu = -1 };
    }
    if (n < 0) {
        lib_error();
        goto out;
    }
    char *affinity = malloc((size_t)maxcpu + 1);
    if (!affinity) {
        error_line("out of memory");
        goto out;
    }
    int json = sh->json || has_opt(cmd, a, "json");
    if (json)
        putchar('[');
    for (int i = 0; json && i < n; i++) {
        const rv_vcpu *v = &vcpus[i];
        int first = 1;
        for (int c = 0; c < maxcpu; c++)
            affinity[c] = maps[(size_t)i * maplen + c / 8] & (1u << (c % 8)) ? 'y' : '-';
        affinity[maxcpu] = '\0';
        printf("%s{", i ? ", " : "");
        json_num_field("vcpu", v->number, 1, &first);
        json_num_field("cpu", (unsigned long long)v->cpu, v->cpu >= 0, &first);
        json_str_field("state", v->state >= 0 && v->state < 3 ? states[v->state] : NULL,
                       &first);
        json_num_field("cpu_time_ns", v->cpu_time, !pinned_only, &first);
        json_str_field("affinity", affinity, &first);
        putchar('}');
    }
    free(affinity);
    if (json)
        puts("]");
    for (int i = 0; !json && i < n; i++) {
        const rv_vcpu *v = &vcpus[i];
        printf("%-15s %u\n", "VCPU:", v->number);
        if (pinned_only) {
            /* (virsh's "CPU time" has no colon here) */
            printf("%-15s %s\n%-15s %s\n%-15s %s\n", "CPU:", "N/A", "State:", "N/A",
                   "CPU time", "N/A");
        } else {
            printf("%-15s %d\n", "CPU:", v->cpu);
            printf("%-15s %s\n", "State:",
                   v->state >= 0 && v->state < 3 ? states[v->state] : "no state");
            printf("%-15s %.1fs\n", "CPU time:", (double)v->cpu_time / 1e9);
        }
        printf("%-15s ", "CPU Affinity:");
        for (int c = 0; c < maxcpu; c++)
            putchar(maps[(size_t)i * maplen + c / 8] & (1u << (c % 8)) ? 'y' : '-');
        putchar('\n');
        if (i < n - 1)
            putchar('\n');
    }
    rc = 0;
out:
    free(vcpus);
    free(maps);
    rv_domain_free(dom);
    return rc;
}

static int cmd_vcpucount(shell *sh, const command *cmd, const cmd_args *a)
{
    /* The four counts virsh shows without options; one the domain cannot
     * give (live ones of a shut-off domain) is left out. */
    static const struct { const char *what, *where; unsigned int flags; } rows[] = {
        { "maximum", "config", RV_DOMAIN_VCPU_CONFIG | RV_DOMAIN_VCPU_MAXIMUM },
        { "maximum", "live", RV_DOMAIN_VCPU_LIVE | RV_DOMAIN_VCPU_MAXIMUM },
        { "current", "config", RV_DOMAIN_VCPU_CONFIG },
        { "current", "live", RV_DOMAIN_VCPU_LIVE },
    };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int shown = 0, json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (json)
        putchar('{');
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int n = rv_domain_get_vcpus_flags(dom, rows[i].flags);
        if (json) {
            char key[32];
            snprintf(key, sizeof(key), "%s_%s", rows[i].what, rows[i].where);
            json_num_field(key, (unsigned long long)n, n >= 0, &first);
        } else if (n >= 0) {
            printf("%-12s %-12s %3d\n", rows[i].what, rows[i].where, n);
        }
        shown += n >= 0;
    }
    if (json)
        puts("}");
    if (!shown)
        lib_error();
    rv_domain_free(dom);
    return shown ? 0 : -1;
}

static int cmd_schedinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int nparams = 0, rc = -1;
    rv_typed_parameter *params = NULL;
    char *type = rv_domain_get_scheduler_type(dom, &nparams);
    int json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (!json)
        printf("%-15s: %s\n", "Scheduler", type ? type : "Unknown");
    if (!type) {
        lib_error();
        goto out;
    }
    if (json) {
        fputs("{\"scheduler\": ", stdout);
        json_string(type);
        fputs(", \"params\": {", stdout);
    }
    if (nparams > 0) {
        params = calloc((size_t)nparams, sizeof(*params));
        if (!params) {
            error_line("out of memory");
            goto out;
        }
        if (rv_domain_get_scheduler_parameters(dom, params, &nparams) < 0) {
            lib_error();
            goto out;
        }
        for (int i = 0; json && i < nparams; i++) {
            const rv_typed_parameter *p = &params[i];
            json_key(p->field, &first);
            switch (p->type) {
            case RV_PARAM_INT: printf("%d", p->value.i); break;
            case RV_PARAM_UINT: printf("%u", p->value.ui); break;
            case RV_PARAM_LLONG: printf("%lld", p->value.l); break;
            case RV_PARAM_ULLONG: printf("%llu", p->value.ul); break;
            case RV_PARAM_DOUBLE: printf("%.17g", p->value.d); break;
            case RV_PARAM_BOOLEAN: fputs(p->value.b ? "true" : "false", stdout); break;
            case RV_PARAM_STRING: json_string(p->value.s ? p->value.s : ""); break;
            default: fputs("null", stdout); break;
            }
        }
        for (int i = 0; !json && i < nparams; i++) {
            const rv_typed_parameter *p = &params[i];
            printf("%-15s: ", p->field);
            switch (p->type) {
            case RV_PARAM_INT: printf("%d\n", p->value.i); break;
            case RV_PARAM_UINT: printf("%u\n", p->value.ui); break;
            case RV_PARAM_LLONG: printf("%lld\n", p->value.l); break;
            case RV_PARAM_ULLONG: printf("%llu\n", p->value.ul); break;
            case RV_PARAM_DOUBLE: printf("%f\n", p->value.d); break;
            case RV_PARAM_BOOLEAN: printf("%s\n", p->value.b ? "yes" : "no"); break;
            case RV_PARAM_STRING: printf("%s\n", p->value.s ? p->value.s : ""); break;
            default: printf("unknown\n"); break;
            }
        }
        rv_typed_parameters_clear(params, nparams);
    }
    if (json)
        puts("}}");
    rc = 0;
out:
    free(params);
    free(type);
    rv_domain_free(dom);
    return rc;
}

/* ---- domain snapshots ---- */

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

static xmlNode *xml_child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
            return c;
    return NULL;
}

static char *xml_text(const xmlNode *n)
{
    xmlChar *raw = n ? xmlNodeGetContent(n) : NULL;
    char *copy = raw && raw[0] ? strdup((const char *)raw) : NULL;
    xmlFree(raw);
    return copy;
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

static const char *const opts_list[] = { "all", "inactive", "json", NULL };
static const char *const opts_json[] = { "json", NULL };
/* cmd_snapshot_list reads "from=" as opt_values[6]; the others by name. */
static const char *const opts_snapshot_list[] = {
    "parent", "roots", "leaves", "no-leaves", "tree", "current", "from=", "descendants",
    "name", "active", "inactive", "internal", "external", "json", NULL,
};
/* cmd_snapshot_create_as reads "description=" as opt_values[0]. */
static const char *const opts_snapshot_create[] = { "description=", "halt", NULL };
static const char *const opts_snapshot_info[] = { "current", "json", NULL };
static const char *const opts_snapshot_current[] = { "name", NULL };
static const char *const opts_snapshot_parent[] = { "current", NULL };
static const char *const opts_snapshot_revert[] = { "current", "running", "paused", "force", NULL };
static const char *const opts_snapshot_delete[] = { "current", "children", "children-only",
                                                    "metadata", NULL };
static const char *const opts_vol[] = { "pool=", NULL };
static const char *const opts_vol_json[] = { "pool=", "json", NULL };
/* Bit order matters: parse_span reads values 1 (offset) and 2 (length). */
static const char *const opts_console[] = { "devname=", "force", "safe", NULL };
static const char *const opts_vol_stream[] = { "pool=", "offset=", "length=", "sparse", NULL };
static const char *const opts_disable[] = { "disable", NULL };
static const char *const opts_reason[] = { "reason", NULL };
static const char *const opts_daemon[] = { "daemon", NULL };
/* Bit order matters: cmd_event reads bits 0 (loop), 1 (timeout), 2 (domain). */
static const char *const opts_event[] = { "loop", "timeout=", "domain=", NULL };
/* The same bits as opts_event, and the event type (only "lifecycle"). */
static const char *const opts_net_event[] = { "loop", "timeout=", "network=", "event=", NULL };
static const char *const opts_pool_event[] = { "loop", "timeout=", "pool=", "event=", NULL };

static const command commands[] = {
    { "list", cmd_list, NULL, 0, opts_list, "list domains (running ones; --all: all; --inactive: shut off ones)" },
    { "dominfo", cmd_dominfo, "domain", BY_ANY, opts_json, "domain information" },
    { "console", cmd_console, "domain", BY_ANY, opts_console, "connect to the guest's console (^] leaves)" },
    { "domstate", cmd_domstate, "domain", BY_ANY, opts_reason, "domain state (--reason: and why)" },
    { "dumpxml", cmd_dumpxml, "domain", BY_ANY, NULL, "domain information in XML" },
    { "define", cmd_define, "file", 0, NULL, "define (but don't start) a domain from an XML file" },
    { "undefine", cmd_lifecycle, "domain", BY_ANY, NULL, "undefine a domain" },
    { "create", cmd_create, "file", 0, NULL, "create and start a transient domain from an XML file" },
    { "start", cmd_lifecycle, "domain", BY_ANY, NULL, "start a defined domain" },
    { "shutdown", cmd_lifecycle, "domain", BY_ANY, NULL, "gracefully shut down a domain" },
    { "destroy", cmd_lifecycle, "domain", BY_ANY, NULL, "stop a domain at once" },
    { "suspend", cmd_lifecycle, "domain", BY_ANY, NULL, "suspend a domain" },
    { "resume", cmd_lifecycle, "domain", BY_ANY, NULL, "resume a suspended domain" },
    { "reboot", cmd_lifecycle, "domain", BY_ANY, NULL, "reboot a domain" },
    { "domid", cmd_domid, "domain", BY_NAME | BY_UUID, NULL, "convert a domain name or UUID to its id" },
    { "domuuid", cmd_domuuid, "domain", BY_NAME | BY_ID, NULL, "convert a domain name or id to its UUID" },
    { "domname", cmd_domname, "domain", BY_ID | BY_UUID, NULL, "convert a domain id or UUID to its name" },
    { "version", cmd_version, NULL, 0, opts_daemon, "library and hypervisor versions (--daemon: the daemon's too)" },
    { "hostname", cmd_hostname, NULL, 0, NULL, "the hypervisor host's name" },
    { "nodeinfo", cmd_nodeinfo, NULL, 0, NULL, "node information" },
    { "uri", cmd_uri, NULL, 0, NULL, "the URI of the connection" },
    { "capabilities", cmd_capabilities, NULL, 0, NULL, "capabilities XML" },
    { "event", cmd_event, NULL, 0, opts_event,
      "print domain lifecycle events as they come (the first; --loop: all; --timeout seconds)" },
    { "dommemstat", cmd_dommemstat, "domain", BY_ANY, opts_json, "a domain's memory statistics" },
    { "domblkstat", cmd_domblkstat, "domain", BY_ANY, opts_json, "a disk's I/O counters (domblkstat DOMAIN DEVICE)" },
    { "vcpuinfo", cmd_vcpuinfo, "domain", BY_ANY, opts_json, "a running domain's virtual CPUs" },
    { "vcpucount", cmd_vcpucount, "domain", BY_ANY, opts_json, "how many virtual CPUs a domain has" },
    { "schedinfo", cmd_schedinfo, "domain", BY_ANY, opts_json, "a domain's scheduler and its parameters" },
    { "net-list", cmd_net_list, NULL, 0, opts_list, "list networks (active ones; --all: all; --inactive: inactive ones)" },
    { "net-info", cmd_net_info, "network", BY_UUID | BY_NAME, opts_json, "network information" },
    { "net-dumpxml", cmd_net_dumpxml, "network", BY_UUID | BY_NAME, NULL, "network information in XML" },
    { "net-define", cmd_net_from_file, "file", 0, NULL, "define (but don't start) a network from an XML file" },
    { "net-create", cmd_net_from_file, "file", 0, NULL, "create and start a transient network from an XML file" },
    { "net-start", cmd_net_lifecycle, "network", BY_UUID | BY_NAME, NULL, "start a defined, inactive network" },
    { "net-destroy", cmd_net_lifecycle, "network", BY_UUID | BY_NAME, NULL, "stop a network" },
    { "net-undefine", cmd_net_lifecycle, "network", BY_UUID | BY_NAME, NULL, "undefine a persistent network" },
    { "net-autostart", cmd_net_autostart, "network", BY_UUID | BY_NAME, opts_disable, "start a network with the host (--disable: don't)" },
    { "net-uuid", cmd_net_uuid, "network", BY_NAME, NULL, "convert a network name to its UUID" },
    { "net-name", cmd_net_name, "network", BY_UUID, NULL, "convert a network UUID to its name" },
    { "net-event", cmd_event, NULL, 0, opts_net_event,
      "print network lifecycle events as they come (the first; --loop: all; --timeout seconds)" },
    { "pool-list", cmd_pool_list, NULL, 0, opts_list, "list storage pools (active ones; --all: all; --inactive: inactive ones)" },
    { "pool-info", cmd_pool_info, "pool", 0, opts_json, "storage pool information" },
    { "pool-dumpxml", cmd_pool_dumpxml, "pool", 0, NULL, "storage pool information in XML" },
    { "pool-define", cmd_pool_define, "file", 0, NULL, "define (but don't start) a storage pool from an XML file" },
    { "pool-create", cmd_pool_define, "file", 0, NULL, "create and start a transient storage pool from an XML file" },
    { "pool-build", cmd_pool_lifecycle, "pool", 0, NULL, "build a storage pool's storage" },
    { "pool-refresh", cmd_pool_lifecycle, "pool", 0, NULL, "read a storage pool's volumes again" },
    { "pool-delete", cmd_pool_lifecycle, "pool", 0, NULL, "delete an inactive storage pool's storage" },
    { "pool-uuid", cmd_pool_ident, "pool", 0, NULL, "convert a storage pool name to its UUID" },
    { "pool-name", cmd_pool_ident, "pool", 0, NULL, "convert a storage pool UUID to its name" },
    { "pool-start", cmd_pool_lifecycle, "pool", 0, NULL, "start a defined, inactive storage pool" },
    { "pool-destroy", cmd_pool_lifecycle, "pool", 0, NULL, "stop a storage pool" },
    { "pool-undefine", cmd_pool_lifecycle, "pool", 0, NULL, "undefine an inactive storage pool" },
    { "pool-autostart", cmd_pool_autostart, "pool", 0, opts_disable, "start a storage pool with the host (--disable: don't)" },
    { "vol-list", cmd_vol_list, "pool", 0, opts_json, "list the volumes of a storage pool" },
    { "vol-info", cmd_vol_info, "vol", 0, opts_vol_json, "storage volume information (by name with --pool, key or path)" },
    { "vol-dumpxml", cmd_vol_string, "vol", 0, opts_vol, "storage volume information in XML" },
    { "vol-path", cmd_vol_string, "vol", 0, opts_vol, "the path of a storage volume" },
    { "vol-key", cmd_vol_string, "vol", 0, opts_vol, "the key of a storage volume" },
    { "vol-name", cmd_vol_string, "vol", 0, NULL, "the name of a storage volume (by key or path)" },
    { "vol-pool", cmd_vol_string, "vol", 0, NULL, "the pool of a storage volume (by key or path)" },
    { "vol-create", cmd_vol_create, "pool", 0, NULL, "create a storage volume from an XML file" },
    { "vol-delete", cmd_vol_delete, "vol", 0, opts_vol, "delete a storage volume" },
    { "vol-upload", cmd_vol_upload, "vol", 0, opts_vol_stream, "upload a file into a storage volume" },
    { "vol-download", cmd_vol_download, "vol", 0, opts_vol_stream, "download a storage volume into a file" },
    { "pool-event", cmd_event, NULL, 0, opts_pool_event,
      "print storage pool lifecycle (or --event refresh) events as they come (the first; --loop: all; --timeout seconds)" },
    { "snapshot-create-as", cmd_snapshot_create_as, "domain", BY_ANY, opts_snapshot_create,
      "take a snapshot of a domain (snapshot-create-as DOMAIN [NAME] [--description TEXT] [--halt])" },
    { "snapshot-list", cmd_snapshot_list, "domain", BY_ANY, opts_snapshot_list,
      "list a domain's snapshots" },
    { "snapshot-info", cmd_snapshot_info, "domain", BY_ANY, opts_snapshot_info,
      "snapshot information (snapshot-info DOMAIN NAME, or --current)" },
    { "snapshot-dumpxml", cmd_snapshot_show, "domain", BY_ANY, NULL,
      "snapshot information in XML (snapshot-dumpxml DOMAIN NAME)" },
    { "snapshot-current", cmd_snapshot_show, "domain", BY_ANY, opts_snapshot_current,
      "the current snapshot's XML (--name: its name)" },
    { "snapshot-parent", cmd_snapshot_show, "domain", BY_ANY, opts_snapshot_parent,
      "the name of a snapshot's parent (snapshot-parent DOMAIN NAME, or --current)" },
    { "snapshot-revert", cmd_snapshot_change, "domain", BY_ANY, opts_snapshot_revert,
      "revert a domain to a snapshot (snapshot-revert DOMAIN NAME, or --current)" },
    { "snapshot-delete", cmd_snapshot_change, "domain", BY_ANY, opts_snapshot_delete,
      "delete a snapshot (snapshot-delete DOMAIN NAME, or --current)" },
    { "help", cmd_help, NULL, 0, NULL, "this list, or the usage of one command" },
    { "quit", cmd_quit, NULL, 0, NULL, "leave the shell" },
    { "exit", cmd_quit, NULL, 0, NULL, "leave the shell" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The commands with a second positional argument: vol-create <pool>
 * <file>, where it is required, and domblkstat <domain> [<device>], where
 * it may be left out (virsh then asks for the whole domain's counters). */
static const char *second_arg(const command *cmd)
{
    if (cmd->run == cmd_domblkstat)
        return "device";
    if (cmd->run == cmd_snapshot_create_as)
        return "name";
    if (strncmp(cmd->name, "snapshot-", 9) == 0 && cmd->run != cmd_snapshot_list)
        return "snapshotname";
    return cmd->run == cmd_vol_create || cmd->run == cmd_vol_upload ||
                   cmd->run == cmd_vol_download ? "file" : NULL;
}

static int second_arg_required(const command *cmd)
{
    /* The others' second argument may be left out (domblkstat), or --current
     * stands for it (the snapshot commands). */
    return cmd->run == cmd_vol_create || cmd->run == cmd_vol_upload ||
           cmd->run == cmd_vol_download || strcmp(cmd->name, "snapshot-dumpxml") == 0;
}

static int needs_connection(const command *cmd)
{
    return cmd->run != cmd_help && cmd->run != cmd_quit;
}

static void print_synopsis(const command *cmd)
{
    printf("%s", cmd->name);
    if (cmd->arg)
        printf(" <%s>", cmd->arg);
    if (second_arg(cmd))
        printf(second_arg_required(cmd) ? " <%s>" : " [<%s>]", second_arg(cmd));
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
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("    %-14s %s\n", commands[i].name, commands[i].summary);
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
            if (second_arg(cmd) && strcmp(name, second_arg(cmd)) == 0) {
                if (i + 1 >= argc || a.value2) {
                    error_line("expected syntax: --%s <string>", second_arg(cmd));
                    return -1;
                }
                a.value2 = argv[++i];
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
        if (arg && a.value && second_arg(cmd) && !a.value2) {
            a.value2 = t;
            continue;
        }
        if (!arg || a.value) {
            error_line("unexpected data '%s'", t);
            return -1;
        }
        a.value = t;
    }
    if (second_arg_required(cmd) && a.value && (!a.value2 || !*a.value2)) {
        error_line(a.value2 ? "Failed to get option '%s': Option argument is empty"
                            : "command '%s' requires <%s> option",
                   a.value2 ? second_arg(cmd) : cmd->name, second_arg(cmd));
        return -1;
    }
    if (cmd->arg && (!a.value || !*a.value)) {
        error_line(a.value ? "Failed to get option '%s': Option argument is empty"
                           : "command '%s' requires <%s> option",
                   a.value ? cmd->arg : cmd->name, cmd->arg);
        return -1;
    }
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
    static size_t next;
    if (state == 0)
        next = 0;
    while (next < NCOMMANDS) {
        const char *name = commands[next++].name;
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
            "      --json         JSON output for list, dominfo and the statistics commands\n"
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
