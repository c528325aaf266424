/* rvsh: the statistics commands (as virsh prints them). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rvsh.h"

static int cmd_dommemstat(shell *sh, const command *cmd, const cmd_args *a)
{
    /* libvirt's virDomainMemoryStatTags names, by tag. */
    static const char *const names[] = {
        "swap_in", "swap_out", "major_fault", "minor_fault", "unused", "available",
        "actual", "rss", "usable", "last_update", "disk_caches", "hugetlb_pgalloc",
        "hugetlb_pgfail",
    };
    enum { NSTATS = sizeof(names) / sizeof(names[0]) };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_memory_stat stats[NSTATS];
    const char *name = rv_domain_get_name(dom);     /* (a call resets the last error) */
    int n = rv_domain_memory_stats(dom, stats, NSTATS, 0);
    if (n < 0) {
        error_line("Failed to get memory statistics for domain %s", name);
        lib_error();
    }
    int json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (n >= 0 && json)
        putchar('{');
    for (int i = 0; i < n; i++) {
        if (stats[i].tag < 0 || stats[i].tag >= NSTATS)
            continue;
        if (json)
            json_num_field(names[stats[i].tag], stats[i].val, 1, &first);
        else
            printf("%s %llu\n", names[stats[i].tag], stats[i].val);
    }
    if (n >= 0 && json)
        puts("}");
    rv_domain_free(dom);
    return n < 0 ? -1 : 0;
}

static int cmd_domblkstat(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *device = a->value2 ? a->value2 : "";
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_block_stats st;
    int rc = rv_domain_block_stats(dom, device, &st);
    if (rc < 0) {
        error_line("Failed to get block stats %s %s", a->value, device);
        lib_error();
    } else {
        const struct { const char *name; long long v; } rows[] = {
            { "rd_req", st.rd_req }, { "rd_bytes", st.rd_bytes }, { "wr_req", st.wr_req },
            { "wr_bytes", st.wr_bytes }, { "errs", st.errs },
        };
        int json = sh->json || has_opt(cmd, a, "json"), first = 1;
        if (json)
            putchar('{');
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
            if (json)           /* -1: the driver does not count it */
                json_num_field(rows[i].name, (unsigned long long)rows[i].v, rows[i].v >= 0,
                               &first);
            else if (rows[i].v >= 0)
                printf("%s %s %lld\n", device, rows[i].name, rows[i].v);
        }
        if (json)
            puts("}");
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_vcpuinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const states[] = { "offline", "running", "blocked" };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = -1, maxcpu = rv_node_get_cpu_map(sh->conn, NULL, NULL, 0);
    rv_domain_info info;
    rv_vcpu *vcpus = NULL;
    unsigned char *maps = NULL;
    if (maxcpu < 1 || rv_domain_get_info(dom, &info) < 0 || info.nr_virt_cpu < 1) {
        lib_error();
        goto out;
    }
    int maplen = (maxcpu + 7) / 8;
    vcpus = calloc(info.nr_virt_cpu, sizeof(*vcpus));
    maps = calloc(info.nr_virt_cpu, (size_t)maplen);
    if (!vcpus || !maps) {
        error_line("out of memory");
        goto out;
    }
    int n = rv_domain_get_vcpus(dom, vcpus, (int)info.nr_virt_cpu, maps, maplen);
    /* A shut-off domain has no vcpus running: like virsh, show where they
     * may run, from its definition. */
    int pinned_only = n < 0 && rv_domain_is_active(dom) == 0;
    if (pinned_only) {
        n = rv_domain_get_vcpu_pin_info(dom, (int)info.nr_virt_cpu, maps, maplen,
                                        RV_DOMAIN_VCPU_CONFIG);
        for (int i = 0; i < n; i++)
            vcpus[i] = (rv_vcpu){ .number = (unsigned int)i, .state = -1, .cpu = -1 };
    }
    if (n < 0) {
        lib_error();
        goto out;
    }
    char *affinity = malloc((size_t)maxcpu + 1);
    if (!affinity) {
        error_line("out of memory");
        goto out;
    }
    int json = sh->json || has_opt(cmd, a, "json");
    if (json)
        putchar('[');
    for (int i = 0; json && i < n; i++) {
        const rv_vcpu *v = &vcpus[i];
        int first = 1;
        for (int c = 0; c < maxcpu; c++)
            affinity[c] = maps[(size_t)i * maplen + c / 8] & (1u << (c % 8)) ? 'y' : '-';
        affinity[maxcpu] = '\0';
        printf("%s{", i ? ", " : "");
        json_num_field("vcpu", v->number, 1, &first);
        json_num_field("cpu", (unsigned long long)v->cpu, v->cpu >= 0, &first);
        json_str_field("state", v->state >= 0 && v->state < 3 ? states[v->state] : NULL,
                       &first);
        json_num_field("cpu_time_ns", v->cpu_time, !pinned_only, &first);
        json_str_field("affinity", affinity, &first);
        putchar('}');
    }
    free(affinity);
    if (json)
        puts("]");
    for (int i = 0; !json && i < n; i++) {
        const rv_vcpu *v = &vcpus[i];
        printf("%-15s %u\n", "VCPU:", v->number);
        if (pinned_only) {
            /* (virsh's "CPU time" has no colon here) */
            printf("%-15s %s\n%-15s %s\n%-15s %s\n", "CPU:", "N/A", "State:", "N/A",
                   "CPU time", "N/A");
        } else {
            printf("%-15s %d\n", "CPU:", v->cpu);
            printf("%-15s %s\n", "State:",
                   v->state >= 0 && v->state < 3 ? states[v->state] : "no state");
            printf("%-15s %.1fs\n", "CPU time:", (double)v->cpu_time / 1e9);
        }
        printf("%-15s ", "CPU Affinity:");
        for (int c = 0; c < maxcpu; c++)
            putchar(maps[(size_t)i * maplen + c / 8] & (1u << (c % 8)) ? 'y' : '-');
        putchar('\n');
        if (i < n - 1)
            putchar('\n');
    }
    rc = 0;
out:
    free(vcpus);
    free(maps);
    rv_domain_free(dom);
    return rc;
}

static int cmd_vcpucount(shell *sh, const command *cmd, const cmd_args *a)
{
    /* The four counts virsh shows without options; one the domain cannot
     * give (live ones of a shut-off domain) is left out. */
    static const struct { const char *what, *where; unsigned int flags; } rows[] = {
        { "maximum", "config", RV_DOMAIN_VCPU_CONFIG | RV_DOMAIN_VCPU_MAXIMUM },
        { "maximum", "live", RV_DOMAIN_VCPU_LIVE | RV_DOMAIN_VCPU_MAXIMUM },
        { "current", "config", RV_DOMAIN_VCPU_CONFIG },
        { "current", "live", RV_DOMAIN_VCPU_LIVE },
    };
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int shown = 0, json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (json)
        putchar('{');
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int n = rv_domain_get_vcpus_flags(dom, rows[i].flags);
        if (json) {
            char key[32];
            snprintf(key, sizeof(key), "%s_%s", rows[i].what, rows[i].where);
            json_num_field(key, (unsigned long long)n, n >= 0, &first);
        } else if (n >= 0) {
            printf("%-12s %-12s %3d\n", rows[i].what, rows[i].where, n);
        }
        shown += n >= 0;
    }
    if (json)
        puts("}");
    if (!shown)
        lib_error();
    rv_domain_free(dom);
    return shown ? 0 : -1;
}

static int cmd_schedinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int nparams = 0, rc = -1;
    rv_typed_parameter *params = NULL;
    char *type = rv_domain_get_scheduler_type(dom, &nparams);
    int json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (!json)
        printf("%-15s: %s\n", "Scheduler", type ? type : "Unknown");
    if (!type) {
        lib_error();
        goto out;
    }
    if (json) {
        fputs("{\"scheduler\": ", stdout);
        json_string(type);
        fputs(", \"params\": {", stdout);
    }
    if (nparams > 0) {
        params = calloc((size_t)nparams, sizeof(*params));
        if (!params) {
            error_line("out of memory");
            goto out;
        }
        if (rv_domain_get_scheduler_parameters(dom, params, &nparams) < 0) {
            lib_error();
            goto out;
        }
        for (int i = 0; json && i < nparams; i++) {
            const rv_typed_parameter *p = &params[i];
            json_key(p->field, &first);
            switch (p->type) {
            case RV_PARAM_INT: printf("%d", p->value.i); break;
            case RV_PARAM_UINT: printf("%u", p->value.ui); break;
            case RV_PARAM_LLONG: printf("%lld", p->value.l); break;
            case RV_PARAM_ULLONG: printf("%llu", p->value.ul); break;
            case RV_PARAM_DOUBLE: printf("%.17g", p->value.d); break;
            case RV_PARAM_BOOLEAN: fputs(p->value.b ? "true" : "false", stdout); break;
            case RV_PARAM_STRING: json_string(p->value.s ? p->value.s : ""); break;
            default: fputs("null", stdout); break;
            }
        }
        for (int i = 0; !json && i < nparams; i++) {
            const rv_typed_parameter *p = &params[i];
            printf("%-15s: ", p->field);
            switch (p->type) {
            case RV_PARAM_INT: printf("%d\n", p->value.i); break;
            case RV_PARAM_UINT: printf("%u\n", p->value.ui); break;
            case RV_PARAM_LLONG: printf("%lld\n", p->value.l); break;
            case RV_PARAM_ULLONG: printf("%llu\n", p->value.ul); break;
            case RV_PARAM_DOUBLE: printf("%f\n", p->value.d); break;
            case RV_PARAM_BOOLEAN: printf("%s\n", p->value.b ? "yes" : "no"); break;
            case RV_PARAM_STRING: printf("%s\n", p->value.s ? p->value.s : ""); break;
            default: printf("unknown\n"); break;
            }
        }
        rv_typed_parameters_clear(params, nparams);
    }
    if (json)
        puts("}}");
    rc = 0;
out:
    free(params);
    free(type);
    rv_domain_free(dom);
    return rc;
}

const command rvsh_stats_commands[] = {
    { .name = "dommemstat", .run = cmd_dommemstat, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "a domain's memory statistics" },
    { .name = "domblkstat", .run = cmd_domblkstat, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "device", .options = opts_json,
      .summary = "a disk's I/O counters (domblkstat DOMAIN DEVICE)" },
    { .name = "vcpuinfo", .run = cmd_vcpuinfo, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "a running domain's virtual CPUs" },
    { .name = "vcpucount", .run = cmd_vcpucount, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "how many virtual CPUs a domain has" },
    { .name = "schedinfo", .run = cmd_schedinfo, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "a domain's scheduler and its parameters" },
    { .name = NULL },
};
