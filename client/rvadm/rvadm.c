/*
 * rvadm: remvirt's admin tool.  It speaks libvirt's admin program on
 * remvirtd's admin socket (remvirt-admin-sock) -- or libvirtd's -- and
 * prints what virt-admin prints for the same commands, so either tool
 * serves and their outputs compare.
 *
 *   rvadm [-s SOCKET] COMMAND [ARGS]
 *
 * One blocking connection, one call at a time: the admin program has no
 * events, and a command is a handful of calls.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/util.h"
#include "rv_admin.h"
#include "transport/frame.h"
#include "transport/unix.h"

#define RVADM_DEFAULT_SOCKET "/run/remvirt/remvirt-admin-sock"

static rv_transport *tr;
static unsigned int next_serial = 1;

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static int die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = rv_transport_write(tr, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("cannot send to the daemon: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

static void read_all(char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = rv_transport_read(tr, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            die("the daemon closed the connection");
        if (r < 0)
            die("cannot read from the daemon: %s", strerror(errno));
        p += r;
        n -= (size_t)r;
    }
}

/* One admin call: its reply decoded into ret, or the daemon's error
 * printed and the program ended. */
static void call(int proc, xdrproc_t args_fn, void *args, xdrproc_t ret_fn, void *ret)
{
    rv_err err = { 0 };
    rv_buf out = { 0 };
    rv_header hdr = { .prog = RV_ADMIN_PROGRAM, .vers = RV_ADMIN_VERSION, .proc = proc,
                      .type = RV_CALL, .serial = next_serial++, .status = RV_OK };
    if (rv_frame_encode(&out, &hdr, args_fn, args, &err) < 0)
        die("%s", err.message);
    write_all(rv_buf_head(&out), rv_buf_used(&out));
    rv_buf_free(&out);

    for (;;) {
        char word[4];
        read_all(word, sizeof(word));
        uint32_t len = rv_frame_peek_len(word);
        if (rv_frame_check_len(len, RV_FRAME_MAX, &err) < 0)
            die("bad reply from the daemon: %s", err.message);
        char *frame = malloc(len);
        if (!frame)
            die("out of memory");
        memcpy(frame, word, sizeof(word));
        read_all(frame + sizeof(word), len - sizeof(word));
        rv_header got;
        if (rv_frame_decode_header(frame, len, &got, &err) < 0)
            die("bad reply from the daemon: %s", err.message);
        if (got.type != RV_REPLY || got.serial != hdr.serial) {
            free(frame);        /* a keepalive or other message: not ours */
            continue;
        }
        if (got.status != RV_OK) {
            rv_error e = { 0 };
            if (rv_frame_decode_payload(frame, len, (xdrproc_t)xdr_rv_error, &e, &err) < 0)
                die("bad error reply from the daemon: %s", err.message);
            fprintf(stderr, "error: %s\n", e.message ? *e.message : "unknown error");
            xdr_free((xdrproc_t)xdr_rv_error, (char *)&e);
            free(frame);
            exit(1);
        }
        if (ret_fn && rv_frame_decode_payload(frame, len, ret_fn, ret, &err) < 0)
            die("bad reply from the daemon: %s", err.message);
        free(frame);
        return;
    }
}

#define XDR(fn) ((xdrproc_t)(fn))

/* ---- output as virt-admin's ---- */

/* A table: a blank before each row, columns three blanks apart, a rule
 * two longer than the widest row, a blank line after. */
static void print_table(int ncols, const char *const *head, char ***rows, int nrows)
{
    size_t width[8] = { 0 }, total = 1;
    for (int c = 0; c < ncols; c++) {
        width[c] = strlen(head[c]);
        for (int r = 0; r < nrows; r++)
            if (strlen(rows[r][c]) > width[c])
                width[c] = strlen(rows[r][c]);
        total += width[c] + (c ? 3 : 0);
    }
    for (int r = -1; r < nrows; r++) {
        for (int c = 0; c < ncols; c++) {
            const char *cell = r < 0 ? head[c] : rows[r][c];
            if (c == ncols - 1)
                printf("%s%s\n", c ? "   " : " ", cell);
            else
                printf("%s%-*s", c ? "   " : " ", (int)width[c], cell);
        }
        if (r < 0) {
            for (size_t i = 0; i < total + 2; i++)
                putchar('-');
            putchar('\n');
        }
    }
    putchar('\n');
}

static void format_time(char *buf, size_t len, long long when)
{
    time_t t = (time_t)when;
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S%z", &tm);
}

static const char *transport_name(unsigned int t)
{
    static const char *const names[] = { "unix", "tcp", "tls" };
    return t < 3 ? names[t] : "unknown";
}

static void print_param(const rv_typed_param *p, int width)
{
    const rv_typed_param_value *v = &p->value;
    printf("%-*s: ", width, p->field);
    switch (v->type) {
    case RV_TYPED_PARAM_INT: printf("%d\n", v->rv_typed_param_value_u.i); break;
    case RV_TYPED_PARAM_UINT: printf("%u\n", v->rv_typed_param_value_u.ui); break;
    case RV_TYPED_PARAM_LLONG: printf("%" PRId64 "\n", (int64_t)v->rv_typed_param_value_u.l); break;
    case RV_TYPED_PARAM_ULLONG:
        printf("%" PRIu64 "\n", (uint64_t)v->rv_typed_param_value_u.ul);
        break;
    case RV_TYPED_PARAM_DOUBLE: printf("%g\n", v->rv_typed_param_value_u.d); break;
    case RV_TYPED_PARAM_BOOLEAN: printf("%s\n", v->rv_typed_param_value_u.b ? "yes" : "no"); break;
    default: printf("%s\n", v->rv_typed_param_value_u.s); break;
    }
}

/* ---- commands ---- */

typedef struct {
    int argc;
    char **argv;
    const char *max_clients, *max_unauth, *filters, *outputs, *timeout;
} cmd_args;

static const char *arg(const cmd_args *a, int i, const char *what)
{
    if (i >= a->argc)
        die("command '%s' requires <%s> option", a->argv[0], what);
    return a->argv[i];
}

static unsigned long long number(const char *text, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        die("%s '%s' is not a number", what, text);
    return v;
}

static void cmd_srv_list(const cmd_args *a)
{
    (void)a;
    rv_admin_connect_list_servers_args args = { .need_results = 1 };
    rv_admin_connect_list_servers_ret ret = { 0 };
    call(RV_ADMIN_PROC_CONNECT_LIST_SERVERS, XDR(xdr_rv_admin_connect_list_servers_args), &args,
         XDR(xdr_rv_admin_connect_list_servers_ret), &ret);
    unsigned int n = ret.servers.servers_len;
    char ***rows = calloc(n ? n : 1, sizeof(*rows));
    char (*ids)[16] = calloc(n ? n : 1, sizeof(*ids));
    if (!rows || !ids)
        die("out of memory");
    for (unsigned int i = 0; i < n; i++) {
        rows[i] = calloc(2, sizeof(char *));
        if (!rows[i])
            die("out of memory");
        snprintf(ids[i], sizeof(ids[i]), "%u", i);
        rows[i][0] = ids[i];
        rows[i][1] = ret.servers.servers_val[i].name;
    }
    static const char *const head[] = { "Id", "Name" };
    print_table(2, head, rows, (int)n);
    for (unsigned int i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
    free(ids);
    xdr_free(XDR(xdr_rv_admin_connect_list_servers_ret), (char *)&ret);
}

static void cmd_threadpool_info(const cmd_args *a)
{
    rv_admin_server_get_threadpool_parameters_args args = {
        .srv.name = (char *)arg(a, 1, "server") };
    rv_admin_server_get_threadpool_parameters_ret ret = { 0 };
    call(RV_ADMIN_PROC_SERVER_GET_THREADPOOL_PARAMETERS,
         XDR(xdr_rv_admin_server_get_threadpool_parameters_args), &args,
         XDR(xdr_rv_admin_server_get_threadpool_parameters_ret), &ret);
    for (unsigned int i = 0; i < ret.params.params_len; i++)
        print_param(&ret.params.params_val[i], 15);
    putchar('\n');
    xdr_free(XDR(xdr_rv_admin_server_get_threadpool_parameters_ret), (char *)&ret);
}

static void cmd_clients_info(const cmd_args *a)
{
    rv_admin_server_get_client_limits_args args = { .srv.name = (char *)arg(a, 1, "server") };
    rv_admin_server_get_client_limits_ret ret = { 0 };
    call(RV_ADMIN_PROC_SERVER_GET_CLIENT_LIMITS, XDR(xdr_rv_admin_server_get_client_limits_args),
         &args, XDR(xdr_rv_admin_server_get_client_limits_ret), &ret);
    for (unsigned int i = 0; i < ret.params.params_len; i++)
        print_param(&ret.params.params_val[i], 20);
    putchar('\n');
    xdr_free(XDR(xdr_rv_admin_server_get_client_limits_ret), (char *)&ret);
}

static void cmd_clients_set(const cmd_args *a)
{
    rv_typed_param params[2];
    unsigned int n = 0;
    const char *values[2] = { a->max_clients, a->max_unauth };
    const char *fields[2] = { "nclients_max", "nclients_unauth_max" };
    for (int i = 0; i < 2; i++) {
        if (!values[i])
            continue;
        unsigned long long v = number(values[i], fields[i]);
        if (v > 0xffffffffULL)
            die("%s %s is too large", fields[i], values[i]);
        params[n].field = (char *)fields[i];
        params[n].value.type = RV_TYPED_PARAM_UINT;
        params[n].value.rv_typed_param_value_u.ui = (unsigned int)v;
        n++;
    }
    if (n == 0)
        die("no limit given (--max-clients, --max-unauth-clients)");
    rv_admin_server_set_client_limits_args args = {
        .srv.name = (char *)arg(a, 1, "server"),
        .params = { .params_len = n, .params_val = params } };
    call(RV_ADMIN_PROC_SERVER_SET_CLIENT_LIMITS, XDR(xdr_rv_admin_server_set_client_limits_args),
         &args, NULL, NULL);
    putchar('\n');
}

static void cmd_client_list(const cmd_args *a)
{
    rv_admin_server_list_clients_args args = { .srv.name = (char *)arg(a, 1, "server"),
                                               .need_results = 1 };
    rv_admin_server_list_clients_ret ret = { 0 };
    call(RV_ADMIN_PROC_SERVER_LIST_CLIENTS, XDR(xdr_rv_admin_server_list_clients_args), &args,
         XDR(xdr_rv_admin_server_list_clients_ret), &ret);
    unsigned int n = ret.clients.clients_len;
    char ***rows = calloc(n ? n : 1, sizeof(*rows));
    char (*text)[2][40] = calloc(n ? n : 1, sizeof(*text));
    if (!rows || !text)
        die("out of memory");
    for (unsigned int i = 0; i < n; i++) {
        const rv_admin_client *cl = &ret.clients.clients_val[i];
        rows[i] = calloc(3, sizeof(char *));
        if (!rows[i])
            die("out of memory");
        snprintf(text[i][0], sizeof(text[i][0]), "%" PRIu64, (uint64_t)cl->id);
        format_time(text[i][1], sizeof(text[i][1]), cl->timestamp);
        rows[i][0] = text[i][0];
        rows[i][1] = (char *)transport_name(cl->transport);
        rows[i][2] = text[i][1];
    }
    static const char *const head[] = { "Id", "Transport", "Connected since" };
    print_table(3, head, rows, (int)n);
    for (unsigned int i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
    free(text);
    xdr_free(XDR(xdr_rv_admin_server_list_clients_ret), (char *)&ret);
}

/* The client the daemon knows by this server and id. */
static void lookup_client(const cmd_args *a, rv_admin_client *out)
{
    rv_admin_server_lookup_client_args args = {
        .srv.name = (char *)arg(a, 1, "server"),
        .id = number(arg(a, 2, "client"), "client id") };
    rv_admin_server_lookup_client_ret ret = { 0 };
    call(RV_ADMIN_PROC_SERVER_LOOKUP_CLIENT, XDR(xdr_rv_admin_server_lookup_client_args), &args,
         XDR(xdr_rv_admin_server_lookup_client_ret), &ret);
    *out = ret.clnt;
}

static void cmd_client_info(const cmd_args *a)
{
    rv_admin_client_get_info_args args = { 0 };
    lookup_client(a, &args.clnt);
    rv_admin_client_get_info_ret ret = { 0 };
    call(RV_ADMIN_PROC_CLIENT_GET_INFO, XDR(xdr_rv_admin_client_get_info_args), &args,
         XDR(xdr_rv_admin_client_get_info_ret), &ret);
    char when[40];
    format_time(when, sizeof(when), args.clnt.timestamp);
    printf("%-15s: %" PRIu64 "\n", "id", (uint64_t)args.clnt.id);
    printf("%-15s: %s\n", "connection_time", when);
    printf("%-15s: %s\n", "transport", transport_name(args.clnt.transport));
    for (unsigned int i = 0; i < ret.params.params_len; i++)
        print_param(&ret.params.params_val[i], 15);
    putchar('\n');
    xdr_free(XDR(xdr_rv_admin_client_get_info_ret), (char *)&ret);
    xdr_free(XDR(xdr_rv_admin_client), (char *)&args.clnt);
}

static void cmd_client_disconnect(const cmd_args *a)
{
    rv_admin_client_close_args args = { 0 };
    lookup_client(a, &args.clnt);
    call(RV_ADMIN_PROC_CLIENT_CLOSE, XDR(xdr_rv_admin_client_close_args), &args, NULL, NULL);
    printf("Client '%" PRIu64 "' disconnected\n", (uint64_t)args.clnt.id);
    xdr_free(XDR(xdr_rv_admin_client), (char *)&args.clnt);
}

static void cmd_log_filters(const cmd_args *a)
{
    if (a->filters) {
        char *text = (char *)a->filters;
        rv_admin_connect_set_logging_filters_args args = { .filters = &text };
        call(RV_ADMIN_PROC_CONNECT_SET_LOGGING_FILTERS,
             XDR(xdr_rv_admin_connect_set_logging_filters_args), &args, NULL, NULL);
        putchar('\n');
        return;
    }
    rv_admin_connect_get_logging_filters_args args = { 0 };
    rv_admin_connect_get_logging_filters_ret ret = { 0 };
    call(RV_ADMIN_PROC_CONNECT_GET_LOGGING_FILTERS,
         XDR(xdr_rv_admin_connect_get_logging_filters_args), &args,
         XDR(xdr_rv_admin_connect_get_logging_filters_ret), &ret);
    printf(" Logging filters: %s\n\n", ret.filters ? *ret.filters : "");
    xdr_free(XDR(xdr_rv_admin_connect_get_logging_filters_ret), (char *)&ret);
}

static void cmd_log_outputs(const cmd_args *a)
{
    if (a->outputs) {
        char *text = (char *)a->outputs;
        rv_admin_connect_set_logging_outputs_args args = { .outputs = &text };
        call(RV_ADMIN_PROC_CONNECT_SET_LOGGING_OUTPUTS,
             XDR(xdr_rv_admin_connect_set_logging_outputs_args), &args, NULL, NULL);
        putchar('\n');
        return;
    }
    rv_admin_connect_get_logging_outputs_args args = { 0 };
    rv_admin_connect_get_logging_outputs_ret ret = { 0 };
    call(RV_ADMIN_PROC_CONNECT_GET_LOGGING_OUTPUTS,
         XDR(xdr_rv_admin_connect_get_logging_outputs_args), &args,
         XDR(xdr_rv_admin_connect_get_logging_outputs_ret), &ret);
    printf(" Logging outputs: %s\n\n", ret.outputs);
    xdr_free(XDR(xdr_rv_admin_connect_get_logging_outputs_ret), (char *)&ret);
}

static void cmd_update_tls(const cmd_args *a)
{
    rv_admin_server_update_tls_files_args args = { .srv.name = (char *)arg(a, 1, "server") };
    call(RV_ADMIN_PROC_SERVER_UPDATE_TLS_FILES, XDR(xdr_rv_admin_server_update_tls_files_args),
         &args, NULL, NULL);
    putchar('\n');
}

static void cmd_daemon_timeout(const cmd_args *a)
{
    const char *text = a->timeout ? a->timeout : arg(a, 1, "timeout");
    unsigned long long seconds = number(text, "timeout");
    if (seconds > UINT_MAX)
        die("timeout '%s' is out of range", text);
    rv_admin_connect_set_daemon_timeout_args args = { .timeout = (unsigned)seconds };
    call(RV_ADMIN_PROC_CONNECT_SET_DAEMON_TIMEOUT,
         XDR(xdr_rv_admin_connect_set_daemon_timeout_args), &args, NULL, NULL);
    putchar('\n');
}

static const struct {
    const char *name;
    void (*run)(const cmd_args *a);
    const char *usage;
} commands[] = {
    { "srv-list", cmd_srv_list, "" },
    { "srv-threadpool-info", cmd_threadpool_info, "SERVER" },
    { "srv-clients-info", cmd_clients_info, "SERVER" },
    { "srv-clients-set", cmd_clients_set, "SERVER [--max-clients N] [--max-unauth-clients N]" },
    { "client-list", cmd_client_list, "SERVER" },
    { "client-info", cmd_client_info, "SERVER ID" },
    { "client-disconnect", cmd_client_disconnect, "SERVER ID" },
    { "daemon-log-filters", cmd_log_filters, "[--filters TEXT]" },
    { "daemon-log-outputs", cmd_log_outputs, "[--outputs TEXT]" },
    { "srv-update-tls", cmd_update_tls, "SERVER" },
    { "daemon-timeout", cmd_daemon_timeout, "[--timeout] SECONDS" },
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: rvadm [-s SOCKET] COMMAND [ARGS]\n"
                 "  -s, --socket PATH   the admin socket (default %s)\n"
                 "Commands (as virt-admin's):\n", RVADM_DEFAULT_SOCKET);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %s %s\n", commands[i].name, commands[i].usage);
}

int main(int argc, char **argv)
{
    enum { OPT_MAX_CLIENTS = 256, OPT_MAX_UNAUTH, OPT_FILTERS, OPT_OUTPUTS, OPT_TIMEOUT };
    static const struct option opts[] = {
        { "socket", required_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
        { "max-unauth-clients", required_argument, NULL, OPT_MAX_UNAUTH },
        { "filters", required_argument, NULL, OPT_FILTERS },
        { "outputs", required_argument, NULL, OPT_OUTPUTS },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { NULL, 0, NULL, 0 },
    };
    const char *socket_path = RVADM_DEFAULT_SOCKET;
    cmd_args a = { 0 };
    int opt;
    while ((opt = getopt_long(argc, argv, "+s:h", opts, NULL)) != -1) {
        switch (opt) {
        case 's': socket_path = optarg; break;
        case 'h': usage(stdout); return 0;
        case OPT_MAX_CLIENTS: a.max_clients = optarg; break;
        case OPT_MAX_UNAUTH: a.max_unauth = optarg; break;
        case OPT_FILTERS: a.filters = optarg; break;
        case OPT_OUTPUTS: a.outputs = optarg; break;
        case OPT_TIMEOUT: a.timeout = optarg; break;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    /* The command's own options may follow it. */
    a.argv = argv + optind;
    a.argc = 1;
    optind++;
    while (optind < argc) {
        if ((opt = getopt_long(argc, argv, "+", opts, NULL)) == -1) {
            a.argv[a.argc++] = argv[optind++];
            continue;
        }
        switch (opt) {
        case OPT_MAX_CLIENTS: a.max_clients = optarg; break;
        case OPT_MAX_UNAUTH: a.max_unauth = optarg; break;
        case OPT_FILTERS: a.filters = optarg; break;
        case OPT_OUTPUTS: a.outputs = optarg; break;
        case OPT_TIMEOUT: a.timeout = optarg; break;
        default: usage(stderr); return 2;
        }
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(commands[i].name, a.argv[0]) != 0)
            continue;
        rv_err err = { 0 };
        tr = rv_unix_connect(socket_path, &err);
        if (!tr)
            die("%s", err.message);
        rv_admin_connect_open_args open_args = { .flags = 0 };
        call(RV_ADMIN_PROC_CONNECT_OPEN, XDR(xdr_rv_admin_connect_open_args), &open_args, NULL,
             NULL);
        commands[i].run(&a);
        call(RV_ADMIN_PROC_CONNECT_CLOSE, NULL, NULL, NULL, NULL);
        rv_transport_close(tr);
        return 0;
    }
    die("unknown command: '%s'", a.argv[0]);
}
