/* Host devices as both drivers describe them: the device (a name, where
 * it sits, and one capability of the kinds the drivers have: the host
 * system, a PCI device, a network interface, an SCSI host on an FC
 * adapter), written as libvirt writes it; the reader of a create or
 * define request, with the checks libvirt's parser makes; and the list
 * calls over a list of devices (objlist.h, by name: devices have no
 * UUID), with libvirt's capability words and list filter bits. */
#ifndef RV_SERVER_DRIVERS_CONF_NODEDEV_XML_H
#define RV_SERVER_DRIVERS_CONF_NODEDEV_XML_H

#include <stdbool.h>

#include "server/drivers/conf/objlist.h"
#include "server/drivers/driver.h"

typedef enum { RV_NODEDEV_SYSTEM, RV_NODEDEV_PCI, RV_NODEDEV_NET, RV_NODEDEV_SCSI_HOST } rv_nodedev_kind;

/* A device; every string may be NULL (the element is left out) but the
 * name.  Strings are the driver's, written escaped. */
typedef struct rv_nodedev {
    const char *name;
    const char *path;           /* its sysfs directory */
    const char *parent;         /* NULL: the top */
    const char *driver;         /* the kernel driver bound to it */
    rv_nodedev_kind kind;
    unsigned int list_flags;    /* the RV_LIST_NODEDEV_CAP_* it is listed under */
    union {
        struct {
            const char *hw_vendor, *hw_version, *hw_serial, *hw_uuid;
            const char *fw_vendor, *fw_version, *fw_date;
        } system;
        struct {
            const char *cls, *product, *vendor;
            unsigned int domain, bus, slot, function;
        } pci;
        struct {
            const char *iface, *address, *state;
            bool has_speed;
            unsigned int speed;
        } net;
        struct {
            int host, unique_id;
            const char *wwnn, *wwpn, *fabric_wwn;
            bool vport_ops;     /* it can make vHBAs */
        } scsi;
    } u;
} rv_nodedev;

/* The capability word of a device's kind ("system", "pci", ...). */
const char *rv_nodedev_kind_word(rv_nodedev_kind kind);
/* d's XML, malloc'd; NULL when memory is short. */
char *rv_nodedev_format(const rv_nodedev *d);

/* What a create or define request says (strings malloc'd, NULL: absent). */
typedef struct rv_nodedev_req {
    char *parent, *parent_wwnn, *parent_wwpn, *parent_fabric;
    bool fc;                    /* an SCSI host with an fc_host capability */
    char *wwnn, *wwpn;          /* the first one's WWNs */
    bool mdev;                  /* it has an mdev capability */
} rv_nodedev_req;

/* The request in xml (at most max bytes), checked as libvirt's parser
 * checks it: each capability type known, a system capability with a
 * UUID, at least one capability, and an fc_host with both WWNs unless
 * gen_wwn (libvirt makes up the missing ones for a hypervisor's node
 * devices, not for its test driver's).  -1 with libvirt's error (nothing
 * to clear). */
int rv_nodedev_req_parse(const char *xml, size_t max, bool gen_wwn, rv_nodedev_req *r,
                         rv_err *err);
/* Whether r names no parent (by name, WWNs or fabric): any device that
 * can make vHBAs will do. */
bool rv_nodedev_req_any_parent(const rv_nodedev_req *r);
void rv_nodedev_req_clear(rv_nodedev_req *r);

/* ---- the list calls, on a list of rv_nodedev (its kind's name_of
 * gives the device's name, more_flags_of is unused). ---- */

/* The kind a driver's device list uses: its errors in domain from. */
#define RV_NODEDEV_OBJ_KIND(from_, name_of_)                                    \
    { .what = "node device", .whats = "node devices",                          \
      .not_found = "Node device not found", .lookup_what = "node device",      \
      .from = (from_), .no_object = RV_ERR_NO_NODE_DEVICE, .name_of = (name_of_) }

/* NUM_OF_DEVICES and LIST_DEVICES: the devices listed under the word cap
 * (NULL: all); each device is dev(obj). */
int rv_nodedev_count(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                     const char *cap);
int rv_nodedev_list_names(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                          const char *cap, int maxnames, char ***names, u_int *len,
                          rv_err *err);
/* LIST_ALL_NODE_DEVICES: caps are the CAP_* bits of flags (ACTIVE and
 * INACTIVE are the driver's to check: with active false nothing is
 * listed). */
int rv_nodedev_list_all(const rv_obj_list *l, const rv_nodedev *(*dev)(const void *obj),
                        unsigned int caps, bool active, int need_results,
                        rv_connect_list_all_node_devices_ret *ret, rv_err *err);
/* NODE_DEVICE_LIST_CAPS: d's one capability word, if maxnames allows
 * (errors in domain from). */
int rv_nodedev_list_caps(const rv_nodedev *d, int from, int maxnames, char ***names, u_int *len,
                         rv_err *err);
/* NODE_DEVICE_GET_PARENT: d's parent in *parent (NULL: none). */
int rv_nodedev_put_parent(const rv_nodedev *d, int from, char ***parent, rv_err *err);

#endif
