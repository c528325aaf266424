/*
 * bench/throughput: GetInfo calls per second with many calls in flight,
 * side by side in one run:
 *
 *   floor          a raw client keeping --window (64) GetInfo-sized messages in
 *                  flight on one Unix socket against a server process that
 *                  answers each with a GetInfo-sized reply, reading and
 *                  writing in batches as remvirtd does: what the socket
 *                  and the two processes cost with no protocol work.
 *   remvirtd raw   the same raw client sending real DOMAIN_GET_INFO
 *                  packets to remvirtd: the daemon's own capacity.
 *   wake floor     T threads (at most 32) each sleeping on a futex for an
 *                  answer that a thread of the same process hands them,
 *                  woken in batches: what sleeping and waking cost, with
 *                  no socket (the floor of T synchronous callers).
 *   remvirt async  libremvirt's asynchronous calls from one thread on one
 *                  connection, --window in flight
 *                  (rv_domain_get_info_start, rv_connect_complete).
 *   remvirt async x4  the same on 4 connections, a thread each.
 *   remvirt T/1    libremvirt, T threads sharing one connection.
 *   remvirt T/T    libremvirt, T threads with a connection each.
 *   libvirt T/1, libvirt T/T   the same through libvirt's client library
 *                  against libvirtd (loaded with dlopen).
 *
 * Each way runs --seconds, --rounds times, alternating the ways, and the
 * median calls/s is printed.  Figures, not verdicts: the exit status is 0
 * whenever every call worked.
 *
 *   throughput --remvirt-sock PATH [--libvirt-sock PATH] [--threads N]
 *              [--window N] [--seconds S] [--rounds N] [--quick] [--only WAY]
 *
 * --only runs one way (floor, raw, wake-floor, async, async4, shared, own,
 * libvirt-shared, libvirt-own), so that a whole-process timer can run
 * one against another.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "remvirt.h"
#include "bench/libvirt_dl.h"

#define REMOTE_PROGRAM 0x20008086u
#define PROC_CONNECT_OPEN 1
#define PROC_DOMAIN_GET_INFO 16
#define PROC_DOMAIN_LOOKUP_BY_NAME 23
#define HEADER 24
/* The GetInfo reply: length word, header, state, max mem, memory, vcpus,
 * cpu time. */
#define GETINFO_REPLY_SIZE (4 + HEADER + 4 + 8 + 8 + 4 + 8)
#define MAX_WINDOW 4096
#define MAX_THREADS 256

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("throughput: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write_all(int fd, const void *buf, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, (const char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("write: %s", strerror(errno));
        done += (size_t)n;
    }
}

static int unix_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path))
        die("socket path too long: %s", path);
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        die("connect %s: %s", path, strerror(errno));
    return fd;
}

/* ------------------------------------------------------------ raw packets */

/* A call packet: length word, header, payload. */
static size_t make_call(unsigned char *out, int proc, uint32_t serial, const void *payload,
                        size_t len)
{
    put_be32(out, (uint32_t)(4 + HEADER + len));
    put_be32(out + 4, REMOTE_PROGRAM);
    put_be32(out + 8, 1);
    put_be32(out + 12, (uint32_t)proc);
    put_be32(out + 16, 0);          /* CALL */
    put_be32(out + 20, serial);
    put_be32(out + 24, 0);          /* OK */
    memcpy(out + 28, payload, len);
    return 4 + HEADER + len;
}

/* One call and its reply on a raw socket; the reply's payload goes to
 * body (up to size bytes), its length is returned.  Dies on an error. */
static size_t raw_call(int fd, int proc, const void *payload, size_t len, unsigned char *body,
                       size_t size)
{
    unsigned char pkt[512];
    write_all(fd, pkt, make_call(pkt, proc, 1, payload, len));
    unsigned char hdr[4 + HEADER];
    for (size_t got = 0; got < sizeof(hdr);) {
        ssize_t n = read(fd, hdr + got, sizeof(hdr) - got);
        if (n <= 0)
            die("reading a reply to procedure %d: %s", proc, n ? strerror(errno) : "EOF");
        got += (size_t)n;
    }
    size_t blen = get_be32(hdr) - sizeof(hdr);
    if (blen > size || get_be32(hdr + 24) != 0)
        die("procedure %d failed (status %u)", proc, get_be32(hdr + 24));
    for (size_t got = 0; got < blen;) {
        ssize_t n = read(fd, body + got, blen - got);
        if (n <= 0)
            die("reading a reply to procedure %d", proc);
        got += (size_t)n;
    }
    return blen;
}

/* A raw connection to remvirtd, opened on test:///default, and the GetInfo
 * call of its domain "test" (whose wire form is LOOKUP_BY_NAME's reply). */
static int raw_open(const char *sock, unsigned char *call, size_t *call_len)
{
    int fd = unix_connect(sock);
    unsigned char body[512], args[64];
    static const char uri[] = "test:///default";
    put_be32(args, 1);                      /* the optional string is present */
    put_be32(args + 4, sizeof(uri) - 1);
    memcpy(args + 8, uri, sizeof(uri) - 1); /* 15 bytes, padded to 16 */
    args[23] = 0;
    put_be32(args + 24, 0);                 /* flags */
    raw_call(fd, PROC_CONNECT_OPEN, args, 28, body, sizeof(body));
    put_be32(args, 4);
    memcpy(args + 4, "test", 4);
    size_t dom_len = raw_call(fd, PROC_DOMAIN_LOOKUP_BY_NAME, args, 8, body, sizeof(body));
    *call_len = make_call(call, PROC_DOMAIN_GET_INFO, 0, body, dom_len);
    return fd;
}

/* Keep `window` calls in flight for `seconds`: send the window, then for
 * every batch of replies read send as many new calls in one write.
 * Returns calls per second.  Every reply must be a GetInfo-sized OK. */
static double pipelined(int fd, const unsigned char *call, size_t call_len, int window,
                        double seconds)
{
    unsigned char *out = calloc(MAX_WINDOW, call_len);
    if (!out)
        die("out of memory");
    unsigned char in[65536];
    size_t have = 0;
    long done = 0, sent = 0;
    for (int i = 0; i < window; i++)
        memcpy(out + call_len * (size_t)i, call, call_len);
    write_all(fd, out, call_len * (size_t)window);
    sent = window;
    double start = now_seconds(), end = start + seconds;
    bool stopping = false;
    while (done < sent) {
        ssize_t n = read(fd, in + have, sizeof(in) - have);
        if (n <= 0)
            die("reading replies: %s", n ? strerror(errno) : "end of file");
        have += (size_t)n;
        size_t off = 0;
        int answered = 0;
        while (have - off >= 4) {
            uint32_t len = get_be32(in + off);
            if (len != GETINFO_REPLY_SIZE)
                die("a reply of %u bytes, not GetInfo's %d (an error reply?)", len,
                    GETINFO_REPLY_SIZE);
            if (have - off < len)
                break;
            off += len;
            answered++;
        }
        memmove(in, in + off, have - off);
        have -= off;
        done += answered;
        if (!stopping && (done & 63) < answered && now_seconds() >= end)
            stopping = true;
        if (!stopping && answered) {
            write_all(fd, out, call_len * (size_t)answered);
            sent += answered;
        }
    }
    double elapsed = now_seconds() - start;
    free(out);
    return (double)done / elapsed;
}

/* The floor's server: answers every whole call of call_len bytes with a
 * GetInfo-sized reply.  Like remvirtd's loop it takes in everything the
 * socket has before it writes the replies of the batch in one write, and
 * sleeps (in poll) only when the socket is empty. */
static void floor_server(int fd, size_t call_len) __attribute__((noreturn));
static void floor_server(int fd, size_t call_len)
{
    static unsigned char in[65536], out[GETINFO_REPLY_SIZE * (65536 / 32)];
    unsigned char reply[GETINFO_REPLY_SIZE] = { 0 };
    put_be32(reply, GETINFO_REPLY_SIZE);
    for (int i = 0; i < (int)(sizeof(out) / sizeof(reply)); i++)
        memcpy(out + i * sizeof(reply), reply, sizeof(reply));
    size_t have = 0, calls = 0;
    for (;;) {
        ssize_t n = recv(fd, in + have, sizeof(in) - have, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            _exit(0);
        if (n > 0) {
            have += (size_t)n;
            size_t whole = have / call_len;
            calls += whole;
            have -= whole * call_len;
            memmove(in, in + whole * call_len, have);
            if (have < sizeof(in) && calls < sizeof(out) / sizeof(reply))
                continue;
        }
        if (calls) {
            write_all(fd, out, calls * sizeof(reply));
            calls = 0;
            continue;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        poll(&pfd, 1, -1);
    }
}

static double floor_run(size_t call_len, const unsigned char *call, int window, double seconds)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        die("socketpair: %s", strerror(errno));
    pid_t child = fork();
    if (child < 0)
        die("fork: %s", strerror(errno));
    if (child == 0) {
        close(sv[0]);
        floor_server(sv[1], call_len);
    }
    close(sv[1]);
    double rate = pipelined(sv[0], call, call_len, window, seconds);
    close(sv[0]);
    waitpid(child, NULL, 0);
    return rate;
}

/* ------------------------------------------------------------ wakeup floor */

/* The floor of synchronous calls from T threads that sleep for their
 * answers, with no socket and no protocol: each "call" publishes its
 * thread's bit and sleeps on a futex bell with that bit; a server thread
 * (asleep on its own futex when no call waits, woken by the caller that
 * finds it so, as a send wakes a daemon) answers every waiting call at
 * once and wakes them all with one FUTEX_WAKE_BITSET, as libremvirt's
 * reader does.  What is left is the kernel's sleeping and waking: each
 * call still costs its thread a sleep and a wakeup. */
typedef struct wake_floor {
    _Atomic unsigned waiting;       /* bits of the threads whose call waits */
    _Atomic int bell;               /* the callers' futex, bumped at each answer */
    _Atomic int server_asleep;      /* the server's futex: 1 while it sleeps */
    _Atomic unsigned answered;      /* bits answered and not yet seen by their thread */
    atomic_bool stop;
} wake_floor;

typedef struct wake_thread {
    pthread_t tid;
    wake_floor *f;
    unsigned bit;
    long calls;
} wake_thread;

static long futex(_Atomic int *word, int op, int val, unsigned bits)
{
    return syscall(SYS_futex, word, op, val, NULL, NULL, bits);
}

static void *wake_caller(void *opaque)
{
    wake_thread *t = opaque;
    wake_floor *f = t->f;
    while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
        atomic_fetch_or(&f->waiting, t->bit);
        if (atomic_exchange(&f->server_asleep, 0) == 1)
            futex(&f->server_asleep, FUTEX_WAKE_PRIVATE, 1, 0);
        for (;;) {
            int bell = atomic_load(&f->bell);
            if (atomic_fetch_and(&f->answered, ~t->bit) & t->bit)
                break;
            futex(&f->bell, FUTEX_WAIT_BITSET_PRIVATE, bell, t->bit);
        }
        t->calls++;
    }
    return NULL;
}

static void *wake_server(void *opaque)
{
    wake_floor *f = opaque;
    while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
        unsigned calls = atomic_exchange(&f->waiting, 0);
        if (calls) {
            atomic_fetch_or(&f->answered, calls);
            atomic_fetch_add(&f->bell, 1);
            futex(&f->bell, FUTEX_WAKE_BITSET_PRIVATE, INT32_MAX, calls);
            continue;
        }
        atomic_store(&f->server_asleep, 1);
        if (atomic_load(&f->waiting) == 0)
            futex(&f->server_asleep, FUTEX_WAIT_PRIVATE, 1, 0);
        atomic_store(&f->server_asleep, 0);
    }
    return NULL;
}

/* Calls per second of `threads` (at most 32) threads on the wakeup floor. */
static double wake_floor_run(int threads, double seconds)
{
    wake_floor f = { 0 };
    wake_thread t[32];
    pthread_t server;
    if (threads > 32)
        threads = 32;
    if (pthread_create(&server, NULL, wake_server, &f) != 0)
        die("pthread_create failed");
    double start = now_seconds();
    for (int i = 0; i < threads; i++) {
        t[i] = (wake_thread){ .f = &f, .bit = 1u << i };
        if (pthread_create(&t[i].tid, NULL, wake_caller, &t[i]) != 0)
            die("pthread_create failed");
    }
    struct timespec nap = { (time_t)seconds, (long)((seconds - (long)seconds) * 1e9) };
    nanosleep(&nap, NULL);
    atomic_store(&f.stop, true);
    long total = 0;
    for (int i = 0; i < threads; i++) {
        /* A caller may wait for an answer the stopped server never gives. */
        while (pthread_tryjoin_np(t[i].tid, NULL) != 0) {
            atomic_fetch_or(&f.answered, ~0u);
            atomic_fetch_add(&f.bell, 1);
            futex(&f.bell, FUTEX_WAKE_BITSET_PRIVATE, INT32_MAX, ~0u);
            sched_yield();
        }
        total += t[i].calls;
    }
    double elapsed = now_seconds() - start;
    atomic_store(&f.server_asleep, 0);
    futex(&f.server_asleep, FUTEX_WAKE_PRIVATE, 1, 0);
    pthread_join(server, NULL);
    return (double)total / elapsed;
}

/* ------------------------------------------------------------ threads */

typedef struct client_api client_api;
struct client_api {
    const char *name;
    void *(*open)(const char *sock);        /* a connection */
    void *(*lookup)(void *conn);            /* domain "test" */
    int (*get_info)(void *dom);             /* 0 when the domain is running */
    void (*close)(void *conn, void *dom);
};

static void *remvirt_open(const char *sock)
{
    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///default?socket=%s", sock);
    rv_conn *c = rv_connect_open(uri, 0);
    if (!c)
        die("remvirt: cannot open %s", uri);
    return c;
}

static void *remvirt_lookup(void *conn)
{
    rv_dom *d = rv_domain_lookup_by_name(conn, "test");
    if (!d)
        die("remvirt: no domain test");
    return d;
}

static int remvirt_get_info(void *dom)
{
    rv_domain_info info;
    return rv_domain_get_info(dom, &info) < 0 || info.state != RV_DOMAIN_RUNNING ? -1 : 0;
}

static void remvirt_close(void *conn, void *dom)
{
    rv_domain_free(dom);
    rv_connect_close(conn);
}

static libvirt_api lv;

static void *libvirt_open_sock(const char *sock)
{
    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///default?socket=%s", sock);
    void *c = lv.connect_open(uri);
    if (!c)
        die("libvirt: cannot open %s: %s", uri, lv.get_last_error_message());
    return c;
}

static void *libvirt_lookup(void *conn)
{
    void *d = lv.domain_lookup_by_name(conn, "test");
    if (!d)
        die("libvirt: no domain test");
    return d;
}

static int libvirt_get_info(void *dom)
{
    lv_domain_info info;
    return lv.domain_get_info(dom, &info) < 0 || info.state != RV_DOMAIN_RUNNING ? -1 : 0;
}

static void libvirt_close_conn(void *conn, void *dom)
{
    lv.domain_free(dom);
    lv.connect_close(conn);
}

static const client_api remvirt_api = { "remvirt", remvirt_open, remvirt_lookup,
                                        remvirt_get_info, remvirt_close };
static const client_api libvirt_client_api = { "libvirt", libvirt_open_sock, libvirt_lookup,
                                               libvirt_get_info, libvirt_close_conn };

typedef struct worker {
    pthread_t tid;
    const client_api *api;
    void *dom;
    atomic_bool *stop;
    long calls;
    int failed;
} worker;

static void *worker_main(void *opaque)
{
    worker *w = opaque;
    while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
        if (w->api->get_info(w->dom) < 0) {
            w->failed = 1;
            break;
        }
        w->calls++;
    }
    return NULL;
}

/* T threads calling GetInfo for `seconds`, on one shared connection or on
 * one connection each.  Returns calls per second. */
static double threaded(const client_api *api, const char *sock, int threads, bool shared,
                       double seconds)
{
    void *conns[MAX_THREADS], *doms[MAX_THREADS];
    worker w[MAX_THREADS];
    atomic_bool stop = false;
    int nconn = shared ? 1 : threads;
    for (int i = 0; i < nconn; i++) {
        conns[i] = api->open(sock);
        doms[i] = api->lookup(conns[i]);
    }
    double start = now_seconds();
    for (int i = 0; i < threads; i++) {
        w[i] = (worker){ .api = api, .dom = doms[shared ? 0 : i], .stop = &stop };
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0)
            die("pthread_create failed");
    }
    struct timespec nap = { (time_t)seconds, (long)((seconds - (long)seconds) * 1e9) };
    nanosleep(&nap, NULL);
    atomic_store(&stop, true);
    long total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].tid, NULL);
        if (w[i].failed)
            die("%s: a GetInfo call failed", api->name);
        total += w[i].calls;
    }
    double elapsed = now_seconds() - start;
    for (int i = 0; i < nconn; i++)
        api->close(conns[i], doms[i]);
    return (double)total / elapsed;
}

/* ------------------------------------------------------------ async */

typedef struct async_ctx {
    pthread_t tid;
    const char *sock;
    int window;
    double seconds;
    long answered;
    double per_second;
} async_ctx;

static void on_async_done(void *opaque, const rv_error_info *error)
{
    if (error)
        die("remvirt async: GetInfo failed: %s", error->message);
    ((async_ctx *)opaque)->answered++;
}

/* One thread keeps `window` calls in flight on its own connection,
 * completing half a window at a time. */
static void *async_thread(void *opaque)
{
    async_ctx *a = opaque;
    rv_conn *conn = remvirt_open(a->sock);
    rv_dom *dom = remvirt_lookup(conn);
    rv_domain_info info;        /* every answer lands here; only the count matters */
    long started = 0;
    double start = now_seconds(), end = start + a->seconds;
    while (now_seconds() < end) {
        for (; started - a->answered < a->window; started++)
            if (rv_domain_get_info_start(dom, &info, on_async_done, a) < 0)
                die("remvirt async: cannot start GetInfo");
        if (rv_connect_complete(conn, (unsigned)a->window / 2) < 0)
            die("remvirt async: complete failed");
    }
    rv_connect_complete(conn, 0);
    a->per_second = (double)a->answered / (now_seconds() - start);
    remvirt_close(conn, dom);
    return NULL;
}

/* Calls per second of `conns` async threads, a connection each. */
static double async_run(const char *sock, int conns, int window, double seconds)
{
    async_ctx a[MAX_THREADS];
    double total = 0;
    for (int i = 0; i < conns; i++) {
        a[i] = (async_ctx){ .sock = sock, .window = window, .seconds = seconds };
        if (pthread_create(&a[i].tid, NULL, async_thread, &a[i]) != 0)
            die("pthread_create failed");
    }
    for (int i = 0; i < conns; i++) {
        pthread_join(a[i].tid, NULL);
        total += a[i].per_second;
    }
    return total;
}

/* ------------------------------------------------------------ main */

enum { WAY_FLOOR, WAY_RAW, WAY_WAKE_FLOOR, WAY_RV_ASYNC, WAY_RV_ASYNC_MANY, WAY_RV_SHARED, WAY_RV_OWN, WAY_LV_SHARED, WAY_LV_OWN, WAY_COUNT };

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *remvirt_sock = NULL, *libvirt_sock = NULL;
    int threads = 8, window = 64, rounds = 5, only = -1;
    double seconds = 2.0;
    static const char *const way_keys[WAY_COUNT] = {
        "floor", "raw", "wake-floor", "async", "async4", "shared", "own", "libvirt-shared", "libvirt-own",
    };
    static const struct option longopts[] = {
        { "remvirt-sock", required_argument, NULL, 'r' },
        { "libvirt-sock", required_argument, NULL, 'l' },
        { "threads", required_argument, NULL, 't' },
        { "window", required_argument, NULL, 'w' },
        { "seconds", required_argument, NULL, 's' },
        { "rounds", required_argument, NULL, 'n' },
        { "quick", no_argument, NULL, 'q' },
        { "only", required_argument, NULL, 'o' },
        { NULL, 0, NULL, 0 },
    };
    for (int opt; (opt = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (opt) {
        case 'r': remvirt_sock = optarg; break;
        case 'l': libvirt_sock = optarg; break;
        case 't': threads = atoi(optarg); break;
        case 'w': window = atoi(optarg); break;
        case 's': seconds = atof(optarg); break;
        case 'n': rounds = atoi(optarg); break;
        case 'q': seconds = 0.2; rounds = 1; break;
        case 'o':
            for (int w = 0; w < WAY_COUNT; w++)
                if (strcmp(optarg, way_keys[w]) == 0)
                    only = w;
            if (only < 0)
                die("--only: no way '%s'", optarg);
            break;
        default:
            fprintf(stderr, "usage: throughput --remvirt-sock PATH [--libvirt-sock PATH] "
                            "[--threads N] [--window N] [--seconds S] [--rounds N] [--quick] [--only WAY]\n");
            return 2;
        }
    }
    if (!remvirt_sock)
        die("--remvirt-sock is required");
    if (threads < 1 || threads > MAX_THREADS || window < 2 || window > MAX_WINDOW ||
        rounds < 1 || rounds > 100 || !(seconds > 0))
        die("--threads is 1..%d, --window 2..%d, --rounds 1..100, --seconds > 0", MAX_THREADS,
            MAX_WINDOW);
    signal(SIGPIPE, SIG_IGN);
    if (libvirt_sock && !libvirt_load(&lv))
        die("libvirt's client library (libvirt.so.0) is not installed");

    unsigned char call[512];
    size_t call_len;
    int raw_fd = raw_open(remvirt_sock, call, &call_len);

    static const char *const names[WAY_COUNT] = {
        "floor (raw pipelined, no protocol)", "remvirtd, raw pipelined client",
        "threads' wakeup floor (no socket)",
        "remvirt, async calls on 1 connection", "remvirt, async on 4 connections",
        "remvirt, threads on 1 connection", "remvirt, a connection per thread",
        "libvirt, threads on 1 connection", "libvirt, a connection per thread",
    };
    double rate[WAY_COUNT][100];
    int ways = libvirt_sock ? WAY_COUNT : WAY_LV_SHARED;
    if (only >= ways)
        die("--only %s needs --libvirt-sock", way_keys[only]);
    for (int r = 0; r < rounds; r++) {
        for (int way = 0; way < ways; way++) {
            double x = 0;
            if (only >= 0 && way != only)
                continue;
            switch (way) {
            case WAY_FLOOR: x = floor_run(call_len, call, window, seconds); break;
            case WAY_RAW: x = pipelined(raw_fd, call, call_len, window, seconds); break;
            case WAY_WAKE_FLOOR: x = wake_floor_run(threads, seconds); break;
            case WAY_RV_ASYNC: x = async_run(remvirt_sock, 1, window, seconds); break;
            case WAY_RV_ASYNC_MANY: x = async_run(remvirt_sock, 4, window, seconds); break;
            case WAY_RV_SHARED: x = threaded(&remvirt_api, remvirt_sock, threads, true, seconds); break;
            case WAY_RV_OWN: x = threaded(&remvirt_api, remvirt_sock, threads, false, seconds); break;
            case WAY_LV_SHARED: x = threaded(&libvirt_client_api, libvirt_sock, threads, true, seconds); break;
            case WAY_LV_OWN: x = threaded(&libvirt_client_api, libvirt_sock, threads, false, seconds); break;
            }
            rate[way][r] = x;
        }
    }
    close(raw_fd);
    printf("GetInfo calls/s, median of %d rounds of %.1f s; %d calls in flight (floor, raw, "
           "async), %d threads\n", rounds, seconds, window, threads);
    double med[WAY_COUNT];
    for (int way = 0; way < ways; way++) {
        if (only >= 0 && way != only)
            continue;
        qsort(rate[way], (size_t)rounds, sizeof(double), compare_doubles);
        med[way] = rate[way][rounds / 2];
        if (only >= 0)
            printf("  %-38s %9.0f/s\n", names[way], med[way]);
        else
            printf("  %-38s %9.0f/s  %5.2fx of the floor\n", names[way], med[way],
                   med[way] / med[WAY_FLOOR]);
    }
    if (only >= 0)
        return 0;
    if (libvirt_sock)
        printf("  remvirt/libvirt: %.1fx on one connection, %.1fx on a connection each\n",
               med[WAY_RV_SHARED] / med[WAY_LV_SHARED], med[WAY_RV_OWN] / med[WAY_LV_OWN]);
    printf("targets (reported, not judged): >= 150000/s on one connection, "
           ">= 200000/s over several\n");
    return 0;
}
