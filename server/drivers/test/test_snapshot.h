/* The test driver's domain snapshots: a tree per domain, in memory, with
 * the behaviour of libvirt 9.0's test driver (its flags, errors, states
 * and lifecycle events; see test_snapshot.c). */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_SNAPSHOT_H
#define RV_SERVER_DRIVERS_TEST_TEST_SNAPSHOT_H

#include "server/drivers/test/test_driver.h"

void test_snaps_free(test_snaps *snaps);
size_t test_snaps_count(const test_snaps *snaps);

/* The native call of test_driver.h's snapshot_num. */
int test_snapshot_num(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                      rv_err *err);

int test_domain_snapshot_create_xml(rv_driver_conn *c,
                                    const rv_domain_snapshot_create_xml_args *args,
                                    rv_domain_snapshot_create_xml_ret *ret, rv_err *err);
int test_domain_snapshot_get_xml_desc(rv_driver_conn *c,
                                      const rv_domain_snapshot_get_xml_desc_args *args,
                                      rv_domain_snapshot_get_xml_desc_ret *ret, rv_err *err);
int test_domain_snapshot_list_names(rv_driver_conn *c,
                                    const rv_domain_snapshot_list_names_args *args,
                                    rv_domain_snapshot_list_names_ret *ret, rv_err *err);
int test_domain_snapshot_lookup_by_name(rv_driver_conn *c,
                                        const rv_domain_snapshot_lookup_by_name_args *args,
                                        rv_domain_snapshot_lookup_by_name_ret *ret, rv_err *err);
int test_domain_has_current_snapshot(rv_driver_conn *c,
                                     const rv_domain_has_current_snapshot_args *args,
                                     rv_domain_has_current_snapshot_ret *ret, rv_err *err);
int test_domain_snapshot_current(rv_driver_conn *c, const rv_domain_snapshot_current_args *args,
                                 rv_domain_snapshot_current_ret *ret, rv_err *err);
int test_domain_revert_to_snapshot(rv_driver_conn *c,
                                   const rv_domain_revert_to_snapshot_args *args, rv_err *err);
int test_domain_snapshot_delete(rv_driver_conn *c, const rv_domain_snapshot_delete_args *args,
                                rv_err *err);
int test_domain_snapshot_get_parent(rv_driver_conn *c,
                                    const rv_domain_snapshot_get_parent_args *args,
                                    rv_domain_snapshot_get_parent_ret *ret, rv_err *err);
int test_domain_snapshot_num_children(rv_driver_conn *c,
                                      const rv_domain_snapshot_num_children_args *args,
                                      rv_domain_snapshot_num_children_ret *ret, rv_err *err);
int test_domain_snapshot_list_children_names(
    rv_driver_conn *c, const rv_domain_snapshot_list_children_names_args *args,
    rv_domain_snapshot_list_children_names_ret *ret, rv_err *err);
int test_domain_snapshot_is_current(rv_driver_conn *c,
                                    const rv_domain_snapshot_is_current_args *args,
                                    rv_domain_snapshot_is_current_ret *ret, rv_err *err);
int test_domain_snapshot_has_metadata(rv_driver_conn *c,
                                      const rv_domain_snapshot_has_metadata_args *args,
                                      rv_domain_snapshot_has_metadata_ret *ret, rv_err *err);
int test_domain_list_all_snapshots(rv_driver_conn *c,
                                   const rv_domain_list_all_snapshots_args *args,
                                   rv_domain_list_all_snapshots_ret *ret, rv_err *err);
int test_domain_snapshot_list_all_children(
    rv_driver_conn *c, const rv_domain_snapshot_list_all_children_args *args,
    rv_domain_snapshot_list_all_children_ret *ret, rv_err *err);

#endif
