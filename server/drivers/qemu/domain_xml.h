/* The QEMU driver's domain definition: the subset of libvirt's domain XML
 * it understands, read with libxml2 and written back normalised (defaults
 * filled in, UUID and MAC addresses generated, units in KiB).  The part
 * both drivers keep is read and written by conf/domain_xml.c, as libvirt
 * reads it; this driver then applies its limits (kvm or qemu, hvm on
 * x86_64, at most 255 vcpus, ...).
 *
 * Reading is strict: an element or attribute outside the subset is
 * RV_ERR_CONFIG_UNSUPPORTED naming it, never dropped.  The document is
 * read by the drivers' shared reader (server/drivers/conf/xml_read.h:
 * bounded in size, no DTD, no entities, no network). */
#ifndef RV_SERVER_DRIVERS_QEMU_DOMAIN_XML_H
#define RV_SERVER_DRIVERS_QEMU_DOMAIN_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "server/drivers/conf/domain_def.h"
#include "server/drivers/qemu/domain_devices.h"
#include "server/drivers/qemu/domain_tune.h"

/* The largest domain XML accepted. */
#define RV_QEMU_DOMAIN_XML_MAX (1024u * 1024)
#define RV_QEMU_MAX_VCPUS 255
#define RV_QEMU_MAX_SERIALS 4

/* <domain type>: KVM, or QEMU's TCG. */
typedef enum { RV_QEMU_VIRT_KVM, RV_QEMU_VIRT_QEMU } rv_qemu_virt_type;
/* The boot devices and lifecycle actions the driver runs (conf/domain_def.h
 * has them all). */
enum {
    RV_QEMU_BOOT_HD = RV_DOMAIN_BOOT_HD,
    RV_QEMU_BOOT_CDROM = RV_DOMAIN_BOOT_CDROM,
    RV_QEMU_BOOT_NETWORK = RV_DOMAIN_BOOT_NETWORK,
};
enum {
    RV_QEMU_ACTION_DESTROY = RV_DOMAIN_ACTION_DESTROY,
    RV_QEMU_ACTION_RESTART = RV_DOMAIN_ACTION_RESTART,
    RV_QEMU_ACTION_PRESERVE = RV_DOMAIN_ACTION_PRESERVE,
};
typedef enum { RV_QEMU_DISK_DISK, RV_QEMU_DISK_CDROM } rv_qemu_disk_device;
typedef enum { RV_QEMU_FORMAT_RAW, RV_QEMU_FORMAT_QCOW2 } rv_qemu_disk_format;
typedef enum { RV_QEMU_BUS_VIRTIO, RV_QEMU_BUS_SATA, RV_QEMU_BUS_IDE, RV_QEMU_BUS_SCSI } rv_qemu_disk_bus;
typedef enum { RV_QEMU_NET_USER, RV_QEMU_NET_BRIDGE, RV_QEMU_NET_NETWORK } rv_qemu_net_type;
typedef enum {
    RV_QEMU_CPU_HOST_PASSTHROUGH, RV_QEMU_CPU_HOST_MODEL, RV_QEMU_CPU_MAXIMUM, RV_QEMU_CPU_CUSTOM
} rv_qemu_cpu_mode;
/* A <cpu><feature>'s policy, in libvirt's words' order. */
typedef enum {
    RV_QEMU_CPU_FORCE, RV_QEMU_CPU_REQUIRE, RV_QEMU_CPU_OPTIONAL, RV_QEMU_CPU_DISABLE,
    RV_QEMU_CPU_FORBID
} rv_qemu_cpu_policy;
typedef struct rv_qemu_cpu_feature {
    char *name;                 /* as the XML spells it (libvirt's name) */
    rv_qemu_cpu_policy policy;
} rv_qemu_cpu_feature;

typedef struct rv_qemu_disk {
    rv_qemu_disk_device device;
    char *source;               /* file path; NULL only for an empty cdrom, or a volume
                                 * disk not yet resolved (live: the volume's file) */
    char *pool, *volume;        /* <disk type='volume'>: its pool and volume, else NULL */
    rv_qemu_disk_format format;
    rv_qemu_disk_bus bus;
    char *target;               /* vda, sda, hda, ... unique */
    bool readonly;              /* always for a cdrom */
    char *serial;               /* <serial>: the guest sees it (nova: the volume's id) */
    /* <driver>'s attributes: 0 unset, else 1 + the index of the word
     * (domain_xml.c's lists: discard, cache, io, detect_zeroes, copy_on_read,
     * error_policy, rerror_policy). */
    int discard, cache, io, detect_zeroes, copy_on_read, error_policy, rerror_policy;
    rv_qemu_pci_addr addr;      /* virtio */
    rv_qemu_drive_addr drive;   /* scsi: on virtio-scsi controller 0 */
    rv_qemu_iotune *iotune;     /* <iotune> (domain_tune.h); NULL: none */
    unsigned iothread;          /* <driver iothread>: an IOThread's id; 0: none */
} rv_qemu_disk;

typedef struct rv_qemu_interface {
    rv_qemu_net_type type;
    char *bridge;               /* RV_QEMU_NET_BRIDGE; NETWORK: its bridge once started */
    char *network;              /* RV_QEMU_NET_NETWORK: the network's name */
    char *ifname;               /* <target dev>: the host tap (given, or named at start) */
    int tap_fd;                 /* not in XML: QEMU's descriptor for remvirtd's tap, 0: none */
    unsigned char mac[6];
    char *model;                /* virtio, e1000, e1000e, rtl8139 */
    int driver;                 /* <driver name>: 0 unset, 1 qemu, 2 vhost (kept: QEMU's own backend either way) */
    int link;                   /* <link state>: 0 unset, 1 up, 2 down (QEMU's set_link) */
    rv_qemu_pci_addr addr;
    char *alias;                /* live: netN, also QEMU's device id (netdev hostnetN) */
    rv_tune_bandwidth bandwidth;  /* <bandwidth> (kept, not applied on the host) */
} rv_qemu_interface;

/* One VNC and one SPICE display at most. */
typedef struct rv_qemu_graphics {
    bool present;
    bool autoport;
    int port;                   /* -1 with autoport until a start picks one */
    char *listen;               /* an address */
    char *compression;          /* SPICE <image compression=...>, or NULL */
} rv_qemu_graphics;

/* The part both drivers keep (conf/domain_def.h: name, UUID, memory,
 * vcpus, arch, machine, boot order, lifecycle actions, ...) and what the
 * QEMU driver keeps beside it. */
typedef struct rv_qemu_domain_def {
    RV_DOMAIN_BASE;
    rv_qemu_virt_type accel;    /* virt_type's: kvm or qemu (TCG) */
    unsigned boot_vcpus;        /* live, once a vcpu was hot(un)plugged: the vcpus
                                 * QEMU started with (not hotpluggable), and the
                                 * XML lists each vcpu (<vcpus>); 0 otherwise */
    /* Direct kernel boot: absolute paths, NULL when absent; cmdline only
     * with a kernel. */
    char *kernel, *initrd, *cmdline;
    /* <os><bios>: useserial -1 unset, 0 no, 1 yes; reboot_timeout in ms,
     * -1 (no reboot) to 65535, or RV_QEMU_NO_REBOOT_TIMEOUT when unset. */
    int bios_useserial, reboot_timeout;
    rv_qemu_disk *disks;
    size_t ndisks;
    rv_qemu_interface *interfaces;
    size_t ninterfaces;
    /* Serial ports 0..nserials-1 (domain_devices.h).  The console is the
     * first one (libvirt's normal form writes both when either is given). */
    size_t nserials;
    rv_qemu_chr serials[RV_QEMU_MAX_SERIALS];
    rv_qemu_graphics graphics;  /* VNC */
    rv_qemu_graphics spice;
    rv_qemu_devices dev;        /* controllers, video, sound, ... (domain_devices.h) */
    /* A live definition: each device has the <alias> libvirtd gives it
     * (the interfaces' kept in them, the others' derived when written). */
    bool aliases;
    /* <emulator>: NULL when absent; a start refuses any but the driver's
     * qemu_binary (one binary per remvirtd). */
    char *emulator;
    /* <memballoon model='virtio'> (libvirt's default) or 'none'. */
    bool balloon;
    /* <features>: without <acpi/> the guest has no ACPI (as libvirt);
     * <apic/> is x86's default anyway.  vmport: -1 unset, 0 off, 1 on. */
    bool acpi, apic;
    int vmport;
    /* <clock> (its offset in clock_localtime) with its timers, when given. */
    bool clock, rtc_catchup, pit_delay;
    int hpet;                   /* -1 unset, 0 present='no', 1 'yes' */
    /* <pm>: -1 unset, 0 enabled='no', 1 'yes'. */
    int suspend_to_mem, suspend_to_disk;
    /* <cpu mode=...> (what virt-install writes with KVM): -1 absent, else
     * RV_QEMU_CPU_*; check and migratable as libvirt fills them in. */
    int cpu_mode, cpu_check, cpu_migratable;
    /* mode='custom' (what virt-manager writes from the host's model):
     * match (0 exact, 1 minimum, 2 strict), the model and its fallback
     * (0 allow, 1 forbid), the vendor; features in any mode. */
    int cpu_match, cpu_fallback;
    char *cpu_model, *cpu_vendor;
    rv_qemu_cpu_feature *cpu_features;
    size_t ncpu_features;
    /* <metadata>'s children as written (each in its own namespace, as
     * virt-manager's libosinfo entry), kept and given back, NULL if none. */
    char *metadata;
    /* <blkiotune>, <memtune>, <cputune>, <numatune> (domain_tune.h); NULL: none. */
    rv_domain_tune *tune;
    /* <qemu:commandline> (RV_QEMU_XMLNS): arguments added to QEMU's
     * command line and variables set in its environment, as given; a
     * domain run with them is tainted (custom-argv), as libvirtd marks it. */
    char **qemu_args;
    size_t nqemu_args;
    char **qemu_env_names, **qemu_env_values;     /* a value may be NULL */
    size_t nqemu_env;
} rv_qemu_domain_def;

#define RV_QEMU_NO_REBOOT_TIMEOUT (-2)
/* libvirt's namespace for QEMU's own options in a domain's XML. */
#define RV_QEMU_XMLNS "http://libvirt.org/schemas/domain/qemu/1.0"
/* At most this many <qemu:arg> and as many <qemu:env>. */
#define RV_QEMU_MAX_PASSTHROUGH 1024

/* Run with <qemu:commandline>: libvirtd's custom-argv taint. */
static inline bool rv_qemu_def_tainted(const struct rv_qemu_domain_def *def)
{
    return def->nqemu_args > 0 || def->nqemu_env > 0;
}

/* Parse xml, NUL-terminated at len (a NUL before it is refused).  NULL
 * with err set: the shared reader's errors (RV_ERR_XML_DETAIL for
 * malformed XML, as libvirt), RV_ERR_XML_ERROR (too large, a DOCTYPE, a
 * bad value) or RV_ERR_CONFIG_UNSUPPORTED (valid XML outside the subset;
 * the message names the element or attribute). */
rv_qemu_domain_def *rv_qemu_domain_parse(const char *xml, size_t len, rv_err *err);

/* disk's IOThread, if it names one, is one of def's and disk is on
 * virtio (libvirtd's refusals otherwise). */
int rv_qemu_disk_iothread_check(const rv_qemu_domain_def *def, const rv_qemu_disk *disk,
                                rv_err *err);

/* The normalised XML (malloc'd), or NULL when out of memory. */
char *rv_qemu_domain_format(const rv_qemu_domain_def *def);

void rv_qemu_domain_free(rv_qemu_domain_def *def);

/* One device's XML (attach, detach, update): a <disk> or an <interface>,
 * read by this file's readers as a domain's <devices> would have it. */
typedef enum { RV_QEMU_DEV_DISK, RV_QEMU_DEV_INTERFACE } rv_qemu_dev_kind;
typedef struct rv_qemu_device {
    rv_qemu_dev_kind kind;
    char *text;                 /* the element alone, serialised again */
    rv_qemu_domain_def *alone;  /* a domain holding it only: disks[0] or interfaces[0] */
    bool mac_given;             /* an interface's <mac> was in the XML (else generated) */
} rv_qemu_device;
/* xml's device into *dev; -1 with libvirt's errors (an element other
 * than these: CONFIG_UNSUPPORTED naming it). */
int rv_qemu_device_read(const char *xml, rv_qemu_device *dev, rv_err *err);
void rv_qemu_device_clear(rv_qemu_device *dev);
/* A copy of def with dev added after the devices of its kind, read and
 * normalised as a whole definition (addresses assigned, checks made); NULL
 * with err. */
rv_qemu_domain_def *rv_qemu_def_with_device(const rv_qemu_domain_def *def, const rv_qemu_device *dev,
                                            rv_err *err);
/* Take disk i (or interface i) out of def. */
void rv_qemu_def_remove_disk(rv_qemu_domain_def *def, size_t i);
void rv_qemu_def_remove_interface(rv_qemu_domain_def *def, size_t i);
/* Swap what two definitions hold (a change made on a new copy, kept). */
void rv_qemu_def_swap(rv_qemu_domain_def *a, rv_qemu_domain_def *b);

/* virtio, sata, ide, scsi. */
const char *rv_qemu_disk_bus_name(rv_qemu_disk_bus bus);
/* The index a disk's target names (vda 0, vdb 1, ..., vdaa 26), as libvirt counts. */
unsigned rv_qemu_disk_index(const char *target);
/* Where an ide or sata disk sits, as libvirt places it by its target's
 * index: pc's ide bus index/2 unit index%2; sata bus 0, unit (port)
 * index (q35's ide disks go in their order instead: command.c). */
void rv_qemu_ide_slot(const rv_qemu_disk *d, bool q35, unsigned *bus, unsigned *unit);

/* The disk a path names in def: its target (vda), else its source file;
 * NULL: none. */
rv_qemu_disk *rv_qemu_disk_find(const rv_qemu_domain_def *def, const char *path);

/* libvirtd's alias of disk d (virtio-disk1, sata0-0-1, ide0-1-0: from its
 * target's index, as libvirt places it) into buf. */
void rv_qemu_disk_alias(const rv_qemu_domain_def *def, const rv_qemu_disk *d, char *buf, size_t size);
/* The <cpu> of a guest about to start as libvirtd's live XML shows it:
 * the model QEMU is given named (no <cpu>: QEMU's default, qemu64), check='full' and fallback='forbid' for a custom model.  -1:
 * no memory. */
int rv_qemu_def_live_cpu(rv_qemu_domain_def *def);
/* Gives each interface without an alias the next netN (past the highest). */
int rv_qemu_assign_net_aliases(rv_qemu_domain_def *def, rv_err *err);
/* "    <alias name='NAME'/>" (with the indent) when def is live. */
void rv_qemu_format_alias(FILE *fp, const rv_qemu_domain_def *def, const char *indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The vcpus the guest has on (at start: the others can be plugged in). */
static inline unsigned rv_qemu_def_vcpus(const rv_qemu_domain_def *def)
{
    return def->current_vcpus && def->current_vcpus < def->vcpus ? def->current_vcpus : def->vcpus;
}

#endif
