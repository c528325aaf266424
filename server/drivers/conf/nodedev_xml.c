/* Host devices (nodedev_xml.h): one writer, one request reader and the
 * list calls for both drivers. */
#include "server/drivers/conf/nodedev_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

/* The capability types libvirt 9.0 knows, in the order of its list
 * filter bits (RV_LIST_NODEDEV_CAP_SYSTEM is bit 0, ... VPD bit 21). */
static const char *const cap_words[] = {
    "system", "pci", "usb_device", "usb", "net", "scsi_host", "scsi_target", "scsi",
    "storage", "fc_host", "vports", "scsi_generic", "drm", "mdev_types", "mdev", "ccw",
    "css", "vdpa", "ap_card", "ap_queue", "ap_matrix", "vpd",
};
enum { NCAPS = sizeof(cap_words) / sizeof(cap_words[0]) };

/* The index of a capability word, or -1. */
static int cap_index(const char *word)
{
    for (int i = 0; i < NCAPS; i++)
        if (strcmp(cap_words[i], word) == 0)
            return i;
    return -1;
}

const char *rv_nodedev_kind_word(rv_nodedev_kind kind)
{
    static const char *const words[] = {
        [RV_NODEDEV_SYSTEM] = "system", [RV_NODEDEV_PCI] = "pci",
        [RV_NODEDEV_NET] = "net", [RV_NODEDEV_SCSI_HOST] = "scsi_host",
    };
    return words[kind];
}

/* ---- the writer ---- */

static void put_opt(FILE *fp, int indent, const char *tag, const char *text)
{
    if (text)
        rv_xml_put_text_element(fp, indent, tag, text);
}

static void put_attr(FILE *fp, const char *before, const char *value, const char *after)
{
    fputs(before, fp);
    rv_xml_put_escaped(fp, value);
    fputs(after, fp);
}

static void format_cap(FILE *fp, const rv_nodedev *d)
{
    fprintf(fp, "  <capability type='%s'>\n", rv_nodedev_kind_word(d->kind));
    switch (d->kind) {
    case RV_NODEDEV_SYSTEM:
        fputs("    <hardware>\n", fp);
        put_opt(fp, 6, "vendor", d->u.system.hw_vendor);
        put_opt(fp, 6, "version", d->u.system.hw_version);
        put_opt(fp, 6, "serial", d->u.system.hw_serial);
        put_opt(fp, 6, "uuid", d->u.system.hw_uuid);
        fputs("    </hardware>\n    <firmware>\n", fp);
        put_opt(fp, 6, "vendor", d->u.system.fw_vendor);
        put_opt(fp, 6, "version", d->u.system.fw_version);
        put_opt(fp, 6, "release_date", d->u.system.fw_date);
        fputs("    </firmware>\n", fp);
        break;
    case RV_NODEDEV_PCI:
        put_opt(fp, 4, "class", d->u.pci.cls);
        fprintf(fp, "    <domain>%u</domain>\n    <bus>%u</bus>\n    <slot>%u</slot>\n"
                    "    <function>%u</function>\n",
                d->u.pci.domain, d->u.pci.bus, d->u.pci.slot, d->u.pci.function);
        put_attr(fp, "    <product id='", d->u.pci.product ? d->u.pci.product : "0x0000", "'/>\n");
        put_attr(fp, "    <vendor id='", d->u.pci.vendor ? d->u.pci.vendor : "0x0000", "'/>\n");
        break;
    case RV_NODEDEV_NET:
        put_opt(fp, 4, "interface", d->u.net.iface);
        put_opt(fp, 4, "address", d->u.net.address);
        fputs("    <link", fp);
        if (d->u.net.has_speed)
            fprintf(fp, " speed='%u'", d->u.net.speed);
        put_attr(fp, " state='", d->u.net.state ? d->u.net.state : "unknown", "'/>\n");
        fputs("    <capability type='80203'/>\n", fp);
        break;
    case RV_NODEDEV_SCSI_HOST:
        fprintf(fp, "    <host>%d</host>\n    <unique_id>%d</unique_id>\n", d->u.scsi.host,
                d->u.scsi.unique_id);
        fputs("    <capability type='fc_host'>\n", fp);
        put_opt(fp, 6, "wwnn", d->u.scsi.wwnn);
        put_opt(fp, 6, "wwpn", d->u.scsi.wwpn);
        put_opt(fp, 6, "fabric_wwn", d->u.scsi.fabric_wwn);
        fputs("    </capability>\n", fp);
        if (d->u.scsi.vport_ops)
            fputs("    <capability type='vport_ops'>\n      <max_vports>0</max_vports>\n"
                  "      <vports>0</vports>\n    </capability>\n", fp);
        break;
    }
    fputs("  </capability>\n", fp);
}

char *rv_nodedev_format(const rv_nodedev *d)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fputs("<device>\n", fp);
    rv_xml_put_text_element(fp, 2, "name", d->name);
    put_opt(fp, 2, "path", d->path);
    put_opt(fp, 2, "parent", d->parent);
    if (d->driver) {
        fputs("  <driver>\n", fp);
        rv_xml_put_text_element(fp, 4, "name", d->driver);
        fputs("  </driver>\n", fp);
    }
    format_cap(fp, d);
    fputs("</device>\n", fp);
    return rv_xml_done(fp, &buf);
}

/* ---- the request reader ---- */

static int fail_nodedev(rv_err *err, const char *what)
{
    return rv_err_fail(err, RV_FROM_NODEDEV, RV_ERR_INTERNAL_ERROR, "internal error: %s", what);
}

static int oom(rv_err *err)
{
    return rv_err_fail(err, RV_FROM_NODEDEV, RV_ERR_NO_MEMORY, "out of memory");
}

/* The capability elements under n, one at a time: *at the last seen. */
static xmlNode *next_cap(const xmlNode *n, xmlNode *at)
{
    for (at = at ? at->next : n->children; at; at = at->next)
        if (at->type == XML_ELEMENT_NODE && xmlStrEqual(at->name, BAD_CAST "capability"))
            return at;
    return NULL;
}

/* An SCSI host's fc_host capability: both WWNs, or libvirt's error. */
static int read_fc(xmlNode *scsi, bool gen_wwn, rv_nodedev_req *r, rv_err *err)
{
    int failed = 0, rc = 0;
    for (xmlNode *sub = next_cap(scsi, NULL); sub; sub = next_cap(scsi, sub)) {
        char *subtype = rv_lx_attr(sub, "type", &failed);
        bool fc = subtype && strcmp(subtype, "fc_host") == 0;
        free(subtype);
        if (!fc)
            continue;
        r->fc = true;
        r->wwnn = rv_lx_text(rv_lx_child(sub, "wwnn"), &failed);
        r->wwpn = r->wwnn || gen_wwn ? rv_lx_text(rv_lx_child(sub, "wwpn"), &failed) : NULL;
        if (failed)
            rc = oom(err);
        else if (!gen_wwn && !r->wwpn)
            rc = fail_nodedev(err, r->wwnn ? "no WWPN supplied for 'new device', and "
                                             "auto-generation failed"
                                           : "no WWNN supplied for 'new device', and "
                                             "auto-generation failed");
        if (rc < 0) {
            free(r->wwnn);
            r->wwnn = NULL;
        }
        break;
    }
    return failed && rc == 0 ? oom(err) : rc;
}

/* One <capability>: its type checked as libvirt's parser checks it. */
static int read_cap(xmlNode *cap, bool gen_wwn, rv_nodedev_req *r, rv_err *err)
{
    int failed = 0, rc = 0;
    char *type = rv_lx_attr(cap, "type", &failed);
    if (failed)
        rc = oom(err);
    else if (!type)
        rc = rv_err_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                         "XML error: Missing required attribute 'type' in element 'capability'");
    else if (cap_index(type) < 0)
        rc = rv_err_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                         "XML error: Invalid value for attribute 'type' in element "
                         "'capability': '%s'.", type);
    else if (strcmp(type, "system") == 0) {
        xmlNode *hw = rv_lx_child(cap, "hardware");
        char *uuid = hw ? rv_lx_text(rv_lx_child(hw, "uuid"), &failed) : NULL;
        if (!uuid)
            rc = failed ? oom(err) : fail_nodedev(err, "no system UUID supplied for 'new device'");
        free(uuid);
    } else if (strcmp(type, "mdev") == 0) {
        r->mdev = true;
    } else if (strcmp(type, "scsi_host") == 0 && !r->fc) {
        rc = read_fc(cap, gen_wwn, r, err);
    }
    free(type);
    return rc;
}

int rv_nodedev_req_parse(const char *xml, size_t max, bool gen_wwn, rv_nodedev_req *r,
                         rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, ncaps = 0, rc = -1;
    memset(r, 0, sizeof(*r));
    xmlNode *root = rv_lx_read(xml, max, "device", "node_device_definition", RV_FROM_NODEDEV,
                               &doc, err);
    if (!root)
        return -1;
    xmlNode *parent = rv_lx_child(root, "parent");
    if (parent) {
        r->parent = rv_lx_text(parent, &failed);
        r->parent_wwnn = rv_lx_attr(parent, "wwnn", &failed);
        r->parent_wwpn = rv_lx_attr(parent, "wwpn", &failed);
        r->parent_fabric = rv_lx_attr(parent, "fabric_wwn", &failed);
        if (failed) {
            oom(err);
            goto out;
        }
    }
    for (xmlNode *cap = next_cap(root, NULL); cap; cap = next_cap(root, cap)) {
        ncaps++;
        if (read_cap(cap, gen_wwn, r, err) < 0)
            goto out;
    }
    rc = ncaps ? 0 : fail_nodedev(err, "no device capabilities for 'new device'");
out:
    rv_lx_free(doc);
    if (rc < 0)
        rv_nodedev_req_clear(r);
    return rc;
}

bool rv_nodedev_req_any_parent(const rv_nodedev_req *r)
{
    return !r->parent && !(r->parent_wwnn && r->parent_wwpn) && !r->parent_fabric;
}

void rv_nodedev_req_clear(rv_nodedev_req *r)
{
    free(r->parent);
    free(r->parent_wwnn);
    free(r->parent_wwpn);
    free(r->parent_fabric);
    free(r->wwnn);
    free(r->wwpn);
    memset(r, 0, sizeof(*r));
}

/* ---- the list calls ---- */

/* Whether d is listed under the capability word cap (NULL: every one). */
static bool has_cap(const rv_nodedev *d, const char *cap)
{
    int i = cap ? cap_index(cap) : -1;
    return !cap || (i >= 0 && (d->list_flags & (1u << i)));
}

static int oom_in(int from, rv_err *err)
{
    return rv_err_fail(err, from, RV_ERR_NO_MEMORY, "out of memory");
}

int rv_nodedev_count(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                     const char *cap)
{
    int k = 0;
    for (size_t i = 0; i < l->n; i++)
        k += has_cap(dev(rv_obj_at(l, i)), cap);
    return k;
}

/* Copies of the first min(n, maxnames) of src into *names (maxnames
 * checked against limit; the dispatcher frees what was filled). */
static int put_names(int from, const char *const *src, size_t n, int maxnames, int limit,
                     char ***names, u_int *len, rv_err *err)
{
    if (maxnames < 0 || maxnames > limit)
        return rv_err_fail(err, from, RV_ERR_RPC, "maxnames %d is outside 0..%d",
                           maxnames, limit);
    if (!(*names = calloc(n + 1, sizeof(**names))))
        return oom_in(from, err);
    for (*len = 0; *len < n && *len < (u_int)maxnames; (*len)++)
        if (!((*names)[*len] = strdup(src[*len])))
            return oom_in(from, err);
    return 0;
}

int rv_nodedev_list_names(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                          const char *cap, int maxnames, char ***names, u_int *len,
                          rv_err *err)
{
    const char **found = calloc(l->n + 1, sizeof(*found));
    size_t n = 0;
    if (!found)
        return oom_in(l->kind->from, err);
    for (size_t i = 0; i < l->n; i++) {
        const rv_nodedev *d = dev(rv_obj_at(l, i));
        if (has_cap(d, cap))
            found[n++] = d->name;
    }
    int rc = put_names(l->kind->from, found, n, maxnames, RV_NODE_DEVICE_LIST_MAX, names, len, err);
    free(found);
    return rc;
}

int rv_nodedev_list_all(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                        unsigned int caps, bool active, int need_results,
                        rv_connect_list_all_node_devices_ret *ret, rv_err *err)
{
    u_int k = 0;
    for (size_t i = 0; active && i < l->n; i++)
        k += !caps || (dev(rv_obj_at(l, i))->list_flags & caps);
    ret->ret = k;
    if (!need_results || k == 0)
        return 0;
    if (!(ret->devices.devices_val = calloc(k, sizeof(rv_nonnull_node_device))))
        return oom_in(l->kind->from, err);
    for (size_t i = 0; i < l->n; i++) {
        const rv_nodedev *d = dev(rv_obj_at(l, i));
        if (caps && !(d->list_flags & caps))
            continue;
        if (!(ret->devices.devices_val[ret->devices.devices_len].name = strdup(d->name)))
            return oom_in(l->kind->from, err);
        ret->devices.devices_len++;
    }
    return 0;
}

int rv_nodedev_list_caps(const rv_nodedev *d, int from, int maxnames, char ***names, u_int *len,
                         rv_err *err)
{
    const char *word = rv_nodedev_kind_word(d->kind);
    return put_names(from, &word, 1, maxnames, RV_NODE_DEVICE_CAPS_LIST_MAX, names, len, err);
}

int rv_nodedev_put_parent(const rv_nodedev *d, int from, char ***parent, rv_err *err)
{
    if (!d->parent)
        return 0;
    if (!(*parent = malloc(sizeof(**parent))) || !(**parent = strdup(d->parent)))
        return rv_err_fail(err, from, RV_ERR_NO_MEMORY, "out of memory");  /* the dispatcher frees the holder */
    return 0;
}
