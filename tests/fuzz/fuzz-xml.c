/* Fuzzes the drivers' shared XML layer (server/drivers/conf): the one
 * reader, the kept trees, and every definition's parser and formatter
 * that both drivers use (network, storage pool and volume, snapshot
 * and node device requests, secret, network filter, the test driver's
 * and the QEMU driver's domains).  The first
 * byte of an input picks the family, the rest is the document.  Whatever
 * a parser accepts must be written, and what is written must read back
 * and be written the same way again: a formatter that writes what its
 * own parser refuses (or changes on a second pass) is a bug, reported by
 * abort() like a crash.
 *
 * Two ways to run it:
 *  - libFuzzer (built with -DRV_LIBFUZZER and -fsanitize=fuzzer: make
 *    fuzz): LLVMFuzzerTestOneInput gets each input.
 *  - plain (make check): a deterministic mutation loop over the seeds
 *    below, FUZZ_ITERATIONS rounds (default 20000), seed FUZZ_SEED;
 *    FUZZ_WRITE_SEEDS=DIR writes the seeds as a libFuzzer corpus.
 * tests/fuzz/README says how to run a campaign. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/network_xml.h"
#include "server/drivers/conf/nodedev_xml.h"
#include "server/drivers/conf/nwfilter_xml.h"
#include "server/drivers/conf/secret_xml.h"
#include "server/drivers/conf/snapshot_xml.h"
#include "server/drivers/conf/storage_xml.h"
#include "server/drivers/conf/xml_tree.h"
#include "server/drivers/qemu/domain_xml.h"
#include "server/drivers/test/test_domain_xml.h"

#define MUST(expr) \
    do { \
        if (!(expr)) { \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #expr); \
            abort(); \
        } \
    } while (0)

typedef void *(*parse_fn)(const char *xml, rv_err *err);
typedef char *(*format_fn)(const void *def);
typedef void (*free_fn)(void *def);

static void *net_parse(const char *xml, rv_err *err)
{
    rv_net_def *def = NULL;
    return rv_net_def_parse(xml, &def, err) < 0 ? NULL : def;
}

static char *net_format(const void *def)
{
    return rv_net_def_format(def);
}

static void net_free(void *def)
{
    rv_net_def_free(def);
}

static void *pool_parse(const char *xml, rv_err *err)
{
    rv_pool_def *def = NULL;
    return rv_pool_def_parse(xml, &def, err) < 0 ? NULL : def;
}

static char *pool_format(const void *def)
{
    return rv_pool_def_format(def);
}

static void pool_free(void *def)
{
    rv_pool_def_free(def);
}

static void *vol_parse(const char *xml, rv_err *err)
{
    rv_vol_def *def = NULL;
    if (rv_vol_def_parse(xml, RV_POOL_TYPE_DIR, &def, err) < 0)
        return NULL;
    /* What a pool fills in before it writes a volume. */
    def->key = strdup("/p/v");
    def->path = strdup("/p/v");
    MUST(def->key && def->path);
    return def;
}

static char *vol_format(const void *def)
{
    return rv_vol_def_format(def);
}

static void vol_free(void *def)
{
    rv_vol_def_free(def);
}

static void *test_dom_parse(const char *xml, rv_err *err)
{
    rv_test_def *def = NULL;
    return rv_test_def_parse(xml, &def, err) < 0 ? NULL : def;
}

static char *test_dom_format(const void *def)
{
    return rv_test_def_format(def, -1);
}

static void test_dom_free(void *def)
{
    rv_test_def_free(def);
}

static void *qemu_dom_parse(const char *xml, rv_err *err)
{
    return rv_qemu_domain_parse(xml, strlen(xml), err);
}

static char *qemu_dom_format(const void *def)
{
    return rv_qemu_domain_format(def);
}

static void qemu_dom_free(void *def)
{
    rv_qemu_domain_free(def);
}

static void *secret_parse(const char *xml, rv_err *err)
{
    rv_secret_def *def = calloc(1, sizeof(*def));
    MUST(def != NULL);
    if (rv_secret_def_parse(xml, def, err) == 0)
        return def;
    free(def);
    return NULL;
}

static char *secret_format(const void *def)
{
    return rv_secret_def_format(def);
}

static void secret_free(void *def)
{
    rv_secret_def_clear(def);
    free(def);
}

/* A filter is written as it is read: the "definition" is its text. */
static void *filter_parse(const char *xml, rv_err *err)
{
    char *name = NULL, *text = NULL;
    unsigned char uuid[16];
    if (rv_nwfilter_parse(xml, &name, uuid, &text, err) < 0)
        return NULL;
    MUST(name && text);
    free(name);
    return text;
}

static char *filter_format(const void *def)
{
    return strdup(def);
}

static const struct family {
    const char *root;
    parse_fn parse;
    format_fn format;
    free_fn free;
    /* Its second writing is the one that stays: libvirt leaves out a
     * filter's priority 0, which a chain's default then replaces. */
    int settles;
} families[] = {
    { "network", net_parse, net_format, net_free, 0 },
    { "pool", pool_parse, pool_format, pool_free, 0 },
    { "volume", vol_parse, vol_format, vol_free, 0 },
    { "domain", test_dom_parse, test_dom_format, test_dom_free, 0 },
    { "domain", qemu_dom_parse, qemu_dom_format, qemu_dom_free, 0 },
    { NULL, NULL, NULL, NULL, 0 },      /* 5: read_only() */
    { "secret", secret_parse, secret_format, secret_free, 0 },
    { "filter", filter_parse, filter_format, free, 1 },
};
enum { NFAMILIES = sizeof(families) / sizeof(families[0]), READ_ONLY = 5 };

/* Its own output parsed and formatted again. */
static char *again_text(const struct family *f, const char *text)
{
    rv_err err = { 0 };
    void *again = f->parse(text, &err);
    if (!again)
        fprintf(stderr, "its own output refused: %s\n%s\n", err.message, text);
    MUST(again != NULL);
    char *text2 = f->format(again);
    f->free(again);
    MUST(text2 != NULL);
    return text2;
}

/* Parse, format, parse the result, format again: the same text. */
static void round_trip(const struct family *f, const char *xml)
{
    rv_err err = { 0 };
    void *def = f->parse(xml, &err);
    if (!def) {
        MUST(err.message != NULL);
        rv_err_clear(&err);
        return;
    }
    char *text = f->format(def);
    f->free(def);
    MUST(text != NULL);
    if (f->settles) {
        char *settled = again_text(f, text);
        free(text);
        text = settled;
    }
    char *text2 = again_text(f, text);
    if (strcmp(text, text2) != 0)
        fprintf(stderr, "written twice, not the same:\n%s\n---\n%s\n", text, text2);
    MUST(strcmp(text, text2) == 0);
    free(text);
    free(text2);
}

/* The reader alone, and a kept tree written out: the snapshot and node
 * device requests (read, not written back) and any root. */
static void read_only(const char *xml)
{
    rv_err err = { 0 };
    rv_snapshot_request req;
    if (rv_snapshot_request_parse(xml, &req, &err) < 0)
        rv_err_clear(&err);
    rv_snapshot_request_clear(&req);
    for (int gen = 0; gen < 2; gen++) {
        rv_nodedev_req dev;
        if (rv_nodedev_req_parse(xml, 1 << 20, gen, &dev, &err) < 0)
            MUST(err.message != NULL && !dev.parent && !dev.wwnn);
        rv_err_clear(&err);
        rv_nodedev_req_clear(&dev);
    }
    rv_xml_node *tree = rv_xml_tree_read(xml, 1 << 20, "r", "fuzz", RV_FROM_NONE, &err);
    if (!tree) {
        rv_err_clear(&err);
        return;
    }
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    MUST(fp != NULL);
    rv_xml_put_node(fp, tree, 0);
    MUST(fclose(fp) == 0);
    free(buf);
    rv_xml_free(tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *xml = malloc(size);
    MUST(xml != NULL);
    memcpy(xml, data + 1, size - 1);
    xml[size - 1] = '\0';
    unsigned pick = data[0] % NFAMILIES;
    if (pick != READ_ONLY)
        round_trip(&families[pick], xml);
    else
        read_only(xml);
    free(xml);
    return 0;
}

#ifndef RV_LIBFUZZER
/* One document of each family that its parser takes, and a few that it
 * refuses or that stress the reader; byte 0 is the family. */
static const char *const seeds[] = {
    "\0<network><name>n</name><uuid>dd8fe884-6c02-601e-7551-cca97df1c5df</uuid>"
    "<forward mode='nat'/><bridge name='virbr0'/><ip address='192.168.122.1' "
    "netmask='255.255.255.0'><dhcp><range start='192.168.122.2' end='192.168.122.254'/>"
    "<host mac='52:54:00:00:00:01' ip='192.168.122.9' name='h'/></dhcp></ip></network>",
    "\0<network ipv6='yes'><name>iso &amp; x</name><metadata><a:b xmlns:a='urn:a'>t</a:b>"
    "</metadata><domain name='example'/><dns><host ip='1.2.3.4'><hostname>h</hostname></host>"
    "</dns><![CDATA[ x ]]><!-- c --></network>",
    "\1<pool type='dir'><name>p</name><target><path>/var/lib/p</path><permissions>"
    "<mode>0755</mode><owner>0</owner><group>0</group></permissions></target></pool>",
    "\1<pool type='netfs'><name>n</name><source><host name='h' port='2049'/><dir path='/e'/>"
    "<format type='nfs'/></source><target><path>/m</path></target></pool>",
    "\2<volume><name>v</name><capacity unit='G'>1</capacity><allocation>0</allocation>"
    "<target><format type='qcow2'/><compat>1.1</compat><features><lazy_refcounts/>"
    "</features></target><backingStore><path>/b</path><format type='raw'/></backingStore>"
    "</volume>",
    "\3<domain type='test'><name>t</name><uuid>11111111-2222-3333-4444-555555555555</uuid>"
    "<title>x</title><memory unit='MiB'>8</memory><vcpu placement='auto' current='1'>2</vcpu>"
    "<memtune><hard_limit>1000</hard_limit></memtune><cputune><vcpupin vcpu='0' cpuset='1'/>"
    "</cputune><os><type arch='x86_64'>hvm</type><boot dev='cdrom'/></os>"
    "<clock offset='localtime'/><on_crash>preserve</on_crash><devices><disk type='file' "
    "device='disk'><source file='/a'/><target dev='vda'/></disk><memballoon model='virtio'>"
    "<stats period='5'/></memballoon></devices></domain>",
    "\4<domain type='qemu'><name>q</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>"
    "<os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os><features><acpi/>"
    "</features><devices><disk type='file' device='disk'><driver name='qemu' type='qcow2'/>"
    "<source file='/d.qcow2'/><target dev='vda' bus='virtio'/></disk><interface type='user'>"
    "<model type='virtio'/></interface><serial type='pty'/><graphics type='vnc' "
    "autoport='yes'/></devices></domain>",
    /* The common part (conf/domain_xml.c) in its other forms, for each driver. */
    "\4<domain type='kvm'><name>c</name><uuid> 11111111 2222-3333-4444-555555555555 </uuid>"
    "<memory unit='GB'>1</memory><currentMemory unit='b'>1048576</currentMemory>"
    "<vcpu placement='static' current='2'>4</vcpu><os><type>hvm</type><boot dev='network'/>"
    "<boot dev='cdrom'/><boot dev='hd'/></os><clock offset='localtime'><timer name='rtc' "
    "tickpolicy='catchup'/></clock><on_poweroff>preserve</on_poweroff><on_reboot>destroy"
    "</on_reboot><on_crash>restart</on_crash></domain>",
    "\3<domain type='kvm'><name>d</name><description>a &amp; b</description>"
    "<memory unit='KB'>1000</memory><currentMemory>0</currentMemory><vcpu current='0'>3</vcpu>"
    "<blkiotune><weight>500</weight><device><path>/dev/sda</path><read_iops_sec>9"
    "</read_iops_sec></device></blkiotune><numatune><memory mode='interleave' nodeset='0-1'/>"
    "</numatune><os><type machine='m'>xen</type></os><on_reboot>rename-restart</on_reboot>"
    "</domain>",
    "\5<domainsnapshot><name>s</name><description>d</description><memory snapshot='no'/>"
    "<disks><disk name='vda' snapshot='internal'/></disks></domainsnapshot>",
    "\5<device><parent wwnn='1' wwpn='2' fabric_wwn='3'>p</parent><capability type='scsi_host'>"
    "<capability type='fc_host'><wwnn>20</wwnn><wwpn>10</wwpn></capability></capability>"
    "<capability type='system'><hardware><uuid>u</uuid></hardware></capability>"
    "<capability type='mdev'/></device>",
    "\5<r a='&lt;&#65;' xmlns:p='urn:p'><p:k p:b='2'>x<![CDATA[<y>]]></p:k><?pi x?></r>",
    "\6<secret ephemeral='no' private='yes'><uuid>c1f11a6d-8c5d-4a3e-ac7a-4e171c5e0d4a</uuid>"
    "<description>it's &lt;x&gt;</description><usage type='iscsi'><target>t</target></usage>"
    "</secret>",
    "\6<secret><usage type='ceph'><name>c</name></usage></secret>",
    "\7<filter name='f' chain='ipv4' priority='-700'><uuid>2b9a4b06-a3f1-4621-b984-4151e5e615d3"
    "</uuid><rule action='accept' direction='in' priority='10' statematch='false'><ip srcipaddr="
    "'1.2.3.4' protocol='tcp'/></rule><filterref filter='clean-traffic'><parameter name='IP' "
    "value='10.0.0.1'/></filterref></filter>",
    "\3<!DOCTYPE d [<!ENTITY e 'x'>]><domain>&e;</domain>",
    "\0<network><name>a</nam></network>",
};
enum { NSEEDS = sizeof(seeds) / sizeof(seeds[0]), CAP = 8192 };

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t seed_len(size_t k)
{
    return 1 + strlen(seeds[k] + 1);
}

/* Markup that moves a parser somewhere new when spliced in. */
static const char *const tokens[] = {
    "<", ">", "/>", "</", "'", "\"", "&amp;", "&#0;", "&#x10FFFF;", "<![CDATA[", "]]>", "<!--",
    "-->", "<?x ?>", " a='1'", "xmlns:z='urn:z'", "unit='KiB'", "<name>x</name>", "<uuid>",
    "\n", "\xc3\xa9", "\xff", "0", "-1", "18446744073709551616",
};

static size_t mutate(uint8_t *buf, size_t len, size_t cap)
{
    int rounds = 1 + (int)(rng() % 4);
    for (int r = 0; r < rounds; r++) {
        switch (rng() % 5) {
        case 0: /* flip a bit */
            if (len > 1) buf[1 + rng() % (len - 1)] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: /* cut a piece out */
            if (len > 2) {
                size_t at = 1 + rng() % (len - 1), n = rng() % (len - at);
                memmove(buf + at, buf + at + n, len - at - n);
                len -= n;
            }
            break;
        case 2: /* splice a token in */
            if (len > 1) {
                const char *t = tokens[rng() % (sizeof(tokens) / sizeof(tokens[0]))];
                size_t n = strlen(t), at = 1 + rng() % (len - 1);
                if (len + n <= cap) {
                    memmove(buf + at + n, buf + at, len - at);
                    memcpy(buf + at, t, n);
                    len += n;
                }
            }
            break;
        case 3: /* duplicate a piece */
            if (len > 2) {
                size_t at = 1 + rng() % (len - 1), n = 1 + rng() % (len - at);
                if (len + n <= cap) {
                    memmove(buf + at + n, buf + at, len - at);
                    len += n;
                }
            }
            break;
        case 4: /* another family for the same document */
            buf[0] = (uint8_t)rng();
            break;
        }
    }
    return len;
}

int main(void)
{
    const char *iters_env = getenv("FUZZ_ITERATIONS"), *seed_env = getenv("FUZZ_SEED");
    long iterations = iters_env ? atol(iters_env) : 20000;
    rng_state = seed_env ? strtoull(seed_env, NULL, 0) : 0x5eed5eedULL;
    if (rng_state == 0)
        rng_state = 1;
    const char *seed_dir = getenv("FUZZ_WRITE_SEEDS");
    if (seed_dir) {
        for (size_t k = 0; k < NSEEDS; k++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/seed-%02zu", seed_dir, k);
            FILE *f = fopen(path, "wb");
            MUST(f != NULL);
            MUST(fwrite(seeds[k], 1, seed_len(k), f) == seed_len(k));
            MUST(fclose(f) == 0);
        }
        printf("fuzz-xml: wrote %zu seeds to %s\n", (size_t)NSEEDS, seed_dir);
        return 0;
    }
    static uint8_t buf[CAP];
    for (size_t k = 0; k < NSEEDS; k++)
        LLVMFuzzerTestOneInput((const uint8_t *)seeds[k], seed_len(k));
    for (long i = 0; i < iterations; i++) {
        size_t k = rng() % NSEEDS, len = seed_len(k);
        memcpy(buf, seeds[k], len);
        len = mutate(buf, len, CAP);
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("fuzz-xml: %zu seeds and %ld mutated documents\n", (size_t)NSEEDS, iterations);
    return 0;
}
#endif
