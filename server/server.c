#include "server/server.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

#include "common/log.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "transport/unix.h"

RV_LOG_CATEGORY("server.server");

typedef struct listener {
    rvs_server *srv;
    ev_io watcher;
    int fd;
    int readonly;
    char *path;
} listener;

struct rvs_server {
    struct ev_loop *loop;
    rvs_client_env env;
    int max_clients;
    listener rw, ro;
    rvs_client *clients;        /* connected */
    int nclients;
    rvs_client *closed;         /* waiting to be freed after their callbacks */
    unsigned long long next_client_no;
    ev_signal sigterm, sigint;
    ev_prepare before_sleep;
    ev_timer accept_pause;      /* out of fds: listeners rest, then retry */
};

static void unlink_client(rvs_client **head, rvs_client *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        *head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void push_client(rvs_client **head, rvs_client *c)
{
    c->prev = NULL;
    c->next = *head;
    if (*head)
        (*head)->prev = c;
    *head = c;
}

/* A client asked to go: move it to the closed list; it is freed before the
 * loop next sleeps, never inside its own callback. */
static void client_closed(rvs_client *c, void *opaque)
{
    rvs_server *srv = opaque;
    unlink_client(&srv->clients, c);
    srv->nclients--;
    push_client(&srv->closed, c);
}

static void free_closed(rvs_server *srv)
{
    while (srv->closed) {
        rvs_client *c = srv->closed;
        unlink_client(&srv->closed, c);
        rvs_client_free(c);
    }
}

static void on_before_sleep(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop;
    (void)revents;
    free_closed(w->data);
    /* One write per batch of log messages, not one per message. */
    rv_log_flush();
}

static void accept_one(rvs_server *srv, listener *l, int fd)
{
    rv_err err = { 0 };
    if (srv->nclients >= srv->max_clients) {
        /* Closing at once tells the client plainly (EOF) instead of
         * leaving it waiting in the backlog. */
        RV_WARN("refusing a client on %s: max_clients (%d) reached", l->path, srv->max_clients);
        close(fd);
        return;
    }
    rv_transport *tr = rv_unix_transport_new(fd, 1, &err);
    if (!tr) {
        RV_WARN("cannot set up a client on %s: %s", l->path, err.message);
        rv_err_clear(&err);
        close(fd);
        return;
    }
    rvs_client *c = rvs_client_new(&srv->env, tr, l->readonly, ++srv->next_client_no);
    if (!c) {
        RV_WARN("out of memory accepting a client on %s", l->path);
        rv_transport_close(tr);
        return;
    }
    if (rv_peercred_get(fd, &c->peer, &err) < 0) {
        RV_WARN("client %llu: %s", c->serial_no, err.message);
        rv_err_clear(&err);
    }
    push_client(&srv->clients, c);
    srv->nclients++;
    RV_INFO("client %llu connected on %s: pid %d uid %u gid %u%s", c->serial_no, l->path,
            (int)c->peer.pid, (unsigned)c->peer.uid, (unsigned)c->peer.gid,
            l->readonly ? " (read-only)" : "");
}

static void set_listening(rvs_server *srv, int on)
{
    listener *all[] = { &srv->rw, &srv->ro };
    for (size_t i = 0; i < 2; i++) {
        if (all[i]->fd < 0)
            continue;
        if (on)
            ev_io_start(srv->loop, &all[i]->watcher);
        else
            ev_io_stop(srv->loop, &all[i]->watcher);
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
            if (errno == EMFILE || errno == ENFILE) {
                /* The pending connection keeps the listener readable, so
                 * retrying at once would spin; rest the listeners a moment. */
                RV_ERROR("cannot accept a client on %s: %s; pausing accepts for 0.5 s",
                         l->path, strerror(errno));
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

static int listener_open(rvs_server *srv, listener *l, const char *dir, const char *name,
                         mode_t mode, int readonly, int backlog, rv_err *err)
{
    l->srv = srv;
    l->readonly = readonly;
    l->fd = -1;
    if (asprintf(&l->path, "%s/%s", dir, name) < 0) {
        l->path = NULL;
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    l->fd = rv_unix_listen(l->path, mode, backlog, err);
    if (l->fd < 0)
        return -1;
    ev_io_init(&l->watcher, on_acceptable, l->fd, EV_READ);
    l->watcher.data = l;
    ev_io_start(srv->loop, &l->watcher);
    RV_INFO("listening on %s (mode %04o%s)", l->path, (unsigned)mode,
            readonly ? ", read-only" : "");
    return 0;
}

static void listener_close(rvs_server *srv, listener *l)
{
    if (l->fd >= 0) {
        ev_io_stop(srv->loop, &l->watcher);
        close(l->fd);
        unlink(l->path);
        l->fd = -1;
    }
    free(l->path);
    l->path = NULL;
}

static void on_stop_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    RV_INFO("signal %d: shutting down", w->signum);
    ev_break(loop, EVBREAK_ALL);
}

static int make_sock_dir(const char *dir, rv_err *err)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                       "unix_sock_dir %s exists and is not a directory", dir);
            return -1;
        }
        return 0;
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot create unix_sock_dir %s", dir);
        return -1;
    }
    return 0;
}

rvs_server *rvs_server_new(const rvs_config *cfg, rv_err *err)
{
    if (rvs_dispatch_init(err) < 0 || make_sock_dir(cfg->unix_sock_dir, err) < 0)
        return NULL;
    rvs_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    srv->rw.fd = srv->ro.fd = -1;
    srv->loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_NOENV);
    if (!srv->loop) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR, "cannot create the event loop");
        free(srv);
        return NULL;
    }
    srv->max_clients = cfg->max_clients;
    raise_fd_limit(cfg->max_clients);
    ev_timer_init(&srv->accept_pause, on_accept_pause_over, 0.5, 0.);
    srv->accept_pause.data = srv;
    srv->env = (rvs_client_env){ .loop = srv->loop,
                                 .max_client_requests = cfg->max_client_requests,
                                 .on_close = client_closed,
                                 .opaque = srv };
    if (listener_open(srv, &srv->rw, cfg->unix_sock_dir, "remvirt-sock", cfg->unix_sock_rw_perms,
                      0, cfg->max_queued_clients, err) < 0 ||
        listener_open(srv, &srv->ro, cfg->unix_sock_dir, "remvirt-sock-ro",
                      cfg->unix_sock_ro_perms, 1, cfg->max_queued_clients, err) < 0) {
        rvs_server_free(srv);
        return NULL;
    }
    ev_signal_init(&srv->sigterm, on_stop_signal, SIGTERM);
    ev_signal_init(&srv->sigint, on_stop_signal, SIGINT);
    ev_signal_start(srv->loop, &srv->sigterm);
    ev_signal_start(srv->loop, &srv->sigint);
    ev_prepare_init(&srv->before_sleep, on_before_sleep);
    srv->before_sleep.data = srv;
    ev_prepare_start(srv->loop, &srv->before_sleep);
    return srv;
}

int rvs_server_run(rvs_server *srv)
{
    ev_run(srv->loop, 0);
    return 0;
}

void rvs_server_free(rvs_server *srv)
{
    if (!srv)
        return;
    listener_close(srv, &srv->rw);
    listener_close(srv, &srv->ro);
    while (srv->clients)
        rvs_client_close(srv->clients, "server shutting down");
    free_closed(srv);
    ev_signal_stop(srv->loop, &srv->sigterm);
    ev_signal_stop(srv->loop, &srv->sigint);
    ev_prepare_stop(srv->loop, &srv->before_sleep);
    ev_timer_stop(srv->loop, &srv->accept_pause);
    ev_loop_destroy(srv->loop);
    free(srv);
    for (size_t i = 0; rv_drivers[i]; i++)
        if (rv_drivers[i]->cleanup)
            rv_drivers[i]->cleanup();
    rv_log_flush();
}
