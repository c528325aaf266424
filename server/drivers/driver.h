/* The hypervisor driver interface: how a driver opens and closes a
 * connection, and its slots (rv_driver_ops, generated from the .x: one per
 * procedure annotated @handler driver, taking the wire arguments and
 * filling the wire result).  Two drivers implement them: the test driver
 * (in memory, server/drivers/test) and the QEMU driver
 * (server/drivers/qemu); what they share about their objects is in
 * server/drivers/conf.  Also the helpers every driver needs to move
 * between the wire's domain references and its own. */
#ifndef RV_SERVER_DRIVER_H
#define RV_SERVER_DRIVER_H

#include <stddef.h>

/* The domain states (RV_DOMAIN_RUNNING, ...) are libvirt's public
 * virDomainState numbers, defined once in the values header that the
 * client library's public header includes too (not the library's API). */
#include "client/remvirt-values.gen.h"
#include "common/error.h"
#include "server/rv_driver_ops.gen.h"

/* The list flags RV_LIST_DOMAINS_* (virConnectListAllDomainsFlags) come
 * with common/error.h, generated from protocol/rv_values.x. */

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
/* libvirt's refusal of flags a call does not know: "unsupported flags
 * (0x..) in function func", INVALID_ARG in error domain from. */
int rv_driver_check_flags(int from, unsigned int flags, unsigned int known, const char *func,
                          rv_err *err);
/* DOMAIN_RENAME's new name (NULL: absent), checked as libvirt's API
 * entry point checks it (the client's library checks it first; a raw
 * call meets it here): -1 with its error when absent or empty. */
int rv_driver_rename_name_check(const char *name, rv_err *err);
/* The same after a call that filled ref and returned rc: -1 when rc is. */
int rv_dom_ref_put(int rc, rv_dom_ref *ref, rv_nonnull_domain *wire);
/* rc is a driver's result that put a string in *slot.  XDR can neither
 * send nor free a string over the protocol's bound, so one that long is
 * freed here and -1 returned with err set; otherwise rc. */
int rv_string_result(int rc, char **slot, rv_err *err);

/* ---- replies that come later ----
 * A slot that must wait (for QEMU's monitor, for a process) takes the call
 * it serves with rv_driver_defer() and returns RV_DEFERRED at once; later,
 * from the loop, it fills rv_deferred_ret() and calls rv_deferred_finish()
 * exactly once.  The reply then goes out with the call's serial, or
 * nowhere if the client has gone meanwhile.  Until then the call counts
 * against the client's max_client_requests.  A slot that answers at once
 * never touches any of this and costs nothing more. */
#define RV_DEFERRED 1
typedef struct rv_deferred rv_deferred;

/* Only from inside a slot, at most once: the call being served, which
 * the slot must then answer with RV_DEFERRED.  The slot's args and ret
 * pointers are valid only until it returns; use these instead.  NULL with
 * err set when out of memory (the slot returns -1). */
rv_deferred *rv_driver_defer(rv_err *err);
const void *rv_deferred_args(rv_deferred *d);
void *rv_deferred_ret(rv_deferred *d);
/* Send the reply: the result in rv_deferred_ret() when err is NULL, else
 * err.  Frees d, and the result and arguments with it. */
void rv_deferred_finish(rv_deferred *d, const rv_err *err);

/* Descriptor passing (Unix sockets only; elsewhere the calls that need
 * it never reach a slot).  rv_driver_call_fd: inside a slot, the idx-th
 * descriptor its call came with (CALL_WITH_FDS), borrowed until the call
 * is answered (dup it to keep it); -1 with libvirtd's error when there is
 * none.  rv_deferred_finish_fd: rv_deferred_finish with success, fd (taken)
 * sent with the reply (REPLY_WITH_FDS), or closed if the client is gone. */
int rv_driver_call_fd(unsigned idx, rv_err *err);
void rv_deferred_finish_fd(rv_deferred *d, int fd);

/* Run the call's slot again on its arguments, as if it had just come
 * (from the loop, never inside a slot): for a slot that deferred it only
 * to wait for something that has now happened; it may defer it again.
 * Frees d (a call whose client has gone is just dropped). */
void rv_deferred_rerun(rv_deferred *d);

/* One client's connection to a driver; the driver defines it. */
typedef struct rv_driver_conn rv_driver_conn;

/* What a driver may need from the daemon, once at start-up. */
struct ev_loop;
typedef struct rv_driver_setup {
    struct ev_loop *loop;
    /* The QEMU driver's directories and binary; NULL: its defaults. */
    const char *qemu_config_dir, *qemu_run_dir, *qemu_binary;
    const char *qemu_save_dir, *qemu_dump_dir;
    /* A pull backup's TLS credentials (NULL: /etc/pki/qemu), client certificates required. */
    const char *qemu_backup_tls_dir;
    int qemu_backup_tls_verify;
    /* A migration's TLS credentials (VIR_MIGRATE_TLS; NULL: /etc/pki/qemu). */
    const char *qemu_migrate_tls_dir;
    int qemu_migrate_tls_verify;
    /* Incoming migrations (qemu_migrate.c): the host the source is told
     * (NULL: this host's name), the ports QEMU may listen on. */
    const char *qemu_migration_host;
    int qemu_migration_port_min, qemu_migration_port_max;
    /* A peer-to-peer source's keepalive on its connection to the
     * destination (qemu_migrate_p2p.c): interval in seconds (<= 0: off),
     * PINGs unanswered before it is declared dead. */
    int qemu_keepalive_interval, qemu_keepalive_count;
    int qemu_migration_stall_timeout;   /* s an outgoing stream may send nothing; <= 0: never */
} rv_driver_setup;

typedef struct rv_driver {
    const char *name;                   /* "test" */
    /* Once when remvirtd starts, before any client (may be NULL): load
     * saved state, reattach what runs.  A failure only disables the
     * driver (it is logged, and said by open()). */
    void (*init)(const rv_driver_setup *setup);
    /* 1 if this driver serves uri ("test:///default"), else 0. */
    int (*probe)(const char *uri);
    int (*open)(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err);
    void (*close)(rv_driver_conn *c);
    /* Free the driver's global state (domains live beyond connections);
     * call once at daemon exit.  A later open() starts afresh.  May be NULL. */
    void (*cleanup)(void);
    /* Nonzero while the driver runs something the daemon must stay up
     * for (the QEMU driver: running guests): remvirtd's --timeout idle
     * exit waits.  NULL: never (the test driver's state is only kept
     * while remvirtd runs). */
    int (*busy)(void);

    /* Everything else: one slot per procedure (rv_driver_ops.gen.h). */
    rv_driver_ops ops;
} rv_driver;

/* ---- events ----
 * A driver reports every state change it makes, whichever client asked
 * for it, through rv_driver_lifecycle_event(); remvirtd sends it on to
 * the clients that subscribed.  The numbers are libvirt's
 * virDomainEventType (RV_EVENT_STARTED, ...) and the detail enums under it
 * (RV_EVENT_STARTED_BOOTED, ...), from common/rv_values.gen.h. */

/* Where events go: dom is only borrowed for the length of the call. */
typedef void (*rv_lifecycle_sink)(const rv_driver *drv, const rv_dom_ref *dom, int event,
                                  int detail, void *opaque);
void rv_driver_set_lifecycle_sink(rv_lifecycle_sink sink, void *opaque);
void rv_driver_lifecycle_event(const rv_driver *drv, const rv_dom_ref *dom, int event,
                               int detail);

/* Every other domain event: id (RV_DOMAIN_EVENT_ID_*) and, in the
 * member of u named after it, that event's callback message with its
 * fields filled; its domain and callbackID are the daemon's to fill.
 * Strings are only borrowed for the length of the call. */
typedef struct rv_dom_event {
    int id;
    union {
        rv_domain_event_callback_lifecycle_msg lifecycle;
        rv_domain_event_callback_reboot_msg reboot;
        rv_domain_event_callback_rtc_change_msg rtc_change;
        rv_domain_event_callback_watchdog_msg watchdog;
        rv_domain_event_callback_io_error_msg io_error;
        rv_domain_event_callback_graphics_msg graphics;
        rv_domain_event_callback_io_error_reason_msg io_error_reason;
        rv_domain_event_callback_control_error_msg control_error;
        rv_domain_event_callback_disk_change_msg disk_change;
        rv_domain_event_callback_tray_change_msg tray_change;
        rv_domain_event_callback_pmwakeup_msg pmwakeup;
        rv_domain_event_callback_pmsuspend_msg pmsuspend;
        rv_domain_event_callback_balloon_change_msg balloon_change;
        rv_domain_event_callback_pmsuspend_disk_msg pmsuspend_disk;
        rv_domain_event_callback_device_removed_msg device_removed;
        rv_domain_event_callback_tunable_msg tunable;
        rv_domain_event_callback_agent_lifecycle_msg agent_lifecycle;
        rv_domain_event_callback_device_added_msg device_added;
        rv_domain_event_callback_device_removal_failed_msg device_removal_failed;
        rv_domain_event_callback_metadata_change_msg metadata_change;
        rv_domain_event_callback_block_job_msg block_job;
        rv_domain_event_block_job_2_msg block_job_2;
        rv_domain_event_callback_migration_iteration_msg migration_iteration;
        rv_domain_event_callback_job_completed_msg job_completed;
        rv_domain_event_block_threshold_msg block_threshold;
        rv_domain_event_memory_failure_msg memory_failure;
        rv_domain_event_memory_device_size_change_msg memory_device_size_change;
    } u;
} rv_dom_event;
typedef void (*rv_domain_event_sink)(const rv_driver *drv, const rv_dom_ref *dom,
                                     const rv_dom_event *ev, void *opaque);
void rv_driver_set_domain_event_sink(rv_domain_event_sink sink, void *opaque);
void rv_driver_dom_event(const rv_driver *drv, const rv_dom_ref *dom, const rv_dom_event *ev);
/* Shorthands: an event with the domain only (RV_DOMAIN_EVENT_ID_REBOOT,
 * _CONTROL_ERROR, _PM*), or the domain and a device's alias
 * (RV_DOMAIN_EVENT_ID_DEVICE_ADDED, _DEVICE_REMOVED, _DEVICE_REMOVAL_FAILED). */
void rv_driver_domain_event(const rv_driver *drv, const rv_dom_ref *dom, int event_id);
void rv_driver_device_event(const rv_driver *drv, const rv_dom_ref *dom, int event_id,
                            const char *alias);
/* METADATA_CHANGE after DOMAIN_SET_METADATA: its type and uri (NULL
 * but for an element). */
void rv_driver_metadata_event(const rv_driver *drv, const rv_dom_ref *dom, int type,
                              const char *nsuri);

/* A block job's events (type VIR_DOMAIN_BLOCK_JOB_TYPE_*, status
 * VIR_DOMAIN_BLOCK_JOB_COMPLETED, _FAILED, _CANCELED, _READY): BLOCK_JOB
 * with the disk's source path (none when path is NULL) and BLOCK_JOB_2
 * with its target, both borrowed. */
void rv_driver_block_job_event(const rv_driver *drv, const rv_dom_ref *dom, const char *path,
                               const char *target, int type, int status);

/* Network lifecycle events (RV_NET_EVENT_*, detail 0) go the same way:
 * name and uuid are only borrowed for the length of the call. */
typedef void (*rv_network_sink)(const rv_driver *drv, const char *name,
                                const unsigned char uuid[16], int event, int detail,
                                void *opaque);
void rv_driver_set_network_sink(rv_network_sink sink, void *opaque);
void rv_driver_network_event(const rv_driver *drv, const char *name,
                             const unsigned char uuid[16], int event, int detail);

/* Storage pool events go the same way: event_id RV_POOL_EVENT_ID_LIFECYCLE
 * (event an RV_POOL_EVENT_*, detail 0) or RV_POOL_EVENT_ID_REFRESH (event
 * and detail unused); name and uuid are only borrowed. */
typedef void (*rv_pool_sink)(const rv_driver *drv, const char *name, const unsigned char uuid[16],
                             int event_id, int event, int detail, void *opaque);
void rv_driver_set_pool_sink(rv_pool_sink sink, void *opaque);
void rv_driver_pool_event(const rv_driver *drv, const char *name, const unsigned char uuid[16],
                          int event_id, int event, int detail);
/* Node device lifecycle events (libvirt's virNodeDeviceEventLifecycleType;
 * detail 0), by device name (borrowed). */
enum { RV_NODEDEV_EVENT_CREATED, RV_NODEDEV_EVENT_DELETED, RV_NODEDEV_EVENT_DEFINED,
       RV_NODEDEV_EVENT_UNDEFINED };
typedef void (*rv_nodedev_sink)(const rv_driver *drv, const char *name, int event,
                                void *opaque);
void rv_driver_set_nodedev_sink(rv_nodedev_sink sink, void *opaque);
void rv_driver_nodedev_event(const rv_driver *drv, const char *name, int event);

/* Secret events: event_id RV_SECRET_EVENT_ID_LIFECYCLE (event
 * RV_SECRET_EVENT_DEFINED or _UNDEFINED, detail 0) or _VALUE_CHANGED
 * (event unused); secret is only borrowed. */
enum { RV_SECRET_EVENT_DEFINED, RV_SECRET_EVENT_UNDEFINED };
typedef void (*rv_secret_sink)(const rv_driver *drv, const rv_nonnull_secret *secret,
                               int event_id, int event, void *opaque);
void rv_driver_set_secret_sink(rv_secret_sink sink, void *opaque);
void rv_driver_secret_event(const rv_driver *drv, const rv_nonnull_secret *secret, int event_id,
                            int event);

/* libvirt's public-API checks of a core dump (its words, error domain
 * VIR_FROM_DOMAIN): CRASH with LIVE or RESET, a format it does not know. */
int rv_driver_check_core_dump(unsigned int flags, unsigned int format, rv_err *err);

/* JOB_COMPLETED: a domain's job ended well, with its statistics (as
 * GET_JOB_STATS gives them; params and dom only borrowed). */
void rv_driver_job_completed_event(const rv_driver *drv, const rv_dom_ref *dom,
                                   const rv_typed_param *params, unsigned int nparams);

/* Whether any driver is busy (see rv_driver.busy). */
int rv_drivers_busy(void);

/* The drivers remvirtd knows, NULL-terminated. */
extern const rv_driver *const rv_drivers[];
extern const rv_driver rv_test_driver;
extern const rv_driver rv_qemu_driver;

/* The driver that serves uri (NULL uri: the first driver), or NULL with
 * err set to libvirt's "no connection driver available" error. */
const rv_driver *rv_driver_for_uri(const char *uri, rv_err *err);

#endif
