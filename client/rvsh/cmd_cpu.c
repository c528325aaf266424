/* rvsh: the host's CPU models and memory, and the storage pool types:
 * cpu-compare, cpu-baseline, hypervisor-cpu-compare,
 * hypervisor-cpu-baseline, nodememstats, pool-capabilities (as virsh
 * prints them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "rvsh.h"

/* The <cpu> definitions in a file, as virsh finds them: the root <cpu>,
 * or every <cpu> of a domain or host capabilities XML (not the topology's
 * CPUs), or <cpu> elements one after another; NULL after an error line. */
static char **cpu_defs(const char *path, unsigned int *n)
{
    char *text = NULL;
    *n = 0;
    if (read_file(path, &text) < 0)
        return NULL;
    int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlDoc *doc = xmlReadMemory(text, (int)strlen(text), path, NULL, opts);
    if (!doc) {
        /* Several <cpu> roots: parse them inside one. */
        char *wrapped = NULL;
        if (asprintf(&wrapped, "<container>%s</container>", text) >= 0)
            doc = xmlReadMemory(wrapped, (int)strlen(wrapped), path, NULL, opts);
        free(wrapped);
    }
    free(text);
    char **defs = NULL;
    xmlNode *stack[64];
    int depth = 0;
    if (doc && (stack[0] = xmlDocGetRootElement(doc)))
        depth = 1;
    while (depth > 0) {
        xmlNode *e = stack[--depth];
        if (strcmp((const char *)e->name, "cpu") == 0) {
            xmlBuffer *buf = xmlBufferCreate();
            char **more = realloc(defs, sizeof(char *) * (*n + 2));
            if (buf && more) {
                defs = more;
                xmlNodeDump(buf, doc, e, 0, 0);
                defs[(*n)++] = strdup((const char *)xmlBufferContent(buf));
                defs[*n] = NULL;
            }
            xmlBufferFree(buf);
            continue;
        }
        if (strcmp((const char *)e->name, "cpus") == 0)
            continue;
        /* Children in document order: pushed last to first. */
        xmlNode *kids[64];
        int nk = 0;
        for (xmlNode *c = e->children; c && nk < 64; c = c->next)
            if (c->type == XML_ELEMENT_NODE)
                kids[nk++] = c;
        while (nk > 0 && depth < 64)
            stack[depth++] = kids[--nk];
    }
    xmlFreeDoc(doc);
    if (!*n) {
        error_line("File '%s' does not contain any <cpu> element or valid domain XML, host "
                   "capabilities XML, or domain capabilities XML", path);
        free(defs);
        return NULL;
    }
    return defs;
}

static void free_defs(char **defs)
{
    for (size_t i = 0; defs && defs[i]; i++)
        free(defs[i]);
    free(defs);
}

/* Option order for the hypervisor variants: virttype, emulator, arch,
 * machine, then the flags. */
static int compare(shell *sh, const command *cmd, const cmd_args *a, int hypervisor)
{
    unsigned int n, flags = 0;
    char **defs = cpu_defs(a->value, &n);
    if (!defs)
        return -1;
    if (has_opt(cmd, a, "error"))
        flags |= RV_CONNECT_COMPARE_CPU_FAIL_INCOMPATIBLE;
    if (has_opt(cmd, a, "validate"))
        flags |= RV_CONNECT_COMPARE_CPU_VALIDATE_XML;
    int result = hypervisor ? rv_connect_compare_hypervisor_cpu(sh->conn, a->opt_values[1],
                                                                a->opt_values[2], a->opt_values[3],
                                                                a->opt_values[0], defs[0], flags)
                            : rv_connect_compare_cpu(sh->conn, defs[0], flags);
    free_defs(defs);
    const char *what = hypervisor ? "the CPU provided by hypervisor on the host" : "host CPU";
    switch (result) {
    case RV_CPU_COMPARE_INCOMPATIBLE:
        printf("CPU described in %s is incompatible with %s\n", a->value, what);
        return -1;
    case RV_CPU_COMPARE_IDENTICAL:
        printf("CPU described in %s is identical to %s\n", a->value, what);
        return 0;
    case RV_CPU_COMPARE_SUPERSET:
        printf("%s is a superset of CPU described in %s\n",
               hypervisor ? "The CPU provided by hypervisor on the host" : "Host CPU", a->value);
        return 0;
    default:
        error_line("Failed to compare %s CPU with %s", hypervisor ? "hypervisor" : "host",
                   a->value);
        lib_error();
        return -1;
    }
}

static int cmd_cpu_compare(shell *sh, const command *cmd, const cmd_args *a)
{
    return compare(sh, cmd, a, 0);
}

static int cmd_hypervisor_cpu_compare(shell *sh, const command *cmd, const cmd_args *a)
{
    return compare(sh, cmd, a, 1);
}

static int baseline(shell *sh, const command *cmd, const cmd_args *a, int hypervisor)
{
    unsigned int n, flags = 0;
    char **defs = cpu_defs(a->value, &n);
    if (!defs)
        return -1;
    if (has_opt(cmd, a, "features"))
        flags |= RV_CONNECT_BASELINE_CPU_EXPAND_FEATURES;
    if (has_opt(cmd, a, "migratable"))
        flags |= RV_CONNECT_BASELINE_CPU_MIGRATABLE;
    const char *const *list = (const char *const *)defs;
    char *cpu = hypervisor ? rv_connect_baseline_hypervisor_cpu(sh->conn, a->opt_values[1],
                                                               a->opt_values[2], a->opt_values[3],
                                                               a->opt_values[0], list, n, flags)
                           : rv_connect_baseline_cpu(sh->conn, list, n, flags);
    free_defs(defs);
    if (!cpu) {
        lib_error();
        return -1;
    }
    fputs(cpu, stdout);
    free(cpu);
    return 0;
}

static int cmd_cpu_baseline(shell *sh, const command *cmd, const cmd_args *a)
{
    return baseline(sh, cmd, a, 0);
}

static int cmd_hypervisor_cpu_baseline(shell *sh, const command *cmd, const cmd_args *a)
{
    return baseline(sh, cmd, a, 1);
}

static int cmd_nodememstats(shell *sh, const command *cmd, const cmd_args *a)
{
    int cell = -1;
    const char *text = a->opt_values[0];
    if (text && (parse_int(text, &cell) < 0 || cell < 0)) {
        error_line("Numeric value '%s' for <cell> option is malformed or out of range", text);
        return -1;
    }
    rv_node_cpu_counter *stats = NULL;
    int n = rv_node_get_memory_stats(sh->conn, cell, &stats, 0);
    if (n < 0) {
        error_line("Unable to get number of memory stats");
        lib_error();
        return -1;
    }
    int json = sh->json || has_opt(cmd, a, "json"), first = 1;
    if (json)
        putchar('{');
    for (int i = 0; i < n; i++) {
        if (json)
            json_num_field(stats[i].field, stats[i].value, 1, &first);
        else
            printf("%-7s: %20llu KiB\n", stats[i].field, stats[i].value);
    }
    if (json)
        puts("}");
    free(stats);
    return 0;
}

static int cmd_pool_capabilities(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd, (void)a;
    char *xml = rv_connect_get_storage_pool_capabilities(sh->conn, 0);
    if (!xml) {
        error_line("failed to get storage pool capabilities");
        lib_error();
        return -1;
    }
    printf("%s\n", xml);     /* virsh adds a line */
    free(xml);
    return 0;
}

static const char *const opts_compare[] = { "error", "validate", NULL };
static const char *const opts_baseline[] = { "features", "migratable", NULL };
/* Order matters: the hypervisor arguments are read by index. */
static const char *const opts_hv_compare[] = { "virttype=", "emulator=", "arch=", "machine=",
                                               "error", "validate", NULL };
static const char *const opts_hv_baseline[] = { "virttype=", "emulator=", "arch=", "machine=",
                                                "features", "migratable", NULL };
static const char *const opts_memstats[] = { "cell=", "json", NULL };

const command rvsh_cpu_commands[] = {
    { .name = "cpu-compare", .run = cmd_cpu_compare, .arg = "file", .options = opts_compare,
      .summary = "compare the host CPU with a CPU described in a file" },
    { .name = "cpu-baseline", .run = cmd_cpu_baseline, .arg = "file", .options = opts_baseline,
      .summary = "the baseline CPU of the CPUs described in a file" },
    { .name = "hypervisor-cpu-compare", .run = cmd_hypervisor_cpu_compare, .arg = "file",
      .options = opts_hv_compare,
      .summary = "compare the CPU the hypervisor provides with a CPU described in a file" },
    { .name = "hypervisor-cpu-baseline", .run = cmd_hypervisor_cpu_baseline, .arg = "file",
      .options = opts_hv_baseline,
      .summary = "the baseline CPU the hypervisor can provide for the CPUs in a file" },
    { .name = "nodememstats", .run = cmd_nodememstats, .options = opts_memstats,
      .summary = "the host's memory (or a NUMA cell's, --cell)" },
    { .name = "pool-capabilities", .run = cmd_pool_capabilities,
      .summary = "the storage pool types the driver supports (XML)" },
    { .name = NULL },
};
