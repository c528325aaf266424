#include "client/uri.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Params the client consumes; libvirt's client uses the same names. */
static const char *const client_params[] = {
    "name", "socket", "mode", "command", "netcat", "keyfile", "sshauth", "auth", "authfile",
    "pkipath", "known_hosts", "known_hosts_verify", "no_verify", "no_tty",
    "no_sanity", "tls_priority", "proxy",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}

#define IN_LIST(s, list) in_list((s), (list), sizeof(list) / sizeof((list)[0]))

static int bad(rv_err *err, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fail with "invalid URI '<text>': <why>". */
static int bad(rv_err *err, const char *text, const char *fmt, ...)
{
    char *why = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&why, fmt, ap) < 0)
        why = NULL;
    va_end(ap);
    rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG, "invalid URI '%s': %s", text,
               why ? why : "cannot describe the problem (out of memory)");
    free(why);
    return -1;
}

static int no_memory(rv_err *err)
{
    rv_err_set(err, RV_FROM_URI, RV_ERR_NO_MEMORY, "out of memory parsing a URI");
    return -1;
}

/* Decode %XX escapes in [s, s+len) into *out (malloc'd). */
static int decode(const char *text, const char *s, size_t len, char **out, rv_err *err)
{
    char *d = malloc(len + 1);
    if (!d)
        return no_memory(err);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            d[n++] = s[i];
            continue;
        }
        int hi = i + 1 < len ? rv_hex_digit((unsigned char)s[i + 1]) : -1;
        int lo = i + 2 < len ? rv_hex_digit((unsigned char)s[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            free(d);
            char esc[4] = { 0 };
            memcpy(esc, s + i, len - i < 3 ? len - i : 3);
            return bad(err, text, "'%s' is not a valid percent-escape (%%XX)", esc);
        }
        if (hi == 0 && lo == 0) {
            free(d);
            return bad(err, text, "%%00 decodes to a NUL byte");
        }
        d[n++] = (char)(hi << 4 | lo);
        i += 2;
    }
    d[n] = '\0';
    *out = d;
    return 0;
}

static int scheme_char(int c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_';
}

static int parse_scheme(const char *text, const char *end, rvc_uri *u, rv_err *err)
{
    const char *plus = memchr(text, '+', (size_t)(end - text));
    const char *dend = plus ? plus : end;
    if (dend == text)
        return bad(err, text, "no driver name before '://'");
    if (plus && plus + 1 == end)
        return bad(err, text, "empty transport after '+'");
    for (const char *p = text; p < end; p++) {
        if (p != plus && !scheme_char((unsigned char)*p)) {
            char c[2] = { *p, 0 };
            return bad(err, text, "character '%s' is not allowed in the driver or transport", c);
        }
    }
    if (!isalpha((unsigned char)text[0]))
        return bad(err, text, "the driver name must start with a letter");
    u->driver = strndup(text, (size_t)(dend - text));
    if (plus)
        u->transport = strndup(plus + 1, (size_t)(end - plus - 1));
    if (!u->driver || (plus && !u->transport))
        return no_memory(err);
    return 0;
}

static int parse_authority(const char *text, const char *s, const char *end, rvc_uri *u,
                           rv_err *err)
{
    const char *at = NULL;
    for (const char *p = s; p < end; p++)
        if (*p == '@')
            at = p;
    if (at) {
        if (at == s)
            return bad(err, text, "empty user name before '@'");
        if (decode(text, s, (size_t)(at - s), &u->user, err) < 0)
            return -1;
        s = at + 1;
    }

    const char *colon;
    if (s < end && *s == '[') {
        const char *close = memchr(s, ']', (size_t)(end - s));
        if (!close)
            return bad(err, text, "'[' of an IPv6 address is never closed");
        if (close == s + 1)
            return bad(err, text, "empty IPv6 address '[]'");
        if (close + 1 < end && close[1] != ':')
            return bad(err, text, "only ':port' may follow an IPv6 address");
        if (decode(text, s + 1, (size_t)(close - s - 1), &u->host, err) < 0)
            return -1;
        colon = close + 1 < end ? close + 1 : NULL;
    } else {
        colon = memchr(s, ':', (size_t)(end - s));
        const char *host_end = colon ? colon : end;
        if (host_end > s && decode(text, s, (size_t)(host_end - s), &u->host, err) < 0)
            return -1;
    }

    if (colon) {
        const char *digits = colon + 1;
        size_t n = (size_t)(end - digits);
        char port[16] = { 0 };
        memcpy(port, digits, n < sizeof(port) - 1 ? n : sizeof(port) - 1);
        if (!u->host)
            return bad(err, text, "a port is given without a host");
        long v = 0;
        for (size_t i = 0; i < n && v <= 65535; i++) {
            if (!isdigit((unsigned char)digits[i])) {
                v = -1;
                break;
            }
            v = v * 10 + (digits[i] - '0');
        }
        if (n == 0 || v < 1 || v > 65535)
            return bad(err, text, "port '%s' is not a number from 1 to 65535", port);
        u->port = (int)v;
    }
    if (at && !u->host)
        return bad(err, text, "a user is given without a host");
    return 0;
}

static int add_param(rvc_uri *u, char *name, char *value, rv_err *err)
{
    rvc_uri_param *p = realloc(u->params, (u->nparams + 1) * sizeof(*p));
    if (!p) {
        free(name);
        free(value);
        return no_memory(err);
    }
    u->params = p;
    p[u->nparams].name = name;
    p[u->nparams].value = value;
    u->nparams++;
    return 0;
}

static int parse_query(const char *text, const char *s, rvc_uri *u, rv_err *err)
{
    while (*s) {
        size_t len = strcspn(s, "&;");
        if (len > 0) {
            const char *eq = memchr(s, '=', len);
            size_t nlen = eq ? (size_t)(eq - s) : len;
            if (nlen == 0)
                return bad(err, text, "a parameter has no name");
            char *name = NULL, *value = NULL;
            if (decode(text, s, nlen, &name, err) < 0)
                return -1;
            const char *v = eq ? eq + 1 : s + len;
            if (decode(text, v, (size_t)(s + len - v), &value, err) < 0) {
                free(name);
                return -1;
            }
            if (add_param(u, name, value, err) < 0)
                return -1;
        }
        s += len;
        if (*s)
            s++;
    }
    return 0;
}

int rvc_uri_parse(const char *text, rvc_uri **out, rv_err *err)
{
    *out = NULL;
    if (!text || !*text) {
        rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG, "invalid URI '': the URI is empty");
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p <= ' ' || *p == 0x7f)
            return bad(err, text, "it contains a space or control character (escape it as %%XX)");
    }
    if (strchr(text, '#'))
        return bad(err, text, "a fragment ('#') is not allowed");
    const char *sep = strstr(text, "://");
    if (!sep)
        return bad(err, text, "expected driver[+transport]://[user@][host][:port]/[path][?params]");

    rvc_uri *u = calloc(1, sizeof(*u));
    if (!u)
        return no_memory(err);
    if (parse_scheme(text, sep, u, err) < 0)
        goto fail;

    const char *auth = sep + 3;
    const char *auth_end = auth + strcspn(auth, "/?");
    if (parse_authority(text, auth, auth_end, u, err) < 0)
        goto fail;

    const char *query = strchr(auth_end, '?');
    const char *path_end = query ? query : auth_end + strlen(auth_end);
    if (decode(text, auth_end, (size_t)(path_end - auth_end), &u->path, err) < 0)
        goto fail;
    if (query && parse_query(text, query + 1, u, err) < 0)
        goto fail;
    *out = u;
    return 0;

fail:
    rvc_uri_free(u);
    return -1;
}

void rvc_uri_free(rvc_uri *u)
{
    if (!u)
        return;
    free(u->driver);
    free(u->transport);
    free(u->user);
    free(u->host);
    free(u->path);
    for (size_t i = 0; i < u->nparams; i++) {
        free(u->params[i].name);
        free(u->params[i].value);
    }
    free(u->params);
    free(u);
}

const char *rvc_uri_param_value(const rvc_uri *u, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < u->nparams; i++)
        if (strcmp(u->params[i].name, name) == 0)
            v = u->params[i].value;
    return v;
}

const char *rvc_uri_transport(const rvc_uri *u)
{
    if (u->transport)
        return u->transport;
    return u->host ? "tls" : "unix";
}

/* Single-quote s for a POSIX shell on the remote host. */
static void shell_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The command run on the SSH server to join the channel to the daemon's
 * socket: remvirt's own bridge, nc -U, or (auto) the bridge when the host
 * has it and nc otherwise. */
static int ssh_command(const rvc_uri *u, const char *sock, char **out, rv_err *err)
{
    const char *proxy = rvc_uri_param_value(u, "proxy");
    const char *netcat = rvc_uri_param_value(u, "netcat");
    if (netcat && !*netcat) {
        rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG, "the netcat parameter is empty");
        return -1;
    }
    if (!proxy || !*proxy)
        proxy = netcat ? "netcat" : "auto";
    int native = strcmp(proxy, "native") == 0, nc = strcmp(proxy, "netcat") == 0;
    if (!native && !nc && strcmp(proxy, "auto") != 0) {
        rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG,
                   "unknown proxy '%s' (expected auto, netcat or native)", proxy);
        return -1;
    }
    size_t size = 0;
    FILE *f = open_memstream(out, &size);
    if (!f)
        return no_memory(err);
    if (!nc) {
        if (!native)
            fputs("if command -v " RVC_SSH_HELPER " >/dev/null 2>&1; then exec ", f);
        fputs(RVC_SSH_HELPER " ", f);
        shell_quote(f, sock);
        if (!native)
            fputs("; else ", f);
    }
    if (!native) {
        /* An nc that knows -q must be told to quit when the channel's
         * input ends, or it lingers after the client has gone. */
        const char *prog = netcat ? netcat : "nc";
        fputs("Q=; if ", f);
        shell_quote(f, prog);
        fputs(" -q 2>&1 | grep 'requires an argument' >/dev/null; then Q='-q 0'; fi; exec ", f);
        shell_quote(f, prog);
        fputs(" $Q -U ", f);
        shell_quote(f, sock);
        if (!nc)
            fputs("; fi", f);
    }
    if (ferror(f) | fclose(f)) {
        free(*out);
        *out = NULL;
        return no_memory(err);
    }
    if (native)
        return 0;
    /* The user's login shell runs the command; it may not be a POSIX one
     * (csh, fish), so the if/else runs under sh. */
    char *script = *out;
    *out = NULL;
    f = open_memstream(out, &size);
    if (f) {
        fputs("sh -c ", f);
        shell_quote(f, script);
    }
    free(script);
    if (!f || (ferror(f) | fclose(f))) {
        free(*out);
        *out = NULL;
        return no_memory(err);
    }
    return 0;
}

/* The daemon's socket: ?socket= or the default for the access mode. */
static int socket_path(const rvc_uri *u, int readonly, char **out, rv_err *err)
{
    /* libvirt's mode picks the monolithic or a per-driver daemon; remvirtd
     * is one daemon, so both "legacy" and "auto" mean its socket. */
    const char *mode = rvc_uri_param_value(u, "mode");
    if (mode && strcmp(mode, "auto") != 0 && strcmp(mode, "legacy") != 0) {
        if (strcmp(mode, "direct") == 0)
            rv_err_set(err, RV_FROM_URI, RV_ERR_NO_SUPPORT,
                       "mode 'direct' is not supported: remvirtd serves every driver on one socket");
        else
            rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG,
                       "unknown mode '%s' (expected auto, legacy or direct)", mode);
        return -1;
    }
    const char *sock = rvc_uri_param_value(u, "socket");
    if (sock && !*sock) {
        rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG, "the socket parameter is empty");
        return -1;
    }
    if (!sock)
        sock = readonly ? RVC_DEFAULT_SOCKET_RO : RVC_DEFAULT_SOCKET;
    if (!(*out = strdup(sock)))
        return no_memory(err);
    return 0;
}

static int set_endpoint(const rvc_uri *u, int default_port, rvc_target *t, rv_err *err)
{
    char port[8];
    snprintf(port, sizeof(port), "%d", u->port ? u->port : default_port);
    /* libvirt reaches this machine when a network URI names no host. */
    if (!(t->host = strdup(u->host ? u->host : "localhost")) || !(t->port = strdup(port)))
        return no_memory(err);
    return 0;
}

int rvc_uri_target(const rvc_uri *u, int readonly, rvc_target *t, rv_err *err)
{
    memset(t, 0, sizeof(*t));
    const char *transport = rvc_uri_transport(u);
    int rc;
    if (strcmp(transport, "unix") == 0) {
        t->kind = RVC_UNIX;
        if (u->host) {
            rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG,
                       "the unix transport reaches this machine only: remove the host '%s' from the URI",
                       u->host);
            return -1;
        }
        rc = socket_path(u, readonly, &t->socket, err);
    } else if (strcmp(transport, "tcp") == 0) {
        t->kind = RVC_TCP;
        rc = set_endpoint(u, RVC_DEFAULT_TCP_PORT, t, err);
    } else if (strcmp(transport, "tls") == 0) {
        t->kind = RVC_TLS;
        rc = set_endpoint(u, RVC_DEFAULT_TLS_PORT, t, err);
    } else if (strcmp(transport, "ssh") == 0 || strcmp(transport, "libssh2") == 0 ||
               strcmp(transport, "libssh") == 0) {
        t->kind = RVC_SSH;
        rc = set_endpoint(u, RVC_DEFAULT_SSH_PORT, t, err);
        if (rc == 0)
            rc = socket_path(u, readonly, &t->socket, err);
        if (rc == 0)
            rc = ssh_command(u, t->socket, &t->command, err);
    } else if (strcmp(transport, "ext") == 0) {
        t->kind = RVC_EXT;
        const char *cmd = rvc_uri_param_value(u, "command");
        if (!cmd || !*cmd) {
            rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG,
                       "the ext transport needs a command parameter (?command=...)");
            return -1;
        }
        rc = (t->command = strdup(cmd)) ? 0 : no_memory(err);
    } else {
        rv_err_set(err, RV_FROM_URI, RV_ERR_INVALID_ARG,
                   "unknown transport '%s' (expected unix, tls, tcp, ssh, libssh2, libssh or ext)",
                   transport);
        return -1;
    }
    if (rc < 0)
        rvc_target_free(t);
    return rc;
}

void rvc_target_free(rvc_target *t)
{
    free(t->socket);
    free(t->host);
    free(t->port);
    free(t->command);
    memset(t, 0, sizeof(*t));
}

/* Write s percent-encoding every byte that is not unreserved or in keep. */
static void encode(FILE *f, const char *s, const char *keep)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p) || strchr(keep, *p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
    }
}

char *rvc_uri_server_name(const rvc_uri *u, rv_err *err)
{
    const char *given = rvc_uri_param_value(u, "name");
    if (given) {
        char *copy = strdup(given);
        if (!copy)
            no_memory(err);
        return copy;
    }
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    if (!f) {
        no_memory(err);
        return NULL;
    }
    fprintf(f, "%s://", u->driver);
    encode(f, u->path, "/:@!$&'()*+,;=");
    char sep = '?';
    for (size_t i = 0; i < u->nparams; i++) {
        if (IN_LIST(u->params[i].name, client_params))
            continue;
        fputc(sep, f);
        sep = '&';
        encode(f, u->params[i].name, "/:@!$'()*+,");
        fputc('=', f);
        encode(f, u->params[i].value, "/:@!$'()*+,");
    }
    if (ferror(f) | fclose(f)) {
        free(out);
        no_memory(err);
        return NULL;
    }
    return out;
}
