#include "client/authfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct entry {
    char *key;
    char *value;                /* unescaped */
} entry;

/* A group as the file names it; a name given twice is two of these,
 * looked up together (the later one wins). */
typedef struct group {
    char *name;
    int line;                   /* where it starts, for errors */
    entry *entries;
    size_t nentries;
} group;

struct rvc_authfile {
    char *name;
    group *groups;
    size_t ngroups;
};

static void no_memory(rv_err *err)
{
    rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory reading an auth file");
}

void rvc_authfile_free(rvc_authfile *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->ngroups; i++) {
        group *g = &f->groups[i];
        for (size_t j = 0; j < g->nentries; j++) {
            free(g->entries[j].key);
            /* Values hold passwords. */
            explicit_bzero(g->entries[j].value, strlen(g->entries[j].value));
            free(g->entries[j].value);
        }
        free(g->entries);
        free(g->name);
    }
    free(f->groups);
    free(f->name);
    free(f);
}

const char *rvc_authfile_name(const rvc_authfile *f)
{
    return f->name;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* GLib's escapes: \s \t \n \r \\; any other backslash pair stays as it
 * is, and a backslash at the very end is dropped, as GLib reads them. */
static char *unescape(const char *p, size_t len)
{
    char *out = malloc(len + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (p[i] != '\\') {
            *o++ = p[i];
            continue;
        }
        if (++i == len)
            break;
        switch (p[i]) {
        case 's': *o++ = ' '; break;
        case 't': *o++ = '\t'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case '\\': *o++ = '\\'; break;
        default: *o++ = '\\'; *o++ = p[i]; break;
        }
    }
    *o = '\0';
    return out;
}

static int add_group(rvc_authfile *f, const char *name, size_t len, int line)
{
    group *grown = realloc(f->groups, (f->ngroups + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    f->groups = grown;
    group *g = &f->groups[f->ngroups];
    memset(g, 0, sizeof(*g));
    if (!(g->name = strndup(name, len)))
        return -1;
    g->line = line;
    f->ngroups++;
    return 0;
}

static int add_entry(group *g, const char *key, size_t key_len, const char *value,
                     size_t value_len)
{
    entry *grown = realloc(g->entries, (g->nentries + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    g->entries = grown;
    entry *e = &g->entries[g->nentries];
    e->key = strndup(key, key_len);
    e->value = unescape(value, value_len);
    if (!e->key || !e->value) {
        free(e->key);
        free(e->value);
        return -1;
    }
    g->nentries++;
    return 0;
}

/* "[name]" with nothing but blanks after it: 1 with the name's span, 0 if
 * the line is no group header at all, -1 for an empty or bad name. */
static int group_header(const char *p, size_t len, const char **name, size_t *name_len)
{
    if (len == 0 || p[0] != '[')
        return 0;
    const char *close = memchr(p, ']', len);
    if (!close)
        return 0;
    for (const char *q = close + 1; q < p + len; q++)
        if (!is_blank(*q))
            return 0;
    *name = p + 1;
    *name_len = (size_t)(close - p - 1);
    if (*name_len == 0)
        return -1;
    for (size_t i = 0; i < *name_len; i++)
        if ((*name)[i] == '[' || (unsigned char)(*name)[i] < 0x20)
            return -1;
    return 1;
}

static rvc_authfile *syntax_error(rvc_authfile *f, rv_err *err, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static rvc_authfile *syntax_error(rvc_authfile *f, rv_err *err, int line, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    rv_err_set(err, RV_FROM_CONF, RV_ERR_CONF_SYNTAX, "%s:%d: %s", f->name, line, what);
    rvc_authfile_free(f);
    return NULL;
}

rvc_authfile *rvc_authfile_parse(const char *name, const char *text, size_t len, rv_err *err)
{
    rvc_authfile *f = calloc(1, sizeof(*f));
    if (!f || !(f->name = strdup(name))) {
        free(f);
        no_memory(err);
        return NULL;
    }
    const char *p = text, *end = text + len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        if (memchr(p, '\0', (size_t)(eol - p)))
            return syntax_error(f, err, line, "the line holds a NUL byte");
        if (eol > p && eol[-1] == '\r')
            eol--;
        while (p < eol && is_blank(*p))
            p++;
        size_t n = (size_t)(eol - p);
        if (n == 0 || *p == '#') {
            p = next;
            continue;
        }

        const char *gname;
        size_t gname_len;
        int header = group_header(p, n, &gname, &gname_len);
        if (header < 0)
            return syntax_error(f, err, line, "bad group name in '%.*s'", (int)n, p);
        if (header > 0) {
            if (add_group(f, gname, gname_len, line) < 0)
                goto oom;
            p = next;
            continue;
        }

        const char *eq = memchr(p, '=', n);
        const char *key_end = eq;
        while (key_end && key_end > p && is_blank(key_end[-1]))
            key_end--;
        /* The line itself is not shown: it may be a mistyped secret. */
        if (!eq || key_end == p)
            return syntax_error(f, err, line,
                                "the line is not a [group], a key = value or a # comment");
        if (f->ngroups == 0)
            return syntax_error(f, err, line, "key '%.*s' comes before the first [group]",
                                (int)(key_end - p), p);
        const char *value = eq + 1;
        while (value < eol && is_blank(*value))
            value++;
        if (add_entry(&f->groups[f->ngroups - 1], p, (size_t)(key_end - p), value,
                      (size_t)(eol - value)) < 0)
            goto oom;
        p = next;
    }
    return f;

oom:
    rvc_authfile_free(f);
    no_memory(err);
    return NULL;
}

rvc_authfile *rvc_authfile_load(const char *path, rv_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot read the auth file %s", path);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONF_SYNTAX, "the auth file %s is a directory", path);
        close(fd);
        return NULL;
    }
    /* Not only regular files: /dev/null, or a pipe, serve as "none". */
    size_t got = 0, cap = 0;
    char *text = NULL;
    int failed = 0;
    for (;;) {
        if (got == cap) {
            size_t bigger = cap ? cap * 2 : 4096;
            if (bigger > RVC_AUTHFILE_MAX + 1)
                bigger = RVC_AUTHFILE_MAX + 1;
            char *grown = bigger > cap ? malloc(bigger) : NULL;
            if (!grown) {
                if (bigger > cap)
                    no_memory(err);
                else
                    rv_err_set(err, RV_FROM_CONF, RV_ERR_CONF_SYNTAX,
                               "the auth file %s is larger than %d bytes", path,
                               RVC_AUTHFILE_MAX);
                failed = 1;
                break;
            }
            /* Copied by hand so that no stale copy of a secret is left. */
            if (got)
                memcpy(grown, text, got);
            if (text) {
                explicit_bzero(text, got);
                free(text);
            }
            text = grown;
            cap = bigger;
        }
        ssize_t r = read(fd, text + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot read the auth file %s", path);
            failed = 1;
        }
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    rvc_authfile *f = failed ? NULL : rvc_authfile_parse(path, text ? text : "", got, err);
    if (text) {
        explicit_bzero(text, got);
        free(text);
    }
    return f;
}

/* The last value of key in the groups called name; *line is where the
 * first such group starts, 0 when there is none. */
static const char *find(const rvc_authfile *f, const char *name, const char *key, int *line)
{
    const char *value = NULL;
    *line = 0;
    for (size_t i = 0; i < f->ngroups; i++) {
        const group *g = &f->groups[i];
        if (strcmp(g->name, name) != 0)
            continue;
        if (!*line)
            *line = g->line;
        for (size_t j = 0; j < g->nentries; j++)
            if (strcmp(g->entries[j].key, key) == 0)
                value = g->entries[j].value;
    }
    return value;
}

int rvc_authfile_lookup(const rvc_authfile *f, const char *service, const char *host,
                        const char *key, const char **value, rv_err *err)
{
    *value = NULL;
    char *auth_group = NULL, *cred_group = NULL;
    int line;
    if (asprintf(&auth_group, "auth-%s-%s", service, host ? host : "localhost") < 0) {
        no_memory(err);
        return -1;
    }
    const char *set = find(f, auth_group, "credentials", &line);
    if (!line) {
        free(auth_group);
        if (asprintf(&auth_group, "auth-%s-default", service) < 0) {
            no_memory(err);
            return -1;
        }
        set = find(f, auth_group, "credentials", &line);
    }
    int rc = 0;
    if (!line)
        goto out;                       /* nothing for this host */
    if (!set) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONF_SYNTAX,
                   "%s:%d: [%s] has no 'credentials' key", f->name, line, auth_group);
        rc = -1;
        goto out;
    }
    if (asprintf(&cred_group, "credentials-%s", set) < 0) {
        no_memory(err);
        rc = -1;
        goto out;
    }
    int cred_line;
    *value = find(f, cred_group, key, &cred_line);
    if (!cred_line) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONF_SYNTAX,
                   "%s:%d: [%s] names credentials '%s', but there is no [%s]", f->name, line,
                   auth_group, set, cred_group);
        rc = -1;
    }
out:
    free(auth_group);
    free(cred_group);
    return rc;
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int rvc_authfile_locate(const char *uri_param, char **path, rv_err *err)
{
    *path = NULL;
    /* secure_getenv: a set-user-ID program must not read files its user
     * names, as libvirt blocks LIBVIRT_AUTH_FILE there. */
    const char *named = secure_getenv(RVC_AUTHFILE_ENV);
    if (!named || !*named)
        named = uri_param && *uri_param ? uri_param : NULL;
    if (named) {
        if (!(*path = strdup(named)))
            goto oom;
        return 0;
    }
    const char *xdg = secure_getenv("XDG_CONFIG_HOME");
    const char *home = secure_getenv("HOME");
    char *user = NULL;
    int n = 0;
    if (xdg && *xdg)
        n = asprintf(&user, "%s/" RVC_AUTHFILE_USER, xdg);
    else if (home && *home)
        n = asprintf(&user, "%s/.config/" RVC_AUTHFILE_USER, home);
    if (n < 0)
        goto oom;
    if (user && exists(user)) {
        *path = user;
        return 0;
    }
    free(user);
    if (exists(RVC_AUTHFILE_SYSTEM) && !(*path = strdup(RVC_AUTHFILE_SYSTEM)))
        goto oom;
    return 0;

oom:
    no_memory(err);
    return -1;
}
