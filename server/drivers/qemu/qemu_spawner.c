/* QEMU processes are started by a small helper process, so that the loop
 * never forks (or vforks) one itself: a fork on the loop copies all of
 * remvirtd's page tables, a vfork waits until the child has been
 * scheduled and has exec'd, and on a machine whose CPUs are busy with
 * booting guests either stalled every client for tens of milliseconds.
 * Asking the helper is one sendmsg.
 *
 * The helper is forked once, when the driver loads, and talks over a
 * SOCK_SEQPACKET pair (one message, one request or answer):
 *
 *   remvirtd -> helper  SPAWN id argv, with the log (and the incoming
 *                       migration fd, and the taps) passed as SCM_RIGHTS
 *   helper -> remvirtd  FORKED id pid (or errno): the child exists and
 *                       waits, nothing run yet
 *   remvirtd -> helper  GO pid run|abort: remvirtd has recorded the pid
 *                       (the domain's .status file), the child may exec
 *   helper -> remvirtd  EXITED pid status: the helper reaped a QEMU
 *
 * Crash safety is as with a fork on the loop: QEMU runs only once its
 * pid is on disk.  The waiting child dies with the helper, the helper
 * dies with remvirtd (PR_SET_PDEATHSIG), so a remvirtd killed between
 * FORKED and GO leaves no QEMU behind; after GO, QEMU no longer dies with
 * them and a restarted remvirtd reattaches it.  If the helper dies while
 * remvirtd runs, the QEMUs it had started are watched as reattached ones
 * (not our children) and the next start forks a new helper. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.spawner");

#define SPAWN_MAX_MESSAGE 65536     /* a command line longer is refused */
#define SPAWN_MAX_ARGS 4096         /* and one of more words */
#define SPAWN_MAX_WAITING 64        /* forked children waiting for GO */
#define SPAWN_MAX_TAPS 32           /* tap descriptors passed with one start */
#define SPAWN_MAX_FDS (2 + SPAWN_MAX_TAPS)
_Static_assert(SPAWN_MAX_FDS <= RV_QEMU_HELPER_MAX_FDS, "a start's descriptors fit one message");

enum { MSG_SPAWN = 1, MSG_GO, MSG_FORKED, MSG_EXITED };

typedef struct spawn_msg {
    uint32_t kind;
    uint32_t id;
    int32_t pid;
    int32_t value;      /* SPAWN: has an incoming fd; GO: 1 run, 0 abort;
                         * FORKED: errno (0 when pid is set); EXITED: status */
    uint32_t ntaps;     /* SPAWN: the taps passed after the log (and incoming) */
} spawn_msg;

/* A start waiting for its FORKED answer, in remvirtd. */
typedef struct spawn_request {
    uint32_t id;
    rv_qemu_spawned_fn done;
    void *data;
    struct spawn_request *next;
} spawn_request;

/* A program run for remvirtd (qemu-img, dnsmasq, nft), until it exits. */
typedef struct spawn_cmd {
    pid_t pid;
    rv_qemu_cmd_done_fn done;
    void *data;
    struct spawn_cmd *next;
} spawn_cmd;

static struct {
    rv_qemu_helper h;
    uint32_t next_id;
    spawn_request *requests;
    spawn_cmd *cmds;            /* running, their exit not seen yet */
} spawner = { .h.fd = -1 };

/* ================================================================ the helper */

typedef struct waiting_child {
    pid_t pid;
    int go_fd;          /* a byte written here lets it exec; closed: it exits */
} waiting_child;

static void helper_send(int sock, uint32_t kind, uint32_t id, pid_t pid, int value)
{
    spawn_msg m = { kind, id, (int32_t)pid, value, 0 };
    while (send(sock, &m, sizeof(m), MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* The child between fork and exec: wait for GO, then become QEMU, with
 * the log as its output, incoming_fd (>= 0) as descriptor 3 and the
 * ntaps taps as 4, 5, ...; argv's leading NAME=VALUE words set in its
 * environment. */
static void child_run(int go_fd, char **argv, int log_fd, int incoming_fd, int *taps,
                      unsigned ntaps, pid_t helper)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != helper)
        _exit(127);
    setsid();   /* its own session: remvirtd's signals are not its */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
        _exit(127);
    /* Everything out of the way of the numbers it gets first (3, 4 ...,
     * the GO pipe at go), so that no dup2 lands on one still to move. */
    int go = 4 + (int)ntaps;
    if ((incoming_fd >= 0 && (incoming_fd = fcntl(incoming_fd, F_DUPFD, go + 1)) < 0) ||
        (go_fd = fcntl(go_fd, F_DUPFD, go + 1)) < 0)
        _exit(127);
    for (unsigned i = 0; i < ntaps; i++)
        if ((taps[i] = fcntl(taps[i], F_DUPFD, go + 1)) < 0)
            _exit(127);
    if ((incoming_fd >= 0 && dup2(incoming_fd, 3) < 0) || dup2(go_fd, go) < 0)
        _exit(127);
    for (unsigned i = 0; i < ntaps; i++)
        if (dup2(taps[i], 4 + (int)i) < 0)
            _exit(127);
    if (incoming_fd < 0)
        close(3);
    closefrom(go + 1);
    char byte = 0;
    ssize_t n;
    while ((n = read(go, &byte, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1 || byte != 'g')
        _exit(127);
    close(go);
    /* Leading NAME=VALUE words go into its environment (command.h). */
    while (argv[0] && argv[0][0] != '/' && strchr(argv[0], '=') && putenv(argv[0]) == 0)
        argv++;
    /* From here QEMU outlives the helper and remvirtd. */
    prctl(PR_SET_PDEATHSIG, 0);
    execv(argv[0], argv);
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* One SPAWN: fork the child that waits for GO. */
static void helper_spawn(int sock, const spawn_msg *m, char *blob, size_t len, int *fds,
                         int nfds, waiting_child *waiting)
{
    int slot = -1;
    for (int i = 0; i < SPAWN_MAX_WAITING; i++)
        if (waiting[i].pid == 0) {
            slot = i;
            break;
        }
    char *argv[SPAWN_MAX_ARGS + 1];
    size_t argc = 0, at = 0;
    for (; at < len && argc < SPAWN_MAX_ARGS; at += strlen(blob + at) + 1)
        argv[argc++] = blob + at;
    argv[argc] = NULL;
    int expected = (m->value ? 2 : 1) + (int)m->ntaps;
    int pipe_fds[2] = { -1, -1 };
    int error = slot < 0 ? EAGAIN : at < len ? E2BIG : (nfds != expected || argc == 0) ? EINVAL : 0;
    if (!error && pipe2(pipe_fds, O_CLOEXEC) < 0)
        error = errno;
    pid_t self = getpid();
    pid_t pid = error ? -1 : fork();
    if (pid == 0) {
        close(pipe_fds[1]);
        child_run(pipe_fds[0], argv, fds[0], m->value ? fds[1] : -1, fds + (m->value ? 2 : 1),
                  m->ntaps, self);
    }
    if (!error && pid < 0)
        error = errno;
    if (pipe_fds[0] >= 0)
        close(pipe_fds[0]);
    if (pid > 0) {
        waiting[slot].pid = pid;
        waiting[slot].go_fd = pipe_fds[1];
    } else if (pipe_fds[1] >= 0) {
        close(pipe_fds[1]);
    }
    helper_send(sock, MSG_FORKED, m->id, pid > 0 ? pid : 0, error);
}

static void helper_go(const spawn_msg *m, waiting_child *waiting)
{
    for (int i = 0; i < SPAWN_MAX_WAITING; i++) {
        if (waiting[i].pid != m->pid)
            continue;
        if (m->value == 1)
            while (write(waiting[i].go_fd, "g", 1) < 0 && errno == EINTR)
                ;
        close(waiting[i].go_fd);    /* (without the byte: it exits) */
        waiting[i].pid = 0;
        return;
    }
}

/* Reap what exited and tell remvirtd. */
static void helper_reap(int sock, waiting_child *waiting)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < SPAWN_MAX_WAITING; i++)
            if (waiting[i].pid == pid) {
                close(waiting[i].go_fd);
                waiting[i].pid = 0;
            }
        helper_send(sock, MSG_EXITED, 0, pid, status);
    }
}

static void helper_main(int sock)
{
    static waiting_child waiting[SPAWN_MAX_WAITING];
    static char blob[SPAWN_MAX_MESSAGE];
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        _exit(1);
    for (;;) {
        struct pollfd p[2] = { { sock, POLLIN, 0 }, { sfd, POLLIN, 0 } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) > 0)
                ;
            helper_reap(sock, waiting);
        }
        if (!p[0].revents)
            continue;
        spawn_msg m;
        int fds[SPAWN_MAX_FDS], nfds;
        bool cut;
        /* (When remvirtd is gone, waiting children die with us.) */
        ssize_t n = rv_qemu_helper_recv(sock, &m, sizeof(m), blob, sizeof(blob), fds,
                                        SPAWN_MAX_FDS, &nfds, &cut);
        if ((size_t)n < sizeof(m) || cut) {
            if (n >= (ssize_t)sizeof(m) && m.kind == MSG_SPAWN)
                helper_send(sock, MSG_FORKED, m.id, 0, E2BIG);
        } else if (m.kind == MSG_SPAWN) {
            helper_spawn(sock, &m, blob, (size_t)n - sizeof(m), fds, nfds, waiting);
        } else if (m.kind == MSG_GO) {
            helper_go(&m, waiting);
        }
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
    }
}

/* ================================================================ remvirtd's side */

static void fail_requests(const char *why)
{
    while (spawner.requests) {
        spawn_request *r = spawner.requests;
        spawner.requests = r->next;
        r->done(r->data, -1, why);
        free(r);
    }
}

/* The helper is gone: its QEMUs are no longer our children. */
static void disown(void *obj, void *ctx)
{
    (void)ctx;
    ((qemu_dom *)obj)->our_child = false;
}

static void helper_lost(void)
{
    RV_WARN("the QEMU spawner helper (pid %d) is gone; a new one starts with the next start",
            (int)spawner.h.pid);
    rv_qemu_helper_stop(&spawner.h);
    rv_dom_list_each(&rv_qemu.doms, disown, NULL);
    fail_requests("the QEMU spawner helper is gone");
    /* Their exits will not be reported: they count as failed. */
    while (spawner.cmds) {
        spawn_cmd *c = spawner.cmds;
        spawner.cmds = c->next;
        c->done(c->data, -1, "the spawner helper is gone");
        free(c);
    }
}

static void on_helper_message(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    spawn_msg m;
    int got = rv_qemu_helper_read(&spawner.h, &m, sizeof(m), NULL);
    if (got < 0)
        helper_lost();
    if (got <= 0)
        return;
    if (m.kind == MSG_EXITED) {
        for (spawn_cmd **p = &spawner.cmds; *p; p = &(*p)->next)
            if ((*p)->pid == m.pid) {
                spawn_cmd *c = *p;
                *p = c->next;
                c->done(c->data, m.value, NULL);
                free(c);
                return;
            }
        rv_qemu_process_exited(m.pid, m.value);
        return;
    }
    if (m.kind != MSG_FORKED)
        return;
    for (spawn_request **p = &spawner.requests; *p; p = &(*p)->next) {
        spawn_request *r = *p;
        if (r->id != m.id)
            continue;
        *p = r->next;
        char why[128];
        if (m.pid <= 0)
            snprintf(why, sizeof(why), "cannot fork: %s", strerror(m.value ? m.value : EIO));
        r->done(r->data, m.pid > 0 ? m.pid : -1, m.pid > 0 ? NULL : why);
        free(r);
        return;
    }
}

/* The helper's pid, or -1 with err set; *fd our end of its socket. */
static pid_t helper_fork(const char *name, void (*main_fn)(int sock), int *fd, rv_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot create a socket pair: %s",
                   strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        prctl(PR_SET_NAME, name);   /* (as ps shows it) */
        /* Only its socket open; remvirtd's signal handlers do not apply. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        /* Descriptors 0-2 taken (by /dev/null if remvirtd had them
         * closed), so that what it receives never lands on them. */
        int sock = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), null;
        while ((null = open("/dev/null", O_RDWR)) >= 0 && null < 3)
            ;
        if (sock < 0 || dup2(sock, 3) < 0)
            _exit(1);
        closefrom(4);
        main_fn(3);
        _exit(0);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot fork: %s", strerror(errno));
        return -1;
    }
    *fd = sv[0];
    return pid;
}

int rv_qemu_helper_start(rv_qemu_helper *h, const char *name, void (*main_fn)(int sock),
                         void (*on_message)(struct ev_loop *loop, ev_io *w, int revents),
                         rv_err *err)
{
    int fd;
    pid_t pid = helper_fork(name, main_fn, &fd, err);
    if (pid < 0)
        return -1;
    h->fd = fd;
    h->pid = pid;
    ev_io_init(&h->watcher, on_message, fd, EV_READ);
    ev_io_start(rv_qemu.loop, &h->watcher);
    RV_DEBUG("helper %s started (pid %d)", name, (int)pid);
    return 0;
}

void rv_qemu_helper_stop(rv_qemu_helper *h)
{
    if (h->fd < 0)
        return;
    ev_io_stop(rv_qemu.loop, &h->watcher);
    close(h->fd);
    h->fd = -1;
    h->pid = 0;
}

ssize_t rv_qemu_helper_recv(int sock, void *head, size_t head_size, char *blob, size_t blob_size,
                            int *fds, int max_fds, int *nfds, bool *cut)
{
    struct iovec iov[2] = { { head, head_size }, { blob, blob_size - 1 } };
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(RV_QEMU_HELPER_MAX_FDS * sizeof(int))];
    } control;
    struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = control.buf,
                          .msg_controllen = CMSG_SPACE((size_t)max_fds * sizeof(int)) };
    ssize_t n;
    while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        _exit(0);       /* remvirtd is gone */
    *nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && *nfds == 0) {
            *nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            if (*nfds > max_fds)
                *nfds = max_fds;    /* (MSG_CTRUNC then: cut) */
            memcpy(fds, CMSG_DATA(c), (size_t)*nfds * sizeof(int));
        }
    *cut = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    if ((size_t)n >= head_size)
        blob[(size_t)n - head_size] = '\0';
    return n;
}

int rv_qemu_helper_read(const rv_qemu_helper *h, void *m, size_t size, const char **why)
{
    ssize_t n = recv(h->fd, m, size, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (why)
        *why = n == 0 ? "end of file" : "a bad answer";
    return n == (ssize_t)size ? 1 : -1;
}

ssize_t rv_qemu_helper_send(const rv_qemu_helper *h, const void *head, size_t head_size,
                            const char *blob, size_t len, const int *fds, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(RV_QEMU_HELPER_MAX_FDS * sizeof(int))];
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec iov[2] = { { (void *)head, head_size }, { (void *)blob, len } };
    struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
    if (nfds > 0) {
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t n;
    while ((n = sendmsg(h->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR)
        ;
    return n;
}

int rv_qemu_spawner_init(rv_err *err)
{
    return spawner.h.fd >= 0 ? 0
           : rv_qemu_helper_start(&spawner.h, "rv-qemu-spawner", helper_main, on_helper_message,
                                  err);
}

int rv_qemu_spawn(char **argv, int log_fd, int incoming_fd, const int *taps, size_t ntaps,
                  rv_qemu_spawned_fn done, void *data, rv_err *err)
{
    int fds[SPAWN_MAX_FDS];
    int nfds = 0;
    fds[nfds++] = log_fd;
    if (incoming_fd >= 0)
        fds[nfds++] = incoming_fd;
    for (size_t i = 0; i < ntaps; i++) {
        if (taps[i] < 0)
            continue;
        if (nfds == SPAWN_MAX_FDS) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: more than %d interfaces with a tap",
                       SPAWN_MAX_TAPS);
            return -1;
        }
        fds[nfds++] = taps[i];
    }
    if (rv_qemu_spawner_init(err) < 0)
        return -1;
    char *blob = malloc(SPAWN_MAX_MESSAGE);
    spawn_request *r = calloc(1, sizeof(*r));
    size_t len = 0;
    for (char **a = argv; blob && *a; a++) {
        size_t n = strlen(*a) + 1;
        if (len + n > SPAWN_MAX_MESSAGE - sizeof(spawn_msg)) {
            free(blob);
            free(r);
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                       "internal error: the QEMU command line is longer than %d bytes",
                       SPAWN_MAX_MESSAGE - (int)sizeof(spawn_msg));
            return -1;
        }
        memcpy(blob + len, *a, n);
        len += n;
    }
    if (!blob || !r) {
        free(blob);
        free(r);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    r->id = ++spawner.next_id;
    r->done = done;
    r->data = data;
    spawn_msg m = { MSG_SPAWN, r->id, 0, incoming_fd >= 0,
                    (uint32_t)(nfds - (incoming_fd >= 0 ? 2 : 1)) };
    ssize_t n = rv_qemu_helper_send(&spawner.h, &m, sizeof(m), blob, len, fds, nfds);
    free(blob);
    if (n < 0) {
        int e = errno;
        free(r);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot ask the QEMU spawner helper: %s", strerror(e));
        if (e != EAGAIN)
            helper_lost();
        return -1;
    }
    r->next = spawner.requests;
    spawner.requests = r;
    return 0;
}

void rv_qemu_spawn_go(pid_t pid, bool run)
{
    if (spawner.h.fd < 0)
        return;     /* the helper died: its waiting child with it */
    spawn_msg m = { MSG_GO, 0, (int32_t)pid, run ? 1 : 0, 0 };
    if (send(spawner.h.fd, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        RV_WARN("cannot tell the QEMU spawner helper about pid %d: %s", (int)pid,
                strerror(errno));
}

static void cmd_spawned(void *data, pid_t pid, const char *why)
{
    spawn_cmd *c = data;
    if (pid < 0) {
        c->done(c->data, -1, why);
        free(c);
        return;
    }
    c->pid = pid;
    c->next = spawner.cmds;
    spawner.cmds = c;
    rv_qemu_spawn_go(pid, true);
}

int rv_qemu_run(char **argv, int out_fd, int fd3, int fd4, rv_qemu_cmd_done_fn done, void *data,
                rv_err *err)
{
    spawn_cmd *c = calloc(1, sizeof(*c));
    if (!c) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    c->done = done;
    c->data = data;
    if (rv_qemu_spawn(argv, out_fd, fd3, &fd4, fd4 >= 0 ? 1 : 0, cmd_spawned, c, err) < 0) {
        free(c);
        return -1;
    }
    return 0;
}

char *rv_qemu_find_program(const char *name)
{
    const char *path = getenv("PATH");
    char *found = NULL;
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len && asprintf(&found, "%.*s/%s", (int)len, path, name) >= 0) {
            if (access(found, X_OK) == 0)
                return found;
            free(found);
        }
        path += len + (path[len] == ':');
    }
    /* (Debian's sbin directories, missing from a user's PATH.) */
    static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (asprintf(&found, "%s/%s", dirs[i], name) < 0)
            return NULL;
        if (access(found, X_OK) == 0)
            return found;
        free(found);
    }
    return NULL;
}

void rv_qemu_spawner_cleanup(void)
{
    rv_qemu_helper_stop(&spawner.h);
    while (spawner.requests) {
        spawn_request *r = spawner.requests;
        spawner.requests = r->next;
        free(r);
    }
    while (spawner.cmds) {
        spawn_cmd *c = spawner.cmds;
        spawner.cmds = c->next;
        free(c);
    }
}
