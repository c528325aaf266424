/* The test driver's domain checkpoints, answering as libvirt 9.0's test
 * driver does (tests/interop/checkpoint-checks.py against libvirtd): a
 * tree per domain in memory (server/drivers/conf/snapshot_tree.h), made
 * only while the domain runs, each new one under the newest; the disks
 * as the request aligns them; no REDEFINE (remvirt's own limit).  Each
 * record holds a copy of the domain's XML, so how many a peer may make
 * is bounded per domain and in bytes over the whole driver, as for the
 * snapshots. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/drivers/conf/snapshot_tree.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_domain_xml.h"

RV_LOG_CATEGORY("drivers.test.checkpoint");

enum {
    TEST_MAX_CHECKPOINTS = 1024,        /* per domain */
    CREATE_FLAGS = RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE | RV_DOMAIN_CHECKPOINT_CREATE_QUIESCE |
                   RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE_VALIDATE,
    XML_FLAGS = RV_DOMAIN_CHECKPOINT_XML_SECURE | RV_DOMAIN_CHECKPOINT_XML_NO_DOMAIN |
                RV_DOMAIN_CHECKPOINT_XML_SIZE,
    LIST_FLAGS = RV_DOMAIN_CHECKPOINT_LIST_ROOTS | RV_DOMAIN_CHECKPOINT_LIST_TOPOLOGICAL |
                 RV_DOMAIN_CHECKPOINT_LIST_LEAVES | RV_DOMAIN_CHECKPOINT_LIST_NO_LEAVES,
    DELETE_FLAGS = RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN | RV_DOMAIN_CHECKPOINT_DELETE_METADATA_ONLY |
                   RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY,
};
/* The bytes of names, descriptions and domain XML all checkpoints may hold. */
#define TEST_CHECKPOINT_BYTES_MAX (64u * 1024 * 1024)

static size_t held_bytes;       /* over every domain's checkpoints */

static void count_out(const test_snaps *t, const unsigned char *doomed)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (!doomed || doomed[i])
            held_bytes -= rv_snap_rec_bytes(t->items[i]);
}

void test_checkpoints_free(test_snaps *t)
{
    count_out(t, NULL);
    if (t)
        rv_snap_tree_clear(t);
    free(t);
}

static int put_chk(const test_dom *d, const rv_snap_rec *s, rv_nonnull_domain_checkpoint *wire,
                   rv_err *err)
{
    wire->name = strdup(s->name);
    wire->dom.name = strdup(d->def->name);
    memcpy(wire->dom.uuid, d->def->uuid, 16);
    wire->dom.id = d->id;
    return wire->name && wire->dom.name ? 0 : test_fail_oom(err);   /* the dispatcher frees */
}

static test_dom *dom_of(const rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    return test_dom_get(&ref, err);
}

static rv_snap_rec *find_chk(const test_dom *d, const char *name, rv_err *err)
{
    rv_snap_rec *s = rv_snap_tree_find(d->checkpoints, name);
    if (!s)
        test_fail(err, RV_ERR_NO_DOMAIN_CHECKPOINT,
                  "Domain checkpoint not found: no domain checkpoint with matching name '%s'", name);
    return s;
}

static rv_snap_rec *chk_get(const rv_nonnull_domain_checkpoint *wire, test_dom **dp, rv_err *err)
{
    return (*dp = dom_of(&wire->dom, err)) ? find_chk(*dp, wire->name, err) : NULL;
}

/* The targets of def's disks, borrowed; *n of them. */
static const char **disk_targets(const rv_test_def *def, size_t *n)
{
    const rv_xml_node *devs = def->devices;
    const char **t = calloc(devs && devs->nkids ? devs->nkids : 1, sizeof(*t));
    *n = 0;
    for (size_t i = 0; t && devs && i < devs->nkids; i++) {
        const rv_xml_node *disk = devs->kids[i];
        if (!disk || !disk->name || strcmp(disk->name, "disk") != 0)
            continue;
        const char *dev = rv_xml_attr_get(rv_xml_child(disk, "target"), "dev");
        if (dev)
            t[(*n)++] = dev;
    }
    return t;
}

static rv_snap_rec *chk_new(test_dom *d, rv_snapshot_request *req, rv_err *err)
{
    rv_snap_rec *s = rv_snap_rec_new(req, rv_test_def_format(d->def, -1));
    size_t n;
    const char **targets = s ? disk_targets(d->def, &n) : NULL;
    if (!targets) {
        rv_snap_rec_free(s);
        test_fail_oom(err);
        return NULL;
    }
    int rc = rv_chk_rec_disks(s, req, targets, n, err);
    free(targets);
    if (rc < 0) {
        rv_snap_rec_free(s);
        return NULL;
    }
    return s;
}

int test_domain_checkpoint_create_xml(rv_driver_conn *c,
                                      const rv_domain_checkpoint_create_xml_args *args,
                                      rv_domain_checkpoint_create_xml_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snapshot_request req;
    (void)c;
    if (test_check_flags(args->flags, CREATE_FLAGS, "testDomainCheckpointCreateXML", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    if (d->id < 0)
        return test_fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                         "Operation not supported: cannot create checkpoint for inactive domain");
    if (rv_checkpoint_request_parse(args->xml_desc, &req, err) < 0)
        return -1;
    rv_snap_rec *s = NULL;
    int rc = 0;
    if (args->flags & RV_DOMAIN_CHECKPOINT_CREATE_REDEFINE)
        rc = req.has_creation_time
                 ? rv_err_fail(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_CONFIG_UNSUPPORTED,
                               "unsupported configuration: remvirt's test driver cannot "
                               "redefine checkpoints")
                 : rv_err_fail(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_INTERNAL_ERROR,
                               "internal error: missing creationTime from existing checkpoint");
    if (rc == 0 && !(s = chk_new(d, &req, err)))
        rc = -1;
    rv_snapshot_request_clear(&req);
    if (rc < 0)
        return -1;
    if (held_bytes + rv_snap_rec_bytes(s) > TEST_CHECKPOINT_BYTES_MAX) {
        rv_snap_rec_free(s);
        return test_fail(err, RV_ERR_OPERATION_FAILED,
                         "operation failed: the test driver holds at most %u MiB of checkpoints",
                         TEST_CHECKPOINT_BYTES_MAX >> 20);
    }
    if ((!d->checkpoints && !(d->checkpoints = calloc(1, sizeof(*d->checkpoints)))) ||
        rv_snap_tree_add(d->checkpoints, s, TEST_MAX_CHECKPOINTS, err) < 0) {
        if (!d->checkpoints)
            test_fail_oom(err);
        rv_snap_rec_free(s);
        return -1;
    }
    held_bytes += rv_snap_rec_bytes(s);
    RV_DEBUG("domain '%s': checkpoint '%s' made", d->def->name, s->name);
    return put_chk(d, s, &ret->checkpoint, err);
}

int test_domain_checkpoint_get_xml_desc(rv_driver_conn *c,
                                        const rv_domain_checkpoint_get_xml_desc_args *args,
                                        rv_domain_checkpoint_get_xml_desc_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, XML_FLAGS, "testDomainCheckpointGetXMLDesc", err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, err)))
        return -1;
    /* libvirt's test driver has no sizes to give: SIZE adds nothing. */
    ret->xml = rv_chk_rec_format(s, !(args->flags & RV_DOMAIN_CHECKPOINT_XML_NO_DOMAIN), NULL);
    return rv_string_result(ret->xml ? 0 : test_fail_oom(err), &ret->xml, err);
}

int test_domain_checkpoint_lookup_by_name(rv_driver_conn *c,
                                          const rv_domain_checkpoint_lookup_by_name_args *args,
                                          rv_domain_checkpoint_lookup_by_name_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainCheckpointLookupByName", err) < 0 ||
        !(d = dom_of(&args->dom, err)) || !(s = find_chk(d, args->name, err)))
        return -1;
    return put_chk(d, s, &ret->checkpoint, err);
}

int test_domain_checkpoint_get_parent(rv_driver_conn *c,
                                      const rv_domain_checkpoint_get_parent_args *args,
                                      rv_domain_checkpoint_get_parent_ret *ret, rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, 0, "testDomainCheckpointGetParent", err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, err)))
        return -1;
    if (!s->parent)
        return test_fail(err, RV_ERR_NO_DOMAIN_CHECKPOINT,
                         "Domain checkpoint not found: checkpoint '%s' does not have a parent",
                         s->name);
    return put_chk(d, s->parent, &ret->parent, err);
}

/* The list calls' reply: the count, and the checkpoints when asked for. */
static int put_list(const test_dom *d, const rv_snap_rec *under, unsigned int flags,
                    int need_results, rv_nonnull_domain_checkpoint **val, u_int *len, int *count,
                    rv_err *err)
{
    rv_snap_rec **list;
    int n = rv_snap_tree_collect(d->checkpoints, under, flags, &list);
    if (n < 0)
        return test_fail_oom(err);
    *count = n;
    int rc = 0;
    if (need_results && n > 0 && !(*val = calloc((size_t)n, sizeof(**val))))
        rc = test_fail_oom(err);
    for (int i = 0; rc == 0 && need_results && i < n; i++) {
        *len = (u_int)i + 1;            /* the dispatcher frees what was put */
        rc = put_chk(d, list[i], &(*val)[i], err);
    }
    free(list);
    return rc;
}

int test_domain_list_all_checkpoints(rv_driver_conn *c,
                                     const rv_domain_list_all_checkpoints_args *args,
                                     rv_domain_list_all_checkpoints_ret *ret, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (test_check_flags(args->flags, LIST_FLAGS, "testDomainListAllCheckpoints", err) < 0 ||
        !(d = dom_of(&args->dom, err)))
        return -1;
    return put_list(d, NULL, args->flags, args->need_results, &ret->checkpoints.checkpoints_val,
                    &ret->checkpoints.checkpoints_len, &ret->ret, err);
}

int test_domain_checkpoint_list_all_children(rv_driver_conn *c,
                                             const rv_domain_checkpoint_list_all_children_args *args,
                                             rv_domain_checkpoint_list_all_children_ret *ret,
                                             rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    (void)c;
    if (test_check_flags(args->flags, LIST_FLAGS, "testDomainCheckpointListAllChildren", err) < 0 ||
        !(s = chk_get(&args->checkpoint, &d, err)))
        return -1;
    return put_list(d, s, args->flags, args->need_results, &ret->checkpoints.checkpoints_val,
                    &ret->checkpoints.checkpoints_len, &ret->ret, err);
}

int test_domain_checkpoint_delete(rv_driver_conn *c, const rv_domain_checkpoint_delete_args *args,
                                  rv_err *err)
{
    test_dom *d;
    rv_snap_rec *s;
    unsigned int flags = args->flags;
    (void)c;
    if (test_check_flags(flags, DELETE_FLAGS, "testDomainCheckpointDelete", err) < 0)
        return -1;
    if ((flags & RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN) &&
        (flags & RV_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY))
        return rv_err_fail(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_INVALID_ARG,
                           "Flags 'VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN' and "
                           "'VIR_DOMAIN_CHECKPOINT_DELETE_CHILDREN_ONLY' are mutually exclusive");
    if (!(s = chk_get(&args->checkpoint, &d, err)))
        return -1;
    unsigned char *doomed = rv_snap_tree_doomed(d->checkpoints, s, flags);
    if (!doomed)
        return test_fail_oom(err);
    RV_DEBUG("domain '%s': checkpoint '%s' deleted (flags 0x%x)", d->def->name, s->name, flags);
    count_out(d->checkpoints, doomed);
    rv_snap_tree_remove(d->checkpoints, s, doomed, flags);
    free(doomed);
    return 0;
}
