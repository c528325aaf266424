/* The QEMU driver's node device lifecycle calls (see qemu_nodedev.h),
 * answered as libvirtd's udev node device driver answers on a host
 * without FC adapters or mdev parents: every sysfs device is active and
 * not persistent, except "computer", which libvirtd counts as persistent
 * and autostarted; none can be started, destroyed, undefined or set to
 * autostart; a vHBA finds no parent and an mdev no parent address. */
#include <string.h>

#include "server/drivers/conf/nodedev_xml.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_nodedev.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NODEDEV, (code), __VA_ARGS__)

enum {
    CREATE_VALIDATE = 1,            /* virNodeDeviceCreateXMLFlags, DefineXMLFlags */
    NODEDEV_XML_MAX = 1 << 20,      /* the longest device XML read */
};

/* When the device name exists: *out whether it is "computer" (libvirtd
 * counts it persistent and autostarted, no other device). */
static int is_computer(const char *name, int *out, rv_err *err)
{
    if (rv_qemu_nodedev_exists(name, err) < 0)
        return -1;
    *out = strcmp(name, "computer") == 0;
    return 0;
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
    return is_computer(args->name, &ret->persistent, err);
}

int rv_qemu_node_device_get_autostart(rv_driver_conn *c,
                                      const rv_node_device_get_autostart_args *args,
                                      rv_node_device_get_autostart_ret *ret, rv_err *err)
{
    (void)c;
    return is_computer(args->name, &ret->autostart, err);
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
    if (strcmp(args->name, "computer") == 0)
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
    rv_nodedev_req r;
    if (rv_nodedev_req_parse(xml, NODEDEV_XML_MAX, true, &r, err) < 0)
        return -1;
    int rc;
    if (r.mdev)
        rc = fail(err, RV_ERR_PARSE_FAILED,
                  "failed to parse configuration file Unable to find address for parent device "
                  "'%s'", r.parent ? r.parent : "");
    else if (define)
        rc = fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                  "unsupported configuration: Unsupported device type");
    else if (r.fc && rv_nodedev_req_any_parent(&r))
        rc = fail(err, RV_ERR_INTERNAL_ERROR,
                  "internal error: Could not find any vport capable device");
    else
        rc = fail(err, RV_ERR_INTERNAL_ERROR,
                  "internal error: Could not find parent device for 'new device'");
    rv_nodedev_req_clear(&r);
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
