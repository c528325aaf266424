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
                       "      <target dev='vda' bus='virtio'/>\n    </disk>\n");
    CHECK_STR_HAS(xml, "      <target dev='sda' bus='sata'/>\n      <readonly/>\n");
    CHECK_STR_HAS(xml, "      <driver name='qemu' type='raw'/>\n      <source file='/images/old.img'/>\n"
                       "      <target dev='hdb' bus='ide'/>\n      <readonly/>\n");
    CHECK_STR_HAS(xml, "    <interface type='user'>\n      <mac address='52:54:00:");
    CHECK_STR_HAS(xml, "    <interface type='bridge'>\n      <mac address='52:54:00:ab:cd:01'/>\n"
                       "      <source bridge='br0'/>\n      <model type='e1000'/>\n    </interface>\n");
    CHECK_STR_HAS(xml, "    <serial type='pty'>\n      <target type='isa-serial' port='0'/>\n    </serial>\n"
                       "    <console type='pty'>\n      <target type='serial' port='0'/>\n    </console>\n");
    CHECK_STR_HAS(xml, "    <graphics type='vnc' port='-1' autoport='yes' listen='127.0.0.1'>\n"
                       "      <listen type='address' address='127.0.0.1'/>\n    </graphics>\n"
                       "    <memballoon model='virtio'/>\n"
                       "  </devices>\n</domain>\n");
    CHECK(!strstr(xml, "comments"));

    /* The normal form is a fixed point: the generated MAC stays. */
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    rv_qemu_domain_free(again);
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
    CHECK_STR_HAS(xml, "    <memballoon model='virtio'/>\n  </devices>");   /* as libvirt adds */
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
    def = parse_ok("<domain type='qemu'><name>u</name><memory unit='b'>18446744073709551615</memory>"
                   "<os><type>hvm</type></os></domain>");
    CHECK_UINT_EQ(def->memory_kib, 18014398509481984ULL);   /* 2^64 - 1 bytes, rounded up */
    rv_qemu_domain_free(def);
}

#define MIN_HEAD_OS "<domain type='qemu'><name>x</name><memory>1024</memory><os><type>hvm</type>"
#define MIN_HEAD "<domain type='qemu'><name>x</name><memory>1024</memory><os><type>hvm</type></os>"

static char *joined(char **argv);

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
    rv_qemu_domain_def *again = parse_ok(xml);
    char *xml2 = rv_qemu_domain_format(again);
    CHECK_STR_EQ(xml2, xml);
    free(xml2);
    rv_qemu_domain_free(again);
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
            "unsupported offset='variable' of element <clock>");
    REFUSED(MIN_HEAD "<clock offset='utc'><timer name='rtc' tickpolicy='merge'/></clock></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported tickpolicy='merge' of element <timer>");
    REFUSED(MIN_HEAD "<clock offset='utc'><timer name='tsc'/></clock></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported name='tsc' of element <timer>");
    REFUSED(MIN_HEAD "<pm><suspend-to-mem enabled='no'><x/></suspend-to-mem></pm></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <x> in <suspend-to-mem>");
    REFUSED(MIN_HEAD "<devices><video/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <video> in <devices>");
    REFUSED(MIN_HEAD "<devices><disk type='file'><source file='/a'/><target dev='vda'/>"
            "<address type='pci'/></disk></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <address> in <disk>");
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
    REFUSED(MIN_HEAD "<devices><interface type='network'><source network='default'/></interface>"
            "</devices></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported interface type 'network'");
    REFUSED(MIN_HEAD "<devices><graphics type='spice'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported graphics type 'spice'");
    REFUSED(MIN_HEAD "<devices><memballoon model='xen'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported memballoon model 'xen'");
    REFUSED(MIN_HEAD "<devices><memballoon model='virtio'><stats period='10'/></memballoon></devices></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <stats> in <memballoon>");
    REFUSED(MIN_HEAD "<devices><serial type='file'/></devices></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported <serial> type 'file'");
    REFUSED("<domain type='xen'><name>x</name></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported domain type 'xen'");
    REFUSED("<domain type='qemu'><name>x</name><memory>1</memory><os><type arch='aarch64'>hvm</type>"
            "</os></domain>", RV_ERR_CONFIG_UNSUPPORTED, "unsupported architecture 'aarch64'");
    REFUSED("<domain type='qemu'><name>x</name><memory>1</memory><os><type>hvm</type>"
            "<loader>/ovmf.fd</loader></os></domain>", RV_ERR_CONFIG_UNSUPPORTED,
            "unsupported element <loader> in <os>");
    REFUSED("<domain type='qemu' xmlns:q='http://libvirt.org/schemas/domain/qemu/1.0'><name>x</name>"
            "<memory>1</memory><os><type>hvm</type></os><q:commandline/></domain>",
            RV_ERR_CONFIG_UNSUPPORTED, "unsupported element <commandline> in namespace");

    /* Invalid. */
    REFUSED("<domain type='qemu'><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "has no <name>");
    REFUSED(MIN_HEAD "<name>y</name></domain>", RV_ERR_XML_ERROR, "more than one <name>");
    REFUSED("<domain type='qemu'><name>x</name><uuid>not-a-uuid</uuid><memory>1</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_XML_ERROR, "invalid UUID 'not-a-uuid'");
    REFUSED("<domain type='qemu'><name>x</name><memory unit='parsec'>1</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_XML_ERROR, "unknown unit 'parsec'");
    REFUSED("<domain type='qemu'><name>x</name><memory>-5</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "invalid <memory> value '-5'");
    REFUSED("<domain type='qemu'><name>x</name><memory unit='TiB'>99999999999</memory>"
            "<os><type>hvm</type></os></domain>", RV_ERR_XML_ERROR, "invalid <memory> value");
    REFUSED(MIN_HEAD "<vcpu>0</vcpu></domain>", RV_ERR_XML_ERROR, "invalid vcpu count '0'");
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
            RV_ERR_XML_ERROR, "invalid domain name");
    REFUSED("<domain type='qemu'><name>a/b</name><memory>1</memory><os><type>hvm</type></os></domain>",
            RV_ERR_XML_ERROR, "invalid domain name 'a/b'");
    REFUSED("<domain type='qemu'><name>x</name>", RV_ERR_XML_ERROR, "malformed domain XML at line 1");
    REFUSED("<network><name>x</name></network>", RV_ERR_XML_ERROR, "the root element is <network>");
    REFUSED("", RV_ERR_XML_ERROR, "malformed domain XML");
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
            RV_ERR_XML_ERROR, "malformed domain XML");
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

    /* Deep nesting inside an unknown element: refused by name, no recursion. */
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
    CHECK(err.code == RV_ERR_CONFIG_UNSUPPORTED || err.code == RV_ERR_XML_ERROR);
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
    CHECK_STR_HAS(cmd, " -device ich9-ahci,id=sata0 ");
    CHECK_STR_HAS(cmd, " -drive file=/var/lib/images/a,,b.qcow2,format=qcow2,if=none,id=drive-vda "
                       "-device virtio-blk-pci,drive=drive-vda,id=vda,bootindex=2 ");
    CHECK_STR_HAS(cmd, " -drive file=/isos/install.iso,format=raw,if=none,id=drive-sda,media=cdrom,readonly=on "
                       "-device ide-cd,bus=sata0.0,drive=drive-sda,id=sda,bootindex=1 ");
    CHECK_STR_HAS(cmd, " -device ide-hd,bus=ide.0,drive=drive-hdb,id=hdb ");
    CHECK_STR_HAS(cmd, " -netdev user,id=net0 -device virtio-net-pci,netdev=net0,id=nic0,mac=52:54:00:");
    CHECK_STR_HAS(cmd, " -netdev bridge,id=net1,br=br0 -device e1000,netdev=net1,id=nic1,mac=52:54:00:ab:cd:01 ");
    CHECK_STR_HAS(cmd, " -chardev pty,id=charserial0 -device isa-serial,chardev=charserial0,id=serial0,index=0 ");
    CHECK_STR_HAS(cmd, " -vnc 127.0.0.1:0,to=99 -device VGA,id=video0");
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
    def->virt_type = RV_QEMU_VIRT_QEMU;
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
    CHECK_STR_HAS(cmd, " -vnc [::1]:5 -device VGA,id=video0");
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
    CHECK_STR_HAS(cmd, ",bootindex=1 -device virtio-balloon-pci,id=balloon0 -display none");
    free(cmd);
    rv_qemu_argv_free(argv);
    rv_qemu_domain_free(def);
}

int main(void)
{
    test_full_round_trip();
    test_defaults();
    test_refusals();
    test_kernel_boot();
    test_features_clock_pm();
    test_hostile();
    test_command_line();
    return 0;
}
