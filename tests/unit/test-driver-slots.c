/* The driver interface's one choke point: a call whose driver leaves the
 * slot unset is refused with VIR_ERR_NO_SUPPORT naming the API (as
 * libvirtd refuses a function its driver lacks), never a NULL call; a slot
 * that is set is called with the wire arguments and its result sent. */
#include <stdlib.h>
#include <string.h>

#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/drivers/driver.h"
#include "tests/unit/check.h"
#include "transport/frame.h"

static rvs_client_env env = { .max_client_requests = 1 << 30 };

static void on_close(rvs_client *c, void *opaque)
{
    (void)c;
    (void)opaque;
}

static char seen_name[64];

static int get_hostname(rv_driver_conn *c, rv_connect_get_hostname_ret *ret, rv_err *err)
{
    (void)c;
    (void)err;
    ret->hostname = strdup("slot-host");
    return ret->hostname ? 0 : -1;
}

static int lookup_by_name(rv_driver_conn *c, const rv_domain_lookup_by_name_args *args,
                          rv_domain_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    snprintf(seen_name, sizeof(seen_name), "%s", args->name);
    rv_err_set(err, RV_FROM_DOMAIN, 42, "no domain with matching name '%s'", args->name);
    (void)ret;
    return -1;
}

/* Only two slots filled: everything else must be refused, not called. */
static const rv_driver sparse_driver = {
    .name = "sparse",
    .ops = {
        .connect_get_hostname = get_hostname,
        .domain_lookup_by_name = lookup_by_name,
    },
};

/* Dispatch one call and decode the one reply it queues. */
static int call(rvs_client *c, int proc, xdrproc_t args_fn, void *args, rv_header *hdr,
                rv_error *error, xdrproc_t ret_fn, void *ret)
{
    rv_buf b = { 0 };
    rv_header h = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, proc, RV_CALL, 7, RV_OK };
    rv_err err = { 0 };
    CHECK(rv_frame_encode(&b, &h, args_fn, args, &err) == 0);
    CHECK(rvs_dispatch_frame(c, rv_buf_head(&b), rv_buf_used(&b)) == 0);
    rv_buf_free(&b);
    rv_buf *out = rvs_client_output(c);
    uint32_t len = rv_frame_peek_len(rv_buf_head(out));
    CHECK_INT_EQ((int)len, (int)rv_buf_used(out));
    CHECK(rv_frame_decode_header(rv_buf_head(out), len, hdr, &err) == 0);
    int rc;
    if (hdr->status == RV_ERROR)
        rc = rv_frame_decode_payload(rv_buf_head(out), len, (xdrproc_t)xdr_rv_error, error,
                                     &err);
    else
        rc = rv_frame_decode_payload(rv_buf_head(out), len, ret_fn, ret, &err);
    CHECK_INT_EQ(rc, 0);
    rv_buf_consume(out, len);
    return hdr->status;
}

int main(void)
{
    env.on_close = on_close;
    rvs_client *c = rvs_client_new_detached(&env, 1);
    CHECK(c != NULL);
    rvs_client_attach_driver(c, &sparse_driver,
                             (rv_driver_conn *)&sparse_driver,  /* never looked into */
                             NULL);

    rv_header hdr;
    rv_error e;
    memset(&e, 0, sizeof(e));

    /* Unset slots: NO_SUPPORT in the API's error domain, naming the API. */
    rv_domain_get_info_args info_args = { .dom = { .name = (char *)"x" } };
    CHECK_INT_EQ(call(c, RV_PROC_DOMAIN_GET_INFO, (xdrproc_t)xdr_rv_domain_get_info_args,
                      &info_args, &hdr, &e, NULL, NULL), RV_ERROR);
    CHECK_INT_EQ(e.code, RV_ERR_NO_SUPPORT);
    CHECK_INT_EQ(e.domain, RV_FROM_DOMAIN);
    CHECK_STR_EQ(*e.message, "this function is not supported by the connection driver: "
                             "virDomainGetInfo");
    xdr_free((xdrproc_t)xdr_rv_error, &e);
    memset(&e, 0, sizeof(e));

    /* A daemon handler in front of a slot (GET_XML_DESC) ends at the same check. */
    rv_domain_get_xml_desc_args xml_args = { .dom = { .name = (char *)"x" } };
    CHECK_INT_EQ(call(c, RV_PROC_DOMAIN_GET_XML_DESC, (xdrproc_t)xdr_rv_domain_get_xml_desc_args,
                      &xml_args, &hdr, &e, NULL, NULL), RV_ERROR);
    CHECK_INT_EQ(e.code, RV_ERR_NO_SUPPORT);
    CHECK_STR_EQ(*e.message, "this function is not supported by the connection driver: "
                             "virDomainGetXMLDesc");
    xdr_free((xdrproc_t)xdr_rv_error, &e);
    memset(&e, 0, sizeof(e));

    /* A set slot runs and its result goes back. */
    rv_connect_get_hostname_ret host = { 0 };
    xdrproc_t no_args = (xdrproc_t)(void (*)(void))xdr_void;
    CHECK_INT_EQ(call(c, RV_PROC_CONNECT_GET_HOSTNAME, no_args, NULL, &hdr, &e,
                      (xdrproc_t)xdr_rv_connect_get_hostname_ret, &host), RV_OK);
    CHECK_STR_EQ(host.hostname, "slot-host");
    xdr_free((xdrproc_t)xdr_rv_connect_get_hostname_ret, (char *)&host);

    /* A slot gets the wire arguments, and its error is the reply. */
    rv_domain_lookup_by_name_args by_name = { .name = (char *)"guest-7" };
    CHECK_INT_EQ(call(c, RV_PROC_DOMAIN_LOOKUP_BY_NAME,
                      (xdrproc_t)xdr_rv_domain_lookup_by_name_args, &by_name, &hdr, &e, NULL,
                      NULL), RV_ERROR);
    CHECK_STR_EQ(seen_name, "guest-7");
    CHECK_INT_EQ(e.code, RV_ERR_NO_DOMAIN);
    CHECK_STR_EQ(*e.message, "no domain with matching name 'guest-7'");
    xdr_free((xdrproc_t)xdr_rv_error, &e);

    /* No connection: the open check comes before the slot's. */
    rvs_client_attach_driver(c, &sparse_driver, NULL, NULL);
    memset(&e, 0, sizeof(e));
    CHECK_INT_EQ(call(c, RV_PROC_DOMAIN_GET_INFO, (xdrproc_t)xdr_rv_domain_get_info_args,
                      &info_args, &hdr, &e, NULL, NULL), RV_ERROR);
    CHECK_STR_EQ(*e.message, "internal error: hypervisor connection not open");
    xdr_free((xdrproc_t)xdr_rv_error, &e);

    rvs_client_free(c);
    printf("test-driver-slots: all checks passed\n");
    return 0;
}
