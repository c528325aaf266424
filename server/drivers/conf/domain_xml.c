/* The common part of domain XML (domain_def.h), read as libvirt 9.0 reads
 * it, step by step in its order, with its defaults and error texts (so
 * virsh prints the same against remvirtd), and written in its layout. */
#include "server/drivers/conf/domain_def.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/xml_write.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *const rv_domain_action_words[] = {
    "destroy", "restart", "rename-restart", "preserve", "coredump-destroy", "coredump-restart",
    NULL,
};
const char *const rv_domain_boot_words[] = { "fd", "hd", "cdrom", "network", NULL };

static const char *const virt_types[] = {
    "none", "qemu", "kqemu", "kvm", "xen", "lxc", "uml", "openvz", "test", "vmware",
    "hyperv", "vbox", "phyp", "parallels", "bhyve", "vz", "hvf", NULL,
};
static const char *const os_types[] = { "hvm", "xen", "linux", "exe", "uml", "xenpvh", NULL };
static const char *const arches[] = {
    "alpha", "armv6l", "armv7l", "armv7b", "aarch64", "cris", "i686", "ia64", "lm32",
    "m68k", "microblaze", "microblazeel", "mips", "mipsel", "mips64", "mips64el",
    "openrisc", "parisc", "parisc64", "ppc", "ppcle", "ppc64", "ppc64le", "ppcemb",
    "riscv32", "riscv64", "s390", "s390x", "sh4", "sh4eb", "sparc", "sparc64",
    "unicore32", "x86_64", "xtensa", "xtensaeb", NULL,
};

static int find_word(const char *const *words, const char *s)
{
    for (int i = 0; s && words[i]; i++)
        if (strcmp(words[i], s) == 0)
            return i;
    return -1;
}

#define fail rv_err_fail

static int oom(rv_err *err)
{
    return fail(err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory");
}

#define child rv_lx_plain_child

/* The text of el, or NULL when el is absent or its text empty: libvirt
 * treats an empty element like a missing one. */
static int text_of(const xmlNode *el, char **out, rv_err *err)
{
    int failed = 0;
    *out = rv_lx_text(el, &failed);
    return failed ? oom(err) : 0;
}

/* An attribute, copied; NULL when absent or empty. */
static int attr_copy(const xmlNode *el, const char *name, char **out, rv_err *err)
{
    int failed = 0;
    *out = rv_lx_attr(el, name, &failed);
    if (failed)
        return oom(err);
    if (*out && !**out) {
        free(*out);
        *out = NULL;
    }
    return 0;
}

/* Numbers as libvirt reads them: strtoull in base 10, without a minus
 * sign or anything after the digits. */
int rv_domain_parse_ull(const char *s, unsigned long long *out)
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
    if (!s || rv_domain_parse_ull(s, &v) < 0 || v > UINT_MAX)
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

int rv_domain_parse_memory(const xmlNode *el, const char *elname, unsigned long long *kib,
                           rv_err *err)
{
    char *text, *unit;
    unsigned long long value, scale;
    int ret = -1;
    *kib = 0;
    if (text_of(el, &text, err) < 0)
        return -1;
    if (attr_copy(el, "unit", &unit, err) < 0) {
        free(text);
        return -1;
    }
    if (!text)
        ret = 0;
    else if (rv_domain_parse_ull(text, &value) < 0)
        fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
             "XML error: Invalid value '%s' for element or attribute './%s[1]'", text, elname);
    else if (unit_scale(unit, &scale) < 0)
        fail(err, RV_FROM_NONE, RV_ERR_INVALID_ARG, "invalid argument: unknown suffix '%s'", unit);
    else if (value > LLONG_MAX / scale)
        fail(err, RV_FROM_NONE, RV_ERR_OVERFLOW, "numerical overflow: value too large: %s%s",
             text, unit ? unit : "");
    else {
        *kib = (value * scale + 1023) / 1024;
        ret = 0;
    }
    free(text);
    free(unit);
    return ret;
}

/* ---- the steps, in libvirt's order ---- */

typedef struct step_ctx {
    const xmlNode *root;
    const rv_domain_profile *profile;
    rv_domain_base *def;
    void *tuning_ctx;
} step_ctx;

static int parse_name(const step_ctx *x, rv_err *err)
{
    if (text_of(child(x->root, "name"), &x->def->name, err) < 0)
        return -1;
    if (!x->def->name)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_NO_NAME, "missing name information");
    return 0;
}

static int parse_uuid(const step_ctx *x, rv_err *err)
{
    char *text;
    if (text_of(child(x->root, "uuid"), &text, err) < 0)
        return -1;
    int rc = rv_lx_read_uuid(text, x->def->uuid, RV_FROM_DOMAIN, err);
    free(text);
    return rc;
}

static int parse_virt_type(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    if (attr_copy(x->root, "type", &def->virt_type, err) < 0)
        return -1;
    if (!def->virt_type)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                    "internal error: missing domain type attribute");
    if (find_word(virt_types, def->virt_type) < 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: invalid domain type %s", def->virt_type);
    return 0;
}

static int parse_os_type(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    const xmlNode *type = child(child(x->root, "os"), "type");
    if (text_of(type, &def->os_type, err) < 0)
        return -1;
    if (!def->os_type)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                    "XML error: an os <type> must be specified");
    if (find_word(os_types, def->os_type) < 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: unknown OS type '%s'", def->os_type);
    if (strcmp(def->os_type, "exe") == 0)   /* needs <init>, which is not modelled */
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: OS type 'exe' is not supported by %s",
                    x->profile->driver);
    if (attr_copy(type, "arch", &def->arch, err) < 0 ||
        attr_copy(type, "machine", &def->machine, err) < 0)
        return -1;
    if (def->arch && find_word(arches, def->arch) < 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: Unknown architecture %s", def->arch);
    if (!def->arch && !(def->arch = strdup(x->profile->default_arch)))
        return oom(err);
    return 0;
}

static int parse_title(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    if (text_of(child(x->root, "title"), &def->title, err) < 0 ||
        text_of(child(x->root, "description"), &def->description, err) < 0)
        return -1;
    if (def->title && strchr(def->title, '\n'))
        return fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                    "XML error: Domain title can't contain newlines");
    return 0;
}

static int parse_memory(const step_ctx *x, rv_err *err)
{
    if (rv_domain_parse_memory(child(x->root, "memory"), "memory", &x->def->memory_kib, err) < 0 ||
        rv_domain_parse_memory(child(x->root, "currentMemory"), "currentMemory",
                               &x->def->current_memory_kib, err) < 0)
        return -1;
    return 0;
}

static int parse_vcpu_attrs(const xmlNode *vcpu, rv_domain_base *def, unsigned *current,
                            rv_err *err)
{
    char *cur, *placement;
    int rc = 0;
    if (attr_copy(vcpu, "current", &cur, err) < 0)
        return -1;
    if (attr_copy(vcpu, "placement", &placement, err) < 0) {
        free(cur);
        return -1;
    }
    if (cur && parse_uint(cur, current) < 0)
        rc = fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                  "XML error: Invalid value for attribute 'current' in element 'vcpu': "
                  "'%s'. Expected non-negative integer value", cur);
    else if (placement && strcmp(placement, "static") != 0 && strcmp(placement, "auto") != 0)
        rc = fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                  "XML error: Invalid value for attribute 'placement' in element "
                  "'vcpu': '%s'.", placement);
    else
        def->placement_auto = placement && strcmp(placement, "auto") == 0;
    free(cur);
    free(placement);
    return rc;
}

static int parse_vcpu(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    const xmlNode *vcpu = child(x->root, "vcpu");
    def->vcpus = 1;
    if (vcpu) {
        xmlChar *text = xmlNodeGetContent(vcpu);
        int bad = text && parse_uint((const char *)text, &def->vcpus) < 0;
        xmlFree(text);
        if (!text)
            return oom(err);
        if (bad)
            return fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                        "XML error: maximum vcpus count must be an integer");
    }
    if (def->vcpus > x->profile->max_vcpus)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: %u vCPUs is over remvirt's limit of %u",
                    def->vcpus, x->profile->max_vcpus);
    unsigned current = def->vcpus;
    if (vcpu && parse_vcpu_attrs(vcpu, def, &current, err) < 0)
        return -1;
    if (def->vcpus == 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INTERNAL_ERROR,
                    "internal error: CPU IDs in <numa> exceed the <vcpu> count");
    if (current > def->vcpus)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: maximum vCPU count must not be less "
                    "than current vCPU count");
    def->current_vcpus = current;
    return 0;
}

static int parse_action(const xmlNode *root, const char *elname, int dflt, int *out, rv_err *err)
{
    char *text;
    if (text_of(child(root, elname), &text, err) < 0)
        return -1;
    *out = text ? find_word(rv_domain_action_words, text) : dflt;
    if (*out < 0)
        fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
             "unsupported configuration: unknown %s action: %s", elname, text);
    free(text);
    return *out < 0 ? -1 : 0;
}

static int parse_lifecycle(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    if (parse_action(x->root, "on_poweroff", RV_DOMAIN_ACTION_DESTROY, &def->on_poweroff, err) < 0 ||
        parse_action(x->root, "on_reboot", RV_DOMAIN_ACTION_RESTART, &def->on_reboot, err) < 0 ||
        parse_action(x->root, "on_crash", RV_DOMAIN_ACTION_DESTROY, &def->on_crash, err) < 0)
        return -1;
    return 0;
}

/* <perf><event name='...' enabled='yes|no'/>..., libvirt's errors. */
static int parse_perf(const step_ctx *x, rv_err *err)
{
    const xmlNode *perf = child(x->root, "perf");
    for (const xmlNode *k = perf ? perf->children : NULL; k; k = k->next) {
        if (!rv_lx_is_plain(k, "event"))
            continue;
        int failed = 0, ev = -1, on = -1;
        char *name = rv_lx_attr(k, "name", &failed);
        char *enabled = name ? rv_lx_attr(k, "enabled", &failed) : NULL;
        for (int i = 0; name && i < RV_TUNE_PERF_EVENTS; i++)
            if (strcmp(name, rv_tune_perf_names[i]) == 0)
                ev = i;
        if (enabled)
            on = strcmp(enabled, "yes") == 0 ? 1 : strcmp(enabled, "no") == 0 ? 0 : -1;
        int rc = failed ? fail(err, RV_FROM_DOMAIN, RV_ERR_NO_MEMORY, "out of memory")
                 : !name ? fail(err, RV_FROM_DOMAIN, RV_ERR_CONF_SYNTAX,
                                "configuration file syntax error: missing perf event name")
                 : ev < 0 ? fail(err, RV_FROM_DOMAIN, RV_ERR_CONF_SYNTAX,
                                 "configuration file syntax error: 'unsupported event name'")
                 : x->def->perf[ev] ? fail(err, RV_FROM_DOMAIN, RV_ERR_CONF_SYNTAX,
                                           "configuration file syntax error: perf event '%s' "
                                           "was already specified", name)
                 : !enabled ? fail(err, RV_FROM_DOMAIN, RV_ERR_CONF_SYNTAX,
                                   "configuration file syntax error: missing state of perf "
                                   "event '%s'", name)
                 : on < 0 ? fail(err, RV_FROM_DOMAIN, RV_ERR_CONF_SYNTAX,
                                 "configuration file syntax error: invalid state '%s' of perf "
                                 "event '%s'", enabled, name)
                 : 0;
        if (rc == 0)
            x->def->perf[ev] = on ? 1 : -1;
        free(name);
        free(enabled);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int parse_clock(const step_ctx *x, rv_err *err)
{
    static const char *const unmodelled[] = { "variable", "timezone", "absolute", NULL };
    char *offset;
    int rc = 0;
    if (attr_copy(child(x->root, "clock"), "offset", &offset, err) < 0)
        return -1;
    if (!offset || strcmp(offset, "utc") == 0)
        ;
    else if (strcmp(offset, "localtime") == 0)
        x->def->clock_localtime = true;
    else if (find_word(unmodelled, offset) >= 0)
        rc = fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                  "unsupported configuration: clock offset '%s' is not supported by %s", offset,
                  x->profile->driver);
    else
        rc = fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                  "unsupported configuration: unknown clock offset '%s'", offset);
    free(offset);
    return rc;
}

/* Boot order matters only to hvm guests; libvirt reads the first four. */
static int parse_boot(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    if (strcmp(def->os_type, "hvm") != 0)
        return 0;
    for (const xmlNode *k = child(x->root, "os")->children; k && def->nboot < RV_DOMAIN_MAX_BOOT;
         k = k->next) {
        if (!rv_lx_is_plain(k, "boot"))
            continue;
        xmlChar *dev = xmlGetNoNsProp(k, (const xmlChar *)"dev");
        int idx = find_word(rv_domain_boot_words, (const char *)dev);
        if (!dev)
            return fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                        "XML error: Missing required attribute 'dev' in element 'boot'");
        if (idx < 0)
            fail(err, RV_FROM_XML, RV_ERR_XML_ERROR,
                 "XML error: Invalid value for attribute 'dev' in element 'boot': '%s'.",
                 (const char *)dev);
        xmlFree(dev);
        if (idx < 0)
            return -1;
        def->boot[def->nboot++] = idx;
    }
    if (def->nboot == 0)
        def->boot[def->nboot++] = RV_DOMAIN_BOOT_HD;
    return 0;
}

static int check_action(const char *event, int action, rv_err *err)
{
    if (action != RV_DOMAIN_ACTION_COREDUMP_DESTROY && action != RV_DOMAIN_ACTION_COREDUMP_RESTART)
        return 0;
    return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                "unsupported configuration: Lifecycle event '%s' doesn't support '%s' action",
                event, rv_domain_action_words[action]);
}

/* libvirt's checks once everything is read. */
static int check_def(const step_ctx *x, rv_err *err)
{
    rv_domain_base *def = x->def;
    if (def->memory_kib == 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                    "XML error: Memory size must be specified via <memory> or in the "
                    "<numa> configuration");
    if (def->current_memory_kib == 0 || def->current_memory_kib > def->memory_kib)
        def->current_memory_kib = def->memory_kib;
    if (check_action("poweroff", def->on_poweroff, err) < 0 ||
        check_action("reboot", def->on_reboot, err) < 0)
        return -1;
    if (strchr(def->name, '/'))
        return fail(err, RV_FROM_DOMAIN, RV_ERR_XML_ERROR,
                    "XML error: name %s cannot contain '/'", def->name);
    if (strchr(def->name, '\n'))
        return fail(err, RV_FROM_XML, RV_ERR_XML_DETAIL, "invalid char in name: \n");
    return 0;
}

static int parse_tuning(const step_ctx *x, rv_err *err)
{
    return x->profile->tuning ? x->profile->tuning(x->root, x->tuning_ctx, err) : 0;
}

int rv_domain_base_parse(const xmlNode *root, const rv_domain_profile *profile,
                         rv_domain_base *base, void *tuning_ctx, rv_err *err)
{
    static int (*const steps[])(const step_ctx *, rv_err *) = {
        parse_name, parse_uuid, parse_virt_type, parse_os_type, parse_title,
        parse_memory, parse_vcpu, parse_tuning, parse_lifecycle, parse_perf, parse_clock, parse_boot,
        check_def,
    };
    step_ctx x = { root, profile, base, tuning_ctx };
    for (size_t i = 0; i < ARRAY_LEN(steps); i++)
        if (steps[i](&x, err) < 0)
            return -1;
    return 0;
}

void rv_domain_base_clear(rv_domain_base *base)
{
    free(base->virt_type);
    free(base->name);
    free(base->title);
    free(base->description);
    free(base->os_type);
    free(base->arch);
    free(base->machine);
    memset(base, 0, sizeof(*base));
}

/* ---------------------------------------------------------------- writers */

void rv_domain_format_ids(FILE *fp, const rv_domain_base *base)
{
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(base->uuid, uuid);
    rv_xml_put_text_element(fp, 2, "name", base->name);
    fprintf(fp, "  <uuid>%s</uuid>\n", uuid);
    if (base->title)
        rv_xml_put_text_element(fp, 2, "title", base->title);
    if (base->description)
        rv_xml_put_text_element(fp, 2, "description", base->description);
}

void rv_domain_format_memory(FILE *fp, const rv_domain_base *base)
{
    fprintf(fp, "  <memory unit='KiB'>%llu</memory>\n", base->memory_kib);
    fprintf(fp, "  <currentMemory unit='KiB'>%llu</currentMemory>\n", base->current_memory_kib);
}

void rv_domain_format_vcpu(FILE *fp, const rv_domain_base *base)
{
    fprintf(fp, "  <vcpu placement='%s'", base->placement_auto ? "auto" : "static");
    if (base->current_vcpus != base->vcpus)
        fprintf(fp, " current='%u'", base->current_vcpus);
    fprintf(fp, ">%u</vcpu>\n", base->vcpus);
}

void rv_domain_format_os_type(FILE *fp, const rv_domain_base *base)
{
    fputs("    <type arch='", fp);
    rv_xml_put_escaped(fp, base->arch);
    if (base->machine) {
        fputs("' machine='", fp);
        rv_xml_put_escaped(fp, base->machine);
    }
    fputs("'>", fp);
    rv_xml_put_escaped(fp, base->os_type);
    fputs("</type>\n", fp);
    for (size_t i = 0; i < base->nboot; i++)
        fprintf(fp, "    <boot dev='%s'/>\n", rv_domain_boot_words[base->boot[i]]);
}

void rv_domain_format_actions(FILE *fp, const rv_domain_base *base)
{
    fprintf(fp, "  <on_poweroff>%s</on_poweroff>\n", rv_domain_action_words[base->on_poweroff]);
    fprintf(fp, "  <on_reboot>%s</on_reboot>\n", rv_domain_action_words[base->on_reboot]);
    fprintf(fp, "  <on_crash>%s</on_crash>\n", rv_domain_action_words[base->on_crash]);
}

void rv_domain_format_perf(FILE *fp, const rv_domain_base *base)
{
    bool any = false;
    for (int i = 0; i < RV_TUNE_PERF_EVENTS; i++) {
        if (!base->perf[i])
            continue;
        if (!any)
            fputs("  <perf>\n", fp);
        any = true;
        fprintf(fp, "    <event name='%s' enabled='%s'/>\n", rv_tune_perf_names[i],
                base->perf[i] > 0 ? "yes" : "no");
    }
    if (any)
        fputs("  </perf>\n", fp);
}

/* ================================================================ perf events */

int rv_domain_perf_check(const rv_typed_param *params, unsigned int n, rv_err *err)
{
    rv_tune_field fields[RV_TUNE_PERF_EVENTS];
    for (int i = 0; i < RV_TUNE_PERF_EVENTS; i++)
        fields[i] = (rv_tune_field){ rv_tune_perf_names[i], RV_TYPED_PARAM_BOOLEAN };
    return rv_tune_params_validate(params, n, fields, RV_TUNE_PERF_EVENTS, err);
}

void rv_domain_perf_set(rv_domain_base *def, const rv_typed_param *params, unsigned int n)
{
    for (unsigned int k = 0; k < n; k++)
        for (int i = 0; i < RV_TUNE_PERF_EVENTS; i++)
            if (strcmp(params[k].field, rv_tune_perf_names[i]) == 0)
                def->perf[i] = params[k].value.rv_typed_param_value_u.b ? 1 : -1;
}

int rv_domain_perf_get(const rv_domain_base *def, rv_typed_param **val, u_int *len, rv_err *err)
{
    rv_typed_param *p = rv_tune_param_list(RV_TUNE_PERF_EVENTS, RV_TUNE_PERF_EVENTS, len, err);
    if (!(*val = p))
        return -1;
    for (int i = 0; i < RV_TUNE_PERF_EVENTS; i++) {
        if (rv_tune_param_name(&p[i], rv_tune_perf_names[i], RV_TYPED_PARAM_BOOLEAN, err) < 0)
            return -1;
        p[i].value.rv_typed_param_value_u.b = def->perf[i] > 0;
    }
    return 0;
}

/* ================================================================ metadata */

static int metadata_type_ok(int type, rv_err *err)
{
    if (type < RV_METADATA_DESCRIPTION || type > RV_METADATA_ELEMENT)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "invalid argument: unknown metadata type '%d'", type);
    return 0;
}

int rv_domain_lifecycle_check(unsigned int type, unsigned int action, rv_err *err)
{
    if (type > RV_DOMAIN_LIFECYCLE_CRASH)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG, "invalid argument: invalid lifecycle type '%u'",
                    type);
    if (action > RV_DOMAIN_ACTION_COREDUMP_RESTART)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "invalid argument: invalid lifecycle action '%u'", action);
    return 0;
}

int rv_domain_lifecycle_allowed(unsigned int type, unsigned int action, rv_err *err)
{
    static const char *const events[] = { "poweroff", "reboot" };
    return type == RV_DOMAIN_LIFECYCLE_CRASH ? 0 : check_action(events[type], (int)action, err);
}

void rv_domain_lifecycle_set(rv_domain_base *def, unsigned int type, unsigned int action)
{
    int *slot = type == RV_DOMAIN_LIFECYCLE_POWEROFF ? &def->on_poweroff
                : type == RV_DOMAIN_LIFECYCLE_REBOOT ? &def->on_reboot : &def->on_crash;
    *slot = (int)action;
}

int rv_domain_metadata_check(int type, const char *metadata, const char *key, const char *uri,
                             int from, rv_err *err)
{
    if (metadata_type_ok(type, err) < 0)
        return -1;
    if (type == RV_METADATA_ELEMENT)
        return fail(err, from, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: remvirt does not keep <metadata> elements by "
                    "namespace yet (only <title> and <description>)");
    /* libvirt's client library refuses these before sending: the same
     * words for a client that does not. */
    if (key)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "key in virDomainSetMetadata must be NULL");
    if (uri)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "uri in virDomainSetMetadata must be NULL");
    if (type == RV_METADATA_TITLE && metadata && strchr(metadata, '\n'))
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "metadata title can't contain newlines");
    return 0;
}

int rv_domain_metadata_set(rv_domain_base *def, int type, const char *metadata, rv_err *err)
{
    char **field = type == RV_METADATA_TITLE ? &def->title : &def->description;
    char *value = NULL;
    if (metadata && *metadata && !(value = strdup(metadata)))
        return oom(err);
    free(*field);
    *field = value;
    return 0;
}

int rv_domain_metadata_get(const rv_domain_base *def, int type, const char *uri, char **out,
                           rv_err *err)
{
    *out = NULL;
    if (metadata_type_ok(type, err) < 0)
        return -1;
    if (type != RV_METADATA_ELEMENT && uri)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                    "uri in virDomainGetMetadata must be NULL");
    const char *value = type == RV_METADATA_TITLE ? def->title
                        : type == RV_METADATA_DESCRIPTION ? def->description : NULL;
    if (!value)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_NO_DOMAIN_METADATA,
                    "metadata not found: Requested metadata element is not present");
    return (*out = strdup(value)) ? 0 : oom(err);
}
