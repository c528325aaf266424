/* The devices of domain_devices.h: read, normalised as libvirt does (the
 * implicit devices added, PCI addresses assigned once and then kept in
 * the definition so they stay the same across restarts), written back. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "server/drivers/qemu/domain_devices.h"
#include "server/drivers/qemu/domain_xml.h"
#include "server/drivers/qemu/domain_xml_priv.h"

#define FAIL(code, ...) \
    do { \
        rv_err_set(err, RV_FROM_DOM, (code), __VA_ARGS__); \
        return -1; \
    } while (0)
#define UNSUPPORTED(...) FAIL(RV_ERR_CONFIG_UNSUPPORTED, __VA_ARGS__)
#define BAD_XML(...) FAIL(RV_ERR_XML_ERROR, __VA_ARGS__)
#define NO_MEMORY() FAIL(RV_ERR_NO_MEMORY, "out of memory")

static const char *const ctl_type_words[] = { "usb", "pci", "virtio-serial", "sata", "ide", "scsi", NULL };
static const char *const usb_model_words[] = {
    "qemu-xhci", "ich9-ehci1", "ich9-uhci1", "ich9-uhci2", "ich9-uhci3", "piix3-uhci", "none", NULL
};
static const char *const pci_model_words[] = { "pci-root", "pcie-root", "pcie-root-port", NULL };
static const char *const scsi_model_words[] = { "virtio-scsi", NULL };
static const char *const video_words[] = { "vga", "cirrus", "qxl", "virtio", "bochs", "none", NULL };
static const char *const input_type_words[] = { "tablet", "mouse", "keyboard", NULL };
static const char *const input_bus_words[] = { "usb", "ps2", NULL };
static const char *const sound_words[] = { "ich6", "ich9", "ac97", NULL };
static const char *const audio_words[] = { "none", "spice", NULL };
static const char *const channel_words[] = { "spicevmc", "unix", NULL };
static const char *const no_yes_words[] = { "no", "yes", NULL };
static const char *const off_on_words[] = { "off", "on", NULL };
static const char *const none[] = { NULL };
const char *const rv_qemu_watchdog_model_words[] = { "i6300esb", "ib700", NULL };
const char *const rv_qemu_watchdog_action_words[] = {
    "reset", "shutdown", "poweroff", "pause", "dump", "none", "inject-nmi", NULL
};

static bool named(const xmlNode *n, const char *name)
{
    return strcmp((const char *)n->name, name) == 0;
}

bool rv_qemu_machine_is_q35(const char *machine)
{
    return strncmp(machine, "q35", 3) == 0 || strstr(machine, "-q35") != NULL;
}

/* A number attribute (decimal or 0x hex) in [min, max]; absent: dflt. */
static int attr_uint(const xmlNode *n, const char *name, unsigned long long min,
                     unsigned long long max, unsigned long long dflt, unsigned long long *out,
                     rv_err *err)
{
    char *v = rv_qx_attr(n, name);
    *out = dflt;
    if (!v)
        return 0;
    int bad = rv_qx_parse_uint(v, out) < 0 || *out < min || *out > max;
    if (bad)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_XML_ERROR, "invalid %s='%s' of element <%s> (%llu to %llu)",
                   name, v, (const char *)n->name, min, max);
    free(v);
    return bad ? -1 : 0;
}

int rv_qemu_parse_drive_address(const xmlNode *n, rv_qemu_drive_addr *addr, rv_err *err)
{
    static const char *const attrs[] = { "type", "controller", "bus", "target", "unit", NULL };
    unsigned long long controller, bus, target, unit;
    if (addr->set)
        BAD_XML("more than one <address> in a device");
    if (rv_qx_empty_element(n, attrs, err) < 0 ||
        attr_uint(n, "controller", 0, 0xffffffffu, 0, &controller, err) < 0 ||
        attr_uint(n, "bus", 0, 0xffffffffu, 0, &bus, err) < 0 ||
        attr_uint(n, "target", 0, 0xffffffffu, 0, &target, err) < 0 ||
        attr_uint(n, "unit", 0, 0xffffffffu, 0, &unit, err) < 0)
        return -1;
    /* (ide and sata addresses are checked by place_disks: they must be
     * the ones their target names give) */
    if (target > 255 || unit > 16383 || bus > 255)
        BAD_XML("invalid drive address bus %llu target %llu unit %llu", bus, target, unit);
    *addr = (rv_qemu_drive_addr){ .set = true, .controller = (unsigned)controller,
                                  .bus = (unsigned)bus, .target = (unsigned)target, .unit = (unsigned)unit };
    return 0;
}

int rv_qemu_parse_pci_address(const xmlNode *n, rv_qemu_pci_addr *addr, rv_err *err)
{
    static const char *const attrs[] = { "type", "domain", "bus", "slot", "function", "multifunction", NULL };
    static const char *const pci[] = { "pci", NULL };
    unsigned long long domain, bus, slot, function;
    if (addr->set)
        BAD_XML("more than one <address> in a device");
    if (rv_qx_empty_element(n, attrs, err) < 0 || rv_qx_attr_word(n, "type", pci, err) < 0 ||
        attr_uint(n, "domain", 0, 0xffff, 0, &domain, err) < 0 ||
        attr_uint(n, "bus", 0, 0xff, 0, &bus, err) < 0 ||
        attr_uint(n, "slot", 0, RV_QEMU_PCI_SLOTS - 1, 0, &slot, err) < 0 ||
        attr_uint(n, "function", 0, 7, 0, &function, err) < 0)
        return -1;
    if (domain != 0)
        UNSUPPORTED("unsupported PCI address domain %llu (only domain 0)", domain);
    /* Which buses exist is known with the controllers (assign_pci_addresses). */
    if (slot == 0 && bus == 0)
        BAD_XML("PCI slot 0 is the host bridge's");
    if (bus != 0 && slot != 0)
        BAD_XML("PCI address bus %llu slot %llu: a pcie-root-port's bus has one slot, 0", bus, slot);
    char *mf = rv_qx_attr(n, "multifunction");
    int on = mf ? rv_qx_word_index(mf, off_on_words) : 0;
    free(mf);
    if (on < 0)
        BAD_XML("invalid multifunction of a PCI <address> (on or off)");
    addr->set = true;
    addr->bus = (unsigned)bus;
    addr->slot = (unsigned)slot;
    addr->function = (unsigned)function;
    addr->multifunction = on == 1;
    return 0;
}

/* <address type='usb' bus='0' port='N'/>: N in *port. */
static int parse_usb_address(const xmlNode *n, unsigned *port, rv_err *err)
{
    static const char *const attrs[] = { "type", "bus", "port", NULL };
    static const char *const usb[] = { "usb", NULL };
    unsigned long long bus, p;
    if (*port)
        BAD_XML("more than one <address> in a device");
    if (rv_qx_empty_element(n, attrs, err) < 0 || rv_qx_attr_word(n, "type", usb, err) < 0 ||
        attr_uint(n, "bus", 0, 0, 0, &bus, err) < 0 || attr_uint(n, "port", 1, 15, 0, &p, err) < 0)
        return -1;
    if (!p)
        BAD_XML("a USB <address> needs a port");
    *port = (unsigned)p;
    return 0;
}

static int usb_child(const xmlNode *c, void *opaque, rv_err *err)
{
    if (!named(c, "address"))
        return 0;
    return parse_usb_address(c, opaque, err) < 0 ? -1 : 1;
}

/* The children of a device that has at most a PCI <address> (and what
 * more(), when given, accepts). */
static int device_children(const xmlNode *n, rv_qemu_pci_addr *addr,
                           int (*more)(const xmlNode *c, void *opaque, rv_err *err), void *opaque,
                           rv_err *err)
{
    const xmlNode *c = NULL;
    int r;
    while ((r = rv_qx_next_child(n, &c, err)) > 0) {
        if (named(c, "address") && addr) {
            if (rv_qemu_parse_pci_address(c, addr, err) < 0)
                return -1;
            continue;
        }
        int handled = more ? more(c, opaque, err) : 0;
        if (handled < 0)
            return -1;
        if (handled == 0)
            UNSUPPORTED("unsupported element <%s> in <%s>", (const char *)c->name, (const char *)n->name);
    }
    return r;
}

/* ---------------------------------------------------------------- controllers */

static int controller_child(const xmlNode *c, void *opaque, rv_err *err)
{
    static const char *const master_attrs[] = { "startport", NULL };
    static const char *const target_attrs[] = { "chassis", "port", NULL };
    rv_qemu_controller *ctl = opaque;
    unsigned long long v;
    if (named(c, "master") && ctl->type == RV_QEMU_CTRL_USB) {
        if (rv_qx_empty_element(c, master_attrs, err) < 0 ||
            attr_uint(c, "startport", 0, 15, 0, &v, err) < 0)
            return -1;
        ctl->master_startport = (int)v;
        return 1;
    }
    if (named(c, "target") && ctl->type == RV_QEMU_CTRL_PCI && ctl->model == RV_QEMU_PCIE_ROOT_PORT) {
        if (rv_qx_empty_element(c, target_attrs, err) < 0 ||
            attr_uint(c, "chassis", 1, 255, 0, &v, err) < 0)
            return -1;
        ctl->chassis = (unsigned)v;
        if (attr_uint(c, "port", 0, 255, 0, &v, err) < 0)
            return -1;
        ctl->port = (unsigned)v;
        return 1;
    }
    if (named(c, "driver") && ctl->type == RV_QEMU_CTRL_SCSI) {
        static const char *const driver_attrs[] = { "iothread", NULL };
        return rv_qx_check_attrs(c, driver_attrs, err) < 0 ||
               rv_qemu_disk_iothread_attr(c, &ctl->iothread, err) < 0 ? -1 : 1;
    }
    /* <model name='pcie-root-port'/>: the QEMU device libvirtd names in
     * its live and migratable XML; the one remvirtd runs too. */
    if (named(c, "model") && ctl->type == RV_QEMU_CTRL_PCI && ctl->model == RV_QEMU_PCIE_ROOT_PORT) {
        static const char *const model_attrs[] = { "name", NULL };
        static const char *const root_port[] = { "pcie-root-port", NULL };
        if (rv_qx_empty_element(c, model_attrs, err) < 0 || rv_qx_attr_word(c, "name", root_port, err) < 0)
            return -1;
        return 1;
    }
    return 0;
}

static int parse_controller(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "type", "index", "model", "ports", NULL };
    if (dev->ncontrollers == RV_QEMU_MAX_CONTROLLERS)
        UNSUPPORTED("more than %d <controller> elements", RV_QEMU_MAX_CONTROLLERS);
    rv_qemu_controller *ctl = &dev->controllers[dev->ncontrollers];
    memset(ctl, 0, sizeof(*ctl));
    ctl->master_startport = -1;
    int type;
    if (rv_qx_check_attrs(n, attrs, err) < 0 || (type = rv_qx_attr_word(n, "type", ctl_type_words, err)) < 0)
        return -1;
    ctl->type = (rv_qemu_ctrl_type)type;
    char *model = rv_qx_attr(n, "model");
    const char *const *models = type == RV_QEMU_CTRL_USB ? usb_model_words
                              : type == RV_QEMU_CTRL_PCI ? pci_model_words
                              : type == RV_QEMU_CTRL_SCSI ? scsi_model_words : NULL;
    if (type == RV_QEMU_CTRL_USB && !model)
        ctl->model = RV_QEMU_USB_NONE + 1;      /* the machine's default, chosen below */
    else if (models && model)
        ctl->model = rv_qx_word_index(model, models);
    else
        ctl->model = model ? -1 : 0;
    if (ctl->model < 0 || (models == pci_model_words && !model) || (models == scsi_model_words && !model)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported <controller type='%s'> model '%s'", ctl_type_words[type], model ? model : "");
        free(model);
        return -1;
    }
    free(model);
    unsigned long long index, ports;
    if (attr_uint(n, "index", 0, RV_QEMU_MAX_CONTROLLERS - 1, ULLONG_MAX, &index, err) < 0)
        return -1;
    /* ports: virt-manager writes 15 for qemu-xhci (QEMU's most). */
    if (attr_uint(n, "ports", 1, 15, 0, &ports, err) < 0)
        return -1;
    if (ports && !(type == RV_QEMU_CTRL_USB && ctl->model == RV_QEMU_USB_QEMU_XHCI))
        UNSUPPORTED("<controller ports> is supported on a qemu-xhci USB controller only");
    ctl->ports = (unsigned)ports;
    if (device_children(n, &ctl->addr, controller_child, ctl, err) < 0)
        return -1;
    if (index == ULLONG_MAX) {
        /* libvirt's default: the first index of the type not yet taken,
         * but a USB companion belongs to the controller before it. */
        bool companion = type == RV_QEMU_CTRL_USB && ctl->model >= RV_QEMU_USB_UHCI1 &&
                         ctl->model <= RV_QEMU_USB_UHCI3;
        /* (Index 0 of type pci is the root bus's.) */
        index = type == RV_QEMU_CTRL_PCI && ctl->model == RV_QEMU_PCIE_ROOT_PORT ? 1 : 0;
        for (bool taken = true; taken; ) {
            taken = false;
            for (size_t i = 0; i < dev->ncontrollers && !companion; i++)
                if (dev->controllers[i].type == ctl->type && dev->controllers[i].index == index) {
                    taken = true;
                    index++;
                    break;
                }
        }
    }
    ctl->index = (unsigned)index;
    if (ctl->type != RV_QEMU_CTRL_PCI && ctl->index != 0)
        UNSUPPORTED("unsupported <controller type='%s' index='%u'> (only index 0)", ctl_type_words[type],
                    ctl->index);
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        const rv_qemu_controller *o = &dev->controllers[i];
        bool both_usb_parts = o->type == RV_QEMU_CTRL_USB && ctl->type == RV_QEMU_CTRL_USB &&
                              o->model != ctl->model &&
                              (o->model == RV_QEMU_USB_EHCI1 || o->master_startport >= 0) &&
                              (ctl->model == RV_QEMU_USB_EHCI1 || ctl->master_startport >= 0);
        if (o->type == ctl->type && o->index == ctl->index && !both_usb_parts)
            BAD_XML("two <controller type='%s'> have the index %u", ctl_type_words[type], ctl->index);
    }
    dev->ncontrollers++;
    return 0;
}

/* ---------------------------------------------------------------- video, input, sound */

static int video_child(const xmlNode *c, void *opaque, rv_err *err)
{
    static const char *const attrs[] = { "type", "ram", "vram", "vgamem", "heads", "primary", NULL };
    rv_qemu_video *v = opaque;
    if (!named(c, "model"))
        return 0;
    int model;
    unsigned long long x;
    if (rv_qx_empty_element(c, attrs, err) < 0 || (model = rv_qx_attr_word(c, "type", video_words, err)) < 0)
        return -1;
    v->model = (rv_qemu_video_model)model;
    if (attr_uint(c, "ram", 1024, 1048576, 0, &v->ram_kib, err) < 0 ||
        attr_uint(c, "vram", 1024, 1048576, 0, &v->vram_kib, err) < 0 ||
        attr_uint(c, "vgamem", 1024, 262144, 0, &v->vgamem_kib, err) < 0 ||
        attr_uint(c, "heads", 1, 16, 0, &x, err) < 0)
        return -1;
    v->heads = (unsigned)x;
    char *primary = rv_qx_attr(c, "primary");
    int p = primary ? rv_qx_word_index(primary, no_yes_words) : 0;
    free(primary);
    if (p < 0)
        BAD_XML("invalid primary of a video <model> (yes or no)");
    v->primary = p == 1;
    return 1;
}

static int parse_video(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    if (dev->nvideos == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <video> elements", RV_QEMU_MAX_DEVICES);
    rv_qemu_video *v = &dev->videos[dev->nvideos];
    memset(v, 0, sizeof(*v));
    v->model = RV_QEMU_VIDEO_NONE + 1;
    if (rv_qx_check_attrs(n, none, err) < 0 || device_children(n, &v->addr, video_child, v, err) < 0)
        return -1;
    if (v->model > RV_QEMU_VIDEO_NONE)
        BAD_XML("a <video> has no <model type='...'>");
    dev->nvideos++;
    return 0;
}

static int parse_input(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "type", "bus", NULL };
    if (dev->ninputs == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <input> elements", RV_QEMU_MAX_DEVICES);
    rv_qemu_input *in = &dev->inputs[dev->ninputs];
    int type, bus;
    if (rv_qx_check_attrs(n, attrs, err) < 0 || (type = rv_qx_attr_word(n, "type", input_type_words, err)) < 0)
        return -1;
    char *b = rv_qx_attr(n, "bus");
    /* libvirt's defaults on x86: a tablet is USB, a mouse or keyboard PS/2. */
    bus = b ? rv_qx_word_index(b, input_bus_words) : type == RV_QEMU_INPUT_TABLET ? RV_QEMU_INPUT_USB
                                                                                    : RV_QEMU_INPUT_PS2;
    if (bus < 0 || (type == RV_QEMU_INPUT_TABLET && bus == RV_QEMU_INPUT_PS2)) {
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED, "unsupported <input type='%s' bus='%s'>",
                   input_type_words[type], b ? b : "");
        free(b);
        return -1;
    }
    free(b);
    in->usb_port = 0;
    if (device_children(n, NULL, bus == RV_QEMU_INPUT_USB ? usb_child : NULL, &in->usb_port, err) < 0)
        return -1;
    in->type = (rv_qemu_input_type)type;
    in->bus = (rv_qemu_input_bus)bus;
    for (size_t i = 0; i < dev->ninputs; i++)
        if (in->bus == RV_QEMU_INPUT_PS2 && dev->inputs[i].bus == RV_QEMU_INPUT_PS2 &&
            dev->inputs[i].type == in->type)
            UNSUPPORTED("more than one PS/2 %s", input_type_words[type]);
    dev->ninputs++;
    return 0;
}

static int parse_sound(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "model", NULL };
    if (dev->nsounds == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <sound> elements", RV_QEMU_MAX_DEVICES);
    rv_qemu_sound *s = &dev->sounds[dev->nsounds];
    memset(s, 0, sizeof(*s));
    int model;
    if (rv_qx_check_attrs(n, attrs, err) < 0 || (model = rv_qx_attr_word(n, "model", sound_words, err)) < 0 ||
        device_children(n, &s->addr, NULL, NULL, err) < 0)
        return -1;
    s->model = (rv_qemu_sound_model)model;
    dev->nsounds++;
    return 0;
}

static int parse_audio(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "id", "type", NULL };
    static const char *const one[] = { "1", NULL };
    int type;
    if (dev->audio >= 0)
        UNSUPPORTED("more than one <audio> is not supported");
    if (rv_qx_empty_element(n, attrs, err) < 0 || rv_qx_attr_word(n, "id", one, err) < 0 ||
        (type = rv_qx_attr_word(n, "type", audio_words, err)) < 0)
        return -1;
    dev->audio = type;
    return 0;
}

/* ---------------------------------------------------------------- channels, redirdev, rng */

static bool safe_name(const char *s)
{
    size_t len = strlen(s);
    return len > 0 && len <= 64 &&
           s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")] == '\0';
}

int rv_qemu_parse_unix_source(const xmlNode *c, char **path, bool *connect, rv_err *err)
{
    static const char *const source_attrs[] = { "mode", "path", NULL };
    static const char *const modes[] = { "bind", "connect", NULL };
    if (rv_qx_empty_element(c, source_attrs, err) < 0)
        return -1;
    char *mode = rv_qx_attr(c, "mode");
    int m = mode ? rv_qx_word_index(mode, modes) : 0;
    free(mode);
    if (m < 0)
        UNSUPPORTED("unsupported unix <source> mode (bind or connect) in <%s>", (const char *)c->parent->name);
    *connect = m == 1;
    free(*path);
    *path = rv_qx_attr(c, "path");
    if (*path && ((*path)[0] != '/' || strlen(*path) >= 108))
        BAD_XML("invalid socket path '%s' in <%s> (absolute, under 108 bytes)", *path,
                (const char *)c->parent->name);
    if (!*path && *connect)
        BAD_XML("Missing source path attribute for char device");
    return 0;
}

void rv_qemu_format_unix_source(FILE *fp, const char *path, bool connect)
{
    fprintf(fp, "      <source mode='%s'", connect ? "connect" : "bind");
    if (path) {
        fputs(" path='", fp);
        rv_qx_put_escaped(fp, path);
        fputs("'", fp);
    }
    fputs("/>\n", fp);
}

static int channel_child(const xmlNode *c, void *opaque, rv_err *err)
{
    static const char *const target_attrs[] = { "type", "name", "state", NULL };
    static const char *const addr_attrs[] = { "type", "controller", "bus", "port", NULL };
    static const char *const virtio[] = { "virtio", NULL };
    static const char *const vs[] = { "virtio-serial", NULL };
    rv_qemu_channel *ch = opaque;
    if (named(c, "source") && ch->type == RV_QEMU_CHANNEL_UNIX)
        return rv_qemu_parse_unix_source(c, &ch->path, &ch->connect, err) < 0 ? -1 : 1;
    if (named(c, "target")) {
        /* state= is the agent's connection, shown in the live XML. */
        if (rv_qx_empty_element(c, target_attrs, err) < 0 || rv_qx_attr_word(c, "type", virtio, err) < 0)
            return -1;
        free(ch->name);
        ch->name = rv_qx_attr(c, "name");
        if (ch->name && !safe_name(ch->name))
            BAD_XML("invalid channel target name '%s'", ch->name);
        return 1;
    }
    if (named(c, "address")) {
        unsigned long long zero, port;
        if (rv_qx_empty_element(c, addr_attrs, err) < 0 || rv_qx_attr_word(c, "type", vs, err) < 0 ||
            attr_uint(c, "controller", 0, 0, 0, &zero, err) < 0 || attr_uint(c, "bus", 0, 0, 0, &zero, err) < 0 ||
            attr_uint(c, "port", 1, 30, 0, &port, err) < 0)
            return -1;
        ch->port = (unsigned)port;
        return 1;
    }
    return 0;
}

static int parse_channel(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "type", NULL };
    if (dev->nchannels == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <channel> elements", RV_QEMU_MAX_DEVICES);
    rv_qemu_channel *ch = &dev->channels[dev->nchannels];
    memset(ch, 0, sizeof(*ch));
    int type;
    if (rv_qx_check_attrs(n, attrs, err) < 0 || (type = rv_qx_attr_word(n, "type", channel_words, err)) < 0)
        return -1;
    ch->type = (rv_qemu_channel_type)type;
    dev->nchannels++;     /* from here on freed with the definition */
    if (device_children(n, NULL, channel_child, ch, err) < 0)
        return -1;
    if (!ch->name && ch->type == RV_QEMU_CHANNEL_SPICEVMC && !(ch->name = strdup("com.redhat.spice.0")))
        NO_MEMORY();
    if (!ch->name)
        BAD_XML("a unix <channel> has no <target name='...'>");
    for (size_t i = 0; i + 1 < dev->nchannels; i++) {
        if (strcmp(dev->channels[i].name, ch->name) == 0)
            BAD_XML("two channels have the name '%s'", ch->name);
        if (ch->port && dev->channels[i].port == ch->port)
            BAD_XML("two channels are on virtio-serial port %u", ch->port);
    }
    return 0;
}

static int parse_redirdev(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "bus", "type", NULL };
    static const char *const usb[] = { "usb", NULL };
    static const char *const spicevmc[] = { "spicevmc", NULL };
    if (dev->nredirdevs == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <redirdev> elements", RV_QEMU_MAX_DEVICES);
    if (rv_qx_check_attrs(n, attrs, err) < 0 || rv_qx_attr_word(n, "bus", usb, err) < 0 ||
        rv_qx_attr_word(n, "type", spicevmc, err) < 0)
        return -1;
    dev->redirdev_ports[dev->nredirdevs] = 0;
    if (device_children(n, NULL, usb_child, &dev->redirdev_ports[dev->nredirdevs], err) < 0)
        return -1;
    dev->nredirdevs++;
    return 0;
}

static int rng_child(const xmlNode *c, void *opaque, rv_err *err)
{
    static const char *const attrs[] = { "model", NULL };
    static const char *const random[] = { "random", NULL };
    static const char *const sources[] = { "/dev/urandom", "/dev/random", "/dev/hwrng", NULL };
    rv_qemu_rng *rng = opaque;
    if (!named(c, "backend"))
        return 0;
    if (rng->backend)
        BAD_XML("more than one <backend> in <rng>");
    if (rv_qx_text_of(c, attrs, &rng->backend, err) < 0 || rv_qx_attr_word(c, "model", random, err) < 0)
        return -1;
    if (rv_qx_word_index(rng->backend, sources) < 0)
        UNSUPPORTED("unsupported rng source '%s' (/dev/urandom, /dev/random or /dev/hwrng)", rng->backend);
    return 1;
}

static int parse_rng(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "model", NULL };
    static const char *const virtio[] = { "virtio", NULL };
    if (dev->nrngs == RV_QEMU_MAX_DEVICES)
        UNSUPPORTED("more than %d <rng> elements", RV_QEMU_MAX_DEVICES);
    rv_qemu_rng *rng = &dev->rngs[dev->nrngs];
    memset(rng, 0, sizeof(*rng));
    dev->nrngs++;
    if (rv_qx_check_attrs(n, attrs, err) < 0 || rv_qx_attr_word(n, "model", virtio, err) < 0 ||
        device_children(n, &rng->addr, rng_child, rng, err) < 0)
        return -1;
    if (!rng->backend)
        BAD_XML("an <rng> has no <backend model='random'>");
    return 0;
}

/* libvirtd's words for what it refuses (diag288 is s390's; itco and the
 * rest unknown to libvirt 9.0). */
static int parse_watchdog(const xmlNode *n, rv_qemu_devices *dev, rv_err *err)
{
    static const char *const attrs[] = { "model", "action", NULL };
    rv_qemu_watchdog *w = &dev->watchdog;
    if (w->present)
        FAIL(RV_ERR_INTERNAL_ERROR, "internal error: only a single watchdog device is supported");
    char *model = rv_qx_attr(n, "model"), *action = rv_qx_attr(n, "action");
    int m = model ? rv_qx_word_index(model, rv_qemu_watchdog_model_words) : -1;
    int a = action ? rv_qx_word_index(action, rv_qemu_watchdog_action_words) : RV_QEMU_WATCHDOG_RESET;
    int rc = -1;
    if (!model)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_INTERNAL_ERROR, "internal error: watchdog must contain model name");
    else if (m < 0 && strcmp(model, "diag288") == 0)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported configuration: diag288 model of watchdog is allowed for s390 and s390x only");
    else if (m < 0)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported configuration: unknown watchdog model '%s'", model);
    else if (a < 0)
        rv_err_set(err, RV_FROM_DOM, RV_ERR_CONFIG_UNSUPPORTED,
                   "unsupported configuration: unknown watchdog action '%s'", action);
    else
        rc = 0;
    free(model);
    free(action);
    if (rc < 0 || rv_qx_check_attrs(n, attrs, err) < 0)
        return -1;
    *w = (rv_qemu_watchdog){ .present = true, .model = (rv_qemu_watchdog_model)m,
                             .action = (rv_qemu_watchdog_action)a };
    if (device_children(n, &w->addr, NULL, NULL, err) < 0)
        return -1;
    if (w->model == RV_QEMU_WATCHDOG_IB700 && w->addr.set)
        UNSUPPORTED("unsupported PCI <address> of an ib700 watchdog (an ISA device)");
    return 0;
}

int rv_qemu_parse_device(const xmlNode *n, struct rv_qemu_domain_def *def, rv_err *err)
{
    static const struct {
        const char *name;
        int (*parse)(const xmlNode *n, rv_qemu_devices *dev, rv_err *err);
    } kinds[] = {
        { "controller", parse_controller }, { "video", parse_video }, { "input", parse_input },
        { "sound", parse_sound }, { "audio", parse_audio }, { "channel", parse_channel },
        { "redirdev", parse_redirdev }, { "rng", parse_rng }, { "watchdog", parse_watchdog },
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (named(n, kinds[i].name))
            return kinds[i].parse(n, &def->dev, err) < 0 ? -1 : 1;
    return 0;
}

/* ---------------------------------------------------------------- normalising */

static rv_qemu_controller *find_controller(rv_qemu_devices *dev, rv_qemu_ctrl_type type, unsigned index)
{
    for (size_t i = 0; i < dev->ncontrollers; i++)
        if (dev->controllers[i].type == type && dev->controllers[i].index == index)
            return &dev->controllers[i];
    return NULL;
}

static int add_controller(rv_qemu_devices *dev, rv_qemu_ctrl_type type, int model, rv_err *err)
{
    if (dev->ncontrollers == RV_QEMU_MAX_CONTROLLERS)
        UNSUPPORTED("more than %d <controller> elements", RV_QEMU_MAX_CONTROLLERS);
    rv_qemu_controller *ctl = &dev->controllers[dev->ncontrollers++];
    memset(ctl, 0, sizeof(*ctl));
    ctl->type = type;
    ctl->model = model;
    ctl->master_startport = -1;
    return 0;
}

/* Which functions of each root-bus slot are taken, which buses are q35
 * root ports' (by the port's index) and which functions of a port's one
 * slot are taken. */
typedef struct pci_bus {
    unsigned char used[RV_QEMU_PCI_SLOTS];      /* a bit per function */
    bool port[256];
    unsigned char port_used[256];
} pci_bus;

static int claim(pci_bus *bus, const rv_qemu_pci_addr *a, rv_err *err)
{
    unsigned char *used = a->bus ? &bus->port_used[a->bus] : &bus->used[a->slot];
    if (a->bus && !bus->port[a->bus])
        UNSUPPORTED("unsupported PCI address bus %u: only the root bus (0) and, on q35, the bus of a "
                    "pcie-root-port (its index)", a->bus);
    if (*used & (1u << a->function))
        BAD_XML("PCI address 0000:%02x:%02x.%x is taken twice (or by the machine itself)", a->bus, a->slot,
                a->function);
    *used |= (unsigned char)(1u << a->function);
    return 0;
}

/* A PCIe device without an address on q35 goes behind a free root port,
 * as libvirtd places it: the only place QEMU can hotplug it, and so where
 * a device attached to a running guest must go.  No free port: the root
 * bus (that device then cannot be unplugged live). */
static bool place_on_port(pci_bus *bus, rv_qemu_pci_addr *a)
{
    if (a->set)
        return true;
    for (unsigned i = 1; i < 256; i++)
        if (bus->port[i] && bus->port_used[i] == 0) {
            *a = (rv_qemu_pci_addr){ .set = true, .bus = i };
            bus->port_used[i] = 0xff;
            return true;
        }
    return false;
}

/* A slot nobody uses any function of, preferring `want` (0: none). */
static int free_slot(pci_bus *bus, unsigned want, rv_err *err)
{
    if (want && bus->used[want] == 0)
        return (int)want;
    for (unsigned s = 1; s < RV_QEMU_PCI_SLOTS; s++)
        if (bus->used[s] == 0)
            return (int)s;
    UNSUPPORTED("no free PCI slot left on the root bus for the devices of this domain");
}

/* A device's own slot, function 0, unless it has an address. */
static int place(pci_bus *bus, rv_qemu_pci_addr *a, unsigned want, rv_err *err)
{
    if (a->set)
        return 0;
    int slot = free_slot(bus, want, err);
    if (slot < 0)
        return -1;
    *a = (rv_qemu_pci_addr){ .set = true, .slot = (unsigned)slot };
    bus->used[slot] = 0xff;
    return 0;
}

static bool video_needs_pci(const rv_qemu_video *v)
{
    return v->model != RV_QEMU_VIDEO_NONE;
}

static int assign_pci_addresses(struct rv_qemu_domain_def *def, bool q35, rv_err *err)
{
    rv_qemu_devices *dev = &def->dev;
    pci_bus bus;
    memset(&bus, 0, sizeof(bus));
    bus.used[0] = 0xff;                                 /* the host bridge */
    bus.used[q35 ? 0x1f : 1] = 0xff;                    /* ICH9 LPC/SATA/SMBus, or PIIX3 */
    /* PIIX3's own functions on pc: IDE is 1.1 (normalise_controllers),
     * piix3-uhci 1.2; slot 1 is reserved above, so they are not claimed. */
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        if (c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_PIIX3_UHCI && !q35) {
            if (c->addr.set && !(c->addr.slot == 1 && c->addr.function == 2))
                UNSUPPORTED("the piix3-uhci USB controller is PIIX3's, at 0000:00:01.2");
            c->addr = (rv_qemu_pci_addr){ .set = true, .slot = 1, .function = 2 };
        }
    }
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        const rv_qemu_controller *c = &dev->controllers[i];
        if (c->type == RV_QEMU_CTRL_PCI && c->addr.set && c->addr.bus != 0)
            UNSUPPORTED("a PCI controller (index %u) must be on the root bus", c->index);
        if (q35 && c->type == RV_QEMU_CTRL_PCI && c->model == RV_QEMU_PCIE_ROOT_PORT && c->index < 256)
            bus.port[c->index] = true;
    }
    /* Every address already given is claimed first; the rest fill in
     * around them, in libvirt's order. */
#define CLAIM(a) \
    do { \
        if ((a).set && claim(&bus, &(a), err) < 0) \
            return -1; \
    } while (0)
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        const rv_qemu_controller *c = &dev->controllers[i];
        bool piix3_part = !q35 && (c->type == RV_QEMU_CTRL_IDE ||
                                   (c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_PIIX3_UHCI));
        piix3_part |= rv_qemu_ctrl_machine_ahci(c, q35);     /* (ICH9's, reserved likewise) */
        if (!piix3_part)
            CLAIM(c->addr);
    }
    for (size_t i = 0; i < dev->nvideos; i++)
        CLAIM(dev->videos[i].addr);
    for (size_t i = 0; i < dev->nsounds; i++)
        CLAIM(dev->sounds[i].addr);
    for (size_t i = 0; i < dev->nrngs; i++)
        CLAIM(dev->rngs[i].addr);
    for (size_t i = 0; i < def->ninterfaces; i++)
        CLAIM(def->interfaces[i].addr);
    for (size_t i = 0; i < def->ndisks; i++)
        CLAIM(def->disks[i].addr);
    CLAIM(dev->balloon_addr);
    CLAIM(dev->watchdog.addr);
#undef CLAIM

    if (dev->nvideos > 0 && video_needs_pci(&dev->videos[0]) &&
        place(&bus, &dev->videos[0].addr, q35 ? 1 : 2, err) < 0)
        return -1;
    /* Root ports eight to a slot, as multifunction devices. */
    int port_slot = -1;
    unsigned next_function = 8;
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        if (c->type != RV_QEMU_CTRL_PCI || c->model != RV_QEMU_PCIE_ROOT_PORT || c->addr.set)
            continue;
        if (next_function == 8) {
            if ((port_slot = free_slot(&bus, 0, err)) < 0)
                return -1;
            bus.used[port_slot] = 0xff;
            next_function = 0;
        }
        c->addr = (rv_qemu_pci_addr){ .set = true, .slot = (unsigned)port_slot, .function = next_function++,
                                      .multifunction = next_function == 1 };
    }
    for (size_t i = 0; i < def->ninterfaces; i++) {
        rv_qemu_interface *n = &def->interfaces[i];
        bool pcie = strcmp(n->model, "virtio") == 0 || strcmp(n->model, "e1000e") == 0;
        if (!(q35 && pcie && place_on_port(&bus, &n->addr)) && place(&bus, &n->addr, 0, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < dev->nsounds; i++)
        if (place(&bus, &dev->sounds[i].addr, 0, err) < 0)
            return -1;
    /* USB: EHCI and its UHCI companions share one slot (functions 7 and 0-2). */
    rv_qemu_controller *ehci = NULL;
    for (size_t i = 0; i < dev->ncontrollers; i++)
        if (dev->controllers[i].type == RV_QEMU_CTRL_USB && dev->controllers[i].model == RV_QEMU_USB_EHCI1)
            ehci = &dev->controllers[i];
    int usb_slot = ehci && ehci->addr.set ? (int)ehci->addr.slot : -1;
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        if (c->type != RV_QEMU_CTRL_USB || c->model == RV_QEMU_USB_NONE || c->addr.set)
            continue;
        bool part = c->model >= RV_QEMU_USB_EHCI1 && c->model <= RV_QEMU_USB_UHCI3 && ehci;
        if (!part) {
            if (place(&bus, &c->addr, 0, err) < 0)
                return -1;
            continue;
        }
        if (usb_slot < 0) {
            if ((usb_slot = free_slot(&bus, 0, err)) < 0)
                return -1;
        }
        unsigned function = c->model == RV_QEMU_USB_EHCI1 ? 7 : (unsigned)(c->model - RV_QEMU_USB_UHCI1);
        c->addr = (rv_qemu_pci_addr){ .set = true, .slot = (unsigned)usb_slot, .function = function,
                                      .multifunction = c->model == RV_QEMU_USB_UHCI1 };
        if (claim(&bus, &c->addr, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        if ((c->type == RV_QEMU_CTRL_VIRTIO_SERIAL || c->type == RV_QEMU_CTRL_SCSI ||
             c->type == RV_QEMU_CTRL_SATA) && place(&bus, &c->addr, 0, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < def->ndisks; i++) {
        rv_qemu_pci_addr *a = &def->disks[i].addr;
        if (def->disks[i].bus == RV_QEMU_BUS_VIRTIO && !(q35 && place_on_port(&bus, a)) &&
            place(&bus, a, 0, err) < 0)
            return -1;
    }
    for (size_t i = 1; i < dev->nvideos; i++)
        if (place(&bus, &dev->videos[i].addr, 0, err) < 0)
            return -1;
    if (def->balloon && place(&bus, &dev->balloon_addr, 0, err) < 0)
        return -1;
    for (size_t i = 0; i < dev->nrngs; i++)
        if (place(&bus, &dev->rngs[i].addr, 0, err) < 0)
            return -1;
    if (dev->watchdog.present && dev->watchdog.model == RV_QEMU_WATCHDOG_I6300ESB &&
        place(&bus, &dev->watchdog.addr, 0, err) < 0)
        return -1;
    return 0;
}

/* SCSI disks sit on a virtio-scsi controller: at the drive address given
 * or, as libvirt places a disk without one, unit index % 7 of controller
 * index / 7 (sda at unit 0, sdb at 1, ...).  Only controller 0 exists
 * here: libvirtd would add an lsilogic one, which this driver does not
 * run, so a disk past it is refused. */
static int place_scsi_disks(struct rv_qemu_domain_def *def, rv_err *err)
{
    for (size_t i = 0; i < def->ndisks; i++) {
        rv_qemu_disk *d = &def->disks[i];
        if (d->bus != RV_QEMU_BUS_SCSI)
            continue;
        /* virtio-scsi's limits (QEMU's): 255 targets, 16384 LUNs. */
        if (d->drive.set && d->drive.bus != 0)
            BAD_XML("invalid drive address bus %u target %u unit %u (virtio-scsi: bus 0, "
                    "target 0-255, unit 0-16383)", d->drive.bus, d->drive.target, d->drive.unit);
        if (!d->drive.set) {
            unsigned idx = rv_qemu_disk_index(d->target);
            d->drive = (rv_qemu_drive_addr){ .set = true, .controller = idx / 7, .unit = idx % 7 };
        }
        if (d->drive.controller != 0 || !find_controller(&def->dev, RV_QEMU_CTRL_SCSI, 0))
            UNSUPPORTED("scsi disk '%s' needs <controller type='scsi' index='%u' model='virtio-scsi'> "
                        "(only index 0)", d->target, d->drive.controller);
        for (size_t j = 0; j < i; j++) {
            const rv_qemu_drive_addr *o = &def->disks[j].drive;
            if (def->disks[j].bus == RV_QEMU_BUS_SCSI && o->target == d->drive.target &&
                o->unit == d->drive.unit)
                BAD_XML("disks '%s' and '%s' have the same drive address", def->disks[j].target, d->target);
        }
    }
    return 0;
}

/* An ide or sata disk sits where its target name puts it, as libvirt
 * places it (rv_qemu_ide_slot; q35's ide disks, which libvirtd does not
 * take, in their order on its AHCI): a drive address is accepted only when it
 * names that place (libvirtd's live and migratable XML carry it), and is
 * not kept (the place follows from the name). */
static int check_ide_sata_addresses(struct rv_qemu_domain_def *def, bool q35, rv_err *err)
{
    for (size_t i = 0; i < def->ndisks; i++) {
        rv_qemu_disk *d = &def->disks[i];
        if ((d->bus != RV_QEMU_BUS_IDE && d->bus != RV_QEMU_BUS_SATA) || !d->drive.set)
            continue;
        if (d->bus == RV_QEMU_BUS_IDE && q35)
            UNSUPPORTED("drive address of disk '%s': q35's ide disks take none", d->target);
        unsigned bus, unit;
        rv_qemu_ide_slot(d, q35, &bus, &unit);
        if (d->drive.controller != 0 || d->drive.bus != bus || d->drive.target != 0 || d->drive.unit != unit)
            UNSUPPORTED("drive address of disk '%s': only controller 0 bus %u target 0 unit %u, where "
                        "its name places it", d->target, bus, unit);
        d->drive.set = false;
    }
    return 0;
}

bool rv_qemu_ctrl_machine_ahci(const rv_qemu_controller *c, bool q35)
{
    return q35 && c->type == RV_QEMU_CTRL_SATA && c->index == 0 && c->addr.set &&
           c->addr.bus == 0 && c->addr.slot == 0x1f && c->addr.function == 2;
}

void rv_qemu_ide_slot(const rv_qemu_disk *d, bool q35, unsigned *bus, unsigned *unit)
{
    unsigned idx = rv_qemu_disk_index(d->target);
    bool ide = d->bus == RV_QEMU_BUS_IDE;
    *bus = ide && !q35 ? idx / 2 : 0;
    *unit = ide && !q35 ? idx % 2 : idx;
}

static int normalise_controllers(struct rv_qemu_domain_def *def, bool q35, rv_err *err)
{
    rv_qemu_devices *dev = &def->dev;
    bool usb_devices = dev->nredirdevs > 0;
    for (size_t i = 0; i < dev->ninputs; i++)
        usb_devices |= dev->inputs[i].bus == RV_QEMU_INPUT_USB;
    bool sata_disks = false, ide_disks = false;
    for (size_t i = 0; i < def->ndisks; i++) {
        sata_disks |= def->disks[i].bus == RV_QEMU_BUS_SATA;
        ide_disks |= def->disks[i].bus == RV_QEMU_BUS_IDE;
    }

    /* The implicit ones, as libvirt adds them. */
    if (!find_controller(dev, RV_QEMU_CTRL_PCI, 0) &&
        add_controller(dev, RV_QEMU_CTRL_PCI, q35 ? RV_QEMU_PCIE_ROOT : RV_QEMU_PCI_ROOT, err) < 0)
        return -1;
    /* libvirt gives every x86 guest a USB controller (its tablet, say). */
    if (!find_controller(dev, RV_QEMU_CTRL_USB, 0) &&
        add_controller(dev, RV_QEMU_CTRL_USB, q35 ? RV_QEMU_USB_QEMU_XHCI : RV_QEMU_USB_PIIX3_UHCI, err) < 0)
        return -1;
    if (dev->nchannels > 0 && !find_controller(dev, RV_QEMU_CTRL_VIRTIO_SERIAL, 0) &&
        add_controller(dev, RV_QEMU_CTRL_VIRTIO_SERIAL, 0, err) < 0)
        return -1;
    if (ide_disks && !q35 && !find_controller(dev, RV_QEMU_CTRL_IDE, 0) &&
        add_controller(dev, RV_QEMU_CTRL_IDE, 0, err) < 0)
        return -1;
    if (sata_disks && !find_controller(dev, RV_QEMU_CTRL_SATA, 0) &&
        add_controller(dev, RV_QEMU_CTRL_SATA, 0, err) < 0)
        return -1;

    bool ehci = false;
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        if (c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_NONE + 1)
            c->model = q35 ? RV_QEMU_USB_QEMU_XHCI : RV_QEMU_USB_PIIX3_UHCI;
        ehci |= c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_EHCI1;
        if (c->type == RV_QEMU_CTRL_PCI) {
            bool root = c->model != RV_QEMU_PCIE_ROOT_PORT;
            if (root != (c->index == 0))
                UNSUPPORTED("PCI controller %u is a %s: index 0 is the root, the others root ports",
                            c->index, pci_model_words[c->model]);
            if (root && c->model != (q35 ? RV_QEMU_PCIE_ROOT : RV_QEMU_PCI_ROOT))
                UNSUPPORTED("a %s controller on machine '%s'", pci_model_words[c->model], def->machine);
            if (!root && !q35)
                UNSUPPORTED("a pcie-root-port needs a q35 machine, not '%s'", def->machine);
            if (!root && !c->chassis)
                c->chassis = c->index;
            if (!root && !c->port)
                c->port = 0x10 + c->index - 1;
            if (root && c->addr.set)
                UNSUPPORTED("the root PCI controller has no PCI address");
        }
        if (c->type == RV_QEMU_CTRL_IDE) {
            if (q35)
                UNSUPPORTED("an IDE controller on machine '%s' (q35 has SATA)", def->machine);
            if (c->addr.set && !(c->addr.slot == 1 && c->addr.function == 1))
                UNSUPPORTED("the IDE controller is PIIX3's, at 0000:00:01.1");
            c->addr = (rv_qemu_pci_addr){ .set = true, .slot = 1, .function = 1 };
        }
        if (c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_PIIX3_UHCI && q35)
            UNSUPPORTED("a piix3-uhci USB controller on machine '%s'", def->machine);
        if (c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_NONE && usb_devices)
            UNSUPPORTED("USB devices with <controller type='usb' model='none'>");
    }
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        rv_qemu_controller *c = &dev->controllers[i];
        bool companion = c->type == RV_QEMU_CTRL_USB && c->model >= RV_QEMU_USB_UHCI1 &&
                         c->model <= RV_QEMU_USB_UHCI3;
        if (companion && !ehci)
            UNSUPPORTED("USB controller %s without its ich9-ehci1", usb_model_words[c->model]);
        if (companion && c->master_startport < 0)
            c->master_startport = 2 * (c->model - RV_QEMU_USB_UHCI1);
        if (!companion && c->master_startport >= 0)
            UNSUPPORTED("<master> in a USB controller %s", usb_model_words[c->model]);
    }
    return 0;
}

static int normalise_video(struct rv_qemu_domain_def *def, rv_err *err)
{
    rv_qemu_devices *dev = &def->dev;
    if (dev->nvideos == 0 && (def->graphics.present || def->spice.present)) {
        dev->videos[0] = (rv_qemu_video){ .model = RV_QEMU_VIDEO_CIRRUS };     /* libvirt 9.0's default */
        dev->nvideos = 1;
    }
    /* The primary one goes first, as libvirt keeps it. */
    for (size_t i = 1; i < dev->nvideos; i++)
        if (dev->videos[i].primary) {
            if (dev->videos[0].primary)
                BAD_XML("more than one primary <video>");
            rv_qemu_video primary = dev->videos[i];
            memmove(&dev->videos[1], &dev->videos[0], i * sizeof(dev->videos[0]));
            dev->videos[0] = primary;
        }
    for (size_t i = 0; i < dev->nvideos; i++) {
        rv_qemu_video *v = &dev->videos[i];
        if (v->model == RV_QEMU_VIDEO_NONE && dev->nvideos > 1)
            UNSUPPORTED("<video> model 'none' with other video devices");
        if (v->model == RV_QEMU_VIDEO_NONE && v->addr.set)
            BAD_XML("<video> model 'none' has no PCI address");
        if (i > 0 && v->model != RV_QEMU_VIDEO_QXL && v->model != RV_QEMU_VIDEO_VIRTIO)
            UNSUPPORTED("a secondary video device of model '%s' (only qxl or virtio)", video_words[v->model]);
        v->primary = i == 0 && v->model != RV_QEMU_VIDEO_NONE;
        if (v->model == RV_QEMU_VIDEO_NONE)
            continue;
        if (!v->heads)
            v->heads = 1;
        if ((v->ram_kib && v->model != RV_QEMU_VIDEO_QXL) || (v->vgamem_kib && v->model != RV_QEMU_VIDEO_QXL) ||
            (v->vram_kib && v->model == RV_QEMU_VIDEO_VIRTIO))
            UNSUPPORTED("video memory sizes that model '%s' does not have", video_words[v->model]);
        if (v->model == RV_QEMU_VIDEO_QXL) {
            /* libvirt's defaults, in KiB; QEMU wants powers of two. */
            v->ram_kib = v->ram_kib ? v->ram_kib : 65536;
            v->vram_kib = v->vram_kib ? v->vram_kib : 65536;
            v->vgamem_kib = v->vgamem_kib ? v->vgamem_kib : 16384;
            if ((v->ram_kib & (v->ram_kib - 1)) || (v->vram_kib & (v->vram_kib - 1)) ||
                (v->vgamem_kib & (v->vgamem_kib - 1)))
                BAD_XML("qxl video memory sizes must be powers of two");
        } else if (v->model != RV_QEMU_VIDEO_VIRTIO) {
            v->vram_kib = v->vram_kib ? v->vram_kib : 16384;
            if (v->vram_kib & (v->vram_kib - 1))
                BAD_XML("video vram must be a power of two");
        }
        if (v->heads > 1 && v->model != RV_QEMU_VIDEO_QXL && v->model != RV_QEMU_VIDEO_VIRTIO)
            UNSUPPORTED("more than one head on video model '%s'", video_words[v->model]);
    }
    return 0;
}

/* The ports of USB bus 0: how many the controller has (QEMU's numbers). */
static unsigned usb_ports(const rv_qemu_devices *dev)
{
    for (size_t i = 0; i < dev->ncontrollers; i++) {
        const rv_qemu_controller *c = &dev->controllers[i];
        if (c->type != RV_QEMU_CTRL_USB || c->master_startport >= 0)
            continue;
        return c->model == RV_QEMU_USB_QEMU_XHCI ? (c->ports ? c->ports : 15) : c->model == RV_QEMU_USB_EHCI1 ? 6
             : c->model == RV_QEMU_USB_PIIX3_UHCI ? 2 : 0;
    }
    return 0;
}

/* Each USB device's port, as libvirt numbers them: 1, 2, ... in order. */
static int assign_usb_ports(struct rv_qemu_domain_def *def, rv_err *err)
{
    rv_qemu_devices *dev = &def->dev;
    unsigned *ports[2 * RV_QEMU_MAX_DEVICES];
    size_t n = 0;
    for (size_t i = 0; i < dev->ninputs; i++)
        if (dev->inputs[i].bus == RV_QEMU_INPUT_USB)
            ports[n++] = &dev->inputs[i].usb_port;
    for (size_t i = 0; i < dev->nredirdevs; i++)
        ports[n++] = &dev->redirdev_ports[i];
    unsigned max = usb_ports(dev), used = 0;     /* a bit per port */
    for (size_t i = 0; i < n; i++) {
        if (!*ports[i])
            continue;
        if (*ports[i] > max)
            UNSUPPORTED("USB port %u: the USB controller has %u ports", *ports[i], max);
        if (used & (1u << *ports[i]))
            BAD_XML("two USB devices on port %u", *ports[i]);
        used |= 1u << *ports[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (*ports[i])
            continue;
        unsigned p = 1;
        while (p <= max && (used & (1u << p)))
            p++;
        if (p > max)
            UNSUPPORTED("more USB devices than the USB controller's %u ports", max);
        *ports[i] = p;
        used |= 1u << p;
    }
    return 0;
}

int rv_qemu_devices_normalise(struct rv_qemu_domain_def *def, rv_err *err)
{
    rv_qemu_devices *dev = &def->dev;
    bool q35 = rv_qemu_machine_is_q35(def->machine);
    if (normalise_video(def, err) < 0 || normalise_controllers(def, q35, err) < 0)
        return -1;
    /* With graphics libvirt adds a PS/2 mouse and keyboard (x86 has them). */
    for (int type = RV_QEMU_INPUT_MOUSE; (def->graphics.present || def->spice.present) &&
                                         type <= RV_QEMU_INPUT_KEYBOARD; type++) {
        bool have = false;
        for (size_t i = 0; i < dev->ninputs; i++)
            have |= dev->inputs[i].type == (rv_qemu_input_type)type && dev->inputs[i].bus == RV_QEMU_INPUT_PS2;
        if (have)
            continue;
        if (dev->ninputs == RV_QEMU_MAX_DEVICES)
            UNSUPPORTED("more than %d <input> elements", RV_QEMU_MAX_DEVICES);
        dev->inputs[dev->ninputs++] = (rv_qemu_input){ (rv_qemu_input_type)type, RV_QEMU_INPUT_PS2, 0 };
    }
    /* libvirt 9.0 adds an audio backend for sound and for graphics. */
    if ((dev->nsounds > 0 || def->graphics.present || def->spice.present) && dev->audio < 0)
        dev->audio = def->spice.present ? 1 : 0;
    if (dev->audio == 1 && !def->spice.present)
        UNSUPPORTED("<audio type='spice'> without SPICE graphics");
    for (size_t i = 0; i < dev->nchannels; i++)
        if (dev->channels[i].type == RV_QEMU_CHANNEL_SPICEVMC && !def->spice.present)
            UNSUPPORTED("a spicevmc <channel> without SPICE graphics");
    if (dev->nredirdevs > 0 && !def->spice.present)
        UNSUPPORTED("a spicevmc <redirdev> without SPICE graphics");
    /* virtio-serial port 0 is a console's; channels take 1, 2, ... */
    for (size_t i = 0; i < dev->nchannels; i++) {
        if (dev->channels[i].port)
            continue;
        unsigned port = 1;
        for (size_t j = 0; j < dev->nchannels; j++)
            if (dev->channels[j].port == port) {
                port++;
                j = (size_t)-1;
            }
        dev->channels[i].port = port;
    }
    if (assign_usb_ports(def, err) < 0)
        return -1;
    for (size_t i = 0; i < def->ndisks; i++)
        if (def->disks[i].addr.set && def->disks[i].bus != RV_QEMU_BUS_VIRTIO)
            UNSUPPORTED("a PCI address on disk '%s', which is not on the virtio bus", def->disks[i].target);
    if (place_scsi_disks(def, err) < 0 || check_ide_sata_addresses(def, q35, err) < 0)
        return -1;
    if (!def->balloon && dev->balloon_addr.set)
        BAD_XML("<memballoon model='none'> has no address");
    return assign_pci_addresses(def, q35, err);
}

/* ---------------------------------------------------------------- formatting */

void rv_qemu_format_drive_address(FILE *fp, const rv_qemu_drive_addr *a, const char *indent)
{
    if (a->set)
        fprintf(fp, "%s<address type='drive' controller='%u' bus='%u' target='%u' unit='%u'/>\n",
                indent, a->controller, a->bus, a->target, a->unit);
}

void rv_qemu_format_pci_address(FILE *fp, const rv_qemu_pci_addr *a, const char *indent)
{
    if (!a->set)
        return;
    fprintf(fp, "%s<address type='pci' domain='0x0000' bus='0x%02x' slot='0x%02x' function='0x%x'%s/>\n",
            indent, a->bus, a->slot, a->function, a->multifunction ? " multifunction='on'" : "");
}

const char *rv_qemu_pci_bus_id(const rv_qemu_pci_addr *a, bool q35, char buf[16])
{
    if (a->bus)
        snprintf(buf, 16, "pci.%u", a->bus);
    else
        snprintf(buf, 16, "%s", q35 ? "pcie.0" : "pci.0");
    return buf;
}

/* libvirtd's names: usb (its companions too), pci.0 / pcie.0 and pci.N,
 * q35's built-in SATA is ide, the others type and index. */
static void format_controller_alias(FILE *fp, const struct rv_qemu_domain_def *def, const rv_qemu_controller *c)
{
    const char *ind = "      ";
    switch (c->type) {
    case RV_QEMU_CTRL_USB:
        rv_qemu_format_alias(fp, def, ind, "usb");
        break;
    case RV_QEMU_CTRL_PCI:
        rv_qemu_format_alias(fp, def, ind, "%s.%u", c->model == RV_QEMU_PCIE_ROOT ? "pcie" : "pci", c->index);
        break;
    case RV_QEMU_CTRL_IDE:
        rv_qemu_format_alias(fp, def, ind, "ide");
        break;
    case RV_QEMU_CTRL_SATA:
        if (c->index == 0 && rv_qemu_machine_is_q35(def->machine))
            rv_qemu_format_alias(fp, def, ind, "ide");
        else
            rv_qemu_format_alias(fp, def, ind, "sata%u", c->index);
        break;
    case RV_QEMU_CTRL_SCSI:
        rv_qemu_format_alias(fp, def, ind, "scsi%u", c->index);
        break;
    case RV_QEMU_CTRL_VIRTIO_SERIAL:
        rv_qemu_format_alias(fp, def, ind, "virtio-serial%u", c->index);
        break;
    }
}

void rv_qemu_format_controllers(FILE *fp, const struct rv_qemu_domain_def *def)
{
    const rv_qemu_devices *dev = &def->dev;
    /* libvirt's order: by type, then index. */
    static const rv_qemu_ctrl_type order[] = {
        RV_QEMU_CTRL_USB, RV_QEMU_CTRL_PCI, RV_QEMU_CTRL_IDE, RV_QEMU_CTRL_SATA, RV_QEMU_CTRL_SCSI,
        RV_QEMU_CTRL_VIRTIO_SERIAL,
    };
    for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++)
        for (unsigned index = 0; index < RV_QEMU_MAX_CONTROLLERS; index++)
            for (size_t i = 0; i < dev->ncontrollers; i++) {
                const rv_qemu_controller *c = &dev->controllers[i];
                if (c->type != order[t] || c->index != index)
                    continue;
                fprintf(fp, "    <controller type='%s' index='%u'", ctl_type_words[c->type], c->index);
                if (c->type == RV_QEMU_CTRL_USB)
                    fprintf(fp, " model='%s'", usb_model_words[c->model]);
                else if (c->type == RV_QEMU_CTRL_PCI)
                    fprintf(fp, " model='%s'", pci_model_words[c->model]);
                else if (c->type == RV_QEMU_CTRL_SCSI)
                    fprintf(fp, " model='%s'", scsi_model_words[c->model]);
                if (c->ports)
                    fprintf(fp, " ports='%u'", c->ports);
                bool root_port = c->type == RV_QEMU_CTRL_PCI && c->model == RV_QEMU_PCIE_ROOT_PORT;
                bool usb_none = c->type == RV_QEMU_CTRL_USB && c->model == RV_QEMU_USB_NONE;
                if (c->master_startport < 0 && !c->addr.set && !root_port && !c->iothread &&
                    (!def->aliases || usb_none)) {
                    fputs("/>\n", fp);
                    continue;
                }
                fputs(">\n", fp);
                if (c->master_startport >= 0)
                    fprintf(fp, "      <master startport='%d'/>\n", c->master_startport);
                if (root_port)
                    fprintf(fp, "      <target chassis='%u' port='0x%x'/>\n", c->chassis, c->port);
                if (c->iothread)
                    fprintf(fp, "      <driver iothread='%u'/>\n", c->iothread);
                format_controller_alias(fp, def, c);
                rv_qemu_format_pci_address(fp, &c->addr, "      ");
                fputs("    </controller>\n", fp);
            }
}

void rv_qemu_format_chars(FILE *fp, const struct rv_qemu_domain_def *def)
{
    for (size_t i = 0; i <= def->nserials && def->nserials > 0; i++) {
        /* The serial ports, then the console: serial 0 again. */
        bool console = i == def->nserials;
        static const char *const chr_words[] = { "pty", "file", "unix" };
        const rv_qemu_chr *chr = &def->serials[console ? 0 : i];
        fprintf(fp, "    <%s type='%s'>\n", console ? "console" : "serial", chr_words[chr->type]);
        if (chr->type == RV_QEMU_CHR_UNIX) {
            rv_qemu_format_unix_source(fp, chr->path, chr->connect);
        } else if (chr->type == RV_QEMU_CHR_FILE) {
            fputs("      <source path='", fp);
            rv_qx_put_escaped(fp, chr->path);
            fputs("'/>\n", fp);
        }
        if (console)
            fputs("      <target type='serial' port='0'/>\n", fp);
        else
            fprintf(fp, "      <target type='isa-serial' port='%zu'/>\n", i);
        /* The console is serial 0: libvirtd names it so too. */
        rv_qemu_format_alias(fp, def, "      ", "serial%zu", console ? 0 : i);
        fputs(console ? "    </console>\n" : "    </serial>\n", fp);
    }
    const rv_qemu_devices *dev = &def->dev;
    for (size_t i = 0; i < dev->nchannels; i++) {
        const rv_qemu_channel *ch = &dev->channels[i];
        fprintf(fp, "    <channel type='%s'>\n", channel_words[ch->type]);
        if (ch->type == RV_QEMU_CHANNEL_UNIX)
            rv_qemu_format_unix_source(fp, ch->path, ch->connect);
        fputs("      <target type='virtio' name='", fp);
        rv_qx_put_escaped(fp, ch->name);
        fputs("'/>\n", fp);
        rv_qemu_format_alias(fp, def, "      ", "channel%zu", i);
        fprintf(fp, "      <address type='virtio-serial' controller='0' bus='0' port='%u'/>\n"
                    "    </channel>\n", ch->port);
    }
}

static void format_one_graphics(FILE *fp, const rv_qemu_graphics *g, const char *type)
{
    if (!g->present)
        return;
    fprintf(fp, "    <graphics type='%s' port='%d' autoport='%s' listen='", type, g->port,
            g->autoport ? "yes" : "no");
    rv_qx_put_escaped(fp, g->listen);
    fputs("'>\n      <listen type='address' address='", fp);
    rv_qx_put_escaped(fp, g->listen);
    fputs("'/>\n", fp);
    if (g->compression) {
        fputs("      <image compression='", fp);
        rv_qx_put_escaped(fp, g->compression);
        fputs("'/>\n", fp);
    }
    fputs("    </graphics>\n", fp);
}

void rv_qemu_format_graphics_and_av(FILE *fp, const struct rv_qemu_domain_def *def)
{
    const rv_qemu_devices *dev = &def->dev;
    for (size_t i = 0; i < dev->ninputs; i++) {
        fprintf(fp, "    <input type='%s' bus='%s'", input_type_words[dev->inputs[i].type],
                input_bus_words[dev->inputs[i].bus]);
        if (!dev->inputs[i].usb_port && !def->aliases) {
            fputs("/>\n", fp);
            continue;
        }
        fputs(">\n", fp);
        rv_qemu_format_alias(fp, def, "      ", "input%zu", i);
        if (dev->inputs[i].usb_port)
            fprintf(fp, "      <address type='usb' bus='0' port='%u'/>\n", dev->inputs[i].usb_port);
        fputs("    </input>\n", fp);
    }
    format_one_graphics(fp, &def->graphics, "vnc");
    format_one_graphics(fp, &def->spice, "spice");
    for (size_t i = 0; i < dev->nsounds; i++) {
        fprintf(fp, "    <sound model='%s'>\n", sound_words[dev->sounds[i].model]);
        rv_qemu_format_alias(fp, def, "      ", "sound%zu", i);
        rv_qemu_format_pci_address(fp, &dev->sounds[i].addr, "      ");
        fputs("    </sound>\n", fp);
    }
    if (dev->audio >= 0)
        fprintf(fp, "    <audio id='1' type='%s'/>\n", audio_words[dev->audio]);
    for (size_t i = 0; i < dev->nvideos; i++) {
        const rv_qemu_video *v = &dev->videos[i];
        fprintf(fp, "    <video>\n      <model type='%s'", video_words[v->model]);
        if (v->ram_kib)
            fprintf(fp, " ram='%llu'", v->ram_kib);
        if (v->vram_kib)
            fprintf(fp, " vram='%llu'", v->vram_kib);
        if (v->vgamem_kib)
            fprintf(fp, " vgamem='%llu'", v->vgamem_kib);
        if (v->heads)
            fprintf(fp, " heads='%u'", v->heads);
        fprintf(fp, "%s/>\n", v->primary ? " primary='yes'" : "");
        rv_qemu_format_alias(fp, def, "      ", "video%zu", i);
        rv_qemu_format_pci_address(fp, &v->addr, "      ");
        fputs("    </video>\n", fp);
    }
    for (size_t i = 0; i < dev->nredirdevs; i++) {
        fputs("    <redirdev bus='usb' type='spicevmc'>\n", fp);
        rv_qemu_format_alias(fp, def, "      ", "redir%zu", i);
        fprintf(fp, "      <address type='usb' bus='0' port='%u'/>\n    </redirdev>\n", dev->redirdev_ports[i]);
    }
}

void rv_qemu_format_rngs(FILE *fp, const struct rv_qemu_domain_def *def)
{
    for (size_t i = 0; i < def->dev.nrngs; i++) {
        const rv_qemu_rng *rng = &def->dev.rngs[i];
        fputs("    <rng model='virtio'>\n      <backend model='random'>", fp);
        rv_qx_put_escaped(fp, rng->backend);
        fputs("</backend>\n", fp);
        rv_qemu_format_alias(fp, def, "      ", "rng%zu", i);
        rv_qemu_format_pci_address(fp, &rng->addr, "      ");
        fputs("    </rng>\n", fp);
    }
}

void rv_qemu_format_watchdog(FILE *fp, const struct rv_qemu_domain_def *def)
{
    const rv_qemu_watchdog *w = &def->dev.watchdog;
    if (!w->present)
        return;
    fprintf(fp, "    <watchdog model='%s' action='%s'", rv_qemu_watchdog_model_words[w->model],
            rv_qemu_watchdog_action_words[w->action]);
    if (!def->aliases && !w->addr.set) {
        fputs("/>\n", fp);
        return;
    }
    fputs(">\n", fp);
    rv_qemu_format_alias(fp, def, "      ", "watchdog0");
    rv_qemu_format_pci_address(fp, &w->addr, "      ");
    fputs("    </watchdog>\n", fp);
}

void rv_qemu_devices_free(rv_qemu_devices *dev)
{
    for (size_t i = 0; i < dev->nchannels; i++) {
        free(dev->channels[i].name);
        free(dev->channels[i].path);
    }
    for (size_t i = 0; i < dev->nrngs; i++)
        free(dev->rngs[i].backend);
}

/* ---------------------------------------------------------------- at start */

static int pick_port(rv_qemu_graphics *g, const rv_qemu_graphics *other,
                     bool (*port_free)(int port, void *opaque), void *opaque, rv_err *err)
{
    if (!g->present || !g->autoport)
        return 0;
    for (int port = 5900; port <= 65535; port++)
        if ((!other->present || other->port != port) && port_free(port, opaque)) {
            g->port = port;
            return 0;
        }
    rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "internal error: Unable to find an unused port for graphics");
    return -1;
}

int rv_qemu_devices_prepare_live(struct rv_qemu_domain_def *live, const char *path_prefix,
                                 bool (*port_free)(int port, void *opaque), void *opaque, rv_err *err)
{
    live->aliases = true;
    if (rv_qemu_assign_net_aliases(live, err) < 0)
        return -1;
    if (pick_port(&live->graphics, &live->spice, port_free, opaque, err) < 0 ||
        pick_port(&live->spice, &live->graphics, port_free, opaque, err) < 0)
        return -1;
    for (size_t i = 0; i < live->dev.nchannels; i++) {
        rv_qemu_channel *ch = &live->dev.channels[i];
        if (ch->type != RV_QEMU_CHANNEL_UNIX || ch->path)
            continue;
        if (asprintf(&ch->path, "%s.channel.%zu", path_prefix, i) < 0) {
            ch->path = NULL;
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
            return -1;
        }
        if (strlen(ch->path) >= 108) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                       "internal error: the channel socket path '%s' is too long for a Unix socket", ch->path);
            return -1;
        }
    }
    return 0;
}
