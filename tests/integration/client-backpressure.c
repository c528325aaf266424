/* Many threads on one connection while the server pushes back: 6 threads
 * fetch a domain's ~400 KB XML and 3 threads send ~400 KB definitions, so
 * replies pile up, remvirtd reaches max_client_requests and stops reading,
 * and writers block in send() while replies wait to be read.  Every call
 * must finish: the reader role has to reach a thread that is actually
 * waiting, whichever thread is stuck writing.  A deadlock trips the alarm.
 *
 * usage: client-backpressure URI [ROUNDS]   (default 200 calls per thread) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remvirt.h"

#define DESCRIPTION_BYTES 400000
#define FETCHERS 6
#define DEFINERS 3
#define DEFAULT_ROUNDS 200
#define DEADLINE_SECONDS 120

static rv_conn *conn;
static char *xml;
static int rounds = DEFAULT_ROUNDS;

static void die(const char *what)
{
    const rv_error_info *e = rv_last_error();
    fprintf(stderr, "client-backpressure: %s: %s\n", what, e ? e->message : "?");
    exit(1);
}

static void *fetch(void *arg)
{
    (void)arg;
    rv_dom *d = rv_domain_lookup_by_name(conn, "bigdom");
    if (!d)
        die("lookup");
    for (int i = 0; i < rounds; i++) {
        char *x = rv_domain_get_xml_desc(d, 0);
        if (!x)
            die("get XML");
        if (strlen(x) < DESCRIPTION_BYTES) {
            fprintf(stderr, "client-backpressure: XML of %zu bytes is too short\n", strlen(x));
            exit(1);
        }
        free(x);
    }
    rv_domain_free(d);
    return NULL;
}

static void *define(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        rv_dom *d = rv_domain_define_xml(conn, xml);
        if (!d)
            die("define");
        rv_domain_free(d);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && (rounds = atoi(argv[2])) < 1)) {
        fprintf(stderr, "usage: client-backpressure URI [ROUNDS]\n");
        return 2;
    }
    alarm(DEADLINE_SECONDS);
    xml = malloc(DESCRIPTION_BYTES + 512);
    if (!xml)
        return 1;
    char *p = xml + sprintf(xml, "<domain type='test'><name>bigdom</name>"
                                 "<uuid>11111111-2222-3333-4444-555555555555</uuid><description>");
    memset(p, 'x', DESCRIPTION_BYTES);
    strcpy(p + DESCRIPTION_BYTES, "</description><memory>1024</memory><vcpu>1</vcpu>"
                                  "<os><type>hvm</type></os></domain>");
    if (!(conn = rv_connect_open(argv[1], 0)))
        die("open");
    rv_dom *d = rv_domain_define_xml(conn, xml);
    if (!d)
        die("first define");
    rv_domain_free(d);

    pthread_t threads[FETCHERS + DEFINERS];
    for (int i = 0; i < FETCHERS + DEFINERS; i++)
        pthread_create(&threads[i], NULL, i < FETCHERS ? fetch : define, NULL);
    for (int i = 0; i < FETCHERS + DEFINERS; i++)
        pthread_join(threads[i], NULL);

    if (!(d = rv_domain_lookup_by_name(conn, "bigdom")) || rv_domain_undefine(d, 0) < 0)
        die("undefine");
    rv_domain_free(d);
    rv_connect_close(conn);
    free(xml);
    printf("client-backpressure: %d calls by %d threads on one connection\n",
           (FETCHERS + DEFINERS) * rounds, FETCHERS + DEFINERS);
    return 0;
}
