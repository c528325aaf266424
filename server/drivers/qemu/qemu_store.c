/* The QEMU driver's files (layout in docs/qemu-driver.md):
 *   config_dir/<name>.xml            a persistent definition
 *   config_dir/autostart/<name>.xml  a symlink to it: start with remvirtd
 *   run_dir/<name>.status            an active domain: pid, id, state,
 *                                    its block jobs, whether it dies with
 *                                    the connection that started it
 *   run_dir/<name>.xml               its live definition
 *   run_dir/<name>.qmp               its monitor socket
 *   run_dir/<name>.log               QEMU's output
 * Every file is replaced atomically (temp file, rename), so a kill -9 at
 * any moment leaves the old file or the new.  Definitions are durable
 * too (fsync of the file before the rename, of the directory after): they
 * must survive a power cut.  Runtime files are not fsynced: they describe
 * processes that a power cut ends anyway, /run is memory, and an fsync
 * per start would stall the loop for every client. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/safe_open.h"
#include "common/util.h"
#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_checkpoint.h"
#include "server/drivers/qemu/qemu_snapshot.h"

RV_LOG_CATEGORY("drivers.qemu.store");

char *rv_qemu_path(const char *dir, const char *name, const char *suffix)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s%s", dir, name, suffix) < 0)
        return NULL;
    return p;
}

static int sys_fail(rv_err *err, const char *what, const char *path)
{
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot %s '%s': %s", what, path,
               strerror(errno));
    return -1;
}

int rv_qemu_mkdirs(const char *path, rv_err *err)
{
    char *copy = strdup(path);
    if (!copy) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    for (char *p = copy + 1; ; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(copy, 0700) < 0 && errno != EEXIST) {
            sys_fail(err, "create directory", copy);
            free(copy);
            return -1;
        }
        *p = c;
        if (c == '\0')
            break;
    }
    free(copy);
    return 0;
}

static void fsync_dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

int rv_qemu_write_file(const char *path, const char *text, bool durable, rv_err *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        sys_fail(err, "create", tmp);
        free(tmp);
        return -1;
    }
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        done += (size_t)n;
    }
    if (done < len || (durable && fsync(fd) < 0) || close(fd) < 0) {
        sys_fail(err, "write", tmp);
        if (done < len)
            close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        sys_fail(err, "rename into", path);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    if (durable)
        fsync_dir_of(path);
    return 0;
}

void rv_qemu_remove_file(const char *dir, const char *name, const char *suffix)
{
    char *path = rv_qemu_path(dir, name, suffix);
    if (path && unlink(path) < 0 && errno != ENOENT)
        RV_WARN("cannot remove '%s': %s", path, strerror(errno));
    free(path);
}

/* The autostart link of name in autostart_dir to its definition in
 * config_dir: made (on) or removed (errors in domain from). */
static int autostart_link(const char *config_dir, const char *autostart_dir, const char *name,
                          bool on, int from, rv_err *err)
{
    char *link = rv_qemu_path(autostart_dir, name, ".xml");
    char *target = rv_qemu_path(config_dir, name, ".xml");
    int rc = 0;
    if (!link || !target)
        rc = rv_err_fail(err, from, RV_ERR_NO_MEMORY, "out of memory");
    else if (!on) {
        if (unlink(link) < 0 && errno != ENOENT)
            rc = rv_err_fail(err, from, RV_ERR_SYSTEM_ERROR, "cannot remove '%s': %s", link,
                             strerror(errno));
    } else if (rv_qemu_mkdirs(autostart_dir, err) < 0)
        rc = -1;
    else if (symlink(target, link) < 0 && errno != EEXIST)
        rc = rv_err_fail(err, from, RV_ERR_SYSTEM_ERROR, "cannot create symlink '%s': %s",
                         link, strerror(errno));
    free(link);
    free(target);
    return rc;
}

/* Whether name's autostart link is in dir. */
static bool autostart_there(const char *dir, const char *name)
{
    char *link = rv_qemu_path(dir, name, ".xml");
    bool there = link && access(link, F_OK) == 0;
    free(link);
    return there;
}

int rv_qemu_set_autostart_link(const char *name, bool on, rv_err *err)
{
    char *dir = rv_qemu_path(rv_qemu.config_dir, "autostart", "");
    int rc = dir ? autostart_link(rv_qemu.config_dir, dir, name, on, RV_FROM_QEMU, err)
                 : rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    free(dir);
    return rc;
}

static int save_status(const qemu_dom *d, rv_qemu_sync *s, rv_err *err)
{
    const char *name = d->live->name;
    char *xml = rv_qemu_domain_format(d->live);
    char *xml_path = rv_qemu_path(rv_qemu.run_dir, name, ".xml");
    char *status_path = rv_qemu_path(rv_qemu.run_dir, name, ".status");
    char *status = NULL;
    char *jobs = rv_qemu_blockjob_status(d);
    /* (a start with AUTODESTROY under way: its job sets d->autodestroy
     * once it is answered) */
    bool autodestroy = d->autodestroy || (d->jobs && d->jobs->kind == QJOB_START &&
                                          (d->jobs->flags & RV_DOMAIN_START_AUTODESTROY));
    int rc = -1;
    if (!xml || !xml_path || !status_path || !jobs ||
        asprintf(&status,
                 "pid %d\nid %d\nstate %d\nreason %d\nvcpus_unplugged %d\nstart_time %llu\n%s%s%s%s%s",
                 (int)d->pid, d->id, d->state, d->reason, d->vcpus_unplugged, d->start_time,
                 d->restore_committed ? "restore " : "",
                 !d->restore_committed ? "" : d->restore_run ? "run " : "paused ",
                 !d->restore_committed ? "" : d->restore_managed ? "managed\n" : "file\n",
                 autodestroy ? "autodestroy\n" : "", jobs) < 0) {
        status = NULL;
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    } else if (rv_qemu_sync_run_write(NULL, xml_path, xml, false, err) == 0 &&
               rv_qemu_sync_run_write(s, status_path, status, true, err) == 0) {
        /* The status goes last, and only when the XML went: whoever finds
         * it finds the XML too. */
        rc = 0;
    }
    free(xml);
    free(xml_path);
    free(status_path);
    free(status);
    free(jobs);
    return rc;
}

int rv_qemu_save_status(const qemu_dom *d, rv_err *err)
{
    return save_status(d, NULL, err);
}

int rv_qemu_save_status_acked(qemu_dom *d, rv_err *err)
{
    return save_status(d, &d->status_sync, err);
}

int rv_qemu_remove_runtime(const char *name, rv_qemu_sync *s)
{
    /* The status first: without it nothing is reattached.  Both go
     * through the store helper, after the writes queued before. */
    char *status = rv_qemu_path(rv_qemu.run_dir, name, ".status");
    char *xml = rv_qemu_path(rv_qemu.run_dir, name, ".xml");
    rv_err err = { 0 };
    int rc = -1;
    if (!status || !xml)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    else if (rv_qemu_sync_run_remove(NULL, status, &err) == 0 &&
             rv_qemu_sync_run_remove(s, xml, &err) == 0)
        rc = 0;
    if (rc < 0)
        RV_WARN("cannot remove the runtime files of '%s': %s", name, err.message);
    rv_err_clear(&err);
    free(status);
    free(xml);
    rv_qemu_remove_file(rv_qemu.run_dir, name, ".qmp");
    rv_qemu_remove_file(rv_qemu.run_dir, name, ".saving");
    return rc;
}

char *rv_qemu_read_file(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(max + 1);
    size_t len = 0;
    while (buf && len < max) {
        ssize_t n = read(fd, buf + len, max - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (buf)
        buf[len] = '\0';
    return buf;
}

char *rv_qemu_log_tail(const char *name, off_t run_start)
{
    char *path = rv_qemu_path(rv_qemu.run_dir, name, ".log");
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    char buf[1025] = "";
    if (fd >= 0) {
        off_t size = lseek(fd, 0, SEEK_END);
        off_t from = size - run_start > 1024 ? size - 1024 : run_start;
        ssize_t n = pread(fd, buf, 1024, from);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    /* Whole lines only, without the trailing newline. */
    char *text = buf;
    if (strlen(buf) == 1024 && strchr(buf, '\n'))
        text = strchr(buf, '\n') + 1;
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    for (char *p = text; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return strdup(text);
}

static rv_qemu_domain_def *load_def(const char *path)
{
    char *xml = rv_qemu_read_file(path, RV_QEMU_DOMAIN_XML_MAX);
    if (!xml) {
        RV_WARN("cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    rv_err err = { 0 };
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), &err);
    if (!def)
        RV_WARN("ignoring '%s': %s", path, err.message);
    rv_err_clear(&err);
    free(xml);
    return def;
}

/* Whether pid is the QEMU started for guest `name`: the process that
 * started at start_time (so a reused pid is never taken for the guest),
 * whose -name is exactly the guest's (escaped as on its command line, so
 * 'a' never claims the QEMU of 'a,b').  start_time 0: recorded by a
 * remvirtd that did not record it; the name alone decides. */
static bool is_guest_process(pid_t pid, unsigned long long start_time, const char *name)
{
    if (start_time && rv_qemu_proc_start_time(pid) != start_time)
        return false;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    static char buf[65536];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    char *want = rv_qemu_name_arg(name);
    bool found = false;
    if (n > 0 && want) {
        buf[n] = '\0';
        /* "-name" then its argument, as rv_qemu_build_argv wrote them. */
        for (ssize_t i = 0; i < n && !found; i += (ssize_t)strlen(buf + i) + 1) {
            ssize_t next = i + (ssize_t)strlen(buf + i) + 1;
            found = strcmp(buf + i, "-name") == 0 && next < n && strcmp(buf + next, want) == 0;
        }
    }
    free(want);
    return found;
}

static void load_runtime(const char *name)
{
    char *status_path = rv_qemu_path(rv_qemu.run_dir, name, ".status");
    char *xml_path = rv_qemu_path(rv_qemu.run_dir, name, ".xml");
    char *status = status_path ? rv_qemu_read_file(status_path, RV_QEMU_STATUS_MAX) : NULL;
    int pid = 0, id = -1, state = 0, reason = 0;
    if (!status || sscanf(status, "pid %d\nid %d\nstate %d\nreason %d", &pid, &id, &state,
                          &reason) != 4 || pid <= 0) {
        RV_WARN("ignoring the unreadable runtime status '%s'", status_path ? status_path : name);
        free(status);
        free(status_path);
        free(xml_path);
        rv_qemu_remove_runtime(name, NULL);
        return;
    }
    /* (later lines: older remvirtds wrote none) */
    bool vcpus_unplugged = strstr(status, "\nvcpus_unplugged 1\n") != NULL;
    const char *st = strstr(status, "\nstart_time ");
    unsigned long long start_time = st ? strtoull(st + 12, NULL, 10) : 0;
    /* A restore past its commit point (qemu_process.c): the QEMU holds
     * the image's state; it is reattached and the restore finished. */
    const char *restore = strstr(status, "\nrestore ");
    bool restore_committed = restore != NULL;
    bool restore_run = restore && strncmp(restore, "\nrestore run ", 13) == 0;
    bool restore_managed = restore && strstr(restore, " managed\n") != NULL;
    bool autodestroy = strstr(status, "\nautodestroy\n") != NULL;
    free(status_path);
    rv_qemu_domain_def *live = xml_path ? load_def(xml_path) : NULL;
    free(xml_path);
    qemu_dom *d = rv_qemu_find_name(name);
    bool alive = live && kill(pid, 0) == 0 && is_guest_process(pid, start_time, name);
    if (alive && state == RV_DOMAIN_PAUSED && reason == RV_DOMAIN_PAUSED_STARTING_UP &&
        !restore_committed) {
        /* remvirtd died in the middle of starting it: that start failed,
         * and nobody is left to finish it. */
        RV_WARN("domain '%s' (pid %d) was still starting when remvirtd stopped: killing it",
                name, pid);
        kill(pid, SIGKILL);
        rv_qemu_domain_free(live);
        rv_qemu_remove_runtime(name, NULL);
        if (d) {
            /* (A restore killed before its commit point: its image is
             * there as before.) */
            d->state = RV_DOMAIN_SHUTOFF;
            d->reason = d->def && rv_qemu_has_managed_save(name) ? RV_DOMAIN_SHUTOFF_SAVED
                                                                 : RV_DOMAIN_SHUTOFF_FAILED;
        }
        free(status);
        return;
    }
    if (alive && rv_qemu_has_managed_save(name) && rv_qemu_save_marker_take(name) >= 0) {
        /* A save was past its commit point (its image whole under its
         * name) when remvirtd was killed: the guest's state is in the
         * image and this QEMU (paused, done migrating) was to quit.  It
         * goes now, before anyone can see the domain run on beside its
         * image (start-up may wait). */
        RV_INFO("domain '%s': its save completed while remvirtd was away: stopping pid %d", name,
                pid);
        kill(pid, SIGKILL);
        for (int i = 0; i < 500 && kill(pid, 0) == 0 && is_guest_process(pid, start_time, name); i++)
            usleep(10000);
        alive = false;
    }
    if (!alive) {
        /* It died while remvirtd was away: crashed, unless its managed
         * image is whole (renamed into place only once complete): then
         * it was told to quit after a save, and remvirtd was killed
         * before it saw the exit (or a restore past its commit point,
         * whose guest never ran, lost its QEMU: the image is still its
         * state). */
        rv_qemu_save_marker_take(name);
        bool saved = rv_qemu_has_managed_save(name);
        RV_WARN("domain '%s' (pid %d) is gone since remvirtd last ran: shut off (%s)", name, pid,
                saved ? "saved" : "crashed");
        rv_qemu_domain_free(live);
        rv_qemu_remove_runtime(name, NULL);
        if (d) {
            d->state = RV_DOMAIN_SHUTOFF;
            d->reason = saved ? RV_DOMAIN_SHUTOFF_SAVED : RV_DOMAIN_SHUTOFF_CRASHED;
        }
        free(status);
        return;
    }
    if (!d && !(d = rv_qemu_dom_new(live))) {
        rv_qemu_domain_free(live);
        free(status);
        return;
    }
    d->live = live;
    d->pid = pid;
    d->start_time = start_time ? start_time : rv_qemu_proc_start_time(pid);
    d->id = id;
    d->vcpus_unplugged = vcpus_unplugged;
    d->restore_committed = restore_committed;
    d->restore_run = restore_run;
    d->restoring = restore_committed;
    if (restore_committed && restore_managed)
        d->restore_managed = rv_qemu_managed_save_path(name);
    d->state = state;
    d->reason = reason;
    if (id >= rv_qemu.next_id)
        rv_qemu.next_id = id + 1;
    RV_INFO("domain '%s' is still running (pid %d, id %d): reattaching", name, pid, id);
    rv_qemu_blockjob_restore(d, status);
    free(status);
    rv_qemu_reattach(d);
    if (autodestroy) {
        /* As libvirtd: the connection it was to die with is gone. */
        RV_INFO("domain '%s': started with AUTODESTROY by a connection of the remvirtd that stopped: "
                "destroyed", name);
        rv_qemu_job_add(d, QJOB_DESTROY, 0, NULL, NULL);
    }
}

/* ---- directories of definitions ---- */

/* A file a write left behind when remvirtd was killed before its rename:
 * "<file>.tmpXXXXXX" (rv_qemu_write_file) or "<file>.tmp" (qemu_defwrite.c). */
static bool is_temp_leftover(const char *name)
{
    const char *t = strstr(name, ".tmp");
    while (t && strstr(t + 1, ".tmp"))
        t = strstr(t + 1, ".tmp");
    if (!t || t == name)
        return false;
    size_t rest = strlen(t + 4);
    if (rest == 0)
        return true;
    if (rest != 6)
        return false;
    for (const char *p = t + 4; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

void rv_qemu_clean_temp_files(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.' || !is_temp_leftover(e->d_name))
            continue;
        if (unlinkat(dirfd(dp), e->d_name, 0) == 0)
            RV_INFO("removed '%s/%s', left by a write that remvirtd did not finish", dir,
                    e->d_name);
        else if (errno != ENOENT)
            RV_WARN("cannot remove '%s/%s': %s", dir, e->d_name, strerror(errno));
    }
    closedir(dp);
}

/* The whole of a definition file, NUL-terminated; NULL with err (not a
 * regular file, over max bytes, unreadable). */
static char *read_def_file(int dirfd_, const char *file, size_t max, const char *what,
                           rv_err *err)
{
    const char *kind = NULL;
    int fd = rv_open_file_at(dirfd_, file, O_RDONLY, 0, false, &kind);
    struct stat sb;
    char *text = NULL;
    if (fd < 0 && kind) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_XML_ERROR, "it is a %s, not a regular file", kind);
    } else if (fd < 0 || fstat(fd, &sb) < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot read it: %s", strerror(errno));
    } else if ((size_t)sb.st_size > max) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_XML_ERROR,
                   "it is too large: %lld bytes, over the limit of %zu for a %s definition",
                   (long long)sb.st_size, max, what);
    } else if (!(text = malloc(max + 1))) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    } else {
        /* It may have grown since the fstat: read one byte more than max. */
        size_t len = 0;
        for (;;) {
            ssize_t n = read(fd, text + len, max + 1 - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            len += (size_t)n;
            if (len > max)
                break;
        }
        if (len > max) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_XML_ERROR,
                       "it is too large: over the limit of %zu bytes for a %s definition", max,
                       what);
            free(text);
            text = NULL;
        } else {
            text[len] = '\0';
        }
    }
    if (fd >= 0)
        close(fd);
    return text;
}

typedef struct loaded_def {
    char *file;
    void *def;
    const unsigned char *uuid;
    const char *unique;
    bool refused;
} loaded_def;

static int by_file(const void *a, const void *b)
{
    return strcmp(((const loaded_def *)a)->file, ((const loaded_def *)b)->file);
}

static int by_uuid(const void *a, const void *b)
{
    int c = memcmp(((const loaded_def *)a)->uuid, ((const loaded_def *)b)->uuid, 16);
    return c ? c : by_file(a, b);
}

/* Those without a unique last. */
static int by_unique(const void *a, const void *b)
{
    const char *x = ((const loaded_def *)a)->unique, *y = ((const loaded_def *)b)->unique;
    int c = !x || !y ? (x == NULL) - (y == NULL) : strcmp(x, y);
    return c ? c : by_file(a, b);
}

static void refuse_pair(const char *dir, const rv_qemu_def_family *fam, const char *what,
                        const char *value, loaded_def *a, loaded_def *b)
{
    RV_ERROR("%s/%s and %s/%s define the same %s %s '%s': neither is loaded until one is "
             "removed or changed", dir, a->file, dir, b->file, fam->what, what, value);
    a->refused = b->refused = true;
}

void rv_qemu_load_defs(const char *dir, const rv_qemu_def_family *fam, void *opaque)
{
    rv_qemu_clean_temp_files(dir);
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    loaded_def *files = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= 4 || strcmp(e->d_name + len - 4, ".xml") != 0)
            continue;
        rv_err err = { 0 };
        loaded_def one = { .file = strdup(e->d_name) };
        char *text = one.file ? read_def_file(dirfd(dp), e->d_name, fam->max, fam->what, &err) : NULL;
        const char *name = NULL;
        if (text)
            one.def = fam->parse(text, &name, &one.uuid, &one.unique, opaque, &err);
        free(text);
        char expect[RV_UUID_STRING_LEN] = "";
        if (one.def && !name)
            rv_uuid_format(one.uuid, expect);
        const char *key = name ? name : expect;
        if (one.def && (strlen(key) != len - 4 || strncmp(key, e->d_name, len - 4) != 0)) {
            rv_err_set(&err, RV_FROM_QEMU, RV_ERR_XML_ERROR,
                       "it defines %s '%s', whose file is '%s.xml'", fam->what, key, key);
            fam->free(one.def);
            one.def = NULL;
        }
        loaded_def *more = !one.def || n < cap ? files
                                              : reallocarray(files, cap ? cap * 2 : 16, sizeof(*files));
        if (!one.def || !more) {
            RV_WARN("%s/%s is not used: %s", dir, e->d_name,
                    err.message ? err.message : "out of memory");
            if (one.def)
                fam->free(one.def);
            free(one.file);
        } else {
            if (n == cap)
                cap = cap ? cap * 2 : 16;
            files = more;
            files[n++] = one;
        }
        rv_err_clear(&err);
    }
    closedir(dp);
    if (n == 0)
        return;
    /* Two files that claim one UUID: neither can be told to be the right
     * one, so neither is loaded; the operator decides.  (Names cannot
     * clash: each file is named after its definition.) */
    qsort(files, n, sizeof(*files), by_uuid);
    for (size_t i = 0; i + 1 < n; i++)
        if (memcmp(files[i].uuid, files[i + 1].uuid, 16) == 0) {
            char uuid[RV_UUID_STRING_LEN];
            rv_uuid_format(files[i].uuid, uuid);
            refuse_pair(dir, fam, "UUID", uuid, &files[i], &files[i + 1]);
        }
    qsort(files, n, sizeof(*files), by_unique);
    for (size_t i = 0; i + 1 < n && files[i + 1].unique; i++)
        if (strcmp(files[i].unique, files[i + 1].unique) == 0)
            refuse_pair(dir, fam, fam->unique_what, files[i].unique, &files[i], &files[i + 1]);
    qsort(files, n, sizeof(*files), by_file);
    for (size_t i = 0; i < n; i++) {
        char *path = rv_qemu_path(dir, files[i].file, "");
        if (files[i].refused || !path)
            fam->free(files[i].def);
        else
            fam->add(files[i].def, path, opaque);
        free(path);
        free(files[i].file);
    }
    free(files);
}

/* Each name in dir whose file ends in suffix, passed to fn without it. */
static void each_file(const char *dir, const char *suffix, void (*fn)(const char *name, const char *path))
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    size_t slen = strlen(suffix);
    while ((e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= slen || strcmp(e->d_name + len - slen, suffix) != 0)
            continue;
        char *name = strndup(e->d_name, len - slen);
        char *path = rv_qemu_path(dir, e->d_name, "");
        if (name && path)
            fn(name, path);
        free(name);
        free(path);
    }
    closedir(dp);
}

static void *parse_domain(const char *text, const char **name, const unsigned char **uuid,
                          const char **unique, void *opaque, rv_err *err)
{
    (void)unique, (void)opaque;
    rv_qemu_domain_def *def = rv_qemu_domain_parse(text, strlen(text), err);
    if (def) {
        *name = def->name;
        *uuid = def->uuid;
    }
    return def;
}

static void add_domain(void *def_, const char *path, void *opaque)
{
    (void)path, (void)opaque;
    rv_qemu_domain_def *def = def_;
    qemu_dom *d = rv_qemu_dom_new(def);
    if (!d) {
        rv_qemu_domain_free(def);
        return;
    }
    d->def = def;
    char *dir = rv_qemu_path(rv_qemu.config_dir, "autostart", "");
    d->autostart = dir && autostart_there(dir, def->name);
    free(dir);
}

static void free_domain(void *def)
{
    rv_qemu_domain_free(def);
}

static const rv_qemu_def_family domain_files = {
    "domain", NULL, RV_QEMU_DOMAIN_XML_MAX, parse_domain, add_domain, free_domain,
};

static void load_one_runtime(const char *name, const char *path)
{
    (void)path;
    load_runtime(name);
}

static void mark_saved(void *obj, void *ctx)
{
    qemu_dom *d = obj;
    (void)ctx;
    if (d->def && rv_qemu_has_managed_save(d->def->name))
        d->reason = RV_DOMAIN_SHUTOFF_SAVED;
}

static void autostart(void *obj, void *ctx)
{
    qemu_dom *d = obj;
    (void)ctx;
    if (d->def && d->autostart && !rv_qemu_dom_active(d)) {
        RV_INFO("autostarting domain '%s'", d->def->name);
        rv_qemu_job_add(d, QJOB_START, 0, NULL, NULL);
    }
}

/* Start-up (it may wait on the disk): remove path and fsync its
 * directory; false when it stays. */
static bool remove_durably(const char *path)
{
    if (unlink(path) < 0 && errno != ENOENT) {
        RV_WARN("cannot remove '%s': %s", path, strerror(errno));
        return false;
    }
    fsync_dir_of(path);
    return true;
}

/* An undefine that a kill interrupted after its commit point (the
 * definition renamed to its tombstone, qemu_defwrite.c): what it was to
 * remove goes now, the tombstone last. */
static void finish_undefine(const char *dir, const char *entry)
{
    const char *mark = strstr(entry, ".xml" RV_QEMU_TOMBSTONE);
    char *end = NULL;
    unsigned long flags = mark ? strtoul(mark + strlen(".xml" RV_QEMU_TOMBSTONE), &end, 16) : 0;
    if (!mark || mark == entry || !end || *end)
        return;
    char *name = strndup(entry, (size_t)(mark - entry));
    char *tomb = rv_qemu_path(dir, entry, "");
    char *def = name ? rv_qemu_path(dir, name, ".xml") : NULL;
    char *image = name && (flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE) ? rv_qemu_managed_save_path(name) : NULL;
    char *meta = name && (flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA) ? rv_qemu_snapshot_metadata_path(name) : NULL;
    char *chk = name && (flags & RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA) ? rv_qemu_checkpoint_metadata_path(name) : NULL;
    if (name && tomb && def && access(def, F_OK) == 0) {
        /* Defined again since (its cleanup had failed): the new domain's
         * files stay. */
        remove_durably(tomb);
    } else if (name && tomb) {
        RV_INFO("finishing the undefine of domain '%s' (flags 0x%lx)", name, flags);
        if ((!image || remove_durably(image)) && (!meta || remove_durably(meta)) &&
            (!chk || remove_durably(chk)))
            remove_durably(tomb);
    }
    free(name);
    free(tomb);
    free(def);
    free(image);
    free(meta);
    free(chk);
}

/* ---- families with a run directory (rv_qemu_family) ---- */

static void *family_parse(const char *text, const char **name, const unsigned char **uuid,
                          const char **unique, void *opaque, rv_err *err)
{
    (void)unique;
    const rv_qemu_family *fam = opaque;
    void *def = fam->parse(text, err);
    if (def) {
        *name = fam->list->kind->name_of(&def);     /* (an object begins with its def) */
        *uuid = fam->list->kind->uuid_of(&def);
    }
    return def;
}

static void family_add(void *def, const char *path, void *opaque)
{
    (void)path;
    const rv_qemu_family *fam = opaque;
    const char *name = fam->list->kind->name_of(&def);
    rv_err err = { 0 };
    void *obj = rv_obj_find_name(fam->list, name);
    if (obj) {
        fam->ran(obj, def);     /* the run dir's copy of a defined one */
    } else if (!fam->add(def, fam->loading_config, &err)) {
        RV_WARN("%s '%s' is not loaded: %s", fam->files.what, name, err.message);
        fam->files.free(def);
    }
    rv_err_clear(&err);
}

/* An autostart link whose definition is gone (an undefine killed between
 * the two removals) is dropped. */
int rv_qemu_family_load(rv_qemu_family *fam)
{
    if (!(fam->config_dir = rv_qemu_path(rv_qemu.config_dir, fam->sub, "")) ||
        !(fam->autostart_dir = rv_qemu_path(fam->config_dir, "autostart", "")) ||
        !(fam->run_dir = rv_qemu_path(rv_qemu.run_dir, fam->sub, ""))) {
        RV_ERROR("QEMU driver: out of memory; no %s", fam->sub);
        return -1;
    }
    fam->files.parse = family_parse;
    fam->files.add = family_add;
    rv_qemu_drop_dangling_links(fam->autostart_dir);
    fam->loading_config = true;
    rv_qemu_load_defs(fam->config_dir, &fam->files, fam);
    fam->loading_config = false;
    rv_qemu_load_defs(fam->run_dir, &fam->files, fam);
    return 0;
}

void rv_qemu_family_free(rv_qemu_family *fam)
{
    free(fam->config_dir);
    free(fam->autostart_dir);
    free(fam->run_dir);
    fam->config_dir = fam->autostart_dir = fam->run_dir = NULL;
}

int rv_qemu_family_set_autostart(const rv_qemu_family *fam, const char *name, bool on,
                                 rv_err *err)
{
    return autostart_link(fam->config_dir, fam->autostart_dir, name, on, fam->from, err);
}

bool rv_qemu_family_autostart(const rv_qemu_family *fam, const char *name)
{
    return autostart_there(fam->autostart_dir, name);
}

int rv_qemu_family_save_run(const rv_qemu_family *fam, const char *name, char *xml, rv_err *err)
{
    char *path = rv_qemu_path(fam->run_dir, name, ".xml");
    int rc = !xml || !path ? rv_err_fail(err, fam->from, RV_ERR_NO_MEMORY, "out of memory")
             : rv_qemu_mkdirs(fam->run_dir, err) < 0 ? -1
                                                    : rv_qemu_write_file(path, xml, false, err);
    free(xml);
    free(path);
    return rc;
}

int rv_qemu_family_define_step(rv_qemu_fileop *op, const rv_qemu_family *fam, const char *name,
                               char *xml, rv_err *err)
{
    if (!rv_obj_find_name(fam->list, name) && rv_obj_check_room(fam->list, err) < 0) {
        free(xml);
        return -1;
    }
    if (!xml || rv_qemu_fileop_step(op, rv_qemu_path(fam->config_dir, name, ".xml"), xml, true) < 0)
        return rv_err_fail(err, fam->from, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

void *rv_qemu_family_get_queued(const rv_qemu_family *fam, const unsigned char uuid[16],
                                rv_err *err)
{
    const rv_obj_kind *kind = fam->list->kind;
    void *obj = rv_obj_find_uuid(fam->list, uuid);
    if (!obj)
        rv_err_set(err, kind->from, kind->no_object, "%s: the %s was undefined", kind->not_found,
                   kind->what);
    return obj;
}

int rv_qemu_family_undefine_steps(rv_qemu_fileop *op, const rv_qemu_family *fam,
                                  const char *name, rv_err *err)
{
    if (rv_qemu_fileop_step(op, rv_qemu_path(fam->config_dir, name, ".xml"), NULL, true) < 0 ||
        rv_qemu_fileop_step(op, rv_qemu_path(fam->autostart_dir, name, ".xml"), NULL, false) < 0)
        return rv_err_fail(err, fam->from, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

void rv_qemu_drop_dangling_links(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    struct dirent *e;
    bool dropped = false;
    while ((e = readdir(dp))) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISLNK(st.st_mode) || fstatat(dirfd(dp), e->d_name, &st, 0) == 0 || errno != ENOENT)
            continue;
        RV_INFO("removing the autostart link %s/%s: its definition is gone", dir, e->d_name);
        dropped |= unlinkat(dirfd(dp), e->d_name, 0) == 0;
    }
    if (dropped)
        fsync(dirfd(dp));
    closedir(dp);
}

/* entry is "<name>.xml<mark>": name malloc'd, else NULL. */
static char *rename_entry_name(const char *entry, const char *mark)
{
    size_t len = strlen(entry), tail = strlen(".xml") + strlen(mark);
    if (len <= tail || strcmp(entry + len - strlen(mark), mark) != 0 ||
        strncmp(entry + len - tail, ".xml", 4) != 0)
        return NULL;
    return strndup(entry, len - tail);
}

/* The snapshot and checkpoint metadata of the domain whose old
 * definition is in old_file take new_name, if they have not yet; false
 * when one stays. */
static bool rename_snapshots(const char *old_file, const char *new_name)
{
    rv_qemu_domain_def *old = load_def(old_file);
    char *(*const paths[])(const char *) = { rv_qemu_snapshot_metadata_path,
                                             rv_qemu_checkpoint_metadata_path };
    bool all = true;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char *from = old ? paths[i](old->name) : NULL;
        char *to = paths[i](new_name);
        bool done = !from || !to || access(from, F_OK) < 0 || access(to, F_OK) == 0 ||
                    rename(from, to) == 0;
        if (!done)
            RV_WARN("cannot rename '%s' to '%s': %s", from, to, strerror(errno));
        all &= done;
        free(from);
        free(to);
    }
    rv_qemu_domain_free(old);
    return all;
}

/* Renames a kill interrupted (qemu_defwrite.c): "-old" says the commit
 * was made, so the new definition takes its name and the old goes; a
 * "-new" alone did not commit and goes.  (The links left dangling are
 * dropped after, by finish_undefines.) */
static void finish_renames(void)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *mark = pass == 0 ? RV_QEMU_RENAME_OLD : RV_QEMU_RENAME_NEW;
        DIR *dp = opendir(rv_qemu.config_dir);
        if (!dp)
            return;
        struct dirent *e;
        while ((e = readdir(dp))) {
            char *name = e->d_name[0] != '.' ? rename_entry_name(e->d_name, mark) : NULL;
            if (!name)
                continue;
            char *fresh = rv_qemu_rename_file(name, RV_QEMU_RENAME_NEW);
            char *def = rv_qemu_path(rv_qemu.config_dir, name, ".xml");
            char *entry = rv_qemu_path(rv_qemu.config_dir, e->d_name, "");
            if (pass == 1 && entry) {
                RV_INFO("removing '%s': a rename to '%s' that did not commit", entry, name);
                remove_durably(entry);
            } else if (fresh && def && entry) {
                RV_INFO("finishing the rename of a domain to '%s'", name);
                if (access(fresh, F_OK) == 0 && rename(fresh, def) < 0)
                    RV_WARN("cannot rename '%s' to '%s': %s", fresh, def, strerror(errno));
                else if (rename_snapshots(entry, name))
                    remove_durably(entry);      /* (fsyncs the renames too) */
            }
            free(name);
            free(fresh);
            free(def);
            free(entry);
        }
        closedir(dp);
    }
}

static void finish_undefines(void)
{
    DIR *dp = opendir(rv_qemu.config_dir);
    if (!dp)
        return;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (e->d_name[0] != '.' && strstr(e->d_name, ".xml" RV_QEMU_TOMBSTONE))
            finish_undefine(rv_qemu.config_dir, e->d_name);
    closedir(dp);
    char *links = rv_qemu_path(rv_qemu.config_dir, "autostart", "");
    if (links)
        rv_qemu_drop_dangling_links(links);
    free(links);
}

void rv_qemu_load_all(void)
{
    rv_qemu.next_id = 1;
    finish_renames();
    finish_undefines();
    rv_qemu_load_defs(rv_qemu.config_dir, &domain_files, NULL);
    rv_qemu_save_dir_clean();
    /* An inactive domain with a managed image was saved (the reason is
     * not recorded elsewhere). */
    rv_dom_list_each(&rv_qemu.doms, mark_saved, NULL);
    char *snapshots = rv_qemu_path(rv_qemu.config_dir, "snapshot", "");
    if (snapshots)
        rv_qemu_clean_temp_files(snapshots);
    free(snapshots);
    rv_qemu_clean_temp_files(rv_qemu.run_dir);
    each_file(rv_qemu.run_dir, ".status", load_one_runtime);
    rv_qemu_snapshots_recover();
    rv_dom_list_each(&rv_qemu.doms, autostart, NULL);
}
