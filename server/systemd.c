#include "server/systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"

RV_LOG_CATEGORY("server.systemd");

/* The protocol's first passed fd. */
#define LISTEN_FDS_START 3
/* The longest name systemd allows (FDNAME_MAX). */
#define FDNAME_MAX 255

typedef struct {
    int fd;                         /* -1 once taken */
    char name[FDNAME_MAX + 1];
} activated;

static activated passed[RVS_MAX_ACTIVATED];
static int npassed;
static int notify_fd = -1;
static struct sockaddr_un notify_addr;
static socklen_t notify_len;

/* A decimal number without sign, spaces or trailing text. */
static int parse_count(const char *text, long max, long *out)
{
    if (!text || !*text)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 0 || v > max || text[0] == '+' || text[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* Only a listening stream socket is something remvirtd can accept on. */
static int check_listening(int fd, const char *name, rv_err *err)
{
    struct stat st;
    int type = 0, listening = 0;
    socklen_t len = sizeof(type), len2 = sizeof(listening);
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len2) < 0 || !listening) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "socket activation: fd %d (%s) is not a listening stream socket", fd, name);
        return -1;
    }
    /* Accepts must never block the loop; and nothing remvirtd starts
     * inherits the listeners. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "socket activation: fd %d (%s)", fd, name);
        return -1;
    }
    return 0;
}

/* NOTIFY_SOCKET: a path, or "@name" for the abstract namespace. */
static void open_notify_socket(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    if (len < 2 || len >= sizeof(notify_addr.sun_path) || (path[0] != '/' && path[0] != '@')) {
        if (path)
            RV_WARN("ignoring NOTIFY_SOCKET '%s': not a socket path", path);
        return;
    }
    memset(&notify_addr, 0, sizeof(notify_addr));
    notify_addr.sun_family = AF_UNIX;
    memcpy(notify_addr.sun_path, path, len);
    if (path[0] == '@')
        notify_addr.sun_path[0] = '\0';
    notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
    notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (notify_fd < 0)
        RV_WARN("cannot create the notification socket: %s", strerror(errno));
}

int rvs_activation_init(rv_err *err)
{
    open_notify_socket(getenv("NOTIFY_SOCKET"));
    const char *pid_text = getenv("LISTEN_PID"), *fds_text = getenv("LISTEN_FDS");
    const char *names = getenv("LISTEN_FDNAMES");
    char *names_copy = names ? strdup(names) : NULL;
    long pid = 0, n = 0;
    int rc = 0;
    if (!pid_text || !fds_text)
        goto out;
    if (parse_count(pid_text, INT_MAX, &pid) < 0 || parse_count(fds_text, INT_MAX, &n) < 0) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "socket activation: LISTEN_PID '%s' or LISTEN_FDS '%s' is not a number",
                   pid_text, fds_text);
        rc = -1;
        goto out;
    }
    if (pid != (long)getpid()) {
        RV_DEBUG("LISTEN_PID %ld is not this process: no sockets taken", pid);
        goto out;
    }
    if (n > RVS_MAX_ACTIVATED) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "socket activation: %ld sockets passed, at most %d are taken", n,
                   RVS_MAX_ACTIVATED);
        rc = -1;
        goto out;
    }
    if (names && !names_copy) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
        rc = -1;
        goto out;
    }
    /* Names are colon-separated in fd order; systemd says "unknown" for
     * a socket it has no name for, and so does remvirtd. */
    char *next = names_copy;
    for (long i = 0; i < n; i++) {
        activated *a = &passed[npassed++];
        a->fd = (int)(LISTEN_FDS_START + i);
        const char *name = next ? strsep(&next, ":") : NULL;
        snprintf(a->name, sizeof(a->name), "%s", name && *name ? name : "unknown");
        if (check_listening(a->fd, a->name, err) < 0) {
            rc = -1;
            goto out;
        }
        RV_DEBUG("socket activation: fd %d is %s", a->fd, a->name);
    }
    rc = npassed;
out:
    free(names_copy);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    unsetenv("NOTIFY_SOCKET");
    return rc;
}

static int family_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    return ss.ss_family;
}

int rvs_activation_take(const char *name, rvs_addr_kind kind, int *fds, int max, rv_err *err)
{
    int n = 0;
    for (int i = 0; i < npassed && n < max; i++) {
        activated *a = &passed[i];
        if (a->fd < 0 || strcmp(a->name, name) != 0)
            continue;
        int family = family_of(a->fd);
        int ok = kind == RVS_ADDR_UNIX ? family == AF_UNIX
                                       : family == AF_INET || family == AF_INET6;
        if (!ok) {
            rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                       "socket activation: %s (fd %d) must listen on %s", name, a->fd,
                       kind == RVS_ADDR_UNIX ? "a Unix socket path" : "a TCP port");
            while (n > 0)
                close(fds[--n]);
            return -1;
        }
        fds[n++] = a->fd;
        a->fd = -1;
    }
    return n;
}

void rvs_activation_close_unclaimed(void)
{
    for (int i = 0; i < npassed; i++) {
        if (passed[i].fd < 0)
            continue;
        RV_WARN("socket activation: remvirtd does not serve '%s' (fd %d): closing it",
                passed[i].name, passed[i].fd);
        close(passed[i].fd);
        passed[i].fd = -1;
    }
}

void rvs_activation_cleanup(void)
{
    rvs_activation_close_unclaimed();
    npassed = 0;
    if (notify_fd >= 0)
        close(notify_fd);
    notify_fd = -1;
}

void rvs_notify(const char *state)
{
    if (notify_fd < 0)
        return;
    ssize_t n = sendto(notify_fd, state, strlen(state), MSG_DONTWAIT | MSG_NOSIGNAL,
                       (struct sockaddr *)&notify_addr, notify_len);
    if (n < 0)
        RV_WARN("cannot notify the service manager of %s: %s", state, strerror(errno));
    else
        RV_DEBUG("notified the service manager: %s", state);
}
