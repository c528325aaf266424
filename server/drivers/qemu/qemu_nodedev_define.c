/* The QEMU driver's node device lifecycle calls (see qemu_nodedev.h),
 * answered as libvirtd's udev node device driver answers on a host
 * without FC adapters or mdev parents: every sysfs device is active and
 * not persistent, except "computer", which libvirtd counts as persistent
 * and autostarted; none can be started, destroyed, undefined or set to
 * autostart; a vHBA finds no parent and an mdev no parent address. */
#include <string.h>

#include <libxml/tree.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_nodedev.h"
#include "server/drivers/conf/xml_read.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NODEDEV, (code), __VA_ARGS__)

enum {
    CREATE_VALIDATE = 1,            /* virNodeDeviceCreateXMLFlags, DefineXMLFlags */
    NODEDEV_XML_MAX = 1 << 20,      /* the longest device XML read */
};

static bool is_computer(const char *name)
{
    return strcmp(name, "computer") == 0;
}

int rv_qemu_node_device_is_active(rv_driver_conn *c, const rv_node_device_is_active_args *args,
                                  rv_node_device_is_active_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    ret->active = 1;
    return 0;
}

int rv_qemu_node_device_is_persistent(rv_driver_conn *c,
                                      const rv_node_device_is_persistent_args *args,
                                      rv_node_device_is_persistent_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    ret->persistent = is_computer(args->name);
    return 0;
}

int rv_qemu_node_device_get_autostart(rv_driver_conn *c,
                                      const rv_node_device_get_autostart_args *args,
                                      rv_node_device_get_autostart_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    ret->autostart = is_computer(args->name);
    return 0;
}

int rv_qemu_node_device_set_autostart(rv_driver_conn *c,
                                      const rv_node_device_set_autostart_args *args, rv_err *err)
{
    (void)c;
    if (rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    return fail(err, RV_ERR_OPERATION_UNSUPPORTED, "Operation not supported: Unsupported device type");
}

int rv_qemu_node_device_create(rv_driver_conn *c, const rv_node_device_create_args *args,
                               rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0, "nodeDeviceCreate", err) < 0 ||
        rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: Device is already active");
}

int rv_qemu_node_device_undefine(rv_driver_conn *c, const rv_node_device_undefine_args *args,
                                 rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0, "nodeDeviceUndefine", err) < 0 ||
        rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    if (is_computer(args->name))
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: Unsupported device type");
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: Node device '%s' is not defined", args->name);
}

int rv_qemu_node_device_destroy(rv_driver_conn *c, const rv_node_device_destroy_args *args,
                                rv_err *err)
{
    (void)c;
    if (rv_qemu_nodedev_exists(args->name, err) < 0)
        return -1;
    return fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: Unsupported device type");
}

/* Why a device of this XML cannot be made here; define: for define
 * (which knows only mdevs), else for create (vHBAs and mdevs). */
static int refuse(const char *xml, bool define, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0;
    xmlNode *root = rv_lx_read(xml, NODEDEV_XML_MAX, "device", "node_device_definition",
                               RV_FROM_NODEDEV, &doc, err);
    if (!root)
        return -1;
    char *parent = rv_lx_text(rv_lx_child(root, "parent"), &failed);
    bool mdev = false;
    for (xmlNode *cap = root->children; cap; cap = cap->next) {
        if (cap->type != XML_ELEMENT_NODE || !xmlStrEqual(cap->name, BAD_CAST "capability"))
            continue;
        char *type = rv_lx_attr(cap, "type", &failed);
        mdev |= type && strcmp(type, "mdev") == 0;
        free(type);
    }
    xmlFreeDoc(doc);
    int rc;
    if (failed)
        rc = fail(err, RV_ERR_NO_MEMORY, "out of memory");
    else if (mdev)
        rc = fail(err, RV_ERR_PARSE_FAILED,
                  "failed to parse configuration file Unable to find address for parent device "
                  "'%s'", parent ? parent : "");
    else if (define)
        rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                  "unsupported configuration: Unsupported device type");
    else
        rc = fail(err, RV_ERR_INTERNAL_ERROR,
                  "internal error: Could not find parent device for 'new device'");
    free(parent);
    return rc;
}

int rv_qemu_node_device_create_xml(rv_driver_conn *c,
                                   const rv_node_device_create_xml_args *args,
                                   rv_node_device_create_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, CREATE_VALIDATE, "nodeDeviceCreateXML", err) < 0)
        return -1;
    return refuse(args->xml_desc, false, err);
}

int rv_qemu_node_device_define_xml(rv_driver_conn *c,
                                   const rv_node_device_define_xml_args *args,
                                   rv_node_device_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, CREATE_VALIDATE, "nodeDeviceDefineXML", err) < 0)
        return -1;
    return refuse(args->xml_desc, true, err);
}
