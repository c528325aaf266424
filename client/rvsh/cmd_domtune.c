/* rvsh: changing a running or defined domain's vCPUs and IOThreads
 * (setvcpu, iothreadadd, iothreaddel, iothreadpin, iothreadset), starting
 * a dirty rate measurement (domdirtyrate-calc) and the native command
 * line of a definition (domxml-to-native), with virsh's checks, in
 * virsh's order, and its words. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvsh.h"

static void bad_number(const char *text, const char *option)
{
    error_line("Numeric value '%s' for <%s> option is malformed or out of range", text, option);
}

/* An unsigned decimal that fits max, as strtoull reads one (blanks and
 * '+' first) but with no minus sign. */
static int parse_unsigned(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || strchr(s, '-') || v > max)
        return -1;
    *out = v;
    return 0;
}

/* An IOThread id as virsh reads one: an int above 0. */
static int iothread_id(const char *text, unsigned int *id)
{
    int v;
    if (parse_int(text, &v) < 0) {
        bad_number(text, "id");
        return -1;
    }
    if (v <= 0) {
        error_line("Invalid IOThread id value: '%d'", v);
        return -1;
    }
    *id = (unsigned int)v;
    return 0;
}

/* --config/--live/--current's flags, then the domain (virsh's order). */
static rv_dom *affected_domain(shell *sh, const command *cmd, const cmd_args *a,
                               unsigned int *flags)
{
    return affect_flags(cmd, a, flags) < 0 ? NULL : lookup_domain(sh, a->value, cmd->lookup);
}

static int cmd_setvcpu(shell *sh, const command *cmd, const cmd_args *a)
{
    int enable = has_opt(cmd, a, "enable"), disable = has_opt(cmd, a, "disable");
    unsigned int flags;
    if (enable && disable) {
        error_line("Options --enable and --disable are mutually exclusive");
        return -1;
    }
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    if (!enable && !disable) {
        error_line("one of --enable, --disable is required");
        return -1;
    }
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = rv_domain_set_vcpu(dom, a->value2, enable, flags);
    if (rc < 0)
        lib_error();
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static int cmd_iothread_add_del(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags, id;
    rv_dom *dom = affected_domain(sh, cmd, a, &flags);
    if (!dom)
        return -1;
    int rc = -1;
    if (iothread_id(a->value2, &id) == 0) {
        rc = strcmp(cmd->name, "iothreadadd") == 0 ? rv_domain_add_iothread(dom, id, flags)
                                                    : rv_domain_del_iothread(dom, id, flags);
        if (rc < 0)
            lib_error();
    }
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

#define CPULIST_BITS 1024       /* the most a cpulist may name, as virsh */

static void skip_blanks(const char **p)
{
    while (**p == ' ')
        (*p)++;
}

/* A CPU number starting right at *p. */
static int cpu_number(const char **p, unsigned long long *n)
{
    char *end;
    if (**p < '0' || **p > '9')
        return -1;
    *n = strtoull(*p, &end, 10);
    *p = end;
    return *n < CPULIST_BITS ? 0 : -1;
}

/* text as a bitmap of CPULIST_BITS, as virsh reads one: "0-3, ^2,5"
 * (blanks around the numbers and the dash, one trailing comma); -1 when
 * malformed. */
static int cpulist_bits(const char *text, unsigned char *bits)
{
    const char *p = text;
    do {
        int neg = 0;
        unsigned long long first, last;
        skip_blanks(&p);
        if (*p == '^') {
            neg = 1;
            p++;
        }
        if (cpu_number(&p, &first) < 0)
            return -1;
        last = first;
        skip_blanks(&p);
        if (!neg && *p == '-') {
            p++;
            skip_blanks(&p);
            if (cpu_number(&p, &last) < 0 || last < first)
                return -1;
            skip_blanks(&p);
        }
        for (unsigned long long k = first; k <= last; k++)
            bits[k / 8] = (unsigned char)(neg ? bits[k / 8] & ~(1u << (k % 8))
                                              : bits[k / 8] | (1u << (k % 8)));
        if (*p && *p++ != ',')
            return -1;
    } while (*p);
    return 0;
}

/* iothreadpin's cpulist: "r" for every host CPU, else a list none of
 * whose CPUs is beyond the host's.  Returns the map's length, or -1. */
static int parse_cpulist(const char *text, int maxcpu, unsigned char *bits)
{
    memset(bits, 0, CPULIST_BITS / 8);
    int last = -1;
    if (text[0] == 'r') {
        for (int k = 0; k < maxcpu && k < CPULIST_BITS; k++)
            bits[k / 8] |= (unsigned char)(1u << (k % 8));
        last = (maxcpu < CPULIST_BITS ? maxcpu : CPULIST_BITS) - 1;
    } else {
        if (cpulist_bits(text, bits) < 0) {
            error_line("Invalid cpulist '%s'", text);
            error_line("invalid argument: Failed to parse bitmap '%s'", text);
            return -1;
        }
        for (int k = 0; k < CPULIST_BITS; k++)
            if (bits[k / 8] & (1u << (k % 8)))
                last = k;
        if (last < 0) {
            error_line("Invalid cpulist '%s'", text);
            return -1;
        }
        if (last >= maxcpu) {
            error_line("CPU %d in cpulist '%s' exceed the maxcpu %d", last, text, maxcpu);
            return -1;
        }
    }
    return last < 0 ? 1 : last / 8 + 1;
}

static int cmd_iothreadpin(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags;
    unsigned long long id;
    unsigned char bits[CPULIST_BITS / 8];
    rv_dom *dom = affected_domain(sh, cmd, a, &flags);
    if (!dom)
        return -1;
    int rc = -1, maxcpu, maplen;
    if (parse_unsigned(a->value2, UINT_MAX, &id) < 0)
        bad_number(a->value2, "iothread");
    else if ((maxcpu = rv_node_get_cpu_map(sh->conn, NULL, NULL, 0)) < 0)
        lib_error();
    else if ((maplen = parse_cpulist(a->value3, maxcpu, bits)) > 0 &&
             (rc = rv_domain_pin_iothread(dom, (unsigned int)id, bits, maplen, flags)) < 0)
        lib_error();
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

/* iothreadset's options in virsh's order, with their parameters' types. */
static const struct {
    const char *option, *field;
    int type;
} iothread_params[] = {
    { "poll-max-ns", "poll_max_ns", RV_PARAM_ULLONG },
    { "poll-grow", "poll_grow", RV_PARAM_UINT },
    { "poll-shrink", "poll_shrink", RV_PARAM_UINT },
    { "thread-pool-min", "thread_pool_min", RV_PARAM_INT },
    { "thread-pool-max", "thread_pool_max", RV_PARAM_INT },
};
#define N_IOTHREAD_PARAMS (sizeof(iothread_params) / sizeof(iothread_params[0]))

static int cmd_iothreadset(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags, id;
    rv_dom *dom = affected_domain(sh, cmd, a, &flags);
    if (!dom)
        return -1;
    rv_typed_parameter params[N_IOTHREAD_PARAMS];
    int n = 0, rc = -1;
    if (iothread_id(a->value2, &id) < 0)
        goto out;
    for (size_t i = 0; i < N_IOTHREAD_PARAMS; i++) {
        const char *text = opt_value(cmd, a, iothread_params[i].option);
        if (!text)
            continue;
        rv_typed_parameter *p = &params[n];
        memset(p, 0, sizeof(*p));
        snprintf(p->field, sizeof(p->field), "%s", iothread_params[i].field);
        p->type = iothread_params[i].type;
        unsigned long long u;
        int ok = 1;
        if (p->type == RV_PARAM_INT)
            ok = parse_int(text, &p->value.i) == 0;
        else if (parse_unsigned(text, p->type == RV_PARAM_UINT ? UINT_MAX : ULLONG_MAX, &u) < 0)
            ok = 0;
        else if (p->type == RV_PARAM_UINT)
            p->value.ui = (unsigned int)u;
        else
            p->value.ul = u;
        if (!ok) {
            bad_number(text, iothread_params[i].option);
            goto out;
        }
        n++;
    }
    if (n == 0) {
        error_line("Not enough arguments passed, nothing to set");
        goto out;
    }
    rc = rv_domain_set_iothread_params(dom, id, params, n, flags);
    if (rc < 0)
        lib_error();
out:
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static int cmd_domdirtyrate_calc(shell *sh, const command *cmd, const cmd_args *a)
{
    static const struct { const char *name; unsigned int flag; } modes[] = {
        { "page-sampling", RV_DOMAIN_DIRTYRATE_MODE_PAGE_SAMPLING },
        { "dirty-bitmap", RV_DOMAIN_DIRTYRATE_MODE_DIRTY_BITMAP },
        { "dirty-ring", RV_DOMAIN_DIRTYRATE_MODE_DIRTY_RING },
    };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    const char *seconds_text = opt_value(cmd, a, "seconds"), *mode = opt_value(cmd, a, "mode");
    int seconds = 1, rc = -1;
    unsigned int flags = 0;
    size_t i = 0;
    if (seconds_text && parse_int(seconds_text, &seconds) < 0) {
        bad_number(seconds_text, "seconds");
        goto out;
    }
    while (mode && i < sizeof(modes) / sizeof(modes[0]) && strcmp(modes[i].name, mode) != 0)
        i++;
    if (mode && i == sizeof(modes) / sizeof(modes[0])) {
        error_line("Unknown calculation mode '%s'", mode);
        goto out;
    }
    if (mode)
        flags = modes[i].flag;
    rc = rv_domain_start_dirty_rate_calc(dom, seconds, flags);
    if (rc < 0)
        lib_error();
    else
        puts("Start to calculate domain's memory dirty rate successfully.");
out:
    rv_domain_free(dom);
    return rc < 0 ? -1 : 0;
}

static int cmd_domxml_to_native(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *domain = opt_value(cmd, a, "domain");
    char *xml = NULL;
    if (domain && a->value2) {
        error_line("Options --domain and --xml are mutually exclusive");
        return -1;
    }
    if (!domain && !a->value2) {
        error_line("need either domain or domain XML");
        return -1;
    }
    if (domain) {
        rv_dom *dom = lookup_domain(sh, domain, BY_ANY);
        if (!dom)
            return -1;
        xml = rv_domain_get_xml_desc(dom, 0);
        rv_domain_free(dom);
        if (!xml) {
            lib_error();
            return -1;
        }
    } else if (read_file(a->value2, &xml) < 0) {
        return -1;
    }
    char *native = rv_connect_domain_xml_to_native(sh->conn, a->value, xml, 0);
    free(xml);
    if (!native) {
        lib_error();
        return -1;
    }
    fputs(native, stdout);
    free(native);
    return 0;
}

static const char *const opts_setvcpu[] = { "enable", "disable", "config", "live", "current",
                                            NULL };
static const char *const opts_affect[] = { "config", "live", "current", NULL };
static const char *const opts_iothreadset[] = {
    "poll-max-ns=", "poll-grow=", "poll-shrink=", "thread-pool-min=", "thread-pool-max=",
    "config", "live", "current", NULL,
};
static const char *const opts_dirtyrate[] = { "seconds=", "mode=", NULL };
static const char *const opts_domxml_to_native[] = { "domain=", NULL };

const command rvsh_domtune_commands[] = {
    { .name = "setvcpu", .run = cmd_setvcpu, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "vcpulist", .arg2_required = 1, .options = opts_setvcpu,
      .summary = "enable or disable the listed virtual CPUs (--enable, --disable)" },
    { .name = "iothreadadd", .run = cmd_iothread_add_del, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "id", .arg2_required = 1, .options = opts_affect,
      .summary = "add an IOThread to a domain" },
    { .name = "iothreaddel", .run = cmd_iothread_add_del, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "id", .arg2_required = 1, .options = opts_affect,
      .summary = "remove an IOThread from a domain" },
    { .name = "iothreadpin", .run = cmd_iothreadpin, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "iothread", .arg2_required = 1, .arg3 = "cpulist", .options = opts_affect,
      .summary = "let an IOThread run only on the listed host CPUs" },
    { .name = "iothreadset", .run = cmd_iothreadset, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "id", .arg2_required = 1, .options = opts_iothreadset,
      .summary = "change a running IOThread's polling and thread pool values" },
    { .name = "domdirtyrate-calc", .run = cmd_domdirtyrate_calc, .arg = "domain",
      .lookup = BY_ANY, .options = opts_dirtyrate,
      .summary = "start measuring a domain's memory dirty rate (domstats --dirtyrate)" },
    { .name = "domxml-to-native", .run = cmd_domxml_to_native, .arg = "format", .arg2 = "xml",
      .options = opts_domxml_to_native,
      .summary = "the native configuration (qemu-argv) of a domain or an XML file" },
    { .name = NULL },
};
