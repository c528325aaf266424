/* Start a helper program (QEMU) for a unit test: its output goes to a log
 * file the test can show, and it dies with the test, whatever kills it. */
#ifndef RV_TESTS_SPAWN_H
#define RV_TESTS_SPAWN_H

#include <fcntl.h>
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

#endif
