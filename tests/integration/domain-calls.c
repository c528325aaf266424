/* libremvirt's calls that rvsh has no command for, and the arguments
 * they refuse before sending anything (tests/interop/
 * test-rvsh-domain-parity.sh runs it on a running QEMU guest):
 *     domain-calls URI DOMAIN
 * prints "labels N" and then each security label as "LABEL ENFORCING"
 * (rv_domain_get_security_label_list), then one line per refusal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remvirt.h"

static int failures;

/* A call that must fail with code, the connection still usable. */
static void refused(const char *what, int rc, int code)
{
    const rv_error_info *e = rv_last_error();
    if (rc != -1 || !e || e->code != code) {
        printf("FAIL: %s: rc %d, code %d (%s)\n", what, rc, e ? e->code : 0,
               e ? e->message : "no error");
        failures++;
    } else {
        printf("refused %s: %s\n", what, e->message);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s URI DOMAIN\n", argv[0]);
        return 2;
    }
    rv_conn *conn = rv_connect_open(argv[1], 0);
    rv_dom *dom = conn ? rv_domain_lookup_by_name(conn, argv[2]) : NULL;
    if (!dom) {
        fprintf(stderr, "%s: %s\n", argv[2], rv_last_error() ? rv_last_error()->message : "?");
        return 1;
    }

    rv_security_label *labels = NULL;
    int n = rv_domain_get_security_label_list(dom, &labels);
    if (n < 0) {
        printf("FAIL: rv_domain_get_security_label_list: %s\n", rv_last_error()->message);
        failures++;
    } else {
        printf("labels %d\n", n);
        for (int i = 0; i < n; i++)
            printf("%s %d\n", labels[i].label, labels[i].enforcing);
        free(labels);
    }
    refused("a label list without a pointer", rv_domain_get_security_label_list(dom, NULL),
            RV_ERROR_INVALID_ARG);
    refused("a label list of no domain", rv_domain_get_security_label_list(NULL, &labels),
            RV_ERROR_INVALID_DOMAIN);

    unsigned char map[1] = { 1 };
    refused("a pin without a map", rv_domain_pin_iothread(dom, 1, NULL, 1, 0),
            RV_ERROR_INVALID_ARG);
    refused("a pin with an empty map", rv_domain_pin_iothread(dom, 1, map, 0, 0),
            RV_ERROR_INVALID_ARG);
    refused("a pin of no IOThread", rv_domain_pin_iothread(dom, 99, map, 1, 0),
            RV_ERROR_INVALID_ARG);

    rv_typed_parameter p[2];
    memset(p, 0, sizeof(p));
    strcpy(p[0].field, "poll_max_ns");
    p[0].type = RV_PARAM_ULLONG;
    p[0].value.ul = 1000;
    refused("parameters without an array", rv_domain_set_iothread_params(dom, 1, NULL, 1, 0),
            RV_ERROR_INVALID_ARG);
    refused("a negative parameter count", rv_domain_set_iothread_params(dom, 1, p, -1, 0),
            RV_ERROR_INVALID_ARG);
    p[1].type = 42;
    strcpy(p[1].field, "poll_grow");
    refused("a parameter of no known type", rv_domain_set_iothread_params(dom, 1, p, 2, 0),
            RV_ERROR_INVALID_ARG);
    p[1].type = RV_PARAM_STRING;
    refused("a string parameter without its string",
            rv_domain_set_iothread_params(dom, 1, p, 2, 0), RV_ERROR_INVALID_ARG);
    p[1].value.s = "fast";
    refused("a string where the daemon wants a number",
            rv_domain_set_iothread_params(dom, 1, p, 2, 0), RV_ERROR_INVALID_ARG);
    if (rv_domain_set_iothread_params(dom, 1, p, 1, 0) < 0) {
        printf("FAIL: poll_max_ns 1000 after the refusals: %s\n", rv_last_error()->message);
        failures++;
    } else {
        printf("set poll_max_ns 1000\n");
    }

    rv_domain_free(dom);
    rv_connect_close(conn);
    return failures ? 1 : 0;
}
