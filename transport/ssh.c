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

#define SSH_DEFAULT_PORT 22
/* Blocking libssh2 calls during setup give up after this long without
 * progress from the server. */
#define SETUP_TIMEOUT_MS 30000
/* close() and peer_error() wait at most this long for the server. */
#define CLOSE_WAIT_MS 2000
#define PEER_ERROR_WAIT_MS 1000
/* How much of the remote command's stderr is kept for peer_error. */
#define STDERR_KEEP 4096
/* One read takes at most this much: libssh2 widens the window it offers
 * the server by the size asked for, and the window bounds what it queues. */
#define READ_MAX (64 * 1024)
#define PROMPT_TRIES 3
#define PROMPT_MAX 1024
#define KNOWN_HOSTS_LINE_MAX (64 * 1024)
#define AUTH_LIST_MAX 8

typedef enum { VERIFY_NORMAL, VERIFY_AUTO, VERIFY_IGNORE } verify_mode;
typedef enum { AUTH_AGENT, AUTH_PRIVKEY, AUTH_PASSWORD, AUTH_KBDINT } auth_method;

static const char *const auth_names[] = {
    [AUTH_AGENT] = "agent",
    [AUTH_PRIVKEY] = "privkey",
    [AUTH_PASSWORD] = "password",
    [AUTH_KBDINT] = "keyboard-interactive",
};

/* What setup works from, with the defaults filled in. */
typedef struct ssh_setup {
    const rv_ssh_options *opts;
    const char *host;
    int port;
    char *user;
    char *home;
    char *known_hosts;
    char *host_name;            /* as known_hosts spells it: host or [host]:port */
    verify_mode verify;
    auth_method methods[AUTH_LIST_MAX];
    int n_methods;
    char *server_methods;       /* what the server accepts, comma list */
    char *tried;                /* what authentication tried, for the error */
    size_t tried_len;
    int kbdint_unanswered;      /* keyboard-interactive had no terminal */
} ssh_setup;

typedef struct ssh_transport {
    rv_transport base;
    pthread_mutex_t lock;       /* every libssh2 call and the fields below */
    LIBSSH2_SESSION *session;
    LIBSSH2_CHANNEL *channel;
    ssh_setup *setup;           /* during setup only (prompt callbacks) */

    /* Encrypted bytes libssh2 handed to send_cb that the socket has not
     * taken yet: out[out_head, out_len). */
    char *out;
    size_t out_head, out_len, out_cap;
    int sock_errno;             /* the socket failed; every call reports it */
    /* Bytes of the caller's last write that are packed in out but not yet
     * all on the wire: the retry of that write reports them. */
    size_t staged;
    int recv_blocked;           /* a write is in libssh2: never receive */
    int dead;                   /* closing: the socket calls fail at once */

    char err_text[STDERR_KEEP]; /* the remote command's stderr, first part */
    size_t err_len;
    int err_cut;
    char *peer_text;            /* peer_error's answer, made once */
} ssh_transport;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;

static void init_libssh2(void)
{
    init_status = libssh2_init(0);
}

static const char *session_error(LIBSSH2_SESSION *session)
{
    char *msg = NULL;
    if (!session || libssh2_session_last_error(session, &msg, NULL, 0) == 0 || !msg || !*msg)
        return "unknown libssh2 error";
    return msg;
}

static int no_memory(rv_err *err)
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
        RV_DEBUG("channel read failed: %s", session_error(t->session));
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
            RV_DEBUG("channel write failed: %s", session_error(t->session));
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
        for (size_t i = 0; i < sizeof(auth_names) / sizeof(auth_names[0]); i++)
            if (strlen(auth_names[i]) == len && strncmp(p, auth_names[i], len) == 0)
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
        return no_memory(err);
    /* OpenSSH's spelling: the bare name for port 22, [name]:port else. */
    int rc = s->port == SSH_DEFAULT_PORT ? asprintf(&s->host_name, "%s", s->host)
                                         : asprintf(&s->host_name, "[%s]:%d", s->host, s->port);
    if (rc < 0) {
        s->host_name = NULL;
        return no_memory(err);
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

/* ---------------------------------------------------------------- host key */

static void base64_encode(const unsigned char *in, size_t len, char *out, size_t out_size)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < out_size; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = digits[(v >> 18) & 63];
        out[o++] = digits[(v >> 12) & 63];
        if (i + 1 < len)
            out[o++] = digits[(v >> 6) & 63];
        if (i + 2 < len)
            out[o++] = digits[v & 63];
    }
    out[o] = '\0';
}

typedef struct host_key {
    const char *blob;
    size_t len;
    int kh_type;                /* LIBSSH2_KNOWNHOST_KEY_* */
    const char *type_name;
    char fingerprint[64];       /* SHA256:base64, as ssh-keygen -l shows */
} host_key;

static int get_host_key(LIBSSH2_SESSION *session, host_key *k, const char *host, rv_err *err)
{
    int type = 0;
    k->blob = libssh2_session_hostkey(session, &k->len, &type);
    if (!k->blob) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' sent no host key: %s", host,
                   session_error(session));
        return -1;
    }
    switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_SSHRSA, k->type_name = "RSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_DSS:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_SSHDSS, k->type_name = "DSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_256, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_384, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_521, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ED25519:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ED25519, k->type_name = "ED25519";
        break;
    default:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' sent a host key of unknown type %d",
                   host, type);
        return -1;
    }
    const char *hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256);
    strcpy(k->fingerprint, "SHA256:");
    if (hash)
        base64_encode((const unsigned char *)hash, 32, k->fingerprint + 7,
                      sizeof(k->fingerprint) - 7);
    else
        strcpy(k->fingerprint + 7, "?");
    return 0;
}

/* Glob of OpenSSH host patterns: '*' and '?' only ('[' is literal, as in
 * "[host]:port"), letters in either case. */
static int glob_host(const char *pat, size_t plen, const char *name)
{
    const char *star = NULL, *resume = NULL;
    size_t i = 0;
    while (*name) {
        if (i < plen && (pat[i] == '?' ||
                         tolower((unsigned char)pat[i]) == tolower((unsigned char)*name))) {
            i++, name++;
        } else if (i < plen && pat[i] == '*') {
            star = pat + i++;
            resume = name;
        } else if (star) {
            i = (size_t)(star - pat) + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (i < plen && pat[i] == '*')
        i++;
    return i == plen;
}

static int base64_decode(const char *text, size_t len, gnutls_datum_t *out)
{
    gnutls_datum_t in = { (unsigned char *)text, (unsigned)len };
    return len && len < KNOWN_HOSTS_LINE_MAX && gnutls_base64_decode2(&in, out) == 0 ? 0 : -1;
}

/* Whether the host field of a known_hosts line names host: a hashed
 * entry (|1|salt|HMAC-SHA1 of the name), or a comma list of patterns
 * where one negated pattern that matches excludes the host. */
static int hosts_field_matches(const char *field, size_t len, const char *host)
{
    if (len > 3 && strncmp(field, "|1|", 3) == 0) {
        const char *bar = memchr(field + 3, '|', len - 3);
        gnutls_datum_t salt = { NULL, 0 }, hash = { NULL, 0 };
        unsigned char mac[20];
        int match = bar && base64_decode(field + 3, (size_t)(bar - field - 3), &salt) == 0 &&
                    base64_decode(bar + 1, len - (size_t)(bar + 1 - field), &hash) == 0 &&
                    hash.size == sizeof(mac) &&
                    gnutls_hmac_fast(GNUTLS_MAC_SHA1, salt.data, salt.size, host, strlen(host),
                                     mac) == 0 &&
                    memcmp(mac, hash.data, sizeof(mac)) == 0;
        gnutls_free(salt.data);
        gnutls_free(hash.data);
        return match;
    }
    int match = 0;
    for (size_t i = 0; i < len;) {
        size_t n = 0;
        while (i + n < len && field[i + n] != ',')
            n++;
        int negated = n > 0 && field[i] == '!';
        if (glob_host(field + i + negated, n - (size_t)negated, host)) {
            if (negated)
                return 0;
            match = 1;
        }
        i += n + 1;
    }
    return match;
}

/* What the lines libssh2 does not read said about this host. */
typedef struct kh_markers {
    unsigned revoked_line;      /* a @revoked line with the host's key */
    unsigned ca_line;           /* a @cert-authority line for the host */
} kh_markers;

/* "@revoked HOSTS TYPE BASE64 [comment]" and "@cert-authority ...":
 * libssh2 cannot parse these, so they are read here.  A revoked key is
 * refused whatever the mode; CA lines are noted, since remvirt does not
 * check host certificates. */
static void read_marker(const char *line, unsigned lineno, const char *path, const char *host,
                        const host_key *k, kh_markers *m)
{
    const char *f[4];
    size_t flen[4];
    const char *p = line;
    int nf = 0;
    for (; nf < 4; nf++) {
        p += strspn(p, " \t");
        if (!*p || *p == '\n' || *p == '\r')
            break;
        f[nf] = p;
        flen[nf] = strcspn(p, " \t\r\n");
        p += flen[nf];
    }
    int revoked = flen[0] == 8 && strncmp(f[0], "@revoked", 8) == 0;
    int ca = flen[0] == 15 && strncmp(f[0], "@cert-authority", 15) == 0;
    if (!revoked && !ca) {
        RV_DEBUG("%s:%u: skipped a line with the unknown marker %.*s", path, lineno,
                 (int)flen[0], f[0]);
        return;
    }
    if (nf < 4) {
        RV_DEBUG("%s:%u: skipped a %.*s line without a key", path, lineno, (int)flen[0], f[0]);
        return;
    }
    if (!hosts_field_matches(f[1], flen[1], host))
        return;
    if (ca) {
        if (!m->ca_line)
            m->ca_line = lineno;
        RV_DEBUG("%s:%u: @cert-authority lines are not supported (host certificates are "
                 "not checked)", path, lineno);
        return;
    }
    gnutls_datum_t blob = { NULL, 0 };
    if (base64_decode(f[3], flen[3], &blob) < 0) {
        RV_DEBUG("%s:%u: skipped a @revoked line whose key is not base64", path, lineno);
        return;
    }
    if (k && blob.size == k->len && memcmp(blob.data, k->blob, k->len) == 0 && !m->revoked_line)
        m->revoked_line = lineno;
    gnutls_free(blob.data);
}

/* Load the file line by line into kh (when given); lines with a marker
 * are read here, and what libssh2 cannot parse (key types it lacks) is
 * skipped, as OpenSSH skips what does not concern it.  A file that does
 * not exist is empty. */
static int read_known_hosts(LIBSSH2_KNOWNHOSTS *kh, const char *path, const char *host,
                            const host_key *k, kh_markers *m, rv_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        rv_err_set_errno(err, RV_FROM_SSH, errno, "cannot read the known hosts file %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > KNOWN_HOSTS_LINE_MAX) {
            RV_DEBUG("%s:%u: skipped a line of %zd bytes", path, lineno, len);
            continue;
        }
        const char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (*p == '@')
            read_marker(p, lineno, path, host, k, m);
        else if (kh && libssh2_knownhost_readline(kh, line, (size_t)len,
                                                  LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
            RV_DEBUG("%s:%u: skipped a line libssh2 cannot parse", path, lineno);
    }
    int failed = ferror(f);
    free(line);
    fclose(f);
    if (failed) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SYSTEM_ERROR, "cannot read the known hosts file %s",
                   path);
        return -1;
    }
    return 0;
}

/* Append the host's key to the file (never rewrite it: lines libssh2 did
 * not parse stay as they are). */
static int add_known_host(LIBSSH2_KNOWNHOSTS *kh, const ssh_setup *s, const host_key *k,
                          rv_err *err)
{
    struct libssh2_knownhost *node = NULL;
    if (libssh2_knownhost_addc(kh, s->host_name, NULL, k->blob, k->len, NULL, 0,
                               LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
                               k->kh_type, &node) != 0 || !node) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot add the host key of '%s': %s",
                   s->host_name, "libssh2 refused it");
        return -1;
    }
    char line[8192];
    size_t len = 0;
    if (libssh2_knownhost_writeline(kh, node, line, sizeof(line), &len,
                                    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot format the host key of '%s'",
                   s->host_name);
        return -1;
    }
    /* ~/.ssh may not exist yet, as for ssh itself on first use. */
    char *dir = strdup(s->known_hosts);
    if (!dir)
        return no_memory(err);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            RV_DEBUG("cannot create %s: %s", dir, strerror(errno));
    }
    free(dir);
    int fd = open(s->known_hosts, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_SSH, errno, "cannot add the host key of '%s' to %s",
                         s->host_name, s->known_hosts);
        return -1;
    }
    /* A last line without its newline would swallow ours. */
    struct stat st;
    int need_newline = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        char last = '\n';
        int rfd = open(s->known_hosts, O_RDONLY | O_CLOEXEC);
        if (rfd >= 0) {
            if (pread(rfd, &last, 1, st.st_size - 1) == 1 && last != '\n')
                need_newline = 1;
            close(rfd);
        }
    }
    int ok = (!need_newline || write(fd, "\n", 1) == 1) &&
             write(fd, line, len) == (ssize_t)len;
    int saved = errno;
    if (close(fd) < 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        rv_err_set_errno(err, RV_FROM_SSH, saved, "cannot add the host key of '%s' to %s",
                         s->host_name, s->known_hosts);
        return -1;
    }
    RV_INFO("added the %s key %s of '%s' to %s", k->type_name, k->fingerprint, s->host_name,
            s->known_hosts);
    return 0;
}

static int refuse_revoked(const ssh_setup *s, const host_key *k, unsigned line, rv_err *err)
{
    rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
               "host key verification failed: the %s key %s of '%s' was revoked "
               "(@revoked in %s, line %u)", k->type_name, k->fingerprint, s->host_name,
               s->known_hosts, line);
    return -1;
}

static int check_host_key(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    host_key k;
    kh_markers marks = { 0, 0 };
    if (s->verify == VERIFY_IGNORE) {
        /* Even unchecked, a key the user revoked is never accepted; but
         * what stops only the check (an unreadable file, a key type this
         * code does not name) does not stop the connection. */
        rv_err quiet = { 0 };
        if (s->known_hosts && get_host_key(session, &k, s->host_name, &quiet) == 0 &&
            read_known_hosts(NULL, s->known_hosts, s->host_name, &k, &marks, &quiet) == 0 &&
            marks.revoked_line) {
            rv_err_clear(&quiet);
            return refuse_revoked(s, &k, marks.revoked_line, err);
        }
        if (quiet.message)
            RV_DEBUG("no @revoked check: %s", quiet.message);
        rv_err_clear(&quiet);
        RV_DEBUG("not checking the host key of '%s' (known_hosts_verify=ignore)", s->host_name);
        return 0;
    }
    if (get_host_key(session, &k, s->host_name, err) < 0)
        return -1;
    LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(session);
    if (!kh)
        return no_memory(err);
    int result = -1;
    if (read_known_hosts(kh, s->known_hosts, s->host_name, &k, &marks, err) < 0)
        goto out;
    if (marks.revoked_line) {
        refuse_revoked(s, &k, marks.revoked_line, err);
        goto out;
    }
    char ca_note[160] = "";
    if (marks.ca_line)
        snprintf(ca_note, sizeof(ca_note), "; line %u is a @cert-authority line, which remvirt "
                 "does not support (host certificates are not checked)", marks.ca_line);
    struct libssh2_knownhost *found = NULL;
    int rc = libssh2_knownhost_check(kh, s->host_name, k.blob, k.len,
                                     LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
                                     k.kh_type, &found);
    switch (rc) {
    case LIBSSH2_KNOWNHOST_CHECK_MATCH:
        RV_DEBUG("the %s key %s of '%s' is in %s", k.type_name, k.fingerprint, s->host_name,
                 s->known_hosts);
        result = 0;
        break;
    case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
                   "host key verification failed: the key of '%s' does not match %s "
                   "(possible man-in-the-middle); it offered the %s key %s%s",
                   s->host_name, s->known_hosts, k.type_name, k.fingerprint, ca_note);
        break;
    case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
        if (s->verify == VERIFY_AUTO) {
            if (marks.ca_line)
                RV_WARN("%s, line %u: @cert-authority lines are not supported; adding the "
                        "plain key of '%s' instead", s->known_hosts, marks.ca_line, s->host_name);
            result = add_known_host(kh, s, &k, err);
            break;
        }
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
                   "host key for '%s' is not in %s; it offered the %s key %s "
                   "(connect once with ssh, or use known_hosts_verify=auto)%s",
                   s->host_name, s->known_hosts, k.type_name, k.fingerprint, ca_note);
        break;
    default:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot check the host key of '%s' against %s: %s",
                   s->host_name, s->known_hosts, session_error(session));
        break;
    }
out:
    libssh2_knownhost_free(kh);
    return result;
}

/* ---------------------------------------------------------------- prompts */

/* Ask on the controlling terminal; NULL if there is none (errno says why).
 * Without echo for secrets. */
static char *tty_prompt(const char *prompt, int echo)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct termios saved, quiet;
    int restore = 0;
    if (!echo && tcgetattr(fd, &saved) == 0) {
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        quiet.c_lflag |= ECHONL;
        restore = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
    char *answer = NULL;
    if (write(fd, prompt, strlen(prompt)) >= 0) {
        char buf[PROMPT_MAX];
        size_t len = 0;
        int ok = 0;
        for (;;) {
            char c;
            ssize_t n = read(fd, &c, 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            if (c == '\n') {
                ok = 1;
                break;
            }
            if (len + 1 < sizeof(buf))
                buf[len++] = c;
        }
        if (ok || len > 0)
            answer = strndup(buf, len);
        explicit_bzero(buf, sizeof(buf));
    }
    int saved_errno = errno;
    if (restore)
        tcsetattr(fd, TCSAFLUSH, &saved);
    close(fd);
    if (!answer)
        errno = saved_errno ? saved_errno : EIO;
    return answer;
}

static void free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void tty_say(const char *text)
{
    int fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            RV_DEBUG("cannot write to the terminal: %s", strerror(errno));
        close(fd);
    }
}

/* ---------------------------------------------------------------- authentication */

static void note_tried(ssh_setup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_tried(ssh_setup *s, const char *fmt, ...)
{
    char *item = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&item, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t need = s->tried_len + (s->tried_len ? 2 : 0) + (size_t)n + 1;
    char *grown = realloc(s->tried, need);
    if (grown) {
        s->tried = grown;
        if (s->tried_len) {
            memcpy(s->tried + s->tried_len, ", ", 2);
            s->tried_len += 2;
        }
        memcpy(s->tried + s->tried_len, item, (size_t)n + 1);
        s->tried_len += (size_t)n;
    }
    free(item);
}

static int server_accepts(const ssh_setup *s, const char *method)
{
    size_t len = strlen(method);
    for (const char *p = s->server_methods; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, method, n) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Results of one method: authenticated, not this way, or the connection
 * is gone (err set). */
enum { AUTH_OK = 1, AUTH_NO = 0, AUTH_FATAL = -1 };

/* A libssh2 error that means the connection is unusable. */
static int lost_connection(int rc)
{
    return rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_RECV ||
           rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_TIMEOUT ||
           rc == LIBSSH2_ERROR_SOCKET_TIMEOUT;
}

static int auth_lost(LIBSSH2_SESSION *session, const ssh_setup *s, rv_err *err)
{
    rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "connection to '%s' lost during authentication: %s",
               s->host_name, session_error(session));
    return AUTH_FATAL;
}

static int auth_agent(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (!getenv("SSH_AUTH_SOCK")) {
        note_tried(s, "agent (SSH_AUTH_SOCK is not set)");
        return AUTH_NO;
    }
    LIBSSH2_AGENT *agent = libssh2_agent_init(session);
    if (!agent) {
        note_tried(s, "agent (%s)", session_error(session));
        return AUTH_NO;
    }
    int result = AUTH_NO;
    if (libssh2_agent_connect(agent) != 0) {
        note_tried(s, "agent (cannot connect to it: %s)", session_error(session));
        goto out;
    }
    if (libssh2_agent_list_identities(agent) != 0) {
        note_tried(s, "agent (cannot list its keys: %s)", session_error(session));
        goto disconnect;
    }
    struct libssh2_agent_publickey *id = NULL, *prev = NULL;
    int rejected = 0;
    while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
        int rc = libssh2_agent_userauth(agent, s->user, id);
        if (rc == 0) {
            RV_DEBUG("authenticated with the agent's key '%s'", id->comment ? id->comment : "");
            result = AUTH_OK;
            goto disconnect;
        }
        if (lost_connection(rc)) {
            result = auth_lost(session, s, err);
            goto disconnect;
        }
        rejected++;
        prev = id;
    }
    if (rejected)
        note_tried(s, "agent (%d key%s rejected)", rejected, rejected == 1 ? "" : "s");
    else
        note_tried(s, "agent (it holds no keys)");
disconnect:
    libssh2_agent_disconnect(agent);
out:
    libssh2_agent_free(agent);
    return result;
}

/* What the key file's head tells: whether it is encrypted (PEM says so in
 * its header; the OpenSSH format names its cipher, "none" when clear,
 * after "openssh-key-v1") and whether it is an RSA key. */
typedef struct key_file_info {
    int encrypted;
    int rsa;
} key_file_info;

static key_file_info read_key_file_info(const char *path)
{
    key_file_info info = { 0, 0 };
    FILE *f = fopen(path, "re");
    if (!f)
        return info;
    char line[256];
    int openssh = 0;
    char b64[320];
    size_t b64_len = 0;
    for (int i = 0; i < 10 && fgets(line, sizeof(line), f); i++) {
        if (strstr(line, "ENCRYPTED"))
            info.encrypted = 1;
        if (strstr(line, "BEGIN RSA PRIVATE KEY"))
            info.rsa = 1;
        if (strstr(line, "BEGIN OPENSSH PRIVATE KEY")) {
            openssh = 1;
            continue;
        }
        if (openssh) {
            for (const char *p = line; *p && b64_len + 1 < sizeof(b64); p++)
                if (*p != '\n' && *p != '\r')
                    b64[b64_len++] = *p;
            if (b64_len + 1 >= sizeof(b64))
                break;
        }
    }
    fclose(f);
    if (!openssh)
        return info;
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[240];
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < b64_len && n < sizeof(raw); i++) {
        const char *d = strchr(digits, b64[i]);
        if (!d || !*d)
            break;
        acc = (acc << 6) | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            raw[n++] = (unsigned char)(acc >> bits);
        }
    }
    /* magic, then string ciphername: its length (4 bytes) and text. */
    static const char magic[] = "openssh-key-v1";
    if (n < sizeof(magic) + 4 || memcmp(raw, magic, sizeof(magic)) != 0)
        return info;
    const unsigned char *c = raw + sizeof(magic);
    uint32_t len = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
    info.encrypted = !(len == 4 && n >= sizeof(magic) + 8 && memcmp(c + 4, "none", 4) == 0);
    /* The public key, in clear, follows the KDF fields; its type name is
     * within the bytes decoded. */
    info.rsa = memmem(raw, n, "ssh-rsa", 7) != NULL;
    return info;
}

/* 1 authenticated, 0 rejected or unusable (noted), -1 fatal. */
static int try_key_file(LIBSSH2_SESSION *session, ssh_setup *s, const char *path, rv_err *err)
{
    if (access(path, R_OK) < 0) {
        note_tried(s, "privkey (cannot read %s: %s)", path, strerror(errno));
        return AUTH_NO;
    }
    char *passphrase = NULL;
    int tries = 1;
    key_file_info info = read_key_file_info(path);
    if (info.encrypted) {
        if (s->opts->no_tty) {
            note_tried(s, "privkey (%s is encrypted and no_tty forbids asking for its "
                       "passphrase)", path);
            return AUTH_NO;
        }
        tries = PROMPT_TRIES;
    }
    for (int attempt = 0; attempt < tries; attempt++) {
        if (tries > 1) {
            char prompt[PATH_MAX + 64];
            snprintf(prompt, sizeof(prompt), "Enter passphrase for key '%s': ", path);
            passphrase = tty_prompt(prompt, 0);
            if (!passphrase) {
                note_tried(s, "privkey (%s is encrypted and there is no terminal to ask for "
                           "its passphrase)", path);
                return AUTH_NO;
            }
        }
        int rc = libssh2_userauth_publickey_fromfile_ex(session, s->user,
                                                        (unsigned)strlen(s->user), NULL, path,
                                                        passphrase);
        free_secret(passphrase);
        passphrase = NULL;
        if (rc == 0) {
            RV_DEBUG("authenticated with the key %s", path);
            return AUTH_OK;
        }
        if (lost_connection(rc))
            return auth_lost(session, s, err);
        if (rc == LIBSSH2_ERROR_FILE && tries > 1 && attempt + 1 < tries) {
            tty_say("Bad passphrase, try again.\n");
            continue;
        }
        if (rc == LIBSSH2_ERROR_FILE)
            note_tried(s, "privkey (cannot use %s: %s)", path, session_error(session));
#if LIBSSH2_VERSION_NUM < 0x010b00
        else if (info.rsa)
            note_tried(s, "privkey (%s rejected; this libssh2 signs with RSA/SHA-1, which "
                       "OpenSSH 8.8 and later refuse by default: use an ed25519 or ecdsa key)",
                       path);
#endif
        else
            note_tried(s, "privkey (%s rejected)", path);
        return AUTH_NO;
    }
    return AUTH_NO;
}

static int auth_privkey(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (s->opts->keyfile && *s->opts->keyfile)
        return try_key_file(session, s, s->opts->keyfile, err);
    static const char *const defaults[] = { "id_ed25519", "id_ecdsa", "id_rsa" };
    int any = 0;
    for (size_t i = 0; s->home && i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/.ssh/%s", s->home, defaults[i]) >= (int)sizeof(path))
            continue;
        if (access(path, F_OK) < 0)
            continue;
        any = 1;
        int rc = try_key_file(session, s, path, err);
        if (rc != AUTH_NO)
            return rc;
    }
    if (!any)
        note_tried(s, "privkey (no keyfile given and no ~/.ssh/id_ed25519, id_ecdsa or id_rsa)");
    return AUTH_NO;
}

static int auth_password(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (s->opts->no_tty) {
        note_tried(s, "password (no_tty forbids asking for it)");
        return AUTH_NO;
    }
    char prompt[512];
    snprintf(prompt, sizeof(prompt), "%s@%s's password: ", s->user, s->host);
    for (int attempt = 0; attempt < PROMPT_TRIES; attempt++) {
        char *pw = tty_prompt(prompt, 0);
        if (!pw) {
            note_tried(s, "password (no terminal to ask for it)");
            return AUTH_NO;
        }
        int rc = libssh2_userauth_password_ex(session, s->user, (unsigned)strlen(s->user), pw,
                                              (unsigned)strlen(pw), NULL);
        free_secret(pw);
        if (rc == 0)
            return AUTH_OK;
        if (lost_connection(rc))
            return auth_lost(session, s, err);
        if (rc != LIBSSH2_ERROR_AUTHENTICATION_FAILED) {
            note_tried(s, "password (%s)", session_error(session));
            return AUTH_NO;
        }
        if (attempt + 1 < PROMPT_TRIES)
            tty_say("Permission denied, please try again.\n");
    }
    note_tried(s, "password (rejected %d times)", PROMPT_TRIES);
    return AUTH_NO;
}

/* The server's questions, answered on the terminal. */
static void kbdint_cb(const char *name, int name_len, const char *instruction,
                      int instruction_len, int num_prompts,
                      const LIBSSH2_USERAUTH_KBDINT_PROMPT *prompts,
                      LIBSSH2_USERAUTH_KBDINT_RESPONSE *responses, void **abstract)
{
    ssh_transport *t = *abstract;
    ssh_setup *s = t->setup;
    /* The server chooses these texts: escape sequences in them would
     * drive the user's terminal (rewrite what it shows, set its title,
     * fake a prompt), so their control characters are shown escaped; the
     * instruction keeps its lines. */
    if (name_len > 0 || instruction_len > 0) {
        char *n = rv_escape_text_dup(name ? name : "", name && name_len > 0 ? (size_t)name_len : 0, 0);
        char *in = rv_escape_text_dup(instruction ? instruction : "",
                                      instruction && instruction_len > 0
                                          ? (size_t)instruction_len : 0, 1);
        char *intro = NULL;
        if (n && in && asprintf(&intro, "%s%s%s\n", n, *n && *in ? "\n" : "", in) >= 0) {
            tty_say(intro);
            free(intro);
        }
        free(n);
        free(in);
    }
    for (int i = 0; i < num_prompts; i++) {
        char *answer = NULL;
        if (!s->kbdint_unanswered) {
            char *text = rv_escape_text_dup((const char *)prompts[i].text, prompts[i].length, 0);
            if (text) {
                answer = tty_prompt(text, prompts[i].echo);
                free(text);
            }
            if (!answer)
                s->kbdint_unanswered = 1;
        }
        /* libssh2 frees the answers with its allocator: malloc. */
        responses[i].text = answer ? answer : strdup("");
        responses[i].length = responses[i].text ? (unsigned)strlen(responses[i].text) : 0;
    }
}

static int auth_kbdint(ssh_transport *t, ssh_setup *s, rv_err *err)
{
    if (s->opts->no_tty) {
        note_tried(s, "keyboard-interactive (no_tty forbids asking)");
        return AUTH_NO;
    }
    s->kbdint_unanswered = 0;
    /* A person answers: no time limit on the whole call. */
    libssh2_session_set_timeout(t->session, 0);
    int rc = libssh2_userauth_keyboard_interactive_ex(t->session, s->user,
                                                      (unsigned)strlen(s->user), kbdint_cb);
    libssh2_session_set_timeout(t->session, SETUP_TIMEOUT_MS);
    if (rc == 0)
        return AUTH_OK;
    if (lost_connection(rc))
        return auth_lost(t->session, s, err);
    note_tried(s, "keyboard-interactive (%s)",
               s->kbdint_unanswered ? "no terminal to answer on" : "rejected");
    return AUTH_NO;
}

static int authenticate(ssh_transport *t, ssh_setup *s, rv_err *err)
{
    LIBSSH2_SESSION *session = t->session;
    const char *list = libssh2_userauth_list(session, s->user, (unsigned)strlen(s->user));
    if (!list) {
        if (libssh2_userauth_authenticated(session))
            return 0;           /* the server wanted no authentication */
        rv_err_set(err, RV_FROM_SSH, RV_ERR_AUTH_FAILED,
                   "cannot ask '%s' how user '%s' may authenticate: %s", s->host_name, s->user,
                   session_error(session));
        return -1;
    }
    s->server_methods = strdup(list);
    if (!s->server_methods)
        return no_memory(err);
    RV_DEBUG("'%s' accepts: %s", s->host_name, s->server_methods);
    for (int i = 0; i < s->n_methods; i++) {
        auth_method m = s->methods[i];
        int rc = AUTH_NO;
        switch (m) {
        case AUTH_AGENT:
        case AUTH_PRIVKEY:
            if (!server_accepts(s, "publickey")) {
                note_tried(s, "%s (the server takes no public keys)", auth_names[m]);
                continue;
            }
            rc = m == AUTH_AGENT ? auth_agent(session, s, err) : auth_privkey(session, s, err);
            break;
        case AUTH_PASSWORD:
            /* Where the server asks through keyboard-interactive only, a
             * password is given that way. */
            if (server_accepts(s, "password"))
                rc = auth_password(session, s, err);
            else if (server_accepts(s, "keyboard-interactive"))
                rc = auth_kbdint(t, s, err);
            else
                note_tried(s, "password (the server takes no passwords)");
            break;
        case AUTH_KBDINT:
            if (server_accepts(s, "keyboard-interactive"))
                rc = auth_kbdint(t, s, err);
            else
                note_tried(s, "keyboard-interactive (the server does not offer it)");
            break;
        }
        if (rc == AUTH_FATAL)
            return -1;
        /* A method may be one step of several (AuthenticationMethods). */
        if (rc == AUTH_OK && libssh2_userauth_authenticated(session))
            return 0;
    }
    rv_err_set(err, RV_FROM_SSH, RV_ERR_AUTH_FAILED,
               "authentication failed for user '%s' on '%s' (tried: %s; the server accepts: %s)",
               s->user, s->host_name, s->tried ? s->tried : "nothing", s->server_methods);
    return -1;
}

/* ---------------------------------------------------------------- connect */

static int start_command(ssh_transport *t, const ssh_setup *s, rv_err *err)
{
    t->channel = libssh2_channel_open_session(t->session);
    if (!t->channel) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot open an SSH session channel to '%s': %s",
                   s->host_name, session_error(t->session));
        return -1;
    }
    if (libssh2_channel_exec(t->channel, s->opts->command) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' refused to run '%s': %s", s->host_name,
                   s->opts->command, session_error(t->session));
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
        no_memory(err);
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
        no_memory(err);
        goto fail;
    }
    libssh2_session_set_blocking(t->session, 1);
    libssh2_session_set_timeout(t->session, SETUP_TIMEOUT_MS);
    if (libssh2_session_handshake(t->session, t->base.fd) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "SSH handshake with '%s' failed: %s",
                   s.host_name, session_error(t->session));
        goto fail;
    }
    if (check_host_key(t->session, &s, err) < 0 || authenticate(t, &s, err) < 0 ||
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
