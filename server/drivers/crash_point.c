/* Crash points (crash_point.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/drivers/crash_point.h"

const char *rv_crash_at_op;
static int crash_at_step;
static char crash_op[64];

void rv_crash_init(void)
{
    const char *spec = getenv("RV_CRASH_AT");
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    char *end = NULL;
    long step = colon ? strtol(colon + 1, &end, 10) : 0;
    rv_crash_at_op = NULL;
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(crash_op) || !end ||
        *end || step <= 0 || step > 1000)
        return;
    memcpy(crash_op, spec, (size_t)(colon - spec));
    crash_op[colon - spec] = '\0';
    crash_at_step = (int)step;
    rv_crash_at_op = crash_op;
}

void rv_crash_check(const char *op, int step)
{
    if (step != crash_at_step || strcmp(op, rv_crash_at_op) != 0)
        return;
    /* The test reads this line to know the step was reached. */
    char line[128];
    int n = snprintf(line, sizeof(line), "remvirtd: crash point %s:%d\n", op, step);
    if (n > 0 && write(2, line, (size_t)n) < 0)
        n = 0;
    kill(getpid(), SIGKILL);
    pause();
}
