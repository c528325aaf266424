/* Definition writes (and removals) off the loop.  A define replaces the domain's
 * definition in memory at once (so the next call sees it), queues the
 * file's write, and is answered only when the sync child (qemu_sync.c)
 * has made it durable; if the child fails, the definition before comes
 * back and the call gets the error.  One child at a time per domain: two
 * defines in a row land in the order they were asked.  A kill -9 at any
 * moment leaves the old file or the new one (the rename is atomic).  An
 * undefine is such a write too: the definition goes from memory at once,
 * the child removes the file and fsyncs the directory, and the call is
 * answered (the UNDEFINED event sent) after; a failure brings it back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.defwrite");

typedef struct qemu_def_write {
    qemu_dom *dom;
    /* def replaced old in d->def.  old is owned here until the write
     * succeeds; def belongs to d->def, or to the next write's old.  Both
     * NULL: a rewrite of the definition as it is (tuning). */
    rv_qemu_domain_def *def, *old;
    bool added;                 /* the domain is new with this define */
    bool remove;                /* an undefine: old is the definition removed */
    char *xml, *path, *tmp_path;
    rv_deferred *reply;         /* NULL: nobody waits */
    rv_nonnull_domain *ret_dom; /* in reply's result */
    rv_qemu_sync sync;
    struct qemu_def_write *next;
} qemu_def_write;

static void write_free(qemu_def_write *w)
{
    free(w->xml);
    free(w->path);
    free(w->tmp_path);
    free(w);
}

static void on_written(rv_qemu_sync *s, int error);

/* Begin the head write's child; false (err set) when it cannot. */
static bool begin(qemu_def_write *w, rv_err *err)
{
    if (w->remove) {
        if (!(w->path = rv_qemu_path(rv_qemu.config_dir, w->old->name, ".xml"))) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
            return false;
        }
        w->sync.done = on_written;
        w->sync.data = w;
        return rv_qemu_sync_remove(&w->sync, w->path, err) == 0;
    }
    if (!w->def && !w->dom->def) {
        /* A rewrite after a failed define of a new domain: nothing to write. */
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: the domain is no longer defined");
        return false;
    }
    const char *name = w->def ? w->def->name : w->dom->def->name;
    if (!(w->path = rv_qemu_path(rv_qemu.config_dir, name, ".xml")) ||
        !(w->tmp_path = rv_qemu_path(rv_qemu.config_dir, name, ".xml.tmp"))) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return false;
    }
    w->sync.done = on_written;
    w->sync.data = w;
    return rv_qemu_mkdirs(rv_qemu.config_dir, err) == 0 &&
           rv_qemu_sync_start(&w->sync, -1, w->xml, w->tmp_path, w->path, err) == 0;
}

/* The head write is over (err NULL: durable): answer it, or put the
 * definition before back. */
static void finish(qemu_def_write *w, const rv_err *err)
{
    qemu_dom *d = w->dom;
    d->def_writes = w->next;
    if (!err && w->remove) {
        RV_INFO("domain '%s' undefined", w->old->name);
        rv_qemu_set_autostart_link(w->old->name, false, NULL);
        d->autostart = false;
        rv_dom_ref ref = { .name = w->old->name, .id = d->id };
        memcpy(ref.uuid, w->old->uuid, sizeof(ref.uuid));
        rv_driver_lifecycle_event(&rv_qemu_driver, &ref, RV_EVENT_UNDEFINED,
                                  RV_EVENT_UNDEFINED_REMOVED);
        rv_qemu_domain_free(w->old);
    } else if (!err) {
        rv_qemu_domain_free(w->old);
        if (w->def) {
            RV_INFO("domain '%s' defined", w->def->name);
            rv_dom_ref ref = { 0 };
            if (rv_qemu_dom_ref(d, &ref) == 0) {
                rv_driver_lifecycle_event(&rv_qemu_driver, &ref, RV_EVENT_DEFINED,
                                          w->added ? RV_EVENT_DEFINED_ADDED
                                                   : RV_EVENT_DEFINED_UPDATED);
                if (w->ret_dom)
                    rv_dom_ref_to_wire(w->ret_dom, &ref);
            }
            free(ref.name);
        }
    } else if (w->def || w->remove) {
        /* The one before is back: where a later define took this one as
         * its "before", or in the domain itself. */
        qemu_def_write *later = w->next;
        while (later && !later->def)
            later = later->next;
        if (later)
            later->old = w->old;
        else
            d->def = w->old;
        rv_qemu_domain_free(w->def);
    }
    if (w->reply)
        rv_deferred_finish(w->reply, err);
    else if (err)
        RV_WARN("%s", err->message);
    write_free(w);
}


/* Begin the next waiting write; those that cannot begin end here. */
static void pump(qemu_dom *d)
{
    while (d->def_writes) {
        rv_err err = { 0 };
        if (begin(d->def_writes, &err)) {
            rv_err_clear(&err);
            return;
        }
        finish(d->def_writes, &err);
        rv_err_clear(&err);
    }
    rv_qemu_dom_forget_if_gone(d);
}

static void on_written(rv_qemu_sync *s, int error)
{
    qemu_def_write *w = s->data;
    qemu_dom *d = w->dom;
    rv_err err = { 0 };
    if (error != 0)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                   "cannot %s the definition '%s': %s", w->remove ? "remove" : "write", w->path,
                   error > 0 ? strerror(error) : "its writer was killed");
    finish(w, error != 0 ? &err : NULL);
    rv_err_clear(&err);
    pump(d);
}

static void enqueue(qemu_dom *d, qemu_def_write *w)
{
    qemu_def_write **tail = &d->def_writes;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    if (d->def_writes == w)
        pump(d);
}

int rv_qemu_def_write(qemu_dom *d, rv_qemu_domain_def *def, rv_deferred *reply,
                      rv_nonnull_domain *ret_dom, bool added, rv_err *err)
{
    qemu_def_write *w = calloc(1, sizeof(*w));
    if (!w || !(w->xml = rv_qemu_domain_format(def))) {
        free(w);
        rv_qemu_domain_free(def);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    w->dom = d;
    w->def = def;
    w->old = d->def;
    w->added = added;
    w->reply = reply;
    w->ret_dom = ret_dom;
    d->def = def;
    enqueue(d, w);
    return 0;
}

int rv_qemu_def_rewrite(qemu_dom *d, rv_err *err)
{
    qemu_def_write *w = calloc(1, sizeof(*w));
    if (!w || !(w->xml = rv_qemu_domain_format(d->def))) {
        free(w);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    w->dom = d;
    enqueue(d, w);
    return 0;
}

void rv_qemu_def_writes_release(qemu_dom *d)
{
    rv_err err = { 0 };
    rv_err_set(&err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
               "operation failed: remvirtd is stopping");
    while (d->def_writes) {
        qemu_def_write *w = d->def_writes;
        d->def_writes = w->next;
        /* A child under way finishes the file on its own (or dies with
         * remvirtd): the next remvirtd reads whichever is there. */
        rv_qemu_sync_forget(&w->sync);
        rv_qemu_domain_free(w->old);
        if (w->reply)
            rv_deferred_finish(w->reply, &err);
        write_free(w);
    }
    rv_err_clear(&err);
}

int rv_qemu_def_change(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                  rv_err *err),
                       const void *ctx, rv_deferred *reply, rv_err *err)
{
    if (!d->def)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: transient domains do not have "
                           "any persistent config");
    char *xml = rv_qemu_domain_format(d->def);
    if (!xml)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    rv_qemu_domain_def *copy = rv_qemu_domain_parse(xml, strlen(xml), err);
    free(xml);
    if (!copy)
        return -1;
    if (change(copy, ctx, err) < 0) {
        rv_qemu_domain_free(copy);
        return -1;
    }
    return rv_qemu_def_write(d, copy, reply, NULL, false, err);
}

int rv_qemu_def_remove(qemu_dom *d, rv_deferred *reply, rv_err *err)
{
    qemu_def_write *w = calloc(1, sizeof(*w));
    if (!w) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    w->dom = d;
    w->remove = true;
    w->old = d->def;
    w->reply = reply;
    d->def = NULL;
    enqueue(d, w);
    return 0;
}

static bool removing(const void *obj, const void *name)
{
    for (const qemu_def_write *w = ((const qemu_dom *)obj)->def_writes; w; w = w->next)
        if (w->remove && strcmp(w->old->name, name) == 0)
            return true;
    return false;
}

bool rv_qemu_def_removal_pending(const char *name)
{
    return rv_dom_list_find(&rv_qemu.doms, removing, name) != NULL;
}
