#include "server/server.h"

#include <errno.h>
#include <grp.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "auth/sasl.h"
#include "common/buf_store.h"
#include "common/log.h"
#include "server/admin.h"
#include "server/budget.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/drivers/work_pool.h"
#include "server/events.h"
#include "server/loop_stall.h"
#include "server/preparse.h"
#include "server/stream.h"
#include "server/systemd.h"
#include "transport/socket.h"
#include "transport/tcp.h"
#include "transport/tls.h"
#include "transport/unix.h"

RV_LOG_CATEGORY("server.server");

/* Unix (read-write, read-only and admin), then TCP and TLS on each address. */
#define RVS_MAX_ADDRS 16
#define RVS_MAX_LISTENERS (3 + 2 * RVS_MAX_ADDRS)

typedef enum { LISTEN_UNIX, LISTEN_TCP, LISTEN_TLS } listen_kind;

typedef struct listener {
    rvs_server *srv;
    ev_io watcher;
    int fd;
    listen_kind kind;
    int readonly;
    int admin;                  /* remvirt-admin-sock: the admin program only */
    int sasl;                   /* clients authenticate with SASL first */
    int min_ssf;                /* the SASL security strength they need */
    char *name;                 /* the socket path, or "tls [::]:16514" */
    char *path;                 /* Unix, created by remvirtd: removed at exit */
} listener;

struct rvs_server {
    struct ev_loop *loop;
    rvs_client_env env;
    rvs_budget budget;          /* what the clients (not the admin's) hold */
    size_t freed_since_trim;    /* what closed clients held since the last trim */
    ev_timer trim;              /* gives the allocator's free pages back */
    int max_clients;
    listener listeners[RVS_MAX_LISTENERS];
    int nlisteners;
    rv_tls_context *tls;        /* with listen_tls */
    rvs_client *clients;        /* connected */
    int nclients;
    int nanonymous;             /* of them, not yet authenticated */
    int max_anonymous_clients;
    rvs_client *closed;         /* waiting to be freed after their callbacks */
    rvs_client *to_flush;       /* events queued, to be written before sleeping */
    unsigned long long next_client_no;
    ev_signal sigterm, sigint;
    ev_signal sighup;           /* rvs_server_on_hangup's */
    void (*on_hangup)(rvs_server *srv, void *opaque);
    void *hangup_opaque;
    ev_prepare before_sleep;
    ev_timer log_flush;         /* writes a batch of debug messages */
    ev_timer accept_pause;      /* out of fds: listeners rest, then retry */
    /* The admin socket's clients: a list and a limit of their own, so that
     * an operator gets in when max_clients is reached. */
    const rvs_config *cfg;      /* the TLS files, for srv-update-tls */
    rvs_client_env admin_env;
    rvs_client *admin_clients;
    int nadmin;
    int max_admin_clients;
    int idle_timeout;           /* --timeout: seconds without clients before exiting */
    ev_timer idle;
};

static void idle_update(rvs_server *srv);

/* A client asked to go: move it to the closed list; it is freed before the
 * loop next sleeps, never inside its own callback. */
static void client_authenticated(rvs_client *c, void *opaque)
{
    (void)c;
    rvs_server *srv = opaque;
    srv->nanonymous--;
}

static void client_closed(rvs_client *c, void *opaque)
{
    rvs_server *srv = opaque;
    if (rvs_client_is_anonymous(c))
        srv->nanonymous--;
    rvs_client_list_unlink(&srv->clients, c);
    srv->nclients--;
    rvs_client_list_push(&srv->closed, c);
    idle_update(srv);
}

/* Every state change a driver makes goes to the clients that subscribed. */
static void lifecycle_to_clients(const rv_driver *drv, const rv_dom_ref *dom, int event,
                                 int detail, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_lifecycle(srv->clients, drv, dom, event, detail);
}

static void domain_event_to_clients(const rv_driver *drv, const rv_dom_ref *dom,
                                    const rv_dom_event *ev, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_domain(srv->clients, drv, dom, ev);
}


static void network_event_to_clients(const rv_driver *drv, const char *name,
                                     const unsigned char uuid[16], int event, int detail,
                                     void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_network_lifecycle(srv->clients, drv, name, uuid, event, detail);
}

static void admin_client_closed(rvs_client *c, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_client_list_unlink(&srv->admin_clients, c);
    srv->nadmin--;
    rvs_client_list_push(&srv->closed, c);
}

static void pool_event_to_clients(const rv_driver *drv, const char *name,
                                  const unsigned char uuid[16], int event_id, int event,
                                  int detail, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_pool_event(srv->clients, drv, name, uuid, event_id, event, detail);
}

static void nodedev_event_to_clients(const rv_driver *drv, const char *name, int event,
                                     void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_nodedev_lifecycle(srv->clients, drv, name, event);
}

static void secret_event_to_clients(const rv_driver *drv, const rv_nonnull_secret *secret,
                                    int event_id, int event, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_events_secret_event(srv->clients, drv, secret, event_id, event);
}

/* Buffers past the mmap threshold go back to the system when freed
 * (main.c), but those under it leave holes in the heap that glibc keeps:
 * after 256 flooders closed, 22 MiB stayed without a trim and 8.5 MiB
 * with one (bench/run-memory-budget.sh).  One trim a second at most,
 * once closed clients gave back a megabyte, so that churn costs nothing. */
#define RVS_TRIM_AFTER (1 << 20)

static void on_trim(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_server *srv = w->data;
    srv->freed_since_trim = 0;
    /* The loop's store of large buffers too (server/client.c): what
     * closed clients left is given back, whoever left it. */
    rv_buf_store_drop();
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void free_closed(rvs_server *srv)
{
    while (srv->closed) {
        rvs_client *c = srv->closed;
        rvs_client_list_unlink(&srv->closed, c);
        srv->freed_since_trim += rvs_client_memory(c);
        rvs_client_free(c);
    }
    if (srv->freed_since_trim >= RVS_TRIM_AFTER && !ev_is_active(&srv->trim)) {
        ev_timer_set(&srv->trim, 1., 0.);
        ev_timer_start(srv->loop, &srv->trim);
    }
}

static void client_wants_flush(rvs_client *c, void *opaque)
{
    rvs_server *srv = opaque;
    rvs_client_flush_list_push(&srv->to_flush, c);
}

/* The events of this loop iteration, one write per subscriber. */
static void flush_queued(rvs_server *srv)
{
    /* Tested here first: the list is empty on nearly every iteration. */
    while (srv->to_flush) {
        rvs_client *c = rvs_client_flush_list_pop(&srv->to_flush);
        if (!rvs_client_is_closing(c))
            rvs_client_flush(c);
    }
}

static void on_before_sleep(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)revents;
    rvs_server *srv = w->data;
    flush_queued(srv);
    /* Tested here: nearly every iteration has none to free. */
    if (srv->closed)
        free_closed(srv);
    /* One write per batch of log messages, not one per message; debug
     * messages wait a little for more (bench/run-logging.sh). */
    if (rv_log_flush_urgent() && !ev_is_active(&srv->log_flush)) {
        /* Set each time: a one-shot timer that has fired keeps no delay. */
        ev_timer_set(&srv->log_flush, RV_LOG_DEBUG_DELAY, 0.);
        ev_timer_start(loop, &srv->log_flush);
    }
}

static void on_log_flush(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
    rv_log_flush();
}

/* Wrap an accepted fd in the listener's transport; NULL (fd closed) on failure. */
static rv_transport *accept_transport(rvs_server *srv, listener *l, int fd, rv_err *err)
{
    if (l->kind != LISTEN_UNIX)
        rv_tcp_nodelay(fd);
    if (l->kind == LISTEN_TLS)
        return rv_tls_server_new(srv->tls, fd, err);
    /* Only a Unix socket can pass descriptors (CALL_WITH_FDS). */
    rv_transport *tr = l->kind == LISTEN_UNIX ? rv_unix_transport_new(fd, 1, err)
                                              : rv_socket_transport_new(fd, 1, err);
    if (!tr)
        close(fd);
    return tr;
}

/* Every client of remvirtd speaks the remote program (and keepalive). */
static int dispatch_remote(rvs_client *c, const char *frame, size_t len, void *opaque)
{
    (void)opaque;
    return rvs_dispatch_frame(c, frame, len);
}

/* An operator on the admin socket (Unix, auth none, its own limit). */
static void accept_admin(rvs_server *srv, listener *l, int fd)
{
    rv_err err = { 0 };
    if (srv->nadmin >= srv->max_admin_clients) {
        RV_WARN("refusing a client on %s: admin_max_clients (%d) reached", l->name,
                srv->max_admin_clients);
        close(fd);
        return;
    }
    rv_transport *tr = accept_transport(srv, l, fd, &err);
    if (!tr) {
        RV_WARN("cannot set up a client on %s: %s", l->name, err.message);
        rv_err_clear(&err);
        return;
    }
    unsigned long long client_no = ++srv->next_client_no;
    rv_peer_identity peer = { 0 };
    if (rv_peercred_get(fd, &peer, &err) < 0) {
        RV_WARN("client %llu: %s", client_no, err.message);
        rv_err_clear(&err);
    }
    rvs_client_start how = { .from = "local", .local = 1, .peer = &peer };
    rvs_client *c = rvs_client_new(&srv->admin_env, tr, &how, client_no);
    if (!c) {
        RV_WARN("out of memory accepting a client on %s", l->name);
        rv_transport_close(tr);
        return;
    }
    rvs_client_set_dispatcher(c, rvs_admin_dispatch, srv);
    rvs_client_list_push(&srv->admin_clients, c);
    srv->nadmin++;
    RV_INFO("client %llu connected on %s: pid %d uid %u gid %u", client_no, l->name,
            (int)peer.pid, (unsigned)peer.uid, (unsigned)peer.gid);
}

static void accept_one(rvs_server *srv, listener *l, int fd)
{
    rv_err err = { 0 };
    if (l->admin) {
        accept_admin(srv, l, fd);
        return;
    }
    if (srv->nclients >= srv->max_clients) {
        /* Closing at once tells the client plainly (EOF) instead of
         * leaving it waiting in the backlog. */
        RV_WARN("refusing a client on %s: max_clients (%d) reached", l->name, srv->max_clients);
        close(fd);
        return;
    }
    char from[80] = "local";
    if (l->kind != LISTEN_UNIX)
        rv_tcp_addr_name(fd, 1, from, sizeof(from));
    rv_peer_identity peer = { 0 };
    rvs_client_start how = { .readonly = l->readonly, .from = from,
                             .local = l->kind == LISTEN_UNIX,
                             .peer = l->kind == LISTEN_UNIX ? &peer : NULL,
                             .tls_handshake = l->kind == LISTEN_TLS, .sasl = l->sasl,
                             .min_ssf = l->min_ssf };
    if ((how.sasl || how.tls_handshake) && srv->nanonymous >= srv->max_anonymous_clients) {
        /* Authenticated clients still get in: the limit is on strangers. */
        RV_WARN("refusing a client from %s on %s: max_anonymous_clients (%d) are still "
                "authenticating", from, l->name, srv->max_anonymous_clients);
        close(fd);
        return;
    }
    rv_transport *tr = accept_transport(srv, l, fd, &err);
    if (!tr) {
        RV_WARN("cannot set up a client from %s on %s: %s", from, l->name, err.message);
        rv_err_clear(&err);
        return;
    }
    /* Numbered after the refusals above: a refused connection takes no
     * number. */
    unsigned long long client_no = ++srv->next_client_no;
    if (l->kind == LISTEN_UNIX && rv_peercred_get(fd, &peer, &err) < 0) {
        RV_WARN("client %llu: %s", client_no, err.message);
        rv_err_clear(&err);
    }
    rvs_client *c = rvs_client_new(&srv->env, tr, &how, client_no);
    if (!c) {
        RV_WARN("out of memory accepting a client on %s", l->name);
        rv_transport_close(tr);
        return;
    }
    rvs_client_set_dispatcher(c, dispatch_remote, srv);
    rvs_client_list_push(&srv->clients, c);
    srv->nclients++;
    idle_update(srv);
    if (rvs_client_is_anonymous(c))
        srv->nanonymous++;
    if (l->kind == LISTEN_UNIX)
        RV_INFO("client %llu connected on %s: pid %d uid %u gid %u%s", client_no, l->name,
                (int)peer.pid, (unsigned)peer.uid, (unsigned)peer.gid,
                l->readonly ? " (read-only)" : "");
    else
        RV_INFO("client %llu connected on %s from %s%s", client_no, l->name, from,
                l->sasl ? " (SASL to come)" : "");
}

static void set_listening(rvs_server *srv, int on)
{
    for (int i = 0; i < srv->nlisteners; i++) {
        if (on)
            ev_io_start(srv->loop, &srv->listeners[i].watcher);
        else
            ev_io_stop(srv->loop, &srv->listeners[i].watcher);
    }
}

static void on_accept_pause_over(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    set_listening(w->data, 1);
}

static void on_acceptable(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    listener *l = w->data;
    /* Take what is queued, a bounded number per wake-up so a connection
     * storm cannot starve the clients already here. */
    for (int i = 0; i < 64; i++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* Out of fds or memory: the pending connection keeps the
             * listener readable, so retrying at once would spin; rest the
             * listeners a moment.  (A client that gave up before we
             * accepted it is no reason to.) */
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                RV_ERROR("cannot accept a client on %s: %s; pausing accepts for 0.5 s",
                         l->name, strerror(errno));
                set_listening(l->srv, 0);
                ev_timer_set(&l->srv->accept_pause, 0.5, 0.);
                ev_timer_start(loop, &l->srv->accept_pause);
            }
            return;
        }
        accept_one(l->srv, l, fd);
    }
}

/* max_clients is only honest if that many fds can be open: raise the soft
 * limit as far as the hard one allows, and say so if it falls short. */
static void raise_fd_limit(int max_clients)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rlim_t want = (rlim_t)max_clients + 64;
    if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return;
    }
    if (rl.rlim_cur < want)
        RV_WARN("open file limit %llu is below max_clients (%d) + 64: clients past it "
                "will be refused", (unsigned long long)rl.rlim_cur, max_clients);
}

static listener *listener_add(rvs_server *srv, int fd, listen_kind kind, int readonly,
                              const char *auth, int min_ssf, char *name, char *path)
{
    listener *l = &srv->listeners[srv->nlisteners++];
    int sasl = strcmp(auth, "sasl") == 0;
    *l = (listener){ .srv = srv, .fd = fd, .kind = kind, .readonly = readonly, .sasl = sasl,
                     .min_ssf = sasl ? min_ssf : 0, .name = name, .path = path };
    ev_io_init(&l->watcher, on_acceptable, fd, EV_READ);
    l->watcher.data = l;
    ev_io_start(srv->loop, &l->watcher);
    RV_INFO("listening on %s, auth %s", name, auth);
    return l;
}

static int listen_unix(rvs_server *srv, const char *dir, const char *file, mode_t mode,
                       gid_t group, int readonly, const char *auth, int backlog, rv_err *err)
{
    char *path = NULL, *name = NULL;
    if (asprintf(&path, "%s/%s", dir, file) < 0 ||
        asprintf(&name, "%s (mode %04o%s)", path, (unsigned)mode,
                 readonly ? ", read-only" : "") < 0) {
        free(path);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int fd = rv_unix_listen(path, mode, backlog, err);
    /* By name, but safely: nobody else can write in unix_sock_dir (see
     * check_sock_dir), and lchown never follows a link. */
    if (fd >= 0 && group != (gid_t)-1 && lchown(path, (uid_t)-1, group) < 0) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot give %s to unix_sock_group", path);
        close(fd);
        unlink(path);
        fd = -1;
    }
    if (fd < 0) {
        free(path);
        free(name);
        return -1;
    }
    listener_add(srv, fd, LISTEN_UNIX, readonly, auth, 0, name, path);
    return 0;
}

static int listen_admin(rvs_server *srv, const rvs_config *cfg, rv_err *err)
{
    if (listen_unix(srv, cfg->unix_sock_dir, "remvirt-admin-sock", cfg->admin_unix_sock_perms,
                    (gid_t)-1, 0, "none", cfg->max_queued_clients, err) < 0)
        return -1;
    srv->listeners[srv->nlisteners - 1].admin = 1;
    return 0;
}

static int listen_network(rvs_server *srv, listen_kind kind, const rvs_config *cfg, rv_err *err)
{
    int fds[RVS_MAX_ADDRS];
    const char *port = kind == LISTEN_TLS ? cfg->tls_port : cfg->tcp_port;
    int n = rv_tcp_listen(cfg->listen_addr, port, cfg->max_queued_clients, fds, RVS_MAX_ADDRS,
                          err);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        char addr[80], *name = NULL;
        rv_tcp_addr_name(fds[i], 0, addr, sizeof(addr));
        if (asprintf(&name, "%s %s", kind == LISTEN_TLS ? "tls" : "tcp", addr) < 0) {
            while (i < n)
                close(fds[i++]);
            rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        listener_add(srv, fds[i], kind, 0, kind == LISTEN_TLS ? cfg->auth_tls : cfg->auth_tcp,
                     kind == LISTEN_TLS ? 0 : cfg->tcp_min_ssf, name, NULL);
    }
    return 0;
}

static int make_tls_context(rvs_server *srv, const rvs_config *cfg, rv_err *err)
{
    rv_tls_files files = {
        .ca_file = cfg->ca_file ? cfg->ca_file : RV_TLS_DEFAULT_CA_FILE,
        .cert_file = cfg->cert_file ? cfg->cert_file : RV_TLS_DEFAULT_SERVER_CERT,
        .key_file = cfg->key_file ? cfg->key_file : RV_TLS_DEFAULT_SERVER_KEY,
        .crl_file = cfg->crl_file ? cfg->crl_file : RV_TLS_DEFAULT_CRL_FILE,
    };
    rv_tls_server_policy policy = {
        .priority = cfg->tls_priority,
        .verify_client = !cfg->tls_no_verify_certificate,
        .allowed_dns = (const char *const *)cfg->tls_allowed_dn_list,
        .sanity_check = !cfg->tls_no_sanity_certificate,
    };
    srv->tls = rv_tls_server_context_new(&files, &policy, err);
    return srv->tls ? 0 : -1;
}

static void listener_close(rvs_server *srv, listener *l)
{
    ev_io_stop(srv->loop, &l->watcher);
    close(l->fd);
    if (l->path)
        unlink(l->path);
    free(l->path);
    free(l->name);
}

static void on_stop_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    RV_INFO("signal %d: shutting down", w->signum);
    ev_break(loop, EVBREAK_ALL);
}

/* ---- socket activation, --timeout, reload (the service side) ---- */

/* The sockets the service manager passed under unit's name, as listeners
 * of kind (a socket systemd made is systemd's: never unlinked).  Returns
 * how many, 0 when none was passed. */
static int listen_activated(rvs_server *srv, const char *unit, listen_kind kind, int readonly,
                            const char *auth, int min_ssf, int max, rv_err *err)
{
    int fds[RVS_MAX_ADDRS];
    int n = rvs_activation_take(unit, kind == LISTEN_TCP || kind == LISTEN_TLS ? RVS_ADDR_INET
                                                                              : RVS_ADDR_UNIX,
                                fds, max < RVS_MAX_ADDRS ? max : RVS_MAX_ADDRS, err);
    for (int i = 0; i < n; i++) {
        char addr[110] = "", *name = NULL;
        if (kind == LISTEN_TCP || kind == LISTEN_TLS) {
            rv_tcp_addr_name(fds[i], 0, addr, sizeof(addr));
        } else {
            struct sockaddr_un sa;
            socklen_t len = sizeof(sa);
            if (getsockname(fds[i], (struct sockaddr *)&sa, &len) == 0 &&
                len > offsetof(struct sockaddr_un, sun_path) && sa.sun_path[0])
                snprintf(addr, sizeof(addr), "%.*s",
                         (int)(len - offsetof(struct sockaddr_un, sun_path)), sa.sun_path);
        }
        const char *what = kind == LISTEN_TCP ? "tcp " : kind == LISTEN_TLS ? "tls " : "";
        if (asprintf(&name, "%s%s (%s%s)", what, addr, unit, readonly ? ", read-only" : "") < 0) {
            while (i < n)
                close(fds[i++]);
            rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        listener_add(srv, fds[i], kind, readonly, auth, min_ssf, name, NULL);
    }
    return n;
}

static int sock_group_id(const char *group, gid_t *gid, rv_err *err)
{
    *gid = (gid_t)-1;
    if (!group)
        return 0;
    struct group *gr = getgrnam(group);
    if (!gr) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "unix_sock_group: there is no group '%s'", group);
        return -1;
    }
    *gid = gr->gr_gid;
    return 0;
}

static int make_sock_dir(const char *dir, rv_err *err);
static int make_tls_context(rvs_server *srv, const rvs_config *cfg, rv_err *err);
static int listen_network(rvs_server *srv, listen_kind kind, const rvs_config *cfg, rv_err *err);

/* Every listener: what socket activation passed, by name, and otherwise
 * what remvirtd.conf asks for.  As libvirtd's, a passed TCP or TLS socket
 * is served whatever listen_tcp/listen_tls say (enabling
 * remvirtd-tcp.socket is how one asks for it then). */
static int setup_listeners(rvs_server *srv, const rvs_config *cfg, rv_err *err)
{
    int backlog = cfg->max_queued_clients;
    int n = listen_activated(srv, RVS_SOCKET_TCP, LISTEN_TCP, 0, cfg->auth_tcp,
                             cfg->tcp_min_ssf, RVS_MAX_ADDRS, err);
    if (n < 0 || (n == 0 && cfg->listen_tcp && listen_network(srv, LISTEN_TCP, cfg, err) < 0))
        return -1;
    n = listen_activated(srv, RVS_SOCKET_TLS, LISTEN_TLS, 0, cfg->auth_tls, 0, RVS_MAX_ADDRS,
                         err);
    if (n < 0 || ((n > 0 || cfg->listen_tls) && make_tls_context(srv, cfg, err) < 0) ||
        (n == 0 && cfg->listen_tls && listen_network(srv, LISTEN_TLS, cfg, err) < 0))
        return -1;
    /* The Unix sockets come last: once they exist, every listener is up
     * (the TLS context takes a while), so waiting for them is enough.  The
     * admin socket is only ever the owner's (no group). */
    int adm = listen_activated(srv, RVS_SOCKET_ADMIN, LISTEN_UNIX, 0, "none", 0, 1, err);
    if (adm < 0 || rvs_admin_init(err) < 0)
        return -1;
    if (adm == 1)
        srv->listeners[srv->nlisteners - 1].admin = 1;
    int rw = listen_activated(srv, RVS_SOCKET_RW, LISTEN_UNIX, 0, cfg->auth_unix_rw, 0, 1, err);
    if (rw < 0)
        return -1;
    int ro = listen_activated(srv, RVS_SOCKET_RO, LISTEN_UNIX, 1, cfg->auth_unix_ro, 0, 1, err);
    if (ro < 0)
        return -1;
    gid_t group = (gid_t)-1;
    if ((adm == 0 || rw == 0 || ro == 0) &&
        (sock_group_id(cfg->unix_sock_group, &group, err) < 0 ||
         make_sock_dir(cfg->unix_sock_dir, err) < 0))
        return -1;
    if ((adm == 0 && listen_admin(srv, cfg, err) < 0) ||
        (rw == 0 && listen_unix(srv, cfg->unix_sock_dir, "remvirt-sock", cfg->unix_sock_rw_perms,
                                group, 0, cfg->auth_unix_rw, backlog, err) < 0) ||
        (ro == 0 && listen_unix(srv, cfg->unix_sock_dir, "remvirt-sock-ro",
                                cfg->unix_sock_ro_perms, group, 1, cfg->auth_unix_ro, backlog,
                                err) < 0))
        return -1;
    rvs_activation_close_unclaimed();
    return 0;
}

/* --timeout: with no client for that long (and no driver busy, e.g. with
 * running guests) remvirtd exits; socket activation starts it again on
 * the next connection.  The timer runs only while there are no clients. */
static void idle_update(rvs_server *srv)
{
    if (srv->idle_timeout <= 0)
        return;
    if (srv->nclients > 0) {
        ev_timer_stop(srv->loop, &srv->idle);
    } else if (!ev_is_active(&srv->idle)) {
        ev_timer_set(&srv->idle, srv->idle_timeout, 0.);
        ev_timer_start(srv->loop, &srv->idle);
    }
}

void rvs_server_set_idle_timeout(rvs_server *srv, int seconds)
{
    srv->idle_timeout = seconds;
    ev_timer_stop(srv->loop, &srv->idle);
    idle_update(srv);
}

static void on_idle(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    rvs_server *srv = w->data;
    if (srv->nclients == 0 && !rv_drivers_busy()) {
        RV_INFO("no clients for %d s (--timeout): exiting", srv->idle_timeout);
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    idle_update(srv);   /* a driver is busy: look again after another period */
}

/* Whoever can write a directory can swap the names in it, so remvirtd
 * (often root) creates its sockets only where nobody else can: every
 * directory above unix_sock_dir must belong to root or to remvirtd's user
 * and be writable by nobody else, unless it is sticky like /tmp (others
 * may add names there but not replace ours); unix_sock_dir itself must
 * belong to remvirtd's user, be writable by nobody else and not be a
 * symbolic link. */
static int refuse_dir(rv_err *err, const char *dir, const char *what, const char *path,
                      const struct stat *st, const char *why)
{
    rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
               "refusing unix_sock_dir %s: %s%s%s %s (uid %u, mode %04o); remvirtd runs "
               "as uid %u", dir, what, path ? " " : "", path ? path : "", why,
               (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), (unsigned)geteuid());
    return -1;
}

/* Checks each directory above the last component of path (absolute). */
static int check_dirs_above(const char *dir, const char *path, rv_err *err)
{
    size_t end = (size_t)(strrchr(path, '/') - path);
    char *prefix = malloc(end + 2);
    if (!prefix) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i <= end; i++) {
        if (path[i] != '/')
            continue;
        size_t n = i ? i : 1;
        memcpy(prefix, path, n);
        prefix[n] = '\0';
        struct stat st;
        /* A link along the way is as safe as the directory it sits in;
         * where it leads is checked through the resolved path. */
        if (lstat(prefix, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        if (st.st_uid != 0 && st.st_uid != geteuid())
            rc = refuse_dir(err, dir, "the directory", prefix, &st,
                            "above it belongs to another user");
        else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
            rc = refuse_dir(err, dir, "the directory", prefix, &st,
                            "above it is writable by its group or others");
    }
    free(prefix);
    return rc;
}

static int check_sock_dir(const char *dir, char *path, rv_err *err)
{
    if (path[0] == '/' && check_dirs_above(dir, path, err) < 0)
        return -1;
    /* The directories the kernel will really pass through: links
     * resolved, and for a relative path those above the current one. */
    char *slash = strrchr(path, '/'), *cut = slash == path ? slash + 1 : slash, saved = 0;
    if (cut) {
        saved = *cut;
        *cut = '\0';
    }
    char *parent = realpath(cut ? path : ".", NULL), *resolved = NULL;
    if (cut)
        *cut = saved;
    if (!parent) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot create unix_sock_dir %s", dir);
        return -1;
    }
    int rc = asprintf(&resolved, "%s/x", strcmp(parent, "/") == 0 ? "" : parent);
    free(parent);
    if (rc < 0) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    rc = check_dirs_above(dir, resolved, err);
    free(resolved);
    if (rc < 0)
        return -1;

    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno != ENOENT || (mkdir(path, 0755) < 0 && errno != EEXIST) ||
            lstat(path, &st) < 0) {
            rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot create unix_sock_dir %s", dir);
            return -1;
        }
    }
    if (S_ISLNK(st.st_mode))
        return refuse_dir(err, dir, "it", NULL, &st, "is a symbolic link");
    if (!S_ISDIR(st.st_mode)) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "unix_sock_dir %s exists and is not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid())
        return refuse_dir(err, dir, "it", NULL, &st, "belongs to another user");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return refuse_dir(err, dir, "it", NULL, &st, "is writable by its group or others");
    return 0;
}

static int make_sock_dir(const char *dir, rv_err *err)
{
    /* A trailing slash would make lstat follow a link at the end. */
    char *path = strdup(dir);
    if (!path) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    int rc = check_sock_dir(dir, path, err);
    free(path);
    return rc;
}

rvs_server *rvs_server_new(const rvs_config *cfg, rv_err *err)
{
    if (rvs_dispatch_init(err) < 0 || rvs_activation_init(err) < 0) {
        rvs_activation_cleanup();
        return NULL;
    }
    rvs_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    srv->loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_NOENV);
    if (!srv->loop) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR, "cannot create the event loop");
        free(srv);
        return NULL;
    }
    if (rvs_client_keep_spares() < 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        free(srv);
        return NULL;
    }
    srv->max_clients = cfg->max_clients;
    raise_fd_limit(cfg->max_clients);
    ev_timer_init(&srv->accept_pause, on_accept_pause_over, 0.5, 0.);
    ev_timer_init(&srv->trim, on_trim, 1., 0.);
    srv->trim.data = srv;
    srv->accept_pause.data = srv;
    srv->env = (rvs_client_env){ .loop = srv->loop,
                                 .max_client_requests = cfg->max_client_requests,
                                 .on_close = client_closed,
                                 .opaque = srv };
    const char *auths[] = { cfg->auth_unix_rw, cfg->auth_unix_ro,
                            cfg->listen_tcp ? cfg->auth_tcp : "none",
                            cfg->listen_tls ? cfg->auth_tls : "none" };
    for (size_t i = 0; i < sizeof(auths) / sizeof(auths[0]); i++)
        if (strcmp(auths[i], "sasl") == 0 && rv_sasl_server_init(err) < 0) {
            rvs_server_free(srv);
            return NULL;
        }
    srv->env.handshake_timeout = cfg->tls_handshake_timeout;
    srv->env.auth_timeout = cfg->auth_timeout;
    srv->env.keepalive_interval = cfg->keepalive_interval;
    srv->env.keepalive_count = cfg->keepalive_count;
    srv->env.max_client_output = cfg->max_client_output_bytes;
    srv->env.output_timeout = cfg->client_output_timeout;
    /* A download stops under the output cap (with room for one more
     * packet), or a slow reader would be closed as one that reads nothing. */
    rvs_budget_init(&srv->budget, cfg->memory_budget_bytes, cfg->memory_budget_readonly_bytes,
                    cfg->memory_budget_user_bytes);
    srv->env.budget = &srv->budget;
    srv->env.stream_window = cfg->stream_window_bytes;
    if (srv->env.stream_window + 2 * RVS_STREAM_CHUNK > srv->env.max_client_output)
        srv->env.stream_window = srv->env.max_client_output > 4 * RVS_STREAM_CHUNK
                                     ? srv->env.max_client_output - 2 * RVS_STREAM_CHUNK
                                     : RVS_STREAM_CHUNK;
    srv->env.sasl_allowed_users = (const char *const *)cfg->sasl_allowed_username_list;
    srv->env.on_authenticated = client_authenticated;
    srv->env.want_flush = client_wants_flush;
    srv->max_anonymous_clients = cfg->max_anonymous_clients;
    srv->cfg = cfg;
    srv->admin_env = srv->env;
    srv->admin_env.on_close = admin_client_closed;
    srv->admin_env.on_authenticated = NULL;     /* auth none: never anonymous */
    srv->admin_env.budget = NULL;               /* an operator always gets in */
    srv->max_admin_clients = cfg->admin_max_clients;
    rvs_admin_set_server(srv);
    if (setup_listeners(srv, cfg, err) < 0) {
        rvs_server_free(srv);
        return NULL;
    }
    srv->idle_timeout = cfg->timeout;
    ev_timer_init(&srv->idle, on_idle, 0., 0.);
    srv->idle.data = srv;
    ev_signal_init(&srv->sigterm, on_stop_signal, SIGTERM);
    ev_signal_init(&srv->sigint, on_stop_signal, SIGINT);
    ev_signal_start(srv->loop, &srv->sigterm);
    ev_signal_start(srv->loop, &srv->sigint);
    ev_prepare_init(&srv->before_sleep, on_before_sleep);
    srv->before_sleep.data = srv;
    ev_prepare_start(srv->loop, &srv->before_sleep);
    rvs_loop_stall_watch(srv->loop);
    ev_timer_init(&srv->log_flush, on_log_flush, RV_LOG_DEBUG_DELAY, 0.);
    rv_driver_set_lifecycle_sink(lifecycle_to_clients, srv);
    rv_driver_set_domain_event_sink(domain_event_to_clients, srv);
    rv_driver_set_network_sink(network_event_to_clients, srv);
    rv_driver_set_pool_sink(pool_event_to_clients, srv);
    rv_driver_set_nodedev_sink(nodedev_event_to_clients, srv);
    rv_driver_set_secret_sink(secret_event_to_clients, srv);
    rv_driver_setup setup = { .loop = srv->loop,
                              .qemu_config_dir = cfg->qemu_config_dir,
                              .qemu_run_dir = cfg->qemu_run_dir,
                              .qemu_save_dir = cfg->qemu_save_dir,
                              .qemu_dump_dir = cfg->qemu_dump_dir,
                              .qemu_binary = cfg->qemu_binary,
                              .qemu_backup_tls_dir = cfg->qemu_backup_tls_x509_cert_dir,
                              .qemu_backup_tls_verify = cfg->qemu_backup_tls_x509_verify,
                              .qemu_migrate_tls_dir = cfg->qemu_migrate_tls_x509_cert_dir,
                              .qemu_migrate_tls_verify = cfg->qemu_migrate_tls_x509_verify,
                              .qemu_migration_host = cfg->qemu_migration_host,
                              .qemu_migration_port_min = cfg->qemu_migration_port_min,
                              .qemu_migration_port_max = cfg->qemu_migration_port_max,
                              .qemu_keepalive_interval = cfg->qemu_keepalive_interval,
                              .qemu_keepalive_count = cfg->qemu_keepalive_count,
                              .qemu_migration_stall_timeout = cfg->qemu_migration_stall_timeout };
    rvs_preparse_init();     /* before the threads that parse */
    if (rv_work_pool_start(srv->loop, cfg->work_threads, err) < 0) {
        rvs_server_free(srv);
        return NULL;
    }
    for (size_t i = 0; rv_drivers[i]; i++)
        if (rv_drivers[i]->init)
            rv_drivers[i]->init(&setup);
    return srv;
}

int rvs_server_run(rvs_server *srv)
{
    idle_update(srv);
    rvs_notify("READY=1");
    ev_run(srv->loop, 0);
    rvs_notify("STOPPING=1");
    return 0;
}

void rvs_server_free(rvs_server *srv)
{
    if (!srv)
        return;
    for (int i = 0; i < srv->nlisteners; i++)
        listener_close(srv, &srv->listeners[i]);
    while (srv->clients)
        rvs_client_close(srv->clients, "server shutting down");
    while (srv->admin_clients)
        rvs_client_close(srv->admin_clients, "server shutting down");
    srv->to_flush = NULL;       /* every client on it is closing now */
    free_closed(srv);
    /* After the clients (a handshake step still running closes its
     * transport when back), before the drivers (a peek's reply). */
    rv_work_pool_stop();
    rvs_client_free_spares();
    ev_signal_stop(srv->loop, &srv->sigterm);
    ev_signal_stop(srv->loop, &srv->sigint);
    ev_signal_stop(srv->loop, &srv->sighup);
    ev_prepare_stop(srv->loop, &srv->before_sleep);
    ev_timer_stop(srv->loop, &srv->log_flush);
    ev_timer_stop(srv->loop, &srv->accept_pause);
    ev_timer_stop(srv->loop, &srv->trim);
    ev_timer_stop(srv->loop, &srv->idle);
    rv_driver_set_lifecycle_sink(NULL, NULL);
    rv_driver_set_domain_event_sink(NULL, NULL);
    rv_driver_set_network_sink(NULL, NULL);
    rv_driver_set_pool_sink(NULL, NULL);
    rv_driver_set_nodedev_sink(NULL, NULL);
    rv_driver_set_secret_sink(NULL, NULL);
    /* Before the loop goes: a driver's watchers (QEMU monitors) are on it. */
    for (size_t i = 0; rv_drivers[i]; i++)
        if (rv_drivers[i]->cleanup)
            rv_drivers[i]->cleanup();
    ev_loop_destroy(srv->loop);
    rv_tls_context_free(srv->tls);
    rvs_admin_set_server(NULL);
    free(srv);
    rvs_activation_cleanup();
    rv_log_flush();
}

static void on_hangup_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)revents;
    rvs_server *srv = w->data;
    /* systemd (Type=notify-reload, 253 on) wants the time with RELOADING=1. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    char state[80];
    snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
             (unsigned long long)now.tv_sec * 1000000ULL + (unsigned long long)now.tv_nsec / 1000);
    rvs_notify(state);
    RV_INFO("signal %d (SIGHUP): reloading; no client is dropped", w->signum);
    srv->on_hangup(srv, srv->hangup_opaque);
    rvs_notify("READY=1");
}

void rvs_server_on_hangup(rvs_server *srv, void (*fn)(rvs_server *srv, void *opaque),
                          void *opaque)
{
    srv->on_hangup = fn;
    srv->hangup_opaque = opaque;
    ev_signal_init(&srv->sighup, on_hangup_signal, SIGHUP);
    srv->sighup.data = srv;
    ev_signal_start(srv->loop, &srv->sighup);
}

int rvs_server_has_tls(const rvs_server *srv)
{
    return srv->tls != NULL;
}

int rvs_server_nclients(const rvs_server *srv)
{
    return srv->nclients + srv->nadmin;
}

/* ---- what the admin program sees and changes (server/admin_procs.c) ---- */

rvs_client *rvs_server_clients(rvs_server *srv, rvs_server_group group)
{
    return group == RVS_GROUP_ADMIN ? srv->admin_clients : srv->clients;
}

void rvs_server_get_limits(rvs_server *srv, rvs_server_group group, rvs_server_limits *out)
{
    if (group == RVS_GROUP_ADMIN)
        *out = (rvs_server_limits){ .max_clients = srv->max_admin_clients,
                                    .nclients = srv->nadmin };
    else
        *out = (rvs_server_limits){ .max_clients = srv->max_clients, .nclients = srv->nclients,
                                    .max_anonymous = srv->max_anonymous_clients,
                                    .nanonymous = srv->nanonymous };
}

/* Clients already in stay; the new limits apply to the next accept. */
void rvs_server_set_limits(rvs_server *srv, rvs_server_group group, int max_clients,
                           int max_anonymous)
{
    if (group == RVS_GROUP_ADMIN) {
        srv->max_admin_clients = max_clients;
        return;
    }
    srv->max_clients = max_clients;
    srv->max_anonymous_clients = max_anonymous;
}

/* A new context from the same files; TLS clients already in keep theirs
 * (the transports hold a reference), new ones get the new one. */
int rvs_server_update_tls(rvs_server *srv, rv_err *err)
{
    if (!srv->tls) {
        rv_err_set(err, RV_FROM_ADMIN, RV_ERR_INTERNAL_ERROR,
                   "internal error: no tls service found, unable to update tls files");
        return -1;
    }
    rv_tls_context *old = srv->tls;
    srv->tls = NULL;
    if (make_tls_context(srv, srv->cfg, err) < 0) {
        srv->tls = old;
        return -1;
    }
    rv_tls_context_free(old);
    RV_INFO("TLS files re-read: new TLS clients get the new certificates");
    return 0;
}
