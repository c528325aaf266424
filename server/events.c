#include "server/events.h"

#include <arpa/inet.h>
#include <stddef.h>
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

/* Add a domain subscription; legacy ones get callbackID -1 on the wire
 * (none: their messages carry no callbackID). */
static rvs_subscription *add_subscription(rvs_client *c, int event_id, const rv_nonnull_domain *dom,
                                          rv_err *err)
{
    if (event_id < 0 || event_id >= RV_DOM_EVENT_ID_COUNT) {
        /* Code, domain and wording as libvirtd's. */
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: unsupported event ID %d", event_id);
        return NULL;
    }
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    if (subs->n >= RVS_MAX_SUBSCRIPTIONS) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_OPERATION_FAILED,
                   "operation failed: a connection may hold at most %d event callbacks",
                   RVS_MAX_SUBSCRIPTIONS);
        return NULL;
    }
    if (subs->n == subs->cap) {
        int cap = subs->cap ? subs->cap * 2 : 32;
        rvs_subscription *grown = realloc(subs->list, (size_t)cap * sizeof(*grown));
        if (!grown) {
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
            return NULL;
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
    s->legacy = 0;
    if (dom)
        memcpy(s->uuid, dom->uuid, sizeof(s->uuid));
    return s;
}

int rvs_events_subscribe(rvs_client *c, int event_id, const rv_nonnull_domain *dom,
                         int *callback_id, rv_err *err)
{
    rvs_subscription *s = add_subscription(c, event_id, dom, err);
    if (!s)
        return -1;
    *callback_id = s->callback_id;
    return 0;
}

int rvs_events_subscribe_legacy(rvs_client *c, int event_id, rv_err *err)
{
    rvs_subscription *s = add_subscription(c, event_id, NULL, err);
    if (!s)
        return -1;
    s->legacy = 1;
    return 0;
}

int rvs_events_unsubscribe_legacy(rvs_client *c, int event_id, rv_err *err)
{
    rvs_subscriptions *subs = rvs_client_subscriptions(c);
    for (int i = 0; i < subs->n; i++) {
        if (subs->list[i].legacy && subs->list[i].event_id == event_id &&
            subs->list[i].family == RVS_EVENTS_DOMAIN)
            return rvs_events_unsubscribe(c, subs->list[i].callback_id, err);
    }
    /* libvirtd's words */
    rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
               "internal error: domain event %d not registered", event_id);
    return -1;
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

/* legacy: the event as legacy subscribers get it (NULL: they get none). */
static int fan_out(rvs_client *clients, const rv_driver *drv, const rv_buf *frame,
                   const rv_buf *legacy, int family, int event_id, const unsigned char uuid[16])
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
                (sub->one_domain && memcmp(sub->uuid, uuid, 16) != 0) || (sub->legacy && !legacy))
                continue;
            if (sub->legacy) {
                if (rvs_client_queue_unsolicited(c, rv_buf_head(legacy), rv_buf_used(legacy)))
                    queued = 1;
                continue;
            }
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

int rvs_events_fan_out(rvs_client *clients, const rv_driver *drv, const rv_buf *frame,
                       int family, int event_id, const unsigned char uuid[16])
{
    return fan_out(clients, drv, frame, NULL, family, event_id, uuid);
}

/* How each domain event goes on the wire: its callback message (where
 * its domain sits in it), and its legacy message, if it has one (which
 * part of the callback message that is). */
typedef struct event_wire {
    int proc;
    xdrproc_t encode;
    size_t dom_at;
    int legacy_proc;            /* 0: none */
    xdrproc_t legacy_encode;
    size_t legacy_at;
} event_wire;

#define OFF(member, field) offsetof(rv_dom_event, u.member.field)
/* Callback message {callbackID; legacy message} */
#define NESTED(member, cbproc, cbtype, lproc, ltype)                                  \
    { cbproc, (xdrproc_t)xdr_##cbtype, OFF(member, msg.dom), lproc, (xdrproc_t)xdr_##ltype, \
      OFF(member, msg) }
/* Callback message only: {callbackID; dom; ...} */
#define FLAT(member, cbproc, cbtype) { cbproc, (xdrproc_t)xdr_##cbtype, OFF(member, dom), 0, NULL, 0 }

static const event_wire event_wires[RV_DOM_EVENT_ID_COUNT] = {
    [RV_DOMAIN_EVENT_ID_LIFECYCLE] =
        NESTED(lifecycle, RV_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE,
               rv_domain_event_callback_lifecycle_msg, RV_PROC_DOMAIN_EVENT_LIFECYCLE,
               rv_domain_event_lifecycle_msg),
    [RV_DOMAIN_EVENT_ID_REBOOT] =
        NESTED(reboot, RV_PROC_DOMAIN_EVENT_CALLBACK_REBOOT, rv_domain_event_callback_reboot_msg,
               RV_PROC_DOMAIN_EVENT_REBOOT, rv_domain_event_reboot_msg),
    [RV_DOMAIN_EVENT_ID_RTC_CHANGE] =
        NESTED(rtc_change, RV_PROC_DOMAIN_EVENT_CALLBACK_RTC_CHANGE,
               rv_domain_event_callback_rtc_change_msg, RV_PROC_DOMAIN_EVENT_RTC_CHANGE,
               rv_domain_event_rtc_change_msg),
    [RV_DOMAIN_EVENT_ID_WATCHDOG] =
        NESTED(watchdog, RV_PROC_DOMAIN_EVENT_CALLBACK_WATCHDOG,
               rv_domain_event_callback_watchdog_msg, RV_PROC_DOMAIN_EVENT_WATCHDOG,
               rv_domain_event_watchdog_msg),
    [RV_DOMAIN_EVENT_ID_IO_ERROR] =
        NESTED(io_error, RV_PROC_DOMAIN_EVENT_CALLBACK_IO_ERROR,
               rv_domain_event_callback_io_error_msg, RV_PROC_DOMAIN_EVENT_IO_ERROR,
               rv_domain_event_io_error_msg),
    [RV_DOMAIN_EVENT_ID_GRAPHICS] =
        NESTED(graphics, RV_PROC_DOMAIN_EVENT_CALLBACK_GRAPHICS,
               rv_domain_event_callback_graphics_msg, RV_PROC_DOMAIN_EVENT_GRAPHICS,
               rv_domain_event_graphics_msg),
    [RV_DOMAIN_EVENT_ID_IO_ERROR_REASON] =
        NESTED(io_error_reason, RV_PROC_DOMAIN_EVENT_CALLBACK_IO_ERROR_REASON,
               rv_domain_event_callback_io_error_reason_msg, RV_PROC_DOMAIN_EVENT_IO_ERROR_REASON,
               rv_domain_event_io_error_reason_msg),
    [RV_DOMAIN_EVENT_ID_CONTROL_ERROR] =
        NESTED(control_error, RV_PROC_DOMAIN_EVENT_CALLBACK_CONTROL_ERROR,
               rv_domain_event_callback_control_error_msg, RV_PROC_DOMAIN_EVENT_CONTROL_ERROR,
               rv_domain_event_control_error_msg),
    [RV_DOMAIN_EVENT_ID_DISK_CHANGE] =
        NESTED(disk_change, RV_PROC_DOMAIN_EVENT_CALLBACK_DISK_CHANGE,
               rv_domain_event_callback_disk_change_msg, RV_PROC_DOMAIN_EVENT_DISK_CHANGE,
               rv_domain_event_disk_change_msg),
    [RV_DOMAIN_EVENT_ID_TRAY_CHANGE] =
        NESTED(tray_change, RV_PROC_DOMAIN_EVENT_CALLBACK_TRAY_CHANGE,
               rv_domain_event_callback_tray_change_msg, RV_PROC_DOMAIN_EVENT_TRAY_CHANGE,
               rv_domain_event_tray_change_msg),
    [RV_DOMAIN_EVENT_ID_PMWAKEUP] =
        NESTED(pmwakeup, RV_PROC_DOMAIN_EVENT_CALLBACK_PMWAKEUP,
               rv_domain_event_callback_pmwakeup_msg, RV_PROC_DOMAIN_EVENT_PMWAKEUP,
               rv_domain_event_pmwakeup_msg),
    [RV_DOMAIN_EVENT_ID_PMSUSPEND] =
        NESTED(pmsuspend, RV_PROC_DOMAIN_EVENT_CALLBACK_PMSUSPEND,
               rv_domain_event_callback_pmsuspend_msg, RV_PROC_DOMAIN_EVENT_PMSUSPEND,
               rv_domain_event_pmsuspend_msg),
    [RV_DOMAIN_EVENT_ID_BALLOON_CHANGE] =
        NESTED(balloon_change, RV_PROC_DOMAIN_EVENT_CALLBACK_BALLOON_CHANGE,
               rv_domain_event_callback_balloon_change_msg, RV_PROC_DOMAIN_EVENT_BALLOON_CHANGE,
               rv_domain_event_balloon_change_msg),
    [RV_DOMAIN_EVENT_ID_PMSUSPEND_DISK] =
        NESTED(pmsuspend_disk, RV_PROC_DOMAIN_EVENT_CALLBACK_PMSUSPEND_DISK,
               rv_domain_event_callback_pmsuspend_disk_msg, RV_PROC_DOMAIN_EVENT_PMSUSPEND_DISK,
               rv_domain_event_pmsuspend_disk_msg),
    [RV_DOMAIN_EVENT_ID_DEVICE_REMOVED] =
        NESTED(device_removed, RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVED,
               rv_domain_event_callback_device_removed_msg, RV_PROC_DOMAIN_EVENT_DEVICE_REMOVED,
               rv_domain_event_device_removed_msg),
    [RV_DOMAIN_EVENT_ID_TUNABLE] =
        FLAT(tunable, RV_PROC_DOMAIN_EVENT_CALLBACK_TUNABLE, rv_domain_event_callback_tunable_msg),
    [RV_DOMAIN_EVENT_ID_AGENT_LIFECYCLE] =
        FLAT(agent_lifecycle, RV_PROC_DOMAIN_EVENT_CALLBACK_AGENT_LIFECYCLE,
             rv_domain_event_callback_agent_lifecycle_msg),
    /* (no legacy form: a legacy subscriber never gets these) */
    [RV_DOMAIN_EVENT_ID_DEVICE_ADDED] =
        { RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_ADDED,
          (xdrproc_t)xdr_rv_domain_event_callback_device_added_msg, OFF(device_added, msg.dom), 0,
          NULL, 0 },
    [RV_DOMAIN_EVENT_ID_DEVICE_REMOVAL_FAILED] =
        { RV_PROC_DOMAIN_EVENT_CALLBACK_DEVICE_REMOVAL_FAILED,
          (xdrproc_t)xdr_rv_domain_event_callback_device_removal_failed_msg,
          OFF(device_removal_failed, msg.dom), 0, NULL, 0 },
    [RV_DOMAIN_EVENT_ID_METADATA_CHANGE] =
        FLAT(metadata_change, RV_PROC_DOMAIN_EVENT_CALLBACK_METADATA_CHANGE,
             rv_domain_event_callback_metadata_change_msg),
    [RV_DOMAIN_EVENT_ID_BLOCK_JOB] =
        NESTED(block_job, RV_PROC_DOMAIN_EVENT_CALLBACK_BLOCK_JOB,
               rv_domain_event_callback_block_job_msg, RV_PROC_DOMAIN_EVENT_BLOCK_JOB,
               rv_domain_event_block_job_msg),
    [RV_DOMAIN_EVENT_ID_BLOCK_JOB_2] =
        FLAT(block_job_2, RV_PROC_DOMAIN_EVENT_BLOCK_JOB_2, rv_domain_event_block_job_2_msg),
    [RV_DOMAIN_EVENT_ID_MIGRATION_ITERATION] =
        FLAT(migration_iteration, RV_PROC_DOMAIN_EVENT_CALLBACK_MIGRATION_ITERATION,
             rv_domain_event_callback_migration_iteration_msg),
    [RV_DOMAIN_EVENT_ID_JOB_COMPLETED] =
        FLAT(job_completed, RV_PROC_DOMAIN_EVENT_CALLBACK_JOB_COMPLETED,
             rv_domain_event_callback_job_completed_msg),
    [RV_DOMAIN_EVENT_ID_BLOCK_THRESHOLD] =
        FLAT(block_threshold, RV_PROC_DOMAIN_EVENT_BLOCK_THRESHOLD,
             rv_domain_event_block_threshold_msg),
    [RV_DOMAIN_EVENT_ID_MEMORY_FAILURE] =
        FLAT(memory_failure, RV_PROC_DOMAIN_EVENT_MEMORY_FAILURE,
             rv_domain_event_memory_failure_msg),
    [RV_DOMAIN_EVENT_ID_MEMORY_DEVICE_SIZE_CHANGE] =
        FLAT(memory_device_size_change, RV_PROC_DOMAIN_EVENT_MEMORY_DEVICE_SIZE_CHANGE,
             rv_domain_event_memory_device_size_change_msg),
};

static int encode_event(rv_buf *frame, int proc, xdrproc_t encode, void *msg)
{
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, proc, RV_MESSAGE, 1, RV_OK };
    rv_err err = { 0 };
    if (rv_frame_encode(frame, &hdr, encode, msg, &err) < 0) {
        RV_ERROR("cannot encode event message %d: %s", proc, err.message ? err.message : "?");
        rv_err_clear(&err);
        return -1;
    }
    return 0;
}

void rvs_events_domain(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                       const rv_dom_event *ev)
{
    const event_wire *w = ev->id >= 0 && ev->id < RV_DOM_EVENT_ID_COUNT ? &event_wires[ev->id] : NULL;
    if (!w || !w->proc) {
        RV_ERROR("internal error: domain event %d has no message", ev->id);
        return;
    }
    rv_dom_event copy = *ev;
    rv_nonnull_domain *d = (rv_nonnull_domain *)((char *)&copy + w->dom_at);
    d->name = dom->name;
    d->id = dom->id;
    memcpy(d->uuid, dom->uuid, sizeof(d->uuid));
    rv_buf frame = { 0 }, legacy = { 0 };
    if (encode_event(&frame, w->proc, w->encode, &copy.u) < 0 ||
        (w->legacy_proc &&
         encode_event(&legacy, w->legacy_proc, w->legacy_encode, (char *)&copy + w->legacy_at) < 0))
        goto out;
    int sent = fan_out(clients, drv, &frame, w->legacy_proc ? &legacy : NULL, RVS_EVENTS_DOMAIN,
                       ev->id, dom->uuid);
    RV_DEBUG("event %d of domain '%s' went to %d clients", ev->id, dom->name, sent);
out:
    rv_buf_free(&frame);
    rv_buf_free(&legacy);
}

void rvs_events_lifecycle(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                          int event, int detail)
{
    rv_dom_event ev = { .id = RV_DOMAIN_EVENT_ID_LIFECYCLE };
    ev.u.lifecycle.msg.event = event;
    ev.u.lifecycle.msg.detail = detail;
    rvs_events_domain(clients, drv, dom, &ev);
}
