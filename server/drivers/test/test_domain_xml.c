/* The test driver's domain definition (test_domain_xml.h): read with the
 * shared reader, checked in libvirt's order, and written back in libvirt's
 * layout; and its capabilities document.  Error texts follow what libvirtd
 * 9.0 reports, so that virsh prints the same thing against remvirtd. */
#include "server/drivers/test/test_domain_xml.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"
#include "server/drivers/test/test_tune.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const virt_types[] = {
    "none", "qemu", "kqemu", "kvm", "xen", "lxc", "uml", "openvz", "test", "vmware",
    "hyperv", "vbox", "phyp", "parallels", "bhyve", "vz", "hvf",
};
static const char *const os_types[] = { "hvm", "xen", "linux", "exe", "uml", "xenpvh" };
static const char *const arches[] = {
    "alpha", "armv6l", "armv7l", "armv7b", "aarch64", "cris", "i686", "ia64", "lm32",
    "m68k", "microblaze", "microblazeel", "mips", "mipsel", "mips64", "mips64el",
    "openrisc", "parisc", "parisc64", "ppc", "ppcle", "ppc64", "ppc64le", "ppcemb",
    "riscv32", "riscv64", "s390", "s390x", "sh4", "sh4eb", "sparc", "sparc64",
    "unicore32", "x86_64", "xtensa", "xtensaeb",
};
static const char *const boot_devs[] = { "fd", "hd", "cdrom", "network" };
static const char *const actions[] = {      /* indexed by RV_TEST_ACTION_* */
    "destroy", "restart", "rename-restart", "preserve", "coredump-destroy",
    "coredump-restart",
};

static int find_name(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}
#define FIND(names, s) find_name((names), ARRAY_LEN(names), (s))

static int def_fail(rv_err *err, int domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int def_fail(rv_err *err, int domain, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, domain, code, fmt, ap);
    va_end(ap);
    return -1;
}

static int def_oom(rv_err *err)
{
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
}

/* The text of el, or NULL when el is absent or its text empty: libvirt
 * treats an empty element like a missing one. */
static int text_of(const rv_xml_node *el, char **out, rv_err *err)
{
    return rv_xml_text_copy(el, out) < 0 ? def_oom(err) : 0;
}

static int child_text(const rv_xml_node *root, const char *name, char **out, rv_err *err)
{
    return text_of(rv_xml_child(root, name), out, err);
}

/* An attribute, copied; NULL when absent or empty. */
static int attr_copy(const rv_xml_node *el, const char *name, char **out, rv_err *err)
{
    const char *v = el ? rv_xml_attr_get(el, name) : NULL;
    *out = NULL;
    if (v && *v && !(*out = strdup(v)))
        return def_oom(err);
    return 0;
}

/* Numbers as libvirt reads them: strtoull in base 10, without a minus
 * sign or anything after the digits. */
static int parse_ull(const char *s, unsigned long long *out)
{
    unsigned long long v = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned int d = (unsigned int)(*s - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*s)
        return -1;
    *out = v;
    return 0;
}

static int parse_uint(const char *s, unsigned int *out)
{
    unsigned long long v;
    if (!s || parse_ull(s, &v) < 0 || v > UINT_MAX)
        return -1;
    *out = (unsigned int)v;
    return 0;
}

/* Bytes per unit: b/byte/bytes, then k m g t p e with an optional "iB"
 * (powers of 1024) or "B" (powers of 1000); no unit means KiB. */
static int unit_scale(const char *unit, unsigned long long *scale)
{
    static const char powers[] = "kmgtpe";
    if (!unit || !*unit) {
        *scale = 1024;
        return 0;
    }
    if (!strcasecmp(unit, "b") || !strcasecmp(unit, "byte") || !strcasecmp(unit, "bytes")) {
        *scale = 1;
        return 0;
    }
    const char *p = strchr(powers, tolower((unsigned char)unit[0]));
    unsigned long long base;
    if (!p || !*p)
        return -1;
    if (unit[1] == '\0' || !strcasecmp(unit + 1, "iB"))
        base = 1024;
    else if (!strcasecmp(unit + 1, "B"))
        base = 1000;
    else
        return -1;
    *scale = 1;
    for (const char *q = powers; q <= p; q++)
        *scale *= base;
    return 0;
}

/* <memory>/<currentMemory>: a number scaled by its unit, in KiB rounded
 * up; 0 when absent or empty. */
static int parse_mem_kib(const rv_xml_node *root, const char *elname,
                         unsigned long long *kib, rv_err *err)
{
    const rv_xml_node *el = rv_xml_child(root, elname);
    const char *unit = el ? rv_xml_attr_get(el, "unit") : NULL;
    unsigned long long value, scale;
    char *text;
    int ret = -1;
    *kib = 0;
    if (text_of(el, &text, err) < 0)
        return -1;
    if (!text)
        ret = 0;
    else if (parse_ull(text, &value) < 0)
        def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                 "XML error: Invalid value '%s' for element or attribute './%s[1]'", text, elname);
    else if (unit_scale(unit, &scale) < 0)
        def_fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG,
                 "invalid argument: unknown suffix '%s'", unit);
    else if (value > LLONG_MAX / scale)
        def_fail(err, RV_FROM_NONE, RV_ERR_OVERFLOW, "numerical overflow: value too large: %s%s",
                 text, unit ? unit : "");
    else {
        *kib = (value * scale + 1023) / 1024;
        ret = 0;
    }
    free(text);
    return ret;
}

/* ---- tuning: <memtune>, <blkiotune>, <cputune> pins, <numatune> ---- */

static int parse_number(const rv_xml_node *el, const char *what, unsigned long long *v,
                        rv_err *err)
{
    char *text;
    if (text_of(el, &text, err) < 0)
        return -1;
    int bad = !text || parse_ull(text, v) < 0;
    if (bad)
        def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR, "XML error: Invalid value '%s' for %s",
                 text ? text : "", what);
    free(text);
    return bad ? -1 : 0;
}

static int parse_blkiotune(const rv_xml_node *bt, rv_test_def *def, rv_err *err)
{
    static const char *const kinds[] = { "weight", "read_iops_sec", "write_iops_sec",
                                         "read_bytes_sec", "write_bytes_sec" };
    unsigned long long v;
    const rv_xml_node *w = rv_xml_child(bt, "weight");
    if (w && (parse_number(w, "blkiotune weight", &v, err) < 0 || v > UINT_MAX ||
              test_tune_set_blkio_weight(def, (unsigned int)v, err) < 0))
        return rv_err_is_set(err) ? -1 : def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                                                  "XML error: blkiotune weight out of range");
    for (size_t i = 0; i < bt->nkids; i++) {
        const rv_xml_node *dev = bt->kids[i];
        if (!dev || !dev->name || strcmp(dev->name, "device") != 0)
            continue;
        char *path;
        if (text_of(rv_xml_child(dev, "path"), &path, err) < 0)
            return -1;
        if (!path)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: missing blkio device path");
        int rc = 0;
        for (int k = 0; rc == 0 && k < 5; k++) {
            const rv_xml_node *el = rv_xml_child(dev, kinds[k]);
            if (el && (parse_number(el, kinds[k], &v, err) < 0 ||
                       test_tune_set_blkio_device(def, path, k, v, err) < 0))
                rc = -1;
        }
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_tuning(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    static const char *const limits[] = { "hard_limit", "soft_limit", "swap_hard_limit" };
    static const char *const modes[] = { "strict", "preferred", "interleave", "restrictive" };
    const rv_xml_node *mt = rv_xml_child(root, "memtune");
    for (int k = 0; mt && k < 3; k++) {
        unsigned long long kib;
        if (rv_xml_child(mt, limits[k]) &&
            (parse_mem_kib(mt, limits[k], &kib, err) < 0 ||
             test_tune_set_mem(def, k, kib, err) < 0))
            return -1;
    }
    const rv_xml_node *bt = rv_xml_child(root, "blkiotune");
    if (bt && parse_blkiotune(bt, def, err) < 0)
        return -1;
    const rv_xml_node *ct = rv_xml_child(root, "cputune");
    for (size_t i = 0; ct && i < ct->nkids; i++) {
        const rv_xml_node *el = ct->kids[i];
        int emulator = el && el->name && strcmp(el->name, "emulatorpin") == 0;
        if (!el || !el->name || (!emulator && strcmp(el->name, "vcpupin") != 0))
            continue;
        const char *vcpu = rv_xml_attr_get(el, "vcpu"), *cpuset = rv_xml_attr_get(el, "cpuset");
        unsigned long long v = 0;
        if (!cpuset || (!emulator && (!vcpu || parse_ull(vcpu, &v) < 0 || v > INT_MAX)))
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: <%s> needs %s", el->name,
                            emulator ? "a cpuset" : "a vcpu and a cpuset");
        if (test_tune_set_pin(def, emulator ? -1 : (int)v, cpuset, err) < 0)
            return -1;
    }
    const rv_xml_node *nt = rv_xml_child(root, "numatune");
    const rv_xml_node *mem = nt ? rv_xml_child(nt, "memory") : NULL;
    if (mem) {
        const char *mode = rv_xml_attr_get(mem, "mode");
        int m = mode ? -1 : 0;
        for (int k = 0; mode && k < 4; k++)
            if (strcmp(mode, modes[k]) == 0)
                m = k;
        if (m < 0)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Unsupported NUMA memory tuning mode '%s'", mode);
        if (test_tune_set_numa(def, m, rv_xml_attr_get(mem, "nodeset"), err) < 0)
            return -1;
    }
    return 0;
}

/* ---- the steps, in libvirt's order ---- */

static int parse_name(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (child_text(root, "name", &def->name, err) < 0)
        return -1;
    if (!def->name)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_NO_NAME, "missing name information");
    return 0;
}

static int parse_uuid(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    char *text;
    if (child_text(root, "uuid", &text, err) < 0)
        return -1;
    int rc = rv_lx_read_uuid(text, def->uuid, RV_FROM_DOMAIN, err);
    free(text);
    return rc;
}

static int parse_virt_type(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (attr_copy(root, "type", &def->virt_type, err) < 0)
        return -1;
    if (!def->virt_type)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                        "internal error: missing domain type attribute");
    if (FIND(virt_types, def->virt_type) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: invalid domain type %s", def->virt_type);
    return 0;
}

static int parse_os_type(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *os = rv_xml_child(root, "os");
    const rv_xml_node *type = os ? rv_xml_child(os, "type") : NULL;
    if (text_of(type, &def->os_type, err) < 0)
        return -1;
    if (!def->os_type)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: an os <type> must be specified");
    if (FIND(os_types, def->os_type) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: unknown OS type '%s'", def->os_type);
    if (strcmp(def->os_type, "exe") == 0)   /* needs <init>, which is not modelled */
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: OS type 'exe' is not supported by "
                        "remvirt's test driver");
    if (attr_copy(type, "arch", &def->arch, err) < 0 ||
        attr_copy(type, "machine", &def->machine, err) < 0)
        return -1;
    if (def->arch && FIND(arches, def->arch) < 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: Unknown architecture %s", def->arch);
    if (!def->arch && !(def->arch = strdup("i686")))    /* the test host's guest arch */
        return def_oom(err);
    return 0;
}

static int parse_title(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (child_text(root, "title", &def->title, err) < 0 ||
        child_text(root, "description", &def->description, err) < 0)
        return -1;
    if (def->title && strchr(def->title, '\n'))
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: Domain title can't contain newlines");
    return 0;
}

static int parse_memory(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (parse_mem_kib(root, "memory", &def->max_mem_kib, err) < 0 ||
        parse_mem_kib(root, "currentMemory", &def->cur_mem_kib, err) < 0)
        return -1;
    return 0;
}

static int parse_vcpu_attrs(const rv_xml_node *vcpu, rv_test_def *def, rv_err *err)
{
    const char *current = rv_xml_attr_get(vcpu, "current");
    const char *placement = rv_xml_attr_get(vcpu, "placement");
    if (current && parse_uint(current, &def->vcpus_current) < 0)
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: Invalid value for attribute 'current' in element 'vcpu': "
                        "'%s'. Expected non-negative integer value", current);
    if (placement && strcmp(placement, "static") != 0 && strcmp(placement, "auto") != 0)
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: Invalid value for attribute 'placement' in element "
                        "'vcpu': '%s'.", placement);
    def->placement_auto = placement && strcmp(placement, "auto") == 0;
    return 0;
}

static int parse_vcpu(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *vcpu = rv_xml_child(root, "vcpu");
    def->vcpus = 1;
    if (vcpu) {
        char *text = rv_xml_string(vcpu);
        int bad = text && parse_uint(text, &def->vcpus) < 0;
        free(text);
        if (!text)
            return def_oom(err);
        if (bad)
            return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                            "XML error: maximum vcpus count must be an integer");
    }
    if (def->vcpus > RV_TEST_MAX_VCPUS)     /* GetInfo carries the count in 16 bits */
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: %u vCPUs is over remvirt's limit of %d",
                        def->vcpus, RV_TEST_MAX_VCPUS);
    def->vcpus_current = def->vcpus;
    if (vcpu && parse_vcpu_attrs(vcpu, def, err) < 0)
        return -1;
    if (def->vcpus == 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                        "internal error: CPU IDs in <numa> exceed the <vcpu> count");
    if (def->vcpus_current > def->vcpus)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: maximum vCPU count must not be less "
                        "than current vCPU count");
    return 0;
}

static int parse_action(rv_xml_node *root, const char *elname, int dflt, int *out, rv_err *err)
{
    char *text;
    if (child_text(root, elname, &text, err) < 0)
        return -1;
    *out = text ? FIND(actions, text) : dflt;
    if (*out < 0)
        def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                 "unsupported configuration: unknown %s action: %s", elname, text);
    free(text);
    return *out < 0 ? -1 : 0;
}

static int parse_lifecycle(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    if (parse_action(root, "on_poweroff", RV_TEST_ACTION_DESTROY, &def->on_poweroff, err) < 0 ||
        parse_action(root, "on_reboot", RV_TEST_ACTION_RESTART, &def->on_reboot, err) < 0 ||
        parse_action(root, "on_crash", RV_TEST_ACTION_DESTROY, &def->on_crash, err) < 0)
        return -1;
    return 0;
}

/* Boot order matters only to hvm guests; libvirt reads the first four. */
static int parse_boot(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    const rv_xml_node *os = rv_xml_child(root, "os");
    if (strcmp(def->os_type, "hvm") != 0)
        return 0;
    for (size_t i = 0; i < os->nkids && def->nboot < RV_TEST_MAX_BOOT; i++) {
        const rv_xml_node *k = os->kids[i];
        if (!k->name || strcmp(k->name, "boot") != 0)
            continue;
        const char *dev = rv_xml_attr_get(k, "dev");
        if (!dev)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Missing required attribute 'dev' in element 'boot'");
        int idx = FIND(boot_devs, dev);
        if (idx < 0)
            return def_fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                            "XML error: Invalid value for attribute 'dev' in element 'boot': "
                            "'%s'.", dev);
        def->boot[def->nboot++] = idx;
    }
    if (def->nboot == 0)
        def->boot[def->nboot++] = 1;    /* hd */
    return 0;
}

static int parse_clock(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    static const char *const unmodelled[] = { "variable", "timezone", "absolute" };
    const rv_xml_node *clock = rv_xml_child(root, "clock");
    const char *offset = clock ? rv_xml_attr_get(clock, "offset") : NULL;
    if (!offset || !*offset || strcmp(offset, "utc") == 0)
        return 0;
    if (strcmp(offset, "localtime") == 0) {
        def->clock_localtime = 1;
        return 0;
    }
    if (FIND(unmodelled, offset) >= 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                        "unsupported configuration: clock offset '%s' is not supported by "
                        "remvirt's test driver", offset);
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: unknown clock offset '%s'", offset);
}

static int check_action(const char *event, int action, rv_err *err)
{
    if (action != RV_TEST_ACTION_COREDUMP_DESTROY && action != RV_TEST_ACTION_COREDUMP_RESTART)
        return 0;
    return def_fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: Lifecycle event '%s' doesn't support '%s' "
                    "action", event, actions[action]);
}

/* libvirt's checks once everything is read. */
static int check_def(rv_xml_node *root, rv_test_def *def, rv_err *err)
{
    (void)root;
    if (def->max_mem_kib == 0)
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: Memory size must be specified via <memory> or in the "
                        "<numa> configuration");
    if (def->cur_mem_kib == 0 || def->cur_mem_kib > def->max_mem_kib)
        def->cur_mem_kib = def->max_mem_kib;
    if (check_action("poweroff", def->on_poweroff, err) < 0 ||
        check_action("reboot", def->on_reboot, err) < 0)
        return -1;
    if (strchr(def->name, '/'))
        return def_fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: name %s cannot contain '/'", def->name);
    if (strchr(def->name, '\n'))
        return def_fail(err, RV_FROM_XML, RV_ERR_XML_DETAIL, "invalid char in name: \n");
    return 0;
}

/* Take root's first <devices> out of the tree. */
static rv_xml_node *take_devices(rv_xml_node *root)
{
    for (size_t i = 0; i < root->nkids; i++) {
        rv_xml_node *k = root->kids[i];
        if (k && k->name && strcmp(k->name, "devices") == 0) {
            root->kids[i] = NULL;
            return k;
        }
    }
    return NULL;
}

int rv_test_def_parse(const char *xml, rv_test_def **out, rv_err *err)
{
    static int (*const steps[])(rv_xml_node *, rv_test_def *, rv_err *) = {
        parse_name, parse_uuid, parse_virt_type, parse_os_type, parse_title,
        parse_memory, parse_vcpu, parse_tuning, parse_lifecycle, parse_clock, parse_boot,
        check_def,
    };
    rv_xml_node *root = rv_xml_tree_read(xml, RV_TEST_DOMAIN_XML_MAX, "domain",
                                         "domain_definition", RV_FROM_DOMAIN, err);
    if (!root)
        return -1;
    rv_test_def *def = calloc(1, sizeof(*def));
    int ret = def ? 0 : def_oom(err);
    for (size_t i = 0; ret == 0 && i < ARRAY_LEN(steps); i++)
        ret = steps[i](root, def, err);
    if (ret == 0) {
        def->devices = take_devices(root);
        *out = def;
    } else {
        rv_test_def_free(def);
    }
    rv_xml_free(root);
    return ret;
}

void rv_test_def_free(rv_test_def *def)
{
    if (!def)
        return;
    free(def->virt_type);
    free(def->name);
    free(def->title);
    free(def->description);
    free(def->os_type);
    free(def->arch);
    free(def->machine);
    rv_xml_free(def->devices);
    test_tune_free(def->tune);
    free(def);
}

/* ================================================================ writers */

static void put(FILE *fp, const char *s)
{
    fputs(s, fp);
}

/* Tuning the setters keep (test_tune.c), written and freed; NULL: none. */
static void write_tuning(FILE *fp, char *xml)
{
    if (xml)
        put(fp, xml);
    free(xml);
}

static void write_vcpu(FILE *fp, const rv_test_def *def)
{
    fprintf(fp, "  <vcpu placement='%s'", def->placement_auto ? "auto" : "static");
    if (def->vcpus_current != def->vcpus)
        fprintf(fp, " current='%u'", def->vcpus_current);
    fprintf(fp, ">%u</vcpu>\n", def->vcpus);
    char *cpu = test_tune_xml_cpu(def);
    if (cpu)
        write_tuning(fp, cpu);
    else if (def->placement_auto)
        put(fp, "  <numatune>\n    <memory mode='strict' placement='auto'/>\n  </numatune>\n");
}

static void write_os(FILE *fp, const rv_test_def *def)
{
    put(fp, "  <os>\n    <type arch='");
    rv_xml_put_escaped(fp, def->arch);
    if (def->machine) {
        put(fp, "' machine='");
        rv_xml_put_escaped(fp, def->machine);
    }
    fprintf(fp, "'>%s</type>\n", def->os_type);
    for (size_t i = 0; i < def->nboot; i++)
        fprintf(fp, "    <boot dev='%s'/>\n", boot_devs[def->boot[i]]);
    put(fp, "  </os>\n");
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

char *rv_test_def_format(const rv_test_def *def, int id)
{
    char *buf = NULL, uuid[RV_UUID_STRING_LEN];
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    rv_uuid_format(def->uuid, uuid);
    put(fp, "<domain type='");
    rv_xml_put_escaped(fp, def->virt_type);
    put(fp, "'");
    if (id >= 0)
        fprintf(fp, " id='%d'", id);
    put(fp, ">\n");
    rv_xml_put_text_element(fp, 2, "name", def->name);
    fprintf(fp, "  <uuid>%s</uuid>\n", uuid);
    if (def->title)
        rv_xml_put_text_element(fp, 2, "title", def->title);
    if (def->description)
        rv_xml_put_text_element(fp, 2, "description", def->description);
    fprintf(fp, "  <memory unit='KiB'>%llu</memory>\n", def->max_mem_kib);
    fprintf(fp, "  <currentMemory unit='KiB'>%llu</currentMemory>\n", def->cur_mem_kib);
    write_tuning(fp, test_tune_xml_memory(def));
    write_vcpu(fp, def);
    write_os(fp, def);
    fprintf(fp, "  <clock offset='%s'/>\n", def->clock_localtime ? "localtime" : "utc");
    fprintf(fp, "  <on_poweroff>%s</on_poweroff>\n", actions[def->on_poweroff]);
    fprintf(fp, "  <on_reboot>%s</on_reboot>\n", actions[def->on_reboot]);
    fprintf(fp, "  <on_crash>%s</on_crash>\n", actions[def->on_crash]);
    write_devices(fp, def->devices);
    put(fp, "</domain>\n");
    return rv_xml_done(fp, &buf);
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
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    put(fp, capabilities_head);
    write_cell(fp, 0, 2097152, 4);
    write_cell(fp, 1, 4194304, 8);
    put(fp, capabilities_tail);
    write_guest(fp, "hvm");
    write_guest(fp, "xen");
    put(fp, "</capabilities>\n");
    return rv_xml_done(fp, &buf);
}
