/* The QEMU driver's DOMAIN_OPEN_CONSOLE: a stream joined to a running
 * guest's serial port, the pty QEMU made for it (-chardev pty).  QEMU
 * names the pty in its output, which goes to the domain's log; the
 * stream reads and writes the pty without blocking (stream_fd.c).  And
 * DOMAIN_OPEN_CHANNEL: a stream joined to a unix <channel>'s socket
 * (connected as libvirtd does, whatever its mode).  As in libvirtd, one
 * session per device: another open fails, unless it asks to take over
 * (FORCE), which ends the old session's data. */
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "rv_remote.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/stream_fd.h"

enum { CONSOLE_FORCE = 1, CONSOLE_SAFE = 2 };

/* How much of the end of a domain's log is searched for its ptys. */
#define LOG_SCAN_MAX (256 * 1024)

/* An open session: its domain and device ("serial0", "channel1"). */
typedef struct session {
    char name[256];
    char dev[32];
    rv_stream_io *io;
    struct session *next;
} session;
static session *sessions;

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static void session_gone(void *opaque)
{
    for (session **pp = &sessions; *pp; pp = &(*pp)->next) {
        if (*pp == opaque) {
            *pp = (*pp)->next;
            break;
        }
    }
    free(opaque);
}

static session *session_find(const char *name, const char *dev)
{
    session *s = sessions;
    while (s && (strcmp(s->dev, dev) != 0 || strcmp(s->name, name) != 0))
        s = s->next;
    return s;
}

/* Open the stream on fd (taken) as d's session on dev; old: the session
 * it takes over (FORCE), or NULL. */
static int session_open(const qemu_dom *d, const char *dev, int fd, session *old, rv_err *err)
{
    session *s = calloc(1, sizeof(*s));
    if (!s) {
        close(fd);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    rv_stream_io *io = rv_stream_fd_new(rv_qemu.loop, fd, 1, 1, err);
    if (!io) {
        free(s);
        return -1;
    }
    snprintf(s->name, sizeof(s->name), "%s", d->live->name);
    snprintf(s->dev, sizeof(s->dev), "%s", dev);
    s->io = io;
    s->next = sessions;
    sessions = s;
    rv_stream_fd_on_free(io, session_gone, s);
    if (old)
        rv_stream_fd_hangup(old->io);   /* FORCE: the old session ends */
    return rv_driver_stream_open(io, err);
}

/* The pty QEMU gave serial port `port` in this run: the last "char device
 * redirected to /dev/pts/N (label charserialP)" in the domain's log
 * since the run began.  Reads a bounded piece of a local file. */
static int find_pty(const qemu_dom *d, unsigned port, char *path, size_t size, rv_err *err)
{
    char *log = rv_qemu_path(rv_qemu.run_dir, d->live->name, ".log");
    int fd = log ? open(log, O_RDONLY | O_CLOEXEC) : -1;
    free(log);
    if (fd < 0)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: cannot read the domain's log: %s",
                    strerror(errno));
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end - d->log_start > LOG_SCAN_MAX ? end - LOG_SCAN_MAX : d->log_start;
    if (from < 0)
        from = 0;
    char *text = malloc(LOG_SCAN_MAX + 1);
    ssize_t n = text ? pread(fd, text, (size_t)(end - from), from) : -1;
    close(fd);
    if (n < 0) {
        free(text);
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: cannot read the domain's log");
    }
    text[n] = '\0';
    char label[64];
    snprintf(label, sizeof(label), " (label charserial%u)", port);
    const char *found = NULL;
    for (const char *p = strstr(text, "char device redirected to "); p;
         p = strstr(p + 1, "char device redirected to ")) {
        const char *dev = p + strlen("char device redirected to ");
        size_t len = strcspn(dev, " \n");
        if (len > 0 && len < size && strncmp(dev + len, label, strlen(label)) == 0) {
            memcpy(path, dev, len);
            path[len] = '\0';
            found = dev;
        }
    }
    free(text);
    if (!found || strncmp(path, "/dev/pts/", 9) != 0)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: character device serial%u is not using a PTY", port);
    return 0;
}

/* "serialN" or "consoleN" (console0 is serial0), NULL: the first. */
static int parse_dev_name(const char *dev_name, unsigned *port)
{
    *port = 0;
    if (!dev_name)
        return 0;
    const char *digits = strncmp(dev_name, "serial", 6) == 0    ? dev_name + 6
                         : strcmp(dev_name, "console0") == 0 ? dev_name + 7
                                                             : NULL;
    if (!digits || !*digits || strlen(digits) > 1 || *digits < '0' || *digits > '9')
        return -1;
    *port = (unsigned)(*digits - '0');
    return 0;
}

int rv_qemu_domain_open_console(rv_driver_conn *c, const rv_domain_open_console_args *args,
                                rv_err *err)
{
    (void)c;
    if (args->flags & ~(unsigned)(CONSOLE_FORCE | CONSOLE_SAFE))
        return fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                    args->flags & ~(unsigned)(CONSOLE_FORCE | CONSOLE_SAFE),
                    "qemuDomainOpenConsole");
    qemu_dom *d = rv_qemu_find_uuid((const unsigned char *)args->dom.uuid);
    if (!d)
        return fail(err, RV_ERR_NO_DOMAIN, "Domain not found: no domain with matching uuid (%s)",
                    args->dom.name ? args->dom.name : "");
    if (!rv_qemu_dom_active(d) || d->starting || !d->pid || !d->live)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain is not running");
    const char *dev_name = args->dev_name ? *args->dev_name : NULL;
    unsigned port;
    if (parse_dev_name(dev_name, &port) < 0 || port >= d->live->nserials)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: cannot find character device %s",
                    dev_name ? dev_name : "<null>");
    if (d->live->serials[port].type != RV_QEMU_CHR_PTY)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: character device serial%u is not using a PTY", port);
    char dev[32];
    snprintf(dev, sizeof(dev), "serial%u", port);
    session *old = session_find(d->live->name, dev);
    if (old && !(args->flags & CONSOLE_FORCE))
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: Active console session exists for this domain");
    char path[64];
    if (find_pty(d, port, path, sizeof(path), err) < 0)
        return -1;
    int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot open the console '%s': %s", path,
                    strerror(errno));
    /* Bytes as they are, both ways (QEMU sets its side so too). */
    struct termios tio;
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(fd, TCSANOW, &tio);
    }
    return session_open(d, dev, fd, old, err);
}

/* libvirt's VIR_DOMAIN_CHANNEL_FORCE. */
#define CHANNEL_FORCE 1u

int rv_qemu_domain_open_channel(rv_driver_conn *c, const rv_domain_open_channel_args *args,
                                rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, CHANNEL_FORCE, "qemuDomainOpenChannel",
                            err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_active(&args->dom, err);
    if (!d)
        return -1;
    const char *name = args->name ? *args->name : NULL;
    const rv_qemu_devices *dev = &d->live->dev;
    size_t i = 0;
    char alias[32] = "";
    /* By alias (channelN) or by the virtio port's name; NULL: the first. */
    for (; i < dev->nchannels; i++) {
        snprintf(alias, sizeof(alias), "channel%zu", i);
        if (!name || strcmp(name, alias) == 0 || strcmp(name, dev->channels[i].name) == 0)
            break;
    }
    if (i == dev->nchannels)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: cannot find channel %s",
                    name ? name : "<null>");
    const rv_qemu_channel *ch = &dev->channels[i];
    if (ch->type != RV_QEMU_CHANNEL_UNIX || !ch->path)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: channel %s is not using a PTY or UNIX socket",
                    name ? name : "<null>");
    session *old = session_find(d->live->name, alias);
    if (old && !(args->flags & CHANNEL_FORCE))
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: Active channel stream exists for this domain");
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(ch->path) >= sizeof(sa.sun_path))
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: UNIX socket path '%s' too long",
                    ch->path);
    strcpy(sa.sun_path, ch->path);
    /* Non-blocking: a local connect either completes at once or fails
     * (EAGAIN: the listener's backlog is full), so the loop never waits. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(err, RV_ERR_SYSTEM_ERROR, "Unable to connect to UNIX socket '%s': %s",
                    ch->path, strerror(e));
    }
    return session_open(d, alias, fd, old, err);
}
