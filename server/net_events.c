/* Network event subscriptions (CONNECT_NETWORK_EVENT_REGISTER_ANY and
 * DEREGISTER_ANY) and the fan-out of NETWORK_EVENT_LIFECYCLE.  They share
 * a client's subscription list and callbackID numbering with the domain
 * events (events.c), so both kinds go out through the same output cap. */
#include <arpa/inet.h>
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

/* callbackID is the first field of the message body. */

int rvs_events_network_subscribe(rvs_client *c, int event_id, const rv_nonnull_network *net,
                                 int *callback_id, rv_err *err)
{
    if (event_id < 0 || event_id >= RV_NET_EVENT_ID_COUNT) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
                   "invalid argument: unsupported network event ID %d", event_id);
        return -1;
    }
    /* Register as a domain subscription would, then mark it: one place
     * keeps the list's limits and growth. */
    if (rvs_events_subscribe(c, event_id, NULL, callback_id, err) < 0)
        return -1;
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    rvs_subscription *s = &subs->list[subs->n - 1];
    s->family = RVS_EVENTS_NETWORK;
    s->one_domain = net != NULL;        /* here: one network, by uuid */
    if (net)
        memcpy(s->uuid, net->uuid, sizeof(s->uuid));
    return 0;
}

int rvs_events_network_unsubscribe(rvs_client *c, int callback_id, rv_err *err)
{
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].callback_id == callback_id &&
            subs->list[i].family == RVS_EVENTS_NETWORK) {
            memmove(&subs->list[i], &subs->list[i + 1],
                    (size_t)(subs->n - i - 1) * sizeof(subs->list[0]));
            subs->n--;
            return 0;
        }
    }
    rv_err_set(err, RV_FROM_REMOTE, RV_ERR_INVALID_ARG,
               "invalid argument: no network event is registered with callback ID %d",
               callback_id);
    return -1;
}

void rvs_events_network_lifecycle(rvs_client *clients, const rv_driver *drv, const char *name,
                                  const unsigned char uuid[16], int event, int detail)
{
    rv_network_event_lifecycle_msg msg = {
        .callbackID = 0,
        .net = { .name = (char *)name },
        .event = event,
        .detail = detail,
    };
    memcpy(msg.net.uuid, uuid, sizeof(msg.net.uuid));
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_NETWORK_EVENT_LIFECYCLE,
                      RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    if (rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_network_event_lifecycle_msg, &msg,
                        &err) < 0) {
        RV_ERROR("cannot encode the lifecycle event of network '%s': %s", name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_NETWORK,
                                  RV_NET_EVENT_ID_LIFECYCLE, uuid);
    RV_DEBUG("lifecycle event %d of network '%s' went to %d clients", event, name, sent);
    rv_buf_free(&frame);
}

int rvs_handle_connect_network_event_register_any(
    rvs_call *call, rv_connect_network_event_register_any_args *args,
    rv_connect_network_event_register_any_ret *ret)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_network_subscribe(call->client, args->eventID, args->net,
                                        &ret->callbackID, &call->err);
}

int rvs_handle_connect_network_event_deregister_any(
    rvs_call *call, rv_connect_network_event_deregister_any_args *args)
{
    if (!rvs_call_conn(call))
        return -1;
    return rvs_events_network_unsubscribe(call->client, args->callbackID, &call->err);
}
