/* SSH transport over libssh2.
 *
 * Setup (connect, handshake, host key, authentication, exec) runs with the
 * session in blocking mode.  After it the session is non-blocking and every
 * libssh2 call happens under one mutex, since a session is not thread-safe
 * and the client reads in one thread while another writes.
 *
 * libssh2 itself is shaped for one thread, in two ways that matter here:
 *  - a write that meets a full socket leaves a packet half sent, and any
 *    other call that sends (the reader's window adjustments) would then
 *    finish that packet in its own name, losing its packet and later
 *    sending the data twice;
 *  - every channel write first reads whatever has arrived, so a writer
 *    would queue the reader's data inside libssh2 without the fd staying
 *    readable, and a reader asleep in poll would never see it.
 * So the transport owns the socket I/O (send_cb/recv_cb): libssh2's sends
 * always complete into an output buffer that the transport flushes, and the
 * writer's calls never receive.  Only reads (and close, peer_error) take
 * input from the socket. */
#include "transport/ssh.h"
#include "transport/ssh_priv.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <libssh2.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "transport/tcp.h"

RV_LOG_CATEGORY("transport.ssh");

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;

static void init_libssh2(void)
{
    init_status = libssh2_init(0);
}

const char *rv_ssh_session_error(LIBSSH2_SESSION *session)
{
    char *msg = NULL;
    if (!session || libssh2_session_last_error(session, &msg, NULL, 0) == 0 || !msg || !*msg)
        return "unknown libssh2 error";
    return msg;
}

int rv_ssh_no_memory(rv_err *err)
{
    rv_err_set(err, RV_FROM_SSH, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

/* ---------------------------------------------------------------- socket I/O for libssh2 */

static void flush_out(ssh_transport *t)
{
    while (t->out_head < t->out_len && !t->sock_errno) {
        ssize_t n = send(t->base.fd, t->out + t->out_head, t->out_len - t->out_head,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            t->out_head += (size_t)n;
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        else
            t->sock_errno = n < 0 ? errno : EPIPE;
    }
    if (t->out_head == t->out_len)
        t->out_head = t->out_len = 0;
}

static size_t out_pending(const ssh_transport *t)
{
    return t->out_len - t->out_head;
}

/* libssh2's send: the packet is always taken whole (straight to the
 * socket where it has room, the rest into out), so libssh2 never holds a
 * half-sent packet. */
static ssize_t send_cb(libssh2_socket_t fd, const void *buf, size_t len, int flags,
                       void **abstract)
{
    (void)fd;
    (void)flags;
    ssh_transport *t = *abstract;
    if (t->dead)
        return -EPIPE;
    if (t->sock_errno)
        return -t->sock_errno;
    const char *p = buf;
    size_t left = len;
    if (out_pending(t) == 0) {
        while (left > 0) {
            ssize_t n = send(t->base.fd, p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                p += n;
                left -= (size_t)n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                break;
            } else {
                t->sock_errno = n < 0 ? errno : EPIPE;
                return -t->sock_errno;
            }
        }
    }
    if (left == 0)
        return (ssize_t)len;
    if (t->out_head > 0) {
        memmove(t->out, t->out + t->out_head, out_pending(t));
        t->out_len -= t->out_head;
        t->out_head = 0;
    }
    if (t->out_len + left > t->out_cap) {
        size_t cap = t->out_cap ? t->out_cap : 16384;
        while (cap < t->out_len + left)
            cap *= 2;
        char *grown = realloc(t->out, cap);
        if (!grown)
            return -ENOMEM;
        t->out = grown;
        t->out_cap = cap;
    }
    memcpy(t->out + t->out_len, p, left);
    t->out_len += left;
    return (ssize_t)len;
}

static ssize_t recv_cb(libssh2_socket_t fd, void *buf, size_t len, int flags, void **abstract)
{
    ssh_transport *t = *abstract;
    if (t->dead)
        return -ECONNRESET;
    if (t->recv_blocked)
        return -EAGAIN;
    ssize_t n;
    while ((n = recv(fd, buf, len, flags)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -errno : n;
}

/* A failed libssh2 call as errno, for read(2)-like callers. */
static int io_errno(ssh_transport *t, int rc)
{
    if (t->sock_errno)
        return t->sock_errno;
    switch (rc) {
    case LIBSSH2_ERROR_CHANNEL_CLOSED:
    case LIBSSH2_ERROR_CHANNEL_EOF_SENT:
        return EPIPE;
    case LIBSSH2_ERROR_SOCKET_RECV:
    case LIBSSH2_ERROR_SOCKET_SEND:
    case LIBSSH2_ERROR_SOCKET_DISCONNECT:
        return ECONNRESET;
    case LIBSSH2_ERROR_ALLOC:
        return ENOMEM;
    default:
        return EIO;
    }
}

/* ---------------------------------------------------------------- the channel's stderr */

/* Take what the remote command wrote to stderr; keep the first
 * STDERR_KEEP bytes for peer_error and drop the rest, so a chatty command
 * cannot make libssh2 queue without end. */
static void drain_stderr(ssh_transport *t)
{
    char buf[1024];
    for (;;) {
        ssize_t n = libssh2_channel_read_stderr(t->channel, buf, sizeof(buf));
        if (n <= 0)
            return;
        size_t keep = sizeof(t->err_text) - t->err_len;
        if ((size_t)n < keep)
            keep = (size_t)n;
        else
            t->err_cut = 1;
        memcpy(t->err_text + t->err_len, buf, keep);
        t->err_len += keep;
    }
}

/* ---------------------------------------------------------------- the transport ops */

static ssize_t ssh_read(rv_transport *tr, void *buf, size_t len)
{
    ssh_transport *t = (ssh_transport *)tr;
    if (len == 0)
        return 0;
    if (len > READ_MAX)
        len = READ_MAX;
    pthread_mutex_lock(&t->lock);
    flush_out(t);
    ssize_t n = libssh2_channel_read(t->channel, buf, len);
    /* Without receiving again: the read above took what had arrived. */
    t->recv_blocked = 1;
    drain_stderr(t);
    t->recv_blocked = 0;
    flush_out(t);
    int saved = 0;
    if (n == LIBSSH2_ERROR_EAGAIN) {
        saved = t->sock_errno ? t->sock_errno : EAGAIN;
    } else if (n < 0) {
        saved = io_errno(t, (int)n);
        RV_DEBUG("channel read failed: %s", rv_ssh_session_error(t->session));
    }
    pthread_mutex_unlock(&t->lock);
    if (saved) {
        errno = saved;
        return -1;
    }
    return n;
}

static ssize_t ssh_write(rv_transport *tr, const void *buf, size_t len)
{
    ssh_transport *t = (ssh_transport *)tr;
    pthread_mutex_lock(&t->lock);
    flush_out(t);
    ssize_t result = -1;
    int saved = EAGAIN;
    if (t->sock_errno) {
        saved = t->sock_errno;
    } else if (t->staged > 0) {
        /* The retry of a write whose packet was still going out. */
        if (out_pending(t) == 0) {
            result = (ssize_t)t->staged;
            t->staged = 0;
        }
    } else if (out_pending(t) == 0 && len > 0) {
        t->recv_blocked = 1;
        ssize_t n = libssh2_channel_write(t->channel, buf, len);
        t->recv_blocked = 0;
        if (n > 0) {
            flush_out(t);
            if (out_pending(t) == 0)
                result = n;
            else
                t->staged = (size_t)n;
        } else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
            saved = io_errno(t, (int)n);
            RV_DEBUG("channel write failed: %s", rv_ssh_session_error(t->session));
        }
        /* 0 or EAGAIN: no window from the server yet (or a key exchange
         * that needs its answer); the reader's reads bring it. */
    } else if (len == 0) {
        result = 0;
    }
    pthread_mutex_unlock(&t->lock);
    if (result < 0)
        errno = saved;
    return result;
}

static size_t ssh_pending(rv_transport *tr)
{
    ssh_transport *t = (ssh_transport *)tr;
    pthread_mutex_lock(&t->lock);
    /* Data queued inside libssh2, or an EOF behind it: either way a read
     * returns at once although the fd may not be readable. */
    int ready = libssh2_poll_channel_read(t->channel, 0) > 0 ||
                libssh2_channel_eof(t->channel) == 1;
    pthread_mutex_unlock(&t->lock);
    return ready ? 1 : 0;
}

static short ssh_wait_events(rv_transport *tr, short op)
{
    ssh_transport *t = (ssh_transport *)tr;
    pthread_mutex_lock(&t->lock);
    short ev = 0;
    if (out_pending(t) > 0)
        ev |= POLLOUT;          /* our own bytes must go before anything else */
    if (op & POLLIN) {
        ev |= POLLIN;
    } else if (out_pending(t) == 0) {
        int dirs = libssh2_session_block_directions(t->session);
        /* A write blocked by the server's window waits for its window
         * adjustment; with the window already open again, go on. */
        if ((dirs & LIBSSH2_SESSION_BLOCK_INBOUND) && libssh2_channel_window_write(t->channel) == 0)
            ev |= POLLIN;
        if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND)
            ev |= POLLOUT;
    }
    pthread_mutex_unlock(&t->lock);
    return ev ? ev : op;
}

/* Wait for the fd (unlocked), at most until deadline_ms (monotonic).
 * Returns 0 when time is up. */
static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int wait_socket(ssh_transport *t, short events, long long deadline_ms)
{
    long long left = deadline_ms - now_ms();
    if (left <= 0)
        return 0;
    struct pollfd pfd = { .fd = t->base.fd, .events = events };
    pthread_mutex_unlock(&t->lock);
    int rc = poll(&pfd, 1, (int)left);
    pthread_mutex_lock(&t->lock);
    return rc < 0 && errno == EINTR ? 1 : rc;
}

/* Printable, one line: the stderr text may hold anything. */
static void clean_text(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        unsigned char c = (unsigned char)*r;
        if (c == '\n') {
            if (w > s && r[1])
                *w++ = ';', *w++ = ' ';
        } else if (c == '\r') {
            continue;
        } else {
            *w++ = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
        }
    }
    while (w > s && (w[-1] == ' ' || w[-1] == ';'))
        w--;
    *w = '\0';
}

static const char *ssh_peer_error(rv_transport *tr)
{
    ssh_transport *t = (ssh_transport *)tr;
    pthread_mutex_lock(&t->lock);
    if (t->peer_text) {
        pthread_mutex_unlock(&t->lock);
        return t->peer_text;
    }
    /* The server sends the rest of stderr, the exit status and the close
     * right after the EOF; wait for them a little. */
    int closed = 0;
    long long deadline = now_ms() + PEER_ERROR_WAIT_MS;
    for (;;) {
        drain_stderr(t);
        if (libssh2_channel_eof(t->channel) != 1)
            break;
        int rc = libssh2_channel_wait_closed(t->channel);
        flush_out(t);
        if (rc == 0) {
            drain_stderr(t);
            closed = 1;
            break;
        }
        if (rc != LIBSSH2_ERROR_EAGAIN || wait_socket(t, POLLIN, deadline) <= 0)
            break;
    }
    char *said = NULL;
    if (t->err_len > 0) {
        said = strndup(t->err_text, t->err_len);
        if (said) {
            /* One line, then no C1 control or stray byte either: rvsh
             * shows this on a terminal. */
            clean_text(said);
            char *safe = rv_escape_text_dup(said, strlen(said), 0);
            free(said);
            said = safe;
        }
    }
    char *exit_text = NULL;
    char *signal_name = NULL;
    if (closed && libssh2_channel_get_exit_signal(t->channel, &signal_name, NULL, NULL, NULL,
                                                  NULL, NULL) == 0 && signal_name) {
        char *safe = rv_escape_text_dup(signal_name, strlen(signal_name), 0);
        if (!safe || asprintf(&exit_text, "the remote command was killed by signal %s", safe) < 0)
            exit_text = NULL;
        free(safe);
    } else if (closed) {
        if (asprintf(&exit_text, "the remote command exited with status %d",
                     libssh2_channel_get_exit_status(t->channel)) < 0)
            exit_text = NULL;
    }
    /* libssh2 allocated the name with the session's allocator: malloc. */
    free(signal_name);
    const char *cut = t->err_cut ? " ..." : "";
    if (said && *said && exit_text) {
        if (asprintf(&t->peer_text, "%s%s (%s)", said, cut, exit_text) < 0)
            t->peer_text = NULL;
    } else if (said && *said) {
        if (asprintf(&t->peer_text, "%s%s", said, cut) < 0)
            t->peer_text = NULL;
    } else if (exit_text) {
        t->peer_text = exit_text;
        exit_text = NULL;
    }
    free(said);
    free(exit_text);
    const char *result = t->peer_text;
    pthread_mutex_unlock(&t->lock);
    return result;
}

/* Close politely but never for long: EOF and close for the channel, a
 * disconnect for the session, as far as the socket takes them within
 * CLOSE_WAIT_MS; then libssh2 frees everything with the socket declared
 * dead, so that nothing it does can wait. */
static void release(ssh_transport *t)
{
    if (t->session) {
        long long deadline = now_ms() + CLOSE_WAIT_MS;
        if (t->channel && !t->sock_errno) {
            /* Sends EOF and CLOSE; not waiting for the server's CLOSE: a
             * remote `nc` may never exit on its own. */
            libssh2_channel_close(t->channel);
        }
        if (!t->sock_errno)
            libssh2_session_disconnect(t->session, "closed by the client");
        while (out_pending(t) > 0 && !t->sock_errno && wait_socket(t, POLLOUT, deadline) > 0)
            flush_out(t);
        t->dead = 1;
        if (t->channel)
            libssh2_channel_free(t->channel);
        libssh2_session_free(t->session);
    }
    if (t->base.fd >= 0)
        close(t->base.fd);
    free(t->out);
    free(t->peer_text);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static void ssh_close(rv_transport *tr)
{
    RV_DEBUG("closing the SSH connection on fd %d", tr->fd);
    release((ssh_transport *)tr);
}

static const rv_transport_ops ssh_ops = {
    .name = "ssh",
    .read = ssh_read,
    .write = ssh_write,
    .pending = ssh_pending,
    .wait_events = ssh_wait_events,
    .peer_error = ssh_peer_error,
    .close = ssh_close,
};

/* ---------------------------------------------------------------- options */

static char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return strdup(h);
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found && found->pw_dir)
        return strdup(found->pw_dir);
    return NULL;
}

static char *local_user(void)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found && found->pw_name)
        return strdup(found->pw_name);
    const char *u = getenv("USER");
    return u && *u ? strdup(u) : NULL;
}

static int parse_methods(ssh_setup *s, const char *list, rv_err *err)
{
    if (!list) {
        s->methods[0] = AUTH_AGENT;
        s->methods[1] = AUTH_PRIVKEY;
        s->methods[2] = AUTH_PASSWORD;
        s->n_methods = 3;
        return 0;
    }
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (size_t i = 0; i < sizeof(rv_ssh_auth_names) / sizeof(rv_ssh_auth_names[0]); i++)
            if (strlen(rv_ssh_auth_names[i]) == len && strncmp(p, rv_ssh_auth_names[i], len) == 0)
                found = (int)i;
        if (found < 0) {
            rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG,
                       "unknown sshauth method '%.*s' (expected agent, privkey, password or "
                       "keyboard-interactive)", (int)len, p);
            return -1;
        }
        if (s->n_methods == AUTH_LIST_MAX) {
            rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG,
                       "sshauth '%s' names more than %d methods", list, AUTH_LIST_MAX);
            return -1;
        }
        s->methods[s->n_methods++] = (auth_method)found;
        p += len;
        if (*p == ',')
            p++;
    }
    if (s->n_methods == 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG, "sshauth names no method");
        return -1;
    }
    return 0;
}

static int fill_setup(ssh_setup *s, const rv_ssh_options *o, rv_err *err)
{
    s->opts = o;
    if (!o->host || !*o->host) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG, "no host to connect to over SSH");
        return -1;
    }
    if (!o->command || !*o->command) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG, "no command to run on '%s'", o->host);
        return -1;
    }
    if (o->port < 0 || o->port > 65535) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG, "invalid SSH port %d", o->port);
        return -1;
    }
    s->host = o->host;
    s->port = o->port ? o->port : SSH_DEFAULT_PORT;
    const char *v = o->known_hosts_verify;
    if (!v || strcmp(v, "normal") == 0) {
        s->verify = VERIFY_NORMAL;
    } else if (strcmp(v, "auto") == 0) {
        s->verify = VERIFY_AUTO;
    } else if (strcmp(v, "ignore") == 0) {
        s->verify = VERIFY_IGNORE;
    } else {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG,
                   "unknown known_hosts_verify '%s' (expected normal, auto or ignore)", v);
        return -1;
    }
    if (parse_methods(s, o->sshauth, err) < 0)
        return -1;
    s->home = home_dir();
    s->user = o->user && *o->user ? strdup(o->user) : local_user();
    if (!s->user) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG,
                   "no user name for SSH: put one in the URI (user@host)");
        return -1;
    }
    if (o->known_hosts && *o->known_hosts) {
        s->known_hosts = strdup(o->known_hosts);
    } else if (s->home) {
        /* Read even with known_hosts_verify=ignore, for its @revoked keys. */
        if (asprintf(&s->known_hosts, "%s/.ssh/known_hosts", s->home) < 0)
            s->known_hosts = NULL;
    } else if (s->verify != VERIFY_IGNORE) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_INVALID_ARG,
                   "no home directory for ~/.ssh/known_hosts: give known_hosts=");
        return -1;
    }
    if (s->verify != VERIFY_IGNORE && !s->known_hosts)
        return rv_ssh_no_memory(err);
    /* OpenSSH's spelling: the bare name for port 22, [name]:port else. */
    int rc = s->port == SSH_DEFAULT_PORT ? asprintf(&s->host_name, "%s", s->host)
                                         : asprintf(&s->host_name, "[%s]:%d", s->host, s->port);
    if (rc < 0) {
        s->host_name = NULL;
        return rv_ssh_no_memory(err);
    }
    return 0;
}

static void free_setup(ssh_setup *s)
{
    free(s->user);
    free(s->home);
    free(s->known_hosts);
    free(s->host_name);
    free(s->server_methods);
    free(s->tried);
}

/* ---------------------------------------------------------------- connect */

static int start_command(ssh_transport *t, const ssh_setup *s, rv_err *err)
{
    t->channel = libssh2_channel_open_session(t->session);
    if (!t->channel) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot open an SSH session channel to '%s': %s",
                   s->host_name, rv_ssh_session_error(t->session));
        return -1;
    }
    if (libssh2_channel_exec(t->channel, s->opts->command) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' refused to run '%s': %s", s->host_name,
                   s->opts->command, rv_ssh_session_error(t->session));
        return -1;
    }
    return 0;
}

rv_transport *rv_ssh_connect(const rv_ssh_options *opts, rv_err *err)
{
    pthread_once(&init_once, init_libssh2);
    if (init_status != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot initialise libssh2 (error %d)",
                   init_status);
        return NULL;
    }
    ssh_setup s = { 0 };
    ssh_transport *t = NULL;
    if (fill_setup(&s, opts, err) < 0)
        goto fail;
    t = calloc(1, sizeof(*t));
    if (!t) {
        rv_ssh_no_memory(err);
        goto fail;
    }
    t->base.ops = &ssh_ops;
    t->base.fd = -1;
    pthread_mutex_init(&t->lock, NULL);
    t->setup = &s;

    char port[16];
    snprintf(port, sizeof(port), "%d", s.port);
    t->base.fd = rv_tcp_connect(s.host, port, err);
    if (t->base.fd < 0)
        goto fail;
    t->session = libssh2_session_init_ex(NULL, NULL, NULL, t);
    if (!t->session) {
        rv_ssh_no_memory(err);
        goto fail;
    }
    libssh2_session_set_blocking(t->session, 1);
    libssh2_session_set_timeout(t->session, SETUP_TIMEOUT_MS);
    if (libssh2_session_handshake(t->session, t->base.fd) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "SSH handshake with '%s' failed: %s",
                   s.host_name, rv_ssh_session_error(t->session));
        goto fail;
    }
    if (rv_ssh_check_host_key(t->session, &s, err) < 0 || rv_ssh_authenticate(t, &s, err) < 0 ||
        start_command(t, &s, err) < 0)
        goto fail;
    RV_DEBUG("running '%s' on '%s' as '%s'", opts->command, s.host_name, s.user);

    /* From here on the transport does the socket I/O (see the top). */
    libssh2_session_set_timeout(t->session, 0);
    libssh2_session_set_blocking(t->session, 0);
    libssh2_session_callback_set(t->session, LIBSSH2_CALLBACK_SEND, (void *)send_cb);
    libssh2_session_callback_set(t->session, LIBSSH2_CALLBACK_RECV, (void *)recv_cb);
    t->setup = NULL;
    free_setup(&s);
    return &t->base;

fail:
    if (t) {
        t->setup = NULL;
        if (t->session) {
            /* Still blocking, with the setup timeout: bounded. */
            libssh2_session_set_timeout(t->session, CLOSE_WAIT_MS);
            if (t->channel)
                libssh2_channel_free(t->channel);
            libssh2_session_disconnect(t->session, "connection abandoned by the client");
            libssh2_session_free(t->session);
        }
        if (t->base.fd >= 0)
            close(t->base.fd);
        pthread_mutex_destroy(&t->lock);
        free(t);
    }
    free_setup(&s);
    return NULL;
}
