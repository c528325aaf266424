/* rv_conn and rv_dom handles: allocation, reference counts, the wire
 * form of a domain, and the public accessors that need no server. */
#include "client/handle.h"

#include <stdlib.h>
#include <string.h>

#include "client/last_error.h"
#include "common/util.h"

rv_conn *rvc_handle_new(const char *uri)
{
    rv_conn *conn = calloc(1, sizeof(*conn));
    if (!conn || !(conn->uri = strdup(uri))) {
        free(conn);
        return NULL;
    }
    conn->refs = 1;
    pthread_mutex_init(&conn->cb_lock, NULL);
    pthread_cond_init(&conn->registered, NULL);
    return conn;
}

void rvc_handle_ref(rv_conn *conn)
{
    __atomic_add_fetch(&conn->refs, 1, __ATOMIC_RELAXED);
}

void rvc_free_callbacks(lifecycle_callback *list)
{
    while (list) {
        lifecycle_callback *next = list->next;
        if (list->free_cb)
            list->free_cb(list->opaque);
        free(list);
        list = next;
    }
}

void rvc_handle_unref(rv_conn *conn)
{
    if (__atomic_sub_fetch(&conn->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        rvc_free_callbacks(conn->callbacks);
        if (conn->close_free)
            conn->close_free(conn->close_opaque);
        pthread_mutex_destroy(&conn->cb_lock);
        pthread_cond_destroy(&conn->registered);
        free(conn->uri);
        free(conn);
    }
}

struct rvc_conn *rvc_handle_rpc(rv_conn *conn, const char *func)
{
    rvc_enter();
    if (!conn) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_CONN, "%s: no connection given", func);
        return NULL;
    }
    if (!conn->rpc) {
        rvc_report(RV_FROM_NONE, RV_ERR_INVALID_CONN, "%s: the connection is closed", func);
        return NULL;
    }
    return conn->rpc;
}

struct rvc_conn *rvc_dom_rpc(rv_dom *dom, const char *func)
{
    if (!dom) {
        rvc_report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "%s: no domain given", func);
        return NULL;
    }
    return rvc_handle_rpc(dom->conn, func);
}

int rvc_handle_need_loop(rv_conn *conn, const char *func)
{
    if (conn->with_loop)
        return 0;
    return rvc_report(RV_FROM_RPC, RV_ERR_NO_SUPPORT,
                      "%s: the connection has no event loop: register one "
                      "(rv_event_register_default_impl) before opening it", func);
}

rv_nonnull_domain rvc_dom_to_wire(const rv_dom *dom)
{
    rv_nonnull_domain w;
    w.name = dom->name;
    memcpy(w.uuid, dom->uuid, RV_UUID_LEN);
    w.id = __atomic_load_n(&dom->id, __ATOMIC_RELAXED);
    return w;
}

rv_dom *rvc_dom_from_wire(rv_conn *conn, rv_nonnull_domain *w)
{
    rv_dom *dom = malloc(sizeof(*dom));
    if (!dom)
        return rvc_no_memory_null();
    dom->conn = conn;
    dom->name = w->name;
    w->name = NULL;
    memcpy(dom->uuid, w->uuid, RV_UUID_LEN);
    __atomic_store_n(&dom->id, w->id, __ATOMIC_RELAXED);
    rvc_handle_ref(conn);
    return dom;
}

void rvc_dom_set_id(rv_dom *dom, int id)
{
    __atomic_store_n(&dom->id, id, __ATOMIC_RELAXED);
}

void rv_domain_free(rv_dom *dom)
{
    if (!dom)
        return;
    rv_conn *conn = dom->conn;
    free(dom->name);
    free(dom);
    rvc_handle_unref(conn);
}

const char *rv_domain_get_name(rv_dom *dom)
{
    rvc_enter();
    if (!dom) {
        rvc_report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "rv_domain_get_name: no domain given");
        return NULL;
    }
    return dom->name;
}

int rv_domain_get_id(rv_dom *dom)
{
    rvc_enter();
    if (!dom)
        return rvc_report(RV_FROM_DOM, RV_ERR_INVALID_DOMAIN, "rv_domain_get_id: no domain given");
    return __atomic_load_n(&dom->id, __ATOMIC_RELAXED);
}

int rv_domain_get_uuid(rv_dom *dom, unsigned char uuid[RV_UUID_BUFLEN])
{
    rvc_enter();
    if (!dom || !uuid)
        return rvc_report(RV_FROM_DOM, dom ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_DOMAIN,
                          "rv_domain_get_uuid: %s", dom ? "no buffer given" : "no domain given");
    memcpy(uuid, dom->uuid, RV_UUID_LEN);
    return 0;
}

int rv_domain_get_uuid_string(rv_dom *dom, char buf[RV_UUID_STRING_BUFLEN])
{
    rvc_enter();
    if (!dom || !buf)
        return rvc_report(RV_FROM_DOM, dom ? RV_ERR_INVALID_ARG : RV_ERR_INVALID_DOMAIN,
                          "rv_domain_get_uuid_string: %s",
                          dom ? "no buffer given" : "no domain given");
    rv_uuid_format(dom->uuid, buf);
    return 0;
}

/* Like libvirt's client, the URI the connection was opened with (the
 * server only knows the part it was given). */
char *rv_connect_get_uri(rv_conn *conn)
{
    if (!rvc_handle_rpc(conn, __func__))
        return NULL;
    char *uri = strdup(conn->uri);
    return uri ? uri : rvc_no_memory_null();
}
