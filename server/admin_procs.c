/* The admin program's handlers: what virt-admin asks of the daemon.
 *
 * remvirtd shows two servers, as libvirtd does: "libvirtd", the clients of
 * the remote program (virt-admin's commands name it), and "admin", those
 * of the admin socket.  Both run on the one loop thread with no workers,
 * and say so in their thread-pool parameters. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/admin.h"
#include "server/dispatch.h"
#include "server/rv_admin_dispatch.gen.h"

RV_LOG_CATEGORY("server.admin");

static const char *const server_names[] = {
    [RVS_GROUP_REMOTE] = "libvirtd",
    [RVS_GROUP_ADMIN] = "admin",
};
#define NSERVERS ((int)(sizeof(server_names) / sizeof(server_names[0])))

static int no_memory(rvs_call *call)
{
    rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

/* The group a server name stands for, or -1 with libvirtd's error. */
static int find_server(rvs_call *call, const char *name)
{
    if (!rvs_admin_server()) {
        /* A dispatcher driven without a daemon (a unit test, a fuzzer). */
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INTERNAL_ERROR,
                   "internal error: no server to manage");
        return -1;
    }
    for (int i = 0; i < NSERVERS; i++)
        if (strcmp(server_names[i], name) == 0)
            return i;
    rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_NO_SERVER,
               "Server not found: No server named '%s'", name);
    return -1;
}

static int set_server(rvs_call *call, rv_admin_server *srv, int group)
{
    srv->name = strdup(server_names[group]);
    return srv->name ? 0 : no_memory(call);
}

/* ---- typed parameters ---- */

typedef struct {
    rv_typed_param *list;
    unsigned int n, max;
} param_list;

static rv_typed_param *param_add(param_list *pl, const char *field, int type)
{
    if (pl->n == pl->max)
        return NULL;
    rv_typed_param *p = &pl->list[pl->n];
    p->field = strdup(field);
    if (!p->field)
        return NULL;
    p->value.type = type;
    pl->n++;
    return p;
}

static int param_uint(param_list *pl, const char *field, unsigned int v)
{
    rv_typed_param *p = param_add(pl, field, RV_TYPED_PARAM_UINT);
    if (p)
        p->value.rv_typed_param_value_u.ui = v;
    return p ? 0 : -1;
}

static int param_ullong(param_list *pl, const char *field, unsigned long long v)
{
    rv_typed_param *p = param_add(pl, field, RV_TYPED_PARAM_ULLONG);
    if (p)
        p->value.rv_typed_param_value_u.ul = v;
    return p ? 0 : -1;
}

static int param_bool(param_list *pl, const char *field, int v)
{
    rv_typed_param *p = param_add(pl, field, RV_TYPED_PARAM_BOOLEAN);
    if (p)
        p->value.rv_typed_param_value_u.b = v ? 1 : 0;
    return p ? 0 : -1;
}

static int param_string(param_list *pl, const char *field, const char *v)
{
    rv_typed_param *p = param_add(pl, field, RV_TYPED_PARAM_STRING);
    if (!p)
        return -1;
    p->value.rv_typed_param_value_u.s = strdup(v);
    return p->value.rv_typed_param_value_u.s ? 0 : -1;
}

/* Starts a list of at most max parameters in the result's array. */
static int params_start(rvs_call *call, param_list *pl, unsigned int max)
{
    *pl = (param_list){ .list = calloc(max, sizeof(rv_typed_param)), .max = max };
    return pl->list ? 0 : no_memory(call);
}

/* ---- connection ---- */

int rvs_handle_admin_connect_open(rvs_call *call, rv_admin_connect_open_args *args)
{
    (void)call;
    (void)args;
    return 0;
}

int rvs_handle_admin_connect_close(rvs_call *call)
{
    (void)call;
    return 0;
}

int rvs_handle_admin_connect_get_lib_version(rvs_call *call,
                                             rv_admin_connect_get_lib_version_ret *ret)
{
    (void)call;
    /* The libvirt level remvirt speaks, as CONNECT_GET_LIB_VERSION says. */
    ret->lib_ver = 9000000;
    return 0;
}

/* ---- servers ---- */

int rvs_handle_admin_connect_list_servers(rvs_call *call,
                                          rv_admin_connect_list_servers_args *args,
                                          rv_admin_connect_list_servers_ret *ret)
{
    /* need_results is a yes/no: the list, or only its length. */
    ret->ret = NSERVERS;
    if (!args->need_results)
        return 0;
    unsigned int n = NSERVERS;
    ret->servers.servers_val = calloc(n, sizeof(rv_admin_server));
    if (!ret->servers.servers_val)
        return no_memory(call);
    for (unsigned int i = 0; i < n; i++) {
        ret->servers.servers_len = i + 1;
        if (set_server(call, &ret->servers.servers_val[i], (int)i) < 0)
            return -1;
    }
    return 0;
}

int rvs_handle_admin_connect_lookup_server(rvs_call *call,
                                           rv_admin_connect_lookup_server_args *args,
                                           rv_admin_connect_lookup_server_ret *ret)
{
    int group = find_server(call, args->name);
    return group < 0 ? -1 : set_server(call, &ret->srv, group);
}

int rvs_handle_admin_server_get_threadpool_parameters(
    rvs_call *call, rv_admin_server_get_threadpool_parameters_args *args,
    rv_admin_server_get_threadpool_parameters_ret *ret)
{
    if (find_server(call, args->srv.name) < 0)
        return -1;
    /* Every call runs on the loop thread itself: there is no pool. */
    static const char *const fields[] = { "minWorkers", "maxWorkers", "nWorkers",
                                          "freeWorkers", "prioWorkers", "jobQueueDepth" };
    param_list pl;
    if (params_start(call, &pl, RV_ADMIN_THREADPOOL_PARAMS_MAX) < 0)
        return -1;
    ret->params.params_val = pl.list;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        int rc = param_uint(&pl, fields[i], 0);
        ret->params.params_len = pl.n;
        if (rc < 0)
            return no_memory(call);
    }
    return 0;
}

int rvs_handle_admin_server_set_threadpool_parameters(
    rvs_call *call, rv_admin_server_set_threadpool_parameters_args *args)
{
    if (find_server(call, args->srv.name) < 0)
        return -1;
    rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_OPERATION_UNSUPPORTED,
               "Operation not supported: remvirtd serves every call from its one loop "
               "thread and has no worker pool to resize");
    return -1;
}

/* ---- clients ---- */

static unsigned int transport_of(const rvs_client *c)
{
    if (rvs_client_is_local(c))
        return RV_ADMIN_TRANSPORT_UNIX;
    return rvs_client_is_tls(c) ? RV_ADMIN_TRANSPORT_TLS : RV_ADMIN_TRANSPORT_TCP;
}

static int describe_client(rvs_call *call, rv_admin_client *out, int group, rvs_client *c)
{
    out->id = rvs_client_serial_no(c);
    out->timestamp = (long long)rvs_client_connected_at(c);
    out->transport = transport_of(c);
    return set_server(call, &out->srv, group);
}

/* The client numbered id in the group, or NULL with libvirtd's error. */
static rvs_client *find_client(rvs_call *call, int group, unsigned long long id)
{
    for (rvs_client *c = rvs_server_clients(rvs_admin_server(), group); c;
         c = rvs_client_list_next(c))
        if (rvs_client_serial_no(c) == id && !rvs_client_is_closing(c))
            return c;
    rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_NO_CLIENT,
               "Client not found: No client with matching ID '%llu'", id);
    return NULL;
}

int rvs_handle_admin_server_list_clients(rvs_call *call, rv_admin_server_list_clients_args *args,
                                         rv_admin_server_list_clients_ret *ret)
{
    int group = find_server(call, args->srv.name);
    if (group < 0)
        return -1;
    rvs_server_limits lim;
    rvs_server_get_limits(rvs_admin_server(), group, &lim);
    /* need_results is a yes/no: the list, or only its length.  More
     * clients than a reply may list get the newest ones. */
    unsigned int want = (unsigned int)lim.nclients;
    if (want > RV_ADMIN_CLIENT_LIST_MAX)
        want = RV_ADMIN_CLIENT_LIST_MAX;
    ret->ret = want;
    if (!args->need_results || want == 0)
        return 0;
    ret->clients.clients_val = calloc(want, sizeof(rv_admin_client));
    if (!ret->clients.clients_val)
        return no_memory(call);
    /* The server's list is newest first; virt-admin shows them oldest
     * first, so the array is filled from its end. */
    ret->clients.clients_len = want;
    unsigned int i = want;
    for (rvs_client *c = rvs_server_clients(rvs_admin_server(), group); c && i > 0;
         c = rvs_client_list_next(c))
        if (describe_client(call, &ret->clients.clients_val[--i], group, c) < 0)
            return -1;
    return 0;
}

int rvs_handle_admin_server_lookup_client(rvs_call *call,
                                          rv_admin_server_lookup_client_args *args,
                                          rv_admin_server_lookup_client_ret *ret)
{
    int group = find_server(call, args->srv.name);
    if (group < 0)
        return -1;
    rvs_client *c = find_client(call, group, args->id);
    return c ? describe_client(call, &ret->clnt, group, c) : -1;
}

int rvs_handle_admin_client_get_info(rvs_call *call, rv_admin_client_get_info_args *args,
                                     rv_admin_client_get_info_ret *ret)
{
    int group = find_server(call, args->clnt.srv.name);
    if (group < 0)
        return -1;
    rvs_client *c = find_client(call, group, args->clnt.id);
    if (!c)
        return -1;
    param_list pl;
    if (params_start(call, &pl, RV_ADMIN_CLIENT_INFO_PARAMS_MAX) < 0)
        return -1;
    ret->params.params_val = pl.list;
    int rc = param_bool(&pl, "readonly", rvs_client_is_readonly(c));
    if (rvs_client_is_local(c)) {
        /* Names are left out: looking them up could block the loop on NSS. */
        const rv_peer_identity *peer = rvs_client_peer(c);
        rc |= param_ullong(&pl, "unix_user_id", peer->uid);
        rc |= param_ullong(&pl, "unix_group_id", peer->gid);
        rc |= param_ullong(&pl, "unix_process_id", (unsigned long long)peer->pid);
    } else {
        rc |= param_string(&pl, "sock_addr", rvs_client_from(c));
    }
    if (rvs_client_x509_dn(c))
        rc |= param_string(&pl, "tls_x509_dname", rvs_client_x509_dn(c));
    if (rvs_client_sasl_user(c))
        rc |= param_string(&pl, "sasl_user_name", rvs_client_sasl_user(c));
    ret->params.params_len = pl.n;
    return rc < 0 ? no_memory(call) : 0;
}

int rvs_handle_admin_client_close(rvs_call *call, rv_admin_client_close_args *args)
{
    int group = find_server(call, args->clnt.srv.name);
    if (group < 0)
        return -1;
    rvs_client *c = find_client(call, group, args->clnt.id);
    if (!c)
        return -1;
    char name[256];
    RV_INFO("%s closed by client %llu (admin)", rvs_client_name(c, name, sizeof(name)),
            rvs_client_serial_no(call->client));
    /* Safe even for the caller itself: the server frees it after its
     * callbacks (its reply is then lost, as with libvirtd). */
    rvs_client_close(c, "closed through the admin interface");
    return 0;
}

/* ---- limits ---- */

int rvs_handle_admin_server_get_client_limits(rvs_call *call,
                                              rv_admin_server_get_client_limits_args *args,
                                              rv_admin_server_get_client_limits_ret *ret)
{
    int group = find_server(call, args->srv.name);
    if (group < 0)
        return -1;
    rvs_server_limits lim;
    rvs_server_get_limits(rvs_admin_server(), group, &lim);
    param_list pl;
    if (params_start(call, &pl, RV_ADMIN_CLIENT_LIMITS_MAX) < 0)
        return -1;
    ret->params.params_val = pl.list;
    int rc = param_uint(&pl, "nclients_max", (unsigned)lim.max_clients);
    rc |= param_uint(&pl, "nclients", (unsigned)lim.nclients);
    rc |= param_uint(&pl, "nclients_unauth_max", (unsigned)lim.max_anonymous);
    rc |= param_uint(&pl, "nclients_unauth", (unsigned)lim.nanonymous);
    ret->params.params_len = pl.n;
    return rc < 0 ? no_memory(call) : 0;
}

/* A limit from a typed parameter: an unsigned int that fits an int. */
static int limit_value(rvs_call *call, const rv_typed_param *p, int *out)
{
    if (p->value.type != RV_TYPED_PARAM_UINT ||
        p->value.rv_typed_param_value_u.ui > (unsigned)INT_MAX) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                   "invalid argument: %s must be an unsigned int up to %d", p->field, INT_MAX);
        return -1;
    }
    *out = (int)p->value.rv_typed_param_value_u.ui;
    return 0;
}

int rvs_handle_admin_server_set_client_limits(rvs_call *call,
                                              rv_admin_server_set_client_limits_args *args)
{
    int group = find_server(call, args->srv.name);
    if (group < 0)
        return -1;
    rvs_server_limits lim;
    rvs_server_get_limits(rvs_admin_server(), group, &lim);
    int max = lim.max_clients, max_anon = lim.max_anonymous;
    for (unsigned int i = 0; i < args->params.params_len; i++) {
        const rv_typed_param *p = &args->params.params_val[i];
        int *dest = strcmp(p->field, "nclients_max") == 0 ? &max
                    : strcmp(p->field, "nclients_unauth_max") == 0 ? &max_anon : NULL;
        if (!dest) {
            rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                       "invalid argument: unknown client limit '%s' (nclients_max, "
                       "nclients_unauth_max)", p->field);
            return -1;
        }
        if (limit_value(call, p, dest) < 0)
            return -1;
    }
    if (max < 1) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                   "invalid argument: nclients_max must be at least 1");
        return -1;
    }
    if (group == RVS_GROUP_REMOTE && max_anon > max) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                   "invalid argument: The overall maximum number of clients waiting for "
                   "authentication must not be less than the overall maximum number of clients");
        return -1;
    }
    rvs_server_set_limits(rvs_admin_server(), group, max, max_anon);
    RV_INFO("server %s: max_clients %d (%d connected), max_anonymous_clients %d, set by "
            "client %llu (admin); clients already connected stay", server_names[group], max,
            lim.nclients, max_anon, rvs_client_serial_no(call->client));
    return 0;
}

/* ---- logging ---- */

int rvs_handle_admin_connect_get_logging_outputs(rvs_call *call,
                                                 rv_admin_connect_get_logging_outputs_args *args,
                                                 rv_admin_connect_get_logging_outputs_ret *ret)
{
    (void)args;
    int n;
    ret->outputs = rv_log_get_outputs(&n);
    if (!ret->outputs)
        return no_memory(call);
    ret->noutputs = (unsigned)n;
    return 0;
}

int rvs_handle_admin_connect_get_logging_filters(rvs_call *call,
                                                 rv_admin_connect_get_logging_filters_args *args,
                                                 rv_admin_connect_get_logging_filters_ret *ret)
{
    (void)args;
    int n;
    char *text = rv_log_get_filters(&n);
    ret->filters = malloc(sizeof(*ret->filters));
    if (!text || !ret->filters) {
        free(text);
        return no_memory(call);
    }
    *ret->filters = text;
    ret->nfilters = (unsigned)n;
    return 0;
}

/* A refused setting keeps the old one; errors read as libvirtd's. */
static int log_setting(rvs_call *call, const char *what, int rc, rv_err *err)
{
    if (rc < 0) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG, "invalid argument: %s",
                   err->message ? err->message : what);
        rv_err_clear(err);
        return -1;
    }
    RV_INFO("%s changed by client %llu (admin)", what, rvs_client_serial_no(call->client));
    return 0;
}

int rvs_handle_admin_connect_set_logging_outputs(rvs_call *call,
                                                 rv_admin_connect_set_logging_outputs_args *args)
{
    rv_err err = { 0 };
    const char *spec = args->outputs && **args->outputs ? *args->outputs : NULL;
    int rc = spec ? rv_log_set_outputs(spec, &err) : rv_log_set_default_outputs(&err);
    return log_setting(call, "log outputs", rc, &err);
}

int rvs_handle_admin_connect_set_logging_filters(rvs_call *call,
                                                 rv_admin_connect_set_logging_filters_args *args)
{
    rv_err err = { 0 };
    int rc = rv_log_set_filters(args->filters ? *args->filters : "", &err);
    return log_setting(call, "log filters", rc, &err);
}

/* ---- TLS ---- */

int rvs_handle_admin_server_update_tls_files(rvs_call *call,
                                             rv_admin_server_update_tls_files_args *args)
{
    int group = find_server(call, args->srv.name);
    if (group < 0)
        return -1;
    return rvs_server_update_tls(rvs_admin_server(), &call->err);
}

/* ---- the daemon ---- */

int rvs_handle_admin_connect_set_daemon_timeout(rvs_call *call,
                                                rv_admin_connect_set_daemon_timeout_args *args)
{
    if (args->flags != 0) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                   "invalid argument: unsupported flags (0x%x) in function "
                   "virAdmConnectSetDaemonTimeout", args->flags);
        return -1;
    }
    if (args->timeout > (unsigned)INT_MAX) {
        rv_err_set(&call->err, RV_FROM_ADMIN, RV_ERR_INVALID_ARG,
                   "invalid argument: timeout must be at most %d seconds", INT_MAX);
        return -1;
    }
    rvs_server_set_idle_timeout(rvs_admin_server(), (int)args->timeout);
    RV_INFO("idle timeout %u s (0: none), set by client %llu (admin)", args->timeout,
            rvs_client_serial_no(call->client));
    return 0;
}
