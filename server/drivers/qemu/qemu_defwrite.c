/* Definition writes (and removals) off the loop, through the store helper
 * (qemu_sync.c).  A define, or a change of a definition (tuning, setmem
 * --config, ...), is queued on its domain with the new definition; the
 * helper writes it (temporary file, fsync, rename, directory fsync), and
 * only then (the commit point: the rename) does the definition in memory
 * become the new one, the DEFINED event go out and the call get its
 * answer.  If the write fails, nothing changed, in memory or on disk, and
 * the call gets the error.  One write at a time per domain, in the order
 * asked; a change is made to the newest definition, written or queued, so
 * when a write fails the changes queued after it (built on it) fail too.
 *
 * An undefine is such a write too.  Its commit point is one rename: the
 * definition becomes the tombstone "<name>.xml.undefine-<flags>", which
 * remvirtd does not load as a domain.  After it (never before) the managed
 * save image (--managed-save), the snapshot metadata
 * (--snapshots-metadata), the autostart link and the tombstone go; a
 * remvirtd killed in between finds the tombstone at start-up and finishes
 * (rv_qemu_undefine_finish).  The domain leaves memory at the commit.
 *
 * A rename (of a shut-off domain) is one too, in steps: the new
 * definition is written as "<new>.xml.rename-new" (not loaded as a
 * domain), the new autostart link made (dangling until the end), then
 * the commit point, one rename: "<old>.xml" becomes "<new>.xml.rename-old".
 * After it "<new>.xml.rename-new" becomes "<new>.xml", the snapshot
 * metadata takes the new name, and the old link and "<new>.xml.rename-old"
 * go.  At start-up (rv_qemu_renames_finish) a
 * "-new" without its "-old" is a rename that did not commit (removed), a
 * "-old" one that did (finished); dangling links are dropped after. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_checkpoint.h"
#include "server/drivers/qemu/qemu_snapshot.h"

RV_LOG_CATEGORY("drivers.qemu.defwrite");

/* An undefine's steps after the commit, in order. */
enum { UNDEF_RENAME, UNDEF_IMAGE, UNDEF_SNAPSHOTS, UNDEF_CHECKPOINTS, UNDEF_AUTOSTART,
       UNDEF_TOMBSTONE, UNDEF_DONE };
/* A rename's steps; RN_COMMIT is its commit point. */
enum { RN_NEW, RN_LINK, RN_COMMIT, RN_PROMOTE, RN_SNAPSHOTS, RN_CHECKPOINTS, RN_OLD_LINK, RN_OLD,
       RN_DONE };

typedef struct qemu_def_write {
    qemu_dom *dom;
    rv_qemu_domain_def *def;    /* the new definition (owned until the commit) */
    bool derived;               /* a change built on the writes queued before it */
    bool remove;                /* an undefine */
    bool rename;                /* a rename: def is the definition under its new name */
    bool link;                  /* (a rename) of an autostarted domain */
    bool no_event;              /* a change libvirtd sends no DEFINED event for */
    unsigned int undefine_flags;
    int step;                   /* an undefine's next UNDEF_* */
    bool committed;
    char *name;                 /* an undefine's or a rename's domain (its old name) */
    char *new_name;             /* a rename's */
    char *xml;
    rv_deferred *reply;         /* NULL: nobody waits, or then does */
    rv_nonnull_domain *ret_dom; /* in reply's result */
    rv_qemu_def_then_fn then;   /* instead of reply: told the outcome */
    void *then_data;
    rv_qemu_sync sync;
    struct qemu_def_write *next;
} qemu_def_write;

static void write_free(qemu_def_write *w)
{
    rv_qemu_domain_free(w->def);
    free(w->name);
    free(w->new_name);
    free(w->xml);
    free(w);
}

static int nomem(rv_err *err)
{
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

char *rv_qemu_undefine_tombstone(const char *name, unsigned int flags)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s.xml" RV_QEMU_TOMBSTONE "%x", rv_qemu.config_dir, name, flags) < 0)
        return NULL;
    return p;
}

/* The file an undefine's step changes: 0 and *from (and *to) set, 1 when
 * the step has nothing to do, -1 without memory. */
static int undefine_step_paths(const qemu_def_write *w, char **from, char **to)
{
    *from = *to = NULL;
    switch (w->step) {
    case UNDEF_RENAME:
        *from = rv_qemu_path(rv_qemu.config_dir, w->name, ".xml");
        *to = rv_qemu_undefine_tombstone(w->name, w->undefine_flags);
        return *from && *to ? 0 : -1;
    case UNDEF_IMAGE:
        if (!(w->undefine_flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE))
            return 1;
        *from = rv_qemu_managed_save_path(w->name);
        break;
    case UNDEF_SNAPSHOTS:
        if (!(w->undefine_flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA))
            return 1;
        *from = rv_qemu_snapshot_metadata_path(w->name);
        break;
    case UNDEF_CHECKPOINTS:
        if (!(w->undefine_flags & RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA))
            return 1;
        *from = rv_qemu_checkpoint_metadata_path(w->name);
        break;
    case UNDEF_AUTOSTART: {
        char *dir = rv_qemu_path(rv_qemu.config_dir, "autostart", "");
        *from = dir ? rv_qemu_path(dir, w->name, ".xml") : NULL;
        free(dir);
        break;
    }
    case UNDEF_TOMBSTONE:
        *from = rv_qemu_undefine_tombstone(w->name, w->undefine_flags);
        break;
    default:
        return 1;
    }
    return *from ? 0 : -1;
}

char *rv_qemu_rename_file(const char *name, const char *mark)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s.xml%s", rv_qemu.config_dir, name, mark) < 0)
        return NULL;
    return p;
}

static char *autostart_path(const char *name)
{
    char *dir = rv_qemu_path(rv_qemu.config_dir, "autostart", "");
    char *link = dir ? rv_qemu_path(dir, name, ".xml") : NULL;
    free(dir);
    return link;
}

/* As undefine_step_paths, for a rename's step (RN_LINK is the loop's). */
static int rename_step_paths(const qemu_def_write *w, char **from, char **to)
{
    const char *new_name = w->new_name;
    *from = *to = NULL;
    switch (w->step) {
    case RN_COMMIT:
        *from = rv_qemu_path(rv_qemu.config_dir, w->name, ".xml");
        *to = rv_qemu_rename_file(new_name, RV_QEMU_RENAME_OLD);
        return *from && *to ? 0 : -1;
    case RN_PROMOTE:
        *from = rv_qemu_rename_file(new_name, RV_QEMU_RENAME_NEW);
        *to = rv_qemu_path(rv_qemu.config_dir, new_name, ".xml");
        return *from && *to ? 0 : -1;
    case RN_SNAPSHOTS:
    case RN_CHECKPOINTS: {
        char *(*path)(const char *) = w->step == RN_SNAPSHOTS ? rv_qemu_snapshot_metadata_path
                                                              : rv_qemu_checkpoint_metadata_path;
        *from = path(w->name);
        *to = path(new_name);
        if (*from && *to && access(*from, F_OK) < 0) {
            free(*from);
            free(*to);
            *from = *to = NULL;
            return 1;       /* (no such metadata) */
        }
        return *from && *to ? 0 : -1;
    }
    case RN_OLD_LINK:
        if (!w->link)
            return 1;
        *from = autostart_path(w->name);
        break;
    case RN_OLD:
        *from = rv_qemu_rename_file(new_name, RV_QEMU_RENAME_OLD);
        break;
    default:
        return 1;
    }
    return *from ? 0 : -1;
}

static void on_written(rv_qemu_sync *s, int error);

/* Begin the request of the step paths() names (a rename of from to to,
 * or a removal of from): 0 begun, 1 the step has nothing to do, -1 with
 * err set. */
static int begin_path_step(qemu_def_write *w,
                           int (*paths)(const qemu_def_write *w, char **from, char **to),
                           rv_err *err)
{
    char *from, *to;
    int rc = paths(w, &from, &to);
    if (rc < 0)
        nomem(err);
    else if (rc == 0)
        rc = to ? rv_qemu_sync_rename(&w->sync, from, to, err)
                : rv_qemu_sync_remove(&w->sync, from, err);
    free(from);
    free(to);
    return rc;
}

/* A rename that failed before its commit: what it made goes (the loop
 * touches the disk here, on this error path only: a leftover link would
 * autostart a later domain of the new name). */
static void rename_undo(const qemu_def_write *w)
{
    char *pending = rv_qemu_rename_file(w->new_name, RV_QEMU_RENAME_NEW);
    char *link = w->link ? autostart_path(w->new_name) : NULL;
    if (pending && unlink(pending) < 0 && errno != ENOENT)
        RV_WARN("cannot remove '%s': %s", pending, strerror(errno));
    if (link && unlink(link) < 0 && errno != ENOENT)
        RV_WARN("cannot remove '%s': %s", link, strerror(errno));
    free(pending);
    free(link);
}

/* The rename's own steps from w->step: true when one is under way or
 * none is left, false with err. */
static bool begin_rename(qemu_def_write *w, rv_err *err)
{
    for (; w->step < RN_DONE; w->step++) {
        rv_crash_point("rename", w->step + 1);
        const char *new_name = w->new_name;
        if (w->step == RN_NEW) {
            char *path = rv_qemu_rename_file(new_name, RV_QEMU_RENAME_NEW);
            int rc = path ? rv_qemu_sync_write(&w->sync, path, w->xml, err) : nomem(err);
            free(path);
            return rc == 0;
        }
        if (w->step == RN_LINK) {
            if (w->link && rv_qemu_set_autostart_link(new_name, true, err) < 0)
                return false;
            continue;
        }
        if (w->step == RN_COMMIT) {
            /* Another domain may have taken the name since it was asked. */
            qemu_dom *other = rv_qemu_find_name(new_name);
            if (other && other != w->dom) {
                rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain with name '%s' already exists",
                           new_name);
                return false;
            }
        }
        int rc = begin_path_step(w, rename_step_paths, err);
        if (rc != 1)
            return rc == 0;
    }
    return true;
}

/* Begin the head write's next request; false (err set) when it cannot. */
static bool begin(qemu_def_write *w, rv_err *err)
{
    w->sync.done = on_written;
    w->sync.data = w;
    if (w->rename)
        return begin_rename(w, err);
    if (w->remove) {
        for (; w->step < UNDEF_DONE; w->step++) {
            rv_crash_point("undefine", w->step + 1);
            int rc = begin_path_step(w, undefine_step_paths, err);
            if (rc != 1)
                return rc == 0;
        }
        return true;
    }
    const rv_qemu_domain_def *def = w->def;
    char *path = rv_qemu_path(rv_qemu.config_dir, def->name, ".xml");
    rv_crash_point("define", 1);
    int rc = path ? rv_qemu_sync_write(&w->sync, path, w->xml, err) : nomem(err);
    free(path);
    return rc == 0;
}

/* The commit: the file is in place (err NULL), or nothing changed. */
static void commit(qemu_def_write *w, const rv_err *err)
{
    qemu_dom *d = w->dom;
    if (err && w->rename)
        rename_undo(w);
    if (err) {
        /* The changes queued after this one were made to it. */
        for (qemu_def_write *later = w->next; later && later->derived; later = later->next)
            later->step = -1;
        return;
    }
    w->committed = true;
    if (w->rename) {
        RV_INFO("domain '%s' renamed to '%s'", w->name, w->new_name);
        rv_dom_ref gone = { .name = w->name, .id = d->id };
        memcpy(gone.uuid, d->def->uuid, sizeof(gone.uuid));
        rv_err e = { 0 };
        if (rv_dom_list_rename(&rv_qemu.doms, d, w->new_name, &e) < 0)
            RV_ERROR("domain '%s': %s (found by its new name after a restart)", w->new_name,
                     e.message);
        rv_err_clear(&e);
        rv_qemu_domain_free(d->def);
        d->def = w->def;
        w->def = NULL;
        rv_driver_lifecycle_event(&rv_qemu_driver, &gone, RV_EVENT_UNDEFINED,
                                  RV_EVENT_UNDEFINED_RENAMED);
        rv_dom_ref ref = { 0 };
        if (rv_qemu_dom_ref(d, &ref) == 0)
            rv_driver_lifecycle_event(&rv_qemu_driver, &ref, RV_EVENT_DEFINED,
                                      RV_EVENT_DEFINED_RENAMED);
        free(ref.name);
        return;
    }
    if (w->remove) {
        RV_INFO("domain '%s' undefined", w->name);
        rv_dom_ref ref = { .name = w->name, .id = d->id };
        memcpy(ref.uuid, d->def->uuid, sizeof(ref.uuid));
        if (w->undefine_flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA)
            rv_qemu_snapshots_forget(d->def->uuid);
        if (w->undefine_flags & RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA)
            rv_qemu_checkpoints_forget(d->def->uuid);
        rv_qemu_domain_free(d->def);
        d->def = NULL;
        d->autostart = false;
        rv_driver_lifecycle_event(&rv_qemu_driver, &ref, RV_EVENT_UNDEFINED,
                                  RV_EVENT_UNDEFINED_REMOVED);
        return;
    }
    bool added = !d->def;
    RV_INFO("domain '%s' defined", w->def->name);
    rv_qemu_domain_free(d->def);
    d->def = w->def;
    w->def = NULL;
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0) {
        if (!w->no_event)
            rv_driver_lifecycle_event(&rv_qemu_driver, &ref, RV_EVENT_DEFINED,
                                      added ? RV_EVENT_DEFINED_ADDED : RV_EVENT_DEFINED_UPDATED);
        if (w->ret_dom)
            rv_dom_ref_to_wire(w->ret_dom, &ref);
    }
    free(ref.name);
}

/* The head write is over: answer it. */
static void finish(qemu_def_write *w, const rv_err *err)
{
    w->dom->def_writes = w->next;
    if (w->reply)
        rv_deferred_finish(w->reply, err);
    else if (w->then)
        w->then(w->then_data, err);
    else if (err)
        RV_WARN("%s", err->message);
    write_free(w);
}

/* A write whose base failed before it: it fails without a try. */
static bool doomed(const qemu_def_write *w)
{
    return w->step < 0;
}

/* Begin the next waiting write; those that cannot begin end here. */
static void pump(qemu_dom *d)
{
    while (d->def_writes) {
        qemu_def_write *w = d->def_writes;
        rv_err err = { 0 };
        if (doomed(w)) {
            rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                       "operation failed: an earlier change of the definition, which this one "
                       "builds on, could not be written");
        } else if (begin(w, &err)) {
            if (rv_qemu_sync_busy(&w->sync))
                return;
            /* (An undefine or a rename with nothing left to do.) */
        } else if (!w->committed) {
            commit(w, &err);
        } else {
            /* After the commit the undefine (rename) stands; start-up finishes it. */
            RV_WARN("%s", err.message);
            rv_err_clear(&err);
        }
        finish(w, rv_err_is_set(&err) ? &err : NULL);
        rv_err_clear(&err);
    }
    rv_qemu_dom_forget_if_gone(d);
}

static void on_written(rv_qemu_sync *s, int error)
{
    qemu_def_write *w = s->data;
    qemu_dom *d = w->dom;
    rv_err err = { 0 };
    if (error != 0) {
        char *from = NULL, *to = NULL;
        if (w->remove)
            undefine_step_paths(w, &from, &to);
        else if (w->rename && w->step != RN_NEW)
            rename_step_paths(w, &from, &to);
        else if (w->rename)
            from = rv_qemu_rename_file(w->new_name, RV_QEMU_RENAME_NEW);
        else
            from = rv_qemu_path(rv_qemu.config_dir, w->def->name, ".xml");
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot %s the definition '%s': %s",
                   w->remove ? "remove" : w->rename && w->step != RN_NEW ? "rename" : "write",
                   from ? from : "(no memory)",
                   error > 0 ? strerror(error) : "the store helper died");
        free(from);
        free(to);
    }
    if (!w->remove && !w->rename && error == 0)
        rv_crash_point("define", 2);
    if (w->rename && !w->committed && w->step < RN_COMMIT && error == 0) {
        /* The new definition is written, not yet in use. */
        w->step++;
        pump(d);
        return;
    }
    if ((w->remove || w->rename) && w->committed) {
        /* A step after the commit: the undefine (rename) stands whatever. */
        if (error != 0)
            RV_WARN("domain '%s': %s (finished when remvirtd starts again)", w->name, err.message);
        rv_err_clear(&err);
        w->step++;
        pump(d);
        return;
    }
    commit(w, error != 0 ? &err : NULL);
    if ((w->remove || w->rename) && error == 0) {
        w->step++;
        pump(d);
        return;
    }
    finish(w, error != 0 ? &err : NULL);
    rv_err_clear(&err);
    pump(d);
}

static qemu_def_write *enqueue(qemu_dom *d, qemu_def_write *w)
{
    w->dom = d;
    qemu_def_write **tail = &d->def_writes;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    if (d->def_writes == w)
        pump(d);
    return w;
}

const rv_qemu_domain_def *rv_qemu_def_newest(const qemu_dom *d)
{
    const rv_qemu_domain_def *newest = d->def;
    for (const qemu_def_write *w = d->def_writes; w; w = w->next)
        if (!doomed(w) && (w->remove || w->def))
            newest = w->remove ? NULL : w->def;     /* (a committed rename's is d->def) */
    return newest;
}

/* Queue the write or the removal what is (it takes what.xml and
 * what.name); -1 when memory is short: one of them is NULL, or no room. */
static int queue(qemu_dom *d, qemu_def_write what, rv_err *err)
{
    if (rv_qemu_migration_locked(d, err)) {
        free(what.xml);
        free(what.name);
        return -1;
    }
    qemu_def_write *w = what.xml || what.name ? malloc(sizeof(*w)) : NULL;
    if (!w) {
        free(what.xml);
        free(what.name);
        return nomem(err);
    }
    *w = what;
    enqueue(d, w);
    return 0;
}

static int def_write(qemu_dom *d, rv_qemu_domain_def *def, rv_deferred *reply,
                     rv_nonnull_domain *ret_dom, bool derived, rv_qemu_def_then_fn then,
                     void *then_data, bool no_event, rv_err *err)
{
    qemu_def_write what = { .def = def, .derived = derived, .xml = rv_qemu_domain_format(def),
                            .reply = reply, .ret_dom = ret_dom, .then = then,
                            .then_data = then_data, .no_event = no_event };
    if (queue(d, what, err) < 0) {
        rv_qemu_domain_free(def);
        return -1;
    }
    return 0;
}

int rv_qemu_def_write(qemu_dom *d, rv_qemu_domain_def *def, rv_deferred *reply,
                      rv_nonnull_domain *ret_dom, bool derived, rv_err *err)
{
    return def_write(d, def, reply, ret_dom, derived, NULL, NULL, false, err);
}

int rv_qemu_def_write_then(qemu_dom *d, rv_qemu_domain_def *def, rv_qemu_def_then_fn then,
                           void *then_data, rv_err *err)
{
    return def_write(d, def, NULL, NULL, false, then, then_data, false, err);
}

void rv_qemu_def_writes_release(qemu_dom *d)
{
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
               "operation failed: remvirtd is stopping");
    while (d->def_writes) {
        qemu_def_write *w = d->def_writes;
        d->def_writes = w->next;
        /* A request under way finishes the file on its own: the next
         * remvirtd reads whichever is there (and finishes an undefine). */
        rv_qemu_sync_forget(&w->sync);
        if (w->reply)
            rv_deferred_finish(w->reply, &err);
        else if (w->then)
            w->then(w->then_data, &err);
        write_free(w);
    }
    rv_err_clear(&err);
}

static int change_then(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                   rv_err *err),
                       const void *ctx, rv_deferred *reply, rv_qemu_def_then_fn then,
                       void *then_data, bool no_event, rv_err *err);

int rv_qemu_def_change(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                  rv_err *err),
                       const void *ctx, rv_deferred *reply, rv_err *err)
{
    return change_then(d, change, ctx, reply, NULL, NULL, false, err);
}

int rv_qemu_def_change_no_event(qemu_dom *d, int (*change)(rv_qemu_domain_def *def,
                                                           const void *ctx, rv_err *err),
                                const void *ctx, rv_deferred *reply, rv_err *err)
{
    return change_then(d, change, ctx, reply, NULL, NULL, true, err);
}

int rv_qemu_def_change_then(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                       rv_err *err),
                            const void *ctx, rv_deferred *reply, rv_qemu_def_then_fn then,
                            void *then_data, rv_err *err)
{
    return change_then(d, change, ctx, reply, then, then_data, false, err);
}

int rv_qemu_def_change_then_no_event(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                                rv_err *err),
                                     const void *ctx, rv_qemu_def_then_fn then, void *then_data, rv_err *err)
{
    return change_then(d, change, ctx, NULL, then, then_data, true, err);
}

static int change_then(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                   rv_err *err),
                       const void *ctx, rv_deferred *reply, rv_qemu_def_then_fn then,
                       void *then_data, bool no_event, rv_err *err)
{
    const rv_qemu_domain_def *base = rv_qemu_def_newest(d);
    if (!base)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: transient domains do not have "
                           "any persistent config");
    char *xml = rv_qemu_domain_format(base);
    if (!xml)
        return nomem(err);
    rv_qemu_domain_def *copy = rv_qemu_domain_parse(xml, strlen(xml), err);
    free(xml);
    if (!copy)
        return -1;
    if (change(copy, ctx, err) < 0) {
        rv_qemu_domain_free(copy);
        return -1;
    }
    return def_write(d, copy, reply, NULL, d->def_writes != NULL, then, then_data, no_event, err);
}

int rv_qemu_def_remove(qemu_dom *d, unsigned int flags, rv_deferred *reply, rv_err *err)
{
    unsigned int kept = RV_DOMAIN_UNDEFINE_MANAGED_SAVE | RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA;
    qemu_def_write what = { .remove = true, .undefine_flags = flags & kept,
                            .name = strdup(d->def->name), .reply = reply };
    return queue(d, what, err);
}

int rv_qemu_def_rename(qemu_dom *d, const char *new_name, rv_deferred *reply, rv_err *err)
{
    const rv_qemu_domain_def *base = rv_qemu_def_newest(d);
    char *xml = base ? rv_qemu_domain_format(base) : NULL;
    rv_qemu_domain_def *def = xml ? rv_qemu_domain_parse(xml, strlen(xml), err) : NULL;
    free(xml);
    if (!def)
        return rv_err_is_set(err) ? -1 : nomem(err);
    char *copy = strdup(new_name);
    if (!copy) {
        rv_qemu_domain_free(def);
        return nomem(err);
    }
    free(def->name);
    def->name = copy;
    qemu_def_write what = { .def = def, .rename = true, .link = d->autostart,
                            .xml = rv_qemu_domain_format(def), .name = strdup(d->def->name),
                            .new_name = strdup(new_name), .reply = reply };
    /* The driver reads it back at start-up: it must take the new name
     * (its length, its characters). */
    rv_qemu_domain_def *check = what.xml ? rv_qemu_domain_parse(what.xml, strlen(what.xml), err) : NULL;
    rv_qemu_domain_free(check);
    if (!check || !what.name || !what.new_name) {
        free(what.xml);
        free(what.name);
        free(what.new_name);
        rv_qemu_domain_free(def);
        return rv_err_is_set(err) ? -1 : nomem(err);
    }
    if (queue(d, what, err) < 0) {
        free(what.new_name);        /* (queue took the rest) */
        rv_qemu_domain_free(def);
        return -1;
    }
    return 0;
}

static bool removing(const void *obj, const void *name)
{
    for (const qemu_def_write *w = ((const qemu_dom *)obj)->def_writes; w; w = w->next)
        if (w->remove && !doomed(w) && strcmp(w->name, name) == 0)
            return true;
    return false;
}

bool rv_qemu_def_removal_pending(const char *name)
{
    return rv_dom_list_find(&rv_qemu.doms, removing, name) != NULL;
}

static bool renaming_to(const void *obj, const void *name)
{
    for (const qemu_def_write *w = ((const qemu_dom *)obj)->def_writes; w; w = w->next)
        if (w->rename && !w->committed && strcmp(w->new_name, name) == 0)
            return true;
    return false;
}

bool rv_qemu_def_rename_pending(const char *name)
{
    return rv_dom_list_find(&rv_qemu.doms, renaming_to, name) != NULL;
}
