/* Storage pool event subscriptions (CONNECT_STORAGE_POOL_EVENT_REGISTER_ANY
 * and DEREGISTER_ANY) and the fan-out of STORAGE_POOL_EVENT_LIFECYCLE and
 * STORAGE_POOL_EVENT_REFRESH.  They share a client's subscription list,
 * callbackID numbering and output cap with the domain and network events
 * (events.c). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/events.h"
#include "server/rv_dispatch.gen.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.events");

int rvs_events_pool_subscribe(rvs_client *c, int event_id, const rv_nonnull_storage_pool *pool,
                              int *callback_id, rv_err *err)
{
    if (event_id < 0 || event_id >= RV_POOL_EVENT_ID_COUNT) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
                   "invalid argument: unsupported storage pool event ID %d", event_id);
        return -1;
    }
    /* Register as a domain subscription would, then mark it: one place
     * keeps the list's limits and growth. */
    if (rvs_events_subscribe(c, event_id, NULL, callback_id, err) < 0)
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    rvs_subscription *s = &subs->list[subs->n - 1];
    s->family = RVS_EVENTS_POOL;
    s->one_domain = pool != NULL;       /* here: one pool, by uuid */
    if (pool)
        memcpy(s->uuid, pool->uuid, sizeof(s->uuid));
    return 0;
}

int rvs_events_pool_unsubscribe(rvs_client *c, int callback_id, rv_err *err)
{
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].callback_id == callback_id &&
            subs->list[i].family == RVS_EVENTS_POOL) {
            memmove(&subs->list[i], &subs->list[i + 1],
                    (size_t)(subs->n - i - 1) * sizeof(subs->list[0]));
            subs->n--;
            return 0;
        }
    }
    rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
               "invalid argument: no storage pool event is registered with callback ID %d",
               callback_id);
    return -1;
}

void rvs_events_pool_event(rvs_client *clients, const rv_driver *drv, const char *name,
                           const unsigned char uuid[16], int event_id, int event, int detail)
{
    rv_storage_pool_event_lifecycle_msg life = {
        .pool = { .name = (char *)name }, .event = event, .detail = detail,
    };
    rv_storage_pool_event_refresh_msg refresh = { .pool = { .name = (char *)name } };
    memcpy(life.pool.uuid, uuid, sizeof(life.pool.uuid));
    memcpy(refresh.pool.uuid, uuid, sizeof(refresh.pool.uuid));
    int lifecycle = event_id == RV_POOL_EVENT_ID_LIFECYCLE;
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION,
                      lifecycle ? RV_PROC_STORAGE_POOL_EVENT_LIFECYCLE
                                : RV_PROC_STORAGE_POOL_EVENT_REFRESH,
                      RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    int rc = lifecycle
        ? rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_storage_pool_event_lifecycle_msg,
                          &life, &err)
        : rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_storage_pool_event_refresh_msg,
                          &refresh, &err);
    if (rc < 0) {
        RV_ERROR("cannot encode an event of storage pool '%s': %s", name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_POOL, event_id, uuid);
    RV_DEBUG("event %d/%d of storage pool '%s' went to %d clients", event_id, event, name, sent);
    rv_buf_free(&frame);
}

int rvs_handle_connect_storage_pool_event_register_any(
    rvs_call *call, rv_connect_storage_pool_event_register_any_args *args,
    rv_connect_storage_pool_event_register_any_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_pool_subscribe(call->client, args->eventID, args->pool, &ret->callbackID,
                                     &call->err);
}

int rvs_handle_connect_storage_pool_event_deregister_any(
    rvs_call *call, rv_connect_storage_pool_event_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_pool_unsubscribe(call->client, args->callbackID, &call->err);
}
