/* Domain XML for the QEMU driver: parse the subset (see domain_xml.h),
 * normalise, format.  libxml2's tree API; every element and attribute is
 * checked against what this file knows, so nothing is silently lost. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/domain_xml.h"
#include "server/drivers/qemu/domain_xml_priv.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

RV_LOG_CATEGORY("drivers.qemu.xml");

#define XML_FAIL(code, ...) \
    do { \
        rv_err_set(err, RV_FROM_DOM, (code), __VA_ARGS__); \
        return -1; \
    } while (0)
#define UNSUPPORTED(...) XML_FAIL(RV_ERR_CONFIG_UNSUPPORTED, __VA_ARGS__)
#define BAD_XML(...) XML_FAIL(RV_ERR_XML_ERROR, __VA_ARGS__)

static const char *node_name(const xmlNode *n)
{
    return (const char *)n->name;
}

static bool named(const xmlNode *n, const char *name)
{
    return strcmp(node_name(n), name) == 0;
}

/* The XML words of the enums, indexed by value: the parser looks a word up
 * (word_index) and the formatter writes it back from the same table. */
static const char *const virt_type_words[] = { "kvm", "qemu", NULL };
static const char *const bus_words[] = { "virtio", "sata", "ide", "scsi", NULL };
static const char *const net_type_words[] = { "user", "bridge", "network", NULL };
static const char *const net_driver_words[] = { "qemu", "vhost", NULL };
static const char *const link_state_words[] = { "up", "down", NULL };

/* word's index in words (NULL-terminated), or -1; a NULL word is -1 too. */
static int word_index(const char *word, const char *const *words)
{
    for (int i = 0; word && words[i]; i++)
        if (strcmp(word, words[i]) == 0)
            return i;
    return -1;
}

/* Every attribute of n is in allowed (NULL-terminated). */
static int check_attrs(const xmlNode *n, const char *const *allowed, rv_err *err)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        bool known = false;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = a->ns == NULL && strcmp((const char *)a->name, allowed[i]) == 0;
        if (!known)
            UNSUPPORTED("unsupported attribute '%s' of element <%s>", (const char *)a->name,
                        node_name(n));
    }
    return 0;
}

/* Child elements only; text that is not blank inside a container and any
 * other node kind (entity references cannot occur: no DTD) are errors. */
static int next_child(const xmlNode *parent, const xmlNode **cursor, rv_err *err)
{
    const xmlNode *c = *cursor ? (*cursor)->next : parent->children;
    for (; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE) {
            /* <domain>'s children in libvirt's QEMU namespace are read by
             * parse_qemu_ns; any other namespace is refused. */
            bool qemu_ns = c->ns && c->ns->href && !parent->parent->parent &&
                           strcmp((const char *)c->ns->href, RV_QEMU_XMLNS) == 0;
            if (c->ns && c->ns->href && !qemu_ns)
                UNSUPPORTED("unsupported element <%s> in namespace '%s'", node_name(c),
                            (const char *)c->ns->href);
            *cursor = c;
            return 1;
        }
        if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
            continue;
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            for (const xmlChar *p = c->content; p && *p; p++)
                if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                    BAD_XML("unexpected text inside <%s>", node_name(parent));
            continue;
        }
        BAD_XML("unexpected content inside <%s>", node_name(parent));
    }
    return 0;
}

/* An element that holds only text (and no attributes beyond allowed):
 * its trimmed text, malloc'd. */
static int text_of(const xmlNode *n, const char *const *allowed, char **out, rv_err *err)
{
    static const char *const none[] = { NULL };
    if (check_attrs(n, allowed ? allowed : none, err) < 0)
        return -1;
    for (const xmlNode *c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            UNSUPPORTED("unsupported element <%s> in <%s>", node_name(c), node_name(n));
    xmlChar *raw = xmlNodeGetContent(n);
    const char *s = raw ? (const char *)raw : "";
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
        len--;
    *out = strndup(s, len);
    xmlFree(raw);
    if (!*out)
        XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* Attribute name of n, malloc'd, or NULL when absent. */
static char *attr(const xmlNode *n, const char *name)
{
    xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);
    if (!v)
        return NULL;
    char *copy = strdup((const char *)v);
    xmlFree(v);
    return copy;
}

/* Every byte of s is in allowed (a set of characters). */
static bool only_chars(const char *s, const char *allowed)
{
    return s[strspn(s, allowed)] == '\0';
}

static int attr_word(const xmlNode *n, const char *name, const char *const *words, rv_err *err);
static int empty_element(const xmlNode *n, const char *const *attrs, rv_err *err);

#define LOWER "abcdefghijklmnopqrstuvwxyz"
#define ALNUM LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static int parse_ull(const char *text, unsigned long long *out)
{
    if (!text || !*text || *text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* <vcpus>, as a running domain's XML lists its vcpus once one was hot
 * (un)plugged: <vcpu id= enabled= hotpluggable= order=/> each.  Only
 * which are not hotpluggable is kept (boot_vcpus); the count on is
 * <vcpu current>. */
static int parse_vcpus(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const attrs[] = { "id", "enabled", "hotpluggable", "order", NULL };
    static const char *const yes_no[] = { "yes", "no", NULL }, *const none[] = { NULL };
    if (check_attrs(n, none, err) < 0)
        return -1;
    unsigned count = 0, fixed = 0;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (!named(c, "vcpu"))
            UNSUPPORTED("unsupported element <%s> in <vcpus>", node_name(c));
        if (++count > RV_QEMU_MAX_VCPUS)
            BAD_XML("more than %d <vcpu> in <vcpus>", RV_QEMU_MAX_VCPUS);
        if (empty_element(c, attrs, err) < 0 || attr_word(c, "enabled", yes_no, err) < 0)
            return -1;
        int hotpluggable = attr_word(c, "hotpluggable", yes_no, err);
        if (hotpluggable < 0)
            return -1;
        fixed += hotpluggable == 1;     /* "no" */
    }
    if (more < 0)
        return -1;
    if (fixed == 0 || (def->vcpus && fixed > def->vcpus))
        BAD_XML("<vcpus> must list from 1 to the maximum of vcpus that are not hotpluggable");
    def->boot_vcpus = fixed;
    return 0;
}

/* <memory unit='...'>N</memory> (and the like) in KiB: only its unit
 * attribute and text, read as libvirt reads them (conf/domain_xml.c). */
static int parse_memory(const xmlNode *n, unsigned long long *kib, rv_err *err)
{
    static const char *const allowed[] = { "unit", NULL };
    char *text = NULL;
    if (text_of(n, allowed, &text, err) < 0)
        return -1;
    free(text);
    return rv_domain_parse_memory(n, node_name(n), kib, err);
}

/* The actions the driver runs (read by conf/domain_xml.c): destroy,
 * restart and preserve, but a reboot cannot be preserved. */
static int check_action(const char *elname, int action, rv_err *err)
{
    if (action == RV_QEMU_ACTION_DESTROY || action == RV_QEMU_ACTION_RESTART ||
        (action == RV_QEMU_ACTION_PRESERVE && strcmp(elname, "on_reboot") != 0))
        return 0;
    UNSUPPORTED("unsupported <%s> action '%s'", elname, rv_domain_action_words[action]);
}

/* <bios useserial='yes|no' rebootTimeout='N'>, libvirt's bounds. */
static int parse_bios(const xmlNode *c, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const attrs[] = { "useserial", "rebootTimeout", NULL };
    if (def->bios_useserial >= 0 || def->reboot_timeout != RV_QEMU_NO_REBOOT_TIMEOUT)
        BAD_XML("more than one <bios> in <os>");
    if (empty_element(c, attrs, err) < 0)
        return -1;
    char *useserial = attr(c, "useserial"), *rt = attr(c, "rebootTimeout");
    int rc = 0;
    static const char *const no_yes[] = { "no", "yes", NULL };
    if (useserial && (def->bios_useserial = word_index(useserial, no_yes)) < 0) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                   "XML error: Invalid value for attribute 'useserial' in element 'bios': '%s'.",
                   useserial);
        rc = -1;
    }
    char *end = NULL;
    long v = rt ? strtol(rt, &end, 10) : 0;
    if (rc == 0 && rt) {
        if (end == rt || *end || v < -1 || v > 65535) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                       "XML error: invalid value for rebootTimeout, must be in range [-1,65535]");
            rc = -1;
        } else {
            def->reboot_timeout = (int)v;
        }
    }
    free(useserial);
    free(rt);
    return rc;
}

static int parse_os(const xmlNode *os, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const type_attrs[] = { "arch", "machine", NULL };
    static const char *const boot_attrs[] = { "dev", NULL };
    static const char *const none[] = { NULL };
    if (check_attrs(os, none, err) < 0)
        return -1;
    bool have_type = false;
    size_t nboot = 0;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(os, &c, err)) > 0) {
        if (named(c, "type")) {
            char *text = NULL;
            if (have_type)
                BAD_XML("more than one <type> in <os>");
            have_type = true;
            if (text_of(c, type_attrs, &text, err) < 0)
                return -1;
            bool hvm = strcmp(text, "hvm") == 0;
            if (!hvm) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported OS type '%s' (only hvm)", text);
                free(text);
                return -1;
            }
            free(text);
        } else if (named(c, "boot")) {
            if (check_attrs(c, boot_attrs, err) < 0)
                return -1;
            /* The devices were read by conf/domain_xml.c. */
            static const char *const devs[] = { "hd", "cdrom", "network", NULL };
            if (++nboot > RV_DOMAIN_MAX_BOOT)
                BAD_XML("more than %d <boot> elements", RV_DOMAIN_MAX_BOOT);
            char *dev = attr(c, "dev");
            int bd = word_index(dev, devs);
            if (bd < 0) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported boot device '%s'", dev ? dev : "(none)");
                free(dev);
                return -1;
            }
            free(dev);
        } else if (named(c, "kernel") || named(c, "initrd") || named(c, "cmdline")) {
            char **slot = named(c, "kernel") ? &def->kernel
                        : named(c, "initrd") ? &def->initrd : &def->cmdline;
            if (*slot)
                BAD_XML("more than one <%s> in <os>", node_name(c));
            if (text_of(c, NULL, slot, err) < 0)
                return -1;
            if (slot != &def->cmdline && (*slot)[0] != '/')
                BAD_XML("<%s> must be an absolute path, not '%s'", node_name(c), *slot);
        } else if (named(c, "bios")) {
            if (parse_bios(c, def, err) < 0)
                return -1;
        } else {
            UNSUPPORTED("unsupported element <%s> in <os>", node_name(c));
        }
    }
    if (more < 0)
        return -1;
    if (!have_type)
        BAD_XML("<os> has no <type>");
    if ((def->initrd || def->cmdline) && !def->kernel)
        BAD_XML("<%s> in <os> needs a <kernel>", def->initrd ? "initrd" : "cmdline");
    return 0;
}

static int parse_mac(const char *text, unsigned char mac[6])
{
    unsigned v[6];
    char tail;
    if (!text || strlen(text) != 17 ||
        sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (text[i * 3] == '+' || text[i * 3] == '-' || text[i * 3] == ' ')
            return -1;
        mac[i] = (unsigned char)v[i];
    }
    return (mac[0] & 1) ? -1 : 0;     /* a multicast address cannot be a NIC's */
}

static const char *const discard_words[] = { "ignore", "unmap", NULL };
/* The other <driver> attributes, libvirt's words (its order in writing). */
static const char *const cache_words[] = { "default", "none", "writethrough", "writeback",
                                           "directsync", "unsafe", NULL };
static const char *const io_words[] = { "native", "threads", "io_uring", NULL };
static const char *const detect_zeroes_words[] = { "off", "on", "unmap", NULL };
static const char *const copy_on_read_words[] = { "on", "off", NULL };
/* What QEMU does on a failed write (error_policy) or read (rerror_policy). */
static const char *const error_policy_words[] = { "stop", "report", "ignore", "enospace", NULL };
static const char *const rerror_policy_words[] = { "stop", "report", "ignore", NULL };
static const struct driver_attr {
    const char *name;
    const char *const *words;
    size_t offset;
} driver_attrs_kept[] = {
    { "cache", cache_words, offsetof(rv_qemu_disk, cache) },
    { "error_policy", error_policy_words, offsetof(rv_qemu_disk, error_policy) },
    { "rerror_policy", rerror_policy_words, offsetof(rv_qemu_disk, rerror_policy) },
    { "io", io_words, offsetof(rv_qemu_disk, io) },
    { "copy_on_read", copy_on_read_words, offsetof(rv_qemu_disk, copy_on_read) },
    { "discard", discard_words, offsetof(rv_qemu_disk, discard) },
    { "detect_zeroes", detect_zeroes_words, offsetof(rv_qemu_disk, detect_zeroes) },
};

/* The <driver> attributes above into disk (1 + the word's index). */
static int parse_driver_attrs(const xmlNode *c, rv_qemu_disk *disk, rv_err *err)
{
    for (size_t i = 0; i < sizeof(driver_attrs_kept) / sizeof(driver_attrs_kept[0]); i++) {
        const struct driver_attr *a = &driver_attrs_kept[i];
        xmlChar *v = xmlGetNoNsProp(c, (const xmlChar *)a->name);
        bool given = v != NULL;
        xmlFree(v);
        if (!given)
            continue;
        int word = attr_word(c, a->name, a->words, err);
        if (word < 0)
            return -1;
        *(int *)((char *)disk + a->offset) = word + 1;
    }
    return 0;
}

static void format_driver_attrs(FILE *fp, const rv_qemu_disk *d)
{
    for (size_t i = 0; i < sizeof(driver_attrs_kept) / sizeof(driver_attrs_kept[0]); i++) {
        const struct driver_attr *a = &driver_attrs_kept[i];
        int v = *(const int *)((const char *)d + a->offset);
        if (d->iothread && a->offset == offsetof(rv_qemu_disk, detect_zeroes))
            fprintf(fp, " iothread='%u'", d->iothread);
        if (v)
            fprintf(fp, " %s='%s'", a->name, a->words[v - 1]);
    }
}

static int parse_disk(const xmlNode *n, rv_qemu_disk *disk, rv_err *err)
{
    static const char *const disk_attrs[] = { "type", "device", NULL };
    static const char *const driver_attrs[] = { "name", "type", "cache", "io", "discard",
                                                "detect_zeroes", "copy_on_read", "error_policy",
                                                "rerror_policy", "iothread", NULL };
    static const char *const source_attrs[] = { "file", NULL };
    static const char *const volume_source_attrs[] = { "pool", "volume", NULL };
    static const char *const target_attrs[] = { "dev", "bus", NULL };
    static const char *const none[] = { NULL };
    if (check_attrs(n, disk_attrs, err) < 0)
        return -1;
    char *type = attr(n, "type"), *device = attr(n, "device");
    /* A volume of a pool (cockpit's new disk): the pool's file at start. */
    bool volume = type && strcmp(type, "volume") == 0;
    bool file = volume || (type && strcmp(type, "file") == 0);
    bool cdrom = device && strcmp(device, "cdrom") == 0;
    bool plain = !device || strcmp(device, "disk") == 0;
    if (!file || (!cdrom && !plain)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported disk type='%s' device='%s' (only file and volume disks and cdroms)",
                   type ? type : "", device ? device : "disk");
        free(type);
        free(device);
        return -1;
    }
    free(type);
    free(device);
    disk->device = cdrom ? RV_QEMU_DISK_CDROM : RV_QEMU_DISK_DISK;
    char *bus = NULL;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "driver")) {
            if (check_attrs(c, driver_attrs, err) < 0)
                goto fail;
            char *dname = attr(c, "name"), *format = attr(c, "type");
            int bad = (dname && strcmp(dname, "qemu") != 0);
            if (!bad && format && strcmp(format, "qcow2") == 0)
                disk->format = RV_QEMU_FORMAT_QCOW2;
            else if (!bad && (!format || strcmp(format, "raw") == 0))
                disk->format = RV_QEMU_FORMAT_RAW;
            else
                bad = 1;
            if (bad)
                rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported disk driver name='%s' type='%s' (qemu with raw or qcow2)",
                           dname ? dname : "", format ? format : "");
            free(dname);
            free(format);
            if (bad)
                goto fail;
            /* discard='unmap': what virt-manager writes for a new disk;
             * cache='unsafe': libguestfs's. */
            if (parse_driver_attrs(c, disk, err) < 0 ||
                rv_qemu_disk_iothread_attr(c, &disk->iothread, err) < 0)
                goto fail;
        } else if (named(c, "source") && volume) {
            if (check_attrs(c, volume_source_attrs, err) < 0)
                goto fail;
            free(disk->pool);
            free(disk->volume);
            disk->pool = attr(c, "pool");
            disk->volume = attr(c, "volume");
            if (!disk->pool || !*disk->pool || !disk->volume || !*disk->volume) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "a volume <disk> needs a pool and a volume");
                goto fail;
            }
        } else if (named(c, "source")) {
            if (check_attrs(c, source_attrs, err) < 0)
                goto fail;
            free(disk->source);
            disk->source = attr(c, "file");
        } else if (named(c, "target")) {
            if (check_attrs(c, target_attrs, err) < 0)
                goto fail;
            free(disk->target);
            free(bus);
            disk->target = attr(c, "dev");
            bus = attr(c, "bus");
        } else if (named(c, "readonly")) {
            if (check_attrs(c, none, err) < 0)
                goto fail;
            disk->readonly = true;
        } else if (named(c, "backingStore") && !c->properties && !c->children) {
            /* libvirtd's word for "no backing image" (its live and
             * migratable XML): remvirtd reads a chain from the image. */
        } else if (named(c, "iotune")) {
            if (rv_qemu_iotune_parse(c, &disk->iotune, err) < 0)
                goto fail;
        } else if (named(c, "serial")) {
            free(disk->serial);
            disk->serial = NULL;
            if (text_of(c, NULL, &disk->serial, err) < 0)
                goto fail;
            /* libvirt's rule; it also keeps the value clear of QEMU's
             * option syntax. */
            if (strspn(disk->serial, ALNUM " _.+-") != strlen(disk->serial)) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "disk serial (%s) contains invalid characters",
                           disk->serial);
                goto fail;
            }
        } else if (named(c, "address")) {
            xmlChar *atype = xmlGetNoNsProp(c, (const xmlChar *)"type");
            bool drive = atype && strcmp((const char *)atype, "drive") == 0;
            xmlFree(atype);
            if (drive ? rv_qemu_parse_drive_address(c, &disk->drive, err) < 0
                      : rv_qemu_parse_pci_address(c, &disk->addr, err) < 0)
                goto fail;
        } else {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported element <%s> in <disk>", node_name(c));
            goto fail;
        }
    }
    if (more < 0)
        goto fail;
    if (!disk->target || !*disk->target) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "a <disk> has no <target dev='...'>");
        goto fail;
    }
    /* It becomes a QEMU device id. */
    if (strlen(disk->target) < 3 || strlen(disk->target) > 8 || !only_chars(disk->target, LOWER)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                   "invalid disk target '%s' (3 to 8 lowercase letters, as vda)", disk->target);
        goto fail;
    }
    if (!disk->source && !disk->pool && disk->device != RV_QEMU_DISK_CDROM) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "disk '%s' has no <source file='...'>",
                   disk->target);
        goto fail;
    }
    const char *b = bus;
    if (!b)     /* as libvirt: the bus from the target's prefix */
        b = strncmp(disk->target, "vd", 2) == 0 ? "virtio"
            : strncmp(disk->target, "sd", 2) == 0 ? "sata"
            : strncmp(disk->target, "hd", 2) == 0 ? "ide" : "";
    int bus_index = word_index(b, bus_words);
    if (bus_index >= 0)
        disk->bus = (rv_qemu_disk_bus)bus_index;
    else {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported bus '%s' of disk '%s' (virtio, sata, ide or scsi)", b, disk->target);
        goto fail;
    }
    if (disk->drive.set && disk->bus == RV_QEMU_BUS_VIRTIO) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported drive address on %s disk '%s' (only scsi, sata and ide disks take one)", b,
                   disk->target);
        goto fail;
    }
    if (disk->device == RV_QEMU_DISK_CDROM) {
        if (disk->bus == RV_QEMU_BUS_VIRTIO) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                       "cdrom '%s' cannot be on the virtio bus", disk->target);
            goto fail;
        }
        disk->readonly = true;
    }
    free(bus);
    return 0;
fail:
    free(bus);
    return -1;
}

/* <bandwidth>'s <inbound> and <outbound>: each needs an average (or, inbound,
 * a floor); the values are unsigned 32-bit KiB/s and KiB as libvirt's. */
static int parse_bandwidth(const xmlNode *n, rv_tune_bandwidth *bw, rv_err *err)
{
    static const char *const in_attrs[] = { "average", "peak", "burst", "floor", NULL };
    static const char *const out_attrs[] = { "average", "peak", "burst", NULL };
    if (check_attrs(n, (const char *const[]){ NULL }, err) < 0)
        return -1;
    memset(bw, 0, sizeof(*bw));
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        bool in = named(c, "inbound");
        if (!in && !named(c, "outbound"))
            UNSUPPORTED("unsupported element <%s> in <bandwidth>", node_name(c));
        if (in ? bw->has_in : bw->has_out)
            BAD_XML("Only one child <%s> element allowed", node_name(c));
        if (check_attrs(c, in ? in_attrs : out_attrs, err) < 0)
            return -1;
        unsigned int *val = bw->val + (in ? 0 : 4);
        for (int k = 0; k < (in ? 4 : 3); k++) {
            char *text = attr(c, in_attrs[k]);
            unsigned long long v = 0;
            int bad = text && (parse_ull(text, &v) < 0 || v > UINT32_MAX);
            if (bad)
                rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "could not convert bandwidth %s value '%s'",
                           in_attrs[k], text);
            free(text);
            if (bad)
                return -1;
            val[k] = (unsigned int)v;
        }
        if (!val[0] && !(in && val[3]))
            BAD_XML("Missing mandatory average or floor attributes");
        *(in ? &bw->has_in : &bw->has_out) = true;
    }
    return more < 0 ? -1 : 0;
}

/* libvirt's order: average, peak, floor, burst; zeros left out. */
static void format_bandwidth(FILE *fp, const rv_tune_bandwidth *bw)
{
    static const char *const names[] = { "average", "peak", "floor", "burst" };
    static const int in_order[] = { 0, 1, 3, 2 }, out_order[] = { 4, 5, -1, 6 };
    if (!bw->has_in && !bw->has_out)
        return;
    fputs("      <bandwidth>\n", fp);
    for (int dir = 0; dir < 2; dir++) {
        if (!(dir ? bw->has_out : bw->has_in))
            continue;
        fputs(dir ? "        <outbound" : "        <inbound", fp);
        for (int k = 0; k < 4; k++) {
            int i = (dir ? out_order : in_order)[k];
            if (i >= 0 && bw->val[i])
                fprintf(fp, " %s='%u'", names[k], bw->val[i]);
        }
        fputs("/>\n", fp);
    }
    fputs("      </bandwidth>\n", fp);
}

static int parse_interface(const xmlNode *n, rv_qemu_interface *iface, bool *have_mac, rv_err *err)
{
    static const char *const iface_attrs[] = { "type", NULL };
    static const char *const mac_attrs[] = { "address", NULL };
    /* mode: virt-xml writes source.mode=bridge for every NIC (cockpit's
     * Add network interface); libvirtd reads it only for a direct one,
     * and so it is dropped here too. */
    static const char *const source_attrs[] = { "bridge", "mode", NULL };
    /* A network's live XML names its bridge too, as libvirt's does. */
    static const char *const network_source_attrs[] = { "network", "bridge", "mode", NULL };
    static const char *const model_attrs[] = { "type", NULL };
    static const char *const target_attrs[] = { "dev", NULL };
    static const char *const driver_attrs[] = { "name", NULL };
    static const char *const link_attrs[] = { "state", NULL };
    static const char *const models[] = { "virtio", "e1000", "e1000e", "rtl8139", NULL };
    if (check_attrs(n, iface_attrs, err) < 0)
        return -1;
    char *type = attr(n, "type");
    int net_type = word_index(type, net_type_words);
    if (net_type >= 0)
        iface->type = (rv_qemu_net_type)net_type;
    else {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported interface type '%s' (user, bridge or network)", type ? type : "");
        free(type);
        return -1;
    }
    free(type);
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "mac")) {
            if (check_attrs(c, mac_attrs, err) < 0)
                return -1;
            char *mac = attr(c, "address");
            int bad = parse_mac(mac, iface->mac);
            if (bad)
                rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "invalid MAC address '%s'", mac ? mac : "");
            free(mac);
            if (bad)
                return -1;
            *have_mac = true;
        } else if (named(c, "source") && iface->type == RV_QEMU_NET_BRIDGE) {
            if (check_attrs(c, source_attrs, err) < 0)
                return -1;
            free(iface->bridge);
            iface->bridge = attr(c, "bridge");
        } else if (named(c, "source") && iface->type == RV_QEMU_NET_NETWORK) {
            if (check_attrs(c, network_source_attrs, err) < 0)
                return -1;
            free(iface->network);
            free(iface->bridge);
            iface->network = attr(c, "network");
            iface->bridge = attr(c, "bridge");
        } else if (named(c, "bandwidth")) {
            if (parse_bandwidth(c, &iface->bandwidth, err) < 0)
                return -1;
        } else if (named(c, "target")) {
            if (check_attrs(c, target_attrs, err) < 0)
                return -1;
            free(iface->ifname);
            iface->ifname = attr(c, "dev");
        } else if (named(c, "model")) {
            if (check_attrs(c, model_attrs, err) < 0)
                return -1;
            char *model = attr(c, "type");
            bool known = false;
            for (size_t i = 0; models[i] && model && !known; i++)
                known = strcmp(model, models[i]) == 0;
            if (!known) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported interface model '%s'", model ? model : "");
                free(model);
                return -1;
            }
            free(iface->model);
            iface->model = model;
        } else if (named(c, "driver")) {
            /* nova writes name='qemu' for TCG guests. */
            int w;
            if (check_attrs(c, driver_attrs, err) < 0 || (w = attr_word(c, "name", net_driver_words, err)) < 0)
                return -1;
            iface->driver = w + 1;
        } else if (named(c, "link")) {
            /* cockpit's Unplug and Plug. */
            int w;
            if (check_attrs(c, link_attrs, err) < 0 || (w = attr_word(c, "state", link_state_words, err)) < 0)
                return -1;
            iface->link = w + 1;
        } else if (named(c, "address")) {
            if (rv_qemu_parse_pci_address(c, &iface->addr, err) < 0)
                return -1;
        } else {
            UNSUPPORTED("unsupported element <%s> in <interface>", node_name(c));
        }
    }
    if (more < 0)
        return -1;
    if (iface->type == RV_QEMU_NET_BRIDGE && (!iface->bridge || !*iface->bridge))
        BAD_XML("a bridge <interface> has no <source bridge='...'>");
    if (iface->type == RV_QEMU_NET_NETWORK && (!iface->network || !*iface->network))
        BAD_XML("a network <interface> has no <source network='...'>");
    if (iface->bridge && (strlen(iface->bridge) > 15 || !only_chars(iface->bridge, ALNUM "-_.")))
        BAD_XML("invalid bridge name '%s'", iface->bridge);
    if (iface->ifname && (strlen(iface->ifname) > 15 || !*iface->ifname ||
                          !only_chars(iface->ifname, ALNUM "-_.")))
        BAD_XML("invalid interface target dev '%s'", iface->ifname ? iface->ifname : "");
    return 0;
}

/* <serial> or <console> of type pty or file (with <source path='...'>),
 * with an optional <target>: the serial port's number in *port, the file
 * in *file (malloc'd; NULL for a pty). */
static int parse_char(const xmlNode *n, unsigned *port, rv_qemu_chr *chr, rv_err *err)
{
    /* (On failure chr->path may be set: the caller frees it.) */
    static const char *const char_attrs[] = { "type", NULL };
    static const char *const serial_target[] = { "type", "port", NULL };
    static const char *const source_attrs[] = { "path", NULL };
    static const char *const types[] = { "pty", "file", "unix", NULL };
    int type;
    *chr = (rv_qemu_chr){ 0 };
    if (check_attrs(n, char_attrs, err) < 0 || (type = attr_word(n, "type", types, err)) < 0)
        return -1;
    chr->type = (rv_qemu_chr_type)type;
    *port = 0;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "source") && type == RV_QEMU_CHR_UNIX) {
            if (rv_qemu_parse_unix_source(c, &chr->path, &chr->connect, err) < 0)
                return -1;
            continue;
        }
        if (named(c, "source") && type == RV_QEMU_CHR_FILE) {
            if (empty_element(c, source_attrs, err) < 0)
                return -1;
            free(chr->path);
            chr->path = attr(c, "path");
            if (!chr->path || chr->path[0] != '/')
                BAD_XML("a file <%s> needs an absolute <source path='...'>", node_name(n));
            continue;
        }
        if (!named(c, "target"))
            UNSUPPORTED("unsupported element <%s> in <%s>", node_name(c), node_name(n));
        if (check_attrs(c, serial_target, err) < 0)
            return -1;
        char *ttype = attr(c, "type"), *tport = attr(c, "port");
        const char *want = named(n, "console") ? "serial" : "isa-serial";
        unsigned long long p = 0;
        int bad = 0;
        if (ttype && strcmp(ttype, want) != 0) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported <%s> target type '%s' (only %s)", node_name(n), ttype, want);
            bad = 1;
        } else if (tport && (parse_ull(tport, &p) < 0 || p >= RV_QEMU_MAX_SERIALS)) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "invalid <%s> target port '%s' (0 to %d)",
                       node_name(n), tport, RV_QEMU_MAX_SERIALS - 1);
            bad = 1;
        }
        free(ttype);
        free(tport);
        if (bad)
            return -1;
        *port = (unsigned)p;
    }
    if (more < 0)
        return -1;
    if (type != RV_QEMU_CHR_PTY && !chr->path)
        BAD_XML("a %s <%s> needs a <source path='...'>", types[type], node_name(n));
    return 0;
}

/* <graphics type='vnc|spice'>: one of each at most. */
static int parse_graphics(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const graphics_attrs[] = { "type", "port", "autoport", "listen", "tlsPort", NULL };
    static const char *const listen_attrs[] = { "type", "address", NULL };
    static const char *const image_attrs[] = { "compression", NULL };
    static const char *const kinds[] = { "vnc", "spice", NULL };
    static const char *const compressions[] = { "auto_glz", "auto_lz", "quic", "glz", "lz", "off", NULL };
    if (check_attrs(n, graphics_attrs, err) < 0)
        return -1;
    int kind = attr_word(n, "type", kinds, err);
    if (kind < 0)
        return -1;
    rv_qemu_graphics *g = kind == 0 ? &def->graphics : &def->spice;
    if (g->present)
        UNSUPPORTED("more than one <graphics type='%s'> is not supported", kinds[kind]);
    char *port = attr(n, "port"), *autoport = attr(n, "autoport"), *tls = attr(n, "tlsPort");
    int rc = 0;
    unsigned long long p = 0;
    g->present = true;
    g->listen = attr(n, "listen");
    if (autoport && strcmp(autoport, "yes") != 0 && strcmp(autoport, "no") != 0) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "invalid graphics autoport '%s'", autoport);
        rc = -1;
    } else if (port && strcmp(port, "-1") != 0 &&
               (parse_ull(port, &p) < 0 || p < 5900 || p > 65535)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "invalid %s port '%s' (5900 to 65535, or -1)",
                   kind ? "SPICE" : "VNC", port);
        rc = -1;
    } else if (tls && (kind != 1 || strcmp(tls, "-1") != 0)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported graphics tlsPort '%s' (no TLS: only -1)", tls);
        rc = -1;
    } else {
        /* autoport='yes', or no port at all, or port -1: the port is
         * chosen at start (and shown in the live XML, which keeps it). */
        bool no_port = !port || strcmp(port, "-1") == 0;
        g->autoport = (autoport && strcmp(autoport, "yes") == 0) || no_port;
        g->port = no_port ? -1 : (int)p;
    }
    free(port);
    free(autoport);
    free(tls);
    if (rc < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "image") && kind == 1) {
            int i;
            if (empty_element(c, image_attrs, err) < 0 ||
                (i = attr_word(c, "compression", compressions, err)) < 0)
                return -1;
            free(g->compression);
            if (!(g->compression = strdup(compressions[i])))
                XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
            continue;
        }
        if (!named(c, "listen"))
            UNSUPPORTED("unsupported element <%s> in <graphics>", node_name(c));
        if (check_attrs(c, listen_attrs, err) < 0)
            return -1;
        char *ltype = attr(c, "type"), *address = attr(c, "address");
        bool ok = ltype && strcmp(ltype, "address") == 0;
        if (!ok)
            rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported graphics listen type '%s' (only address)", ltype ? ltype : "");
        else if (address && g->listen && strcmp(address, g->listen) != 0) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                       "graphics listen '%s' and its <listen address='%s'> differ", g->listen, address);
            ok = false;
        } else if (address && !g->listen) {
            g->listen = address;
            address = NULL;
        }
        free(ltype);
        free(address);
        if (!ok)
            return -1;
    }
    return more < 0 ? -1 : 0;
}

static int parse_devices_loop(const xmlNode *devs, rv_qemu_domain_def *def, bool **macs_given,
                              bool *serial_ports, bool *console, rv_qemu_chr *console_chr, rv_err *err)
{
    bool balloon_seen = false;
    const xmlNode *c = NULL;
    int more, handled;
    while ((more = next_child(devs, &c, err)) > 0) {
        if (named(c, "disk")) {
            rv_qemu_disk *grown = realloc(def->disks, (def->ndisks + 1) * sizeof(*grown));
            if (!grown)
                XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
            def->disks = grown;
            rv_qemu_disk *disk = &def->disks[def->ndisks++];
            memset(disk, 0, sizeof(*disk));
            if (parse_disk(c, disk, err) < 0)
                return -1;
            for (size_t i = 0; i + 1 < def->ndisks; i++)
                if (strcmp(def->disks[i].target, disk->target) == 0)
                    BAD_XML("two disks have the target '%s'", disk->target);
        } else if (named(c, "interface")) {
            rv_qemu_interface *grown = realloc(def->interfaces, (def->ninterfaces + 1) * sizeof(*grown));
            if (!grown)
                XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
            def->interfaces = grown;
            bool *grown_macs = realloc(*macs_given, (def->ninterfaces + 1) * sizeof(bool));
            if (!grown_macs)
                XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
            *macs_given = grown_macs;
            rv_qemu_interface *iface = &def->interfaces[def->ninterfaces];
            memset(iface, 0, sizeof(*iface));
            grown_macs[def->ninterfaces] = false;
            def->ninterfaces++;
            if (parse_interface(c, iface, &grown_macs[def->ninterfaces - 1], err) < 0)
                return -1;
        } else if (named(c, "serial")) {
            unsigned port;
            rv_qemu_chr chr;
            if (parse_char(c, &port, &chr, err) < 0) {
                free(chr.path);
                return -1;
            }
            if (serial_ports[port]) {
                free(chr.path);
                BAD_XML("two serial ports have the number %u", port);
            }
            serial_ports[port] = true;
            def->serials[port] = chr;
        } else if (named(c, "console")) {
            unsigned port;
            if (*console)
                UNSUPPORTED("more than one <console> is not supported");
            *console = true;
            if (parse_char(c, &port, console_chr, err) < 0)
                return -1;
            if (port != 0)
                UNSUPPORTED("a console on serial port %u (only 0)", port);
        } else if (named(c, "graphics")) {
            if (parse_graphics(c, def, err) < 0)
                return -1;
        } else if (named(c, "emulator")) {
            if (def->emulator)
                BAD_XML("more than one <emulator>");
            if (text_of(c, NULL, &def->emulator, err) < 0)
                return -1;
            if (def->emulator[0] != '/')
                BAD_XML("<emulator> must be an absolute path, not '%s'", def->emulator);
        } else if (named(c, "memballoon")) {
            static const char *const balloon_attrs[] = { "model", NULL };
            static const char *const balloon_models[] = { "virtio", "none", NULL };
            if (balloon_seen)
                BAD_XML("more than one <memballoon>");
            balloon_seen = true;
            if (check_attrs(c, balloon_attrs, err) < 0)
                return -1;
            char *model = attr(c, "model");
            int m = word_index(model, balloon_models);
            if (m < 0) {
                rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported memballoon model '%s'", model ? model : "(none)");
                free(model);
                return -1;
            }
            free(model);
            def->balloon = m == 0;
            const xmlNode *child = NULL;
            int r = next_child(c, &child, err);
            if (r < 0)
                return -1;
            if (r > 0 && named(child, "address")) {
                if (rv_qemu_parse_pci_address(child, &def->dev.balloon_addr, err) < 0)
                    return -1;
                r = next_child(c, &child, err);
                if (r < 0)
                    return -1;
            }
            if (r > 0)
                UNSUPPORTED("unsupported element <%s> in <memballoon>", node_name(child));
        } else if ((handled = rv_qemu_parse_device(c, def, err)) != 0) {
            if (handled < 0)
                return -1;
        } else {
            UNSUPPORTED("unsupported element <%s> in <devices>", node_name(c));
        }
    }
    return more < 0 ? -1 : 0;
}

static int parse_devices(const xmlNode *devs, rv_qemu_domain_def *def, bool **macs_given, rv_err *err)
{
    static const char *const none[] = { NULL };
    if (check_attrs(devs, none, err) < 0)
        return -1;
    bool serial_ports[RV_QEMU_MAX_SERIALS] = { false };
    bool console = false;
    rv_qemu_chr console_chr = { 0 };
    int rc = parse_devices_loop(devs, def, macs_given, serial_ports, &console, &console_chr, err);
    if (rc == 0 && console) {
        /* The console is serial 0: the same kind, the same file. */
        const rv_qemu_chr *s0 = &def->serials[0], *con = &console_chr;
        bool same = s0->type == con->type && s0->connect == con->connect &&
                    !s0->path == !con->path && (!s0->path || strcmp(s0->path, con->path) == 0);
        if (serial_ports[0] && !same) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                       "a <console> that is not the same as serial port 0");
            rc = -1;
        } else if (!serial_ports[0]) {
            def->serials[0] = console_chr;
            console_chr.path = NULL;
        }
    }
    free(console_chr.path);
    if (rc < 0)
        return -1;
    /* Serial ports numbered from 0 without gaps; the console is serial 0
     * and makes it exist, as libvirt's normal form has both. */
    size_t n = 0;
    while (n < RV_QEMU_MAX_SERIALS && serial_ports[n])
        n++;
    for (size_t i = n; i < RV_QEMU_MAX_SERIALS; i++)
        if (serial_ports[i])
            UNSUPPORTED("serial port %zu without serial port %zu", i, n);
    def->nserials = n == 0 && console ? 1 : n;
    return 0;
}

/* An attribute that must be one of words (NULL ends the list): its index,
 * or -1 with err set. */
static int attr_word(const xmlNode *n, const char *name, const char *const *words, rv_err *err)
{
    char *v = attr(n, name);
    int i = word_index(v, words);
    if (i < 0)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported %s='%s' of element <%s>", name, v ? v : "", node_name(n));
    free(v);
    return i;
}

static const char *const on_off_words[] = { "off", "on", NULL };
static const char *const cpu_mode_words[] = { "host-passthrough", "host-model", "maximum", "custom", NULL };
static const char *const cpu_match_words[] = { "exact", "minimum", "strict", NULL };
static const char *const cpu_fallback_words[] = { "allow", "forbid", NULL };
static const char *const cpu_policy_words[] = { "force", "require", "optional", "disable", "forbid", NULL };
static const char *const cpu_check_words[] = { "none", "partial", "full", NULL };
static const char *const no_yes_words[] = { "no", "yes", NULL };

/* An empty element: its attributes checked, no children. */
static int empty_element(const xmlNode *n, const char *const *attrs, rv_err *err)
{
    if (check_attrs(n, attrs, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int r = next_child(n, &c, err);
    if (r > 0)
        UNSUPPORTED("unsupported element <%s> in <%s>", node_name(c), node_name(n));
    return r < 0 ? -1 : 0;
}

static int parse_features(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const none[] = { NULL };
    static const char *const state[] = { "state", NULL };
    if (check_attrs(n, none, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "acpi") || named(c, "apic")) {
            if (empty_element(c, none, err) < 0)
                return -1;
            *(named(c, "acpi") ? &def->acpi : &def->apic) = true;
        } else if (named(c, "vmport")) {
            if (empty_element(c, state, err) < 0 ||
                (def->vmport = attr_word(c, "state", on_off_words, err)) < 0)
                return -1;
        } else {
            UNSUPPORTED("unsupported element <%s> in <features>", node_name(c));
        }
    }
    return more < 0 ? -1 : 0;
}

static int parse_clock(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const clock_attrs[] = { "offset", NULL };
    static const char *const timer_attrs[] = { "name", "tickpolicy", "present", NULL };
    static const char *const offsets[] = { "utc", "localtime", NULL };
    static const char *const timers[] = { "rtc", "pit", "hpet", NULL };
    static const char *const catchup[] = { "catchup", NULL };
    static const char *const delay[] = { "delay", NULL };
    if (check_attrs(n, clock_attrs, err) < 0)
        return -1;
    int offset = attr_word(n, "offset", offsets, err);
    if (offset < 0)
        return -1;
    def->clock = true;
    def->clock_localtime = offset == 1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (!named(c, "timer"))
            UNSUPPORTED("unsupported element <%s> in <clock>", node_name(c));
        if (empty_element(c, timer_attrs, err) < 0)
            return -1;
        int t = attr_word(c, "name", timers, err);
        if (t < 0)
            return -1;
        /* Each timer takes the one setting libvirt's default XML gives it. */
        xmlChar *tick = xmlGetNoNsProp(c, (const xmlChar *)"tickpolicy");
        xmlChar *present = xmlGetNoNsProp(c, (const xmlChar *)"present");
        bool ok = t == 2 ? !tick : !present;
        xmlFree(tick);
        xmlFree(present);
        if (!ok)
            UNSUPPORTED("unsupported settings of <timer name='%s'>", timers[t]);
        if (t == 0 && attr_word(c, "tickpolicy", catchup, err) == 0)
            def->rtc_catchup = true;
        else if (t == 1 && attr_word(c, "tickpolicy", delay, err) == 0)
            def->pit_delay = true;
        else if (t == 2 && (def->hpet = attr_word(c, "present", no_yes_words, err)) >= 0)
            ;
        else
            return -1;
    }
    return more < 0 ? -1 : 0;
}

/* CPU model and feature names go on QEMU's command line: a word. */
#define CPU_NAME_CHARS ALNUM "-_."

/* <cpu>: a mode (custom when a model is given without one), and for
 * custom its match, model and vendor; features in any mode. */
static int parse_cpu(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const cpu_attrs[] = { "mode", "match", "check", "migratable", NULL };
    static const char *const model_attrs[] = { "fallback", NULL };
    static const char *const feature_attrs[] = { "policy", "name", NULL };
    if (check_attrs(n, cpu_attrs, err) < 0)
        return -1;
    xmlChar *mode = xmlGetNoNsProp(n, (const xmlChar *)"mode");
    bool has_mode = mode != NULL;
    xmlFree(mode);
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (named(c, "model")) {
            if (def->cpu_model)
                BAD_XML("more than one <model> in <cpu>");
            if (text_of(c, model_attrs, &def->cpu_model, err) < 0)
                return -1;
            xmlChar *fb = xmlGetNoNsProp(c, (const xmlChar *)"fallback");
            bool has_fb = fb != NULL;
            xmlFree(fb);
            if (has_fb && (def->cpu_fallback = attr_word(c, "fallback", cpu_fallback_words, err)) < 0)
                return -1;
            if (!*def->cpu_model || !only_chars(def->cpu_model, CPU_NAME_CHARS))
                BAD_XML("invalid CPU model name '%s'", def->cpu_model);
        } else if (named(c, "vendor")) {
            if (def->cpu_vendor)
                BAD_XML("more than one <vendor> in <cpu>");
            if (text_of(c, NULL, &def->cpu_vendor, err) < 0)
                return -1;
            if (!*def->cpu_vendor || !only_chars(def->cpu_vendor, ALNUM))
                BAD_XML("invalid CPU vendor '%s'", def->cpu_vendor);
        } else if (named(c, "feature")) {
            if (empty_element(c, feature_attrs, err) < 0)
                return -1;
            rv_qemu_cpu_feature f = { .name = attr(c, "name"), .policy = RV_QEMU_CPU_REQUIRE };
            if (!f.name)
                BAD_XML("missing CPU feature name");
            xmlChar *policy = xmlGetNoNsProp(c, (const xmlChar *)"policy");
            bool has_policy = policy != NULL;
            xmlFree(policy);
            int pol = has_policy ? attr_word(c, "policy", cpu_policy_words, err) : (int)f.policy;
            bool dup = false;
            for (size_t i = 0; i < def->ncpu_features && !dup; i++)
                dup = strcmp(def->cpu_features[i].name, f.name) == 0;
            if (pol < 0 || dup || !*f.name || !only_chars(f.name, CPU_NAME_CHARS) ||
                def->ncpu_features == 256) {
                if (pol >= 0 && dup)
                    rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                               "XML error: CPU feature '%s' specified more than once", f.name);
                else if (pol >= 0)
                    rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                               "XML error: invalid CPU feature '%s' (or more than 256)", f.name);
                free(f.name);
                return -1;
            }
            f.policy = (rv_qemu_cpu_policy)pol;
            rv_qemu_cpu_feature *more_f = realloc(def->cpu_features,
                                                  (def->ncpu_features + 1) * sizeof(*more_f));
            if (!more_f) {
                free(f.name);
                XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
            }
            def->cpu_features = more_f;
            def->cpu_features[def->ncpu_features++] = f;
        } else {
            UNSUPPORTED("unsupported element <%s> in <cpu>", node_name(c));
        }
    }
    if (more < 0)
        return -1;
    if (has_mode) {
        if ((def->cpu_mode = attr_word(n, "mode", cpu_mode_words, err)) < 0)
            return -1;
    } else if (def->cpu_model) {
        def->cpu_mode = RV_QEMU_CPU_CUSTOM;
    } else {
        UNSUPPORTED("unsupported <cpu> without a mode or a model");
    }
    if (def->cpu_mode == RV_QEMU_CPU_CUSTOM && !def->cpu_model)
        BAD_XML("XML error: Missing CPU model name");
    if (def->cpu_mode != RV_QEMU_CPU_CUSTOM && (def->cpu_model || def->cpu_vendor))
        UNSUPPORTED("unsupported <model> or <vendor> in <cpu mode='%s'>", cpu_mode_words[def->cpu_mode]);
    xmlChar *check = xmlGetNoNsProp(n, (const xmlChar *)"check");
    xmlChar *migratable = xmlGetNoNsProp(n, (const xmlChar *)"migratable");
    xmlChar *match = xmlGetNoNsProp(n, (const xmlChar *)"match");
    bool has_check = check != NULL, has_migratable = migratable != NULL, has_match = match != NULL;
    xmlFree(check);
    xmlFree(migratable);
    xmlFree(match);
    if ((has_check && (def->cpu_check = attr_word(n, "check", cpu_check_words, err)) < 0) ||
        (has_migratable && (def->cpu_migratable = attr_word(n, "migratable", on_off_words, err)) < 0) ||
        (has_match && def->cpu_mode == RV_QEMU_CPU_CUSTOM &&
         (def->cpu_match = attr_word(n, "match", cpu_match_words, err)) < 0))
        return -1;
    /* libvirt's defaults for a custom model (checked against libvirtd). */
    if (def->cpu_mode == RV_QEMU_CPU_CUSTOM) {
        if (def->cpu_match < 0)
            def->cpu_match = 0;
        if (def->cpu_fallback < 0)
            def->cpu_fallback = 0;
        if (def->cpu_migratable >= 0)
            UNSUPPORTED("migratable is for cpu mode host-passthrough or maximum, not custom");
    }
    return 0;
}

int rv_qemu_def_live_cpu(rv_qemu_domain_def *def)
{
    if (def->cpu_mode < 0) {
        /* (x86_64 is the one architecture parse accepts.) */
        if (!(def->cpu_model = strdup("qemu64")))
            return -1;
        def->cpu_mode = RV_QEMU_CPU_CUSTOM;
        def->cpu_match = 0;
    }
    if (def->cpu_mode == RV_QEMU_CPU_CUSTOM) {
        def->cpu_check = 2;     /* full */
        def->cpu_fallback = 1;  /* forbid */
    }
    return 0;
}

static int parse_pm(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const none[] = { NULL };
    static const char *const enabled[] = { "enabled", NULL };
    if (check_attrs(n, none, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        int *slot = named(c, "suspend-to-mem") ? &def->suspend_to_mem
                  : named(c, "suspend-to-disk") ? &def->suspend_to_disk : NULL;
        if (!slot)
            UNSUPPORTED("unsupported element <%s> in <pm>", node_name(c));
        if (empty_element(c, enabled, err) < 0 || (*slot = attr_word(c, "enabled", no_yes_words, err)) < 0)
            return -1;
    }
    return more < 0 ? -1 : 0;
}

/* <metadata>: each child an element in a namespace of its own (so that
 * it can be written back alone, as libvirt requires too), kept as text. */
static int parse_metadata(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    xmlBuffer *buf = xmlBufferCreate();
    if (!buf)
        XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    for (xmlNode *c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE && xmlIsBlankNode(c))
            continue;
        if (c->type == XML_COMMENT_NODE)
            continue;
        if (c->type != XML_ELEMENT_NODE || !c->ns || !c->ns->href) {
            xmlBufferFree(buf);
            BAD_XML("a <metadata> child must be an element in a namespace");
        }
        /* Written back alone, it must declare its own namespace. */
        bool declared = false;
        for (const xmlNs *ns = c->nsDef; ns; ns = ns->next)
            declared |= ns == c->ns;
        if (!declared) {
            xmlBufferFree(buf);
            BAD_XML("a <metadata> child must declare its namespace itself (<%s>)", node_name(c));
        }
        if (xmlBufferLength(buf) > 0)
            xmlBufferCCat(buf, "\n");
        if (xmlNodeDump(buf, n->doc, c, 2, 0) < 0) {
            xmlBufferFree(buf);
            XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
        }
    }
    if (xmlBufferLength(buf) > 0 && !(def->metadata = strdup((const char *)xmlBufferContent(buf)))) {
        xmlBufferFree(buf);
        XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    }
    xmlBufferFree(buf);
    return 0;
}

/* What this driver takes of the common part conf/domain_xml.c read: its
 * domain types and vcpu forms, names that can name files. */
static int check_base(rv_qemu_domain_def *def, rv_err *err)
{
    int accel = word_index(def->virt_type, virt_type_words);
    if (accel < 0)
        UNSUPPORTED("unsupported domain type '%s' (kvm or qemu)", def->virt_type);
    def->accel = (rv_qemu_virt_type)accel;
    /* It names files and goes on QEMU's command line. */
    bool control = false;
    for (const char *p = def->name; *p; p++)
        control |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (control || strlen(def->name) > 200)
        BAD_XML("invalid domain name '%s' (1 to 200 characters, no '/' or control characters)",
                def->name);
    if (def->placement_auto)
        UNSUPPORTED("unsupported vcpu placement 'auto' (only static)");
    if (def->current_vcpus == 0)
        BAD_XML("invalid vcpu current '0' (1 to the maximum, %u)", def->vcpus);
    if (check_action("on_poweroff", def->on_poweroff, err) < 0 ||
        check_action("on_reboot", def->on_reboot, err) < 0 ||
        check_action("on_crash", def->on_crash, err) < 0)
        return -1;
    return 0;
}

/* Every element of <domain> is one this driver knows, with only the
 * attributes it knows; the common part's values are read already. */
/* An environment variable's name as libvirt accepts it. */
static bool env_name_ok(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return false;
    return only_chars(s + 1, ALNUM "_");
}

static int push_string(char ***list, size_t n, char *s, rv_err *err)
{
    char **grown = realloc(*list, (n + 1) * sizeof(**list));
    if (!grown) {
        free(s);
        XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    }
    grown[n] = s;
    *list = grown;
    return 0;
}

/* <qemu:commandline> with <qemu:arg value> and <qemu:env name [value]>,
 * in libvirt's QEMU namespace; its other elements are refused by name. */
static int parse_qemu_ns(const xmlNode *n, rv_qemu_domain_def *def, rv_err *err)
{
    static const char *const none[] = { NULL };
    static const char *const arg_attrs[] = { "value", NULL };
    static const char *const env_attrs[] = { "name", "value", NULL };
    if (!named(n, "commandline"))
        UNSUPPORTED("unsupported element <qemu:%s> (of the QEMU namespace only "
                    "<qemu:commandline>)", node_name(n));
    if (check_attrs(n, none, err) < 0)
        return -1;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE) {
            for (const xmlChar *p = c->content; p && *p; p++)
                if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                    BAD_XML("unexpected text inside <qemu:commandline>");
            continue;
        }
        if (c->type == XML_COMMENT_NODE)
            continue;
        bool ours = c->type == XML_ELEMENT_NODE && c->ns && c->ns->href &&
                    strcmp((const char *)c->ns->href, RV_QEMU_XMLNS) == 0;
        if (!ours || (!named(c, "arg") && !named(c, "env")))
            UNSUPPORTED("unsupported element <%s> in <qemu:commandline> (qemu:arg, qemu:env)",
                        c->type == XML_ELEMENT_NODE ? node_name(c) : "(not an element)");
        if (def->nqemu_args + def->nqemu_env >= RV_QEMU_MAX_PASSTHROUGH)
            UNSUPPORTED("more than %d elements in <qemu:commandline>", RV_QEMU_MAX_PASSTHROUGH);
        if (named(c, "arg")) {
            if (empty_element(c, arg_attrs, err) < 0)
                return -1;
            char *value = attr(c, "value");
            if (!value)
                BAD_XML("No qemu command-line argument specified");
            if (push_string(&def->qemu_args, def->nqemu_args, value, err) < 0)
                return -1;
            def->nqemu_args++;
            continue;
        }
        if (empty_element(c, env_attrs, err) < 0)
            return -1;
        char *name = attr(c, "name");
        if (!name)
            BAD_XML("No qemu environment name specified");
        if (!env_name_ok(name)) {
            rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "Invalid environment name, it must begin with a letter or underscore");
            free(name);
            return -1;
        }
        char *value = attr(c, "value");
        if (push_string(&def->qemu_env_names, def->nqemu_env, name, err) < 0) {
            free(value);
            return -1;
        }
        /* (The lists grow together; nqemu_env counts what both hold.) */
        if (push_string(&def->qemu_env_values, def->nqemu_env, value, err) < 0) {
            free(name);
            return -1;
        }
        def->nqemu_env++;
    }
    return 0;
}

/* <resource>: libvirtd's default partition only (its migratable XML names
 * it): remvirtd places no guest in a cgroup partition of the client's. */
static int parse_resource(const xmlNode *n, rv_err *err)
{
    static const char *const none[] = { NULL };
    if (check_attrs(n, none, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(n, &c, err)) > 0) {
        if (!named(c, "partition"))
            UNSUPPORTED("unsupported element <%s> in <resource>", node_name(c));
        char *text = NULL;
        if (text_of(c, none, &text, err) < 0)
            return -1;
        bool dflt = strcmp(text, "/machine") == 0;
        free(text);
        if (!dflt)
            UNSUPPORTED("%s", "resource partition other than /machine");
    }
    return more;
}

/* Each IOThread's pool bounds in order, and each disk in an IOThread
 * names one the definition has, on virtio (as libvirtd validates them). */
static int check_disk_iothreads(const rv_qemu_domain_def *def, rv_err *err)
{
    for (size_t i = 0; def->tune && i < def->tune->niothreads; i++) {
        const rv_tune_iothread *io = &def->tune->iothreads[i];
        if (io->pool_min >= 0 && io->pool_max >= 0 && io->pool_min > io->pool_max)
            return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                               "unsupported configuration: thread_pool_min must be smaller or "
                               "equal to thread_pool_max");
    }
    for (size_t i = 0; i < def->ndisks; i++)
        if (rv_qemu_disk_iothread_check(def, &def->disks[i], err) < 0)
            return -1;
    for (size_t i = 0; i < def->dev.ncontrollers; i++) {
        unsigned id = def->dev.controllers[i].iothread;
        if (id && rv_domain_tune_iothread_find(def->tune, id) < 0)
            return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                               "unsupported configuration: controller iothread '%u' not defined "
                               "in iothreadid", id);
    }
    return 0;
}

int rv_qemu_disk_iothread_check(const rv_qemu_domain_def *def, const rv_qemu_disk *disk,
                                rv_err *err)
{
    if (!disk->iothread)
        return 0;
    if (disk->bus != RV_QEMU_BUS_VIRTIO)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: IOThreads not available for bus %s "
                           "target %s", bus_words[disk->bus], disk->target);
    if (rv_domain_tune_iothread_find(def->tune, disk->iothread) < 0)
        return rv_err_fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                           "unsupported configuration: Disk iothread '%u' not defined in "
                           "iothreadid", disk->iothread);
    return 0;
}

static int parse_domain(const xmlNode *root, rv_qemu_domain_def *def, bool **macs_given, bool device,
                        rv_err *err)
{
    static const char *const domain_attrs[] = { "type", "id", NULL };
    static const char *const vcpu_attrs[] = { "placement", "current", NULL };
    static const char *const memory_attrs[] = { "unit", NULL };
    if (check_attrs(root, domain_attrs, err) < 0 || check_base(def, err) < 0)
        return -1;

    /* Which singletons were seen, to refuse a second one. */
    unsigned seen = 0;
    enum { S_NAME = 1, S_UUID = 2, S_MEM = 4, S_CUR = 8, S_VCPU = 16, S_OS = 32,
           S_POWEROFF = 64, S_REBOOT = 128, S_CRASH = 256, S_DEVICES = 512,
           S_FEATURES = 1024, S_CLOCK = 2048, S_PM = 4096, S_CPU = 8192, S_METADATA = 16384,
           S_VCPUS = 32768, S_PERF = 65536 };
    static const struct { const char *name; unsigned bit; } singletons[] = {
        { "name", S_NAME }, { "uuid", S_UUID }, { "memory", S_MEM }, { "currentMemory", S_CUR },
        { "vcpu", S_VCPU }, { "os", S_OS }, { "on_poweroff", S_POWEROFF },
        { "on_reboot", S_REBOOT }, { "on_crash", S_CRASH }, { "devices", S_DEVICES },
        { "features", S_FEATURES }, { "clock", S_CLOCK }, { "pm", S_PM }, { "cpu", S_CPU },
        { "metadata", S_METADATA }, { "vcpus", S_VCPUS }, { "perf", S_PERF },
    };
    /* Before <cputune>, whose <iothreadpin>s name them. */
    if (rv_qemu_iothreads_parse(root, &def->tune, err) < 0)
        return -1;
    const xmlNode *c = NULL;
    int more;
    while ((more = next_child(root, &c, err)) > 0) {
        if (c->ns) {        /* libvirt's QEMU namespace (next_child) */
            if (parse_qemu_ns(c, def, err) < 0)
                return -1;
            continue;
        }
        for (size_t i = 0; i < sizeof(singletons) / sizeof(singletons[0]); i++)
            if (named(c, singletons[i].name)) {
                if (seen & singletons[i].bit)
                    BAD_XML("more than one <%s>", singletons[i].name);
                seen |= singletons[i].bit;
            }
        /* The common part: only whether it is in the form this driver
         * reads (its values were read by conf/domain_xml.c). */
        static const char *const text_only[] = { "name", "uuid", "title", "description",
                                                 "on_poweroff", "on_reboot", "on_crash", NULL };
        static const char *const none[] = { NULL };
        const char *const *allowed = named(c, "vcpu") ? vcpu_attrs
                                   : named(c, "memory") || named(c, "currentMemory")
                                         ? memory_attrs
                                   : word_index(node_name(c), text_only) >= 0 ? none
                                   : NULL;
        if (allowed) {
            char *text = NULL;
            if (text_of(c, allowed, &text, err) < 0)
                return -1;
            free(text);
        } else if (named(c, "vcpus")) {
            if (parse_vcpus(c, def, err) < 0)
                return -1;
        } else if (named(c, "os")) {
            if (parse_os(c, def, err) < 0)
                return -1;
        } else if (named(c, "features")) {
            if (parse_features(c, def, err) < 0)
                return -1;
        } else if (named(c, "clock")) {
            if (parse_clock(c, def, err) < 0)
                return -1;
        } else if (named(c, "cpu")) {
            if (parse_cpu(c, def, err) < 0)
                return -1;
        } else if (named(c, "pm")) {
            if (parse_pm(c, def, err) < 0)
                return -1;
        } else if (named(c, "devices")) {
            if (parse_devices(c, def, macs_given, err) < 0)
                return -1;
        } else if (named(c, "metadata")) {
            if (parse_metadata(c, def, err) < 0)
                return -1;
        } else if (named(c, "perf") || named(c, "iothreads") || named(c, "iothreadids")) {
            /* (Read already: by conf/domain_xml.c, rv_qemu_iothreads_parse.) */
        } else if (named(c, "resource")) {
            if (parse_resource(c, err) < 0)
                return -1;
        } else if (named(c, "blkiotune") || named(c, "memtune") || named(c, "cputune") ||
                   named(c, "numatune")) {
            if (rv_qemu_tune_parse(c, &def->tune, err) < 0)
                return -1;
        } else {
            UNSUPPORTED("unsupported element <%s> in <domain>", node_name(c));
        }
    }
    if (more < 0)
        return -1;
    return rv_qemu_tune_check(def->tune, def->vcpus, err) < 0 ? -1
           : device ? 0 : check_disk_iothreads(def, err);
}

/* Defaults, as libvirt fills them in. */
static int normalise(rv_qemu_domain_def *def, const bool *macs_given, rv_err *err)
{
    if (strcmp(def->arch, "x86_64") != 0)
        UNSUPPORTED("unsupported architecture '%s' (only x86_64)", def->arch);
    if (!def->machine && !(def->machine = strdup("pc")))
        XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    if (!only_chars(def->machine, ALNUM "-_.") || !*def->machine)
        BAD_XML("invalid machine type '%s'", def->machine);
    /* libvirt's defaults: host-model checks partially, the others not. */
    if (def->cpu_mode >= 0 && def->cpu_check < 0)
        def->cpu_check = def->cpu_mode == RV_QEMU_CPU_HOST_MODEL ? 1 : 0;
    if ((def->cpu_mode == RV_QEMU_CPU_HOST_PASSTHROUGH || def->cpu_mode == RV_QEMU_CPU_MAXIMUM) &&
        def->cpu_migratable < 0)
        def->cpu_migratable = 1;
    if (def->cpu_mode == RV_QEMU_CPU_HOST_MODEL && def->cpu_migratable >= 0)
        UNSUPPORTED("migratable is for cpu mode host-passthrough or maximum, not host-model");
    for (size_t i = 0; i < def->ninterfaces; i++) {
        rv_qemu_interface *iface = &def->interfaces[i];
        if (!macs_given[i]) {
            /* QEMU's locally administered prefix, as libvirt uses. */
            iface->mac[0] = 0x52;
            iface->mac[1] = 0x54;
            iface->mac[2] = 0x00;
            if (getrandom(iface->mac + 3, 3, 0) != 3)
                XML_FAIL(RV_ERR_INTERNAL_ERROR, "cannot generate a MAC address");
        }
        if (!iface->model && !(iface->model = strdup("virtio")))
            XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
    }
    for (rv_qemu_graphics *g = &def->graphics; g; g = g == &def->graphics ? &def->spice : NULL) {
        if (!g->present)
            continue;
        if (!g->listen && !(g->listen = strdup("127.0.0.1")))
            XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
        unsigned char addr[16];
        if (inet_pton(AF_INET, g->listen, addr) != 1 && inet_pton(AF_INET6, g->listen, addr) != 1)
            UNSUPPORTED("graphics listen '%s' is not an IP address (host names are not supported)",
                        g->listen);
    }
    return rv_qemu_devices_normalise(def, err);
}

/* <alias> of each device under <devices>: taken out before the devices
 * are read.  A live definition's (remvirtd's run directory, a save
 * image) keeps the interfaces' (*net_aliases, by interface, NULL where
 * none); the others follow from the devices.  libvirtd drops them from a
 * definition too (dumpxml of a running guest defines as it is). */
static int take_aliases(xmlNode *root, char ***net_aliases, size_t *n_net, bool *seen)
{
    for (xmlNode *devs = root->children; devs; devs = devs->next) {
        if (devs->type != XML_ELEMENT_NODE || !named(devs, "devices"))
            continue;
        for (xmlNode *dev = devs->children; dev; dev = dev->next) {
            if (dev->type != XML_ELEMENT_NODE)
                continue;
            bool iface = named(dev, "interface");
            char *net = NULL;
            for (xmlNode *c = dev->children, *next; c; c = next) {
                next = c->next;
                if (c->type != XML_ELEMENT_NODE || !named(c, "alias"))
                    continue;
                *seen = true;
                if (iface && !net)
                    net = attr(c, "name");
                xmlUnlinkNode(c);
                xmlFreeNode(c);
            }
            if (!iface)
                continue;
            char **grown = realloc(*net_aliases, (*n_net + 1) * sizeof(*grown));
            if (!grown) {
                free(net);
                return -1;
            }
            *net_aliases = grown;
            grown[(*n_net)++] = net;
        }
    }
    return 0;
}

static const rv_domain_profile profile = {
    .driver = "remvirt's QEMU driver",
    .default_arch = "x86_64",
    .max_vcpus = RV_QEMU_MAX_VCPUS,
};

/* device: the domain only holds a device read alone (attach, detach,
 * update), whose references to the domain (an IOThread) are checked
 * against the domain it goes to. */
static rv_qemu_domain_def *domain_parse(const char *xml, size_t len, bool device, rv_err *err)
{
    if (strlen(xml) != len) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "XML error: domain XML holds a NUL byte");
        return NULL;
    }
    xmlDoc *doc;
    const xmlNode *root = rv_lx_read(xml, RV_QEMU_DOMAIN_XML_MAX, "domain", "domain_definition",
                                     RV_FROM_DOM, &doc, err);
    if (!root)
        return NULL;
    rv_qemu_domain_def *def = calloc(1, sizeof(*def));
    bool *macs_given = NULL;
    char **net_aliases = NULL;
    size_t n_net = 0;
    int rc = -1;
    if (def) {
        def->balloon = true;    /* libvirt adds a virtio balloon when none is named */
        def->vmport = def->hpet = def->suspend_to_mem = def->suspend_to_disk = -1;
        def->cpu_mode = def->cpu_check = def->cpu_migratable = -1;
        def->cpu_match = def->cpu_fallback = -1;
        def->dev.audio = -1;
        def->bios_useserial = -1;
        def->reboot_timeout = RV_QEMU_NO_REBOOT_TIMEOUT;
    }
    if (!def)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
    else if (root->ns)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR,
                   "XML error: the root element <domain> may not have a namespace");
    else if (take_aliases((xmlNode *)root, &net_aliases, &n_net, &def->aliases) < 0)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
    else if (rv_domain_base_parse(root, &profile, &def->base, NULL, err) == 0 &&
             parse_domain(root, def, &macs_given, device, err) == 0)
        rc = normalise(def, macs_given, err);
    for (size_t i = 0; i < n_net; i++) {
        if (rc == 0 && i < def->ninterfaces && net_aliases[i] && strncmp(net_aliases[i], "net", 3) == 0) {
            def->interfaces[i].alias = net_aliases[i];
            net_aliases[i] = NULL;
        }
        free(net_aliases[i]);
    }
    free(net_aliases);
    free(macs_given);
    rv_lx_free(doc);
    if (rc < 0) {
        RV_DEBUG("domain XML refused: %s", err->message ? err->message : "");
        rv_qemu_domain_free(def);
        return NULL;
    }
    return def;
}

rv_qemu_domain_def *rv_qemu_domain_parse(const char *xml, size_t len, rv_err *err)
{
    return domain_parse(xml, len, false, err);
}

/* ---------------------------------------------------------------- formatting */

const char *rv_qemu_disk_bus_name(rv_qemu_disk_bus bus)
{
    return bus_words[bus];
}

char *rv_qemu_domain_format(const rv_qemu_domain_def *def)
{
    rv_xml_buf b;
    FILE *fp = rv_xml_open(&b);
    if (!fp)
        return NULL;
    fprintf(fp, "<domain type='%s'%s>\n", virt_type_words[def->accel],
            rv_qemu_def_tainted(def) ? " xmlns:qemu='" RV_QEMU_XMLNS "'" : "");
    rv_domain_format_ids(fp, &def->base);
    if (def->metadata)
        fprintf(fp, "  <metadata>\n    %s\n  </metadata>\n", def->metadata);
    rv_domain_format_memory(fp, &def->base);
    rv_domain_tune_format_memory(fp, def->tune);
    rv_domain_format_vcpu(fp, &def->base);
    if (def->boot_vcpus) {
        /* As libvirtd: each vcpu, on or not, hotpluggable or not, and the
         * order the ones on came in (they come and go highest last). */
        fputs("  <vcpus>\n", fp);
        for (unsigned i = 0; i < def->vcpus; i++) {
            bool on = i < rv_qemu_def_vcpus(def);
            fprintf(fp, "    <vcpu id='%u' enabled='%s' hotpluggable='%s'", i, on ? "yes" : "no",
                    i < def->boot_vcpus ? "no" : "yes");
            if (on)
                fprintf(fp, " order='%u'", i + 1);
            fputs("/>\n", fp);
        }
        fputs("  </vcpus>\n", fp);
    }
    rv_domain_tune_format_iothreads(fp, def->tune);
    rv_domain_tune_format_cpu(fp, def->tune, false);
    fputs("  <os>\n", fp);
    rv_domain_format_os_type(fp, &def->base);
    const char *const os_texts[][2] = {
        { "kernel", def->kernel }, { "initrd", def->initrd }, { "cmdline", def->cmdline },
    };
    for (size_t i = 0; i < 3; i++) {
        if (!os_texts[i][1])
            continue;
        fprintf(fp, "    <%s>", os_texts[i][0]);
        rv_xml_put_escaped(fp, os_texts[i][1]);
        fprintf(fp, "</%s>\n", os_texts[i][0]);
    }
    if (def->bios_useserial >= 0 || def->reboot_timeout != RV_QEMU_NO_REBOOT_TIMEOUT) {
        fputs("    <bios", fp);
        if (def->bios_useserial >= 0)
            fprintf(fp, " useserial='%s'", no_yes_words[def->bios_useserial]);
        if (def->reboot_timeout != RV_QEMU_NO_REBOOT_TIMEOUT)
            fprintf(fp, " rebootTimeout='%d'", def->reboot_timeout);
        fputs("/>\n", fp);
    }
    fputs("  </os>\n", fp);
    if (def->acpi || def->apic || def->vmport >= 0) {
        fputs("  <features>\n", fp);
        if (def->acpi)
            fputs("    <acpi/>\n", fp);
        if (def->apic)
            fputs("    <apic/>\n", fp);
        if (def->vmport >= 0)
            fprintf(fp, "    <vmport state='%s'/>\n", on_off_words[def->vmport]);
        fputs("  </features>\n", fp);
    }
    if (def->cpu_mode >= 0) {
        fprintf(fp, "  <cpu mode='%s'", cpu_mode_words[def->cpu_mode]);
        if (def->cpu_mode == RV_QEMU_CPU_CUSTOM)
            fprintf(fp, " match='%s'", cpu_match_words[def->cpu_match]);
        fprintf(fp, " check='%s'", cpu_check_words[def->cpu_check]);
        if (def->cpu_migratable >= 0)
            fprintf(fp, " migratable='%s'", on_off_words[def->cpu_migratable]);
        if (!def->cpu_model && def->ncpu_features == 0) {
            fputs("/>\n", fp);
        } else {
            fputs(">\n", fp);
            if (def->cpu_model)
                fprintf(fp, "    <model fallback='%s'>%s</model>\n",
                        cpu_fallback_words[def->cpu_fallback], def->cpu_model);
            if (def->cpu_vendor)
                fprintf(fp, "    <vendor>%s</vendor>\n", def->cpu_vendor);
            for (size_t i = 0; i < def->ncpu_features; i++)
                fprintf(fp, "    <feature policy='%s' name='%s'/>\n",
                        cpu_policy_words[def->cpu_features[i].policy], def->cpu_features[i].name);
            fputs("  </cpu>\n", fp);
        }
    }
    if (def->clock) {
        fprintf(fp, "  <clock offset='%s'>\n", def->clock_localtime ? "localtime" : "utc");
        if (def->rtc_catchup)
            fputs("    <timer name='rtc' tickpolicy='catchup'/>\n", fp);
        if (def->pit_delay)
            fputs("    <timer name='pit' tickpolicy='delay'/>\n", fp);
        if (def->hpet >= 0)
            fprintf(fp, "    <timer name='hpet' present='%s'/>\n", no_yes_words[def->hpet]);
        fputs("  </clock>\n", fp);
    }
    rv_domain_format_actions(fp, &def->base);
    if (def->suspend_to_mem >= 0 || def->suspend_to_disk >= 0) {
        fputs("  <pm>\n", fp);
        if (def->suspend_to_mem >= 0)
            fprintf(fp, "    <suspend-to-mem enabled='%s'/>\n", no_yes_words[def->suspend_to_mem]);
        if (def->suspend_to_disk >= 0)
            fprintf(fp, "    <suspend-to-disk enabled='%s'/>\n", no_yes_words[def->suspend_to_disk]);
        fputs("  </pm>\n", fp);
    }
    rv_domain_format_perf(fp, &def->base);
    fputs("  <devices>\n", fp);
    if (def->emulator) {
        fputs("    <emulator>", fp);
        rv_xml_put_escaped(fp, def->emulator);
        fputs("</emulator>\n", fp);
    }
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *d = &def->disks[i];
        fprintf(fp, "    <disk type='%s' device='%s'>\n", d->pool ? "volume" : "file",
                d->device == RV_QEMU_DISK_CDROM ? "cdrom" : "disk");
        fprintf(fp, "      <driver name='qemu' type='%s'", d->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw");
        format_driver_attrs(fp, d);
        fputs("/>\n", fp);
        if (d->pool) {
            /* As libvirtd's live XML too: the pool and volume, not the file. */
            fputs("      <source pool='", fp);
            rv_xml_put_escaped(fp, d->pool);
            fputs("' volume='", fp);
            rv_xml_put_escaped(fp, d->volume);
            fputs("'/>\n", fp);
        } else if (d->source) {
            fputs("      <source file='", fp);
            rv_xml_put_escaped(fp, d->source);
            fputs("'/>\n", fp);
        }
        fputs("      <target dev='", fp);
        rv_xml_put_escaped(fp, d->target);
        fprintf(fp, "' bus='%s'/>\n", rv_qemu_disk_bus_name(d->bus));
        rv_qemu_iotune_format(fp, d->iotune);
        if (d->readonly)
            fputs("      <readonly/>\n", fp);
        if (d->serial) {
            fputs("      <serial>", fp);
            rv_xml_put_escaped(fp, d->serial);
            fputs("</serial>\n", fp);
        }
        char alias[32];
        rv_qemu_disk_alias(def, d, alias, sizeof(alias));
        rv_qemu_format_alias(fp, def, "      ", "%s", alias);
        rv_qemu_format_pci_address(fp, &d->addr, "      ");
        rv_qemu_format_drive_address(fp, &d->drive, "      ");
        fputs("    </disk>\n", fp);
    }
    rv_qemu_format_controllers(fp, def);
    for (size_t i = 0; i < def->ninterfaces; i++) {
        const rv_qemu_interface *n = &def->interfaces[i];
        const unsigned char *m = n->mac;
        fprintf(fp, "    <interface type='%s'>\n", net_type_words[n->type]);
        fprintf(fp, "      <mac address='%02x:%02x:%02x:%02x:%02x:%02x'/>\n",
                m[0], m[1], m[2], m[3], m[4], m[5]);
        if (n->type == RV_QEMU_NET_BRIDGE) {
            fputs("      <source bridge='", fp);
            rv_xml_put_escaped(fp, n->bridge);
            fputs("'/>\n", fp);
        } else if (n->type == RV_QEMU_NET_NETWORK) {
            fputs("      <source network='", fp);
            rv_xml_put_escaped(fp, n->network);
            if (n->bridge) {
                fputs("' bridge='", fp);
                rv_xml_put_escaped(fp, n->bridge);
            }
            fputs("'/>\n", fp);
        }
        format_bandwidth(fp, &n->bandwidth);
        if (n->ifname) {
            fputs("      <target dev='", fp);
            rv_xml_put_escaped(fp, n->ifname);
            fputs("'/>\n", fp);
        }
        fputs("      <model type='", fp);
        rv_xml_put_escaped(fp, n->model);
        fputs("'/>\n", fp);
        if (n->driver)
            fprintf(fp, "      <driver name='%s'/>\n", net_driver_words[n->driver - 1]);
        if (n->link)
            fprintf(fp, "      <link state='%s'/>\n", link_state_words[n->link - 1]);
        if (n->alias)
            rv_qemu_format_alias(fp, def, "      ", "%s", n->alias);
        rv_qemu_format_pci_address(fp, &n->addr, "      ");
        fputs("    </interface>\n", fp);
    }
    rv_qemu_format_chars(fp, def);
    rv_qemu_format_graphics_and_av(fp, def);
    rv_qemu_format_watchdog(fp, def);
    if (def->dev.balloon_addr.set) {
        fputs("    <memballoon model='virtio'>\n", fp);
        rv_qemu_format_alias(fp, def, "      ", "balloon0");
        rv_qemu_format_pci_address(fp, &def->dev.balloon_addr, "      ");
        fputs("    </memballoon>\n", fp);
    } else {
        fprintf(fp, "    <memballoon model='%s'/>\n", def->balloon ? "virtio" : "none");
    }
    rv_qemu_format_rngs(fp, def);
    fputs("  </devices>\n", fp);
    if (rv_qemu_def_tainted(def)) {
        fputs("  <qemu:commandline>\n", fp);
        for (size_t i = 0; i < def->nqemu_args; i++) {
            fputs("    <qemu:arg value='", fp);
            rv_xml_put_escaped(fp, def->qemu_args[i]);
            fputs("'/>\n", fp);
        }
        for (size_t i = 0; i < def->nqemu_env; i++) {
            fputs("    <qemu:env name='", fp);
            rv_xml_put_escaped(fp, def->qemu_env_names[i]);
            if (def->qemu_env_values[i]) {
                fputs("' value='", fp);
                rv_xml_put_escaped(fp, def->qemu_env_values[i]);
            }
            fputs("'/>\n", fp);
        }
        fputs("  </qemu:commandline>\n", fp);
    }
    fputs("</domain>\n", fp);
    return rv_xml_done(fp, &b.text);
}

void rv_qemu_domain_free(rv_qemu_domain_def *def)
{
    if (!def)
        return;
    rv_domain_base_clear(&def->base);
    free(def->kernel);
    free(def->emulator);
    free(def->initrd);
    free(def->cmdline);
    free(def->metadata);
    for (size_t i = 0; i < def->nqemu_args; i++)
        free(def->qemu_args[i]);
    free(def->qemu_args);
    for (size_t i = 0; i < def->nqemu_env; i++) {
        free(def->qemu_env_names[i]);
        free(def->qemu_env_values[i]);
    }
    free(def->qemu_env_names);
    free(def->qemu_env_values);
    free(def->cpu_model);
    free(def->cpu_vendor);
    for (size_t i = 0; i < def->ncpu_features; i++)
        free(def->cpu_features[i].name);
    free(def->cpu_features);
    for (size_t i = 0; i < def->ndisks; i++) {
        free(def->disks[i].source);
        free(def->disks[i].target);
        free(def->disks[i].serial);
        free(def->disks[i].pool);
        free(def->disks[i].volume);
        rv_qemu_iotune_free(def->disks[i].iotune);
    }
    free(def->disks);
    for (size_t i = 0; i < def->ninterfaces; i++) {
        free(def->interfaces[i].bridge);
        free(def->interfaces[i].network);
        free(def->interfaces[i].ifname);
        free(def->interfaces[i].model);
        free(def->interfaces[i].alias);
    }
    free(def->interfaces);
    free(def->graphics.listen);
    free(def->graphics.compression);
    free(def->spice.listen);
    free(def->spice.compression);
    for (size_t i = 0; i < RV_QEMU_MAX_SERIALS; i++)
        free(def->serials[i].path);
    rv_qemu_devices_free(&def->dev);
    rv_domain_tune_free(def->tune);
    free(def);
}

/* ---------------------------------------------------------------- one device */

/* The element alone, serialised (malloc'd), or NULL. */
static char *element_text(xmlDoc *doc, xmlNode *n)
{
    char *text = NULL;
    xmlBuffer *buf = xmlBufferCreate();
    if (buf && xmlNodeDump(buf, doc, n, 0, 0) >= 0)
        text = strdup((const char *)xmlBufferContent(buf));
    xmlBufferFree(buf);
    return text;
}

/* A domain holding only the device in dev->text. */
static rv_qemu_domain_def *alone(const char *text, rv_err *err)
{
    char *whole = NULL;
    if (asprintf(&whole, "<domain type='qemu'><name>device</name><memory>1024</memory>"
                         "<os><type arch='x86_64'>hvm</type></os><devices>%s</devices></domain>",
                 text) < 0) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    rv_qemu_domain_def *def = domain_parse(whole, strlen(whole), true, err);
    free(whole);
    return def;
}

int rv_qemu_device_read(const char *xml, rv_qemu_device *dev, rv_err *err)
{
    memset(dev, 0, sizeof(*dev));
    xmlDoc *doc;
    xmlNode *root = rv_lx_read(xml, RV_QEMU_DOMAIN_XML_MAX, NULL, "device", RV_FROM_DOM, &doc, err);
    if (!root)
        return -1;
    if (!named(root, "disk") && !named(root, "interface")) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_OPERATION_UNSUPPORTED,
                   "Operation not supported: device type '%s' is not supported here (disk or interface)",
                   node_name(root));
        rv_lx_free(doc);
        return -1;
    }
    dev->kind = named(root, "disk") ? RV_QEMU_DEV_DISK : RV_QEMU_DEV_INTERFACE;
    for (const xmlNode *c = root->children; c; c = c->next)
        dev->mac_given |= c->type == XML_ELEMENT_NODE && named(c, "mac");
    int rc = -1;
    if (!(dev->text = element_text(doc, root)))
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
    else if ((dev->alone = alone(dev->text, err)))
        rc = 0;
    /* The MAC generated now is the device's, live and in the definition. */
    if (rc == 0 && dev->kind == RV_QEMU_DEV_INTERFACE && !dev->mac_given) {
        const unsigned char *m = dev->alone->interfaces[0].mac;
        char mac[18];
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
        xmlNode *el = xmlNewChild(root, NULL, (const xmlChar *)"mac", NULL);
        free(dev->text);
        if (!el || !xmlSetProp(el, (const xmlChar *)"address", (const xmlChar *)mac) ||
            !(dev->text = element_text(doc, root))) {
            dev->text = NULL;
            rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
            rc = -1;
        }
    }
    rv_lx_free(doc);
    if (rc < 0)
        rv_qemu_device_clear(dev);
    return rc;
}

void rv_qemu_device_clear(rv_qemu_device *dev)
{
    free(dev->text);
    rv_qemu_domain_free(dev->alone);
    memset(dev, 0, sizeof(*dev));
}

rv_qemu_domain_def *rv_qemu_def_with_device(const rv_qemu_domain_def *def, const rv_qemu_device *dev,
                                            rv_err *err)
{
    char *xml = rv_qemu_domain_format(def), *whole = NULL;
    /* Last in <devices>: the reader lists each kind in document order. */
    const char *at = xml ? strstr(xml, "  </devices>") : NULL;
    if (at && asprintf(&whole, "%.*s    %s\n%s", (int)(at - xml), xml, dev->text, at) < 0)
        whole = NULL;
    free(xml);
    if (!whole) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    rv_qemu_domain_def *copy = rv_qemu_domain_parse(whole, strlen(whole), err);
    free(whole);
    if (copy) {
        copy->boot_vcpus = def->boot_vcpus;
        copy->aliases = def->aliases;
    }
    return copy;
}

void rv_qemu_def_remove_disk(rv_qemu_domain_def *def, size_t i)
{
    rv_qemu_disk *d = &def->disks[i];
    free(d->source);
    free(d->target);
    free(d->serial);
    free(d->pool);
    free(d->volume);
    rv_qemu_iotune_free(d->iotune);
    memmove(d, d + 1, (def->ndisks - i - 1) * sizeof(*d));
    def->ndisks--;
}

void rv_qemu_def_remove_interface(rv_qemu_domain_def *def, size_t i)
{
    rv_qemu_interface *n = &def->interfaces[i];
    free(n->bridge);
    free(n->network);
    free(n->ifname);
    free(n->model);
    free(n->alias);
    memmove(n, n + 1, (def->ninterfaces - i - 1) * sizeof(*n));
    def->ninterfaces--;
}

void rv_qemu_def_swap(rv_qemu_domain_def *a, rv_qemu_domain_def *b)
{
    rv_qemu_domain_def t = *a;
    *a = *b;
    *b = t;
}

/* ---------------------------------------------------------------- aliases */

/* libvirt's index of a disk target: the letters after the two-letter
 * prefix, base 26 (vda 0, vdz 25, vdaa 26). */
unsigned rv_qemu_disk_index(const char *target)
{
    unsigned idx = 0;
    for (const char *p = target + 2; *p; p++)
        idx = (idx + (p == target + 2 ? 0 : 1)) * 26 + (unsigned)(*p - 'a');
    return idx;
}

void rv_qemu_disk_alias(const rv_qemu_domain_def *def, const rv_qemu_disk *d, char *buf, size_t size)
{
    unsigned idx = rv_qemu_disk_index(d->target);
    if (d->bus == RV_QEMU_BUS_VIRTIO)
        snprintf(buf, size, "virtio-disk%u", idx);
    else if (d->bus == RV_QEMU_BUS_SCSI)
        snprintf(buf, size, "scsi%u-%u-%u-%u", d->drive.controller, d->drive.bus, d->drive.target,
                 d->drive.unit);
    else if (d->bus == RV_QEMU_BUS_SATA || rv_qemu_machine_is_q35(def->machine))
        snprintf(buf, size, "sata0-0-%u", idx);
    else
        snprintf(buf, size, "ide0-%u-%u", idx / 2, idx % 2);
}

int rv_qemu_assign_net_aliases(rv_qemu_domain_def *def, rv_err *err)
{
    /* As libvirtd: one past the highest in use. */
    unsigned next = 0;
    for (size_t i = 0; i < def->ninterfaces; i++) {
        unsigned long long n;
        const char *a = def->interfaces[i].alias;
        if (a && parse_ull(a + 3, &n) == 0 && n + 1 > next && n < 100000)
            next = (unsigned)n + 1;
    }
    for (size_t i = 0; i < def->ninterfaces; i++) {
        if (def->interfaces[i].alias)
            continue;
        if (asprintf(&def->interfaces[i].alias, "net%u", next++) < 0) {
            def->interfaces[i].alias = NULL;
            XML_FAIL(RV_ERR_NO_MEMORY, "out of memory");
        }
    }
    return 0;
}

void rv_qemu_format_alias(FILE *fp, const rv_qemu_domain_def *def, const char *indent, const char *fmt, ...)
{
    if (!def->aliases)
        return;
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    fprintf(fp, "%s<alias name='", indent);
    rv_xml_put_escaped(fp, name);
    fputs("'/>\n", fp);
}

/* ---------------------------------------------------------------- for domain_devices.c */

int rv_qx_check_attrs(const xmlNode *n, const char *const *allowed, rv_err *err)
{
    return check_attrs(n, allowed, err);
}

int rv_qx_next_child(const xmlNode *parent, const xmlNode **cursor, rv_err *err)
{
    return next_child(parent, cursor, err);
}

int rv_qx_text_of(const xmlNode *n, const char *const *allowed, char **out, rv_err *err)
{
    return text_of(n, allowed, out, err);
}

int rv_qx_empty_element(const xmlNode *n, const char *const *attrs, rv_err *err)
{
    return empty_element(n, attrs, err);
}

char *rv_qx_attr(const xmlNode *n, const char *name)
{
    return attr(n, name);
}

int rv_qx_word_index(const char *word, const char *const *words)
{
    return word_index(word, words);
}

int rv_qx_attr_word(const xmlNode *n, const char *name, const char *const *words, rv_err *err)
{
    return attr_word(n, name, words, err);
}

int rv_qx_parse_uint(const char *text, unsigned long long *out)
{
    if (text && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        if (!text[2] || !only_chars(text + 2, "0123456789abcdefABCDEF") || strlen(text + 2) > 8)
            return -1;
        *out = strtoull(text + 2, NULL, 16);
        return 0;
    }
    return parse_ull(text, out);
}

int rv_qx_parse_memory(const xmlNode *n, unsigned long long *kib, rv_err *err)
{
    return parse_memory(n, kib, err);
}

void rv_qx_put_escaped(FILE *fp, const char *s)
{
    rv_xml_put_escaped(fp, s);
}

rv_qemu_disk *rv_qemu_disk_find(const rv_qemu_domain_def *def, const char *path)
{
    for (size_t i = 0; def && i < def->ndisks; i++)
        if (strcmp(def->disks[i].target, path) == 0)
            return &def->disks[i];
    for (size_t i = 0; def && i < def->ndisks; i++)
        if (def->disks[i].source && strcmp(def->disks[i].source, path) == 0)
            return &def->disks[i];
    return NULL;
}
