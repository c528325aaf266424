/* The test driver's own interface, in its native types: test_ops.c adapts
 * it to the wire-typed driver slots remvirtd calls, and the unit test
 * (tests/unit/test-driver.c) calls it directly.  Every function returns 0
 * (or a count) on success and -1 with err set on failure, with libvirt's
 * error codes; strings handed back are malloc'd and become the caller's. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_DRIVER_H
#define RV_SERVER_DRIVERS_TEST_TEST_DRIVER_H

#include "server/drivers/driver.h"
#include "server/drivers/test/test_domain_xml.h"

/* Every wire slot function of the driver, test_<slot> (test_ops.c lists
 * those it serves). */
RV_DRIVER_SLOTS(test_)

/* An error in domain TEST (libvirt's test driver says TEST in them). */
#define test_fail(err, code, ...) rv_err_fail((err), RV_FROM_TEST, (code), __VA_ARGS__)

typedef struct test_native {
    int (*probe)(const char *uri);
    int (*open)(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err);
    void (*close)(rv_driver_conn *c);
    void (*cleanup)(void);

    /* ---- host ---- */
    int (*get_type)(rv_driver_conn *c, char **type, rv_err *err);         /* "TEST" */
    int (*get_version)(rv_driver_conn *c, unsigned long long *ver, rv_err *err);
    int (*get_hostname)(rv_driver_conn *c, char **hostname, rv_err *err);
    int (*get_capabilities)(rv_driver_conn *c, char **xml, rv_err *err);
    int (*node_get_info)(rv_driver_conn *c, rv_driver_node_info *info, rv_err *err);
    int (*node_get_security_model)(rv_driver_conn *c, char **model, char **doi, rv_err *err);

    /* ---- lists and lookups ---- */
    int (*num_of_domains)(rv_driver_conn *c, rv_err *err);               /* running ones */
    int (*list_domain_ids)(rv_driver_conn *c, int *ids, int max, rv_err *err);
    /* All domains matching flags (RV_LIST_DOMAINS_*), sorted as libvirt
     * does (running by id, then inactive by name); returns the count. */
    int (*list_all_domains)(rv_driver_conn *c, unsigned int flags, rv_dom_ref **doms,
                            rv_err *err);
    int (*lookup_by_id)(rv_driver_conn *c, int id, rv_dom_ref *out, rv_err *err);
    int (*lookup_by_name)(rv_driver_conn *c, const char *name, rv_dom_ref *out, rv_err *err);
    int (*lookup_by_uuid)(rv_driver_conn *c, const unsigned char uuid[16], rv_dom_ref *out,
                          rv_err *err);

    /* ---- definition and lifecycle; dom identifies by uuid ---- */
    int (*define_xml)(rv_driver_conn *c, const char *xml, unsigned int flags, rv_dom_ref *out,
                      rv_err *err);
    int (*create_xml)(rv_driver_conn *c, const char *xml, unsigned int flags, rv_dom_ref *out,
                      rv_err *err);
    int (*undefine)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_err *err);
    /* Start a defined domain; out gets its new identity (id). */
    int (*create)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_dom_ref *out,
                  rv_err *err);
    int (*destroy)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_err *err);
    int (*shutdown)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_err *err);
    int (*reboot)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, rv_err *err);
    int (*suspend)(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err);
    int (*resume)(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err);
    int (*managed_save_remove)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                               rv_err *err);

    /* ---- queries ---- */
    int (*get_info)(rv_driver_conn *c, const rv_dom_ref *dom, rv_dom_info *info, rv_err *err);
    int (*get_state)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, int *state,
                     int *reason, rv_err *err);
    int (*get_xml_desc)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags, char **xml,
                        rv_err *err);
    int (*get_os_type)(rv_driver_conn *c, const rv_dom_ref *dom, char **type, rv_err *err);
    int (*get_autostart)(rv_driver_conn *c, const rv_dom_ref *dom, int *autostart, rv_err *err);
    int (*is_active)(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err);       /* 0/1 */
    int (*is_persistent)(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err);   /* 0/1 */
    /* How many snapshots the domain has (virsh undefine asks). */
    int (*snapshot_num)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                        rv_err *err);
    int (*has_managed_save_image)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                                  rv_err *err);                                    /* 0/1 */
    /* label may be "" (no label); enforcing 0/1. */
    int (*get_security_label)(rv_driver_conn *c, const rv_dom_ref *dom, char **label,
                              int *enforcing, rv_err *err);
    /* Returns the count of messages put in *msgs (a malloc'd array). */
    int (*get_messages)(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                        char ***msgs, rv_err *err);
    /* doms NULL/ndoms 0: every domain matching flags.  Returns the count. */
    int (*get_all_domain_stats)(rv_driver_conn *c, const rv_dom_ref *doms, size_t ndoms,
                                unsigned int stats, unsigned int flags, rv_dom_stats **out,
                                rv_err *err);
} test_native;

extern const test_native rv_test_native;

/* A domain as the statistics slots (test_stats.c) see it: borrowed, valid
 * until the next call that changes domains. */
typedef struct test_dom_view {
    const rv_test_def *def;         /* what runs, or the only definition */
    const rv_test_def *config;      /* the persistent definition */
    int id;                         /* -1 when not running */
    int state;                      /* RV_DOMAIN_* */
    int persistent;
    int time_set;                   /* DOMAIN_SET_TIME's clock, when set */
    long long time_sec;
    unsigned int time_nsec;
} test_dom_view;

/* The driver's domains (conf/domlist.h), for test_ops.c's list calls. */
const struct rv_dom_list *test_doms(void);

/* The domain the wire names, or -1 with libvirt's "no domain" error. */
int test_dom_view_get(const rv_nonnull_domain *wire, test_dom_view *out, rv_err *err);

/* ---- a domain, for the families that change it (test_snapshot.c) ---- */

typedef struct rv_snap_tree test_snaps;   /* server/drivers/conf/snapshot_tree.h */
typedef struct test_dom test_dom;
struct test_dom {
    rv_test_def *def;           /* what runs, or the only definition */
    rv_test_def *next_def;      /* persistent definition waiting for the stop */
    int id;                     /* -1 when not running */
    int state, reason;          /* RV_DOMAIN_* and its reason */
    int persistent;
    int autostart;              /* DOMAIN_SET_AUTOSTART: kept, never acted on */
    int managed_save;           /* DOMAIN_MANAGED_SAVE left an image (in memory) */
    test_snaps *snaps;          /* its snapshots (test_snapshot.c); NULL: none yet */
    test_snaps *checkpoints;    /* its checkpoints (test_checkpoint.c); NULL: none yet */
    /* The guest clock DOMAIN_SET_TIME gave (test_tune.c); kept across
     * restarts, as libvirt keeps it with the domain object. */
    int time_set;
    long long time_sec;
    unsigned int time_nsec;
    int frozen;                 /* FSFREEZE: bit 0 "/", bit 1 "/boot" (test_input.c) */
};

/* Free a domain's checkpoints (test_checkpoint.c). */
void test_checkpoints_free(test_snaps *t);

/* The domain ref names (by uuid), or NULL with libvirt's error. */
test_dom *test_dom_get(const rv_dom_ref *ref, rv_err *err);
/* A lifecycle event about d to the subscribers. */
void test_dom_emit(const test_dom *d, int event, int detail);
/* Change d's state and reason, without events: running takes a new id
 * unless d has one; stopped keeps a transient domain (the caller decides). */
void test_dom_set_running(test_dom *d, int reason);
void test_dom_set_stopped(test_dom *d, int reason);
/* Stop d with the event STOPPED/detail: a transient domain is freed then
 * (d must not be used after), a persistent one takes its waiting
 * definition. */
void test_dom_stop(test_dom *d, int reason, int detail);

/* The driver's errors: libvirt's refusal of unknown flags, naming func,
 * and no memory (error domain TEST). */
int test_check_flags(unsigned int flags, unsigned int known, const char *func, rv_err *err);
int test_fail_oom(rv_err *err);

/* rv_test_driver (test_ops.c) shares these with rv_test_native. */
int test_probe(const char *uri);
int test_open(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err);
void test_close(rv_driver_conn *c);
void test_cleanup(void);

#endif
