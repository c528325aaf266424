/* The calls that go through the guest agent (qemu_agent.c runs each as a
 * job of its domain): file systems frozen, thawed and trimmed, a user's
 * password and SSH keys, the guest's vCPUs, what it says about itself
 * (GET_GUEST_INFO), suspend to memory or disk; and the agent's response
 * timeout.  PM_WAKEUP is QEMU's (system_wakeup).  Arguments are checked
 * and refused with libvirtd's words before anything is queued. */
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* Queue cmd with args (taken) for the call being served: RV_DEFERRED or -1. */
static int agent_job(qemu_dom *d, const rv_qemu_agent_cmd *cmd, json_object *args, rv_err *err)
{
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply) {
        json_object_put(args);
        return -1;
    }
    rv_qemu_agent_job(d, cmd, args ? json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN)
                                   : NULL, reply);
    json_object_put(args);
    return RV_DEFERRED;
}

/* The agent's int answer as the call's first int field. */
static int finish_count(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    (void)d;
    if (!json_object_is_type(ret, json_type_int))
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: malformed return value");
    if (out)
        *(int *)out = json_object_get_int(ret);
    return 0;
}

static json_object *string_array(char **v, u_int n)
{
    json_object *a = json_object_new_array();
    for (u_int i = 0; a && i < n; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

/* ================================================================ file systems */

static const rv_qemu_agent_cmd cmd_freeze = { .command = "guest-fsfreeze-freeze",
    .finish = finish_count };
static const rv_qemu_agent_cmd cmd_freeze_list = { .command = "guest-fsfreeze-freeze-list",
    .finish = finish_count };
static const rv_qemu_agent_cmd cmd_thaw = { .command = "guest-fsfreeze-thaw",
    .finish = finish_count };
static const rv_qemu_agent_cmd cmd_trim = { .command = "guest-fstrim" };

static int freeze_or_thaw(const rv_nonnull_domain *wire, char **points, u_int n,
                          unsigned int flags, bool freeze, rv_err *err)
{
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, 0,
                            freeze ? "qemuDomainFSFreeze" : "qemuDomainFSThaw", err) < 0)
        return -1;
    /* libvirtd's QEMU driver: thaw takes no mount points (the agent thaws all). */
    if (!freeze && n)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: specifying mountpoints is not supported");
    if (!(d = rv_qemu_agent_domain(wire, err)))
        return -1;
    json_object *args = NULL;
    if (n) {
        if (!(args = json_object_new_object()))
            return oom(err);
        json_object_object_add(args, "mountpoints", string_array(points, n));
    }
    return agent_job(d, !freeze ? &cmd_thaw : n ? &cmd_freeze_list : &cmd_freeze, args, err);
}

int rv_qemu_domain_fsfreeze(rv_driver_conn *c, const rv_domain_fsfreeze_args *args,
                            rv_domain_fsfreeze_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    return freeze_or_thaw(&args->dom, args->mountpoints.mountpoints_val,
                          args->mountpoints.mountpoints_len, args->flags, true, err);
}

int rv_qemu_domain_fsthaw(rv_driver_conn *c, const rv_domain_fsthaw_args *args,
                          rv_domain_fsthaw_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    return freeze_or_thaw(&args->dom, args->mountpoints.mountpoints_val,
                          args->mountpoints.mountpoints_len, args->flags, false, err);
}

int rv_qemu_domain_fstrim(rv_driver_conn *c, const rv_domain_fstrim_args *args, rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainFSTrim", err) < 0)
        return -1;
    if (args->mountPoint && *args->mountPoint)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Specifying mount point is not supported for now");
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    json_object *a = json_object_new_object();
    if (!a)
        return oom(err);
    json_object_object_add(a, "minimum", json_object_new_int64((int64_t)args->minimum));
    return agent_job(d, &cmd_trim, a, err);
}

/* A member of the agent's reply that libvirt requires, or NULL with its error. */
static json_object *fs_member(json_object *o, const char *key, json_type type, rv_err *err)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type)) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: '%s' missing in reply of guest-get-fsinfo",
             key);
        return NULL;
    }
    return v;
}

/* The domain disk at the address the agent reports for one of a file
 * system's disks (a virtio disk's PCI slot, a SCSI disk's bus, target and
 * unit), as libvirt matches them; NULL for none. */
static const char *fs_disk_target(const rv_qemu_domain_def *def, json_object *disk, rv_err *err)
{
    json_object *pci = fs_member(disk, "pci-controller", json_type_object, err);
    json_object *bus = pci ? fs_member(disk, "bus", json_type_int, err) : NULL;
    json_object *target = bus ? fs_member(disk, "target", json_type_int, err) : NULL;
    json_object *unit = target ? fs_member(disk, "unit", json_type_int, err) : NULL;
    if (!unit)
        return NULL;
    int dom = json_object_get_int(json_object_object_get(pci, "domain"));
    int pbus = json_object_get_int(json_object_object_get(pci, "bus"));
    int slot = json_object_get_int(json_object_object_get(pci, "slot"));
    int func = json_object_get_int(json_object_object_get(pci, "function"));
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *k = &def->disks[i];
        if (k->addr.set && dom == 0 && (unsigned)pbus == k->addr.bus && (unsigned)slot == k->addr.slot &&
            (unsigned)func == k->addr.function)
            return k->target;
        if (k->drive.set && (unsigned)json_object_get_int(bus) == k->drive.bus &&
            (unsigned)json_object_get_int(target) == k->drive.target &&
            (unsigned)json_object_get_int(unit) == k->drive.unit)
            return k->target;
    }
    return NULL;
}

/* guest-get-fsinfo's file systems, in mount order (the agent lists the
 * last mounted first), each with the domain's disks it is on. */
static int finish_fsinfo(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    if (!json_object_is_type(ret, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: guest-get-fsinfo reply was missing return data");
    size_t n = json_object_array_length(ret);
    if (n > RV_FSINFO_MAX)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: too many file systems (%zu)", n);
    rv_domain_get_fsinfo_ret *r = out;
    rv_domain_fsinfo *info = n ? calloc(n, sizeof(*info)) : NULL;
    if (n && !info)
        return oom(err);
    if (r) {
        r->info.info_val = info;
        r->info.info_len = (u_int)n;
        r->ret = (u_int)n;
    }
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    bool short_of_memory = false;
    for (size_t i = 0; i < n && !short_of_memory && !rv_err_is_set(err); i++) {
        json_object *fs = json_object_array_get_idx(ret, i);
        rv_domain_fsinfo *f = &info[n - 1 - i];
        json_object *mp = fs_member(fs, "mountpoint", json_type_string, err);
        json_object *name = mp ? fs_member(fs, "name", json_type_string, err) : NULL;
        json_object *type = name ? fs_member(fs, "type", json_type_string, err) : NULL;
        json_object *disks = type ? fs_member(fs, "disk", json_type_array, err) : NULL;
        if (!disks)
            break;
        size_t nd = json_object_array_length(disks);
        if (nd > RV_FSINFO_DISKS_MAX) {
            fail(err, RV_ERR_INTERNAL_ERROR, "internal error: too many disks (%zu)", nd);
            break;
        }
        short_of_memory = !(f->mountpoint = strdup(json_object_get_string(mp))) ||
                          !(f->name = strdup(json_object_get_string(name))) ||
                          !(f->fstype = strdup(json_object_get_string(type))) ||
                          (nd && !(f->dev_aliases.dev_aliases_val = calloc(nd, sizeof(char *))));
        for (size_t k = 0; k < nd && !short_of_memory && !rv_err_is_set(err); k++) {
            const char *t = fs_disk_target(def, json_object_array_get_idx(disks, k), err);
            char **slot = &f->dev_aliases.dev_aliases_val[f->dev_aliases.dev_aliases_len];
            if (t && !(*slot = strdup(t)))
                short_of_memory = true;
            else if (t)
                f->dev_aliases.dev_aliases_len++;
        }
    }
    if (short_of_memory)
        oom(err);
    /* Unsent (nobody waits): freed here; else with the reply. */
    if (!r) {
        rv_domain_get_fsinfo_ret unsent = { .info = { (u_int)n, info } };
        xdr_free((xdrproc_t)xdr_rv_domain_get_fsinfo_ret, (char *)&unsent);
    }
    return rv_err_is_set(err) ? -1 : 0;
}

static const rv_qemu_agent_cmd cmd_fsinfo = { .command = "guest-get-fsinfo",
    .finish = finish_fsinfo };

int rv_qemu_domain_get_fsinfo(rv_driver_conn *c, const rv_domain_get_fsinfo_args *args,
                              rv_domain_get_fsinfo_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetFSInfo", err) < 0 ||
        !(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return agent_job(d, &cmd_fsinfo, NULL, err);
}

/* ================================================================ users */

static const rv_qemu_agent_cmd cmd_password = { .command = "guest-set-user-password" };

int rv_qemu_domain_set_user_password(rv_driver_conn *c,
                                     const rv_domain_set_user_password_args *args, rv_err *err)
{
    (void)c;
    const unsigned int encrypted = 1;   /* VIR_DOMAIN_PASSWORD_ENCRYPTED */
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, encrypted, "qemuDomainSetUserPassword",
                            err) < 0)
        return -1;
    if (!args->user || !args->password)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: %s in virDomainSetUserPassword must not be NULL",
                           args->user ? "password" : "user");
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    gnutls_datum_t in = { (unsigned char *)*args->password, (unsigned)strlen(*args->password) };
    gnutls_datum_t b64 = { NULL, 0 };
    json_object *a = json_object_new_object();
    if (!a || gnutls_base64_encode2(&in, &b64) != 0) {
        json_object_put(a);
        return oom(err);
    }
    json_object_object_add(a, "crypted", json_object_new_boolean(args->flags & encrypted));
    json_object_object_add(a, "username", json_object_new_string(*args->user));
    json_object_object_add(a, "password", json_object_new_string_len((char *)b64.data,
                                                                     (int)b64.size));
    gnutls_free(b64.data);
    return agent_job(d, &cmd_password, a, err);
}

static int finish_keys(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    (void)d;
    json_object *keys = NULL;
    if (!json_object_object_get_ex(ret, "keys", &keys) ||
        !json_object_is_type(keys, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: qemu agent didn't return an array of keys");
    size_t n = json_object_array_length(keys);
    if (n > RV_DOMAIN_AUTHORIZED_SSH_KEYS_MAX)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: too many keys (%zu)", n);
    rv_domain_authorized_ssh_keys_get_ret *r = out;
    if (!r || !n)
        return 0;
    if (!(r->keys.keys_val = calloc(n, sizeof(char *))))
        return oom(err);
    for (size_t i = 0; i < n; i++) {
        const char *k = json_object_get_string(json_object_array_get_idx(keys, i));
        if (!(r->keys.keys_val[i] = strdup(k ? k : "")))
            return oom(err);
        r->keys.keys_len = (u_int)i + 1;
    }
    return 0;
}

static const rv_qemu_agent_cmd cmd_keys_get = { .command = "guest-ssh-get-authorized-keys",
    .finish = finish_keys };
static const rv_qemu_agent_cmd cmd_keys_add = { .command = "guest-ssh-add-authorized-keys" };
static const rv_qemu_agent_cmd cmd_keys_remove = { .command = "guest-ssh-remove-authorized-keys" };

int rv_qemu_domain_authorized_ssh_keys_get(rv_driver_conn *c,
                                           const rv_domain_authorized_ssh_keys_get_args *args,
                                           rv_domain_authorized_ssh_keys_get_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainAuthorizedSSHKeysGet",
                            err) < 0 ||
        !(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    json_object *a = json_object_new_object();
    if (!a)
        return oom(err);
    json_object_object_add(a, "username", json_object_new_string(args->user));
    return agent_job(d, &cmd_keys_get, a, err);
}

int rv_qemu_domain_authorized_ssh_keys_set(rv_driver_conn *c,
                                           const rv_domain_authorized_ssh_keys_set_args *args,
                                           rv_err *err)
{
    (void)c;
    const unsigned int append = 1, remove = 2;  /* VIR_DOMAIN_AUTHORIZED_SSH_KEYS_SET_* */
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, append | remove,
                            "qemuDomainAuthorizedSSHKeysSet", err) < 0 ||
        !(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    json_object *a = json_object_new_object();
    if (!a)
        return oom(err);
    json_object_object_add(a, "username", json_object_new_string(args->user));
    json_object_object_add(a, "keys", string_array(args->keys.keys_val, args->keys.keys_len));
    if (!(args->flags & remove))
        json_object_object_add(a, "reset", json_object_new_boolean(!(args->flags & append)));
    return agent_job(d, args->flags & remove ? &cmd_keys_remove : &cmd_keys_add, a, err);
}

/* ================================================================ vCPUs */

/* guest-get-vcpus' answer: the logical ids present, online and
 * offlinable as bitmaps of *len bytes. */
typedef struct guest_vcpus {
    unsigned char *present, *online, *offlinable;
    size_t len;
} guest_vcpus;

static void guest_vcpus_clear(guest_vcpus *g)
{
    free(g->present);
    free(g->online);
    free(g->offlinable);
    memset(g, 0, sizeof(*g));
}

static int read_vcpus(json_object *ret, guest_vcpus *g, rv_err *err)
{
    if (!json_object_is_type(ret, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: guest-get-vcpus reply was missing return data");
    size_t n = json_object_array_length(ret);
    int max = -1;
    for (size_t i = 0; i < n; i++) {
        json_object *id = NULL;
        if (!json_object_object_get_ex(json_object_array_get_idx(ret, i), "logical-id", &id) ||
            json_object_get_int(id) < 0 || json_object_get_int(id) >= RV_TUNE_BITMAP_MAX_BITS)
            return fail(err, RV_ERR_INTERNAL_ERROR,
                        "internal error: 'logical-id' missing in reply of guest-get-vcpus");
        if (json_object_get_int(id) > max)
            max = json_object_get_int(id);
    }
    g->len = (size_t)(max + 8) / 8;
    if (!(g->present = calloc(g->len + 1, 1)) || !(g->online = calloc(g->len + 1, 1)) ||
        !(g->offlinable = calloc(g->len + 1, 1)))
        return oom(err);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(ret, i), *id, *on = NULL, *can = NULL;
        json_object_object_get_ex(e, "logical-id", &id);
        int v = json_object_get_int(id);
        unsigned char bit = (unsigned char)(1u << (v % 8));
        g->present[v / 8] |= bit;
        if (json_object_object_get_ex(e, "online", &on) && json_object_get_boolean(on))
            g->online[v / 8] |= bit;
        if (json_object_object_get_ex(e, "can-offline", &can) && json_object_get_boolean(can))
            g->offlinable[v / 8] |= bit;
    }
    return 0;
}

static int finish_get_vcpus(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    (void)d;
    guest_vcpus g = { 0 };
    rv_tparam_list l = { 0 };
    int rc = read_vcpus(ret, &g, err);
    if (rc == 0 && out) {
        const char *names[] = { "vcpus", "online", "offlinable" };
        unsigned char *maps[] = { g.present, g.online, g.offlinable };
        for (int i = 0; i < 3; i++) {
            char *s = rv_tune_bitmap_format(maps[i], g.len);
            if (s)
                rv_tparam_put(&l, names[i], RV_TYPED_PARAM_STRING, 0, s);
            else
                l.oom = true;
            free(s);
        }
        rv_domain_get_guest_vcpus_ret *r = out;
        r->params.params_val = l.v;
        r->params.params_len = l.n;
        if (l.oom)
            rc = oom(err);
    }
    guest_vcpus_clear(&g);
    return rc;
}

static const rv_qemu_agent_cmd cmd_get_vcpus = { .command = "guest-get-vcpus",
    .finish = finish_get_vcpus };

int rv_qemu_domain_get_guest_vcpus(rv_driver_conn *c, const rv_domain_get_guest_vcpus_args *args,
                                   rv_domain_get_guest_vcpus_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetGuestVcpus", err) < 0 ||
        !(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return agent_job(d, &cmd_get_vcpus, NULL, err);
}

static int finish_set_vcpus(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    (void)d;
    (void)out;
    return json_object_is_type(ret, json_type_int)
               ? 0
               : fail(err, RV_ERR_INTERNAL_ERROR, "internal error: malformed return value");
}

static const rv_qemu_agent_cmd cmd_set_vcpus = { .command = "guest-set-vcpus",
    .finish = finish_set_vcpus };

/* The guest's vCPUs read: the change asked (the call's arguments) checked
 * against them, then sent. */
static int finish_set_read(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    (void)out;
    const rv_domain_set_guest_vcpus_args *a = rv_deferred_args(d->jobs->reply);
    guest_vcpus g = { 0 };
    unsigned char *map = NULL;
    size_t len = 0;
    json_object *list = NULL;
    int rc = read_vcpus(ret, &g, err);
    if (rc == 0)
        rc = rv_tune_bitmap_parse(a->cpumap, &map, &len, err);
    if (rc == 0 && !(list = json_object_new_array()))
        rc = oom(err);
    /* The vCPUs asked that the guest lacks, all named; then each one
     * that cannot go offline, as libvirtd checks them. */
    unsigned char *missing = rc == 0 ? calloc(len + 1, 1) : NULL;
    if (rc == 0 && !missing)
        rc = oom(err);
    for (size_t i = 0; rc == 0 && i < len * 8; i++)
        if ((map[i / 8] & (1u << (i % 8))) &&
            !(i < g.len * 8 && (g.present[i / 8] & (1u << (i % 8)))))
            missing[i / 8] |= (unsigned char)(1u << (i % 8));
    if (rc == 0 && !rv_tune_bitmap_empty(missing, len)) {
        char *names = rv_tune_bitmap_format(missing, len);
        rc = names ? fail(err, RV_ERR_INVALID_ARG,
                          "invalid argument: guest is missing vCPUs '%s'", names)
                   : oom(err);
        free(names);
    }
    free(missing);
    for (size_t i = 0; rc == 0 && i < len * 8; i++) {
        if (!(map[i / 8] & (1u << (i % 8))))
            continue;
        if (!a->state && !(g.offlinable[i / 8] & (1u << (i % 8))))
            rc = fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                      "Operation not supported: vCPU '%zu' is not offlinable", i);
        else if (!!(g.online[i / 8] & (1u << (i % 8))) != !!a->state) {
            json_object *e = json_object_new_object();
            json_object_object_add(e, "logical-id", json_object_new_int((int)i));
            json_object_object_add(e, "online", json_object_new_boolean(a->state));
            json_object_array_add(list, e);
        }
    }
    guest_vcpus_clear(&g);
    free(map);
    if (rc == 0 && json_object_array_length(list) > 0) {
        json_object *args = json_object_new_object();
        json_object_object_add(args, "vcpus", list);
        rv_qemu_agent_then(d, &cmd_set_vcpus, args);
    } else {
        json_object_put(list);
    }
    return rc;
}

static const rv_qemu_agent_cmd cmd_set_read = { .command = "guest-get-vcpus",
    .finish = finish_set_read };

int rv_qemu_domain_set_guest_vcpus(rv_driver_conn *c, const rv_domain_set_guest_vcpus_args *args,
                                   rv_err *err)
{
    (void)c;
    qemu_dom *d;
    unsigned char *map = NULL;
    size_t len = 0;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSetGuestVcpus", err) < 0 ||
        rv_tune_bitmap_parse(args->cpumap, &map, &len, err) < 0)
        return -1;
    free(map);
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return agent_job(d, &cmd_set_read, NULL, err);
}

/* ================================================================ guest info */

enum { INFO_USERS = 1, INFO_OS = 2, INFO_TIMEZONE = 4, INFO_HOSTNAME = 8, INFO_FILESYSTEM = 16,
       INFO_DISKS = 32, INFO_INTERFACES = 64 };

/* The list being built for the call, kept in its result until the end. */
static rv_tparam_list info_list(void *out)
{
    rv_domain_get_guest_info_ret *r = out;
    rv_tparam_list l = { r->params.params_val, r->params.params_len, r->params.params_len, false };
    return l;
}

static int info_store(void *out, rv_tparam_list *l, rv_err *err)
{
    rv_domain_get_guest_info_ret *r = out;
    r->params.params_val = l->v;
    r->params.params_len = l->n;
    if (l->oom || l->n > RV_DOMAIN_GUEST_INFO_PARAMS_MAX)
        return oom(err);
    return 0;
}

static void info_next(qemu_dom *d, unsigned int after);

/* An agent without the command: an error only when the type was asked
 * for by name (libvirtd's rule). */
static int info_missing(qemu_dom *d, unsigned int type, const char *command, rv_err *err)
{
    const rv_domain_get_guest_info_args *a = rv_deferred_args(d->jobs->reply);
    if (a->types & type)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: unable to execute QEMU agent command '%s': The command %s "
                    "has not been found", command, command);
    info_next(d, type);
    return 0;
}

static int finish_users(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    if (!ret)
        return info_missing(d, INFO_USERS, "guest-get-users", err);
    if (!json_object_is_type(ret, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: guest-get-users reply was missing return data");
    rv_tparam_list l = info_list(out);
    size_t n = json_object_array_length(ret);
    rv_tparam_put(&l, "user.count", RV_TYPED_PARAM_UINT, n, NULL);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(ret, i), *v;
        char field[80];
        if (json_object_object_get_ex(e, "user", &v)) {
            snprintf(field, sizeof field, "user.%zu.name", i);
            rv_tparam_put(&l, field, RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
        }
        if (json_object_object_get_ex(e, "domain", &v)) {
            snprintf(field, sizeof field, "user.%zu.domain", i);
            rv_tparam_put(&l, field, RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
        }
        if (json_object_object_get_ex(e, "login-time", &v)) {
            snprintf(field, sizeof field, "user.%zu.login-time", i);
            rv_tparam_put(&l, field, RV_TYPED_PARAM_ULLONG,
                          (unsigned long long)(json_object_get_double(v) * 1000), NULL);
        }
    }
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_USERS);
    return 0;
}

static int finish_os(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    static const char *const keys[][2] = {
        { "id", "os.id" }, { "name", "os.name" }, { "pretty-name", "os.pretty-name" },
        { "version", "os.version" }, { "version-id", "os.version-id" },
        { "kernel-release", "os.kernel-release" }, { "kernel-version", "os.kernel-version" },
        { "machine", "os.machine" }, { "variant", "os.variant" },
        { "variant-id", "os.variant-id" },
    };
    if (!ret)
        return info_missing(d, INFO_OS, "guest-get-osinfo", err);
    rv_tparam_list l = info_list(out);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_object *v;
        if (json_object_object_get_ex(ret, keys[i][0], &v))
            rv_tparam_put(&l, keys[i][1], RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
    }
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_OS);
    return 0;
}

static int finish_timezone(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    if (!ret)
        return info_missing(d, INFO_TIMEZONE, "guest-get-timezone", err);
    rv_tparam_list l = info_list(out);
    json_object *v;
    if (json_object_object_get_ex(ret, "zone", &v))
        rv_tparam_put(&l, "timezone.name", RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
    if (!json_object_object_get_ex(ret, "offset", &v))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: 'offset' missing in reply of guest-get-timezone");
    rv_tparam_put(&l, "timezone.offset", RV_TYPED_PARAM_INT,
                  (unsigned long long)(long long)json_object_get_int(v), NULL);
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_TIMEZONE);
    return 0;
}

static int finish_hostname(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    json_object *v;
    if (!ret)
        return info_missing(d, INFO_HOSTNAME, "guest-get-host-name", err);
    rv_tparam_list l = info_list(out);
    if (json_object_object_get_ex(ret, "host-name", &v))
        rv_tparam_put(&l, "hostname", RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_HOSTNAME);
    return 0;
}

/* A failure part way: what was built stays in the result, freed with it. */
static int fail_kept(void *out, rv_tparam_list *l)
{
    rv_domain_get_guest_info_ret *r = out;
    r->params.params_val = l->v;
    r->params.params_len = l->n;
    return -1;
}

/* guest-get-fsinfo's file systems as GET_GUEST_INFO's fs.* (mount order,
 * a disk's alias where the domain has it, as DOMAIN_GET_FSINFO). */
static int finish_fs(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    if (!ret)
        return info_missing(d, INFO_FILESYSTEM, "guest-get-fsinfo", err);
    if (!json_object_is_type(ret, json_type_array))
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: guest-get-fsinfo reply was missing return data");
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    rv_tparam_list l = info_list(out);
    size_t n = json_object_array_length(ret);
    rv_tparam_put(&l, "fs.count", RV_TYPED_PARAM_UINT, n, NULL);
    for (size_t i = 0; i < n; i++) {
        json_object *fs = json_object_array_get_idx(ret, n - 1 - i), *used, *total;
        json_object *mp = fs_member(fs, "mountpoint", json_type_string, err);
        json_object *name = mp ? fs_member(fs, "name", json_type_string, err) : NULL;
        json_object *type = name ? fs_member(fs, "type", json_type_string, err) : NULL;
        json_object *disks = type ? fs_member(fs, "disk", json_type_array, err) : NULL;
        if (!disks)
            return fail_kept(out, &l);
        char field[96];
#define FS_PUT(suffix, type, num, str) \
        (snprintf(field, sizeof field, "fs.%zu.%s", i, (suffix)), rv_tparam_put(&l, field, (type), (num), (str)))
        FS_PUT("name", RV_TYPED_PARAM_STRING, 0, json_object_get_string(name));
        FS_PUT("mountpoint", RV_TYPED_PARAM_STRING, 0, json_object_get_string(mp));
        FS_PUT("fstype", RV_TYPED_PARAM_STRING, 0, json_object_get_string(type));
        if (json_object_object_get_ex(fs, "total-bytes", &total) &&
            json_object_object_get_ex(fs, "used-bytes", &used)) {
            FS_PUT("total-bytes", RV_TYPED_PARAM_ULLONG, (unsigned long long)json_object_get_int64(total), NULL);
            FS_PUT("used-bytes", RV_TYPED_PARAM_ULLONG, (unsigned long long)json_object_get_int64(used), NULL);
        }
        size_t nd = json_object_array_length(disks);
        FS_PUT("disk.count", RV_TYPED_PARAM_UINT, nd, NULL);
#undef FS_PUT
        for (size_t k = 0; k < nd; k++) {
            json_object *disk = json_object_array_get_idx(disks, k), *v;
            const char *alias = fs_disk_target(def, disk, err);
            if (rv_err_is_set(err))
                return fail_kept(out, &l);
            static const char *const keys[][2] = { { NULL, "alias" }, { "serial", "serial" },
                                                   { "dev", "device" } };
            for (size_t m = 0; m < 3; m++) {
                const char *val = m == 0 ? alias : json_object_object_get_ex(disk, keys[m][0], &v)
                                                       ? json_object_get_string(v) : NULL;
                if (!val)
                    continue;
                snprintf(field, sizeof field, "fs.%zu.disk.%zu.%s", i, k, keys[m][1]);
                rv_tparam_put(&l, field, RV_TYPED_PARAM_STRING, 0, val);
            }
        }
    }
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_FILESYSTEM);
    return 0;
}

/* guest-network-get-interfaces' interfaces as GET_GUEST_INFO's if.*, read
 * as DOMAIN_INTERFACE_ADDRESSES reads them (qemu_ifaddr.c). */
static int finish_ifaces(qemu_dom *d, json_object *ret, void *out, rv_err *err)
{
    static const char *const types[] = { "ipv4", "ipv6" };
    if (!ret)
        return info_missing(d, INFO_INTERFACES, "guest-network-get-interfaces", err);
    rv_domain_interface_addresses_ret ifs = { 0 };
    int rc = rv_qemu_agent_interfaces(ret, &ifs, err);
    rv_tparam_list l = info_list(out);
    char field[96];
    if (rc == 0)
        rv_tparam_put(&l, "if.count", RV_TYPED_PARAM_UINT, ifs.ifaces.ifaces_len, NULL);
    for (u_int i = 0; rc == 0 && i < ifs.ifaces.ifaces_len; i++) {
        const rv_domain_interface *wi = &ifs.ifaces.ifaces_val[i];
#define IF_PUT(type, num, str, ...) \
        (snprintf(field, sizeof field, __VA_ARGS__), rv_tparam_put(&l, field, (type), (num), (str)))
        IF_PUT(RV_TYPED_PARAM_STRING, 0, wi->name, "if.%u.name", i);
        if (wi->hwaddr)
            IF_PUT(RV_TYPED_PARAM_STRING, 0, *wi->hwaddr, "if.%u.hwaddr", i);
        IF_PUT(RV_TYPED_PARAM_UINT, wi->addrs.addrs_len, NULL, "if.%u.addr.count", i);
        for (u_int k = 0; k < wi->addrs.addrs_len; k++) {
            const rv_domain_ip_addr *a = &wi->addrs.addrs_val[k];
            IF_PUT(RV_TYPED_PARAM_STRING, 0, types[a->type != 0], "if.%u.addr.%u.type", i, k);
            IF_PUT(RV_TYPED_PARAM_STRING, 0, a->addr, "if.%u.addr.%u.addr", i, k);
            IF_PUT(RV_TYPED_PARAM_UINT, a->prefix, NULL, "if.%u.addr.%u.prefix", i, k);
        }
#undef IF_PUT
    }
    xdr_free((xdrproc_t)xdr_rv_domain_interface_addresses_ret, (char *)&ifs);
    if (rc < 0)
        return fail_kept(out, &l);
    if (info_store(out, &l, err) < 0)
        return -1;
    info_next(d, INFO_INTERFACES);
    return 0;
}

static const rv_qemu_agent_cmd info_cmds[] = {
    { .command = "guest-get-users", .finish = finish_users, .missing_ok = true },
    { .command = "guest-get-osinfo", .finish = finish_os, .missing_ok = true },
    { .command = "guest-get-timezone", .finish = finish_timezone, .missing_ok = true },
    { .command = "guest-get-host-name", .finish = finish_hostname, .missing_ok = true },
    { .command = "guest-get-fsinfo", .finish = finish_fs, .missing_ok = true },
    { .command = "guest-network-get-interfaces", .finish = finish_ifaces, .missing_ok = true },
};
static const unsigned int info_types[] = { INFO_USERS, INFO_OS, INFO_TIMEZONE, INFO_HOSTNAME,
                                           INFO_FILESYSTEM, INFO_INTERFACES };

/* The command of the next type asked after type after (0: the first). */
static const rv_qemu_agent_cmd *info_cmd_after(unsigned int types, unsigned int after)
{
    for (size_t i = 0; i < sizeof info_types / sizeof info_types[0]; i++)
        if (info_types[i] > after && (!types || (types & info_types[i])))
            return &info_cmds[i];
    return NULL;
}

static void info_next(qemu_dom *d, unsigned int after)
{
    const rv_domain_get_guest_info_args *a = rv_deferred_args(d->jobs->reply);
    const rv_qemu_agent_cmd *next = info_cmd_after(a->types, after);
    if (next)
        rv_qemu_agent_then(d, next, NULL);
}

int rv_qemu_domain_get_guest_info(rv_driver_conn *c, const rv_domain_get_guest_info_args *args,
                                  rv_domain_get_guest_info_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    const unsigned int known = INFO_USERS | INFO_OS | INFO_TIMEZONE | INFO_HOSTNAME |
                               INFO_FILESYSTEM | INFO_DISKS | INFO_INTERFACES;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetGuestInfo", err) < 0)
        return -1;
    if (args->types & ~known)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: unsupported flags (0x%x) in function "
                           "qemuDomainGetGuestInfo", args->types & ~known);
    if (args->types & INFO_DISKS)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: the guest's disks are not supported");
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return agent_job(d, info_cmd_after(args->types, 0), NULL, err);
}

/* ================================================================ agent timeout */

int rv_qemu_domain_agent_set_response_timeout(rv_driver_conn *c,
                                              const rv_domain_agent_set_response_timeout_args *args,
                                              rv_domain_agent_set_response_timeout_ret *ret,
                                              rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainAgentSetResponseTimeout",
                            err) < 0)
        return -1;
    if (args->timeout < RV_QEMU_AGENT_TIMEOUT_BLOCK)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: guest agent timeout '%d' is less than the minimum '%d'",
                    args->timeout, RV_QEMU_AGENT_TIMEOUT_BLOCK);
    if (!(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    d->agent_timeout = args->timeout;
    ret->result = 0;
    return 0;
}

/* ================================================================ power management */

static const rv_qemu_agent_cmd cmd_suspend[] = {
    { .command = "guest-suspend-ram", .silent = true },
    { .command = "guest-suspend-disk", .silent = true },
    { .command = "guest-suspend-hybrid", .silent = true },
};

int rv_qemu_domain_pm_suspend_for_duration(rv_driver_conn *c,
                                           const rv_domain_pm_suspend_for_duration_args *args,
                                           rv_err *err)
{
    (void)c;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainPMSuspendForDuration",
                            err) < 0)
        return -1;
    if (args->duration)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Duration not supported. Use 0 for now");
    if (args->target > 2)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Unknown suspend target: %u",
                    args->target);
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return agent_job(d, &cmd_suspend[args->target], NULL, err);
}

int rv_qemu_domain_pm_wakeup(rv_driver_conn *c, const rv_domain_pm_wakeup_args *args,
                             rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainPMWakeup", err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if ((rc = rv_qemu_need_monitor(d, err)) != 0)
        return rc;
    return rv_qemu_live_void(d, "system_wakeup", NULL, err);
}
