/* The QEMU driver's domain capabilities (CONNECT_GET_DOMAIN_CAPABILITIES):
 * what a new domain may ask for, in libvirt's <domainCapabilities> format
 * (https://libvirt.org/formatdomaincaps.html), for virt-install and
 * virt-manager.
 *
 * The binary, its machine types (`-machine help`, probed once when the
 * driver starts, as its version is) and KVM come from the host; the
 * devices and features are what the driver's XML subset (domain_xml.c)
 * accepts, so that a tool never offers what a define would refuse.  When
 * the subset grows, the lists below grow with it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/entities.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"

RV_LOG_CATEGORY("drivers.qemu.domcaps");

/* Bounds on what the probe keeps of QEMU's answer. */
#define MACHINES_MAX 256
#define MACHINE_NAME_MAX 64

typedef struct machine {
    char name[MACHINE_NAME_MAX];
    char canonical[MACHINE_NAME_MAX];   /* what an alias (pc, q35) stands for */
} machine;

static machine machines[MACHINES_MAX];
static size_t nmachines;
static char default_machine[MACHINE_NAME_MAX];

void rv_qemu_domcaps_probe(const char *binary)
{
    nmachines = 0;
    default_machine[0] = '\0';
    char *cmd = NULL;
    /* (A binary path with a quote is not run through the shell.) */
    if (strchr(binary, '\'') || asprintf(&cmd, "'%s' -machine help 2>/dev/null", binary) < 0)
        return;
    FILE *fp = popen(cmd, "r");
    free(cmd);
    if (!fp)
        return;
    char line[512];
    while (fgets(line, sizeof(line), fp)) {
        char name[MACHINE_NAME_MAX], *alias;
        if (sscanf(line, "%63s", name) != 1 || strcmp(name, "Supported") == 0 ||
            strcmp(name, "none") == 0 || nmachines == MACHINES_MAX)
            continue;
        machine *m = &machines[nmachines++];
        snprintf(m->name, sizeof(m->name), "%s", name);
        snprintf(m->canonical, sizeof(m->canonical), "%s", name);
        if ((alias = strstr(line, "(alias of ")))
            sscanf(alias + 10, "%63[^)]", m->canonical);
        if (strstr(line, "(default)"))
            snprintf(default_machine, sizeof(default_machine), "%s", name);
    }
    pclose(fp);
    RV_DEBUG("%s knows %zu machine types, the default is '%s'", binary, nmachines, default_machine);
}

static const machine *find_machine(const char *name)
{
    for (size_t i = 0; i < nmachines; i++)
        if (strcmp(machines[i].name, name) == 0)
            return &machines[i];
    return NULL;
}

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* An <enum name=...> of values. */
static void put_enum(FILE *fp, const char *indent, const char *name, const char *const *values)
{
    if (!values[0]) {
        fprintf(fp, "%s<enum name='%s'/>\n", indent, name);
        return;
    }
    fprintf(fp, "%s<enum name='%s'>\n", indent, name);
    for (size_t i = 0; values[i]; i++)
        fprintf(fp, "%s  <value>%s</value>\n", indent, values[i]);
    fprintf(fp, "%s</enum>\n", indent);
}

/* <name supported='yes'> with one enum of its values. */
static void put_device(FILE *fp, const char *name, const char *enum_name,
                       const char *const *values)
{
    fprintf(fp, "    <%s supported='yes'>\n", name);
    put_enum(fp, "      ", enum_name, values);
    fprintf(fp, "    </%s>\n", name);
}

int rv_qemu_connect_get_domain_capabilities(rv_driver_conn *c,
                                            const rv_connect_get_domain_capabilities_args *args,
                                            rv_connect_get_domain_capabilities_ret *ret,
                                            rv_err *err)
{
    (void)c;
    if (args->flags)
        return fail(err, RV_ERR_INVALID_ARG, "unsupported flags (0x%x) in function %s", args->flags,
                    "qemuConnectGetDomainCapabilities");
    const char *bin = args->emulatorbin ? *args->emulatorbin : NULL;
    const char *arch = args->arch ? *args->arch : NULL;
    const char *mach = args->machine ? *args->machine : NULL;
    const char *virt = args->virttype ? *args->virttype : NULL;
    if (bin && strcmp(bin, rv_qemu.binary) != 0)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: emulator '%s' is not this remvirtd's QEMU binary '%s'", bin,
                    rv_qemu.binary);
    if (arch && strcmp(arch, "x86_64") != 0)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: unable to find any emulator to serve '%s' architecture", arch);
    if (virt && strcmp(virt, "kvm") != 0 && strcmp(virt, "qemu") != 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: unknown virttype: %s", virt);
    bool kvm = virt ? strcmp(virt, "kvm") == 0 : rv_qemu.kvm;
    if (kvm && !rv_qemu.kvm)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: KVM is not supported by '%s' on this host",
                    rv_qemu.binary);
    if (nmachines == 0)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: the machine types of '%s' are not known (it did not answer "
                    "-machine help when remvirtd started)", rv_qemu.binary);
    const machine *m = find_machine(mach ? mach : default_machine[0] ? default_machine : "pc");
    if (!m)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: the machine '%s' is not supported by emulator '%s'",
                    mach ? mach : "(default)", rv_qemu.binary);

    /* What the XML subset reads (domain_xml.c, domain_devices.c). */
    static const char *const disk_devices[] = { "disk", "cdrom", NULL };
    static const char *const disk_buses[] = { "ide", "scsi", "virtio", "sata", NULL };
    static const char *const graphics_types[] = { "vnc", "spice", NULL };
    static const char *const video_models[] = { "vga", "cirrus", "qxl", "virtio", "bochs", "none", NULL };
    static const char *const rng_models[] = { "virtio", NULL };
    static const char *const rng_backends[] = { "random", NULL };
    static const char *const usb_bus[] = { "usb", NULL };
    static const char *const channel_types[] = { "unix", "spicevmc", NULL };
    static const char *const none[] = { NULL };

    char *xml = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&xml, &len);
    if (!fp)
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    fprintf(fp, "<domainCapabilities>\n");
    xmlChar *path = xmlEncodeSpecialChars(NULL, (const xmlChar *)rv_qemu.binary);
    fprintf(fp, "  <path>%s</path>\n", path ? (const char *)path : "");
    xmlFree(path);
    fprintf(fp, "  <domain>%s</domain>\n", kvm ? "kvm" : "qemu");
    fprintf(fp, "  <machine>%s</machine>\n", m->canonical);
    fprintf(fp, "  <arch>x86_64</arch>\n");
    fprintf(fp, "  <vcpu max='%d'/>\n", RV_QEMU_MAX_VCPUS);
    fprintf(fp, "  <iothreads supported='yes'/>\n");
    /* Direct kernel boot or the binary's own BIOS: no <loader>. */
    fprintf(fp, "  <os supported='yes'>\n");
    put_enum(fp, "    ", "firmware", none);
    fprintf(fp, "    <loader supported='no'/>\n");
    fprintf(fp, "  </os>\n");
    fprintf(fp, "  <cpu>\n");
    fprintf(fp, "    <mode name='host-passthrough' supported='no'/>\n");
    fprintf(fp, "    <mode name='maximum' supported='no'/>\n");
    fprintf(fp, "    <mode name='host-model' supported='no'/>\n");
    fprintf(fp, "    <mode name='custom' supported='no'/>\n");
    fprintf(fp, "  </cpu>\n");
    fprintf(fp, "  <memoryBacking supported='no'/>\n");
    fprintf(fp, "  <devices>\n");
    fprintf(fp, "    <disk supported='yes'>\n");
    put_enum(fp, "      ", "diskDevice", disk_devices);
    put_enum(fp, "      ", "bus", disk_buses);
    put_enum(fp, "      ", "model", none);
    fprintf(fp, "    </disk>\n");
    put_device(fp, "graphics", "type", graphics_types);
    /* In the order libvirtd lists them. */
    put_device(fp, "video", "modelType", video_models);
    fprintf(fp, "    <hostdev supported='no'/>\n");
    fprintf(fp, "    <rng supported='yes'>\n");
    put_enum(fp, "      ", "model", rng_models);
    put_enum(fp, "      ", "backendModel", rng_backends);
    fprintf(fp, "    </rng>\n");
    fprintf(fp, "    <filesystem supported='no'/>\n");
    fprintf(fp, "    <tpm supported='no'/>\n");
    put_device(fp, "redirdev", "bus", usb_bus);
    put_device(fp, "channel", "type", channel_types);
    fprintf(fp, "  </devices>\n");
    fprintf(fp, "  <features>\n");
    static const char *const unsupported_features[] = {
        "gic", "vmcoreinfo", "genid", "backingStoreInput", "backup", "sev", "sgx", NULL,
    };
    for (size_t i = 0; unsupported_features[i]; i++)
        fprintf(fp, "    <%s supported='no'/>\n", unsupported_features[i]);
    fprintf(fp, "  </features>\n");
    fprintf(fp, "</domainCapabilities>\n");
    if (fclose(fp) != 0 || !xml) {
        free(xml);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    ret->capabilities = xml;
    return rv_string_result(0, &ret->capabilities, err);
}
