/* The SSH server's host key against known_hosts (OpenSSH's format: hashed
 * and wildcard hosts, @revoked and @cert-authority markers), as libvirt's
 * client checks it; see ssh_priv.h. */
#include "transport/ssh_priv.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

RV_LOG_CATEGORY("transport.ssh");

/* ---------------------------------------------------------------- host key */

static void base64_encode(const unsigned char *in, size_t len, char *out, size_t out_size)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < out_size; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = digits[(v >> 18) & 63];
        out[o++] = digits[(v >> 12) & 63];
        if (i + 1 < len)
            out[o++] = digits[(v >> 6) & 63];
        if (i + 2 < len)
            out[o++] = digits[v & 63];
    }
    out[o] = '\0';
}

typedef struct host_key {
    const char *blob;
    size_t len;
    int kh_type;                /* LIBSSH2_KNOWNHOST_KEY_* */
    const char *type_name;
    char fingerprint[64];       /* SHA256:base64, as ssh-keygen -l shows */
} host_key;

static int get_host_key(LIBSSH2_SESSION *session, host_key *k, const char *host, rv_err *err)
{
    int type = 0;
    k->blob = libssh2_session_hostkey(session, &k->len, &type);
    if (!k->blob) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' sent no host key: %s", host,
                   rv_ssh_session_error(session));
        return -1;
    }
    switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_SSHRSA, k->type_name = "RSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_DSS:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_SSHDSS, k->type_name = "DSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_256, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_384, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ECDSA_521, k->type_name = "ECDSA";
        break;
    case LIBSSH2_HOSTKEY_TYPE_ED25519:
        k->kh_type = LIBSSH2_KNOWNHOST_KEY_ED25519, k->type_name = "ED25519";
        break;
    default:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "'%s' sent a host key of unknown type %d",
                   host, type);
        return -1;
    }
    const char *hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256);
    strcpy(k->fingerprint, "SHA256:");
    if (hash)
        base64_encode((const unsigned char *)hash, 32, k->fingerprint + 7,
                      sizeof(k->fingerprint) - 7);
    else
        strcpy(k->fingerprint + 7, "?");
    return 0;
}

/* Glob of OpenSSH host patterns: '*' and '?' only ('[' is literal, as in
 * "[host]:port"), letters in either case. */
static int glob_host(const char *pat, size_t plen, const char *name)
{
    const char *star = NULL, *resume = NULL;
    size_t i = 0;
    while (*name) {
        if (i < plen && (pat[i] == '?' ||
                         tolower((unsigned char)pat[i]) == tolower((unsigned char)*name))) {
            i++, name++;
        } else if (i < plen && pat[i] == '*') {
            star = pat + i++;
            resume = name;
        } else if (star) {
            i = (size_t)(star - pat) + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (i < plen && pat[i] == '*')
        i++;
    return i == plen;
}

static int base64_decode(const char *text, size_t len, gnutls_datum_t *out)
{
    gnutls_datum_t in = { (unsigned char *)text, (unsigned)len };
    return len && len < KNOWN_HOSTS_LINE_MAX && gnutls_base64_decode2(&in, out) == 0 ? 0 : -1;
}

/* Whether the host field of a known_hosts line names host: a hashed
 * entry (|1|salt|HMAC-SHA1 of the name), or a comma list of patterns
 * where one negated pattern that matches excludes the host. */
static int hosts_field_matches(const char *field, size_t len, const char *host)
{
    if (len > 3 && strncmp(field, "|1|", 3) == 0) {
        const char *bar = memchr(field + 3, '|', len - 3);
        gnutls_datum_t salt = { NULL, 0 }, hash = { NULL, 0 };
        unsigned char mac[20];
        int match = bar && base64_decode(field + 3, (size_t)(bar - field - 3), &salt) == 0 &&
                    base64_decode(bar + 1, len - (size_t)(bar + 1 - field), &hash) == 0 &&
                    hash.size == sizeof(mac) &&
                    gnutls_hmac_fast(GNUTLS_MAC_SHA1, salt.data, salt.size, host, strlen(host),
                                     mac) == 0 &&
                    memcmp(mac, hash.data, sizeof(mac)) == 0;
        gnutls_free(salt.data);
        gnutls_free(hash.data);
        return match;
    }
    int match = 0;
    for (size_t i = 0; i < len;) {
        size_t n = 0;
        while (i + n < len && field[i + n] != ',')
            n++;
        int negated = n > 0 && field[i] == '!';
        if (glob_host(field + i + negated, n - (size_t)negated, host)) {
            if (negated)
                return 0;
            match = 1;
        }
        i += n + 1;
    }
    return match;
}

/* What the lines libssh2 does not read said about this host. */
typedef struct kh_markers {
    unsigned revoked_line;      /* a @revoked line with the host's key */
    unsigned ca_line;           /* a @cert-authority line for the host */
} kh_markers;

/* "@revoked HOSTS TYPE BASE64 [comment]" and "@cert-authority ...":
 * libssh2 cannot parse these, so they are read here.  A revoked key is
 * refused whatever the mode; CA lines are noted, since remvirt does not
 * check host certificates. */
static void read_marker(const char *line, unsigned lineno, const char *path, const char *host,
                        const host_key *k, kh_markers *m)
{
    const char *f[4];
    size_t flen[4];
    const char *p = line;
    int nf = 0;
    for (; nf < 4; nf++) {
        p += strspn(p, " \t");
        if (!*p || *p == '\n' || *p == '\r')
            break;
        f[nf] = p;
        flen[nf] = strcspn(p, " \t\r\n");
        p += flen[nf];
    }
    int revoked = flen[0] == 8 && strncmp(f[0], "@revoked", 8) == 0;
    int ca = flen[0] == 15 && strncmp(f[0], "@cert-authority", 15) == 0;
    if (!revoked && !ca) {
        RV_DEBUG("%s:%u: skipped a line with the unknown marker %.*s", path, lineno,
                 (int)flen[0], f[0]);
        return;
    }
    if (nf < 4) {
        RV_DEBUG("%s:%u: skipped a %.*s line without a key", path, lineno, (int)flen[0], f[0]);
        return;
    }
    if (!hosts_field_matches(f[1], flen[1], host))
        return;
    if (ca) {
        if (!m->ca_line)
            m->ca_line = lineno;
        RV_DEBUG("%s:%u: @cert-authority lines are not supported (host certificates are "
                 "not checked)", path, lineno);
        return;
    }
    gnutls_datum_t blob = { NULL, 0 };
    if (base64_decode(f[3], flen[3], &blob) < 0) {
        RV_DEBUG("%s:%u: skipped a @revoked line whose key is not base64", path, lineno);
        return;
    }
    if (k && blob.size == k->len && memcmp(blob.data, k->blob, k->len) == 0 && !m->revoked_line)
        m->revoked_line = lineno;
    gnutls_free(blob.data);
}

/* Load the file line by line into kh (when given); lines with a marker
 * are read here, and what libssh2 cannot parse (key types it lacks) is
 * skipped, as OpenSSH skips what does not concern it.  A file that does
 * not exist is empty. */
static int read_known_hosts(LIBSSH2_KNOWNHOSTS *kh, const char *path, const char *host,
                            const host_key *k, kh_markers *m, rv_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        rv_err_set_errno(err, RV_FROM_SSH, errno, "cannot read the known hosts file %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > KNOWN_HOSTS_LINE_MAX) {
            RV_DEBUG("%s:%u: skipped a line of %zd bytes", path, lineno, len);
            continue;
        }
        const char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (*p == '@')
            read_marker(p, lineno, path, host, k, m);
        else if (kh && libssh2_knownhost_readline(kh, line, (size_t)len,
                                                  LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
            RV_DEBUG("%s:%u: skipped a line libssh2 cannot parse", path, lineno);
    }
    int failed = ferror(f);
    free(line);
    fclose(f);
    if (failed) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SYSTEM_ERROR, "cannot read the known hosts file %s",
                   path);
        return -1;
    }
    return 0;
}

/* Append the host's key to the file (never rewrite it: lines libssh2 did
 * not parse stay as they are). */
static int add_known_host(LIBSSH2_KNOWNHOSTS *kh, const ssh_setup *s, const host_key *k,
                          rv_err *err)
{
    struct libssh2_knownhost *node = NULL;
    if (libssh2_knownhost_addc(kh, s->host_name, NULL, k->blob, k->len, NULL, 0,
                               LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
                               k->kh_type, &node) != 0 || !node) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot add the host key of '%s': %s",
                   s->host_name, "libssh2 refused it");
        return -1;
    }
    char line[8192];
    size_t len = 0;
    if (libssh2_knownhost_writeline(kh, node, line, sizeof(line), &len,
                                    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot format the host key of '%s'",
                   s->host_name);
        return -1;
    }
    /* ~/.ssh may not exist yet, as for ssh itself on first use. */
    char *dir = strdup(s->known_hosts);
    if (!dir)
        return rv_ssh_no_memory(err);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            RV_DEBUG("cannot create %s: %s", dir, strerror(errno));
    }
    free(dir);
    int fd = open(s->known_hosts, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rv_err_set_errno(err, RV_FROM_SSH, errno, "cannot add the host key of '%s' to %s",
                         s->host_name, s->known_hosts);
        return -1;
    }
    /* A last line without its newline would swallow ours. */
    struct stat st;
    int need_newline = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        char last = '\n';
        int rfd = open(s->known_hosts, O_RDONLY | O_CLOEXEC);
        if (rfd >= 0) {
            if (pread(rfd, &last, 1, st.st_size - 1) == 1 && last != '\n')
                need_newline = 1;
            close(rfd);
        }
    }
    int ok = (!need_newline || write(fd, "\n", 1) == 1) &&
             write(fd, line, len) == (ssize_t)len;
    int saved = errno;
    if (close(fd) < 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        rv_err_set_errno(err, RV_FROM_SSH, saved, "cannot add the host key of '%s' to %s",
                         s->host_name, s->known_hosts);
        return -1;
    }
    RV_INFO("added the %s key %s of '%s' to %s", k->type_name, k->fingerprint, s->host_name,
            s->known_hosts);
    return 0;
}

static int refuse_revoked(const ssh_setup *s, const host_key *k, unsigned line, rv_err *err)
{
    rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
               "host key verification failed: the %s key %s of '%s' was revoked "
               "(@revoked in %s, line %u)", k->type_name, k->fingerprint, s->host_name,
               s->known_hosts, line);
    return -1;
}

int rv_ssh_check_host_key(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    host_key k;
    kh_markers marks = { 0, 0 };
    if (s->verify == VERIFY_IGNORE) {
        /* Even unchecked, a key the user revoked is never accepted; but
         * what stops only the check (an unreadable file, a key type this
         * code does not name) does not stop the connection. */
        rv_err quiet = { 0 };
        if (s->known_hosts && get_host_key(session, &k, s->host_name, &quiet) == 0 &&
            read_known_hosts(NULL, s->known_hosts, s->host_name, &k, &marks, &quiet) == 0 &&
            marks.revoked_line) {
            rv_err_clear(&quiet);
            return refuse_revoked(s, &k, marks.revoked_line, err);
        }
        if (quiet.message)
            RV_DEBUG("no @revoked check: %s", quiet.message);
        rv_err_clear(&quiet);
        RV_DEBUG("not checking the host key of '%s' (known_hosts_verify=ignore)", s->host_name);
        return 0;
    }
    if (get_host_key(session, &k, s->host_name, err) < 0)
        return -1;
    LIBSSH2_KNOWNHOSTS *kh = libssh2_knownhost_init(session);
    if (!kh)
        return rv_ssh_no_memory(err);
    int result = -1;
    if (read_known_hosts(kh, s->known_hosts, s->host_name, &k, &marks, err) < 0)
        goto out;
    if (marks.revoked_line) {
        refuse_revoked(s, &k, marks.revoked_line, err);
        goto out;
    }
    char ca_note[160] = "";
    if (marks.ca_line)
        snprintf(ca_note, sizeof(ca_note), "; line %u is a @cert-authority line, which remvirt "
                 "does not support (host certificates are not checked)", marks.ca_line);
    struct libssh2_knownhost *found = NULL;
    int rc = libssh2_knownhost_check(kh, s->host_name, k.blob, k.len,
                                     LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW |
                                     k.kh_type, &found);
    switch (rc) {
    case LIBSSH2_KNOWNHOST_CHECK_MATCH:
        RV_DEBUG("the %s key %s of '%s' is in %s", k.type_name, k.fingerprint, s->host_name,
                 s->known_hosts);
        result = 0;
        break;
    case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
                   "host key verification failed: the key of '%s' does not match %s "
                   "(possible man-in-the-middle); it offered the %s key %s%s",
                   s->host_name, s->known_hosts, k.type_name, k.fingerprint, ca_note);
        break;
    case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
        if (s->verify == VERIFY_AUTO) {
            if (marks.ca_line)
                RV_WARN("%s, line %u: @cert-authority lines are not supported; adding the "
                        "plain key of '%s' instead", s->known_hosts, marks.ca_line, s->host_name);
            result = add_known_host(kh, s, &k, err);
            break;
        }
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH,
                   "host key for '%s' is not in %s; it offered the %s key %s "
                   "(connect once with ssh, or use known_hosts_verify=auto)%s",
                   s->host_name, s->known_hosts, k.type_name, k.fingerprint, ca_note);
        break;
    default:
        rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "cannot check the host key of '%s' against %s: %s",
                   s->host_name, s->known_hosts, rv_ssh_session_error(session));
        break;
    }
out:
    libssh2_knownhost_free(kh);
    return result;
}
