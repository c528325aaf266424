/* The QEMU driver's domain table (qemu_driver.h): the domains in a list,
 * found by name and UUID, their wire references, the list filters, and
 * the check that a new definition may stand beside the others. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/qemu/qemu_driver.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

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
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    if (!(ref->name = strdup(def->name)))
        return -1;
    memcpy(ref->uuid, def->uuid, sizeof(ref->uuid));
    ref->id = rv_qemu_dom_active(d) ? d->id : -1;
    return 0;
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
    free(d);
}

void rv_qemu_doms_free(void)
{
    while (rv_qemu.doms) {
        qemu_dom *d = rv_qemu.doms;
        rv_qemu.doms = d->next;
        dom_free(d);
    }
}

void rv_qemu_dom_forget_if_gone(qemu_dom *d)
{
    if (d->def || rv_qemu_dom_active(d) || d->jobs || d->stopping || d->def_writes ||
        d->monitor_waiters)
        return;
    for (qemu_dom **p = &rv_qemu.doms; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            dom_free(d);
            return;
        }
}

qemu_dom *rv_qemu_find_uuid(const unsigned char uuid[16])
{
    for (qemu_dom *d = rv_qemu.doms; d; d = d->next)
        if (rv_qemu_dom_visible(d) && memcmp(rv_qemu_dom_def(d)->uuid, uuid, 16) == 0)
            return d;
    return NULL;
}

qemu_dom *rv_qemu_find_name(const char *name)
{
    for (qemu_dom *d = rv_qemu.doms; d; d = d->next)
        if (rv_qemu_dom_visible(d) && strcmp(rv_qemu_dom_def(d)->name, name) == 0)
            return d;
    return NULL;
}

/* By UUID, as libvirtd's QEMU driver. */
qemu_dom *rv_qemu_dom_get(const rv_nonnull_domain *wire, rv_err *err)
{
    qemu_dom *d = rv_qemu_find_uuid((const unsigned char *)wire->uuid);
    if (!d) {
        char uuid[RV_UUID_STRING_LEN];
        rv_uuid_format((const unsigned char *)wire->uuid, uuid);
        fail(err, RV_ERR_NO_DOMAIN, "Domain not found: no domain with matching uuid '%s' (%s)",
             uuid, wire->name ? wire->name : "");
    }
    return d;
}

int rv_qemu_put_dom(const qemu_dom *d, rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) < 0)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    rv_dom_ref_to_wire(wire, &ref);
    return 0;
}

bool rv_qemu_list_match(const qemu_dom *d, unsigned int f)
{
    if (!rv_qemu_dom_visible(d))
        return false;
    bool active = rv_qemu_dom_active(d);
#define PAIR(a, b, va) (!(f & ((a) | (b))) || ((f & (a)) && (va)) || ((f & (b)) && !(va)))
    if (!PAIR(RV_LIST_DOMAINS_ACTIVE, RV_LIST_DOMAINS_INACTIVE, active) ||
        !PAIR(RV_LIST_DOMAINS_PERSISTENT, RV_LIST_DOMAINS_TRANSIENT, d->def != NULL) ||
        !PAIR(RV_LIST_DOMAINS_AUTOSTART, RV_LIST_DOMAINS_NO_AUTOSTART, d->autostart) ||
        !PAIR(RV_LIST_DOMAINS_MANAGEDSAVE, RV_LIST_DOMAINS_NO_MANAGEDSAVE,
              d->def && rv_qemu_has_managed_save(d->def->name)) ||
        (f & RV_LIST_DOMAINS_HAS_SNAPSHOT) ||
        (f & RV_LIST_DOMAINS_HAS_CHECKPOINT))
        return false;
#undef PAIR
    unsigned int states = f & (RV_LIST_DOMAINS_RUNNING | RV_LIST_DOMAINS_PAUSED |
                               RV_LIST_DOMAINS_SHUTOFF | RV_LIST_DOMAINS_OTHER);
    if (!states)
        return true;
    int st = active ? d->state : RV_DOMAIN_SHUTOFF;
    return ((states & RV_LIST_DOMAINS_RUNNING) && st == RV_DOMAIN_RUNNING) ||
           ((states & RV_LIST_DOMAINS_PAUSED) && st == RV_DOMAIN_PAUSED) ||
           ((states & RV_LIST_DOMAINS_SHUTOFF) && st == RV_DOMAIN_SHUTOFF) ||
           ((states & RV_LIST_DOMAINS_OTHER) && st != RV_DOMAIN_RUNNING &&
            st != RV_DOMAIN_PAUSED && st != RV_DOMAIN_SHUTOFF);
}

/* The definition a define must agree with: the newest, queued ones
 * included (qemu_defwrite.c), else the live one. */
static const rv_qemu_domain_def *newest_def(const qemu_dom *d)
{
    const rv_qemu_domain_def *def = rv_qemu_def_newest(d);
    return def ? def : d->live;
}

static qemu_dom *find_newest(const rv_qemu_domain_def *want, bool by_uuid)
{
    for (qemu_dom *d = rv_qemu.doms; d; d = d->next) {
        const rv_qemu_domain_def *def = newest_def(d);
        if (def && (by_uuid ? memcmp(def->uuid, want->uuid, 16) == 0
                            : strcmp(def->name, want->name) == 0))
            return d;
    }
    return NULL;
}

/* A new definition may replace the one with the same name and UUID only. */
int rv_qemu_dom_check_conflict(const rv_qemu_domain_def *def, qemu_dom **found, rv_err *err)
{
    qemu_dom *by_uuid = find_newest(def, true), *by_name = find_newest(def, false);
    *found = by_uuid;
    return rv_obj_clash_error("domain", RV_FROM_QEMU, def->name,
                              by_uuid ? newest_def(by_uuid)->name : NULL,
                              by_name ? newest_def(by_name)->uuid : NULL, def->uuid, err);
}

qemu_dom *rv_qemu_dom_new(void)
{
    qemu_dom *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->id = -1;
    d->state = RV_DOMAIN_SHUTOFF;
    d->jobs_tail = &d->jobs;
    d->next = rv_qemu.doms;
    rv_qemu.doms = d;
    return d;
}
