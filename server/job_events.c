/* DOMAIN_EVENT_CALLBACK_JOB_COMPLETED: a domain's job (save, dump) ended
 * well; the message carries its statistics as GET_JOB_STATS with
 * RV_DOMAIN_JOB_STATS_COMPLETED gives them.  Subscriptions are the
 * domain events' (events.c). */
#include <string.h>

#include "common/log.h"
#include "rv_remote.h"
#include "server/events.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.events");

void rvs_events_job_completed(rvs_client *clients, const rv_driver *drv, const rv_dom_ref *dom,
                              const rv_typed_param *params, unsigned int nparams)
{
    rv_domain_event_callback_job_completed_msg msg = {
        .callbackID = 0,
        .dom = { .name = dom->name, .id = dom->id },
        /* (XDR encodes from the list; it does not change it) */
        .params = { .params_len = nparams, .params_val = (rv_typed_param *)params },
    };
    memcpy(msg.dom.uuid, dom->uuid, sizeof(msg.dom.uuid));
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION,
                      RV_PROC_DOMAIN_EVENT_CALLBACK_JOB_COMPLETED, RV_MESSAGE, 1, RV_OK };
    rv_buf frame = { 0 };
    rv_err err = { 0 };
    if (rv_frame_encode(&frame, &hdr, (xdrproc_t)xdr_rv_domain_event_callback_job_completed_msg,
                        &msg, &err) < 0) {
        RV_ERROR("cannot encode the job-completed event of domain '%s': %s", dom->name,
                 err.message ? err.message : "?");
        rv_err_clear(&err);
        return;
    }
    int sent = rvs_events_fan_out(clients, drv, &frame, RVS_EVENTS_DOMAIN,
                                  RV_DOMAIN_EVENT_ID_JOB_COMPLETED, dom->uuid);
    RV_DEBUG("job-completed event of domain '%s' went to %d clients", dom->name, sent);
    rv_buf_free(&frame);
}
