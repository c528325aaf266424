/* libremvirt's reader facing a full socket while it holds part of a
 * frame; driven by tests/integration/test-client-reader-race.sh against
 * tests/integration/reader-race-server.py (which describes the
 * scenarios).
 *
 *   reader-race-client SOCKET SCENARIO
 *
 * The main thread calls GET_CAPABILITIES (A) and so holds the reader
 * role.  The first time its read() brings bytes of A's answer (or the
 * server's PING), this program's read() runs a second thread's
 * DOMAIN_DEFINE_XML (B) and returns only once that thread sleeps: B was
 * left to the reader, which was collecting (it is between its poll and
 * its next look at rbuf).  The connection's socket has a 4 KB send
 * buffer (connect() below), so the reader cannot write B's 40 KB while
 * the server does not read: it waits in wait_writable, delivering what
 * comes.  The steps are ordered by what each side sees, never by time.
 * Both answers are checked; so is that the set-up happened (B not
 * written by its own thread, the reader's send() hit EAGAIN).
 * Exit status: 0 all checks passed, 1 one failed, 2 usage. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client-report.h"
#include "remvirt.h"

#define CAPS_LEN 20000          /* reader-race-server.py's */
#define XML_PAD 40000
#define WAIT_SECONDS 60         /* a loaded machine, valgrind */

static rv_conn *conn;
static pthread_t reader;
static atomic_int armed;            /* the reader's next read with bytes hands off */
static atomic_int reader_eagain;    /* the reader's send() found the socket full */
static atomic_int definer_sends;    /* send() calls by B's thread while A is read */
static atomic_int a_returned;       /* then B's thread may read (and write) */
static atomic_int definer_tid;
static atomic_int definer_calling;  /* B's thread is inside the call */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int go;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: no answer within the time limit: the client hangs\n";
    ssize_t w = write(1, msg, sizeof(msg) - 1);
    (void)w;
    _exit(1);
}

/* ---- the socket, as libremvirt sees it ---- */

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    /* The smallest send buffer: 40 KB never fits while the server does
     * not read. */
    int size = 4096;
    if (addr->sa_family == AF_UNIX && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0)
        return -1;
    return (int)syscall(SYS_connect, fd, addr, len);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    ssize_t r = syscall(SYS_sendto, fd, buf, n, flags, NULL, 0);
    int saved = errno;
    if (pthread_equal(pthread_self(), reader) && r < 0 && saved == EAGAIN)
        reader_eagain = 1;
    if ((int)syscall(SYS_gettid) == definer_tid && definer_calling && !a_returned)
        definer_sends++;
    errno = saved;
    return r;
}

/* The state letter of thread tid ('S': asleep). */
static char thread_state(int tid)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s", path);
    char *got = fgets(line, sizeof(line), f);
    fclose(f);
    char *end = got ? strrchr(line, ')') : NULL;
    return end && end[1] == ' ' ? end[2] : '?';
}

/* In the reader, collecting: have B's thread call, and return once it
 * sleeps (the only place it can: waiting for the reader). */
static void hand_off(void)
{
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&changed);
    while (!definer_calling)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    const struct timespec tick = { 0, 1000000 };
    while (thread_state(definer_tid) != 'S')
        nanosleep(&tick, NULL);
}

ssize_t read(int fd, void *buf, size_t n)
{
    ssize_t r = syscall(SYS_read, fd, buf, n);
    int saved = errno;
    if (r > 0 && pthread_equal(pthread_self(), reader) && atomic_exchange(&armed, 0))
        hand_off();
    errno = saved;
    return r;
}

/* ---- the calls ---- */

static void *define_thread(void *arg)
{
    (void)arg;
    definer_tid = (int)syscall(SYS_gettid);
    pthread_mutex_lock(&lock);
    while (!go)
        pthread_cond_wait(&changed, &lock);
    definer_calling = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);

    static char xml[XML_PAD + 200];
    int at = snprintf(xml, sizeof(xml), "<domain type='qemu'><name>raced</name><description>");
    memset(xml + at, 'x', XML_PAD);
    strcpy(xml + at + XML_PAD, "</description></domain>");
    rv_dom *dom = rv_domain_define_xml(conn, xml);
    definer_calling = 0;
    if (!dom)
        die("B (DOMAIN_DEFINE_XML) failed");
    if (strcmp(rv_domain_get_name(dom), "raced") != 0)
        die("B (DOMAIN_DEFINE_XML) answered with domain %s", rv_domain_get_name(dom));
    rv_domain_free(dom);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SOCKET SCENARIO\n", argv[0]);
        return 2;
    }
    const char *scenario = argv[2];
    signal(SIGALRM, on_alarm);
    alarm(WAIT_SECONDS);

    char uri[512];
    snprintf(uri, sizeof(uri), "test+unix:///%s?socket=%s", scenario, argv[1]);
    conn = rv_connect_open(uri, 0);
    if (!conn)
        die("cannot open %s", uri);

    reader = pthread_self();
    pthread_t t;
    if (pthread_create(&t, NULL, define_thread, NULL) != 0)
        die("cannot start a thread");
    while (!definer_tid)
        sched_yield();

    armed = 1;
    char *caps = rv_connect_get_capabilities(conn);
    a_returned = 1;
    if (!caps)
        die("A (GET_CAPABILITIES) failed");
    if (strlen(caps) != CAPS_LEN)
        die("A (GET_CAPABILITIES) came with %zu bytes, not %d", strlen(caps), CAPS_LEN);
    for (int i = 0; i < CAPS_LEN; i++)
        if (caps[i] != 'a' + i % 26)
            die("A (GET_CAPABILITIES) differs at byte %d", i);
    free(caps);
    ok("A answered whole");

    if (strcmp(scenario, "withheld") == 0) {
        char *host = rv_connect_get_hostname(conn);
        if (!host || strcmp(host, "racer") != 0)
            die("GET_HOSTNAME: %s", host ? host : "failed");
        free(host);
        ok("a call after A went out");
    }
    pthread_join(t, NULL);
    ok("B answered");
    if (definer_sends)
        die("set-up: B was written by its own thread, not left to the reader");
    if (!reader_eagain)
        die("set-up: the reader never found the socket full");
    ok("B was left to the reader, which found the socket full");
    if (rv_connect_close(conn) < 0)
        die("rv_connect_close failed");
    ok("%s", scenario);
    return 0;
}
