#include "transport/tcp.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"

RV_LOG_CATEGORY("transport.tcp");

void rv_tcp_nodelay(int fd)
{
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

static void format_addr(const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, size, "?");
        return;
    }
    snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

void rv_tcp_addr_name(int fd, int peer, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&ss, &sl) < 0)
        snprintf(buf, len, "?");
    else
        format_addr((struct sockaddr *)&ss, sl, buf, len);
}

static int listen_one(const struct addrinfo *ai, int backlog, rv_err *err)
{
    char name[NI_MAXHOST + NI_MAXSERV + 4];
    format_addr(ai->ai_addr, ai->ai_addrlen, name, sizeof(name));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot create a socket for %s", name);
        return -1;
    }
    int on = 1;
    /* A restarted daemon must not wait out TIME_WAIT to listen again. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    /* The IPv4 and IPv6 wildcards each get a socket of their own. */
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
        int saved = errno;
        rv_err_set_errno(err, RV_FROM_RPC, saved, "cannot listen on %s", name);
        close(fd);
        errno = saved;
        return -1;
    }
    RV_DEBUG("listening on %s fd %d", name, fd);
    return fd;
}

int rv_tcp_listen(const char *addr, const char *port, int backlog, int *fds, int max,
                  rv_err *err)
{
    struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_ADDRCONFIG,
                              .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(addr && *addr ? addr : NULL, port, &hints, &res);
    if (rc != 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot resolve listen address %s port %s: %s",
                   addr && *addr ? addr : "(any)", port, gai_strerror(rc));
        return -1;
    }
    int n = 0;
    for (struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next) {
        int fd = listen_one(ai, backlog, err);
        if (fd < 0) {
            /* An address family the host lacks is no reason to fail when
             * another address works; any other failure is. */
            if (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL) {
                rv_err_clear(err);
                continue;
            }
            while (n > 0)
                close(fds[--n]);
            freeaddrinfo(res);
            return -1;
        }
        fds[n++] = fd;
    }
    freeaddrinfo(res);
    if (n == 0 && !err->message)
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "no usable address to listen on for %s port %s",
                   addr && *addr ? addr : "(any)", port);
    return n > 0 ? n : -1;
}

/* connect(), finishing one that a signal interrupted: it goes on in the
 * background, so wait for it and read its outcome instead of calling
 * connect() again.  Returns 0 or -1 with errno. */
static int connect_one(int fd, const struct addrinfo *ai)
{
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return 0;
    if (errno != EINTR)
        return -1;
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    int rc;
    while ((rc = poll(&pfd, 1, -1)) < 0 && errno == EINTR)
        ;
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return -1;
    errno = soerr;
    return soerr ? -1 : 0;
}

int rv_tcp_connect(const char *host, const char *port, rv_err *err)
{
    struct addrinfo hints = { .ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV,
                              .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_SYSTEM_ERROR, "cannot resolve host '%s' port %s: %s",
                   host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1, last_errno = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        if (connect_one(fd, ai) == 0)
            break;
        last_errno = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, last_errno, "cannot connect to '%s' port %s", host, port);
        return -1;
    }
    rv_tcp_nodelay(fd);
    return fd;
}
