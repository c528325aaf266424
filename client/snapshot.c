/* Domain snapshot handles (rv_snap) and the snapshot calls that are more
 * than one stub call: the lists.  The one-call ones are generated
 * (remvirt-calls.gen.c) from protocol/rv_remote.x.  A handle holds its
 * own copy of the domain it belongs to, so it outlives the rv_dom it came
 * from. */
#include "client/remvirt.h"

#include <stdlib.h>
#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "common/util.h"
#include "rv_remote.h"

struct rvc_conn *rvc_snap_rpc(rv_snap *snap, const char *func)
{
    if (!snap) {
        rvc_report(RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INVALID_DOMAIN_SNAPSHOT,
                   "%s: no snapshot given", func);
        return NULL;
    }
    return rvc_handle_rpc(snap->conn, func);
}

rv_nonnull_domain_snapshot rvc_snap_to_wire(const rv_snap *snap)
{
    rv_nonnull_domain_snapshot w;
    w.name = snap->name;
    w.dom = rvc_dom_to_wire(snap->dom);
    return w;
}

rv_snap *rvc_snap_from_wire(rv_conn *conn, rv_nonnull_domain_snapshot *w)
{
    rv_snap *snap = calloc(1, sizeof(*snap));
    if (!snap)
        return rvc_no_memory_null();
    if (!(snap->dom = rvc_dom_from_wire(conn, &w->dom))) {
        free(snap);
        return NULL;
    }
    snap->conn = conn;
    snap->name = w->name;
    w->name = NULL;
    rvc_handle_ref(conn);
    return snap;
}

void rv_domain_snapshot_free(rv_snap *snap)
{
    if (!snap)
        return;
    rv_conn *conn = snap->conn;
    rv_domain_free(snap->dom);
    free(snap->name);
    free(snap);
    rvc_handle_unref(conn);
}

const char *rv_domain_snapshot_get_name(rv_snap *snap)
{
    rvc_enter();
    if (!snap) {
        rvc_report(RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INVALID_DOMAIN_SNAPSHOT,
                   "rv_domain_snapshot_get_name: no snapshot given");
        return NULL;
    }
    return snap->name;
}

rv_dom *rv_domain_snapshot_get_domain(rv_snap *snap)
{
    rvc_enter();
    if (!snap) {
        rvc_report(RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_INVALID_DOMAIN_SNAPSHOT,
                   "rv_domain_snapshot_get_domain: no snapshot given");
        return NULL;
    }
    return snap->dom;
}

/* The snapshots of a list reply as handles (a NULL-terminated array in
 * *out), or, without out, the count the server gave.  Frees nothing. */
static int take_list(rv_conn *conn, rv_nonnull_domain_snapshot *wire, u_int n, int count,
                     rv_snap ***out)
{
    if (!out) {
        if (count < 0 || count > RV_DOMAIN_SNAPSHOT_LIST_MAX)
            return rvc_report(RV_FROM_RPC, RV_ERR_RPC,
                              "the server counts %d snapshots, outside 0..%d", count,
                              RV_DOMAIN_SNAPSHOT_LIST_MAX);
        return count;
    }
    rv_snap **list = calloc((size_t)n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++) {
        if (!(list[i] = rvc_snap_from_wire(conn, &wire[i]))) {
            while (i > 0)
                rv_domain_snapshot_free(list[--i]);
            free(list);
            list = NULL;
        }
    }
    if (!list)
        return rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    *out = list;
    return (int)n;
}

int rv_domain_list_all_snapshots(rv_dom *dom, rv_snap ***snaps, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_dom_rpc(dom, __func__);
    if (!rpc)
        return -1;
    if (snaps)
        *snaps = NULL;
    rv_domain_list_all_snapshots_args args = { .dom = rvc_dom_to_wire(dom),
                                               .need_results = snaps != NULL,
                                               .flags = flags };
    rv_domain_list_all_snapshots_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_list_all_snapshots(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int count = take_list(dom->conn, ret.snapshots.snapshots_val, ret.snapshots.snapshots_len,
                          ret.ret, snaps);
    xdr_free((xdrproc_t)xdr_rv_domain_list_all_snapshots_ret, (char *)&ret);
    return count;
}

int rv_domain_snapshot_list_all_children(rv_snap *snap, rv_snap ***snaps, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_snap_rpc(snap, __func__);
    if (!rpc)
        return -1;
    if (snaps)
        *snaps = NULL;
    rv_domain_snapshot_list_all_children_args args = { .snapshot = rvc_snap_to_wire(snap),
                                                       .need_results = snaps != NULL,
                                                       .flags = flags };
    rv_domain_snapshot_list_all_children_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_domain_snapshot_list_all_children(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    int count = take_list(snap->conn, ret.snapshots.snapshots_val, ret.snapshots.snapshots_len,
                          ret.ret, snaps);
    xdr_free((xdrproc_t)xdr_rv_domain_snapshot_list_all_children_ret, (char *)&ret);
    return count;
}
