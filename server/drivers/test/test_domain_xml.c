/* The test driver's domain definition (test_domain_xml.h): the common
 * part read by conf/domain_xml.c, the tuning its setters keep read at
 * libvirt's place in the order, <devices> kept as given; written back in
 * libvirt's layout.  And its capabilities document.  Error texts follow
 * what libvirtd 9.0 reports, so that virsh prints the same against
 * remvirtd. */
#include "server/drivers/test/test_domain_xml.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"
#include "server/drivers/test/test_tune.h"
#include "server/drivers/tune_params.h"

#define def_fail rv_err_fail

static int def_oom(rv_err *err)
{
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
}

/* ---- tuning: <memtune>, <blkiotune>, <cputune> pins, <numatune> ---- */

#define child rv_lx_plain_child
#define is_element rv_lx_is_plain

static rv_domain_tune *tune_of(rv_test_def *def, rv_err *err)
{
    return rv_domain_tune_of(&def->tune, RV_FROM_TEST, err);
}

static int parse_number(const xmlNode *el, const char *what, unsigned long long *v, rv_err *err)
{
    int failed = 0;
    char *text = rv_lx_text(el, &failed);
    if (failed)
        return def_oom(err);
    int bad = !text || rv_domain_parse_ull(text, v) < 0;
    if (bad)
        def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR, "XML error: Invalid value '%s' for %s",
                 text ? text : "", what);
    free(text);
    return bad ? -1 : 0;
}

static int parse_blkiotune(const xmlNode *bt, rv_test_def *def, rv_err *err)
{
    static const char *const kinds[] = { "weight", "read_iops_sec", "write_iops_sec",
                                         "read_bytes_sec", "write_bytes_sec" };
    unsigned long long v;
    rv_domain_tune *t = tune_of(def, err);
    const xmlNode *w = child(bt, "weight");
    if (!t || (w && (parse_number(w, "blkiotune weight", &v, err) < 0 || v > UINT_MAX)))
        return rv_err_is_set(err) ? -1 : def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                                                  "XML error: blkiotune weight out of range");
    if (w)
        t->blkio_weight = (unsigned int)v;
    for (const xmlNode *dev = bt->children; dev; dev = dev->next) {
        if (!is_element(dev, "device"))
            continue;
        int failed = 0;
        char *path = rv_lx_text(child(dev, "path"), &failed);
        if (failed)
            return def_oom(err);
        if (!path)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: missing blkio device path");
        int rc = 0;
        for (int k = 0; rc == 0 && k < 5; k++) {
            const xmlNode *el = child(dev, kinds[k]);
            if (el && (parse_number(el, kinds[k], &v, err) < 0 ||
                       rv_domain_tune_set_device(t, &test_tune_rules, path, k, v, err) < 0))
                rc = -1;
        }
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_pin(const xmlNode *el, rv_test_def *def, rv_err *err)
{
    bool emulator = is_element(el, "emulatorpin");
    xmlChar *vcpu = xmlGetNoNsProp(el, (const xmlChar *)"vcpu");
    xmlChar *cpuset = xmlGetNoNsProp(el, (const xmlChar *)"cpuset");
    unsigned long long v = 0;
    int rc;
    if (!cpuset || (!emulator && (!vcpu || rv_domain_parse_ull((const char *)vcpu, &v) < 0 || v > INT_MAX)))
        rc = def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR, "XML error: <%s> needs %s",
                      (const char *)el->name, emulator ? "a cpuset" : "a vcpu and a cpuset");
    else if (!emulator && v >= def->vcpus)
        rc = def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                      "XML error: vcpupin for vcpu %llu, the domain has %u", v, def->vcpus);
    else
        rc = tune_of(def, err) ? rv_domain_tune_pin_list(def->tune, emulator ? -1 : (int)v,
                                                         (const char *)cpuset, RV_FROM_TEST, err)
                               : -1;
    xmlFree(vcpu);
    xmlFree(cpuset);
    return rc;
}

/* The mode and the nodeset (in its list form), when given. */
static int set_numa(rv_test_def *def, int mode, const char *nodeset, rv_err *err)
{
    rv_domain_tune *t = tune_of(def, err);
    unsigned char *map;
    size_t len;
    if (!t)
        return -1;
    char *list = NULL;
    if (nodeset) {
        if (rv_tune_bitmap_parse(nodeset, &map, &len, err) < 0)
            return -1;
        list = rv_tune_bitmap_format(map, len);
        free(map);
        if (!list)
            return def_oom(err);
    }
    free(t->numa_nodeset);
    t->numa_nodeset = list;
    t->numa_mode = mode;
    return 0;
}

static int parse_numatune(const xmlNode *mem, rv_test_def *def, rv_err *err)
{
    static const char *const modes[] = { "strict", "preferred", "interleave", "restrictive" };
    xmlChar *mode = xmlGetNoNsProp(mem, (const xmlChar *)"mode");
    xmlChar *nodeset = xmlGetNoNsProp(mem, (const xmlChar *)"nodeset");
    int m = mode ? -1 : 0, rc;
    for (int k = 0; mode && k < 4; k++)
        if (strcmp((const char *)mode, modes[k]) == 0)
            m = k;
    if (m < 0)
        rc = def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                      "XML error: Unsupported NUMA memory tuning mode '%s'", (const char *)mode);
    else
        rc = set_numa(def, m, (const char *)nodeset, err);
    xmlFree(mode);
    xmlFree(nodeset);
    return rc;
}

static int parse_tuning(const xmlNode *root, void *ctx, rv_err *err)
{
    const char *const *limits = rv_tune_memory_names;
    rv_test_def *def = ctx;
    const xmlNode *mt = child(root, "memtune");
    for (int k = 0; mt && k < 3; k++) {
        unsigned long long kib;
        const xmlNode *el = child(mt, limits[k]);
        if (el && (rv_domain_parse_memory(el, limits[k], &kib, err) < 0 || !tune_of(def, err)))
            return -1;
        if (el)
            rv_domain_tune_set_limit(def->tune, &test_tune_rules, k, kib);
    }
    const xmlNode *bt = child(root, "blkiotune");
    if (bt && parse_blkiotune(bt, def, err) < 0)
        return -1;
    const xmlNode *ct = child(root, "cputune");
    for (const xmlNode *el = ct ? ct->children : NULL; el; el = el->next)
        if ((is_element(el, "vcpupin") || is_element(el, "emulatorpin")) &&
            parse_pin(el, def, err) < 0)
            return -1;
    const xmlNode *mem = child(child(root, "numatune"), "memory");
    return mem ? parse_numatune(mem, def, err) : 0;
}

static const rv_domain_profile profile = {
    .driver = "remvirt's test driver",
    .default_arch = "i686",             /* the test host's guest arch */
    .max_vcpus = RV_TEST_MAX_VCPUS,     /* GetInfo carries the count in 16 bits */
    .tuning = parse_tuning,
};

int rv_test_def_parse(const char *xml, rv_test_def **out, rv_err *err)
{
    xmlDoc *doc;
    const xmlNode *root = rv_lx_read(xml, RV_TEST_DOMAIN_XML_MAX, "domain", "domain_definition",
                                     RV_FROM_DOMAIN, &doc, err);
    if (!root)
        return -1;
    rv_test_def *def = calloc(1, sizeof(*def));
    int ret = def ? rv_domain_base_parse(root, &profile, &def->base, def, err) : def_oom(err);
    const xmlNode *devices = ret == 0 ? child(root, "devices") : NULL;
    if (devices && !(def->devices = rv_xml_tree_copy(devices)))
        ret = def_oom(err);
    if (ret == 0)
        *out = def;
    else
        rv_test_def_free(def);
    rv_lx_free(doc);
    return ret;
}

void rv_test_def_free(rv_test_def *def)
{
    if (!def)
        return;
    rv_domain_base_clear(&def->base);
    rv_xml_free(def->devices);
    rv_domain_tune_free(def->tune);
    test_tune_free(def->limits);
    free(def);
}

/* ================================================================ writers */

static void put(FILE *fp, const char *s)
{
    fputs(s, fp);
}

static void write_devices(FILE *fp, const rv_xml_node *devices)
{
    put(fp, "  <devices>\n");
    for (size_t i = 0; devices && i < devices->nkids; i++) {
        const rv_xml_node *k = devices->kids[i];
        if (k && k->name)
            rv_xml_put_node(fp, k, 4);
    }
    put(fp, "  </devices>\n");
}

static void write_def(FILE *fp, const rv_test_def *def, int id)
{
    put(fp, "<domain type='");
    rv_xml_put_escaped(fp, def->virt_type);
    put(fp, "'");
    if (id >= 0)
        fprintf(fp, " id='%d'", id);
    put(fp, ">\n");
    rv_domain_format_ids(fp, &def->base);
    rv_domain_format_memory(fp, &def->base);
    rv_domain_tune_format_memory(fp, def->tune);
    rv_domain_format_vcpu(fp, &def->base);
    rv_domain_tune_format_cpu(fp, def->tune, def->placement_auto);
    put(fp, "  <os>\n");
    rv_domain_format_os_type(fp, &def->base);
    put(fp, "  </os>\n");
    fprintf(fp, "  <clock offset='%s'/>\n", def->clock_localtime ? "localtime" : "utc");
    rv_domain_format_actions(fp, &def->base);
    rv_domain_format_perf(fp, &def->base);
    write_devices(fp, def->devices);
    put(fp, "</domain>\n");
}

char *rv_test_def_format(const rv_test_def *def, int id)
{
    rv_xml_buf b;
    FILE *fp = rv_xml_open(&b);
    if (!fp)
        return NULL;
    write_def(fp, def, id);
    return rv_xml_done(fp, &b.text);
}

long long rv_test_def_format_len(const rv_test_def *def, int id)
{
    size_t n;
    FILE *fp = rv_xml_count_open(&n);
    if (!fp)
        return -1;
    write_def(fp, def, id);
    int bad = ferror(fp);
    if (fclose(fp) != 0 || bad)
        return -1;
    return (long long)n;
}

/* ================================================================ capabilities */

/* What libvirt 9.0's test:///default reports: an i686 host with two NUMA
 * cells of eight CPUs, and hvm and xen guests. */
static const char capabilities_head[] =
    "<capabilities>\n"
    "\n"
    "  <host>\n"
    "    <cpu>\n"
    "      <arch>i686</arch>\n"
    "      <features>\n"
    "        <pae/>\n"
    "        <nonpae/>\n"
    "      </features>\n"
    "      <pages unit='KiB' size='4'/>\n"
    "      <pages unit='KiB' size='8'/>\n"
    "      <pages unit='KiB' size='2048'/>\n"
    "      <pages unit='KiB' size='1048576'/>\n"
    "    </cpu>\n"
    "    <power_management/>\n"
    "    <iommu support='no'/>\n"
    "    <topology>\n"
    "      <cells num='2'>\n";

static const char capabilities_tail[] =
    "      </cells>\n"
    "    </topology>\n"
    "    <secmodel>\n"
    "      <model>testSecurity</model>\n"
    "      <doi></doi>\n"
    "    </secmodel>\n"
    "  </host>\n"
    "\n";

static void write_cell(FILE *fp, int cell, unsigned long long mem_kib, int page_kib)
{
    fprintf(fp, "        <cell id='%d'>\n", cell);
    fprintf(fp, "          <memory unit='KiB'>%llu</memory>\n", mem_kib);
    fprintf(fp, "          <pages unit='KiB' size='%d'>524288</pages>\n", page_kib);
    put(fp, "          <pages unit='KiB' size='2048'>0</pages>\n"
             "          <pages unit='KiB' size='1048576'>0</pages>\n"
             "          <cpus num='8'>\n");
    for (int core = 0; core < 8; core++) {
        int cpu = cell * 8 + core;
        fprintf(fp, "            <cpu id='%d' socket_id='%d' die_id='0' core_id='%d' "
                 "siblings='%d'/>\n", cpu, cell, core, cpu);
    }
    put(fp, "          </cpus>\n        </cell>\n");
}

static void write_guest(FILE *fp, const char *os_type)
{
    fprintf(fp, "  <guest>\n    <os_type>%s</os_type>\n", os_type);
    put(fp, "    <arch name='i686'>\n"
             "      <wordsize>32</wordsize>\n"
             "      <emulator>/usr/bin/test-hv</emulator>\n"
             "      <domain type='test'/>\n"
             "    </arch>\n"
             "    <features>\n"
             "      <pae/>\n"
             "      <nonpae/>\n"
             "    </features>\n"
             "  </guest>\n\n");
}

char *rv_test_capabilities(void)
{
    rv_xml_buf b;
    FILE *fp = rv_xml_open(&b);
    if (!fp)
        return NULL;
    put(fp, capabilities_head);
    write_cell(fp, 0, 2097152, 4);
    write_cell(fp, 1, 4194304, 8);
    put(fp, capabilities_tail);
    write_guest(fp, "hvm");
    write_guest(fp, "xen");
    put(fp, "</capabilities>\n");
    return rv_xml_done(fp, &b.text);
}
