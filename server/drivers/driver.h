/* The hypervisor driver interface: how a driver opens and closes a
 * connection, and its slots (rv_driver_ops, generated from the .x: one per
 * procedure annotated @handler driver, taking the wire arguments and
 * filling the wire result).  The test driver (in memory) implements them
 * now, a QEMU driver later.  Also the helpers every driver needs to move
 * between the wire's domain references and its own. */
#ifndef RV_SERVER_DRIVER_H
#define RV_SERVER_DRIVER_H

#include <stddef.h>

/* The domain states (RV_DOMAIN_RUNNING, ...) are libvirt's public
 * virDomainState numbers: the public header defines them, once. */
#include "client/remvirt.h"
#include "common/error.h"
#include "server/rv_driver_ops.gen.h"

/* virConnectListAllDomainsFlags the drivers understand. */
enum {
    RV_LIST_DOMAINS_ACTIVE = 1 << 0,
    RV_LIST_DOMAINS_INACTIVE = 1 << 1,
    RV_LIST_DOMAINS_PERSISTENT = 1 << 2,
    RV_LIST_DOMAINS_TRANSIENT = 1 << 3,
    RV_LIST_DOMAINS_RUNNING = 1 << 4,
    RV_LIST_DOMAINS_PAUSED = 1 << 5,
    RV_LIST_DOMAINS_SHUTOFF = 1 << 6,
    RV_LIST_DOMAINS_OTHER = 1 << 7,
    RV_LIST_DOMAINS_MANAGEDSAVE = 1 << 8,
    RV_LIST_DOMAINS_NO_MANAGEDSAVE = 1 << 9,
    RV_LIST_DOMAINS_AUTOSTART = 1 << 10,
    RV_LIST_DOMAINS_NO_AUTOSTART = 1 << 11,
    RV_LIST_DOMAINS_HAS_SNAPSHOT = 1 << 12,
    RV_LIST_DOMAINS_NO_SNAPSHOT = 1 << 13,
    RV_LIST_DOMAINS_HAS_CHECKPOINT = 1 << 14,
    RV_LIST_DOMAINS_NO_CHECKPOINT = 1 << 15,
};

/* A domain as the wire names it.  name is malloc'd and owned. */
typedef struct rv_dom_ref {
    char *name;
    unsigned char uuid[16];
    int id;                 /* -1 when not running */
} rv_dom_ref;

void rv_dom_ref_clear(rv_dom_ref *ref);
void rv_dom_refs_free(rv_dom_ref *refs, size_t n);

typedef struct rv_dom_info {
    int state;                          /* RV_DOMAIN_* */
    unsigned long long max_mem_kib;
    unsigned long long memory_kib;
    unsigned int nr_vcpu;
    unsigned long long cpu_time_ns;
} rv_dom_info;

/* The host as a driver describes it (the public rv_node_info is the
 * client's). */
typedef struct rv_driver_node_info {
    char model[32];                     /* NUL-terminated */
    unsigned long long memory_kib;
    int cpus, mhz, nodes, sockets, cores, threads;
} rv_driver_node_info;

/* A typed parameter for domain stats (virTypedParameterType values). */
typedef struct rv_param {
    char *field;
    int type;                           /* 1 int .. 7 string */
    union { int i; unsigned int ui; long long l; unsigned long long ul;
            double d; int b; char *s; } v;
} rv_param;

typedef struct rv_dom_stats {
    rv_dom_ref dom;
    rv_param *params;
    size_t nparams;
} rv_dom_stats;

void rv_dom_stats_free(rv_dom_stats *stats, size_t n);

/* ---- between the wire and a driver ---- */

/* The wire domain as a reference; the name is borrowed, not copied. */
rv_dom_ref rv_dom_ref_from_wire(const rv_nonnull_domain *wire);
/* Move ref into a wire domain: the name changes owner. */
void rv_dom_ref_to_wire(rv_nonnull_domain *wire, rv_dom_ref *ref);
/* rc is a driver's result that put a string in *slot.  XDR can neither
 * send nor free a string over the protocol's bound, so one that long is
 * freed here and -1 returned with err set; otherwise rc. */
int rv_string_result(int rc, char **slot, rv_err *err);

/* One client's connection to a driver; the driver defines it. */
typedef struct rv_driver_conn rv_driver_conn;

typedef struct rv_driver {
    const char *name;                   /* "test" */
    /* 1 if this driver serves uri ("test:///default"), else 0. */
    int (*probe)(const char *uri);
    int (*open)(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err);
    void (*close)(rv_driver_conn *c);
    /* Free the driver's global state (domains live beyond connections);
     * call once at daemon exit.  A later open() starts afresh.  May be NULL. */
    void (*cleanup)(void);

    /* Everything else: one slot per procedure (rv_driver_ops.gen.h). */
    rv_driver_ops ops;
} rv_driver;

/* ---- events ----
 * A driver reports every state change it makes, whichever client asked
 * for it, through rv_driver_lifecycle_event(); remvirtd sends it on to
 * the clients that subscribed.  The numbers are libvirt's
 * virDomainEventType and the detail enums under it. */
enum {
    RV_EVENT_DEFINED = 0,           /* detail: 0 added, 1 updated */
    RV_EVENT_UNDEFINED = 1,         /* 0 removed */
    RV_EVENT_STARTED = 2,           /* 0 booted */
    RV_EVENT_SUSPENDED = 3,         /* 0 paused */
    RV_EVENT_RESUMED = 4,           /* 0 unpaused */
    RV_EVENT_STOPPED = 5,           /* 0 shutdown, 1 destroyed */
};
enum {
    RV_EVENT_DEFINED_ADDED = 0,
    RV_EVENT_DEFINED_UPDATED = 1,
    RV_EVENT_UNDEFINED_REMOVED = 0,
    RV_EVENT_STARTED_BOOTED = 0,
    RV_EVENT_SUSPENDED_PAUSED = 0,
    RV_EVENT_RESUMED_UNPAUSED = 0,
    RV_EVENT_STOPPED_SHUTDOWN = 0,
    RV_EVENT_STOPPED_DESTROYED = 1,
};

/* Where events go: dom is only borrowed for the length of the call. */
typedef void (*rv_lifecycle_sink)(const rv_driver *drv, const rv_dom_ref *dom, int event,
                                  int detail, void *opaque);
void rv_driver_set_lifecycle_sink(rv_lifecycle_sink sink, void *opaque);
void rv_driver_lifecycle_event(const rv_driver *drv, const rv_dom_ref *dom, int event,
                               int detail);

/* The drivers remvirtd knows, NULL-terminated. */
extern const rv_driver *const rv_drivers[];
extern const rv_driver rv_test_driver;

/* The driver that serves uri (NULL uri: the first driver), or NULL with
 * err set to libvirt's "no connection driver available" error. */
const rv_driver *rv_driver_for_uri(const char *uri, rv_err *err);

#endif
