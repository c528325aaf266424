#include "server/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/work_pool.h"

/* Ceiling for the client limits: far above any sane setting, low enough
 * that counts never overflow. */
#define RVS_LIMIT_CEILING 1000000

typedef enum {
    VAL_INT, VAL_BOOL, VAL_PORT, VAL_STRING, VAL_LIST, VAL_PERMS, VAL_LOG_LEVEL, VAL_AUTH,
    VAL_INTERVAL,   /* seconds, or -1 for never */
    VAL_COUNT,      /* 0 or more */
    VAL_BYTES,      /* a size_t from 4096 up */
} value_kind;

typedef struct {
    const char *key;
    value_kind kind;
    size_t offset;
} config_key;

#define KEY(name, kind) { #name, kind, offsetof(rvs_config, name) }
static const config_key config_keys[] = {
    KEY(unix_sock_dir, VAL_STRING),
    KEY(unix_sock_rw_perms, VAL_PERMS),
    KEY(unix_sock_ro_perms, VAL_PERMS),
    KEY(admin_unix_sock_perms, VAL_PERMS),
    KEY(admin_max_clients, VAL_INT),
    KEY(unix_sock_group, VAL_STRING),
    KEY(max_clients, VAL_INT),
    KEY(max_queued_clients, VAL_INT),
    KEY(max_client_requests, VAL_INT),
    KEY(auth_unix_rw, VAL_AUTH),
    KEY(auth_unix_ro, VAL_AUTH),
    KEY(auth_tcp, VAL_AUTH),
    KEY(auth_tls, VAL_AUTH),
    KEY(sasl_allowed_username_list, VAL_LIST),
    KEY(tcp_min_ssf, VAL_INT),
    KEY(auth_timeout, VAL_INT),
    KEY(max_anonymous_clients, VAL_INT),
    KEY(keepalive_interval, VAL_INTERVAL),
    KEY(keepalive_count, VAL_COUNT),
    KEY(max_client_output_bytes, VAL_BYTES),
    KEY(client_output_timeout, VAL_INT),
    KEY(stream_window_bytes, VAL_BYTES),
    KEY(memory_budget_bytes, VAL_BYTES),
    KEY(memory_budget_readonly_bytes, VAL_BYTES),
    KEY(memory_budget_user_bytes, VAL_BYTES),
    KEY(listen_tcp, VAL_BOOL),
    KEY(listen_tls, VAL_BOOL),
    KEY(tcp_port, VAL_PORT),
    KEY(tls_port, VAL_PORT),
    KEY(listen_addr, VAL_STRING),
    KEY(ca_file, VAL_STRING),
    KEY(cert_file, VAL_STRING),
    KEY(key_file, VAL_STRING),
    KEY(crl_file, VAL_STRING),
    KEY(tls_priority, VAL_STRING),
    KEY(tls_no_verify_certificate, VAL_BOOL),
    KEY(tls_no_sanity_certificate, VAL_BOOL),
    KEY(tls_allowed_dn_list, VAL_LIST),
    KEY(tls_handshake_timeout, VAL_INT),
    KEY(work_threads, VAL_INT),
    KEY(timeout, VAL_COUNT),
    KEY(log_level, VAL_LOG_LEVEL),
    KEY(log_filters, VAL_STRING),
    KEY(log_outputs, VAL_STRING),
    KEY(qemu_config_dir, VAL_STRING),
    KEY(qemu_run_dir, VAL_STRING),
    KEY(qemu_save_dir, VAL_STRING),
    KEY(qemu_dump_dir, VAL_STRING),
    KEY(qemu_binary, VAL_STRING),
    KEY(qemu_backup_tls_x509_cert_dir, VAL_STRING),
    KEY(qemu_backup_tls_x509_verify, VAL_BOOL),
    KEY(qemu_migrate_tls_x509_cert_dir, VAL_STRING),
    KEY(qemu_migrate_tls_x509_verify, VAL_BOOL),
    KEY(qemu_migration_host, VAL_STRING),
    KEY(qemu_migration_port_min, VAL_INT),
    KEY(qemu_migration_port_max, VAL_INT),
    KEY(qemu_keepalive_interval, VAL_INTERVAL),
    KEY(qemu_keepalive_count, VAL_COUNT),
    KEY(qemu_migration_stall_timeout, VAL_INTERVAL),
};
#undef KEY

void rvs_config_init(rvs_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    /* configure --with-unix-sock-dir (default /run/remvirt). */
    cfg->unix_sock_dir = strdup(RV_UNIX_SOCK_DIR);
    /* configure --with-sock-group: that group may use the read-write
     * socket (as libvirt's "libvirt" group); without it, only root. */
    cfg->unix_sock_group = RV_UNIX_SOCK_GROUP[0] ? strdup(RV_UNIX_SOCK_GROUP) : NULL;
    cfg->unix_sock_rw_perms = RV_UNIX_SOCK_GROUP[0] ? 0770 : 0700;
    cfg->unix_sock_ro_perms = 0777;
    cfg->admin_unix_sock_perms = 0700;
    cfg->admin_max_clients = 5000;
    cfg->max_clients = 5000;
    cfg->qemu_migration_port_min = 49152;     /* libvirtd's range */
    cfg->qemu_migration_port_max = 49215;
    cfg->qemu_keepalive_interval = 5;        /* libvirtd's qemu.conf keepalive_* */
    cfg->qemu_keepalive_count = 5;
    cfg->qemu_migration_stall_timeout = 30;
    cfg->qemu_migrate_tls_x509_verify = 1;   /* libvirtd's default_tls_x509_verify */
    cfg->max_queued_clients = 1000;
    cfg->max_client_requests = 5;
    cfg->auth_unix_rw = strdup("none");
    cfg->auth_unix_ro = strdup("none");
    /* libvirtd's defaults: plain TCP needs SASL; TLS's certificates are
     * its authentication. */
    cfg->auth_tcp = strdup("sasl");
    cfg->auth_tls = strdup("none");
    cfg->tcp_min_ssf = 56;
    cfg->auth_timeout = 30;
    cfg->max_anonymous_clients = 20;
    cfg->keepalive_interval = 5;
    cfg->keepalive_count = 5;
    /* Some 60,000 lifecycle events: far more than a client that reads
     * at all falls behind, little memory even for thousands of clients. */
    cfg->max_client_output_bytes = 8 << 20;
    /* As long as keepalive gives a silent client (5 s x 6). */
    cfg->client_output_timeout = 30;
    /* Four of libvirt's 256 KiB stream packets in flight to a client: a
     * download keeps the socket busy, a slow reader costs 1 MiB. */
    cfg->stream_window_bytes = 1 << 20;
    /* Read-only clients are anyone on the host: together they may make
     * the daemon hold at most 256 MiB, and one user half of that, so one
     * user cannot shut the others out.  A budget is checked before each
     * buffer grows (a declared 32 MiB packet grows as it arrives). */
    cfg->memory_budget_bytes = (size_t)1 << 30;
    cfg->memory_budget_readonly_bytes = (size_t)256 << 20;
    cfg->memory_budget_user_bytes = (size_t)128 << 20;
    cfg->tcp_port = strdup("16509");
    cfg->tls_port = strdup("16514");
    cfg->tls_handshake_timeout = 30;
    cfg->work_threads = RV_WORK_THREADS_DEFAULT;
}

static void free_list(char **list)
{
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

void rvs_config_free(rvs_config *cfg)
{
    free(cfg->unix_sock_dir);
    free(cfg->unix_sock_group);
    free(cfg->auth_unix_rw);
    free(cfg->auth_unix_ro);
    free(cfg->log_filters);
    free(cfg->log_outputs);
    free(cfg->qemu_config_dir);
    free(cfg->qemu_run_dir);
    free(cfg->qemu_save_dir);
    free(cfg->qemu_dump_dir);
    free(cfg->qemu_backup_tls_x509_cert_dir);
    free(cfg->qemu_migrate_tls_x509_cert_dir);
    free(cfg->qemu_migration_host);
    free(cfg->qemu_binary);
    free(cfg->auth_tcp);
    free(cfg->auth_tls);
    free(cfg->tcp_port);
    free(cfg->tls_port);
    free(cfg->listen_addr);
    free(cfg->ca_file);
    free(cfg->cert_file);
    free(cfg->key_file);
    free(cfg->crl_file);
    free(cfg->tls_priority);
    free_list(cfg->tls_allowed_dn_list);
    free_list(cfg->sasl_allowed_username_list);
    memset(cfg, 0, sizeof(*cfg));
}

static void set_string(char **slot, char *value)
{
    free(*slot);
    *slot = value;
}

/* Parses a quoted string starting at *p; returns a malloc'd copy. */
static char *parse_quoted(const char **p, const char **why)
{
    const char *s = *p;
    char quote = *s++;
    const char *end = strchr(s, quote);
    if (!end) {
        *why = "unterminated string";
        return NULL;
    }
    char *out = strndup(s, (size_t)(end - s));
    *p = end + 1;
    return out;
}

/* ["a", "b", ...] (may be empty); a NULL-terminated array of copies. */
static char **parse_list(const char *p, const char **why)
{
    size_t n = 0;
    char **list = calloc(1, sizeof(*list));
    if (!list) {
        *why = "out of memory";
        return NULL;
    }
    p++;                        /* '[' */
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ']' && n == 0)
            break;
        if (*p != '"' && *p != '\'') {
            *why = "expected a list of quoted strings, such as [\"a\", \"b\"]";
            break;
        }
        char *item = parse_quoted(&p, why);
        char **grown = item ? realloc(list, (n + 2) * sizeof(*list)) : NULL;
        if (!grown) {
            free(item);
            if (!*why)
                *why = "out of memory";
            break;
        }
        list = grown;
        list[n++] = item;
        list[n] = NULL;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',') {
            p++;
            while (isspace((unsigned char)*p))
                p++;
            /* libvirtd.conf takes a comma after the last item too. */
            if (*p == ']')
                break;
            continue;
        }
        if (*p != ']')
            *why = "expected ',' or ']' after a list item";
        break;
    }
    if (!*why && *(p + 1) != '\0')
        *why = "unexpected text after the closing ']'";
    if (*why) {
        free_list(list);
        return NULL;
    }
    return list;
}

static int parse_int(const char *text, long long *out)
{
    char *end;
    errno = 0;
    /* Decimal only, as libvirtd.conf: "010" is ten, not eight. */
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* value is the text after '=' with surrounding blanks removed. */
int rvs_config_set(rvs_config *cfg, const char *key, const char *value, const char *where,
                   rv_err *err)
{
    const config_key *k = NULL;
    for (size_t i = 0; i < sizeof(config_keys) / sizeof(config_keys[0]); i++)
        if (strcmp(config_keys[i].key, key) == 0)
            k = &config_keys[i];
    if (!k) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED, "%s: unknown setting '%s'",
                   where, key);
        return -1;
    }
    void *slot = (char *)cfg + k->offset;
    const char *why = NULL;
    char *str = NULL;
    long long num = 0;
    char **list = NULL;

    if (value[0] == '[') {
        if (k->kind == VAL_LIST)
            list = parse_list(value, &why);
        else
            why = "expected a single value, not a list";
    } else if (k->kind == VAL_LIST) {
        why = "expected a list of quoted strings, such as [\"a\", \"b\"]";
    } else if (value[0] == '"' || value[0] == '\'') {
        const char *p = value;
        str = parse_quoted(&p, &why);
        if (str && *p != '\0')
            why = "unexpected text after the closing quote";
    } else if (parse_int(value, &num) < 0) {
        why = "expected a number or a quoted string";
    }

    if (!why) {
        switch (k->kind) {
        case VAL_INT:
            if (str)
                why = "expected a number, not a string";
            else if (num < 1 || num > RVS_LIMIT_CEILING)
                why = "expected an integer from 1 to 1000000";
            else
                *(int *)slot = (int)num;
            break;
        case VAL_INTERVAL:
            if (str || !(num == -1 || (num >= 1 && num <= RVS_LIMIT_CEILING)))
                why = "expected -1 (off) or seconds from 1 to 1000000";
            else
                *(int *)slot = (int)num;
            break;
        case VAL_COUNT:
            if (str || num < 0 || num > RVS_LIMIT_CEILING)
                why = "expected an integer from 0 to 1000000";
            else
                *(int *)slot = (int)num;
            break;
        case VAL_BYTES:
            if (str || num < 4096 || num > (1LL << 40))
                why = "expected a number of bytes from 4096 to 1099511627776";
            else
                *(size_t *)slot = (size_t)num;
            break;
        case VAL_BOOL:
            if (str || (num != 0 && num != 1))
                why = "expected 0 or 1";
            else
                *(int *)slot = (int)num;
            break;
        case VAL_PORT: {
            /* libvirtd.conf writes ports as strings; take both forms. */
            char *end = NULL;
            long port = str ? strtol(str, &end, 10) : num;
            if ((str && (*str == '\0' || *end != '\0')) || port < 1 || port > 65535) {
                why = "expected a port number from 1 to 65535";
            } else {
                char text[8];
                snprintf(text, sizeof(text), "%ld", port);
                char *copy = strdup(text);
                if (!copy)
                    why = "out of memory";
                else
                    set_string(slot, copy);
            }
            break;
        }
        case VAL_LIST:
            free_list(*(char ***)slot);
            *(char ***)slot = list;
            list = NULL;
            break;
        case VAL_LOG_LEVEL:
            if (str || num < 1 || num > 4)
                why = "expected 1 (debug), 2 (info), 3 (warning) or 4 (error)";
            else
                *(int *)slot = (int)num;
            break;
        case VAL_STRING:
            if (!str)
                why = "expected a quoted string";
            else {
                set_string(slot, str);
                str = NULL;
            }
            break;
        case VAL_PERMS: {
            /* libvirtd takes octal text such as "0770". */
            char *end = NULL;
            long mode = str ? strtol(str, &end, 8) : -1;
            if (!str || *str == '\0' || *end != '\0' || mode < 0 || mode > 0777)
                why = "expected an octal mode in quotes, such as \"0770\"";
            else
                *(mode_t *)slot = (mode_t)mode;
            break;
        }
        case VAL_AUTH:
            if (!str || (strcmp(str, "none") != 0 && strcmp(str, "sasl") != 0))
                why = str && strcmp(str, "polkit") == 0
                          ? "polkit is not supported (use \"none\" or \"sasl\")"
                          : "expected \"none\" or \"sasl\"";
            else {
                set_string(slot, str);
                str = NULL;
            }
            break;
        }
    }
    free(str);
    free_list(list);
    if (why) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED, "%s: %s: %s", where, key, why);
        return -1;
    }
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cut a '#' comment that is not inside quotes. */
static void strip_comment(char *line)
{
    char quote = 0;
    for (char *p = line; *p; p++) {
        if (quote) {
            if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '#') {
            *p = '\0';
            return;
        }
    }
}

/* Whether a list value has its closing ']' (outside quotes). */
static int list_closed(const char *s)
{
    char quote = 0;
    for (; *s; s++) {
        if (quote) {
            if (*s == quote)
                quote = 0;
        } else if (*s == '"' || *s == '\'') {
            quote = *s;
        } else if (*s == ']') {
            return 1;
        }
    }
    return 0;
}

int rvs_config_parse(rvs_config *cfg, const char *text, const char *filename, rv_err *err)
{
    char *copy = strdup(text);
    if (!copy) {
        rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    int rc = 0, lineno = 0;
    char *save = NULL;
    /* strtok_r would skip empty lines and so miscount them. */
    for (char *line = copy; line && rc == 0; line = save) {
        save = strchr(line, '\n');
        if (save)
            *save++ = '\0';
        lineno++;
        strip_comment(line);
        char *s = trim(line);
        if (*s == '\0')
            continue;
        char where[PATH_MAX + 32];
        snprintf(where, sizeof(where), "%s:%d", filename, lineno);
        char *eq = strchr(s, '=');
        if (!eq) {
            rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                       "%s: expected 'key = value'", where);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if (*key == '\0' || *value == '\0') {
            rv_err_set(err, RV_FROM_CONF, RV_ERR_CONFIG_UNSUPPORTED,
                       "%s: expected 'key = value'", where);
            rc = -1;
            break;
        }
        /* A list may go on over the following lines, as in libvirtd.conf. */
        char *joined = NULL;
        while (value[0] == '[' && !list_closed(joined ? joined : value) && save) {
            line = save;
            save = strchr(line, '\n');
            if (save)
                *save++ = '\0';
            lineno++;
            strip_comment(line);
            char *more = NULL;
            if (asprintf(&more, "%s %s", joined ? joined : value, trim(line)) < 0) {
                rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
                free(joined);
                free(copy);
                return -1;
            }
            free(joined);
            joined = more;
        }
        rc = rvs_config_set(cfg, key, joined ? joined : value, where, err);
        free(joined);
    }
    free(copy);
    return rc;
}

int rvs_config_load(rvs_config *cfg, const char *path, rv_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        rv_err_set_errno(err, RV_FROM_CONF, errno, "cannot read the configuration file %s", path);
        return -1;
    }
    char *text = NULL;
    size_t cap = 0, len = 0;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                rv_err_set(err, RV_FROM_CONF, RV_ERR_NO_MEMORY, "out of memory");
                return -1;
            }
            text = grown;
        }
        memcpy(text + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (text)
        text[len] = '\0';
    int rc = rvs_config_parse(cfg, text ? text : "", path, err);
    free(text);
    return rc;
}
