/* The QEMU driver's domains (qemu_driver.h) in the drivers' shared domain
 * list (conf/domlist.h): what the list sees of a domain, and the
 * driver's names for the list's calls. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/domlist.h"
#include "server/drivers/qemu/qemu_driver.h"

const rv_qemu_domain_def *rv_qemu_dom_def(const qemu_dom *d)
{
    return d->live ? d->live : d->def;
}

bool rv_qemu_dom_visible(const qemu_dom *d)
{
    return d->def || d->live;
}

bool rv_qemu_dom_active(const qemu_dom *d)
{
    return d->pid > 0 || d->starting;
}

int rv_qemu_dom_ref(const qemu_dom *d, rv_dom_ref *ref)
{
    rv_err err = { 0 };
    int rc = rv_dom_list_ref(&rv_qemu.doms, d, ref, &err);
    rv_err_clear(&err);
    return rc;
}

void rv_qemu_dom_set_state(qemu_dom *d, int state, int reason, int event, int detail)
{
    bool changed = d->state != state;
    d->state = state;
    d->reason = reason;
    if (!changed || event < 0)
        return;
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_lifecycle_event(&rv_qemu_driver, &ref, event, detail);
    free(ref.name);
}

static void dom_free(qemu_dom *d)
{
    rv_qemu_release(d);
    rv_qemu_cpu_files_close(d);
    rv_qemu_domain_free(d->def);
    rv_qemu_domain_free(d->live);
    free(d->monitor_path);
    free(d->restore_managed);
    rv_err_clear(&d->start_err);
    rv_qemu_jobinfo_free(d);
    free(d);
}

static void dom_free_obj(void *obj)
{
    dom_free(obj);
}

void rv_qemu_doms_free(void)
{
    rv_dom_list_clear(&rv_qemu.doms, dom_free_obj);
}

void rv_qemu_dom_forget_if_gone(qemu_dom *d)
{
    if (d->def || rv_qemu_dom_active(d) || d->jobs || d->stopping || d->def_writes ||
        d->monitor_waiters)
        return;
    rv_dom_list_remove(&rv_qemu.doms, d);
    dom_free(d);
}

qemu_dom *rv_qemu_find_uuid(const unsigned char uuid[16])
{
    return rv_dom_list_find_uuid(&rv_qemu.doms, uuid);
}

qemu_dom *rv_qemu_find_name(const char *name)
{
    return rv_dom_list_find_name(&rv_qemu.doms, name);
}

/* By UUID, as libvirtd's QEMU driver. */
qemu_dom *rv_qemu_dom_get(const rv_nonnull_domain *wire, rv_err *err)
{
    return rv_dom_list_get(&rv_qemu.doms, (const unsigned char *)wire->uuid, wire->name, err);
}

static qemu_dom *get_running(const rv_nonnull_domain *wire, int from, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (d && !rv_qemu_dom_active(d)) {
        rv_err_set(err, from, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: domain is not running");
        return NULL;
    }
    return d;
}

qemu_dom *rv_qemu_dom_get_running(const rv_nonnull_domain *wire, rv_err *err)
{
    return get_running(wire, RV_FROM_QEMU, err);
}

qemu_dom *rv_qemu_dom_get_active(const rv_nonnull_domain *wire, rv_err *err)
{
    return get_running(wire, RV_FROM_DOMAIN, err);
}


int rv_qemu_put_dom(const qemu_dom *d, rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(rv_dom_list_ref(&rv_qemu.doms, d, &ref, err), &ref, wire);
}

bool rv_qemu_list_match(const qemu_dom *d, unsigned int filters)
{
    return rv_dom_list_match(&rv_qemu.doms, d, filters);
}

/* A new definition may replace the one with the same name and UUID only. */
int rv_qemu_dom_check_conflict(const rv_qemu_domain_def *def, qemu_dom **found, rv_err *err)
{
    void *same;
    int rc = rv_dom_list_check_clash(&rv_qemu.doms, def->name, def->uuid, &same, err);
    *found = same;
    return rc;
}

qemu_dom *rv_qemu_dom_new(const rv_qemu_domain_def *def)
{
    qemu_dom *d = calloc(1, sizeof(*d));
    rv_err err = { 0 };
    if (!d)
        return NULL;
    d->id = -1;
    d->state = RV_DOMAIN_SHUTOFF;
    d->agent_timeout = RV_QEMU_AGENT_TIMEOUT_DEFAULT;
    d->migtune.max_bandwidth = RV_QEMU_MIG_BANDWIDTH_MAX;
    d->jobs_tail = &d->jobs;
    if (rv_dom_list_add(&rv_qemu.doms, d, def->name, def->uuid, &err) < 0) {
        rv_err_clear(&err);
        free(d);
        return NULL;
    }
    return d;
}

/* ---------------------------------------------------------------- the list's view */

static const char *dom_name(const void *obj)
{
    return rv_qemu_dom_visible(obj) ? rv_qemu_dom_def(obj)->name : NULL;
}

static const unsigned char *dom_uuid(const void *obj)
{
    return rv_qemu_dom_visible(obj) ? rv_qemu_dom_def(obj)->uuid : NULL;
}

static int dom_id(const void *obj)
{
    const qemu_dom *d = obj;
    return rv_qemu_dom_active(d) ? d->id : -1;
}

/* Whether a define must agree with d: it has a definition, the newest
 * (queued ones included, qemu_defwrite.c) or the live one. */
static bool dom_defined(const void *obj)
{
    const qemu_dom *d = obj;
    return rv_qemu_def_newest(d) || d->live;
}

/* Snapshots and checkpoints are not counted (HAS_SNAPSHOT and
 * HAS_CHECKPOINT list none): their metadata is read only when asked for. */
static void dom_status(const void *obj, rv_dom_status *st)
{
    const qemu_dom *d = obj;
    st->active = rv_qemu_dom_active(d);
    st->state = st->active ? d->state : RV_DOMAIN_SHUTOFF;
    st->persistent = d->def != NULL;
    st->autostart = d->autostart;
    st->managed_save = d->def && rv_qemu_has_managed_save(d->def->name);
}

const rv_dom_kind rv_qemu_dom_kind = {
    .from = RV_FROM_QEMU, .name_of = dom_name, .uuid_of = dom_uuid, .status_of = dom_status,
    .id_of = dom_id, .defined = dom_defined,
};
