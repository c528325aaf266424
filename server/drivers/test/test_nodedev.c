/* The test driver's host devices (see test_nodedev.h): a constant table
 * of libvirt's four, which destroy may take away, and at most one vHBA
 * made by create (libvirt's test driver mocks every vHBA as a copy of
 * scsi_host11 named scsi_host12, with the WWNs asked for).  The model,
 * its XML and the list calls are conf/nodedev_xml.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_nodedev.h"
#include "server/drivers/conf/nodedev_xml.h"

/* An SCSI host on an FC adapter is listed under fc_host too, and one that
 * can make vports under vports, as libvirt lists them; its own capability
 * list says only scsi_host. */
#define FC_FLAGS (RV_LIST_NODEDEV_CAP_SCSI_HOST | RV_LIST_NODEDEV_CAP_FC_HOST)
#define SCSI(name_, parent_, host_, id_, wwnn_, wwpn_, fabric_, vports_)                     \
    { .name = name_, .parent = parent_, .kind = RV_NODEDEV_SCSI_HOST,                       \
      .list_flags = FC_FLAGS | ((vports_) ? RV_LIST_NODEDEV_CAP_VPORTS : 0),               \
      .u.scsi = { host_, id_, wwnn_, wwpn_, fabric_, vports_ } }

/* libvirt's test:///default devices. */
static const rv_nodedev fixed[] = {
    { .name = "computer", .kind = RV_NODEDEV_SYSTEM, .list_flags = RV_LIST_NODEDEV_CAP_SYSTEM,
      .u.system = { "Libvirt", "Test driver", "123456", "11111111-2222-3333-4444-555555555555",
                    "Libvirt", "Test Driver", "01/22/2007" } },
    SCSI("scsi_host1", "computer", 1, 0, "2000000012341234", "1000000012341234",
         "2000000043214321", true),
    SCSI("scsi_host11", "scsi_host1", 11, 10, "2000000034563456", "1000000034563456",
         "2000000043214321", false),
    SCSI("scsi_host2", "computer", 2, 1, "2000000056785678", "1000000056785678",
         "2000000087658765", true),
};
enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]), TEMPLATE = 2 };
#define VHBA_NAME "scsi_host12"

static const char *dev_name(const void *obj)
{
    return ((const rv_nodedev *)obj)->name;
}

static const rv_nodedev *dev_of(const void *obj)
{
    return obj;
}

static const rv_obj_kind dev_kind = RV_NODEDEV_OBJ_KIND(RV_FROM_TEST, dev_name);

/* The daemon-long state: the devices there now (the fixed ones destroy
 * has not taken, and the vHBA: a copy of scsi_host11 with the WWNs create
 * was given). */
static struct {
    rv_obj_list list;           /* of rv_nodedev */
    bool ready;
    rv_nodedev vhba;           /* name NULL: none */
    char *wwnn, *wwpn;          /* its WWNs */
} devs = { .list = { .max = NFIXED + 1, .kind = &dev_kind } };

static void no_free(void *obj)
{
    (void)obj;
}

void test_nodedev_cleanup(void)
{
    rv_obj_clear(&devs.list, no_free);
    free(devs.wwnn);
    free(devs.wwpn);
    memset(&devs.vhba, 0, sizeof(devs.vhba));
    devs.wwnn = devs.wwpn = NULL;
    devs.ready = false;
}

/* The errors libvirt's node device code gives, in its own domain. */
static int fail_nodedev(rv_err *err, const char *what)
{
    rv_err_set(err, RV_FROM_NODEDEV, RV_ERR_INTERNAL_ERROR, "internal error: %s", what);
    return -1;
}

/* The list, with the fixed devices in it at first use. */
static const rv_obj_list *list(rv_err *err)
{
    for (size_t i = 0; !devs.ready && i < NFIXED; i++)
        if (rv_obj_add(&devs.list, (void *)&fixed[i], err) < 0)
            return NULL;
    devs.ready = true;
    return &devs.list;
}

/* The same, once flags are checked (as libvirt's func). */
static const rv_obj_list *list_for(unsigned int flags, unsigned int known, const char *func,
                                   rv_err *err)
{
    return test_check_flags(flags, known, func, err) < 0 ? NULL : list(err);
}

static const rv_nodedev *get(const char *name, rv_err *err)
{
    const rv_obj_list *l = list(err);
    return l ? rv_obj_get_name(l, name, err) : NULL;
}

int test_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                             rv_node_num_of_devices_ret *ret, rv_err *err)
{
    (void)c;
    const rv_obj_list *l = list_for(args->flags, 0, "testNodeNumOfDevices", err);
    if (!l)
        return -1;
    ret->num = rv_nodedev_count(l, dev_of, args->cap ? *args->cap : NULL);
    return 0;
}

int test_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                           rv_node_list_devices_ret *ret, rv_err *err)
{
    (void)c;
    const rv_obj_list *l = list_for(args->flags, 0, "testNodeListDevices", err);
    if (!l)
        return -1;
    return rv_nodedev_list_names(l, dev_of, args->cap ? *args->cap : NULL, args->maxnames,
                                 &ret->names.names_val, &ret->names.names_len, err);
}

int test_connect_list_all_node_devices(rv_driver_conn *c,
                                       const rv_connect_list_all_node_devices_args *args,
                                       rv_connect_list_all_node_devices_ret *ret, rv_err *err)
{
    (void)c;
    /* The capability bits only: libvirt 9.0's test driver refuses ACTIVE
     * and INACTIVE, which virsh nodedev-list always sends. */
    const rv_obj_list *l = list_for(args->flags, 0x3fffffu, "testConnectListAllNodeDevices", err);
    if (!l)
        return -1;
    return rv_nodedev_list_all(l, dev_of, args->flags, true, args->need_results, ret, err);
}

int test_node_device_lookup_by_name(rv_driver_conn *c,
                                    const rv_node_device_lookup_by_name_args *args,
                                    rv_node_device_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    const rv_nodedev *d = get(args->name, err);
    if (!d)
        return -1;
    if (!(ret->dev.name = strdup(d->name)))
        return test_fail_oom(err);
    return 0;
}

int test_node_device_get_xml_desc(rv_driver_conn *c,
                                  const rv_node_device_get_xml_desc_args *args,
                                  rv_node_device_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    const rv_nodedev *d;
    if (test_check_flags(args->flags, 0, "testNodeDeviceGetXMLDesc", err) < 0 ||
        !(d = get(args->name, err)))
        return -1;
    if (!(ret->xml = rv_nodedev_format(d)))
        return test_fail_oom(err);
    return 0;
}

int test_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                rv_node_device_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    const rv_nodedev *d = get(args->name, err);
    return d ? rv_nodedev_put_parent(d, RV_FROM_TEST, &ret->parentName, err) : -1;
}

int test_node_device_num_of_caps(rv_driver_conn *c,
                                 const rv_node_device_num_of_caps_args *args,
                                 rv_node_device_num_of_caps_ret *ret, rv_err *err)
{
    (void)c;
    if (!get(args->name, err))
        return -1;
    ret->num = 1;
    return 0;
}

int test_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                               rv_node_device_list_caps_ret *ret, rv_err *err)
{
    (void)c;
    const rv_nodedev *d = get(args->name, err);
    return d ? rv_nodedev_list_caps(d, RV_FROM_TEST, args->maxnames, &ret->names.names_val,
                                    &ret->names.names_len, err)
             : -1;
}

/* ---- creating and destroying vHBAs ---- */

/* The device the request names as parent (by name, by its WWNs or by its
 * fabric), or else the first that can make vHBAs; it must be able to. */
static int find_parent(const rv_obj_list *l, const rv_nodedev_req *r, rv_err *err)
{
    bool any = rv_nodedev_req_any_parent(r);
    for (size_t i = 0; i < l->n; i++) {
        const rv_nodedev *d = rv_obj_at(l, i);
        bool fc = d->kind == RV_NODEDEV_SCSI_HOST;
        bool match = any ? fc && d->u.scsi.vport_ops
                   : r->parent ? strcmp(d->name, r->parent) == 0
                   : r->parent_wwnn && r->parent_wwpn
                       ? fc && strcmp(d->u.scsi.wwnn, r->parent_wwnn) == 0 &&
                         strcmp(d->u.scsi.wwpn, r->parent_wwpn) == 0
                       : fc && strcmp(d->u.scsi.fabric_wwn, r->parent_fabric) == 0;
        if (!match)
            continue;
        if (!fc || !d->u.scsi.vport_ops) {
            rv_err_set(err, RV_FROM_NODEDEV, RV_ERR_INTERNAL_ERROR,
                       "internal error: Parent device %s is not capable of vport operations",
                       d->name);
            return -1;
        }
        return 0;
    }
    return fail_nodedev(err, any ? "Could not find any vport capable device"
                                 : "Could not find parent device for 'new device'");
}

int test_node_device_create_xml(rv_driver_conn *c, const rv_node_device_create_xml_args *args,
                                rv_node_device_create_xml_ret *ret, rv_err *err)
{
    (void)c;
    rv_nodedev_req r = { 0 };
    const rv_obj_list *l;
    int rc = -1;
    /* VALIDATE: the parser checks what it reads (no RNG schema). */
    if (test_check_flags(args->flags, RV_NODEDEV_CREATE_XML_VALIDATE, "testNodeDeviceCreateXML",
                    err) < 0 || !(l = list(err)) ||
        rv_nodedev_req_parse(args->xml_desc, RV_NODEDEV_XML_MAX, false, &r, err) < 0)
        goto out;
    if (!r.fc) {
        fail_nodedev(err, "Device is not a fibre channel HBA");
        goto out;
    }
    if (find_parent(l, &r, err) < 0)
        goto out;
    /* libvirt copies scsi_host11; without it the copy fails, unexplained. */
    if (!rv_obj_find_name(l, fixed[TEMPLATE].name)) {
        rv_err_set(err, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR,
                   "An error occurred, but the cause is unknown");
        goto out;
    }
    if (!(ret->dev.name = strdup(VHBA_NAME))) {
        test_fail_oom(err);
        goto out;
    }
    /* A second create replaces the first vHBA, as libvirt's does. */
    rv_nodedev old = devs.vhba;
    devs.vhba = fixed[TEMPLATE];
    devs.vhba.name = VHBA_NAME;
    devs.vhba.u.scsi.wwnn = r.wwnn;
    devs.vhba.u.scsi.wwpn = r.wwpn;
    if (!old.name && rv_obj_add(&devs.list, &devs.vhba, err) < 0) {
        devs.vhba = old;
        goto out;
    }
    free(devs.wwnn);
    free(devs.wwpn);
    devs.wwnn = r.wwnn;
    devs.wwpn = r.wwpn;
    r.wwnn = r.wwpn = NULL;
    rv_driver_nodedev_event(&rv_test_driver, VHBA_NAME, RV_NODEDEV_EVENT_CREATED);
    rc = 0;
out:
    rv_nodedev_req_clear(&r);
    return rc;
}

int test_node_device_destroy(rv_driver_conn *c, const rv_node_device_destroy_args *args,
                             rv_err *err)
{
    (void)c;
    const rv_nodedev *d = get(args->name, err);
    if (!d)
        return -1;
    /* libvirt's test driver reports success, doing nothing, for a device
     * that is not an FC host or whose parent is gone. */
    if (d->kind != RV_NODEDEV_SCSI_HOST || !rv_obj_find_name(&devs.list, d->parent))
        return 0;
    rv_obj_remove(&devs.list, d);
    rv_driver_nodedev_event(&rv_test_driver, args->name, RV_NODEDEV_EVENT_DELETED);
    if (d == &devs.vhba)
        devs.vhba.name = NULL;
    return 0;
}
