/* rvsh: the host readers: sysinfo, freecell, nodecpustats, nodecpumap,
 * cpu-models, maxvcpus, domcapabilities (as virsh prints them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rvsh.h"

static int want_json(shell *sh, const command *cmd, const cmd_args *a)
{
    return sh->json || has_opt(cmd, a, "json");
}

/* sysinfo and domcapabilities print the XML as the server wrote it. */
static int print_xml(char *xml)
{
    if (!xml)
        return -1;
    fputs(xml, stdout);
    free(xml);
    return 0;
}

static int cmd_sysinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    char *xml = rv_connect_get_sysinfo(sh->conn, 0);
    if (!xml) {
        error_line("failed to get sysinfo");
        lib_error();
    }
    return print_xml(xml);
}

static int cmd_domcapabilities(shell *sh, const command *cmd, const cmd_args *a)
{
    /* Option order: virttype, emulatorbin, arch, machine. */
    char *xml = rv_connect_get_domain_capabilities(sh->conn, a->opt_values[1], a->opt_values[2],
                                                   a->opt_values[3], a->opt_values[0], 0);
    (void)cmd;
    if (!xml) {
        error_line("failed to get emulator capabilities");
        lib_error();
    }
    return print_xml(xml);
}

/* The ids of the host's NUMA cells, from its capabilities; -1 on error. */
static int cell_ids(shell *sh, unsigned int **ids)
{
    char *xml = rv_connect_get_capabilities(sh->conn);
    if (!xml) {
        lib_error();
        return -1;
    }
    xmlDoc *doc = parse_xml(xml, "capabilities");
    free(xml);
    if (!doc)
        return -1;
    xmlNode *cells = xml_child(xml_child(xml_child(xmlDocGetRootElement(doc), "host"),
                                         "topology"), "cells");
    int n = 0;
    for (xmlNode *c = cells ? cells->children : NULL; c; c = c->next)
        n += c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, "cell") == 0;
    *ids = calloc((size_t)n + 1, sizeof(**ids));
    int k = 0;
    for (xmlNode *c = cells ? cells->children : NULL; *ids && c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "cell") != 0)
            continue;
        char *id = xml_attr(c, "id");
        int v;
        if (!id || parse_int(id, &v) < 0 || v < 0 || v > 1023) {
            error_line("unable to determine the NUMA cell ids");
            free(id);
            free(*ids);
            xmlFreeDoc(doc);
            return -1;
        }
        free(id);
        (*ids)[k++] = (unsigned int)v;
    }
    xmlFreeDoc(doc);
    if (!*ids) {
        error_line("out of memory");
        return -1;
    }
    return n;
}

static int cmd_freecell(shell *sh, const command *cmd, const cmd_args *a)
{
    int json = want_json(sh, cmd, a), all = has_opt(cmd, a, "all");
    if (all && a->value) {
        error_line("Options --all and --cellno are mutually exclusive");
        return -1;
    }
    int cell;
    if (a->value && (parse_int(a->value, &cell) < 0 || cell < 0)) {
        error_line("Numeric value '%s' for <cellno> option is malformed or out of range",
                   a->value);
        return -1;
    }
    if (!all) {
        unsigned long long bytes;
        int rc = a->value ? rv_node_get_cells_free_memory(sh->conn, &bytes, cell, 1)
                          : rv_node_get_free_memory(sh->conn, &bytes);
        if (rc < 0) {
            lib_error();
            return -1;
        }
        if (json && a->value)
            printf("{\"cells\": [{\"cell\": %d, \"free_kib\": %llu}]}\n", cell, bytes / 1024);
        else if (json)
            printf("{\"total_kib\": %llu}\n", bytes / 1024);
        else if (a->value)
            printf("%d: %llu KiB\n", cell, bytes / 1024);
        else
            printf("Total: %llu KiB\n", bytes / 1024);
        return 0;
    }
    unsigned int *ids = NULL, max_id = 0;
    int n = cell_ids(sh, &ids);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (ids[i] > max_id)
            max_id = ids[i];
    unsigned long long *free_mem = calloc((size_t)max_id + 1, sizeof(*free_mem));
    int rc = -1;
    if (!free_mem) {
        error_line("out of memory");
    } else if (rv_node_get_cells_free_memory(sh->conn, free_mem, 0, (int)max_id + 1) < 0) {
        error_line("failed to get free memory for NUMA nodes");
        lib_error();
    } else {
        unsigned long long total = 0;
        if (json)
            fputs("{\"cells\": [", stdout);
        for (int i = 0; i < n; i++) {
            if (json)
                printf("%s{\"cell\": %u, \"free_kib\": %llu}", i ? ", " : "", ids[i],
                       free_mem[ids[i]] / 1024);
            else
                printf("%5u: %10llu KiB\n", ids[i], free_mem[ids[i]] / 1024);
            total += free_mem[ids[i]];
        }
        if (json)
            printf("], \"total_kib\": %llu}\n", total / 1024);
        else
            printf("--------------------\n%5s: %10llu KiB\n", "Total", total / 1024);
        rc = 0;
    }
    free(free_mem);
    free(ids);
    return rc;
}

/* nodecpustats: the counters virsh knows, in its order. */
enum { CPU_USER, CPU_SYSTEM, CPU_IDLE, CPU_IOWAIT, CPU_INTR, CPU_USAGE, CPU_NCOUNTERS };
static const char *const cpu_labels[CPU_NCOUNTERS] = {
    "user:", "system:", "idle:", "iowait:", "intr:", "usage:",
};
static const char *const cpu_fields[CPU_NCOUNTERS] = {
    "user", "kernel", "idle", "iowait", "intr", "utilization",
};

static int read_cpu_counters(shell *sh, int cpu, unsigned long long *values, int *present)
{
    rv_node_cpu_counter *stats = NULL;
    int n = rv_node_get_cpu_stats(sh->conn, cpu, &stats, 0);
    if (n < 0) {
        error_line("Unable to get node cpu stats");
        lib_error();
        return -1;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < CPU_NCOUNTERS; k++)
            if (strcmp(stats[i].field, cpu_fields[k]) == 0) {
                values[k] = stats[i].value;
                present[k] = 1;
            }
    free(stats);
    return 0;
}

/* (no time passed: virsh prints "-nan%", JSON has null) */
static void json_percent(double v)
{
    if (isfinite(v))
        printf("%.1f", v);
    else
        fputs("null", stdout);
}

static int cmd_nodecpustats(shell *sh, const command *cmd, const cmd_args *a)
{
    int cpu = -1, json = want_json(sh, cmd, a), percent = has_opt(cmd, a, "percent");
    if (a->value && (parse_int(a->value, &cpu) < 0 || cpu < 0)) {
        error_line("Invalid value for number of CPU");
        return -1;
    }
    unsigned long long v[2][CPU_NCOUNTERS] = { { 0 } };
    int present[CPU_NCOUNTERS] = { 0 };
    if (read_cpu_counters(sh, cpu, v[0], present) < 0)
        return -1;
    int first = 1;
    if (!percent) {
        if (json)
            putchar('{');
        for (int k = 0; k < CPU_USAGE; k++) {
            if (!present[k])
                continue;
            if (json)
                json_num_field(cpu_fields[k], v[0][k], 1, &first);
            else
                printf("%-15s %20llu\n", cpu_labels[k], v[0][k]);
        }
        if (json)
            puts("}");
        return 0;
    }
    double pct[CPU_NCOUNTERS] = { 0 };
    if (present[CPU_USAGE]) {
        pct[CPU_USAGE] = (double)v[0][CPU_USAGE];
        pct[CPU_IDLE] = 100 - pct[CPU_USAGE];
    } else {
        /* Shares of the time that passed over one second, as virsh. */
        sleep(1);
        if (read_cpu_counters(sh, cpu, v[1], present) < 0)
            return -1;
        double total = 0;
        for (int k = 0; k < CPU_USAGE; k++)
            total += (double)(v[1][k] - v[0][k]);
        for (int k = 0; k < CPU_USAGE; k++)
            pct[k] = (double)(v[1][k] - v[0][k]) / total * 100;
        pct[CPU_USAGE] = (double)(v[1][CPU_USER] - v[0][CPU_USER] + v[1][CPU_SYSTEM] -
                                  v[0][CPU_SYSTEM]) / total * 100;
    }
    if (json) {
        putchar('{');
        json_key("usage", &first);
        json_percent(pct[CPU_USAGE]);
        for (int k = 0; k < CPU_USAGE; k++) {
            if (!present[k] && !(k == CPU_IDLE && present[CPU_USAGE]))
                continue;
            json_key(cpu_fields[k], &first);
            json_percent(pct[k]);
        }
        puts("}");
        return 0;
    }
    printf("%-15s %5.1lf%%\n", "usage:", pct[CPU_USAGE]);
    if (present[CPU_USAGE]) {
        printf("%-15s %5.1lf%%\n", "idle:", pct[CPU_IDLE]);
        return 0;
    }
    for (int k = 0; k < CPU_USAGE; k++)
        if (present[k])
            printf("%-15s %5.1lf%%\n", cpu_labels[k], pct[k]);
    return 0;
}

static int cmd_nodecpumap(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned char *map = NULL;
    unsigned int online = 0;
    int present = rv_node_get_cpu_map(sh->conn, &map, &online, 0);
    if (present < 0) {
        error_line("Unable to get cpu map");
        lib_error();
        return -1;
    }
    int rc = 0;
    if (want_json(sh, cmd, a)) {
        printf("{\"present\": %d, \"online\": %u, \"online_cpus\": [", present, online);
        for (int c = 0, k = 0; c < present; c++)
            if (map[c / 8] & (1u << (c % 8)))
                printf("%s%d", k++ ? ", " : "", c);
        puts("]}");
    } else {
        printf("%-15s %d\n%-15s %u\n%-15s ", "CPUs present:", present, "CPUs online:", online,
               "CPU map:");
        if (has_opt(cmd, a, "pretty")) {
            char *ranges = cpumap_ranges(map, present);
            if (ranges)
                puts(ranges);
            else
                error_line("out of memory"), rc = -1;
            free(ranges);
        } else {
            for (int c = 0; c < present; c++)
                putchar(map[c / 8] & (1u << (c % 8)) ? 'y' : '-');
            putchar('\n');
        }
    }
    free(map);
    return rc;
}

static int cmd_cpu_models(shell *sh, const command *cmd, const cmd_args *a)
{
    char **models = NULL;
    int n = rv_connect_get_cpu_model_names(sh->conn, a->value, &models, 0);
    if (n < 0) {
        error_line("failed to get CPU model names");
        lib_error();
        return -1;
    }
    int json = want_json(sh, cmd, a);
    if (json)
        putchar('[');
    else if (n == 0)
        puts("all CPU models are accepted");
    for (int i = 0; i < n; i++) {
        if (json) {
            fputs(i ? ", " : "", stdout);
            json_string(models[i]);
        } else {
            puts(models[i]);
        }
        free(models[i]);
    }
    if (json)
        puts("]");
    free(models);
    return 0;
}

/* As virsh: the domain capabilities' <vcpu max='N'/> when the driver
 * has them, else the connection's own answer. */
static int cmd_maxvcpus(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *type = a->opt_values[0];
    int max = -1;
    char *caps = rv_connect_get_domain_capabilities(sh->conn, NULL, NULL, NULL, type, 0);
    xmlDoc *doc = caps ? parse_xml(caps, "domain capabilities") : NULL;
    char *text = doc ? xml_attr(xml_child(xmlDocGetRootElement(doc), "vcpu"), "max") : NULL;
    if (text && (parse_int(text, &max) < 0 || max < 0))
        max = -1;
    free(text);
    xmlFreeDoc(doc);
    free(caps);
    if (max < 0 && (max = rv_connect_get_max_vcpus(sh->conn, type)) < 0) {
        lib_error();
        return -1;
    }
    if (want_json(sh, cmd, a))
        printf("{\"max_vcpus\": %d}\n", max);
    else
        printf("%d\n", max);
    return 0;
}

static const char *const opts_freecell[] = { "all", "json", NULL };
static const char *const opts_cpustats[] = { "percent", "json", NULL };
static const char *const opts_cpumap[] = { "pretty", "json", NULL };
static const char *const opts_maxvcpus[] = { "type=", "json", NULL };
/* Order matters: cmd_domcapabilities reads the values by index. */
static const char *const opts_domcaps[] = { "virttype=", "emulatorbin=", "arch=", "machine=",
                                            NULL };

const command rvsh_node_commands[] = {
    { .name = "sysinfo", .run = cmd_sysinfo,
      .summary = "the host's SMBIOS information (XML)" },
    { .name = "freecell", .run = cmd_freecell, .arg = "cellno", .arg_optional = 1,
      .options = opts_freecell,
      .summary = "free memory of the host, of a NUMA cell, or of each (--all)" },
    { .name = "nodecpustats", .run = cmd_nodecpustats, .arg = "cpu", .arg_optional = 1,
      .options = opts_cpustats,
      .summary = "the host's CPU time counters (--percent: shares over one second)" },
    { .name = "nodecpumap", .run = cmd_nodecpumap,
      .options = opts_cpumap,
      .summary = "the host's CPUs present and online" },
    { .name = "cpu-models", .run = cmd_cpu_models, .arg = "arch",
      .options = opts_json,
      .summary = "the CPU models known for an architecture" },
    { .name = "maxvcpus", .run = cmd_maxvcpus,
      .options = opts_maxvcpus,
      .summary = "the most virtual CPUs a guest may have" },
    { .name = "domcapabilities", .run = cmd_domcapabilities,
      .options = opts_domcaps,
      .summary = "domain capabilities (XML)" },
    { .name = NULL },
};
