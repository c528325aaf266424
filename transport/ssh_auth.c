/* SSH user authentication (agent, key files, password, keyboard-
 * interactive) and the terminal prompts it needs; see ssh_priv.h. */
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

const char *const rv_ssh_auth_names[AUTH_KBDINT + 1] = {
    [AUTH_AGENT] = "agent",
    [AUTH_PRIVKEY] = "privkey",
    [AUTH_PASSWORD] = "password",
    [AUTH_KBDINT] = "keyboard-interactive",
};

/* ---------------------------------------------------------------- prompts */

/* Ask on the controlling terminal; NULL if there is none (errno says why).
 * Without echo for secrets. */
static char *tty_prompt(const char *prompt, int echo)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct termios saved, quiet;
    int restore = 0;
    if (!echo && tcgetattr(fd, &saved) == 0) {
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        quiet.c_lflag |= ECHONL;
        restore = tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
    char *answer = NULL;
    if (write(fd, prompt, strlen(prompt)) >= 0) {
        char buf[PROMPT_MAX];
        size_t len = 0;
        int ok = 0;
        for (;;) {
            char c;
            ssize_t n = read(fd, &c, 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            if (c == '\n') {
                ok = 1;
                break;
            }
            if (len + 1 < sizeof(buf))
                buf[len++] = c;
        }
        if (ok || len > 0)
            answer = strndup(buf, len);
        explicit_bzero(buf, sizeof(buf));
    }
    int saved_errno = errno;
    if (restore)
        tcsetattr(fd, TCSAFLUSH, &saved);
    close(fd);
    if (!answer)
        errno = saved_errno ? saved_errno : EIO;
    return answer;
}

static void free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void tty_say(const char *text)
{
    int fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            RV_DEBUG("cannot write to the terminal: %s", strerror(errno));
        close(fd);
    }
}

/* ---------------------------------------------------------------- authentication */

static void note_tried(ssh_setup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_tried(ssh_setup *s, const char *fmt, ...)
{
    char *item = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&item, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t need = s->tried_len + (s->tried_len ? 2 : 0) + (size_t)n + 1;
    char *grown = realloc(s->tried, need);
    if (grown) {
        s->tried = grown;
        if (s->tried_len) {
            memcpy(s->tried + s->tried_len, ", ", 2);
            s->tried_len += 2;
        }
        memcpy(s->tried + s->tried_len, item, (size_t)n + 1);
        s->tried_len += (size_t)n;
    }
    free(item);
}

static int server_accepts(const ssh_setup *s, const char *method)
{
    size_t len = strlen(method);
    for (const char *p = s->server_methods; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, method, n) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Results of one method: authenticated, not this way, or the connection
 * is gone (err set). */
enum { AUTH_OK = 1, AUTH_NO = 0, AUTH_FATAL = -1 };

/* A libssh2 error that means the connection is unusable. */
static int lost_connection(int rc)
{
    return rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_RECV ||
           rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_TIMEOUT ||
           rc == LIBSSH2_ERROR_SOCKET_TIMEOUT;
}

static int auth_lost(LIBSSH2_SESSION *session, const ssh_setup *s, rv_err *err)
{
    rv_err_set(err, RV_FROM_SSH, RV_ERR_SSH, "connection to '%s' lost during authentication: %s",
               s->host_name, rv_ssh_session_error(session));
    return AUTH_FATAL;
}

static int auth_agent(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (!getenv("SSH_AUTH_SOCK")) {
        note_tried(s, "agent (SSH_AUTH_SOCK is not set)");
        return AUTH_NO;
    }
    LIBSSH2_AGENT *agent = libssh2_agent_init(session);
    if (!agent) {
        note_tried(s, "agent (%s)", rv_ssh_session_error(session));
        return AUTH_NO;
    }
    int result = AUTH_NO;
    if (libssh2_agent_connect(agent) != 0) {
        note_tried(s, "agent (cannot connect to it: %s)", rv_ssh_session_error(session));
        goto out;
    }
    if (libssh2_agent_list_identities(agent) != 0) {
        note_tried(s, "agent (cannot list its keys: %s)", rv_ssh_session_error(session));
        goto disconnect;
    }
    struct libssh2_agent_publickey *id = NULL, *prev = NULL;
    int rejected = 0;
    while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
        int rc = libssh2_agent_userauth(agent, s->user, id);
        if (rc == 0) {
            RV_DEBUG("authenticated with the agent's key '%s'", id->comment ? id->comment : "");
            result = AUTH_OK;
            goto disconnect;
        }
        if (lost_connection(rc)) {
            result = auth_lost(session, s, err);
            goto disconnect;
        }
        rejected++;
        prev = id;
    }
    if (rejected)
        note_tried(s, "agent (%d key%s rejected)", rejected, rejected == 1 ? "" : "s");
    else
        note_tried(s, "agent (it holds no keys)");
disconnect:
    libssh2_agent_disconnect(agent);
out:
    libssh2_agent_free(agent);
    return result;
}

/* What the key file's head tells: whether it is encrypted (PEM says so in
 * its header; the OpenSSH format names its cipher, "none" when clear,
 * after "openssh-key-v1") and whether it is an RSA key. */
typedef struct key_file_info {
    int encrypted;
    int rsa;
} key_file_info;

static key_file_info read_key_file_info(const char *path)
{
    key_file_info info = { 0, 0 };
    FILE *f = fopen(path, "re");
    if (!f)
        return info;
    char line[256];
    int openssh = 0;
    char b64[320];
    size_t b64_len = 0;
    for (int i = 0; i < 10 && fgets(line, sizeof(line), f); i++) {
        if (strstr(line, "ENCRYPTED"))
            info.encrypted = 1;
        if (strstr(line, "BEGIN RSA PRIVATE KEY"))
            info.rsa = 1;
        if (strstr(line, "BEGIN OPENSSH PRIVATE KEY")) {
            openssh = 1;
            continue;
        }
        if (openssh) {
            for (const char *p = line; *p && b64_len + 1 < sizeof(b64); p++)
                if (*p != '\n' && *p != '\r')
                    b64[b64_len++] = *p;
            if (b64_len + 1 >= sizeof(b64))
                break;
        }
    }
    fclose(f);
    if (!openssh)
        return info;
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[240];
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < b64_len && n < sizeof(raw); i++) {
        const char *d = strchr(digits, b64[i]);
        if (!d || !*d)
            break;
        acc = (acc << 6) | (uint32_t)(d - digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            raw[n++] = (unsigned char)(acc >> bits);
        }
    }
    /* magic, then string ciphername: its length (4 bytes) and text. */
    static const char magic[] = "openssh-key-v1";
    if (n < sizeof(magic) + 4 || memcmp(raw, magic, sizeof(magic)) != 0)
        return info;
    const unsigned char *c = raw + sizeof(magic);
    uint32_t len = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
    info.encrypted = !(len == 4 && n >= sizeof(magic) + 8 && memcmp(c + 4, "none", 4) == 0);
    /* The public key, in clear, follows the KDF fields; its type name is
     * within the bytes decoded. */
    info.rsa = memmem(raw, n, "ssh-rsa", 7) != NULL;
    return info;
}

/* 1 authenticated, 0 rejected or unusable (noted), -1 fatal. */
static int try_key_file(LIBSSH2_SESSION *session, ssh_setup *s, const char *path, rv_err *err)
{
    if (access(path, R_OK) < 0) {
        note_tried(s, "privkey (cannot read %s: %s)", path, strerror(errno));
        return AUTH_NO;
    }
    char *passphrase = NULL;
    int tries = 1;
    key_file_info info = read_key_file_info(path);
    if (info.encrypted) {
        if (s->opts->no_tty) {
            note_tried(s, "privkey (%s is encrypted and no_tty forbids asking for its "
                       "passphrase)", path);
            return AUTH_NO;
        }
        tries = PROMPT_TRIES;
    }
    for (int attempt = 0; attempt < tries; attempt++) {
        if (tries > 1) {
            char prompt[PATH_MAX + 64];
            snprintf(prompt, sizeof(prompt), "Enter passphrase for key '%s': ", path);
            passphrase = tty_prompt(prompt, 0);
            if (!passphrase) {
                note_tried(s, "privkey (%s is encrypted and there is no terminal to ask for "
                           "its passphrase)", path);
                return AUTH_NO;
            }
        }
        int rc = libssh2_userauth_publickey_fromfile_ex(session, s->user,
                                                        (unsigned)strlen(s->user), NULL, path,
                                                        passphrase);
        free_secret(passphrase);
        passphrase = NULL;
        if (rc == 0) {
            RV_DEBUG("authenticated with the key %s", path);
            return AUTH_OK;
        }
        if (lost_connection(rc))
            return auth_lost(session, s, err);
        if (rc == LIBSSH2_ERROR_FILE && tries > 1 && attempt + 1 < tries) {
            tty_say("Bad passphrase, try again.\n");
            continue;
        }
        if (rc == LIBSSH2_ERROR_FILE)
            note_tried(s, "privkey (cannot use %s: %s)", path, rv_ssh_session_error(session));
#if LIBSSH2_VERSION_NUM < 0x010b00
        else if (info.rsa)
            note_tried(s, "privkey (%s rejected; this libssh2 signs with RSA/SHA-1, which "
                       "OpenSSH 8.8 and later refuse by default: use an ed25519 or ecdsa key)",
                       path);
#endif
        else
            note_tried(s, "privkey (%s rejected)", path);
        return AUTH_NO;
    }
    return AUTH_NO;
}

static int auth_privkey(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (s->opts->keyfile && *s->opts->keyfile)
        return try_key_file(session, s, s->opts->keyfile, err);
    static const char *const defaults[] = { "id_ed25519", "id_ecdsa", "id_rsa" };
    int any = 0;
    for (size_t i = 0; s->home && i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/.ssh/%s", s->home, defaults[i]) >= (int)sizeof(path))
            continue;
        if (access(path, F_OK) < 0)
            continue;
        any = 1;
        int rc = try_key_file(session, s, path, err);
        if (rc != AUTH_NO)
            return rc;
    }
    if (!any)
        note_tried(s, "privkey (no keyfile given and no ~/.ssh/id_ed25519, id_ecdsa or id_rsa)");
    return AUTH_NO;
}

static int auth_password(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err)
{
    if (s->opts->no_tty) {
        note_tried(s, "password (no_tty forbids asking for it)");
        return AUTH_NO;
    }
    char prompt[512];
    snprintf(prompt, sizeof(prompt), "%s@%s's password: ", s->user, s->host);
    for (int attempt = 0; attempt < PROMPT_TRIES; attempt++) {
        char *pw = tty_prompt(prompt, 0);
        if (!pw) {
            note_tried(s, "password (no terminal to ask for it)");
            return AUTH_NO;
        }
        int rc = libssh2_userauth_password_ex(session, s->user, (unsigned)strlen(s->user), pw,
                                              (unsigned)strlen(pw), NULL);
        free_secret(pw);
        if (rc == 0)
            return AUTH_OK;
        if (lost_connection(rc))
            return auth_lost(session, s, err);
        if (rc != LIBSSH2_ERROR_AUTHENTICATION_FAILED) {
            note_tried(s, "password (%s)", rv_ssh_session_error(session));
            return AUTH_NO;
        }
        if (attempt + 1 < PROMPT_TRIES)
            tty_say("Permission denied, please try again.\n");
    }
    note_tried(s, "password (rejected %d times)", PROMPT_TRIES);
    return AUTH_NO;
}

/* The server's questions, answered on the terminal. */
static void kbdint_cb(const char *name, int name_len, const char *instruction,
                      int instruction_len, int num_prompts,
                      const LIBSSH2_USERAUTH_KBDINT_PROMPT *prompts,
                      LIBSSH2_USERAUTH_KBDINT_RESPONSE *responses, void **abstract)
{
    ssh_transport *t = *abstract;
    ssh_setup *s = t->setup;
    /* The server chooses these texts: escape sequences in them would
     * drive the user's terminal (rewrite what it shows, set its title,
     * fake a prompt), so their control characters are shown escaped; the
     * instruction keeps its lines. */
    if (name_len > 0 || instruction_len > 0) {
        char *n = rv_escape_text_dup(name ? name : "", name && name_len > 0 ? (size_t)name_len : 0, 0);
        char *in = rv_escape_text_dup(instruction ? instruction : "",
                                      instruction && instruction_len > 0
                                          ? (size_t)instruction_len : 0, 1);
        char *intro = NULL;
        if (n && in && asprintf(&intro, "%s%s%s\n", n, *n && *in ? "\n" : "", in) >= 0) {
            tty_say(intro);
            free(intro);
        }
        free(n);
        free(in);
    }
    for (int i = 0; i < num_prompts; i++) {
        char *answer = NULL;
        if (!s->kbdint_unanswered) {
            char *text = rv_escape_text_dup((const char *)prompts[i].text, prompts[i].length, 0);
            if (text) {
                answer = tty_prompt(text, prompts[i].echo);
                free(text);
            }
            if (!answer)
                s->kbdint_unanswered = 1;
        }
        /* libssh2 frees the answers with its allocator: malloc. */
        responses[i].text = answer ? answer : strdup("");
        responses[i].length = responses[i].text ? (unsigned)strlen(responses[i].text) : 0;
    }
}

static int auth_kbdint(ssh_transport *t, ssh_setup *s, rv_err *err)
{
    if (s->opts->no_tty) {
        note_tried(s, "keyboard-interactive (no_tty forbids asking)");
        return AUTH_NO;
    }
    s->kbdint_unanswered = 0;
    /* A person answers: no time limit on the whole call. */
    libssh2_session_set_timeout(t->session, 0);
    int rc = libssh2_userauth_keyboard_interactive_ex(t->session, s->user,
                                                      (unsigned)strlen(s->user), kbdint_cb);
    libssh2_session_set_timeout(t->session, SETUP_TIMEOUT_MS);
    if (rc == 0)
        return AUTH_OK;
    if (lost_connection(rc))
        return auth_lost(t->session, s, err);
    note_tried(s, "keyboard-interactive (%s)",
               s->kbdint_unanswered ? "no terminal to answer on" : "rejected");
    return AUTH_NO;
}

int rv_ssh_authenticate(ssh_transport *t, ssh_setup *s, rv_err *err)
{
    LIBSSH2_SESSION *session = t->session;
    const char *list = libssh2_userauth_list(session, s->user, (unsigned)strlen(s->user));
    if (!list) {
        if (libssh2_userauth_authenticated(session))
            return 0;           /* the server wanted no authentication */
        rv_err_set(err, RV_FROM_SSH, RV_ERR_AUTH_FAILED,
                   "cannot ask '%s' how user '%s' may authenticate: %s", s->host_name, s->user,
                   rv_ssh_session_error(session));
        return -1;
    }
    s->server_methods = strdup(list);
    if (!s->server_methods)
        return rv_ssh_no_memory(err);
    RV_DEBUG("'%s' accepts: %s", s->host_name, s->server_methods);
    for (int i = 0; i < s->n_methods; i++) {
        auth_method m = s->methods[i];
        int rc = AUTH_NO;
        switch (m) {
        case AUTH_AGENT:
        case AUTH_PRIVKEY:
            if (!server_accepts(s, "publickey")) {
                note_tried(s, "%s (the server takes no public keys)", rv_ssh_auth_names[m]);
                continue;
            }
            rc = m == AUTH_AGENT ? auth_agent(session, s, err) : auth_privkey(session, s, err);
            break;
        case AUTH_PASSWORD:
            /* Where the server asks through keyboard-interactive only, a
             * password is given that way. */
            if (server_accepts(s, "password"))
                rc = auth_password(session, s, err);
            else if (server_accepts(s, "keyboard-interactive"))
                rc = auth_kbdint(t, s, err);
            else
                note_tried(s, "password (the server takes no passwords)");
            break;
        case AUTH_KBDINT:
            if (server_accepts(s, "keyboard-interactive"))
                rc = auth_kbdint(t, s, err);
            else
                note_tried(s, "keyboard-interactive (the server does not offer it)");
            break;
        }
        if (rc == AUTH_FATAL)
            return -1;
        /* A method may be one step of several (AuthenticationMethods). */
        if (rc == AUTH_OK && libssh2_userauth_authenticated(session))
            return 0;
    }
    rv_err_set(err, RV_FROM_SSH, RV_ERR_AUTH_FAILED,
               "authentication failed for user '%s' on '%s' (tried: %s; the server accepts: %s)",
               s->user, s->host_name, s->tried ? s->tried : "nothing", s->server_methods);
    return -1;
}
