/* A running guest's CPU times, read without opening a file per call.
 *
 * GetInfo's total is the process's CPU clock (clock_getcpuclockid): one
 * system call, no file.  The statistics that need user and system time
 * apart, and each vCPU thread's time, pread stat files kept open for the
 * process (struct rv_qemu_cpu_files, made at the first such call and
 * closed when the process is gone); the vCPU threads are looked up by
 * name once, and again only when the vCPU count changes or one of them
 * has gone.
 *
 * /proc gives these times in clock ticks (1/USER_HZ, 10 ms), and
 * libvirtd's GetInfo and statistics report them at that resolution, so
 * a reading younger than one tick is given again instead of made anew:
 * a client polling in a loop costs the daemon no system call per call,
 * one polling every second (virt-top, virt-manager) sees fresh values.
 * The resident set (domstats' balloon.rss) comes from the same stat file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/drivers/qemu/qemu_driver.h"

struct vcpu_file {
    int fd;                     /* /proc/PID/task/TID/stat of the vCPU, -1: not found */
    bool seen;                  /* ns was read in the last sample */
    unsigned long long ns;
};

struct rv_qemu_cpu_files {
    pid_t pid;                  /* the process they belong to */
    int stat_fd;                /* /proc/PID/stat, -1: not open */
    /* The last readings, with when they were made (CLOCK_MONOTONIC ns, 0:
     * none): the CPU clock's, and a sample of the stat files (the
     * process's times when sample_proc, the vCPUs' when sample_vcpus). */
    unsigned long long total_at, total_ns;
    unsigned long long sample_at;
    bool sample_proc, sample_vcpus, proc_ok;
    unsigned long long user_ns, system_ns;
    unsigned nvcpus;            /* vcpu's length: the count they were looked up for */
    bool rescan;                /* a vCPU thread went: look them up again */
    struct vcpu_file vcpu[];
};

static unsigned long long cpu_clock_ns(pid_t pid)
{
    clockid_t clock;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
        return 0;
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* The space before field n (n > 2) of a stat file's text: after the
 * command name in parentheses, which may hold anything.  Skipped by
 * hand: sscanf cost more than the read. */
static const char *before_field(const char *buf, int n)
{
    const char *p = strrchr(buf, ')');
    for (int field = 2; p && field < n; field++)
        p = strchr(p + 1, ' ');
    return p;
}

/* The unit of /proc's CPU times, in ns. */
static unsigned long long tick_ns(void)
{
    static unsigned long long ns;
    if (!ns) {
        long hz = sysconf(_SC_CLK_TCK);
        ns = 1000000000ULL / (unsigned long long)(hz > 0 ? hz : 100);
    }
    return ns;
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);    /* the vDSO: no system call */
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* A reading made at `at` may be given again at `now`. */
static bool fresh(unsigned long long at, unsigned long long now)
{
    return at && now >= at && now - at < tick_ns();
}

/* User and system time (fields 14 and 15) from a stat file's text
 * (NUL-terminated). */
static bool parse_times(const char *buf, unsigned long long *user_ns,
                        unsigned long long *system_ns)
{
    const char *p = before_field(buf, 14);
    if (!p)
        return false;
    char *end;
    unsigned long long utime = strtoull(p + 1, &end, 10);
    if (end == p + 1 || *end != ' ')
        return false;
    const char *q = end + 1;
    unsigned long long stime = strtoull(q, &end, 10);
    if (end == q || *end != ' ')
        return false;
    *user_ns = utime * tick_ns();
    *system_ns = stime * tick_ns();
    return true;
}

/* A stat file's text at offset 0 (a /proc file is made anew on each read). */
static bool read_stat(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

unsigned long long rv_qemu_proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    bool ok = read_stat(fd, buf, sizeof(buf));
    close(fd);
    /* starttime is field 22, in clock ticks since boot. */
    const char *p = ok ? before_field(buf, 22) : NULL;
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

bool rv_qemu_proc_times(const char *stat_path, unsigned long long *user_ns,
                        unsigned long long *system_ns)
{
    char buf[1024];
    int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = read_stat(fd, buf, sizeof(buf)) && parse_times(buf, user_ns, system_ns);
    close(fd);
    return ok;
}

void rv_qemu_cpu_files_close(qemu_dom *d)
{
    struct rv_qemu_cpu_files *f = d->cpu_files;
    if (!f)
        return;
    if (f->stat_fd >= 0)
        close(f->stat_fd);
    for (unsigned i = 0; i < f->nvcpus; i++)
        if (f->vcpu[i].fd >= 0)
            close(f->vcpu[i].fd);
    free(f);
    d->cpu_files = NULL;
}

/* Each vCPU thread's stat file, opened once: QEMU names the threads
 * "CPU <n>/<accel>" (-name debug-threads=on). */
static void open_vcpus(struct rv_qemu_cpu_files *f)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)f->pid);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char comm[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%.20s/comm", (int)f->pid, e->d_name);
        FILE *fp = fopen(path, "re");
        if (!fp)
            continue;
        bool got = fgets(comm, sizeof(comm), fp) != NULL;
        fclose(fp);
        unsigned idx;
        if (!got || sscanf(comm, "CPU %u/", &idx) != 1 || idx >= f->nvcpus || f->vcpu[idx].fd >= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", (int)f->pid, e->d_name);
        f->vcpu[idx].fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    closedir(dir);
}

/* The domain's files for its current process and nvcpus vCPUs (0: the
 * process's alone, or as many vCPUs as were looked up already). */
static struct rv_qemu_cpu_files *cpu_files(qemu_dom *d, unsigned nvcpus)
{
    struct rv_qemu_cpu_files *f = d->cpu_files;
    if (f && f->pid == d->pid && !f->rescan && (nvcpus == 0 || nvcpus == f->nvcpus))
        return f;
    if (f && f->pid == d->pid && nvcpus == 0)
        nvcpus = f->nvcpus;
    rv_qemu_cpu_files_close(d);
    if (d->pid <= 0 || !(f = calloc(1, sizeof(*f) + nvcpus * sizeof(f->vcpu[0]))))
        return NULL;
    f->pid = d->pid;
    f->nvcpus = nvcpus;
    for (unsigned i = 0; i < nvcpus; i++)
        f->vcpu[i].fd = -1;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
    f->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (nvcpus)
        open_vcpus(f);
    d->cpu_files = f;
    return f;
}

unsigned long long rv_qemu_dom_cpu_time_ns(qemu_dom *d)
{
    if (d->pid <= 0)
        return 0;
    /* Made if need be, never looked up again here (rescan is the stats'). */
    struct rv_qemu_cpu_files *f = d->cpu_files;
    if ((!f || f->pid != d->pid) && !(f = cpu_files(d, 0)))
        return cpu_clock_ns(d->pid);
    unsigned long long now = now_ns();
    if (!fresh(f->total_at, now)) {
        f->total_ns = cpu_clock_ns(d->pid);
        f->total_at = now;
    }
    return f->total_ns;
}

/* A new sample: the vCPUs first, so that none is read after the process
 * that holds it and counted above it. */
static void sample(struct rv_qemu_cpu_files *f, bool proc, bool vcpus, unsigned long long now)
{
    char buf[1024];
    for (unsigned i = 0; vcpus && i < f->nvcpus; i++) {
        struct vcpu_file *v = &f->vcpu[i];
        unsigned long long user, system;
        v->seen = false;
        if (v->fd < 0) {
            f->rescan = true;   /* not found (not named yet?): look again next time */
            continue;
        }
        if (read_stat(v->fd, buf, sizeof(buf)) && parse_times(buf, &user, &system)) {
            v->ns = user + system;
            v->seen = true;
        } else {
            f->rescan = true;   /* the thread went (an unplug): look again next time */
        }
    }
    f->proc_ok = proc && f->stat_fd >= 0 && read_stat(f->stat_fd, buf, sizeof(buf)) &&
                 parse_times(buf, &f->user_ns, &f->system_ns);
    f->sample_proc = proc;
    f->sample_vcpus = vcpus;
    f->sample_at = now;
}

bool rv_qemu_dom_cpu_times(qemu_dom *d, bool proc, unsigned nvcpus, unsigned long long *user_ns,
                           unsigned long long *system_ns, unsigned long long *vcpu_ns, bool *seen)
{
    struct rv_qemu_cpu_files *f = d->cpu_files;
    unsigned long long now = now_ns();
    bool cached = f && f->pid == d->pid && fresh(f->sample_at, now) && (!proc || f->sample_proc) &&
                  (!nvcpus || (f->sample_vcpus && f->nvcpus == nvcpus));
    if (!cached) {
        if (!(f = cpu_files(d, nvcpus)))
            return false;
        sample(f, proc, nvcpus > 0, now);
    }
    for (unsigned i = 0; i < nvcpus; i++)
        if ((seen[i] = f->vcpu[i].seen))
            vcpu_ns[i] = f->vcpu[i].ns;
    if (!proc || !f->proc_ok)
        return false;
    *user_ns = f->user_ns;
    *system_ns = f->system_ns;
    return true;
}

unsigned long long rv_qemu_dom_rss_kib(qemu_dom *d)
{
    struct rv_qemu_cpu_files *f = d->cpu_files;
    char buf[1024];
    if (d->pid <= 0 || ((!f || f->pid != d->pid) && !(f = cpu_files(d, 0))) || f->stat_fd < 0 ||
        !read_stat(f->stat_fd, buf, sizeof(buf)))
        return 0;
    /* Field 24: the resident set, in pages. */
    const char *p = before_field(buf, 24);
    long page = sysconf(_SC_PAGESIZE);
    return p ? strtoull(p + 1, NULL, 10) * (unsigned long long)(page > 0 ? page : 4096) / 1024 : 0;
}
