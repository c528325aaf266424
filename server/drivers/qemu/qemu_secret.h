/* The QEMU driver's secrets and network filters (qemu_secret.c): none can
 * be defined yet, so lists are empty and lookups answer "not found" as
 * libvirtd's secret and nwfilter drivers do when they hold nothing. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_SECRET_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_SECRET_H

#include "server/drivers/driver.h"

int rv_qemu_connect_num_of_secrets(rv_driver_conn *c, rv_connect_num_of_secrets_ret *ret,
                                   rv_err *err);
int rv_qemu_connect_list_secrets(rv_driver_conn *c, const rv_connect_list_secrets_args *args,
                                 rv_connect_list_secrets_ret *ret, rv_err *err);
int rv_qemu_connect_list_all_secrets(rv_driver_conn *c,
                                     const rv_connect_list_all_secrets_args *args,
                                     rv_connect_list_all_secrets_ret *ret, rv_err *err);
int rv_qemu_secret_lookup_by_uuid(rv_driver_conn *c, const rv_secret_lookup_by_uuid_args *args,
                                  rv_secret_lookup_by_uuid_ret *ret, rv_err *err);
int rv_qemu_secret_lookup_by_usage(rv_driver_conn *c, const rv_secret_lookup_by_usage_args *args,
                                   rv_secret_lookup_by_usage_ret *ret, rv_err *err);
int rv_qemu_secret_get_xml_desc(rv_driver_conn *c, const rv_secret_get_xml_desc_args *args,
                                rv_secret_get_xml_desc_ret *ret, rv_err *err);

int rv_qemu_connect_num_of_nwfilters(rv_driver_conn *c, rv_connect_num_of_nwfilters_ret *ret,
                                     rv_err *err);
int rv_qemu_connect_list_nwfilters(rv_driver_conn *c, const rv_connect_list_nwfilters_args *args,
                                   rv_connect_list_nwfilters_ret *ret, rv_err *err);
int rv_qemu_connect_list_all_nwfilters(rv_driver_conn *c,
                                       const rv_connect_list_all_nwfilters_args *args,
                                       rv_connect_list_all_nwfilters_ret *ret, rv_err *err);
int rv_qemu_nwfilter_lookup_by_name(rv_driver_conn *c, const rv_nwfilter_lookup_by_name_args *args,
                                    rv_nwfilter_lookup_by_name_ret *ret, rv_err *err);
int rv_qemu_nwfilter_lookup_by_uuid(rv_driver_conn *c, const rv_nwfilter_lookup_by_uuid_args *args,
                                    rv_nwfilter_lookup_by_uuid_ret *ret, rv_err *err);
int rv_qemu_nwfilter_get_xml_desc(rv_driver_conn *c, const rv_nwfilter_get_xml_desc_args *args,
                                  rv_nwfilter_get_xml_desc_ret *ret, rv_err *err);
int rv_qemu_connect_list_all_nwfilter_bindings(
    rv_driver_conn *c, const rv_connect_list_all_nwfilter_bindings_args *args,
    rv_connect_list_all_nwfilter_bindings_ret *ret, rv_err *err);

#endif
