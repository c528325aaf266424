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

static bool machine_is_q35(const char *machine)
{
    return strncmp(machine, "q35", 3) == 0 || strstr(machine, "-q35") != NULL;
}

static const char *nic_device(const char *model)
{
    if (strcmp(model, "virtio") == 0)
        return "virtio-net-pci";
    return model;   /* e1000, e1000e, rtl8139: QEMU's device names */
}

char **rv_qemu_build_argv(const rv_qemu_domain_def *def, const rv_qemu_command_opts *opts, rv_err *err)
{
    if (def->virt_type == RV_QEMU_VIRT_KVM && !opts->kvm_usable) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                   "domain '%s' is type='kvm' but KVM cannot create a VM on this host "
                   "(use type='qemu' for TCG)", def->name);
        return NULL;
    }
    bool q35 = machine_is_q35(def->machine);
    unsigned ide_max = q35 ? 6 : 4, sata_max = 6;
    unsigned nide = 0, nsata = 0;
    for (size_t i = 0; i < def->ndisks; i++) {
        nide += def->disks[i].bus == RV_QEMU_BUS_IDE;
        nsata += def->disks[i].bus == RV_QEMU_BUS_SATA;
    }
    if (nide > ide_max || nsata > sata_max) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                   "too many %s disks for machine '%s' (at most %u)",
                   nide > ide_max ? "ide" : "sata", def->machine, nide > ide_max ? ide_max : sata_max);
        return NULL;
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
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(def->uuid, uuid);

    add(&b, opts->binary);
    add(&b, "-name");
    addf(&b, "guest=%s,debug-threads=on", esc(&b, &e1, def->name));
    add(&b, "-uuid");
    add(&b, uuid);
    add(&b, "-machine");
    addf(&b, "%s,accel=%s%s%s%s", esc(&b, &e1, def->machine),
         def->virt_type == RV_QEMU_VIRT_KVM ? "kvm" : "tcg",
         def->acpi ? "" : ",acpi=off",     /* libvirt: no <acpi/>, no ACPI */
         def->vmport < 0 ? "" : def->vmport ? ",vmport=on" : ",vmport=off",
         def->hpet == 0 ? ",hpet=off" : "");
    if (def->clock) {
        add(&b, "-rtc");
        addf(&b, "base=%s%s", def->clock_localtime ? "localtime" : "utc",
             def->rtc_catchup ? ",driftfix=slew" : "");
    }
    /* Only KVM's in-kernel PIT has a tick policy. */
    if (def->pit_delay && def->virt_type == RV_QEMU_VIRT_KVM) {
        add(&b, "-global");
        add(&b, "kvm-pit.lost_tick_policy=delay");
    }
    const char *pm_device = machine_is_q35(def->machine) ? "ICH9-LPC" : "PIIX4_PM";
    if (def->suspend_to_mem >= 0) {
        add(&b, "-global");
        addf(&b, "%s.disable_s3=%d", pm_device, !def->suspend_to_mem);
    }
    if (def->suspend_to_disk >= 0) {
        add(&b, "-global");
        addf(&b, "%s.disable_s4=%d", pm_device, !def->suspend_to_disk);
    }
    add(&b, "-m");
    addf(&b, "size=%lluk", def->memory_kib);
    add(&b, "-smp");
    /* The vcpus beyond current are free slots for a later hotplug. */
    if (rv_qemu_def_vcpus(def) < def->vcpus)
        addf(&b, "%u,maxcpus=%u", rv_qemu_def_vcpus(def), def->vcpus);
    else
        addf(&b, "%u", def->vcpus);
    add(&b, "-no-user-config");
    add(&b, "-nodefaults");
    add(&b, "-S");
    add(&b, "-qmp");
    addf(&b, "unix:%s,server=on,wait=off", esc(&b, &e1, opts->monitor_path));
    if (def->on_reboot == RV_QEMU_ACTION_DESTROY)
        add(&b, "-no-reboot");
    /* The driver decides what a guest's power-off means: QEMU waits. */
    add(&b, "-no-shutdown");
    add(&b, "-boot");
    add(&b, "strict=on");
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

    if (nsata > 0) {
        add(&b, "-device");
        add(&b, "ich9-ahci,id=sata0");
    }
    unsigned ide_next = 0, sata_next = 0;
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *d = &def->disks[i];
        bool cdrom = d->device == RV_QEMU_DISK_CDROM;
        const char *target = esc(&b, &e2, d->target);
        add(&b, "-drive");
        if (d->source)
            addf(&b, "file=%s,format=%s,if=none,id=drive-%s%s%s", esc(&b, &e1, d->source),
                 d->format == RV_QEMU_FORMAT_QCOW2 ? "qcow2" : "raw", target,
                 cdrom ? ",media=cdrom" : "", d->readonly ? ",readonly=on" : "");
        else
            addf(&b, "if=none,id=drive-%s,media=cdrom,readonly=on", target);
        char boot[32] = "";
        if (i < 64 && disk_boot[i])
            snprintf(boot, sizeof(boot), ",bootindex=%d", disk_boot[i]);
        add(&b, "-device");
        switch (d->bus) {
        case RV_QEMU_BUS_VIRTIO:
            addf(&b, "virtio-blk-pci,drive=drive-%s,id=%s%s", target, target, boot);
            break;
        case RV_QEMU_BUS_SATA:
            addf(&b, "%s,bus=sata0.%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                 sata_next++, target, target, boot);
            break;
        case RV_QEMU_BUS_IDE:
            /* q35's IDE is its AHCI controller: one device per bus. */
            if (q35)
                addf(&b, "%s,bus=ide.%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                     ide_next, target, target, boot);
            else
                addf(&b, "%s,bus=ide.%u,unit=%u,drive=drive-%s,id=%s%s", cdrom ? "ide-cd" : "ide-hd",
                     ide_next / 2, ide_next % 2, target, target, boot);
            ide_next++;
            break;
        }
    }

    for (size_t i = 0; i < def->ninterfaces; i++) {
        const rv_qemu_interface *n = &def->interfaces[i];
        const unsigned char *m = n->mac;
        add(&b, "-netdev");
        if (n->type == RV_QEMU_NET_BRIDGE)
            addf(&b, "bridge,id=net%zu,br=%s", i, esc(&b, &e1, n->bridge));
        else
            addf(&b, "user,id=net%zu", i);
        char boot[32] = "";
        if (i == 0 && nic_boot)
            snprintf(boot, sizeof(boot), ",bootindex=%d", nic_boot);
        add(&b, "-device");
        addf(&b, "%s,netdev=net%zu,id=nic%zu,mac=%02x:%02x:%02x:%02x:%02x:%02x%s", nic_device(n->model),
             i, i, m[0], m[1], m[2], m[3], m[4], m[5], boot);
    }

    for (size_t i = 0; i < def->nserials; i++) {
        add(&b, "-chardev");
        addf(&b, "pty,id=charserial%zu", i);
        add(&b, "-device");
        addf(&b, "isa-serial,chardev=charserial%zu,id=serial%zu,index=%zu", i, i, i);
    }

    if (def->balloon) {
        add(&b, "-device");
        add(&b, "virtio-balloon-pci,id=balloon0");
    }

    if (def->graphics.present) {
        const char *listen = def->graphics.listen;
        bool v6 = strchr(listen, ':') != NULL;
        add(&b, "-vnc");
        /* autoport: QEMU takes the first free display from 0 up */
        if (def->graphics.autoport)
            addf(&b, "%s%s%s:0,to=99", v6 ? "[" : "", esc(&b, &e1, listen), v6 ? "]" : "");
        else
            addf(&b, "%s%s%s:%d", v6 ? "[" : "", esc(&b, &e1, listen), v6 ? "]" : "",
                 def->graphics.port - 5900);
        add(&b, "-device");
        add(&b, "VGA,id=video0");
    } else {
        add(&b, "-display");
        add(&b, "none");
    }

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
