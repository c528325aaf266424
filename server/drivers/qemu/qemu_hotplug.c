/* Device hotplug on the QEMU driver: ATTACH_DEVICE(_FLAGS),
 * DETACH_DEVICE(_FLAGS) and DETACH_DEVICE_ALIAS of file disks.
 *
 * The definition (--config) is changed through the durable write path
 * (qemu_defwrite.c: one commit point, answered once the file is synced).
 * The running guest (--live): a virtio disk is blockdev-add'ed and
 * device_add'ed, then the live definition has it and DEVICE_ADDED goes
 * out; a detach is device_del, and the disk is gone when QEMU says
 * DEVICE_DELETED (the guest ejected it): then blockdev-del, the live
 * definition without it, DEVICE_REMOVED.  As libvirtd, the call waits 5 s
 * for that and then succeeds anyway, the removal finishing whenever the
 * guest lets go.  Both: the live part first, then the definition; each is
 * checked before anything is done.  Every QMP answer is a callback on the
 * loop: the call's reply is deferred, nothing waits. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.hotplug");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2 };
#define UNPLUG_WAIT 5.0         /* libvirtd's wait for DEVICE_DELETED in the call */
#define NO_TRANSIENT_CONFIG "transient domains do not have any persistent config"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* A call under way, or an unplug QEMU has not confirmed yet. */
typedef struct hp_req {
    rv_qemu_live_req live;
    rv_qemu_device dev;         /* attach: the device asked for */
    char *target;               /* the disk's target: QEMU's device id */
    char *alias;                /* libvirt's alias, for the events */
    bool config;                /* then the definition too */
    bool waiting;               /* the unplug timer runs */
    ev_timer wait;
    struct hp_req *next;        /* in unplugs */
} hp_req;

/* Unplugs asked of QEMU and not yet confirmed by DEVICE_DELETED. */
static hp_req *unplugs;

static void req_free(hp_req *req)
{
    if (req->waiting)
        ev_timer_stop(rv_qemu.loop, &req->wait);
    rv_qemu_device_clear(&req->dev);
    free(req->target);
    free(req->alias);
    free(req->live.name);
    free(req);
}

static void ignore_reply(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret, (void)opaque;
    if (err)
        RV_DEBUG("hotplug clean-up: %s", err->message ? err->message : "");
}

static int disk_index(const rv_qemu_domain_def *def, const char *target)
{
    for (size_t i = 0; def && i < def->ndisks; i++)
        if (strcmp(def->disks[i].target, target) == 0)
            return (int)i;
    return -1;
}

/* ================================================================ the definition */

static int attach_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const rv_qemu_device *dev = ctx;
    const char *target = dev->alone->disks[0].target;
    if (disk_index(def, target) >= 0)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: target %s already exists",
                    target);
    rv_qemu_domain_def *with = rv_qemu_def_with_device(def, dev, err);
    if (!with)
        return -1;
    rv_qemu_def_swap(def, with);
    rv_qemu_domain_free(with);
    return 0;
}

static int detach_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const char *target = ctx;
    int i = disk_index(def, target);
    if (i < 0)
        return fail(err, RV_ERR_DEVICE_MISSING, "device not found: no target device %s", target);
    rv_qemu_def_remove_disk(def, (size_t)i);
    return 0;
}

/* The live part is done: the definition next (when asked), then the answer. */
static void live_done(hp_req *req, int (*change)(rv_qemu_domain_def *, const void *, rv_err *),
                      const void *ctx)
{
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    rv_err err = { 0 };
    if (req->config && d && rv_qemu_def_change(d, change, ctx, req->live.reply, &err) == 0)
        return;
    rv_deferred_finish(req->live.reply, rv_err_is_set(&err) ? &err : NULL);
    rv_err_clear(&err);
}

static void device_event(qemu_dom *d, int event_id, const char *alias)
{
    rv_dom_ref ref = { 0 };
    if (rv_qemu_dom_ref(d, &ref) == 0)
        rv_driver_device_event(&rv_qemu_driver, &ref, event_id, alias);
    free(ref.name);
}

static void save_status(qemu_dom *d)
{
    rv_err err = { 0 };
    if (rv_qemu_save_status(d, &err) < 0)
        RV_WARN("cannot record the devices of domain '%s': %s", d->live->name, err.message);
    rv_err_clear(&err);
}

/* ================================================================ attach, live */

static void on_device_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = opaque;
    char node[64];
    snprintf(node, sizeof(node), "drive-%s", req->target);
    if (!rv_qemu_live_req_alive(&req->live, qmp, err)) {
        /* The node goes with the device that did not come. */
        if (err && !rv_qmp_is_closed(qmp)) {
            json_object *args = json_object_new_object();
            json_object_object_add(args, "node-name", json_object_new_string(node));
            rv_err ignored = { 0 };
            if (rv_qmp_command(qmp, "blockdev-del", args, 0, ignore_reply, NULL, &ignored) < 0)
                rv_err_clear(&ignored);
        }
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    rv_err perr = { 0 };
    rv_qemu_domain_def *with = rv_qemu_def_with_device(d->live, &req->dev, &perr);
    if (with) {
        rv_qemu_def_swap(d->live, with);
        rv_qemu_domain_free(with);
        save_status(d);
    } else {
        RV_WARN("domain '%s': disk %s is plugged in but not in the live XML: %s", req->live.name,
                req->target, perr.message);
        rv_err_clear(&perr);
    }
    device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_ADDED, req->alias);
    live_done(req, attach_config, &req->dev);
    req_free(req);
}

static void on_blockdev_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, err)) {
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    /* The address the definition's rules give it, as at start. */
    rv_err perr = { 0 };
    rv_qemu_domain_def *with = rv_qemu_def_with_device(d->live, &req->dev, &perr);
    int i = with ? disk_index(with, req->target) : -1;
    if (i < 0) {
        rv_deferred_finish(req->live.reply, &perr);
        rv_err_clear(&perr);
        rv_qemu_domain_free(with);
        req_free(req);
        return;
    }
    const rv_qemu_pci_addr *a = &with->disks[i].addr;
    char node[64], addr[32];
    snprintf(node, sizeof(node), "drive-%s", req->target);
    snprintf(addr, sizeof(addr), "0x%x.0x%x", a->slot, a->function);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "driver", json_object_new_string("virtio-blk-pci"));
    json_object_object_add(args, "drive", json_object_new_string(node));
    json_object_object_add(args, "id", json_object_new_string(req->target));
    json_object_object_add(args, "bus", json_object_new_string(rv_qemu_machine_is_q35(with->machine) ? "pcie.0" : "pci.0"));
    json_object_object_add(args, "addr", json_object_new_string(addr));
    rv_qemu_domain_free(with);
    if (!rv_qemu_send_for(d, req->live.reply, "device_add", args, on_device_added, req))
        req_free(req);
}

static int attach_live(qemu_dom *d, hp_req *req, rv_err *err)
{
    const rv_qemu_disk *disk = &req->dev.alone->disks[0];
    if (disk->device == RV_QEMU_DISK_CDROM)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: cdrom/floppy device hotplug isn't supported");
    if (disk->bus != RV_QEMU_BUS_VIRTIO)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: disk bus '%s' cannot be hotplugged.",
                    disk->bus == RV_QEMU_BUS_SATA ? "sata" : "ide");
    int there = disk_index(d->live, disk->target);
    if (there >= 0) {
        const char *old = d->live->disks[there].source;
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "XML error: target '%s' duplicated for disk sources '%s' and '%s'",
                   disk->target, old ? old : "<null>", disk->source ? disk->source : "<null>");
        return -1;
    }
    char node[64];
    snprintf(node, sizeof(node), "drive-%s", disk->target);
    json_object *file = json_object_new_object(), *args = json_object_new_object();
    json_object_object_add(file, "driver", json_object_new_string("file"));
    json_object_object_add(file, "filename", json_object_new_string(disk->source));
    json_object_object_add(args, "driver",
                           json_object_new_string(disk->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw"));
    json_object_object_add(args, "node-name", json_object_new_string(node));
    json_object_object_add(args, "read-only", json_object_new_boolean(disk->readonly));
    if (disk->discard)
        json_object_object_add(args, "discard", json_object_new_string(disk->discard == 2 ? "unmap" : "ignore"));
    json_object_object_add(args, "file", file);
    return rv_qemu_send_for(d, req->live.reply, "blockdev-add", args, on_blockdev_added, req) ? 0 : 1;
}

/* ================================================================ detach, live */

/* QEMU let go of the device: it leaves the live definition, its node
 * goes, DEVICE_REMOVED; the call waiting for it is answered. */
void rv_qemu_hotplug_device_deleted(qemu_dom *d, const char *id)
{
    hp_req *req = NULL, **pp = &unplugs;
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->live.name, d->live->name) == 0 && strcmp((*pp)->target, id) == 0) {
            req = *pp;
            *pp = req->next;
            break;
        }
    int i = disk_index(d->live, id);
    if (i >= 0) {
        char alias[32];
        rv_qemu_disk_alias(d->live, &d->live->disks[i], alias, sizeof(alias));
        rv_qemu_def_remove_disk(d->live, (size_t)i);
        save_status(d);
        char node[64];
        snprintf(node, sizeof(node), "drive-%s", id);
        json_object *args = json_object_new_object();
        json_object_object_add(args, "node-name", json_object_new_string(node));
        rv_err ignored = { 0 };
        /* A disk from the command line has no node of that name: its
         * drive went with the device. */
        if (rv_qmp_command(d->qmp, "blockdev-del", args, 0, ignore_reply, NULL, &ignored) < 0)
            rv_err_clear(&ignored);
        device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_REMOVED, alias);
    }
    if (!req)
        return;
    if (req->live.reply)
        live_done(req, detach_config, req->target);
    req_free(req);
}

/* The guest refused to let go (ACPI _OST, or QEMU's own word). */
void rv_qemu_hotplug_unplug_failed(qemu_dom *d, const char *id)
{
    for (hp_req *req = unplugs; req; req = req->next)
        if (strcmp(req->live.name, d->live->name) == 0 && strcmp(req->target, id) == 0) {
            device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED, req->alias);
            return;
        }
}

static void on_unplug_wait(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)revents;
    hp_req *req = (hp_req *)((char *)w - offsetof(hp_req, wait));
    req->waiting = false;
    /* As libvirtd: the call succeeds; the removal ends when QEMU says so. */
    if (req->live.reply) {
        live_done(req, detach_config, req->target);
        req->live.reply = NULL;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    if (!d || !d->live || d->pid != req->live.pid) {
        for (hp_req **pp = &unplugs; *pp; pp = &(*pp)->next)
            if (*pp == req) {
                *pp = req->next;
                break;
            }
        req_free(req);
    }
}

static void on_device_del(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, err)) {
        req_free(req);
        return;
    }
    /* A second detach of the same disk waits with the first. */
    req->next = unplugs;
    unplugs = req;
    ev_timer_init(&req->wait, on_unplug_wait, UNPLUG_WAIT, 0.);
    ev_timer_start(rv_qemu.loop, &req->wait);
    req->waiting = true;
}

static int detach_live(qemu_dom *d, hp_req *req, rv_err *err)
{
    int i = disk_index(d->live, req->target);
    if (i < 0)
        return fail(err, RV_ERR_DEVICE_MISSING, "device not found: disk %s not found", req->target);
    const rv_qemu_disk *disk = &d->live->disks[i];
    if (disk->bus != RV_QEMU_BUS_VIRTIO || disk->device == RV_QEMU_DISK_CDROM)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: This type of disk cannot be hot unplugged");
    char alias[32];
    rv_qemu_disk_alias(d->live, disk, alias, sizeof(alias));
    if (!(req->alias = strdup(alias)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    json_object *args = json_object_new_object();
    json_object_object_add(args, "id", json_object_new_string(req->target));
    return rv_qemu_send_for(d, req->live.reply, "device_del", args, on_device_del, req) ? 0 : 1;
}

/* ================================================================ the calls */

/* The call for d: live (and then maybe config) as a request answered
 * later, or config alone through the definition's write. */
static int hotplug(const rv_nonnull_domain *wire, const char *xml, const char *by_alias,
                   unsigned int flags, bool attach, rv_err *err)
{
    rv_qemu_device dev = { 0 };
    qemu_dom *d;
    bool live, config;
    int rc = rv_qemu_pick_defs(wire, flags, NO_TRANSIENT_CONFIG, &d, &live, &config, err);
    if (rc)
        return rc;
    if (xml && rv_qemu_device_read(xml, &dev, err) < 0)
        return -1;
    if (xml && dev.kind != RV_QEMU_DEV_DISK) {
        rv_qemu_device_clear(&dev);
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: %s of an interface is not "
                    "supported yet", attach ? "attach" : "detach");
    }
    /* The target the call names. */
    char *target = NULL;
    if (xml) {
        target = strdup(dev.alone->disks[0].target);
    } else {
        const rv_qemu_domain_def *def = live ? d->live : rv_qemu_def_newest(d);
        for (size_t i = 0; def && def->aliases && i < def->ndisks && !target; i++) {
            char alias[32];
            rv_qemu_disk_alias(def, &def->disks[i], alias, sizeof(alias));
            if (strcmp(alias, by_alias) == 0)
                target = strdup(def->disks[i].target);
        }
        if (!target) {
            rv_qemu_device_clear(&dev);
            return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: no device found with alias %s", by_alias);
        }
    }
    if (!target) {
        rv_qemu_device_clear(&dev);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    /* The definition's part is checked before anything is done. */
    if (config) {
        int at = disk_index(rv_qemu_def_newest(d), target);
        if (attach && at >= 0)
            fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: target %s already exists", target);
        else if (!attach && at < 0)
            fail(err, RV_ERR_DEVICE_MISSING, "device not found: no target device %s", target);
        if (rv_err_is_set(err)) {
            free(target);
            rv_qemu_device_clear(&dev);
            return -1;
        }
    }
    if (!live) {
        rv_deferred *reply = rv_driver_defer(err);
        if (reply && rv_qemu_def_change(d, attach ? attach_config : detach_config,
                                        attach ? (const void *)&dev : target, reply, err) < 0) {
            rv_deferred_finish(reply, err);
            rv_err_clear(err);
        }
        free(target);
        rv_qemu_device_clear(&dev);
        return reply ? RV_DEFERRED : -1;
    }
    hp_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req) {
        free(target);
        rv_qemu_device_clear(&dev);
        return -1;
    }
    req->dev = dev;
    req->target = target;
    req->config = config;
    if (attach) {
        char alias[32];
        rv_qemu_disk_alias(d->live, &dev.alone->disks[0], alias, sizeof(alias));
        req->alias = strdup(alias);
    }
    rc = attach ? attach_live(d, req, err) : detach_live(d, req, err);
    if (rc < 0) {
        rv_deferred_finish(req->live.reply, err);
        rv_err_clear(err);
    }
    if (rc != 0)
        req_free(req);
    return RV_DEFERRED;
}

static int check(unsigned int flags, const char *fn, rv_err *err)
{
    return rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, fn, err);
}

int rv_qemu_domain_attach_device(rv_driver_conn *c, const rv_domain_attach_device_args *args, rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, AFFECT_LIVE, true, err);
}

int rv_qemu_domain_attach_device_flags(rv_driver_conn *c, const rv_domain_attach_device_flags_args *args,
                                       rv_err *err)
{
    (void)c;
    if (check(args->flags, "qemuDomainAttachDeviceFlags", err) < 0)
        return -1;
    return hotplug(&args->dom, args->xml, NULL, args->flags, true, err);
}

int rv_qemu_domain_detach_device(rv_driver_conn *c, const rv_domain_detach_device_args *args, rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, AFFECT_LIVE, false, err);
}

int rv_qemu_domain_detach_device_flags(rv_driver_conn *c, const rv_domain_detach_device_flags_args *args,
                                       rv_err *err)
{
    (void)c;
    if (check(args->flags, "qemuDomainDetachDeviceFlags", err) < 0)
        return -1;
    return hotplug(&args->dom, args->xml, NULL, args->flags, false, err);
}

int rv_qemu_domain_detach_device_alias(rv_driver_conn *c, const rv_domain_detach_device_alias_args *args,
                                       rv_err *err)
{
    (void)c;
    if (check(args->flags, "qemuDomainDetachDeviceAlias", err) < 0)
        return -1;
    return hotplug(&args->dom, NULL, args->alias, args->flags, false, err);
}
