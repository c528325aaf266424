/* remvirtd: read the configuration, set up logging, take the pid file,
 * serve until told to stop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/safe_open.h"
#include "server/config.h"
#include "server/reload.h"
#include "server/server.h"

RV_LOG_CATEGORY("server.main");

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: remvirtd [OPTIONS]\n"
            "  -f, --config FILE          configuration file (default: " RV_CONFIG_FILE ",\n"
            "                             when it exists)\n"
            "  -p, --pidfile PATH         write the daemon's pid here (locked while running)\n"
            "      --unix-sock-dir DIR    where remvirt-sock and remvirt-sock-ro are created\n"
            "      --max-clients N        connected clients allowed at once\n"
            "      --max-client-requests N  calls in flight per client\n"
            "  -t, --timeout SECS         exit after SECS without clients (0: never)\n"
            "  -v, --verbose              log debug messages to stderr\n"
            "  -h, --help                 this text\n"
            "  -V, --version              print the version\n");
}

/* The pid file stays locked for the daemon's life, so a second daemon with
 * the same pid file refuses to start instead of fighting over sockets.
 * It often lives where others can create names (a shared /tmp, a
 * misconfigured run directory), so it is reached without following a
 * symbolic link that another user could have planted on the way, and a
 * name that is not plainly our own file (a symbolic link, someone else's
 * file, a hard link to another name) is refused before anything is
 * truncated or written (rv_open_file_safely).  *dir keeps the directory
 * it is in, to remove it from at exit. */
static int take_pidfile(const char *path, int *dir, char **name)
{
    rv_err err = { 0 };
    int fd = rv_open_file_safely(path, O_RDWR | O_CREAT, 0644, dir, name, RV_FROM_CONF, &err);
    if (fd < 0) {
        fprintf(stderr, "remvirtd: refusing the pid file %s\n", err.message);
        rv_err_clear(&err);
        return -1;
    }
    struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
    if (fcntl(fd, F_SETLK, &lk) < 0) {
        fprintf(stderr, "remvirtd: %s is locked: is another remvirtd running?\n", path);
        close(fd);
        close(*dir);
        free(*name);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (ftruncate(fd, 0) < 0 || write(fd, pid, (size_t)n) != n) {
        fprintf(stderr, "remvirtd: cannot write the pid file %s: %s\n", path, strerror(errno));
        close(fd);
        close(*dir);
        free(*name);
        return -1;
    }
    return fd;
}

/* Remove the pid file only while its name still leads to the file we
 * locked: someone may have replaced it since. */
static void drop_pidfile(int fd, int dir, char *name)
{
    struct stat own, now;
    if (fstat(fd, &own) == 0 && fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        now.st_dev == own.st_dev && now.st_ino == own.st_ino)
        unlinkat(dir, name, 0);
    free(name);
    close(fd);
    close(dir);
}

static int apply_logging(const rvs_config *cfg, rv_err *err)
{
    if (cfg->log_level && rv_log_set_level(cfg->log_level, err) < 0)
        return -1;
    if (cfg->log_filters && rv_log_set_filters(cfg->log_filters, err) < 0)
        return -1;
    if (cfg->log_outputs && rv_log_set_outputs(cfg->log_outputs, err) < 0)
        return -1;
    return 0;
}

/* Long options without a short form; their order is flag_keys' order below. */
enum { OPT_SOCK_DIR = 256, OPT_MAX_CLIENTS, OPT_MAX_REQUESTS, OPT_TIMEOUT };

/* Client buffers grow to megabytes and go when the client does.  glibc
 * raises its mmap threshold each time such a buffer is freed (up to 32
 * MiB), after which the next ones grow inside the heap: their doubling
 * leaves holes, and what clients left is kept after they close.  A fixed
 * threshold keeps every buffer past 128 KiB in its own mapping (grown by
 * mremap, given back by munmap): bench/run-memory-budget.sh's second
 * flood peaked at 228 MiB and kept 46 MiB after closing without it, 127
 * MiB and 10 MiB with it.  Small buffers, a call's, stay in the heap. */
static void tune_allocator(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'f' },
        { "pidfile", required_argument, NULL, 'p' },
        { "unix-sock-dir", required_argument, NULL, OPT_SOCK_DIR },
        { "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
        { "max-client-requests", required_argument, NULL, OPT_MAX_REQUESTS },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *config_path = NULL, *pidfile = NULL;
    tune_allocator();
    /* Flags override the file, so they are applied after it is read; a
     * flag given twice counts once, with its last value. */
    static const char *const flag_keys[] = { "unix_sock_dir", "max_clients",
                                             "max_client_requests", "timeout" };
    enum { NFLAGS = sizeof(flag_keys) / sizeof(flag_keys[0]) };
    const char *flag_values[NFLAGS] = { NULL };
    int verbose = 0, opt;
    while ((opt = getopt_long(argc, argv, "f:p:t:vhV", opts, NULL)) != -1) {
        switch (opt) {
        case 'f': config_path = optarg; break;
        case 'p': pidfile = optarg; break;
        case 'v': verbose = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("remvirtd %s\n", PACKAGE_VERSION); return 0;
        case 't': opt = OPT_TIMEOUT; /* fall through */
        case OPT_SOCK_DIR: case OPT_MAX_CLIENTS: case OPT_MAX_REQUESTS: case OPT_TIMEOUT:
            flag_values[opt - OPT_SOCK_DIR] = optarg;
            break;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "remvirtd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    rvs_config cfg;
    rvs_config_init(&cfg);
    rv_err err = { 0 };
    int rc = 1;
    /* Installed, remvirtd reads its configuration from /etc by default. */
    if (!config_path && access(RV_CONFIG_FILE, F_OK) == 0)
        config_path = RV_CONFIG_FILE;
    if (config_path && rvs_config_load(&cfg, config_path, &err) < 0)
        goto out;
    for (int i = 0; i < NFLAGS; i++) {
        if (!flag_values[i])
            continue;
        char *quoted = NULL, where[64];
        snprintf(where, sizeof(where), "--%s", flag_keys[i]);
        for (char *p = where; *p; p++)
            if (*p == '_')
                *p = '-';
        /* Flag values are taken literally; strings get the quotes the
         * file syntax wants. */
        int is_string = strcmp(flag_keys[i], "unix_sock_dir") == 0;
        if (is_string && asprintf(&quoted, "\"%s\"", flag_values[i]) < 0)
            goto out;
        int bad = rvs_config_set(&cfg, flag_keys[i], is_string ? quoted : flag_values[i],
                                 where, &err);
        free(quoted);
        if (bad < 0)
            goto out;
    }
    if (verbose && !cfg.log_outputs) {
        cfg.log_level = 1;
        cfg.log_outputs = strdup("1:stderr");
    }
    if (apply_logging(&cfg, &err) < 0)
        goto out;

    signal(SIGPIPE, SIG_IGN);
    int pid_fd = -1, pid_dir = -1;
    char *pid_name = NULL;
    if (pidfile && (pid_fd = take_pidfile(pidfile, &pid_dir, &pid_name)) < 0) {
        rvs_config_free(&cfg);
        return 1;
    }
    rvs_server *srv = rvs_server_new(&cfg, &err);
    if (srv) {
        rvs_reload_ctx reload = { .config_path = config_path, .applied = &cfg };
        rvs_server_on_hangup(srv, rvs_reload, &reload);
        RV_INFO("remvirtd %s started, pid %d", PACKAGE_VERSION, (int)getpid());
        rc = rvs_server_run(srv);
        rvs_server_free(srv);
        RV_INFO("remvirtd stopped");
    }
    if (pid_fd >= 0)
        drop_pidfile(pid_fd, pid_dir, pid_name);
out:
    if (rv_err_is_set(&err))
        fprintf(stderr, "remvirtd: %s\n", err.message ? err.message : "error");
    rv_err_clear(&err);
    rvs_config_free(&cfg);
    rv_log_reset();
    return rc;
}
