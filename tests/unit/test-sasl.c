/* The cyrus-sasl glue, both halves in one process, and the security-layer
 * transport over socketpairs.  tests/unit/test-sasl.sh makes the sasldb
 * (user alice) and remvirtd.conf (SCRAM-SHA-256, DIGEST-MD5) in a temp
 * dir, points SASL_CONF_PATH at it and runs this program. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth/sasl.h"
#include "transport/sasl.h"
#include "transport/socket.h"
#include "tests/unit/check.h"

#define USER "alice"
#define PASSWORD "wonderland-42"
/* What remvirtd passes for a Unix socket: strong enough for anything. */
#define UNIX_SSF 10000
#define TCP_MIN_SSF 56
/* Bound on every wait, generous for valgrind. */
#define POLL_MS 60000

static const rv_sasl_credentials alice = { USER, PASSWORD, NULL, NULL };

/* ---------------------------------------------------------------- helpers */

static rv_sasl *server_new(int external_ssf, int min_ssf)
{
    rv_err err = { 0 };
    rv_sasl *s = rv_sasl_server_new(external_ssf ? NULL : "127.0.0.1;16509",
                                    external_ssf ? NULL : "127.0.0.1;40000", external_ssf,
                                    min_ssf, &err);
    if (!s)
        check_fail(__FILE__, __LINE__, "rv_sasl_server_new: %s", err.message);
    return s;
}

static rv_sasl *client_new(int external_ssf, int min_ssf, const rv_sasl_credentials *creds)
{
    rv_err err = { 0 };
    rv_sasl *s = rv_sasl_client_new("libvirt", "localhost",
                                    external_ssf ? NULL : "127.0.0.1;40000",
                                    external_ssf ? NULL : "127.0.0.1;16509", external_ssf,
                                    min_ssf, creds, &err);
    if (!s)
        check_fail(__FILE__, __LINE__, "rv_sasl_client_new: %s", err.message);
    return s;
}

enum { EXCHANGE_OK = 0, SERVER_FAILED = -1, CLIENT_FAILED = -2 };

/* libvirt's flow: INIT (mechlist), START, then STEPs until the server
 * says complete and the client has taken the server's last data. */
static int exchange(rv_sasl *sv, rv_sasl *cl, const char *wanted, rv_err *serr, rv_err *cerr)
{
    rv_err err = { 0 };
    char *mechlist = rv_sasl_server_mechlist(sv, &err);
    if (!mechlist)
        check_fail(__FILE__, __LINE__, "mechlist: %s", err.message);
    const char *mech;
    rv_sasl_data cout, sout;
    int c = rv_sasl_client_start(cl, mechlist, wanted, &mech, &cout, cerr);
    free(mechlist);
    if (c < 0)
        return CLIENT_FAILED;
    int s = rv_sasl_server_step(sv, mech, &cout, &sout, serr);
    if (s < 0)
        return SERVER_FAILED;
    for (int round = 0; round < 10; round++) {
        c = rv_sasl_client_step(cl, &sout, &cout, cerr);
        if (c < 0)
            return CLIENT_FAILED;
        if (s == RV_SASL_DONE) {
            CHECK_INT_EQ(c, RV_SASL_DONE);
            return EXCHANGE_OK;
        }
        s = rv_sasl_server_step(sv, NULL, &cout, &sout, serr);
        if (s < 0)
            return SERVER_FAILED;
    }
    check_fail(__FILE__, __LINE__, "the exchange did not end in 10 rounds");
}

static void wait_for(int fd, short events)
{
    struct pollfd p = { .fd = fd, .events = events };
    int rc;
    do
        rc = poll(&p, 1, POLL_MS);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        check_fail(__FILE__, __LINE__, "timed out waiting for events %d on fd %d", events, fd);
    CHECK(rc == 1);
}

static void read_exact(rv_transport *t, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = rv_transport_read(t, buf + got, len - got);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0)
            check_fail(__FILE__, __LINE__, "EOF after %zu of %zu bytes", got, len);
        CHECK_INT_EQ(errno, EAGAIN);
        wait_for(t->fd, rv_transport_wait_events(t, POLLIN));
    }
}

static void write_all(rv_transport *t, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = rv_transport_write(t, buf + done, len - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        CHECK(n < 0);
        CHECK_INT_EQ(errno, EAGAIN);
        wait_for(t->fd, rv_transport_wait_events(t, POLLOUT));
    }
}

/* Bytes that do not repeat within a block, so a misplaced chunk shows. */
static char *pattern(size_t len, unsigned seed)
{
    char *p = malloc(len);
    CHECK(p);
    unsigned x = seed;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (char)(x >> 16);
    }
    return p;
}

static int fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* A DIGEST-MD5 pair as on plain TCP (no external SSF, tcp_min_ssf 56),
 * authenticated, with a security layer. */
static void digest_pair(rv_sasl **sv, rv_sasl **cl)
{
    rv_err serr = { 0 }, cerr = { 0 };
    *sv = server_new(0, TCP_MIN_SSF);
    *cl = client_new(0, TCP_MIN_SSF, &alice);
    int rc = exchange(*sv, *cl, NULL, &serr, &cerr);
    if (rc != EXCHANGE_OK)
        check_fail(__FILE__, __LINE__, "DIGEST-MD5 exchange: server: %s; client: %s",
                   serr.message ? serr.message : "-", cerr.message ? cerr.message : "-");
}

/* Wrap both ends of a socketpair: client on sv[0], server on sv[1]. */
static void wrap_pair(int fds[2], rv_sasl *sv, rv_sasl *cl, rv_transport **ct, rv_transport **st)
{
    rv_err err = { 0 };
    rv_transport *ci = rv_socket_transport_new(fds[0], 1, &err);
    rv_transport *si = rv_socket_transport_new(fds[1], 1, &err);
    CHECK(ci && si);
    *ct = rv_sasl_transport_new(ci, cl, &err);
    *st = rv_sasl_transport_new(si, sv, &err);
    if (!*ct || !*st)
        check_fail(__FILE__, __LINE__, "rv_sasl_transport_new: %s", err.message);
}

/* ---------------------------------------------------------------- the exchange */

static void test_scram_unix(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    rv_sasl *sv = server_new(UNIX_SSF, 0);
    char *list = rv_sasl_server_mechlist(sv, &serr);
    /* The config's order, comma-separated as libvirt's clients split it. */
    CHECK_STR_EQ(list, "SCRAM-SHA-256,DIGEST-MD5");
    free(list);
    CHECK(rv_sasl_username(sv) == NULL);

    rv_sasl *cl = client_new(UNIX_SSF, 0, &alice);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA-256", &serr, &cerr), EXCHANGE_OK);
    CHECK_STR_EQ(rv_sasl_username(sv), USER);
    CHECK_STR_EQ(rv_sasl_attempted_user(sv), USER);
    CHECK_INT_EQ(rv_sasl_ssf(sv), 0);
    CHECK_INT_EQ(rv_sasl_ssf(cl), 0);

    /* Done means done: no further START or STEP. */
    rv_sasl_data in = { "x", 1, 0 }, out;
    CHECK_INT_EQ(rv_sasl_server_step(sv, NULL, &in, &out, &serr), -1);
    CHECK_INT_EQ(serr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_HAS(serr.message, "already complete");

    /* No layer: nothing to wrap, and both parts handed over are freed. */
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    rv_err err = { 0 };
    rv_transport *inner = rv_socket_transport_new(fds[0], 1, &err);
    CHECK(inner);
    CHECK(rv_sasl_transport_new(inner, sv, &err) == NULL);
    CHECK_STR_HAS(err.message, "no SASL security layer");
    CHECK(!fd_is_open(fds[0]));
    close(fds[1]);
    rv_sasl_free(cl);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
    rv_err_clear(&err);
}

static void test_scram_wrong_password(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    const rv_sasl_credentials creds = { USER, "not-the-password", NULL, NULL };
    rv_sasl *sv = server_new(UNIX_SSF, 0);
    rv_sasl *cl = client_new(UNIX_SSF, 0, &creds);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA-256", &serr, &cerr), SERVER_FAILED);
    CHECK_INT_EQ(serr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_HAS(serr.message, "authentication failed");
    CHECK(rv_sasl_username(sv) == NULL);
    CHECK_STR_EQ(rv_sasl_attempted_user(sv), USER);
    /* A failed session takes nothing more. */
    rv_sasl_data in = { "x", 1, 0 }, out;
    CHECK_INT_EQ(rv_sasl_server_step(sv, NULL, &in, &out, &serr), -1);
    CHECK_STR_HAS(serr.message, "already failed");
    rv_sasl_free(sv);
    rv_sasl_free(cl);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
}

static void test_scram_unknown_user(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    const rv_sasl_credentials creds = { "mallory", PASSWORD, NULL, NULL };
    rv_sasl *sv = server_new(UNIX_SSF, 0);
    rv_sasl *cl = client_new(UNIX_SSF, 0, &creds);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA-256", &serr, &cerr), SERVER_FAILED);
    CHECK_INT_EQ(serr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_HAS(serr.message, "authentication failed");
    CHECK(rv_sasl_username(sv) == NULL);
    CHECK_STR_EQ(rv_sasl_attempted_user(sv), "mallory");
    rv_sasl_free(sv);
    rv_sasl_free(cl);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
}

typedef struct asked {
    int calls;
    int user_echo, pass_echo;
    char user_prompt[200], pass_prompt[200];
    const char *user_answer, *pass_answer;     /* NULL: decline */
} asked;

static char *ask(void *opaque, const char *prompt, int echo)
{
    asked *a = opaque;
    a->calls++;
    if (strncmp(prompt, "Username", 8) == 0) {
        a->user_echo = echo;
        snprintf(a->user_prompt, sizeof(a->user_prompt), "%s", prompt);
        return a->user_answer ? strdup(a->user_answer) : NULL;
    }
    a->pass_echo = echo;
    snprintf(a->pass_prompt, sizeof(a->pass_prompt), "%s", prompt);
    return a->pass_answer ? strdup(a->pass_answer) : NULL;
}

static void test_credentials_asked(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    asked a = { .user_echo = -1, .pass_echo = -1, .user_answer = USER, .pass_answer = PASSWORD };
    const rv_sasl_credentials creds = { NULL, NULL, ask, &a };
    rv_sasl *sv = server_new(UNIX_SSF, 0);
    rv_sasl *cl = client_new(UNIX_SSF, 0, &creds);
    CHECK_INT_EQ(exchange(sv, cl, NULL, &serr, &cerr), EXCHANGE_OK);
    CHECK_STR_EQ(rv_sasl_username(sv), USER);
    /* Each asked once, the password without echo. */
    CHECK_INT_EQ(a.calls, 2);
    CHECK_INT_EQ(a.user_echo, 1);
    CHECK_INT_EQ(a.pass_echo, 0);
    CHECK_STR_EQ(a.user_prompt, "Username for localhost");
    CHECK_STR_EQ(a.pass_prompt, "Password for alice@localhost");
    rv_sasl_free(sv);
    rv_sasl_free(cl);

    /* The user name given, the password declined: a client-side error
     * that names what is missing. */
    asked b = { .user_echo = -1, .pass_echo = -1 };
    const rv_sasl_credentials partial = { USER, NULL, ask, &b };
    sv = server_new(UNIX_SSF, 0);
    cl = client_new(UNIX_SSF, 0, &partial);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA-256", &serr, &cerr), CLIENT_FAILED);
    CHECK_INT_EQ(cerr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_HAS(cerr.message, "no SASL password was given");
    CHECK_INT_EQ(b.calls, 1);
    CHECK_INT_EQ(b.user_echo, -1);
    rv_sasl_free(sv);
    rv_sasl_free(cl);

    /* Nothing given and nobody to ask. */
    const rv_sasl_credentials none = { NULL, NULL, NULL, NULL };
    sv = server_new(UNIX_SSF, 0);
    cl = client_new(UNIX_SSF, 0, &none);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA-256", &serr, &cerr), CLIENT_FAILED);
    CHECK_STR_HAS(cerr.message, "no SASL user name was given");
    rv_sasl_free(sv);
    rv_sasl_free(cl);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
}

static void test_wanted_mechanism(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    rv_sasl *sv = server_new(UNIX_SSF, 0);
    rv_sasl *cl = client_new(UNIX_SSF, 0, &alice);
    CHECK_INT_EQ(exchange(sv, cl, "GSSAPI", &serr, &cerr), CLIENT_FAILED);
    CHECK_INT_EQ(cerr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_EQ(cerr.message, "the server does not offer SASL mechanism 'GSSAPI' "
                               "(it offers: SCRAM-SHA-256,DIGEST-MD5)");
    rv_sasl_free(cl);
    rv_sasl_free(sv);

    /* A name that is only a prefix of an offered one is not offered. */
    sv = server_new(UNIX_SSF, 0);
    cl = client_new(UNIX_SSF, 0, &alice);
    CHECK_INT_EQ(exchange(sv, cl, "SCRAM-SHA", &serr, &cerr), CLIENT_FAILED);
    CHECK_STR_HAS(cerr.message, "does not offer SASL mechanism 'SCRAM-SHA'");
    rv_sasl_free(cl);
    rv_sasl_free(sv);

    /* Names compare without case, as in auth=sasl.scram-sha-256. */
    sv = server_new(UNIX_SSF, 0);
    cl = client_new(UNIX_SSF, 0, &alice);
    CHECK_INT_EQ(exchange(sv, cl, "scram-sha-256", &serr, &cerr), EXCHANGE_OK);
    CHECK_STR_EQ(rv_sasl_username(sv), USER);
    rv_sasl_free(cl);
    rv_sasl_free(sv);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
}

/* On plain TCP with tcp_min_ssf, a mechanism without a layer is refused
 * by each side on its own. */
static void test_min_ssf(void)
{
    rv_err serr = { 0 }, cerr = { 0 };
    rv_sasl *sv = server_new(0, TCP_MIN_SSF);
    char *list = rv_sasl_server_mechlist(sv, &serr);
    CHECK_STR_EQ(list, "DIGEST-MD5");
    free(list);

    /* A client that does not care asks for SCRAM anyway. */
    rv_sasl *cl = client_new(0, 0, &alice);
    const char *mech;
    rv_sasl_data cout, sout;
    CHECK_INT_EQ(rv_sasl_client_start(cl, "SCRAM-SHA-256,DIGEST-MD5", "SCRAM-SHA-256", &mech,
                                      &cout, &cerr), RV_SASL_CONTINUE);
    CHECK_STR_EQ(mech, "SCRAM-SHA-256");
    CHECK_INT_EQ(rv_sasl_server_step(sv, mech, &cout, &sout, &serr), -1);
    CHECK_INT_EQ(serr.code, RV_ERR_AUTH_FAILED);
    CHECK_STR_HAS(serr.message, "SASL mechanism 'SCRAM-SHA-256' is not available");
    CHECK_STR_HAS(serr.message, "tcp_min_ssf");
    rv_sasl_free(cl);
    rv_sasl_free(sv);

    /* A client that needs a layer will not start SCRAM even if offered. */
    cl = client_new(0, TCP_MIN_SSF, &alice);
    CHECK_INT_EQ(rv_sasl_client_start(cl, "SCRAM-SHA-256,DIGEST-MD5", "SCRAM-SHA-256", &mech,
                                      &cout, &cerr), -1);
    CHECK_STR_HAS(cerr.message, "cannot use SASL mechanism 'SCRAM-SHA-256'");
    CHECK_STR_HAS(cerr.message, "security layer");
    rv_sasl_free(cl);

    /* ... and, offered nothing else, says none can be used. */
    cl = client_new(0, TCP_MIN_SSF, &alice);
    CHECK_INT_EQ(rv_sasl_client_start(cl, "SCRAM-SHA-256,PLAIN", NULL, &mech, &cout, &cerr), -1);
    CHECK_STR_HAS(cerr.message, "none of the server's SASL mechanisms (SCRAM-SHA-256,PLAIN)");
    rv_sasl_free(cl);
    rv_err_clear(&serr);
    rv_err_clear(&cerr);
}

static void test_misuse(void)
{
    rv_err err = { 0 };
    rv_sasl_data in = { "abc", 3, 0 }, out;

    rv_sasl *sv = server_new(UNIX_SSF, 0);
    CHECK_INT_EQ(rv_sasl_server_step(sv, NULL, &in, &out, &err), -1);
    CHECK_STR_HAS(err.message, "step came before the SASL start");
    CHECK(out.nil && out.data == NULL);
    rv_sasl_free(sv);

    sv = server_new(UNIX_SSF, 0);
    CHECK_INT_EQ(rv_sasl_server_step(sv, "SCRAM SHA\n256", &in, &out, &err), -1);
    CHECK_STR_HAS(err.message, "invalid SASL mechanism name");
    rv_sasl_free(sv);

    sv = server_new(UNIX_SSF, 0);
    CHECK_INT_EQ(rv_sasl_server_step(sv, "ABCDEFGHIJKLMNOPQRSTU", &in, &out, &err), -1);
    CHECK_STR_HAS(err.message, "invalid SASL mechanism name");
    rv_sasl_free(sv);

    /* More than a step may carry. */
    size_t big_len = 65537;
    char *big = calloc(1, big_len);
    CHECK(big);
    rv_sasl_data huge = { big, big_len, 0 };
    sv = server_new(UNIX_SSF, 0);
    CHECK_INT_EQ(rv_sasl_server_step(sv, "SCRAM-SHA-256", &huge, &out, &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_RPC);
    CHECK_STR_HAS(err.message, "over the limit of 65536");
    rv_sasl_free(sv);
    free(big);

    /* Garbage where SCRAM's client-first message belongs. */
    sv = server_new(UNIX_SSF, 0);
    rv_sasl_data junk = { "\x01\x02junk", 6, 0 };
    CHECK_INT_EQ(rv_sasl_server_step(sv, "SCRAM-SHA-256", &junk, &out, &err), -1);
    CHECK_STR_HAS(err.message, "authentication failed");
    rv_sasl_free(sv);

    rv_sasl *cl = client_new(UNIX_SSF, 0, &alice);
    CHECK_INT_EQ(rv_sasl_client_step(cl, &in, &out, &err), -1);
    CHECK_STR_HAS(err.message, "before the start");
    rv_sasl_free(cl);

    /* No layer before the exchange is done. */
    cl = client_new(UNIX_SSF, 0, &alice);
    const char *enc;
    size_t enc_len;
    CHECK_INT_EQ(rv_sasl_encode(cl, "abc", 3, &enc, &enc_len, &err), -1);
    CHECK_STR_HAS(err.message, "no SASL security layer");
    CHECK_UINT_EQ(rv_sasl_max_encode(cl), 0);
    rv_sasl_free(cl);
    rv_err_clear(&err);
}

static void test_addr(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lfd >= 0);
    struct sockaddr_in sin = { .sin_family = AF_INET };
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sin);
    CHECK(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
    CHECK(listen(lfd, 1) == 0);
    CHECK(getsockname(lfd, (struct sockaddr *)&sin, &len) == 0);
    int cfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(cfd >= 0 && connect(cfd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
    int afd = accept(lfd, NULL, NULL);
    CHECK(afd >= 0);

    char want[64];
    snprintf(want, sizeof(want), "127.0.0.1;%u", ntohs(sin.sin_port));
    char *local = rv_sasl_addr(afd, 0), *remote = rv_sasl_addr(cfd, 1);
    CHECK_STR_EQ(local, want);
    CHECK_STR_EQ(remote, want);
    free(local);
    free(remote);

    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    CHECK(rv_sasl_addr(fds[0], 0) == NULL);
    CHECK(rv_sasl_addr(fds[0], 1) == NULL);
    close(fds[0]);
    close(fds[1]);
    close(afd);
    close(cfd);
    close(lfd);
}

/* ---------------------------------------------------------------- the security layer */

/* DIGEST-MD5 on plain TCP: a layer of at least tcp_min_ssf, the bytes on
 * the wire are not the text, and what one side encodes the other decodes. */
static void test_digest_layer(void)
{
    rv_sasl *sv, *cl;
    digest_pair(&sv, &cl);
    CHECK(rv_sasl_ssf(sv) >= TCP_MIN_SSF);
    CHECK_INT_EQ(rv_sasl_ssf(cl), rv_sasl_ssf(sv));
    CHECK_STR_EQ(rv_sasl_username(sv), USER);
    CHECK(rv_sasl_max_encode(sv) > 0 && rv_sasl_max_encode(cl) > 0);

    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    rv_err err = { 0 };
    rv_transport *ct = rv_sasl_transport_new(rv_socket_transport_new(fds[0], 1, &err), cl, &err);
    CHECK(ct);
    CHECK_INT_EQ(ct->fd, fds[0]);

    /* The client's text, read raw on the server's end. */
    static const char marker[] = "remvirt plain text marker: CONNECT_OPEN test:///default";
    char text[40 * sizeof(marker)];
    for (size_t i = 0; i < 40; i++)
        memcpy(text + i * sizeof(marker), marker, sizeof(marker));
    write_all(ct, text, sizeof(text));
    char raw[3 * sizeof(text)];
    size_t raw_len = 0;
    int fl = fcntl(fds[1], F_GETFL);
    CHECK(fl >= 0 && fcntl(fds[1], F_SETFL, fl | O_NONBLOCK) == 0);
    for (;;) {
        ssize_t n = read(fds[1], raw + raw_len, sizeof(raw) - raw_len);
        if (n < 0) {
            CHECK_INT_EQ(errno, EAGAIN);
            break;
        }
        CHECK(n > 0);
        raw_len += (size_t)n;
    }
    CHECK(raw_len > sizeof(text));
    CHECK(memmem(raw, raw_len, "remvirt plain", 13) == NULL);
    CHECK(memmem(raw, raw_len, "CONNECT_OPEN", 12) == NULL);
    /* The server's session turns it back, fed in pieces as a socket may
     * deliver it. */
    char plain[sizeof(text)];
    size_t plain_len = 0;
    for (size_t off = 0; off < raw_len;) {
        size_t piece = raw_len - off < 7 ? raw_len - off : 7;
        const char *out;
        size_t out_len;
        if (rv_sasl_decode(sv, raw + off, piece, &out, &out_len, &err) < 0)
            check_fail(__FILE__, __LINE__, "decode: %s", err.message);
        CHECK(plain_len + out_len <= sizeof(plain));
        memcpy(plain + plain_len, out, out_len);
        plain_len += out_len;
        off += piece;
    }
    CHECK_MEM_EQ(plain, plain_len, text, sizeof(text));

    /* The server's end as a transport too: a reply comes back. */
    rv_transport *st = rv_sasl_transport_new(rv_socket_transport_new(fds[1], 1, &err), sv, &err);
    CHECK(st);
    static const char reply[] = "reply from the server";
    write_all(st, reply, sizeof(reply));
    char got[sizeof(reply)];
    read_exact(ct, got, sizeof(got));
    CHECK_MEM_EQ(got, sizeof(got), reply, sizeof(reply));

    /* A decoded block read in part: the rest is pending, and comes without
     * the fd becoming readable. */
    char *block = pattern(1000, 7);
    write_all(st, block, 1000);
    char small[10];
    read_exact(ct, small, sizeof(small));
    CHECK_UINT_EQ(rv_transport_pending(ct), 990);
    struct pollfd p = { .fd = ct->fd, .events = POLLIN };
    CHECK_INT_EQ(poll(&p, 1, 0), 0);
    char rest[990];
    CHECK_INT_EQ(rv_transport_read(ct, rest, sizeof(rest)), 990);
    CHECK_MEM_EQ(small, 10, block, 10);
    CHECK_MEM_EQ(rest, 990, block + 10, 990);
    CHECK_UINT_EQ(rv_transport_pending(ct), 0);
    free(block);

    /* Nothing there: EAGAIN, waiting for the fd to be readable. */
    CHECK_INT_EQ(rv_transport_read(ct, rest, sizeof(rest)), -1);
    CHECK_INT_EQ(errno, EAGAIN);
    CHECK_INT_EQ(rv_transport_wait_events(ct, POLLIN), POLLIN);

    /* The client goes away: the server reads EOF. */
    rv_transport_close(ct);
    CHECK_INT_EQ(rv_transport_read(st, rest, sizeof(rest)), 0);
    rv_transport_close(st);
    rv_err_clear(&err);
}

/* Data that is not the peer's encoding: the read fails (EIO) and keeps
 * failing, rather than handing on anything. */
static void test_garbage(void)
{
    rv_sasl *sv, *cl;
    digest_pair(&sv, &cl);
    rv_sasl_free(cl);
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    rv_err err = { 0 };
    rv_transport *st = rv_sasl_transport_new(rv_socket_transport_new(fds[1], 1, &err), sv, &err);
    CHECK(st);
    /* A block header saying 32 bytes, then 32 bytes of no cipher's output. */
    char junk[36] = { 0, 0, 0, 32 };
    memset(junk + 4, 'A', 32);
    CHECK(write(fds[0], junk, sizeof(junk)) == (ssize_t)sizeof(junk));
    char buf[64];
    CHECK_INT_EQ(rv_transport_read(st, buf, sizeof(buf)), -1);
    CHECK_INT_EQ(errno, EIO);
    CHECK_INT_EQ(rv_transport_read(st, buf, sizeof(buf)), -1);
    CHECK_INT_EQ(errno, EIO);
    rv_transport_close(st);
    close(fds[0]);

    /* A block header claiming more than we ever take. */
    digest_pair(&sv, &cl);
    rv_sasl_free(cl);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    st = rv_sasl_transport_new(rv_socket_transport_new(fds[1], 1, &err), sv, &err);
    CHECK(st);
    static const char huge_header[4] = { 0x7f, (char)0xff, (char)0xff, (char)0xff };
    CHECK(write(fds[0], huge_header, 4) == 4);
    CHECK_INT_EQ(rv_transport_read(st, buf, sizeof(buf)), -1);
    CHECK_INT_EQ(errno, EIO);
    rv_transport_close(st);
    close(fds[0]);
    rv_err_clear(&err);
}

/* Writes far larger than one block through small socket buffers, one
 * thread: every EAGAIN is retried as remvirtd retries (the rest of its
 * queue: the same bytes and more) or as the client does (the same
 * buffer), and what arrives is what was sent. */
static void test_large_writes(void)
{
    rv_sasl *sv, *cl;
    digest_pair(&sv, &cl);
    size_t block = rv_sasl_max_encode(cl);
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    int small = 4096;
    for (int i = 0; i < 2; i++) {
        CHECK(setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
        CHECK(setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
    }
    rv_transport *ct, *st;
    wrap_pair(fds, sv, cl, &ct, &st);

    size_t total = 3 * 1024 * 1024 + 12345;
    CHECK(total > 10 * block);
    char *src = pattern(total, 11), *dst = malloc(total);
    CHECK(dst);
    size_t sent = 0, got = 0, failed_len = 0;
    int eagains = 0, same_retries = 0, longer_retries = 0;
    while (got < total) {
        if (sent < total) {
            /* First tries offer a slice; a retry offers the same slice or
             * everything left. */
            size_t left = total - sent;
            size_t len = left < 200000 ? left : 200000;
            if (failed_len && eagains % 2) {
                len = failed_len;
                same_retries++;
            } else if (failed_len) {
                len = left;
                longer_retries += len > failed_len;
            }
            ssize_t n = rv_transport_write(ct, src + sent, len);
            if (n < 0) {
                CHECK_INT_EQ(errno, EAGAIN);
                CHECK_INT_EQ(rv_transport_wait_events(ct, POLLOUT), POLLOUT);
                eagains++;
                failed_len = len;
            } else {
                CHECK(n > 0 && (size_t)n <= len);
                sent += (size_t)n;
                failed_len = 0;
            }
        }
        while (got < total) {
            ssize_t n = rv_transport_read(st, dst + got, total - got);
            if (n < 0) {
                CHECK_INT_EQ(errno, EAGAIN);
                break;
            }
            CHECK(n > 0);
            got += (size_t)n;
        }
    }
    CHECK(eagains > 10);
    CHECK(same_retries > 0 && longer_retries > 0);
    CHECK_MEM_EQ(dst, total, src, total);

    /* A retry shorter than what the failed write took is refused. */
    sent = 0;
    ssize_t n;
    while ((n = rv_transport_write(st, src + sent, total - sent)) > 0)
        sent += (size_t)n;
    CHECK_INT_EQ(errno, EAGAIN);
    CHECK_INT_EQ(rv_transport_write(st, src + sent, 1), -1);
    CHECK_INT_EQ(errno, EINVAL);

    free(src);
    free(dst);
    rv_transport_close(ct);
    rv_transport_close(st);
}

/* One reader and one writer thread on each end at once. */
typedef struct flow {
    rv_transport *t;
    char *data;
    size_t len;
} flow;

static void *writer_thread(void *arg)
{
    flow *f = arg;
    write_all(f->t, f->data, f->len);
    return NULL;
}

static void *reader_thread(void *arg)
{
    flow *f = arg;
    read_exact(f->t, f->data, f->len);
    return NULL;
}

static void test_threads(void)
{
    rv_sasl *sv, *cl;
    digest_pair(&sv, &cl);
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    int small = 16384;
    for (int i = 0; i < 2; i++)
        CHECK(setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) == 0);
    rv_transport *ct, *st;
    wrap_pair(fds, sv, cl, &ct, &st);

    size_t total = 1024 * 1024 + 777;
    char *up = pattern(total, 21), *down = pattern(total, 22);
    flow fl[4] = {
        { ct, up, total },
        { st, malloc(total), total },
        { st, down, total },
        { ct, malloc(total), total },
    };
    CHECK(fl[1].data && fl[3].data);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, i % 2 ? reader_thread : writer_thread, &fl[i]) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(th[i], NULL) == 0);
    CHECK_MEM_EQ(fl[1].data, total, up, total);
    CHECK_MEM_EQ(fl[3].data, total, down, total);
    for (int i = 0; i < 4; i++)
        free(fl[i].data);
    rv_transport_close(ct);
    rv_transport_close(st);
}

int main(void)
{
    if (!getenv("SASL_CONF_PATH")) {
        fprintf(stderr, "test-sasl: run it through test-sasl.sh (needs SASL_CONF_PATH)\n");
        return 1;
    }
    rv_err err = { 0 };
    if (rv_sasl_server_init(&err) < 0 || rv_sasl_client_init(&err) < 0)
        check_fail(__FILE__, __LINE__, "init: %s", err.message);

    test_scram_unix();
    test_scram_wrong_password();
    test_scram_unknown_user();
    test_credentials_asked();
    test_wanted_mechanism();
    test_min_ssf();
    test_misuse();
    test_addr();
    test_digest_layer();
    test_garbage();
    test_large_writes();
    test_threads();
    printf("test-sasl: all passed\n");
    return 0;
}
