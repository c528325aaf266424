/* The QEMU driver's secrets (qemu_secret.c: persistent ones in files,
 * ephemeral ones in memory, with their events) and network filters
 * (qemu_nwfilter.c: stored, never applied), answered as libvirtd's secret
 * and nwfilter drivers answer. */
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

int rv_qemu_secret_define_xml(rv_driver_conn *c, const rv_secret_define_xml_args *args,
                              rv_secret_define_xml_ret *ret, rv_err *err);
int rv_qemu_secret_set_value(rv_driver_conn *c, const rv_secret_set_value_args *args,
                             rv_err *err);
int rv_qemu_secret_get_value(rv_driver_conn *c, const rv_secret_get_value_args *args,
                             rv_secret_get_value_ret *ret, rv_err *err);
int rv_qemu_secret_undefine(rv_driver_conn *c, const rv_secret_undefine_args *args, rv_err *err);
/* Load the secrets saved in config_dir/secrets; forget them all. */
void rv_qemu_secret_init(void);
void rv_qemu_secret_cleanup(void);

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

int rv_qemu_nwfilter_define_xml(rv_driver_conn *c, const rv_nwfilter_define_xml_args *args,
                                rv_nwfilter_define_xml_ret *ret, rv_err *err);
int rv_qemu_nwfilter_define_xml_flags(rv_driver_conn *c,
                                      const rv_nwfilter_define_xml_flags_args *args,
                                      rv_nwfilter_define_xml_flags_ret *ret, rv_err *err);
int rv_qemu_nwfilter_undefine(rv_driver_conn *c, const rv_nwfilter_undefine_args *args,
                              rv_err *err);
int rv_qemu_nwfilter_binding_lookup_by_port_dev(
    rv_driver_conn *c, const rv_nwfilter_binding_lookup_by_port_dev_args *args,
    rv_nwfilter_binding_lookup_by_port_dev_ret *ret, rv_err *err);
int rv_qemu_nwfilter_binding_get_xml_desc(rv_driver_conn *c,
                                          const rv_nwfilter_binding_get_xml_desc_args *args,
                                          rv_nwfilter_binding_get_xml_desc_ret *ret, rv_err *err);
/* Load the filters saved in config_dir/nwfilter; forget them all. */
void rv_qemu_nwfilter_init(void);
void rv_qemu_nwfilter_cleanup(void);

#endif
