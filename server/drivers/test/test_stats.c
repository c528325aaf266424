/* The test driver's statistics, tuning and host-interface slots, with the
 * values libvirt 9.0's test:///default reports: most are fixed numbers of
 * that driver (a fair scheduler of weight 50, unlimited memory tunables,
 * two NUMA cells, eight host CPUs of which three are online, one host
 * interface "eth1"); block, interface and vcpu counters grow with the
 * wall clock as libvirt's do.  The slots take wire types directly and read
 * the domain through test_dom_view_get(); they change nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_stats.h"
#include "server/drivers/test/test_tune.h"
#include "server/drivers/tune_params.h"

/* The host libvirt's test driver models (its node info: 2 nodes x 2
 * sockets x 2 cores x 2 threads), of which NODE_GET_CPU_MAP reports 8
 * present CPUs with 0, 2 and 4 online. */
enum {
    HOST_CPUS = 16,
    CPUMAP_PRESENT = 8,
    CPUMAP_ONLINE_BITS = 0x15,
    CPUMAP_ONLINE = 3,
    TEST_MAX_VCPUS = 32,
    MAX_TESTNET = 1024,         /* libvirt names interfaces testnet0..1023 */
};
/* Free memory of the two NUMA cells, and of the host (bytes, as libvirt's
 * test driver hands them out). */
static const unsigned long long cell_free[] = { 2097152, 4194304 };
#define HOST_FREE_MEMORY 3145728ULL
/* The guest clock every test domain starts with (seconds since the epoch). */
#define GUEST_TIME 627319920LL
/* libvirt's "unlimited" for memory tunables: 2^53 - 1. */
#define MEMORY_UNLIMITED 9007199254740991ULL

/* virDomainModificationImpact and the flags that ride with it. */
enum {
    AFFECT_LIVE = 1, AFFECT_CONFIG = 2, VCPU_MAXIMUM = 4, TYPED_PARAM_STRING_OKAY = 4,
    LIST_INTERFACES_FILTERS = 3,
    IP_ADDR_IPV4 = 0, ADDR_SOURCE_LAST = 2,
};

static const char sysinfo_xml[] =
    "<sysinfo type='smbios'>\n"
    "  <bios>\n"
    "    <entry name='vendor'>LENOVO</entry>\n"
    "    <entry name='version'>G4ETA1WW (2.61 )</entry>\n"
    "    <entry name='date'>05/07/2014</entry>\n"
    "    <entry name='release'>2.61</entry>\n"
    "  </bios>\n"
    "</sysinfo>\n";

/* libvirt 9.0's CPU map (x86 and ppc64 models, in its order). */
static const char *const x86_models[] = {
    "486", "pentium", "pentium2", "pentium3", "pentiumpro", "coreduo", "n270", "core2duo",
    "qemu32", "kvm32", "cpu64-rhel5", "cpu64-rhel6", "qemu64", "kvm64", "Conroe", "Penryn",
    "Nehalem", "Nehalem-IBRS", "Westmere", "Westmere-IBRS", "SandyBridge",
    "SandyBridge-IBRS", "IvyBridge", "IvyBridge-IBRS", "Haswell-noTSX", "Haswell-noTSX-IBRS",
    "Haswell", "Haswell-IBRS", "Broadwell-noTSX", "Broadwell-noTSX-IBRS", "Broadwell",
    "Broadwell-IBRS", "Skylake-Client", "Skylake-Client-IBRS", "Skylake-Client-noTSX-IBRS",
    "Skylake-Server", "Skylake-Server-IBRS", "Skylake-Server-noTSX-IBRS",
    "Cascadelake-Server", "Cascadelake-Server-noTSX", "Icelake-Client",
    "Icelake-Client-noTSX", "Icelake-Server", "Icelake-Server-noTSX", "Cooperlake",
    "Snowridge", "athlon", "phenom", "Opteron_G1", "Opteron_G2", "Opteron_G3", "Opteron_G4",
    "Opteron_G5", "EPYC", "EPYC-IBPB", "EPYC-Rome", "EPYC-Milan", "Dhyana",
};
static const char *const ppc64_models[] = {
    "POWER6", "POWER7", "POWER8", "POWER9", "POWER10", "POWERPC_e5500", "POWERPC_e6500",
};

/* Which models an architecture has: libvirt knows these names; its CPU
 * drivers list models for x86 and ppc64, none for ARM and s390, and the
 * other architectures have no CPU driver. */
typedef struct arch_models {
    const char *arch;
    const char *const *models;
    size_t n;
    int has_cpu_driver;
} arch_models;
#define MODELS(a) a, sizeof(a) / sizeof(a[0]), 1
static const arch_models arch_table[] = {
    { "i686", MODELS(x86_models) }, { "x86_64", MODELS(x86_models) },
    { "ppc64", MODELS(ppc64_models) }, { "ppc64le", MODELS(ppc64_models) },
    { "armv6l", NULL, 0, 1 }, { "armv7l", NULL, 0, 1 }, { "armv7b", NULL, 0, 1 },
    { "aarch64", NULL, 0, 1 }, { "s390", NULL, 0, 1 }, { "s390x", NULL, 0, 1 },
    { "alpha", NULL, 0, 0 }, { "cris", NULL, 0, 0 }, { "ia64", NULL, 0, 0 },
    { "lm32", NULL, 0, 0 }, { "m68k", NULL, 0, 0 }, { "microblaze", NULL, 0, 0 },
    { "microblazeel", NULL, 0, 0 }, { "mips", NULL, 0, 0 }, { "mipsel", NULL, 0, 0 },
    { "mips64", NULL, 0, 0 }, { "mips64el", NULL, 0, 0 }, { "openrisc", NULL, 0, 0 },
    { "parisc", NULL, 0, 0 }, { "parisc64", NULL, 0, 0 }, { "ppc", NULL, 0, 0 },
    { "ppcle", NULL, 0, 0 }, { "ppcemb", NULL, 0, 0 }, { "riscv32", NULL, 0, 0 },
    { "riscv64", NULL, 0, 0 }, { "sh4", NULL, 0, 0 }, { "sh4eb", NULL, 0, 0 },
    { "sparc", NULL, 0, 0 }, { "sparc64", NULL, 0, 0 }, { "unicore32", NULL, 0, 0 },
    { "xtensa", NULL, 0, 0 }, { "xtensaeb", NULL, 0, 0 },
};
#undef MODELS

/* ================================================================ helpers */

#define fail_oom test_fail_oom
#define check_flags test_check_flags

static int get_dom(const rv_nonnull_domain *wire, test_dom_view *v, rv_err *err)
{
    return test_dom_view_get(wire, v, err);
}

/* A running (or paused) domain, or libvirt's "domain is not running". */
static int get_active(const rv_nonnull_domain *wire, test_dom_view *v, rv_err *err)
{
    if (test_dom_view_get(wire, v, err) < 0)
        return -1;
    if (v->id < 0) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: domain is not running");
        return -1;
    }
    return 0;
}

/* The definition flags name (live, config, or current: live when running),
 * with libvirt's checks. */
static const rv_test_def *pick_def(const test_dom_view *v, unsigned int flags, rv_err *err)
{
    if ((flags & AFFECT_LIVE) && (flags & AFFECT_CONFIG)) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "invalid argument: Flags 'VIR_DOMAIN_AFFECT_LIVE' and "
                   "'VIR_DOMAIN_AFFECT_CONFIG' are mutually exclusive");
        return NULL;
    }
    int live = (flags & AFFECT_LIVE) || (!(flags & AFFECT_CONFIG) && v->id >= 0);
    if (live && v->id < 0) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: domain is not running");
        return NULL;
    }
    if (!live && !v->persistent) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: transient domains do not have "
                   "any persistent config");
        return NULL;
    }
    return live ? v->def : v->config;
}

/* Whether node is an element called name. */
static int is_element(const rv_xml_node *node, const char *name)
{
    return node && node->name && strcmp(node->name, name) == 0;
}

/* The children of <devices>, k from 0 to NDEVICES (an entry may be NULL
 * or text: test it with is_element). */
#define NDEVICES(def) ((def)->devices ? (def)->devices->nkids : 0)
#define DEVICE_AT(def, k) ((def)->devices->kids[k])

/* The first child element of <devices> called name, or NULL. */
static const rv_xml_node *first_device(const rv_test_def *def, const char *name)
{
    for (size_t k = 0; k < NDEVICES(def); k++)
        if (is_element(DEVICE_AT(def, k), name))
            return DEVICE_AT(def, k);
    return NULL;
}

static const char *child_attr(const rv_xml_node *el, const char *child, const char *attr)
{
    const rv_xml_node *c = rv_xml_child(el, child);
    return c ? rv_xml_attr_get(c, attr) : NULL;
}

static const char *disk_target(const rv_xml_node *disk)
{
    const char *dev = child_attr(disk, "target", "dev");
    return dev ? dev : "";
}

static const char *disk_source(const rv_xml_node *disk)
{
    static const char *const attrs[] = { "file", "dev", "dir", "name", "volume" };
    const rv_xml_node *src = rv_xml_child(disk, "source");
    for (size_t i = 0; src && i < sizeof(attrs) / sizeof(attrs[0]); i++) {
        const char *v = rv_xml_attr_get(src, attrs[i]);
        if (v)
            return v;
    }
    return NULL;
}

/* libvirt's rule: a name without a leading '/' is a target, otherwise the
 * source path of exactly one disk. */
static const rv_xml_node *find_disk(const rv_test_def *def, const char *path)
{
    const rv_xml_node *match = NULL;
    for (size_t k = 0; k < NDEVICES(def); k++) {
        const rv_xml_node *disk = DEVICE_AT(def, k);
        if (!is_element(disk, "disk"))
            continue;
        if (path[0] != '/') {
            if (strcmp(disk_target(disk), path) == 0)
                return disk;
        } else {
            const char *src = disk_source(disk);
            if (src && strcmp(src, path) == 0) {
                if (match)
                    return NULL;
                match = disk;
            }
        }
    }
    return match;
}

static int parse_mac(const char *s, unsigned char mac[6])
{
    unsigned int b[6];
    char tail;
    if (!s || sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                     &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (b[i] > 0xff)
            return -1;
        mac[i] = (unsigned char)b[i];
    }
    return 0;
}

/* The interfaces' device names: the <target dev> given, else the first
 * free "testnetN", as libvirt's test driver names them at definition. */
typedef struct iface_view {
    const rv_xml_node *el;
    char name[32];
    const char *given;          /* the <target dev>, or NULL */
} iface_view;

/* The number N of a name "testnetN" as the test driver writes it, or -1. */
static int testnet_index(const char *name)
{
    int k;
    char again[32];
    if (sscanf(name, "testnet%d", &k) != 1 || k < 0 || k >= MAX_TESTNET)
        return -1;
    snprintf(again, sizeof(again), "testnet%d", k);
    return strcmp(again, name) == 0 ? k : -1;
}

/* Fills *out (malloc'd) with the domain's interfaces; returns the count.
 * Past testnet1023 libvirt refuses the definition; such an interface
 * gets no name here. */
static int list_ifaces(const rv_test_def *def, iface_view **out, rv_err *err)
{
    size_t n = 0;
    for (size_t k = 0; k < NDEVICES(def); k++)
        n += is_element(DEVICE_AT(def, k), "interface");
    iface_view *ifs = n ? calloc(n, sizeof(*ifs)) : NULL;
    if (n && !ifs)
        return fail_oom(err);
    unsigned char used[MAX_TESTNET] = { 0 };
    size_t i = 0;
    for (size_t k = 0; k < NDEVICES(def); k++) {
        if (!is_element(DEVICE_AT(def, k), "interface"))
            continue;
        ifs[i].el = DEVICE_AT(def, k);
        const char *given = child_attr(ifs[i].el, "target", "dev");
        if (given) {
            snprintf(ifs[i].name, sizeof(ifs[i].name), "%.31s", given);
            int idx = testnet_index(given);
            if (idx >= 0)
                used[idx] = 1;
        }
        ifs[i++].given = given;
    }
    int next = 0;
    for (i = 0; i < n; i++) {
        if (ifs[i].given)
            continue;
        while (next < MAX_TESTNET && used[next])
            next++;
        if (next == MAX_TESTNET)
            break;
        snprintf(ifs[i].name, sizeof(ifs[i].name), "testnet%d", next);
        used[next] = 1;
    }
    *out = ifs;
    return (int)n;
}

/* Microseconds since the epoch, the base libvirt's counters grow from. */
static void stat_base(unsigned long long *us, long long *sec)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *sec = ts.tv_sec;
    *us = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
}

/* A bitmap of the first nbits bits set, in maplen bytes. */
static void fill_map(unsigned char *map, int maplen, int nbits)
{
    for (int b = 0; b < nbits && b / 8 < maplen; b++)
        map[b / 8] |= (unsigned char)(1u << (b % 8));
}

/* A vcpu's CPU map (its pinning, else every host CPU) in maplen bytes;
 * returns the last CPU it may use (-1 when none), libvirt's "CPU". */
static int vcpu_map(unsigned char *map, int maplen, const rv_test_def *def, unsigned int vcpu)
{
    const rv_tune_cpumask *pin = rv_domain_tune_pin_of(def->tune, (int)vcpu);
    if (!pin) {
        fill_map(map, maplen, HOST_CPUS);
        return HOST_CPUS - 1;
    }
    memcpy(map, pin->map, pin->len < (size_t)maplen ? pin->len : (size_t)maplen);
    return rv_tune_bitmap_last(pin->map, pin->len);
}

/* ================================================================ host */

int test_connect_get_max_vcpus(rv_driver_conn *c,
                               const rv_connect_get_max_vcpus_args *args,
                               rv_connect_get_max_vcpus_ret *ret, rv_err *err)
{
    (void)c, (void)args, (void)err;
    ret->max_vcpus = TEST_MAX_VCPUS;
    return 0;
}

int test_connect_get_sysinfo(rv_driver_conn *c, const rv_connect_get_sysinfo_args *args,
                             rv_connect_get_sysinfo_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testConnectGetSysinfo", err) < 0)
        return -1;
    ret->sysinfo = strdup(sysinfo_xml);
    return ret->sysinfo ? 0 : fail_oom(err);
}

int test_node_get_cells_free_memory(rv_driver_conn *c,
                                    const rv_node_get_cells_free_memory_args *args,
                                    rv_node_get_cells_free_memory_ret *ret, rv_err *err)
{
    const int ncells = (int)(sizeof(cell_free) / sizeof(cell_free[0]));
    (void)c;
    if (args->maxcells > RV_NODE_MAX_CELLS) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maxCells > REMOTE_NODE_MAX_CELLS");
        return -1;
    }
    if (args->startCell < 0 || args->startCell >= ncells) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                   "invalid argument: Range exceeds available cells");
        return -1;
    }
    int n = 0;
    while (args->startCell + n < ncells && n < args->maxcells)
        n++;
    ret->cells.cells_val = n ? calloc((size_t)n, sizeof(uint64_t)) : NULL;
    if (n && !ret->cells.cells_val)
        return fail_oom(err);
    for (int i = 0; i < n; i++)
        ret->cells.cells_val[i] = cell_free[args->startCell + i];
    ret->cells.cells_len = (u_int)n;
    return 0;
}

int test_node_get_free_memory(rv_driver_conn *c, rv_node_get_free_memory_ret *ret,
                              rv_err *err)
{
    (void)c, (void)err;
    ret->freeMem = HOST_FREE_MEMORY;
    return 0;
}

int test_node_get_cpu_stats(rv_driver_conn *c, const rv_node_get_cpu_stats_args *args,
                            rv_node_get_cpu_stats_ret *ret, rv_err *err)
{
    static const struct { const char *field; unsigned long long value; } stats[] = {
        { "user", 9797400000ULL }, { "kernel", 34678723400000ULL },
        { "idle", 87264900000ULL }, { "iowait", 763600000ULL },
    };
    const int n = (int)(sizeof(stats) / sizeof(stats[0]));
    (void)c;
    if (rv_tune_check_nparams(args->nparams, RV_NODE_CPU_STATS_MAX, err) < 0 ||
        check_flags(args->flags, 0, "testNodeGetCPUStats", err) < 0)
        return -1;
    if (args->nparams == 0) {
        ret->nparams = n;
        return 0;
    }
    int k = args->nparams < n ? args->nparams : n;
    ret->params.params_val = calloc((size_t)k, sizeof(rv_node_cpu_stat));
    if (!ret->params.params_val)
        return fail_oom(err);
    ret->params.params_len = (u_int)k;
    for (int i = 0; i < k; i++) {
        ret->params.params_val[i].value = stats[i].value;
        if (!(ret->params.params_val[i].field = strdup(stats[i].field)))
            return fail_oom(err);
    }
    ret->nparams = k;
    return 0;
}

int test_node_get_cpu_map(rv_driver_conn *c, const rv_node_get_cpu_map_args *args,
                          rv_node_get_cpu_map_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testNodeGetCPUMap", err) < 0)
        return -1;
    if (args->need_map) {
        ret->cpumap.cpumap_val = calloc(1, 1);
        if (!ret->cpumap.cpumap_val)
            return fail_oom(err);
        ret->cpumap.cpumap_val[0] = CPUMAP_ONLINE_BITS;
        ret->cpumap.cpumap_len = (CPUMAP_PRESENT + 7) / 8;
    }
    if (args->need_online)
        ret->online = CPUMAP_ONLINE;
    ret->ret = CPUMAP_PRESENT;
    return 0;
}

int test_connect_get_cpu_model_names(rv_driver_conn *c,
                                     const rv_connect_get_cpu_model_names_args *args,
                                     rv_connect_get_cpu_model_names_ret *ret,
                                     rv_err *err)
{
    const arch_models *a = NULL;
    (void)c;
    if (check_flags(args->flags, 0, "testConnectGetCPUModelNames", err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(arch_table) / sizeof(arch_table[0]); i++)
        if (strcmp(arch_table[i].arch, args->arch) == 0)
            a = &arch_table[i];
    if (!a) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                   "invalid argument: cannot find architecture %s", args->arch);
        return -1;
    }
    if (!a->has_cpu_driver) {
        rv_err_set(err, RV_FROM_CPU, RV_ERR_NO_SUPPORT,
                   "this function is not supported by the connection driver: "
                   "'%s' architecture is not supported by CPU driver", args->arch);
        return -1;
    }
    ret->ret = (int)a->n;
    if (!args->need_results || a->n == 0)
        return 0;
    ret->models.models_val = calloc(a->n, sizeof(char *));
    if (!ret->models.models_val)
        return fail_oom(err);
    ret->models.models_len = (u_int)a->n;
    for (size_t i = 0; i < a->n; i++)
        if (!(ret->models.models_val[i] = strdup(a->models[i])))
            return fail_oom(err);
    return 0;
}

/* ================================================================ domain statistics */

int test_domain_memory_stats(rv_driver_conn *c, const rv_domain_memory_stats_args *args,
                             rv_domain_memory_stats_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (args->maxStats > RV_MEMORY_STATS_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maxStats > REMOTE_DOMAIN_MEMORY_STATS_MAX");
        return -1;
    }
    if (check_flags(args->flags, 0, "testDomainMemoryStats", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    /* Only a domain with a balloon reports; the values follow its current
     * memory the way libvirt's test driver derives them. */
    const rv_xml_node *balloon = first_device(v.def, "memballoon");
    const char *model = balloon ? rv_xml_attr_get(balloon, "model") : NULL;
    if (!balloon || (model && strcmp(model, "none") == 0))
        return 0;
    unsigned long long cur = v.def->current_memory_kib;
    /* virDomainMemoryStatTags, in the order libvirt sends them. */
    const struct { int tag; unsigned long long val; } stats[] = {
        { 6, cur },             /* actual balloon */
        { 0, 0 },               /* swap in */
        { 1, 0 },               /* swap out */
        { 2, 0 },               /* major faults */
        { 3, 0 },               /* minor faults */
        { 4, cur / 2 },         /* unused */
        { 5, cur },             /* available */
        { 8, cur / 2 },         /* usable */
        { 9, (unsigned long long)GUEST_TIME },  /* last update */
        { 10, cur / 8 },        /* disk caches */
        { 11, 0 },              /* hugetlb page allocations */
        { 12, 0 },              /* hugetlb page failures */
        { 7, cur / 2 },         /* rss */
    };
    size_t n = sizeof(stats) / sizeof(stats[0]);
    if (n > args->maxStats)
        n = args->maxStats;
    if (n == 0)
        return 0;
    ret->stats.stats_val = calloc(n, sizeof(rv_domain_memory_stat));
    if (!ret->stats.stats_val)
        return fail_oom(err);
    for (size_t i = 0; i < n; i++) {
        ret->stats.stats_val[i].tag = stats[i].tag;
        ret->stats.stats_val[i].val = stats[i].val;
    }
    ret->stats.stats_len = (u_int)n;
    return 0;
}

int test_domain_set_memory_stats_period(rv_driver_conn *c,
                                        const rv_domain_set_memory_stats_period_args *args,
                                        rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG,
                    "testDomainSetMemoryStatsPeriod", err) < 0)
        return -1;
    if (args->period < 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                   "invalid argument: invalid statistics period value %d", args->period);
        return -1;
    }
    /* Recorded in the balloon's XML (<stats period>); the statistics here
     * do not depend on it. */
    return test_tune_stats_period(&args->dom, args->flags, args->period, err);
}

int test_domain_block_stats(rv_driver_conn *c, const rv_domain_block_stats_args *args,
                            rv_domain_block_stats_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (!args->path[0]) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_UNSUPPORTED,
                   "Operation not supported: summary statistics are not supported yet");
        return -1;
    }
    if (get_active(&args->dom, &v, err) < 0)
        return -1;
    if (!find_disk(v.def, args->path)) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG, "invalid argument: invalid path: %s",
                   args->path);
        return -1;
    }
    unsigned long long base;
    long long sec;
    stat_base(&base, &sec);
    ret->rd_req = (int64_t)(base / 10);
    ret->rd_bytes = (int64_t)(base / 20);
    ret->wr_req = (int64_t)(base / 30);
    ret->wr_bytes = (int64_t)(base / 40);
    ret->errs = sec / 2;
    return 0;
}

/* The interface a name or MAC address names, or NULL. */
static const iface_view *find_iface(const iface_view *ifs, int n, const char *device_name)
{
    unsigned char want[6], mac[6];
    int by_mac = parse_mac(device_name, want) == 0;
    for (int i = 0; i < n; i++) {
        if (by_mac) {
            if (parse_mac(child_attr(ifs[i].el, "mac", "address"), mac) == 0 &&
                memcmp(mac, want, 6) == 0)
                return &ifs[i];
        } else if (ifs[i].name[0] && strcmp(ifs[i].name, device_name) == 0) {
            return &ifs[i];
        }
    }
    return NULL;
}

int test_domain_interface_stats(rv_driver_conn *c,
                                const rv_domain_interface_stats_args *args,
                                rv_domain_interface_stats_ret *ret, rv_err *err)
{
    test_dom_view v;
    iface_view *ifs = NULL;
    (void)c;
    if (get_active(&args->dom, &v, err) < 0)
        return -1;
    int n = list_ifaces(v.def, &ifs, err);
    if (n < 0)
        return -1;
    const iface_view *found = find_iface(ifs, n, args->device);
    free(ifs);
    if (!found) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "invalid argument: '%s' is not a known interface", args->device);
        return -1;
    }
    unsigned long long base;
    long long sec;
    stat_base(&base, &sec);
    ret->rx_bytes = (int64_t)(base / 10);
    ret->rx_packets = (int64_t)(base / 100);
    ret->rx_errs = sec;
    ret->rx_drop = sec / 2;
    ret->tx_bytes = (int64_t)(base / 20);
    ret->tx_packets = (int64_t)(base / 110);
    ret->tx_errs = sec / 3;
    ret->tx_drop = sec / 4;
    return 0;
}

int test_domain_get_block_info(rv_driver_conn *c,
                               const rv_domain_get_block_info_args *args,
                               rv_domain_get_block_info_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetBlockInfo", err) < 0 ||
        get_dom(&args->dom, &v, err) < 0)
        return -1;
    const rv_xml_node *disk = find_disk(v.def, args->path);
    if (!disk) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                   "invalid argument: invalid path %s not assigned to domain", args->path);
        return -1;
    }
    if (!disk_source(disk)) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: disk '%s' does not currently have a "
                   "source assigned", args->path);
        return -1;
    }
    /* libvirt's test driver: every disk 1 TiB, a little less of it usable. */
    ret->capacity = 1099506450432ULL;
    ret->allocation = 1099511627776ULL;
    ret->physical = 1099511627776ULL;
    return 0;
}

/* ================================================================ vcpus and pinning */

int test_domain_get_vcpus(rv_driver_conn *c, const rv_domain_get_vcpus_args *args,
                          rv_domain_get_vcpus_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (args->maxinfo < 0 || args->maxinfo > RV_VCPUINFO_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "maxinfo > REMOTE_VCPUINFO_MAX");
        return -1;
    }
    if (args->maplen < 0 ||
        (long long)args->maxinfo * args->maplen > RV_CPUMAPS_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, args->maplen < 0 ? "maplen is negative"
                   : "maxinfo * maplen > REMOTE_CPUMAPS_MAX");
        return -1;
    }
    if (get_dom(&args->dom, &v, err) < 0)
        return -1;
    if (v.id < 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: cannot list vcpus for an inactive "
                   "domain");
        return -1;
    }
    int n = args->maxinfo < (int)v.def->current_vcpus ? args->maxinfo
                                                       : (int)v.def->current_vcpus;
    size_t maps = (size_t)args->maxinfo * (size_t)args->maplen;
    ret->info.info_val = n ? calloc((size_t)n, sizeof(rv_vcpu_info)) : NULL;
    ret->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
    if ((n && !ret->info.info_val) || (maps && !ret->cpumaps.cpumaps_val))
        return fail_oom(err);
    ret->info.info_len = (u_int)n;
    ret->cpumaps.cpumaps_len = (u_int)maps;
    unsigned long long base;
    long long sec;
    stat_base(&base, &sec);
    for (int i = 0; i < n; i++) {
        rv_vcpu_info *vi = &ret->info.info_val[i];
        vi->number = (u_int)i;
        vi->state = 1;                          /* running */
        vi->cpu_time = base / 10;
        vi->cpu = vcpu_map((unsigned char *)ret->cpumaps.cpumaps_val + (size_t)i * args->maplen,
                           args->maplen, v.def, (unsigned int)i);
    }
    return 0;
}

int test_domain_get_vcpus_flags(rv_driver_conn *c,
                                const rv_domain_get_vcpus_flags_args *args,
                                rv_domain_get_vcpus_flags_ret *ret, rv_err *err)
{
    test_dom_view v;
    const rv_test_def *def;
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG | VCPU_MAXIMUM,
                    "testDomainGetVcpusFlags", err) < 0 ||
        get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, args->flags, err)))
        return -1;
    ret->num = (int)((args->flags & VCPU_MAXIMUM) ? def->vcpus : def->current_vcpus);
    return 0;
}

int test_domain_get_max_memory(rv_driver_conn *c,
                               const rv_domain_get_max_memory_args *args,
                               rv_domain_get_max_memory_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (get_dom(&args->dom, &v, err) < 0)
        return -1;
    ret->memory = v.def->memory_kib;
    return 0;
}

int test_domain_get_max_vcpus(rv_driver_conn *c,
                              const rv_domain_get_max_vcpus_args *args,
                              rv_domain_get_max_vcpus_ret *ret, rv_err *err)
{
    test_dom_view v;
    const rv_test_def *def;
    (void)c;
    /* libvirt's test driver: the live definition's maximum. */
    if (get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, AFFECT_LIVE, err)))
        return -1;
    ret->num = (int)def->vcpus;
    return 0;
}

int test_domain_get_vcpu_pin_info(rv_driver_conn *c,
                                  const rv_domain_get_vcpu_pin_info_args *args,
                                  rv_domain_get_vcpu_pin_info_ret *ret, rv_err *err)
{
    test_dom_view v;
    const rv_test_def *def;
    (void)c;
    if (args->ncpumaps < 0 || args->ncpumaps > RV_VCPUINFO_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "ncpumaps > REMOTE_VCPUINFO_MAX");
        return -1;
    }
    if (args->maplen <= 0 || (long long)args->ncpumaps * args->maplen > RV_CPUMAPS_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, args->maplen <= 0 ? "maplen must be positive"
                   : "maxinfo * maplen > REMOTE_CPUMAPS_MAX");
        return -1;
    }
    if (get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, args->flags, err)))
        return -1;
    size_t maps = (size_t)args->ncpumaps * (size_t)args->maplen;
    ret->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
    if (maps && !ret->cpumaps.cpumaps_val)
        return fail_oom(err);
    ret->cpumaps.cpumaps_len = (u_int)maps;
    /* No vcpu is pinned: each may run on every host CPU. */
    int n = args->ncpumaps < (int)def->vcpus ? args->ncpumaps : (int)def->vcpus;
    for (int i = 0; i < n; i++)
        vcpu_map((unsigned char *)ret->cpumaps.cpumaps_val + (size_t)i * args->maplen,
                 args->maplen, def, (unsigned int)i);
    ret->num = n;
    return 0;
}

int test_domain_get_emulator_pin_info(rv_driver_conn *c,
                                      const rv_domain_get_emulator_pin_info_args *args,
                                      rv_domain_get_emulator_pin_info_ret *ret,
                                      rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (args->maplen <= 0 || args->maplen > RV_CPUMAP_MAX) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, args->maplen <= 0 ? "maplen must be positive"
                   : "maplen > REMOTE_CPUMAP_MAX");
        return -1;
    }
    const rv_test_def *def;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainGetEmulatorPinInfo",
                    err) < 0 ||
        get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, args->flags, err)))
        return -1;
    ret->cpumaps.cpumaps_val = calloc((size_t)args->maplen, 1);
    if (!ret->cpumaps.cpumaps_val)
        return fail_oom(err);
    ret->cpumaps.cpumaps_len = (u_int)args->maplen;
    const rv_tune_cpumask *pin = rv_domain_tune_pin_of(def->tune, -1);
    if (pin)
        memcpy(ret->cpumaps.cpumaps_val, pin->map,
               pin->len < (size_t)args->maplen ? pin->len : (size_t)args->maplen);
    else
        fill_map((unsigned char *)ret->cpumaps.cpumaps_val, args->maplen, HOST_CPUS);
    ret->ret = 1;
    return 0;
}

int test_domain_get_iothread_info(rv_driver_conn *c,
                                  const rv_domain_get_iothread_info_args *args,
                                  rv_domain_get_iothread_info_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c, (void)ret;
    /* remvirt's test domains define no IOThreads: the list is empty. */
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainGetIOThreadInfo",
                    err) < 0 ||
        get_dom(&args->dom, &v, err) < 0 || !pick_def(&v, args->flags, err))
        return -1;
    return 0;
}

/* ================================================================ tuning */

int test_domain_get_scheduler_type(rv_driver_conn *c,
                                   const rv_domain_get_scheduler_type_args *args,
                                   rv_domain_get_scheduler_type_ret *ret, rv_err *err)
{
    (void)c, (void)args;
    ret->nparams = 1;
    ret->type = strdup("fair");
    return ret->type ? 0 : fail_oom(err);
}

/* The scheduler's one parameter, its weight (50), for nparams > 0. */
static int scheduler_params(const rv_nonnull_domain *dom, int nparams, const char *api,
                            rv_typed_param **val, u_int *len, rv_err *err)
{
    test_dom_view v;
    if (rv_tune_check_nparams(nparams, RV_TUNING_PARAMS_MAX, err) < 0)
        return -1;
    if (nparams == 0) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "invalid argument: nparams in %s must be greater than zero", api);
        return -1;
    }
    if (get_dom(dom, &v, err) < 0)
        return -1;
    rv_typed_param *p = rv_tune_param_list(1, 1, len, err);
    if (!(*val = p))
        return -1;
    if (rv_tune_param_name(&p[0], "weight", RV_TYPED_PARAM_UINT, err) < 0)
        return fail_oom(err);
    p[0].value.rv_typed_param_value_u.ui = 50;
    return 0;
}

int test_domain_get_scheduler_parameters(
                                         rv_driver_conn *c, const rv_domain_get_scheduler_parameters_args *args,
                                         rv_domain_get_scheduler_parameters_ret *ret, rv_err *err)
{
    (void)c;
    return scheduler_params(&args->dom, args->nparams, "virDomainGetSchedulerParameters",
                            &ret->params.params_val, &ret->params.params_len, err);
}

int test_domain_get_scheduler_parameters_flags(
                                               rv_driver_conn *c, const rv_domain_get_scheduler_parameters_flags_args *args,
                                               rv_domain_get_scheduler_parameters_flags_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetSchedulerParametersFlags", err) < 0)
        return -1;
    return scheduler_params(&args->dom, args->nparams, "virDomainGetSchedulerParametersFlags",
                            &ret->params.params_val, &ret->params.params_len, err);
}

/* The common start of a tuning getter: nparams bounded, the flags.
 * nparams 0 asks how many there are: *count (n) and 0; else 1 with *def
 * the definition flags name; -1 with err set. */
static int tune_getter(const rv_nonnull_domain *dom, int nparams, unsigned int flags,
                       const char *func, int n, int *count, const rv_test_def **def, rv_err *err)
{
    test_dom_view v;
    if (rv_tune_check_nparams(nparams, RV_TUNING_PARAMS_MAX, err) < 0 ||
        check_flags(flags, AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY, func, err) < 0)
        return -1;
    if (nparams == 0) {
        *count = n;
        return 0;
    }
    return get_dom(dom, &v, err) < 0 || !(*def = pick_def(&v, flags, err)) ? -1 : 1;
}

/* GET_MEMORY, _BLKIO and _NUMA_PARAMETERS: the shared model's. */
static int get_tune(const rv_nonnull_domain *dom, int kind, int nparams, unsigned int flags,
                    const char *func, int *count, rv_typed_param **val, u_int *len, rv_err *err)
{
    const rv_test_def *def = NULL;
    int rc = tune_getter(dom, nparams, flags, func, rv_domain_tune_count(kind), count, &def, err);
    /* nparams stays 0 with the values: libvirtd sends the count only when asked it */
    return rc != 1 ? rc
                   : rv_domain_tune_get(def->tune, kind, nparams, flags, val, len, RV_FROM_TEST,
                                        err);
}

int test_domain_get_memory_parameters(rv_driver_conn *c,
                                      const rv_domain_get_memory_parameters_args *args,
                                      rv_domain_get_memory_parameters_ret *ret,
                                      rv_err *err)
{
    (void)c;
    return get_tune(&args->dom, RV_TUNE_GET_MEMORY, args->nparams, args->flags,
                    "testDomainGetMemoryParameters", &ret->nparams, &ret->params.params_val,
                    &ret->params.params_len, err);
}

int test_domain_get_blkio_parameters(rv_driver_conn *c,
                                     const rv_domain_get_blkio_parameters_args *args,
                                     rv_domain_get_blkio_parameters_ret *ret,
                                     rv_err *err)
{
    (void)c;
    return get_tune(&args->dom, RV_TUNE_GET_BLKIO, args->nparams, args->flags,
                    "testDomainGetBlkioParameters", &ret->nparams, &ret->params.params_val,
                    &ret->params.params_len, err);
}

int test_domain_get_numa_parameters(rv_driver_conn *c,
                                    const rv_domain_get_numa_parameters_args *args,
                                    rv_domain_get_numa_parameters_ret *ret,
                                    rv_err *err)
{
    (void)c;
    return get_tune(&args->dom, RV_TUNE_GET_NUMA, args->nparams, args->flags,
                    "testDomainGetNumaParameters", &ret->nparams, &ret->params.params_val,
                    &ret->params.params_len, err);
}

int test_domain_get_interface_parameters(
                                         rv_driver_conn *c, const rv_domain_get_interface_parameters_args *args,
                                         rv_domain_get_interface_parameters_ret *ret, rv_err *err)
{
    /* Inbound and outbound bandwidth: none set, all 0. */
    static const char *const fields[] = {
        "inbound.average", "inbound.peak", "inbound.burst", "inbound.floor",
        "outbound.average", "outbound.peak", "outbound.burst",
    };
    const int n = 7;
    const rv_test_def *def = NULL;
    iface_view *ifs = NULL;
    (void)c;
    int rc = tune_getter(&args->dom, args->nparams, args->flags,
                         "testDomainGetInterfaceParameters", n, &ret->nparams, &def, err);
    if (rc != 1)
        return rc;
    int nifs = list_ifaces(def, &ifs, err);
    if (nifs < 0)
        return -1;
    const iface_view *found = find_iface(ifs, nifs, args->device);
    int index = found ? (int)(found - ifs) : -1;
    free(ifs);
    if (!found) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "invalid argument: '%s' is not a known interface", args->device);
        return -1;
    }
    unsigned int bw[7];
    test_tune_bandwidth(def, index, bw);
    rv_typed_param *p = rv_tune_param_list(args->nparams, n, &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    for (u_int i = 0; i < ret->params.params_len; i++) {
        if (rv_tune_param_name(&p[i], fields[i], RV_TYPED_PARAM_UINT, err) < 0)
            return fail_oom(err);
        p[i].value.rv_typed_param_value_u.ui = bw[i];
    }
    return 0;
}

int test_domain_get_block_io_tune(rv_driver_conn *c,
                                  const rv_domain_get_block_io_tune_args *args,
                                  rv_domain_get_block_io_tune_ret *ret, rv_err *err)
{
    /* The limits libvirt 9.0 knows, none set (0); group_name is a string. */
    static const char *const fields[] = {
        "total_bytes_sec", "read_bytes_sec", "write_bytes_sec", "total_iops_sec",
        "read_iops_sec", "write_iops_sec", "total_bytes_sec_max", "read_bytes_sec_max",
        "write_bytes_sec_max", "total_iops_sec_max", "read_iops_sec_max",
        "write_iops_sec_max", "size_iops_sec", "group_name", "total_bytes_sec_max_length",
        "read_bytes_sec_max_length", "write_bytes_sec_max_length",
        "total_iops_sec_max_length", "read_iops_sec_max_length", "write_iops_sec_max_length",
    };
    enum { NFIELDS = sizeof(fields) / sizeof(fields[0]), GROUP_NAME = 13 };
    test_dom_view v;
    const rv_test_def *def;
    (void)c;
    if (rv_tune_check_nparams(args->nparams, RV_BLOCK_IO_TUNE_PARAMS_MAX, err) < 0)
        return -1;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG | TYPED_PARAM_STRING_OKAY,
                    "testDomainGetBlockIoTune", err) < 0)
        return -1;
    /* Counting needs no disk (virsh sends none); the values do. */
    if (args->nparams == 0) {
        ret->nparams = NFIELDS;
        return 0;
    }
    if (!args->disk) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "disk in virDomainGetBlockIoTune must not be NULL");
        return -1;
    }
    if (get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, args->flags, err)))
        return -1;
    const rv_xml_node *disk = find_disk(def, *args->disk);
    if (!disk) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                   "invalid argument: disk '%s' was not found in the domain config",
                   *args->disk);
        return -1;
    }
    unsigned long long limits[TEST_IOTUNE_NUMBERS];
    const char *group = test_tune_iotune(def, disk_target(disk), limits);
    int strings = (args->flags & TYPED_PARAM_STRING_OKAY) != 0;
    int want = args->nparams < NFIELDS ? args->nparams : NFIELDS;
    /* Without string support the group name is left out, as libvirtd does. */
    int k = want - (!strings && want > GROUP_NAME);
    rv_typed_param *p = rv_tune_param_list(k, k, &ret->params.params_len, err);
    if (!(ret->params.params_val = p))
        return -1;
    for (int i = 0, j = 0; i < want; i++) {
        if (i == GROUP_NAME && !strings)
            continue;
        int is_string = i == GROUP_NAME;
        if (rv_tune_param_name(&p[j], fields[i], is_string ? RV_TYPED_PARAM_STRING
                                                  : RV_TYPED_PARAM_ULLONG, err) < 0 ||
            (is_string && !(p[j].value.rv_typed_param_value_u.s = strdup(group))))
            return fail_oom(err);
        if (!is_string)
            p[j].value.rv_typed_param_value_u.ul = limits[i < GROUP_NAME ? i : i - 1];
        j++;
    }
    return 0;
}

int test_domain_get_perf_events(rv_driver_conn *c,
                                const rv_domain_get_perf_events_args *args,
                                rv_domain_get_perf_events_ret *ret, rv_err *err)
{
    /* libvirt 9.0's perf events, as the definition says (<perf>). */
    test_dom_view v;
    const rv_test_def *def;
    (void)c;
    if (check_flags(args->flags, AFFECT_LIVE | AFFECT_CONFIG, "testDomainGetPerfEvents",
                    err) < 0 || rv_tune_check_exclusive(args->flags, err) < 0 ||
        get_dom(&args->dom, &v, err) < 0 || !(def = pick_def(&v, args->flags, err)))
        return -1;
    return rv_domain_perf_get(&def->base, &ret->params.params_val, &ret->params.params_len, err);
}

/* ================================================================ guest facts */

int test_domain_get_hostname(rv_driver_conn *c, const rv_domain_get_hostname_args *args,
                             rv_domain_get_hostname_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetHostname", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    size_t len = strlen(v.def->name) + sizeof("host");
    if (!(ret->hostname = malloc(len)))
        return fail_oom(err);
    snprintf(ret->hostname, len, "%shost", v.def->name);
    return 0;
}

int test_domain_get_time(rv_driver_conn *c, const rv_domain_get_time_args *args,
                         rv_domain_get_time_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetTime", err) < 0 ||
        get_dom(&args->dom, &v, err) < 0)
        return -1;
    if (v.state != RV_DOMAIN_RUNNING) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: domain is not running");
        return -1;
    }
    ret->seconds = v.time_set ? v.time_sec : GUEST_TIME;
    ret->nseconds = v.time_set ? v.time_nsec : 0;
    return 0;
}

int test_domain_get_control_info(rv_driver_conn *c,
                                 const rv_domain_get_control_info_args *args,
                                 rv_domain_get_control_info_ret *ret, rv_err *err)
{
    test_dom_view v;
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetControlInfo", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    /* libvirt's test driver reads a guest clock set below 60000 s as the
     * state to report: a job, then occupied, then an error (its reason
     * from the clock modulo 4); otherwise "ok". */
    long long s = v.time_set ? v.time_sec : GUEST_TIME;
    if (s > 0 && s < 10000) {
        ret->state = 1;
        ret->stateTime = (unsigned long long)s;
    } else if (s >= 10000 && s < 30000) {
        ret->state = 2;
        ret->stateTime = (unsigned long long)(s - 10000);
    } else if (s >= 30000 && s < 60000) {
        ret->state = 3;
        ret->details = (unsigned int)(s % 4);
        ret->stateTime = (unsigned long long)(s - 30000);
    }
    return 0;
}

int test_domain_get_fsinfo(rv_driver_conn *c, const rv_domain_get_fsinfo_args *args,
                           rv_domain_get_fsinfo_ret *ret, rv_err *err)
{
    static const char *const mounts[] = { "/", "/boot" };
    test_dom_view v;
    const rv_xml_node *disk = NULL;
    (void)c;
    if (check_flags(args->flags, 0, "testDomainGetFSInfo", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    /* Two ext4 partitions on the first hard disk. */
    for (size_t k = 0; !disk && k < NDEVICES(v.def); k++) {
        const rv_xml_node *el = DEVICE_AT(v.def, k);
        const char *kind = is_element(el, "disk") ? rv_xml_attr_get(el, "device") : "";
        if (!kind || strcmp(kind, "disk") == 0)
            disk = el;
    }
    if (!disk)
        return 0;
    const char *target = disk_target(disk);
    ret->info.info_val = calloc(2, sizeof(rv_domain_fsinfo));
    if (!ret->info.info_val)
        return fail_oom(err);
    ret->info.info_len = 2;
    ret->ret = 2;
    for (int i = 0; i < 2; i++) {
        rv_domain_fsinfo *fs = &ret->info.info_val[i];
        size_t len = strlen(target) + 2;
        fs->mountpoint = strdup(mounts[i]);
        fs->fstype = strdup("ext4");
        fs->name = malloc(len);
        fs->dev_aliases.dev_aliases_val = calloc(1, sizeof(char *));
        if (!fs->mountpoint || !fs->fstype || !fs->name || !fs->dev_aliases.dev_aliases_val)
            return fail_oom(err);
        snprintf(fs->name, len, "%s%d", target, i + 1);
        fs->dev_aliases.dev_aliases_len = 1;
        if (!(fs->dev_aliases.dev_aliases_val[0] = strdup(target)))
            return fail_oom(err);
    }
    return 0;
}

int test_domain_interface_addresses(rv_driver_conn *c,
                                    const rv_domain_interface_addresses_args *args,
                                    rv_domain_interface_addresses_ret *ret, rv_err *err)
{
    test_dom_view v;
    iface_view *ifs = NULL;
    (void)c;
    if (args->source > ADDR_SOURCE_LAST) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_ARGUMENT_UNSUPPORTED,
                   "argument unsupported: Unknown IP address data source %u", args->source);
        return -1;
    }
    if (check_flags(args->flags, 0, "testDomainInterfaceAddresses", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    int n = list_ifaces(v.def, &ifs, err);
    if (n < 0)
        return -1;
    if (n > RV_DOMAIN_INTERFACE_MAX) {
        free(ifs);
        rv_err_set(err, RV_FROM_RPC, RV_ERR_RPC, "too many interfaces (%d)", n);
        return -1;
    }
    ret->ifaces.ifaces_val = n ? calloc((size_t)n, sizeof(rv_domain_interface)) : NULL;
    if (n && !ret->ifaces.ifaces_val) {
        free(ifs);
        return fail_oom(err);
    }
    ret->ifaces.ifaces_len = (u_int)n;
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        rv_domain_interface *wi = &ret->ifaces.ifaces_val[i];
        const char *type = rv_xml_attr_get(ifs[i].el, "type");
        unsigned char mac[6] = { 0 };
        char macstr[18], addr[32];
        parse_mac(child_attr(ifs[i].el, "mac", "address"), mac);
        snprintf(macstr, sizeof(macstr), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
                 mac[2], mac[3], mac[4], mac[5]);
        /* On a virtual network, an address from its range that follows
         * the domain's id, as libvirt's test driver makes up; elsewhere a
         * fixed one. */
        if (type && strcmp(type, "network") == 0)
            snprintf(addr, sizeof(addr), "192.168.122.%d", 2 + 20 * (v.id - 1) + i + 1);
        else
            snprintf(addr, sizeof(addr), "192.168.0.3");
        wi->name = strdup(ifs[i].name);
        wi->hwaddr = calloc(1, sizeof(char *));
        wi->addrs.addrs_val = calloc(1, sizeof(rv_domain_ip_addr));
        if (!wi->name || !wi->hwaddr || !wi->addrs.addrs_val) {
            rc = fail_oom(err);
            break;
        }
        wi->addrs.addrs_len = 1;
        wi->addrs.addrs_val[0].type = IP_ADDR_IPV4;
        wi->addrs.addrs_val[0].prefix = 24;
        if (!(*wi->hwaddr = strdup(macstr)) || !(wi->addrs.addrs_val[0].addr = strdup(addr)))
            rc = fail_oom(err);
    }
    free(ifs);
    return rc;
}

/* ================================================================ host interfaces */

/* libvirt's test:///default has one host interface, up. */
#define HOST_IFACE_NAME "eth1"
#define HOST_IFACE_MAC "aa:bb:cc:dd:ee:ff"

int test_connect_list_all_interfaces(rv_driver_conn *c,
                                     const rv_connect_list_all_interfaces_args *args,
                                     rv_connect_list_all_interfaces_ret *ret,
                                     rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, LIST_INTERFACES_FILTERS, "testConnectListAllInterfaces",
                    err) < 0)
        return -1;
    /* flags: 1 inactive, 2 active; none or both: all. */
    int matches = !(args->flags == 1);
    ret->ret = (u_int)matches;
    if (!args->need_results || !matches)
        return 0;
    ret->ifaces.ifaces_val = calloc(1, sizeof(rv_nonnull_interface));
    if (!ret->ifaces.ifaces_val)
        return fail_oom(err);
    ret->ifaces.ifaces_len = 1;
    ret->ifaces.ifaces_val[0].name = strdup(HOST_IFACE_NAME);
    ret->ifaces.ifaces_val[0].mac = strdup(HOST_IFACE_MAC);
    if (!ret->ifaces.ifaces_val[0].name || !ret->ifaces.ifaces_val[0].mac)
        return fail_oom(err);
    return 0;
}

int test_interface_is_active(rv_driver_conn *c, const rv_interface_is_active_args *args,
                             rv_interface_is_active_ret *ret, rv_err *err)
{
    (void)c;
    if (strcmp(args->iface.name, HOST_IFACE_NAME) != 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_NO_INTERFACE,
                   "Interface not found: no interface with matching name '%s'",
                   args->iface.name);
        return -1;
    }
    ret->active = 1;
    return 0;
}

/* The wire form of the one host interface. */
static int host_iface(rv_nonnull_interface *out, rv_err *err)
{
    out->name = strdup(HOST_IFACE_NAME);
    out->mac = strdup(HOST_IFACE_MAC);
    return out->name && out->mac ? 0 : fail_oom(err);
}

int test_interface_lookup_by_name(rv_driver_conn *c,
                                  const rv_interface_lookup_by_name_args *args,
                                  rv_interface_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    if (strcmp(args->name, HOST_IFACE_NAME) != 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_NO_INTERFACE,
                   "Interface not found: no interface with matching name '%s'", args->name);
        return -1;
    }
    return host_iface(&ret->iface, err);
}

int test_interface_lookup_by_mac_string(rv_driver_conn *c,
                                        const rv_interface_lookup_by_mac_string_args *args,
                                        rv_interface_lookup_by_mac_string_ret *ret,
                                        rv_err *err)
{
    (void)c;
    /* libvirt compares the text as given, case and all. */
    if (strcmp(args->mac, HOST_IFACE_MAC) != 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_NO_INTERFACE,
                   "Interface not found: no interface with matching mac '%s'", args->mac);
        return -1;
    }
    return host_iface(&ret->iface, err);
}

int test_interface_get_xml_desc(rv_driver_conn *c, const rv_interface_get_xml_desc_args *args,
                                rv_interface_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testInterfaceGetXMLDesc", err) < 0)
        return -1;
    if (strcmp(args->iface.name, HOST_IFACE_NAME) != 0) {
        rv_err_set(err, RV_FROM_TEST, RV_ERR_NO_INTERFACE,
                   "Interface not found: no interface with matching name '%s'",
                   args->iface.name);
        return -1;
    }
    /* libvirt's test:///default definition of eth1, as it formats it. */
    ret->xml = strdup("<interface type='ethernet' name='" HOST_IFACE_NAME "'>\n"
                      "  <start mode='onboot'/>\n"
                      "  <mtu size='1492'/>\n"
                      "  <protocol family='ipv4'>\n"
                      "    <ip address='192.168.0.5' prefix='24'/>\n"
                      "    <route gateway='192.168.0.1'/>\n"
                      "  </protocol>\n"
                      "  <mac address='" HOST_IFACE_MAC "'/>\n"
                      "</interface>\n");
    return ret->xml ? 0 : fail_oom(err);
}

/* ================================================================ for the setters */

int test_stats_iface_index(const rv_test_def *def, const char *device, rv_err *err)
{
    iface_view *ifs = NULL;
    int n = list_ifaces(def, &ifs, err);
    if (n < 0)
        return -1;
    const iface_view *found = find_iface(ifs, n, device);
    int index = found ? (int)(found - ifs) : -1;
    free(ifs);
    if (index < 0)
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                   "invalid argument: '%s' is not a known interface", device);
    return index;
}

const char *test_stats_disk_target(const rv_test_def *def, const char *path)
{
    const rv_xml_node *disk = find_disk(def, path);
    return disk ? disk_target(disk) : NULL;
}

/* ================================================================ disk errors, CPU stats, memory */

/* libvirt's test driver: every disk has had an unspecified error. */
int test_domain_get_disk_errors(rv_driver_conn *c, const rv_domain_get_disk_errors_args *args,
                                rv_domain_get_disk_errors_ret *ret, rv_err *err)
{
    (void)c;
    test_dom_view v;
    if (get_active(&args->dom, &v, err) < 0)
        return -1;
    u_int n = 0;
    for (size_t k = 0; k < NDEVICES(v.def); k++)
        n += is_element(DEVICE_AT(v.def, k), "disk") ? 1 : 0;
    if (!args->maxerrors) {
        ret->nerrors = (int)n;
        return 0;
    }
    u_int want = n < args->maxerrors ? n : args->maxerrors;
    if (!(ret->errors.errors_val = calloc(want + 1, sizeof(rv_domain_disk_error))))
        return fail_oom(err);
    for (size_t k = 0; k < NDEVICES(v.def) && ret->errors.errors_len < want; k++) {
        if (!is_element(DEVICE_AT(v.def, k), "disk"))
            continue;
        rv_domain_disk_error *e = &ret->errors.errors_val[ret->errors.errors_len];
        if (!(e->disk = strdup(disk_target(DEVICE_AT(v.def, k)))))
            return fail_oom(err);
        e->error = 1;                   /* VIR_DOMAIN_DISK_ERROR_UNSPEC */
        ret->errors.errors_len++;
    }
    ret->nerrors = (int)ret->errors.errors_len;
    return 0;
}

/* The figures libvirt's test driver gives: fixed totals, split evenly
 * over the domain's vCPUs (the last takes the remainder), each vCPU's
 * time a fixed amount below its CPU's. */
#define TEST_CPU_TOTAL_NS 48772617035ULL
#define TEST_CPU_USER_NS 5540000000ULL
#define TEST_CPU_SYSTEM_NS 6460000000ULL
#define TEST_VCPU_BELOW_NS 1234567890ULL

int test_domain_get_cpu_stats(rv_driver_conn *c, const rv_domain_get_cpu_stats_args *args,
                              rv_domain_get_cpu_stats_ret *ret, rv_err *err)
{
    (void)c;
    test_dom_view v;
    if (check_flags(args->flags, 0x4, "testDomainGetCPUStats", err) < 0 ||
        get_active(&args->dom, &v, err) < 0)
        return -1;
    rv_tparam_list l = { 0 };
    if (args->start_cpu == -1) {
        static const char *const names[] = { "cpu_time", "user_time", "system_time" };
        const unsigned long long vals[] = { TEST_CPU_TOTAL_NS, TEST_CPU_USER_NS,
                                            TEST_CPU_SYSTEM_NS };
        if (args->nparams == 0) {
            ret->nparams = 3;
            return 0;
        }
        for (unsigned i = 0; i < 3 && i < args->nparams; i++)
            rv_tparam_put(&l, names[i], RV_TYPED_PARAM_ULLONG, vals[i], NULL);
    } else {
        unsigned ncpu = v.def->vcpus ? v.def->vcpus : 1;
        if (args->nparams == 0) {
            ret->nparams = args->ncpus == 0 ? (int)ncpu : 2;
            return 0;
        }
        if ((unsigned)args->start_cpu >= ncpu)
            return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                               "invalid argument: start_cpu %d larger than maximum of %u",
                               args->start_cpu, ncpu - 1);
        for (unsigned i = (unsigned)args->start_cpu; i < ncpu &&
             i < (unsigned)args->start_cpu + args->ncpus; i++) {
            unsigned long long t = TEST_CPU_TOTAL_NS / ncpu +
                                   (i == ncpu - 1 ? TEST_CPU_TOTAL_NS % ncpu : 0);
            rv_tparam_put(&l, "cpu_time", RV_TYPED_PARAM_ULLONG, t, NULL);
            if (args->nparams > 1)
                rv_tparam_put(&l, "vcpu_time", RV_TYPED_PARAM_ULLONG, t - TEST_VCPU_BELOW_NS,
                              NULL);
        }
    }
    ret->params.params_val = l.v;
    ret->params.params_len = l.n;
    ret->nparams = args->start_cpu == -1 ? (int)l.n : (args->nparams > 1 ? 2 : 1);
    return l.oom ? fail_oom(err) : 0;
}

/* libvirt's test driver: byte i of memory is i modulo 256. */
int test_domain_memory_peek(rv_driver_conn *c, const rv_domain_memory_peek_args *args,
                            rv_domain_memory_peek_ret *ret, rv_err *err)
{
    (void)c;
    test_dom_view v;
    if (check_flags(args->flags, 3, "testDomainMemoryPeek", err) < 0)
        return -1;
    if (args->flags != 1 && args->flags != 2)
        return rv_err_fail(err, RV_FROM_TEST, RV_ERR_INVALID_ARG,
                           "invalid argument: flags parameter must be VIR_MEMORY_VIRTUAL or "
                           "VIR_MEMORY_PHYSICAL");
    if (args->size > RV_DOMAIN_MEMORY_PEEK_BUFFER_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "size > maximum buffer size");
    if (get_active(&args->dom, &v, err) < 0)
        return -1;
    unsigned char *buf = malloc(args->size ? args->size : 1);
    if (!buf)
        return fail_oom(err);
    for (u_int i = 0; i < args->size; i++)
        buf[i] = (unsigned char)(args->offset + i);
    ret->buffer.buffer_val = (char *)buf;
    ret->buffer.buffer_len = args->size;
    return 0;
}
