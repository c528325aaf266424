#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

typedef struct {
    int level;
    int fd;
    int owns_fd;
    char *path;             /* for messages; "stderr" for fd 2 */
} log_output;

/* Serial 0 is what categories start with, so the first call of each
 * category computes its threshold. */
unsigned rv_log_serial = 1;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static log_filter filters[RV_LOG_MAX_FILTERS];
static int nfilters;
static log_output outputs[RV_LOG_MAX_OUTPUTS] = { { RV_LOG_WARN, 2, 0, NULL } };
static int noutputs = 1;
static int default_level = RV_LOG_WARN;
static int autoflush;
static char batch[RV_LOG_BATCH];
static size_t batch_len;

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
        write_all(outputs[o].fd, out, n);
    }
    batch_len = 0;
}

void rv_log_flush(void)
{
    if (__atomic_load_n(&batch_len, __ATOMIC_RELAXED) == 0)
        return;
    pthread_mutex_lock(&log_lock);
    flush_locked();
    pthread_mutex_unlock(&log_lock);
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

void rv_log_message(rv_log_category *cat, int prio, const char *func, int line,
                    const char *fmt, ...)
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
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(msg, sizeof(msg), "%04d-%02d-%02d %02d:%02d:%02d.%03ld+0000: %d: %s : %s:%d : ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, (int)getpid(), prio_name(prio), func, line);
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
    msg[len++] = '\n';
    msg[len] = '\0';

    if (batch_len + len + 2 > sizeof(batch))
        flush_locked();
    batch[batch_len++] = (char)prio;
    memcpy(batch + batch_len, msg, len + 1);
    batch_len += len + 1;
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
    o->level = level;
    if (strcmp(p, "stderr") == 0) {
        o->fd = 2;
        o->owns_fd = 0;
        o->path = strdup("stderr");
    } else if (strncmp(p, "file:", 5) == 0 && p[5] != '\0') {
        o->fd = open(p + 5, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (o->fd < 0) {
            rv_err_set_errno(err, RV_FROM_CONF, errno, "log output '%s': cannot open %s",
                             word, p + 5);
            return -1;
        }
        o->owns_fd = 1;
        o->path = strdup(p + 5);
    } else {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                   "log output '%s': destination must be 'stderr' or 'file:PATH'", word);
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
    outputs[0] = (log_output){ RV_LOG_WARN, 2, 0, NULL };
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
