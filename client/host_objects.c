/* Host devices, host interfaces, secrets and network filters: the calls
 * rvsh's nodedev-*, iface-*, secret-* and nwfilter-* commands make.  The
 * wire names these objects by value (a name, a name and a MAC, a UUID
 * and a usage, a name and a UUID), so the library hands out those values
 * (rv_*_ref structs the caller frees) instead of handles. */
#include "client/remvirt.h"

#include <stdlib.h>
#include <string.h>

#include "client/handle.h"
#include "client/last_error.h"
#include "client/rv_stubs.gen.h"
#include "common/util.h"
#include "rv_remote.h"

/* The string a reply held, now the caller's (the reply keeps NULL). */
static char *take(char **s)
{
    char *t = *s;
    *s = NULL;
    return t;
}

/* A UUID text, checked before anything is sent; -1 with the last error. */
static int parse_uuid(const char *func, const char *text, unsigned char raw[RV_UUID_LEN])
{
    if (!text || rv_uuid_parse(text, raw) < 0)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: %s", func,
                          text ? "malformed uuid" : "no uuid given");
    return 0;
}

static int no_name(const char *func, const char *what)
{
    return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: no %s given", func, what);
}

/* ---- node devices ---- */

int rv_connect_list_all_node_devices(rv_conn *conn, char ***names, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!names)
        return no_name(__func__, "result pointer");
    *names = NULL;
    rv_connect_list_all_node_devices_args args = { .need_results = 1, .flags = flags };
    rv_connect_list_all_node_devices_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_node_devices(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.devices.devices_len;          /* at most RV_NODE_DEVICE_LIST_MAX */
    char **list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++)
        list[i] = take(&ret.devices.devices_val[i].name);
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_node_devices_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *names = list;
    return (int)n;
}

int rv_node_device_get_parent(rv_conn *conn, const char *name, char **parent)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!name || !parent)
        return no_name(__func__, name ? "result pointer" : "device name");
    rv_node_device_get_parent_args args = { .name = (char *)name };
    rv_node_device_get_parent_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_device_get_parent(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    *parent = ret.parentName ? take(ret.parentName) : NULL;
    xdr_free((xdrproc_t)xdr_rv_node_device_get_parent_ret, (char *)&ret);
    return 0;
}

int rv_node_device_create_xml(rv_conn *conn, const char *xml, unsigned int flags, char **name)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!xml || !name)
        return no_name(__func__, xml ? "result pointer" : "XML");
    rv_node_device_create_xml_args args = { .xml_desc = (char *)xml, .flags = flags };
    rv_node_device_create_xml_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_node_device_create_xml(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    *name = take(&ret.dev.name);
    xdr_free((xdrproc_t)xdr_rv_node_device_create_xml_ret, (char *)&ret);
    return 0;
}

/* ---- host interfaces ---- */

void rv_interface_ref_clear(rv_interface_ref *iface)
{
    if (!iface)
        return;
    free(iface->name);
    free(iface->mac);
    iface->name = iface->mac = NULL;
}

void rv_interface_refs_free(rv_interface_ref *ifaces, int n)
{
    for (int i = 0; ifaces && i < n; i++)
        rv_interface_ref_clear(&ifaces[i]);
    free(ifaces);
}

static void iface_from_wire(rv_interface_ref *out, rv_nonnull_interface *w)
{
    out->name = take(&w->name);
    out->mac = take(&w->mac);
}

static rv_nonnull_interface iface_to_wire(const rv_interface_ref *iface)
{
    rv_nonnull_interface w = { .name = iface->name, .mac = iface->mac };
    return w;
}

int rv_connect_list_all_interfaces(rv_conn *conn, rv_interface_ref **ifaces, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!ifaces)
        return no_name(__func__, "result pointer");
    *ifaces = NULL;
    rv_connect_list_all_interfaces_args args = { .need_results = 1, .flags = flags };
    rv_connect_list_all_interfaces_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_interfaces(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.ifaces.ifaces_len;            /* at most RV_INTERFACE_LIST_MAX */
    rv_interface_ref *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++)
        iface_from_wire(&list[i], &ret.ifaces.ifaces_val[i]);
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_interfaces_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *ifaces = list;
    return (int)n;
}

int rv_interface_lookup_by_name(rv_conn *conn, const char *name, rv_interface_ref *iface)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!name || !iface)
        return no_name(__func__, name ? "result pointer" : "interface name");
    rv_interface_lookup_by_name_args args = { .name = (char *)name };
    rv_interface_lookup_by_name_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_interface_lookup_by_name(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    iface_from_wire(iface, &ret.iface);
    xdr_free((xdrproc_t)xdr_rv_interface_lookup_by_name_ret, (char *)&ret);
    return 0;
}

int rv_interface_lookup_by_mac_string(rv_conn *conn, const char *mac, rv_interface_ref *iface)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!mac || !iface)
        return no_name(__func__, mac ? "result pointer" : "MAC address");
    rv_interface_lookup_by_mac_string_args args = { .mac = (char *)mac };
    rv_interface_lookup_by_mac_string_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_interface_lookup_by_mac_string(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    iface_from_wire(iface, &ret.iface);
    xdr_free((xdrproc_t)xdr_rv_interface_lookup_by_mac_string_ret, (char *)&ret);
    return 0;
}

int rv_interface_is_active(rv_conn *conn, const rv_interface_ref *iface)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!iface || !iface->name || !iface->mac)
        return no_name(__func__, "interface");
    rv_interface_is_active_args args = { .iface = iface_to_wire(iface) };
    rv_interface_is_active_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_interface_is_active(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    return ret.active != 0;
}

char *rv_interface_get_xml_desc(rv_conn *conn, const rv_interface_ref *iface, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!iface || !iface->name || !iface->mac) {
        no_name(__func__, "interface");
        return NULL;
    }
    rv_interface_get_xml_desc_args args = { .iface = iface_to_wire(iface), .flags = flags };
    rv_interface_get_xml_desc_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_interface_get_xml_desc(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    return ret.xml;
}

/* ---- secrets ---- */

void rv_secret_refs_free(rv_secret_ref *secrets, int n)
{
    for (int i = 0; secrets && i < n; i++)
        free(secrets[i].usage_id);
    free(secrets);
}

static void secret_from_wire(rv_secret_ref *out, rv_nonnull_secret *w)
{
    rv_uuid_format((const unsigned char *)w->uuid, out->uuid);
    out->usage_type = w->usageType;
    out->usage_id = take(&w->usageID);
}

/* The wire's name of a secret; -1 (the last error set) when it has none. */
static int secret_to_wire(const char *func, const rv_secret_ref *secret, rv_nonnull_secret *w)
{
    if (!secret || !secret->usage_id)
        return no_name(func, "secret");
    if (parse_uuid(func, secret->uuid, (unsigned char *)w->uuid) < 0)
        return -1;
    w->usageType = secret->usage_type;
    w->usageID = secret->usage_id;
    return 0;
}

int rv_connect_list_all_secrets(rv_conn *conn, rv_secret_ref **secrets, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!secrets)
        return no_name(__func__, "result pointer");
    *secrets = NULL;
    rv_connect_list_all_secrets_args args = { .need_results = 1, .flags = flags };
    rv_connect_list_all_secrets_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_secrets(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.secrets.secrets_len;          /* at most RV_SECRET_LIST_MAX */
    rv_secret_ref *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++)
        secret_from_wire(&list[i], &ret.secrets.secrets_val[i]);
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_secrets_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *secrets = list;
    return (int)n;
}

int rv_secret_lookup_by_uuid_string(rv_conn *conn, const char *uuid, rv_secret_ref *secret)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_secret_lookup_by_uuid_args args;
    if (parse_uuid(__func__, uuid, (unsigned char *)args.uuid) < 0)
        return -1;
    if (!secret)
        return no_name(__func__, "result pointer");
    rv_secret_lookup_by_uuid_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_secret_lookup_by_uuid(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    secret_from_wire(secret, &ret.secret);
    xdr_free((xdrproc_t)xdr_rv_secret_lookup_by_uuid_ret, (char *)&ret);
    return 0;
}

char *rv_secret_get_xml_desc(rv_conn *conn, const rv_secret_ref *secret, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    rv_secret_get_xml_desc_args args = { .flags = flags };
    if (secret_to_wire(__func__, secret, &args.secret) < 0)
        return NULL;
    rv_secret_get_xml_desc_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_secret_get_xml_desc(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    return ret.xml;
}

int rv_secret_define_xml(rv_conn *conn, const char *xml, unsigned int flags, rv_secret_ref *secret)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!xml || !secret)
        return no_name(__func__, xml ? "result pointer" : "XML");
    rv_secret_define_xml_args args = { .xml = (char *)xml, .flags = flags };
    rv_secret_define_xml_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_secret_define_xml(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    secret_from_wire(secret, &ret.secret);
    xdr_free((xdrproc_t)xdr_rv_secret_define_xml_ret, (char *)&ret);
    return 0;
}

int rv_secret_set_value(rv_conn *conn, const rv_secret_ref *secret, const unsigned char *value,
                        size_t size, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_secret_set_value_args args = { .flags = flags };
    if (secret_to_wire(__func__, secret, &args.secret) < 0)
        return -1;
    if (!value && size > 0)
        return no_name(__func__, "value");
    /* The wire's bound: refused here rather than by the encoder. */
    if (size > RV_SECRET_VALUE_MAX)
        return rvc_report(RV_FROM_NONE, RV_ERR_INVALID_ARG, "%s: a value of %zu bytes is over %d",
                          __func__, size, RV_SECRET_VALUE_MAX);
    args.value.value_len = (u_int)size;
    args.value.value_val = (char *)value;
    rv_err err = { 0 };
    if (rvc_call_secret_set_value(rpc, &args, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

int rv_secret_get_value(rv_conn *conn, const rv_secret_ref *secret, unsigned char **value,
                        size_t *size, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_secret_get_value_args args = { .flags = flags };
    if (secret_to_wire(__func__, secret, &args.secret) < 0)
        return -1;
    if (!value || !size)
        return no_name(__func__, "result pointer");
    rv_secret_get_value_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_secret_get_value(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    /* One spare byte, so an empty value is still a pointer to free. */
    unsigned char *copy = malloc((size_t)ret.value.value_len + 1);
    if (copy)
        memcpy(copy, ret.value.value_val, ret.value.value_len);
    *size = ret.value.value_len;
    xdr_free((xdrproc_t)xdr_rv_secret_get_value_ret, (char *)&ret);
    if (!copy) {
        rvc_no_memory_null();
        return -1;
    }
    *value = copy;
    return 0;
}

int rv_secret_undefine(rv_conn *conn, const rv_secret_ref *secret)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_secret_undefine_args args;
    if (secret_to_wire(__func__, secret, &args.secret) < 0)
        return -1;
    rv_err err = { 0 };
    if (rvc_call_secret_undefine(rpc, &args, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

/* ---- network filters and their bindings ---- */

void rv_nwfilter_refs_free(rv_nwfilter_ref *filters, int n)
{
    for (int i = 0; filters && i < n; i++)
        free(filters[i].name);
    free(filters);
}

static void nwfilter_from_wire(rv_nwfilter_ref *out, rv_nonnull_nwfilter *w)
{
    out->name = take(&w->name);
    rv_uuid_format((const unsigned char *)w->uuid, out->uuid);
}

int rv_connect_list_all_nwfilters(rv_conn *conn, rv_nwfilter_ref **filters, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!filters)
        return no_name(__func__, "result pointer");
    *filters = NULL;
    rv_connect_list_all_nwfilters_args args = { .need_results = 1, .flags = flags };
    rv_connect_list_all_nwfilters_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_nwfilters(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.filters.filters_len;          /* at most RV_NWFILTER_LIST_MAX */
    rv_nwfilter_ref *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++)
        nwfilter_from_wire(&list[i], &ret.filters.filters_val[i]);
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_nwfilters_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *filters = list;
    return (int)n;
}

int rv_nwfilter_lookup_by_name(rv_conn *conn, const char *name, rv_nwfilter_ref *filter)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!name || !filter)
        return no_name(__func__, name ? "result pointer" : "filter name");
    rv_nwfilter_lookup_by_name_args args = { .name = (char *)name };
    rv_nwfilter_lookup_by_name_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_nwfilter_lookup_by_name(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    nwfilter_from_wire(filter, &ret.nwfilter);
    xdr_free((xdrproc_t)xdr_rv_nwfilter_lookup_by_name_ret, (char *)&ret);
    return 0;
}

int rv_nwfilter_lookup_by_uuid_string(rv_conn *conn, const char *uuid, rv_nwfilter_ref *filter)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    rv_nwfilter_lookup_by_uuid_args args;
    if (parse_uuid(__func__, uuid, (unsigned char *)args.uuid) < 0)
        return -1;
    if (!filter)
        return no_name(__func__, "result pointer");
    rv_nwfilter_lookup_by_uuid_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_nwfilter_lookup_by_uuid(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    nwfilter_from_wire(filter, &ret.nwfilter);
    xdr_free((xdrproc_t)xdr_rv_nwfilter_lookup_by_uuid_ret, (char *)&ret);
    return 0;
}

char *rv_nwfilter_get_xml_desc(rv_conn *conn, const rv_nwfilter_ref *filter, unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return NULL;
    if (!filter || !filter->name) {
        no_name(__func__, "filter");
        return NULL;
    }
    rv_nwfilter_get_xml_desc_args args = { .flags = flags };
    args.nwfilter.name = filter->name;
    if (parse_uuid(__func__, filter->uuid, (unsigned char *)args.nwfilter.uuid) < 0)
        return NULL;
    rv_nwfilter_get_xml_desc_ret ret = { 0 };
    rv_err err = { 0 };
    if (rvc_call_nwfilter_get_xml_desc(rpc, &args, &ret, &err) < 0)
        return rvc_fail_null(&err);
    return ret.xml;
}

/* flags 0: NWFILTER_DEFINE_XML, which every libvirt knows; others go
 * through NWFILTER_DEFINE_XML_FLAGS, as libvirt's own client does. */
int rv_nwfilter_define_xml(rv_conn *conn, const char *xml, unsigned int flags, rv_nwfilter_ref *filter)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!xml || !filter)
        return no_name(__func__, xml ? "result pointer" : "XML");
    rv_err err = { 0 };
    if (flags == 0) {
        rv_nwfilter_define_xml_args args = { .xml = (char *)xml };
        rv_nwfilter_define_xml_ret ret;
        memset(&ret, 0, sizeof(ret));
        if (rvc_call_nwfilter_define_xml(rpc, &args, &ret, &err) < 0)
            return rvc_fail(&err);
        nwfilter_from_wire(filter, &ret.nwfilter);
        xdr_free((xdrproc_t)xdr_rv_nwfilter_define_xml_ret, (char *)&ret);
    } else {
        rv_nwfilter_define_xml_flags_args args = { .xml = (char *)xml, .flags = flags };
        rv_nwfilter_define_xml_flags_ret ret;
        memset(&ret, 0, sizeof(ret));
        if (rvc_call_nwfilter_define_xml_flags(rpc, &args, &ret, &err) < 0)
            return rvc_fail(&err);
        nwfilter_from_wire(filter, &ret.nwfilter);
        xdr_free((xdrproc_t)xdr_rv_nwfilter_define_xml_flags_ret, (char *)&ret);
    }
    return 0;
}

int rv_nwfilter_undefine(rv_conn *conn, const rv_nwfilter_ref *filter)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!filter || !filter->name)
        return no_name(__func__, "filter");
    rv_nwfilter_undefine_args args;
    args.nwfilter.name = filter->name;
    if (parse_uuid(__func__, filter->uuid, (unsigned char *)args.nwfilter.uuid) < 0)
        return -1;
    rv_err err = { 0 };
    if (rvc_call_nwfilter_undefine(rpc, &args, &err) < 0)
        return rvc_fail(&err);
    return 0;
}

void rv_nwfilter_binding_refs_free(rv_nwfilter_binding_ref *bindings, int n)
{
    for (int i = 0; bindings && i < n; i++) {
        free(bindings[i].portdev);
        free(bindings[i].filtername);
    }
    free(bindings);
}

int rv_connect_list_all_nwfilter_bindings(rv_conn *conn, rv_nwfilter_binding_ref **bindings,
                                          unsigned int flags)
{
    struct rvc_conn *rpc = rvc_handle_rpc(conn, __func__);
    if (!rpc)
        return -1;
    if (!bindings)
        return no_name(__func__, "result pointer");
    *bindings = NULL;
    rv_connect_list_all_nwfilter_bindings_args args = { .need_results = 1, .flags = flags };
    rv_connect_list_all_nwfilter_bindings_ret ret;
    memset(&ret, 0, sizeof(ret));
    rv_err err = { 0 };
    if (rvc_call_connect_list_all_nwfilter_bindings(rpc, &args, &ret, &err) < 0)
        return rvc_fail(&err);
    u_int n = ret.bindings.bindings_len;        /* at most RV_NWFILTER_BINDING_LIST_MAX */
    rv_nwfilter_binding_ref *list = calloc(n + 1, sizeof(*list));
    for (u_int i = 0; list && i < n; i++) {
        list[i].portdev = take(&ret.bindings.bindings_val[i].portdev);
        list[i].filtername = take(&ret.bindings.bindings_val[i].filtername);
    }
    xdr_free((xdrproc_t)xdr_rv_connect_list_all_nwfilter_bindings_ret, (char *)&ret);
    if (!list) {
        rvc_no_memory_null();
        return -1;
    }
    *bindings = list;
    return (int)n;
}
