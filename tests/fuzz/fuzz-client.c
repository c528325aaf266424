/* Fuzzes libremvirt against a hostile server, driven the way an
 * application drives it: three threads.
 *  - the application (the fuzzer's own thread) opens a connection, asks
 *    for node info, lists domains and gets the first one's info,
 *    registers a lifecycle callback and a close callback, suspends and
 *    resumes the domain, deregisters, closes;
 *  - the library's built-in event loop (rv_event_run_default_impl) runs
 *    in a thread of its own and delivers events and the close callback;
 *  - the "server" thread owns the other end of a socketpair, handed to the
 *    library through rvc_test_transport_hook, and plays the input.
 *
 * The input is the byte stream a server sends, as recorded from remvirtd
 * and libvirtd (tests/fuzz/corpus/client, made by
 * tests/fuzz/record-client-corpus.sh).  Serials start at 1 on every
 * connection, so a recorded stream answers the same calls again.  The
 * server paces it: for every frame the client sends, it sends the input's
 * next frames up to and including the next REPLY (events and PINGs go
 * along), cutting frames by their length words as the input states them.
 * If the client says nothing for a while it sends the next batch anyway,
 * and once the input is spent it shuts its side (EOF) and waits for the
 * client to close.
 *
 * What the application does with the results is what a careful program
 * would: a callback registration that returns < 0 has failed, so it frees
 * its own opaque data, and so on; ASan and UBSan (in `make fuzz` builds)
 * catch the library breaking those promises.
 *
 * Two ways to run it:
 *  - libFuzzer (built with -DRV_LIBFUZZER, `make fuzz`): LLVMFuzzerTestOneInput
 *    plays one session per input; half the mutations are the plain
 *    mode's frame-aware ones (LLVMFuzzerCustomMutator);
 *  - plain (make check): each seed in FUZZ_CORPUS (default
 *    $abs_top_srcdir/tests/fuzz/corpus/client) played as recorded, then
 *    FUZZ_ITERATIONS (default 5000, 500 under valgrind) mutated ones, seed FUZZ_SEED
 *    (FUZZ_VERBOSE=1 says how far each seed got);
 *  - `fuzz-client --record SOCKET FILE`: relay one session to a real
 *    server's Unix socket, appending what it sends to FILE.
 * See tests/fuzz/README. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/connect.h"
#include "client/remvirt.h"
#include "tests/unit/check.h"
#include "transport/socket.h"

/* ms of silence from the client after which the server sends its next
 * batch anyway (a mutated stream may leave both sides waiting). */
#define SERVER_NUDGE_MS 50
/* ms the server waits for the client to close after the input is spent;
 * past it the library has hung. */
#define SERVER_HANG_MS 20000

/* ---- the server thread ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct {
    const uint8_t *data;
    size_t size;
    int fd;             /* the server's end; -1 while no session */
    int done;           /* the server has closed its end */
    const char *relay;  /* record mode: the real server's socket */
    FILE *record;       /* ...and where what it sends goes */
} session = { .fd = -1 };

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;     /* the client went away: it may */
        p += w;
        n -= (size_t)w;
    }
}

/* The input's next frames up to and including a REPLY. */
static size_t next_batch(const uint8_t *data, size_t size, size_t off)
{
    size_t end = off;
    while (end < size) {
        size_t left = size - end;
        size_t len = left >= 4 ? be32(data + end) : left;
        if (len < 4 || len > left)
            return size;        /* a lying length word: the rest goes as is */
        int reply = len >= 20 && be32(data + end + 16) == 1;
        end += len;
        if (reply)
            break;
    }
    return end;
}

/* Count the calls among the whole frames the client has sent (its PONGs
 * ask for nothing); returns how many completed. */
static int client_frames(int fd, uint8_t *acc, size_t *acc_len, size_t cap, int *eof)
{
    ssize_t r = read(fd, acc + *acc_len, cap - *acc_len);
    if (r <= 0) {
        if (r == 0 || (errno != EINTR && errno != EAGAIN))
            *eof = 1;
        return 0;
    }
    *acc_len += (size_t)r;
    int n = 0;
    while (*acc_len >= 4) {
        size_t len = be32(acc);
        if (len < 4 || len > cap) {     /* not ours to judge: count it, drop it */
            *acc_len = 0;
            return n + 1;
        }
        if (len > *acc_len)
            break;
        if (len < 20 || be32(acc + 16) == 0)   /* RV_CALL */
            n++;
        memmove(acc, acc + len, *acc_len - len);
        *acc_len -= len;
    }
    return n;
}

static void play(int fd, const uint8_t *data, size_t size)
{
    /* Kept from session to session: a fresh MiB each time costs ASan
     * more than the session itself. */
    enum { CAP = 1 << 20 };
    static uint8_t *acc;
    if (!acc)
        CHECK((acc = malloc(CAP)) != NULL);
    size_t acc_len = 0, off = 0;
    int eof = 0, shut = 0;
    while (!eof) {
        if (off >= size && !shut) {
            shutdown(fd, SHUT_WR);
            shut = 1;
        }
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int ready = poll(&p, 1, shut ? SERVER_HANG_MS : SERVER_NUDGE_MS);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0 && shut) {
            fprintf(stderr, "fuzz-client: the client neither closed nor spoke for %d ms\n",
                    SERVER_HANG_MS);
            abort();
        }
        int frames = ready > 0 ? client_frames(fd, acc, &acc_len, CAP, &eof) : 1;
        for (; frames > 0 && off < size; frames--) {
            size_t end = next_batch(data, size, off);
            send_all(fd, data + off, end - off);
            off = end;
        }
    }
}

/* Record mode: relay between the library and the real server. */
static void relay(int fd, const char *path, FILE *out)
{
    int srv = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    CHECK(srv >= 0 && strlen(path) < sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    CHECK(connect(srv, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    uint8_t buf[65536];
    for (;;) {
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = srv, .events = POLLIN } };
        CHECK(poll(p, 2, -1) > 0);
        if (p[0].revents) {
            ssize_t r = read(fd, buf, sizeof(buf));
            if (r <= 0)
                break;
            send_all(srv, buf, (size_t)r);
        }
        if (p[1].revents) {
            ssize_t r = read(srv, buf, sizeof(buf));
            if (r <= 0)
                break;
            CHECK(fwrite(buf, 1, (size_t)r, out) == (size_t)r);
            send_all(fd, buf, (size_t)r);
        }
    }
    close(srv);
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (session.fd < 0 || session.done)
            pthread_cond_wait(&changed, &lock);
        int fd = session.fd;
        pthread_mutex_unlock(&lock);
        if (session.relay)
            relay(fd, session.relay, session.record);
        else
            play(fd, session.data, session.size);
        close(fd);
        pthread_mutex_lock(&lock);
        session.done = 1;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* ---- the library's side ---- */

static int client_fd = -1;

static rv_transport *hand_over_socket(rv_err *err)
{
    rv_transport *tr = rv_socket_transport_new(client_fd, 0, err);
    if (!tr)
        close(client_fd);
    client_fd = -1;
    return tr;
}

static void *loop_main(void *arg)
{
    (void)arg;
    for (;;)
        rv_event_run_default_impl();
    return NULL;
}

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    /* A shared CPU: no spinning for replies.  Warnings about what the
     * server sent would only fill the log. */
    setenv("REMVIRT_SPIN_US", "0", 0);
    setenv("REMVIRT_LOG_OUTPUTS", "4:stderr", 0);
    rvc_test_transport_hook = hand_over_socket;
    CHECK(rv_event_register_default_impl() == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, loop_main, NULL) == 0);
    CHECK(pthread_create(&t, NULL, server_main, NULL) == 0);
}

/* What one session achieved, for the plain mode's checks. */
typedef struct {
    int opened, node_info, ndomains, dom_info, callback_id, suspended, resumed, deregistered,
        closed_ok;
} outcome;

static unsigned long n_events, n_closes, n_opened;

/* The application's data behind a callback, freed through free_cb. */
typedef struct {
    rv_conn *conn;
    int events;
} app_data;

static void on_lifecycle(rv_conn *conn, rv_dom *dom, int event, int detail, void *opaque)
{
    app_data *a = opaque;
    (void)event;
    (void)detail;
    __atomic_add_fetch(&n_events, 1, __ATOMIC_RELAXED);
    /* Read what an application reads. */
    char uuid[RV_UUID_STRING_BUFLEN];
    const char *name = rv_domain_get_name(dom);
    CHECK(name != NULL && rv_domain_get_uuid_string(dom, uuid) == 0);
    CHECK(a->conn == conn);
    /* No calls from here: a call's place in the stream would then depend
     * on when the event came, and recorded sessions would not replay. */
    __atomic_add_fetch(&a->events, 1, __ATOMIC_RELAXED);
}

static void on_close(rv_conn *conn, int reason, void *opaque)
{
    (void)conn;
    (void)reason;
    (void)opaque;
    __atomic_add_fetch(&n_closes, 1, __ATOMIC_RELAXED);
}

/* Answers any credential the server's SASL asks for. */
static char *answer(int type, const char *prompt, void *opaque)
{
    (void)type;
    (void)prompt;
    (void)opaque;
    return strdup("fuzz");
}

static void application(outcome *o)
{
    memset(o, 0, sizeof(*o));
    o->callback_id = -1;
    rv_conn *conn = rv_connect_open_auth("test:///default", 0, answer, NULL);
    if (!conn)
        return;
    o->opened = 1;
    n_opened++;
    int *close_data = malloc(sizeof(int));
    CHECK(close_data != NULL);
    if (rv_connect_register_close_callback(conn, on_close, close_data, free) < 0)
        free(close_data);

    rv_node_info ni;
    o->node_info = rv_node_get_info(conn, &ni) == 0;
    rv_dom **doms = NULL, *dom = NULL;
    int n = rv_connect_list_all_domains(conn, &doms, 0);
    o->ndomains = n;
    for (int i = 0; i < n; i++) {
        if (i == 0)
            dom = doms[0];
        else
            rv_domain_free(doms[i]);
    }
    free(doms);
    if (dom) {
        rv_domain_info di;
        o->dom_info = rv_domain_get_info(dom, &di) == 0;
    }

    app_data *a = calloc(1, sizeof(*a));
    CHECK(a != NULL);
    a->conn = conn;
    int id = rv_connect_domain_event_register_lifecycle(conn, NULL, on_lifecycle, a, free);
    o->callback_id = id;
    if (id < 0) {
        /* Not registered: then cb never ran and opaque is ours to free,
         * says remvirt.h (an event that overtook a failing reply must
         * not have reached it). */
        if (__atomic_load_n(&a->events, __ATOMIC_RELAXED) != 0)
            check_fail(__FILE__, __LINE__, "registration failed (%d) but its callback ran", id);
        free(a);
    }
    if (dom) {
        o->suspended = rv_domain_suspend(dom) == 0;
        o->resumed = rv_domain_resume(dom) == 0;
        rv_domain_free(dom);
    }
    if (id >= 0)
        o->deregistered = rv_connect_domain_event_deregister(conn, id) == 0;
    o->closed_ok = rv_connect_close(conn) == 0;
}

/* One session: the input against the application. */
static void run_session(const uint8_t *data, size_t size, outcome *o, const char *relay_to,
                        FILE *record)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    client_fd = sv[0];
    pthread_mutex_lock(&lock);
    session.data = data;
    session.size = size;
    session.relay = relay_to;
    session.record = record;
    session.done = 0;
    session.fd = sv[1];
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);

    application(o);
    if (client_fd >= 0) {       /* never reached the transport */
        close(client_fd);
        client_fd = -1;
    }

    /* The next session starts when this one's server has finished. */
    pthread_mutex_lock(&lock);
    while (!session.done)
        pthread_cond_wait(&changed, &lock);
    session.fd = -1;
    pthread_mutex_unlock(&lock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    outcome o;
    run_session(data, size, &o, NULL, NULL);
    return 0;
}

/* xorshift64*: deterministic choices, so a failing round's FUZZ_SEED and
 * number say which input it was (the interleaving of threads still varies). */
static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Mutations aimed at a reader: header words (type, status, serial,
 * procedure), counts and lengths in payloads, truncation, a frame
 * repeated (a second reply, a replayed event). */
static size_t mutate(uint8_t *buf, size_t len, size_t cap)
{
    int rounds = 1 + (int)(rng() % 3);
    for (int r = 0; r < rounds && len > 0; r++) {
        /* Find the start of a random frame by walking the length words. */
        size_t starts[256], nf = 0;
        for (size_t off = 0; off + 4 <= len && nf < 256;) {
            size_t l = be32(buf + off);
            starts[nf++] = off;
            if (l < 4 || off + l > len)
                break;
            off += l;
        }
        size_t f = nf ? starts[rng() % nf] : 0;
        switch (rng() % 7) {
        case 0: /* flip a bit anywhere */
            buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: { /* a header word of a frame set to an interesting value */
            static const uint32_t vals[] = { 0, 1, 2, 3, 5, 0xffffffff, 0x7fffffff, 0x80000000 };
            size_t at = f + 4 + 4 * (rng() % 6);
            if (at + 4 <= len)
                put32(buf + at, vals[rng() % (sizeof(vals) / sizeof(vals[0]))]);
            break;
        }
        case 2: { /* a payload word: a huge count, a negative id, a small number */
            size_t at = f + 28 + 4 * (rng() % 8);
            uint32_t v = (uint32_t)(rng() % 3 == 0 ? 0xffffff00u : rng() % 2 ? 0xffffffffu
                                                                             : rng() % 300);
            if (at + 4 <= len)
                put32(buf + at, v);
            break;
        }
        case 3: /* truncate: the server hangs up, often between two frames */
            len = rng() % 2 ? f : rng() % len;
            break;
        case 4: { /* repeat a frame right after itself */
            size_t l = f + 4 <= len ? be32(buf + f) : 0;
            if (l >= 4 && f + l <= len && len + l <= cap) {
                memmove(buf + f + l, buf + f, len - f);
                len += l;
            }
            break;
        }
        case 5: /* a length word off by a little */
            if (f + 4 <= len)
                put32(buf + f, be32(buf + f) + (uint32_t)(rng() % 9) - 4);
            break;
        case 6: /* a random byte */
            buf[rng() % len] = (uint8_t)rng();
            break;
        }
    }
    return len;
}

#ifdef RV_LIBFUZZER
/* Half of libFuzzer's mutations are ours: its byte-level ones seldom put
 * a whole word in a header or a count, where a reader's bugs are. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    rng_state = (uint64_t)seed * 0x9e3779b97f4a7c15ULL | 1;
    if (rng() % 2 || size == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    return mutate(data, size, max_size);
}
#else
static int record(const char *socket_path, const char *file)
{
    FILE *out = fopen(file, "wb");
    CHECK(out != NULL);
    setup();
    outcome o;
    run_session(NULL, 0, &o, socket_path, out);
    CHECK(fclose(out) == 0);
    printf("fuzz-client: recorded %s: opened %d, %d domains, callback %d, closed %d\n", file,
           o.opened, o.ndomains, o.callback_id, o.closed_ok);
    return o.opened && o.closed_ok ? 0 : 1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    uint8_t *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
            CHECK(buf != NULL);
        }
        size_t r = fread(buf + *len, 1, cap - *len, f);
        if (r == 0)
            break;
        *len += r;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--record") == 0)
        return record(argv[2], argv[3]);
    char dflt[4096];
    const char *dir = getenv("FUZZ_CORPUS");
    if (!dir) {
        const char *top = getenv("abs_top_srcdir");
        snprintf(dflt, sizeof(dflt), "%s/tests/fuzz/corpus/client", top ? top : ".");
        dir = dflt;
    }
    const char *iters_env = getenv("FUZZ_ITERATIONS"), *seed_env = getenv("FUZZ_SEED");
    /* Under make check-valgrind (RV_VALGRIND set) a tenth: ~30 s. */
    const char *valgrind = getenv("RV_VALGRIND");
    long iterations = iters_env ? atol(iters_env) : valgrind && *valgrind ? 500 : 5000;
    rng_state = seed_env ? strtoull(seed_env, NULL, 0) : 0x5eed5eedULL;
    if (rng_state == 0)
        rng_state = 1;
    setup();

    /* The recorded sessions as recorded: every step must work against
     * them, as it did against the real servers. */
    struct dirent **names;
    int nnames = scandir(dir, &names, NULL, alphasort);   /* sorted: FUZZ_SEED means one run */
    if (nnames < 0)
        check_fail(__FILE__, __LINE__, "cannot read %s: %s", dir, strerror(errno));
    uint8_t *seeds[256];
    size_t lens[256], nseeds = 0;
    for (int ni = 0; ni < nnames; ni++) {
        struct dirent *de = names[ni];
        if (de->d_name[0] == '.' || nseeds == 256)
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        seeds[nseeds] = read_file(path, &lens[nseeds]);
        outcome o;
        run_session(seeds[nseeds], lens[nseeds], &o, NULL, NULL);
        if (getenv("FUZZ_VERBOSE"))
            printf("%s: opened %d, node info %d, %d domains, domain info %d, callback %d, "
                   "suspend %d, resume %d, deregister %d, close %d\n",
                   de->d_name, o.opened, o.node_info, o.ndomains, o.dom_info, o.callback_id,
                   o.suspended, o.resumed, o.deregistered, o.closed_ok);
        if (strncmp(de->d_name, "session-", 8) == 0) {
            if (!(o.opened && o.node_info && o.ndomains >= 1 && o.dom_info &&
                  o.callback_id >= 0 && o.suspended && o.resumed && o.closed_ok))
                check_fail(__FILE__, __LINE__,
                           "%s as recorded: opened %d, node info %d, %d domains, domain info "
                           "%d, callback %d, suspend %d, resume %d, close %d",
                           de->d_name, o.opened, o.node_info, o.ndomains, o.dom_info,
                           o.callback_id, o.suspended, o.resumed, o.closed_ok);
        }
        nseeds++;
    }
    for (int ni = 0; ni < nnames; ni++)
        free(names[ni]);
    free(names);
    CHECK(nseeds > 0);
    unsigned long recorded_opens = n_opened;

    enum { CAP = 65536 };
    uint8_t *buf = malloc(CAP);
    CHECK(buf != NULL);
    for (long i = 0; i < iterations; i++) {
        size_t k = rng() % nseeds, len = lens[k] < CAP ? lens[k] : CAP;
        memcpy(buf, seeds[k], len);
        len = mutate(buf, len, CAP);
        LLVMFuzzerTestOneInput(buf, len);
    }
    free(buf);
    for (size_t k = 0; k < nseeds; k++)
        free(seeds[k]);
    printf("fuzz-client: %zu recorded sessions, then %ld mutated ones: %lu opened, %lu events "
           "delivered, %lu close callbacks, no failure\n",
           nseeds, iterations, n_opened, n_events, n_closes);
    /* Mutations that never let a connection open would test only the
     * handshake. */
    CHECK(n_opened > recorded_opens + (unsigned long)iterations / 10);
    return 0;
}
#endif
