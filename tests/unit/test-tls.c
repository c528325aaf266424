/* The TLS transport and the x509 policy, over socketpairs, with the PKI
 * that tests/tools/make-pki.sh makes (tests/unit/test-tls.sh runs both:
 * test-tls PKI-DIR).  The server side is driven as remvirtd's loop drives
 * it: non-blocking handshake steps and poll on wait_events; the client
 * connects from a thread.  Every refusal is checked for the words that
 * name its cause. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/glob.h"
#include "auth/x509.h"
#include "transport/tls.h"
#include "tests/unit/check.h"

/* Bound on every wait, generous for valgrind. */
#define POLL_MS 60000

static const char *pki;

static const char *const dn_client1[] = { "C=GB,O=remvirt,CN=client1", NULL };
static const char *const dn_client_glob[] = { "C=GB,O=remvirt,CN=client*", NULL };
static const char *const dn_none[] = { NULL };

/* ---------------------------------------------------------------- helpers */

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

static void set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    CHECK(fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0);
}

/* Blocking or not: EAGAIN waits for what the transport asks for. */
static void read_exact(rv_transport *t, unsigned char *buf, size_t len)
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

static void write_all(rv_transport *t, const unsigned char *buf, size_t len)
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

/* Read until EOF, which must come with nothing before it. */
static void expect_eof(rv_transport *t)
{
    unsigned char b;
    for (;;) {
        ssize_t n = rv_transport_read(t, &b, 1);
        if (n == 0)
            return;
        CHECK(n < 0);
        CHECK_INT_EQ(errno, EAGAIN);
        wait_for(t->fd, rv_transport_wait_events(t, POLLIN));
    }
}

static unsigned char *pattern(size_t len, unsigned seed)
{
    unsigned char *p = malloc(len);
    CHECK(p != NULL);
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (unsigned char)(x >> 16);
    }
    return p;
}

typedef struct files_buf {
    char ca[512], cert[512], key[512], crl[512];
    rv_tls_files files;
} files_buf;

static const rv_tls_files *server_files(files_buf *b, const char *set)
{
    snprintf(b->ca, sizeof(b->ca), "%s/%s/cacert.pem", pki, set);
    snprintf(b->cert, sizeof(b->cert), "%s/%s/servercert.pem", pki, set);
    snprintf(b->key, sizeof(b->key), "%s/%s/serverkey.pem", pki, set);
    snprintf(b->crl, sizeof(b->crl), "%s/%s/cacrl.pem", pki, set);
    b->files = (rv_tls_files){ b->ca, b->cert, b->key, b->crl };
    return &b->files;
}

static rv_tls_context *server_ctx(const char *set, int verify, const char *const *dns)
{
    files_buf b;
    rv_err err = { 0 };
    rv_tls_server_policy policy = { NULL, verify, dns, 0 };
    rv_tls_context *ctx = rv_tls_server_context_new(server_files(&b, set), &policy, &err);
    if (!ctx)
        check_fail(__FILE__, __LINE__, "server context for %s: %s", set, err.message);
    return ctx;
}

static rv_tls_context *client_ctx_err(const char *set, int verify, int sanity, rv_err *err)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", pki, set);
    rv_tls_files files;
    CHECK_INT_EQ(rv_tls_client_files(dir, &files, err), 0);
    rv_tls_client_policy policy = { NULL, verify, sanity };
    rv_tls_context *ctx = rv_tls_client_context_new(&files, &policy, err);
    rv_tls_files_free(&files);
    return ctx;
}

static rv_tls_context *client_ctx(const char *set, int verify, int sanity)
{
    rv_err err = { 0 };
    rv_tls_context *ctx = client_ctx_err(set, verify, sanity, &err);
    if (!ctx)
        check_fail(__FILE__, __LINE__, "client context for %s: %s", set, err.message);
    return ctx;
}

/* ---------------------------------------------------------------- one connection */

typedef void (*side_fn)(rv_transport *t, void *arg);

typedef struct pair {
    /* in */
    rv_tls_context *server;
    rv_tls_context *client;
    const char *hostname;
    side_fn server_after, client_after;
    void *arg;
    /* out */
    int server_ok, client_ok;
    rv_err server_err, client_err;
    char *peer_dn;              /* what the server saw */
    /* the client thread's */
    int client_fd;
} pair;

static void *client_main(void *p)
{
    pair *pr = p;
    rv_transport *t = rv_tls_client_connect(pr->client, pr->client_fd, pr->hostname,
                                            &pr->client_err);
    if (!t)
        return NULL;
    pr->client_ok = 1;
    if (pr->client_after)
        pr->client_after(t, pr->arg);
    rv_transport_close(t);
    return NULL;
}

/* The server's part as remvirtd's loop plays it. */
static rv_transport *server_accept(pair *pr, int fd)
{
    set_nonblocking(fd);
    rv_transport *t = rv_tls_server_new(pr->server, fd, &pr->server_err);
    CHECK(t != NULL);
    /* Before the handshake it waits for the ClientHello. */
    CHECK_INT_EQ(rv_transport_wait_events(t, POLLIN), POLLIN);
    CHECK_UINT_EQ(rv_transport_pending(t), 0);
    for (;;) {
        int rc = rv_tls_server_handshake(t, &pr->server_err);
        if (rc == 1)
            break;
        if (rc < 0) {
            CHECK(rv_err_is_set(&pr->server_err));
            CHECK(rv_tls_peer_dn(t) == NULL);
            /* A failed handshake stays failed. */
            rv_err again = { 0 };
            CHECK_INT_EQ(rv_tls_server_handshake(t, &again), -1);
            rv_err_clear(&again);
            rv_transport_close(t);
            return NULL;
        }
        CHECK_INT_EQ(rc, 0);
        wait_for(t->fd, rv_transport_wait_events(t, POLLIN));
    }
    CHECK_INT_EQ(rv_tls_server_handshake(t, &pr->server_err), 1);
    pr->server_ok = 1;
    if (rv_tls_peer_dn(t))
        pr->peer_dn = strdup(rv_tls_peer_dn(t));
    /* The byte 1 is the caller's to send.  A client that refused us may
     * be gone already, so a failure here is not the test's business. */
    unsigned char one = 1;
    for (;;) {
        ssize_t n = rv_transport_write(t, &one, 1);
        if (n == 1 || (n < 0 && errno != EAGAIN))
            break;
        wait_for(t->fd, rv_transport_wait_events(t, POLLOUT));
    }
    return t;
}

static void run_pair(pair *pr)
{
    int sv[2];
    CHECK_INT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pr->client_fd = sv[1];
    pthread_t th;
    CHECK_INT_EQ(pthread_create(&th, NULL, client_main, pr), 0);
    rv_transport *t = server_accept(pr, sv[0]);
    if (t && pr->server_after)
        pr->server_after(t, pr->arg);
    CHECK_INT_EQ(pthread_join(th, NULL), 0);
    rv_transport_close(t);
}

static void pair_done(pair *pr)
{
    rv_err_clear(&pr->server_err);
    rv_err_clear(&pr->client_err);
    free(pr->peer_dn);
    pr->peer_dn = NULL;
}

/* Both sides accept. */
static void expect_ok(rv_tls_context *s, rv_tls_context *c, const char *hostname,
                      const char *expected_dn)
{
    pair pr = { .server = s, .client = c, .hostname = hostname };
    run_pair(&pr);
    if (!pr.server_ok || !pr.client_ok)
        check_fail(__FILE__, __LINE__, "host '%s': server %s, client %s", hostname ? hostname : "",
                   pr.server_ok ? "ok" : pr.server_err.message,
                   pr.client_ok ? "ok" : pr.client_err.message);
    if (expected_dn)
        CHECK_STR_EQ(pr.peer_dn, expected_dn);
    else
        CHECK(pr.peer_dn == NULL);
    pair_done(&pr);
}

/* The server refuses the client: its error names the cause, and the
 * client hears only that it was refused. */
static void expect_server_refuses(rv_tls_context *s, rv_tls_context *c, const char *cause)
{
    pair pr = { .server = s, .client = c, .hostname = "localhost" };
    run_pair(&pr);
    CHECK(!pr.server_ok);
    CHECK_STR_HAS(pr.server_err.message, cause);
    CHECK_INT_EQ(pr.server_err.code, RV_ERR_AUTH_FAILED);
    CHECK_INT_EQ(pr.server_err.domain, RV_FROM_RPC);
    CHECK(!pr.client_ok);
    CHECK_STR_HAS(pr.client_err.message, "the server refused our certificate");
    CHECK_INT_EQ(pr.client_err.code, RV_ERR_AUTH_FAILED);
    pair_done(&pr);
}

/* The client refuses the server and says why. */
static void expect_client_refuses(rv_tls_context *s, rv_tls_context *c, const char *hostname,
                                  const char *cause)
{
    pair pr = { .server = s, .client = c, .hostname = hostname };
    run_pair(&pr);
    CHECK(!pr.client_ok);
    CHECK_STR_HAS(pr.client_err.message, cause);
    CHECK_INT_EQ(pr.client_err.code, RV_ERR_AUTH_FAILED);
    CHECK_INT_EQ(pr.client_err.domain, RV_FROM_RPC);
    pair_done(&pr);
}

/* ---------------------------------------------------------------- data */

#define SMALL_LEN 10000             /* one TLS record */
#define BIG_LEN (1024 * 1024)

typedef struct good_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int server_blocked;             /* the server's socket is full */
    unsigned char *small, *big;
} good_state;

static void client_good(rv_transport *t, void *arg)
{
    good_state *g = arg;
    write_all(t, g->small, SMALL_LEN);
    /* Read nothing until the server has met a full socket. */
    pthread_mutex_lock(&g->lock);
    while (!g->server_blocked)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    unsigned char *in = malloc(BIG_LEN);
    CHECK(in != NULL);
    read_exact(t, in, BIG_LEN);
    CHECK_MEM_EQ(in, BIG_LEN, g->big, BIG_LEN);
    free(in);
    write_all(t, (const unsigned char *)"done", 4);
    /* close: gnutls_bye, so the server reads a clean EOF */
}

static void server_good(rv_transport *t, void *arg)
{
    good_state *g = arg;
    unsigned char in[SMALL_LEN];
    ssize_t n;

    /* One record arrives whole; a short read leaves the rest decoded in
     * gnutls, where poll cannot see it: only pending() tells. */
    for (;;) {
        n = rv_transport_read(t, in, 100);
        if (n > 0)
            break;
        CHECK(n < 0 && errno == EAGAIN);
        wait_for(t->fd, rv_transport_wait_events(t, POLLIN));
    }
    CHECK_INT_EQ(n, 100);
    CHECK_UINT_EQ(rv_transport_pending(t), SMALL_LEN - 100);
    struct pollfd p = { .fd = t->fd, .events = POLLIN };
    CHECK_INT_EQ(poll(&p, 1, 0), 0);
    size_t got = 100;
    while (rv_transport_pending(t) > 0) {
        n = rv_transport_read(t, in + got, 100);
        CHECK(n > 0);
        got += (size_t)n;
    }
    CHECK_UINT_EQ(got, SMALL_LEN);
    CHECK_MEM_EQ(in, SMALL_LEN, g->small, SMALL_LEN);
    n = rv_transport_read(t, in, 1);
    CHECK(n < 0 && errno == EAGAIN);

    /* 1 MiB through a small socket buffer, 1000 bytes at a time; after
     * EAGAIN the retry offers everything left (the buffer grew), and the
     * write takes exactly what was pending. */
    int small_buf = 8192;
    CHECK_INT_EQ(setsockopt(t->fd, SOL_SOCKET, SO_SNDBUF, &small_buf, sizeof(small_buf)), 0);
    size_t off = 0, pending_len = 0;
    int eagains = 0;
    while (off < BIG_LEN) {
        size_t len = pending_len ? BIG_LEN - off : (BIG_LEN - off < 1000 ? BIG_LEN - off : 1000);
        n = rv_transport_write(t, g->big + off, len);
        if (n > 0) {
            if (pending_len)
                CHECK_UINT_EQ(n, pending_len);
            pending_len = 0;
            off += (size_t)n;
            continue;
        }
        CHECK(n < 0);
        CHECK_INT_EQ(errno, EAGAIN);
        if (eagains++ == 0) {
            /* A retry must not offer less than was pending. */
            CHECK_INT_EQ(rv_transport_write(t, g->big + off, len - 1), -1);
            CHECK_INT_EQ(errno, EINVAL);
            pthread_mutex_lock(&g->lock);
            g->server_blocked = 1;
            pthread_cond_signal(&g->cond);
            pthread_mutex_unlock(&g->lock);
        }
        pending_len = pending_len ? pending_len : len;
        wait_for(t->fd, rv_transport_wait_events(t, POLLOUT));
    }
    CHECK(eagains > 0);

    read_exact(t, in, 4);
    CHECK_MEM_EQ(in, 4, "done", 4);
    expect_eof(t);
}

static void test_good_path(void)
{
    rv_tls_context *s = server_ctx("server", 1, dn_client1);
    rv_tls_context *c = client_ctx("client", 1, 1);
    good_state g = { .small = pattern(SMALL_LEN, 1), .big = pattern(BIG_LEN, 2) };
    pthread_mutex_init(&g.lock, NULL);
    pthread_cond_init(&g.cond, NULL);
    pair pr = { .server = s, .client = c, .hostname = "localhost",
                .server_after = server_good, .client_after = client_good, .arg = &g };
    run_pair(&pr);
    if (!pr.server_ok || !pr.client_ok)
        check_fail(__FILE__, __LINE__, "server: %s; client: %s", pr.server_err.message,
                   pr.client_err.message);
    CHECK_STR_EQ(pr.peer_dn, "C=GB,O=remvirt,CN=client1");
    pair_done(&pr);
    pthread_mutex_destroy(&g.lock);
    pthread_cond_destroy(&g.cond);
    free(g.small);
    free(g.big);
    rv_tls_context_free(c);
    rv_tls_context_free(s);
}

/* A peer that drops the connection without a TLS close_notify is still
 * an EOF (0), and closing a transport whose peer is gone raises no
 * SIGPIPE. */
static void client_drop(rv_transport *t, void *arg)
{
    (void)arg;
    CHECK_INT_EQ(shutdown(t->fd, SHUT_RDWR), 0);
}

static void server_sees_eof(rv_transport *t, void *arg)
{
    (void)arg;
    expect_eof(t);
}

static void test_unclean_eof(void)
{
    rv_tls_context *s = server_ctx("server", 1, NULL);
    rv_tls_context *c = client_ctx("client", 1, 1);
    pair pr = { .server = s, .client = c, .hostname = "localhost",
                .server_after = server_sees_eof, .client_after = client_drop };
    run_pair(&pr);
    CHECK(pr.server_ok && pr.client_ok);
    pair_done(&pr);
    rv_tls_context_free(c);
    rv_tls_context_free(s);
}

/* One client thread writes while another reads, on one non-blocking
 * transport; the server echoes through a small socket buffer.  If a
 * blocked writer held up the reader (or the reverse), this would stall
 * and time out. */
#define ECHO_LEN (2 * 1024 * 1024)

typedef struct echo_state {
    unsigned char *out;
} echo_state;

static void *echo_writer(void *p)
{
    rv_transport *t = p;
    unsigned char *out = pattern(ECHO_LEN, 3);
    for (size_t off = 0; off < ECHO_LEN; off += 50000)
        write_all(t, out + off, ECHO_LEN - off < 50000 ? ECHO_LEN - off : 50000);
    free(out);
    return NULL;
}

static void client_echo(rv_transport *t, void *arg)
{
    echo_state *e = arg;
    set_nonblocking(t->fd);
    pthread_t writer;
    CHECK_INT_EQ(pthread_create(&writer, NULL, echo_writer, t), 0);
    unsigned char *in = malloc(ECHO_LEN);
    CHECK(in != NULL);
    read_exact(t, in, ECHO_LEN);
    CHECK_INT_EQ(pthread_join(writer, NULL), 0);
    CHECK_MEM_EQ(in, ECHO_LEN, e->out, ECHO_LEN);
    free(in);
}

static void server_echo(rv_transport *t, void *arg)
{
    (void)arg;
    int small_buf = 8192;
    CHECK_INT_EQ(setsockopt(t->fd, SOL_SOCKET, SO_SNDBUF, &small_buf, sizeof(small_buf)), 0);
    unsigned char buf[20000];
    size_t have = 0, off = 0, echoed = 0;
    while (echoed < ECHO_LEN) {
        int progress = 0;
        if (have == 0) {
            ssize_t n = rv_transport_read(t, buf, sizeof(buf));
            if (n > 0) {
                have = (size_t)n;
                off = 0;
                progress = 1;
            } else {
                CHECK(n < 0 && errno == EAGAIN);
            }
        }
        if (have > 0) {
            ssize_t n = rv_transport_write(t, buf + off, have);
            if (n > 0) {
                off += (size_t)n;
                have -= (size_t)n;
                echoed += (size_t)n;
                progress = 1;
            } else {
                CHECK(n < 0 && errno == EAGAIN);
            }
        }
        if (!progress)
            wait_for(t->fd, rv_transport_wait_events(t, have ? POLLOUT : POLLIN));
    }
    expect_eof(t);
}

static void test_concurrent_read_write(void)
{
    rv_tls_context *s = server_ctx("server", 1, NULL);
    rv_tls_context *c = client_ctx("client", 1, 1);
    echo_state e = { .out = pattern(ECHO_LEN, 3) };
    pair pr = { .server = s, .client = c, .hostname = "localhost",
                .server_after = server_echo, .client_after = client_echo, .arg = &e };
    run_pair(&pr);
    CHECK(pr.server_ok && pr.client_ok);
    pair_done(&pr);
    free(e.out);
    rv_tls_context_free(c);
    rv_tls_context_free(s);
}

/* ---------------------------------------------------------------- the server's verdicts */

static void test_server_verifies_clients(void)
{
    rv_tls_context *s = server_ctx("server", 1, dn_client1);
    rv_tls_context *c;

    c = client_ctx("client-nocert", 1, 1);
    expect_server_refuses(s, c, "the client sent no certificate");
    rv_tls_context_free(c);

    /* Client sets whose own certificate is bad skip their sanity check,
     * so that the server gets to judge them. */
    c = client_ctx("client-foreign", 1, 0);
    expect_server_refuses(s, c, "the client's certificate is not signed by a known CA");
    rv_tls_context_free(c);

    c = client_ctx("client-expired", 1, 0);
    expect_server_refuses(s, c, "the client's certificate has expired");
    rv_tls_context_free(c);

    c = client_ctx("client-notyet", 1, 0);
    expect_server_refuses(s, c, "the client's certificate is not yet active");
    rv_tls_context_free(c);

    c = client_ctx("client-revoked", 1, 1);
    expect_server_refuses(s, c, "the client's certificate was revoked by its CA");
    rv_tls_context_free(c);

    c = client_ctx("client-intruder", 1, 1);
    expect_server_refuses(s, c,
                          "client DN 'C=GB,O=remvirt,CN=intruder' is not in tls_allowed_dn_list");
    rv_tls_context_free(c);
    rv_tls_context_free(s);

    /* A glob admits client1 and still not the intruder; an empty list
     * admits nobody. */
    s = server_ctx("server", 1, dn_client_glob);
    c = client_ctx("client", 1, 1);
    expect_ok(s, c, "localhost", "C=GB,O=remvirt,CN=client1");
    rv_tls_context_free(c);
    c = client_ctx("client-intruder", 1, 1);
    expect_server_refuses(s, c, "'C=GB,O=remvirt,CN=intruder' is not in tls_allowed_dn_list");
    rv_tls_context_free(c);
    rv_tls_context_free(s);

    s = server_ctx("server", 1, dn_none);
    c = client_ctx("client", 1, 1);
    expect_server_refuses(s, c, "'C=GB,O=remvirt,CN=client1' is not in tls_allowed_dn_list");
    rv_tls_context_free(c);
    rv_tls_context_free(s);

    /* No DN list: any client the CA signed. */
    s = server_ctx("server", 1, NULL);
    c = client_ctx("client-intruder", 1, 1);
    expect_ok(s, c, "localhost", "C=GB,O=remvirt,CN=intruder");
    rv_tls_context_free(c);
    rv_tls_context_free(s);
}

static void test_server_no_verify(void)
{
    /* tls_no_verify_certificate: anything goes, even with a DN list, and
     * no DN is reported as verified. */
    rv_tls_context *s = server_ctx("server", 0, dn_client1);
    static const char *const sets[] = {
        "client-nocert", "client-foreign", "client-expired", "client-revoked", "client-intruder",
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        rv_tls_context *c = client_ctx(sets[i], 1, 0);
        expect_ok(s, c, "localhost", NULL);
        rv_tls_context_free(c);
    }
    rv_tls_context_free(s);
}

/* ---------------------------------------------------------------- the client's verdicts */

static void test_client_verifies_server(void)
{
    rv_tls_context *c = client_ctx("client", 1, 1);
    rv_tls_context *s = server_ctx("server", 1, NULL);
    /* The name by SAN: DNS, IPv4, IPv6 (bare or as a URI writes it). */
    expect_ok(s, c, "localhost", "C=GB,O=remvirt,CN=client1");
    expect_ok(s, c, "127.0.0.1", "C=GB,O=remvirt,CN=client1");
    expect_ok(s, c, "::1", "C=GB,O=remvirt,CN=client1");
    expect_ok(s, c, "[::1]", "C=GB,O=remvirt,CN=client1");
    expect_client_refuses(s, c, "127.0.0.2",
                          "the server's certificate does not match the host name '127.0.0.2'");
    expect_client_refuses(s, c, "otherhost.example",
                          "the server's certificate does not match the host name 'otherhost.example'");
    rv_tls_context_free(s);

    s = server_ctx("server-otherhost", 1, NULL);
    expect_client_refuses(s, c, "localhost",
                          "the server's certificate does not match the host name 'localhost'");
    expect_ok(s, c, "otherhost.example", "C=GB,O=remvirt,CN=client1");
    rv_tls_context_free(s);

    char expected[4096];
    snprintf(expected, sizeof(expected),
             "the server's certificate is signed by an unknown CA (check the CA file %s/client/cacert.pem)",
             pki);
    s = server_ctx("server-foreign", 1, NULL);
    expect_client_refuses(s, c, "localhost", expected);
    rv_tls_context_free(s);

    s = server_ctx("server-expired", 1, NULL);
    expect_client_refuses(s, c, "localhost", "the server's certificate has expired");
    rv_tls_context_free(s);

    s = server_ctx("server-notyet", 1, NULL);
    expect_client_refuses(s, c, "localhost", "the server's certificate is not yet active");
    rv_tls_context_free(s);
    rv_tls_context_free(c);

    /* A client that trusts another CA refuses every server here. */
    c = client_ctx("client-foreignca", 1, 1);
    s = server_ctx("server", 1, NULL);
    expect_client_refuses(s, c, "localhost", "is signed by an unknown CA");
    rv_tls_context_free(c);

    /* no_verify: the client skips its checks of the server (the server
     * still checks the client: client-foreignca's chain reaches our CA). */
    c = client_ctx("client-foreignca", 0, 1);
    expect_ok(s, c, "localhost", "C=GB,O=remvirt,CN=client1");
    rv_tls_context_free(c);
    rv_tls_context_free(s);

    c = client_ctx("client", 0, 1);
    static const char *const sets[] = {
        "server-foreign", "server-expired", "server-notyet", "server-otherhost",
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        s = server_ctx(sets[i], 1, NULL);
        expect_ok(s, c, "localhost", "C=GB,O=remvirt,CN=client1");
        rv_tls_context_free(s);
    }
    rv_tls_context_free(c);
}

/* ---------------------------------------------------------------- own certificates */

static void expect_server_ctx_fails(const rv_tls_files *files, int sanity, const char *cause)
{
    rv_err err = { 0 };
    rv_tls_server_policy policy = { NULL, 1, NULL, sanity };
    rv_tls_context *ctx = rv_tls_server_context_new(files, &policy, &err);
    if (ctx)
        check_fail(__FILE__, __LINE__, "a server context with %s was made; expected '%s'",
                   files->cert_file, cause);
    CHECK_STR_HAS(err.message, cause);
    CHECK_INT_EQ(err.domain, RV_FROM_RPC);
    rv_err_clear(&err);
}

static void expect_server_ctx_ok(const rv_tls_files *files, int sanity)
{
    rv_err err = { 0 };
    rv_tls_server_policy policy = { NULL, 1, NULL, sanity };
    rv_tls_context *ctx = rv_tls_server_context_new(files, &policy, &err);
    if (!ctx)
        check_fail(__FILE__, __LINE__, "server context with %s: %s", files->cert_file,
                   err.message);
    rv_tls_context_free(ctx);
}

static void test_server_sanity(void)
{
    files_buf b;
    char cause[4096];

    expect_server_ctx_ok(server_files(&b, "server"), 1);

    server_files(&b, "server-expired");
    snprintf(cause, sizeof(cause), "the server's certificate %s has expired (on 2021-01-01",
             b.cert);
    expect_server_ctx_fails(&b.files, 1, cause);
    expect_server_ctx_ok(&b.files, 0);

    server_files(&b, "server-notyet");
    snprintf(cause, sizeof(cause), "the server's certificate %s is not yet active (valid from 2045",
             b.cert);
    expect_server_ctx_fails(&b.files, 1, cause);
    expect_server_ctx_ok(&b.files, 0);

    server_files(&b, "server-purpose");
    snprintf(cause, sizeof(cause), "the server's certificate %s is not meant for a TLS server",
             b.cert);
    expect_server_ctx_fails(&b.files, 1, cause);
    expect_server_ctx_ok(&b.files, 0);

    server_files(&b, "server-foreign");
    snprintf(cause, sizeof(cause),
             "the server's certificate %s is signed by an unknown CA (check the CA file %s)",
             b.cert, b.ca);
    expect_server_ctx_fails(&b.files, 1, cause);
    expect_server_ctx_ok(&b.files, 0);

    /* Files: missing, a key of another certificate, a CA that is not one. */
    server_files(&b, "server");
    rv_tls_files f = b.files;
    f.ca_file = "/nonexistent/cacert.pem";
    expect_server_ctx_fails(&f, 1, "cannot read the CA certificate file /nonexistent/cacert.pem: "
                                   "No such file or directory");
    f = b.files;
    f.key_file = "/nonexistent/serverkey.pem";
    expect_server_ctx_fails(&f, 0, "cannot read the private key file /nonexistent/serverkey.pem");
    f = b.files;
    f.cert_file = NULL;
    expect_server_ctx_fails(&f, 0, "no certificate file given");
    char other_key[512];
    snprintf(other_key, sizeof(other_key), "%s/client/clientkey.pem", pki);
    f = b.files;
    f.key_file = other_key;
    snprintf(cause, sizeof(cause), "the private key %s does not match the certificate %s",
             other_key, b.cert);
    expect_server_ctx_fails(&f, 1, cause);
    /* Without the sanity check gnutls still refuses the pair. */
    expect_server_ctx_fails(&f, 0, "cannot use the certificate");
    f = b.files;
    f.ca_file = b.cert;
    expect_server_ctx_fails(&f, 1, "which is not a CA certificate (basicConstraints CA:FALSE)");
    f = b.files;
    f.ca_file = b.key;
    expect_server_ctx_fails(&f, 1, "holds no usable certificate");
    /* A CRL is optional: a missing file means none. */
    f = b.files;
    f.crl_file = "/nonexistent/cacrl.pem";
    expect_server_ctx_ok(&f, 1);
    f.crl_file = NULL;
    expect_server_ctx_ok(&f, 1);

    rv_err err = { 0 };
    rv_tls_server_policy bad_priority = { "NORMAL:+NO-SUCH-THING", 1, NULL, 1 };
    CHECK(rv_tls_server_context_new(&b.files, &bad_priority, &err) == NULL);
    CHECK_STR_HAS(err.message, "invalid TLS priority 'NORMAL:+NO-SUCH-THING'");
    rv_err_clear(&err);
}

static void test_client_sanity(void)
{
    rv_err err = { 0 };
    char cause[4096];

    CHECK(client_ctx_err("client-foreign", 1, 1, &err) == NULL);
    snprintf(cause, sizeof(cause), "the client's certificate %s/client-foreign/clientcert.pem "
             "is not signed by a known CA", pki);
    CHECK_STR_HAS(err.message, cause);
    rv_err_clear(&err);

    CHECK(client_ctx_err("client-expired", 1, 1, &err) == NULL);
    CHECK_STR_HAS(err.message, "client-expired/clientcert.pem has expired");
    rv_err_clear(&err);

    /* A client certificate used by a server is the wrong purpose. */
    files_buf b;
    server_files(&b, "server");
    char cert[512], key[512];
    snprintf(cert, sizeof(cert), "%s/client/clientcert.pem", pki);
    snprintf(key, sizeof(key), "%s/client/clientkey.pem", pki);
    rv_tls_files f = { b.ca, cert, key, NULL };
    expect_server_ctx_fails(&f, 1, "is not meant for a TLS server");

    /* Our own certificate in the CRL we are given. */
    char revoked_cert[512], revoked_key[512];
    snprintf(revoked_cert, sizeof(revoked_cert), "%s/client-revoked/clientcert.pem", pki);
    snprintf(revoked_key, sizeof(revoked_key), "%s/client-revoked/clientkey.pem", pki);
    rv_tls_files revoked = { b.ca, revoked_cert, revoked_key, b.crl };
    rv_tls_client_policy sane = { NULL, 1, 1 };
    CHECK(rv_tls_client_context_new(&revoked, &sane, &err) == NULL);
    CHECK_STR_HAS(err.message, "client-revoked/clientcert.pem was revoked by its CA");
    rv_err_clear(&err);

    /* No certificate at all is fine for a client; half of one is not. */
    rv_tls_context *c = client_ctx_err("client-nocert", 1, 1, &err);
    CHECK(c != NULL);
    rv_tls_context_free(c);
    rv_tls_files half = { b.ca, cert, "/nonexistent/clientkey.pem", NULL };
    rv_tls_client_policy policy = { NULL, 1, 1 };
    CHECK(rv_tls_client_context_new(&half, &policy, &err) == NULL);
    CHECK_STR_HAS(err.message, "found the certificate");
    CHECK_STR_HAS(err.message, "but not its private key /nonexistent/clientkey.pem");
    rv_err_clear(&err);

    /* Contexts are for one side. */
    c = client_ctx("client", 1, 1);
    int sv[2];
    CHECK_INT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK(rv_tls_server_new(c, sv[0], &err) == NULL);
    CHECK_STR_HAS(err.message, "a TLS client context used for a server");
    rv_err_clear(&err);
    close(sv[1]);
    rv_tls_context_free(c);
}

/* ---------------------------------------------------------------- small pieces */

static void test_client_files(void)
{
    rv_err err = { 0 };
    rv_tls_files f;
    CHECK_INT_EQ(rv_tls_client_files("/some/dir", &f, &err), 0);
    CHECK_STR_EQ(f.ca_file, "/some/dir/cacert.pem");
    CHECK_STR_EQ(f.cert_file, "/some/dir/clientcert.pem");
    CHECK_STR_EQ(f.key_file, "/some/dir/clientkey.pem");
    CHECK_STR_EQ(f.crl_file, "/some/dir/cacrl.pem");
    rv_tls_files_free(&f);

    if (geteuid() == 0) {
        CHECK_INT_EQ(rv_tls_client_files(NULL, &f, &err), 0);
        CHECK_STR_EQ(f.ca_file, "/etc/pki/CA/cacert.pem");
        CHECK_STR_EQ(f.cert_file, "/etc/pki/libvirt/clientcert.pem");
        CHECK_STR_EQ(f.key_file, "/etc/pki/libvirt/private/clientkey.pem");
        CHECK_STR_EQ(f.crl_file, "/etc/pki/CA/cacrl.pem");
        rv_tls_files_free(&f);
        return;
    }
    /* Another user: ~/.pki/libvirt where the files exist, else the
     * system's; the pki dir of the "client" set stands in for it. */
    char home[512], dir[1024];
    snprintf(home, sizeof(home), "%s/home", pki);
    snprintf(dir, sizeof(dir), "%s/.pki", home);
    CHECK(mkdir(home, 0700) == 0 || errno == EEXIST);
    CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
    setenv("HOME", home, 1);
    CHECK_INT_EQ(rv_tls_client_files(NULL, &f, &err), 0);
    CHECK_STR_EQ(f.ca_file, "/etc/pki/CA/cacert.pem");
    CHECK_STR_EQ(f.cert_file, "/etc/pki/libvirt/clientcert.pem");
    rv_tls_files_free(&f);
    char target[1024];
    snprintf(target, sizeof(target), "%s/client", pki);
    snprintf(dir, sizeof(dir), "%s/.pki/libvirt", home);
    CHECK_INT_EQ(symlink(target, dir), 0);
    CHECK_INT_EQ(rv_tls_client_files(NULL, &f, &err), 0);
    CHECK_STR_HAS(f.ca_file, "/home/.pki/libvirt/cacert.pem");
    CHECK_STR_HAS(f.cert_file, "/home/.pki/libvirt/clientcert.pem");
    CHECK_STR_HAS(f.key_file, "/home/.pki/libvirt/clientkey.pem");
    rv_tls_files_free(&f);
}

static void test_dn_globs(void)
{
    const char *dn = "C=GB,O=remvirt,CN=client1";
    CHECK_INT_EQ(rv_glob_list_match(NULL, dn), 1);
    CHECK_INT_EQ(rv_glob_list_match(dn_none, dn), 0);
    CHECK_INT_EQ(rv_glob_list_match(dn_client1, dn), 1);
    CHECK_INT_EQ(rv_glob_list_match(dn_client_glob, dn), 1);
    static const char *const others[] = { "C=GB,O=remvirt,CN=client2", "C=GB,O=other,CN=*", NULL };
    CHECK_INT_EQ(rv_glob_list_match(others, dn), 0);
    static const char *const anything[] = { "nomatch", "*", NULL };
    CHECK_INT_EQ(rv_glob_list_match(anything, dn), 1);
    /* The whole DN must match, not a part of it. */
    static const char *const partial[] = { "CN=client1", NULL };
    CHECK_INT_EQ(rv_glob_list_match(partial, dn), 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PKI-DIR (made by tests/tools/make-pki.sh)\n", argv[0]);
        return 2;
    }
    pki = argv[1];
    test_dn_globs();
    test_client_files();
    test_server_sanity();
    test_client_sanity();
    test_good_path();
    test_unclean_eof();
    test_concurrent_read_write();
    test_server_verifies_clients();
    test_server_no_verify();
    test_client_verifies_server();
    printf("tls tests passed\n");
    return 0;
}
