/* Domain event subscriptions (CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY)
 * and the fan-out of each event to the clients that subscribed. */
#ifndef RV_SERVER_EVENTS_H
#define RV_SERVER_EVENTS_H

#include "common/error.h"
#include "common/util.h"
#include "rv_packet.h"
#include "server/drivers/driver.h"

typedef struct rvs_client rvs_client;

/* The kinds of event a client subscribes to; each has its own event IDs. */
enum { RVS_EVENTS_DOMAIN, RVS_EVENTS_NETWORK, RVS_EVENTS_POOL, RVS_EVENTS_NODE_DEVICE,
       RVS_EVENTS_SECRET };

/* One registration: the client's callbackID for an event ID, for every
 * domain or for one (by uuid). */
typedef struct rvs_subscription {
    int callback_id;
    int event_id;
    int one_domain;
    unsigned char uuid[16];
    int family;                 /* RVS_EVENTS_DOMAIN, _NETWORK, _POOL, _NODE_DEVICE */
} rvs_subscription;

/* A client's registrations, in registration order (events go out in it). */
typedef struct rvs_subscriptions {
    rvs_subscription *list;
    int n, cap;
    int last_callback_id;
} rvs_subscriptions;

/* The most subscriptions one client may hold (virsh event --all takes 27). */
#define RVS_MAX_SUBSCRIPTIONS 1024

/* Subscribe c; *callback_id gets the new registration's number.  dom may
 * be NULL (every domain). */
int rvs_events_subscribe(rvs_client *c, int event_id, const rv_nonnull_domain *dom,
                         int *callback_id, rv_err *err);
int rvs_events_unsubscribe(rvs_client *c, int callback_id, rv_err *err);
/* Drop them all (the hypervisor connection they belong to is gone). */
void rvs_events_forget(rvs_subscriptions *subs);

/* Send a lifecycle event to every client in the list (rvs_client_list_next)
 * that opened drv and subscribed to it: encoded once, then copied into
 * each subscriber's output with its own callbackID. */
void rvs_events_lifecycle(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                          int event, int detail);

/* An event that carries the domain only (RV_DOMAIN_EVENT_ID_REBOOT), or
 * the domain and a device's alias (the DEVICE_* events), the same way. */
void rvs_events_domain_only(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                            int event_id, const char *alias);

/* Network events (server/net_events.c): the same list and callbackIDs,
 * marked as network subscriptions; net may be NULL (every network). */
int rvs_events_network_subscribe(rvs_client *c, int event_id, const rv_nonnull_network *net,
                                 int *callback_id, rv_err *err);
int rvs_events_network_unsubscribe(rvs_client *c, int callback_id, rv_err *err);
/* Send a network lifecycle event as rvs_events_lifecycle sends a domain's. */
void rvs_events_network_lifecycle(rvs_client *clients, const rv_driver *drv, const char *name,
                                  const unsigned char uuid[16], int event, int detail);

/* Storage pool events (server/pool_events.c), the same way; pool may be
 * NULL (every pool). */
int rvs_events_pool_subscribe(rvs_client *c, int event_id, const rv_nonnull_storage_pool *pool,
                              int *callback_id, rv_err *err);
int rvs_events_pool_unsubscribe(rvs_client *c, int callback_id, rv_err *err);
/* event_id RV_POOL_EVENT_ID_LIFECYCLE (event, detail) or _REFRESH. */
void rvs_events_pool_event(rvs_client *clients, const rv_driver *drv, const char *name,
                           const unsigned char uuid[16], int event_id, int event, int detail);

/* Node device lifecycle events (server/nodedev_events.c) to every
 * subscriber of the family (subscriptions are for every device). */
void rvs_events_nodedev_lifecycle(rvs_client *clients, const rv_driver *drv, const char *name,
                                  int event);
/* Secret events (server/secret_events.c): event_id
 * RV_SECRET_EVENT_ID_LIFECYCLE (event) or _VALUE_CHANGED. */
void rvs_events_secret_event(rvs_client *clients, const rv_driver *drv,
                             const rv_nonnull_secret *secret, int event_id, int event);

/* JOB_COMPLETED with the job's statistics (server/job_events.c). */
void rvs_events_job_completed(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                              const rv_typed_param *params, unsigned int nparams);

/* Queue an encoded event (a MESSAGE whose body starts with callbackID)
 * for every subscription of the family (RVS_EVENTS_*) to
 * event_id that takes uuid, with that subscription's callback ID patched
 * in; flushed before the loop sleeps.  A client whose output cap it would
 * pass is closed (and leaves the list).  How many clients got it. */
int rvs_events_fan_out(rvs_client *clients, const rv_driver *drv, const rv_buf *frame,
                       int family, int event_id, const unsigned char uuid[16]);

#endif
