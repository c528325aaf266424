#include "transport/unix.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "transport/socket.h"

RV_LOG_CATEGORY("transport.unix");

static int fill_addr(struct sockaddr_un *sa, const char *path, rv_err *err)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path)) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INVALID_ARG,
                   "socket path '%s' is longer than %zu bytes", path, sizeof(sa->sun_path) - 1);
        return -1;
    }
    strcpy(sa->sun_path, path);
    return 0;
}

int rv_unix_listen(const char *path, mode_t mode, int backlog, rv_err *err)
{
    struct sockaddr_un sa;
    if (fill_addr(&sa, path, err) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot create a Unix socket");
        return -1;
    }
    unlink(path);
    /* The socket is born with its final mode: bind gives the file the
     * socket's own mode (set here with fchmod) less the umask, or less a
     * default ACL.  Nothing changes the mode by name afterwards, since a
     * chmod would follow a link someone swapped in for the socket. */
    if (fchmod(fd, mode) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot set the mode of the Unix socket %s",
                         path);
        close(fd);
        return -1;
    }
    mode_t old = umask(~mode & 0777);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (rc < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot bind the Unix socket %s", path);
        close(fd);
        return -1;
    }
    if (listen(fd, backlog) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot listen on %s", path);
        close(fd);
        unlink(path);
        return -1;
    }
    RV_DEBUG("listening on %s mode %o fd %d", path, (unsigned)mode, fd);
    return fd;
}

rv_transport *rv_unix_connect(const char *path, rv_err *err)
{
    struct sockaddr_un sa;
    if (fill_addr(&sa, path, err) < 0)
        return NULL;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot create a Unix socket");
        return NULL;
    }
    while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (errno == EINTR)
            continue;
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot connect to the socket '%s'", path);
        close(fd);
        return NULL;
    }
    rv_transport *t = rv_socket_transport_new(fd, 0, err);
    if (!t)
        close(fd);
    return t;
}
