/* The QEMU driver's node devices: the host's, read from sysfs at each
 * call (a few dozen small files: no cache to keep right), named and
 * written as libvirtd's udev backend names and writes them:
 *   computer                    the host (capability system, DMI data)
 *   pci_DDDD_BB_SS_F            /sys/bus/pci/devices (capability pci)
 *   net_<iface>_<mac with _>    /sys/class/net (capability net)
 * A device's parent is the nearest PCI device above it in its sysfs
 * path, else computer.  Left out: USB, SCSI, block devices, DRM, mdevs;
 * the PCI vendor and product names (ids only); a NIC's offload features. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/drivers/conf/nodedev_xml.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_nodedev.h"

/* More than any host here has; a listing stops there. */
enum { MAX_DEVS = 2048 };

/* A device as a scan finds it: its name, sysfs path and parent (NULL for
 * computer) are the strings it owns; the rest is read when its XML is. */
typedef struct dev {
    rv_nodedev nd;
} dev;

static const char *dev_name(const void *obj)
{
    return ((const dev *)obj)->nd.name;
}

static const rv_nodedev *dev_of(const void *obj)
{
    return &((const dev *)obj)->nd;
}

static const rv_obj_kind dev_kind = RV_NODEDEV_OBJ_KIND(RV_FROM_NODEDEV, dev_name);

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NODEDEV, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static void dev_free(void *obj)
{
    dev *d = obj;
    free((char *)d->nd.name);
    free((char *)d->nd.path);
    free((char *)d->nd.parent);
    free(d);
}

/* The first line of a small sysfs file (what is not printable made '?'),
 * or NULL. */
static char *read_line(const char *dir, const char *file)
{
    char path[4096], buf[256];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    for (char *p = buf; *p; p++)
        if (!isprint((unsigned char)*p))
            *p = '?';
    return strdup(buf);
}

/* "0000:00:03.0" -> "pci_0000_00_03_0"; NULL when word is no PCI address. */
static char *pci_name(const char *word)
{
    unsigned d, b, s, f;
    char tail;
    if (strlen(word) != 12 || sscanf(word, "%4x:%2x:%2x.%1x%c", &d, &b, &s, &f, &tail) != 4)
        return NULL;
    char *name = NULL;
    return asprintf(&name, "pci_%04x_%02x_%02x_%x", d, b, s, f) < 0 ? NULL : name;
}

/* The nearest PCI device above sys (the last PCI address in its path
 * before its own last component), or "computer". */
static char *parent_of(const char *sys)
{
    char *copy = strdup(sys), *best = NULL;
    if (!copy)
        return NULL;
    char *last = strrchr(copy, '/');
    if (last)
        *last = '\0';
    for (char *tok = strtok(copy, "/"); tok; tok = strtok(NULL, "/")) {
        char *name = pci_name(tok);
        if (name) {
            free(best);
            best = name;
        }
    }
    free(copy);
    return best ? best : strdup("computer");
}

static const unsigned int list_flags[] = {
    [RV_NODEDEV_SYSTEM] = RV_LIST_NODEDEV_CAP_SYSTEM,
    [RV_NODEDEV_PCI] = RV_LIST_NODEDEV_CAP_PCI_DEV,
    [RV_NODEDEV_NET] = RV_LIST_NODEDEV_CAP_NET,
};

/* Add the device name (its sysfs directory sys; both taken). */
static int add(rv_obj_list *l, rv_nodedev_kind kind, char *name, char *sys, rv_err *err)
{
    dev *d = NULL;
    if (!name || (sys == NULL && kind != RV_NODEDEV_SYSTEM) || !(d = calloc(1, sizeof(*d)))) {
        free(name);
        free(sys);
        return oom(err);
    }
    d->nd.kind = kind;
    d->nd.list_flags = list_flags[kind];
    d->nd.name = name;
    d->nd.path = sys;
    if (sys && !(d->nd.parent = parent_of(sys))) {
        dev_free(d);
        return oom(err);
    }
    if (l->n >= MAX_DEVS) {
        dev_free(d);
        return 0;
    }
    if (rv_obj_add(l, d, err) < 0) {
        dev_free(d);
        return -1;
    }
    return 0;
}

/* "net_eth0_02_fc_00_00_00_01": libvirt's name, the MAC's colons made _. */
static char *net_name(const char *iface, const char *mac)
{
    char *name = NULL;
    if (asprintf(&name, "net_%s_%s", iface, mac ? mac : "00:00:00:00:00:00") < 0)
        return NULL;
    for (char *p = name; *p; p++)
        if (*p == ':' || *p == '-' || *p == '.' || *p == ' ')
            *p = '_';
    return name;
}

/* The host's devices into l (empty, for list_free after). */
static int scan(rv_obj_list *l, rv_err *err)
{
    *l = (rv_obj_list){ .max = MAX_DEVS, .kind = &dev_kind };
    if (add(l, RV_NODEDEV_SYSTEM, strdup("computer"), NULL, err) < 0)
        return -1;
    static const char pci_dir[] = "/sys/bus/pci/devices", net_dir[] = "/sys/class/net";
    char path[4096];
    DIR *d = opendir(pci_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", pci_dir, e->d_name);
        char *name = pci_name(e->d_name);
        if (name && add(l, RV_NODEDEV_PCI, name, realpath(path, NULL), err) < 0) {
            closedir(d);
            return -1;
        }
    }
    if (d)
        closedir(d);
    d = opendir(net_dir);
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", net_dir, e->d_name);
        char *mac = read_line(path, "address");
        char *name = net_name(e->d_name, mac);
        free(mac);
        if (add(l, RV_NODEDEV_NET, name, realpath(path, NULL), err) < 0) {
            closedir(d);
            return -1;
        }
    }
    if (d)
        closedir(d);
    return 0;
}

static void list_free(rv_obj_list *l)
{
    rv_obj_clear(l, dev_free);
}

/* ---- XML: the fields read from sysfs now, written by nodedev_xml.c ---- */

/* The strings a device's XML reads, freed together. */
enum { MAX_READ = 8 };
typedef struct reads {
    char *v[MAX_READ];
    size_t n;
} reads;

static const char *read_into(reads *r, const char *dir, const char *file)
{
    return r->n < MAX_READ ? (r->v[r->n++] = read_line(dir, file)) : NULL;
}

static char *format_dev(const dev *d)
{
    static const char dmi[] = "/sys/class/dmi/id";
    rv_nodedev nd = d->nd;
    reads r = { 0 };
    char link[4096], drv[4096];
    snprintf(link, sizeof(link), "%s/driver", d->nd.path ? d->nd.path : "");
    ssize_t n = d->nd.path ? readlink(link, drv, sizeof(drv) - 1) : -1;
    if (n > 0) {
        drv[n] = '\0';
        nd.driver = strrchr(drv, '/') ? strrchr(drv, '/') + 1 : drv;
    }
    switch (nd.kind) {
    case RV_NODEDEV_SYSTEM:
        nd.u.system.hw_vendor = read_into(&r, dmi, "sys_vendor");
        nd.u.system.hw_version = read_into(&r, dmi, "product_version");
        nd.u.system.hw_serial = read_into(&r, dmi, "product_serial");
        /* When it cannot be read, libvirt's zeros. */
        nd.u.system.hw_uuid = read_into(&r, dmi, "product_uuid");
        if (!nd.u.system.hw_uuid)
            nd.u.system.hw_uuid = "00000000-0000-0000-0000-000000000000";
        nd.u.system.fw_vendor = read_into(&r, dmi, "bios_vendor");
        nd.u.system.fw_version = read_into(&r, dmi, "bios_version");
        nd.u.system.fw_date = read_into(&r, dmi, "bios_date");
        break;
    case RV_NODEDEV_PCI:
        sscanf(nd.name, "pci_%x_%x_%x_%x", &nd.u.pci.domain, &nd.u.pci.bus, &nd.u.pci.slot,
               &nd.u.pci.function);
        nd.u.pci.cls = read_into(&r, nd.path, "class");
        nd.u.pci.vendor = read_into(&r, nd.path, "vendor");
        nd.u.pci.product = read_into(&r, nd.path, "device");
        break;
    case RV_NODEDEV_NET: {
        const char *speed = read_into(&r, nd.path, "speed");
        nd.u.net.iface = strrchr(nd.path, '/') + 1;
        nd.u.net.address = read_into(&r, nd.path, "address");
        nd.u.net.state = read_into(&r, nd.path, "operstate");
        /* "-1" when unknown: libvirt shows it as an unsigned int. */
        nd.u.net.has_speed = speed != NULL;
        nd.u.net.speed = speed ? (unsigned int)strtol(speed, NULL, 10) : 0;
        break;
    }
    case RV_NODEDEV_SCSI_HOST:
        break;
    }
    char *xml = rv_nodedev_format(&nd);
    for (size_t i = 0; i < r.n; i++)
        free(r.v[i]);
    return xml;
}

/* ---- the slots ---- */

/* The host's devices into l, once flags are checked (as libvirtd's func). */
static int scan_for(unsigned int flags, unsigned int known, const char *func, rv_obj_list *l,
                    rv_err *err)
{
    return rv_qemu_check_flags(RV_FROM_NODEDEV, flags, known, func, err) < 0 ? -1 : scan(l, err);
}

int rv_qemu_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                                rv_node_num_of_devices_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { 0 };
    int rc = -1;
    if (scan_for(args->flags, 0, "nodeNumOfDevices", &l, err) == 0) {
        ret->num = rv_nodedev_count(&l, dev_of, args->cap ? *args->cap : NULL);
        rc = 0;
    }
    list_free(&l);
    return rc;
}

int rv_qemu_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                              rv_node_list_devices_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { 0 };
    int rc = -1;
    if (scan_for(args->flags, 0, "nodeListDevices", &l, err) == 0)
        rc = rv_nodedev_list_names(&l, dev_of, args->cap ? *args->cap : NULL, args->maxnames,
                                   &ret->names.names_val, &ret->names.names_len, err);
    list_free(&l);
    return rc;
}

int rv_qemu_connect_list_all_node_devices(rv_driver_conn *c,
                                          const rv_connect_list_all_node_devices_args *args,
                                          rv_connect_list_all_node_devices_ret *ret, rv_err *err)
{
    (void)c;
    /* The capability bits, and INACTIVE (1 << 30) / ACTIVE (1 << 31): every
     * device here is active. */
    bool none = (args->flags & (3u << 30)) == (1u << 30);      /* inactive ones only */
    rv_obj_list l = { 0 };
    int rc = -1;
    if (scan_for(args->flags, 0x3fffffu | (3u << 30), "connectListAllNodeDevices", &l, err) == 0)
        rc = rv_nodedev_list_all(&l, dev_of, args->flags & 0x3fffffu, !none, args->need_results,
                                 ret, err);
    list_free(&l);
    return rc;
}

/* The device name names, in l (scanned), or NULL with err set. */
static const dev *lookup(rv_obj_list *l, const char *name, rv_err *err)
{
    if (scan(l, err) < 0)
        return NULL;
    return rv_obj_get_name(l, name, err);
}

int rv_qemu_nodedev_exists(const char *name, rv_err *err)
{
    rv_obj_list l = { 0 };
    int rc = lookup(&l, name, err) ? 0 : -1;
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_lookup_by_name(rv_driver_conn *c,
                                       const rv_node_device_lookup_by_name_args *args,
                                       rv_node_device_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    int rc = rv_qemu_nodedev_exists(args->name, err);
    if (rc == 0 && !(ret->dev.name = strdup(args->name)))
        rc = oom(err);
    return rc;
}

int rv_qemu_node_device_get_xml_desc(rv_driver_conn *c,
                                     const rv_node_device_get_xml_desc_args *args,
                                     rv_node_device_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { 0 };
    const dev *d = NULL;
    int rc = rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0, "nodeDeviceGetXMLDesc", err);
    if (rc == 0 && !(d = lookup(&l, args->name, err)))
        rc = -1;
    if (rc == 0 && !(ret->xml = format_dev(d)))
        rc = oom(err);
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_get_parent(rv_driver_conn *c, const rv_node_device_get_parent_args *args,
                                   rv_node_device_get_parent_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { 0 };
    const dev *d = lookup(&l, args->name, err);
    int rc = d ? rv_nodedev_put_parent(&d->nd, RV_FROM_NODEDEV, &ret->parentName, err) : -1;
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_num_of_caps(rv_driver_conn *c, const rv_node_device_num_of_caps_args *args,
                                    rv_node_device_num_of_caps_ret *ret, rv_err *err)
{
    (void)c;
    ret->num = 1;
    return rv_qemu_nodedev_exists(args->name, err);
}

int rv_qemu_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                                  rv_node_device_list_caps_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { 0 };
    const dev *d = lookup(&l, args->name, err);
    int rc = d ? rv_nodedev_list_caps(&d->nd, RV_FROM_NODEDEV, args->maxnames,
                                      &ret->names.names_val, &ret->names.names_len, err)
               : -1;
    list_free(&l);
    return rc;
}

/* ---- host interfaces (libvirtd's interface driver, udev backend): every
 * /sys/class/net entry, active when its operstate is "up" (lo's is
 * "unknown": inactive, as libvirtd lists it). ---- */

/* An error of the host interface calls, in libvirtd's interface domain. */
static int iface_fail(rv_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int iface_fail(rv_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, RV_FROM_INTERFACE, code, fmt, ap);
    va_end(ap);
    return -1;
}

/* Fills dir with the sysfs directory of the interface called name, or
 * fails with libvirtd's "not found". */
static int iface_dir(const char *name, char *dir, size_t size, rv_err *err)
{
    if (strchr(name, '/') || strlen(name) > 255 || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0 ||
        (snprintf(dir, size, "/sys/class/net/%s", name), access(dir, F_OK) < 0))
        return iface_fail(err, RV_ERR_NO_INTERFACE,
                          "Interface not found: couldn't find interface named '%s'", name);
    return 0;
}

static bool iface_up(const char *name)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "/sys/class/net/%s", name);
    char *state = read_line(dir, "operstate");
    bool up = state && strcmp(state, "up") == 0;
    free(state);
    return up;
}

/* The wire form of the interface name whose sysfs directory is dir. */
static int iface_put(const char *name, const char *dir, rv_nonnull_interface *out, rv_err *err)
{
    out->name = strdup(name);
    out->mac = read_line(dir, "address");
    if (!out->mac)
        out->mac = strdup("");
    return out->name && out->mac ? 0 : oom(err);     /* the dispatcher frees what was set */
}

/* An interface as LIST_ALL_INTERFACES filters it (its name first). */
typedef struct iface {
    char *name;
    bool up;
} iface;

static const char *iface_name(const void *obj)
{
    return ((const iface *)obj)->name;
}

static unsigned int iface_state(const void *obj)
{
    return rv_obj_state(((const iface *)obj)->up, true, false);
}

static const rv_obj_kind iface_kind = {
    .what = "interface", .whats = "interfaces", .from = RV_FROM_NODEDEV,
    .name_of = iface_name, .state_of = iface_state,
};

static void iface_free(void *obj)
{
    free(((iface *)obj)->name);
    free(obj);
}

static int iface_to_wire(const void *obj, void *w, rv_err *err)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "/sys/class/net/%s", iface_name(obj));
    return iface_put(iface_name(obj), dir, w, err);
}

/* The host's interfaces (at most MAX_DEVS) into l. */
static int iface_scan(rv_obj_list *l, rv_err *err)
{
    DIR *d = opendir("/sys/class/net");
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && d && (e = readdir(d)) && l->n < MAX_DEVS) {
        if (e->d_name[0] == '.' || strlen(e->d_name) > 255)
            continue;
        iface *i = calloc(1, sizeof(*i));
        if (!i || !(i->name = strdup(e->d_name)))
            rc = oom(err);
        else
            i->up = iface_up(i->name);
        if (rc < 0 || rv_obj_add(l, i, err) < 0) {
            if (i)
                iface_free(i);
            rc = -1;
        }
    }
    if (d)
        closedir(d);
    return rc;
}

int rv_qemu_connect_list_all_interfaces(rv_driver_conn *c,
                                        const rv_connect_list_all_interfaces_args *args,
                                        rv_connect_list_all_interfaces_ret *ret, rv_err *err)
{
    (void)c;
    rv_obj_list l = { .max = MAX_DEVS, .kind = &iface_kind };
    int rc = -1;
    /* flags: INACTIVE 1, ACTIVE 2 (the list's own); none or both: all. */
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0x3, "connectListAllInterfaces",
                            err) == 0 && iface_scan(&l, err) == 0)
        rc = rv_obj_list_all(&l, args->flags, args->need_results, sizeof(rv_nonnull_interface),
                             iface_to_wire, (void **)&ret->ifaces.ifaces_val,
                             &ret->ifaces.ifaces_len, &ret->ret, err);
    rv_obj_clear(&l, iface_free);
    return rc;
}

int rv_qemu_interface_is_active(rv_driver_conn *c, const rv_interface_is_active_args *args,
                                rv_interface_is_active_ret *ret, rv_err *err)
{
    (void)c;
    char dir[512];
    if (iface_dir(args->iface.name, dir, sizeof(dir), err) < 0)
        return -1;
    ret->active = iface_up(args->iface.name);
    return 0;
}

/* The interface called name, as libvirtd's udev backend answers it. */
static int iface_by_name(const char *name, rv_nonnull_interface *out, rv_err *err)
{
    char dir[512];
    return iface_dir(name, dir, sizeof(dir), err) < 0 ? -1 : iface_put(name, dir, out, err);
}

int rv_qemu_interface_lookup_by_name(rv_driver_conn *c,
                                     const rv_interface_lookup_by_name_args *args,
                                     rv_interface_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    return iface_by_name(args->name, &ret->iface, err);
}

int rv_qemu_interface_lookup_by_mac_string(rv_driver_conn *c,
                                           const rv_interface_lookup_by_mac_string_args *args,
                                           rv_interface_lookup_by_mac_string_ret *ret,
                                           rv_err *err)
{
    (void)c;
    DIR *d = opendir("/sys/class/net");
    if (!d)
        return iface_fail(err, RV_ERR_NO_INTERFACE,
                          "Interface not found: couldn't find interface with MAC "
                          "address '%s'", args->mac);
    char found[256] = "";
    int matches = 0;
    struct dirent *e;
    while ((e = readdir(d)) && matches < 2) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(found))
            continue;
        char dir[512];
        snprintf(dir, sizeof(dir), "/sys/class/net/%s", e->d_name);
        char *mac = read_line(dir, "address");
        /* udev compares the text as given, case and all. */
        if (mac && strcmp(mac, args->mac) == 0 && matches++ == 0)
            snprintf(found, sizeof(found), "%s", e->d_name);
        free(mac);
    }
    closedir(d);
    if (matches == 0)
        return iface_fail(err, RV_ERR_NO_INTERFACE,
                          "Interface not found: couldn't find interface with MAC "
                          "address '%s'", args->mac);
    if (matches > 1)
        return iface_fail(err, RV_ERR_MULTIPLE_INTERFACES,
                          "multiple matching interfaces found: the MAC address '%s' "
                          "matches multiple interfaces", args->mac);
    return iface_by_name(found, &ret->iface, err);
}

/* The interface's XML as libvirtd's udev backend writes a plain device:
 * its MTU, link state (and speed when the kernel knows it) and MAC. */
int rv_qemu_interface_get_xml_desc(rv_driver_conn *c, const rv_interface_get_xml_desc_args *args,
                                   rv_interface_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    /* flags: INACTIVE (1), the same description. */
    if (args->flags & ~0x1u)
        return iface_fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s",
                          args->flags & ~0x1u, "udevInterfaceGetXMLDesc");
    char dir[512];
    if (iface_dir(args->iface.name, dir, sizeof(dir), err) < 0)
        return -1;
    char *mtu = read_line(dir, "mtu"), *state = read_line(dir, "operstate");
    char *speed = read_line(dir, "speed"), *mac = read_line(dir, "address");
    char speed_attr[32] = "";
    long long mbps = speed ? strtoll(speed, NULL, 10) : 0;
    /* libvirt keeps the speed unsigned: -1 (unknown) prints as 4294967295. */
    if (mbps != 0)
        snprintf(speed_attr, sizeof(speed_attr), " speed='%u'", (unsigned)mbps);
    int n = asprintf(&ret->xml,
                     "<interface type='ethernet' name='%s'>\n"
                     "  <mtu size='%s'/>\n"
                     "  <link%s state='%s'/>\n"
                     "  <mac address='%s'/>\n"
                     "</interface>\n",
                     args->iface.name, mtu ? mtu : "0", speed_attr, state ? state : "unknown",
                     mac ? mac : "");
    free(mtu);
    free(state);
    free(speed);
    free(mac);
    if (n < 0) {
        ret->xml = NULL;
        return oom(err);
    }
    return 0;
}
