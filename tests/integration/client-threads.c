/* Many threads on ONE libremvirt connection.
 *
 *   client-threads URI [ITERATIONS]      (URI also from $RV_TEST_URI)
 *
 * Defines and starts one domain per thread, each with its own name, UUID,
 * memory and vCPU count; then every thread, at the same time, looks its
 * domain up by name, UUID and id and reads its info and state, checking
 * that each answer is its own domain's.  A reply delivered to the wrong
 * caller, or lost, shows up as a mismatch or a hang.  Works against
 * remvirtd and libvirtd (the test driver); removes its domains at the end.
 * Exit status: 0 all correct, 1 a wrong answer or failed call, 2 usage. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remvirt.h"

#define NTHREADS 8
#define DEFAULT_ITERATIONS 2000

typedef struct worker {
    rv_conn *conn;
    int index;
    int iterations;
    char name[64];
    char uuid[RV_UUID_STRING_BUFLEN];
    unsigned long long memory_kib;
    unsigned int vcpus;
    int id;                     /* once started */
    long calls;
    int failed;
    char why[512];
} worker;

static void failed(worker *w, const char *what)
{
    const rv_error_info *e = rv_last_error();
    snprintf(w->why, sizeof(w->why), "thread %d: %s%s%s", w->index, what, e ? ": " : "",
             e ? e->message : "");
    w->failed = 1;
}

/* Is dom this worker's domain, as the wire described it? */
static int is_mine(worker *w, rv_dom *dom, const char *how)
{
    char uuid[RV_UUID_STRING_BUFLEN] = "";
    const char *name = rv_domain_get_name(dom);
    if (!name || strcmp(name, w->name) != 0 || rv_domain_get_uuid_string(dom, uuid) < 0 ||
        strcmp(uuid, w->uuid) != 0 || rv_domain_get_id(dom) != w->id) {
        snprintf(w->why, sizeof(w->why), "thread %d: lookup by %s gave %s/%s/%d, expected %s/%s/%d",
                 w->index, how, name ? name : "?", uuid, rv_domain_get_id(dom), w->name, w->uuid,
                 w->id);
        w->failed = 1;
        return 0;
    }
    return 1;
}

static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < w->iterations && !w->failed; i++) {
        rv_dom *by_name = rv_domain_lookup_by_name(w->conn, w->name);
        rv_dom *by_uuid = by_name ? rv_domain_lookup_by_uuid_string(w->conn, w->uuid) : NULL;
        rv_dom *by_id = by_uuid ? rv_domain_lookup_by_id(w->conn, w->id) : NULL;
        w->calls += 3;
        if (!by_id) {
            failed(w, "lookup");
        } else if (is_mine(w, by_name, "name") && is_mine(w, by_uuid, "uuid") &&
                   is_mine(w, by_id, "id")) {
            rv_domain_info info;
            int state = -1, reason;
            w->calls += 2;
            if (rv_domain_get_info(by_name, &info) < 0) {
                failed(w, "get info");
            } else if (info.max_mem != w->memory_kib || info.nr_virt_cpu != w->vcpus ||
                       info.state != RV_DOMAIN_RUNNING) {
                snprintf(w->why, sizeof(w->why),
                         "thread %d: info says %llu KiB, %u vCPUs, state %d; expected %llu, %u, running",
                         w->index, info.max_mem, info.nr_virt_cpu, info.state, w->memory_kib, w->vcpus);
                w->failed = 1;
            } else if (rv_domain_get_state(by_uuid, &state, &reason, 0) < 0) {
                failed(w, "get state");
            } else if (state != RV_DOMAIN_RUNNING) {
                snprintf(w->why, sizeof(w->why), "thread %d: state %d, expected running", w->index,
                         state);
                w->failed = 1;
            }
        }
        rv_domain_free(by_name);
        rv_domain_free(by_uuid);
        rv_domain_free(by_id);
    }
    return NULL;
}

/* Remove what an earlier, interrupted run may have left. */
static void remove_domain(rv_conn *conn, const char *name)
{
    rv_dom *dom = rv_domain_lookup_by_name(conn, name);
    if (!dom)
        return;
    if (rv_domain_is_active(dom) == 1)
        rv_domain_destroy(dom, 0);
    rv_domain_undefine(dom, 0);
    rv_domain_free(dom);
}

static int setup(worker *w)
{
    char xml[1024];
    remove_domain(w->conn, w->name);
    snprintf(xml, sizeof(xml),
             "<domain type='test'>\n"
             "  <name>%s</name>\n"
             "  <uuid>%s</uuid>\n"
             "  <memory>%llu</memory>\n"
             "  <currentMemory>%llu</currentMemory>\n"
             "  <vcpu>%u</vcpu>\n"
             "  <os><type>hvm</type></os>\n"
             "</domain>\n",
             w->name, w->uuid, w->memory_kib, w->memory_kib / 2, w->vcpus);
    rv_dom *dom = rv_domain_define_xml(w->conn, xml);
    if (!dom) {
        failed(w, "define");
        return -1;
    }
    if (rv_domain_create(dom, 0) < 0) {
        failed(w, "start");
        rv_domain_undefine(dom, 0);
        rv_domain_free(dom);
        return -1;
    }
    w->id = rv_domain_get_id(dom);
    rv_domain_free(dom);
    return 0;
}

int main(int argc, char **argv)
{
    const char *uri = argc > 1 ? argv[1] : getenv("RV_TEST_URI");
    int iterations = argc > 2 ? atoi(argv[2]) : DEFAULT_ITERATIONS;
    if (!uri || iterations <= 0) {
        fprintf(stderr, "usage: client-threads URI [ITERATIONS]   (or RV_TEST_URI=URI)\n");
        return 2;
    }
    rv_conn *conn = rv_connect_open(uri, 0);
    if (!conn) {
        fprintf(stderr, "FAIL: cannot connect to %s: %s\n", uri, rv_last_error()->message);
        return 1;
    }

    worker workers[NTHREADS];
    pthread_t threads[NTHREADS];
    int rc = 0, ready = 0;
    memset(workers, 0, sizeof(workers));
    for (int i = 0; i < NTHREADS; i++) {
        worker *w = &workers[i];
        w->conn = conn;
        w->index = i;
        w->iterations = iterations;
        snprintf(w->name, sizeof(w->name), "rv-thread-%d", i);
        snprintf(w->uuid, sizeof(w->uuid), "c1e47b0d-0000-4000-8000-%012d", i + 1);
        w->memory_kib = 65536ULL * (unsigned)(i + 1);
        w->vcpus = (unsigned)(i % 4 + 1);
        if (setup(w) < 0) {
            fprintf(stderr, "FAIL: %s\n", w->why);
            rc = 1;
            break;
        }
        ready++;
    }

    int started = 0;
    for (int i = 0; rc == 0 && i < NTHREADS; i++) {
        if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0) {
            fprintf(stderr, "FAIL: cannot start thread %d\n", i);
            rc = 1;
            break;
        }
        started++;
    }
    long calls = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        calls += workers[i].calls;
        if (workers[i].failed) {
            fprintf(stderr, "FAIL: %s\n", workers[i].why);
            rc = 1;
        }
    }

    for (int i = 0; i < ready; i++)
        remove_domain(conn, workers[i].name);
    if (rv_connect_close(conn) < 0) {
        fprintf(stderr, "FAIL: close: %s\n", rv_last_error()->message);
        rc = 1;
    }
    rv_reset_last_error();
    if (rc == 0)
        printf("ok: %d threads made %ld calls on one connection, every answer correct\n",
               NTHREADS, calls);
    return rc;
}
