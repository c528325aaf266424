/* The one piece of code that makes a file durable off the loop: a child
 * fsyncs it, renames it into place and fsyncs the directory (or removes
 * it and fsyncs the directory), while the loop goes on serving; an
 * ev_child reports the outcome.  Save images (qemu_save.c) and
 * definitions (qemu_defwrite.c: define and undefine) go through it. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/drivers/qemu/qemu_driver.h"

static void on_sync_exit(struct ev_loop *loop, ev_child *w, int revents)
{
    (void)revents;
    rv_qemu_sync *s = w->data;
    ev_child_stop(loop, w);
    s->pid = 0;
    int st = w->rstatus;
    s->done(s, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* The child writes text whole to fd; errno when it cannot. */
static int write_all(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        done += (size_t)n;
    }
    return 0;
}

/* remove: unlink path (gone already is fine) instead of writing it. */
static int start(rv_qemu_sync *s, int fd, const char *text, const char *tmp_path, const char *path,
                 bool remove, rv_err *err)
{
    char *dir_copy = strdup(path);
    if (!dir_copy) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* It dies with remvirtd: a restarted remvirtd then finds either
         * the file renamed or not, never a rename still to come. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(ECHILD);
        /* Nothing of remvirtd's (sockets, listeners) stays open in it. */
        if (remove) {
            closefrom(3);
            if (unlink(path) < 0 && errno != ENOENT)
                _exit(errno & 0xff);
            int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
            free(dir_copy);
            _exit(dfd < 0 || fsync(dfd) < 0 ? errno & 0xff : 0);
        }
        if (text)
            fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
        if (fd < 0 || (fd != 3 && dup2(fd, 3) < 0))
            _exit(errno & 0xff);
        closefrom(4);
        int e = text ? write_all(3, text) : 0;
        if (e == 0 && (fsync(3) < 0 || rename(tmp_path, path) < 0))
            e = errno;
        if (e != 0) {
            if (text)
                unlink(tmp_path);   /* a half-written file of its own */
            _exit(e & 0xff);
        }
        int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
        free(dir_copy);     /* (valgrind checks this child's leaks too) */
        _exit(dfd < 0 || fsync(dfd) < 0 ? errno & 0xff : 0);
    }
    free(dir_copy);
    if (pid < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot fork: %s", strerror(errno));
        return -1;
    }
    s->pid = pid;
    ev_child_init(&s->watcher, on_sync_exit, pid, 0);
    s->watcher.data = s;
    ev_child_start(rv_qemu.loop, &s->watcher);
    return 0;
}

int rv_qemu_sync_start(rv_qemu_sync *s, int fd, const char *text, const char *tmp_path,
                       const char *path, rv_err *err)
{
    return start(s, fd, text, tmp_path, path, false, err);
}

int rv_qemu_sync_remove(rv_qemu_sync *s, const char *path, rv_err *err)
{
    return start(s, -1, NULL, NULL, path, true, err);
}

void rv_qemu_sync_forget(rv_qemu_sync *s)
{
    if (s->pid > 0)
        ev_child_stop(rv_qemu.loop, &s->watcher);
    s->pid = 0;
}
