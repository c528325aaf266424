#include "transport/ext.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

RV_LOG_CATEGORY("transport.ext");

typedef struct ext_transport {
    rv_transport base;
    pid_t child;
    char exit_text[96];
} ext_transport;

static ssize_t ext_read(rv_transport *t, void *buf, size_t len)
{
    return read(t->fd, buf, len);
}

static ssize_t ext_write(rv_transport *t, const void *buf, size_t len)
{
    return send(t->fd, buf, len, MSG_NOSIGNAL);
}

/* After EOF, say how the command ended, if it has. */
static const char *ext_peer_error(rv_transport *t)
{
    ext_transport *e = (ext_transport *)t;
    int status;
    /* Its output closes as it exits, a moment before it can be reaped. */
    pid_t done = 0;
    for (int i = 0; e->child > 0 && done == 0 && i < 20; i++) {
        done = waitpid(e->child, &status, WNOHANG);
        if (done == 0)
            nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
    }
    if (done == e->child && e->child > 0) {
        e->child = 0;
        if (WIFEXITED(status))
            snprintf(e->exit_text, sizeof(e->exit_text), "the command exited with status %d",
                     WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            snprintf(e->exit_text, sizeof(e->exit_text), "the command was killed by signal %d",
                     WTERMSIG(status));
    }
    return e->exit_text[0] ? e->exit_text : NULL;
}

/* Whether the child has been reaped within ms milliseconds. */
static int reaped_within(pid_t child, int ms)
{
    for (int waited = 0;; waited += 10) {
        if (waitpid(child, NULL, WNOHANG) != 0)
            return 1;
        if (waited >= ms)
            return 0;
        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
    }
}

static void ext_close(rv_transport *t)
{
    ext_transport *e = (ext_transport *)t;
    close(t->fd);
    /* EOF on its stdin asks the command to finish; give it a moment, then
     * make sure it does: a command that ignores SIGTERM must not hang the
     * close. */
    if (e->child > 0 && !reaped_within(e->child, 500)) {
        kill(e->child, SIGTERM);
        if (!reaped_within(e->child, 1000)) {
            kill(e->child, SIGKILL);
            waitpid(e->child, NULL, 0);
        }
    }
    free(e);
}

static const rv_transport_ops ext_ops = {
    .name = "ext",
    .read = ext_read,
    .write = ext_write,
    .peer_error = ext_peer_error,
    .close = ext_close,
};

rv_transport *rv_ext_spawn(const char *command, rv_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot create a socketpair for '%s'", command);
        return NULL;
    }
    ext_transport *e = calloc(1, sizeof(*e));
    if (!e) {
        close(sv[0]);
        close(sv[1]);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot start '%s'", command);
        close(sv[0]);
        close(sv[1]);
        free(e);
        return NULL;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec.  If our own
         * stdin or stdout was closed, sv[1] may be 0 or 1; move it above
         * them first so that both dup2s take effect. */
        int end = sv[1] > 1 ? sv[1] : fcntl(sv[1], F_DUPFD, 3);
        if (end < 0 || dup2(end, 0) < 0 || dup2(end, 1) < 0)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    e->base.ops = &ext_ops;
    e->base.fd = sv[0];
    e->child = pid;
    RV_DEBUG("started '%s' as pid %d", command, (int)pid);
    return &e->base;
}
