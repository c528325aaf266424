/* Device hotplug on the QEMU driver: ATTACH_DEVICE(_FLAGS),
 * DETACH_DEVICE(_FLAGS) and DETACH_DEVICE_ALIAS of file disks and of
 * network interfaces (user, bridge, network); UPDATE_DEVICE_FLAGS of a
 * cdrom's medium (blockdev-change-medium, eject; the tray forced) and of
 * an interface's link state (set_link).
 *
 * The definition (--config) is changed through the durable write path
 * (qemu_defwrite.c: one commit point, answered once the file is synced).
 * The running guest (--live): a virtio disk is blockdev-add'ed, an
 * interface's backend netdev_add'ed (as root on a tap remvirtd makes, as
 * at start, passed with getfd), then device_add; the live definition has
 * it and DEVICE_ADDED goes out.  A detach is device_del, and the device is
 * gone when QEMU says DEVICE_DELETED (the guest ejected it): then its
 * backend goes (blockdev-del, netdev_del), the live definition loses it,
 * DEVICE_REMOVED.  As libvirtd, the call waits 5 s for that and then
 * succeeds anyway, the removal finishing whenever the guest lets go.
 * Both: the live part first, then the definition; each is checked before
 * anything is done.  Every QMP answer is a callback on the loop: the
 * call's reply is deferred, nothing waits. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_link.h"
#include "server/drivers/qemu/qemu_network.h"
#include "server/drivers/qemu/qemu_storage.h"

RV_LOG_CATEGORY("drivers.qemu.hotplug");

enum { AFFECT_LIVE = 0x1, AFFECT_CONFIG = 0x2 };
#define UNPLUG_WAIT 5.0         /* libvirtd's wait for DEVICE_DELETED in the call */
#define NO_TRANSIENT_CONFIG "transient domains do not have any persistent config"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* Which device a call names: a disk by target, an interface by MAC (when
 * the XML gave one) or by alias. */
typedef struct match {
    rv_qemu_dev_kind kind;
    char *target;               /* disk */
    unsigned char mac[6];       /* interface, when mac_given */
    bool mac_given;
    char *alias;                /* interface, by DETACH_DEVICE_ALIAS */
} match;

/* A call under way, or an unplug QEMU has not confirmed yet. */
typedef struct hp_req {
    rv_qemu_live_req live;
    rv_qemu_device dev;         /* attach: the device asked for */
    match m;                    /* detach: the device, as the definition will be asked */
    char *id;                   /* QEMU's device id: a disk's target, an interface's alias */
    char *alias;                /* libvirt's alias, for the events */
    rv_qemu_domain_def *with;   /* attach: the live definition with the device */
    int tap;                    /* attach: the interface's tap, -1: none */
    bool config;                /* then the definition too */
    bool waiting;               /* the unplug timer runs */
    bool attaching;             /* in attaches */
    ev_timer wait;
    struct hp_req *next;        /* in unplugs, or in attaches */
} hp_req;

/* Unplugs asked of QEMU and not yet confirmed by DEVICE_DELETED. */
static hp_req *unplugs;
/* Live attaches under way, one per domain at most: the next waits for
 * its turn (it must see the device before it in the live definition to
 * choose its address and alias). */
static hp_req *attaches;

static hp_req *attach_under_way(const char *name)
{
    for (hp_req *r = attaches; r; r = r->next)
        if (strcmp(r->live.name, name) == 0)
            return r;
    return NULL;
}

static void match_clear(match *m)
{
    free(m->target);
    free(m->alias);
    memset(m, 0, sizeof(*m));
}

static void req_free(hp_req *req)
{
    if (req->attaching) {
        for (hp_req **pp = &attaches; *pp; pp = &(*pp)->next)
            if (*pp == req) {
                *pp = req->next;
                break;
            }
        qemu_dom *d = rv_qemu_find_name(req->live.name);
        if (d)
            rv_qemu_turn_over(d);
    }
    if (req->waiting)
        ev_timer_stop(rv_qemu.loop, &req->wait);
    if (req->tap >= 0)
        close(req->tap);
    rv_qemu_device_clear(&req->dev);
    match_clear(&req->m);
    rv_qemu_domain_free(req->with);
    free(req->id);
    free(req->alias);
    free(req->live.name);
    free(req);
}

static int disk_index(const rv_qemu_domain_def *def, const char *target)
{
    for (size_t i = 0; def && i < def->ndisks; i++)
        if (strcmp(def->disks[i].target, target) == 0)
            return (int)i;
    return -1;
}

/* The index of the device m names in def, or -1 with libvirtd's error
 * (in the definition's words when config). */
static int find(const rv_qemu_domain_def *def, const match *m, bool config, rv_err *err)
{
    if (m->kind == RV_QEMU_DEV_DISK) {
        int i = disk_index(def, m->target);
        if (i < 0 && config)
            fail(err, RV_ERR_DEVICE_MISSING, "device not found: no target device %s", m->target);
        else if (i < 0)
            fail(err, RV_ERR_DEVICE_MISSING, "device not found: disk %s not found", m->target);
        return i;
    }
    int found = -1, n = 0;
    for (size_t i = 0; def && i < def->ninterfaces; i++) {
        const rv_qemu_interface *iface = &def->interfaces[i];
        bool hit = m->alias ? iface->alias && strcmp(iface->alias, m->alias) == 0
                            : !m->mac_given || memcmp(iface->mac, m->mac, 6) == 0;
        if (hit && n++ == 0)
            found = (int)i;
    }
    char mac[18];
    snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m->mac[0], m->mac[1], m->mac[2], m->mac[3],
             m->mac[4], m->mac[5]);
    if (n > 1)
        return fail(err, RV_ERR_OPERATION_FAILED, "operation failed: multiple devices matching MAC address %s found",
                    mac);
    if (found < 0 && m->alias)
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: no device found with alias %s", m->alias);
    else if (found < 0 && m->mac_given)
        fail(err, RV_ERR_DEVICE_MISSING, "device not found: no device matching MAC address %s found", mac);
    else if (found < 0)
        fail(err, RV_ERR_DEVICE_MISSING, "device not found: no matching network device was found");
    return found;
}

/* ================================================================ the definition */

static int attach_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const rv_qemu_device *dev = ctx;
    if (dev->kind == RV_QEMU_DEV_DISK && disk_index(def, dev->alone->disks[0].target) >= 0)
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: target %s already exists",
                    dev->alone->disks[0].target);
    rv_qemu_domain_def *with = rv_qemu_def_with_device(def, dev, err);
    if (!with)
        return -1;
    rv_qemu_def_swap(def, with);
    rv_qemu_domain_free(with);
    return 0;
}

static int detach_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const match *m = ctx;
    int i = find(def, m, true, err);
    if (i < 0)
        return -1;
    if (m->kind == RV_QEMU_DEV_DISK)
        rv_qemu_def_remove_disk(def, (size_t)i);
    else
        rv_qemu_def_remove_interface(def, (size_t)i);
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

/* In a QMP answer's callback: the request if its domain still runs and
 * QEMU said yes; else the call is answered, the request freed, NULL. */
static hp_req *alive(rv_qmp *qmp, const rv_err *err, void *opaque)
{
    hp_req *req = opaque;
    if (rv_qemu_live_req_alive(&req->live, qmp, err))
        return req;
    req_free(req);
    return NULL;
}

/* The backend's name: a disk's node, an interface's netdev. */
static void backend_of(const hp_req *req, char *buf, size_t size)
{
    snprintf(buf, size, req->dev.kind == RV_QEMU_DEV_DISK ? "drive-%s" : "host%s", req->id);
}

/* The attached device, as req->with has it (its address and alias),
 * moved into the live definition: only it, since other live changes
 * (media, memory, another device's removal) may have come meanwhile. */
static int move_new_device(rv_qemu_domain_def *live, hp_req *req)
{
    rv_qemu_domain_def *w = req->with;
    if (req->dev.kind == RV_QEMU_DEV_DISK) {
        int i = disk_index(w, req->id);
        rv_qemu_disk *grown = i < 0 ? NULL : realloc(live->disks, (live->ndisks + 1) * sizeof(*grown));
        if (!grown)
            return -1;
        live->disks = grown;
        live->disks[live->ndisks++] = w->disks[i];
        /* with no longer owns what the disk points to. */
        memmove(&w->disks[i], &w->disks[i + 1], (w->ndisks - (size_t)i - 1) * sizeof(*w->disks));
        w->ndisks--;
        return 0;
    }
    rv_qemu_interface *grown = realloc(live->interfaces, (live->ninterfaces + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    live->interfaces = grown;
    live->interfaces[live->ninterfaces++] = w->interfaces[w->ninterfaces - 1];
    w->ninterfaces--;
    return 0;
}

static void on_device_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = opaque;
    if (!rv_qemu_live_req_alive(&req->live, qmp, err)) {
        /* The backend goes with the device that did not come. */
        char backend[80];
        backend_of(req, backend, sizeof(backend));
        if (err && !rv_qmp_is_closed(qmp))
            rv_qemu_send_quietly(qmp, req->dev.kind == RV_QEMU_DEV_DISK ? "blockdev-del" : "netdev_del",
                         req->dev.kind == RV_QEMU_DEV_DISK ? "node-name" : "id", backend);
        req_free(req);
        return;
    }
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    if (move_new_device(d->live, req) < 0) {
        /* QEMU has it; the live XML cannot say so.  Logged, not undone. */
        RV_ERROR("domain '%s': out of memory recording hotplugged device '%s'", d->live->name, req->id);
    }
    save_status(d);
    device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_ADDED, req->alias);
    live_done(req, attach_config, &req->dev);
    req_free(req);
}

/* The backend is there: the device on it, at the address the
 * definition's rules gave it (as at start). */
static void on_backend_added(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = alive(qmp, err, opaque);
    if (!req)
        return;
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    const rv_qemu_domain_def *w = req->with;
    const rv_qemu_pci_addr *a;
    char backend[80], addr[32];
    backend_of(req, backend, sizeof(backend));
    json_object *args = json_object_new_object();
    if (req->dev.kind == RV_QEMU_DEV_DISK) {
        const rv_qemu_disk *disk = &w->disks[disk_index(w, req->id)];
        a = &disk->addr;
        json_object_object_add(args, "driver", json_object_new_string("virtio-blk-pci"));
        if (disk->iothread) {
            char iothread[32];
            snprintf(iothread, sizeof(iothread), "iothread%u", disk->iothread);
            json_object_object_add(args, "iothread", json_object_new_string(iothread));
        }
        json_object_object_add(args, "drive", json_object_new_string(backend));
        if (disk->serial)
            json_object_object_add(args, "serial", json_object_new_string(disk->serial));
        const char *werror, *rerror;
        rv_qemu_disk_error_policies(disk, &werror, &rerror);
        if (werror)
            json_object_object_add(args, "werror", json_object_new_string(werror));
        if (rerror)
            json_object_object_add(args, "rerror", json_object_new_string(rerror));
    } else {
        const rv_qemu_interface *n = &w->interfaces[w->ninterfaces - 1];
        const unsigned char *m = n->mac;
        char mac[18];
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
        a = &n->addr;
        json_object_object_add(args, "driver",
                               json_object_new_string(strcmp(n->model, "virtio") == 0 ? "virtio-net-pci" : n->model));
        json_object_object_add(args, "netdev", json_object_new_string(backend));
        json_object_object_add(args, "mac", json_object_new_string(mac));
    }
    snprintf(addr, sizeof(addr), "0x%x.0x%x", a->slot, a->function);
    json_object_object_add(args, "id", json_object_new_string(req->id));
    char bus[16];
    json_object_object_add(args, "bus", json_object_new_string(rv_qemu_pci_bus_id(a, rv_qemu_machine_is_q35(w->machine), bus)));
    json_object_object_add(args, "addr", json_object_new_string(addr));
    bool down = req->dev.kind == RV_QEMU_DEV_INTERFACE && w->interfaces[w->ninterfaces - 1].link == 2;
    char id[64];
    snprintf(id, sizeof(id), "%s", req->id);
    if (!rv_qemu_send_for(d, req->live.reply, "device_add", args, on_device_added, req)) {
        req_free(req);
        return;
    }
    /* Defined down: down from the start, as libvirtd does it (QEMU runs
     * this after device_add; if that failed, this fails too, unheard). */
    if (down)
        rv_qemu_set_link_quietly(d->qmp, id, false);
}

static void on_tap_passed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = alive(qmp, err, opaque);
    if (!req)
        return;
    /* QEMU holds its copy: ours goes, so the tap goes with QEMU's. */
    close(req->tap);
    req->tap = -1;
    char backend[80], fdname[96];
    backend_of(req, backend, sizeof(backend));
    snprintf(fdname, sizeof(fdname), "fd-%s", backend);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "type", json_object_new_string("tap"));
    json_object_object_add(args, "id", json_object_new_string(backend));
    json_object_object_add(args, "fd", json_object_new_string(fdname));
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    if (!rv_qemu_send_for(d, req->live.reply, "netdev_add", args, on_backend_added, req))
        req_free(req);
}

/* QEMU hotplugs onto q35's root ports only (pcie.0 refuses): a device
 * that found no free port there gets libvirtd's error before QEMU's. */
static int hotpluggable_at(const rv_qemu_domain_def *with, const rv_qemu_pci_addr *a, rv_err *err)
{
    if (!rv_qemu_machine_is_q35(with->machine) || a->bus != 0)
        return 0;
    rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR, "internal error: No more available PCI slots");
    return -1;
}

static int attach_disk_live(qemu_dom *d, hp_req *req, rv_err *err)
{
    const rv_qemu_disk *disk = &req->dev.alone->disks[0];
    if (disk->device == RV_QEMU_DISK_CDROM)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: cdrom/floppy device hotplug isn't supported");
    if (disk->bus != RV_QEMU_BUS_VIRTIO)
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: disk bus '%s' cannot be hotplugged.",
                    rv_qemu_disk_bus_name(disk->bus));
    int there = disk_index(d->live, disk->target);
    if (there >= 0) {
        const char *old = d->live->disks[there].source;
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "XML error: target '%s' duplicated for disk sources '%s' and '%s'",
                   disk->target, old ? old : "<null>", disk->source ? disk->source : "<null>");
        return -1;
    }
    if (!(req->id = strdup(disk->target)) || !(req->with = rv_qemu_def_with_device(d->live, &req->dev, err)))
        return rv_err_is_set(err) ? -1 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
    const rv_qemu_disk *added = &req->with->disks[disk_index(req->with, disk->target)];
    /* A volume disk's file, as at start. */
    if (hotpluggable_at(req->with, &added->addr, err) < 0 || rv_qemu_storage_resolve(req->with, err) < 0)
        return -1;
    char node[80], alias[32];
    backend_of(req, node, sizeof(node));
    rv_qemu_disk_alias(d->live, disk, alias, sizeof(alias));
    if (!(req->alias = strdup(alias)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    json_object *file = json_object_new_object(), *args = json_object_new_object();
    json_object_object_add(file, "driver", json_object_new_string("file"));
    json_object_object_add(file, "filename", json_object_new_string(added->source));
    json_object_object_add(args, "driver",
                           json_object_new_string(disk->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw"));
    json_object_object_add(args, "node-name", json_object_new_string(node));
    json_object_object_add(args, "read-only", json_object_new_boolean(disk->readonly));
    if (disk->discard)
        json_object_object_add(args, "discard", json_object_new_string(disk->discard == 2 ? "unmap" : "ignore"));
    json_object_object_add(args, "file", file);
    return rv_qemu_send_for(d, req->live.reply, "blockdev-add", args, on_backend_added, req) ? 0 : 1;
}

static int attach_interface_live(qemu_dom *d, hp_req *req, rv_err *err)
{
    if (!(req->with = rv_qemu_def_with_device(d->live, &req->dev, err)))
        return -1;
    rv_qemu_interface *n = &req->with->interfaces[req->with->ninterfaces - 1];
    if (hotpluggable_at(req->with, &n->addr, err) < 0)
        return -1;
    /* Its alias (QEMU's id) one past the highest, its bridge the
     * network's, its tap made now: as at start. */
    if (rv_qemu_assign_net_aliases(req->with, err) < 0 || rv_qemu_network_resolve(req->with, err) < 0)
        return -1;
    if (!(req->id = strdup(n->alias)) || !(req->alias = strdup(n->alias)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    char backend[80];
    backend_of(req, backend, sizeof(backend));
    json_object *args = json_object_new_object();
    json_object_object_add(args, "id", json_object_new_string(backend));
    if (n->type == RV_QEMU_NET_USER) {
        json_object_object_add(args, "type", json_object_new_string("user"));
    } else if (!rv_qemu.privileged) {
        json_object_object_add(args, "type", json_object_new_string("bridge"));
        json_object_object_add(args, "br", json_object_new_string(n->bridge));
    } else {
        json_object_put(args);
        const char *want = n->ifname && strncmp(n->ifname, "vnet", 4) != 0 ? n->ifname : NULL;
        char name[RV_LINK_NAME_MAX + 1];
        if ((req->tap = rv_qemu_tap_create(want, n->mac, n->bridge, name, err)) < 0)
            return -1;
        free(n->ifname);
        if (!(n->ifname = strdup(name)))
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
        char fdname[96];
        snprintf(fdname, sizeof(fdname), "fd-%s", backend);
        args = json_object_new_object();
        json_object_object_add(args, "fdname", json_object_new_string(fdname));
        rv_err qerr = { 0 };
        if (rv_qmp_command_fd(d->qmp, "getfd", args, req->tap, 0, on_tap_passed, req, &qerr) == 0)
            return 0;
        rv_deferred_finish(req->live.reply, &qerr);
        rv_err_clear(&qerr);
        return 1;
    }
    return rv_qemu_send_for(d, req->live.reply, "netdev_add", args, on_backend_added, req) ? 0 : 1;
}

/* ================================================================ detach, live */

/* QEMU let go of device id: it leaves the live definition, its backend
 * goes, DEVICE_REMOVED; the call waiting for it is answered. */
void rv_qemu_hotplug_device_deleted(qemu_dom *d, const char *id)
{
    hp_req *req = NULL, **pp = &unplugs;
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->live.name, d->live->name) == 0 && strcmp((*pp)->id, id) == 0) {
            req = *pp;
            *pp = req->next;
            break;
        }
    int i = disk_index(d->live, id);
    char backend[80];
    if (i >= 0) {
        char alias[32];
        rv_qemu_disk_alias(d->live, &d->live->disks[i], alias, sizeof(alias));
        rv_qemu_def_remove_disk(d->live, (size_t)i);
        save_status(d);
        /* A disk from the command line has no node of that name: its
         * drive went with the device. */
        snprintf(backend, sizeof(backend), "drive-%s", id);
        rv_qemu_send_quietly(d->qmp, "blockdev-del", "node-name", backend);
        device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_REMOVED, alias);
    }
    for (size_t k = 0; i < 0 && k < d->live->ninterfaces; k++) {
        if (!d->live->interfaces[k].alias || strcmp(d->live->interfaces[k].alias, id) != 0)
            continue;
        rv_qemu_def_remove_interface(d->live, k);
        save_status(d);
        snprintf(backend, sizeof(backend), "host%s", id);
        rv_qemu_send_quietly(d->qmp, "netdev_del", "id", backend);
        device_event(d, RV_DOMAIN_EVENT_ID_DEVICE_REMOVED, id);
        break;
    }
    if (!req)
        return;
    if (req->live.reply)
        live_done(req, detach_config, &req->m);
    req_free(req);
}

/* The guest refused to eject device id (ACPI _OST, or QEMU's own word). */
void rv_qemu_hotplug_unplug_failed(qemu_dom *d, const char *id)
{
    for (hp_req *req = unplugs; req; req = req->next)
        if (strcmp(req->live.name, d->live->name) == 0 && strcmp(req->id, id) == 0) {
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
        live_done(req, detach_config, &req->m);
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
    hp_req *req = alive(qmp, err, opaque);
    if (!req)
        return;
    req->next = unplugs;
    unplugs = req;
    ev_timer_init(&req->wait, on_unplug_wait, UNPLUG_WAIT, 0.);
    ev_timer_start(rv_qemu.loop, &req->wait);
    req->waiting = true;
}

static int detach_live(qemu_dom *d, hp_req *req, rv_err *err)
{
    int i = find(d->live, &req->m, false, err);
    if (i < 0)
        return -1;
    char alias[32];
    const char *id;
    if (req->m.kind == RV_QEMU_DEV_DISK) {
        const rv_qemu_disk *disk = &d->live->disks[i];
        if (disk->device == RV_QEMU_DISK_CDROM)
            return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                        "Operation not supported: disk device type 'cdrom' cannot be detached");
        if (disk->bus != RV_QEMU_BUS_VIRTIO)
            return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                        "Operation not supported: This type of disk cannot be hot unplugged");
        rv_qemu_disk_alias(d->live, disk, alias, sizeof(alias));
        id = disk->target;
    } else {
        const rv_qemu_interface *n = &d->live->interfaces[i];
        snprintf(alias, sizeof(alias), "%s", n->alias ? n->alias : "");
        id = alias;
        /* The definition's copy is found by its MAC. */
        memcpy(req->m.mac, n->mac, 6);
        req->m.mac_given = true;
        free(req->m.alias);
        req->m.alias = NULL;
    }
    if (!(req->alias = strdup(alias)) || !(req->id = strdup(id)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    json_object *args = json_object_new_object();
    json_object_object_add(args, "id", json_object_new_string(req->id));
    return rv_qemu_send_for(d, req->live.reply, "device_del", args, on_device_del, req) ? 0 : 1;
}

/* ================================================================ updates */

typedef int (*def_change_fn)(rv_qemu_domain_def *, const void *, rv_err *);

/* An update's start.  --config alone: the definition's change through
 * its durable write, answered later; NULL with *rc RV_DEFERRED (or -1).
 * Live: the request, which owns dev from now on, for the QMP command. */
static hp_req *update_begin(qemu_dom *d, bool live, bool config, rv_qemu_device *dev, def_change_fn change,
                            const void *want, int *rc, rv_err *err)
{
    *rc = -1;
    if (!live) {
        rv_deferred *reply = rv_driver_defer(err);
        if (reply && rv_qemu_def_change(d, change, want, reply, err) < 0) {
            rv_deferred_finish(reply, err);
            rv_err_clear(err);
        }
        rv_qemu_device_clear(dev);
        if (reply)
            *rc = RV_DEFERRED;
        return NULL;
    }
    hp_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req) {
        rv_qemu_device_clear(dev);
        return NULL;
    }
    req->dev = *dev;
    memset(dev, 0, sizeof(*dev));
    req->tap = -1;
    req->config = config;
    return req;
}

/* QEMU made the update: the live definition has it, then the definition
 * when asked, then the answer. */
static void update_done(rv_qmp *qmp, const rv_err *qerr, void *opaque, def_change_fn change,
                        const void *(*want_of)(const hp_req *))
{
    hp_req *req = alive(qmp, qerr, opaque);
    if (!req)
        return;
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    const void *want = want_of(req);
    rv_err ignored = { 0 };
    if (change(d->live, want, &ignored) < 0)
        rv_err_clear(&ignored);
    save_status(d);
    live_done(req, change, want);
    req_free(req);
}

/* ================================================================ cdrom media */

/* What an update records: the disk's new medium (NULL source: ejected). */
static int media_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const rv_qemu_disk *want = ctx;
    int i = disk_index(def, want->target);
    if (i < 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: target %s doesn't exist.", want->target);
    rv_qemu_disk *disk = &def->disks[i];
    char *source = want->source ? strdup(want->source) : NULL;
    if (want->source && !source)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    free(disk->source);
    disk->source = source;
    disk->format = want->format;
    free(disk->pool);
    free(disk->volume);
    disk->pool = disk->volume = NULL;
    return 0;
}

static const void *media_of(const hp_req *req)
{
    return &req->dev.alone->disks[0];
}

static void on_media_changed(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    update_done(qmp, err, opaque, media_config, media_of);
}

/* Ejected: the tray is closed again, empty, as libvirtd leaves it (its
 * TRAY_CHANGE close follows the open). */
static void on_ejected(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    hp_req *req = alive(qmp, err, opaque);
    if (!req)
        return;
    qemu_dom *d = rv_qemu_find_name(req->live.name);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "id", json_object_new_string(req->dev.alone->disks[0].target));
    if (!rv_qemu_send_for(d, req->live.reply, "blockdev-close-tray", args, on_media_changed, req))
        req_free(req);
}

/* ================================================================ link state */

/* The interface with want's MAC (libvirtd's errors when none or many). */
static int iface_of(const rv_qemu_domain_def *def, const rv_qemu_interface *want, rv_err *err)
{
    match m = { .kind = RV_QEMU_DEV_INTERFACE, .mac_given = true };
    memcpy(m.mac, want->mac, 6);
    return find(def, &m, false, err);
}

/* Only the link state may change (cockpit's Unplug and Plug); what else
 * differs is refused, as libvirtd refuses what it cannot change live. */
static int link_check(const rv_qemu_domain_def *def, const rv_qemu_interface *want, rv_err *err)
{
    int i = iface_of(def, want, err);
    if (i < 0)
        return -1;
    const rv_qemu_interface *n = &def->interfaces[i];
    if (n->type != want->type || strcmp(n->model, want->model) != 0 ||
        (want->network && (!n->network || strcmp(n->network, want->network) != 0)) ||
        (want->type == RV_QEMU_NET_BRIDGE && strcmp(n->bridge, want->bridge) != 0))
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: of a network interface, only its link state can be updated");
    return i;
}

static int link_config(rv_qemu_domain_def *def, const void *ctx, rv_err *err)
{
    const rv_qemu_interface *want = ctx;
    int i = link_check(def, want, err);
    if (i < 0)
        return -1;
    def->interfaces[i].link = want->link;
    return 0;
}

static const void *link_of(const hp_req *req)
{
    return &req->dev.alone->interfaces[0];
}

static void on_link_set(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    update_done(qmp, err, opaque, link_config, link_of);
}

static int update_link(qemu_dom *d, bool live, bool config, rv_qemu_device *dev, rv_err *err)
{
    const rv_qemu_interface *want = &dev->alone->interfaces[0];
    int i = -1;
    if ((config && link_check(rv_qemu_def_newest(d), want, err) < 0) ||
        (live && (i = link_check(d->live, want, err)) < 0)) {
        rv_qemu_device_clear(dev);
        return -1;
    }
    int rc;
    hp_req *req = update_begin(d, live, config, dev, link_config, want, &rc, err);
    if (!req)
        return rc;
    json_object *args = json_object_new_object();
    json_object_object_add(args, "name", json_object_new_string(d->live->interfaces[i].alias));
    json_object_object_add(args, "up", json_object_new_boolean(want->link != 2));
    if (!rv_qemu_send_for(d, req->live.reply, "set_link", args, on_link_set, req))
        req_free(req);
    return RV_DEFERRED;
}

/* UPDATE_DEVICE_FLAGS: a cdrom's medium, or an interface's link state. */
static int update_device(const rv_nonnull_domain *wire, const char *xml, unsigned int flags, rv_err *err)
{
    rv_qemu_device dev = { 0 };
    qemu_dom *d;
    bool live, config;
    int rc = rv_qemu_pick_defs(wire, flags, NO_TRANSIENT_CONFIG, &d, &live, &config, err);
    if (rc)
        return rc;
    if (rv_qemu_device_read(xml, &dev, err) < 0)
        return -1;
    if (dev.kind == RV_QEMU_DEV_INTERFACE)
        return update_link(d, live, config, &dev, err);
    const rv_qemu_disk *want = dev.kind == RV_QEMU_DEV_DISK ? &dev.alone->disks[0] : NULL;
    int i;
    if (want && want->pool)
        fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: a volume as a cdrom's medium");
    else if (!want || want->device != RV_QEMU_DISK_CDROM)
        fail(err, RV_ERR_OPERATION_UNSUPPORTED,
             "Operation not supported: only a cdrom's medium or an interface's link state can be updated");
    else if (config && disk_index(rv_qemu_def_newest(d), want->target) < 0)
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: target %s doesn't exist.", want->target);
    else if (live && ((i = disk_index(d->live, want->target)) < 0 || d->live->disks[i].device != RV_QEMU_DISK_CDROM))
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: No device with bus '%s' and target '%s'",
             rv_qemu_disk_bus_name(want->bus), want->target);
    if (rv_err_is_set(err)) {
        rv_qemu_device_clear(&dev);
        return -1;
    }
    hp_req *req = update_begin(d, live, config, &dev, media_config, want, &rc, err);
    if (!req)
        return rc;
    /* The tray is forced open: the guest may have locked it. */
    json_object *args = json_object_new_object();
    json_object_object_add(args, "id", json_object_new_string(want->target));
    if (want->source) {
        json_object_object_add(args, "filename", json_object_new_string(want->source));
        json_object_object_add(args, "format",
                               json_object_new_string(want->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw"));
        json_object_object_add(args, "force", json_object_new_boolean(true));
    } else {
        json_object_object_add(args, "force", json_object_new_boolean(true));
    }
    if (!rv_qemu_send_for(d, req->live.reply, want->source ? "blockdev-change-medium" : "eject", args,
                          want->source ? on_media_changed : on_ejected, req))
        req_free(req);
    return RV_DEFERRED;
}

int rv_qemu_domain_update_device_flags(rv_driver_conn *c, const rv_domain_update_device_flags_args *args,
                                       rv_err *err)
{
    (void)c;
    /* VIR_DOMAIN_DEVICE_MODIFY_FORCE (4): the tray is always forced. */
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, AFFECT_LIVE | AFFECT_CONFIG | 0x4,
                            "qemuDomainUpdateDeviceFlags", err) < 0)
        return -1;
    return update_device(&args->dom, args->xml, args->flags & ~0x4u, err);
}

/* ================================================================ the calls */

/* What the call names: from the device's XML, or by alias (a disk's
 * alias is found in def, which has aliases when live). */
static int match_of(const rv_qemu_device *dev, const char *by_alias, const rv_qemu_domain_def *def, match *m,
                    rv_err *err)
{
    memset(m, 0, sizeof(*m));
    if (dev->text) {
        m->kind = dev->kind;
        if (dev->kind == RV_QEMU_DEV_DISK && !(m->target = strdup(dev->alone->disks[0].target)))
            return fail(err, RV_ERR_NO_MEMORY, "out of memory");
        if (dev->kind == RV_QEMU_DEV_INTERFACE) {
            memcpy(m->mac, dev->alone->interfaces[0].mac, 6);
            m->mac_given = dev->mac_given;
        }
        return 0;
    }
    for (size_t i = 0; def && def->aliases && i < def->ndisks; i++) {
        char alias[32];
        rv_qemu_disk_alias(def, &def->disks[i], alias, sizeof(alias));
        if (strcmp(alias, by_alias) == 0) {
            m->kind = RV_QEMU_DEV_DISK;
            return (m->target = strdup(def->disks[i].target)) ? 0 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
        }
    }
    m->kind = RV_QEMU_DEV_INTERFACE;
    if (!(m->alias = strdup(by_alias)))
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    return find(def, m, false, err) < 0 ? -1 : 0;
}

/* fn: the libvirt function whose flags the call checks (NULL: none given). */
static int hotplug(const rv_nonnull_domain *wire, const char *xml, const char *by_alias,
                   unsigned int flags, bool attach, const char *fn, rv_err *err)
{
    rv_qemu_device dev = { 0 };
    match m = { 0 };
    qemu_dom *d;
    bool live, config;
    if (fn && rv_qemu_check_flags(RV_FROM_QEMU, flags, AFFECT_LIVE | AFFECT_CONFIG, fn, err) < 0)
        return -1;
    int rc = rv_qemu_pick_defs(wire, flags, NO_TRANSIENT_CONFIG, &d, &live, &config, err);
    if (rc)
        return rc;
    if ((xml && rv_qemu_device_read(xml, &dev, err) < 0) ||
        match_of(&dev, by_alias, live ? d->live : rv_qemu_def_newest(d), &m, err) < 0)
        goto fail;
    /* The definition's part is checked before anything is done. */
    if (config && attach && dev.kind == RV_QEMU_DEV_DISK && disk_index(rv_qemu_def_newest(d), m.target) >= 0) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: target %s already exists", m.target);
        goto fail;
    }
    /* A disk's IOThread is one the domain has, in each definition changed. */
    if (attach && dev.kind == RV_QEMU_DEV_DISK &&
        ((config && rv_qemu_disk_iothread_check(rv_qemu_def_newest(d), &dev.alone->disks[0], err) < 0) ||
         (live && rv_qemu_disk_iothread_check(d->live, &dev.alone->disks[0], err) < 0)))
        goto fail;
    if (config && !attach) {
        /* An interface named by alias is found in the definition by the
         * live one's MAC (detach_live), else as named. */
        match probe = m;
        int i = m.alias ? 0 : find(rv_qemu_def_newest(d), &probe, true, err);
        if (i < 0)
            goto fail;
    }
    if (!live) {
        rv_deferred *reply = rv_driver_defer(err);
        if (reply && rv_qemu_def_change(d, attach ? attach_config : detach_config,
                                        attach ? (const void *)&dev : &m, reply, err) < 0) {
            rv_deferred_finish(reply, err);
            rv_err_clear(err);
        }
        match_clear(&m);
        rv_qemu_device_clear(&dev);
        return reply ? RV_DEFERRED : -1;
    }
    if (attach && attach_under_way(d->live->name)) {
        match_clear(&m);
        rv_qemu_device_clear(&dev);
        return rv_qemu_wait_turn(d, err);
    }
    hp_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req)
        goto fail;
    req->dev = dev;
    req->m = m;
    req->tap = -1;
    req->config = config;
    rc = !attach ? detach_live(d, req, err)
         : dev.kind == RV_QEMU_DEV_DISK ? attach_disk_live(d, req, err) : attach_interface_live(d, req, err);
    if (rc < 0) {
        rv_deferred_finish(req->live.reply, err);
        rv_err_clear(err);
    }
    if (rc != 0) {
        req_free(req);
    } else if (attach) {
        req->attaching = true;
        req->next = attaches;
        attaches = req;
    }
    return RV_DEFERRED;
fail:
    match_clear(&m);
    rv_qemu_device_clear(&dev);
    return -1;
}

int rv_qemu_domain_attach_device(rv_driver_conn *c, const rv_domain_attach_device_args *args, rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, AFFECT_LIVE, true, NULL, err);
}

int rv_qemu_domain_attach_device_flags(rv_driver_conn *c, const rv_domain_attach_device_flags_args *args,
                                       rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, args->flags, true, "qemuDomainAttachDeviceFlags", err);
}

int rv_qemu_domain_detach_device(rv_driver_conn *c, const rv_domain_detach_device_args *args, rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, AFFECT_LIVE, false, NULL, err);
}

int rv_qemu_domain_detach_device_flags(rv_driver_conn *c, const rv_domain_detach_device_flags_args *args,
                                       rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, args->xml, NULL, args->flags, false, "qemuDomainDetachDeviceFlags", err);
}

int rv_qemu_domain_detach_device_alias(rv_driver_conn *c, const rv_domain_detach_device_alias_args *args,
                                       rv_err *err)
{
    (void)c;
    return hotplug(&args->dom, NULL, args->alias, args->flags, false, "qemuDomainDetachDeviceAlias", err);
}
