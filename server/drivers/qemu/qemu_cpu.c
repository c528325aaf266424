/* The QEMU driver's CPU models: CONNECT_GET_CPU_MODEL_NAMES,
 * CONNECT_COMPARE_CPU, CONNECT_BASELINE_CPU, their hypervisor variants,
 * and the host CPU's model and features in the capabilities XML.
 *
 * What a model is comes from QEMU itself, not from tables here: a probe
 * QEMU (-machine none, TCG, no guest) is started once, through the
 * spawner, and asked over QMP for query-cpu-definitions and, for each
 * model, query-cpu-model-expansion (static: its features and vendor),
 * plus the full expansion of "max" (what TCG gives a guest).  Calls that
 * need it while it runs wait (deferred replies, rerun once it is done);
 * the loop never waits.  A failed probe is retried by the next call after
 * PROBE_RETRY seconds.
 *
 * The host CPU's vendor and features come from the CPUID instruction
 * (cpuid.c), as libvirtd takes them, not from /proc/cpuinfo's flags,
 * which the kernel edits (a bit hidden for an erratum, flags of its own).
 *
 * Features are kept in QEMU's spelling; names as the kernel or libvirt
 * spell them are mapped onto QEMU's, and the XML written uses libvirt's
 * spelling where it differs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>
#include <libxml/tree.h>

#include "common/log.h"
#include "server/drivers/qemu/cpu_names.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/conf/xml_read.h"

RV_LOG_CATEGORY("drivers.qemu.cpu");

#define PROBE_TIMEOUT 60.0      /* seconds for the whole probe */
#define PROBE_RETRY 30.0        /* seconds before a failed probe is tried again */
#define MAX_MODELS 512
#define CPU_XML_MAX (1024 * 1024)

typedef struct cpu_model {
    char *name;
    const char *vendor;         /* libvirt's vendor name, NULL: none */
    rv_qemu_cpu_features feats;
} cpu_model;

enum { PROBE_IDLE, PROBE_RUNNING, PROBE_DONE, PROBE_FAILED };

static struct {
    int state;
    ev_tstamp failed_at;
    char *why;                  /* the failure, for the calls that needed it */
    pid_t pid;
    rv_qmp *qmp;
    char *mon_path;
    ev_timer timer;
    cpu_model *models;
    size_t nmodels;
    size_t pending;             /* expansions not answered yet */
    size_t next;                /* the next model to expand */
    bool max_asked;             /* "max" expanded or asked for */
    rv_qemu_cpu_features known; /* every feature name QEMU has */
    rv_qemu_cpu_features tcg;   /* what TCG gives a guest ("max") */
    rv_deferred **waiters;
    size_t nwaiters;
} probe;

#define fail(err, from, code, ...) rv_err_fail((err), (from), (code), __VA_ARGS__)

/* ================================================================ feature sets */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rv_qemu_cpu_features_clear(rv_qemu_cpu_features *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->names[i]);
    free(f->names);
    f->names = NULL;
    f->n = 0;
}

static bool fset_has(const rv_qemu_cpu_features *f, const char *name)
{
    return f->n && bsearch(&name, f->names, f->n, sizeof(char *), cmp_str) != NULL;
}

/* Add (kept sorted, no repeats); -1 when out of memory. */
static int fset_add(rv_qemu_cpu_features *f, const char *name)
{
    if (fset_has(f, name))
        return 0;
    char **more = realloc(f->names, sizeof(char *) * (f->n + 1));
    if (!more)
        return -1;
    f->names = more;
    size_t i = f->n;
    while (i > 0 && strcmp(f->names[i - 1], name) > 0) {
        f->names[i] = f->names[i - 1];
        i--;
    }
    if (!(f->names[i] = strdup(name))) {
        memmove(&f->names[i], &f->names[i + 1], sizeof(char *) * (f->n - i));
        return -1;
    }
    f->n++;
    return 0;
}

static void fset_remove(rv_qemu_cpu_features *f, const char *name)
{
    char **hit = f->n ? bsearch(&name, f->names, f->n, sizeof(char *), cmp_str) : NULL;
    if (!hit)
        return;
    size_t i = (size_t)(hit - f->names);
    free(f->names[i]);
    memmove(&f->names[i], &f->names[i + 1], sizeof(char *) * (f->n - i - 1));
    f->n--;
}

static bool fset_subset(const rv_qemu_cpu_features *a, const rv_qemu_cpu_features *b)
{
    for (size_t i = 0; i < a->n; i++)
        if (!fset_has(b, a->names[i]))
            return false;
    return true;
}

static int fset_copy(rv_qemu_cpu_features *to, const rv_qemu_cpu_features *from)
{
    for (size_t i = 0; i < from->n; i++)
        if (fset_add(to, from->names[i]) < 0)
            return -1;
    return 0;
}

/* Spellings of one feature that differ between the kernel, libvirt and
 * QEMU: {other spelling, QEMU's}. */
static const char *const aliases[][2] = {
    { "pclmuldq", "pclmulqdq" }, { "sse4_1", "sse4.1" }, { "sse4-1", "sse4.1" },
    { "sse4_2", "sse4.2" }, { "sse4-2", "sse4.2" }, { "sse3", "pni" },
    { "tsc_deadline_timer", "tsc-deadline" }, { "cr8_legacy", "cr8legacy" }, { "i64", "lm" },
    { "xd", "nx" }, { "osxsave", "xsave" },
};
/* QEMU's name for a feature spelled as the kernel, libvirt or QEMU
 * spell it, into buf; NULL when QEMU has no such feature. */
static const char *canon(const char *name, char *buf, size_t size)
{
    if (fset_has(&probe.known, name))
        return name;
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(aliases[i][0], name) == 0)
            return aliases[i][1];
    if (strcmp(rv_cpu_qemu_name(name), name) != 0)
        return rv_cpu_qemu_name(name);
    /* The kernel's underscores: QEMU has a dash, or nothing. */
    size_t len = strlen(name), j = 0;
    if (len >= size)
        return NULL;
    for (size_t i = 0; i <= len; i++)
        buf[i] = name[i] == '_' ? '-' : name[i];
    if (fset_has(&probe.known, buf))
        return buf;
    for (size_t i = 0; i <= len; i++)
        if (name[i] != '_')
            buf[j++] = name[i];
    return fset_has(&probe.known, buf) ? buf : NULL;
}

/* Bits QEMU sets in every model that say nothing of the host's CPU. */
static bool paravirt(const char *name)
{
    return strncmp(name, "kvm", 3) == 0 || strcmp(name, "hypervisor") == 0;
}

bool rv_qemu_cpu_flag(const char *flags, const char *flag)
{
    size_t len = strlen(flag);
    for (const char *p = flags; (p = strstr(p, flag)); p += len)
        if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return true;
    return false;
}

int rv_qemu_cpu_host(rv_cpuid_host *id, rv_qemu_cpu_features *feats)
{
    bool cpuid = rv_cpuid_host_read(id);
    if (!cpuid)
        memset(id, 0, sizeof(*id));
    const char *names[512];
    size_t n = rv_cpuid_features(names, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < n; i++)
        if (fset_has(&probe.known, names[i]) && fset_add(feats, names[i]) < 0)
            return -1;
    return cpuid;
}

static const cpu_model *find_model(const char *name)
{
    for (size_t i = 0; i < probe.nmodels; i++)
        if (strcmp(probe.models[i].name, name) == 0)
            return &probe.models[i];
    return NULL;
}

/* The model of vendor (any when NULL) with the most features, all of
 * which are in have; NULL when none is.  Of two with as many, a generic
 * one (no vendor), as libvirtd's map lists those first. */
static const cpu_model *best_model(const char *vendor, const rv_qemu_cpu_features *have)
{
    const cpu_model *best = NULL;
    for (size_t i = 0; i < probe.nmodels; i++) {
        const cpu_model *m = &probe.models[i];
        if ((vendor && m->vendor && strcmp(vendor, m->vendor) != 0) || !fset_subset(&m->feats, have))
            continue;
        if (!best || m->feats.n > best->feats.n ||
            (m->feats.n == best->feats.n && !m->vendor && best->vendor))
            best = m;
    }
    return best;
}

const char *rv_qemu_cpu_host_model(const char *vendor, const rv_qemu_cpu_features *host)
{
    const cpu_model *m = best_model(vendor, host);
    return m ? m->name : NULL;
}

void rv_qemu_cpu_put_features(FILE *fp, const char *indent, const char *model,
                              const rv_qemu_cpu_features *host)
{
    const cpu_model *m = model ? find_model(model) : NULL;
    for (size_t i = 0; i < host->n; i++)
        if (!m || !fset_has(&m->feats, host->names[i]))
            fprintf(fp, "%s<feature name='%s'/>\n", indent, rv_cpu_libvirt_name(host->names[i]));
}

/* ================================================================ the probe */

static void probe_wake(void)
{
    rv_deferred **w = probe.waiters;
    size_t n = probe.nwaiters;
    probe.waiters = NULL;
    probe.nwaiters = 0;
    for (size_t i = 0; i < n; i++)
        rv_deferred_rerun(w[i]);
    free(w);
}

/* The running probe's pid and start time, in run_dir/cpu-probe.pid from
 * before it execs QEMU until it is killed: a remvirtd killed meanwhile
 * leaves a QEMU waiting for ever (-S) that the next start-up kills. */
static char *probe_pid_path(void)
{
    return rv_qemu_path(rv_qemu.run_dir, "cpu-probe", ".pid");
}

static void forget_probe_pid(void)
{
    char *path = probe_pid_path();
    if (path)
        unlink(path);
    free(path);
}

void rv_qemu_cpu_kill_stale_probe(void)
{
    char *path = probe_pid_path();
    char *text = path ? rv_qemu_read_file(path, 64) : NULL;
    int pid = 0;
    unsigned long long start = 0;
    /* Only the process the file names, with its start time: a pid
     * reused since is someone else's. */
    if (text && sscanf(text, "%d %llu", &pid, &start) == 2 && pid > 1 && start &&
        rv_qemu_proc_start_time(pid) == start) {
        RV_INFO("killing the CPU probe QEMU (pid %d) left by an earlier remvirtd", pid);
        kill(pid, SIGKILL);
    }
    if (path)
        unlink(path);
    free(text);
    free(path);
}

/* The probe is over (why: NULL when it succeeded); the callbacks of
 * commands still pending, run by rv_qmp_free, find it over and return. */
static void probe_end(const char *why)
{
    if (probe.state != PROBE_RUNNING)
        return;
    char *reason = why ? strdup(why) : NULL;    /* why may go with the monitor */
    probe.state = why ? PROBE_FAILED : PROBE_DONE;
    ev_timer_stop(rv_qemu.loop, &probe.timer);
    rv_qmp *qmp = probe.qmp;
    probe.qmp = NULL;
    rv_qmp_free(qmp);
    if (probe.pid > 0)
        kill(probe.pid, SIGKILL);
    probe.pid = 0;
    if (probe.mon_path)
        unlink(probe.mon_path);
    forget_probe_pid();
    if (why) {
        RV_WARN("QEMU CPU probe failed: %s", reason ? reason : "out of memory");
        free(probe.why);
        probe.why = reason;
        probe.failed_at = ev_now(rv_qemu.loop);
    } else {
        RV_INFO("QEMU CPU probe: %zu models, %zu feature names", probe.nmodels, probe.known.n);
    }
    probe_wake();
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop, (void)w, (void)revents;
    probe_end("no answer in time");
}

static const char *libvirt_vendor(const char *cpuid)
{
    if (strcmp(cpuid, "GenuineIntel") == 0)
        return "Intel";
    if (strcmp(cpuid, "AuthenticAMD") == 0)
        return "AMD";
    if (strcmp(cpuid, "HygonGenuine") == 0)
        return "Hygon";
    return NULL;
}

/* The models libvirt's CPU map gives no vendor (QEMU gives each one): a
 * host of any vendor may be described by them. */
static bool generic_model(const char *name)
{
    static const char *const generic[] = { "486", "pentium", "pentium2", "pentium3", "pentiumpro",
                                           "qemu32", "qemu64", "kvm32", "kvm64", "cpu64-rhel5",
                                           "cpu64-rhel6", NULL };
    for (size_t i = 0; generic[i]; i++)
        if (strcmp(name, generic[i]) == 0)
            return true;
    return false;
}

static int expand_next(void);

static void on_expansion(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    cpu_model *m = opaque;      /* NULL: "max", TCG's whole set */
    json_object *model, *props;
    if (probe.state != PROBE_RUNNING)
        return;
    if (err || !json_object_object_get_ex(ret, "model", &model) ||
        !json_object_object_get_ex(model, "props", &props)) {
        probe_end(err ? err->message : "query-cpu-model-expansion: no props");
        return;
    }
    json_object_object_foreach(props, key, val) {
        int rc = 0;
        if (json_object_is_type(val, json_type_boolean)) {
            /* The static expansion names each feature once, in QEMU's
             * spelling: the known names come from there. */
            if (m)
                rc = fset_add(&probe.known, key);
            if (rc == 0 && json_object_get_boolean(val))
                rc = m ? (paravirt(key) ? 0 : fset_add(&m->feats, key))
                       : fset_add(&probe.tcg, key);
        } else if (m && strcmp(key, "vendor") == 0 && !generic_model(m->name)) {
            m->vendor = libvirt_vendor(json_object_get_string(val));
        }
        if (rc < 0) {
            probe_end("out of memory");
            return;
        }
    }
    if (--probe.pending == 0 && (probe.next < probe.nmodels || !probe.max_asked)) {
        if (expand_next() < 0)
            probe_end("cannot ask QEMU for a CPU model's features");
        return;
    }
    if (probe.pending == 0) {
        /* "max"'s full expansion has aliases too: keep QEMU's names only. */
        for (size_t i = 0; i < probe.tcg.n;)
            if (!fset_has(&probe.known, probe.tcg.names[i]) || paravirt(probe.tcg.names[i]))
                fset_remove(&probe.tcg, probe.tcg.names[i]);
            else
                i++;
        probe_end(NULL);
    }
}

static int expand(const char *name, const char *type, cpu_model *m)
{
    rv_err err = { 0 };
    json_object *args = json_object_new_object(), *model = json_object_new_object();
    if (!args || !model) {
        json_object_put(args);
        json_object_put(model);
        return -1;
    }
    json_object_object_add(model, "name", json_object_new_string(name));
    json_object_object_add(args, "type", json_object_new_string(type));
    json_object_object_add(args, "model", model);
    if (rv_qmp_command(probe.qmp, "query-cpu-model-expansion", args, 0, on_expansion, m, &err) < 0) {
        rv_err_clear(&err);
        return -1;
    }
    probe.pending++;
    return 0;
}

/* The models are asked for one at a time (then "max"): QEMU answers a
 * batch of questions at once, and the loop parsed and sorted all of
 * their answers in one pass (1 to 2 ms of its CPU in test-bad-xml); one
 * answer is 0.1 to 0.2 ms. */
static int expand_next(void)
{
    if (probe.next < probe.nmodels) {
        cpu_model *m = &probe.models[probe.next++];
        return expand(m->name, "static", m);
    }
    probe.max_asked = true;
    return expand("max", "full", NULL);
}

static int cmp_model(const void *a, const void *b)
{
    return strcmp(((const cpu_model *)a)->name, ((const cpu_model *)b)->name);
}

static void on_definitions(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)opaque;
    if (probe.state != PROBE_RUNNING)
        return;
    if (err || !json_object_is_type(ret, json_type_array)) {
        probe_end(err ? err->message : "query-cpu-definitions: not a list");
        return;
    }
    size_t n = json_object_array_length(ret);
    probe.models = calloc(n ? n : 1, sizeof(cpu_model));
    if (!probe.models) {
        probe_end("out of memory");
        return;
    }
    /* The models by their plain names: versioned ones ("-v1") are what
     * the plain names stand for; max, host and base are no models. */
    for (size_t i = 0; i < n && probe.nmodels < MAX_MODELS; i++) {
        json_object *def = json_object_array_get_idx(ret, i), *name;
        const char *s;
        if (!json_object_object_get_ex(def, "name", &name) || !(s = json_object_get_string(name)))
            continue;
        const char *v = strrchr(s, '-');
        if (strcmp(s, "max") == 0 || strcmp(s, "host") == 0 || strcmp(s, "base") == 0 ||
            (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2)))
            continue;
        if (!(probe.models[probe.nmodels].name = strdup(s))) {
            probe_end("out of memory");
            return;
        }
        probe.nmodels++;
    }
    qsort(probe.models, probe.nmodels, sizeof(cpu_model), cmp_model);
    probe.next = 0;
    probe.max_asked = false;
    if (expand_next() < 0)
        probe_end("cannot ask QEMU for a CPU model's features");
}

static void on_ready(rv_qmp *qmp, json_object *greeting, void *opaque)
{
    (void)greeting, (void)opaque;
    rv_err err = { 0 };
    if (rv_qmp_command(qmp, "query-cpu-definitions", NULL, 0, on_definitions, NULL, &err) < 0) {
        probe_end(err.message);
        rv_err_clear(&err);
    }
}

static void on_close(rv_qmp *qmp, const rv_err *reason, void *opaque)
{
    (void)qmp, (void)opaque;
    probe_end(reason->message);
}

static const rv_qmp_callbacks probe_callbacks = {
    .on_ready = on_ready,
    .on_close = on_close,
};

static void on_spawned(void *data, pid_t pid, const char *why)
{
    (void)data;
    if (probe.state != PROBE_RUNNING) {     /* gave up meanwhile */
        if (pid > 0)
            rv_qemu_spawn_go(pid, false);
        return;
    }
    if (pid < 0) {
        probe_end(why);
        return;
    }
    probe.pid = pid;
    char *path = probe_pid_path(), text[64];
    snprintf(text, sizeof(text), "%d %llu\n", (int)pid, rv_qemu_proc_start_time(pid));
    rv_err err = { 0 };
    bool recorded = path && rv_qemu_write_file(path, text, false, &err) == 0;
    free(path);
    if (!recorded) {
        rv_qemu_spawn_go(pid, false);       /* never exec'd: nothing could be left */
        probe.pid = 0;
        probe_end(err.message ? err.message : "out of memory");
        rv_err_clear(&err);
        return;
    }
    rv_qemu_spawn_go(pid, true);
    rv_qmp_options opts = { .connect_timeout = PROBE_TIMEOUT };
    probe.qmp = rv_qmp_connect_unix(rv_qemu.loop, probe.mon_path, &opts, &probe_callbacks, NULL, &err);
    if (!probe.qmp) {
        probe_end(err.message);
        rv_err_clear(&err);
    }
}

static void probe_start(void)
{
    rv_err err = { 0 };
    char *log_path = rv_qemu_path(rv_qemu.run_dir, "cpu-probe", ".log");
    free(probe.mon_path);
    probe.mon_path = rv_qemu_path(rv_qemu.run_dir, "cpu-probe", ".qmp");
    char *mon = NULL;
    probe.state = PROBE_RUNNING;
    ev_timer_init(&probe.timer, on_timeout, PROBE_TIMEOUT, 0);
    ev_timer_start(rv_qemu.loop, &probe.timer);
    int made = rv_qemu_mkdirs(rv_qemu.run_dir, &err);
    int log_fd = log_path && made == 0
                     ? open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
                     : -1;
    free(log_path);
    if (!probe.mon_path || log_fd < 0 ||
        asprintf(&mon, "unix:%s,server=on,wait=off", probe.mon_path) < 0) {
        if (log_fd >= 0)
            close(log_fd);
        probe_end(err.message ? err.message : "cannot open the probe's log in the run directory");
        rv_err_clear(&err);
        return;
    }
    unlink(probe.mon_path);
    char *argv[] = { rv_qemu.binary, "-machine", "none,accel=tcg", "-nodefaults", "-no-user-config",
                     "-display", "none", "-S", "-qmp", mon, NULL };
    if (rv_qemu_spawn(argv, log_fd, -1, NULL, 0, on_spawned, NULL, &err) < 0) {
        probe_end(err.message);
        rv_err_clear(&err);
    }
    close(log_fd);
    free(mon);
}

void rv_qemu_cpu_probe_start(void)
{
    if (probe.state == PROBE_IDLE)
        probe_start();
}

void rv_qemu_cpu_cleanup(void)
{
    if (probe.state == PROBE_RUNNING)
        probe_end("remvirtd is stopping");
    for (size_t i = 0; i < probe.nmodels; i++) {
        free(probe.models[i].name);
        rv_qemu_cpu_features_clear(&probe.models[i].feats);
    }
    free(probe.models);
    rv_qemu_cpu_features_clear(&probe.known);
    rv_qemu_cpu_features_clear(&probe.tcg);
    free(probe.why);
    free(probe.mon_path);
    memset(&probe, 0, sizeof(probe));
}

int rv_qemu_cpu_wait(bool need, rv_err *err)
{
    if (probe.state == PROBE_FAILED && ev_now(rv_qemu.loop) - probe.failed_at >= PROBE_RETRY) {
        /* Forget the half-filled tables, then try again. */
        for (size_t i = 0; i < probe.nmodels; i++) {
            free(probe.models[i].name);
            rv_qemu_cpu_features_clear(&probe.models[i].feats);
        }
        free(probe.models);
        probe.models = NULL;
        probe.nmodels = 0;
        probe.pending = 0;
        probe.next = 0;
        probe.max_asked = false;
        rv_qemu_cpu_features_clear(&probe.known);
        rv_qemu_cpu_features_clear(&probe.tcg);
        probe_start();
    } else if (probe.state == PROBE_IDLE) {
        probe_start();
    }
    if (probe.state == PROBE_DONE || (probe.state == PROBE_FAILED && !need))
        return 0;
    if (probe.state == PROBE_FAILED)
        return fail(err, RV_FROM_QEMU, RV_ERR_OPERATION_FAILED,
                    "operation failed: QEMU's CPU models are not known: %s",
                    probe.why ? probe.why : "the probe failed");
    rv_deferred **more = realloc(probe.waiters, sizeof(*more) * (probe.nwaiters + 1));
    if (!more)
        return fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    probe.waiters = more;
    rv_deferred *d = rv_driver_defer(err);
    if (!d)
        return -1;
    probe.waiters[probe.nwaiters++] = d;
    return RV_DEFERRED;
}

/* ================================================================ the calls */

int rv_qemu_connect_get_cpu_model_names(rv_driver_conn *c,
                                        const rv_connect_get_cpu_model_names_args *args,
                                        rv_connect_get_cpu_model_names_ret *ret, rv_err *err)
{
    (void)c;
    /* libvirt's architecture names: the probe's QEMU serves x86. */
    static const char *const archs[] = {
        "i686", "x86_64", "aarch64", "alpha", "armv6l", "armv7b", "armv7l", "cris",
        "loongarch64", "m68k", "microblaze", "microblazeel", "mips", "mips64", "mips64el",
        "mipsel", "openrisc", "parisc", "parisc64", "ppc", "ppc64", "ppc64le", "ppcemb",
        "ppcle", "riscv32", "riscv64", "s390", "s390x", "sh4", "sh4eb", "sparc", "sparc64",
        "unicore32", "xtensa", "xtensaeb", NULL,
    };
    if (args->flags)
        return fail(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                    "unsupported flags (0x%x) in function qemuConnectGetCPUModelNames", args->flags);
    size_t a;
    for (a = 0; archs[a] && strcmp(archs[a], args->arch) != 0; a++)
        ;
    if (!archs[a])
        return fail(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                    "invalid argument: cannot find architecture %s", args->arch);
    if (a > 1)          /* no models for an architecture it does not run */
        return 0;
    int rc = rv_qemu_cpu_wait(true, err);
    if (rc != 0)
        return rc;
    ret->ret = (int)probe.nmodels;
    if (!args->need_results || !probe.nmodels)
        return 0;
    ret->models.models_val = calloc(probe.nmodels, sizeof(char *));
    if (!ret->models.models_val)
        return fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    ret->models.models_len = (u_int)probe.nmodels;
    for (size_t i = 0; i < probe.nmodels; i++)
        if (!(ret->models.models_val[i] = strdup(probe.models[i].name)))
            return fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    return 0;
}

/* A <cpu> definition as a set of features. */
typedef struct cpu_def {
    char *arch, *model, *vendor, *mode;
    const cpu_model *m;
    rv_qemu_cpu_features required, disabled, forbidden;
    /* The features as listed, in QEMU's spelling, with their policy. */
    size_t nlisted;
    struct { char *name; char policy[8]; } *listed;
} cpu_def;

static void cpu_def_clear(cpu_def *d)
{
    free(d->arch);
    free(d->model);
    free(d->vendor);
    free(d->mode);
    for (size_t i = 0; i < d->nlisted; i++)
        free(d->listed[i].name);
    rv_qemu_cpu_features_clear(&d->required);
    rv_qemu_cpu_features_clear(&d->disabled);
    rv_qemu_cpu_features_clear(&d->forbidden);
    free(d->listed);
    memset(d, 0, sizeof(*d));
}

/* Read one <cpu>: the model's features, plus the required ones, minus the
 * disabled ones, in d->required. */
static int cpu_def_parse(const char *xml, bool need_arch, cpu_def *d, rv_err *err)
{
    memset(d, 0, sizeof(*d));
    xmlDoc *doc = NULL;
    xmlNode *root = rv_lx_read(xml, CPU_XML_MAX, "cpu", "CPU_definition", RV_FROM_CPU, &doc, err);
    if (!root) {
        if (err->code == RV_ERR_XML_ERROR && strstr(err->message, "expecting root element")) {
            rv_err_clear(err);
            rv_err_set(err, RV_FROM_CPU, RV_ERR_XML_ERROR,
                       "XML error: XML does not contain expected 'cpu' element");
        }
        return -1;
    }
    int failed = 0, rc = -1;
    char buf[64];
    d->mode = rv_lx_attr(root, "mode", &failed);
    d->arch = rv_lx_text(rv_lx_child(root, "arch"), &failed);
    d->model = rv_lx_text(rv_lx_child(root, "model"), &failed);
    d->vendor = rv_lx_text(rv_lx_child(root, "vendor"), &failed);
    if (failed) {
        fail(err, RV_FROM_CPU, RV_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    if (need_arch && !d->arch) {
        fail(err, RV_FROM_CPU, RV_ERR_XML_ERROR, "XML error: Missing CPU architecture");
        goto out;
    }
    if (d->model && !(d->m = find_model(d->model))) {
        fail(err, RV_FROM_CPU, RV_ERR_INTERNAL_ERROR, "internal error: Unknown CPU model %s", d->model);
        goto out;
    }
    if (d->m && fset_copy(&d->required, &d->m->feats) < 0)
        goto oom;
    for (xmlNode *n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "feature") != 0)
            continue;
        char *name = rv_lx_attr(n, "name", &failed), *policy = rv_lx_attr(n, "policy", &failed);
        const char *q = name ? canon(name, buf, sizeof(buf)) : NULL;
        int r = 0;
        if (failed)
            r = -1;
        else if (!name)
            r = fail(err, RV_FROM_CPU, RV_ERR_XML_ERROR, "XML error: Invalid CPU feature name");
        else if (!q)
            r = fail(err, RV_FROM_CPU, RV_ERR_INTERNAL_ERROR,
                     "internal error: Unknown CPU feature %s", name);
        else if (policy && strcmp(policy, "require") != 0 && strcmp(policy, "force") != 0 &&
                 strcmp(policy, "optional") != 0 && strcmp(policy, "disable") != 0 &&
                 strcmp(policy, "forbid") != 0)
            r = fail(err, RV_FROM_CPU, RV_ERR_XML_ERROR, "XML error: Invalid CPU feature policy");
        else if (policy && (strcmp(policy, "disable") == 0 || strcmp(policy, "forbid") == 0)) {
            fset_remove(&d->required, q);
            r = fset_add(strcmp(policy, "forbid") == 0 ? &d->forbidden : &d->disabled, q);
        } else {
            r = fset_add(&d->required, q);
        }
        if (r == 0 && (d->nlisted & (d->nlisted - 1)) == 0) {   /* grow at powers of two */
            void *more = realloc(d->listed, sizeof(*d->listed) * (d->nlisted ? d->nlisted * 2 : 1));
            if (!more)
                r = -1;
            else
                d->listed = more;
        }
        if (r == 0) {
            if (!(d->listed[d->nlisted].name = strdup(q)))
                r = -1;
            else
                snprintf(d->listed[d->nlisted++].policy, sizeof(d->listed[0].policy), "%s",
                         policy ? policy : "require");
        }
        free(name);
        free(policy);
        if (r < 0) {
            if (!rv_err_is_set(err))
                goto oom;
            goto out;
        }
    }
    rc = 0;
    goto out;
oom:
    fail(err, RV_FROM_CPU, RV_ERR_NO_MEMORY, "out of memory");
out:
    rv_lx_free(doc);
    if (rc < 0)
        cpu_def_clear(d);
    return rc;
}

/* "a, b, c" of the names in a not in b (in a's order), into out. */
static void missing(const rv_qemu_cpu_features *a, const rv_qemu_cpu_features *b, bool in_b,
                    char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < a->n && len < size; i++)
        if (fset_has(b, a->names[i]) == in_b)
            len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "",
                                    rv_cpu_libvirt_name(a->names[i]));
}

/* The host's vendor and features, as the capabilities XML has them. */
static int host_cpu(char *vendor, size_t vsize, rv_qemu_cpu_features *feats, rv_err *err)
{
    rv_cpuid_host id;
    if (rv_qemu_cpu_host(&id, feats) < 0)
        return fail(err, RV_FROM_CPU, RV_ERR_NO_MEMORY, "out of memory");
    const char *v = libvirt_vendor(id.vendor);
    snprintf(vendor, vsize, "%s", v ? v : "");
    return 0;
}

/* The comparison of d with a host CPU of vendor (may be "") and feats. */
static int compare(const cpu_def *d, const char *vendor, const rv_qemu_cpu_features *have,
                   const char *what, unsigned int flags, rv_err *err)
{
    char list[1024];
    const char *why = NULL;
    if (d->mode && strcmp(d->mode, "custom") != 0)
        return RV_CPU_COMPARE_SUPERSET;
    if (d->vendor && (!vendor[0] || strcmp(d->vendor, vendor) != 0)) {
        snprintf(list, sizeof(list), "%s CPU vendor does not match required CPU vendor %s", what,
                 d->vendor);
        why = list;
    } else if (!fset_subset(&d->required, have)) {
        char names[900];
        missing(&d->required, have, false, names, sizeof(names));
        snprintf(list, sizeof(list), "%s%s CPU does not provide required features: %s",
                 what[0] == 'h' ? "H" : "", what[0] == 'h' ? what + 1 : what, names);
        why = list;
    } else {
        char names[900];
        missing(&d->forbidden, have, true, names, sizeof(names));
        if (names[0]) {
            snprintf(list, sizeof(list), "%s%s CPU provides forbidden features: %s",
                     what[0] == 'h' ? "H" : "", what[0] == 'h' ? what + 1 : what, names);
            why = list;
        }
    }
    if (why) {
        if (flags & RV_CONNECT_COMPARE_CPU_FAIL_INCOMPATIBLE)
            return fail(err, RV_FROM_CPU, RV_ERR_CPU_INCOMPATIBLE,
                        "the CPU is incompatible with host CPU: %s", why);
        return RV_CPU_COMPARE_INCOMPATIBLE;
    }
    return fset_subset(have, &d->required) ? RV_CPU_COMPARE_IDENTICAL : RV_CPU_COMPARE_SUPERSET;
}

static int prologue(unsigned int flags, unsigned int known, const char *func, bool hv,
                    rv_string emulator, rv_string arch, rv_string virttype, bool *kvm,
                    rv_err *err);
#define COMPARE_FLAGS (RV_CONNECT_COMPARE_CPU_FAIL_INCOMPATIBLE | RV_CONNECT_COMPARE_CPU_VALIDATE_XML)
#define BASELINE_FLAGS (RV_CONNECT_BASELINE_CPU_EXPAND_FEATURES | RV_CONNECT_BASELINE_CPU_MIGRATABLE)

/* A compare call's end: what it held let go, its result (or -1) given. */
static int compare_done(int rc, cpu_def *d, rv_qemu_cpu_features *have, int *result)
{
    cpu_def_clear(d);
    rv_qemu_cpu_features_clear(have);
    if (rc < 0)
        return -1;
    *result = rc;
    return 0;
}

int rv_qemu_connect_compare_cpu(rv_driver_conn *c, const rv_connect_compare_cpu_args *args,
                                rv_connect_compare_cpu_ret *ret, rv_err *err)
{
    (void)c;
    int rc = prologue(args->flags, COMPARE_FLAGS, "qemuConnectCompareCPU", false, NULL, NULL, NULL,
                      NULL, err);
    if (rc != 0)
        return rc;
    cpu_def d;
    char vendor[64];
    rv_qemu_cpu_features have = { 0 };
    if (cpu_def_parse(args->xml, false, &d, err) < 0)
        return -1;
    rc = host_cpu(vendor, sizeof(vendor), &have, err);
    if (rc == 0)
        rc = compare(&d, vendor, &have, "host", args->flags, err);
    return compare_done(rc, &d, &have, &ret->result);
}

/* The hypervisor's arguments: this driver's binary, x86_64, kvm or qemu. */
static int hypervisor(const char *emulator, const char *arch, const char *virttype, bool *kvm,
                      rv_err *err)
{
    if (emulator && strcmp(emulator, rv_qemu.binary) != 0)
        return fail(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                    "invalid argument: emulator '%s' is not this remvirtd's QEMU binary '%s'",
                    emulator, rv_qemu.binary);
    if (arch && strcmp(arch, "x86_64") != 0)
        return fail(err, RV_FROM_QEMU, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: unable to find any emulator to serve '%s' "
                    "architecture", arch);
    if (virttype && strcmp(virttype, "kvm") != 0 && strcmp(virttype, "qemu") != 0)
        return fail(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG, "invalid argument: unknown virttype: %s",
                    virttype);
    *kvm = virttype ? strcmp(virttype, "kvm") == 0 : rv_qemu.kvm;
    if (*kvm && !rv_qemu.kvm)
        return fail(err, RV_FROM_QEMU, RV_ERR_INVALID_ARG,
                    "invalid argument: KVM is not supported by '%s' on this host", rv_qemu.binary);
    return 0;
}

/* What the hypervisor gives a guest: KVM the host's features, TCG its own. */
static int hypervisor_cpu(bool kvm, char *vendor, size_t vsize, rv_qemu_cpu_features *have,
                          rv_err *err)
{
    if (kvm)
        return host_cpu(vendor, vsize, have, err);
    vendor[0] = '\0';
    return fset_copy(have, &probe.tcg) < 0 ? fail(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory")
                                           : 0;
}

/* What every CPU call does first: flags outside known refused (as
 * libvirtd's function func), the hypervisor's arguments checked when
 * given (hv), then the probe waited for.  0, RV_DEFERRED or -1. */
static int prologue(unsigned int flags, unsigned int known, const char *func, bool hv,
                    rv_string emulator, rv_string arch, rv_string virttype, bool *kvm,
                    rv_err *err)
{
    if (rv_driver_check_flags(RV_FROM_QEMU, flags, known, func, err) < 0)
        return -1;
    if (hv && hypervisor(emulator ? *emulator : NULL, arch ? *arch : NULL,
                         virttype ? *virttype : NULL, kvm, err) < 0)
        return -1;
    return rv_qemu_cpu_wait(true, err);
}

/* The same for the hypervisor's CPU calls, then what the hypervisor
 * offers: the host's CPU (its vendor, in vendor[64]) with KVM, any
 * vendor ("") with TCG; *have to clear. */
static int hv_prologue(unsigned int flags, unsigned int known, const char *func,
                       rv_string emulator, rv_string arch, rv_string virttype, bool *kvm,
                       char *vendor, rv_qemu_cpu_features *have, rv_err *err)
{
    int rc = prologue(flags, known, func, true, emulator, arch, virttype, kvm, err);
    return rc != 0 ? rc : hypervisor_cpu(*kvm, vendor, 64, have, err);
}

int rv_qemu_connect_compare_hypervisor_cpu(rv_driver_conn *c,
                                           const rv_connect_compare_hypervisor_cpu_args *args,
                                           rv_connect_compare_hypervisor_cpu_ret *ret, rv_err *err)
{
    (void)c;
    bool kvm;
    cpu_def d;
    char vendor[64];
    rv_qemu_cpu_features have = { 0 };
    int rc = hv_prologue(args->flags, COMPARE_FLAGS, "qemuConnectCompareHypervisorCPU",
                         args->emulator, args->arch, args->virttype, &kvm, vendor, &have, err);
    if (rc != 0 || cpu_def_parse(args->xmlCPU, false, &d, err) < 0) {
        rv_qemu_cpu_features_clear(&have);
        return rc > 0 ? rc : -1;
    }
    /* TCG emulates any vendor. */
    rc = compare(&d, kvm ? vendor : d.vendor ? d.vendor : "", &have, "hypervisor", args->flags,
                 err);
    return compare_done(rc, &d, &have, &ret->result);
}

/* The baseline of the n CPUs as <cpu> XML into *out; hv: the features
 * the hypervisor lacks of the model chosen are disabled (NULL: plain). */
static int baseline(char **xmls, u_int n, unsigned int flags, const rv_qemu_cpu_features *hv,
                    char **out, rv_err *err)
{
    if (n == 0)
        return fail(err, RV_FROM_CPU, RV_ERR_INVALID_ARG, "invalid argument: nothing to baseline");
    cpu_def *defs = calloc(n, sizeof(cpu_def));
    rv_qemu_cpu_features common = { 0 };
    char *xml = NULL;
    size_t len = 0;
    FILE *fp = NULL;
    int rc = -1;
    if (!defs) {
        fail(err, RV_FROM_CPU, RV_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    u_int parsed = 0;
    for (; parsed < n; parsed++) {
        if (cpu_def_parse(xmls[parsed], !hv, &defs[parsed], err) < 0)
            goto out;
        if (!defs[parsed].model) {
            fail(err, RV_FROM_CPU, RV_ERR_INVALID_ARG,
                 "invalid argument: no CPU model specified at index %u", parsed);
            parsed++;
            goto out;
        }
        if (defs[parsed].vendor && defs[0].vendor && strcmp(defs[parsed].vendor, defs[0].vendor) != 0) {
            fail(err, RV_FROM_CPU, RV_ERR_OPERATION_FAILED, "operation failed: CPU vendors do not match");
            parsed++;
            goto out;
        }
    }
    /* What every one has. */
    if (fset_copy(&common, &defs[0].required) < 0)
        goto oom;
    for (u_int i = 1; i < n; i++)
        for (size_t k = 0; k < common.n;)
            if (!fset_has(&defs[i].required, common.names[k]))
                fset_remove(&common, common.names[k]);
            else
                k++;
    const char *vendor = NULL;
    for (u_int i = 0; i < n && !vendor; i++)
        vendor = defs[i].vendor;
    /* One CPU keeps its model and its features as listed. */
    const cpu_model *m = n == 1 ? defs[0].m : best_model(vendor, &common);
    if (!m) {
        fail(err, RV_FROM_CPU, RV_ERR_OPERATION_FAILED,
             "operation failed: Cannot find suitable CPU model for given data");
        goto out;
    }
    if (!(fp = open_memstream(&xml, &len)))
        goto oom;
    fprintf(fp, "<cpu mode='custom' match='exact'>\n");
    fprintf(fp, "  <model fallback='%s'>%s</model>\n", n == 1 || hv ? "forbid" : "allow", m->name);
    if (vendor)
        fprintf(fp, "  <vendor>%s</vendor>\n", libvirt_vendor(vendor) ? libvirt_vendor(vendor) : vendor);
    if (flags & RV_CONNECT_BASELINE_CPU_EXPAND_FEATURES) {
        for (size_t k = 0; k < common.n; k++)
            fprintf(fp, "  <feature policy='require' name='%s'/>\n", rv_cpu_libvirt_name(common.names[k]));
    } else if (n == 1) {
        for (size_t k = 0; k < defs[0].nlisted; k++)
            fprintf(fp, "  <feature policy='%s' name='%s'/>\n", defs[0].listed[k].policy,
                    rv_cpu_libvirt_name(defs[0].listed[k].name));
    } else {
        for (size_t k = 0; k < common.n; k++)
            if (!fset_has(&m->feats, common.names[k]))
                fprintf(fp, "  <feature policy='require' name='%s'/>\n",
                        rv_cpu_libvirt_name(common.names[k]));
    }
    if (hv)
        for (size_t k = 0; k < m->feats.n; k++)
            if (!fset_has(hv, m->feats.names[k]))
                fprintf(fp, "  <feature policy='disable' name='%s'/>\n",
                        rv_cpu_libvirt_name(m->feats.names[k]));
    fprintf(fp, "</cpu>\n");
    if (fclose(fp) != 0) {
        fp = NULL;
        goto oom;
    }
    fp = NULL;
    *out = xml;
    xml = NULL;
    rc = 0;
    goto out;
oom:
    fail(err, RV_FROM_CPU, RV_ERR_NO_MEMORY, "out of memory");
out:
    if (fp)
        fclose(fp);
    free(xml);
    for (u_int i = 0; defs && i < parsed && i < n; i++)
        cpu_def_clear(&defs[i]);
    free(defs);
    rv_qemu_cpu_features_clear(&common);
    return rc;
}

int rv_qemu_connect_baseline_cpu(rv_driver_conn *c, const rv_connect_baseline_cpu_args *args,
                                 rv_connect_baseline_cpu_ret *ret, rv_err *err)
{
    (void)c;
    int rc = prologue(args->flags, BASELINE_FLAGS, "qemuConnectBaselineCPU", false, NULL, NULL,
                      NULL, NULL, err);
    if (rc != 0)
        return rc;
    if (baseline(args->xmlCPUs.xmlCPUs_val, args->xmlCPUs.xmlCPUs_len, args->flags, NULL, &ret->cpu,
                 err) < 0)
        return -1;
    return rv_string_result(0, &ret->cpu, err);
}

int rv_qemu_connect_baseline_hypervisor_cpu(rv_driver_conn *c,
                                            const rv_connect_baseline_hypervisor_cpu_args *args,
                                            rv_connect_baseline_hypervisor_cpu_ret *ret, rv_err *err)
{
    (void)c;
    bool kvm;
    char vendor[64];
    rv_qemu_cpu_features have = { 0 };
    int rc = hv_prologue(args->flags, BASELINE_FLAGS, "qemuConnectBaselineHypervisorCPU",
                         args->emulator, args->arch, args->virttype, &kvm, vendor, &have, err);
    if (rc == RV_DEFERRED)
        return rc;
    if (rc == 0)
        rc = baseline(args->xmlCPUs.xmlCPUs_val, args->xmlCPUs.xmlCPUs_len, args->flags, &have,
                      &ret->cpu, err);
    rv_qemu_cpu_features_clear(&have);
    return rc < 0 ? -1 : rv_string_result(0, &ret->cpu, err);
}
