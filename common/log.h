/* Logging with a category per source file.
 *
 * A disabled call costs two integer comparisons: the category caches the
 * lowest priority any output would take, stamped with the serial of the
 * filter configuration it was computed from.  Only a stale stamp or an
 * enabled priority reaches rv_log_message(), which takes the lock, formats
 * and appends to the outputs' batch buffer.  Buffers are written when full,
 * on errors, and when the owner calls rv_log_flush() or
 * rv_log_flush_urgent().  The daemon writes a batch holding an info or
 * higher message before its loop sleeps, and a batch of debug messages
 * only RV_LOG_DEBUG_DELAY later (or when full): debug output of a busy
 * daemon is then one write per 64 KiB, not one per call.
 *
 * Configuration uses libvirt's syntax:
 *   filters: "1:server.client 3:transport"   level:glob ...  (a name without
 *            '*' matches anywhere in the category: "*transport*")
 *   outputs: "1:stderr 2:file:/var/log/remvirtd.log 3:syslog:remvirtd 2:journald"
 *            stderr and files are batched; syslog (/dev/log) and journald
 *            (its native protocol, structured fields) get one datagram per
 *            message, never waited for: a full socket drops the message
 *            and the count is sent when the socket takes one again.
 * Each line: time, thread, priority, category, function:line, message.
 * Levels: 1 debug, 2 info, 3 warning, 4 error. */
#ifndef RV_COMMON_LOG_H
#define RV_COMMON_LOG_H

#include <stddef.h>

#include "common/error.h"

enum { RV_LOG_DEBUG = 1, RV_LOG_INFO = 2, RV_LOG_WARN = 3, RV_LOG_ERROR = 4 };

typedef struct rv_log_category {
    const char *name;
    int threshold;          /* messages below this priority are dropped */
    unsigned serial;        /* rv_log_serial the threshold belongs to */
} rv_log_category;

extern unsigned rv_log_serial;

/* Put once at the top of a .c file: RV_LOG_CATEGORY("server.client"); */
#define RV_LOG_CATEGORY(catname) \
    static rv_log_category rv_log_cat_ = { (catname), 0, 0 }

#define RV_LOG(prio, ...) \
    do { \
        if (__builtin_expect(__atomic_load_n(&rv_log_cat_.serial, __ATOMIC_RELAXED) != \
                             __atomic_load_n(&rv_log_serial, __ATOMIC_RELAXED), 0) || \
            (prio) >= __atomic_load_n(&rv_log_cat_.threshold, __ATOMIC_RELAXED)) \
            rv_log_message(&rv_log_cat_, (prio), __FILE__, __func__, __LINE__, __VA_ARGS__); \
    } while (0)

/* Whether a message of prio would go out from this file's category, at
 * the same cost as a disabled RV_LOG (the slow path only after a
 * configuration change): for work done only to be logged (timing). */
#define RV_LOG_ENABLED(prio) RV_LOG_PASSES_(prio)
#define RV_LOG_PASSES_(prio) \
    (__builtin_expect(__atomic_load_n(&rv_log_cat_.serial, __ATOMIC_RELAXED) != \
                      __atomic_load_n(&rv_log_serial, __ATOMIC_RELAXED), 0) \
         ? rv_log_refresh(&rv_log_cat_, (prio)) \
         : (prio) >= __atomic_load_n(&rv_log_cat_.threshold, __ATOMIC_RELAXED))

#ifdef RV_LOG_NO_DEBUG
/* Debug calls compiled out (bench/logging's baseline): still type-checked,
 * never run. */
#define RV_DEBUG(...) \
    do { \
        if (0) \
            rv_log_message(&rv_log_cat_, RV_LOG_DEBUG, __FILE__, __func__, __LINE__, __VA_ARGS__); \
    } while (0)
#undef RV_LOG_ENABLED
#define RV_LOG_ENABLED(prio) ((prio) != RV_LOG_DEBUG && RV_LOG_PASSES_(prio))
#else
#define RV_DEBUG(...) RV_LOG(RV_LOG_DEBUG, __VA_ARGS__)
#endif
#define RV_INFO(...)  RV_LOG(RV_LOG_INFO, __VA_ARGS__)
#define RV_WARN(...)  RV_LOG(RV_LOG_WARN, __VA_ARGS__)
#define RV_ERROR(...) RV_LOG(RV_LOG_ERROR, __VA_ARGS__)

void rv_log_message(rv_log_category *cat, int prio, const char *file, const char *func,
                    int line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Recomputes the category's threshold; whether prio passes it. */
int rv_log_refresh(rv_log_category *cat, int prio);

/* The client whose call this thread serves (NULL: none), for the
 * structured outputs' REMVIRT_CLIENT and REMVIRT_CLIENT_IDENTITY fields;
 * describe writes its identity, and runs only when a message goes out. */
typedef const char *(*rv_log_describe_fn)(const void *client, char *buf, size_t len);
void rv_log_set_client(const void *client, unsigned long long id, rv_log_describe_fn describe);

/* Each returns 0, or -1 with err naming the bad part of the spec. */
int rv_log_set_filters(const char *spec, rv_err *err);
int rv_log_set_outputs(const char *spec, rv_err *err);
int rv_log_set_level(int level, rv_err *err);    /* default level for unfiltered categories */
/* stderr at the default level: what an empty outputs setting means. */
int rv_log_set_default_outputs(rv_err *err);

/* The settings as text in the same syntax ("1:*server* 3:*rpc*",
 * "1:file:/x 3:stderr"), malloc'd, and their number; NULL when out of
 * memory. */
char *rv_log_get_filters(int *count);
char *rv_log_get_outputs(int *count);

/* Reopen every file output by its name (after logrotate renamed it):
 * what is batched goes to the old file first.  -1 with err naming the
 * first file that could not be reopened (it keeps the old one). */
int rv_log_reopen(rv_err *err);

/* For tests: the datagram sockets of the journald and syslog outputs
 * (NULL keeps one); outputs made after the call use them. */
void rv_log_set_socket_paths(const char *journal, const char *syslog_path);

/* Write what is batched.  autoflush: write after every message instead
 * (for short-lived programs and the client library). */
void rv_log_flush(void);
void rv_log_set_autoflush(int on);

/* Seconds a batch of debug messages may wait for more before it is
 * written (the owner's timer). */
#define RV_LOG_DEBUG_DELAY 0.1
/* Write the batch if it holds a message at info or above.  Returns 1 when
 * debug messages stay batched: the owner then calls rv_log_flush() within
 * RV_LOG_DEBUG_DELAY. */
int rv_log_flush_urgent(void);
/* Drop outputs and filters (tests, shutdown). */
void rv_log_reset(void);

/* For tests: the threshold a category name gets under the current config. */
int rv_log_threshold_for(const char *catname);

#endif
