/* The test driver's virtual networks: libvirt's test:///default starts
 * with one, "default", active.  The slots take wire types directly (a
 * network is only a name, a uuid and its XML); test_ops.c lists them in
 * the driver's table. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_NETWORK_H
#define RV_SERVER_DRIVERS_TEST_TEST_NETWORK_H

#include "server/drivers/driver.h"

int test_net_num_of_networks(rv_driver_conn *c, rv_connect_num_of_networks_ret *ret,
                             rv_err *err);
int test_net_num_of_defined_networks(rv_driver_conn *c,
                                     rv_connect_num_of_defined_networks_ret *ret, rv_err *err);
int test_net_list_networks(rv_driver_conn *c, const rv_connect_list_networks_args *args,
                           rv_connect_list_networks_ret *ret, rv_err *err);
int test_net_list_defined_networks(rv_driver_conn *c,
                                   const rv_connect_list_defined_networks_args *args,
                                   rv_connect_list_defined_networks_ret *ret, rv_err *err);
int test_net_list_all_networks(rv_driver_conn *c, const rv_connect_list_all_networks_args *args,
                               rv_connect_list_all_networks_ret *ret, rv_err *err);
int test_net_lookup_by_name(rv_driver_conn *c, const rv_network_lookup_by_name_args *args,
                            rv_network_lookup_by_name_ret *ret, rv_err *err);
int test_net_lookup_by_uuid(rv_driver_conn *c, const rv_network_lookup_by_uuid_args *args,
                            rv_network_lookup_by_uuid_ret *ret, rv_err *err);
int test_net_define_xml(rv_driver_conn *c, const rv_network_define_xml_args *args,
                        rv_network_define_xml_ret *ret, rv_err *err);
int test_net_create_xml(rv_driver_conn *c, const rv_network_create_xml_args *args,
                        rv_network_create_xml_ret *ret, rv_err *err);
int test_net_create(rv_driver_conn *c, const rv_network_create_args *args, rv_err *err);
int test_net_destroy(rv_driver_conn *c, const rv_network_destroy_args *args, rv_err *err);
int test_net_undefine(rv_driver_conn *c, const rv_network_undefine_args *args, rv_err *err);
int test_net_get_xml_desc(rv_driver_conn *c, const rv_network_get_xml_desc_args *args,
                          rv_network_get_xml_desc_ret *ret, rv_err *err);
int test_net_get_bridge_name(rv_driver_conn *c, const rv_network_get_bridge_name_args *args,
                             rv_network_get_bridge_name_ret *ret, rv_err *err);
int test_net_get_autostart(rv_driver_conn *c, const rv_network_get_autostart_args *args,
                           rv_network_get_autostart_ret *ret, rv_err *err);
int test_net_set_autostart(rv_driver_conn *c, const rv_network_set_autostart_args *args,
                           rv_err *err);
int test_net_is_active(rv_driver_conn *c, const rv_network_is_active_args *args,
                       rv_network_is_active_ret *ret, rv_err *err);
int test_net_is_persistent(rv_driver_conn *c, const rv_network_is_persistent_args *args,
                           rv_network_is_persistent_ret *ret, rv_err *err);

/* Forget every network (daemon exit); the next call starts afresh. */
void test_net_cleanup(void);

#endif
