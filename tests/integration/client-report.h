/* How the C programs that test libremvirt report (hostile-client,
 * event-client, reader-race-client): "ok   ..." per check passed, and
 * "FAIL: ..." with the calling thread's last libremvirt error, then
 * exit status 1, at the first that fails. */
#ifndef RV_TESTS_CLIENT_REPORT_H
#define RV_TESTS_CLIENT_REPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "remvirt.h"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stdout);
    vprintf(fmt, ap);
    va_end(ap);
    const rv_error_info *e = rv_last_error();
    if (e)
        printf(" (last error %d: %s)", e->code, e->message);
    putchar('\n');
    exit(1);
}

static void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ok(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ok   ", stdout);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

#endif
