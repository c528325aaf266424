/* remvirt-ssh-helper [--readonly] [SOCKET]
 *
 * sshd runs this on the daemon's host for a client connecting over SSH:
 * it connects to remvirtd's Unix socket and relays stdin to the socket and
 * the socket to stdout until both directions have ended.  An end of input
 * on one side is passed on as a half-close (shutdown of the socket's
 * writing side, or closing stdout), after everything read before it has
 * been written, so nothing in flight is lost.  Exit status: 0 when the
 * connection ended, 1 on an error (said on stderr), 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PROG "remvirt-ssh-helper"
/* configure --with-unix-sock-dir */
#define DEFAULT_SOCKET RV_UNIX_SOCK_DIR "/remvirt-sock"
#define DEFAULT_SOCKET_RO RV_UNIX_SOCK_DIR "/remvirt-sock-ro"
#define BUF_SIZE (64 * 1024)

/* Bytes read from one fd, waiting to be written to another. */
typedef struct relay {
    const char *from_name, *to_name;
    int from, to;
    char buf[BUF_SIZE];
    size_t head, len;
    int eof;                    /* nothing more to read from `from` */
    int done;                   /* the end was passed on (or `to` is gone) */
} relay;

static int usage(FILE *f, int status)
{
    fprintf(f, "usage: " PROG " [--readonly] [SOCKET]\n"
                    "Relays stdin and stdout to remvirtd's Unix socket (default "
                    DEFAULT_SOCKET ", with --readonly " DEFAULT_SOCKET_RO ").\n");
    return status;
}

static int set_nonblock(int fd, int *old_flags)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    if (old_flags)
        *old_flags = fl;
    return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int connect_socket(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, PROG ": cannot connect to %s: the path is longer than %zu bytes\n", path,
                sizeof(sa.sun_path) - 1);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, PROG ": cannot create a Unix socket: %s\n", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, PROG ": cannot connect to %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Pass the end on: no more writes to `to`. */
static void finish(relay *r, int to_is_socket)
{
    if (r->done)
        return;
    r->done = 1;
    if (to_is_socket)
        shutdown(r->to, SHUT_WR);
    else
        close(r->to);
}

/* Read what is there.  Returns -1 on a read error (said on stderr). */
static int fill(relay *r)
{
    ssize_t n = read(r->from, r->buf + r->len, sizeof(r->buf) - r->len);
    if (n > 0) {
        r->len += (size_t)n;
        return 0;
    }
    if (n == 0) {
        r->eof = 1;
        return 0;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return 0;
    fprintf(stderr, PROG ": cannot read from %s: %s\n", r->from_name, strerror(errno));
    return -1;
}

/* Write what is buffered.  A reader that went away ends this direction
 * (returns 0 with done set); any other failure returns -1. */
static int drain(relay *r, int to_is_socket)
{
    while (r->head < r->len) {
        ssize_t n = to_is_socket ? send(r->to, r->buf + r->head, r->len - r->head, MSG_NOSIGNAL)
                                 : write(r->to, r->buf + r->head, r->len - r->head);
        if (n > 0) {
            r->head += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            /* Nobody reads any more: what is left can go nowhere. */
            r->head = r->len = 0;
            r->eof = 1;
            r->done = 1;
            return 0;
        }
        fprintf(stderr, PROG ": cannot write to %s: %s\n", r->to_name,
                n < 0 ? strerror(errno) : "no progress");
        return -1;
    }
    r->head = r->len = 0;
    return 0;
}

int main(int argc, char **argv)
{
    int readonly = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--readonly") == 0 || strcmp(argv[i], "-r") == 0)
            readonly = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, 0);
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage(stderr, 2);
        else if (!path)
            path = argv[i];
        else
            return usage(stderr, 2);
    }
    if (!path)
        path = readonly ? DEFAULT_SOCKET_RO : DEFAULT_SOCKET;

    /* Writes to a closed stdout or socket are errors, not a signal. */
    signal(SIGPIPE, SIG_IGN);

    int sock = connect_socket(path);
    if (sock < 0)
        return 1;

    /* Non-blocking, so one stalled direction never holds up the other;
     * stdin and stdout get their old flags back at the end, since they may
     * be shared with whoever started us. */
    int in_flags = -1, out_flags = -1;
    if (set_nonblock(0, &in_flags) < 0 || set_nonblock(1, &out_flags) < 0 ||
        set_nonblock(sock, NULL) < 0) {
        fprintf(stderr, PROG ": cannot make stdin, stdout and the socket non-blocking: %s\n",
                strerror(errno));
        return 1;
    }

    static relay up = { .from_name = "stdin", .to_name = "the socket" };
    static relay down = { .from_name = "the socket", .to_name = "stdout" };
    up.from = 0, up.to = sock;
    down.from = sock, down.to = 1;

    int status = 0;
    while (!(up.done && down.done)) {
        /* Read while there is room, write while there is something; the
         * socket is always watched, for the daemon hanging up. */
        struct pollfd pfd[3] = {
            { .fd = -1 },
            { .fd = sock },
            { .fd = -1 },
        };
        if (!up.eof && up.len < sizeof(up.buf))
            pfd[0] = (struct pollfd){ .fd = 0, .events = POLLIN };
        if (!down.eof && down.len < sizeof(down.buf))
            pfd[1].events |= POLLIN;
        if (!up.done && up.head < up.len)
            pfd[1].events |= POLLOUT;
        if (!down.done && down.head < down.len)
            pfd[2] = (struct pollfd){ .fd = 1, .events = POLLOUT };
        if (poll(pfd, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
            status = 1;
            break;
        }
        /* POLLHUP and POLLERR show up as the read's EOF or the write's
         * error. */
        if ((pfd[0].revents && fill(&up) < 0) ||
            ((pfd[1].revents & ~POLLOUT) && !down.eof && fill(&down) < 0) ||
            drain(&up, 1) < 0 || drain(&down, 0) < 0) {
            status = 1;
            break;
        }
        if (up.eof && up.head == up.len)
            finish(&up, 1);
        if (down.eof && down.head == down.len)
            finish(&down, 0);
        /* The daemon closed its end for good (not just for writing):
         * whatever stdin still brings can go nowhere. */
        if (down.eof && (pfd[1].revents & (POLLHUP | POLLERR)) && !up.done) {
            up.head = up.len = 0;
            up.eof = 1;
            finish(&up, 1);
        }
    }
    if (in_flags >= 0)
        fcntl(0, F_SETFL, in_flags);
    if (out_flags >= 0 && !down.done)
        fcntl(1, F_SETFL, out_flags);
    close(sock);
    return status;
}
