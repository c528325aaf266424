/* The test driver's host devices (see test_nodedev.h): a constant table
 * of libvirt's four, which destroy may take away, and at most one vHBA
 * made by create (libvirt's test driver mocks every vHBA as a copy of
 * scsi_host11 named scsi_host12, with the WWNs asked for). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/entities.h>

#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_nodedev.h"
#include "server/drivers/conf/xml_read.h"

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

/* libvirt's test:///default devices, their XML byte for byte. */
struct test_dev {
    const char *name;
    const char *parent;         /* NULL: the top */
    const char *cap;            /* the one capability it lists */
    unsigned int flags;         /* CAP_* it is listed under */
    /* An SCSI host on an FC adapter (wwnn NULL: not one). */
    int host, unique_id;
    const char *wwnn, *wwpn, *fabric_wwn;
    int vport_ops;              /* it can make vHBAs */
};

static const struct test_dev fixed[] = {
    { "computer", NULL, "system", CAP_SYSTEM, 0, 0, NULL, NULL, NULL, 0 },
    { "scsi_host1", "computer", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST | CAP_VPORTS,
      1, 0, "2000000012341234", "1000000012341234", "2000000043214321", 1 },
    { "scsi_host11", "scsi_host1", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST,
      11, 10, "2000000034563456", "1000000034563456", "2000000043214321", 0 },
    { "scsi_host2", "computer", "scsi_host", CAP_SCSI_HOST | CAP_FC_HOST | CAP_VPORTS,
      2, 1, "2000000056785678", "1000000056785678", "2000000087658765", 1 },
};
enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]), TEMPLATE = 2, NDEVS = NFIXED + 1 };
#define VHBA_NAME "scsi_host12"

static const char computer_xml[] =
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
    "</device>\n";

/* The daemon-long state: which fixed devices destroy took, and the vHBA
 * (a copy of scsi_host11 with the WWNs create was given, escaped for XML). */
static int destroyed[NFIXED];
static struct {
    int present;
    char *wwnn, *wwpn;
} vhba;

void test_nodedev_cleanup(void)
{
    xmlFree(vhba.wwnn);
    xmlFree(vhba.wwpn);
    memset(&vhba, 0, sizeof(vhba));
    memset(destroyed, 0, sizeof(destroyed));
}

/* Device i (0..NDEVS-1) as it stands, or 0 if it is not there now. */
static int dev_at(size_t i, struct test_dev *out)
{
    if (i < NFIXED) {
        *out = fixed[i];
        return !destroyed[i];
    }
    *out = fixed[TEMPLATE];
    out->name = VHBA_NAME;
    out->wwnn = vhba.wwnn;
    out->wwpn = vhba.wwpn;
    return vhba.present;
}

static int fail(rv_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rv_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, RV_FROM_TEST, code, fmt, ap);   /* libvirt's test driver says TEST */
    va_end(ap);
    return -1;
}

/* The errors libvirt's node device XML code gives, in its own domain. */
static int fail_nodedev(rv_err *err, const char *what)
{
    rv_err_set(err, RV_FROM_NODEDEV, RV_ERR_INTERNAL_ERROR, "internal error: %s", what);
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

/* The index of the device called name that is there now, or -1. */
static int find(const char *name)
{
    struct test_dev d;
    for (size_t i = 0; i < NDEVS; i++)
        if (dev_at(i, &d) && strcmp(d.name, name) == 0)
            return (int)i;
    return -1;
}

static int get(const char *name, struct test_dev *out, rv_err *err)
{
    int i = find(name);
    if (i < 0)
        return fail(err, RV_ERR_NO_NODE_DEVICE,
                    "Node device not found: no node device with matching name '%s'", name);
    dev_at((size_t)i, out);
    return i;
}

static char *dev_xml(const struct test_dev *d)
{
    if (!d->wwnn)
        return strdup(computer_xml);
    char *xml = NULL;
    if (asprintf(&xml,
                 "<device>\n"
                 "  <name>%s</name>\n"
                 "  <parent>%s</parent>\n"
                 "  <capability type='scsi_host'>\n"
                 "    <host>%d</host>\n"
                 "    <unique_id>%d</unique_id>\n"
                 "    <capability type='fc_host'>\n"
                 "      <wwnn>%s</wwnn>\n"
                 "      <wwpn>%s</wwpn>\n"
                 "      <fabric_wwn>%s</fabric_wwn>\n"
                 "    </capability>\n"
                 "%s"
                 "  </capability>\n"
                 "</device>\n",
                 d->name, d->parent, d->host, d->unique_id, d->wwnn, d->wwpn, d->fabric_wwn,
                 d->vport_ops ? "    <capability type='vport_ops'>\n"
                                "      <max_vports>0</max_vports>\n"
                                "      <vports>0</vports>\n"
                                "    </capability>\n" : "") < 0)
        return NULL;
    return xml;
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
    struct test_dev d;
    if (check_flags(args->flags, 0, "testNodeNumOfDevices", err) < 0)
        return -1;
    ret->num = 0;
    for (size_t i = 0; i < NDEVS; i++)
        ret->num += dev_at(i, &d) && has_cap(&d, args->cap);
    return 0;
}

int test_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                           rv_node_list_devices_ret *ret, rv_err *err)
{
    (void)c;
    const char *found[NDEVS];
    struct test_dev d;
    size_t n = 0;
    if (check_flags(args->flags, 0, "testNodeListDevices", err) < 0)
        return -1;
    for (size_t i = 0; i < NDEVS; i++)
        if (dev_at(i, &d) && has_cap(&d, args->cap))
            found[n++] = d.name;
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
    struct test_dev d;
    if (check_flags(args->flags, 0x3fffffu, "testConnectListAllNodeDevices", err) < 0)
        return -1;
    u_int k = 0;
    for (size_t i = 0; i < NDEVS; i++)
        k += dev_at(i, &d) && (!caps || (d.flags & caps));
    ret->ret = k;
    if (!args->need_results || k == 0)
        return 0;
    if (!(ret->devices.devices_val = calloc(k, sizeof(rv_nonnull_node_device))))
        return fail_oom(err);
    for (size_t i = 0; i < NDEVS; i++) {
        if (!dev_at(i, &d) || (caps && !(d.flags & caps)))
            continue;
        if (!(ret->devices.devices_val[ret->devices.devices_len].name = strdup(d.name)))
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
    struct test_dev d;
    if (get(args->name, &d, err) < 0)
        return -1;
    if (!(ret->dev.name = strdup(d.name)))
        return fail_oom(err);
    return 0;
}

int test_node_device_get_xml_desc(rv_driver_conn *c,
                                  const rv_node_device_get_xml_desc_args *args,
                                  rv_node_device_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    struct test_dev d;
    if (check_flags(args->flags, 0, "testNodeDeviceGetXMLDesc", err) < 0 ||
        get(args->name, &d, err) < 0)
        return -1;
    if (!(ret->xml = dev_xml(&d)))
        return fail_oom(err);
    return 0;
}

int test_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                rv_node_device_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    struct test_dev d;
    if (get(args->name, &d, err) < 0)
        return -1;
    if (!d.parent)
        return 0;               /* none: the top */
    if (!(ret->parentName = malloc(sizeof(*ret->parentName))))
        return fail_oom(err);
    if (!(*ret->parentName = strdup(d.parent)))
        return fail_oom(err);   /* the dispatcher frees the holder */
    return 0;
}

int test_node_device_num_of_caps(rv_driver_conn *c,
                                 const rv_node_device_num_of_caps_args *args,
                                 rv_node_device_num_of_caps_ret *ret, rv_err *err)
{
    (void)c;
    struct test_dev d;
    if (get(args->name, &d, err) < 0)
        return -1;
    ret->num = 1;
    return 0;
}

int test_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                               rv_node_device_list_caps_ret *ret, rv_err *err)
{
    (void)c;
    struct test_dev d;
    if (get(args->name, &d, err) < 0)
        return -1;
    return names_out(&d.cap, 1, args->maxnames, RV_NODE_DEVICE_CAPS_LIST_MAX,
                     &ret->names.names_val, &ret->names.names_len, err);
}

/* ---- creating and destroying vHBAs ---- */

/* The capability types libvirt 9.0's node device XML knows. */
static const char *const known_caps[] = {
    "system", "pci", "usb_device", "usb", "net", "scsi_host", "scsi_target", "scsi",
    "storage", "fc_host", "vports", "scsi_generic", "drm", "mdev_types", "mdev", "ccw",
    "css", "vdpa", "ap_card", "ap_queue", "ap_matrix", "vpd",
};

/* What a device to create says: the WWNs of its FC capability (libxml2
 * strings, NULL when it has none) and where it wants its parent. */
struct vhba_request {
    xmlChar *wwnn, *wwpn;
    char *parent, *parent_wwnn, *parent_wwpn, *parent_fabric;
};

static void vhba_request_clear(struct vhba_request *r)
{
    xmlFree(r->wwnn);
    xmlFree(r->wwpn);
    free(r->parent);
    free(r->parent_wwnn);
    free(r->parent_wwpn);
    free(r->parent_fabric);
}

/* One <capability>: its type checked as libvirt's parser does, and an FC
 * host's WWNs taken. */
static int read_cap(xmlNode *cap, struct vhba_request *r, rv_err *err)
{
    int failed = 0;
    char *type = rv_lx_attr(cap, "type", &failed);
    int rc = 0;
    size_t k = 0;
    if (failed) {
        rc = fail_oom(err);
        goto out;
    }
    if (!type) {
        rv_err_set(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                   "XML error: Missing required attribute 'type' in element 'capability'");
        rc = -1;
        goto out;
    }
    while (k < sizeof(known_caps) / sizeof(known_caps[0]) && strcmp(known_caps[k], type) != 0)
        k++;
    if (k == sizeof(known_caps) / sizeof(known_caps[0])) {
        rv_err_set(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                   "XML error: Invalid value for attribute 'type' in element 'capability': '%s'.",
                   type);
        rc = -1;
        goto out;
    }
    if (strcmp(type, "system") == 0) {
        xmlNode *hw = rv_lx_child(cap, "hardware");
        char *uuid = hw ? rv_lx_text(rv_lx_child(hw, "uuid"), &failed) : NULL;
        if (!uuid)
            rc = failed ? fail_oom(err)
                        : fail_nodedev(err, "no system UUID supplied for 'new device'");
        free(uuid);
        goto out;
    }
    if (strcmp(type, "scsi_host") != 0 || r->wwnn)
        goto out;
    for (xmlNode *sub = cap->children; sub; sub = sub->next) {
        if (sub->type != XML_ELEMENT_NODE || !xmlStrEqual(sub->name, BAD_CAST "capability"))
            continue;
        char *subtype = rv_lx_attr(sub, "type", &failed);
        int fc = subtype && strcmp(subtype, "fc_host") == 0;
        free(subtype);
        if (!fc)
            continue;
        char *wwnn = rv_lx_text(rv_lx_child(sub, "wwnn"), &failed);
        char *wwpn = wwnn ? rv_lx_text(rv_lx_child(sub, "wwpn"), &failed) : NULL;
        if (wwnn && wwpn) {
            /* Kept escaped: they go back out only inside the device's XML. */
            r->wwnn = xmlEncodeSpecialChars(NULL, BAD_CAST wwnn);
            r->wwpn = xmlEncodeSpecialChars(NULL, BAD_CAST wwpn);
            if (!r->wwnn || !r->wwpn)
                failed = 1;
        } else if (!failed) {
            rc = fail_nodedev(err, wwnn ? "no WWPN supplied for 'new device', and "
                                          "auto-generation failed"
                                        : "no WWNN supplied for 'new device', and "
                                          "auto-generation failed");
        }
        free(wwnn);
        free(wwpn);
        if (failed)
            rc = fail_oom(err);
        break;
    }
out:
    free(type);
    return rc;
}

static int read_request(const char *xml, struct vhba_request *r, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, ncaps = 0, rc = -1;
    xmlNode *root = rv_lx_read(xml, RV_NODEDEV_XML_MAX, "device", "node_device_definition",
                               RV_FROM_NODEDEV, &doc, err);
    if (!root)
        goto out;
    xmlNode *parent = rv_lx_child(root, "parent");
    if (parent) {
        r->parent = rv_lx_text(parent, &failed);
        r->parent_wwnn = rv_lx_attr(parent, "wwnn", &failed);
        r->parent_wwpn = rv_lx_attr(parent, "wwpn", &failed);
        r->parent_fabric = rv_lx_attr(parent, "fabric_wwn", &failed);
        if (failed) {
            fail_oom(err);
            goto out;
        }
    }
    for (xmlNode *cap = root->children; cap; cap = cap->next) {
        if (cap->type != XML_ELEMENT_NODE || !xmlStrEqual(cap->name, BAD_CAST "capability"))
            continue;
        ncaps++;
        if (read_cap(cap, r, err) < 0)
            goto out;
    }
    if (ncaps == 0)
        fail_nodedev(err, "no device capabilities for 'new device'");
    else if (!r->wwnn)
        fail_nodedev(err, "Device is not a fibre channel HBA");
    else
        rc = 0;
out:
    xmlFreeDoc(doc);
    return rc;
}

/* The device the request names as parent (by name, by its WWNs or by its
 * fabric), or else the first that can make vHBAs; it must be able to. */
static int find_parent(const struct vhba_request *r, rv_err *err)
{
    struct test_dev d;
    int any = !r->parent && !(r->parent_wwnn && r->parent_wwpn) && !r->parent_fabric;
    for (size_t i = 0; i < NDEVS; i++) {
        if (!dev_at(i, &d))
            continue;
        int match = any ? d.vport_ops
                  : r->parent ? strcmp(d.name, r->parent) == 0
                  : r->parent_wwnn && r->parent_wwpn
                      ? d.wwnn && strcmp(d.wwnn, r->parent_wwnn) == 0 &&
                        strcmp(d.wwpn, r->parent_wwpn) == 0
                      : d.fabric_wwn && strcmp(d.fabric_wwn, r->parent_fabric) == 0;
        if (!match)
            continue;
        if (!d.vport_ops) {
            rv_err_set(err, RV_FROM_NODEDEV, RV_ERR_INTERNAL_ERROR,
                       "internal error: Parent device %s is not capable of vport operations",
                       d.name);
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
    struct vhba_request r = { 0 };
    int rc = -1;
    /* VALIDATE: the parser below checks what it reads (no RNG schema). */
    if (check_flags(args->flags, RV_NODEDEV_CREATE_XML_VALIDATE, "testNodeDeviceCreateXML",
                    err) < 0 ||
        read_request(args->xml_desc, &r, err) < 0 || find_parent(&r, err) < 0)
        goto out;
    /* libvirt copies scsi_host11; without it the copy fails, unexplained. */
    if (destroyed[TEMPLATE]) {
        rv_err_set(err, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR,
                   "An error occurred, but the cause is unknown");
        goto out;
    }
    if (!(ret->dev.name = strdup(VHBA_NAME))) {
        fail_oom(err);
        goto out;
    }
    /* A second create replaces the first vHBA, as libvirt's does. */
    xmlFree(vhba.wwnn);
    xmlFree(vhba.wwpn);
    vhba.wwnn = (char *)r.wwnn;
    vhba.wwpn = (char *)r.wwpn;
    r.wwnn = r.wwpn = NULL;
    vhba.present = 1;
    rv_driver_nodedev_event(&rv_test_driver, VHBA_NAME, RV_NODEDEV_EVENT_CREATED);
    rc = 0;
out:
    vhba_request_clear(&r);
    return rc;
}

int test_node_device_destroy(rv_driver_conn *c, const rv_node_device_destroy_args *args,
                             rv_err *err)
{
    (void)c;
    struct test_dev d;
    int i = get(args->name, &d, err);
    if (i < 0)
        return -1;
    /* libvirt's test driver reports success, doing nothing, for a device
     * that is not an FC host or whose parent is gone. */
    if (!d.wwnn || find(d.parent) < 0)
        return 0;
    if (i < NFIXED) {
        destroyed[i] = 1;
    } else {
        vhba.present = 0;
    }
    rv_driver_nodedev_event(&rv_test_driver, d.name, RV_NODEDEV_EVENT_DELETED);
    return 0;
}
