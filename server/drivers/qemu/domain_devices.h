/* The devices of the QEMU driver's domain XML beyond disks and network
 * interfaces: controllers, video, input, sound, audio, channels,
 * redirdevs, rng, the watchdog, serial files, SPICE, and the PCI addresses of every
 * PCI device.  These are what virt-install and virt-manager write for a
 * small x86_64 guest.  domain_xml.c reads <devices> and hands each of
 * these elements to rv_qemu_parse_device(); the formatter writes them
 * back with rv_qemu_format_*(). */
#ifndef RV_SERVER_DRIVERS_QEMU_DOMAIN_DEVICES_H
#define RV_SERVER_DRIVERS_QEMU_DOMAIN_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

/* Bounds on what one definition may hold. */
#define RV_QEMU_MAX_CONTROLLERS 64
#define RV_QEMU_MAX_DEVICES 16      /* of each other kind */
#define RV_QEMU_PCI_SLOTS 32

/* A slot and function on the root bus (bus 0: pci.0, or pcie.0 on q35). */
typedef struct rv_qemu_pci_addr {
    bool set;
    unsigned bus;               /* 0: the root bus; else a pcie-root-port's index (q35) */
    unsigned slot, function;
    bool multifunction;
} rv_qemu_pci_addr;

/* <address type='drive'>: a disk on a SCSI controller (controller 0
 * here), its bus (channel), target (SCSI id) and unit (LUN). */
typedef struct rv_qemu_drive_addr {
    bool set;
    unsigned controller, bus, target, unit;
} rv_qemu_drive_addr;

typedef enum {
    RV_QEMU_CTRL_USB, RV_QEMU_CTRL_PCI, RV_QEMU_CTRL_VIRTIO_SERIAL,
    RV_QEMU_CTRL_SATA, RV_QEMU_CTRL_IDE, RV_QEMU_CTRL_SCSI,
} rv_qemu_ctrl_type;

/* USB models (index into the usb model words). */
typedef enum {
    RV_QEMU_USB_QEMU_XHCI, RV_QEMU_USB_EHCI1, RV_QEMU_USB_UHCI1, RV_QEMU_USB_UHCI2,
    RV_QEMU_USB_UHCI3, RV_QEMU_USB_PIIX3_UHCI, RV_QEMU_USB_NONE,
} rv_qemu_usb_model;

typedef enum { RV_QEMU_PCI_ROOT, RV_QEMU_PCIE_ROOT, RV_QEMU_PCIE_ROOT_PORT } rv_qemu_pci_model;

typedef struct rv_qemu_controller {
    rv_qemu_ctrl_type type;
    int model;                  /* rv_qemu_usb_model, rv_qemu_pci_model, or 0 */
    unsigned index;
    int master_startport;       /* a USB companion's first port, else -1 */
    unsigned ports;             /* qemu-xhci's <controller ports>, 0 if unset (15) */
    unsigned chassis, port;     /* pcie-root-port */
    unsigned iothread;          /* virtio-scsi's <driver iothread>; 0: none */
    rv_qemu_pci_addr addr;
} rv_qemu_controller;

/* q35's SATA controller 0 at 0000:00:1f.2 is the machine's own AHCI (QEMU's
 * "ide"), as libvirtd's XML names it: no device of its own, its disks on
 * ide.PORT.  remvirtd's own SATA controller is an ich9-ahci of its own
 * (sata0) elsewhere. */
bool rv_qemu_ctrl_machine_ahci(const rv_qemu_controller *c, bool q35);

typedef enum {
    RV_QEMU_VIDEO_VGA, RV_QEMU_VIDEO_CIRRUS, RV_QEMU_VIDEO_QXL, RV_QEMU_VIDEO_VIRTIO,
    RV_QEMU_VIDEO_BOCHS, RV_QEMU_VIDEO_NONE,
} rv_qemu_video_model;

typedef struct rv_qemu_video {
    rv_qemu_video_model model;
    unsigned long long ram_kib, vram_kib, vgamem_kib;   /* 0: not used by the model */
    unsigned heads;
    bool primary;
    rv_qemu_pci_addr addr;
} rv_qemu_video;

typedef enum { RV_QEMU_INPUT_TABLET, RV_QEMU_INPUT_MOUSE, RV_QEMU_INPUT_KEYBOARD } rv_qemu_input_type;
typedef enum { RV_QEMU_INPUT_USB, RV_QEMU_INPUT_PS2 } rv_qemu_input_bus;

typedef struct rv_qemu_input {
    rv_qemu_input_type type;
    rv_qemu_input_bus bus;
    unsigned usb_port;          /* on USB bus 0; 0 for PS/2 */
} rv_qemu_input;

typedef enum { RV_QEMU_SOUND_ICH6, RV_QEMU_SOUND_ICH9, RV_QEMU_SOUND_AC97 } rv_qemu_sound_model;

typedef struct rv_qemu_sound {
    rv_qemu_sound_model model;
    rv_qemu_pci_addr addr;
} rv_qemu_sound;

typedef enum { RV_QEMU_CHANNEL_SPICEVMC, RV_QEMU_CHANNEL_UNIX } rv_qemu_channel_type;

/* A serial port's host side: a pty, a file, or a Unix socket that QEMU
 * listens on (bind) or connects to (connect: someone else listens, as
 * libguestfs does for its appliance's console). */
typedef enum { RV_QEMU_CHR_PTY, RV_QEMU_CHR_FILE, RV_QEMU_CHR_UNIX } rv_qemu_chr_type;
typedef struct rv_qemu_chr {
    rv_qemu_chr_type type;
    char *path;                 /* file and unix */
    bool connect;               /* unix: mode='connect' */
} rv_qemu_chr;

typedef struct rv_qemu_channel {
    rv_qemu_channel_type type;
    char *name;                 /* the virtio port's name */
    char *path;                 /* unix: the socket; NULL until a start picks one (bind) */
    bool connect;               /* unix: mode='connect' (path given), else bind */
    unsigned port;              /* on virtio-serial controller 0, bus 0 */
} rv_qemu_channel;

typedef struct rv_qemu_rng {
    char *backend;              /* /dev/urandom, /dev/random or /dev/hwrng */
    rv_qemu_pci_addr addr;
} rv_qemu_rng;

/* <watchdog model action>: libvirt 9.0's models for x86 (itco came with
 * 9.1) and its actions, in its order; at most one. */
typedef enum { RV_QEMU_WATCHDOG_I6300ESB, RV_QEMU_WATCHDOG_IB700 } rv_qemu_watchdog_model;
typedef enum {
    RV_QEMU_WATCHDOG_RESET, RV_QEMU_WATCHDOG_SHUTDOWN, RV_QEMU_WATCHDOG_POWEROFF,
    RV_QEMU_WATCHDOG_PAUSE, RV_QEMU_WATCHDOG_DUMP, RV_QEMU_WATCHDOG_NONE,
    RV_QEMU_WATCHDOG_INJECT_NMI,
} rv_qemu_watchdog_action;
extern const char *const rv_qemu_watchdog_model_words[];
extern const char *const rv_qemu_watchdog_action_words[];

typedef struct rv_qemu_watchdog {
    bool present;
    rv_qemu_watchdog_model model;
    rv_qemu_watchdog_action action;
    rv_qemu_pci_addr addr;      /* i6300esb's; ib700 is an ISA device */
} rv_qemu_watchdog;

/* Everything above, as a domain definition holds it. */
typedef struct rv_qemu_devices {
    rv_qemu_controller controllers[RV_QEMU_MAX_CONTROLLERS];
    size_t ncontrollers;
    rv_qemu_video videos[RV_QEMU_MAX_DEVICES];
    size_t nvideos;
    rv_qemu_input inputs[RV_QEMU_MAX_DEVICES];
    size_t ninputs;
    rv_qemu_sound sounds[RV_QEMU_MAX_DEVICES];
    size_t nsounds;
    int audio;                  /* <audio id='1' type=...>: -1 none, 0 none, 1 spice */
    rv_qemu_channel channels[RV_QEMU_MAX_DEVICES];
    size_t nchannels;
    size_t nredirdevs;          /* usb spicevmc */
    unsigned redirdev_ports[RV_QEMU_MAX_DEVICES];      /* their USB ports */
    rv_qemu_rng rngs[RV_QEMU_MAX_DEVICES];
    size_t nrngs;
    rv_qemu_pci_addr balloon_addr;
    rv_qemu_watchdog watchdog;
} rv_qemu_devices;

struct rv_qemu_domain_def;
struct _xmlNode;

/* n, a child of <devices>: 1 when it was one of this file's elements and
 * is now in def, 0 when it is not one of them, -1 with err set. */
int rv_qemu_parse_device(const struct _xmlNode *n, struct rv_qemu_domain_def *def, rv_err *err);
/* <address type='pci' .../> inside a device of domain_xml.c's. */
int rv_qemu_parse_pci_address(const struct _xmlNode *n, rv_qemu_pci_addr *addr, rv_err *err);
/* A unix <source mode='bind|connect' path='...'> (mode absent: bind; a
 * connect needs the path) into *path (replaced) and *connect. */
int rv_qemu_parse_unix_source(const struct _xmlNode *n, char **path, bool *connect, rv_err *err);
void rv_qemu_format_unix_source(FILE *fp, const char *path, bool connect);
/* An <address type='drive'> into *addr (libvirt's bounds). */
int rv_qemu_parse_drive_address(const struct _xmlNode *n, rv_qemu_drive_addr *addr, rv_err *err);

/* After parsing: the implicit devices libvirt adds (root PCI controller,
 * virtio-serial for channels, a USB controller for USB devices, video
 * for graphics, PS/2 inputs, audio for sound), the checks across
 * devices, and a PCI address for every PCI device without one. */
int rv_qemu_devices_normalise(struct rv_qemu_domain_def *def, rv_err *err);

/* The formatter's pieces, in libvirt's order within <devices>. */
void rv_qemu_format_pci_address(FILE *fp, const rv_qemu_pci_addr *addr, const char *indent);
/* QEMU's id of a's bus: pci.0 or pcie.0 (q35) for the root bus, pci.N for
 * root port N (command.c names them so); in buf, which it returns. */
const char *rv_qemu_pci_bus_id(const rv_qemu_pci_addr *a, bool q35, char buf[16]);
void rv_qemu_format_drive_address(FILE *fp, const rv_qemu_drive_addr *addr, const char *indent);
void rv_qemu_format_controllers(FILE *fp, const struct rv_qemu_domain_def *def);
void rv_qemu_format_chars(FILE *fp, const struct rv_qemu_domain_def *def);     /* serial, console, channels */
void rv_qemu_format_graphics_and_av(FILE *fp, const struct rv_qemu_domain_def *def);  /* input .. redirdev */
void rv_qemu_format_rngs(FILE *fp, const struct rv_qemu_domain_def *def);
void rv_qemu_format_watchdog(FILE *fp, const struct rv_qemu_domain_def *def);

void rv_qemu_devices_free(rv_qemu_devices *devs);

/* Whether def is for a q35 machine (PCI Express root bus). */
bool rv_qemu_machine_is_q35(const char *machine);

/* At start, on the live definition: a port for each autoport graphics
 * (port_free says whether a port may be taken: not another domain's, not
 * bound by anyone) and a socket path for each unix channel without one
 * (path_prefix + ".channel.N"). */
int rv_qemu_devices_prepare_live(struct rv_qemu_domain_def *live, const char *path_prefix,
                                 bool (*port_free)(int port, void *opaque), void *opaque,
                                 rv_err *err);

#endif
