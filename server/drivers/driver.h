/* The hypervisor driver interface.  remvirtd's dispatch layer turns wire
 * calls into these; the test driver (in memory) implements them now, a
 * QEMU driver later.  Every function returns 0 (or a count) on success and
 * -1 with err set on failure, using libvirt's error codes so the wire error
 * matches what libvirtd sends.  Strings handed back are malloc'd and
 * become the caller's. */
#ifndef RV_SERVER_DRIVER_H
#define RV_SERVER_DRIVER_H

#include <stddef.h>

#include "common/error.h"

/* virDomainState values. */
enum {
    RV_DOMAIN_NOSTATE = 0,
    RV_DOMAIN_RUNNING = 1,
    RV_DOMAIN_BLOCKED = 2,
    RV_DOMAIN_PAUSED = 3,
    RV_DOMAIN_SHUTDOWN = 4,
    RV_DOMAIN_SHUTOFF = 5,
    RV_DOMAIN_CRASHED = 6,
    RV_DOMAIN_PMSUSPENDED = 7,
};

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

typedef struct rv_node_info {
    char model[32];                     /* NUL-terminated */
    unsigned long long memory_kib;
    int cpus, mhz, nodes, sockets, cores, threads;
} rv_node_info;

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

    /* ---- host ---- */
    int (*get_type)(rv_driver_conn *c, char **type, rv_err *err);         /* "TEST" */
    int (*get_version)(rv_driver_conn *c, unsigned long long *ver, rv_err *err);
    int (*get_hostname)(rv_driver_conn *c, char **hostname, rv_err *err);
    int (*get_capabilities)(rv_driver_conn *c, char **xml, rv_err *err);
    int (*node_get_info)(rv_driver_conn *c, rv_node_info *info, rv_err *err);
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
