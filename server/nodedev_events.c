/* Node device event subscriptions (CONNECT_NODE_DEVICE_EVENT_REGISTER_ANY
 * and DEREGISTER_ANY), in the client's one subscription list with the
 * domain, network and pool events (events.c).  virt-manager registers
 * them when it connects and polls the devices without them.  No driver
 * changes its node devices yet, so no NODE_DEVICE_EVENT_* is ever sent;
 * a driver that does will add the fan-out, as pool_events.c has it. */
#include <string.h>

#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/events.h"
#include "server/rv_dispatch.gen.h"

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
