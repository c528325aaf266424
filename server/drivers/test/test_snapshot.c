/* The test driver's domain snapshots, answering as libvirt 9.0's test
 * driver does (observed through virsh and python3-libvirt against
 * libvirtd): a tree per domain kept in memory for the daemon's life; a
 * snapshot keeps the domain's state (running, paused, shut off) and its
 * XML at the time; the newest one, or the one last reverted to, is the
 * current one and the parent of the next.  Reverting swaps the domain's
 * definition for the snapshot's and moves its state with the lifecycle
 * events libvirtd's test driver sends (STOPPED, STARTED, SUSPENDED, all
 * FROM_SNAPSHOT).  As libvirt's test driver: no NO_METADATA, DISK_ONLY
 * or REUSE_EXT creation, no METADATA_ONLY deletion, no external
 * snapshots; and (remvirt's own limit) no REDEFINE.
 *
 * Every snapshot holds a copy of its domain's XML, so how many a peer may
 * create is bounded per domain and in bytes over the whole driver. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/conf/snapshot_tree.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_snapshot.h"
#include "server/drivers/test/test_domain_xml.h"

RV_LOG_CATEGORY("drivers.test.snapshot");

enum {
    TEST_MAX_SNAPSHOTS = 1024,          /* per domain */
    CREATE_FLAGS = RV_DOMAIN_SNAPSHOT_CREATE_REDEFINE | RV_DOMAIN_SNAPSHOT_CREATE_CURRENT |
                   RV_DOMAIN_SNAPSHOT_CREATE_HALT | RV_DOMAIN_SNAPSHOT_CREATE_QUIESCE |
                   RV_DOMAIN_SNAPSHOT_CREATE_ATOMIC | RV_DOMAIN_SNAPSHOT_CREATE_LIVE |
                   RV_DOMAIN_SNAPSHOT_CREATE_VALIDATE,
    LIST_FLAGS = 0x7ff,                 /* every virDomainSnapshotListFlags bit */
    REVERT_FLAGS = RV_DOMAIN_SNAPSHOT_REVERT_RUNNING | RV_DOMAIN_SNAPSHOT_REVERT_PAUSED |
                   RV_DOMAIN_SNAPSHOT_REVERT_FORCE,
    DELETE_FLAGS = RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN | RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY,
};
/* The bytes of names, descriptions and domain XML all snapshots may hold. */
#define TEST_SNAPSHOT_BYTES_MAX (64u * 1024 * 1024)

static size_t held_bytes;       /* over every domain's snapshots */

#define fail rv_err_fail

#define fail_oom test_fail_oom
#define check_flags test_check_flags

/* ---------------------------------------------------------------- the tree */

static void snap_free(rv_snap_rec *s)
{
    if (!s)
        return;
    held_bytes -= rv_snap_rec_bytes(s);
    rv_snap_rec_free(s);
}

void test_snaps_free(test_snaps *snaps)
{
    if (!snaps)
        return;
    for (size_t i = 0; i < snaps->n; i++)
        held_bytes -= rv_snap_rec_bytes(snaps->items[i]);
    rv_snap_tree_clear(snaps);
    free(snaps);
}

size_t test_snaps_count(const test_snaps *snaps)
{
    return snaps ? snaps->n : 0;
}

static rv_snap_rec *find_snap(const test_snaps *snaps, const char *name)
{
    return rv_snap_tree_find(snaps, name);
}

static int collect(const test_snaps *snaps, const rv_snap_rec *under, unsigned int flags,
                   rv_snap_rec ***out, rv_err *err)
{
    int n = rv_snap_tree_collect(snaps, under, flags, out);
    return n < 0 ? test_fail_oom(err) : n;
}

/* ---------------------------------------------------------------- wire */

static int put_snap(const test_dom *d, const rv_snap_rec *s, rv_nonnull_domain_snapshot *wire,
                    rv_err *err)
{
    wire->name = strdup(s->name);
    wire->dom.name = strdup(d->def->name);
    memcpy(wire->dom.uuid, d->def->uuid, 16);
    wire->dom.id = d->id;
    return wire->name && wire->dom.name ? 0 : test_fail_oom(err);   /* the dispatcher frees */
}

/* The snapshot the wire names, and its domain. */
static rv_snap_rec *snap_get(const rv_nonnull_domain_snapshot *wire, test_dom **dp, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&wire->dom);
    test_dom *d = test_dom_get(&ref, err);
    if (!d)
        return NULL;
    rv_snap_rec *s = find_snap(d->snaps, wire->name);
    if (!s)
        test_fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
             "Domain snapshot not found: no domain snapshot with matching name '%s'", wire->name);
    *dp = d;
    return s;
}

static test_dom *dom_of(const rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    return test_dom_get(&ref, err);
}

/* ---------------------------------------------------------------- creating */

/* The domain's disks by target, as libvirt lists them in a snapshot:
 * read-only ones (CD-ROMs) are left out ('no'), the others internal. */
static int take_disks(const rv_test_def *def, rv_snap_rec *s)
{
    const rv_xml_node *devs = def->devices;
    size_t n = 0;
    for (size_t i = 0; devs && i < devs->nkids; i++)
        n += devs->kids[i] && devs->kids[i]->name && strcmp(devs->kids[i]->name, "disk") == 0;
    if (!n)
        return 0;
    if (!(s->disks = calloc(n, sizeof(*s->disks))))
        return -1;
    for (size_t i = 0; i < devs->nkids; i++) {
        const rv_xml_node *disk = devs->kids[i];
        if (!disk || !disk->name || strcmp(disk->name, "disk") != 0)
            continue;
        const char *dev = rv_xml_attr_get(rv_xml_child(disk, "target") ? rv_xml_child(disk, "target")
                                                                       : disk, "dev");
        const char *kind = rv_xml_attr_get(disk, "device");
        int readonly = rv_xml_child(disk, "readonly") || (kind && strcmp(kind, "cdrom") == 0);
        if (!dev)
            continue;
        rv_snapshot_disk *sd = &s->disks[s->ndisks];
        if (!(sd->name = strdup(dev)))
            return -1;
        sd->snapshot = (char *)(readonly ? rv_snap_mode_no : rv_snap_mode_internal);
        s->ndisks++;
    }
    return 0;
}

/* libvirt's checks of a request, in its order; then the snapshot's name. */
static int check_request(const test_dom *d, const rv_snapshot_request *req, unsigned int flags,
                         rv_err *err)
{
    if (flags & RV_DOMAIN_SNAPSHOT_CREATE_REDEFINE) {
        if (!req->has_creation_time)
            return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INTERNAL_ERROR,
                        "internal error: missing creationTime from existing snapshot");
        if (!req->has_state)
            return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_XML_ERROR,
                        "XML error: missing state from existing snapshot");
        return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: remvirt's test driver cannot redefine "
                    "snapshots");
    }
    if (req->memory && strcmp(req->memory, "internal") != 0 && strcmp(req->memory, "no") != 0)
        return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: memory snapshot mode '%s' is not supported by "
                    "remvirt's test driver", req->memory);
    for (size_t i = 0; i < req->ndisks; i++) {
        const rv_snapshot_disk *rd = &req->disks[i];
        if (rd->snapshot && strcmp(rd->snapshot, "internal") != 0)
            return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: disk '%s' must use snapshot mode 'internal'",
                        rd->name ? rd->name : "");
    }
    (void)d;
    return 0;
}

static rv_snap_rec *snap_new(test_dom *d, rv_snapshot_request *req, rv_err *err)
{
    rv_snap_rec *s = rv_snap_rec_new(req, rv_test_def_format(d->def, -1));
    if (!s) {
        test_fail_oom(err);
        return NULL;
    }
    s->state = d->state == RV_DOMAIN_SHUTOFF || d->state == RV_DOMAIN_PAUSED ? d->state
                                                                             : RV_DOMAIN_RUNNING;
    if (take_disks(d->def, s) < 0) {
        rv_snap_rec_free(s);
        test_fail_oom(err);
        return NULL;
    }
    held_bytes += rv_snap_rec_bytes(s);
    return s;
}

/* Put s in d's tree under the current snapshot; it becomes the current. */
static int snap_add(test_dom *d, rv_snap_rec *s, rv_err *err)
{
    if (!find_snap(d->snaps, s->name) && held_bytes > TEST_SNAPSHOT_BYTES_MAX)
        return test_fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: the test driver holds at most %u MiB of snapshots",
                    TEST_SNAPSHOT_BYTES_MAX >> 20);
    if (!d->snaps && !(d->snaps = calloc(1, sizeof(*d->snaps))))
        return test_fail_oom(err);
    return rv_snap_tree_add(d->snaps, s, TEST_MAX_SNAPSHOTS, err);
}

int test_domain_snapshot_create_xml(rv_driver_conn *c,
                                    const rv_domain_snapshot_create_xml_args *args,
                                    rv_domain_snapshot_create_xml_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snapshot_request req;
    (void)c;
    if (test_check_flags(args->flags, CREATE_FLAGS, "testDomainSnapshotCreateXML", err) < 0 ||
        !(d = dom_of(&args->dom, err)) ||
        rv_snapshot_request_parse(args->xml_desc, &req, err) < 0)
        return -1;
    rv_snap_rec *s = NULL;
    int rc = check_request(d, &req, args->flags, err);
    if (rc == 0 && !(s = snap_new(d, &req, err)))
        rc = -1;
    rv_snapshot_request_clear(&req);
    if (rc == 0 && snap_add(d, s, err) < 0) {
        snap_free(s);
        rc = -1;
    }
    if (rc < 0)
        return -1;
    RV_DEBUG("domain '%s': snapshot '%s' taken", d->def->name, s->name);
    if (put_snap(d, s, &ret->snap, err) < 0)
        return -1;
    /* HALT stops a running domain once the snapshot is taken. */
    if ((args->flags & RV_DOMAIN_SNAPSHOT_CREATE_HALT) && d->id >= 0) {
        ret->snap.dom.id = -1;
        test_dom_stop(d, RV_DOMAIN_SHUTOFF_FROM_SNAPSHOT, RV_EVENT_STOPPED_FROM_SNAPSHOT);
    }
    return 0;
}

/* ---------------------------------------------------------------- queries */

int test_domain_snapshot_get_xml_desc(rv_driver_conn *c,
                                      const rv_domain_snapshot_get_xml_desc_args *args,
                                      rv_domain_snapshot_get_xml_desc_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, RV_DOMAIN_XML_SECURE, "testDomainSnapshotGetXMLDesc", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    ret->xml = rv_snap_rec_format(s);
    return rv_string_result(ret->xml ? 0 : test_fail_oom(err), &ret->xml, err);
}

int test_snapshot_num(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_err *err)
{
    test_dom *d;
    rv_snap_rec **list;
    (void)c;
    if (test_check_flags(flags, LIST_FLAGS, "testDomainSnapshotNum", err) < 0 ||
        !(d = test_dom_get(dom, err)))
        return -1;
    int n = collect(d->snaps, NULL, flags, &list, err);
    free(list);
    return n;
}

/* Names of list (n of them, at most max) into a wire name list. */
static int put_names(rv_snap_rec **list, int n, int max, char ***val, u_int *len, rv_err *err)
{
    if (n > max)
        n = max;
    *val = n > 0 ? calloc((size_t)n, sizeof(**val)) : NULL;
    if (n > 0 && !*val)
        return test_fail_oom(err);
    for (int i = 0; i < n; i++) {
        if (!((*val)[i] = strdup(list[i]->name)))
            return test_fail_oom(err);       /* the dispatcher frees what was put */
        *len = (u_int)i + 1;
    }
    return 0;
}

static int check_maxnames(int maxnames, rv_err *err)
{
    if (maxnames < 0 || maxnames > RV_DOMAIN_SNAPSHOT_LIST_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "maxnames %d is outside 0..%d", maxnames,
                    RV_DOMAIN_SNAPSHOT_LIST_MAX);
    return 0;
}

int test_domain_snapshot_list_names(rv_driver_conn *c,
                                    const rv_domain_snapshot_list_names_args *args,
                                    rv_domain_snapshot_list_names_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec **list;
    (void)c;
    /* libvirt's test driver names testDomainSnapshotNum here. */
    if (check_maxnames(args->maxnames, err) < 0 ||
        test_check_flags(args->flags, LIST_FLAGS, "testDomainSnapshotNum", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    int n = collect(d->snaps, NULL, args->flags, &list, err);
    int rc = n < 0 ? -1 : put_names(list, n, args->maxnames, &ret->names.names_val,
                                    &ret->names.names_len, err);
    free(list);
    return rc;
}

int test_domain_snapshot_lookup_by_name(rv_driver_conn *c,
                                        const rv_domain_snapshot_lookup_by_name_args *args,
                                        rv_domain_snapshot_lookup_by_name_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainSnapshotLookupByName", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    if (!(s = find_snap(d->snaps, args->name)))
        return test_fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: no domain snapshot with matching name '%s'",
                    args->name);
    return put_snap(d, s, &ret->snap, err);
}

int test_domain_has_current_snapshot(rv_driver_conn *c,
                                     const rv_domain_has_current_snapshot_args *args,
                                     rv_domain_has_current_snapshot_ret *ret, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainHasCurrentSnapshot", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    ret->result = d->snaps && d->snaps->current;
    return 0;
}

int test_domain_snapshot_current(rv_driver_conn *c, const rv_domain_snapshot_current_args *args,
                                 rv_domain_snapshot_current_ret *ret, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainSnapshotCurrent", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    if (!d->snaps || !d->snaps->current)
        return test_fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: the domain does not have a current snapshot");
    return put_snap(d, d->snaps->current, &ret->snap, err);
}

int test_domain_snapshot_get_parent(rv_driver_conn *c,
                                    const rv_domain_snapshot_get_parent_args *args,
                                    rv_domain_snapshot_get_parent_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainSnapshotGetParent", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    if (!s->parent)
        return test_fail(err, RV_ERR_NO_DOMAIN_SNAPSHOT,
                    "Domain snapshot not found: snapshot '%s' does not have a parent", s->name);
    return put_snap(d, s->parent, &ret->snap, err);
}

int test_domain_snapshot_num_children(rv_driver_conn *c,
                                      const rv_domain_snapshot_num_children_args *args,
                                      rv_domain_snapshot_num_children_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s, **list;
    (void)c;
    if (test_check_flags(args->flags, LIST_FLAGS, "testDomainSnapshotNumChildren", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    int n = collect(d->snaps, s, args->flags, &list, err);
    free(list);
    if (n < 0)
        return -1;
    ret->num = n;
    return 0;
}

int test_domain_snapshot_list_children_names(
                                             rv_driver_conn *c, const rv_domain_snapshot_list_children_names_args *args,
                                             rv_domain_snapshot_list_children_names_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s, **list;
    (void)c;
    /* libvirt's test driver names testDomainSnapshotNumChildren here. */
    if (check_maxnames(args->maxnames, err) < 0 ||
        test_check_flags(args->flags, LIST_FLAGS, "testDomainSnapshotNumChildren", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    int n = collect(d->snaps, s, args->flags, &list, err);
    int rc = n < 0 ? -1 : put_names(list, n, args->maxnames, &ret->names.names_val,
                                    &ret->names.names_len, err);
    free(list);
    return rc;
}

int test_domain_snapshot_is_current(rv_driver_conn *c,
                                    const rv_domain_snapshot_is_current_args *args,
                                    rv_domain_snapshot_is_current_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainSnapshotIsCurrent", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    ret->current = d->snaps->current == s;
    return 0;
}

int test_domain_snapshot_has_metadata(rv_driver_conn *c,
                                      const rv_domain_snapshot_has_metadata_args *args,
                                      rv_domain_snapshot_has_metadata_ret *ret, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainSnapshotHasMetadata", err) < 0 ||
        !snap_get(&args->snap, &d, err))
        return -1;
    ret->metadata = 1;
    return 0;
}

/* A list reply: the count, and the snapshots when asked for. */
static int put_list(const test_dom *d, rv_snap_rec **list, int n, int need_results,
                    rv_nonnull_domain_snapshot **val, u_int *len, int *count, rv_err *err)
{
    *count = n;
    if (!need_results || n == 0)
        return 0;
    if (!(*val = calloc((size_t)n, sizeof(**val))))
        return test_fail_oom(err);
    for (int i = 0; i < n; i++) {
        *len = (u_int)i + 1;            /* the dispatcher frees what was put */
        if (put_snap(d, list[i], &(*val)[i], err) < 0)
            return -1;
    }
    return 0;
}

int test_domain_list_all_snapshots(rv_driver_conn *c,
                                   const rv_domain_list_all_snapshots_args *args,
                                   rv_domain_list_all_snapshots_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec **list;
    (void)c;
    if (test_check_flags(args->flags, LIST_FLAGS, "testDomainListAllSnapshots", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    int n = collect(d->snaps, NULL, args->flags, &list, err);
    int rc = n < 0 ? -1 : put_list(d, list, n, args->need_results,
                                   &ret->snapshots.snapshots_val,
                                   &ret->snapshots.snapshots_len, &ret->ret, err);
    free(list);
    return rc;
}

int test_domain_snapshot_list_all_children(
                                           rv_driver_conn *c, const rv_domain_snapshot_list_all_children_args *args,
                                           rv_domain_snapshot_list_all_children_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s, **list;
    (void)c;
    if (test_check_flags(args->flags, LIST_FLAGS, "testDomainSnapshotListAllChildren", err) < 0 ||
        !(s = snap_get(&args->snapshot, &d, err)))
        return -1;
    int n = collect(d->snaps, s, args->flags, &list, err);
    int rc = n < 0 ? -1 : put_list(d, list, n, args->need_results,
                                   &ret->snapshots.snapshots_val,
                                   &ret->snapshots.snapshots_len, &ret->ret, err);
    free(list);
    return rc;
}

/* ---------------------------------------------------------------- revert */

/* What libvirt 9.0's test driver does, as observed: to a running or
 * paused snapshot, a running domain is stopped (STOPPED) and started
 * again (STARTED), then paused (SUSPENDED) if the snapshot was paused or
 * PAUSED asks, unless RUNNING does; to a shut-off snapshot, a running
 * domain is stopped (STOPPED), and RUNNING or PAUSED then only send
 * STARTED (and SUSPENDED) while the domain stays shut off.  Every event
 * detail is FROM_SNAPSHOT; the domain takes the snapshot's definition. */
int test_domain_revert_to_snapshot(rv_driver_conn *c,
                                   const rv_domain_revert_to_snapshot_args *args, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    rv_test_def *def;
    unsigned int flags = args->flags;
    (void)c;
    if (test_check_flags(flags, REVERT_FLAGS, "testDomainRevertToSnapshot", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    if ((flags & RV_DOMAIN_SNAPSHOT_REVERT_RUNNING) && (flags & RV_DOMAIN_SNAPSHOT_REVERT_PAUSED))
        return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INVALID_ARG,
                    "Flags 'VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING' and "
                    "'VIR_DOMAIN_SNAPSHOT_REVERT_PAUSED' are mutually exclusive");
    if (rv_test_def_parse(s->dom_xml, &def, err) < 0)
        return -1;
    d->snaps->current = s;
    RV_DEBUG("domain '%s': reverting to snapshot '%s'", d->def->name, s->name);
    /* The definition is the snapshot's now; a waiting one is dropped. */
    rv_test_def_free(d->def);
    rv_test_def_free(d->next_def);
    d->def = def;
    d->next_def = NULL;
    int active = d->id >= 0;
    int want_paused = !(flags & RV_DOMAIN_SNAPSHOT_REVERT_RUNNING) &&
                      ((flags & RV_DOMAIN_SNAPSHOT_REVERT_PAUSED) || s->state == RV_DOMAIN_PAUSED);
    if (s->state != RV_DOMAIN_SHUTOFF) {
        if (active) {
            test_dom_set_stopped(d, RV_DOMAIN_SHUTOFF_FROM_SNAPSHOT);
            test_dom_emit(d, RV_EVENT_STOPPED, RV_EVENT_STOPPED_FROM_SNAPSHOT);
        }
        test_dom_set_running(d, RV_DOMAIN_RUNNING_FROM_SNAPSHOT);
        test_dom_emit(d, RV_EVENT_STARTED, RV_EVENT_STARTED_FROM_SNAPSHOT);
        if (want_paused) {
            d->state = RV_DOMAIN_PAUSED;
            d->reason = RV_DOMAIN_PAUSED_FROM_SNAPSHOT;
            test_dom_emit(d, RV_EVENT_SUSPENDED, RV_EVENT_SUSPENDED_FROM_SNAPSHOT);
        }
        return 0;
    }
    int persistent = d->persistent;
    if (active)     /* frees a transient domain */
        test_dom_stop(d, RV_DOMAIN_SHUTOFF_FROM_SNAPSHOT, RV_EVENT_STOPPED_FROM_SNAPSHOT);
    if (persistent && (flags & (RV_DOMAIN_SNAPSHOT_REVERT_RUNNING | RV_DOMAIN_SNAPSHOT_REVERT_PAUSED))) {
        test_dom_emit(d, RV_EVENT_STARTED, RV_EVENT_STARTED_FROM_SNAPSHOT);
        if (flags & RV_DOMAIN_SNAPSHOT_REVERT_PAUSED)
            test_dom_emit(d, RV_EVENT_SUSPENDED, RV_EVENT_SUSPENDED_FROM_SNAPSHOT);
    }
    return 0;
}

/* ---------------------------------------------------------------- delete */

int test_domain_snapshot_delete(rv_driver_conn *c, const rv_domain_snapshot_delete_args *args,
                                rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    unsigned int flags = args->flags;
    (void)c;
    if (test_check_flags(flags, DELETE_FLAGS, "testDomainSnapshotDelete", err) < 0 ||
        !(s = snap_get(&args->snap, &d, err)))
        return -1;
    if ((flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN) &&
        (flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY))
        return rv_err_fail(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INVALID_ARG,
                    "Flags 'VIR_DOMAIN_SNAPSHOT_DELETE_CHILDREN' and "
                    "'VIR_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY' are mutually exclusive");
    unsigned char *doomed = rv_snap_tree_doomed(d->snaps, s, flags);
    if (!doomed)
        return test_fail_oom(err);
    RV_DEBUG("domain '%s': snapshot '%s' deleted (flags 0x%x)", d->def->name, s->name, flags);
    for (size_t i = 0; i < d->snaps->n; i++)
        if (doomed[i])
            held_bytes -= rv_snap_rec_bytes(d->snaps->items[i]);
    rv_snap_tree_remove(d->snaps, s, doomed, flags);
    free(doomed);
    return 0;
}
