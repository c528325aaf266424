/* The one piece of code that changes the QEMU driver's durable files, off
 * the loop: a helper process (`rv-qemu-store` in ps), forked once when
 * the driver loads, as the spawner is (qemu_spawner.c), writes a file
 * (temporary name, fsync, rename, directory fsync), makes a file that
 * remvirtd wrote durable under its name (a save image: fsync, rename,
 * directory fsync), removes or renames one (directory fsync), one request
 * at a time, and answers each; the loop goes on serving meanwhile and
 * never forks for it.  Definitions of every family, snapshot metadata and
 * save images go through it.
 *
 * Requests travel over a SOCK_SEQPACKET pair, one message each: a header,
 * the paths (NUL-terminated), and a descriptor for WRITE (a memfd holding
 * the text: the loop writes memory, never the disk) and SYNC (the file).
 * The loop sends the next request only when the helper has answered the
 * one before, so the helper never has more than one, and what one
 * operation asks lands in the order asked.
 *
 * Crash safety: the helper dies with remvirtd (PR_SET_PDEATHSIG), so after
 * a kill -9 the system call it was in is the last: a restarted remvirtd
 * finds a file renamed or not, never a rename still to come.  If the
 * helper dies while remvirtd runs, what it had is answered as failed and
 * the next request forks a new one. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.store");

#define STORE_MAX_MESSAGE (2 * 4096 + 64)   /* the header and two paths */

enum { REQ_WRITE = 1, REQ_SYNC, REQ_UNLINK, REQ_RENAME, REQ_FSYNC };
/* MKDIRS: make the directories above; AT: the names are relative to the
 * descriptor passed (a pool's directory, held open), and a RENAME fsyncs
 * the file first and replaces nothing (RENAME_NOREPLACE); RUN: a runtime
 * file (crash-safety rule 1: atomic, never fsynced); IF_PREV_OK: done only
 * when the request before it succeeded (a domain's status after its live
 * XML: whoever finds the status finds the XML too). */
enum { FLAG_MKDIRS = 0x1, FLAG_AT = 0x2, FLAG_RUN = 0x4, FLAG_IF_PREV_OK = 0x8 };

typedef struct store_msg {
    uint32_t kind;          /* REQ_*; in an answer, the request's */
    uint32_t id;
    uint32_t flags;         /* FLAG_* */
    int32_t error;          /* answer: 0, or the errno that stopped it */
    int32_t dir_error;      /* answer: done, but the directory's fsync failed */
} store_msg;

/* A request of remvirtd's, queued or with the helper. */
typedef struct store_req {
    store_msg m;
    char *path, *path2;     /* WRITE, SYNC, RENAME: path2 the final name */
    int fd;                 /* WRITE: the text (memfd); SYNC: the file; -1 */
    rv_qemu_sync *owner;    /* NULL: forgotten, the answer is dropped */
    bool warn;              /* a runtime file's, nobody waits: a failure is logged */
    struct store_req *next;
} store_req;

static struct {
    rv_qemu_helper h;
    ev_child child;
    uint32_t next_id;
    store_req *queue;       /* the head is with the helper when sent */
    bool sent;
} store = { .h.fd = -1 };

/* ================================================================ the helper */

/* A new file of a directory held open, fsynced, then renamed to a name
 * nothing has (the commit point of a volume's creation), then the
 * directory fsynced. */
static int commit_at(int dfd, const char *from, const char *to)
{
    int fd = openat(dfd, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int e = fd < 0 || fsync(fd) < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (!e && renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) < 0)
        e = errno;
    return e;
}

static int fsync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return ENOMEM;
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    int e = dfd < 0 || fsync(dfd) < 0 ? errno : 0;
    if (dfd >= 0)
        close(dfd);
    return e;
}

/* The directories above path, made when missing (mode 0700). */
static int make_parents(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return ENOMEM;
    int e = 0;
    for (char *p = copy + 1; !e && (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(copy, 0700) < 0 && errno != EEXIST)
            e = errno;
        *p = '/';
    }
    free(copy);
    return e;
}

/* Copy the memfd's text into a new tmp, fsync it when durable. */
static int write_tmp(int text_fd, const char *tmp, bool durable)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    static char buf[65536];
    off_t at = 0;
    int e = 0;
    for (;;) {
        ssize_t n = pread(text_fd, buf, sizeof(buf), at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            break;
        }
        if (n == 0)
            break;
        at += n;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                e = errno;
                break;
            }
            done += w;
        }
        if (e)
            break;
    }
    if (!e && durable && fsync(fd) < 0)
        e = errno;
    if (close(fd) < 0 && !e)
        e = errno;
    return e;
}

static void helper_do(store_msg *m, const char *path, const char *path2, int fd)
{
    int e = 0;
    if (m->flags & FLAG_AT) {
        if (fd < 0 || (m->kind != REQ_RENAME && m->kind != REQ_UNLINK) ||
            (m->kind == REQ_RENAME && !path2))
            e = EINVAL;
        else if (m->kind == REQ_RENAME)
            e = commit_at(fd, path, path2);
        else if (unlinkat(fd, path, 0) < 0)
            e = errno == ENOENT ? 0 : errno;
        m->error = e;
        if (!e && fsync(fd) < 0)
            m->dir_error = errno;
        return;
    }
    if ((m->flags & FLAG_MKDIRS) && (e = make_parents(path2 ? path2 : path)) != 0) {
        m->error = e;
        return;
    }
    switch (m->kind) {
    case REQ_WRITE:
        if (fd < 0 || !path2) {
            e = EINVAL;
        } else if ((e = write_tmp(fd, path, !(m->flags & FLAG_RUN))) == 0 &&
                   rename(path, path2) < 0) {
            e = errno;
        }
        if (e)
            unlink(path);   /* a half-written file of its own */
        break;
    case REQ_SYNC:
        if (fd < 0 || !path2)
            e = EINVAL;
        else if (fsync(fd) < 0 || rename(path, path2) < 0)
            e = errno;
        break;
    case REQ_UNLINK:
        if (unlink(path) < 0) {
            if (errno != ENOENT)
                m->error = errno;
            return;     /* (gone already: nothing to sync) */
        }
        break;
    case REQ_RENAME:
        if (!path2 || rename(path, path2) < 0)
            e = path2 ? errno : EINVAL;
        break;
    case REQ_FSYNC:
        m->error = fd < 0 ? EINVAL : fsync(fd) < 0 ? errno : 0;
        return;     /* (no name changed: no directory to sync) */
    default:
        e = EINVAL;
    }
    m->error = e;
    /* Done and visible: the directory's fsync makes it last; its failure
     * is said, but the change stands (it cannot be taken back). */
    if (!e && !(m->flags & FLAG_RUN))
        m->dir_error = fsync_dir(path2 ? path2 : path);
}

static void helper_main(int sock)
{
    static char blob[STORE_MAX_MESSAGE];
    /* A new helper does not know how the request before went (its
     * predecessor died with it): not well. */
    int prev_error = EIO;
    for (;;) {
        store_msg m;
        int fd = -1, nfds;
        bool cut;
        ssize_t n = rv_qemu_helper_recv(sock, &m, sizeof(m), blob, sizeof(blob), &fd, 1, &nfds,
                                        &cut);
        if ((size_t)n < sizeof(m))
            _exit(1);
        size_t len = (size_t)n - sizeof(m);
        const char *path = blob;
        const char *path2 = strlen(path) + 1 < len ? blob + strlen(path) + 1 : NULL;
        m.error = m.dir_error = 0;
        if (cut || !*path)
            m.error = EINVAL;
        else if ((m.flags & FLAG_IF_PREV_OK) && prev_error)
            m.error = ECANCELED;
        else
            helper_do(&m, path, path2, fd);
        prev_error = m.error;
        if (fd >= 0)
            close(fd);
        while (send(sock, &m, sizeof(m), MSG_NOSIGNAL) < 0 && errno == EINTR)
            ;
    }
}

/* ================================================================ remvirtd's side */

static void req_free(store_req *r)
{
    if (r->fd >= 0)
        close(r->fd);
    free(r->path);
    free(r->path2);
    free(r);
}

/* The head request is answered (error -1: the helper died). */
static void answer_head(int error, int dir_error)
{
    store_req *r = store.queue;
    store.queue = r->next;
    store.sent = false;
    rv_qemu_sync *s = r->owner;
    if (error && r->warn)
        RV_WARN("cannot %s '%s': %s", r->m.kind == REQ_UNLINK ? "remove" : "write",
                r->path2 ? r->path2 : r->path,
                error < 0 ? "the store helper died" : strerror(error));
    if (dir_error)
        RV_WARN("'%s' is in place, but its directory could not be synced: %s",
                r->path2 ? r->path2 : r->path, strerror(dir_error));
    req_free(r);
    if (s) {
        s->req = NULL;
        s->done(s, error);
    }
}

static void send_next(void);

static void helper_lost(const char *why)
{
    if (store.h.fd < 0)
        return;
    RV_WARN("the store helper (pid %d) is gone: %s", (int)store.h.pid, why);
    ev_child_stop(rv_qemu.loop, &store.child);
    rv_qemu_helper_stop(&store.h);
    /* What it was doing is lost to us; the rest starts a new helper. */
    if (store.sent)
        answer_head(-1, 0);
    send_next();
}

static void on_helper_exit(struct ev_loop *loop, ev_child *w, int revents)
{
    (void)revents;
    ev_child_stop(loop, w);
    if (w->rpid == store.h.pid)
        helper_lost("it exited");
}

static void on_answer(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    store_msg m;
    const char *why;
    int got = rv_qemu_helper_read(&store.h, &m, sizeof(m), &why);
    if (got == 0)
        return;
    if (got < 0 || !store.sent || m.id != store.queue->m.id) {
        helper_lost(got < 0 ? why : "a bad answer");
        return;
    }
    answer_head(m.error, m.dir_error);
    send_next();
}

static int helper_start(rv_err *err)
{
    if (rv_qemu_helper_start(&store.h, "rv-qemu-store", helper_main, on_answer, err) < 0)
        return -1;
    ev_child_init(&store.child, on_helper_exit, store.h.pid, 0);
    ev_child_start(rv_qemu.loop, &store.child);
    return 0;
}

int rv_qemu_store_init(rv_err *err)
{
    return store.h.fd >= 0 ? 0 : helper_start(err);
}

/* Hand the head request to the helper, if it has none. */
static void send_next(void)
{
    while (store.queue && !store.sent) {
        store_req *r = store.queue;
        rv_err err = { 0 };
        if (rv_qemu_store_init(&err) < 0) {
            RV_WARN("%s", err.message);
            rv_err_clear(&err);
            store.sent = true;
            answer_head(EAGAIN, 0);
            continue;
        }
        char blob[STORE_MAX_MESSAGE];
        size_t len = strlen(r->path) + 1, len2 = r->path2 ? strlen(r->path2) + 1 : 0;
        memcpy(blob, r->path, len);
        if (len2)
            memcpy(blob + len, r->path2, len2);
        ssize_t n = rv_qemu_helper_send(&store.h, &r->m, sizeof(r->m), blob, len + len2, &r->fd,
                                        r->fd >= 0);
        store.sent = true;
        if (n < 0) {
            /* (One small message on an empty socket: never EAGAIN.) */
            helper_lost(strerror(errno));
            return;
        }
    }
}

static int enqueue(rv_qemu_sync *s, uint32_t kind, int fd, const char *path, const char *path2,
                   uint32_t flags, rv_err *err)
{
    store_req *r = calloc(1, sizeof(*r));
    if (!r || !(r->path = strdup(path)) || (path2 && !(r->path2 = strdup(path2)))) {
        if (r) {
            free(r->path);
            free(r);
        }
        if (fd >= 0)
            close(fd);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (strlen(path) + (path2 ? strlen(path2) : 0) + 2 > STORE_MAX_MESSAGE) {
        req_free(r);
        if (fd >= 0)
            close(fd);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "internal error: path too long");
        return -1;
    }
    r->fd = fd;
    r->m.kind = kind;
    r->m.id = ++store.next_id;
    r->m.flags = flags;
    r->owner = s;
    r->warn = !s;
    if (s)
        s->req = r;
    store_req **tail = &store.queue;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    send_next();
    return 0;
}

static int start_write(rv_qemu_sync *s, int fd, const char *text, const char *tmp_path,
                       const char *path, uint32_t flags, rv_err *err)
{
    int copy;
    if (text) {
        /* The text goes to the helper in memory: the loop does not write
         * the disk. */
        size_t len = strlen(text), done = 0;
        copy = memfd_create("rv-store-text", MFD_CLOEXEC);
        while (copy >= 0 && done < len) {
            ssize_t n = write(copy, text + done, len - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                close(copy);
                copy = -1;
                break;
            }
            done += (size_t)n;
        }
    } else {
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
    if (copy < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot pass the file to the store helper: %s",
                   strerror(errno));
        return -1;
    }
    return enqueue(s, text ? REQ_WRITE : REQ_SYNC, copy, tmp_path, path, flags, err);
}

int rv_qemu_sync_start(rv_qemu_sync *s, int fd, const char *text, const char *tmp_path,
                       const char *path, rv_err *err)
{
    return start_write(s, fd, text, tmp_path, path, text ? FLAG_MKDIRS : 0, err);
}

int rv_qemu_sync_run_write(rv_qemu_sync *s, const char *path, const char *text, bool if_prev_ok,
                           rv_err *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp", path) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = start_write(s, -1, text, tmp, path, FLAG_RUN | (if_prev_ok ? FLAG_IF_PREV_OK : 0),
                         err);
    free(tmp);
    return rc;
}

int rv_qemu_sync_run_remove(rv_qemu_sync *s, const char *path, rv_err *err)
{
    return enqueue(s, REQ_UNLINK, -1, path, NULL, FLAG_RUN, err);
}

int rv_qemu_sync_write(rv_qemu_sync *s, const char *path, const char *text, rv_err *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp", path) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = rv_qemu_sync_start(s, -1, text, tmp, path, err);
    free(tmp);
    return rc;
}

int rv_qemu_sync_fsync(rv_qemu_sync *s, int fd, const char *path, rv_err *err)
{
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot pass the file to the store helper: %s", strerror(errno));
        return -1;
    }
    return enqueue(s, REQ_FSYNC, copy, path, NULL, 0, err);
}

int rv_qemu_sync_remove(rv_qemu_sync *s, const char *path, rv_err *err)
{
    return enqueue(s, REQ_UNLINK, -1, path, NULL, 0, err);
}

int rv_qemu_sync_rename(rv_qemu_sync *s, const char *from, const char *to, rv_err *err)
{
    return enqueue(s, REQ_RENAME, -1, from, to, 0, err);
}

/* (The descriptor is passed, so the names are found where the caller
 * holds the directory, whatever became of its path.) */
static int enqueue_at(rv_qemu_sync *s, uint32_t kind, int dfd, const char *from, const char *to,
                      rv_err *err)
{
    int copy = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot pass the directory to the store helper: %s", strerror(errno));
        return -1;
    }
    return enqueue(s, kind, copy, from, to, FLAG_AT, err);
}

int rv_qemu_sync_commit_at(rv_qemu_sync *s, int dfd, const char *from, const char *to,
                           rv_err *err)
{
    return enqueue_at(s, REQ_RENAME, dfd, from, to, err);
}

int rv_qemu_sync_remove_at(rv_qemu_sync *s, int dfd, const char *name, rv_err *err)
{
    return enqueue_at(s, REQ_UNLINK, dfd, name, NULL, err);
}

bool rv_qemu_sync_busy(const rv_qemu_sync *s)
{
    return s->req != NULL;
}

void rv_qemu_sync_forget(rv_qemu_sync *s)
{
    store_req *r = s->req;
    if (!r)
        return;
    s->req = NULL;
    if (r == store.queue && store.sent) {
        r->owner = NULL;    /* the helper has it: its answer is dropped */
        return;
    }
    for (store_req **p = &store.queue; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            req_free(r);
            return;
        }
}

/* remvirtd is stopping: the runtime files asked for are written (the
 * guests run on, and a restarted remvirtd reads them), waiting for the
 * helper now that the loop serves nobody; the rest is dropped. */
static void drain_run_files(void)
{
    for (store_req **p = &store.queue; *p;) {
        store_req *r = *p;
        if ((r == store.queue && store.sent) || (r->m.flags & FLAG_RUN)) {
            p = &r->next;
            continue;
        }
        if (r->owner)
            r->owner->req = NULL;
        *p = r->next;
        req_free(r);
    }
    while (store.queue && store.h.fd >= 0) {
        struct pollfd pfd = { .fd = store.h.fd, .events = POLLIN };
        if (poll(&pfd, 1, 5000) <= 0) {
            RV_WARN("the store helper did not answer: runtime files may be stale");
            return;
        }
        on_answer(rv_qemu.loop, NULL, 0);
    }
}

void rv_qemu_store_cleanup(void)
{
    drain_run_files();
    if (store.h.fd >= 0)
        ev_child_stop(rv_qemu.loop, &store.child);
    rv_qemu_helper_stop(&store.h);
    while (store.queue) {
        store_req *r = store.queue;
        store.queue = r->next;
        if (r->owner)
            r->owner->req = NULL;
        req_free(r);
    }
    store.sent = false;
}
