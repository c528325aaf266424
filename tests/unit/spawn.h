/* Find and start a helper program (QEMU) for a unit test: its output goes to a log
 * file the test can show, and it dies with the test, whatever kills it. */
#ifndef RV_TESTS_SPAWN_H
#define RV_TESTS_SPAWN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

/* fork and exec argv[0] with stdin from /dev/null and stdout and stderr to
 * log_path; the child's pid, or -1 when fork fails. */
static inline pid_t spawn_logged(char *const argv[], const char *log_path)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)        /* the test died before prctl */
        _exit(127);
    int null = open("/dev/null", O_RDONLY);
    int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null < 0 || log < 0)
        _exit(127);
    dup2(null, 0);
    dup2(log, 1);
    dup2(log, 2);
    execv(argv[0], argv);
    _exit(127);
}

/* qemu-system-x86_64: $RV_TEST_QEMU if set, else the first on $PATH;
 * NULL when there is none (the test then skips). */
static inline const char *find_qemu(void)
{
    static char found[4096];
    const char *env = getenv("RV_TEST_QEMU");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(found, sizeof(found), "%.*s/qemu-system-x86_64", (int)len, path);
        if (len > 0 && access(found, X_OK) == 0)
            return found;
        path += len + (colon ? 1 : 0);
    }
    return NULL;
}

#endif
