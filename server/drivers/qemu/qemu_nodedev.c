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

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_nodedev.h"

/* More than any host here has; a listing stops there. */
enum { MAX_DEVS = 2048 };

typedef enum { DEV_SYSTEM, DEV_PCI, DEV_NET } dev_kind;

static const struct {
    const char *word;
    unsigned int flag;
} kinds[] = {
    [DEV_SYSTEM] = { "system", RV_LIST_NODEDEV_CAP_SYSTEM },
    [DEV_PCI] = { "pci", RV_LIST_NODEDEV_CAP_PCI_DEV },
    [DEV_NET] = { "net", RV_LIST_NODEDEV_CAP_NET },
};

typedef struct dev {
    dev_kind kind;
    char *name;
    char *sys;          /* the sysfs directory (real path); NULL for computer */
    char *parent;       /* NULL for computer */
} dev;

typedef struct dev_list {
    dev *v;
    size_t n;
} dev_list;

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NODEDEV, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static void list_free(dev_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].sys);
        free(l->v[i].parent);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* The first line of a small sysfs file, or NULL. */
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

static int add(dev_list *l, dev_kind kind, char *name, char *sys, rv_err *err)
{
    if (!name || (sys == NULL && kind != DEV_SYSTEM)) {
        free(name);
        free(sys);
        return oom(err);
    }
    if (l->n >= MAX_DEVS) {
        free(name);
        free(sys);
        return 0;
    }
    dev *grown = realloc(l->v, (l->n + 1) * sizeof(*grown));
    if (!grown) {
        free(name);
        free(sys);
        return oom(err);
    }
    l->v = grown;
    dev *d = &l->v[l->n++];
    d->kind = kind;
    d->name = name;
    d->sys = sys;
    d->parent = NULL;
    if (sys && !(d->parent = parent_of(sys)))
        return oom(err);
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

static int scan(dev_list *l, rv_err *err)
{
    if (add(l, DEV_SYSTEM, strdup("computer"), NULL, err) < 0)
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
        if (name && add(l, DEV_PCI, name, realpath(path, NULL), err) < 0) {
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
        if (add(l, DEV_NET, name, realpath(path, NULL), err) < 0) {
            closedir(d);
            return -1;
        }
    }
    if (d)
        closedir(d);
    return 0;
}

static const dev *find(const dev_list *l, const char *name, rv_err *err)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    fail(err, RV_ERR_NO_NODE_DEVICE, "Node device not found: no node device with matching name '%s'",
         name);
    return NULL;
}

/* Whether d is listed under the capability word cap (NULL: all). */
static bool has_cap_word(const dev *d, char *const *cap)
{
    return !cap || strcmp(kinds[d->kind].word, *cap) == 0;
}

/* ---- XML ---- */

static void put_text(FILE *fp, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '\'': fputs("&apos;", fp); break;
        default:
            fputc(isprint((unsigned char)*s) ? *s : '?', fp);
        }
    }
}

/* <tag>value of dir/file</tag> when the file can be read (and for the
 * uuid, when nothing else could: libvirt's zeros). */
static bool put_file(FILE *fp, const char *indent, const char *tag, const char *dir,
                     const char *file)
{
    char *v = read_line(dir, file);
    if (!v)
        return false;
    fprintf(fp, "%s<%s>", indent, tag);
    put_text(fp, v);
    fprintf(fp, "</%s>\n", tag);
    free(v);
    return true;
}

static void format_system(FILE *fp)
{
    static const char dmi[] = "/sys/class/dmi/id";
    fputs("  <capability type='system'>\n    <hardware>\n", fp);
    put_file(fp, "      ", "vendor", dmi, "sys_vendor");
    put_file(fp, "      ", "version", dmi, "product_version");
    put_file(fp, "      ", "serial", dmi, "product_serial");
    if (!put_file(fp, "      ", "uuid", dmi, "product_uuid"))
        fputs("      <uuid>00000000-0000-0000-0000-000000000000</uuid>\n", fp);
    fputs("    </hardware>\n    <firmware>\n", fp);
    put_file(fp, "      ", "vendor", dmi, "bios_vendor");
    put_file(fp, "      ", "version", dmi, "bios_version");
    put_file(fp, "      ", "release_date", dmi, "bios_date");
    fputs("    </firmware>\n  </capability>\n", fp);
}

static void format_pci(FILE *fp, const dev *d)
{
    unsigned dom = 0, bus = 0, slot = 0, fn = 0;
    sscanf(d->name, "pci_%x_%x_%x_%x", &dom, &bus, &slot, &fn);
    char *cls = read_line(d->sys, "class"), *vendor = read_line(d->sys, "vendor"),
         *product = read_line(d->sys, "device");
    fputs("  <capability type='pci'>\n", fp);
    if (cls) {
        fputs("    <class>", fp);
        put_text(fp, cls);
        fputs("</class>\n", fp);
    }
    fprintf(fp, "    <domain>%u</domain>\n    <bus>%u</bus>\n    <slot>%u</slot>\n"
                "    <function>%u</function>\n", dom, bus, slot, fn);
    fputs("    <product id='", fp);
    put_text(fp, product ? product : "0x0000");
    fputs("'/>\n    <vendor id='", fp);
    put_text(fp, vendor ? vendor : "0x0000");
    fputs("'/>\n  </capability>\n", fp);
    free(cls);
    free(vendor);
    free(product);
}

static void format_net(FILE *fp, const dev *d)
{
    const char *iface = strrchr(d->sys, '/') + 1;
    char *mac = read_line(d->sys, "address"), *state = read_line(d->sys, "operstate"),
         *speed = read_line(d->sys, "speed");
    fputs("  <capability type='net'>\n    <interface>", fp);
    put_text(fp, iface);
    fputs("</interface>\n", fp);
    if (mac) {
        fputs("    <address>", fp);
        put_text(fp, mac);
        fputs("</address>\n", fp);
    }
    fputs("    <link", fp);
    if (speed) /* "-1" when unknown: libvirt shows it as an unsigned int */
        fprintf(fp, " speed='%u'", (unsigned)strtol(speed, NULL, 10));
    fputs(" state='", fp);
    put_text(fp, state ? state : "unknown");
    fputs("'/>\n    <capability type='80203'/>\n  </capability>\n", fp);
    free(mac);
    free(state);
    free(speed);
}

static char *format_dev(const dev *d)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fputs("<device>\n  <name>", fp);
    put_text(fp, d->name);
    fputs("</name>\n", fp);
    if (d->sys) {
        fputs("  <path>", fp);
        put_text(fp, d->sys);
        fputs("</path>\n  <parent>", fp);
        put_text(fp, d->parent);
        fputs("</parent>\n", fp);
        char link[4096], drv[4096];
        snprintf(link, sizeof(link), "%s/driver", d->sys);
        ssize_t n = readlink(link, drv, sizeof(drv) - 1);
        if (n > 0) {
            drv[n] = '\0';
            fputs("  <driver>\n    <name>", fp);
            put_text(fp, strrchr(drv, '/') ? strrchr(drv, '/') + 1 : drv);
            fputs("</name>\n  </driver>\n", fp);
        }
    }
    if (d->kind == DEV_SYSTEM)
        format_system(fp);
    else if (d->kind == DEV_PCI)
        format_pci(fp, d);
    else
        format_net(fp, d);
    fputs("</device>\n", fp);
    if (fclose(fp) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- the slots ---- */

int rv_qemu_node_num_of_devices(rv_driver_conn *c, const rv_node_num_of_devices_args *args,
                                rv_node_num_of_devices_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0, "nodeNumOfDevices", err) < 0 || scan(&l, err) < 0) {
        list_free(&l);
        return -1;
    }
    ret->num = 0;
    for (size_t i = 0; i < l.n; i++)
        ret->num += has_cap_word(&l.v[i], args->cap);
    list_free(&l);
    return 0;
}

int rv_qemu_node_list_devices(rv_driver_conn *c, const rv_node_list_devices_args *args,
                              rv_node_list_devices_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
    if (args->maxnames < 0 || args->maxnames > RV_NODE_DEVICE_LIST_MAX)
        return fail(err, RV_ERR_RPC, "maxnames %d is outside 0..%d", args->maxnames,
                    RV_NODE_DEVICE_LIST_MAX);
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0, "nodeListDevices", err) < 0 || scan(&l, err) < 0 ||
        !(ret->names.names_val = calloc(l.n + 1, sizeof(char *)))) {
        int rc = err->code ? -1 : oom(err);
        list_free(&l);
        return rc;
    }
    for (size_t i = 0; i < l.n && ret->names.names_len < (u_int)args->maxnames; i++)
        if (has_cap_word(&l.v[i], args->cap)) {
            ret->names.names_val[ret->names.names_len++] = l.v[i].name;
            l.v[i].name = NULL;         /* moved */
        }
    list_free(&l);
    return 0;
}

int rv_qemu_connect_list_all_node_devices(rv_driver_conn *c,
                                          const rv_connect_list_all_node_devices_args *args,
                                          rv_connect_list_all_node_devices_ret *ret, rv_err *err)
{
    (void)c;
    /* The capability bits, and INACTIVE (1 << 30) / ACTIVE (1 << 31): every
     * device here is active. */
    unsigned int caps = args->flags & 0x3fffffu;
    bool none = (args->flags & (3u << 30)) == (1u << 30);      /* inactive ones only */
    dev_list l = { 0 };
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0x3fffffu | (3u << 30), "connectListAllNodeDevices", err) < 0 ||
        scan(&l, err) < 0) {
        list_free(&l);
        return -1;
    }
    u_int k = 0;
    for (size_t i = 0; i < l.n; i++)
        k += !none && (!caps || (kinds[l.v[i].kind].flag & caps));
    ret->ret = k;
    if (args->need_results && k &&
        !(ret->devices.devices_val = calloc(k, sizeof(rv_nonnull_node_device)))) {
        list_free(&l);
        return oom(err);
    }
    for (size_t i = 0; args->need_results && i < l.n && ret->devices.devices_len < k; i++)
        if (!caps || (kinds[l.v[i].kind].flag & caps)) {
            ret->devices.devices_val[ret->devices.devices_len++].name = l.v[i].name;
            l.v[i].name = NULL;
        }
    list_free(&l);
    return 0;
}

/* The device name names, in l (scanned), or NULL with err set. */
static const dev *lookup(dev_list *l, const char *name, rv_err *err)
{
    if (scan(l, err) < 0)
        return NULL;
    return find(l, name, err);
}

int rv_qemu_nodedev_exists(const char *name, rv_err *err)
{
    dev_list l = { 0 };
    int rc = lookup(&l, name, err) ? 0 : -1;
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_lookup_by_name(rv_driver_conn *c,
                                       const rv_node_device_lookup_by_name_args *args,
                                       rv_node_device_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
    int rc = lookup(&l, args->name, err) ? 0 : -1;
    if (rc == 0 && !(ret->dev.name = strdup(args->name)))
        rc = oom(err);
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_get_xml_desc(rv_driver_conn *c,
                                     const rv_node_device_get_xml_desc_args *args,
                                     rv_node_device_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
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
    dev_list l = { 0 };
    const dev *d = lookup(&l, args->name, err);
    int rc = d ? 0 : -1;
    if (d && d->parent) {
        if (!(ret->parentName = malloc(sizeof(*ret->parentName))) ||
            !(*ret->parentName = strdup(d->parent)))
            rc = oom(err);              /* the dispatcher frees the holder */
    }
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_num_of_caps(rv_driver_conn *c, const rv_node_device_num_of_caps_args *args,
                                    rv_node_device_num_of_caps_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
    int rc = lookup(&l, args->name, err) ? 0 : -1;
    ret->num = 1;
    list_free(&l);
    return rc;
}

int rv_qemu_node_device_list_caps(rv_driver_conn *c, const rv_node_device_list_caps_args *args,
                                  rv_node_device_list_caps_ret *ret, rv_err *err)
{
    (void)c;
    dev_list l = { 0 };
    const dev *d = lookup(&l, args->name, err);
    int rc = d ? 0 : -1;
    if (d && args->maxnames > 0) {
        if (!(ret->names.names_val = calloc(2, sizeof(char *))) ||
            !(ret->names.names_val[0] = strdup(kinds[d->kind].word)))
            rc = oom(err);
        else
            ret->names.names_len = 1;
    }
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

int rv_qemu_connect_list_all_interfaces(rv_driver_conn *c,
                                        const rv_connect_list_all_interfaces_args *args,
                                        rv_connect_list_all_interfaces_ret *ret, rv_err *err)
{
    (void)c;
    /* flags: INACTIVE 1, ACTIVE 2; none or both: all. */
    if (rv_qemu_check_flags(RV_FROM_NODEDEV, args->flags, 0x3, "connectListAllInterfaces", err) < 0)
        return -1;
    DIR *d = opendir("/sys/class/net");
    if (!d)
        return 0;
    struct dirent *e;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) && ret->ret < MAX_DEVS) {
        if (e->d_name[0] == '.' || strlen(e->d_name) > 255)
            continue;
        bool up = iface_up(e->d_name);
        if ((args->flags == 1 && up) || (args->flags == 2 && !up))
            continue;
        ret->ret++;
        if (!args->need_results)
            continue;
        if (ret->ifaces.ifaces_len == cap) {
            cap = cap ? cap * 2 : 8;
            rv_nonnull_interface *grown = realloc(ret->ifaces.ifaces_val, cap * sizeof(*grown));
            if (!grown) {
                rc = oom(err);
                break;
            }
            ret->ifaces.ifaces_val = grown;
        }
        char dir[512];
        snprintf(dir, sizeof(dir), "/sys/class/net/%s", e->d_name);
        rv_nonnull_interface *w = &ret->ifaces.ifaces_val[ret->ifaces.ifaces_len++];
        w->name = strdup(e->d_name);
        w->mac = read_line(dir, "address");
        if (!w->mac)
            w->mac = strdup("");
        if (!w->name || !w->mac)
            rc = oom(err);          /* the dispatcher frees what was set */
    }
    closedir(d);
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
    if (iface_dir(name, dir, sizeof(dir), err) < 0)
        return -1;
    out->name = strdup(name);
    out->mac = read_line(dir, "address");
    if (!out->mac)
        out->mac = strdup("");
    return out->name && out->mac ? 0 : oom(err);     /* the dispatcher frees what was set */
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
