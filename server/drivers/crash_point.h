/* Crash points: remvirtd kills itself (SIGKILL) at step N of a multi-step
 * operation when its environment says RV_CRASH_AT=op:N, so that a test can
 * stop it at every enumerated step of each operation and check what a
 * restart makes of it (tests/interop/test-qemu-crash-points.sh).  Read once
 * when the QEMU driver loads; unset, a crash point costs one load and one
 * branch. */
#ifndef RV_SERVER_DRIVERS_CRASH_POINT_H
#define RV_SERVER_DRIVERS_CRASH_POINT_H

extern const char *rv_crash_at_op;     /* NULL: no crash point armed */

/* Read RV_CRASH_AT ("op:N"; anything else arms nothing). */
void rv_crash_init(void);
void rv_crash_check(const char *op, int step);

/* Step `step` of operation `op` begins: die here if armed for it. */
static inline void rv_crash_point(const char *op, int step)
{
    if (rv_crash_at_op)
        rv_crash_check(op, step);
}

#endif
