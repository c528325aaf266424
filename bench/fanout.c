/*
 * bench/fanout: event fan-out.  One state change of domain "test"
 * (suspend, then resume, alternately), N clients subscribed to lifecycle
 * events: how long from the call until the first and the last subscriber
 * has the event, for remvirtd and libvirtd side by side in one run.
 *
 *   fanout --remvirt-sock PATH [--libvirt-sock PATH] [--clients N,N,...]
 *          [--rounds N] [--client lib|raw|both] [--quick]
 *
 * Two clients read the events, and each measures both servers alike:
 *
 *   libremvirt  N connections opened with libremvirt, a lifecycle callback
 *               registered on each; one thread runs the library's built-in
 *               event loop, which serves every subscriber connection of
 *               both servers.  That is how an application would do it, but
 *               the loop reads the sockets one after the other (one poll()
 *               over all of them, and each event is handed to its callback
 *               on the next iteration), so for large N the client's own
 *               per-event work is part of the figure.
 *   raw         a minimal client written here on plain sockets: AUTH_LIST,
 *               CONNECT_OPEN and CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY
 *               on each, then one epoll thread that reads the lifecycle
 *               MESSAGEs (and answers keepalive PINGs).  Its cost per event
 *               is small, so this shows mostly the servers' own fan-out.
 *
 * The state change is made by a separate libremvirt connection that has no
 * event loop and subscribes to nothing.  For each N, both servers get their
 * N subscribers, then the rounds alternate between the servers (which goes
 * first alternates too), after warm-up rounds that are not counted, with a
 * pause after each round as long as the round.  A round times from just
 * before the call to the arrival of the event at the first and at the N-th
 * subscriber; the table gives medians and 90th percentiles over the rounds
 * in microseconds, and libvirtd/remvirtd ratios.  Only the ratios mean
 * something beyond this machine.
 *
 * On a machine with few CPUs the client competes with the servers for
 * them; bench/run-fanout.sh therefore also runs this with the servers and
 * the client pinned to different CPUs (its split placement), as if they
 * ran on machines of their own.
 *
 * Every subscriber must get every event exactly once: a missing,
 * duplicated or unexpected event, or a failed call or connection, is an
 * error (exit status 1); timings never are.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "remvirt.h"
#include "rv_keepalive.h"
#include "rv_packet.h"
#include "rv_remote.h"

#define MAX_COUNTS 8            /* values of --clients */
#define MAX_SUBSCRIBERS 20000   /* per server and N */
#define MAX_ROUNDS 1000
#define ROUND_TIMEOUT_S 10      /* a round that takes longer lost an event */

enum { CLIENT_LIB, CLIENT_RAW, CLIENT_KINDS };
static const char *const client_names[CLIENT_KINDS] = { "libremvirt", "raw" };

enum { SERVER_REMVIRTD, SERVER_LIBVIRTD, SERVER_KINDS };

/* The raw client's wire facts come from the protocol's .x files (rpcgen's
 * headers); only the framing sizes are spelled here. */
enum {
    HEADER_END = RV_LEN_WORD_SIZE + RV_HEADER_SIZE,     /* length word and header */
    RAW_FRAME_MAX = 4096,       /* far above any reply or event read here */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fanout: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static const char *last_error(void)
{
    const rv_error_info *e = rv_last_error();
    return e && e->message ? e->message : "unknown error";
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------------ servers and rounds */

typedef struct server {
    const char *name;
    const char *sock;
    char uri[sizeof(((struct sockaddr_un *)0)->sun_path) + 64];
    rv_conn *control;           /* makes the state changes; no event loop, no events */
    rv_dom *dom;
    int paused;

    /* The round in flight, shared with the thread that reads the events. */
    pthread_mutex_t lock;
    pthread_cond_t all_arrived;
    int round;                  /* numbers rounds, so a duplicate shows */
    int expect_event;           /* -1 between rounds: any event is a stray */
    int subscribers;
    int arrived;
    double first, last;         /* arrival times, us */
    long strays;                /* events outside a round, duplicated, or of the wrong kind */

    /* Results: [client][index of N][round], us after the call began. */
    double first_us[CLIENT_KINDS][MAX_COUNTS][MAX_ROUNDS];
    double last_us[CLIENT_KINDS][MAX_COUNTS][MAX_ROUNDS];
} server;

typedef struct subscriber {
    server *srv;
    int seen_round;
    rv_conn *conn;              /* libremvirt */
    int fd;                     /* raw */
    size_t have;
    unsigned char buf[RAW_FRAME_MAX];
} subscriber;

/* A subscriber has the event; called by the thread that reads events. */
static void arrived(subscriber *s, int event)
{
    double t = now_us();
    server *srv = s->srv;
    pthread_mutex_lock(&srv->lock);
    if (event != srv->expect_event || s->seen_round == srv->round) {
        srv->strays++;
    } else {
        s->seen_round = srv->round;
        if (++srv->arrived == 1)
            srv->first = t;
        if (srv->arrived == srv->subscribers) {
            srv->last = t;
            pthread_cond_signal(&srv->all_arrived);
        }
    }
    pthread_mutex_unlock(&srv->lock);
}

/* Suspend or resume the domain and wait until all nsubs subscribers have
 * the event; return the first and last arrival, us after the call began. */
static void one_round(server *srv, int nsubs, double *first_us, double *last_us)
{
    int event = srv->paused ? RV_DOMAIN_EVENT_RESUMED : RV_DOMAIN_EVENT_SUSPENDED;
    pthread_mutex_lock(&srv->lock);
    srv->round++;
    srv->expect_event = event;
    srv->subscribers = nsubs;
    srv->arrived = 0;
    pthread_mutex_unlock(&srv->lock);

    double t0 = now_us();
    int rc = srv->paused ? rv_domain_resume(srv->dom) : rv_domain_suspend(srv->dom);
    if (rc < 0)
        die("%s: cannot %s domain 'test': %s", srv->name, srv->paused ? "resume" : "suspend",
            last_error());
    srv->paused = !srv->paused;

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += ROUND_TIMEOUT_S;
    pthread_mutex_lock(&srv->lock);
    while (srv->arrived < nsubs) {
        if (pthread_cond_timedwait(&srv->all_arrived, &srv->lock, &deadline) == ETIMEDOUT)
            die("%s: only %d of %d subscribers got the %s event within %d s", srv->name,
                srv->arrived, nsubs, event == RV_DOMAIN_EVENT_SUSPENDED ? "suspended" : "resumed",
                ROUND_TIMEOUT_S);
    }
    *first_us = srv->first - t0;
    *last_us = srv->last - t0;
    srv->expect_event = -1;
    pthread_mutex_unlock(&srv->lock);
}

static void server_init(server *srv, const char *name, const char *sock)
{
    srv->name = name;
    srv->sock = sock;
    if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        die("%s: socket path '%s' is too long", name, sock);
    snprintf(srv->uri, sizeof(srv->uri), "test+unix:///default?socket=%s", sock);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->all_arrived, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&srv->lock, NULL);
    srv->expect_event = -1;

    if (!(srv->control = rv_connect_open(srv->uri, 0)))
        die("%s: cannot open %s: %s", name, srv->uri, last_error());
    if (!(srv->dom = rv_domain_lookup_by_name(srv->control, "test")))
        die("%s: no domain 'test': %s", name, last_error());
    rv_domain_info info;
    if (rv_domain_get_info(srv->dom, &info) < 0)
        die("%s: cannot get the state of domain 'test': %s", name, last_error());
    /* A reused daemon may have left it paused; either state alternates. */
    if (info.state != RV_DOMAIN_RUNNING && info.state != RV_DOMAIN_PAUSED)
        die("%s: domain 'test' must be running or paused (its state is %d)", name,
            (int)info.state);
    srv->paused = info.state == RV_DOMAIN_PAUSED;
}

/* ------------------------------------------------------------ libremvirt subscribers */

static atomic_int loop_stop;

static void *run_event_loop(void *unused)
{
    (void)unused;
    while (!atomic_load(&loop_stop))
        if (rv_event_run_default_impl() < 0)
            die("the event loop failed: %s", last_error());
    return NULL;
}

/* Adding a timeout wakes the loop, so that it sees loop_stop. */
static void remove_self(int timer, void *unused)
{
    (void)unused;
    rv_event_remove_timeout(timer);
}

static void on_lifecycle(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    (void)conn;
    (void)dom;
    (void)detail;
    arrived(opaque, event);
}

static void lib_subscribe(subscriber *s)
{
    if (!(s->conn = rv_connect_open(s->srv->uri, 0)))
        die("%s: cannot open subscriber connection: %s", s->srv->name, last_error());
    if (rv_connect_domain_event_register_lifecycle(s->conn, NULL, on_lifecycle, s, NULL) < 0)
        die("%s: cannot register for lifecycle events: %s", s->srv->name, last_error());
}

static void lib_unsubscribe(subscriber *s)
{
    if (rv_connect_close(s->conn) < 0)
        die("%s: closing a subscriber connection failed: %s", s->srv->name, last_error());
}

/* ------------------------------------------------------------ raw subscribers */

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write_all(int fd, const unsigned char *p, size_t len, const char *who)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("%s: writing to a raw subscriber failed: %s", who, strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static void read_all(int fd, unsigned char *p, size_t len, const char *who)
{
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("%s: reading a reply on a raw subscriber: %s", who,
                n == 0 ? "the server closed the connection" : strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

/* One call on a blocking raw socket; returns once its reply is read
 * (MESSAGEs before it are skipped) and dies unless the reply is OK. */
static void raw_call(int fd, const char *who, int proc, uint32_t serial, const unsigned char *args,
                     size_t args_len)
{
    unsigned char frame[RAW_FRAME_MAX];
    size_t len = HEADER_END + args_len;
    const uint32_t words[] = { (uint32_t)len, RV_REMOTE_PROGRAM, RV_REMOTE_VERSION,
                               (uint32_t)proc, RV_CALL, serial, RV_OK };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        put_u32(frame + 4 * i, words[i]);
    if (args_len)
        memcpy(frame + HEADER_END, args, args_len);
    write_all(fd, frame, len, who);

    for (;;) {
        read_all(fd, frame, 4, who);
        uint32_t reply_len = get_u32(frame);
        if (reply_len < HEADER_END || reply_len > sizeof(frame))
            die("%s: a frame of %u bytes in reply to procedure %d", who, reply_len, proc);
        read_all(fd, frame + 4, reply_len - 4, who);
        if (get_u32(frame + 16) == RV_MESSAGE)
            continue;
        if (get_u32(frame + 4) != RV_REMOTE_PROGRAM || get_u32(frame + 12) != (uint32_t)proc ||
            get_u32(frame + 16) != RV_REPLY || get_u32(frame + 20) != serial)
            die("%s: unexpected frame in reply to procedure %d", who, proc);
        if (get_u32(frame + 24) == RV_OK)
            return;
        /* An error: code, domain, then the message as an optional string. */
        const char *message = "(no message)";
        int message_len = (int)strlen(message);
        if (reply_len >= HEADER_END + 16 && get_u32(frame + HEADER_END + 8) == 1) {
            uint32_t n = get_u32(frame + HEADER_END + 12);
            if (n <= reply_len - (HEADER_END + 16)) {
                message = (const char *)frame + HEADER_END + 16;
                message_len = (int)n;
            }
        }
        die("%s: procedure %d failed: %.*s", who, proc, message_len, message);
    }
}

static void raw_subscribe(subscriber *s, int epfd)
{
    const char *who = s->srv->name;
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        die("%s: socket: %s", who, strerror(errno));
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    memcpy(addr.sun_path, s->srv->sock, strlen(s->srv->sock) + 1);
    if (connect(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
        die("%s: cannot connect to %s: %s", who, s->srv->sock, strerror(errno));

    raw_call(s->fd, who, RV_PROC_AUTH_LIST, 1, NULL, 0);
    /* CONNECT_OPEN: name present, "test:///default" (15 bytes, padded to
     * 16), flags 0.  No keepalive is offered, so no PINGs are expected. */
    static const char uri[] = "test:///default";
    unsigned char open_args[4 + 4 + 16 + 4] = { 0 };
    put_u32(open_args, 1);
    put_u32(open_args + 4, sizeof(uri) - 1);
    memcpy(open_args + 8, uri, sizeof(uri) - 1);
    raw_call(s->fd, who, RV_PROC_CONNECT_OPEN, 2, open_args, sizeof(open_args));
    /* The lifecycle event ID, no domain: every domain. */
    unsigned char register_args[8] = { 0 };
    put_u32(register_args, RV_DOMAIN_EVENT_ID_LIFECYCLE);
    raw_call(s->fd, who, RV_PROC_CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY, 3, register_args,
             sizeof(register_args));

    int flags = fcntl(s->fd, F_GETFL);
    if (flags < 0 || fcntl(s->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        die("%s: cannot make a raw subscriber non-blocking: %s", who, strerror(errno));
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0)
        die("epoll_ctl: %s", strerror(errno));
}

/* One frame a raw subscriber read: a lifecycle event, or a keepalive PING
 * (answered, though none should come: keepalive was never offered). */
static void raw_frame(subscriber *s, const unsigned char *f, uint32_t len)
{
    const char *who = s->srv->name;
    uint32_t prog = get_u32(f + 4), proc = get_u32(f + 12), type = get_u32(f + 16);
    if (prog == RV_KEEPALIVE_PROGRAM && proc == RV_KEEPALIVE_PROC_PING) {
        const uint32_t words[] = { HEADER_END, RV_KEEPALIVE_PROGRAM, RV_KEEPALIVE_VERSION,
                                   RV_KEEPALIVE_PROC_PONG, RV_MESSAGE, 0, RV_OK };
        unsigned char pong[HEADER_END];
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
            put_u32(pong + 4 * i, words[i]);
        write_all(s->fd, pong, sizeof(pong), who);
        return;
    }
    if (prog != RV_REMOTE_PROGRAM || proc != RV_PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE ||
        type != RV_MESSAGE)
        die("%s: a raw subscriber got an unexpected frame (program %#x, procedure %u, type %u)",
            who, prog, proc, type);
    /* callbackID; the domain: name (length, bytes padded to 4), uuid[16],
     * id; then event and detail. */
    size_t at = HEADER_END + 4;
    if (len < at + 4)
        die("%s: a truncated lifecycle event of %u bytes", who, len);
    uint32_t name_len = get_u32(f + at);
    if (name_len > len)
        die("%s: a lifecycle event with a %u-byte name in %u bytes", who, name_len, len);
    at += 4 + ((name_len + 3) & ~3u) + 16 + 4;
    if (at + 8 > len)
        die("%s: a truncated lifecycle event of %u bytes", who, len);
    arrived(s, (int)get_u32(f + at));
}

/* Read what a raw subscriber's socket holds and handle its whole frames. */
static void raw_drain(subscriber *s)
{
    for (;;) {
        size_t room = sizeof(s->buf) - s->have;
        ssize_t n = read(s->fd, s->buf + s->have, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0)
            die("%s: a raw subscriber lost its connection: %s", s->srv->name,
                n == 0 ? "the server closed it" : strerror(errno));
        s->have += (size_t)n;
        size_t at = 0;
        while (s->have - at >= 4) {
            uint32_t len = get_u32(s->buf + at);
            if (len < HEADER_END || len > sizeof(s->buf))
                die("%s: a raw subscriber got a frame of %u bytes", s->srv->name, len);
            if (s->have - at < len)
                break;
            raw_frame(s, s->buf + at, len);
            at += len;
        }
        memmove(s->buf, s->buf + at, s->have - at);
        s->have -= at;
        /* A short read emptied the socket: skip the read that would only
         * say EAGAIN (epoll is level-triggered and reports what comes later). */
        if ((size_t)n < room)
            return;
    }
}

typedef struct raw_reader {
    int epfd;
    int stopfd;                 /* an eventfd, registered with a NULL pointer */
    pthread_t thread;
} raw_reader;

static void *run_raw_reader(void *opaque)
{
    raw_reader *r = opaque;
    struct epoll_event events[128];
    for (;;) {
        int n = epoll_wait(r->epfd, events, 128, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            if (!events[i].data.ptr)
                return NULL;
            raw_drain(events[i].data.ptr);
        }
    }
}

/* ------------------------------------------------------------ measuring */

typedef struct plan {
    server *servers;
    int nservers;
    int counts[MAX_COUNTS];
    int ncounts;
    int rounds;
    int warmup;
} plan;

/* Back to back, one round's leftovers (a server's work after its last
 * write, the reader winding down) run into the next: on two CPUs that
 * showed as first arrivals of milliseconds.  Idling as long as the round
 * took, and at least a millisecond, gives every round a quiet start. */
static void pause_after(double round_us)
{
    long long ns = (long long)(round_us > 1000 ? round_us : 1000) * 1000;
    struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        continue;
}

/* For one client kind and one N: subscribe N clients to every server, run
 * the rounds interleaved, unsubscribe. */
static void measure(const plan *p, int kind, int count_index)
{
    int nsubs = p->counts[count_index];
    subscriber *subs[SERVER_KINDS];
    raw_reader reader = { -1, -1, 0 };
    if (kind == CLIENT_RAW) {
        if ((reader.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
            (reader.stopfd = eventfd(0, EFD_CLOEXEC)) < 0)
            die("cannot set up epoll: %s", strerror(errno));
        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
        if (epoll_ctl(reader.epfd, EPOLL_CTL_ADD, reader.stopfd, &ev) < 0)
            die("epoll_ctl: %s", strerror(errno));
    }

    double start = now_us();
    for (int k = 0; k < p->nservers; k++) {
        if (!(subs[k] = calloc((size_t)nsubs, sizeof(*subs[k]))))
            die("out of memory for %d subscribers", nsubs);
        for (int i = 0; i < nsubs; i++) {
            subscriber *s = &subs[k][i];
            s->srv = &p->servers[k];
            s->seen_round = -1;
            if (kind == CLIENT_LIB)
                lib_subscribe(s);
            else
                raw_subscribe(s, reader.epfd);
        }
    }
    fprintf(stderr, "fanout: %s, N=%d: %d subscriptions made in %.1f s\n",
            client_names[kind], nsubs, nsubs * p->nservers, (now_us() - start) / 1e6);
    if (kind == CLIENT_RAW && pthread_create(&reader.thread, NULL, run_raw_reader, &reader) != 0)
        die("cannot start the raw reader thread");

    for (int r = -p->warmup; r < p->rounds; r++) {
        for (int k = 0; k < p->nservers; k++) {
            /* Who goes first alternates, so neither always follows the other. */
            int which = (k + r + p->warmup) % p->nservers;
            server *srv = &p->servers[which];
            double first, last;
            one_round(srv, nsubs, &first, &last);
            pause_after(last);
            if (r >= 0) {
                srv->first_us[kind][count_index][r] = first;
                srv->last_us[kind][count_index][r] = last;
            }
        }
    }

    if (kind == CLIENT_RAW) {
        uint64_t one = 1;
        if (write(reader.stopfd, &one, sizeof(one)) != sizeof(one))
            die("cannot stop the raw reader: %s", strerror(errno));
        pthread_join(reader.thread, NULL);
        close(reader.stopfd);
        close(reader.epfd);
    }
    for (int k = 0; k < p->nservers; k++) {
        for (int i = 0; i < nsubs; i++) {
            if (kind == CLIENT_LIB)
                lib_unsubscribe(&subs[k][i]);
            else
                close(subs[k][i].fd);
        }
        free(subs[k]);
        server *srv = &p->servers[k];
        pthread_mutex_lock(&srv->lock);
        long strays = srv->strays;
        pthread_mutex_unlock(&srv->lock);
        if (strays)
            die("%s: %ld events came outside their round, twice, or of the wrong kind",
                srv->name, strays);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n values, interpolating between neighbours. */
static double quantile(const double *v, int n, double q)
{
    double sorted[MAX_ROUNDS];
    memcpy(sorted, v, (size_t)n * sizeof(*v));
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
}

static void print_header(const plan *p)
{
    printf("Event fan-out: microseconds from a suspend or resume of domain 'test' until the\n"
           "first and the last of N subscribers has the lifecycle event; median (p50) and p90\n"
           "of %d rounds per server and N%s, after %d warm-up.\n"
           "libremvirt: one thread runs libremvirt's event loop (poll()) for every subscriber\n"
           "connection, so the client's own work per event is in the figures%s.\n"
           "raw: a minimal reader on plain sockets and epoll: mostly the servers' own fan-out.\n\n",
           p->rounds, p->nservers > 1 ? ", the servers' rounds interleaved" : "", p->warmup,
           p->nservers > 1 ? ", alike for both" : "");
    printf("%-10s %5s", "", "");
    /* Padded when another column follows, so the names head their columns. */
    for (int k = 0; k < p->nservers; k++)
        printf(" | %-*s", p->nservers > 1 ? 32 : 0, p->servers[k].name);
    if (p->nservers == SERVER_KINDS)
        printf(" | %s/%s", p->servers[SERVER_LIBVIRTD].name, p->servers[SERVER_REMVIRTD].name);
    printf("\n%-10s %5s", "client", "N");
    for (int k = 0; k < p->nservers; k++)
        printf(" | %10s %10s %10s", "first p50", "last p50", "last p90");
    if (p->nservers == SERVER_KINDS)
        printf(" | %8s %8s", "last p50", "last p90");
    printf("\n");
    fflush(stdout);     /* before the progress lines on stderr */
}

static void print_row(const plan *p, int kind, int count_index)
{
    double last50[SERVER_KINDS], last90[SERVER_KINDS];
    printf("%-10s %5d", client_names[kind], p->counts[count_index]);
    for (int k = 0; k < p->nservers; k++) {
        const server *srv = &p->servers[k];
        last50[k] = quantile(srv->last_us[kind][count_index], p->rounds, 0.5);
        last90[k] = quantile(srv->last_us[kind][count_index], p->rounds, 0.9);
        double first50 = quantile(srv->first_us[kind][count_index], p->rounds, 0.5);
        printf(" | %10.1f %10.1f %10.1f", first50, last50[k], last90[k]);
    }
    if (p->nservers == SERVER_KINDS)
        printf(" | %7.2fx %7.2fx", last50[SERVER_LIBVIRTD] / last50[SERVER_REMVIRTD],
               last90[SERVER_LIBVIRTD] / last90[SERVER_REMVIRTD]);
    printf("\n");
    fflush(stdout);
}

/* What each subscriber past the fewest adds: the slope of last p50
 * between the smallest and the largest N. */
static void print_slope(const plan *p, int kind)
{
    int lo = 0, hi = 0;
    for (int i = 1; i < p->ncounts; i++) {
        if (p->counts[i] < p->counts[lo])
            lo = i;
        if (p->counts[i] > p->counts[hi])
            hi = i;
    }
    if (p->counts[lo] == p->counts[hi])
        return;
    printf("%-10s per subscriber past %d (last p50, N=%d to %d):", client_names[kind],
           p->counts[lo], p->counts[lo], p->counts[hi]);
    double slope[SERVER_KINDS];
    for (int k = 0; k < p->nservers; k++) {
        const server *srv = &p->servers[k];
        slope[k] = (quantile(srv->last_us[kind][hi], p->rounds, 0.5) -
                    quantile(srv->last_us[kind][lo], p->rounds, 0.5)) /
                   (p->counts[hi] - p->counts[lo]);
        printf("%s %s %.2f us", k ? "," : "", srv->name, slope[k]);
    }
    if (p->nservers == SERVER_KINDS && slope[SERVER_REMVIRTD] > 0)
        printf("  (%.2fx)", slope[SERVER_LIBVIRTD] / slope[SERVER_REMVIRTD]);
    printf("\n");
}

/* ------------------------------------------------------------ main */

static long number(const char *text, const char *what, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno || v < min || v > max)
        die("%s must be a whole number from %ld to %ld, not '%s'", what, min, max, text);
    return v;
}

static void parse_counts(plan *p, char *list)
{
    p->ncounts = 0;
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        if (p->ncounts == MAX_COUNTS)
            die("--clients takes at most %d numbers", MAX_COUNTS);
        p->counts[p->ncounts++] = (int)number(item, "each --clients number", 1, MAX_SUBSCRIBERS);
    }
    if (p->ncounts == 0)
        die("--clients needs at least one number");
}

/* Every subscriber is a socket: raise the soft limit as far as needed. */
static void raise_fd_limit(int needed)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        die("getrlimit: %s", strerror(errno));
    if (rl.rlim_cur < (rlim_t)needed) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)needed ? rl.rlim_max : (rlim_t)needed;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            die("setrlimit: %s", strerror(errno));
    }
    if (rl.rlim_cur < (rlim_t)needed)
        die("%d open files are needed but the hard limit is %llu: raise it (ulimit -Hn)",
            needed, (unsigned long long)rl.rlim_cur);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: fanout --remvirt-sock PATH [--libvirt-sock PATH] [--clients N,N,...]\n"
                "              [--rounds N] [--client lib|raw|both] [--quick]\n"
                "defaults: --clients 10,100,1000 --rounds 50 --client both;\n"
                "--quick: --clients 10 --rounds 3, one warm-up round\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "remvirt-sock", required_argument, NULL, 'R' },
        { "libvirt-sock", required_argument, NULL, 'L' },
        { "clients", required_argument, NULL, 'n' },
        { "rounds", required_argument, NULL, 'r' },
        { "client", required_argument, NULL, 'c' },
        { "quick", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *remvirt_sock = NULL, *libvirt_sock = NULL;
    static server servers[SERVER_KINDS];
    plan p = { .servers = servers, .counts = { 10, 100, 1000 }, .ncounts = 3, .rounds = 50,
               .warmup = 3 };
    int use[CLIENT_KINDS] = { 1, 1 };
    int quick = 0, opt, rounds_given = 0, counts_given = 0;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'R': remvirt_sock = optarg; break;
        case 'L': libvirt_sock = optarg; break;
        case 'n': parse_counts(&p, optarg); counts_given = 1; break;
        case 'r':
            p.rounds = (int)number(optarg, "--rounds", 1, MAX_ROUNDS);
            rounds_given = 1;
            break;
        case 'c':
            if (strcmp(optarg, "lib") == 0)
                use[CLIENT_RAW] = 0;
            else if (strcmp(optarg, "raw") == 0)
                use[CLIENT_LIB] = 0;
            else if (strcmp(optarg, "both") != 0)
                die("--client is lib, raw or both, not '%s'", optarg);
            break;
        case 'q': quick = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || !remvirt_sock) {
        usage(stderr);
        return 2;
    }
    if (quick) {
        if (!counts_given) {
            p.counts[0] = 10;
            p.ncounts = 1;
        }
        if (!rounds_given)
            p.rounds = 3;
        p.warmup = 1;
    }
    int most = 0;
    for (int i = 0; i < p.ncounts; i++)
        most = p.counts[i] > most ? p.counts[i] : most;
    p.nservers = libvirt_sock ? 2 : 1;
    raise_fd_limit(p.nservers * most + 64);

    /* The control connections open before the event loop exists, so they
     * stay out of it: their replies never wake the loop's thread, which
     * serves the libremvirt subscribers alone. */
    server_init(&servers[SERVER_REMVIRTD], "remvirtd", remvirt_sock);
    if (libvirt_sock)
        server_init(&servers[SERVER_LIBVIRTD], "libvirtd", libvirt_sock);
    if (rv_event_register_default_impl() < 0)
        die("cannot set up the event loop: %s", last_error());
    pthread_t loop_thread;
    if (pthread_create(&loop_thread, NULL, run_event_loop, NULL) != 0)
        die("cannot start the event loop thread");

    print_header(&p);
    for (int kind = 0; kind < CLIENT_KINDS; kind++) {
        if (!use[kind])
            continue;
        for (int i = 0; i < p.ncounts; i++) {
            measure(&p, kind, i);
            print_row(&p, kind, i);
        }
    }
    for (int kind = 0; kind < CLIENT_KINDS; kind++)
        if (use[kind])
            print_slope(&p, kind);

    for (int k = 0; k < p.nservers; k++) {
        rv_domain_free(servers[k].dom);
        rv_connect_close(servers[k].control);
    }
    atomic_store(&loop_stop, 1);
    if (rv_event_add_timeout(0, remove_self, NULL, NULL) < 0)
        die("cannot wake the event loop: %s", last_error());
    pthread_join(loop_thread, NULL);
    /* Timings are reported, never judged: only a failure sets the status. */
    return 0;
}
