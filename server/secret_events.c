/* Secret event subscriptions (CONNECT_SECRET_EVENT_REGISTER_ANY and
 * DEREGISTER_ANY) and the fan-out of SECRET_EVENT_LIFECYCLE and
 * SECRET_EVENT_VALUE_CHANGED, in the client's one subscription list with
 * the other events (events.c): a subscription for one secret matches its
 * UUID. */
#include <string.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/events.h"
#include "server/rv_dispatch.gen.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.events");

void rvs_events_secret_event(rvs_client *clients, const rv_driver *drv,
                             const rv_nonnull_secret *secret, int event_id, int event)
{
    rv_secret_event_lifecycle_msg life = { .secret = *secret, .event = event };
    rv_secret_event_value_changed_msg changed = { .secret = *secret };
    int lifecycle = event_id == RV_SECRET_EVENT_ID_LIFECYCLE;
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION,
                      lifecycle ? RV_PROC_SECRET_EVENT_LIFECYCLE
                                : RV_PROC_SECRET_EVENT_VALUE_CHANGED,
                      RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    int rc = lifecycle
        ? rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_secret_event_lifecycle_msg, &life, &err)
        : rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_secret_event_value_changed_msg,
                          &changed, &err);
    if (rc < 0) {
        RV_ERROR("cannot encode a secret event: %s", err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_SECRET, event_id,
                                  (const unsigned char *)secret->uuid);
    RV_DEBUG("secret event %d/%d went to %d clients", event_id, event, sent);
    rv_buf_free(&frame);
}

int rvs_handle_connect_secret_event_register_any(rvs_call *call,
                                                 rv_connect_secret_event_register_any_args *args,
                                                 rv_connect_secret_event_register_any_ret *ret)
{
    const rv_driver_ops *ops = rvs_call_driver_ops(call);
    if (!ops)
        return -1;
    /* A driver without secrets (the test driver, as libvirt's) has no
     * secret events either. */
    if (!ops->secret_define_xml)
        return rvs_call_unsupported(call, RV_PROC_CONNECT_SECRET_EVENT_REGISTER_ANY);
    if (args->eventID < 0 || args->eventID >= RV_SECRET_EVENT_ID_COUNT) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
                   "invalid argument: unsupported secret event ID %d", args->eventID);
        return -1;
    }
    /* The shared list keeps the limits and the callbackID numbering. */
    if (rvs_events_subscribe(call->client, args->eventID, NULL, &ret->callbackID,
                             &call->err) < 0)
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(call->client);
    rvs_subscription *s = &subs->list[subs->n - 1];
    s->family = RVS_EVENTS_SECRET;
    s->one_domain = args->secret != NULL;     /* here: one secret, by uuid */
    if (args->secret)
        memcpy(s->uuid, args->secret->uuid, sizeof(s->uuid));
    return 0;
}

int rvs_handle_connect_secret_event_deregister_any(
    rvs_call *call, rv_connect_secret_event_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(call->client);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].callback_id == args->callbackID &&
            subs->list[i].family == RVS_EVENTS_SECRET) {
            memmove(&subs->list[i], &subs->list[i + 1],
                    (size_t)(subs->n - i - 1) * sizeof(subs->list[0]));
            subs->n--;
            return 0;
        }
    }
    rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
               "invalid argument: no secret event is registered with callback ID %d",
               args->callbackID);
    return -1;
}
