/* rvsh console: what the user types goes to the guest's console, what
 * the guest prints comes to the terminal, both without waiting on the
 * other (poll on stdin and the connection's socket); ^] ends it, as in
 * virsh. */
#include "console.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define ESCAPE_CHAR 0x1d        /* ^] */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Everything the stream has now onto stdout: 1 at its end, 0, -1. */
static int drain(rv_stream *st)
{
    char buf[65536];
    for (;;) {
        int n = rv_stream_recv(st, buf, sizeof(buf));
        if (n == RV_STREAM_AGAIN)
            return 0;
        if (n < 0)
            return -1;
        if (n == 0)
            return 1;
        if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
            return -1;
    }
}

int rvsh_console_run(rv_stream *st)
{
    struct termios saved, raw;
    int tty = tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        raw = saved;
        cfmakeraw(&raw);
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
    }
    int rc = 0, stdin_open = 1;
    for (;;) {
        int state = drain(st);
        if (state != 0) {
            rc = state < 0 ? -1 : 0;
            break;
        }
        struct pollfd fds[2] = {
            { .fd = rv_stream_fd(st), .events = POLLIN },
            { .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
        };
        /* The timeout catches data another reader of the connection
         * (its event loop's thread) took off the socket. */
        if (poll(fds, 2, 200) < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        if (!(fds[1].revents & (POLLIN | POLLHUP)))
            continue;
        char buf[4096];
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
        if (n <= 0) {
            stdin_open = 0;     /* nothing more to send; the guest may still talk */
            continue;
        }
        char *esc = memchr(buf, ESCAPE_CHAR, (size_t)n);
        size_t len = esc ? (size_t)(esc - buf) : (size_t)n;
        if (len > 0 && rv_stream_send(st, buf, len) < 0) {
            rc = -1;
            break;
        }
        if (esc)
            break;
    }
    if (tty)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    return rc;
}
