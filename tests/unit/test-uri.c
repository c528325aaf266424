/* URI parsing: the parts of good URIs, the socket and server name they
 * lead to, and the error (code, domain, words) of bad ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/uri.h"

static int failures;

#define CHECK(cond, ...)                                            \
    do {                                                            \
        if (!(cond)) {                                              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                           \
            fputc('\n', stderr);                                    \
            failures++;                                             \
        }                                                           \
    } while (0)

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define SHOW(s) ((s) ? (s) : "(null)")

struct good {
    const char *text;
    const char *driver, *transport, *user, *host;
    int port;
    const char *path;
    size_t nparams;
    const char *socket_rw;      /* the daemon's socket (ssh: on the remote host) */
    const char *socket_ro;
    const char *server_name;
    rvc_target_kind kind;
    const char *endpoint;       /* "host port" for tcp, tls and ssh */
};

static const struct good goods[] = {
    { "test:///default", "test", NULL, NULL, NULL, 0, "/default", 0,
      RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "test:///default", RVC_UNIX, NULL },
    { "test+unix:///default?socket=/tmp/lv/libvirt-sock", "test", "unix", NULL, NULL, 0, "/default", 1,
      "/tmp/lv/libvirt-sock", "/tmp/lv/libvirt-sock", "test:///default", RVC_UNIX, NULL },
    /* escapes decode; '+' stays; client params never reach the server */
    { "qemu+unix:///system?socket=%2Ftmp%2Fa%20b+c&mode=legacy", "qemu", "unix", NULL, NULL, 0,
      "/system", 2, "/tmp/a b+c", "/tmp/a b+c", "qemu:///system", RVC_UNIX, NULL },
    /* other params do, re-encoded */
    { "test:///default?foo=bar%26baz&socket=/s&x=a%20b", "test", NULL, NULL, NULL, 0, "/default", 3,
      "/s", "/s", "test:///default?foo=bar%26baz&x=a%20b", RVC_UNIX, NULL },
    { "test:///default?a;b=1", "test", NULL, NULL, NULL, 0, "/default", 2,
      RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "test:///default?a=&b=1", RVC_UNIX, NULL },
    /* the last of a repeated param wins */
    { "test+unix:///default?socket=/a&socket=/b", "test", "unix", NULL, NULL, 0, "/default", 2,
      "/b", "/b", "test:///default", RVC_UNIX, NULL },
    /* ?name= replaces the name sent to the server */
    { "test:///default?name=test:///other", "test", NULL, NULL, NULL, 0, "/default", 1,
      RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "test:///other", RVC_UNIX, NULL },
    { "test://", "test", NULL, NULL, NULL, 0, "", 0,
      RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "test://", RVC_UNIX, NULL },
    { "test:///my%20vm/x", "test", NULL, NULL, NULL, 0, "/my vm/x", 0,
      RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "test:///my%20vm/x", RVC_UNIX, NULL },
    /* network forms: a host without a transport means TLS */
    { "qemu+ssh://alice@host.example:2222/system?keyfile=/k", "qemu", "ssh", "alice", "host.example",
      2222, "/system", 1, RVC_DEFAULT_SOCKET, RVC_DEFAULT_SOCKET_RO, "qemu:///system", RVC_SSH,
      "host.example 2222" },
    { "qemu+libssh2://h/system?socket=/s", "qemu", "libssh2", NULL, "h", 0, "/system", 1, "/s", "/s",
      "qemu:///system", RVC_SSH, "h 22" },
    { "qemu://host/system", "qemu", NULL, NULL, "host", 0, "/system", 0, NULL, NULL,
      "qemu:///system", RVC_TLS, "host 16514" },
    { "qemu+tls://host:99/system?pkipath=/p&no_verify=1", "qemu", "tls", NULL, "host", 99,
      "/system", 2, NULL, NULL, "qemu:///system", RVC_TLS, "host 99" },
    { "qemu+tcp://[::1]:16509/system", "qemu", "tcp", NULL, "::1", 16509, "/system", 0, NULL, NULL,
      "qemu:///system", RVC_TCP, "::1 16509" },
    { "test+tcp:///default", "test", "tcp", NULL, NULL, 0, "/default", 0, NULL, NULL,
      "test:///default", RVC_TCP, "localhost 16509" },
    { "test+ext:///default?command=ssh%20h%20nc", "test", "ext", NULL, NULL, 0, "/default", 1, NULL,
      NULL, "test:///default", RVC_EXT, NULL },
    /* SASL's params are the client's too */
    { "test+tcp://fred@h/default?auth=sasl.DIGEST-MD5&authfile=/a.conf&no_tty=1&k=v", "test", "tcp",
      "fred", "h", 0, "/default", 4, NULL, NULL, "test:///default?k=v", RVC_TCP, "h 16509" },
};

static void check_good(const struct good *g)
{
    rvc_uri *u = NULL;
    rv_err err = { 0 };
    if (rvc_uri_parse(g->text, &u, &err) < 0) {
        CHECK(0, "'%s' should parse: %s", g->text, SHOW(err.message));
        rv_err_clear(&err);
        return;
    }
    CHECK(same(u->driver, g->driver), "%s: driver '%s'", g->text, SHOW(u->driver));
    CHECK(same(u->transport, g->transport), "%s: transport '%s'", g->text, SHOW(u->transport));
    CHECK(same(u->user, g->user), "%s: user '%s'", g->text, SHOW(u->user));
    CHECK(same(u->host, g->host), "%s: host '%s'", g->text, SHOW(u->host));
    CHECK(u->port == g->port, "%s: port %d", g->text, u->port);
    CHECK(same(u->path, g->path), "%s: path '%s'", g->text, SHOW(u->path));
    CHECK(u->nparams == g->nparams, "%s: %zu params", g->text, u->nparams);

    for (int ro = 0; ro <= 1; ro++) {
        const char *want = ro ? g->socket_ro : g->socket_rw;
        rvc_target t;
        if (rvc_uri_target(u, ro, &t, &err) < 0) {
            CHECK(0, "%s: target: %s", g->text, SHOW(err.message));
            rv_err_clear(&err);
            continue;
        }
        CHECK(t.kind == g->kind, "%s: transport kind %d, want %d", g->text, t.kind, g->kind);
        CHECK(same(t.socket, want), "%s: socket '%s' (ro %d), want '%s'", g->text, SHOW(t.socket),
              ro, SHOW(want));
        char endpoint[300] = "";
        if (t.host)
            snprintf(endpoint, sizeof(endpoint), "%s %s", t.host, t.port);
        CHECK(same(t.host ? endpoint : NULL, g->endpoint), "%s: endpoint '%s'", g->text, endpoint);
        CHECK((t.command != NULL) == (g->kind == RVC_SSH || g->kind == RVC_EXT),
              "%s: command '%s'", g->text, SHOW(t.command));
        rvc_target_free(&t);
    }

    char *name = rvc_uri_server_name(u, &err);
    CHECK(same(name, g->server_name), "%s: server name '%s'", g->text, SHOW(name));
    free(name);
    rvc_uri_free(u);
}

struct bad {
    const char *text;
    int code;
    const char *words;          /* must appear in the message */
};

/* Refused by the parser (all RV_ERR_INVALID_ARG). */
static const struct bad bad_syntax[] = {
    { "", RV_ERR_INVALID_ARG, "the URI is empty" },
    { "test", RV_ERR_INVALID_ARG, "expected driver[+transport]://" },
    { "test:/default", RV_ERR_INVALID_ARG, "expected driver[+transport]://" },
    { "://x", RV_ERR_INVALID_ARG, "no driver name" },
    { "+unix:///x", RV_ERR_INVALID_ARG, "no driver name" },
    { "test+:///x", RV_ERR_INVALID_ARG, "empty transport" },
    { "te st:///x", RV_ERR_INVALID_ARG, "space or control character" },
    { "test:///x\n", RV_ERR_INVALID_ARG, "space or control character" },
    { "1test:///x", RV_ERR_INVALID_ARG, "must start with a letter" },
    { "te$t:///x", RV_ERR_INVALID_ARG, "character '$'" },
    { "test+unix+x:///x", RV_ERR_INVALID_ARG, "character '+'" },
    { "test:///x?socket=%zz", RV_ERR_INVALID_ARG, "'%zz' is not a valid percent-escape" },
    { "test:///x?socket=%4", RV_ERR_INVALID_ARG, "'%4' is not a valid percent-escape" },
    { "test:///x%", RV_ERR_INVALID_ARG, "'%' is not a valid percent-escape" },
    { "test:///x?socket=%00", RV_ERR_INVALID_ARG, "NUL byte" },
    { "test:///x?=v", RV_ERR_INVALID_ARG, "a parameter has no name" },
    { "test://h:0/x", RV_ERR_INVALID_ARG, "port '0' is not a number" },
    { "test://h:99999/x", RV_ERR_INVALID_ARG, "port '99999'" },
    { "test://h:12a/x", RV_ERR_INVALID_ARG, "port '12a'" },
    { "test://h:/x", RV_ERR_INVALID_ARG, "port ''" },
    { "test://:123/x", RV_ERR_INVALID_ARG, "port is given without a host" },
    { "test://@h/x", RV_ERR_INVALID_ARG, "empty user name" },
    { "test://u@/x", RV_ERR_INVALID_ARG, "user is given without a host" },
    { "test://[::1/x", RV_ERR_INVALID_ARG, "never closed" },
    { "test://[]/x", RV_ERR_INVALID_ARG, "empty IPv6 address" },
    { "test://[::1]x/x", RV_ERR_INVALID_ARG, "only ':port' may follow" },
    { "test:///x#frag", RV_ERR_INVALID_ARG, "fragment" },
};

/* Parse, but name no reachable target. */
static const struct bad bad_target[] = {
    { "test+foo:///x", RV_ERR_INVALID_ARG, "unknown transport 'foo'" },
    { "test+ext:///x", RV_ERR_INVALID_ARG, "needs a command parameter" },
    { "test+ext:///x?command=", RV_ERR_INVALID_ARG, "needs a command parameter" },
    { "test+ssh://h/x?proxy=magic", RV_ERR_INVALID_ARG, "unknown proxy 'magic'" },
    { "test+ssh://h/x?netcat=", RV_ERR_INVALID_ARG, "the netcat parameter is empty" },
    { "test+ssh://h/x?mode=direct", RV_ERR_NO_SUPPORT, "mode 'direct' is not supported" },
    { "test+unix://h/x", RV_ERR_INVALID_ARG, "remove the host 'h'" },
    { "test:///x?mode=direct", RV_ERR_NO_SUPPORT, "mode 'direct' is not supported" },
    { "test:///x?mode=fast", RV_ERR_INVALID_ARG, "unknown mode 'fast'" },
    { "test:///x?socket=", RV_ERR_INVALID_ARG, "the socket parameter is empty" },
};

static void check_bad_syntax(const struct bad *b)
{
    static rvc_uri sentinel;
    rvc_uri *u = &sentinel;        /* a failed parse must reset it to NULL */
    rv_err err = { 0 };
    int rc = rvc_uri_parse(b->text, &u, &err);
    CHECK(rc == -1 && u == NULL, "'%s' should not parse", b->text);
    CHECK(err.code == b->code && err.domain == RV_FROM_URI, "'%s': error %d/%d", b->text, err.code,
          err.domain);
    CHECK(err.message && strstr(err.message, b->words) &&
          strncmp(err.message, "invalid URI '", 13) == 0,
          "'%s': message '%s' lacks '%s'", b->text, SHOW(err.message), b->words);
    if (rc == 0)
        rvc_uri_free(u);
    rv_err_clear(&err);
}

static void check_bad_target(const struct bad *b)
{
    rvc_uri *u = NULL;
    rv_err err = { 0 };
    if (rvc_uri_parse(b->text, &u, &err) < 0) {
        CHECK(0, "'%s' should parse: %s", b->text, SHOW(err.message));
        rv_err_clear(&err);
        return;
    }
    rvc_target t;
    int rc = rvc_uri_target(u, 0, &t, &err);
    CHECK(rc == -1, "'%s' should have no target", b->text);
    if (rc == 0)
        rvc_target_free(&t);
    CHECK(err.code == b->code && err.domain == RV_FROM_URI, "'%s': error %d/%d", b->text, err.code,
          err.domain);
    CHECK(err.message && strstr(err.message, b->words), "'%s': message '%s' lacks '%s'", b->text,
          SHOW(err.message), b->words);
    rv_err_clear(&err);
    rvc_uri_free(u);
}

/* The command an SSH URI runs on the remote host, for each proxy. */
static void check_ssh_command(const char *text, int readonly, const char *want)
{
    rvc_uri *u = NULL;
    rvc_target t = { 0 };
    rv_err err = { 0 };
    CHECK(rvc_uri_parse(text, &u, &err) == 0 && rvc_uri_target(u, readonly, &t, &err) == 0,
          "%s: %s", text, SHOW(err.message));
    CHECK(same(t.command, want), "%s: command '%s', want '%s'", text, SHOW(t.command), want);
    rvc_target_free(&t);
    rvc_uri_free(u);
    rv_err_clear(&err);
}

int main(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++, n++)
        check_good(&goods[i]);
    for (size_t i = 0; i < sizeof(bad_syntax) / sizeof(bad_syntax[0]); i++, n++)
        check_bad_syntax(&bad_syntax[i]);
    for (size_t i = 0; i < sizeof(bad_target) / sizeof(bad_target[0]); i++, n++)
        check_bad_target(&bad_target[i]);

    /* Everything but the helper alone runs under sh -c (the login shell may
     * not be a POSIX one), so the script is quoted once more: ' is '\''. */
#define Q1 "'\\''"
#define NC_QUIT(nc) "Q=; if " nc " -q 2>&1 | grep " Q1 "requires an argument" Q1 \
                    " >/dev/null; then Q=" Q1 "-q 0" Q1 "; fi; exec " nc " $Q -U "
    check_ssh_command("test+ssh://h/x?proxy=netcat&socket=/s", 0,
                      "sh -c '" NC_QUIT(Q1 "nc" Q1) Q1 "/s" Q1 "'");
    check_ssh_command("test+ssh://h/x?netcat=/bin/nc.openbsd", 1,
                      "sh -c '" NC_QUIT(Q1 "/bin/nc.openbsd" Q1) Q1 RVC_DEFAULT_SOCKET_RO Q1 "'");
    check_ssh_command("test+ssh://h/x?proxy=native&socket=/it's", 1,
                      "remvirt-ssh-helper '/it" Q1 "s'");
    check_ssh_command("test+ssh://h/x", 0,
                      "sh -c 'if command -v remvirt-ssh-helper >/dev/null 2>&1; then exec "
                      "remvirt-ssh-helper " Q1 RVC_DEFAULT_SOCKET Q1 "; else "
                      NC_QUIT(Q1 "nc" Q1) Q1 RVC_DEFAULT_SOCKET Q1 "; fi'");
    n += 4;

    /* rvc_uri_param_value sees decoded names and values. */
    rvc_uri *u = NULL;
    rv_err err = { 0 };
    CHECK(rvc_uri_parse("test:///x?n%61me2=v%3Dw&flag", &u, &err) == 0, "param URI: %s",
          SHOW(err.message));
    if (u) {
        CHECK(same(rvc_uri_param_value(u, "name2"), "v=w"), "decoded param value");
        CHECK(same(rvc_uri_param_value(u, "flag"), ""), "param without '='");
        CHECK(rvc_uri_param_value(u, "other") == NULL, "missing param");
        CHECK(same(rvc_uri_transport(u), "unix"), "no host means unix");
        rvc_uri_free(u);
    }
    n++;

    printf("%zu URI cases, %d failures\n", n, failures);
    return failures ? 1 : 0;
}
