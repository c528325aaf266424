/* The test driver's statistics, tuning and host-interface slots
 * (test_stats.c), wire-typed; test_ops.c lists them in the driver's table. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_STATS_H
#define RV_SERVER_DRIVERS_TEST_TEST_STATS_H

#include "server/drivers/driver.h"
#include "server/drivers/test/test_domain_xml.h"

int test_stats_domain_get_max_memory(rv_driver_conn *c,
                                     const rv_domain_get_max_memory_args *args,
                                     rv_domain_get_max_memory_ret *ret, rv_err *err);
int test_stats_connect_get_max_vcpus(rv_driver_conn *c,
                                     const rv_connect_get_max_vcpus_args *args,
                                     rv_connect_get_max_vcpus_ret *ret, rv_err *err);
int test_stats_connect_get_sysinfo(rv_driver_conn *c, const rv_connect_get_sysinfo_args *args,
                                   rv_connect_get_sysinfo_ret *ret, rv_err *err);
int test_stats_node_get_cells_free_memory(rv_driver_conn *c,
                                          const rv_node_get_cells_free_memory_args *args,
                                          rv_node_get_cells_free_memory_ret *ret, rv_err *err);
int test_stats_node_get_free_memory(rv_driver_conn *c, rv_node_get_free_memory_ret *ret,
                                    rv_err *err);
int test_stats_node_get_cpu_stats(rv_driver_conn *c, const rv_node_get_cpu_stats_args *args,
                                  rv_node_get_cpu_stats_ret *ret, rv_err *err);
int test_stats_node_get_cpu_map(rv_driver_conn *c, const rv_node_get_cpu_map_args *args,
                                rv_node_get_cpu_map_ret *ret, rv_err *err);
int test_stats_connect_get_cpu_model_names(rv_driver_conn *c,
                                           const rv_connect_get_cpu_model_names_args *args,
                                           rv_connect_get_cpu_model_names_ret *ret,
                                           rv_err *err);
int test_stats_domain_memory_stats(rv_driver_conn *c, const rv_domain_memory_stats_args *args,
                                   rv_domain_memory_stats_ret *ret, rv_err *err);
int test_stats_domain_block_stats(rv_driver_conn *c, const rv_domain_block_stats_args *args,
                                  rv_domain_block_stats_ret *ret, rv_err *err);
int test_stats_domain_interface_stats(rv_driver_conn *c,
                                      const rv_domain_interface_stats_args *args,
                                      rv_domain_interface_stats_ret *ret, rv_err *err);
int test_stats_domain_get_block_info(rv_driver_conn *c,
                                     const rv_domain_get_block_info_args *args,
                                     rv_domain_get_block_info_ret *ret, rv_err *err);
int test_stats_domain_get_vcpus(rv_driver_conn *c, const rv_domain_get_vcpus_args *args,
                                rv_domain_get_vcpus_ret *ret, rv_err *err);
int test_stats_domain_get_vcpus_flags(rv_driver_conn *c,
                                      const rv_domain_get_vcpus_flags_args *args,
                                      rv_domain_get_vcpus_flags_ret *ret, rv_err *err);
int test_stats_domain_get_vcpu_pin_info(rv_driver_conn *c,
                                        const rv_domain_get_vcpu_pin_info_args *args,
                                        rv_domain_get_vcpu_pin_info_ret *ret, rv_err *err);
int test_stats_domain_get_emulator_pin_info(rv_driver_conn *c,
                                            const rv_domain_get_emulator_pin_info_args *args,
                                            rv_domain_get_emulator_pin_info_ret *ret,
                                            rv_err *err);
int test_stats_domain_get_iothread_info(rv_driver_conn *c,
                                        const rv_domain_get_iothread_info_args *args,
                                        rv_domain_get_iothread_info_ret *ret, rv_err *err);
int test_stats_domain_get_scheduler_type(rv_driver_conn *c,
                                         const rv_domain_get_scheduler_type_args *args,
                                         rv_domain_get_scheduler_type_ret *ret, rv_err *err);
int test_stats_domain_get_scheduler_parameters(rv_driver_conn *c,
                                               const rv_domain_get_scheduler_parameters_args *args,
                                               rv_domain_get_scheduler_parameters_ret *ret,
                                               rv_err *err);
int test_stats_domain_get_memory_parameters(rv_driver_conn *c,
                                            const rv_domain_get_memory_parameters_args *args,
                                            rv_domain_get_memory_parameters_ret *ret,
                                            rv_err *err);
int test_stats_domain_get_blkio_parameters(rv_driver_conn *c,
                                           const rv_domain_get_blkio_parameters_args *args,
                                           rv_domain_get_blkio_parameters_ret *ret,
                                           rv_err *err);
int test_stats_domain_get_numa_parameters(rv_driver_conn *c,
                                          const rv_domain_get_numa_parameters_args *args,
                                          rv_domain_get_numa_parameters_ret *ret, rv_err *err);
int test_stats_domain_get_hostname(rv_driver_conn *c, const rv_domain_get_hostname_args *args,
                                   rv_domain_get_hostname_ret *ret, rv_err *err);
int test_stats_domain_get_time(rv_driver_conn *c, const rv_domain_get_time_args *args,
                               rv_domain_get_time_ret *ret, rv_err *err);
int test_stats_domain_get_control_info(rv_driver_conn *c,
                                       const rv_domain_get_control_info_args *args,
                                       rv_domain_get_control_info_ret *ret, rv_err *err);
int test_stats_domain_get_fsinfo(rv_driver_conn *c, const rv_domain_get_fsinfo_args *args,
                                 rv_domain_get_fsinfo_ret *ret, rv_err *err);
int test_stats_domain_interface_addresses(rv_driver_conn *c,
                                          const rv_domain_interface_addresses_args *args,
                                          rv_domain_interface_addresses_ret *ret, rv_err *err);
int test_stats_connect_list_all_interfaces(rv_driver_conn *c,
                                           const rv_connect_list_all_interfaces_args *args,
                                           rv_connect_list_all_interfaces_ret *ret,
                                           rv_err *err);
int test_stats_interface_is_active(rv_driver_conn *c, const rv_interface_is_active_args *args,
                                   rv_interface_is_active_ret *ret, rv_err *err);
int test_stats_interface_lookup_by_name(rv_driver_conn *c,
                                        const rv_interface_lookup_by_name_args *args,
                                        rv_interface_lookup_by_name_ret *ret, rv_err *err);
int test_stats_interface_lookup_by_mac_string(rv_driver_conn *c,
                                              const rv_interface_lookup_by_mac_string_args *args,
                                              rv_interface_lookup_by_mac_string_ret *ret,
                                              rv_err *err);
int test_stats_interface_get_xml_desc(rv_driver_conn *c, const rv_interface_get_xml_desc_args *args,
                                      rv_interface_get_xml_desc_ret *ret, rv_err *err);
int test_stats_domain_get_max_vcpus(rv_driver_conn *c, const rv_domain_get_max_vcpus_args *args,
                                    rv_domain_get_max_vcpus_ret *ret, rv_err *err);
int test_stats_domain_set_memory_stats_period(rv_driver_conn *c,
                                              const rv_domain_set_memory_stats_period_args *args,
                                              rv_err *err);
int test_stats_domain_get_scheduler_parameters_flags(
    rv_driver_conn *c, const rv_domain_get_scheduler_parameters_flags_args *args,
    rv_domain_get_scheduler_parameters_flags_ret *ret, rv_err *err);
int test_stats_domain_get_interface_parameters(
    rv_driver_conn *c, const rv_domain_get_interface_parameters_args *args,
    rv_domain_get_interface_parameters_ret *ret, rv_err *err);
int test_stats_domain_get_block_io_tune(rv_driver_conn *c,
                                        const rv_domain_get_block_io_tune_args *args,
                                        rv_domain_get_block_io_tune_ret *ret, rv_err *err);
int test_stats_domain_get_perf_events(rv_driver_conn *c,
                                      const rv_domain_get_perf_events_args *args,
                                      rv_domain_get_perf_events_ret *ret, rv_err *err);

/* For the setters (test_tune.c): the index of the interface a name or MAC
 * address names (-1 with libvirt's error), the target of the disk a
 * target or source path names (NULL when none). */
int test_stats_iface_index(const rv_test_def *def, const char *device, rv_err *err);
const char *test_stats_disk_target(const rv_test_def *def, const char *path);

#endif
