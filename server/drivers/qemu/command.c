/* The QEMU command line for a domain definition (see command.h).  Values
 * from the definition go through QEMU's option syntax escaping (a comma
 * is written twice), so a path cannot add options of its own. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/cpu_names.h"

RV_LOG_CATEGORY("drivers.qemu.command");

typedef struct argv_builder {
    char **v;
    size_t n, cap;
    bool failed;
} argv_builder;

static void add_owned(argv_builder *b, char *s)
{
    if (!s || b->failed) {
        b->failed = true;
        free(s);
        return;
    }
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        char **v = realloc(b->v, cap * sizeof(*v));
        if (!v) {
            b->failed = true;
            free(s);
            return;
        }
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = s;
    b->v[b->n] = NULL;
}

static void add(argv_builder *b, const char *s)
{
    add_owned(b, strdup(s));
}

__attribute__((format(printf, 2, 3)))
static void addf(argv_builder *b, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    add_owned(b, s);
}

/* s with every comma doubled, in a buffer of the builder's: valid until
 * the next call with the same slot. */
/* A disk's <iotune> as -drive's throttling.* options (",throttling.bps-total=N..."),
 * malloc'd; NULL when it has none (or no memory: then QEMU runs unthrottled). */
static char *throttling(const rv_qemu_iotune *io)
{
    char *buf = NULL;
    size_t size = 0;
    if (!io)
        return NULL;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    for (int k = 0; k < RV_QEMU_IOTUNE_NUMBERS; k++)
        if (io->val[k])
            fprintf(fp, ",throttling.%s=%llu", rv_qemu_iotune_options[k], io->val[k]);
    if (io->group) {
        fputs(",throttling.group=", fp);
        for (const char *p = io->group; *p; p++)
            fputs(*p == ',' ? ",," : (char[]){ *p, '\0' }, fp);
    }
    fclose(fp);
    if (buf && !*buf) {
        free(buf);
        return NULL;
    }
    return buf;
}

static const char *esc(argv_builder *b, char **slot, const char *s)
{
    size_t commas = 0;
    for (const char *p = s; *p; p++)
        commas += *p == ',';
    free(*slot);
    *slot = malloc(strlen(s) + commas + 1);
    if (!*slot) {
        b->failed = true;
        return "";
    }
    char *o = *slot;
    for (const char *p = s; *p; p++) {
        *o++ = *p;
        if (*p == ',')
            *o++ = ',';
    }
    *o = '\0';
    return *slot;
}

/* ",bus=pci.0,addr=0xS.0xF" for a device at a, in buf; "" when a is unset. */
static const char *pci(char buf[80], const rv_qemu_pci_addr *a, bool q35)
{
    char bus[16];
    buf[0] = '\0';
    if (a->set)
        snprintf(buf, 80, ",bus=%s,addr=0x%x.0x%x%s", rv_qemu_pci_bus_id(a, q35, bus), a->slot,
                 a->function, a->multifunction ? ",multifunction=on" : "");
    return buf;
}

static const char *nic_device(const char *model)
{
    if (strcmp(model, "virtio") == 0)
        return "virtio-net-pci";
    return model;   /* e1000, e1000e, rtl8139: QEMU's device names */
}

/* The controllers: PCIe root ports first (devices may sit behind them),
 * then USB (EHCI before its companions), virtio-serial, SCSI, SATA.  The
 * root bus and PIIX3's IDE are the machine's own. */
static void add_controllers(argv_builder *b, const rv_qemu_domain_def *def, bool q35)
{
    static const char *const usb_devices[] = {
        [RV_QEMU_USB_QEMU_XHCI] = "qemu-xhci", [RV_QEMU_USB_EHCI1] = "ich9-usb-ehci1",
        [RV_QEMU_USB_UHCI1] = "ich9-usb-uhci1", [RV_QEMU_USB_UHCI2] = "ich9-usb-uhci2",
        [RV_QEMU_USB_UHCI3] = "ich9-usb-uhci3", [RV_QEMU_USB_PIIX3_UHCI] = "piix3-usb-uhci",
    };
    const rv_qemu_devices *dev = &def->dev;
    char where[80];
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = 0; i < dev->ncontrollers; i++) {
            const rv_qemu_controller *c = &dev->controllers[i];
            bool port = c->type == RV_QEMU_CTRL_PCI && c->model == RV_QEMU_PCIE_ROOT_PORT;
            bool usb_master = c->type == RV_QEMU_CTRL_USB && c->master_startport < 0;
            int want = port ? 0 : usb_master ? 1 : 2;
            if (want != pass)
                continue;
            if (port) {
                add(b, "-device");
                addf(b, "pcie-root-port,port=0x%x,chassis=%u,id=pci.%u%s", c->port, c->chassis, c->index,
                     pci(where, &c->addr, q35));
                continue;
            }
            switch (c->type) {
            case RV_QEMU_CTRL_USB:
                if (c->model == RV_QEMU_USB_NONE)
                    break;
                add(b, "-device");
                if (c->master_startport >= 0)
                    addf(b, "%s,masterbus=usb.0,firstport=%d,id=usb-companion%zu%s", usb_devices[c->model],
                         c->master_startport, i, pci(where, &c->addr, q35));
                else if (c->model == RV_QEMU_USB_QEMU_XHCI)
                    addf(b, "%s,id=usb,p2=%u,p3=%u%s", usb_devices[c->model], c->ports ? c->ports : 15,
                         c->ports ? c->ports : 15, pci(where, &c->addr, q35));
                else
                    addf(b, "%s,id=usb%s", usb_devices[c->model], pci(where, &c->addr, q35));
                break;
            case RV_QEMU_CTRL_VIRTIO_SERIAL:
                add(b, "-device");
                addf(b, "virtio-serial-pci,id=virtio-serial0%s", pci(where, &c->addr, q35));
                break;
            case RV_QEMU_CTRL_SCSI:
                add(b, "-device");
                if (c->iothread)
                    addf(b, "virtio-scsi-pci,iothread=iothread%u,id=scsi0%s", c->iothread,
                         pci(where, &c->addr, q35));
                else
                    addf(b, "virtio-scsi-pci,id=scsi0%s", pci(where, &c->addr, q35));
                break;
            case RV_QEMU_CTRL_SATA:
                if (rv_qemu_ctrl_machine_ahci(c, q35))
                    break;
                add(b, "-device");
                addf(b, "ich9-ahci,id=sata0%s", pci(where, &c->addr, q35));
                break;
            default:
                break;
            }
        }
}

/* Inputs, sound with its audio backend, video. */
static void add_av_devices(argv_builder *b, const rv_qemu_domain_def *def, bool q35)
{
    static const char *const usb_inputs[] = {
        [RV_QEMU_INPUT_TABLET] = "usb-tablet", [RV_QEMU_INPUT_MOUSE] = "usb-mouse",
        [RV_QEMU_INPUT_KEYBOARD] = "usb-kbd",
    };
    static const char *const hda[] = { [RV_QEMU_SOUND_ICH6] = "intel-hda", [RV_QEMU_SOUND_ICH9] = "ich9-intel-hda" };
    const rv_qemu_devices *dev = &def->dev;
    char where[80];
    for (size_t i = 0; i < dev->ninputs; i++) {
        if (dev->inputs[i].bus != RV_QEMU_INPUT_USB)
            continue;       /* PS/2: the machine's own */
        add(b, "-device");
        addf(b, "%s,id=input%zu,bus=usb.0,port=%u", usb_inputs[dev->inputs[i].type], i, dev->inputs[i].usb_port);
    }
    if (dev->audio >= 0) {
        add(b, "-audiodev");
        addf(b, "%s,id=audio1", dev->audio == 1 ? "spice" : "none");
    }
    for (size_t i = 0; i < dev->nsounds; i++) {
        const rv_qemu_sound *s = &dev->sounds[i];
        add(b, "-device");
        if (s->model == RV_QEMU_SOUND_AC97) {
            addf(b, "AC97,id=sound%zu,audiodev=audio1%s", i, pci(where, &s->addr, q35));
            continue;
        }
        addf(b, "%s,id=sound%zu%s", hda[s->model], i, pci(where, &s->addr, q35));
        add(b, "-device");
        addf(b, "hda-duplex,id=sound%zu-codec0,bus=sound%zu.0,cad=0,audiodev=audio1", i, i);
    }
    for (size_t i = 0; i < dev->nvideos; i++) {
        const rv_qemu_video *v = &dev->videos[i];
        const char *w = pci(where, &v->addr, q35);
        switch (v->model) {
        case RV_QEMU_VIDEO_QXL:
            add(b, "-device");
            addf(b, "%s,id=video%zu,ram_size=%llu,vram_size=%llu,vgamem_mb=%llu,max_outputs=%u%s",
                 i == 0 ? "qxl-vga" : "qxl", i, v->ram_kib * 1024, v->vram_kib * 1024, v->vgamem_kib / 1024,
                 v->heads, w);
            break;
        case RV_QEMU_VIDEO_VIRTIO:
            add(b, "-device");
            addf(b, "%s,id=video%zu,max_outputs=%u%s", i == 0 ? "virtio-vga" : "virtio-gpu-pci", i, v->heads, w);
            break;
        case RV_QEMU_VIDEO_VGA:
        case RV_QEMU_VIDEO_CIRRUS:
        case RV_QEMU_VIDEO_BOCHS:
            add(b, "-device");
            addf(b, "%s,id=video%zu,vgamem_mb=%llu%s",
                 v->model == RV_QEMU_VIDEO_VGA ? "VGA" : v->model == RV_QEMU_VIDEO_CIRRUS ? "cirrus-vga"
                                                                                          : "bochs-display",
                 i, v->vram_kib / 1024, w);
            break;
        case RV_QEMU_VIDEO_NONE:
            break;
        }
    }
}

/* Channels on virtio-serial, USB redirection, random number generators. */
static void add_channels_and_rng(argv_builder *b, const rv_qemu_domain_def *def, bool q35)
{
    const rv_qemu_devices *dev = &def->dev;
    char where[80], *e = NULL, *e2 = NULL;
    for (size_t i = 0; i < dev->nchannels; i++) {
        const rv_qemu_channel *ch = &dev->channels[i];
        add(b, "-chardev");
        if (ch->type == RV_QEMU_CHANNEL_SPICEVMC)
            addf(b, "spicevmc,id=charchannel%zu,name=vdagent", i);
        else
            addf(b, "socket,id=charchannel%zu,path=%s%s", i, esc(b, &e, ch->path ? ch->path : ""),
                 ch->connect ? "" : ",server=on,wait=off");
        add(b, "-device");
        addf(b, "virtserialport,bus=virtio-serial0.0,nr=%u,chardev=charchannel%zu,id=channel%zu,name=%s",
             ch->port, i, i, esc(b, &e2, ch->name));
    }
    for (size_t i = 0; i < dev->nredirdevs; i++) {
        add(b, "-chardev");
        addf(b, "spicevmc,id=charredir%zu,name=usbredir", i);
        add(b, "-device");
        addf(b, "usb-redir,chardev=charredir%zu,id=redir%zu,bus=usb.0,port=%u", i, i, dev->redirdev_ports[i]);
    }
    for (size_t i = 0; i < dev->nrngs; i++) {
        add(b, "-object");
        addf(b, "rng-random,id=objrng%zu,filename=%s", i, esc(b, &e, dev->rngs[i].backend));
        add(b, "-device");
        addf(b, "virtio-rng-pci,rng=objrng%zu,id=rng%zu%s", i, i, pci(where, &dev->rngs[i].addr, q35));
    }
    free(e);
    free(e2);
}

/* The watchdog, as libvirtd starts it: the device as watchdog0 and QEMU's
 * action for it (dump is QEMU's pause: the dump is the driver's,
 * qemu_events.c). */
static void add_watchdog(argv_builder *b, const rv_qemu_domain_def *def, bool q35)
{
    const rv_qemu_watchdog *w = &def->dev.watchdog;
    char where[80];
    if (!w->present)
        return;
    add(b, "-device");
    if (w->model == RV_QEMU_WATCHDOG_I6300ESB)
        addf(b, "i6300esb,id=watchdog0%s", pci(where, &w->addr, q35));
    else
        add(b, "ib700,id=watchdog0");
    add(b, "-watchdog-action");
    add(b, w->action == RV_QEMU_WATCHDOG_DUMP ? "pause" : rv_qemu_watchdog_action_words[w->action]);
}

/* As libvirtd passes them: error_policy alone sets the read error's
 * action as well, except 'enospace' (QEMU's werror=enospc, which rerror
 * does not take).  NULL: not set. */
void rv_qemu_disk_error_policies(const rv_qemu_disk *d, const char **werror, const char **rerror)
{
    static const char *const policy[] = { NULL, "stop", "report", "ignore", "enospc" };
    *werror = policy[d->error_policy];
    *rerror = policy[d->rerror_policy ? d->rerror_policy : d->error_policy == 4 ? 0 : d->error_policy];
}

/* A disk's <driver> cache, io, detect_zeroes, copy_on_read and error
 * policies as -drive options (",cache=unsafe,aio=native,..."), or NULL
 * when none is set.  'default' is QEMU's own default: nothing to say.
 * detect_zeroes='unmap' without discard='unmap' is 'on', as libvirtd
 * passes it. */
static char *drive_tuning(const rv_qemu_disk *d)
{
    static const char *const cache[] = { NULL, NULL, "none", "writethrough", "writeback",
                                         "directsync", "unsafe" };
    static const char *const aio[] = { NULL, "native", "threads", "io_uring" };
    static const char *const zeroes[] = { NULL, "off", "on", "unmap" };
    int dz = d->detect_zeroes == 3 && d->discard != 2 ? 2 : d->detect_zeroes;
    const char *werror, *rerror;
    rv_qemu_disk_error_policies(d, &werror, &rerror);
    char *s = NULL;
    if (asprintf(&s, "%s%s%s%s%s%s%s%s%s%s%s", cache[d->cache] ? ",cache=" : "", cache[d->cache] ? cache[d->cache] : "",
                 aio[d->io] ? ",aio=" : "", aio[d->io] ? aio[d->io] : "",
                 zeroes[dz] ? ",detect-zeroes=" : "", zeroes[dz] ? zeroes[dz] : "",
                 d->copy_on_read == 1 ? ",copy-on-read=on" : "",
                 werror ? ",werror=" : "", werror ? werror : "", rerror ? ",rerror=" : "",
                 rerror ? rerror : "") < 0)
        return NULL;
    return s;
}

char **rv_qemu_build_argv(const rv_qemu_domain_def *def, const rv_qemu_command_opts *opts, rv_err *err)
{
    if (def->accel == RV_QEMU_VIRT_KVM && !opts->kvm_usable) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                   "domain '%s' is type='kvm' but KVM cannot create a VM on this host "
                   "(use type='qemu' for TCG)", def->name);
        return NULL;
    }
    for (size_t i = 0; i < def->ninterfaces; i++)
        if (def->interfaces[i].type == RV_QEMU_NET_NETWORK && !def->interfaces[i].bridge) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR,
                       "internal error: network '%s' of domain '%s' has no bridge yet",
                       def->interfaces[i].network, def->name);
            return NULL;
        }
    bool q35 = rv_qemu_machine_is_q35(def->machine);
    unsigned ide_max = q35 ? 6 : 4, sata_max = 6;
    /* Each ide or sata disk where its name places it (as libvirtd does),
     * q35's ide disks in their order: a name past the last place, or too
     * many of them, cannot start. */
    unsigned q35_ide = 0;
    bool machine_ahci = false, sata = false;
    for (size_t i = 0; i < def->dev.ncontrollers; i++)
        machine_ahci |= rv_qemu_ctrl_machine_ahci(&def->dev.controllers[i], q35);
    for (size_t i = 0; i < def->ndisks; i++)
        sata |= def->disks[i].bus == RV_QEMU_BUS_SATA;
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *d = &def->disks[i];
        bool ide = d->bus == RV_QEMU_BUS_IDE;
        unsigned max = ide ? ide_max : sata_max;
        q35_ide += ide && q35;
        if (ide && q35 && machine_ahci && sata) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED, "%s",
                       "ide and sata disks on q35's own AHCI (sata controller 0 at 0000:00:1f.2): "
                       "name the ide ones sata");
            return NULL;
        }
        if (q35_ide > ide_max) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                       "too many ide disks for machine '%s' (at most %u)", def->machine, ide_max);
            return NULL;
        }
        if (((ide && !q35) || d->bus == RV_QEMU_BUS_SATA) && rv_qemu_disk_index(d->target) >= max) {
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                       "disk '%s' is past the %s disks of machine '%s' (at most %u: %sa to %s%c)",
                       d->target, ide ? "ide" : "sata", def->machine, max, ide ? "hd" : "sd",
                       ide ? "hd" : "sd", 'a' + max - 1);
            return NULL;
        }
    }

    /* Boot order: bootindex on the first device of each kind listed. */
    int disk_boot[64] = { 0 }, nic_boot = 0;
    for (size_t i = 0; i < def->nboot; i++) {
        int index = (int)i + 1;
        if (def->boot[i] == RV_QEMU_BOOT_NETWORK) {
            if (def->ninterfaces > 0 && nic_boot == 0)
                nic_boot = index;
            continue;
        }
        bool want_cdrom = def->boot[i] == RV_QEMU_BOOT_CDROM;
        for (size_t d = 0; d < def->ndisks && d < 64; d++)
            if ((def->disks[d].device == RV_QEMU_DISK_CDROM) == want_cdrom) {
                if (disk_boot[d] == 0)
                    disk_boot[d] = index;
                break;
            }
    }

    argv_builder b = { 0 };
    char *e1 = NULL, *e2 = NULL;
    char where[80];
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(def->uuid, uuid);

    /* <qemu:env>: NAME=VALUE words before the binary, env(1)'s form,
     * which the spawner sets in QEMU's environment (as libvirtd's log
     * shows them too). */
    for (size_t i = 0; i < def->nqemu_env; i++)
        addf(&b, "%s=%s", def->qemu_env_names[i], def->qemu_env_values[i] ? def->qemu_env_values[i] : "");
    add(&b, opts->binary);
    add(&b, "-name");
    add_owned(&b, rv_qemu_name_arg(def->name));
    add(&b, "-uuid");
    add(&b, uuid);
    add(&b, "-machine");
    addf(&b, "%s,accel=%s%s%s%s", esc(&b, &e1, def->machine),
         def->accel == RV_QEMU_VIRT_KVM ? "kvm" : "tcg",
         def->acpi ? "" : ",acpi=off",     /* libvirt: no <acpi/>, no ACPI */
         def->vmport < 0 ? "" : def->vmport ? ",vmport=on" : ",vmport=off",
         def->hpet == 0 ? ",hpet=off" : "");
    if (def->clock) {
        add(&b, "-rtc");
        addf(&b, "base=%s%s", def->clock_localtime ? "localtime" : "utc",
             def->rtc_catchup ? ",driftfix=slew" : "");
    }
    /* Only KVM's in-kernel PIT has a tick policy. */
    if (def->pit_delay && def->accel == RV_QEMU_VIRT_KVM) {
        add(&b, "-global");
        add(&b, "kvm-pit.lost_tick_policy=delay");
    }
    const char *pm_device = rv_qemu_machine_is_q35(def->machine) ? "ICH9-LPC" : "PIIX4_PM";
    if (def->suspend_to_mem >= 0) {
        add(&b, "-global");
        addf(&b, "%s.disable_s3=%d", pm_device, !def->suspend_to_mem);
    }
    if (def->suspend_to_disk >= 0) {
        add(&b, "-global");
        addf(&b, "%s.disable_s4=%d", pm_device, !def->suspend_to_disk);
    }
    if (def->cpu_mode >= 0) {
        bool kvm = def->accel == RV_QEMU_VIRT_KVM;
        /* TCG has no host CPU to pass through (libvirt refuses it too). */
        if (def->cpu_mode == RV_QEMU_CPU_HOST_PASSTHROUGH && !kvm) {
            rv_qemu_argv_free(b.v);
            free(e1);
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: CPU mode 'host-passthrough' needs a domain of type 'kvm'");
            return NULL;
        }
        /* host-model has no host to copy under TCG either: QEMU's max,
         * as before; a custom model is QEMU's model of that name. */
        const char *model = def->cpu_mode == RV_QEMU_CPU_CUSTOM ? def->cpu_model
                            : def->cpu_mode == RV_QEMU_CPU_MAXIMUM || !kvm ? "max" : "host";
        char *cpu = NULL;
        size_t cpu_len = 0;
        FILE *fp = open_memstream(&cpu, &cpu_len);
        if (fp) {
            fputs(model, fp);
            if (def->cpu_migratable == 0)
                fputs(",migratable=off", fp);
            /* Wanted features on, unwanted off; QEMU's spelling of
             * libvirt's names (it reads '_' as '-' itself). */
            for (size_t i = 0; i < def->ncpu_features; i++) {
                const rv_qemu_cpu_feature *f = &def->cpu_features[i];
                fprintf(fp, ",%c%s", f->policy <= RV_QEMU_CPU_OPTIONAL ? '+' : '-',
                        rv_cpu_qemu_name(f->name));
            }
            fclose(fp);
        }
        if (!cpu) {
            rv_qemu_argv_free(b.v);
            free(e1);
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
            return NULL;
        }
        add(&b, "-cpu");
        add_owned(&b, cpu);
    }
    add(&b, "-m");
    addf(&b, "size=%lluk", def->memory_kib);
    add(&b, "-smp");
    /* The vcpus beyond current are free slots for a later hotplug. */
    if (rv_qemu_def_vcpus(def) < def->vcpus)
        addf(&b, "%u,maxcpus=%u", rv_qemu_def_vcpus(def), def->vcpus);
    else
        addf(&b, "%u", def->vcpus);
    /* Each IOThread an object named as libvirtd names it. */
    for (size_t i = 0; def->tune && i < def->tune->niothreads; i++) {
        add(&b, "-object");
        const rv_tune_iothread *io = &def->tune->iothreads[i];
        char min[32] = "", max[32] = "";
        if (io->pool_min >= 0)
            snprintf(min, sizeof(min), ",thread-pool-min=%d", io->pool_min);
        if (io->pool_max >= 0)
            snprintf(max, sizeof(max), ",thread-pool-max=%d", io->pool_max);
        addf(&b, "iothread,id=iothread%u%s%s", io->id, min, max);
    }
    add(&b, "-no-user-config");
    add(&b, "-nodefaults");
    add(&b, "-S");
    if (opts->incoming) {
        add(&b, "-incoming");
        add(&b, opts->incoming);
    }
    add(&b, "-qmp");
    addf(&b, "unix:%s,server=on,wait=off", esc(&b, &e1, opts->monitor_path));
    if (def->on_reboot == RV_QEMU_ACTION_DESTROY)
        add(&b, "-no-reboot");
    /* The driver decides what a guest's power-off means: QEMU waits. */
    add(&b, "-no-shutdown");
    add(&b, "-boot");
    if (def->reboot_timeout != RV_QEMU_NO_REBOOT_TIMEOUT)
        addf(&b, "reboot-timeout=%d,strict=on", def->reboot_timeout);
    else
        add(&b, "strict=on");
    /* <bios useserial>: libvirtd 9.0 with QEMU 7.2 adds no device for it
     * (SeaBIOS's serial console is its own default), nor does this. */
    /* These options take their value whole (no key=value parsing). */
    if (def->kernel) {
        add(&b, "-kernel");
        add(&b, def->kernel);
    }
    if (def->initrd) {
        add(&b, "-initrd");
        add(&b, def->initrd);
    }
    if (def->cmdline) {
        add(&b, "-append");
        add(&b, def->cmdline);
    }

    add_controllers(&b, def, q35);
    unsigned q35_ide_next = 0;
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *d = &def->disks[i];
        unsigned slot_bus, slot_unit;
        rv_qemu_ide_slot(d, q35, &slot_bus, &slot_unit);
        bool cdrom = d->device == RV_QEMU_DISK_CDROM;
        const char *target = esc(&b, &e2, d->target);
        add(&b, "-drive");
        char *throttle = throttling(d->iotune);
        char *tuning = drive_tuning(d);
        if (d->source)
            addf(&b, "file=%s,format=%s,if=none,id=drive-%s%s%s%s%s%s", esc(&b, &e1, d->source),
                 d->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw", target,
                 cdrom ? ",media=cdrom" : "", d->readonly ? ",readonly=on" : "",
                 d->discard == 2 ? ",discard=unmap" : d->discard == 1 ? ",discard=ignore" : "",
                 tuning ? tuning : "", throttle ? throttle : "");
        else
            addf(&b, "if=none,id=drive-%s,media=cdrom,readonly=on", target);
        free(throttle);
        free(tuning);
        char bootindex[32] = "";
        if (i < 64 && disk_boot[i])
            snprintf(bootindex, sizeof(bootindex), ",bootindex=%d", disk_boot[i]);
        /* The device's own options; the reader let only [A-Za-z0-9 _.+-]
         * into a serial: no escaping. */
        char *devopts = NULL;
        if (asprintf(&devopts, "%s%s%s", bootindex, d->serial ? ",serial=" : "", d->serial ? d->serial : "") < 0) {
            devopts = NULL;
            b.failed = true;
        }
        const char *boot = devopts ? devopts : "";
        add(&b, "-device");
        switch (d->bus) {
        case RV_QEMU_BUS_VIRTIO:
            if (d->iothread)
                addf(&b, "virtio-blk-pci,iothread=iothread%u,drive=drive-%s,id=%s%s%s", d->iothread,
                     target, target, boot, pci(where, &d->addr, q35));
            else
                addf(&b, "virtio-blk-pci,drive=drive-%s,id=%s%s%s", target, target, boot,
                     pci(where, &d->addr, q35));
            break;
        case RV_QEMU_BUS_SCSI:
            /* The id is libvirtd's alias, scsiC-B-T-U. */
            addf(&b, "%s,bus=scsi%u.0,channel=%u,scsi-id=%u,lun=%u,drive=drive-%s,id=scsi%u-%u-%u-%u%s",
                 cdrom ? "scsi-cd" : "scsi-hd", d->drive.controller, d->drive.bus, d->drive.target,
                 d->drive.unit, target, d->drive.controller, d->drive.bus, d->drive.target,
                 d->drive.unit, boot);
            break;
        case RV_QEMU_BUS_SATA:
            addf(&b, "%s,bus=%s.%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                 machine_ahci ? "ide" : "sata0", slot_unit, target, target, boot);
            break;
        case RV_QEMU_BUS_IDE:
            /* q35's IDE is its AHCI controller: one device per bus. */
            if (q35)
                addf(&b, "%s,bus=ide.%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                     q35_ide_next++, target, target, boot);
            else
                addf(&b, "%s,bus=ide.%u,unit=%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                     slot_bus, slot_unit, target, target, boot);
            break;
        }
        free(devopts);
    }

    for (size_t i = 0; i < def->ninterfaces; i++) {
        const rv_qemu_interface *n = &def->interfaces[i];
        const unsigned char *m = n->mac;
        add(&b, "-netdev");
        /* A network's bridge was filled in at start (rv_qemu_network_resolve). */
        /* As libvirtd: the device's id is its alias, its netdev's host<alias>. */
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "net%zu", i);
        const char *alias = n->alias ? n->alias : fallback;
        if (n->tap_fd > 0)
            addf(&b, "tap,id=host%s,fd=%d", alias, n->tap_fd);
        else if (n->type == RV_QEMU_NET_BRIDGE || n->type == RV_QEMU_NET_NETWORK)
            addf(&b, "bridge,id=host%s,br=%s", alias, esc(&b, &e1, n->bridge));
        else
            addf(&b, "user,id=host%s", alias);
        char boot[32] = "";
        if (i == 0 && nic_boot)
            snprintf(boot, sizeof(boot), ",bootindex=%d", nic_boot);
        add(&b, "-device");
        addf(&b, "%s,netdev=host%s,id=%s,mac=%02x:%02x:%02x:%02x:%02x:%02x%s%s", nic_device(n->model),
             alias, alias, m[0], m[1], m[2], m[3], m[4], m[5], boot, pci(where, &n->addr, q35));
    }

    for (size_t i = 0; i < def->nserials; i++) {
        add(&b, "-chardev");
        const rv_qemu_chr *chr = &def->serials[i];
        if (chr->type == RV_QEMU_CHR_UNIX)
            addf(&b, "socket,id=charserial%zu,path=%s%s", i, esc(&b, &e1, chr->path),
                 chr->connect ? "" : ",server=on,wait=off");
        else if (chr->type == RV_QEMU_CHR_FILE)
            addf(&b, "file,id=charserial%zu,path=%s", i, esc(&b, &e1, chr->path));
        else
            addf(&b, "pty,id=charserial%zu", i);
        add(&b, "-device");
        addf(&b, "isa-serial,chardev=charserial%zu,id=serial%zu,index=%zu", i, i, i);
    }

    if (def->balloon) {
        add(&b, "-device");
        addf(&b, "virtio-balloon-pci,id=balloon0%s", pci(where, &def->dev.balloon_addr, q35));
    }

    add(&b, "-display");
    add(&b, "none");
    if (def->graphics.present) {
        const char *listen = def->graphics.listen;
        bool v6 = strchr(listen, ':') != NULL;
        add(&b, "-vnc");
        /* autoport resolved at start; without it QEMU takes the first free display */
        if (def->graphics.port < 0)
            addf(&b, "%s%s%s:0,to=99", v6 ? "[" : "", esc(&b, &e1, listen), v6 ? "]" : "");
        else
            addf(&b, "%s%s%s:%d", v6 ? "[" : "", esc(&b, &e1, listen), v6 ? "]" : "",
                 def->graphics.port - 5900);
    }
    if (def->spice.present) {
        if (def->spice.port < 0) {
            free(e1);
            free(e2);
            rv_qemu_argv_free(b.v);
            rv_err_set(err, RV_FROM_QEMU, RV_ERR_INTERNAL_ERROR, "internal error: no SPICE port chosen");
            return NULL;
        }
        add(&b, "-spice");
        addf(&b, "port=%d,addr=%s,disable-ticketing=on%s%s,seamless-migration=on", def->spice.port,
             esc(&b, &e1, def->spice.listen), def->spice.compression ? ",image-compression=" : "",
             def->spice.compression ? def->spice.compression : "");
    }
    add_av_devices(&b, def, q35);
    add_watchdog(&b, def, q35);
    add_channels_and_rng(&b, def, q35);
    /* <qemu:arg>: last, as given (libvirtd's place for them). */
    for (size_t i = 0; i < def->nqemu_args; i++)
        add(&b, def->qemu_args[i]);

    free(e1);
    free(e2);
    if (b.failed) {
        rv_qemu_argv_free(b.v);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory building the QEMU command line");
        return NULL;
    }
    RV_DEBUG("QEMU command line for '%s' has %zu arguments", def->name, b.n);
    return b.v;
}

char *rv_qemu_name_arg(const char *name)
{
    argv_builder b = { 0 };
    char *e = NULL;
    const char *escaped = esc(&b, &e, name);
    char *arg = NULL;
    if (b.failed || asprintf(&arg, "guest=%s,debug-threads=on", escaped) < 0)
        arg = NULL;
    free(e);
    return arg;
}

void rv_qemu_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

bool rv_qemu_kvm_usable(void)
{
    int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (kvm < 0) {
        RV_DEBUG("KVM not usable: /dev/kvm cannot be opened");
        return false;
    }
    /* Opening is not enough: creating a VM is what QEMU will do. */
    int vm = ioctl(kvm, KVM_CREATE_VM, 0);
    close(kvm);
    if (vm < 0) {
        RV_DEBUG("KVM not usable: /dev/kvm cannot create a VM");
        return false;
    }
    close(vm);
    return true;
}
