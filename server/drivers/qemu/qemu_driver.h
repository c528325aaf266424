/* The QEMU driver's own types, shared by its files:
 *   qemu_driver.c   the driver: directories, start-up, the domain slots
 *   qemu_host.c     the host: capabilities, node info, CPU time, memory
 *   qemu_cpu.c      CPU models, from a probe QEMU
 *   qemu_cputime.c  a running guest's CPU times
 *   qemu_domain.c   its domains in the shared list (conf/domlist.h)
 *   qemu_ops.c      the wire slot table
 *   qemu_store.c    files: definitions (atomic writes), runtime status
 *   qemu_sync.c, qemu_defwrite.c   durable writes off the loop
 *   qemu_process.c  QEMU processes and per-domain jobs, on the loop
 *   qemu_spawner.c  the helper process that forks QEMUs
 *   qemu_save.c     save images: managed save, save, restore; core dumps
 *   qemu_migrate.c  live migration, both ends (BEGIN3 ... CONFIRM3)
 *   qemu_migrate_cookie.c  its cookie, as libvirtd reads it
 *   qemu_migrate_storage.c  its non-shared disks, copied over NBD
 *   qemu_migrate_caps.c  its capabilities (compression, multifd, ...) and TLS
 *   qemu_migrate_p2p.c  peer to peer: the source drives the destination
 *   qemu_migrate_tunnel.c  tunnelled: QEMU's stream through the daemons
 *   qemu_jobinfo.c  a domain's long job: GET_JOB_INFO, GET_JOB_STATS, ABORT_JOB
 *   qemu_migtune.c  migration tuning: downtime, bandwidth, XBZRLE cache, post-copy
 *   qemu_agent.c    the guest agent; qemu_console.c the serial console
 *   qemu_stats.c, qemu_tune.c, qemu_pin.c, qemu_iotune.c, qemu_cgtune.c
 *                   statistics and tuning; qemu_live.c what their calls that
 *                   wait for QMP share; qemu_domcaps.c domain capabilities
 *   qmp.c, command.c, domain_xml.c, domain_devices.c, domain_tune.c
 *                   QMP, the command line and the domain XML (their own headers)
 * and the other families, each with its header: networks (qemu_network.c,
 * qemu_netnat.c, qemu_link.c), storage (qemu_storage.c), node devices
 * (qemu_nodedev.c, qemu_nodedev_define.c), secrets and network filters
 * (qemu_secret.c, qemu_nwfilter.c), snapshots (qemu_snapshot.c).
 *
 * A domain has a persistent definition (def, NULL when transient) and,
 * while it runs, the live one (live).  Every state change goes through a
 * job: one at a time per domain, the others wait in order.  Reads never
 * wait: they look at the domain as it is. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_DRIVER_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_DRIVER_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <ev.h>

#include "server/drivers/conf/domlist.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/driver.h"
#include "server/drivers/qemu/cpuid.h"
#include "server/drivers/qemu/domain_xml.h"
#include "server/drivers/qemu/qemu_jobinfo.h"
#include "server/drivers/qemu/qmp.h"

/* Every wire slot function of the driver, rv_qemu_<slot> (qemu_ops.c
 * lists those it serves). */
RV_DRIVER_SLOTS(rv_qemu_)

typedef enum qemu_job_kind {
    QJOB_START,
    QJOB_DESTROY,
    QJOB_SUSPEND,
    QJOB_RESUME,
    QJOB_SHUTDOWN,
    QJOB_REBOOT,
    QJOB_RESET,
    QJOB_SAVE,                  /* to path, or the managed image */
    QJOB_DUMP,                  /* a core dump to path (flags: RV_DUMP_*, the format
                                 * in bits 24-31) */
    QJOB_AGENT_HOSTNAME,        /* a guest agent query (qemu_agent.c) */
    QJOB_AGENT_GET_TIME,        /* the guest's clock, through its agent */
    QJOB_AGENT_SET_TIME,        /* set it: path is the time in ns (decimal), NULL: from its RTC */
    QJOB_AGENT_CALL,            /* a call's agent command (agent_cmd), path its
                                 * arguments in JSON (NULL: none) */
    QJOB_MIGRATE_OUT,           /* PERFORM3: the stream to path (QEMU's URI) */
} qemu_job_kind;

/* Migration's own flags of START (an incoming migration: -incoming defer),
 * DESTROY (the guest migrated away) and RESUME (an outgoing migration
 * failed): the states and events say so. */
#define QJOB_MIGRATE_IN 0x40000000u

/* A START job's flag of its own beside RV_DOMAIN_START_*: a restore that
 * runs the guest whatever the image says. */
#define QJOB_RESTORE_RUNNING 0x80000000u

typedef struct qemu_job {
    qemu_job_kind kind;
    unsigned int flags;
    rv_deferred *reply;         /* the call to answer; NULL: nobody waits (autostart) */
    rv_nonnull_domain *ret_dom; /* in reply's result: the domain, filled on success */
    char *path;                 /* SAVE: the file (NULL: managed); START: an image
                                 * to restore (NULL: the managed one if any) */
    /* START with RV_DOMAIN_START_AUTODESTROY: the connection the guest
     * dies with (NULL once it closed: the guest is destroyed as it starts). */
    const rv_driver_conn *owner;
    const struct rv_qemu_agent_cmd *agent_cmd;  /* AGENT_CALL's */
    rv_err fail;                /* set: what reply gets even when the job succeeds
                                 * (a peer-to-peer migration's error, after the
                                 * resume that undoes it) */
    struct qemu_job *next;
} qemu_job;

/* A change of a durable file, done by the store helper (qemu_sync.c):
 * done(error) from the loop with 0, the errno that stopped it, or -1 (the
 * helper died). */
typedef struct rv_qemu_sync {
    struct store_req *req;      /* NULL: nothing under way */
    void (*done)(struct rv_qemu_sync *s, int error);
    void *data;
} rv_qemu_sync;

/* A write threshold set on a disk's storage node (qemu_events.c). */
typedef struct qemu_threshold {
    char *node;                 /* QEMU's node name */
    char *dev;                  /* the disk's target, as the event names it */
    char *path;                 /* its source */
    struct qemu_threshold *next;
} qemu_threshold;

/* The largest pre-copy migration bandwidth in MiB/s (INT64_MAX bytes/s,
 * QEMU's limit), and a domain's until it is set: libvirtd's. */
#define RV_QEMU_MIG_BANDWIDTH_MAX (INT64_MAX / (1024 * 1024))
/* An outgoing migration of the domain, as START_POST_COPY sees it. */
enum { RV_QEMU_MIGOUT_NONE, RV_QEMU_MIGOUT_PRECOPY, RV_QEMU_MIGOUT_POSTCOPY };
/* A domain's migration tuning that remvirtd keeps itself (qemu_migtune.c
 * sets it; the migration code reads it).  The downtime, the post-copy
 * bandwidth and the XBZRLE cache size are kept by QEMU alone (asked with
 * query-migrate-parameters) and go with its process, as with libvirtd. */
/* A migration's capabilities and parameters from the client's flags and
 * typed parameters (qemu_migrate_caps.c), kept on the domain from
 * PREPARE3 / PERFORM3 until its QEMU is set up. */
typedef struct rv_qemu_migcaps {
    unsigned int flags;         /* COMPRESSED, AUTO_CONVERGE, TLS, PARALLEL as given */
    bool xbzrle, mt;            /* compression methods */
    bool has_mt_level, has_mt_threads, has_mt_dthreads, has_xbzrle_cache;
    bool has_ac_initial, has_ac_increment, has_connections;
    int mt_level, mt_threads, mt_dthreads, ac_initial, ac_increment, connections;
    unsigned long long xbzrle_cache;
    char tls_hostname[256];     /* the source's: tls.destination, else the URI's host */
    bool tls_added;             /* QEMU has the TLS credentials object */
} rv_qemu_migcaps;

typedef struct rv_qemu_migtune {
    /* MIGRATE_SET_MAX_SPEED's, MiB/s: what an outgoing migration is to
     * use unless its call gives a bandwidth; kept while the domain is
     * known (shut off, restarted), not across remvirtd's restart. */
    unsigned long long max_bandwidth;
    /* RV_QEMU_MIGOUT_*: an outgoing migration under way, _POSTCOPY when
     * started with VIR_MIGRATE_POSTCOPY (the migration code sets it and
     * clears it when the migration ends). */
    int outgoing;
} rv_qemu_migtune;

typedef struct qemu_dom {
    rv_qemu_domain_def *def;    /* persistent definition; NULL: transient */
    rv_qemu_domain_def *live;   /* while active */
    bool autostart;
    /* Started with RV_DOMAIN_START_AUTODESTROY: destroyed when this
     * connection closes (libvirtd's rule); NULL otherwise. */
    const rv_driver_conn *autodestroy;
    int state, reason;          /* RV_DOMAIN_*, and the reason under it */
    int id;                     /* -1 when inactive */
    pid_t pid;                  /* 0 when no process */
    unsigned long long start_time; /* the process's, from /proc (0: unknown) */
    bool our_child;             /* spawned by this remvirtd (reaped by it) */
    rv_qmp *qmp;
    char *monitor_path;
    /* Jobs: the head runs, the rest wait in order. */
    qemu_job *jobs, **jobs_tail;
    /* Stopping the process: why (an RV_DOMAIN_SHUTOFF_* reason and the
     * STOPPED event detail), and the escalation from quit to SIGKILL. */
    bool stopping;
    int stop_reason, stop_detail;
    bool guest_shutdown;        /* SHUTDOWN came from QEMU before the exit */
    bool fake_reboot;           /* a reboot sent the power button: the guest's
                                 * power-off restarts it, whatever on_poweroff */
    unsigned long long balloon_kib; /* the guest's memory as the balloon says
                                     * (BALLOON_CHANGE); 0: not known yet */
    bool restarting;            /* reset and cont sent after a power-off: the
                                 * STOP before is not a pause, the RESUME is
                                 * the new boot */
    ev_timer stop_timer;
    double stop_started;
    bool graceful, sent_term, sent_kill;
    bool reaped;                /* our child's exit was collected */
    bool vcpus_unplugged;       /* a vcpu was unplugged from this QEMU process */
    bool starting;              /* a START job is bringing it up */
    off_t log_start;            /* where this run's output begins in the log */
    rv_err start_err;           /* why a start failed, until the process is gone */
    ev_timer pump;              /* runs the next job from the loop */
    /* Save and restore (qemu_save.c). */
    struct qemu_save_op *save;  /* a save (or a core dump) under way */
    rv_qemu_jobinfo *job_now;   /* the long job under way (qemu_jobinfo.h) */
    rv_qemu_jobinfo *job_last;  /* the last one that completed */
    bool restoring;             /* the start is an incoming migration */
    int migrate_port;           /* an incoming migration's listening port; 0: none */
    bool migrate_in;            /* arrived by migration, FINISH3 not yet done */
    struct qemu_migrate_finish *migrate_finish;  /* FINISH3 waiting for the stream */
    struct qemu_p2p *p2p;       /* a peer-to-peer migration of it under way */
    bool migrate_tunnel;        /* incoming tunnelled (qemu_migrate_tunnel.c): */
    int migrate_tunnel_fd;      /* the stream's pipe for QEMU until passed; -1 after */
    bool migrated_out;          /* its outgoing stream completed: CONFIRM3 may stop it */
    /* The connection whose PREPARE3 made it, until FINISH3 is called:
     * its close destroys the waiting QEMU (qemu_migrate_recover.c). */
    const struct rv_driver_conn *migrate_in_conn;
    struct rv_qemu_migstall *migstall;  /* PERFORM3's watch for a stalled stream */
    struct rv_qemu_migstore *migstore;  /* its disks copied over NBD (qemu_migrate_storage.c) */
    struct rv_qemu_postcopy *postcopy;  /* a post-copy migration (qemu_migrate_postcopy.c) */
    /* BEGIN3 with CHANGE_PROTECTION to CONFIRM3: the connection whose
     * migration holds the domain (other changes refused); NULL: none. */
    const struct rv_driver_conn *migration_owner;
    bool restore_run;           /* ... then cont (else stay paused) */
    char *restore_managed;      /* the managed image it reads: removed once restored */
    bool restore_committed;     /* the image is in this QEMU, and .status says so:
                                 * the restore is finished, even by a restart */
    rv_qemu_sync restore_sync;  /* the managed image's removal (or FORCE_BOOT's) */
    rv_qemu_sync status_sync;   /* a status write that a start waits for, or
                                 * the removal that a stop's answer waits for */
    rv_err gone_err;            /* that answer, while it waits */
    ev_timer migrate_poll;      /* query-migrate until the migration ends */
    void (*migrate_done)(struct qemu_dom *d, const rv_err *err);
    bool job_busy;              /* the head job has begun */
    /* Calls waiting for a start, stop or monitor connection to end. */
    struct monitor_waiter *monitor_waiters;
    ev_timer monitor_wait;      /* the first of their deadlines */
    struct qemu_agent_op *agent; /* a guest agent exchange under way (qemu_agent.c) */
    /* Booted, and the guest has not opened the agent's port since
     * (VSERPORT_CHANGE): libvirtd's "not connected", refused at once. */
    bool agent_unopened;
    int agent_timeout;          /* seconds to wait for the agent, or RV_QEMU_AGENT_TIMEOUT_*
                                 * (AGENT_SET_RESPONSE_TIMEOUT; while remvirtd runs) */
    /* Definition writes (qemu_defwrite.c): the head's child runs, the
     * rest wait in order. */
    struct qemu_def_write *def_writes;
    struct rv_qemu_cpu_files *cpu_files;   /* qemu_cputime.c; NULL: none open */
    qemu_threshold *thresholds; /* set and not yet crossed (qemu_events.c) */
    rv_qemu_migtune migtune;
    rv_qemu_migcaps migcaps;
} qemu_dom;

/* The driver's global state: domains outlive connections. */
typedef struct qemu_state {
    bool loaded;
    struct ev_loop *loop;
    char *config_dir;           /* <name>.xml, autostart/<name>.xml */
    char *run_dir;              /* <name>.status, <name>.xml, <name>.qmp, <name>.log */
    char *save_dir;             /* <name>.save: managed save images */
    char *dump_dir;             /* <name>-<time>: a watchdog's automatic core dumps */
    char *binary;
    char *backup_tls_dir;       /* a pull backup's <server tls='yes'>: QEMU's x509 credentials */
    bool backup_tls_verify;     /* ... clients must show a certificate */
    char *migrate_tls_dir;      /* VIR_MIGRATE_TLS: QEMU's x509 credentials (qemu_migrate_caps.c) */
    bool migrate_tls_verify;    /* ... the peer must show a certificate */
    char *migration_host;       /* told to migration sources; NULL: the host name */
    int migration_port_min, migration_port_max;
    int keepalive_interval, keepalive_count;   /* on a p2p source's destination connection */
    int migration_stall_timeout;    /* s (qemu_migrate_recover.c); <= 0: never */
    bool kvm;
    bool privileged;
    unsigned long long qemu_version;    /* major*1e6 + minor*1e3 + micro, 0: unknown */
    rv_dom_list doms;           /* of qemu_dom (qemu_domain.c) */
    int next_id;
} qemu_state;

extern qemu_state rv_qemu;

/* ---- qemu_driver.c: the driver's entry points (rv_driver) ---- */
void rv_qemu_init(const rv_driver_setup *setup);
int rv_qemu_probe(const char *uri);
int rv_qemu_open(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err);
void rv_qemu_close(rv_driver_conn *c);
void rv_qemu_cleanup(void);

/* ---- qemu_domain.c: the domains in the shared list ---- */
extern const rv_dom_kind rv_qemu_dom_kind;
/* A new, inactive domain in the list, for def's name and UUID (which
 * the caller sets as its def or live next); NULL: no memory. */
qemu_dom *rv_qemu_dom_new(const rv_qemu_domain_def *def);
/* The reference a client sees (name copied). */
int rv_qemu_dom_ref(const qemu_dom *d, rv_dom_ref *ref);
const rv_qemu_domain_def *rv_qemu_dom_def(const qemu_dom *d);   /* live, else def */
/* Has a definition, persistent or live: a domain with neither (undefined
 * or stopped, about to be dropped) is invisible to every call. */
bool rv_qemu_dom_visible(const qemu_dom *d);
qemu_dom *rv_qemu_find_name(const char *name);
qemu_dom *rv_qemu_find_uuid(const unsigned char uuid[16]);
/* libvirt's check that def may stand: -1 with its error when another
 * domain has its name or its UUID; else *found is the domain def
 * redefines (NULL: a new one). */
int rv_qemu_dom_check_conflict(const rv_qemu_domain_def *def, qemu_dom **found, rv_err *err);
/* Domain is running, paused, ... (has a process or is starting). */
bool rv_qemu_dom_active(const qemu_dom *d);
/* Forget every domain (daemon exit: the guests run on). */
void rv_qemu_doms_free(void);
/* Drop a domain that is neither active nor persistent, nor has jobs. */
void rv_qemu_dom_forget_if_gone(qemu_dom *d);
/* Set state and reason; send the event when event >= 0. */
void rv_qemu_dom_set_state(qemu_dom *d, int state, int reason, int event, int detail);
/* The domain a wire reference names, or NULL with VIR_ERR_NO_DOMAIN. */
qemu_dom *rv_qemu_dom_get(const rv_nonnull_domain *wire, rv_err *err);
/* The same, refused with libvirtd's "domain is not running" when it is
 * not active. */
qemu_dom *rv_qemu_dom_get_running(const rv_nonnull_domain *wire, rv_err *err);
/* The same with the error in domain DOMAIN, as libvirtd's check of the
 * domain object words it (virDomainObjCheckActive) where a call makes it. */
qemu_dom *rv_qemu_dom_get_active(const rv_nonnull_domain *wire, rv_err *err);
/* Fill a wire domain (name copied). */
int rv_qemu_put_dom(const qemu_dom *d, rv_nonnull_domain *wire, rv_err *err);
/* The domain passes LIST_ALL_DOMAINS' filter flags. */
bool rv_qemu_list_match(const qemu_dom *d, unsigned int filters);

/* ---- qemu_store.c ---- */
/* A whole small file, NUL-terminated, at most max bytes; NULL on error
 * (errno says why). */
char *rv_qemu_read_file(const char *path, size_t max);
char *rv_qemu_path(const char *dir, const char *name, const char *suffix);
/* Remove dir/<name><suffix>; a failure but "not there" is logged. */
void rv_qemu_remove_file(const char *dir, const char *name, const char *suffix);
/* Write text to path atomically: temp file, rename; durable: with fsync
 * of the file before and of its directory after. */
int rv_qemu_write_file(const char *path, const char *text, bool durable, rv_err *err);
int rv_qemu_mkdirs(const char *path, rv_err *err);
int rv_qemu_set_autostart_link(const char *name, bool on, rv_err *err);
/* Runtime status of an active domain: pid, id, state, its block jobs,
 * its live XML, written by the store helper (the loop does not touch the
 * disk) in the order asked; a failure is logged. */
int rv_qemu_save_status(const qemu_dom *d, rv_err *err);
/* The largest status read back (a few lines, one per block job). */
#define RV_QEMU_STATUS_MAX (64u * 1024)
/* The same, and d->status_sync's done (set by the caller) is called once
 * the status is in place, or with the error that kept it out. */
int rv_qemu_save_status_acked(qemu_dom *d, rv_err *err);
/* Remove a domain's runtime files, the status first, status and live XML
 * by the store helper after the writes queued before; s (NULL: none) is
 * answered when they are gone.  -1 (logged): s will not be answered. */
int rv_qemu_remove_runtime(const char *name, rv_qemu_sync *s);
/* At start-up: remove the symlinks in dir whose target is gone (an
 * undefine killed between its definition and its autostart link). */
void rv_qemu_drop_dangling_links(const char *dir);
/* A family of definitions kept one per file in a directory. */
typedef struct rv_qemu_def_family {
    const char *what;           /* "domain", "network", ...: for the log */
    const char *unique_what;    /* what *unique is, for the log; NULL: none */
    size_t max;                 /* the largest file accepted, in bytes */
    /* The definition in text (NUL-terminated), or NULL with err set;
     * *uuid (always), *name (left NULL for a family without names: the
     * file is then <uuid>.xml, else <name>.xml) and *unique (what else
     * must be unique, if anything: a secret's usage) point into it. */
    void *(*parse)(const char *text, const char **name, const unsigned char **uuid,
                   const char **unique, void *opaque, rv_err *err);
    /* Takes def, read from path: the only one of its UUID (and unique)
     * in the directory.  (opaque: rv_qemu_load_defs's, here and above.) */
    void (*add)(void *def, const char *path, void *opaque);
    void (*free)(void *def);
} rv_qemu_def_family;
/* At start-up: every <name>.xml in dir, in file name order, to fam->add.
 * Refused with a log line naming the file: one over fam->max bytes, not
 * a regular file, that does not parse, or not named after what it
 * defines; every file whose UUID (or unique) another file has too (the
 * line names both; neither is loaded: which one is right is the
 * operator's call).
 * Leftovers of interrupted writes go first (rv_qemu_clean_temp_files). */
void rv_qemu_load_defs(const char *dir, const rv_qemu_def_family *fam, void *opaque);
/* A family of objects defined one per file, <name>.xml, in
 * config_dir/<sub> (the persistent ones), their autostart links in its
 * autostart/, and a copy in run_dir/<sub> while active: networks and
 * storage pools.  Its objects, in list, begin with their definition (as
 * the list's kind reads an object). */
typedef struct rv_qemu_family {
    rv_qemu_def_family files;   /* what, max and free (parse and add: its loader's) */
    const char *sub;
    int from;                   /* the error domain */
    rv_obj_list *list;
    /* The definition in xml, or NULL with err set. */
    void *(*parse)(const char *xml, rv_err *err);
    /* At start-up: a new object in list for def (taken then), read from
     * the config dir (persistent) or the run dir (a transient one that
     * runs); NULL with err. */
    void *(*add)(void *def, bool persistent, rv_err *err);
    /* At start-up: def (taken), read from the run dir, is obj's: it runs. */
    void (*ran)(void *obj, void *def);
    char *config_dir, *autostart_dir, *run_dir;     /* rv_qemu_family_load's */
    bool loading_config;
} rv_qemu_family;
/* fam's directories and its definitions loaded from both, dangling
 * autostart links dropped first.  -1 (logged) when memory is short. */
int rv_qemu_family_load(rv_qemu_family *fam);
void rv_qemu_family_free(rv_qemu_family *fam);
/* Whether name's autostart link is there; make (on) or remove it. */
bool rv_qemu_family_autostart(const rv_qemu_family *fam, const char *name);
int rv_qemu_family_set_autostart(const rv_qemu_family *fam, const char *name, bool on,
                                 rv_err *err);
/* The run file of name, an active object (xml taken): not fsynced
 * (crash-safety rule 1); removed (rv_qemu_remove_file) when it stops. */
int rv_qemu_family_save_run(const rv_qemu_family *fam, const char *name, char *xml, rv_err *err);
/* Remove the temporary files that writes interrupted by a kill left in
 * dir ("<file>.tmpXXXXXX", "<file>.tmp"): at start-up, when no write
 * can be under way. */
void rv_qemu_clean_temp_files(const char *dir);
/* At start-up: the defined domains, then the runtime of those that ran. */
void rv_qemu_load_all(void);
/* The last lines (at most 1 KiB) of a domain's log written after offset
 * from, on one line, for an error (malloc'd, maybe ""; NULL: no memory). */
char *rv_qemu_log_tail(const char *name, off_t from);

/* ---- qemu_sync.c: the store helper ---- */
/* Fork the helper (once; again after it died, at the next request). */
int rv_qemu_store_init(rv_err *err);
void rv_qemu_store_cleanup(void);
/* Make a file durable under path: when text is not NULL, written to
 * tmp_path (its directories made) and fsynced; else fd, which remvirtd
 * wrote as tmp_path (the caller keeps fd), fsynced; then renamed to
 * path and the directory fsynced.  s->done and s->data set by the
 * caller; requests run one after the other, in the order asked. */
int rv_qemu_sync_start(rv_qemu_sync *s, int fd, const char *text, const char *tmp_path,
                       const char *path, rv_err *err);
/* The same with text, through "<path>.tmp". */
int rv_qemu_sync_write(rv_qemu_sync *s, const char *path, const char *text, rv_err *err);
/* fsync fd (the file at path, named in messages) and nothing else. */
int rv_qemu_sync_fsync(rv_qemu_sync *s, int fd, const char *path, rv_err *err);
/* Remove path (gone already is fine) and fsync its directory. */
int rv_qemu_sync_remove(rv_qemu_sync *s, const char *path, rv_err *err);
/* A runtime file (crash-safety rule 1): text written as <path>.tmp and
 * renamed to path, neither fsynced.  s NULL: nobody waits, a failure is
 * logged.  if_prev_ok: only when the request queued just before it
 * succeeded (ECANCELED otherwise). */
int rv_qemu_sync_run_write(rv_qemu_sync *s, const char *path, const char *text, bool if_prev_ok,
                           rv_err *err);
/* Remove a runtime file after what is queued before it (gone is fine);
 * s NULL: nobody waits, a failure is logged. */
int rv_qemu_sync_run_remove(rv_qemu_sync *s, const char *path, rv_err *err);
/* Rename from to to and fsync the directory. */
int rv_qemu_sync_rename(rv_qemu_sync *s, const char *from, const char *to, rv_err *err);
/* In the directory held open as dfd: fsync the file from, rename it to
 * to when nothing has that name (EEXIST otherwise), fsync the directory;
 * or remove name and fsync the directory. */
int rv_qemu_sync_commit_at(rv_qemu_sync *s, int dfd, const char *from, const char *to,
                           rv_err *err);
int rv_qemu_sync_remove_at(rv_qemu_sync *s, int dfd, const char *name, rv_err *err);
/* A request of s is queued or under way. */
bool rv_qemu_sync_busy(const rv_qemu_sync *s);
/* Drop s's request: not done if still queued; its answer ignored if the
 * helper has it (it finishes on its own). */
void rv_qemu_sync_forget(rv_qemu_sync *s);

/* ---- qemu_fileq.c: the other families' definitions, off the loop ---- */
#define RV_QEMU_FILEOP_STEPS 3
/* One call's change of durable files; embedded first in the caller's own
 * struct, its hooks set by the caller. */
typedef struct rv_qemu_fileop {
    /* At the head of its queue: check against the state now and add the
     * steps (rv_qemu_fileop_step); -1 with err: refused, nothing done. */
    int (*prepare)(struct rv_qemu_fileop *op, rv_err *err);
    /* The commit step is durable: change memory, fill reply's result. */
    void (*commit)(struct rv_qemu_fileop *op);
    /* Optional: after the last step, before the reply, when committed. */
    void (*after)(struct rv_qemu_fileop *op);
    /* Free the caller's struct (after the reply went). */
    void (*destroy)(struct rv_qemu_fileop *op);
    rv_deferred *reply;         /* NULL: nobody waits */
    /* The queue's: */
    struct { char *path, *text; } step[RV_QEMU_FILEOP_STEPS];
    int nsteps, commit_step, at;
    rv_qemu_sync sync;
    struct rv_qemu_fileq *queue;
    struct rv_qemu_fileop *next;
} rv_qemu_fileop;
typedef struct rv_qemu_fileq {
    const char *name;           /* its crash points' operation (crash_point.h) */
    int from;                   /* the error domain (RV_FROM_NETWORK, ...) */
    rv_qemu_fileop *head, **tail;
} rv_qemu_fileq;
/* From prepare: write text (taken; NULL: remove path) to path (taken) as
 * the next step; commit: this step is the commit point (default: the
 * last).  -1 (both freed) when out of room or path is NULL. */
int rv_qemu_fileop_step(rv_qemu_fileop *op, char *path, char *text, bool commit);
/* A zeroed struct of size bytes (an rv_qemu_fileop first) whose destroy
 * is set; NULL with err. */
void *rv_qemu_fileop_new(const rv_qemu_fileq *q, size_t size,
                         void (*destroy)(rv_qemu_fileop *op), rv_err *err);
/* Queue op (its reply answered when it ends). */
void rv_qemu_fileq_add(rv_qemu_fileq *q, rv_qemu_fileop *op);
/* A slot's call through q: op (its destroy set) with these hooks, the
 * call deferred to its end: RV_DEFERRED, or -1 with err (op destroyed). */
int rv_qemu_fileq_submit(rv_qemu_fileq *q, rv_qemu_fileop *op,
                         int (*prepare)(rv_qemu_fileop *op, rv_err *err),
                         void (*commit)(rv_qemu_fileop *op), rv_err *err);
bool rv_qemu_fileq_busy(const rv_qemu_fileq *q);
/* A family's define or undefine through its queue: the XML asked for
 * (parsed again at its turn, into def) or the object's UUID. */
typedef struct rv_qemu_defop {
    rv_qemu_fileop op;
    char *xml;
    void *def;                  /* freed with free_def unless taken */
    void (*free_def)(void *def);
    unsigned char uuid[16];
} rv_qemu_defop;
/* rv_qemu_fileq_submit of a define of xml (uuid NULL) or an undefine of
 * uuid (xml NULL) on q. */
int rv_qemu_defop_submit(rv_qemu_fileq *q, const char *xml, const unsigned char *uuid,
                         void (*free_def)(void *def),
                         int (*prepare)(rv_qemu_fileop *op, rv_err *err),
                         void (*commit)(rv_qemu_fileop *op), rv_err *err);
/* From the prepare of a define in fam: refused when name is new and
 * fam's list is full, else name's definition file (xml taken), written
 * durably: the commit point.  -1 with err. */
int rv_qemu_family_define_step(rv_qemu_fileop *op, const rv_qemu_family *fam, const char *name,
                               char *xml, rv_err *err);
/* From the prepare of an undefine in fam: the object of uuid, or NULL
 * with libvirt's "not found" (it was undefined meanwhile). */
void *rv_qemu_family_get_queued(const rv_qemu_family *fam, const unsigned char uuid[16],
                                rv_err *err);
/* Then: name's definition file goes
 * first (the commit point), then its autostart link (one left alone is
 * removed at start-up).  -1 with err. */
int rv_qemu_family_undefine_steps(rv_qemu_fileop *op, const rv_qemu_family *fam,
                                  const char *name, rv_err *err);
/* remvirtd is stopping: the queued ops end with an error. */
void rv_qemu_fileq_release(rv_qemu_fileq *q);

/* ---- qemu_defwrite.c ---- */
/* Write def (taken) as d's definition; once it is durable it replaces
 * d->def in memory and reply (taken; NULL: nobody waits; ret_dom filled in
 * its result) is answered; on failure nothing changed.  derived: def was
 * made from the writes queued before it, and fails with them.  Writes of
 * one domain land in the order they were asked.  The reply may be
 * answered (and d dropped) before it returns. */
int rv_qemu_def_write(qemu_dom *d, rv_qemu_domain_def *def, rv_deferred *reply,
                      rv_nonnull_domain *ret_dom, bool derived, rv_err *err);
/* d's definition as it will be once the writes queued are done (NULL:
 * transient, or an undefine is queued). */
const rv_qemu_domain_def *rv_qemu_def_newest(const qemu_dom *d);
/* A change of d's persistent definition: change(copy of the newest one)
 * (which may refuse, setting err), then rv_qemu_def_write with reply
 * (taken on success: answered once durable).  -1 with err: reply not
 * taken. */
int rv_qemu_def_change(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                  rv_err *err),
                       const void *ctx, rv_deferred *reply, rv_err *err);
/* The same without the DEFINED event (a metadata change: libvirtd sends
 * METADATA_CHANGE for it instead). */
int rv_qemu_def_change_no_event(qemu_dom *d, int (*change)(rv_qemu_domain_def *def,
                                                           const void *ctx, rv_err *err),
                                const void *ctx, rv_deferred *reply, rv_err *err);
/* The same, told its outcome through then(data, NULL or why) instead of
 * a reply (reply NULL); -1 with err: then not called. */
typedef void (*rv_qemu_def_then_fn)(void *data, const rv_err *err);
int rv_qemu_def_change_then(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                       rv_err *err),
                            const void *ctx, rv_deferred *reply, rv_qemu_def_then_fn then,
                            void *then_data, rv_err *err);
/* rv_qemu_def_write told its outcome through then(data, NULL or why)
 * (FINISH3's PERSIST_DEST: its crash point comes before the answer). */
int rv_qemu_def_write_then(qemu_dom *d, rv_qemu_domain_def *def, rv_qemu_def_then_fn then,
                           void *then_data, rv_err *err);
/* The same without the DEFINED event (a block job's pivot, as libvirtd). */
int rv_qemu_def_change_then_no_event(qemu_dom *d, int (*change)(rv_qemu_domain_def *def, const void *ctx,
                                                                rv_err *err),
                                     const void *ctx, rv_qemu_def_then_fn then, void *then_data, rv_err *err);
/* remvirtd is stopping: answer the waiting writes with an error. */
void rv_qemu_def_writes_release(qemu_dom *d);
/* Undefine d (flags: RV_DOMAIN_UNDEFINE_MANAGED_SAVE and _SNAPSHOTS_METADATA
 * say what goes with it).  The commit point renames the definition to its
 * tombstone; then d leaves memory (a running domain becomes transient), the
 * UNDEFINED event goes out, the image, metadata, autostart link and the
 * tombstone are removed, and reply (taken) is answered.  If the rename
 * fails, nothing changed and reply gets the error. */
int rv_qemu_def_remove(qemu_dom *d, unsigned int flags, rv_deferred *reply, rv_err *err);
/* A removal of a definition named name is still under way. */
bool rv_qemu_def_removal_pending(const char *name);
/* A rename to name is under way, not yet past its commit point (its
 * "<name>.xml.rename-new" is being written). */
bool rv_qemu_def_rename_pending(const char *name);
/* A perf event enabled live or at start (qemu_metadata.c): -1 with
 * libvirtd's error where the host cannot count it (perf_event_open, or
 * no CMT/MBM PMU); else 0 (remvirtd records it and counts nothing). */
int rv_qemu_perf_check(const char *event, rv_err *err);
/* Rename d (shut off, persistent, no write queued) to new_name
 * (qemu_defwrite.c): its commit point renames the old definition to
 * "<new>.xml" RV_QEMU_RENAME_OLD once the new one is written as
 * "<new>.xml" RV_QEMU_RENAME_NEW; then d has its new name, the UNDEFINED
 * and DEFINED (RENAMED) events go out, the new file takes its name, the
 * old link and file go, and reply (taken) is answered.  Before the
 * commit, a failure leaves nothing changed and reply gets the error. */
int rv_qemu_def_rename(qemu_dom *d, const char *new_name, rv_deferred *reply, rv_err *err);
#define RV_QEMU_RENAME_NEW ".rename-new"
#define RV_QEMU_RENAME_OLD ".rename-old"
/* config_dir/<name>.xml<mark>. */
char *rv_qemu_rename_file(const char *name, const char *mark);
/* An undefine's tombstone: config_dir/<name>.xml.undefine-<flags in hex>. */
#define RV_QEMU_TOMBSTONE ".undefine-"
char *rv_qemu_undefine_tombstone(const char *name, unsigned int flags);

/* ---- qemu_process.c ---- */
/* Queue a job; it starts now if it is the only one.  Takes reply. */
/* Flags outside known refused as libvirt's drivers refuse them (driver.h). */
#define rv_qemu_check_flags rv_driver_check_flags
/* Send a QMP command to d's QEMU for a deferred call.  On failure the
 * call is answered with the error (the caller still returns RV_DEFERRED)
 * and false is returned so that the caller frees its request. */
bool rv_qemu_send_for(qemu_dom *d, rv_deferred *reply, const char *command, json_object *args,
                      rv_qmp_reply_fn fn, void *req);
/* Answer a deferred call with this error (domain QEMU). */
void rv_qemu_finish_error(rv_deferred *reply, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The job queued (NULL: out of memory, reply answered so). */
qemu_job *rv_qemu_job_add(qemu_dom *d, qemu_job_kind kind, unsigned int flags, rv_deferred *reply,
                          rv_nonnull_domain *ret_dom);
/* Connection c closes: destroy the guests it started with
 * RV_DOMAIN_START_AUTODESTROY, and those it is starting so once they run. */
void rv_qemu_autodestroy(const rv_driver_conn *c);
/* Queue a save (path NULL: the managed image) or a restoring start from
 * path; takes reply, copies path. */
void rv_qemu_job_add_path(qemu_dom *d, qemu_job_kind kind, unsigned int flags, const char *path,
                          rv_deferred *reply);
/* For qemu_save.c: end the running job; stop the process (see begin_stop). */
void rv_qemu_job_done(qemu_dom *d, const rv_err *err);
/* For a call that needs the running guest's monitor (or its process):
 * 0 when they are there; RV_DEFERRED while the domain is starting,
 * stopping or (re)connecting to its monitor: the call was deferred and
 * runs again once that is over (then finding the guest running, or shut
 * off), or gets a timeout error after 30 s; -1 with libvirtd's "domain
 * is not running" when it is not active (or no memory). */
int rv_qemu_need_monitor(qemu_dom *d, rv_err *err);
/* Defer the call being served until rv_qemu_turn_over(d) (or d settles
 * after a start, stop or reconnection), then run it again from the start;
 * after 30 s it gets a timeout error.  RV_DEFERRED, or -1 with err.  For
 * a call that must wait for another of its kind (a live attach). */
int rv_qemu_wait_turn(qemu_dom *d, rv_err *err);
void rv_qemu_turn_over(qemu_dom *d);
/* The domain (*d) and which of its definitions flags name (neither: the
 * live one when it runs, else the persistent one), with libvirt's
 * refusals (transient: its words for a transient domain's config, after
 * "Requested operation is not valid: "): 0, -1, or RV_DEFERRED while a
 * live call waits for the monitor (qemu_pin.c). */
int rv_qemu_pick_defs(const rv_nonnull_domain *wire, unsigned int flags, const char *transient,
                      qemu_dom **d, bool *live, bool *config, rv_err *err);
/* The command line a start of def would run (def prepared as a start
 * prepares its live definition, taps aside): NULL with err. */
char **rv_qemu_start_argv(rv_qemu_domain_def *def, rv_err *err);
/* The same for a getter: *live, or the persistent definition; a live one
 * of a domain that does not run refused by libvirt's domain layer. */
int rv_qemu_pick_getter(const rv_nonnull_domain *wire, unsigned int flags, qemu_dom **d,
                        bool *live, rv_err *err);
void rv_qemu_stop_process(qemu_dom *d, int reason, int detail);
/* A domain found running at start-up: connect to its monitor again. */
void rv_qemu_reattach(qemu_dom *d);
/* A QEMU process exited with status (as waitpid says). */
void rv_qemu_process_exited(pid_t pid, int status);

/* ---- qemu_spawner.c ---- */
/* A start's answer: pid > 0, the child waits for rv_qemu_spawn_go(); or
 * -1 and why. */
typedef void (*rv_qemu_spawned_fn)(void *data, pid_t pid, const char *why);
/* A helper process (the spawner, the store helper) and remvirtd's end
 * of its socket. */
typedef struct rv_qemu_helper {
    int fd;                     /* our end of the pair; -1: no helper */
    pid_t pid;
    ev_io watcher;              /* its messages */
} rv_qemu_helper;
/* Fork a helper process named name (as ps shows it) that dies with
 * remvirtd and runs main_fn(3) with its end of a SOCK_SEQPACKET pair as
 * descriptor 3, nothing else open but 0-2 (/dev/null); its messages go
 * to on_message from the loop.  0, or -1 with err set. */
int rv_qemu_helper_start(rv_qemu_helper *h, const char *name, void (*main_fn)(int sock),
                         void (*on_message)(struct ev_loop *loop, ev_io *w, int revents),
                         rv_err *err);
/* Close our end (a live helper sees it and exits); h has no helper. */
void rv_qemu_helper_stop(rv_qemu_helper *h);
/* In a helper: the next message from remvirtd, a header of head_size
 * bytes in head and the rest in blob (at most blob_size - 1 bytes, then
 * a NUL), with the descriptors that came with it (at most max_fds, at
 * most RV_QEMU_HELPER_MAX_FDS) in fds, *nfds of them.  Its length;
 * *cut: the message or its descriptors did not fit.  When remvirtd is
 * gone the helper exits. */
enum { RV_QEMU_HELPER_MAX_FDS = 64 };
ssize_t rv_qemu_helper_recv(int sock, void *head, size_t head_size, char *blob, size_t blob_size,
                            int *fds, int max_fds, int *nfds, bool *cut);
/* The helper's next answer, size bytes, into m: 1; 0: none yet; -1: the
 * helper is gone ("end of file") or answered out of turn ("a bad
 * answer"), *why (when why is not NULL) says which. */
int rv_qemu_helper_read(const rv_qemu_helper *h, void *m, size_t size, const char **why);
/* Send h's helper a message (head, then len bytes of blob) with nfds
 * descriptors (at most RV_QEMU_HELPER_MAX_FDS); sendmsg's result. */
ssize_t rv_qemu_helper_send(const rv_qemu_helper *h, const void *head, size_t head_size,
                            const char *blob, size_t len, const int *fds, int nfds);
/* The helper process that forks QEMUs, started when the driver loads. */
int rv_qemu_spawner_init(rv_err *err);
/* Ask for argv (argv[0] a path, or NAME=VALUE words for the program's
 * environment before it) with log_fd as its output, when >= 0
 * incoming_fd as its descriptor 3, and the taps (those >= 0 of ntaps, in
 * order) as 4, 5, ...; done() is called from the loop. */
int rv_qemu_spawn(char **argv, int log_fd, int incoming_fd, const int *taps, size_t ntaps,
                  rv_qemu_spawned_fn done, void *data, rv_err *err);
/* Let the child exec (its pid is recorded), or make it exit. */
void rv_qemu_spawn_go(pid_t pid, bool run);
void rv_qemu_spawner_cleanup(void);
/* A program's end: status as waitpid says, or -1 and why (never run, or
 * the helper died before it saw the end). */
typedef void (*rv_qemu_cmd_done_fn)(void *data, int status, const char *why);
/* Run argv (argv[0] a path) through the spawner helper, so that the loop
 * never forks: stdin /dev/null, stdout and stderr out_fd, fd3 and fd4
 * (when >= 0) as its descriptors 3 and 4, in a session of its own; done
 * from the loop when it exits.  0, or -1 with err (done not called). */
int rv_qemu_run(char **argv, int out_fd, int fd3, int fd4, rv_qemu_cmd_done_fn done, void *data,
                rv_err *err);
/* A program on $PATH or in Debian's sbin and bin directories (malloc'd),
 * or NULL. */
char *rv_qemu_find_program(const char *name);
/* At daemon exit: let go of monitors, fail queued jobs; QEMUs live on. */
void rv_qemu_release(qemu_dom *d);
/* The running SHUTDOWN or REBOOT job by the ACPI power button. */
void rv_qemu_power_acpi(qemu_dom *d, bool reboot);
/* An active domain's memory: what the balloon last said, else the
 * definition's currentMemory. */
unsigned long long rv_qemu_dom_memory_kib(const qemu_dom *d);

/* ---- qemu_cputime.c ---- */
/* A running domain's CPU time from its process's CPU clock, 0 when
 * unknown; a reading younger than a clock tick is given again. */
unsigned long long rv_qemu_dom_cpu_time_ns(qemu_dom *d);
/* When a process started (/proc/<pid>/stat field 22, clock ticks since
 * boot): with the pid it names one process, whatever pids are reused;
 * 0 when it cannot be read. */
unsigned long long rv_qemu_proc_start_time(pid_t pid);
/* User and system time from a /proc stat file (a process's or a
 * thread's); false when it cannot be read. */
bool rv_qemu_proc_times(const char *stat_path, unsigned long long *user_ns,
                        unsigned long long *system_ns);
/* One sample of a running domain's CPU times from files kept open: its
 * process's user and system time when proc (true when they were read),
 * and each of the first nvcpus vCPUs' time into vcpu_ns[i] with seen[i]
 * set (a vCPU whose thread is not found is left unseen).  A sample
 * younger than a clock tick (their unit) is given again. */
bool rv_qemu_dom_cpu_times(qemu_dom *d, bool proc, unsigned nvcpus, unsigned long long *user_ns,
                           unsigned long long *system_ns, unsigned long long *vcpu_ns, bool *seen);
/* QEMU's resident set in KiB from the process's kept stat file (0: not
 * running, or unreadable). */
unsigned long long rv_qemu_dom_rss_kib(qemu_dom *d);
/* Close the files kept for the domain's process (it is gone). */
void rv_qemu_cpu_files_close(qemu_dom *d);

/* ---- qemu_events.c: domain events other than lifecycle and devices ---- */
/* Send ev (its domain filled from d). */
void rv_qemu_emit(const qemu_dom *d, const rv_dom_event *ev);
/* TUNABLE with these values (borrowed), as libvirtd sends after a live
 * tuning change; _string: one string value. */
void rv_qemu_emit_tunable(const qemu_dom *d, rv_typed_param *params, u_int n);
void rv_qemu_emit_tunable_string(const qemu_dom *d, const char *field, const char *value);
/* METADATA_CHANGE of type (DOMAIN_SET_METADATA's), nsuri NULL but for elements. */
void rv_qemu_emit_metadata_change(const qemu_dom *d, int type, const char *nsuri);
/* A QMP event of d's QEMU: the events above it gives rise to. */
void rv_qemu_events_qmp(qemu_dom *d, const char *name, json_object *data);
/* A start is done: libvirtd's AGENT_LIFECYCLE (not connected yet) when
 * the domain has a guest agent channel. */
void rv_qemu_events_started(qemu_dom *d);
void rv_qemu_threshold_free(qemu_threshold *t);
/* The process is gone: so are its thresholds. */
void rv_qemu_thresholds_clear(qemu_dom *d);

/* ---- qemu_stats.c ---- */
/* The index of def's interface named by its host tap or its MAC
 * address (as libvirt finds one), or -1. */
int rv_qemu_iface_index(const rv_qemu_domain_def *def, const char *device);
/* def's disk with the target or the source file path, or NULL. */
const rv_qemu_disk *rv_qemu_disk_by_name(const rv_qemu_domain_def *def, const char *path);

/* ---- qemu_ifaddr.c ---- */
/* guest-network-get-interfaces' answer (reply) as libvirtd reads it,
 * appended to ret: an alias's addresses under its device; 0, or -1 with
 * err (what was read stays in ret). */
int rv_qemu_agent_interfaces(json_object *reply, rv_domain_interface_addresses_ret *ret, rv_err *err);

/* ---- qemu_agent.c ---- */
typedef struct qemu_agent_op qemu_agent_op;
/* A domain's agent response timeout: libvirt's VIR_DOMAIN_AGENT_RESPONSE_TIMEOUT_*. */
enum { RV_QEMU_AGENT_TIMEOUT_BLOCK = -2, RV_QEMU_AGENT_TIMEOUT_DEFAULT = -1 };
/* The active domain the wire names whose definition has the agent's
 * channel, or NULL with libvirtd's error (qemu_driver.c). */
qemu_dom *rv_qemu_agent_domain(const rv_nonnull_domain *wire, rv_err *err);
/* A call's command to the agent. */
typedef struct rv_qemu_agent_cmd {
    const char *command;
    /* Its answer into the call's result (out; NULL when nobody waits
     * for it); 0, or -1 with err.  NULL: nothing to fill. */
    int (*finish)(qemu_dom *d, json_object *ret, void *out, rv_err *err);
    bool silent;                /* success is silence (guest-suspend-*) */
    bool missing_ok;            /* an agent without the command: finish with ret NULL */
} rv_qemu_agent_cmd;
/* Queue the call's command as a job (args: JSON text or NULL; copied);
 * takes reply.  The slot checks first that the agent is configured. */
void rv_qemu_agent_job(qemu_dom *d, const rv_qemu_agent_cmd *cmd, const char *args,
                       rv_deferred *reply);
/* The running AGENT_CALL job: cmd with args (JSON text, or NULL) ... */
void rv_qemu_agent_call(qemu_dom *d, const rv_qemu_agent_cmd *cmd, const char *args);
/* ... or with args as JSON (taken). */
void rv_qemu_agent_call_json(qemu_dom *d, const rv_qemu_agent_cmd *cmd, json_object *args);
/* From a finisher: once it returns 0, the same call goes on with cmd and
 * args (taken) instead of ending. */
void rv_qemu_agent_then(qemu_dom *d, const rv_qemu_agent_cmd *cmd, json_object *args);
/* The definition has the guest agent's unix channel. */
bool rv_qemu_agent_configured(const rv_qemu_domain_def *def);
/* The running SHUTDOWN or REBOOT job through the guest agent; when it
 * fails and acpi_fallback, by the ACPI power button instead. */
void rv_qemu_agent_power(qemu_dom *d, bool reboot, bool acpi_fallback);
/* The running AGENT_HOSTNAME job: guest-get-host-name. */
void rv_qemu_agent_hostname(qemu_dom *d);
/* The running AGENT_GET_TIME job (guest-get-time) and AGENT_SET_TIME job
 * (guest-set-time; ns a decimal count of nanoseconds, NULL: the guest
 * takes its time from its RTC). */
void rv_qemu_agent_get_time(qemu_dom *d);
void rv_qemu_agent_set_time(qemu_dom *d, const char *ns);
/* The process is gone or remvirtd stops: drop the exchange; true when
 * guest-shutdown had been sent (the guest going away is its success). */
bool rv_qemu_agent_abandon(qemu_dom *d);

/* ---- qemu_driver.c ---- */
/* The domain that runs def (taken; freed on failure): the one def
 * redefines, when it is inactive (its persistent definition waits for
 * later), else a new transient one; def is its live definition. */
qemu_dom *rv_qemu_take_live(rv_qemu_domain_def *def, rv_err *err);
/* The same, and the call deferred for the start that follows: NULL with
 * err (def freed, the domains as they were). */
rv_deferred *rv_qemu_take_live_deferred(rv_qemu_domain_def *def, qemu_dom **d, rv_err *err);

/* ---- qemu_migrate.c: live migration, both ends ---- */
/* The incoming START job's QEMU (-incoming defer) has its monitor: tell
 * it where to listen; then rv_qemu_start_done or rv_qemu_start_failed. */
void rv_qemu_migrate_incoming(qemu_dom *d);
/* The running MIGRATE_OUT job: send the stream to job->path. */
void rv_qemu_migrate_perform(qemu_dom *d);
/* The domain's process is gone: an incoming migration's port is free. */
void rv_qemu_migrate_gone(qemu_dom *d);
/* The source's steps, for the peer-to-peer driver (qemu_migrate_p2p.c). */
int rv_qemu_migrate_check_flags(unsigned int flags, const char *func, rv_err *err);
/* The domain an outgoing migration is of (running; offline: persistent,
 * in any state), if it may begin one; else NULL with err. */
qemu_dom *rv_qemu_migrate_source(const rv_nonnull_domain *dom, bool offline, rv_err *err);
/* 0 if d may begin an outgoing migration, else -1 with err. */
int rv_qemu_migrate_check_idle(const qemu_dom *d, rv_err *err);
/* BEGIN3's result: the XML the destination gets (dxml, which must be
 * d's UUID, else d's live one, or with offline its persistent one) and
 * the cookie. */
int rv_qemu_migrate_begin(qemu_dom *d, bool offline, const char *dxml, char **xml, char **cookie,
                          u_int *cookie_len, rv_err *err);
/* PERFORM3's checks of its parameters, then its start: the stream to
 * uri, reply (NULL: nobody) answered when it ends. */
int rv_qemu_migrate_out_check(const qemu_dom *d, const rv_typed_param *params, u_int n,
                              rv_err *err);
void rv_qemu_migrate_out(qemu_dom *d, const rv_typed_param *params, u_int n, unsigned int flags,
                         const char *uri, rv_deferred *reply);
/* CONFIRM3's work, reply already deferred (answered with why, if set,
 * after a cancelled migration's resume).  RV_DEFERRED or -1 with err. */
int rv_qemu_migrate_confirm(qemu_dom *d, unsigned int flags, bool cancelled, rv_deferred *reply,
                            const rv_err *why, rv_err *err);
/* qemu_migrate_offline.c: an offline migration's XML from PREPARE3 to
 * a FINISH3 that names the domain only (the steps with plain arguments):
 * keep (-1: out of memory), take (NULL: none; the caller frees it). */
int rv_qemu_migrate_offline_keep(const char *name, const char *xml);
char *rv_qemu_migrate_offline_take(const char *name);
void rv_qemu_migrate_offline_cleanup(void);
/* qemu_migrate_p2p.c: PERFORM3 with PEER2PEER (the source drives the
 * destination itself); the local stream ended (err: how it failed), or
 * the domain's process went. */
int rv_qemu_migrate_p2p(rv_driver_conn *c, const rv_domain_migrate_perform3_params_args *args,
                        rv_err *err);
void rv_qemu_migrate_p2p_performed(qemu_dom *d, const rv_err *err);
/* The destination's part shared by PREPARE3 and PREPARE_TUNNEL3: the
 * domain made from params' destination_xml (caps: the parsed migration
 * capabilities; port: PREPARE3's, 0 for a tunnel) and the call deferred; the caller fills its answer and adds
 * the START job.  NULL with err. */
rv_deferred *rv_qemu_migrate_prepare_in(const rv_typed_param *params, u_int n, unsigned int flags,
                                        const rv_qemu_migcaps *caps, int port, qemu_dom **dp,
                                        rv_err *err);
/* qemu_migrate_tunnel.c, tunnelled migration.  Destination: the tunnel's
 * pipe passed to QEMU (getfd), uri set to migrate-incoming's for it;
 * -1 with err.  Its end closed when the domain goes. */
int rv_qemu_migtunnel_pass_in(qemu_dom *d, char *uri, size_t len, rv_err *err);
void rv_qemu_migtunnel_gone(qemu_dom *d);
/* Source (the peer-to-peer thread and the loop, qemu_migrate_p2p.c):
 * the destination's PREPARE_TUNNEL3_PARAMS with the arguments of a
 * PREPARE3_PARAMS, its stream in *out; -1 with err. */
struct rvc_conn;
struct rvc_stream;
int rv_qemu_migtunnel_prepare(struct rvc_conn *rpc, const rv_domain_migrate_prepare3_params_args *a,
                              struct rvc_stream **out, rv_err *err);
/* The same with plain arguments (PREPARE_TUNNEL3), to a destination
 * without MIGRATION_PARAMS. */
int rv_qemu_migtunnel_prepare_plain(struct rvc_conn *rpc,
                                    const rv_domain_migrate_prepare_tunnel3_args *a,
                                    struct rvc_stream **out, rv_err *err);
/* The loop: QEMU's end of the tunnel (fd, taken) passed with getfd;
 * *uri: the migrate URI that sends into it.  -1 with err (fd closed). */
int rv_qemu_migtunnel_pass_out(qemu_dom *d, int fd, const char **uri, rv_err *err);
/* The thread: QEMU's bytes from fd into s until fd's end (0) or a
 * failure of s (-1 with err; fd is shut down so that QEMU's stream fails). */
int rv_qemu_migtunnel_pump(int fd, struct rvc_stream *s, rv_err *err);

/* qemu_migrate_postcopy.c: post-copy migration.  libvirt's flags (and
 * RV_QEMU_MIGRATE_NON_SHARED_* below): */
#define RV_QEMU_MIGRATE_PEER2PEER (1u << 1)
#define RV_QEMU_MIGRATE_TUNNELLED (1u << 2)
#define RV_QEMU_MIGRATE_OFFLINE (1u << 10)
#define RV_QEMU_MIGRATE_POSTCOPY (1u << 15)
#define RV_QEMU_MIGRATE_POSTCOPY_RESUME (1u << 19)
typedef struct rv_qemu_postcopy rv_qemu_postcopy;
/* The steps' refusals of the post-copy flags: 0, or -1 with err. */
int rv_qemu_postcopy_check_flags(unsigned int flags, rv_err *err);
/* BEGIN3 with VIR_MIGRATE_POSTCOPY_RESUME: -1 with err (nothing to
 * resume, or remvirtd does not resume one). */
int rv_qemu_postcopy_refuse_resume(const rv_nonnull_domain *dom, rv_err *err);
/* PREPARE3 (out false) and PERFORM3 (out true): a migration begins, with
 * VIR_MIGRATE_POSTCOPY in flags or not. */
void rv_qemu_postcopy_begin(qemu_dom *d, unsigned int flags, bool out);
/* Whether QEMU's postcopy-ram capability goes on; whether the switch
 * happened (migrate-start-postcopy and the start's checks). */
bool rv_qemu_postcopy_allowed(const qemu_dom *d);
bool rv_qemu_postcopy_switched(const qemu_dom *d);
/* The source's post-copy migration failed: its job and lock stay (as
 * libvirtd's, for a recovery) until its QEMU goes. */
bool rv_qemu_postcopy_failed(const qemu_dom *d);
/* PERFORM3's end (err: failed): true when the job record goes on, the
 * stream going on after the switch until CONFIRM3 (not abortable). */
bool rv_qemu_postcopy_keeps_job(qemu_dom *d, const rv_err *err);
/* PERFORM3's bandwidth.postcopy parameter to QEMU. */
void rv_qemu_postcopy_out_params(qemu_dom *d, const rv_typed_param *params, u_int n);
/* QEMU's MIGRATION event (data: its status). */
void rv_qemu_postcopy_event(qemu_dom *d, json_object *data);
/* QEMU's STOP on the source, RESUME on the destination: true when the
 * state became the post-copy one (paused / running (post-copy)). */
bool rv_qemu_postcopy_stop(qemu_dom *d);
bool rv_qemu_postcopy_resume(qemu_dom *d);
/* query-migrate's status during a wait: 1 the wait is over (the
 * switch), -1 it failed, 0 not for post-copy to say. */
int rv_qemu_postcopy_status(qemu_dom *d, const char *status);
/* CONFIRM3 after the switch: waits for the stream's end, then goes on as
 * after pre-copy; cancelled: paused (post-copy failed), reply answered
 * with why (NULL: success, CONFIRM3's own; a peer-to-peer migration's
 * error).  RV_DEFERRED, or 0 when it is not a post-copy one. */
int rv_qemu_postcopy_confirm(qemu_dom *d, unsigned int flags, bool cancelled, rv_deferred *reply,
                             const rv_err *why);
/* FINISH3's cont after the switch: running (post-copy), and drained(d,
 * op, err) once the stream is complete (or broke).  False: not post-copy. */
bool rv_qemu_postcopy_finish(qemu_dom *d, void (*drained)(qemu_dom *d, void *op, const rv_err *err),
                             void *op);
/* The migration or the domain's process is over. */
void rv_qemu_postcopy_gone(qemu_dom *d);
/* SUSPEND while d's outgoing migration runs: the CPUs stop at once
 * (paused (migration)), so that the migration can complete, as virsh's
 * --timeout asks; true when it took reply. */
bool rv_qemu_migrate_suspend(qemu_dom *d, rv_deferred *reply);
/* QEMU's MIGRATION_PASS on the source: MIGRATION_ITERATION (virsh's
 * --postcopy-after-precopy switches at the second). */
void rv_qemu_migrate_pass_event(qemu_dom *d, json_object *data);
/* A remvirtd restarted: an outgoing migration it finds in QEMU is
 * cancelled (migrate_cancel), unless it has switched to post-copy (then
 * paused (post-copy failed)); reclaim: its stream had completed
 * (postmigrate) and it has disks to take back, so unless it is a
 * post-copy one it is resumed (QJOB_RESUME, which QEMU refuses while the
 * destination holds the disks).  -1 with err if nothing could be sent. */
int rv_qemu_migrate_reattach_cancel(rv_qmp *qmp, bool reclaim, rv_err *err);
/* DOMAIN_DEFINE_XML's work (for an offline migration's FINISH3):
 * RV_DEFERRED, answered once durable, its domain put by ret_dom(ret). */
int rv_qemu_define(const char *xml, rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err);
/* A domain definition read as DEFINE_XML reads it (its name checked, the
 * emulator filled in), not defined: NULL with err. */
rv_qemu_domain_def *rv_qemu_parse_def(const char *xml, rv_err *err);
/* True (err set as libvirtd's timed-out job lock) while a migration
 * holds d (BEGIN3 with CHANGE_PROTECTION until CONFIRM3). */
bool rv_qemu_migration_locked(const qemu_dom *d, rv_err *err);
/* Connection c closed: the migrations it held let go. */
void rv_qemu_migration_unlock_conn(const struct rv_driver_conn *c);
/* qemu_migrate_recover.c: true if d has a disk whose image lock QEMU
 * takes (a writable file), so that a "cont" of a source QEMU after its
 * stream completed is refused while the destination runs the guest. */
bool rv_qemu_migrate_may_reclaim(const qemu_dom *d);
/* Connection c closed: incoming migrations it prepared and did not
 * finish are destroyed. */
void rv_qemu_migrate_conn_closed(const struct rv_driver_conn *c);
/* PERFORM3's stream is under way: cancelled if it sends nothing for
 * qemu_migration_stall_timeout s.  _end: the watch is over; true (err
 * set to say so, if given) when it cancelled the stream. */
typedef struct rv_qemu_migstall rv_qemu_migstall;
/* qemu_migrate_jobin.c: the job records of a migration on both ends.
 * The source's PERFORM3 cookie with the completed job's <statistics>
 * (*val NULL, 0 returned, without a completed migration record). */
int rv_qemu_migrate_stats_cookie(qemu_dom *d, char **val, u_int *len, rv_err *err);
/* The destination's incoming job: begun when its QEMU is up, refused to
 * GET_JOB_INFO/STATS while it runs (true, err set), ended completed by
 * FINISH3 with the source's cookie, or not when its QEMU goes. */
void rv_qemu_migrate_in_begin(qemu_dom *d);
bool rv_qemu_migrate_in_refused(const qemu_dom *d, rv_err *err);
void rv_qemu_migrate_in_done(qemu_dom *d, const char *cookie, u_int len);
void rv_qemu_migrate_in_gone(qemu_dom *d);
void rv_qemu_migrate_stall_watch(qemu_dom *d);
bool rv_qemu_migrate_stall_end(qemu_dom *d, rv_err *err);
/* ABORT_ON_ERROR (qemu_migrate_ioerror.c): an outgoing migration whose
 * guest is paused (I/O error) is cancelled; _end says why it failed. */
void rv_qemu_migrate_io_error(qemu_dom *d);
bool rv_qemu_migrate_io_error_end(qemu_dom *d, rv_err *err);
/* For qemu_migrate.c: the START job's QEMU is ready (or failed). */
void rv_qemu_start_done(qemu_dom *d);
void rv_qemu_start_failed(qemu_dom *d, const rv_err *why);

/* ---- qemu_migrate_caps.c: capabilities, parameters and TLS of a migration ---- */
/* libvirt's virDomainMigrateFlags it reads (public header). */
#define RV_QEMU_MIGRATE_COMPRESSED (1u << 11)
#define RV_QEMU_MIGRATE_AUTO_CONVERGE (1u << 13)
#define RV_QEMU_MIGRATE_TLS (1u << 16)
#define RV_QEMU_MIGRATE_PARALLEL (1u << 17)
#define RV_QEMU_MIGRATE_ZEROCOPY (1u << 20)
#define RV_QEMU_MIGRATE_CAPS                                                                       \
    (RV_QEMU_MIGRATE_COMPRESSED | RV_QEMU_MIGRATE_AUTO_CONVERGE | RV_QEMU_MIGRATE_TLS |            \
     RV_QEMU_MIGRATE_PARALLEL | RV_QEMU_MIGRATE_ZEROCOPY)
/* The flags' and parameters' capabilities into out (NULL: only checked)
 * for the source, or the destination (incoming); -1 with libvirtd's
 * error for a tuning without its feature, an unknown method, ZEROCOPY. */
int rv_qemu_migcaps_parse(unsigned int flags, const rv_typed_param *params, u_int n, bool incoming,
                          rv_qemu_migcaps *out, rv_err *err);
/* The source's TLS host name from its migration URI (tcp:HOST:PORT),
 * unless tls.destination gave one. */
void rv_qemu_migcaps_set_host(rv_qemu_migcaps *c, const char *uri);
/* d->migcaps to QEMU (the TLS object, capabilities, parameters), then
 * next(d, NULL or QEMU's refusal); not called if QEMU goes meanwhile. */
void rv_qemu_migcaps_apply(qemu_dom *d, bool incoming, void (*next)(qemu_dom *d, const rv_err *err));
/* The stream is over: the TLS object goes (if it was added). */
void rv_qemu_migcaps_end(qemu_dom *d);
/* At reattach: a TLS object and parameters a killed remvirtd left go. */
void rv_qemu_migcaps_reset(rv_qmp *qmp);

/* ---- qemu_migrate_cookie.c: the migration cookie ---- */
/* libvirt's <qemu-migration> cookie for def's domain from this host, its
 * NUL counted in *len; with_caps: a <capabilities> element too (the
 * answer of PREPARE3, which libvirtd 9.0 as source needs); nbd_port: the
 * disks' NBD server (<nbd port>), 0: none. */
int rv_qemu_migrate_cookie(const rv_qemu_domain_def *def, bool with_caps, int nbd_port, char **val,
                           u_int *len, rv_err *err);
/* A cookie received (len bytes, NUL-terminated), parsed with libxml2:
 * its <qemu-migration> root, the document in *doc (rv_lx_free it), or
 * NULL when it is none or bigger than 64 KiB (libvirtd's are a few KiB;
 * a bigger one is not parsed on the loop). */
struct _xmlNode;
struct _xmlDoc;
struct _xmlNode *rv_qemu_migrate_cookie_read(const char *cookie, u_int len, struct _xmlDoc **doc);
/* BEGIN3's domain XML for the running d (malloc'd; NULL: no memory). */
char *rv_qemu_migrate_xml(qemu_dom *d);
/* PREPARE3's definition made to match what a libvirtd source runs. */
void rv_qemu_migrate_incoming_def(rv_qemu_domain_def *def);
/* PERFORM3's URI as QEMU's migrate takes it (malloc'd; NULL: no memory). */
char *rv_qemu_migrate_qemu_uri(const char *uri);
/* (qemu_host.c) The host's UUID, as in the capabilities: false if none. */
bool rv_qemu_host_uuid(char out[37]);
/* ---- qemu_migrate_storage.c: non-shared storage copied over NBD ---- */
#define RV_QEMU_MIGRATE_NON_SHARED_DISK (1u << 6)
#define RV_QEMU_MIGRATE_NON_SHARED_INC (1u << 7)
typedef void (*rv_qemu_migstore_done_fn)(qemu_dom *d, const rv_err *err);
typedef struct rv_qemu_migstore rv_qemu_migstore;
/* Destination, PREPARE3: the disks of def to export (migrate_disks) on
 * port, to become d->migstore; NULL with err. */
rv_qemu_migstore *rv_qemu_migstore_new_dest(const rv_qemu_domain_def *def, unsigned int flags,
                                            const rv_typed_param *params, u_int n, int port,
                                            rv_err *err);
void rv_qemu_migstore_free(rv_qemu_migstore *ms);
/* Its NBD port (for the cookie), 0: no storage copy. */
int rv_qemu_migstore_port(const qemu_dom *d);
/* After migrate-incoming: the NBD server and its exports, then next. */
void rv_qemu_migstore_export(qemu_dom *d, rv_qemu_migstore_done_fn next);
/* FINISH3: the NBD server goes (before cont). */
void rv_qemu_migstore_stop_server(qemu_dom *d);
/* Source, PERFORM3: what to copy where (the destination's cookie). */
int rv_qemu_migstore_perform(qemu_dom *d, unsigned int flags, const rv_typed_param *params, u_int n,
                             const char *uri, const char *cookie, u_int cookie_len,
                             unsigned long long bandwidth_mib, rv_err *err);
/* Whether the mirrors are still to be started (or made ready). */
bool rv_qemu_migstore_pending(const qemu_dom *d);
/* The mirrors, then next once all are READY (or one failed). */
void rv_qemu_migstore_mirror(qemu_dom *d, rv_qemu_migstore_done_fn next);
/* After the stream (why: its failure): the mirrors cancelled and their
 * NBD nodes removed, then next (with the first failure). */
void rv_qemu_migstore_end(qemu_dom *d, const rv_err *why, rv_qemu_migstore_done_fn next);
/* domjobabort: the mirrors, or the stream. */
int rv_qemu_migstore_abort(qemu_dom *d, rv_err *err);
void rv_qemu_migstore_event(qemu_dom *d, const char *name, json_object *data);
/* At reattach, an outgoing migration cut off: its storage copy's mirrors
 * (if any) are cancelled (a READY one finishes its copy first, for a
 * guest whose stream completed); their NBD nodes stay, in nobody's way. */
void rv_qemu_migstore_reattach(rv_qmp *qmp);
void rv_qemu_migstore_gone(qemu_dom *d);

/* ---- qemu_save.c ---- */
/* The file format (docs/qemu-driver.md): a header with the domain XML,
 * then QEMU's migration stream from RV_QEMU_SAVE_DATA_ALIGN on. */
#define RV_QEMU_SAVE_DATA_ALIGN 4096
/* save_dir/<name>.save (malloc'd; NULL: no memory). */
char *rv_qemu_managed_save_path(const char *name);
bool rv_qemu_has_managed_save(const char *name);
/* Open an image: its definition, whether it ran when saved, and the file
 * positioned at QEMU's stream (returned; -1 with err set). */
int rv_qemu_save_image_open(const char *path, rv_qemu_domain_def **def, bool *was_running,
                            rv_err *err);
/* DOMAIN_SAVE_IMAGE_DEFINE_XML's work on the image at path (MANAGED_SAVE_
 * DEFINE_XML's too): RV_DEFERRED, or -1 with err set. */
int rv_qemu_save_image_define(const char *path, const char *dxml, unsigned int flags, rv_err *err);
/* The running SAVE job's work (the domain is active). */
void rv_qemu_save_begin(qemu_dom *d);
/* The process went away during a save: drop what the save had begun. */
void rv_qemu_save_abandon(qemu_dom *d);
/* remvirtd is stopping: let go of a save under way, leaving its files
 * for the next remvirtd. */
void rv_qemu_save_release(qemu_dom *d);
/* ABORT_JOB of a migration: migrate_cancel.  0, or -1 with err. */
int rv_qemu_migration_cancel(qemu_dom *d, rv_err *err);
/* Poll query-migrate until the migration completes or fails, then
 * d->migrate_done(d, NULL or why). */
void rv_qemu_migration_wait(qemu_dom *d, void (*done)(qemu_dom *d, const rv_err *err));
void rv_qemu_migration_wait_stop(qemu_dom *d);
/* QEMU said its migration changed state (event MIGRATION): poll now
 * rather than at the next tick. */
void rv_qemu_migration_poke(qemu_dom *d);
/* run_dir/<name>.saving, written before a save stops the guest: whether
 * it ran (1) or not (0); -1: no save was under way.  Removed. */
int rv_qemu_save_marker_take(const char *name);
/* At start-up: remove partial images a killed save left in save_dir. */
void rv_qemu_save_dir_clean(void);
/* ---- qemu_migtune.c: migration tuning (and DOMAIN_MIGRATE_* tuning slots) ---- */
/* migrate-set-parameters' arguments for a max-bandwidth of mib MiB/s
 * (NULL: no memory). */
json_object *rv_qemu_migtune_bandwidth_args(unsigned long long mib);
/* Give d's QEMU the kept pre-copy bandwidth (after a save or dump to a
 * file, which ran unlimited); its answer is not waited for. */
void rv_qemu_migtune_put_bandwidth(qemu_dom *d);
/* ---- qemu_pin.c: vcpu and emulator pinning, live ---- */
/* At start (QEMU paused, its monitor ready): pin the threads as the live
 * definition's <cputune> says (the IOThreads' after the emulator's);
 * failures are logged. */
void rv_qemu_pin_apply(qemu_dom *d);
/* A CPU map (libvirt's: bit b of byte b/8 is CPU b) as a CPU set, and
 * a set into a zeroed map of maplen bytes. */
void rv_qemu_map_to_set(const unsigned char *map, size_t len, cpu_set_t *set);
void rv_qemu_set_to_map(const cpu_set_t *set, unsigned char *map, int maplen);
/* ---- qemu_iothread.c ---- */
/* The IOThread id of QEMU's object id "iothreadN" (query-iothreads'), or 0. */
unsigned rv_qemu_iothread_id(const char *id);
/* Pin running d's IOThreads as its live <iothreadpin>s say, their
 * threads from query-iothreads' answer; failures are logged. */
void rv_qemu_iothread_pins_set(const qemu_dom *d, json_object *iothreads);
/* ---- qemu_live.c: calls that wait for a running domain's QMP answers
 * (they send with rv_qemu_send_for) ---- */
/* What such a call's request begins with: the call, and the domain's
 * monitor, name and process when it was made. */
typedef struct rv_qemu_live_req {
    rv_deferred *reply;
    rv_qmp *qmp;
    char *name;
    pid_t pid;
    const char *command;        /* rv_qemu_live_void's */
} rv_qemu_live_req;
/* A zeroed request of size bytes that begins with an rv_qemu_live_req,
 * filled for running d, the call being served taken (rv_driver_defer);
 * NULL with err. */
void *rv_qemu_live_req_new(size_t size, qemu_dom *d, rv_err *err);
/* In a reply callback: whether r's domain still runs with the same
 * monitor and process; if not (or qerr, QMP's error), the call is
 * answered with the error and the caller frees its request. */
bool rv_qemu_live_req_alive(const rv_qemu_live_req *r, rv_qmp *qmp, const rv_err *qerr);
/* QMP's error for a command as libvirtd words it ("internal error:
 * unable to execute QEMU command 'X': DESC") into buf, and its code;
 * other errors (the monitor closed, a timeout) as they are. */
int rv_qemu_qmp_error_text(const rv_err *qerr, char *buf, size_t size);
/* Send a command with one string argument (key: value) whose answer
 * nobody waits for (a clean-up: an error is only logged). */
void rv_qemu_send_quietly(rv_qmp *qmp, const char *command, const char *key, const char *value);
/* The same with arguments args (taken; NULL: none). */
void rv_qemu_send_quietly_args(rv_qmp *qmp, const char *command, json_object *args);
/* QMP's set_link of the NIC whose id (alias) is name, its answer ignored. */
void rv_qemu_set_link_quietly(rv_qmp *qmp, const char *name, bool up);
/* The entry of query-block's or query-blockstats' answer list for the
 * disk with this target, or NULL: by its drive (drive-<target>, from the
 * command line) or its device (a hotplugged disk's drive has no name). */
json_object *rv_qemu_block_entry(json_object *list, const char *target);
/* Answer reply with QMP's error as libvirtd words it (as
 * rv_qemu_qmp_error_text words it). */
void rv_qemu_finish_qmp_error(rv_deferred *reply, const rv_err *qerr);
/* A call answered by one QMP command to running d that returns nothing
 * (args taken): RV_DEFERRED, or -1 with err.  QEMU's refusal is worded
 * as libvirtd's. */
int rv_qemu_live_void(qemu_dom *d, const char *command, json_object *args, rv_err *err);

/* ---- qemu_hotplug.c: attach and detach ---- */
/* QEMU's DEVICE_DELETED for device id (a disk's target). */
void rv_qemu_hotplug_device_deleted(qemu_dom *d, const char *id);
/* The guest refused to eject device id. */
void rv_qemu_hotplug_unplug_failed(qemu_dom *d, const char *id);

/* ---- qemu_blockjob.c: block jobs ---- */
/* QEMU's JOB_STATUS_CHANGE, BLOCK_JOB_READY, _COMPLETED, _CANCELLED. */
void rv_qemu_blockjob_event(qemu_dom *d, const char *name, json_object *data);
/* d's process is gone: its jobs end, a call waiting for one is answered. */
void rv_qemu_blockjob_domain_gone(qemu_dom *d);
/* The records of d's jobs that QEMU runs, "blockjob ..." lines for its
 * status ("" when none; NULL: out of memory). */
char *rv_qemu_blockjob_status(const qemu_dom *d);
/* A restarted remvirtd: the jobs recorded in status (as read back) are
 * d's again; once its monitor is ready, resync asks QEMU what became of
 * them while remvirtd was away and carries on. */
void rv_qemu_blockjob_restore(qemu_dom *d, const char *status);
void rv_qemu_blockjob_resync(qemu_dom *d);
/* Whether d's disk target has a block job. */
bool rv_qemu_blockjob_busy(const qemu_dom *d, const char *target);
/* ---- qemu_backup.c: backup jobs ---- */
/* QEMU's BLOCK_JOB_* and JOB_STATUS_CHANGE events, for the backup's jobs. */
void rv_qemu_backup_event(qemu_dom *d, const char *name, json_object *data);
/* QEMU's id of the backup job on d's disk target ("" while the backup
 * is being set up), or NULL: none. */
const char *rv_qemu_backup_job_id(const qemu_dom *d, const char *target);
/* End d's backup (ABORT_JOB's way): 0, or -1 with err. */
int rv_qemu_backup_abort(qemu_dom *d, rv_err *err);
/* d's QEMU has gone: its backup too. */
void rv_qemu_backup_domain_gone(qemu_dom *d);
/* Reattached to d's QEMU: the backup jobs a remvirtd before this one
 * started are cancelled, their nodes and the NBD server dropped. */
void rv_qemu_backup_resync(qemu_dom *d);
/* A disk-only external snapshot of running d (DOMAIN_SNAPSHOT_CREATE_XML
 * with DISK_ONLY): a qcow2 overlay over each disk req leaves in (its
 * <source file>, else the source's name with the snapshot's name as its
 * extension; reuse: the files are there), live and in the definition;
 * the call's ret names snapshot name.  RV_DEFERRED, or -1 with err. */
struct rv_snapshot_request;
int rv_qemu_blockjob_snapshot(qemu_dom *d, const struct rv_snapshot_request *req, const char *name, bool reuse,
                              rv_domain_snapshot_create_xml_ret *ret, rv_err *err);

/* ---- qemu_domcaps.c: the domain capabilities ---- */
/* The binary's machine types, once at start (it runs the binary). */
void rv_qemu_domcaps_probe(const char *binary);

/* ---- qemu_cpu.c: CPU models, from a probe QEMU ---- */
/* A set of CPU feature names in QEMU's spelling, sorted. */
typedef struct rv_qemu_cpu_features {
    char **names;
    size_t n;
} rv_qemu_cpu_features;
void rv_qemu_cpu_features_clear(rv_qemu_cpu_features *f);
/* Start the probe if it has not run (at a connection's open; calls that
 * need it wait for it). */
void rv_qemu_cpu_probe_start(void);
/* At start-up: kill a probe QEMU an earlier remvirtd left (killed
 * while it probed). */
void rv_qemu_cpu_kill_stale_probe(void);
void rv_qemu_cpu_cleanup(void);
/* For a slot that needs the probe: 0 when it is done (or, unless need,
 * failed); RV_DEFERRED: the call waits and is run again once it is over;
 * -1 with err (it failed and need). */
int rv_qemu_cpu_wait(bool need, rv_err *err);
/* The word flag is in /proc/cpuinfo's flags line. */
bool rv_qemu_cpu_flag(const char *flags, const char *flag);
/* The host CPU from CPUID: its vendor string and signature into id, and
 * the features the probe QEMU knows added to feats.  1; 0 (id zeroed,
 * feats left empty) where there is no CPUID; -1 out of memory (id set). */
int rv_qemu_cpu_host(rv_cpuid_host *id, rv_qemu_cpu_features *feats);
/* The model that best describes a host CPU of that vendor (libvirt's
 * name; NULL: any) and features; NULL when none fits or no probe. */
const char *rv_qemu_cpu_host_model(const char *vendor, const rv_qemu_cpu_features *host);
/* <feature name=.../> for each host feature the model lacks. */
void rv_qemu_cpu_put_features(FILE *fp, const char *indent, const char *model,
                              const rv_qemu_cpu_features *host);

#endif
