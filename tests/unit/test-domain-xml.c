/* The QEMU driver's domain XML (server/drivers/qemu/domain_xml.c) and the
 * command line built from it (command.c): the normal form and its round
 * trip, defaults, refusals naming what is unsupported, hostile documents
 * (entities, external DTDs, oversize), and the argv's options and escaping. */
#include <stdbool.h>

#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/domain_xml.h"
#include "tests/unit/check.h"

static rv_qemu_domain_def *parse_ok(const char *xml)
{
    rv_err err = { 0 };
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), &err);
    if (!def)
        check_fail(__FILE__, __LINE__, "refused: %s\n%s", err.message, xml);
    return def;
}

/* A normal form reads back as itself. */
static void check_reads_back(const char *xml)
{
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    rv_qemu_domain_free(again);
}

/* Refused with code, the message containing part. */
static void parse_refused(const char *xml, int code, const char *part, int line)
{
    rv_err err = { 0 };
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), &err);
    if (def)
        check_fail(__FILE__, line, "accepted, expected \"%s\":\n%s", part, xml);
    if (err.code != code || !err.message || !strstr(err.message, part))
        check_fail(__FILE__, line, "got code %d \"%s\", expected code %d with \"%s\"", err.code,
                   err.message ? err.message : "", code, part);
    rv_err_clear(&err);
}
#define REFUSED(xml, code, part) parse_refused((xml), (code), (part), __LINE__)

static const char full_xml[] =
    "<domain type='kvm'>\n"
    "  <name>web &amp; db</name>\n"
    "  <uuid>c7a5fdbd-cdaf-9455-926a-d65c16db1809</uuid>\n"
    "  <memory unit='MiB'>512</memory>\n"
    "  <currentMemory unit='KiB'>262144</currentMemory>\n"
    "  <vcpu>2</vcpu>\n"
    "  <os>\n"
    "    <type arch='x86_64' machine='q35'>hvm</type>\n"
    "    <boot dev='cdrom'/>\n"
    "    <boot dev='hd'/>\n"
    "  </os>\n"
    "  <on_poweroff>destroy</on_poweroff>\n"
    "  <on_reboot>restart</on_reboot>\n"
    "  <on_crash>preserve</on_crash>\n"
    "  <devices>\n"
    "    <disk type='file' device='disk'>\n"
    "      <driver name='qemu' type='qcow2'/>\n"
    "      <source file='/var/lib/images/a,b.qcow2'/>\n"
    "      <target dev='vda'/>\n"
    "    </disk>\n"
    "    <disk type='file' device='cdrom'>\n"
    "      <source file='/isos/install.iso'/>\n"
    "      <target dev='sda' bus='sata'/>\n"
    "    </disk>\n"
    "    <disk type='file' device='disk'>\n"
    "      <source file='/images/old.img'/>\n"
    "      <target dev='hdb'/>\n"
    "      <readonly/>\n"
    "    </disk>\n"
    "    <interface type='user'/>\n"
    "    <interface type='bridge'>\n"
    "      <mac address='52:54:00:AB:cd:01'/>\n"
    "      <source bridge='br0'/>\n"
    "      <model type='e1000'/>\n"
    "    </interface>\n"
    "    <console type='pty'/>\n"
    "    <graphics type='vnc' autoport='yes'/>\n"
    "    <!-- comments are fine -->\n"
    "  </devices>\n"
    "</domain>\n";

static void test_full_round_trip(void)
{
    rv_qemu_domain_def *def = parse_ok(full_xml);
    CHECK_STR_EQ(def->name, "web & db");
    CHECK_UINT_EQ(def->memory_kib, 524288);
    CHECK_UINT_EQ(def->current_memory_kib, 262144);
    CHECK_UINT_EQ(def->vcpus, 2);
    CHECK_UINT_EQ(def->ndisks, 3);
    CHECK_INT_EQ(def->disks[0].bus, RV_QEMU_BUS_VIRTIO);
    CHECK_INT_EQ(def->disks[0].format, RV_QEMU_FORMAT_QCOW2);
    CHECK(!def->disks[0].readonly);
    CHECK_INT_EQ(def->disks[1].device, RV_QEMU_DISK_CDROM);
    CHECK(def->disks[1].readonly);
    CHECK_INT_EQ(def->disks[2].bus, RV_QEMU_BUS_IDE);
    CHECK(def->disks[2].readonly);
    CHECK_UINT_EQ(def->ninterfaces, 2);
    CHECK_UINT_EQ(def->interfaces[0].mac[0], 0x52);
    CHECK_UINT_EQ(def->interfaces[1].mac[3], 0xab);
    CHECK_UINT_EQ(def->nserials, 1);
    CHECK(def->graphics.present && def->graphics.autoport);

    char *xml = rv_qemu_domain_format(def);
    CHECK(xml != NULL);
    CHECK_STR_HAS(xml, "<domain type='kvm'>\n  <name>web &amp; db</name>\n"
                       "  <uuid>c7a5fdbd-cdaf-9455-926a-d65c16db1809</uuid>\n"
                       "  <memory unit='KiB'>524288</memory>\n"
                       "  <currentMemory unit='KiB'>262144</currentMemory>\n"
                       "  <vcpu placement='static'>2</vcpu>\n"
                       "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n"
                       "    <boot dev='cdrom'/>\n    <boot dev='hd'/>\n  </os>\n"
                       "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>restart</on_reboot>\n"
                       "  <on_crash>preserve</on_crash>\n");
    CHECK_STR_HAS(xml, "    <disk type='file' device='disk'>\n"
                       "      <driver name='qemu' type='qcow2'/>\n"
                       "      <source file='/var/lib/images/a,b.qcow2'/>\n"
                       "      <target dev='vda' bus='virtio'/>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x06' function='0x0'/>\n"
                       "    </disk>\n");
    CHECK_STR_HAS(xml, "      <target dev='sda' bus='sata'/>\n      <readonly/>\n");
    CHECK_STR_HAS(xml, "      <driver name='qemu' type='raw'/>\n      <source file='/images/old.img'/>\n"
                       "      <target dev='hdb' bus='ide'/>\n      <readonly/>\n");
    CHECK_STR_HAS(xml, "    <interface type='user'>\n      <mac address='52:54:00:");
    CHECK_STR_HAS(xml, "    <interface type='bridge'>\n      <mac address='52:54:00:ab:cd:01'/>\n"
                       "      <source bridge='br0'/>\n      <model type='e1000'/>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x03' function='0x0'/>\n"
                       "    </interface>\n");
    CHECK_STR_HAS(xml, "    <serial type='pty'>\n      <target type='isa-serial' port='0'/>\n    </serial>\n"
                       "    <console type='pty'>\n      <target type='serial' port='0'/>\n    </console>\n");
    /* Implicit devices as libvirt adds them; PCI addresses: video first. */
    CHECK_STR_HAS(xml, "    <controller type='usb' index='0' model='qemu-xhci'>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x04' function='0x0'/>\n"
                       "    </controller>\n"
                       "    <controller type='pci' index='0' model='pcie-root'/>\n"
                       "    <controller type='sata' index='0'>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x05' function='0x0'/>\n");
    CHECK_STR_HAS(xml, "    <input type='mouse' bus='ps2'/>\n    <input type='keyboard' bus='ps2'/>\n"
                       "    <graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'>\n"
                       "      <listen type='address' address='127.0.0.1'/>\n    </graphics>\n"
                       "    <audio id='1' type='none'/>\n"
                       "    <video>\n      <model type='cirrus' vram='16384' heads='1' primary='yes'/>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x01' function='0x0'/>\n"
                       "    </video>\n"
                       "    <memballoon model='virtio'>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x07' function='0x0'/>\n"
                       "    </memballoon>\n"
                       "  </devices>\n</domain>\n");
    CHECK(!strstr(xml, "comments"));

    /* The normal form is a fixed point: the generated MAC stays. */
    check_reads_back(xml);
    free(xml);
    rv_qemu_domain_free(def);
}

static void test_defaults(void)
{
    rv_qemu_domain_def *def = parse_ok(
        "<domain type='qemu'><name>tiny</name><memory>65536</memory>"
        "<os><type>hvm</type></os><devices><interface type='user'/><interface type='user'/></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<domain type='qemu'>\n  <name>tiny</name>\n  <uuid>");
    CHECK_STR_HAS(xml, "  <memory unit='KiB'>65536</memory>\n  <currentMemory unit='KiB'>65536</currentMemory>\n"
                       "  <vcpu placement='static'>1</vcpu>\n"
                       "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n    <boot dev='hd'/>\n  </os>\n"
                       "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>restart</on_reboot>\n"
                       "  <on_crash>destroy</on_crash>\n  <devices>\n");
    CHECK_STR_HAS(xml, "<model type='virtio'/>");
    CHECK_STR_HAS(xml, "    <memballoon model='virtio'>\n");   /* as libvirt adds */
    /* Two generated UUID/MACs are not the same (randomness is used). */
    CHECK(memcmp(def->interfaces[0].mac, def->interfaces[1].mac, 6) != 0);
    unsigned char zero[16] = { 0 };
    CHECK(memcmp(def->uuid, zero, 16) != 0);
    free(xml);
    rv_qemu_domain_free(def);

    /* Units: bytes round up to KiB, decimal units, current clamped. */
    def = parse_ok("<domain type='qemu'><name>u</name><memory unit='b'>1025</memory>"
                   "<currentMemory unit='GiB'>4</currentMemory><os><type>hvm</type></os></domain>");
    CHECK_UINT_EQ(def->memory_kib, 2);
    CHECK_UINT_EQ(def->current_memory_kib, 2);
    rv_qemu_domain_free(def);
    def = parse_ok("<domain type='qemu'><name>u</name><memory unit='MB'>1</memory>"
                   "<os><type>hvm</type></os></domain>");
    CHECK_UINT_EQ(def->memory_kib, 977);    /* 1000000 / 1024, rounded up */
    rv_qemu_domain_free(def);
    def = parse_ok("<domain type='qemu'><name>u</name><memory unit='b'>9223372036854775807</memory>"
                   "<os><type>hvm</type></os></domain>");
    CHECK_UINT_EQ(def->memory_kib, 9007199254740992ULL);    /* 2^63 - 1 bytes, rounded up */
    rv_qemu_domain_free(def);
    /* Over what libvirt takes: 2^63 - 1 bytes. */
    REFUSED("<domain type='qemu'><name>u</name><memory unit='b'>18446744073709551615</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_OVERFLOW,
            "numerical overflow: value too large: 18446744073709551615b");
}

#define MIN_HEAD_OS "<domain type='qemu'><name>x</name><memory>1024</memory><os><type>hvm</type>"
#define MIN_HEAD "<domain type='qemu'><name>x</name><memory>1024</memory><os><type>hvm</type></os>"

static char *joined(char **argv);
static char *command_of(const rv_qemu_domain_def *def);

/* Direct kernel boot: read, written back, and on the command line whole. */
static void test_kernel_boot(void)
{
    rv_qemu_domain_def *def = parse_ok(
        "<domain type='qemu'><name>k</name><memory>1024</memory><os><type>hvm</type>"
        "<kernel>/b/vmlinuz</kernel><initrd>/b/initrd,x.img</initrd>"
        "<cmdline>console=ttyS0 quiet &amp; more</cmdline></os>"
        "<devices><memballoon model='none'/></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<boot dev='hd'/>\n    <kernel>/b/vmlinuz</kernel>\n"
                       "    <initrd>/b/initrd,x.img</initrd>\n"
                       "    <cmdline>console=ttyS0 quiet &amp; more</cmdline>\n  </os>");
    CHECK_STR_HAS(xml, "    <memballoon model='none'/>\n");
    free(xml);
    rv_qemu_command_opts opts = { .binary = "/usr/bin/qemu-system-x86_64", .monitor_path = "/r/k.qmp" };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -kernel /b/vmlinuz -initrd /b/initrd,x.img -append console=ttyS0 quiet & more ");
    CHECK(!strstr(cmd, "balloon"));
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD_OS "<initrd>/i</initrd></os></domain>", RV_ERR_XML_ERROR, "<initrd> in <os> needs a <kernel>");
    REFUSED(MIN_HEAD_OS "<kernel>vmlinuz</kernel></os></domain>", RV_ERR_XML_ERROR,
            "<kernel> must be an absolute path");
    REFUSED(MIN_HEAD_OS "<kernel>/a</kernel><kernel>/b</kernel></os></domain>", RV_ERR_XML_ERROR,
            "more than one <kernel>");
}

/* What virt-install writes by default besides the devices: features,
 * clock and pm, read, written back and on the command line. */
static void test_features_clock_pm(void)
{
    rv_qemu_domain_def *def = parse_ok(
        "<domain type='qemu'><name>f</name><memory>1024</memory>"
        "<os><type machine='q35'>hvm</type></os>"
        "<features><acpi/><apic/><vmport state='off'/></features>"
        "<clock offset='localtime'><timer name='rtc' tickpolicy='catchup'/>"
        "<timer name='pit' tickpolicy='delay'/><timer name='hpet' present='no'/></clock>"
        "<pm><suspend-to-mem enabled='no'/><suspend-to-disk enabled='yes'/></pm>"
        "<devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  </os>\n  <features>\n    <acpi/>\n    <apic/>\n    <vmport state='off'/>\n"
                       "  </features>\n  <clock offset='localtime'>\n"
                       "    <timer name='rtc' tickpolicy='catchup'/>\n"
                       "    <timer name='pit' tickpolicy='delay'/>\n"
                       "    <timer name='hpet' present='no'/>\n  </clock>\n  <on_poweroff>");
    CHECK_STR_HAS(xml, "</on_crash>\n  <pm>\n    <suspend-to-mem enabled='no'/>\n"
                       "    <suspend-to-disk enabled='yes'/>\n  </pm>\n  <devices>\n"
                       "    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n");
    check_reads_back(xml);
    free(xml);
    rv_qemu_command_opts opts = { .binary = "/usr/bin/qemu-system-x86_64", .monitor_path = "/r/f.qmp" };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -machine q35,accel=tcg,vmport=off,hpet=off -rtc base=localtime,driftfix=slew "
                       "-global ICH9-LPC.disable_s3=1 -global ICH9-LPC.disable_s4=0 ");
    CHECK(!strstr(cmd, "kvm-pit"));         /* TCG has no in-kernel PIT */
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
}

static void test_refusals(void)
{
    /* Unsupported: named. */
    REFUSED(MIN_HEAD "<features><pae/></features></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <pae> in <features>");
    REFUSED(MIN_HEAD "<clock offset='variable'/></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "clock offset 'variable' is not supported by remvirt's QEMU driver");
    REFUSED(MIN_HEAD "<clock offset='utc'><timer name='rtc' tickpolicy='merge'/></clock></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported tickpolicy='merge' of element <timer>");
    REFUSED(MIN_HEAD "<clock offset='utc'><timer name='tsc'/></clock></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported name='tsc' of element <timer>");
    REFUSED(MIN_HEAD "<pm><suspend-to-mem enabled='no'><x/></suspend-to-mem></pm></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <x> in <suspend-to-mem>");
    REFUSED(MIN_HEAD "<devices><video><model type='vmvga'/></video></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported type='vmvga' of element <model>");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='vda'/>"
            "<address type='drive'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported drive address on virtio disk 'vda' (only scsi, sata and ide disks take one)");
    /* An ide or sata disk's drive address: only where its name puts it. */
    REFUSED(MIN_HEAD "<devices><disk type='file' device='cdrom'><target dev='hdc' bus='ide'/>"
            "<address type='drive' controller='0' bus='0' target='0' unit='0'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED,
            "drive address of disk 'hdc': only controller 0 bus 1 target 0 unit 0, where its name places it");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='sdb' bus='sata'/>"
            "<address type='drive' controller='1' bus='0' target='0' unit='1'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED,
            "drive address of disk 'sdb': only controller 0 bus 0 target 0 unit 1, where its name places it");
    REFUSED(MIN_HEAD "<devices><watchdog model='itco'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unknown watchdog model 'itco'");
    REFUSED(MIN_HEAD "<devices><watchdog model='i6300esb' action='kaboom'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unknown watchdog action 'kaboom'");
    REFUSED(MIN_HEAD "<devices><watchdog model='ib700'/><watchdog model='ib700'/></devices></domain>",
            RV_ERR_INTERNAL_ERROR, "only a single watchdog device is supported");
    REFUSED(MIN_HEAD "<devices><watchdog model='ib700'><x/></watchdog></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <x> in <watchdog>");
    REFUSED(MIN_HEAD "<devices><controller type='usb' model='nec-xhci'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported <controller type='usb'> model 'nec-xhci'");
    REFUSED(MIN_HEAD "<devices><controller type='fdc'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported type='fdc' of element <controller>");
    REFUSED(MIN_HEAD "<devices><sound model='sb16'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported model='sb16' of element <sound>");
    REFUSED(MIN_HEAD "<devices><channel type='spicevmc'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "a spicevmc <channel> without SPICE graphics");
    REFUSED(MIN_HEAD "<devices><video><model type='qxl'/></video><video><model type='cirrus'/></video>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "a secondary video device of model 'cirrus'");
    REFUSED(MIN_HEAD "<devices><controller type='pci' model='pcie-root-port'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "a pcie-root-port needs a q35 machine");
    REFUSED(MIN_HEAD "<devices><rng model='virtio'><backend model='random'>/etc/passwd</backend></rng>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported rng source '/etc/passwd'");
    REFUSED(MIN_HEAD "<devices><interface type='user'><address type='pci' slot='3'/></interface>"
            "<memballoon model='virtio'><address type='pci' slot='0x03'/></memballoon></devices></domain>",
            RV_ERR_XML_ERROR, "PCI address 0000:00:03.0 is taken twice");
    REFUSED(MIN_HEAD "<devices><interface type='user'><address type='pci' bus='1' slot='0'/></interface>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "only the root bus");
    REFUSED(MIN_HEAD "<devices><interface type='user'><address type='pci' bus='1' slot='3'/></interface>"
            "</devices></domain>", RV_ERR_XML_ERROR, "a pcie-root-port's bus has one slot, 0");
    REFUSED(MIN_HEAD "<devices><disk type='block'><source dev='/dev/sda'/><target dev='vda'/></disk>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported disk type='block'");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a' startupPolicy='x'/>"
            "<target dev='vda'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported attribute 'startupPolicy' of element <source>");
    REFUSED(MIN_HEAD "<devices><disk type='file'><driver name='qemu' type='vmdk'/><source file='/a'/>"
            "<target dev='vda'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "type='vmdk'");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='xda'/></disk>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported bus ''");
    REFUSED(MIN_HEAD "<devices><disk type='file' device='cdrom'><target dev='vdb'/></disk>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "cannot be on the virtio bus");
    REFUSED(MIN_HEAD "<devices><interface type='direct'><source dev='eth0'/></interface>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported interface type 'direct'");
    REFUSED(MIN_HEAD "<devices><graphics type='sdl'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported type='sdl' of element <graphics>");
    REFUSED(MIN_HEAD "<devices><graphics type='spice' tlsPort='5901'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported graphics tlsPort '5901'");
    REFUSED(MIN_HEAD "<devices><memballoon model='xen'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported memballoon model 'xen'");
    REFUSED(MIN_HEAD "<devices><memballoon model='virtio'><stats period='10'/></memballoon></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <stats> in <memballoon>");
    REFUSED(MIN_HEAD "<devices><serial type='tcp'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported type='tcp' of element <serial>");
    REFUSED(MIN_HEAD "<devices><serial type='file'/></devices></domain>", RV_ERR_XML_ERROR,
            "a file <serial> needs a <source path='...'>");
    REFUSED(MIN_HEAD "<devices><serial type='file'><source path='/s'/><target port='9'/></serial></devices>"
            "</domain>", RV_ERR_XML_ERROR, "invalid <serial> target port '9'");
    REFUSED(MIN_HEAD "<devices><console type='file'><source path='/s'/><target port='9'/></console></devices>"
            "</domain>", RV_ERR_XML_ERROR, "invalid <console> target port '9'");
    REFUSED(MIN_HEAD "<devices><serial type='pty'/><console type='file'><source path='/s'/></console></devices>"
            "</domain>", RV_ERR_CONFIG_UNSUPPORTED, "a <console> that is not the same as serial port 0");
    REFUSED("<domain type='xen'><name>x</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported domain type 'xen'");
    REFUSED("<domain type='qemu'><name>x</name><memory>1</memory><os><type arch='aarch64'>hvm</type>"
            "</os></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported architecture 'aarch64'");
    REFUSED("<domain type='qemu'><name>x</name><memory>1</memory><os><type>hvm</type>"
            "<loader>/ovmf.fd</loader></os></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <loader> in <os>");
    REFUSED("<domain type='qemu' xmlns:q='http://libvirt.org/schemas/domain/qemu/1.0'><name>x</name>"
            "<memory>1</memory><os><type>hvm</type><q:commandline/></os></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <commandline> in namespace");

    /* Invalid. */
    /* The common part, read as libvirt reads it (conf/domain_xml.c). */
    REFUSED("<domain type='qemu'><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_NO_NAME, "missing name information");
    REFUSED(MIN_HEAD "<name>y</name></domain>", RV_ERR_XML_ERROR, "more than one <name>");
    REFUSED("<domain type='qemu'><name>x</name><uuid>not-a-uuid</uuid><memory>1</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_INTERNAL_ERROR, "malformed uuid element");
    REFUSED("<domain type='qemu'><name>x</name><memory unit='parsec'>1</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_INVALID_ARG, "unknown suffix 'parsec'");
    REFUSED("<domain type='qemu'><name>x</name><memory>-5</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "Invalid value '-5' for element or attribute './memory[1]'");
    REFUSED("<domain type='qemu'><name>x</name><memory unit='TiB'>99999999999</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_OVERFLOW, "value too large");
    REFUSED(MIN_HEAD "<vcpu>0</vcpu></domain>", RV_ERR_INTERNAL_ERROR,
            "CPU IDs in <numa> exceed the <vcpu> count");
    REFUSED(MIN_HEAD "<vcpu>256</vcpu></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "256 vCPUs is over remvirt's limit of 255");
    REFUSED(MIN_HEAD "<vcpu current='0'>2</vcpu></domain>", RV_ERR_XML_ERROR,
            "invalid vcpu current '0'");
    REFUSED(MIN_HEAD "<devices><interface type='user'><mac address='01:00:5e:00:00:01'/></interface>"
            "</devices></domain>", RV_ERR_XML_ERROR, "invalid MAC address '01:00:5e:00:00:01'");
    REFUSED(MIN_HEAD "<devices><interface type='user'><mac address='52:54:00:1:2:3'/></interface>"
            "</devices></domain>", RV_ERR_XML_ERROR, "invalid MAC address");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='vda'/></disk>"
            "<disk type='file'><source file='/b'/><target dev='vda'/></disk></devices></domain>",
            RV_ERR_XML_ERROR, "two disks have the target 'vda'");
    REFUSED(MIN_HEAD "<devices><disk type='file'><target dev='vda'/></disk></devices></domain>",
            RV_ERR_XML_ERROR, "disk 'vda' has no <source file='...'>");
    REFUSED(MIN_HEAD "<devices><graphics type='vnc' port='80'/></devices></domain>", RV_ERR_XML_ERROR,
            "invalid VNC port '80'");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='vda,x'/></disk>"
            "</devices></domain>", RV_ERR_XML_ERROR, "invalid disk target 'vda,x'");
    REFUSED(MIN_HEAD "<devices><interface type='bridge'><source bridge='br0,x=y'/></interface>"
            "</devices></domain>", RV_ERR_XML_ERROR, "invalid bridge name 'br0,x=y'");
    REFUSED(MIN_HEAD "<devices><graphics type='vnc' listen='example.org'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "graphics listen 'example.org' is not an IP address");
    REFUSED("<domain type='qemu'><name>x</name><memory>1</memory><os><type machine='pc,accel=kvm'>hvm"
            "</type></os></domain>", RV_ERR_XML_ERROR, "invalid machine type 'pc,accel=kvm'");
    REFUSED("<domain type='qemu'><name>a&#10;b</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_DETAIL, "invalid char in name: \n");
    REFUSED("<domain type='qemu'><name>a&#9;b</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "invalid domain name");
    REFUSED("<domain type='qemu'><name>a/b</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "name a/b cannot contain '/'");
    REFUSED("<domain type='qemu'><name>x</name>", RV_ERR_XML_DETAIL,
            "(domain_definition):1: Premature end of data in tag domain line 1\n"
            "<domain type='qemu'><name>x</name>\n----------------------------------^");
    REFUSED("<network><name>x</name></network>", RV_ERR_XML_ERROR,
            "expecting root element of 'domain', not 'network'");
    REFUSED("<d:domain xmlns:d='urn:x'/>", RV_ERR_XML_ERROR, "may not have a namespace");
    REFUSED("", RV_ERR_XML_DETAIL, "(domain_definition):1: Document is empty");
}

static void test_hostile(void)
{
    /* Billion laughs: refused before libxml2 sees a DTD. */
    REFUSED("<?xml version='1.0'?>\n<!DOCTYPE domain [\n<!ENTITY a 'lol'>\n"
            "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>\n<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>\n"
            "<!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>\n<!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>\n]>\n"
            "<domain type='qemu'><name>&e;</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "may not have a DOCTYPE");
    /* XXE, local file and network. */
    REFUSED("<!DOCTYPE domain [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
            "<domain type='qemu'><name>&x;</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "may not have a DOCTYPE");
    REFUSED("<!DOCTYPE domain SYSTEM 'http://127.0.0.1:9/x.dtd'><domain type='qemu'/>",
            RV_ERR_XML_ERROR, "may not have a DOCTYPE");
    /* An entity never declared: an error, not a lookup. */
    REFUSED("<domain type='qemu'><name>&x;</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_DETAIL, "Entity 'x' not defined");
    /* XInclude is not processed: an element like any unknown one. */
    REFUSED(MIN_HEAD "<xi:include xmlns:xi='http://www.w3.org/2001/XInclude' href='/etc/passwd'/></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <include>");
    /* Character references are fine (they are not entities). */
    rv_qemu_domain_def *def = parse_ok("<domain type='qemu'><name>a&#x3c;b</name><memory>1</memory>"
                                       "<os><type>hvm</type></os></domain>");
    CHECK_STR_EQ(def->name, "a<b");
    rv_qemu_domain_free(def);

    /* Oversize: refused before parsing. */
    size_t big = RV_QEMU_DOMAIN_XML_MAX + 1;
    char *xml = malloc(big + 1);
    CHECK(xml != NULL);
    memset(xml, ' ', big);
    memcpy(xml, "<domain type='qemu'>", 20);
    xml[big] = '\0';
    rv_err err = { 0 };
    CHECK(rv_qemu_domain_parse(xml, big, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_XML_ERROR);
    CHECK_STR_HAS(err.message, "over the limit of 1048576");
    rv_err_clear(&err);
    free(xml);

    /* Deep nesting inside an unknown element: refused by libxml2's depth bound. */
    size_t depth = 5000;
    xml = malloc(depth * 7 + 200);
    CHECK(xml != NULL);
    strcpy(xml, MIN_HEAD);
    for (size_t i = 0; i < depth; i++)
        strcat(xml, "<x>");
    for (size_t i = 0; i < depth; i++)
        strcat(xml, "</x>");
    strcat(xml, "</domain>");
    rv_qemu_domain_def *deep = rv_qemu_domain_parse(xml, strlen(xml), &err);
    CHECK(deep == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_XML_DETAIL);     /* libxml2's depth limit */
    rv_err_clear(&err);
    free(xml);
}

/* The argv joined with spaces, for substring checks. */
static char *joined(char **argv)
{
    size_t len = 1;
    for (char **p = argv; *p; p++)
        len += strlen(*p) + 1;
    char *s = calloc(1, len);
    CHECK(s != NULL);
    for (char **p = argv; *p; p++) {
        strcat(s, *p);
        if (p[1])
            strcat(s, " ");
    }
    return s;
}

/* def's QEMU command line (TCG, a monitor at /r/x.qmp), joined. */
static char *command_of(const rv_qemu_domain_def *def)
{
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/r/x.qmp", false, NULL };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = argv ? joined(argv) : strdup("");
    rv_qemu_argv_free(argv);
    rv_err_clear(&err);
    return cmd;
}

static void test_command_line(void)
{
    rv_qemu_domain_def *def = parse_ok(full_xml);
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/mon,itor.sock", true, NULL };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, "/usr/bin/qemu-system-x86_64 -name guest=web & db,debug-threads=on "
                       "-uuid c7a5fdbd-cdaf-9455-926a-d65c16db1809 -machine q35,accel=kvm,acpi=off -m size=524288k "
                       "-smp 2 -no-user-config -nodefaults -S "
                       "-qmp unix:/run/x/mon,,itor.sock,server=on,wait=off ");
    CHECK_STR_HAS(cmd, " -device qemu-xhci,id=usb,p2=15,p3=15,bus=pcie.0,addr=0x4.0x0 -device ich9-ahci,id=sata0,bus=pcie.0,addr=0x5.0x0 ");
    CHECK_STR_HAS(cmd, " -drive file=/var/lib/images/a,,b.qcow2,format=qcow2,if=none,id=drive-vda "
                       "-device virtio-blk-pci,drive=drive-vda,id=vda,bootindex=2,bus=pcie.0,addr=0x6.0x0 ");
    CHECK_STR_HAS(cmd, " -drive file=/isos/install.iso,format=raw,if=none,id=drive-sda,media=cdrom,readonly=on "
                       "-device ide-cd,bus=sata0.0,drive=drive-sda,id=sda,bootindex=1 ");
    CHECK_STR_HAS(cmd, " -device ide-hd,bus=ide.0,drive=drive-hdb,id=hdb ");
    CHECK_STR_HAS(cmd, " -netdev user,id=hostnet0 -device virtio-net-pci,netdev=hostnet0,id=net0,mac=52:54:00:");
    CHECK_STR_HAS(cmd, " -netdev bridge,id=hostnet1,br=br0 -device e1000,netdev=hostnet1,id=net1,mac=52:54:00:ab:cd:01,"
                       "bus=pcie.0,addr=0x3.0x0 ");
    CHECK_STR_HAS(cmd, " -chardev pty,id=charserial0 -device isa-serial,chardev=charserial0,id=serial0,index=0 ");
    CHECK_STR_HAS(cmd, " -vnc 127.0.0.1:0,to=99 -audiodev none,id=audio1 -device cirrus-vga,id=video0,vgamem_mb=16,bus=pcie.0,addr=0x1.0x0");
    /* Each value is one argument: the name with a space stays whole. */
    CHECK_STR_EQ(argv[2], "guest=web & db,debug-threads=on");
    free(cmd);
    rv_qemu_argv_free(argv);

    /* type='kvm' without KVM is refused; 'qemu' gets TCG. */
    opts.kvm_usable = false;
    CHECK(rv_qemu_build_argv(def, &opts, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_CONFIG_UNSUPPORTED);
    CHECK_STR_HAS(err.message, "KVM cannot create a VM");
    rv_err_clear(&err);
    def->accel = RV_QEMU_VIRT_QEMU;
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, "-machine q35,accel=tcg,acpi=off ");    /* no <acpi/> */
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);

    /* An IPv6 listen address goes in brackets; a fixed port is a display. */
    def = parse_ok(MIN_HEAD "<devices><graphics type='vnc' port='5905' autoport='no' listen='::1'/>"
                   "</devices></domain>");
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -vnc [::1]:5 -audiodev none,id=audio1 -device cirrus-vga,id=video0,vgamem_mb=16,bus=pci.0,addr=0x2.0x0");
    free(cmd);
    rv_qemu_argv_free(argv);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<graphics type='vnc' port='5905' autoport='no' listen='::1'>");
    free(xml);
    rv_qemu_domain_free(def);

    /* The pc machine: two IDE devices per bus; no graphics, no display. */
    def = parse_ok(MIN_HEAD "<on_reboot>destroy</on_reboot><devices>"
                   "<disk type='file'><source file='/a'/><target dev='hda'/></disk>"
                   "<disk type='file'><source file='/b'/><target dev='hdb'/></disk>"
                   "<disk type='file' device='cdrom'><target dev='hdc'/></disk>"
                   "<interface type='user'/></devices></domain>");
    def->boot[0] = RV_QEMU_BOOT_NETWORK;
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, "-machine pc,accel=tcg,acpi=off ");
    CHECK_STR_HAS(cmd, " -no-reboot ");
    CHECK_STR_HAS(cmd, " -device ide-hd,bus=ide.0,unit=1,drive=drive-hdb,id=hdb ");
    CHECK_STR_HAS(cmd, " -drive if=none,id=drive-hdc,media=cdrom,readonly=on "
                       "-device ide-cd,bus=ide.1,unit=0,drive=drive-hdc,id=hdc ");
    CHECK_STR_HAS(cmd, ",bootindex=1,bus=pci.0,addr=0x2.0x0 -device virtio-balloon-pci,id=balloon0,"
                       "bus=pci.0,addr=0x3.0x0 -display none");
    CHECK(!strstr(cmd, "-vnc") && !strstr(cmd, "-spice") && !strstr(cmd, "VGA"));
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);

    /* ide and sata disks where their names put them, as libvirtd puts
     * them (a lone hdc on the second bus), with or without libvirtd's
     * drive address; a name past the last place cannot start. */
    def = parse_ok(MIN_HEAD "<devices>"
                   "<disk type='file' device='cdrom'><target dev='hdc' bus='ide'/>"
                   "<address type='drive' controller='0' bus='1' target='0' unit='0'/></disk>"
                   "<disk type='file'><source file='/b'/><target dev='sdb' bus='sata'/></disk>"
                   "</devices></domain>");
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -device ide-cd,bus=ide.1,unit=0,drive=drive-hdc,id=hdc ");
    CHECK_STR_HAS(cmd, " -device ide-hd,bus=sata0.1,drive=drive-sdb,id=sdb,bootindex=1 ");
    free(cmd);
    rv_qemu_argv_free(argv);
    xml = rv_qemu_domain_format(def);
    CHECK(!strstr(xml, "type='drive'"));    /* (the place follows from the name) */
    free(xml);
    rv_qemu_domain_free(def);
    /* libvirtd's q35 XML: its root ports name their QEMU model; SATA
     * controller 0 at 00:1f.2 is the machine's own AHCI ("ide"). */
    def = parse_ok("<domain type='qemu'><name>x</name><memory>1024</memory><os><type machine='q35'>hvm</type></os>"
                   "<devices><controller type='sata' index='0'>"
                   "<address type='pci' domain='0x0000' bus='0x00' slot='0x1f' function='0x2'/></controller>"
                   "<controller type='pci' index='1' model='pcie-root-port'><model name='pcie-root-port'/>"
                   "<target chassis='1' port='0x10'/></controller>"
                   "<disk type='file' device='cdrom'><target dev='sdc' bus='sata'/>"
                   "<address type='drive' controller='0' bus='0' target='0' unit='2'/></disk></devices></domain>");
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -device ide-cd,bus=ide.2,drive=drive-sdc,id=sdc ");
    CHECK(!strstr(cmd, "ich9-ahci"));
    free(cmd);
    rv_qemu_argv_free(argv);
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "slot='0x1f' function='0x2'");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED("<domain type='qemu'><name>x</name><memory>1024</memory><os><type machine='q35'>hvm</type></os>"
            "<devices><controller type='pci' index='1' model='pcie-root-port'><model name='ioh3420'/>"
            "</controller></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "ioh3420");
    def = parse_ok(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='hde' bus='ide'/></disk>"
                   "</devices></domain>");
    CHECK(rv_qemu_build_argv(def, &opts, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_CONFIG_UNSUPPORTED);
    CHECK_STR_HAS(err.message, "disk 'hde' is past the ide disks of machine 'pc' (at most 4: hda to hdd)");
    rv_err_clear(&err);
    rv_qemu_domain_free(def);
}

/* <interface type='network'>: its definition names the network; the
 * bridge is filled in at start and then shows in the live XML and on
 * the command line; without it there is no command line. */
static void test_network_interface(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><interface type='network'>"
                                       "<mac address='52:54:00:ab:cd:07'/><source network='lan'/>"
                                       "</interface></devices></domain>");
    CHECK_INT_EQ(def->interfaces[0].type, RV_QEMU_NET_NETWORK);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<interface type='network'>\n      <mac address='52:54:00:ab:cd:07'/>\n"
                       "      <source network='lan'/>\n");
    free(xml);
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/m.sock", false, NULL };
    rv_err err = { 0 };
    CHECK(rv_qemu_build_argv(def, &opts, &err) == NULL);
    CHECK_STR_HAS(err.message, "network 'lan' of domain 'x' has no bridge yet");
    rv_err_clear(&err);
    def->interfaces[0].bridge = strdup("br7");
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -netdev bridge,id=hostnet0,br=br7 -device virtio-net-pci,netdev=hostnet0,");
    free(cmd);
    rv_qemu_argv_free(argv);
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <source network='lan' bridge='br7'/>\n");
    rv_qemu_domain_free(def);
    def = parse_ok(xml);        /* the live XML reads back */
    CHECK_STR_EQ(def->interfaces[0].bridge, "br7");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><interface type='network'/></devices></domain>", RV_ERR_XML_ERROR,
            "a network <interface> has no <source network='...'>");
}

/* <driver name> (nova's 'qemu') and <link state> (cockpit's Unplug) kept,
 * written after <model> as libvirt does; other values refused. */
static void test_interface_driver_link(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><interface type='user'>"
                                       "<mac address='52:54:00:ab:cd:08'/><model type='virtio'/>"
                                       "<driver name='qemu'/><link state='down'/></interface></devices></domain>");
    CHECK_INT_EQ(def->interfaces[0].link, 2);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <model type='virtio'/>\n      <driver name='qemu'/>\n      <link state='down'/>\n");
    free(xml);
    rv_qemu_domain_free(def);
    /* virt-xml's source.mode=bridge on a network NIC: dropped, as by libvirtd. */
    def = parse_ok(MIN_HEAD "<devices><interface type='network'><source network='lan' mode='bridge'/>"
                   "</interface></devices></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <source network='lan'/>\n");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><interface type='user'><link state='sideways'/></interface></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported state='sideways' of element <link>");
    REFUSED(MIN_HEAD "<devices><interface type='user'><driver name='vfio'/></interface></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported name='vfio' of element <driver>");
    REFUSED(MIN_HEAD "<devices><interface type='user'><driver name='vhost' queues='2'/></interface></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "queues");
}

/* <bandwidth> kept in an interface and written where and as libvirt
 * writes it (after <source>; average, peak, floor, burst; zeros left out). */
static void test_bandwidth(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><interface type='bridge'>"
                                       "<source bridge='br0'/><bandwidth><outbound average='4' burst='6'/>"
                                       "<inbound burst='3' floor='2' average='1'/></bandwidth>"
                                       "</interface></devices></domain>");
    const rv_tune_bandwidth *bw = &def->interfaces[0].bandwidth;
    CHECK(bw->has_in && bw->has_out);
    CHECK_UINT_EQ(bw->val[0], 1);
    CHECK_UINT_EQ(bw->val[2], 3);
    CHECK_UINT_EQ(bw->val[3], 2);
    CHECK_UINT_EQ(bw->val[6], 6);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <source bridge='br0'/>\n      <bandwidth>\n"
                       "        <inbound average='1' floor='2' burst='3'/>\n"
                       "        <outbound average='4' burst='6'/>\n      </bandwidth>\n      <model");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><interface type='user'><bandwidth><inbound peak='5'/></bandwidth>"
            "</interface></devices></domain>", RV_ERR_XML_ERROR, "Missing mandatory average or floor");
    REFUSED(MIN_HEAD "<devices><interface type='user'><bandwidth><outbound floor='5'/></bandwidth>"
            "</interface></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "floor");
    REFUSED(MIN_HEAD "<devices><interface type='user'><bandwidth><inbound average='1'/>"
            "<inbound average='2'/></bandwidth></interface></devices></domain>", RV_ERR_XML_ERROR,
            "Only one child <inbound>");
    REFUSED(MIN_HEAD "<devices><interface type='user'><bandwidth><inbound average='4294967296'/>"
            "</bandwidth></interface></devices></domain>", RV_ERR_XML_ERROR, "average");
}

/* A tap of remvirtd's (as root): <target dev> read and written where
 * libvirt puts it, and QEMU given the tap as an inherited descriptor. */
static void test_tap_interface(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><interface type='bridge'>"
                                       "<mac address='52:54:00:ab:cd:08'/><source bridge='br0'/>"
                                       "<target dev='mytap0'/><model type='e1000'/></interface>"
                                       "</devices></domain>");
    CHECK_STR_EQ(def->interfaces[0].ifname, "mytap0");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <source bridge='br0'/>\n      <target dev='mytap0'/>\n"
                       "      <model type='e1000'/>\n");
    free(xml);
    def->interfaces[0].tap_fd = 5;
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/m.sock", false, NULL };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -netdev tap,id=hostnet0,fd=5 -device ");
    CHECK(!strstr(cmd, "-netdev bridge"));
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><interface type='bridge'><source bridge='br0'/>"
            "<target dev='a/b'/></interface></devices></domain>",
            RV_ERR_XML_ERROR, "invalid interface target dev 'a/b'");
    REFUSED(MIN_HEAD "<devices><interface type='bridge'><source bridge='br0'/>"
            "<target dev='sixteen-chars-xx'/></interface></devices></domain>",
            RV_ERR_XML_ERROR, "invalid interface target dev 'sixteen-chars-xx'");
}

/* def's normal form has each of want, and reads back the same. */
static void check_normal_form(const rv_qemu_domain_def *def, const char *const *want, size_t n)
{
    char *xml = rv_qemu_domain_format(def);
    for (size_t i = 0; i < n; i++)
        CHECK_STR_HAS(xml, want[i]);
    check_reads_back(xml);
    free(xml);
}

/* argv (freed) joined has each of args. */
static void check_args(char **argv, const char *const *args, size_t n)
{
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    for (size_t i = 0; i < n; i++)
        CHECK_STR_HAS(cmd, args[i]);
    free(cmd);
    rv_qemu_argv_free(argv);
}
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* What virt-install 4.1 writes for a small guest with SPICE (its USB
 * controllers, channel, tablet, sound, QXL, redirdevs), read, given
 * addresses, and turned into QEMU devices. */
static const char virt_install_devices[] =
    "<controller type='usb' model='ich9-ehci1'/>"
    "<controller type='usb' model='ich9-uhci1'><master startport='0'/></controller>"
    "<controller type='usb' model='ich9-uhci2'><master startport='2'/></controller>"
    "<controller type='usb' model='ich9-uhci3'><master startport='4'/></controller>"
    "<interface type='user'><mac address='52:54:00:9e:1a:d6'/><model type='e1000'/></interface>"
    "<console type='pty'/>"
    "<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>"
    "<channel type='unix'><source mode='bind'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>"
    "<input type='tablet' bus='usb'/>"
    "<graphics type='spice' port='-1' tlsPort='-1' autoport='yes'><image compression='off'/></graphics>"
    "<sound model='ich6'/><video><model type='qxl'/></video>"
    "<redirdev bus='usb' type='spicevmc'/><redirdev bus='usb' type='spicevmc'/>"
    "<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>";

static bool always_free(int port, void *opaque)
{
    (void)opaque;
    return port != 5900;    /* as if someone else had it */
}

static void test_virt_install_devices(void)
{
    char xml_in[4096];
    snprintf(xml_in, sizeof(xml_in), MIN_HEAD "<devices>%s</devices></domain>", virt_install_devices);
    rv_qemu_domain_def *def = parse_ok(xml_in);
    const char *const want[] = {
        "    <controller type='usb' index='0' model='ich9-ehci1'>\n"
        "      <address type='pci' domain='0x0000' bus='0x00' slot='0x05' function='0x7'/>\n",
        "    <controller type='usb' index='0' model='ich9-uhci1'>\n      <master startport='0'/>\n"
        "      <address type='pci' domain='0x0000' bus='0x00' slot='0x05' function='0x0' multifunction='on'/>\n",
        "    <controller type='pci' index='0' model='pci-root'/>\n",
        "    <controller type='virtio-serial' index='0'>\n",
        "<address type='virtio-serial' controller='0' bus='0' port='2'/>",
        "    <input type='tablet' bus='usb'>\n      <address type='usb' bus='0' port='1'/>\n    </input>\n"
        "    <input type='mouse' bus='ps2'/>\n"
        "    <input type='keyboard' bus='ps2'/>\n",
        "    <graphics type='spice' port='-1' autoport='yes' listen='127.0.0.1'>\n"
        "      <listen type='address' address='127.0.0.1'/>\n      <image compression='off'/>\n",
        "    <sound model='ich6'>\n      <address type='pci' domain='0x0000' bus='0x00' slot='0x04' function='0x0'/>\n",
        "    <audio id='1' type='spice'/>\n",
        "<model type='qxl' ram='65536' vram='65536' vgamem='16384' heads='1' primary='yes'/>\n"
        "      <address type='pci' domain='0x0000' bus='0x00' slot='0x02' function='0x0'/>\n",
        "    <redirdev bus='usb' type='spicevmc'>\n      <address type='usb' bus='0' port='3'/>\n",
        "    <rng model='virtio'>\n      <backend model='random'>/dev/urandom</backend>\n",
    };
    /* The addresses stay: the normal form reads back the same. */
    check_normal_form(def, want, ARRAY_LEN(want));

    /* At start: a port (5900 is taken here) and the agent's socket. */
    rv_err err = { 0 };
    CHECK_INT_EQ(rv_qemu_devices_prepare_live(def, "/run/x/dom", always_free, NULL, &err), 0);
    CHECK_INT_EQ(def->spice.port, 5901);
    CHECK_STR_EQ(def->dev.channels[1].path, "/run/x/dom.channel.1");
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/mon", false, NULL };
    def->accel = RV_QEMU_VIRT_QEMU;
    const char *const args[] = {
        " -device ich9-usb-ehci1,id=usb,bus=pci.0,addr=0x5.0x7 ",
        " -device ich9-usb-uhci1,masterbus=usb.0,firstport=0,id=usb-companion1,bus=pci.0,addr=0x5.0x0,"
        "multifunction=on ",
        " -device virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x6.0x0 ",
        " -spice port=5901,addr=127.0.0.1,disable-ticketing=on,image-compression=off,seamless-migration=on ",
        " -device usb-tablet,id=input0,bus=usb.0,port=1 ",
        " -audiodev spice,id=audio1 -device intel-hda,id=sound0,bus=pci.0,addr=0x4.0x0 "
        "-device hda-duplex,id=sound0-codec0,bus=sound0.0,cad=0,audiodev=audio1 ",
        " -device qxl-vga,id=video0,ram_size=67108864,vram_size=67108864,vgamem_mb=16,max_outputs=1,"
        "bus=pci.0,addr=0x2.0x0 ",
        " -chardev spicevmc,id=charchannel0,name=vdagent -device virtserialport,bus=virtio-serial0.0,nr=1,"
        "chardev=charchannel0,id=channel0,name=com.redhat.spice.0 ",
        " -chardev socket,id=charchannel1,path=/run/x/dom.channel.1,server=on,wait=off ",
        " -chardev spicevmc,id=charredir1,name=usbredir -device usb-redir,chardev=charredir1,id=redir1,bus=usb.0,port=3 ",
        " -object rng-random,id=objrng0,filename=/dev/urandom -device virtio-rng-pci,rng=objrng0,id=rng0,"
        "bus=pci.0,addr=0x8.0x0",
    };
    check_args(rv_qemu_build_argv(def, &opts, &err), args, ARRAY_LEN(args));
    rv_qemu_domain_free(def);
}

/* <watchdog>: action reset by default, the i6300esb placed after the
 * balloon (libvirtd's slot 3 for a bare guest), alias watchdog0 live;
 * on the command line as libvirtd starts it; ib700 has no address. */
static void test_watchdog(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><watchdog model='i6300esb'/></devices></domain>");
    const char *const want[] = {
        "    <watchdog model='i6300esb' action='reset'>\n"
        "      <address type='pci' domain='0x0000' bus='0x00' slot='0x03' function='0x0'/>\n"
        "    </watchdog>\n    <memballoon model='virtio'>\n"
        "      <address type='pci' domain='0x0000' bus='0x00' slot='0x02' function='0x0'/>\n",
    };
    check_normal_form(def, want, ARRAY_LEN(want));
    def->aliases = true;
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "    <watchdog model='i6300esb' action='reset'>\n      <alias name='watchdog0'/>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x03' function='0x0'/>\n");
    rv_qemu_domain_free(parse_ok(xml));     /* the live form, as a reattach reads it */
    free(xml);
    rv_err err = { 0 };
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/mon", false, NULL };
    const char *const args[] = { " -device i6300esb,id=watchdog0,bus=pci.0,addr=0x3.0x0 -watchdog-action reset" };
    check_args(rv_qemu_build_argv(def, &opts, &err), args, ARRAY_LEN(args));
    rv_qemu_domain_free(def);

    /* ib700 (ISA, no address); dump is QEMU's pause, the driver dumps
     * (qemu_events.c). */
    static const struct { const char *action, *qemu_action; } ib700[] = {
        { "inject-nmi", "inject-nmi" }, { "dump", "pause" },
    };
    for (size_t i = 0; i < ARRAY_LEN(ib700); i++) {
        char in[256], normal[96], arg[96];
        snprintf(in, sizeof in, MIN_HEAD "<devices><watchdog model='ib700' action='%s'/></devices></domain>",
                 ib700[i].action);
        snprintf(normal, sizeof normal, "    <watchdog model='ib700' action='%s'/>\n", ib700[i].action);
        snprintf(arg, sizeof arg, " -device ib700,id=watchdog0 -watchdog-action %s", ib700[i].qemu_action);
        const char *const want_ib[] = { normal }, *const args_ib[] = { arg };
        def = parse_ok(in);
        check_normal_form(def, want_ib, 1);
        check_args(rv_qemu_build_argv(def, &opts, &err), args_ib, 1);
        rv_qemu_domain_free(def);
    }
}

/* PIIX3's own controllers on pc keep their addresses on slot 1; q35's
 * root ports number from 1 even without the root written. */
static void test_builtin_controllers(void)
{
    rv_qemu_domain_def *def = parse_ok(MIN_HEAD "<devices><controller type='ide'/>"
                                       "<controller type='usb' model='piix3-uhci'/></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<controller type='usb' index='0' model='piix3-uhci'>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x01' function='0x2'/>");
    CHECK_STR_HAS(xml, "<controller type='ide' index='0'>\n"
                       "      <address type='pci' domain='0x0000' bus='0x00' slot='0x01' function='0x1'/>");
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    free(xml);
    rv_qemu_domain_free(again);
    rv_qemu_domain_free(def);

    def = parse_ok("<domain type='qemu'><name>x</name><memory>1024</memory>"
                   "<os><type arch='x86_64' machine='q35'>hvm</type></os><devices>"
                   "<controller type='pci' model='pcie-root-port'/><controller type='pci' model='pcie-root-port'/>"
                   "</devices></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<controller type='pci' index='0' model='pcie-root'/>\n"
                       "    <controller type='pci' index='1' model='pcie-root-port'>\n");
    CHECK_STR_HAS(xml, "<controller type='pci' index='2' model='pcie-root-port'>\n");
    free(xml);
    rv_qemu_domain_free(def);
    /* PCIe devices go behind free root ports, as libvirtd places them (and
     * as a hotplug needs them); with none left, on the root bus. */
#define Q35_PORTS(devs) \
    "<domain type='qemu'><name>x</name><memory>1024</memory>" \
    "<os><type arch='x86_64' machine='q35'>hvm</type></os><devices>" \
    "<controller type='pci' model='pcie-root-port'/><controller type='pci' model='pcie-root-port'/>" devs \
    "</devices></domain>"
    def = parse_ok(Q35_PORTS("<disk type='file'><source file='/a'/><target dev='vda' bus='virtio'/></disk>"
                             "<interface type='user'><model type='virtio'/></interface>"
                             "<interface type='user'><model type='virtio'/></interface>"));
    /* In libvirt's order: the NICs first, then the disks. */
    CHECK(def->interfaces[0].addr.bus == 1 && def->interfaces[0].addr.slot == 0);
    CHECK(def->interfaces[1].addr.bus == 2 && def->interfaces[1].addr.slot == 0);
    CHECK(def->disks[0].addr.bus == 0 && def->disks[0].addr.slot > 0);
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<address type='pci' domain='0x0000' bus='0x02' slot='0x00' function='0x0'/>");
    free(xml);
    rv_qemu_domain_free(def);
    def = parse_ok(Q35_PORTS("<interface type='user'><address type='pci' bus='2' slot='0'/></interface>"));
    CHECK(def->interfaces[0].addr.bus == 2);
    rv_qemu_domain_free(def);
    REFUSED(Q35_PORTS("<interface type='user'><address type='pci' bus='3' slot='0'/></interface>"),
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported PCI address bus 3");
    REFUSED(Q35_PORTS("<interface type='user'><address type='pci' bus='1' slot='0'/></interface>"
                      "<interface type='user'><address type='pci' bus='1' slot='0'/></interface>"),
            RV_ERR_XML_ERROR, "PCI address 0000:01:00.0 is taken twice");
#undef Q35_PORTS
    REFUSED("<domain type='qemu'><name>x</name><memory>1024</memory>"
            "<os><type arch='x86_64' machine='q35'>hvm</type></os><devices><controller type='ide'/>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "an IDE controller on machine 'q35'");
}

/* <cpu mode>: what virt-install writes when KVM's domain capabilities
 * offer host-passthrough; libvirt's defaults filled in. */
static void test_cpu_mode(void)
{
    rv_qemu_domain_def *def = parse_ok("<domain type='kvm'><name>c</name><memory>1024</memory>"
                                       "<os><type>hvm</type></os><cpu mode='host-passthrough'/></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <cpu mode='host-passthrough' check='none' migratable='on'/>\n");
    free(xml);
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/r/c.qmp", true, NULL };
    rv_err err = { 0 };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, " -cpu host -m ");
    free(cmd);
    rv_qemu_argv_free(argv);
    def->accel = RV_QEMU_VIRT_QEMU;
    CHECK(rv_qemu_build_argv(def, &opts, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_CONFIG_UNSUPPORTED);
    CHECK_STR_HAS(err.message, "host-passthrough");
    rv_err_clear(&err);
    rv_qemu_domain_free(def);
    def = parse_ok(MIN_HEAD "<cpu mode='host-model'/></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <cpu mode='host-model' check='partial'/>\n");
    free(xml);
    rv_qemu_domain_free(def);
    /* A custom model: libvirt's defaults filled in, features in QEMU's
     * spelling on the command line. */
    def = parse_ok(MIN_HEAD "<cpu><model>qemu64</model><feature name='pclmuldq'/>"
                   "<feature policy='forbid' name='svm'/></cpu></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <cpu mode='custom' match='exact' check='none'>\n"
                       "    <model fallback='allow'>qemu64</model>\n"
                       "    <feature policy='require' name='pclmuldq'/>\n"
                       "    <feature policy='forbid' name='svm'/>\n  </cpu>\n");
    free(xml);
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    bool cpu_arg = false;
    for (size_t i = 0; argv && argv[i] && argv[i + 1]; i++)
        cpu_arg |= strcmp(argv[i], "-cpu") == 0 && strcmp(argv[i + 1], "qemu64,+pclmulqdq,-svm") == 0;
    CHECK(cpu_arg);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<cpu mode='custom'/></domain>", RV_ERR_XML_ERROR, "Missing CPU model name");
    REFUSED(MIN_HEAD "<cpu mode='host-model'><model>qemu64</model></cpu></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported <model> or <vendor> in <cpu mode='host-model'>");
    REFUSED(MIN_HEAD "<cpu><model>qemu64,x=y</model></cpu></domain>", RV_ERR_XML_ERROR,
            "invalid CPU model name");
    REFUSED(MIN_HEAD "<cpu><model>qemu64</model><feature name='a'/><feature name='a'/></cpu></domain>",
            RV_ERR_XML_ERROR, "CPU feature 'a' specified more than once");
    REFUSED(MIN_HEAD "<cpu><model>qemu64</model><topology sockets='1'/></cpu></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <topology> in <cpu>");
}

/* <metadata> (virt-manager's libosinfo entry): kept and written back
 * with its namespace, so that the written XML parses again the same. */
static void test_metadata(void)
{
    rv_qemu_domain_def *def = parse_ok(
        MIN_HEAD "<metadata>\n  <libosinfo:libosinfo xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'>"
        "<libosinfo:os id='http://libosinfo.org/linux/2022'/></libosinfo:libosinfo>\n"
        "  <!-- a comment goes -->\n  <x:y xmlns:x='urn:x'>a &amp; b</x:y></metadata></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <metadata>\n    <libosinfo:libosinfo "
                       "xmlns:libosinfo=\"http://libosinfo.org/xmlns/libvirt/domain/1.0\">");
    CHECK_STR_HAS(xml, "<libosinfo:os id=\"http://libosinfo.org/linux/2022\"/>");
    CHECK_STR_HAS(xml, "<x:y xmlns:x=\"urn:x\">a &amp; b</x:y>\n  </metadata>\n");
    CHECK(strstr(xml, "comment") == NULL);
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    free(xml);
    rv_qemu_domain_free(again);
    rv_qemu_domain_free(def);
    def = parse_ok(MIN_HEAD "<metadata/></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK(strstr(xml, "metadata") == NULL);
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<metadata><plain/></metadata></domain>", RV_ERR_XML_ERROR,
            "a <metadata> child must be an element in a namespace");
    REFUSED(MIN_HEAD "<metadata>text</metadata></domain>", RV_ERR_XML_ERROR,
            "a <metadata> child must be an element in a namespace");
    REFUSED(MIN_HEAD "<metadata/><metadata/></domain>", RV_ERR_XML_ERROR, "more than one <metadata>");
    REFUSED("<domain type='qemu' xmlns:m='urn:m'><name>x</name><memory>1024</memory><os><type>hvm</type></os>"
            "<metadata><m:a/></metadata></domain>", RV_ERR_XML_ERROR,
            "a <metadata> child must declare its namespace itself (<a>)");
}

/* <driver discard>: virt-manager's new disks say unmap; QEMU is told. */
static void test_disk_discard(void)
{
    rv_qemu_domain_def *def = parse_ok(
        MIN_HEAD "<devices><disk type='file' device='disk'><driver name='qemu' type='qcow2' discard='unmap'/>"
        "<source file='/i/a.qcow2'/><target dev='vda' bus='virtio'/></disk></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<driver name='qemu' type='qcow2' discard='unmap'/>");
    free(xml);
    char *cmd = command_of(def);
    CHECK_STR_HAS(cmd, " -drive file=/i/a.qcow2,format=qcow2,if=none,id=drive-vda,discard=unmap ");
    free(cmd);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><disk type='file' device='disk'><driver name='qemu' discard='trim'/>"
            "<source file='/i/a'/><target dev='vda'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported discard='trim' of element <driver>");
}

/* IOThreads: ids filled in from <iothreads>, <iothreadids> written once
 * one is named or pinned, <iothreadpin> in <cputune>, a virtio disk's
 * IOThread on its <driver> and QEMU's objects and device options;
 * libvirtd's refusals. */
static void test_iothreads(void)
{
    rv_qemu_domain_def *def = parse_ok(
        MIN_HEAD "<iothreads>3</iothreads><iothreadids><iothread id='4' thread_pool_max='2'/></iothreadids>"
        "<cputune><iothreadpin iothread='1' cpuset='0-1'/></cputune>"
        "<devices><disk type='file' device='disk'><driver name='qemu' iothread='4' discard='unmap' detect_zeroes='on'/>"
        "<source file='/i/a'/><target dev='vda' bus='virtio'/></disk></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <iothreads>3</iothreads>\n  <iothreadids>\n    <iothread id='4' thread_pool_max='2'/>\n"
                       "    <iothread id='1'/>\n    <iothread id='2'/>\n  </iothreadids>\n  <cputune>\n"
                       "    <iothreadpin iothread='1' cpuset='0-1'/>\n  </cputune>\n");
    CHECK_STR_HAS(xml, "<driver name='qemu' type='raw' discard='unmap' iothread='4' detect_zeroes='on'/>");
    check_reads_back(xml);
    free(xml);
    char *cmd = command_of(def);
    CHECK_STR_HAS(cmd, " -object iothread,id=iothread4,thread-pool-max=2 -object iothread,id=iothread1 "
                       "-object iothread,id=iothread2 ");
    CHECK_STR_HAS(cmd, " virtio-blk-pci,iothread=iothread4,drive=drive-vda,");
    free(cmd);
    rv_qemu_domain_free(def);
    def = parse_ok(MIN_HEAD "<iothreads>1</iothreads><devices><controller type='scsi' model='virtio-scsi'>"
                   "<driver iothread='1'/></controller></devices></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<controller type='scsi' index='0' model='virtio-scsi'>\n      <driver iothread='1'/>\n");
    check_reads_back(xml);
    free(xml);
    cmd = command_of(def);
    CHECK_STR_HAS(cmd, " virtio-scsi-pci,iothread=iothread1,id=scsi0,");
    free(cmd);
    rv_qemu_domain_free(def);
    def = parse_ok(MIN_HEAD "<iothreads>2</iothreads></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "  <iothreads>2</iothreads>\n  <os>");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<iothreadids><iothread id='0'/></iothreadids></domain>", RV_ERR_XML_ERROR,
            "Zero is not permitted");
    REFUSED(MIN_HEAD "<iothreadids><iothread id='2'/><iothread id='2'/></iothreadids></domain>",
            RV_ERR_XML_ERROR, "duplicate iothread id '2' found");
    REFUSED(MIN_HEAD "<iothreads>1</iothreads><cputune><iothreadpin iothread='2' cpuset='0'/></cputune></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "Cannot find 'iothread' : 2");
    REFUSED(MIN_HEAD "<iothreads>1</iothreads><devices><disk type='file' device='disk'><driver iothread='2'/>"
            "<source file='/i/a'/><target dev='vda' bus='virtio'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "Disk iothread '2' not defined in iothreadid");
    REFUSED(MIN_HEAD "<iothreads>1</iothreads><devices><disk type='file' device='disk'><driver iothread='1'/>"
            "<source file='/i/a'/><target dev='sda' bus='sata'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "IOThreads not available for bus sata target sda");
    REFUSED(MIN_HEAD "<iothreads>2000</iothreads></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "more than 1024 IOThreads");
}

/* <disk type='volume'> (cockpit's new disk): the pool and volume kept and
 * written back, the file left to the start (qemu_storage.c). */
static void test_volume_disk(void)
{
    rv_qemu_domain_def *def = parse_ok(
        MIN_HEAD "<devices><disk type='volume' device='disk'><driver name='qemu' type='qcow2'/>"
        "<source pool='rvpool' volume='newvol'/><target dev='vda' bus='virtio'/></disk></devices></domain>");
    CHECK(def->disks[0].source == NULL);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "    <disk type='volume' device='disk'>\n      <driver name='qemu' type='qcow2'/>\n"
                       "      <source pool='rvpool' volume='newvol'/>\n");
    free(xml);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><disk type='volume'><source pool='p'/><target dev='vda'/></disk></devices></domain>",
            RV_ERR_XML_ERROR, "a volume <disk> needs a pool and a volume");
    REFUSED(MIN_HEAD "<devices><disk type='volume'><source file='/a'/><target dev='vda'/></disk></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "file");
}

/* <serial>: nova gives a volume's id; kept in the XML in libvirt's place
 * (after <readonly/>) and given to QEMU's device; libvirt's characters. */
static void test_disk_serial(void)
{
    rv_qemu_domain_def *def = parse_ok(
        MIN_HEAD "<devices><disk type='file' device='disk'><source file='/i/a'/><target dev='vdb'/>"
        "<readonly/><serial>11111111-2222-3333-4444-555555555555</serial></disk></devices></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "      <readonly/>\n      <serial>11111111-2222-3333-4444-555555555555</serial>\n");
    free(xml);
    char *cmd = command_of(def);
    CHECK_STR_HAS(cmd, " -device virtio-blk-pci,drive=drive-vdb,id=vdb,bootindex=1,serial=11111111-2222-3333-4444-555555555555,");
    free(cmd);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='vda'/>"
            "<serial>a,drive=x</serial></disk></devices></domain>",
            RV_ERR_XML_ERROR, "disk serial (a,drive=x) contains invalid characters");
}

/* What virt-manager 4.1's New VM wizard defines (manual install, Generic
 * Linux 2022, a new qcow2 disk, usermode networking), as its log shows. */
static const char virt_manager_new_vm_xml[] =
    "<domain type=\"kvm\">\n"
    "  <name>fresh</name>\n"
    "  <uuid>3fe7c540-bba3-4ef4-b6f7-990019c91694</uuid>\n"
    "  <metadata>\n"
    "    <libosinfo:libosinfo xmlns:libosinfo=\"http://libosinfo.org/xmlns/libvirt/domain/1.0\">\n"
    "      <libosinfo:os id=\"http://libosinfo.org/linux/2022\"/>\n"
    "    </libosinfo:libosinfo>\n"
    "  </metadata>\n"
    "  <memory>4194304</memory>\n"
    "  <currentMemory>4194304</currentMemory>\n"
    "  <vcpu>2</vcpu>\n"
    "  <os>\n"
    "    <type arch=\"x86_64\" machine=\"q35\">hvm</type>\n"
    "    <boot dev=\"hd\"/>\n"
    "  </os>\n"
    "  <features>\n"
    "    <acpi/>\n"
    "    <apic/>\n"
    "    <vmport state=\"off\"/>\n"
    "  </features>\n"
    "  <clock offset=\"utc\">\n"
    "    <timer name=\"rtc\" tickpolicy=\"catchup\"/>\n"
    "    <timer name=\"pit\" tickpolicy=\"delay\"/>\n"
    "    <timer name=\"hpet\" present=\"no\"/>\n"
    "  </clock>\n"
    "  <pm>\n"
    "    <suspend-to-mem enabled=\"no\"/>\n"
    "    <suspend-to-disk enabled=\"no\"/>\n"
    "  </pm>\n"
    "  <devices>\n"
    "    <emulator>/usr/bin/qemu-system-x86_64</emulator>\n"
    "    <disk type=\"file\" device=\"disk\">\n"
    "      <driver name=\"qemu\" type=\"qcow2\" discard=\"unmap\"/>\n"
    "      <source file=\"/i/fresh.qcow2\"/>\n"
    "      <target dev=\"vda\" bus=\"virtio\"/>\n"
    "    </disk>\n"
    "    <controller type=\"usb\" model=\"qemu-xhci\" ports=\"15\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <controller type=\"pci\" model=\"pcie-root-port\"/>\n"
    "    <interface type=\"user\">\n"
    "      <mac address=\"52:54:00:23:11:94\"/>\n"
    "      <model type=\"virtio\"/>\n"
    "    </interface>\n"
    "    <console type=\"pty\"/>\n"
    "    <channel type=\"unix\">\n"
    "      <source mode=\"bind\"/>\n"
    "      <target type=\"virtio\" name=\"org.qemu.guest_agent.0\"/>\n"
    "    </channel>\n"
    "    <channel type=\"spicevmc\">\n"
    "      <target type=\"virtio\" name=\"com.redhat.spice.0\"/>\n"
    "    </channel>\n"
    "    <input type=\"tablet\" bus=\"usb\"/>\n"
    "    <graphics type=\"spice\" port=\"-1\" tlsPort=\"-1\" autoport=\"yes\">\n"
    "      <image compression=\"off\"/>\n"
    "    </graphics>\n"
    "    <sound model=\"ich9\"/>\n"
    "    <video>\n"
    "      <model type=\"virtio\"/>\n"
    "    </video>\n"
    "    <redirdev bus=\"usb\" type=\"spicevmc\"/>\n"
    "    <redirdev bus=\"usb\" type=\"spicevmc\"/>\n"
    "    <memballoon model=\"virtio\"/>\n"
    "    <rng model=\"virtio\">\n"
    "      <backend model=\"random\">/dev/urandom</backend>\n"
    "    </rng>\n"
    "  </devices>\n"
    "</domain>\n"
;

static void test_virt_manager_new_vm(void)
{
    rv_qemu_domain_def *def = parse_ok(virt_manager_new_vm_xml);
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<controller type='usb' index='0' model='qemu-xhci' ports='15'");
    CHECK_STR_HAS(xml, "<libosinfo:os id=\"http://libosinfo.org/linux/2022\"/>");
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    free(xml);
    rv_qemu_domain_free(again);
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/r/x.qmp", true, NULL };
    rv_err err = { 0 };
    CHECK_INT_EQ(rv_qemu_devices_prepare_live(def, "/r/x", always_free, NULL, &err), 0);
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    if (!argv)
        check_fail(__FILE__, __LINE__, "no command line: %s", err.message ? err.message : "");
    char *cmd = joined(argv);
    CHECK_STR_HAS(cmd, "qemu-xhci,id=usb,p2=15,p3=15");
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><controller type='usb' model='qemu-xhci' ports='16'/></devices></domain>",
            RV_ERR_XML_ERROR, "ports");
    REFUSED(MIN_HEAD "<devices><controller type='usb' model='piix3-uhci' ports='2'/></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "<controller ports> is supported on a qemu-xhci USB controller only");
}

/* What libguestfs 1.48's appliance sends (launch-libvirt.c, as logged by
 * libguestfs-test-tool with LIBGUESTFS_DEBUG): read, normalised as
 * libvirtd writes it, read back the same, and its command line. */
static const char guestfs_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<domain type=\"qemu\" xmlns:qemu=\"http://libvirt.org/schemas/domain/qemu/1.0\">\n"
    "  <name>guestfs-8tyv6e92tmh29dun</name>\n"
    "  <memory unit=\"MiB\">1280</memory>\n"
    "  <currentMemory unit=\"MiB\">1280</currentMemory>\n"
    "  <cpu mode=\"maximum\">\n    <feature policy=\"disable\" name=\"la57\"/>\n  </cpu>\n"
    "  <vcpu>1</vcpu>\n"
    "  <clock offset=\"utc\">\n    <timer name=\"rtc\" tickpolicy=\"catchup\"/>\n"
    "    <timer name=\"pit\" tickpolicy=\"delay\"/>\n    <timer name=\"hpet\" present=\"no\"/>\n  </clock>\n"
    "  <os>\n    <type>hvm</type>\n    <kernel>/tmp/a/kernel</kernel>\n    <initrd>/tmp/a/initrd</initrd>\n"
    "    <cmdline>panic=1 console=ttyS0</cmdline>\n    <bios useserial=\"yes\"/>\n  </os>\n"
    "  <on_reboot>destroy</on_reboot>\n"
    "  <devices>\n"
    "    <rng model=\"virtio\">\n      <backend model=\"random\">/dev/urandom</backend>\n    </rng>\n"
    "    <controller type=\"scsi\" index=\"0\" model=\"virtio-scsi\"/>\n"
    "    <disk device=\"disk\" type=\"file\">\n      <source file=\"/tmp/l/scratch1.img\"/>\n"
    "      <target dev=\"sda\" bus=\"scsi\"/>\n      <driver name=\"qemu\" type=\"raw\" cache=\"unsafe\"/>\n"
    "      <address type=\"drive\" controller=\"0\" bus=\"0\" target=\"0\" unit=\"0\"/>\n    </disk>\n"
    "    <disk type=\"file\" device=\"disk\">\n      <source file=\"/tmp/l/overlay2.qcow2\"/>\n"
    "      <target dev=\"sdb\" bus=\"scsi\"/>\n      <driver name=\"qemu\" type=\"qcow2\" cache=\"unsafe\"/>\n"
    "      <address type=\"drive\" controller=\"0\" bus=\"0\" target=\"1\" unit=\"0\"/>\n    </disk>\n"
    "    <serial type=\"unix\">\n      <source mode=\"connect\" path=\"/tmp/s/console.sock\"/>\n"
    "      <target port=\"0\"/>\n    </serial>\n"
    "    <channel type=\"unix\">\n      <source mode=\"connect\" path=\"/tmp/s/guestfsd.sock\"/>\n"
    "      <target type=\"virtio\" name=\"org.libguestfs.channel.0\"/>\n    </channel>\n"
    "    <controller type=\"usb\" model=\"none\"/>\n    <memballoon model=\"none\"/>\n"
    "  </devices>\n"
    "  <qemu:commandline>\n    <qemu:env name=\"TMPDIR\" value=\"/var/tmp\"/>\n  </qemu:commandline>\n"
    "</domain>\n";

static void test_libguestfs_appliance(void)
{
    rv_qemu_domain_def *def = parse_ok(guestfs_xml);
    const char *const want[] = {
        "<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n",
        "    <cmdline>panic=1 console=ttyS0</cmdline>\n    <bios useserial='yes'/>\n  </os>\n",
        "    <feature policy='disable' name='la57'/>\n",
        "      <driver name='qemu' type='raw' cache='unsafe'/>\n      <source file='/tmp/l/scratch1.img'/>\n"
        "      <target dev='sda' bus='scsi'/>\n"
        "      <address type='drive' controller='0' bus='0' target='0' unit='0'/>\n",
        "      <target dev='sdb' bus='scsi'/>\n"
        "      <address type='drive' controller='0' bus='0' target='1' unit='0'/>\n",
        "    <controller type='scsi' index='0' model='virtio-scsi'>\n",
        "    <serial type='unix'>\n      <source mode='connect' path='/tmp/s/console.sock'/>\n"
        "      <target type='isa-serial' port='0'/>\n    </serial>\n"
        "    <console type='unix'>\n      <source mode='connect' path='/tmp/s/console.sock'/>\n"
        "      <target type='serial' port='0'/>\n    </console>\n",
        "    <channel type='unix'>\n      <source mode='connect' path='/tmp/s/guestfsd.sock'/>\n",
        "  </devices>\n  <qemu:commandline>\n    <qemu:env name='TMPDIR' value='/var/tmp'/>\n"
        "  </qemu:commandline>\n</domain>\n",
    };
    check_normal_form(def, want, ARRAY_LEN(want));

    rv_err err = { 0 };
    CHECK_INT_EQ(rv_qemu_devices_prepare_live(def, "/run/x/dom", always_free, NULL, &err), 0);
    rv_qemu_command_opts opts = { "/usr/bin/qemu-system-x86_64", "/run/x/mon", false, NULL };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    CHECK_STR_EQ(argv[0], "TMPDIR=/var/tmp");
    CHECK_STR_EQ(argv[1], "/usr/bin/qemu-system-x86_64");
    const char *const args[] = {
        " -cpu max,-la57 ",
        " -drive file=/tmp/l/scratch1.img,format=raw,if=none,id=drive-sda,cache=unsafe ",
        " -device scsi-hd,bus=scsi0.0,channel=0,scsi-id=0,lun=0,drive=drive-sda,id=scsi0-0-0-0,bootindex=1 ",
        " -device scsi-hd,bus=scsi0.0,channel=0,scsi-id=1,lun=0,drive=drive-sdb,id=scsi0-0-1-0 ",
        " -chardev socket,id=charserial0,path=/tmp/s/console.sock -device isa-serial,",
        " -chardev socket,id=charchannel0,path=/tmp/s/guestfsd.sock -device virtserialport,",
        " -no-reboot ",
    };
    check_args(argv, args, ARRAY_LEN(args));
    rv_qemu_domain_free(def);

    /* The other values, and what stays refused. */
    def = parse_ok(MIN_HEAD_OS "<bios rebootTimeout='-1'/></os><devices>"
                   "<controller type='scsi' model='virtio-scsi'/>"
                   "<disk type='file'><source file='/a'/><target dev='sdc' bus='scsi'/>"
                   "<driver name='qemu' cache='none' io='native' copy_on_read='on' discard='unmap' "
                   "detect_zeroes='unmap'/></disk>"
                   "<serial type='unix'><source mode='bind' path='/run/s'/></serial>"
                   "</devices><qemu:commandline xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"
                   "<qemu:arg value='-no-hpet'/><qemu:env name='A_1'/></qemu:commandline></domain>");
    char *xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "    <bios rebootTimeout='-1'/>\n");
    CHECK_STR_HAS(xml, "<driver name='qemu' type='raw' cache='none' io='native' copy_on_read='on' "
                       "discard='unmap' detect_zeroes='unmap'/>");
    CHECK_STR_HAS(xml, "<address type='drive' controller='0' bus='0' target='0' unit='2'/>");
    CHECK_STR_HAS(xml, "<source mode='bind' path='/run/s'/>");
    CHECK_STR_HAS(xml, "    <qemu:arg value='-no-hpet'/>\n    <qemu:env name='A_1'/>\n");
    free(xml);
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    char *cmd = joined(argv);
    CHECK_STR_EQ(argv[0], "A_1=");
    CHECK_STR_HAS(cmd, " -boot reboot-timeout=-1,strict=on ");
    CHECK_STR_HAS(cmd, ",discard=unmap,cache=none,aio=native,detect-zeroes=unmap,copy-on-read=on ");
    CHECK_STR_HAS(cmd, "scsi-id=0,lun=2,drive=drive-sdc,id=scsi0-0-0-2,bootindex=1 ");
    CHECK_STR_HAS(cmd, " -chardev socket,id=charserial0,path=/run/s,server=on,wait=off ");
    CHECK(strlen(cmd) > 9 && strcmp(cmd + strlen(cmd) - 9, " -no-hpet") == 0);
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    /* Error policies: error_policy alone sets rerror too, except enospace. */
    def = parse_ok(MIN_HEAD "<devices>"
                   "<disk type='file'><source file='/a'/><target dev='vda'/><driver error_policy='stop'/></disk>"
                   "<disk type='file'><source file='/b'/><target dev='vdb'/>"
                   "<driver error_policy='enospace'/></disk>"
                   "<disk type='file'><source file='/c'/><target dev='vdc'/>"
                   "<driver error_policy='report' rerror_policy='ignore'/></disk></devices></domain>");
    xml = rv_qemu_domain_format(def);
    CHECK_STR_HAS(xml, "<driver name='qemu' type='raw' error_policy='stop'/>");
    CHECK_STR_HAS(xml, "<driver name='qemu' type='raw' error_policy='enospace'/>");
    CHECK_STR_HAS(xml, "<driver name='qemu' type='raw' error_policy='report' rerror_policy='ignore'/>");
    free(xml);
    argv = rv_qemu_build_argv(def, &opts, &err);
    CHECK(argv != NULL);
    cmd = joined(argv);
    CHECK_STR_HAS(cmd, "id=drive-vda,werror=stop,rerror=stop ");
    CHECK_STR_HAS(cmd, "id=drive-vdb,werror=enospc ");
    CHECK_STR_HAS(cmd, "id=drive-vdc,werror=report,rerror=ignore ");
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
    REFUSED(MIN_HEAD "<devices><disk type='file'><driver rerror_policy='enospace'/><source file='/a'/>"
            "<target dev='vda'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported rerror_policy='enospace' of element <driver>");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='sda' bus='scsi'/>"
            "</disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "scsi disk 'sda' needs <controller type='scsi' index='0' model='virtio-scsi'>");
    REFUSED(MIN_HEAD "<devices><disk type='file'><driver cache='fast'/><source file='/a'/>"
            "<target dev='vda'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported cache='fast' of element <driver>");
    REFUSED(MIN_HEAD_OS "<bios rebootTimeout='70000'/></os></domain>", RV_ERR_XML_ERROR,
            "invalid value for rebootTimeout, must be in range [-1,65535]");
    REFUSED(MIN_HEAD "<devices><serial type='unix'><source mode='connect'/></serial></devices></domain>",
            RV_ERR_XML_ERROR, "Missing source path attribute for char device");
    REFUSED(MIN_HEAD "<qemu:capabilities xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'/></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <qemu:capabilities>");
    REFUSED(MIN_HEAD "<qemu:commandline xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"
            "<qemu:env name='1x' value='y'/></qemu:commandline></domain>", RV_ERR_XML_ERROR,
            "Invalid environment name");
    REFUSED(MIN_HEAD "<devices><x:commandline xmlns:x='http://libvirt.org/schemas/domain/qemu/1.0'/>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <commandline> in namespace");
    REFUSED(MIN_HEAD "<l:commandline xmlns:l='urn:other'/></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <commandline> in namespace 'urn:other'");
}

int main(void)
{
    test_libguestfs_appliance();
    test_metadata();
    test_virt_manager_new_vm();
    test_disk_discard();
    test_iothreads();
    test_disk_serial();
    test_volume_disk();
    test_network_interface();
    test_interface_driver_link();
    test_bandwidth();
    test_tap_interface();
    test_cpu_mode();
    test_builtin_controllers();
    test_virt_install_devices();
    test_watchdog();
    test_full_round_trip();
    test_defaults();
    test_refusals();
    test_kernel_boot();
    test_features_clock_pm();
    test_hostile();
    test_command_line();
    return 0;
}
