/* Parsing a call's large document off the loop (preparse.h). */
#include "server/preparse.h"

#include <stdlib.h>

#include "rv_remote.h"
#include "server/dispatch.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/work_pool.h"

#define DOC(proc, type, field) [RV_PROC_##proc] = offsetof(type, field) + 1

/* Where each procedure that brings a definition has its text, plus one
 * (0: none). */
static const size_t documents[] = {
    DOC(DOMAIN_DEFINE_XML, rv_domain_define_xml_args, xml),
    DOC(DOMAIN_DEFINE_XML_FLAGS, rv_domain_define_xml_flags_args, xml),
    DOC(DOMAIN_CREATE_XML, rv_domain_create_xml_args, xml_desc),
    DOC(NETWORK_DEFINE_XML, rv_network_define_xml_args, xml),
    DOC(NETWORK_DEFINE_XML_FLAGS, rv_network_define_xml_flags_args, xml),
    DOC(NETWORK_CREATE_XML, rv_network_create_xml_args, xml),
    DOC(NETWORK_CREATE_XML_FLAGS, rv_network_create_xml_flags_args, xml),
    DOC(STORAGE_POOL_DEFINE_XML, rv_storage_pool_define_xml_args, xml),
    DOC(STORAGE_POOL_CREATE_XML, rv_storage_pool_create_xml_args, xml),
    DOC(STORAGE_VOL_CREATE_XML, rv_storage_vol_create_xml_args, xml),
    DOC(STORAGE_VOL_CREATE_XML_FROM, rv_storage_vol_create_xml_from_args, xml),
    DOC(DOMAIN_SNAPSHOT_CREATE_XML, rv_domain_snapshot_create_xml_args, xml_desc),
    DOC(DOMAIN_CHECKPOINT_CREATE_XML, rv_domain_checkpoint_create_xml_args, xml_desc),
    DOC(SECRET_DEFINE_XML, rv_secret_define_xml_args, xml),
    DOC(NWFILTER_DEFINE_XML, rv_nwfilter_define_xml_args, xml),
    DOC(NWFILTER_DEFINE_XML_FLAGS, rv_nwfilter_define_xml_flags_args, xml),
    DOC(NODE_DEVICE_CREATE_XML, rv_node_device_create_xml_args, xml_desc),
    DOC(NODE_DEVICE_DEFINE_XML, rv_node_device_define_xml_args, xml_desc),
    DOC(DOMAIN_ATTACH_DEVICE, rv_domain_attach_device_args, xml),
    DOC(DOMAIN_ATTACH_DEVICE_FLAGS, rv_domain_attach_device_flags_args, xml),
    DOC(DOMAIN_DETACH_DEVICE, rv_domain_detach_device_args, xml),
    DOC(DOMAIN_DETACH_DEVICE_FLAGS, rv_domain_detach_device_flags_args, xml),
    DOC(DOMAIN_UPDATE_DEVICE_FLAGS, rv_domain_update_device_flags_args, xml),
};

typedef struct preparse_job {
    rv_work work;
    rv_deferred *call;
    const char *xml;            /* in call's arguments */
    rv_lx_preparsed *parsed;
} preparse_job;

void rvs_preparse_init(void)
{
    rv_lx_init();
}

const char *rvs_preparse_document(int proc, const void *args)
{
    if (proc <= 0 || (size_t)proc >= sizeof(documents) / sizeof(documents[0]) ||
        !documents[proc])
        return NULL;
    return *(const char *const *)((const char *)args + documents[proc] - 1);
}

static void preparse_run(rv_work *w)
{
    preparse_job *job = (preparse_job *)w;
    job->parsed = rv_lx_preparse(job->xml);
}

static void dispose_run(rv_work *w)
{
    preparse_job *job = (preparse_job *)w;
    rv_lx_preparsed_free(job->parsed);
    job->parsed = NULL;
}

static void dispose_done(rv_work *w)
{
    free(w);
}

static void preparse_done(rv_work *w)
{
    preparse_job *job = (preparse_job *)w;
    rvs_client *c = rvs_deferred_client(job->call);
    /* Out of memory on the thread: the slot parses for itself. */
    rv_lx_offer(job->parsed);
    rv_deferred_rerun(job->call);
    job->parsed = rv_lx_withdraw();
    if (c)
        rvs_client_release_reading(c);
    /* A refused document's tree (or one the slot did not read) is freed
     * where it was built: freeing 200,000 nodes was 60 ms of the loop. */
    if (job->parsed && rv_work_pool_running()) {
        job->work.run = dispose_run;
        job->work.done = dispose_done;
        rv_work_submit(&job->work);
        return;
    }
    rv_lx_preparsed_free(job->parsed);
    free(job);
}

int rvs_preparse_submit(rvs_client *c, rv_deferred *d, const char *xml)
{
    preparse_job *job = calloc(1, sizeof(*job));
    if (!job)
        return -1;
    job->work.run = preparse_run;
    job->work.done = preparse_done;
    job->call = d;
    job->xml = xml;
    rvs_client_hold_reading(c);
    rv_work_submit(&job->work);
    return 0;
}
