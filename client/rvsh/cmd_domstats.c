/* rvsh: a domain's devices, counters, tuning and pinning, its guest's
 * view (addresses, host name, clock) and the bulk statistics, as virsh
 * prints them: domiflist, domblklist, domblkinfo, domifstat, memtune,
 * blkiotune, numatune, domiftune, blkdeviotune, vcpupin, emulatorpin,
 * iothreadinfo, domifaddr, domhostname, domtime, domstats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rvsh.h"

/* libvirt's "no limit" for the memory tuning values (2^53 - 1). */
#define MEMORY_PARAM_UNLIMITED 9007199254740991ULL

static int want_json(shell *sh, const command *cmd, const cmd_args *a)
{
    return sh->json || has_opt(cmd, a, "json");
}

/* ---- from the domain's XML ---- */

/* The domain's XML parsed, or NULL after an error line. */
static xmlDoc *domain_doc(rv_dom *dom, int inactive)
{
    char *xml = rv_domain_get_xml_desc(dom, inactive ? RV_DOMAIN_XML_INACTIVE : 0);
    if (!xml) {
        lib_error();
        return NULL;
    }
    xmlDoc *doc = parse_xml(xml, "domain XML");
    free(xml);
    return doc;
}

/* The first of the attributes names (NULL-terminated) n's child child has. */
static char *first_attr(const xmlNode *n, const char *child, const char *const *names)
{
    xmlNode *c = xml_child(n, child);
    for (size_t i = 0; c && names[i]; i++) {
        char *v = xml_attr(c, names[i]);
        if (v)
            return v;
    }
    return NULL;
}

/* A table of rows of ncols cells built from the <devices> children
 * called element, through row(); printed as virsh or as JSON objects
 * with keys. */
typedef int (*row_fn)(const xmlNode *dev, char **cells);

static int device_table(shell *sh, const command *cmd, const cmd_args *a, const char *element,
                        const char *const *heads, const char *const *keys, size_t ncols,
                        row_fn row)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    xmlDoc *doc = domain_doc(dom, has_opt(cmd, a, "inactive"));
    rv_domain_free(dom);
    if (!doc)
        return -1;
    xmlNode *devices = xml_child(xmlDocGetRootElement(doc), "devices");
    size_t n = 0, k = 0;
    for (xmlNode *d = devices ? devices->children : NULL; d; d = d->next)
        n += d->type == XML_ELEMENT_NODE && strcmp((const char *)d->name, element) == 0;
    char **cells = calloc(n * ncols + 1, sizeof(*cells));
    int rc = cells ? 0 : -1;
    for (xmlNode *d = devices ? devices->children : NULL; cells && d; d = d->next)
        if (d->type == XML_ELEMENT_NODE && strcmp((const char *)d->name, element) == 0)
            if (row(d, cells + ncols * k++) < 0)
                rc = -1;
    for (size_t i = 0; rc == 0 && i < n * ncols; i++)
        if (!cells[i])
            rc = -1;
    if (rc < 0) {
        error_line("out of memory");
    } else if (want_json(sh, cmd, a)) {
        putchar('[');
        for (size_t r = 0; r < n; r++) {
            int first = 1;
            printf("%s{", r ? ", " : "");
            for (size_t c = 0; c < ncols; c++)
                json_str_field(keys[c], strcmp(cells[r * ncols + c], "-") ? cells[r * ncols + c]
                                                                         : NULL, &first);
            putchar('}');
        }
        puts("]");
    } else {
        print_table(heads, ncols, (const char *const *)cells, n);
    }
    for (size_t i = 0; cells && i < n * ncols; i++)
        free(cells[i]);
    free(cells);
    xmlFreeDoc(doc);
    return rc;
}

static char *or_dash(char *s)
{
    return s ? s : strdup("-");
}

static int interface_row(const xmlNode *dev, char **cells)
{
    static const char *const sources[] = { "bridge", "dev", "network", "name", "path", NULL };
    cells[0] = or_dash(xml_attr(xml_child(dev, "target"), "dev"));
    cells[1] = or_dash(xml_attr(dev, "type"));
    cells[2] = or_dash(first_attr(dev, "source", sources));
    cells[3] = or_dash(xml_attr(xml_child(dev, "model"), "type"));
    cells[4] = or_dash(xml_attr(xml_child(dev, "mac"), "address"));
    return 0;
}

static int cmd_domiflist(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const heads[] = { "Interface", "Type", "Source", "Model", "MAC" };
    static const char *const keys[] = { "interface", "type", "source", "model", "mac" };
    return device_table(sh, cmd, a, "interface", heads, keys, 5, interface_row);
}

static const char *const disk_sources[] = { "file", "dev", "dir", "name", "volume", NULL };

static int disk_row(const xmlNode *dev, char **cells)
{
    cells[0] = or_dash(xml_attr(dev, "type"));
    cells[1] = or_dash(xml_attr(dev, "device"));
    cells[2] = or_dash(xml_attr(xml_child(dev, "target"), "dev"));
    cells[3] = or_dash(first_attr(dev, "source", disk_sources));
    return 0;
}

static int disk_row_short(const xmlNode *dev, char **cells)
{
    cells[0] = or_dash(xml_attr(xml_child(dev, "target"), "dev"));
    cells[1] = or_dash(first_attr(dev, "source", disk_sources));
    return 0;
}

static int cmd_domblklist(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const heads[] = { "Type", "Device", "Target", "Source" };
    static const char *const keys[] = { "type", "device", "target", "source" };
    if (has_opt(cmd, a, "details"))
        return device_table(sh, cmd, a, "disk", heads, keys, 4, disk_row);
    return device_table(sh, cmd, a, "disk", heads + 2, keys + 2, 2, disk_row_short);
}

/* ---- counters and sizes ---- */

/* One size as virsh prints it: bytes, or --human's "1.000 TiB"; "-" for
 * all three when they are all 0 (a disk with nothing in it). */
static char *block_size(unsigned long long bytes, int human, int empty)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    char *s = NULL;
    size_t u = 0;
    while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >= (1ULL << (10 * (u + 1))))
        u++;
    int n = empty   ? asprintf(&s, "-")
            : human ? asprintf(&s, "%.3lf %s", (double)bytes / (double)(1ULL << (10 * u)), units[u])
                    : asprintf(&s, "%llu", bytes);
    return n < 0 ? NULL : s;
}

/* --all: a row per disk of the definition, as virsh's table. */
static int block_info_all(shell *sh, const command *cmd, const cmd_args *a, rv_dom *dom)
{
    int human = has_opt(cmd, a, "human"), json = want_json(sh, cmd, a);
    int active = rv_domain_is_active(dom) == 1;
    xmlDoc *doc = domain_doc(dom, 0);
    if (!doc)
        return -1;
    xmlNode *devices = xml_child(xmlDocGetRootElement(doc), "devices");
    size_t n = 0, rows = 0;
    for (xmlNode *d = devices ? devices->children : NULL; d; d = d->next)
        n += d->type == XML_ELEMENT_NODE && strcmp((const char *)d->name, "disk") == 0;
    char **cells = calloc(n * 4 + 1, sizeof(*cells));
    rv_block_info *infos = calloc(n + 1, sizeof(*infos));
    int rc = cells && infos ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (xmlNode *d = devices ? devices->children : NULL; rc == 0 && d; d = d->next) {
        if (d->type != XML_ELEMENT_NODE || strcmp((const char *)d->name, "disk") != 0)
            continue;
        xmlNode *source = xml_child(d, "source");
        char *target = xml_attr(xml_child(d, "target"), "dev");
        char *protocol = xml_attr(source, "protocol");
        rv_block_info *info = &infos[rows];
        if (source && target && rv_domain_get_block_info(dom, target, info, 0) < 0) {
            /* As virsh: a network disk of a shut-off domain has no sizes
             * to tell, and shows as empty. */
            const rv_error_info *e = rv_last_error();
            if (protocol && !active && e && e->code == RV_ERROR_INTERNAL_ERROR &&
                e->domain == RV_ERROR_FROM_STORAGE) {
                memset(info, 0, sizeof(*info));
            } else {
                lib_error();
                rc = -1;
            }
        }
        int empty = !info->capacity && !info->allocation && !info->physical;
        char **row = cells + rows * 4;
        row[0] = target ? target : strdup("-");
        row[1] = block_size(info->capacity, human, empty);
        row[2] = block_size(info->allocation, human, empty);
        row[3] = block_size(info->physical, human, empty);
        free(protocol);
        rows++;
        for (int k = 0; rc == 0 && k < 4; k++)
            if (!row[k]) {
                error_line("out of memory");
                rc = -1;
            }
    }
    if (rc == 0 && json) {
        putchar('[');
        for (size_t r = 0; r < rows; r++) {
            int first = 1, empty = !infos[r].capacity && !infos[r].allocation && !infos[r].physical;
            printf("%s{", r ? ", " : "");
            json_str_field("target", cells[r * 4], &first);
            json_num_field("capacity", infos[r].capacity, !empty, &first);
            json_num_field("allocation", infos[r].allocation, !empty, &first);
            json_num_field("physical", infos[r].physical, !empty, &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Target", "Capacity", "Allocation", "Physical" };
        print_table(heads, 4, (const char *const *)cells, rows);
    }
    for (size_t i = 0; cells && i < rows * 4; i++)
        free(cells[i]);
    free(cells);
    free(infos);
    xmlFreeDoc(doc);
    return rc;
}

static int cmd_domblkinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    int all = has_opt(cmd, a, "all");
    if (!a->value2 && !all) {
        error_line("command 'domblkinfo' requires <device> option");
        return -1;
    }
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_block_info info;
    int rc = 0, human = has_opt(cmd, a, "human");
    if (all) {
        rc = block_info_all(sh, cmd, a, dom);
    } else if ((rc = rv_domain_get_block_info(dom, a->value2, &info, 0)) < 0) {
        lib_error();
    } else if (want_json(sh, cmd, a)) {
        printf("{\"capacity\": %llu, \"allocation\": %llu, \"physical\": %llu}\n",
               info.capacity, info.allocation, info.physical);
    } else {
        const struct { const char *label; unsigned long long v; } rows[] = {
            { "Capacity:", info.capacity }, { "Allocation:", info.allocation },
            { "Physical:", info.physical },
        };
        for (size_t i = 0; i < 3; i++) {
            char *text = block_size(rows[i].v, human, 0);
            if (!text) {
                error_line("out of memory");
                rc = -1;
                break;
            }
            printf("%-15s %s\n", rows[i].label, text);
            free(text);
        }
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_domifstat(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_interface_stats st;
    const char *name = rv_domain_get_name(dom);
    int rc = rv_domain_interface_stats(dom, a->value2, &st);
    if (rc < 0) {
        error_line("Failed to get interface stats %s %s", name, a->value2);
        lib_error();
    } else {
        const struct { const char *name; long long v; } rows[] = {
            { "rx_bytes", st.rx_bytes }, { "rx_packets", st.rx_packets },
            { "rx_errs", st.rx_errs }, { "rx_drop", st.rx_drop },
            { "tx_bytes", st.tx_bytes }, { "tx_packets", st.tx_packets },
            { "tx_errs", st.tx_errs }, { "tx_drop", st.tx_drop },
        };
        int json = want_json(sh, cmd, a), first = 1;
        if (json)
            putchar('{');
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
            if (json)           /* -1: the driver does not count it */
                json_num_field(rows[i].name, (unsigned long long)rows[i].v, rows[i].v >= 0,
                               &first);
            else if (rows[i].v >= 0)
                printf("%s %s %lld\n", a->value2, rows[i].name, rows[i].v);
        }
        if (json)
            puts("}");
    }
    rv_domain_free(dom);
    return rc;
}

/* ---- tuning parameters ---- */

/* memtune, blkiotune, numatune, domiftune and blkdeviotune read alike:
 * "name           : value" lines, or one JSON object. */
typedef struct tuning {
    const char *name;           /* the command */
    const char *what;           /* "Unable to get number of <what> parameters" */
    int device;                 /* takes a device (value2) */
} tuning;

static const tuning tunings[] = {
    { "memtune", "memory", 0 },
    { "blkiotune", "blkio", 0 },
    { "numatune", "memory", 0 },
    { "domiftune", "interface", 1 },
    { "blkdeviotune", "block I/O throttle", 1 },
};

static const char *numa_mode_name(int mode)
{
    static const char *const names[] = { "strict", "preferred", "interleave", "restrictive" };
    return mode >= 0 && mode < 4 ? names[mode] : "unknown";
}

static int cmd_tuning(shell *sh, const command *cmd, const cmd_args *a)
{
    const tuning *t = NULL;
    for (size_t i = 0; i < sizeof(tunings) / sizeof(tunings[0]); i++)
        if (strcmp(tunings[i].name, cmd->name) == 0)
            t = &tunings[i];
    unsigned int flags;
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    /* As virsh: how many, then that many; each failure says which. */
    rv_typed_parameter *params = NULL;
    int n = 0, rc = 0;
    for (int pass = 0; rc == 0 && pass < 2 && (pass == 0 || n > 0); pass++) {
        if (pass == 1 && !(params = calloc((size_t)n, sizeof(*params)))) {
            error_line("out of memory");
            rv_domain_free(dom);
            return -1;
        }
        if (strcmp(t->name, "memtune") == 0)
            rc = rv_domain_get_memory_parameters(dom, params, &n, flags);
        else if (strcmp(t->name, "blkiotune") == 0)
            rc = rv_domain_get_blkio_parameters(dom, params, &n, flags);
        else if (strcmp(t->name, "numatune") == 0)
            rc = rv_domain_get_numa_parameters(dom, params, &n, flags);
        else if (strcmp(t->name, "domiftune") == 0)
            rc = rv_domain_get_interface_parameters(dom, a->value2, params, &n, flags);
        else
            rc = rv_domain_get_block_io_tune(dom, a->value2, params, &n, flags);
        if (rc < 0) {
            error_line(pass ? "Unable to get %s parameters" : "Unable to get number of %s parameters",
                       t->what);
            lib_error();
        }
    }
    if (rc < 0) {
        free(params);
        rv_domain_free(dom);
        return -1;
    }
    int json = want_json(sh, cmd, a), first = 1;
    if (json)
        putchar('{');
    for (int i = 0; i < n; i++) {
        const rv_typed_parameter *p = &params[i];
        int unlimited = p->type == RV_PARAM_ULLONG && p->value.ul == MEMORY_PARAM_UNLIMITED &&
                        strcmp(t->name, "memtune") == 0;
        int mode = strcmp(p->field, "numa_mode") == 0 && p->type == RV_PARAM_INT;
        char buf[64];
        if (json) {
            json_key(p->field, &first);
            if (unlimited)
                fputs("null", stdout);
            else if (mode)
                json_string(numa_mode_name(p->value.i));
            else
                json_param(p);
        } else {
            printf("%-15s: %s\n", p->field,
                   unlimited ? "unlimited"
                   : mode    ? numa_mode_name(p->value.i)
                             : param_text(p, buf, sizeof(buf)));
        }
    }
    if (json)
        puts("}");
    rv_typed_parameters_free(params, n);
    rv_domain_free(dom);
    return 0;
}

/* ---- pinning ---- */

/* The host's CPU count, for the size of the maps; -1 after an error. */
static int host_cpus(shell *sh)
{
    int n = rv_node_get_cpu_map(sh->conn, NULL, NULL, 0);
    if (n < 1)
        lib_error();
    return n < 1 ? -1 : n;
}

/* One "id: ranges" per map, as a table or JSON; head is the first column. */
static int print_maps(shell *sh, const command *cmd, const cmd_args *a, const char *head,
                      const char *key, const unsigned int *ids, const unsigned char *maps,
                      int n, int maplen, int only)
{
    int json = want_json(sh, cmd, a), rows = 0;
    char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    if (!cells) {
        error_line("out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (only >= 0 && (int)ids[i] != only)
            continue;
        if (asprintf(&cells[rows * 2], "%u", ids[i]) < 0)
            cells[rows * 2] = NULL;
        cells[rows * 2 + 1] = cpumap_ranges(maps + (size_t)i * maplen, maplen * 8);
        rows++;
    }
    int rc = 0;
    for (int i = 0; i < rows * 2; i++)
        if (!cells[i])
            rc = -1;
    if (rc < 0) {
        error_line("out of memory");
    } else if (json) {
        putchar('[');
        for (int r = 0; r < rows; r++)
            printf("%s{\"%s\": %s, \"cpus\": \"%s\"}", r ? ", " : "", key, cells[r * 2],
                   cells[r * 2 + 1]);
        puts("]");
    } else {
        const char *heads[] = { head, "CPU Affinity" };
        print_table(heads, 2, (const char *const *)cells, (size_t)rows);
    }
    for (int i = 0; i < rows * 2; i++)
        free(cells[i]);
    free(cells);
    return rc;
}

static int cmd_vcpupin(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags;
    int only = -1;
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    if (a->opt_values[3] && (parse_int(a->opt_values[3], &only) < 0 || only < 0)) {
        error_line("Numeric value '%s' for <vcpu> option is malformed or out of range",
                   a->opt_values[3]);
        return -1;
    }
    int maxcpu = host_cpus(sh);
    if (maxcpu < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = -1, maplen = (maxcpu + 7) / 8;
    int ncpus = rv_domain_get_vcpus_flags(dom, flags | RV_DOMAIN_VCPU_MAXIMUM);
    unsigned char *maps = ncpus > 0 ? calloc((size_t)ncpus, (size_t)maplen) : NULL;
    unsigned int *ids = ncpus > 0 ? calloc((size_t)ncpus, sizeof(*ids)) : NULL;
    if (ncpus < 0) {
        lib_error();
    } else if (!maps || !ids) {
        error_line("out of memory");
    } else if ((ncpus = rv_domain_get_vcpu_pin_info(dom, ncpus, maps, maplen, flags)) < 0) {
        /* virsh 9.0 prints nothing here, and succeeds: so does rvsh. */
        rc = 0;
    } else if (only >= ncpus) {
        error_line("vcpu %d is out of range of live cpu count %d", only, ncpus);
    } else {
        for (int i = 0; i < ncpus; i++)
            ids[i] = (unsigned int)i;
        rc = print_maps(sh, cmd, a, "VCPU", "vcpu", ids, maps, ncpus, maplen, only);
    }
    free(maps);
    free(ids);
    rv_domain_free(dom);
    return rc;
}

static int cmd_emulatorpin(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags;
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    int maxcpu = host_cpus(sh);
    if (maxcpu < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int maplen = (maxcpu + 7) / 8, rc = -1;
    unsigned char *map = calloc(1, (size_t)maplen);
    char *ranges = NULL;
    if (!map) {
        error_line("out of memory");
    } else if (rv_domain_get_emulator_pin_info(dom, map, maplen, flags) < 0) {
        lib_error();
    } else if (!(ranges = cpumap_ranges(map, maplen * 8))) {
        error_line("out of memory");
    } else {
        if (want_json(sh, cmd, a))
            printf("{\"cpus\": \"%s\"}\n", ranges);
        else
            printf("emulator: CPU Affinity\n----------------------------------\n       *: %s\n",
                   ranges);
        rc = 0;
    }
    free(ranges);
    free(map);
    rv_domain_free(dom);
    return rc;
}

static int cmd_iothreadinfo(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags;
    if (affect_flags(cmd, a, &flags) < 0)
        return -1;
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_iothread_info *info = NULL;
    int n = rv_domain_get_iothread_info(dom, &info, flags), rc = -1;
    rv_domain_free(dom);
    if (n < 0) {
        error_line("Unable to get domain IOThreads information");
        lib_error();
        return -1;
    }
    int maplen = 0;
    for (int i = 0; i < n; i++)
        if (info[i].maplen > maplen)
            maplen = info[i].maplen;
    unsigned int *ids = calloc((size_t)n + 1, sizeof(*ids));
    unsigned char *maps = calloc((size_t)n + 1, (size_t)maplen + 1);
    if (!ids || !maps) {
        error_line("out of memory");
    } else if (n == 0 && !want_json(sh, cmd, a)) {
        /* (virsh prints no newline of its own here) */
        fputs("No IOThreads found for the domain", stdout);
        rc = 0;
    } else {
        for (int i = 0; i < n; i++) {
            ids[i] = info[i].iothread_id;
            if (info[i].maplen)
                memcpy(maps + (size_t)i * maplen, info[i].cpumap, (size_t)info[i].maplen);
        }
        rc = print_maps(sh, cmd, a, "IOThread ID", "iothread", ids, maps, n, maplen, -1);
    }
    free(ids);
    free(maps);
    rv_iothread_info_free(info, n);
    return rc;
}

/* ---- the guest's view ---- */

static int cmd_domifaddr(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const sources[] = { "lease", "agent", "arp" };
    unsigned int source = 0;
    const char *only = a->opt_values[0], *src = a->opt_values[2];
    int full = has_opt(cmd, a, "full");
    if (src) {
        while (source < 3 && strcmp(sources[source], src) != 0)
            source++;
        if (source == 3) {
            error_line("Unknown data source '%s'", src);
            return -1;
        }
    }
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    rv_dom_iface *ifaces = NULL;
    int n = rv_domain_interface_addresses(dom, &ifaces, source, 0);
    rv_domain_free(dom);
    if (n < 0) {
        error_line("Failed to query for interfaces addresses");
        lib_error();
        return -1;
    }
    int json = want_json(sh, cmd, a), shown = 0;
    if (json)
        putchar('[');
    else
        printf(" %-10s %-20s %-8s     %s\n%s%s\n", "Name", "MAC address", "Protocol", "Address",
               "-------------------------------------------------",
               "------------------------------");
    for (int i = 0; i < n; i++) {
        const rv_dom_iface *f = &ifaces[i];
        const char *mac = f->hwaddr ? f->hwaddr : "N/A";
        if (only && strcmp(only, f->name) != 0)
            continue;
        if (json) {
            int first = 1;
            printf("%s{", shown++ ? ", " : "");
            json_str_field("name", f->name, &first);
            json_str_field("mac", f->hwaddr, &first);
            json_key("addresses", &first);
            putchar('[');
            for (unsigned int k = 0; k < f->naddrs; k++) {
                int afirst = 1;
                printf("%s{", k ? ", " : "");
                json_str_field("protocol", f->addrs[k].type == 1 ? "ipv6" : "ipv4", &afirst);
                json_str_field("address", f->addrs[k].addr, &afirst);
                json_num_field("prefix", f->addrs[k].prefix, 1, &afirst);
                putchar('}');
            }
            fputs("]}", stdout);
            continue;
        }
        if (f->naddrs == 0)
            printf(" %-10s %-17s    %-12s %s\n", f->name, mac, "N/A", "N/A");
        for (unsigned int k = 0; k < f->naddrs; k++) {
            char addr[128];
            snprintf(addr, sizeof(addr), "%s/%u", f->addrs[k].addr, f->addrs[k].prefix);
            printf(" %-10s %-17s    %-12s %s\n", full || k == 0 ? f->name : "-",
                   full || k == 0 ? mac : "-", f->addrs[k].type == 1 ? "ipv6" : "ipv4", addr);
        }
    }
    if (json)
        puts("]");
    rv_dom_ifaces_free(ifaces, n);
    return 0;
}

static int cmd_domhostname(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    char *name = rv_domain_get_hostname(dom, 0);
    rv_domain_free(dom);
    if (!name) {
        error_line("failed to get hostname");
        lib_error();
        return -1;
    }
    if (want_json(sh, cmd, a)) {
        fputs("{\"hostname\": ", stdout);
        json_string(name);
        puts("}");
    } else {
        puts(name);
    }
    free(name);
    return 0;
}

static int cmd_domtime(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    long long seconds;
    unsigned int nseconds;
    int rc = rv_domain_get_time(dom, &seconds, &nseconds, 0);
    rv_domain_free(dom);
    if (rc < 0) {
        lib_error();
        return -1;
    }
    /* (virsh prints no newline of its own here) */
    if (want_json(sh, cmd, a)) {
        printf("{\"seconds\": %lld, \"nseconds\": %u}\n", seconds, nseconds);
    } else if (has_opt(cmd, a, "pretty")) {
        time_t t = (time_t)seconds;
        struct tm tm;
        char text[64];
        if (!gmtime_r(&t, &tm) || !strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm)) {
            error_line("Unable to format time");
            return -1;
        }
        printf("Time: %s", text);
    } else {
        printf("Time: %lld", seconds);
    }
    return 0;
}

/* ---- domstats ---- */

/* The groups, in opts_domstats' order from its first entry on. */
static const struct { const char *option; unsigned int stats; } stat_groups[] = {
    { "state", RV_DOMAIN_STATS_STATE }, { "cpu-total", RV_DOMAIN_STATS_CPU_TOTAL },
    { "balloon", RV_DOMAIN_STATS_BALLOON }, { "vcpu", RV_DOMAIN_STATS_VCPU },
    { "interface", RV_DOMAIN_STATS_INTERFACE }, { "block", RV_DOMAIN_STATS_BLOCK },
    { "perf", RV_DOMAIN_STATS_PERF }, { "iothread", RV_DOMAIN_STATS_IOTHREAD },
    { "memory", RV_DOMAIN_STATS_MEMORY }, { "dirtyrate", RV_DOMAIN_STATS_DIRTYRATE },
    { "vm", RV_DOMAIN_STATS_VM },
};
/* The domain filters (libvirt's virConnectGetAllDomainStatsFlags). */
static const struct { const char *option; unsigned int flag; } stat_filters[] = {
    { "list-active", 1u << 0 }, { "list-inactive", 1u << 1 },
    { "list-persistent", 1u << 2 }, { "list-transient", 1u << 3 },
    { "list-running", 1u << 4 }, { "list-paused", 1u << 5 },
    { "list-shutoff", 1u << 6 }, { "list-other", 1u << 7 },
    { "nowait", 1u << 29 }, { "backing", 1u << 30 }, { "enforce", 1u << 31 },
};

static int cmd_domstats(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int stats = 0, flags = 0;
    for (size_t i = 0; i < sizeof(stat_groups) / sizeof(stat_groups[0]); i++)
        if (has_opt(cmd, a, stat_groups[i].option))
            stats |= stat_groups[i].stats;
    for (size_t i = 0; i < sizeof(stat_filters) / sizeof(stat_filters[0]); i++)
        if (has_opt(cmd, a, stat_filters[i].option))
            flags |= stat_filters[i].flag;
    rv_dom *dom = NULL;
    if (a->value) {
        if (!(dom = lookup_domain(sh, a->value, BY_ANY)))
            return -1;
    }
    rv_domain_stats *records = NULL;
    int n = rv_connect_get_all_domain_stats(sh->conn, dom ? &dom : NULL, dom ? 1 : 0, stats,
                                            &records, flags);
    if (dom)
        rv_domain_free(dom);
    if (n < 0) {
        lib_error();
        return -1;
    }
    int json = want_json(sh, cmd, a);
    if (json)
        putchar('[');
    for (int i = 0; i < n; i++) {
        const rv_domain_stats *r = &records[i];
        int first = 1;
        if (json) {
            printf("%s{\"domain\": ", i ? ", " : "");
            json_string(rv_domain_get_name(r->dom));
            fputs(", \"stats\": {", stdout);
        } else {
            printf("Domain: '%s'\n", rv_domain_get_name(r->dom));
        }
        for (int k = 0; k < r->nparams; k++) {
            char buf[64];
            if (json) {
                json_key(r->params[k].field, &first);
                json_param(&r->params[k]);
            } else {
                printf("  %s=%s\n", r->params[k].field,
                       param_text(&r->params[k], buf, sizeof(buf)));
            }
        }
        if (json)
            fputs("}}", stdout);
        else if (i + 1 < n)
            putchar('\n');
    }
    if (json)
        puts("]");
    rv_domain_stats_free(records, n);
    return 0;
}

static const char *const opts_blkinfo[] = { "all", "human", "json", NULL };
static const char *const opts_inactive[] = { "inactive", "json", NULL };
static const char *const opts_blklist[] = { "inactive", "details", "json", NULL };
static const char *const opts_affect_json[] = { "config", "live", "current", "json", NULL };
/* Order matters: cmd_vcpupin reads vcpu's value by index. */
static const char *const opts_vcpupin[] = { "config", "live", "current", "vcpu=", "json", NULL };
/* Order matters: cmd_domifaddr reads the values by index. */
static const char *const opts_domifaddr[] = { "interface=", "full", "source=", "json", NULL };
static const char *const opts_domtime[] = { "pretty", "json", NULL };
static const char *const opts_domstats[] = {
    "state", "cpu-total", "balloon", "vcpu", "interface", "block", "perf", "iothread", "memory",
    "dirtyrate", "vm", "list-active", "list-inactive", "list-persistent", "list-transient",
    "list-running", "list-paused", "list-shutoff", "list-other", "nowait", "backing", "enforce",
    "json", NULL,
};

const command rvsh_domstats_commands[] = {
    { .name = "domiflist", .run = cmd_domiflist, .arg = "domain", .lookup = BY_ANY,
      .options = opts_inactive,
      .summary = "a domain's network interfaces" },
    { .name = "domblklist", .run = cmd_domblklist, .arg = "domain", .lookup = BY_ANY,
      .options = opts_blklist,
      .summary = "a domain's disks (--details: with their type and device)" },
    { .name = "domblkinfo", .run = cmd_domblkinfo, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "device", .options = opts_blkinfo,
      .summary = "a disk's capacity, allocation and physical size (--all: each disk)" },
    { .name = "domifstat", .run = cmd_domifstat, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "interface", .arg2_required = 1, .options = opts_json,
      .summary = "a network interface's counters" },
    { .name = "memtune", .run = cmd_tuning, .arg = "domain", .lookup = BY_ANY,
      .options = opts_affect_json,
      .summary = "a domain's memory limits" },
    { .name = "blkiotune", .run = cmd_tuning, .arg = "domain", .lookup = BY_ANY,
      .options = opts_affect_json,
      .summary = "a domain's block I/O weights" },
    { .name = "numatune", .run = cmd_tuning, .arg = "domain", .lookup = BY_ANY,
      .options = opts_affect_json,
      .summary = "a domain's NUMA memory policy" },
    { .name = "domiftune", .run = cmd_tuning, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "interface", .arg2_required = 1, .options = opts_affect_json,
      .summary = "a network interface's bandwidth limits" },
    { .name = "blkdeviotune", .run = cmd_tuning, .arg = "domain", .lookup = BY_ANY,
      .arg2 = "device", .arg2_required = 1, .options = opts_affect_json,
      .summary = "a disk's I/O throttling" },
    { .name = "vcpupin", .run = cmd_vcpupin, .arg = "domain", .lookup = BY_ANY,
      .options = opts_vcpupin,
      .summary = "where a domain's virtual CPUs may run" },
    { .name = "emulatorpin", .run = cmd_emulatorpin, .arg = "domain", .lookup = BY_ANY,
      .options = opts_affect_json,
      .summary = "where a domain's emulator threads may run" },
    { .name = "iothreadinfo", .run = cmd_iothreadinfo, .arg = "domain", .lookup = BY_ANY,
      .options = opts_affect_json,
      .summary = "a domain's I/O threads and where they may run" },
    { .name = "domifaddr", .run = cmd_domifaddr, .arg = "domain", .lookup = BY_ANY,
      .options = opts_domifaddr,
      .summary = "a guest's interface addresses (--source lease|agent|arp)" },
    { .name = "domhostname", .run = cmd_domhostname, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "the guest's host name" },
    { .name = "domtime", .run = cmd_domtime, .arg = "domain", .lookup = BY_ANY,
      .options = opts_domtime,
      .summary = "the guest's clock" },
    { .name = "domstats", .run = cmd_domstats, .arg = "domain", .arg_optional = 1,
      .lookup = BY_ANY, .options = opts_domstats,
      .summary = "statistics of one domain or all (--state, --cpu-total, --balloon, ...)" },
    { .name = NULL },
};
