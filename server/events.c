#include "server/events.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/client.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.events");

/* Where callbackID sits in an encoded event: after the length word and
 * the 24-byte header, first in every *_msg body. */
#define CALLBACK_ID_OFFSET RV_FRAME_MIN

int rvs_events_subscribe(rvs_client *c, int event_id, const rv_nonnull_domain *dom,
                         int *callback_id, rv_err *err)
{
    if (event_id < 0 || event_id >= RV_DOM_EVENT_ID_COUNT) {
        /* Code, domain and wording as libvirtd's. */
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: unsupported event ID %d", event_id);
        return -1;
    }
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    if (subs->n >= RVS_MAX_SUBSCRIPTIONS) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_OPERATION_FAILED,
                   "operation failed: a connection may hold at most %d event callbacks",
                   RVS_MAX_SUBSCRIPTIONS);
        return -1;
    }
    if (subs->n == subs->cap) {
        int cap = subs->cap ? subs->cap * 2 : 32;
        rvs_subscription *grown = realloc(subs->list, (size_t)cap * sizeof(*grown));
        if (!grown) {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        subs->list = grown;
        subs->cap = cap;
    }
    rvs_subscription *s = &subs->list[subs->n++];
    /* libvirtd numbers a connection's callbacks from 0 */
    s->callback_id = subs->last_callback_id++;
    s->event_id = event_id;
    s->one_domain = dom != NULL;
    s->family = RVS_EVENTS_DOMAIN;
    if (dom)
        memcpy(s->uuid, dom->uuid, sizeof(s->uuid));
    *callback_id = s->callback_id;
    return 0;
}

int rvs_events_unsubscribe(rvs_client *c, int callback_id, rv_err *err)
{
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].callback_id == callback_id && subs->list[i].family == RVS_EVENTS_DOMAIN) {
            /* Keep the order: events go out in registration order. */
            memmove(&subs->list[i], &subs->list[i + 1],
                    (size_t)(subs->n - i - 1) * sizeof(subs->list[0]));
            subs->n--;
            return 0;
        }
    }
    rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
               "internal error: domain event callback %d not registered", callback_id);
    return -1;
}

void rvs_events_forget(rvs_subscriptions *subs)
{
    free(subs->list);
    subs->list = NULL;
    subs->n = subs->cap = 0;
}

int rvs_events_fan_out(rvs_client *clients, const rv_driver *drv, const rv_buf *frame,
                       int family, int event_id, const unsigned char uuid[16])
{
    int sent = 0;
    rvs_client *next;
    for (rvs_client *c = clients; c; c = next) {
        next = rvs_client_list_next(c);     /* a client over its output cap leaves the list */
        if (rvs_client_is_closing(c) || rvs_client_driver(c) != drv)
            continue;
        const rvs_subscriptions *subs = rvs_client_subscriptions(c);
        int queued = 0;
        for (int i = 0; i < subs->n && !rvs_client_is_closing(c); i++) {
            const rvs_subscription *sub = &subs->list[i];
            if (sub->family != family || sub->event_id != event_id ||
                (sub->one_domain && memcmp(sub->uuid, uuid, 16) != 0))
                continue;
            char *copy = rvs_client_queue_unsolicited(c, rv_buf_head(frame), rv_buf_used(frame));
            if (copy) {
                uint32_t id = htonl((uint32_t)sub->callback_id);
                memcpy(copy + CALLBACK_ID_OFFSET, &id, sizeof(id));
                queued = 1;
            }
        }
        if (queued) {
            sent++;
            rvs_client_flush_soon(c);
        }
    }
    return sent;
}

void rvs_events_lifecycle(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                          int event, int detail)
{
    rv_domain_event_callback_lifecycle_msg msg = {
        .callbackID = 0,
        .msg = { .dom = { .name = dom->name, .id = dom->id }, .event = event, .detail = detail },
    };
    memcpy(msg.msg.dom.uuid, dom->uuid, sizeof(msg.msg.dom.uuid));
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION,
                      RV_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE, RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    if (rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_domain_event_callback_lifecycle_msg,
                        &msg, &err) < 0) {
        RV_ERROR("cannot encode the lifecycle event of domain '%s': %s", dom->name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_DOMAIN, RV_DOM_EVENT_ID_LIFECYCLE,
                                  dom->uuid);
    RV_DEBUG("lifecycle event %d/%d of domain '%s' went to %d clients", event, detail,
             dom->name, sent);
    rv_buf_free(&frame);
}

/* One event message encoded and fanned out to event_id's subscribers. */
static void send_domain_event(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                              int proc, int event_id, xdrproc_t encode, void *msg)
{
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, proc, RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    if (rv_frame_encode(&frame, &hdr, encode, msg, &err) < 0) {
        RV_ERROR("cannot encode event %d of domain '%s': %s", event_id, dom->name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_DOMAIN, event_id, dom->uuid);
    RV_DEBUG("event %d of domain '%s' went to %d clients", event_id, dom->name, sent);
    rv_buf_free(&frame);
}

void rvs_events_domain_only(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                            int event_id, const char *alias)
{
    rv_domain_event_callback_reboot_msg reboot = {
        .callbackID = 0,
        .msg = { .dom = { .name = dom->name, .id = dom->id } },
    };
    /* The three device events are the same message under three numbers. */
    rv_domain_event_callback_device_added_msg device = {
        .callbackID = 0,
        .msg = { .dom = { .name = dom->name, .id = dom->id }, .devAlias = (char *)alias },
    };
    void *msg = &device;
    xdrproc_t encode = (xdrproc_t)xdr_rv_domain_event_callback_device_added_msg;
    int proc;
    switch (event_id) {
    case RV_DOMAIN_EVENT_ID_REBOOT:
        proc = RV_PROC_DOMAIN_EVENT_CALLBACK_REBOOT;
        msg = &reboot;
        encode = (xdrproc_t)xdr_rv_domain_event_callback_reboot_msg;
        break;
    case RV_DOMAIN_EVENT_ID_DEVICE_ADDED:
        proc = RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_ADDED;
        break;
    case RV_DOMAIN_EVENT_ID_DEVICE_REMOVED:
        proc = RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVED;
        break;
    case RV_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED:
        proc = RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVAL_FAILED;
        break;
    default:
        RV_ERROR("internal error: event ID %d is not one of the domain-only or device events", event_id);
        return;
    }
    if (proc != RV_PROC_DOMAIN_EVENT_CALLBACK_REBOOT && !alias) {
        RV_ERROR("internal error: device event %d without an alias", event_id);
        return;
    }
    memcpy(reboot.msg.dom.uuid, dom->uuid, sizeof(reboot.msg.dom.uuid));
    memcpy(device.msg.dom.uuid, dom->uuid, sizeof(device.msg.dom.uuid));
    send_domain_event(clients, drv, dom, proc, event_id, encode, msg);
}

void rvs_events_block_job(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                          const char *path, const char *target, int type, int status)
{
    rv_nonnull_domain wire = { .name = dom->name, .id = dom->id };
    memcpy(wire.uuid, dom->uuid, sizeof(wire.uuid));
    if (path) {
        rv_domain_event_callback_block_job_msg one = {
            .msg = { .dom = wire, .path = (char *)path, .type = type, .status = status },
        };
        send_domain_event(clients, drv, dom, RV_PROC_DOMAIN_EVENT_CALLBACK_BLOCK_JOB,
                          RV_DOMAIN_EVENT_ID_BLOCK_JOB,
                          (xdrproc_t)xdr_rv_domain_event_callback_block_job_msg, &one);
    }
    rv_domain_event_block_job_2_msg two = {
        .dom = wire, .dst = (char *)target, .type = type, .status = status,
    };
    send_domain_event(clients, drv, dom, RV_PROC_DOMAIN_EVENT_BLOCK_JOB_2,
                      RV_DOMAIN_EVENT_ID_BLOCK_JOB_2, (xdrproc_t)xdr_rv_domain_event_block_job_2_msg,
                      &two);
}
