/* A running guest's CPU times, read without opening a file per call.
 *
 * GetInfo's total is the process's CPU clock (clock_getcpuclockid): one
 * system call, no file.  The statistics that need user and system time
 * apart, and each vCPU thread's time, pread stat files kept open for the
 * process (struct rv_qemu_cpu_files, made at the first such call and
 * closed when the process is gone); the vCPU threads are looked up by
 * name once, and again only when the vCPU count changes or one of them
 * has gone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/drivers/qemu/qemu_driver.h"

struct rv_qemu_cpu_files {
    pid_t pid;                  /* the process they belong to */
    int stat_fd;                /* /proc/PID/stat, -1: not open */
    unsigned nvcpus;            /* vcpu_fd's length: the count they were looked up for */
    bool rescan;                /* a vCPU thread went: look them up again */
    int vcpu_fd[];              /* /proc/PID/task/TID/stat of vCPU i, -1: not found */
};

unsigned long long rv_qemu_cpu_time_ns(pid_t pid)
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

/* User and system time (fields 14 and 15) from a stat file's text
 * (NUL-terminated). */
static bool parse_times(const char *buf, unsigned long long *user_ns,
                        unsigned long long *system_ns)
{
    static unsigned long long tick_ns;
    if (!tick_ns) {
        long hz = sysconf(_SC_CLK_TCK);
        tick_ns = 1000000000ULL / (unsigned long long)(hz > 0 ? hz : 100);
    }
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
    *user_ns = utime * tick_ns;
    *system_ns = stime * tick_ns;
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
        if (f->vcpu_fd[i] >= 0)
            close(f->vcpu_fd[i]);
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
        if (!got || sscanf(comm, "CPU %u/", &idx) != 1 || idx >= f->nvcpus || f->vcpu_fd[idx] >= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", (int)f->pid, e->d_name);
        f->vcpu_fd[idx] = open(path, O_RDONLY | O_CLOEXEC);
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
    if (d->pid <= 0 || !(f = malloc(sizeof(*f) + nvcpus * sizeof(f->vcpu_fd[0]))))
        return NULL;
    f->pid = d->pid;
    f->nvcpus = nvcpus;
    f->rescan = false;
    for (unsigned i = 0; i < nvcpus; i++)
        f->vcpu_fd[i] = -1;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
    f->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (nvcpus)
        open_vcpus(f);
    d->cpu_files = f;
    return f;
}

bool rv_qemu_dom_proc_times(qemu_dom *d, unsigned long long *user_ns,
                            unsigned long long *system_ns)
{
    char buf[1024];
    struct rv_qemu_cpu_files *f = cpu_files(d, 0);
    return f && f->stat_fd >= 0 && read_stat(f->stat_fd, buf, sizeof(buf)) &&
           parse_times(buf, user_ns, system_ns);
}

void rv_qemu_dom_vcpu_times(qemu_dom *d, unsigned nvcpus, unsigned long long *times, bool *seen)
{
    struct rv_qemu_cpu_files *f = nvcpus ? cpu_files(d, nvcpus) : NULL;
    for (unsigned i = 0; f && i < nvcpus; i++) {
        char buf[1024];
        unsigned long long user, system;
        if (f->vcpu_fd[i] < 0) {
            f->rescan = true;   /* not found (not named yet?): look again next time */
            continue;
        }
        if (read_stat(f->vcpu_fd[i], buf, sizeof(buf)) && parse_times(buf, &user, &system)) {
            times[i] = user + system;
            seen[i] = true;
        } else {
            f->rescan = true;   /* the thread went (an unplug): look again next time */
        }
    }
}
