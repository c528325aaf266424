/* The test driver's host devices (see test_nodedev.h): a constant table,
 * nothing to allocate until an answer is built. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/test/test_nodedev.h"

/* The capability words and the list flags they answer to.  A SCSI host on
 * an FC adapter is listed under fc_host too, and one that can make vports
 * under vports, as libvirt lists them; its own capability list says only
 * scsi_host. */
#define CAP_SYSTEM RV_LIST_NODEDEV_CAP_SYSTEM
#define CAP_SCSI_HOST RV_LIST_NODEDEV_CAP_SCSI_HOST
#define CAP_FC_HOST RV_LIST_NODEDEV_CAP_FC_HOST
#define CAP_VPORTS RV_LIST_NODEDEV_CAP_VPORTS

static const struct {
    const char *word;
    unsigned int flag;
} cap_words[] = {
    { "system", CAP_SYSTEM }, { "scsi_host", CAP_SCSI_HOST },
    { "fc_host", CAP_FC_HOST }, { "vports", CAP_VPORTS },
};

#define FC_HOST(n, uid, parent, wwnn, wwpn, fabric, vport_ops) \
    "<device>\n" \
    "  <name>scsi_host" #n "</name>\n" \
    "  <parent>" parent "</parent>\n" \
    "  <capability type='scsi_host'>\n" \
    "    <host>" #n "</host>\n" \
    "    <unique_id>" #uid "</unique_id>\n" \
    "    <capability type='fc_host'>\n" \
    "      <wwnn>" wwnn "</wwnn>\n" \
    "      <wwpn>" wwpn "</wwpn>\n" \
    "      <fabric_wwn>" fabric "</fabric_wwn>\n" \
    "    </capability>\n" \
    vport_ops \
    "  </capability>\n" \
    "</device>\n"
#define VPORT_OPS \
    "    <capability type='vport_ops'>\n" \
    "      <max_vports>0</max_vports>\n" \
    "      <vports>0</vports>\n" \
    "    </capability>\n"

/* libvirt's test:///default devices, their XML byte for byte. */
static const struct test_dev {
    const char *name;
    const char *parent;         /* NULL: the top */
    const char *cap;            /* the one capability it lists */
    unsigned int flags;         /* CAP_* it is listed under */
    const char *xml;
} devs[] = {
    { "computer", NULL, "system", CAP_SYSTEM,
      "<device>\n"
      "  <name>computer</name>\n"
      "  <capability type='system'>\n"
      "    <hardware>\n"
      "      <vendor>Libvirt</vendor>\n"
      "      <version>Test driver</version>\n"
      "      <serial>123456</serial>\n"
      "      <uuid>11111111-2222-3333-4444-555555555555</uuid>\n"
      "    </hardware>\n"
      "    <firmware>\n"
      "      <vendor>Libvirt</vendor>\n"
      "      <version>Test Driver</version>\n"
      "      <release_date>01/22/2007</release_date>\n"
      "    </firmware>\n"
      "  </capability>\n"
      "</device>\n" },
    { "scsi_host1", "computer", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST | CAP_VPORTS,
      FC_HOST(1, 0, "computer", "2000000012341234", "1000000012341234", "2000000043214321",
              VPORT_OPS) },
    { "scsi_host11", "scsi_host1", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST,
      FC_HOST(11, 10, "scsi_host1", "2000000034563456", "1000000034563456",
              "2000000043214321", "") },
    { "scsi_host2", "computer", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST | CAP_VPORTS,
      FC_HOST(2, 1, "computer", "2000000056785678", "1000000056785678", "2000000087658765",
              VPORT_OPS) },
};
enum { NDEVS = sizeof(devs) / sizeof(devs[0]) };

static int fail(rv_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rv_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, RV_FROM_TEST, code, fmt, ap);   /* libvirt's test driver says TEST */
    va_end(ap);
    return -1;
}

static int fail_oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static int check_flags(unsigned int flags, unsigned int known, const char *func, rv_err *err)
{
    if (flags & ~known)
        return fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                    flags & ~known, func);
    return 0;
}

static const struct test_dev *get(const char *name, rv_err *err)
{
    for (size_t i = 0; i < NDEVS; i++)
        if (strcmp(devs[i].name, name) == 0)
            return &devs[i];
    fail(err, RV_ERR_NO_NODE_DEVICE,
         "Node device not found: no node device with matching name '%s'", name);
    return NULL;
}

/* The flag a capability word stands for; 0 (nothing matches) if unknown. */
static unsigned int cap_flag(const char *word)
{
    for (size_t i = 0; i < sizeof(cap_words) / sizeof(cap_words[0]); i++)
        if (strcmp(cap_words[i].word, word) == 0)
            return cap_words[i].flag;
    return 0;
}

/* Whether dev is listed under cap (NULL: every device). */
static int has_cap(const struct test_dev *dev, char *const *cap)
{
    return !cap || (dev->flags & cap_flag(*cap)) != 0;
}

/* Copies of up to max strings into a new array; *len of them. */
static int names_out(const char *const *src, size_t n, int maxnames, int max, char ***names,
                     u_int *len, rv_err *err)
{
    if (maxnames < 0 || maxnames > max)
        return fail(err, RV_ERR_RPC, "maxnames %d is outside 0..%d", maxnames, max);
    char **out = calloc(n + 1, sizeof(*out));
    if (!out)
        return fail_oom(err);
    *names = out;       /* the dispatcher frees what was filled, on failure too */
    for (*len = 0; *len < n && *len < (u_int)maxnames; (*len)++)
        if (!(out[*len] = strdup(src[*len])))
            return fail_oom(err);
    return 0;
}

int test_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                             rv_node_num_of_devices_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testNodeNumOfDevices", err) < 0)
        return -1;
    ret->num = 0;
    for (size_t i = 0; i < NDEVS; i++)
        ret->num += has_cap(&devs[i], args->cap);
    return 0;
}

int test_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                           rv_node_list_devices_ret *ret, rv_err *err)
{
    (void)c;
    const char *found[NDEVS];
    size_t n = 0;
    if (check_flags(args->flags, 0, "testNodeListDevices", err) < 0)
        return -1;
    for (size_t i = 0; i < NDEVS; i++)
        if (has_cap(&devs[i], args->cap))
            found[n++] = devs[i].name;
    return names_out(found, n, args->maxnames, RV_NODE_DEVICE_LIST_MAX, &ret->names.names_val,
                     &ret->names.names_len, err);
}

int test_connect_list_all_node_devices(rv_driver_conn *c,
                                       const rv_connect_list_all_node_devices_args *args,
                                       rv_connect_list_all_node_devices_ret *ret, rv_err *err)
{
    (void)c;
    /* The capability bits only: libvirt 9.0's test driver refuses ACTIVE
     * and INACTIVE, which virsh nodedev-list always sends. */
    unsigned int caps = args->flags & 0x3fffffu;
    if (check_flags(args->flags, 0x3fffffu, "testConnectListAllNodeDevices", err) < 0)
        return -1;
    u_int k = 0;
    for (size_t i = 0; i < NDEVS; i++)
        k += !caps || (devs[i].flags & caps);
    ret->ret = k;
    if (!args->need_results || k == 0)
        return 0;
    if (!(ret->devices.devices_val = calloc(k, sizeof(rv_nonnull_node_device))))
        return fail_oom(err);
    for (size_t i = 0; i < NDEVS; i++) {
        if (caps && !(devs[i].flags & caps))
            continue;
        if (!(ret->devices.devices_val[ret->devices.devices_len].name = strdup(devs[i].name)))
            return fail_oom(err);
        ret->devices.devices_len++;
    }
    return 0;
}

int test_node_device_lookup_by_name(rv_driver_conn *c,
                                    const rv_node_device_lookup_by_name_args *args,
                                    rv_node_device_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    const struct test_dev *dev = get(args->name, err);
    if (!dev)
        return -1;
    if (!(ret->dev.name = strdup(dev->name)))
        return fail_oom(err);
    return 0;
}

int test_node_device_get_xml_desc(rv_driver_conn *c,
                                  const rv_node_device_get_xml_desc_args *args,
                                  rv_node_device_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    const struct test_dev *dev;
    if (check_flags(args->flags, 0, "testNodeDeviceGetXMLDesc", err) < 0 ||
        !(dev = get(args->name, err)))
        return -1;
    if (!(ret->xml = strdup(dev->xml)))
        return fail_oom(err);
    return 0;
}

int test_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                rv_node_device_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    const struct test_dev *dev = get(args->name, err);
    if (!dev)
        return -1;
    if (!dev->parent)
        return 0;               /* none: the top */
    if (!(ret->parentName = malloc(sizeof(*ret->parentName))))
        return fail_oom(err);
    if (!(*ret->parentName = strdup(dev->parent)))
        return fail_oom(err);   /* the dispatcher frees the holder */
    return 0;
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
    const struct test_dev *dev = get(args->name, err);
    if (!dev)
        return -1;
    return names_out(&dev->cap, 1, args->maxnames, RV_NODE_DEVICE_CAPS_LIST_MAX,
                     &ret->names.names_val, &ret->names.names_len, err);
}
