/* The QEMU driver's secrets and network filters.  remvirt cannot define
 * either yet: every list is empty and every lookup fails with the error
 * libvirtd's secret and nwfilter drivers give for a name or UUID they do
 * not hold, so clients (virsh secret-list, virt-manager) see an empty host
 * rather than VIR_ERR_NO_SUPPORT. */
#include <stdio.h>

#include "common/util.h"
#include "server/drivers/qemu/qemu_secret.h"

enum {
    LIST_SECRETS_FILTERS = 0xf,     /* EPHEMERAL, NO_EPHEMERAL, PRIVATE, NO_PRIVATE */
};

static int check_flags(int domain, unsigned int flags, unsigned int known, const char *func,
                       rv_err *err)
{
    if (flags & ~known) {
        rv_err_set(err, domain, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                   flags & ~known, func);
        return -1;
    }
    return 0;
}

/* A list's maximum from the wire, refused outside 0..max. */
static int check_max(int n, int max, rv_err *err)
{
    if (n < 0 || n > max) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maximum %d is outside 0..%d", n, max);
        return -1;
    }
    return 0;
}

static int no_secret(const char *what, const char *key, rv_err *err)
{
    rv_err_set(err, RV_FROM_SECRET, RV_ERR_NO_SECRET,
               "Secret not found: no secret with matching %s '%s'", what, key);
    return -1;
}

static int no_nwfilter(const char *what, const char *key, rv_err *err)
{
    rv_err_set(err, RV_FROM_NWFILTER, RV_ERR_NO_NWFILTER,
               "Network filter not found: no nwfilter with matching %s '%s'", what, key);
    return -1;
}

/* ---- secrets */

int rv_qemu_connect_num_of_secrets(rv_driver_conn *c, rv_connect_num_of_secrets_ret *ret,
                                   rv_err *err)
{
    (void)c, (void)err;
    ret->num = 0;
    return 0;
}

int rv_qemu_connect_list_secrets(rv_driver_conn *c, const rv_connect_list_secrets_args *args,
                                 rv_connect_list_secrets_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return check_max(args->maxuuids, RV_SECRET_LIST_MAX, err);
}

int rv_qemu_connect_list_all_secrets(rv_driver_conn *c,
                                     const rv_connect_list_all_secrets_args *args,
                                     rv_connect_list_all_secrets_ret *ret, rv_err *err)
{
    (void)c;
    ret->ret = 0;
    return check_flags(RV_FROM_SECRET, args->flags, LIST_SECRETS_FILTERS,
                       "secretConnectListAllSecrets", err);
}

int rv_qemu_secret_lookup_by_uuid(rv_driver_conn *c, const rv_secret_lookup_by_uuid_args *args,
                                  rv_secret_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format((const unsigned char *)args->uuid, uuid);
    return no_secret("uuid", uuid, err);
}

int rv_qemu_secret_lookup_by_usage(rv_driver_conn *c, const rv_secret_lookup_by_usage_args *args,
                                   rv_secret_lookup_by_usage_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return no_secret("usage", args->usageID, err);
}

int rv_qemu_secret_get_xml_desc(rv_driver_conn *c, const rv_secret_get_xml_desc_args *args,
                                rv_secret_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format((const unsigned char *)args->secret.uuid, uuid);
    return no_secret("uuid", uuid, err);
}

/* ---- network filters and their bindings */

int rv_qemu_connect_num_of_nwfilters(rv_driver_conn *c, rv_connect_num_of_nwfilters_ret *ret,
                                     rv_err *err)
{
    (void)c, (void)err;
    ret->num = 0;
    return 0;
}

int rv_qemu_connect_list_nwfilters(rv_driver_conn *c, const rv_connect_list_nwfilters_args *args,
                                   rv_connect_list_nwfilters_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return check_max(args->maxnames, RV_NWFILTER_LIST_MAX, err);
}

int rv_qemu_connect_list_all_nwfilters(rv_driver_conn *c,
                                       const rv_connect_list_all_nwfilters_args *args,
                                       rv_connect_list_all_nwfilters_ret *ret, rv_err *err)
{
    (void)c;
    ret->ret = 0;
    return check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterConnectListAllNWFilters", err);
}

int rv_qemu_nwfilter_lookup_by_name(rv_driver_conn *c, const rv_nwfilter_lookup_by_name_args *args,
                                    rv_nwfilter_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return no_nwfilter("name", args->name, err);
}

int rv_qemu_nwfilter_lookup_by_uuid(rv_driver_conn *c, const rv_nwfilter_lookup_by_uuid_args *args,
                                    rv_nwfilter_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format((const unsigned char *)args->uuid, uuid);
    return no_nwfilter("uuid", uuid, err);
}

int rv_qemu_nwfilter_get_xml_desc(rv_driver_conn *c, const rv_nwfilter_get_xml_desc_args *args,
                                  rv_nwfilter_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format((const unsigned char *)args->nwfilter.uuid, uuid);
    return no_nwfilter("uuid", uuid, err);
}

int rv_qemu_connect_list_all_nwfilter_bindings(
    rv_driver_conn *c, const rv_connect_list_all_nwfilter_bindings_args *args,
    rv_connect_list_all_nwfilter_bindings_ret *ret, rv_err *err)
{
    (void)c;
    ret->ret = 0;
    return check_flags(RV_FROM_NWFILTER, args->flags, 0,
                       "nwfilterConnectListAllNWFilterBindings", err);
}
