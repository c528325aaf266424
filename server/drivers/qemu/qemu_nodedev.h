/* The QEMU driver's node devices and host interfaces, from sysfs
 * (qemu_nodedev.c): the slots its table lists. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_NODEDEV_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_NODEDEV_H

#include "server/drivers/driver.h"

int rv_qemu_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                                rv_node_num_of_devices_ret *ret, rv_err *err);
int rv_qemu_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                              rv_node_list_devices_ret *ret, rv_err *err);
int rv_qemu_connect_list_all_node_devices(rv_driver_conn *c,
                                          const rv_connect_list_all_node_devices_args *args,
                                          rv_connect_list_all_node_devices_ret *ret, rv_err *err);
int rv_qemu_node_device_lookup_by_name(rv_driver_conn *c,
                                       const rv_node_device_lookup_by_name_args *args,
                                       rv_node_device_lookup_by_name_ret *ret, rv_err *err);
int rv_qemu_node_device_get_xml_desc(rv_driver_conn *c,
                                     const rv_node_device_get_xml_desc_args *args,
                                     rv_node_device_get_xml_desc_ret *ret, rv_err *err);
int rv_qemu_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                   rv_node_device_get_parent_ret *ret, rv_err *err);
int rv_qemu_node_device_num_of_caps(rv_driver_conn *c, const rv_node_device_num_of_caps_args *args,
                                    rv_node_device_num_of_caps_ret *ret, rv_err *err);
int rv_qemu_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                                  rv_node_device_list_caps_ret *ret, rv_err *err);

/* 0 if the host has a device called name, else -1 with libvirtd's "not
 * found" error. */
int rv_qemu_nodedev_exists(const char *name, rv_err *err);

/* Defining, creating and destroying devices (qemu_nodedev_define.c):
 * the host's devices are all active, none can be destroyed or defined;
 * no vHBA or mdev can be made here (no FC host, no mdev parent). */
int rv_qemu_node_device_is_active(rv_driver_conn *c, const rv_node_device_is_active_args *args,
                                  rv_node_device_is_active_ret *ret, rv_err *err);
int rv_qemu_node_device_is_persistent(rv_driver_conn *c,
                                      const rv_node_device_is_persistent_args *args,
                                      rv_node_device_is_persistent_ret *ret, rv_err *err);
int rv_qemu_node_device_get_autostart(rv_driver_conn *c,
                                      const rv_node_device_get_autostart_args *args,
                                      rv_node_device_get_autostart_ret *ret, rv_err *err);
int rv_qemu_node_device_set_autostart(rv_driver_conn *c,
                                      const rv_node_device_set_autostart_args *args, rv_err *err);
int rv_qemu_node_device_create(rv_driver_conn *c, const rv_node_device_create_args *args,
                               rv_err *err);
int rv_qemu_node_device_undefine(rv_driver_conn *c, const rv_node_device_undefine_args *args,
                                 rv_err *err);
int rv_qemu_node_device_destroy(rv_driver_conn *c, const rv_node_device_destroy_args *args,
                                rv_err *err);
int rv_qemu_node_device_create_xml(rv_driver_conn *c,
                                   const rv_node_device_create_xml_args *args,
                                   rv_node_device_create_xml_ret *ret, rv_err *err);
int rv_qemu_node_device_define_xml(rv_driver_conn *c,
                                   const rv_node_device_define_xml_args *args,
                                   rv_node_device_define_xml_ret *ret, rv_err *err);

/* The host's network interfaces (libvirtd's interface driver). */
int rv_qemu_connect_list_all_interfaces(rv_driver_conn *c,
                                        const rv_connect_list_all_interfaces_args *args,
                                        rv_connect_list_all_interfaces_ret *ret, rv_err *err);
int rv_qemu_interface_is_active(rv_driver_conn *c, const rv_interface_is_active_args *args,
                                rv_interface_is_active_ret *ret, rv_err *err);
int rv_qemu_interface_lookup_by_name(rv_driver_conn *c,
                                     const rv_interface_lookup_by_name_args *args,
                                     rv_interface_lookup_by_name_ret *ret, rv_err *err);
int rv_qemu_interface_lookup_by_mac_string(rv_driver_conn *c,
                                           const rv_interface_lookup_by_mac_string_args *args,
                                           rv_interface_lookup_by_mac_string_ret *ret,
                                           rv_err *err);
int rv_qemu_interface_get_xml_desc(rv_driver_conn *c, const rv_interface_get_xml_desc_args *args,
                                   rv_interface_get_xml_desc_ret *ret, rv_err *err);

#endif
