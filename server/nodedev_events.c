/* Node device event subscriptions (CONNECT_NODE_DEVICE_EVENT_REGISTER_ANY
 * and DEREGISTER_ANY), in the client's one subscription list with the
 * domain, network and pool events (events.c), and the fan-out of
 * NODE_DEVICE_EVENT_LIFECYCLE (the test driver creates and destroys
 * vHBAs).  A subscription is for every device: one for a single device
 * gets them all too (a device has no UUID to match on). */
#include <string.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/events.h"
#include "server/rv_dispatch.gen.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.events");

void rvs_events_nodedev_lifecycle(rvs_client *clients, const rv_driver *drv, const char *name,
                                  int event)
{
    rv_node_device_event_lifecycle_msg msg = { .dev = { .name = (char *)name }, .event = event };
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_NODE_DEVICE_EVENT_LIFECYCLE,
                      RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    if (rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_node_device_event_lifecycle_msg, &msg,
                        &err) < 0) {
        RV_ERROR("cannot encode an event of node device '%s': %s", name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    static const unsigned char no_uuid[16];
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_NODE_DEVICE,
                                  RV_NODE_DEVICE_EVENT_ID_LIFECYCLE, no_uuid);
    RV_DEBUG("event %d of node device '%s' went to %d clients", event, name, sent);
    rv_buf_free(&frame);
}

int rvs_handle_connect_node_device_event_register_any(
    rvs_call *call, rv_connect_node_device_event_register_any_args *args,
    rv_connect_node_device_event_register_any_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    if (args->eventID < 0 || args->eventID >= RV_NODE_DEVICE_EVENT_ID_COUNT) {
        rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
                   "invalid argument: unsupported node device event ID %d", args->eventID);
        return -1;
    }
    /* The shared list keeps the limits and the callbackID numbering. */
    if (rvs_events_subscribe(call->client, args->eventID, NULL, &ret->callbackID,
                             &call->err) < 0)
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(call->client);
    subs->list[subs->n - 1].family = RVS_EVENTS_NODE_DEVICE;
    return 0;
}

int rvs_handle_connect_node_device_event_deregister_any(
    rvs_call *call, rv_connect_node_device_event_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(call->client);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].callback_id == args->callbackID &&
            subs->list[i].family == RVS_EVENTS_NODE_DEVICE) {
            memmove(&subs->list[i], &subs->list[i + 1],
                    (size_t)(subs->n - i - 1) * sizeof(subs->list[0]));
            subs->n--;
            return 0;
        }
    }
    rv_err_set(&call->err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
               "invalid argument: no node device event is registered with callback ID %d",
               args->callbackID);
    return -1;
}
