/* The QEMU driver's statistics: domain stats (CONNECT_GET_ALL_DOMAIN_STATS),
 * block, interface and memory statistics, vcpu information.
 *
 * What QEMU alone knows (block counters, the thread of each vcpu, the
 * balloon's guest statistics) is asked over QMP and answered through a
 * deferred reply: the loop never waits.  A reply callback never touches
 * the qemu_dom (it may be gone by then): each request carries copies of
 * what it needs.  A stats call for many domains sends every domain's query
 * at once and answers when the last one has come back. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"
#include "server/drivers/qemu/qemu_link.h"

RV_LOG_CATEGORY("drivers.qemu.stats");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* In *d a running domain whose monitor can take a command: 0; else
 * RV_DEFERRED (the call waits for it, rv_qemu_need_monitor) or -1 with
 * the error libvirtd gives for a domain that is not running. */
static int get_running(const rv_nonnull_domain *wire, qemu_dom **d, rv_err *err)
{
    if (!(*d = rv_qemu_dom_get(wire, err)))
        return -1;
    return rv_qemu_need_monitor(*d, err);
}

/* ================================================================ typed parameter lists */

typedef rv_tparam_list stat_list;

static void stat_put(stat_list *l, const char *field, int type, unsigned long long value,
                     const char *str)
{
    rv_tparam_put(l, field, type, value, str);
}

/* The field "GROUP.I.NAME" (vcpu.0.time), formatted by hand: vsnprintf
 * cost more than the rest of the statistic. */
static void stat_put_nth(stat_list *l, const char *group, size_t i, const char *name, int type,
                         unsigned long long value, const char *str)
{
    char field[80], digits[24];  /* VIR_TYPED_PARAM_FIELD_LENGTH */
    size_t nd = 0, ng = strlen(group), nn = strlen(name);
    do
        digits[nd++] = (char)('0' + i % 10);
    while ((i /= 10) > 0);
    if (ng + nd + nn + 3 > sizeof(field)) {
        l->oom = true;          /* none of ours is that long */
        return;
    }
    char *p = memcpy(field, group, ng);
    p += ng;
    *p++ = '.';
    while (nd > 0)
        *p++ = digits[--nd];
    *p++ = '.';
    memcpy(p, name, nn + 1);
    stat_put(l, field, type, value, str);
}

/* ================================================================ per-thread times */

/* User+system time and the CPU it last ran on, from a /proc stat file. */
static bool thread_stat(pid_t pid, long tid, unsigned long long *time_ns, int *cpu)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
    unsigned long long user, system;
    if (!rv_qemu_proc_times(path, &user, &system))
        return false;
    *time_ns = user + system;
    *cpu = -1;
    FILE *fp = fopen(path, "re");
    if (fp) {
        char buf[1024];
        size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
        buf[n] = '\0';
        /* "processor" is field 39; fields from 3 on follow the ')'. */
        char *p = strrchr(buf, ')');
        int field = 2;
        for (char *tok = p ? strtok(p + 1, " ") : NULL; tok; tok = strtok(NULL, " "))
            if (++field == 39) {
                *cpu = atoi(tok);
                break;
            }
    }
    return true;
}

/* ================================================================ disks */

/* What a block statistic needs of a disk, copied from the definition. */
typedef struct disk_copy {
    char *target, *source;
} disk_copy;

static void disks_free(disk_copy *disks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(disks[i].target);
        free(disks[i].source);
    }
    free(disks);
}

static disk_copy *disks_copy(const rv_qemu_domain_def *def, size_t *n)
{
    *n = 0;
    disk_copy *disks = calloc(def->ndisks ? def->ndisks : 1, sizeof(*disks));
    if (!disks)
        return NULL;
    for (size_t i = 0; i < def->ndisks; i++) {
        const rv_qemu_disk *src = &def->disks[i];
        disks[i].target = strdup(src->target);
        disks[i].source = src->source ? strdup(src->source) : NULL;
        if (!disks[i].target || (src->source && !disks[i].source)) {
            disks_free(disks, i + 1);
            return NULL;
        }
    }
    *n = def->ndisks;
    return disks;
}

/* The "stats" of query-blockstats' entry for a disk, or NULL. */
static json_object *blockstats_of(json_object *list, const char *target)
{
    json_object *e = rv_qemu_block_entry(list, target), *stats = NULL;
    return e && json_object_object_get_ex(e, "stats", &stats) ? stats : NULL;
}

/* ================================================================ BLOCK_STATS */

typedef struct block_req {
    rv_deferred *reply;
    char *target;               /* NULL: the sum over every disk */
} block_req;

static void on_blockstats(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    block_req *req = opaque;
    if (err) {
        rv_deferred_finish(req->reply, err);
    } else {
        rv_domain_block_stats_ret *out = rv_deferred_ret(req->reply);
        size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
        json_object *one = req->target ? blockstats_of(ret, req->target) : NULL;
        if (req->target && !one) {
            rv_qemu_finish_error(req->reply, RV_ERR_INTERNAL_ERROR,
                         "internal error: cannot find statistics for device 'drive-%s'", req->target);
        } else {
            for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(ret, i), *stats = NULL;
                if (!json_object_object_get_ex(e, "stats", &stats))
                    continue;
                if (req->target && stats != one)
                    continue;
                out->rd_req += rv_qmp_json_int(stats, "rd_operations", 0);
                out->rd_bytes += rv_qmp_json_int(stats, "rd_bytes", 0);
                out->wr_req += rv_qmp_json_int(stats, "wr_operations", 0);
                out->wr_bytes += rv_qmp_json_int(stats, "wr_bytes", 0);
            }
            /* QEMU keeps no error count: -1, as libvirtd says. */
            out->errs = -1;
            rv_deferred_finish(req->reply, NULL);
        }
    }
    free(req->target);
    free(req);
}

/* query-blockstats for the disk path names ("": every disk), answered
 * by fn: RV_DEFERRED, or -1 with err. */
static int query_blockstats(const rv_nonnull_domain *wire, const char *path, rv_qmp_reply_fn fn,
                            rv_err *err)
{
    qemu_dom *d = NULL;
    int rc = get_running(wire, &d, err);
    if (rc)
        return rc;
    const rv_qemu_disk *disk = NULL;
    if (path[0] && !(disk = rv_qemu_disk_find(d->live, path)))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: invalid path: %s", path);
    block_req *req = calloc(1, sizeof(*req));
    if (!req || (disk && !(req->target = strdup(disk->target)))) {
        free(req);
        return oom(err);
    }
    if (!(req->reply = rv_driver_defer(err))) {
        free(req->target);
        free(req);
        return -1;
    }
    if (!rv_qemu_send_for(d, req->reply, "query-blockstats", NULL, fn, req)) {
        free(req->target);
        free(req);
    }
    return RV_DEFERRED;
}

int rv_qemu_domain_block_stats(rv_driver_conn *c, const rv_domain_block_stats_args *args,
                               rv_domain_block_stats_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    return query_blockstats(&args->dom, args->path, on_blockstats, err);
}

/* ================================================================ INTERFACE_STATS */

int rv_qemu_iface_index(const rv_qemu_domain_def *def, const char *device)
{
    for (size_t i = 0; i < def->ninterfaces; i++)
        if (def->interfaces[i].ifname && strcmp(def->interfaces[i].ifname, device) == 0)
            return (int)i;
    unsigned m[6];
    char extra;
    if (sscanf(device, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
               &extra) != 6)
        return -1;
    for (size_t i = 0; i < def->ninterfaces; i++) {
        const unsigned char *mac = def->interfaces[i].mac;
        bool same = true;
        for (int k = 0; k < 6; k++)
            same = same && mac[k] == m[k];
        if (same)
            return (int)i;
    }
    return -1;
}

static const rv_qemu_interface *find_iface(const rv_qemu_domain_def *def, const char *device)
{
    int i = rv_qemu_iface_index(def, device);
    return i < 0 ? NULL : &def->interfaces[i];
}

int rv_qemu_domain_interface_stats(rv_driver_conn *c, const rv_domain_interface_stats_args *args,
                                   rv_domain_interface_stats_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is not running");
    const rv_qemu_interface *iface = find_iface(d->live, args->device);
    if (!iface)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: '%s' is not a known interface",
                    args->device);
    /* The counters of the tap remvirtd made (as root).  User-mode
     * networking has no host device at all, and QEMU's bridge helper
     * (unprivileged) names its tap itself without telling: libvirtd ends
     * in the same error for an interface without a host name. */
    unsigned long long n[8];
    if (!iface->ifname || rv_qemu_link_guest_counters(iface->ifname, n) < 0)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: /proc/net/dev: Interface not found");
    ret->rx_bytes = (int64_t)n[0];
    ret->rx_packets = (int64_t)n[1];
    ret->rx_errs = (int64_t)n[2];
    ret->rx_drop = (int64_t)n[3];
    ret->tx_bytes = (int64_t)n[4];
    ret->tx_packets = (int64_t)n[5];
    ret->tx_errs = (int64_t)n[6];
    ret->tx_drop = (int64_t)n[7];
    return 0;
}

/* ================================================================ MEMORY_STATS */

#define BALLOON_PATH "/machine/peripheral/balloon0"

typedef struct memory_req {
    rv_deferred *reply;
    unsigned int max;
    unsigned long long actual_kib, rss_kib;
} memory_req;

static unsigned long long rss_kib(pid_t pid)
{
    char path[64], line[128];
    unsigned long long kib = 0;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "re");
    if (!fp)
        return 0;
    while (fgets(line, sizeof(line), fp))
        if (sscanf(line, "VmRSS: %llu kB", &kib) == 1)
            break;
    fclose(fp);
    return kib;
}

static void memory_answer(memory_req *req, json_object *guest)
{
    rv_domain_memory_stats_ret *out = rv_deferred_ret(req->reply);
    json_object *stats = NULL;
    if (guest)
        json_object_object_get_ex(guest, "stats", &stats);
    /* virDomainMemoryStatTags, in libvirtd's order; the guest's values
     * are bytes (KiB on the wire) and -1 when the guest has not said. */
    static const struct { int tag; const char *key; bool bytes; } keys[] = {
        { 0, "stat-swap-in", true }, { 1, "stat-swap-out", true },
        { 2, "stat-major-faults", false }, { 3, "stat-minor-faults", false },
        { 4, "stat-free-memory", true }, { 5, "stat-total-memory", true },
        { 8, "stat-available-memory", true }, { 10, "stat-disk-caches", true },
        { 11, "stat-htlb-pgalloc", false }, { 12, "stat-htlb-pgfail", false },
    };
    rv_domain_memory_stat all[16];
    u_int n = 0;
    all[n++] = (rv_domain_memory_stat){ 6, req->actual_kib };      /* actual balloon */
    for (size_t i = 0; stats && i < sizeof(keys) / sizeof(keys[0]); i++) {
        long long v = rv_qmp_json_int(stats, keys[i].key, -1);
        if (v >= 0)
            all[n++] = (rv_domain_memory_stat){ keys[i].tag,
                                                keys[i].bytes ? (unsigned long long)v / 1024
                                                              : (unsigned long long)v };
    }
    long long last = rv_qmp_json_int(guest, "last-update", 0);
    if (stats && last > 0)
        all[n++] = (rv_domain_memory_stat){ 9, (unsigned long long)last };  /* last update */
    all[n++] = (rv_domain_memory_stat){ 7, req->rss_kib };         /* rss */
    if (n > req->max)
        n = req->max;
    if (n && !(out->stats.stats_val = calloc(n, sizeof(*all)))) {
        rv_qemu_finish_error(req->reply, RV_ERR_NO_MEMORY, "out of memory");
        return;
    }
    memcpy(out->stats.stats_val, all, n * sizeof(*all));
    out->stats.stats_len = n;
    rv_deferred_finish(req->reply, NULL);
}

static void on_guest_stats(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    memory_req *req = opaque;
    /* A guest without a balloon driver, or not polled: the host's figures. */
    memory_answer(req, err ? NULL : ret);
    free(req);
}

int rv_qemu_domain_memory_stats(rv_driver_conn *c, const rv_domain_memory_stats_args *args,
                                rv_domain_memory_stats_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (args->maxStats > RV_MEMORY_STATS_MAX)
        return fail(err, RV_ERR_RPC, "maxStats > REMOTE_DOMAIN_MEMORY_STATS_MAX");
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainMemoryStats", err) < 0)
        return -1;
    qemu_dom *d = NULL;
    int rc = get_running(&args->dom, &d, err);
    if (rc)
        return rc;
    memory_req *req = calloc(1, sizeof(*req));
    if (!req)
        return oom(err);
    req->max = args->maxStats;
    req->actual_kib = rv_qemu_dom_memory_kib(d);
    req->rss_kib = rss_kib(d->pid);
    if (!(req->reply = rv_driver_defer(err))) {
        free(req);
        return -1;
    }
    if (!d->live->balloon) {
        memory_answer(req, NULL);
        free(req);
        return RV_DEFERRED;
    }
    json_object *qargs = json_object_new_object();
    if (qargs) {
        json_object_object_add(qargs, "path", json_object_new_string(BALLOON_PATH));
        json_object_object_add(qargs, "property", json_object_new_string("guest-stats"));
    }
    if (!rv_qemu_send_for(d, req->reply, "qom-get", qargs, on_guest_stats, req))
        free(req);
    return RV_DEFERRED;
}

/* Answers a deferred call with QEMU's verdict and nothing else. */
static void on_done(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    rv_deferred *reply = opaque;
    if (err)
        rv_qemu_finish_error(reply, RV_ERR_OPERATION_FAILED, "operation failed: %s",
                     err->message ? err->message : "QEMU refused");
    else
        rv_deferred_finish(reply, NULL);
}

int rv_qemu_domain_set_memory_stats_period(rv_driver_conn *c,
                                           const rv_domain_set_memory_stats_period_args *args,
                                           rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_VCPU_LIVE | RV_DOMAIN_VCPU_CONFIG,
                            "qemuDomainSetMemoryStatsPeriod", err) < 0)
        return -1;
    if (args->period < 0)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: invalid statistics period value %d",
                    args->period);
    /* The period is not part of the XML subset yet: live only. */
    if (args->flags & RV_DOMAIN_VCPU_CONFIG)
        return fail(err, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: the memory statistics period can only be set on "
                    "the running domain (<memballoon><stats period/> is not supported)");
    qemu_dom *d = NULL;
    int rc = get_running(&args->dom, &d, err);
    if (rc)
        return rc;
    if (!d->live->balloon)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Unable to change balloon collection period.");
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    json_object *qargs = json_object_new_object();
    if (qargs) {
        json_object_object_add(qargs, "path", json_object_new_string(BALLOON_PATH));
        json_object_object_add(qargs, "property",
                               json_object_new_string("guest-stats-polling-interval"));
        json_object_object_add(qargs, "value", json_object_new_int(args->period));
    }
    rv_qemu_send_for(d, reply, "qom-set", qargs, on_done, reply);
    return RV_DEFERRED;
}

/* ================================================================ vcpus */

typedef struct vcpus_req {
    rv_deferred *reply;
    pid_t pid;
    int maxinfo, maplen;
    unsigned nvcpus;
} vcpus_req;

static void on_cpus(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    vcpus_req *req = opaque;
    rv_domain_get_vcpus_ret *out = rv_deferred_ret(req->reply);
    size_t n = !err && json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
    if (err) {
        rv_deferred_finish(req->reply, err);
        free(req);
        return;
    }
    if (n > (size_t)req->maxinfo)
        n = (size_t)req->maxinfo;
    size_t maps = (size_t)req->maxinfo * (size_t)req->maplen;
    out->info.info_val = n ? calloc(n, sizeof(rv_vcpu_info)) : NULL;
    out->cpumaps.cpumaps_val = maps ? calloc(maps, 1) : NULL;
    if ((n && !out->info.info_val) || (maps && !out->cpumaps.cpumaps_val)) {
        rv_qemu_finish_error(req->reply, RV_ERR_NO_MEMORY, "out of memory");
        free(req);
        return;
    }
    out->info.info_len = (u_int)n;
    out->cpumaps.cpumaps_len = (u_int)maps;
    for (size_t i = 0; i < n; i++) {
        json_object *cpu = json_object_array_get_idx(ret, i);
        long tid = (long)rv_qmp_json_int(cpu, "thread-id", 0);
        rv_vcpu_info *vi = &out->info.info_val[i];
        vi->number = (u_int)rv_qmp_json_int(cpu, "cpu-index", (long long)i);
        vi->state = 1;          /* VIR_VCPU_RUNNING, as libvirtd always says */
        vi->cpu = -1;
        unsigned long long t = 0;
        if (tid > 0 && thread_stat(req->pid, tid, &t, &vi->cpu))
            vi->cpu_time = t;
        /* Where the thread may run: its affinity. */
        unsigned char *map = (unsigned char *)out->cpumaps.cpumaps_val + i * (size_t)req->maplen;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (req->maplen > 0 && tid > 0 && sched_getaffinity((pid_t)tid, sizeof(set), &set) == 0)
            for (int b = 0; b < req->maplen * 8 && b < CPU_SETSIZE; b++)
                if (CPU_ISSET(b, &set))
                    map[b / 8] |= (unsigned char)(1u << (b % 8));
    }
    rv_deferred_finish(req->reply, NULL);
    free(req);
}

int rv_qemu_domain_get_vcpus(rv_driver_conn *c, const rv_domain_get_vcpus_args *args,
                             rv_domain_get_vcpus_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (args->maxinfo < 0 || args->maxinfo > RV_VCPUINFO_MAX)
        return fail(err, RV_ERR_RPC, "maxinfo > REMOTE_VCPUINFO_MAX");
    if (args->maplen < 0 || (long long)args->maxinfo * args->maplen > RV_CPUMAPS_MAX)
        return fail(err, RV_ERR_RPC, args->maplen < 0 ? "maplen is negative"
                                                      : "maxinfo * maplen > REMOTE_CPUMAPS_MAX");
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot list vcpus for an inactive domain");
    int rc = get_running(&args->dom, &d, err);
    if (rc)
        return rc;
    vcpus_req *req = calloc(1, sizeof(*req));
    if (!req)
        return oom(err);
    req->pid = d->pid;
    req->maxinfo = args->maxinfo;
    req->maplen = args->maplen;
    if (!(req->reply = rv_driver_defer(err))) {
        free(req);
        return -1;
    }
    if (!rv_qemu_send_for(d, req->reply, "query-cpus-fast", NULL, on_cpus, req))
        free(req);
    return RV_DEFERRED;
}

/* The definition flags pick: live (the running one), config (the
 * persistent one), neither: live when running. */
static const rv_qemu_domain_def *pick_def(qemu_dom *d, unsigned int flags, rv_err *err)
{
    bool live = flags & RV_DOMAIN_VCPU_LIVE, config = flags & RV_DOMAIN_VCPU_CONFIG;
    if (live && config) {
        fail(err, RV_ERR_INVALID_ARG, "invalid argument: live and config flags are mutually exclusive");
        return NULL;
    }
    if (!live && !config)
        live = rv_qemu_dom_active(d);
    if (live && !rv_qemu_dom_active(d)) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is not running");
        return NULL;
    }
    if (!live && !d->def) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: transient domains do not have any persistent config");
        return NULL;
    }
    return live ? d->live : d->def;
}

int rv_qemu_domain_get_vcpus_flags(rv_driver_conn *c, const rv_domain_get_vcpus_flags_args *args,
                                   rv_domain_get_vcpus_flags_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_VCPU_LIVE | RV_DOMAIN_VCPU_CONFIG | RV_DOMAIN_VCPU_MAXIMUM,
                            "qemuDomainGetVcpusFlags", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    const rv_qemu_domain_def *def = d ? pick_def(d, args->flags, err) : NULL;
    if (!def)
        return -1;
    ret->num = (int)((args->flags & RV_DOMAIN_VCPU_MAXIMUM) ? def->vcpus : rv_qemu_def_vcpus(def));
    return 0;
}

int rv_qemu_domain_get_max_vcpus(rv_driver_conn *c, const rv_domain_get_max_vcpus_args *args,
                                 rv_domain_get_max_vcpus_ret *ret, rv_err *err)
{
    (void)c;
    /* libvirt asks for the live definition's maximum. */
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_dom_active(d))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    ret->num = (int)d->live->vcpus;
    return 0;
}

/* ================================================================ CONNECT_GET_ALL_DOMAIN_STATS */

enum {
    STATS_FILTERS = 0xff,       /* the same bits as LIST_ALL_DOMAINS' filters */
    STATS_NOWAIT = 1u << 29, STATS_BACKING = 1u << 30, STATS_ENFORCE = 1u << 31,
    STATS_KNOWN = RV_DOMAIN_STATS_STATE | RV_DOMAIN_STATS_CPU_TOTAL | RV_DOMAIN_STATS_BALLOON |
                  RV_DOMAIN_STATS_VCPU | RV_DOMAIN_STATS_INTERFACE | RV_DOMAIN_STATS_BLOCK |
                  RV_DOMAIN_STATS_DIRTYRATE |
                  RV_DOMAIN_STATS_IOTHREAD,
};

/* The groups answered from the table and /proc, without QEMU. */
static void dom_stats(qemu_dom *d, unsigned int groups, stat_list *l)
{
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    bool active = rv_qemu_dom_active(d);
    if (groups & RV_DOMAIN_STATS_STATE) {
        stat_put(l, "state.state", RV_TYPED_PARAM_INT, (unsigned)(active ? d->state : RV_DOMAIN_SHUTOFF), NULL);
        stat_put(l, "state.reason", RV_TYPED_PARAM_INT, (unsigned)d->reason, NULL);
    }
    /* Both groups' times from one sample (a vCPU's never above the total). */
    unsigned current = rv_qemu_def_vcpus(def);
    unsigned n = current < RV_QEMU_MAX_VCPUS ? current : RV_QEMU_MAX_VCPUS;
    bool cpu = (groups & RV_DOMAIN_STATS_CPU_TOTAL) && active && d->pid > 0;
    bool vcpus = (groups & RV_DOMAIN_STATS_VCPU) && active && d->pid > 0;
    unsigned long long user = 0, system = 0, times[RV_QEMU_MAX_VCPUS];   /* read where seen */
    bool seen[RV_QEMU_MAX_VCPUS] = { false };
    if ((cpu || vcpus) && rv_qemu_dom_cpu_times(d, cpu, vcpus ? n : 0, &user, &system, times, seen)) {
        stat_put(l, "cpu.time", RV_TYPED_PARAM_ULLONG, user + system, NULL);
        stat_put(l, "cpu.user", RV_TYPED_PARAM_ULLONG, user, NULL);
        stat_put(l, "cpu.system", RV_TYPED_PARAM_ULLONG, system, NULL);
    }
    if (groups & RV_DOMAIN_STATS_BALLOON) {
        stat_put(l, "balloon.current", RV_TYPED_PARAM_ULLONG,
                 active ? rv_qemu_dom_memory_kib(d) : def->current_memory_kib, NULL);
        stat_put(l, "balloon.maximum", RV_TYPED_PARAM_ULLONG, def->memory_kib, NULL);
        /* QEMU's resident memory, as DOMAIN_MEMORY_STATS's rss (cockpit's
         * "memory usage"), from the kept stat file; the guest's own
         * figures need the monitor. */
        if (active && d->pid > 0)
            stat_put(l, "balloon.rss", RV_TYPED_PARAM_ULLONG, rv_qemu_dom_rss_kib(d), NULL);
    }
    if (groups & RV_DOMAIN_STATS_VCPU) {
        stat_put(l, "vcpu.current", RV_TYPED_PARAM_UINT, current, NULL);
        stat_put(l, "vcpu.maximum", RV_TYPED_PARAM_UINT, def->vcpus, NULL);
        for (unsigned i = 0; vcpus && i < n; i++) {
            stat_put_nth(l, "vcpu", i, "state", RV_TYPED_PARAM_INT, 1, NULL);   /* VIR_VCPU_RUNNING */
            if (seen[i])
                stat_put_nth(l, "vcpu", i, "time", RV_TYPED_PARAM_ULLONG, times[i], NULL);
        }
    }
    if (groups & RV_DOMAIN_STATS_INTERFACE) {
        /* libvirtd counts every interface and gives a name and counters
         * only for those with a host device (a tap remvirtd made):
         * user-mode networking has none, and the bridge helper's tap
         * (unprivileged) is not named to remvirt. */
        stat_put(l, "net.count", RV_TYPED_PARAM_UINT, def->ninterfaces, NULL);
        static const char *const names[8] = { "rx.bytes", "rx.pkts", "rx.errs", "rx.drop",
                                              "tx.bytes", "tx.pkts", "tx.errs", "tx.drop" };
        for (size_t i = 0; active && i < def->ninterfaces; i++) {
            const char *ifname = def->interfaces[i].ifname;
            unsigned long long c[8];
            if (!ifname)
                continue;
            stat_put_nth(l, "net", i, "name", RV_TYPED_PARAM_STRING, 0, ifname);
            if (rv_qemu_link_guest_counters(ifname, c) < 0)
                continue;
            for (int k = 0; k < 8; k++)
                stat_put_nth(l, "net", i, names[k], RV_TYPED_PARAM_ULLONG, c[k], NULL);
        }
    }
}

/* What the guest sees of the image at path: a qcow2 image's virtual size
 * (its header's big-endian size at byte 24, after the magic "QFI\xfb"),
 * else the file's size. */
static unsigned long long image_capacity(const char *path, unsigned long long file_size)
{
    unsigned char h[32];
    FILE *fp = fopen(path, "re");
    if (!fp)
        return file_size;
    bool qcow2 = fread(h, sizeof(h), 1, fp) == 1 && memcmp(h, "QFI\xfb", 4) == 0;
    fclose(fp);
    if (!qcow2)
        return file_size;
    unsigned long long size = 0;
    for (int k = 24; k < 32; k++)
        size = size << 8 | h[k];
    return size;
}

const rv_qemu_disk *rv_qemu_disk_by_name(const rv_qemu_domain_def *def, const char *path)
{
    for (size_t i = 0; i < def->ndisks; i++)
        if (strcmp(def->disks[i].target, path) == 0 ||
            (def->disks[i].source && strcmp(def->disks[i].source, path) == 0))
            return &def->disks[i];
    return NULL;
}

/* A file image's sizes as libvirtd gives them: what the guest sees, the
 * disk space the file takes, and its length; -1 for what is not a
 * regular file. */
static int image_sizes(const char *path, unsigned long long *capacity,
                       unsigned long long *allocation, unsigned long long *physical)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return -1;
    }
    *allocation = (unsigned long long)st.st_blocks * 512;
    *physical = (unsigned long long)st.st_size;
    *capacity = image_capacity(path, *physical);
    return 0;
}

int rv_qemu_domain_get_block_info(rv_driver_conn *c, const rv_domain_get_block_info_args *args,
                                  rv_domain_get_block_info_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetBlockInfo", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    const rv_qemu_disk *disk = rv_qemu_disk_by_name(rv_qemu_dom_def(d), args->path);
    if (!disk)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: invalid path %s not assigned to domain",
                    args->path);
    if (!disk->source)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: disk '%s' does not currently have a source assigned", args->path);
    unsigned long long cap, alloc, phys;
    if (image_sizes(disk->source, &cap, &alloc, &phys) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot stat file '%s': %s", disk->source,
                    strerror(errno));
    ret->capacity = cap;
    ret->allocation = alloc;
    ret->physical = phys;
    return 0;
}

/* The block group of one domain: the counters from query-blockstats when
 * there are some (NULL: an inactive domain, or QEMU did not answer), the
 * sizes from the files. */
static void block_stats(stat_list *l, const disk_copy *disks, size_t ndisks, json_object *qstats)
{
    stat_put(l, "block.count", RV_TYPED_PARAM_UINT, ndisks, NULL);
    for (size_t i = 0; i < ndisks; i++) {
        stat_put_nth(l, "block", i, "name", RV_TYPED_PARAM_STRING, 0, disks[i].target);
        if (disks[i].source)
            stat_put_nth(l, "block", i, "path", RV_TYPED_PARAM_STRING, 0, disks[i].source);
        json_object *s = blockstats_of(qstats, disks[i].target);
        if (s) {
            static const struct { const char *field, *key; } counters[] = {
                { "rd.reqs", "rd_operations" }, { "rd.bytes", "rd_bytes" },
                { "rd.times", "rd_total_time_ns" }, { "wr.reqs", "wr_operations" },
                { "wr.bytes", "wr_bytes" }, { "wr.times", "wr_total_time_ns" },
                { "fl.reqs", "flush_operations" }, { "fl.times", "flush_total_time_ns" },
            };
            for (size_t k = 0; k < sizeof(counters) / sizeof(counters[0]); k++)
                stat_put_nth(l, "block", i, counters[k].field, RV_TYPED_PARAM_ULLONG,
                             (unsigned long long)rv_qmp_json_int(s, counters[k].key, 0), NULL);
        }
        unsigned long long cap, alloc, phys;
        if (disks[i].source && image_sizes(disks[i].source, &cap, &alloc, &phys) == 0) {
            stat_put_nth(l, "block", i, "allocation", RV_TYPED_PARAM_ULLONG, alloc, NULL);
            stat_put_nth(l, "block", i, "capacity", RV_TYPED_PARAM_ULLONG, cap, NULL);
            stat_put_nth(l, "block", i, "physical", RV_TYPED_PARAM_ULLONG, phys, NULL);
        }
    }
}

/* One CONNECT_GET_ALL_DOMAIN_STATS call waiting on its domains' QMP
 * answers, and one domain's share of it. */
typedef struct stats_call {
    rv_deferred *reply;
    unsigned pending;           /* answers to come, +1 while sending */
    bool oom;
} stats_call;

typedef struct stats_part {
    stats_call *call;
    u_int rec;                  /* its record in the reply */
    disk_copy *disks;
    size_t ndisks;
} stats_part;

static void record_add(rv_domain_stats_record *rec, void (*fill)(stat_list *, void *), void *arg,
                       bool *oom)
{
    stat_list l = { rec->params.params_val, rec->params.params_len, rec->params.params_len, false };
    fill(&l, arg);
    /* The dispatcher frees what is in the reply, filled or not. */
    rec->params.params_val = l.v;
    rec->params.params_len = l.n;
    *oom = *oom || l.oom;
}

typedef struct block_fill {
    const stats_part *part;
    json_object *qstats;
} block_fill;

static void fill_block(stat_list *l, void *arg)
{
    block_fill *b = arg;
    block_stats(l, b->part->disks, b->part->ndisks, b->qstats);
}

static void stats_call_unref(stats_call *call)
{
    if (--call->pending > 0)
        return;
    rv_err err = { 0 };
    if (call->oom)
        rv_err_set(&err, RV_FROM_QEMU, RV_ERR_NO_MEMORY,
                   "out of memory (or more than %d statistics for a domain)", RV_TYPED_PARAM_LIST_MAX);
    rv_deferred_finish(call->reply, call->oom ? &err : NULL);
    rv_err_clear(&err);
    free(call);
}

static void on_stats_blockstats(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    stats_part *part = opaque;
    stats_call *call = part->call;
    rv_connect_get_all_domain_stats_ret *out = rv_deferred_ret(call->reply);
    /* A domain whose QEMU did not answer still has its sizes, as libvirtd. */
    block_fill b = { part, err ? NULL : ret };
    record_add(&out->retStats.retStats_val[part->rec], fill_block, &b, &call->oom);
    disks_free(part->disks, part->ndisks);
    free(part);
    stats_call_unref(call);
}

/* The dirtyrate group from query-dirty-rate, in libvirtd's names and
 * types: the state (0 unstarted, 1 measuring, 2 measured), when the last
 * measurement started, over how many seconds, how, and once measured
 * the rate in MiB/s. */
static void fill_dirty_rate(stat_list *l, void *arg)
{
    json_object *q = arg, *v;
    static const char *const states[] = { "unstarted", "measuring", "measured" };
    const char *status = json_object_object_get_ex(q, "status", &v) ? json_object_get_string(v) : "";
    int state = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(status, states[i]) == 0)
            state = i;
    if (state < 0)
        return;     /* not what QEMU 7.2 says: nothing to report */
    stat_put(l, "dirtyrate.calc_status", RV_TYPED_PARAM_INT, (unsigned)state, NULL);
    if (json_object_object_get_ex(q, "start-time", &v))
        stat_put(l, "dirtyrate.calc_start_time", RV_TYPED_PARAM_LLONG,
                 (unsigned long long)json_object_get_int64(v), NULL);
    if (json_object_object_get_ex(q, "calc-time", &v))
        stat_put(l, "dirtyrate.calc_period", RV_TYPED_PARAM_INT, (unsigned)json_object_get_int(v), NULL);
    if (json_object_object_get_ex(q, "mode", &v))
        stat_put(l, "dirtyrate.calc_mode", RV_TYPED_PARAM_STRING, 0, json_object_get_string(v));
    if (state == 2 && json_object_object_get_ex(q, "dirty-rate", &v))
        stat_put(l, "dirtyrate.megabytes_per_second", RV_TYPED_PARAM_LLONG,
                 (unsigned long long)json_object_get_int64(v), NULL);
}

static void on_stats_dirty_rate(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    stats_part *part = opaque;
    stats_call *call = part->call;
    rv_connect_get_all_domain_stats_ret *out = rv_deferred_ret(call->reply);
    if (!err)
        record_add(&out->retStats.retStats_val[part->rec], fill_dirty_rate, ret, &call->oom);
    free(part);
    stats_call_unref(call);
}

typedef struct dom_fill {
    qemu_dom *d;                /* its CPU time files may be opened */
    unsigned int groups;
} dom_fill;

static void fill_dom(stat_list *l, void *arg)
{
    dom_fill *f = arg;
    dom_stats(f->d, f->groups, l);
}

static bool can_query(const qemu_dom *d)
{
    return rv_qemu_dom_active(d) && !d->stopping && d->qmp && rv_qmp_is_ready(d->qmp);
}

/* d's block group in record i (rec) of the reply: from query-blockstats
 * when call waits for QMP and d can answer, else its sizes alone now.
 * -1: no memory. */
static int stats_block(stats_call *call, qemu_dom *d, u_int i, rv_domain_stats_record *rec)
{
    stats_part *part = calloc(1, sizeof(*part));
    if (!part || !(part->disks = disks_copy(rv_qemu_dom_def(d), &part->ndisks))) {
        free(part);
        return -1;
    }
    part->call = call;
    part->rec = i;
    rv_err qerr = { 0 };
    if (call && can_query(d) &&
        rv_qmp_command(d->qmp, "query-blockstats", NULL, 0, on_stats_blockstats, part, &qerr) == 0) {
        call->pending++;
        return 0;
    }
    if (rv_err_is_set(&qerr))
        RV_DEBUG("domain stats: no block counters: %s", qerr.message);
    rv_err_clear(&qerr);
    block_fill b = { part, NULL };
    bool no_mem = false;
    record_add(rec, fill_block, &b, &no_mem);
    disks_free(part->disks, part->ndisks);
    free(part);
    return no_mem ? -1 : 0;
}

/* d's dirtyrate group in record i, from query-dirty-rate when call waits
 * for QMP and d can answer (a shut-off domain has none).  -1: no memory. */
static int stats_dirty_rate(stats_call *call, qemu_dom *d, u_int i)
{
    if (!call || !can_query(d))
        return 0;
    stats_part *part = calloc(1, sizeof(*part));
    if (!part)
        return -1;
    part->call = call;
    part->rec = i;
    rv_err qerr = { 0 };
    if (rv_qmp_command(d->qmp, "query-dirty-rate", NULL, 0, on_stats_dirty_rate, part, &qerr) == 0)
        call->pending++;
    else
        free(part);
    rv_err_clear(&qerr);
    return 0;
}

/* The iothread group: QEMU's IOThreads (query-iothreads, its order) with
 * their polling values; nothing for a domain without any, as libvirtd. */
static void fill_iothreads(stat_list *l, void *arg)
{
    json_object *list = arg;
    size_t n = json_object_is_type(list, json_type_array) ? json_object_array_length(list) : 0;
    if (n == 0)
        return;
    stat_put(l, "iothread.count", RV_TYPED_PARAM_UINT, n, NULL);
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(list, i), *id;
        unsigned k = json_object_object_get_ex(t, "id", &id)
                         ? rv_qemu_iothread_id(json_object_get_string(id)) : 0;
        if (!k || !json_object_object_get_ex(t, "poll-max-ns", &id))
            continue;
        stat_put_nth(l, "iothread", k, "poll-max-ns", RV_TYPED_PARAM_ULLONG,
                     (unsigned long long)rv_qmp_json_int(t, "poll-max-ns", 0), NULL);
        stat_put_nth(l, "iothread", k, "poll-grow", RV_TYPED_PARAM_UINT,
                     (unsigned long long)rv_qmp_json_int(t, "poll-grow", 0), NULL);
        stat_put_nth(l, "iothread", k, "poll-shrink", RV_TYPED_PARAM_UINT,
                     (unsigned long long)rv_qmp_json_int(t, "poll-shrink", 0), NULL);
    }
}

static void on_stats_iothreads(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    stats_part *part = opaque;
    stats_call *call = part->call;
    rv_connect_get_all_domain_stats_ret *out = rv_deferred_ret(call->reply);
    if (!err)
        record_add(&out->retStats.retStats_val[part->rec], fill_iothreads, ret, &call->oom);
    free(part);
    stats_call_unref(call);
}

/* Whether d runs IOThreads to ask QEMU about. */
static bool has_iothreads(const qemu_dom *d)
{
    return can_query(d) && d->live && d->live->tune && d->live->tune->niothreads > 0;
}

/* The iothread group of record rec asked of d's QEMU (after its block
 * group's question: QMP answers in order). */
static void ask_iothreads(stats_call *call, qemu_dom *d, u_int rec, bool *no_mem)
{
    stats_part *part = calloc(1, sizeof(*part));
    rv_err qerr = { 0 };
    if (!part) {
        *no_mem = true;
        return;
    }
    part->call = call;
    part->rec = rec;
    if (rv_qmp_command(d->qmp, "query-iothreads", NULL, 0, on_stats_iothreads, part, &qerr) == 0) {
        call->pending++;
        return;
    }
    RV_DEBUG("domain stats: no IOThreads: %s", qerr.message);
    rv_err_clear(&qerr);
    free(part);
}

int rv_qemu_connect_get_all_domain_stats(rv_driver_conn *c,
                                         const rv_connect_get_all_domain_stats_args *args,
                                         rv_connect_get_all_domain_stats_ret *ret, rv_err *err)
{
    (void)c;
    unsigned int flags = args->flags;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, STATS_FILTERS | STATS_NOWAIT | STATS_BACKING | STATS_ENFORCE,
                            "qemuConnectGetAllDomainStats", err) < 0)
        return -1;
    unsigned int groups = args->stats ? args->stats : STATS_KNOWN;
    if ((flags & STATS_ENFORCE) && (groups & ~(unsigned int)STATS_KNOWN))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Stats types bits 0x%x are not supported by this daemon",
                    groups & ~(unsigned int)STATS_KNOWN);
    groups &= STATS_KNOWN;

    /* The domains, found (or refused) before anything is sent. */
    u_int ndoms = args->doms.doms_len, n = ndoms;
    void **sel = NULL;
    size_t all = 0;
    if (ndoms == 0) {
        if (rv_dom_list_collect(&rv_qemu.doms, flags & STATS_FILTERS, &sel, &all, err) < 0)
            return -1;
        n = (u_int)all;
    }
    if (n > RV_DOMAIN_LIST_MAX) {
        free(sel);
        return fail(err, RV_ERR_RPC, "too many domains (%u) for one reply: the limit is %d", n,
                    RV_DOMAIN_LIST_MAX);
    }
    if (n == 0) {
        free(sel);
        return 0;
    }
    if (ndoms && !(sel = calloc(n, sizeof(*sel))))
        return oom(err);
    for (u_int i = 0; i < ndoms; i++)
        if (!(sel[i] = rv_qemu_dom_get(&args->doms.doms_val[i], err))) {
            free(sel);
            return -1;
        }
    bool wait = false;
    for (u_int i = 0; i < n && (groups & (RV_DOMAIN_STATS_BLOCK | RV_DOMAIN_STATS_DIRTYRATE)); i++)
        wait = wait || can_query(sel[i]);
    for (u_int i = 0; i < n && (groups & RV_DOMAIN_STATS_IOTHREAD); i++)
        wait = wait || has_iothreads(sel[i]);

    /* Without QMP to ask, the answer is now. */
    stats_call *call = NULL;
    rv_connect_get_all_domain_stats_ret *out = ret;
    if (wait) {
        if (!(call = calloc(1, sizeof(*call))) || !(call->reply = rv_driver_defer(err))) {
            free(call);
            free(sel);
            return call ? -1 : oom(err);
        }
        call->pending = 1;
        out = rv_deferred_ret(call->reply);
    }
    bool no_mem = false;
    if (!(out->retStats.retStats_val = calloc(n, sizeof(rv_domain_stats_record))))
        no_mem = true;
    for (u_int i = 0; i < n && !no_mem; i++) {
        qemu_dom *d = sel[i];
        rv_domain_stats_record *rec = &out->retStats.retStats_val[i];
        if (rv_qemu_put_dom(d, &rec->dom, err) < 0) {
            rv_err_clear(err);
            no_mem = true;
            break;
        }
        out->retStats.retStats_len++;
        dom_fill f = { d, groups };
        record_add(rec, fill_dom, &f, &no_mem);
        if (groups & RV_DOMAIN_STATS_BLOCK)
            no_mem = no_mem || stats_block(call, d, i, rec) < 0;
        /* Each asked after the one before, so answered after it (QMP
         * answers in order): libvirtd's order of the groups. */
        if ((groups & RV_DOMAIN_STATS_IOTHREAD) && call && has_iothreads(d))
            ask_iothreads(call, d, i, &no_mem);
        if (groups & RV_DOMAIN_STATS_DIRTYRATE)
            no_mem = no_mem || stats_dirty_rate(call, d, i) < 0;
    }
    free(sel);
    if (!call)
        return no_mem ? fail(err, RV_ERR_NO_MEMORY,
                             "out of memory (or more than %d statistics for a domain)",
                             RV_TYPED_PARAM_LIST_MAX)
                      : 0;
    call->oom = call->oom || no_mem;
    stats_call_unref(call);
    return RV_DEFERRED;
}

/* ================================================================ the host's CPUs */

/* A sysfs CPU list ("0-3,6") into a bitmap of max bits; the highest CPU
 * listed + 1, or -1 when the file cannot be read. */
static int read_cpu_list(const char *path, unsigned char *map, int max)
{
    char buf[4096];
    FILE *fp = fopen(path, "re");
    if (!fp)
        return -1;
    bool got = fgets(buf, sizeof(buf), fp) != NULL;
    fclose(fp);
    if (!got)
        return -1;
    int top = 0;
    for (char *p = buf; *p && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return -1;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long i = a; i <= b && i < max; i++)
            if (map)
                map[i / 8] |= (unsigned char)(1u << (i % 8));
        if (b + 1 > top)
            top = (int)(b + 1 < max ? b + 1 : max);
        p = *end == ',' ? end + 1 : end;
    }
    return top;
}

int rv_qemu_node_get_cpu_map(rv_driver_conn *c, const rv_node_get_cpu_map_args *args,
                             rv_node_get_cpu_map_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "virNodeGetCPUMap", err) < 0)
        return -1;
    int max = RV_CPUMAP_MAX * 8;
    int present = read_cpu_list("/sys/devices/system/cpu/present", NULL, max);
    if (present < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot read /sys/devices/system/cpu/present");
    unsigned char *map = calloc((size_t)(present + 7) / 8 + 1, 1);
    if (!map)
        return oom(err);
    if (read_cpu_list("/sys/devices/system/cpu/online", map, present) < 0) {
        free(map);
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot read /sys/devices/system/cpu/online");
    }
    unsigned online = 0;
    for (int i = 0; i < present; i++)
        online += (map[i / 8] >> (i % 8)) & 1;
    if (args->need_map) {
        ret->cpumap.cpumap_val = (char *)map;
        ret->cpumap.cpumap_len = (u_int)(present + 7) / 8;
    } else {
        free(map);
    }
    if (args->need_online)
        ret->online = online;
    ret->ret = present;
    return 0;
}

/* ================================================================ BLOCK_STATS_FLAGS */

enum { TYPED_PARAM_STRING_OKAY = 0x4 };     /* VIR_TYPED_PARAM_STRING_OKAY */

/* libvirtd's names and order, from query-blockstats' fields. */
static const char *const block_params[][2] = {
    { "wr_bytes", "wr_bytes" }, { "wr_operations", "wr_operations" },
    { "rd_bytes", "rd_bytes" }, { "rd_operations", "rd_operations" },
    { "flush_operations", "flush_operations" }, { "wr_total_times", "wr_total_time_ns" },
    { "rd_total_times", "rd_total_time_ns" }, { "flush_total_times", "flush_total_time_ns" },
};
enum { BLOCK_PARAMS = sizeof block_params / sizeof block_params[0] };

static void on_blockstats_flags(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    block_req *req = opaque;
    const rv_domain_block_stats_flags_args *a = rv_deferred_args(req->reply);
    rv_domain_block_stats_flags_ret *out = rv_deferred_ret(req->reply);
    json_object *one = !err && req->target ? blockstats_of(ret, req->target) : NULL;
    if (err) {
        rv_deferred_finish(req->reply, err);
    } else if (req->target && !one) {
        rv_qemu_finish_error(req->reply, RV_ERR_INTERNAL_ERROR,
                             "internal error: cannot find statistics for device 'drive-%s'",
                             req->target);
    } else {
        unsigned long long sum[BLOCK_PARAMS] = { 0 };
        size_t n = json_object_is_type(ret, json_type_array) ? json_object_array_length(ret) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *stats = NULL;
            if (!json_object_object_get_ex(json_object_array_get_idx(ret, i), "stats", &stats) ||
                (one && stats != one))
                continue;
            for (int k = 0; k < BLOCK_PARAMS; k++)
                sum[k] += (unsigned long long)rv_qmp_json_int(stats, block_params[k][1], 0);
        }
        stat_list l = { 0 };
        for (int k = 0; k < BLOCK_PARAMS && k < a->nparams; k++)
            stat_put(&l, block_params[k][0], RV_TYPED_PARAM_LLONG, sum[k], NULL);
        out->params.params_val = l.v;
        out->params.params_len = l.n;
        out->nparams = a->nparams ? (int)l.n : BLOCK_PARAMS;
        if (l.oom)
            rv_qemu_finish_error(req->reply, RV_ERR_NO_MEMORY, "out of memory");
        else
            rv_deferred_finish(req->reply, NULL);
    }
    free(req->target);
    free(req);
}

int rv_qemu_domain_block_stats_flags(rv_driver_conn *c,
                                     const rv_domain_block_stats_flags_args *args,
                                     rv_domain_block_stats_flags_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, TYPED_PARAM_STRING_OKAY,
                            "qemuDomainBlockStatsFlags", err) < 0)
        return -1;
    return query_blockstats(&args->dom, args->path, on_blockstats_flags, err);
}

/* ================================================================ GET_DISK_ERRORS */

static void on_block_info(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    rv_qemu_live_req *req = opaque;
    if (!rv_qemu_live_req_alive(req, qmp, err)) {
        free(req->name);
        free(req);
        return;
    }
    const rv_domain_get_disk_errors_args *a = rv_deferred_args(req->reply);
    rv_domain_get_disk_errors_ret *out = rv_deferred_ret(req->reply);
    qemu_dom *d = rv_qemu_find_name(req->name);
    size_t ndisks = d->live->ndisks, n = json_object_is_type(ret, json_type_array)
                                            ? json_object_array_length(ret) : 0;
    rv_domain_disk_error *errs = calloc(ndisks + 1, sizeof(*errs));
    u_int k = 0;
    bool oomed = !errs;
    /* io-status is there for a disk whose errors stop the guest. */
    for (size_t i = 0; !oomed && i < ndisks && k < a->maxerrors; i++) {
        const char *target = d->live->disks[i].target;
        for (size_t j = 0; j < n; j++) {
            json_object *e = json_object_array_get_idx(ret, j), *dev, *st;
            if (!json_object_object_get_ex(e, "device", &dev) ||
                strncmp(json_object_get_string(dev), "drive-", 6) != 0 ||
                strcmp(json_object_get_string(dev) + 6, target) != 0 ||
                !json_object_object_get_ex(e, "io-status", &st))
                continue;
            const char *s = json_object_get_string(st);
            int code = strcmp(s, "nospace") == 0 ? 2 : strcmp(s, "failed") == 0 ? 1 : 0;
            if (code && !(errs[k].disk = strdup(target)))
                oomed = true;
            else if (code)
                errs[k++].error = code;
        }
    }
    out->errors.errors_val = errs;
    out->errors.errors_len = k;
    /* maxerrors 0: how many disks could report one. */
    out->nerrors = a->maxerrors ? (int)k : (int)ndisks;
    if (oomed)
        rv_qemu_finish_error(req->reply, RV_ERR_NO_MEMORY, "out of memory");
    else
        rv_deferred_finish(req->reply, NULL);
    free(req->name);
    free(req);
}

int rv_qemu_domain_get_disk_errors(rv_driver_conn *c, const rv_domain_get_disk_errors_args *args,
                                   rv_domain_get_disk_errors_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetDiskErrors", err) < 0)
        return -1;
    int rc = get_running(&args->dom, &d, err);
    if (rc)
        return rc;
    rv_qemu_live_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req)
        return -1;
    if (!rv_qemu_send_for(d, req->reply, "query-block", NULL, on_block_info, req)) {
        free(req->name);
        free(req);
    }
    return RV_DEFERRED;
}

/* ================================================================ GET_CPU_STATS */

/* The domain's totals from its process's CPU clock.  The per-CPU split
 * libvirtd reads from the cpuacct cgroup, which remvirtd does not make:
 * refused in libvirtd's words for a host without it. */
int rv_qemu_domain_get_cpu_stats(rv_driver_conn *c, const rv_domain_get_cpu_stats_args *args,
                                 rv_domain_get_cpu_stats_ret *ret, rv_err *err)
{
    (void)c;
    static const char *const names[] = { "cpu_time", "user_time", "system_time" };
    qemu_dom *d = NULL;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, TYPED_PARAM_STRING_OKAY,
                            "qemuDomainGetCPUStats", err) < 0 ||
        !(d = rv_qemu_dom_get(&args->dom, err)))
        return -1;
    if (!rv_qemu_dom_active(d) || !d->pid)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (args->start_cpu != -1)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cgroup CPUACCT controller is not mounted");
    if (args->nparams == 0) {
        ret->nparams = 3;
        return 0;
    }
    unsigned long long user = 0, sys = 0, v[3];
    v[0] = rv_qemu_dom_cpu_time_ns(d);
    rv_qemu_dom_cpu_times(d, true, 0, &user, &sys, NULL, NULL);
    v[1] = user;
    v[2] = sys;
    stat_list l = { 0 };
    for (unsigned i = 0; i < 3 && i < args->nparams; i++)
        stat_put(&l, names[i], RV_TYPED_PARAM_ULLONG, v[i], NULL);
    ret->params.params_val = l.v;
    ret->params.params_len = l.n;
    ret->nparams = (int)l.n;
    return l.oom ? oom(err) : 0;
}
