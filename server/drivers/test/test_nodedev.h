/* The test driver's host devices: libvirt's test:///default has four
 * (the host "computer" and three SCSI hosts on FC adapters), answered as
 * libvirt 9.0's test driver answers; create makes a vHBA (scsi_host12)
 * under an FC host that can, destroy takes an FC host away, each with its
 * lifecycle event.  Define/undefine, start, active, persistent and
 * autostart are left unset (NO_SUPPORT, as libvirtd's test driver
 * answers). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_NODEDEV_H
#define RV_SERVER_DRIVERS_TEST_TEST_NODEDEV_H

#include "server/drivers/driver.h"

/* The longest device XML create reads. */
#define RV_NODEDEV_XML_MAX (1 << 20)
/* virNodeDeviceCreateXMLFlags VALIDATE. */
#define RV_NODEDEV_CREATE_XML_VALIDATE 1u

int test_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                             rv_node_num_of_devices_ret *ret, rv_err *err);
int test_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                           rv_node_list_devices_ret *ret, rv_err *err);
int test_connect_list_all_node_devices(rv_driver_conn *c,
                                       const rv_connect_list_all_node_devices_args *args,
                                       rv_connect_list_all_node_devices_ret *ret, rv_err *err);
int test_node_device_lookup_by_name(rv_driver_conn *c,
                                    const rv_node_device_lookup_by_name_args *args,
                                    rv_node_device_lookup_by_name_ret *ret, rv_err *err);
int test_node_device_get_xml_desc(rv_driver_conn *c,
                                  const rv_node_device_get_xml_desc_args *args,
                                  rv_node_device_get_xml_desc_ret *ret, rv_err *err);
int test_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                rv_node_device_get_parent_ret *ret, rv_err *err);
int test_node_device_num_of_caps(rv_driver_conn *c,
                                 const rv_node_device_num_of_caps_args *args,
                                 rv_node_device_num_of_caps_ret *ret, rv_err *err);
int test_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                               rv_node_device_list_caps_ret *ret, rv_err *err);

int test_node_device_create_xml(rv_driver_conn *c, const rv_node_device_create_xml_args *args,
                                rv_node_device_create_xml_ret *ret, rv_err *err);
int test_node_device_destroy(rv_driver_conn *c, const rv_node_device_destroy_args *args,
                             rv_err *err);
/* Forget the created and destroyed devices (the driver's cleanup). */
void test_nodedev_cleanup(void);

#endif
