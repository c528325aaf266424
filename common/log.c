#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/safe_open.h"
#include "common/util.h"

#define RV_LOG_MAX_FILTERS 64
#define RV_LOG_MAX_OUTPUTS 8
#define RV_LOG_BATCH 65536
#define RV_LOG_NEVER 99

/* A filter's pattern is a glob on the category name, kept as libvirt 9
 * keeps them: "*NAME*", whatever NAME is, so a plain name matches
 * anywhere. */
typedef struct {
    int level;
    char *match;
} log_filter;

/* Where messages go: a file descriptor written in batches (stderr, a
 * file), or a datagram socket that takes one message per datagram and is
 * never waited for (syslog's /dev/log, journald's native socket). */
typedef enum { OUT_FD, OUT_SYSLOG, OUT_JOURNALD } output_kind;

typedef struct {
    int level;
    output_kind kind;
    int fd;
    int owns_fd;
    char *path;             /* a file's path (reopened by rv_log_reopen); "stderr";
                             * syslog's ident; journald's socket */
    unsigned long dropped;  /* datagrams the full socket refused, not yet reported */
} log_output;

/* The datagram sockets; tests point them at stand-ins. */
static char journal_socket[108] = "/run/systemd/journal/socket";
static char syslog_socket[108] = "/dev/log";

/* The client whose call is being served on this thread, if any: set by
 * the server around each call, described only when a message is sent. */
static __thread const void *log_client;
static __thread unsigned long long log_client_id;
static __thread rv_log_describe_fn log_client_describe;

/* Serial 0 is what categories start with, so the first call of each
 * category computes its threshold. */
unsigned rv_log_serial = 1;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_filter filters[RV_LOG_MAX_FILTERS];
static int nfilters;
static log_output outputs[RV_LOG_MAX_OUTPUTS] = { { RV_LOG_WARN, OUT_FD, 2, 0, NULL, 0 } };
static int noutputs = 1;
static int default_level = RV_LOG_WARN;
static int autoflush;
static char batch[RV_LOG_BATCH];
static size_t batch_len;
static int batch_urgent;    /* the batch holds a message above debug */

static void bump_serial(void)
{
    unsigned s = __atomic_load_n(&rv_log_serial, __ATOMIC_RELAXED) + 1;
    if (s == 0)
        s = 1;
    __atomic_store_n(&rv_log_serial, s, __ATOMIC_RELEASE);
}

/* Called with log_lock held. */
static int threshold_locked(const char *name)
{
    int level = default_level;
    for (int i = 0; i < nfilters; i++) {
        if (fnmatch(filters[i].match, name, 0) == 0) {
            level = filters[i].level;
            break;
        }
    }
    int min_out = RV_LOG_NEVER;
    for (int i = 0; i < noutputs; i++)
        if (outputs[i].level < min_out)
            min_out = outputs[i].level;
    return level > min_out ? level : min_out;
}

int rv_log_threshold_for(const char *catname)
{
    pthread_mutex_lock(&log_lock);
    int t = threshold_locked(catname);
    pthread_mutex_unlock(&log_lock);
    return t;
}

/* gettid() is a system call each time; a thread's id changes only in a
 * forked child, which forgets the cached one. */
static __thread int cached_tid;

static void forget_tid(void)
{
    cached_tid = 0;
}

__attribute__((constructor)) static void register_forget_tid(void)
{
    pthread_atfork(NULL, NULL, forget_tid);
}

static int thread_id(void)
{
    if (cached_tid == 0)
        cached_tid = (int)gettid();
    return cached_tid;
}

/* "YYYY-MM-DD HH:MM:SS" of sec, formatted once per second rather than per
 * message (with log_lock held).  Both cut a debug line's cost measurably:
 * bench/run-logging.sh. */
static const char *second_text(time_t sec)
{
    static time_t cached_sec = -1;
    static char text[64];
    if (sec != cached_sec) {
        struct tm tm;
        gmtime_r(&sec, &tm);
        snprintf(text, sizeof(text), "%04d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cached_sec = sec;
    }
    return text;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return;             /* nowhere left to report it */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The batch holds records as: 1 byte priority, then the line.  Flushing
 * sends each output the lines at or above its level in one write. */
static void flush_locked(void)
{
    if (batch_len == 0)
        return;
    static char out[RV_LOG_BATCH];
    for (int o = 0; o < noutputs; o++) {
        size_t n = 0;
        for (size_t i = 0; i < batch_len;) {
            int prio = batch[i++];
            const char *line = batch + i;
            size_t len = strlen(line);
            if (prio >= outputs[o].level) {
                memcpy(out + n, line, len);
                n += len;
            }
            i += len + 1;
        }
        if (outputs[o].kind == OUT_FD)
            write_all(outputs[o].fd, out, n);
    }
    batch_len = 0;
    batch_urgent = 0;
}

void rv_log_flush(void)
{
    if (__atomic_load_n(&batch_len, __ATOMIC_RELAXED) == 0)
        return;
    pthread_mutex_lock(&log_lock);
    flush_locked();
    pthread_mutex_unlock(&log_lock);
}

int rv_log_flush_urgent(void)
{
    if (__atomic_load_n(&batch_len, __ATOMIC_RELAXED) == 0)
        return 0;
    pthread_mutex_lock(&log_lock);
    if (batch_urgent)
        flush_locked();
    int pending = batch_len > 0;
    pthread_mutex_unlock(&log_lock);
    return pending;
}

void rv_log_set_autoflush(int on)
{
    pthread_mutex_lock(&log_lock);
    autoflush = on;
    flush_locked();
    pthread_mutex_unlock(&log_lock);
}

static const char *prio_name(int prio)
{
    switch (prio) {
    case RV_LOG_DEBUG: return "debug";
    case RV_LOG_INFO: return "info";
    case RV_LOG_WARN: return "warning";
    default: return "error";
    }
}

/* ---- datagram outputs: one message each, never waited for ---- */

static int syslog_severity(int prio)
{
    switch (prio) {
    case RV_LOG_DEBUG: return 7;
    case RV_LOG_INFO: return 6;
    case RV_LOG_WARN: return 4;
    default: return 3;
    }
}

/* A full socket (or no listener) drops the datagram and counts it; the
 * count goes out first when the socket takes a datagram again. */
static int send_datagram(log_output *o, const char *p, size_t len)
{
    if (send(o->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len)
        return 0;
    o->dropped++;
    return -1;
}

typedef struct {
    int prio;
    const char *category, *file, *func;
    int line;
    const char *text;           /* the escaped message, no newline */
} log_record;

static size_t journal_fields(char *buf, size_t size, const log_record *r)
{
    /* Values are single lines (messages and identities are escaped), so
     * the simple KEY=value form of the native protocol serves. */
    int n = snprintf(buf, size, "PRIORITY=%d\nSYSLOG_IDENTIFIER=%s\nSYSLOG_PID=%d\n"
                     "CODE_FILE=%s\nCODE_LINE=%d\nCODE_FUNC=%s\nREMVIRT_CATEGORY=%s\n"
                     "TID=%d\n",
                     syslog_severity(r->prio), program_invocation_short_name, (int)getpid(),
                     r->file, r->line, r->func, r->category, thread_id());
    size_t len = n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
    if (log_client && len < size) {
        char who[256], esc[512];
        log_client_describe(log_client, who, sizeof(who));
        size_t e = rv_escape_text(esc, sizeof(esc) - 1, who, strlen(who), 0);
        esc[e] = '\0';
        n = snprintf(buf + len, size - len, "REMVIRT_CLIENT=%llu\nREMVIRT_CLIENT_IDENTITY=%s\n",
                     log_client_id, esc);
        len += n < 0 ? 0 : (size_t)n < size - len ? (size_t)n : size - len - 1;
    }
    n = snprintf(buf + len, size - len, "MESSAGE=%s\n", r->text);
    len += n < 0 ? 0 : (size_t)n < size - len ? (size_t)n : size - len - 1;
    return len;
}

static size_t syslog_line(char *buf, size_t size, const log_output *o, int prio,
                          const char *text)
{
    /* RFC 3164 as /dev/log readers take it; facility daemon (3). */
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S", &tm);
    int n = snprintf(buf, size, "<%d>%s %s[%d]: %s", 3 * 8 + syslog_severity(prio), stamp,
                     o->path, (int)getpid(), text);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

static void send_record(log_output *o, const log_record *r)
{
    char buf[4096];
    if (o->dropped) {
        char note[128];
        snprintf(note, sizeof(note), "%lu log messages were dropped: the %s socket was full",
                 o->dropped, o->kind == OUT_JOURNALD ? "journal" : "syslog");
        log_record lost = { .prio = RV_LOG_WARN, .category = "common.log", .file = __FILE__,
                            .func = __func__, .line = __LINE__, .text = note };
        size_t n = o->kind == OUT_JOURNALD ? journal_fields(buf, sizeof(buf), &lost)
                                           : syslog_line(buf, sizeof(buf), o, lost.prio, note);
        unsigned long had = o->dropped;
        o->dropped = 0;
        if (send_datagram(o, buf, n) < 0) {
            o->dropped = had + 1;   /* this record is lost too */
            return;
        }
    }
    size_t n = o->kind == OUT_JOURNALD ? journal_fields(buf, sizeof(buf), r)
                                       : syslog_line(buf, sizeof(buf), o, r->prio, r->text);
    send_datagram(o, buf, n);
}

int rv_log_refresh(rv_log_category *cat, int prio)
{
    pthread_mutex_lock(&log_lock);
    unsigned serial = rv_log_serial;
    if (cat->serial != serial) {
        __atomic_store_n(&cat->threshold, threshold_locked(cat->name), __ATOMIC_RELAXED);
        __atomic_store_n(&cat->serial, serial, __ATOMIC_RELEASE);
    }
    int enabled = prio >= cat->threshold;
    pthread_mutex_unlock(&log_lock);
    return enabled;
}

void rv_log_set_client(const void *client, unsigned long long id, rv_log_describe_fn describe)
{
    log_client = client;
    log_client_id = id;
    log_client_describe = describe;
}

void rv_log_message(rv_log_category *cat, int prio, const char *file, const char *func,
                    int line, const char *fmt, ...)
{
    pthread_mutex_lock(&log_lock);
    unsigned serial = rv_log_serial;
    if (cat->serial != serial) {
        __atomic_store_n(&cat->threshold, threshold_locked(cat->name), __ATOMIC_RELAXED);
        __atomic_store_n(&cat->serial, serial, __ATOMIC_RELEASE);
    }
    if (prio < cat->threshold) {
        pthread_mutex_unlock(&log_lock);
        return;
    }

    char msg[2048];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int n = snprintf(msg, sizeof(msg), "%s.%03ld+0000: %d: %s : %s : %s:%d : ",
                     second_text(ts.tv_sec), ts.tv_nsec / 1000000, thread_id(), prio_name(prio),
                     cat->name, func, line);
    char raw[sizeof(msg)];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    size_t raw_len = m < 0 ? 0 : (size_t)m < sizeof(raw) ? (size_t)m : sizeof(raw) - 1;
    /* Messages carry what peers sent (user names, certificate names,
     * library texts): escaped here, in one place, so that none can forge
     * a line or reach a terminal that shows the log.  A NUL (it would cut
     * the batch record short) is escaped too. */
    size_t len = (size_t)n + rv_escape_text(msg + n, sizeof(msg) - (size_t)n - 1, raw, raw_len, 0);
    msg[len] = '\0';

    /* The datagram outputs, one message each, now. */
    for (int o = 0; o < noutputs; o++) {
        if (outputs[o].kind == OUT_FD || prio < outputs[o].level)
            continue;
        log_record r = { .prio = prio, .category = cat->name, .file = file, .func = func,
                         .line = line, .text = msg + n };
        send_record(&outputs[o], &r);
    }
    msg[len++] = '\n';
    msg[len] = '\0';

    if (batch_len + len + 2 > sizeof(batch))
        flush_locked();
    batch[batch_len++] = (char)prio;
    memcpy(batch + batch_len, msg, len + 1);
    batch_len += len + 1;
    if (prio > RV_LOG_DEBUG)
        batch_urgent = 1;
    if (autoflush || prio >= RV_LOG_ERROR)
        flush_locked();
    pthread_mutex_unlock(&log_lock);
}

static int parse_level(const char **p, rv_err *err, const char *what)
{
    const char *s = *p;
    if (s[0] < '1' || s[0] > '4' || s[1] != ':') {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "%s '%s': expected LEVEL:... with LEVEL 1 to 4", what, s);
        return -1;
    }
    *p = s + 2;
    return s[0] - '0';
}

/* Splits spec at blanks; calls fn for each word. */
static int each_word(const char *spec, int (*fn)(const char *word, void *ctx, rv_err *err),
                     void *ctx, rv_err *err)
{
    char *copy = strdup(spec);
    if (!copy) {
        rv_err_set(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = 0;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if ((rc = fn(w, ctx, err)) < 0)
            break;
    }
    free(copy);
    return rc;
}

typedef struct {
    log_filter list[RV_LOG_MAX_FILTERS];
    int n;
} filter_set;

static int add_filter(const char *word, void *ctx, rv_err *err)
{
    filter_set *set = ctx;
    const char *p = word;
    int level = parse_level(&p, err, "log filter");
    if (level < 0)
        return -1;
    if (*p == '\0') {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "log filter '%s': missing category name", word);
        return -1;
    }
    if (set->n == RV_LOG_MAX_FILTERS) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "too many log filters (at most %d)", RV_LOG_MAX_FILTERS);
        return -1;
    }
    char *match = NULL;
    if (asprintf(&match, "*%s*", p) < 0) {
        rv_err_set(err, RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    set->list[set->n].level = level;
    set->list[set->n].match = match;
    set->n++;
    return 0;
}

int rv_log_set_filters(const char *spec, rv_err *err)
{
    filter_set set = { .n = 0 };
    if (each_word(spec, add_filter, &set, err) < 0) {
        for (int i = 0; i < set.n; i++)
            free(set.list[i].match);
        return -1;
    }
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nfilters; i++)
        free(filters[i].match);
    memcpy(filters, set.list, sizeof(log_filter) * (size_t)set.n);
    nfilters = set.n;
    bump_serial();
    pthread_mutex_unlock(&log_lock);
    return 0;
}

typedef struct {
    log_output list[RV_LOG_MAX_OUTPUTS];
    int n;
} output_set;

static void close_outputs(log_output *list, int n)
{
    for (int i = 0; i < n; i++) {
        if (list[i].owns_fd)
            close(list[i].fd);
        free(list[i].path);
    }
}

/* A non-blocking datagram socket connected to path; -1 with errno. */
static int datagram_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* A log file is appended to by a daemon that may run as root, often in
 * a directory others can write: no link they plant is followed, and a
 * file that is not plainly ours is not written to. */
static int open_log_file(const char *path, rv_err *err)
{
    return rv_open_file_safely(path, O_WRONLY | O_CREAT | O_APPEND, 0600, NULL, NULL,
                               RV_FROM_CONF, err);
}

static int add_output(const char *word, void *ctx, rv_err *err)
{
    output_set *set = ctx;
    const char *p = word;
    int level = parse_level(&p, err, "log output");
    if (level < 0)
        return -1;
    if (set->n == RV_LOG_MAX_OUTPUTS) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "too many log outputs (at most %d)", RV_LOG_MAX_OUTPUTS);
        return -1;
    }
    log_output *o = &set->list[set->n];
    *o = (log_output){ .level = level, .kind = OUT_FD };
    if (strcmp(p, "stderr") == 0) {
        o->fd = 2;
        o->owns_fd = 0;
        o->path = strdup("stderr");
    } else if (strcmp(p, "journald") == 0 || strncmp(p, "syslog:", 7) == 0) {
        int journal = p[0] == 'j';
        /* REMVIRT_JOURNAL_SOCKET: a stand-in journal (benchmarks, tests). */
        const char *stand_in = journal ? secure_getenv("REMVIRT_JOURNAL_SOCKET") : NULL;
        const char *target = stand_in && *stand_in ? stand_in
                             : journal ? journal_socket : syslog_socket;
        if (!journal && (p[7] == '\0' || strlen(p + 7) > 64)) {
            rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                       "log output '%s': syslog needs a name of 1 to 64 characters "
                       "(LEVEL:syslog:NAME)", word);
            return -1;
        }
        o->kind = journal ? OUT_JOURNALD : OUT_SYSLOG;
        o->fd = datagram_connect(target);
        if (o->fd < 0) {
            rv_err_set_errno(err, RV_FROM_CONF, errno, "log output '%s': cannot reach %s",
                             word, target);
            return -1;
        }
        o->owns_fd = 1;
        o->path = strdup(journal ? target : p + 7);
    } else if (strncmp(p, "file:", 5) == 0 && p[5] != '\0') {
        rv_err why = { 0 };
        o->fd = open_log_file(p + 5, &why);
        if (o->fd < 0) {
            rv_err_set(err, RV_FROM_CONF, why.code, "log output '%s': cannot open %s", word,
                       why.message);
            rv_err_clear(&why);
            return -1;
        }
        o->owns_fd = 1;
        o->path = strdup(p + 5);
    } else {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "log output '%s': destination must be 'stderr', 'file:PATH', "
                   "'syslog:NAME' or 'journald'", word);
        return -1;
    }
    set->n++;
    return 0;
}

int rv_log_set_outputs(const char *spec, rv_err *err)
{
    output_set set = { .n = 0 };
    if (each_word(spec, add_output, &set, err) < 0) {
        close_outputs(set.list, set.n);
        return -1;
    }
    pthread_mutex_lock(&log_lock);
    flush_locked();
    close_outputs(outputs, noutputs);
    memcpy(outputs, set.list, sizeof(log_output) * (size_t)set.n);
    noutputs = set.n;
    bump_serial();
    pthread_mutex_unlock(&log_lock);
    return 0;
}

int rv_log_set_level(int level, rv_err *err)
{
    if (level < RV_LOG_DEBUG || level > RV_LOG_ERROR) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "log level %d: must be 1 (debug) to 4 (error)", level);
        return -1;
    }
    pthread_mutex_lock(&log_lock);
    default_level = level;
    bump_serial();
    pthread_mutex_unlock(&log_lock);
    return 0;
}

void rv_log_reset(void)
{
    pthread_mutex_lock(&log_lock);
    flush_locked();
    for (int i = 0; i < nfilters; i++)
        free(filters[i].match);
    nfilters = 0;
    close_outputs(outputs, noutputs);
    outputs[0] = (log_output){ RV_LOG_WARN, OUT_FD, 2, 0, NULL, 0 };
    noutputs = 1;
    default_level = RV_LOG_WARN;
    bump_serial();
    pthread_mutex_unlock(&log_lock);
}

/* "L:dest L:dest" from the list, through fn giving each item's text;
 * trailing: each item ends with a blank (libvirtd's filter list does). */
typedef const char *(*item_text)(const void *item, int *level, const char **prefix);

static char *join_items(const void *items, size_t size, int n, item_text fn, int trailing)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) {
        int level;
        const char *prefix, *text = fn((const char *)items + (size_t)i * size, &level, &prefix);
        len += strlen(prefix) + strlen(text) + 4;
    }
    char *out = malloc(len), *p = out;
    if (!out)
        return NULL;
    *p = '\0';
    for (int i = 0; i < n; i++) {
        int level;
        const char *prefix, *text = fn((const char *)items + (size_t)i * size, &level, &prefix);
        p += sprintf(p, "%s%d:%s%s%s", i && !trailing ? " " : "", level, prefix, text,
                     trailing ? " " : "");
    }
    return out;
}

static const char *filter_text(const void *item, int *level, const char **prefix)
{
    const log_filter *f = item;
    *level = f->level;
    *prefix = "";
    return f->match;
}

static const char *output_text(const void *item, int *level, const char **prefix)
{
    const log_output *o = item;
    *level = o->level;
    switch (o->kind) {
    case OUT_SYSLOG: *prefix = "syslog:"; return o->path;
    case OUT_JOURNALD: *prefix = ""; return "journald";
    case OUT_FD: break;
    }
    *prefix = o->owns_fd ? "file:" : "";
    return o->owns_fd ? o->path : "stderr";
}

char *rv_log_get_filters(int *count)
{
    pthread_mutex_lock(&log_lock);
    char *text = join_items(filters, sizeof(filters[0]), nfilters, filter_text, 1);
    *count = nfilters;
    pthread_mutex_unlock(&log_lock);
    return text;
}

char *rv_log_get_outputs(int *count)
{
    pthread_mutex_lock(&log_lock);
    char *text = join_items(outputs, sizeof(outputs[0]), noutputs, output_text, 0);
    *count = noutputs;
    pthread_mutex_unlock(&log_lock);
    return text;
}

int rv_log_set_default_outputs(rv_err *err)
{
    char spec[16];
    pthread_mutex_lock(&log_lock);
    snprintf(spec, sizeof(spec), "%d:stderr", default_level);
    pthread_mutex_unlock(&log_lock);
    return rv_log_set_outputs(spec, err);
}

int rv_log_reopen(rv_err *err)
{
    int rc = 0;
    pthread_mutex_lock(&log_lock);
    flush_locked();
    for (int i = 0; i < noutputs; i++) {
        log_output *o = &outputs[i];
        if (o->kind != OUT_FD || !o->owns_fd)
            continue;
        /* The new file takes the old descriptor's number: nothing else
         * holds on to the old one. */
        rv_err why = { 0 };
        int fd = open_log_file(o->path, &why);
        if (fd >= 0 && dup3(fd, o->fd, O_CLOEXEC) < 0)
            rv_err_set(&why, RV_FROM_CONF, RV_ERR_SYSTEM_ERROR, "%s: %s", o->path,
                       strerror(errno));
        if (why.code) {
            if (rc == 0)
                rv_err_set(err, RV_FROM_CONF, why.code, "cannot reopen the log file %s",
                           why.message);
            rc = -1;
        }
        rv_err_clear(&why);
        if (fd >= 0)
            close(fd);
    }
    pthread_mutex_unlock(&log_lock);
    return rc;
}

void rv_log_set_socket_paths(const char *journal, const char *syslog_path)
{
    pthread_mutex_lock(&log_lock);
    if (journal)
        snprintf(journal_socket, sizeof(journal_socket), "%s", journal);
    if (syslog_path)
        snprintf(syslog_socket, sizeof(syslog_socket), "%s", syslog_path);
    pthread_mutex_unlock(&log_lock);
}
