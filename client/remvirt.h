/* libremvirt: client library for remvirtd and for libvirtd (the libvirt
 * remote protocol over a Unix socket).
 *
 * Every call is synchronous, like a local function call.  Any number of
 * threads may share one rv_conn.  A failing call returns -1 (or NULL) and
 * leaves its reason in the calling thread's last error (rv_last_error());
 * a succeeding call clears it.  Codes, error domains and state numbers are
 * libvirt's, so values from libvirt's documentation apply unchanged.
 *
 * Strings returned as char * are the caller's to free().  rv_dom handles
 * are the caller's to release with rv_domain_free(); each holds a
 * reference to its connection, so rv_connect_close() may come first (the
 * handle then fails with RV_ERROR_INVALID_CONN).
 *
 * The calls that are one remote procedure each are declared in
 * remvirt-calls.gen.h (included below), which gen/rvgen.py writes from
 * protocol/rv_remote.x; the rest are declared here. */
#ifndef LIBREMVIRT_REMVIRT_H
#define LIBREMVIRT_REMVIRT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header belongs to: major * 1000000 + minor * 1000 + micro. */
#define RV_LIB_VERSION_NUMBER 1000ULL          /* 0.1.0 */

typedef struct rv_conn rv_conn;
typedef struct rv_dom rv_dom;
typedef struct rv_net rv_net;     /* a virtual network */
typedef struct rv_pool rv_pool;   /* a storage pool */
typedef struct rv_vol rv_vol;     /* a storage volume */
typedef struct rv_snap rv_snap;   /* a domain snapshot */

/* The numbers that mean something on the wire (states, reasons, events,
 * flags, error codes), generated from protocol/rv_values.x. */
#include <stddef.h>

#include "remvirt-values.gen.h"

/* ---- errors ---- */

/* Error codes RV_ERROR_* (libvirt's virErrorNumber), where they come from
 * RV_ERROR_FROM_* (virErrorDomain) and levels RV_ERROR_LEVEL_*: see
 * remvirt-values.gen.h. */

typedef struct rv_error_info {
    int code;                   /* RV_ERROR_* */
    int domain;                 /* RV_ERROR_FROM_* */
    int level;                  /* RV_ERROR_LEVEL_* */
    const char *message;        /* never NULL; valid until this thread's next call */
} rv_error_info;

/* The calling thread's last error, or NULL if the last call succeeded. */
const rv_error_info *rv_last_error(void);
/* Forget the calling thread's last error (and free its message). */
void rv_reset_last_error(void);

/* ---- connections ---- */

/* rv_connect_open flags */
enum { RV_CONNECT_READONLY = 1 };

/* Open a connection.  uri: driver[+transport]://[user@][host][:port]/[path][?params],
 * e.g. "test:///default" or "test+unix:///default?socket=/tmp/lv/libvirt-sock";
 * NULL means $REMVIRT_DEFAULT_URI, else "test:///default".  Without
 * ?socket= the daemon's default socket is used (/run/remvirt/remvirt-sock,
 * or remvirt-sock-ro for a read-only connection).
 * A server that asks for SASL authentication (libvirtd's auth_tcp =
 * "sasl") gets the user name from the URI (user@host), else from the auth
 * file, which also holds passwords; missing ones are asked for on the
 * terminal (the password without echo) when stdin is one and the URI has
 * no no_tty=1.  The auth file is $REMVIRT_AUTH_FILE, else the URI's
 * authfile=, else $XDG_CONFIG_HOME/remvirt/auth.conf, else
 * /etc/remvirt/auth.conf, in libvirt's auth.conf format (so one file
 * serves virsh too):
 *     [credentials-mine]
 *     authname=fred
 *     password=secret
 *     [auth-libvirt-HOST]        (or [auth-libvirt-default] for any host)
 *     credentials=mine
 * auth=sasl.MECHANISM in the URI picks the SASL mechanism.  Over plain
 * TCP the mechanism must give a security layer (DIGEST-MD5, GSSAPI),
 * which then protects every packet.
 * With an event loop registered (rv_event_register_default_impl), the
 * connection also gets events, keepalive and the close callback (below).
 * While a call waits for its reply, the waiting thread first polls the
 * socket for up to $REMVIRT_SPIN_US microseconds (default 30, 0 to sleep
 * at once), yielding the CPU between looks: on virtual machines waking a
 * sleeping thread costs more than a whole local round trip.  Read once,
 * when the connection opens.
 * Opening waits at most $REMVIRT_OPEN_TIMEOUT seconds (default 30, 0 for
 * ever) for each answer of the server, then fails with
 * RV_ERR_OPERATION_TIMEOUT: a server that is stopped still accepts
 * connections and never answers.  Calls on the open connection have no
 * such limit. */
rv_conn *rv_connect_open(const char *uri, unsigned int flags);

/* Credentials an rv_auth_callback is asked for (libvirt's VIR_CRED_*). */
enum {
    RV_CRED_AUTHNAME = 2,       /* the name to log in as */
    RV_CRED_PASSPHRASE = 5,     /* its password: a secret, not to be echoed */
};

/* Give the credential `type`; prompt says which, for a person ("Password
 * for fred@host").  Return it malloc'd (the library frees it, wiping a
 * passphrase first), or NULL to give up: the open then fails with
 * RV_ERROR_AUTH_FAILED.  Called from the thread that opens. */
typedef char *(*rv_auth_callback)(int type, const char *prompt, void *opaque);

/* rv_connect_open, except that credentials the URI and the auth file do
 * not give are asked of callback instead of the terminal; a NULL callback
 * asks nobody. */
rv_conn *rv_connect_open_auth(const char *uri, unsigned int flags, rv_auth_callback callback,
                              void *opaque);

/* Say goodbye to the server and close the socket.  No call on this
 * connection (including calls through its rv_dom handles) may be running
 * in any thread, and none may start afterwards: the application joins its
 * threads first.  Frees conn once its last rv_dom is freed.
 * 0, or -1 if the goodbye failed (the connection is closed anyway). */
int rv_connect_close(rv_conn *conn);

/* 1 while the connection works, 0 once the server closed it or broke the
 * protocol (every later call fails), -1 for a NULL rv_conn.  Like every
 * other call, not to be used on a connection after rv_connect_close(). */
int rv_connect_is_alive(rv_conn *conn);

char *rv_connect_get_uri(rv_conn *conn);            /* the URI it was opened with */
/* This library's version, as major * 1000000 + minor * 1000 + micro. */
unsigned long long rv_get_lib_version(void);

/* ---- host ---- */

typedef struct rv_node_info {
    char model[33];             /* CPU model, NUL-terminated */
    unsigned long long memory;  /* KiB */
    unsigned int cpus;
    unsigned int mhz;
    unsigned int nodes;         /* NUMA cells */
    unsigned int sockets;       /* per node */
    unsigned int cores;         /* per socket */
    unsigned int threads;       /* per core */
} rv_node_info;

typedef struct rv_security_model {
    char model[257];            /* "" when no security driver is active */
    char doi[257];
} rv_security_model;

int rv_node_get_info(rv_conn *conn, rv_node_info *info);
int rv_node_get_security_model(rv_conn *conn, rv_security_model *model);

/* ---- domains: listing, lookup, definition ---- */

/* rv_connect_list_all_domains filters: RV_CONNECT_LIST_DOMAINS_* (libvirt's
 * VIR_CONNECT_LIST_DOMAINS_*, remvirt-values.gen.h); 0 lists every domain. */

/* The domains matching flags; returns how many.  If doms is not NULL it
 * gets a NULL-terminated array: rv_domain_free() each, then free() it. */
int rv_connect_list_all_domains(rv_conn *conn, rv_dom ***doms, unsigned int flags);

/* The domain with this id; a negative id is refused (RV_ERROR_INVALID_ARG). */
rv_dom *rv_domain_lookup_by_id(rv_conn *conn, int id);
/* uuid text: 8-4-4-4-12 hex digits (or 32 hex digits). */
rv_dom *rv_domain_lookup_by_uuid_string(rv_conn *conn, const char *uuid);

/* ---- domain handles ---- */

#define RV_UUID_BUFLEN 16
#define RV_UUID_STRING_BUFLEN 37

const char *rv_domain_get_name(rv_dom *dom);        /* valid while dom lives */
/* The id the domain had when this handle was made or last started; -1
 * while inactive. */
int rv_domain_get_id(rv_dom *dom);
int rv_domain_get_uuid(rv_dom *dom, unsigned char uuid[RV_UUID_BUFLEN]);
int rv_domain_get_uuid_string(rv_dom *dom, char buf[RV_UUID_STRING_BUFLEN]);
void rv_domain_free(rv_dom *dom);

/* ---- domain lifecycle ---- */

/* rv_domain_create / rv_domain_create_xml flags: RV_DOMAIN_START_*;
 * rv_domain_undefine flags: RV_DOMAIN_UNDEFINE_* (remvirt-values.gen.h). */

/* Start a defined domain; dom's id becomes the running domain's. */
int rv_domain_create(rv_dom *dom, unsigned int flags);
/* Ask the guest to shut down / power it off at once; flags:
 * RV_DOMAIN_SHUTDOWN_* other than the states (0: the hypervisor's default
 * method), RV_DOMAIN_DESTROY_*. */
int rv_domain_shutdown(rv_dom *dom, unsigned int flags);
int rv_domain_destroy(rv_dom *dom, unsigned int flags);

/* ---- domain queries ---- */

/* Domain states are RV_DOMAIN_NOSTATE .. RV_DOMAIN_PMSUSPENDED (libvirt's
 * virDomainState), each state's reasons RV_DOMAIN_<STATE>_* (see
 * remvirt-values.gen.h). */

typedef struct rv_domain_info {
    int state;                  /* RV_DOMAIN_* */
    unsigned long long max_mem; /* KiB */
    unsigned long long memory;  /* KiB */
    unsigned int nr_virt_cpu;
    unsigned long long cpu_time; /* ns */
} rv_domain_info;

typedef struct rv_security_label {
    char label[4097];           /* "" when the domain has none */
    int enforcing;
} rv_security_label;

/* rv_domain_get_xml_desc flags: RV_DOMAIN_XML_* (remvirt-values.gen.h). */

int rv_domain_get_info(rv_dom *dom, rv_domain_info *info);
/* state: RV_DOMAIN_*; reason: libvirt's per-state reason number (reason
 * may be NULL). */
int rv_domain_get_state(rv_dom *dom, int *state, int *reason, unsigned int flags);
int rv_domain_get_security_label(rv_dom *dom, rv_security_label *label);
/* One label per security driver of the running domain (none when it is
 * shut off): *labels gets a malloc'd array to free(); returns how many. */
int rv_domain_get_security_label_list(rv_dom *dom, rv_security_label **labels);
/* Messages the hypervisor keeps about the domain (tainting, deprecation).
 * Returns how many; *msgs gets a NULL-terminated array to free() element
 * by element and then as a whole. */
int rv_domain_get_messages(rv_dom *dom, char ***msgs, unsigned int flags);

/* ---- statistics and tuning ---- */

/* One memory statistic: tag is libvirt's virDomainMemoryStatTags number
 * (6 the balloon's size, 7 the RSS, ...), val in KiB for sizes. */
typedef struct rv_memory_stat {
    int tag;
    unsigned long long val;
} rv_memory_stat;
/* Up to nr_stats statistics into stats; returns how many (0 for a domain
 * without a memory balloon). */
int rv_domain_memory_stats(rv_dom *dom, rv_memory_stat *stats, unsigned int nr_stats,
                           unsigned int flags);

/* A disk's counters; path is its target ("vda") or source file. */
typedef struct rv_block_stats {
    long long rd_req, rd_bytes, wr_req, wr_bytes, errs;
} rv_block_stats;
int rv_domain_block_stats(rv_dom *dom, const char *path, rv_block_stats *stats);

/* One virtual CPU of a running domain: state is libvirt's virVcpuState
 * (0 offline, 1 running, 2 blocked), cpu the host CPU it last ran on. */
typedef struct rv_vcpu {
    unsigned int number;
    int state;
    unsigned long long cpu_time;        /* ns */
    int cpu;
} rv_vcpu;
/* Up to maxinfo vcpus into info and, if cpumaps is not NULL, maplen bytes
 * of host CPU affinity per vcpu into cpumaps (bit n: may run on CPU n).
 * Returns how many vcpus were filled in. */
int rv_domain_get_vcpus(rv_dom *dom, rv_vcpu *info, int maxinfo, unsigned char *cpumaps,
                        int maplen);

/* Where each of the first ncpumaps vcpus may run (maplen bytes each into
 * cpumaps), from the live or the persistent definition (flags
 * RV_DOMAIN_VCPU_LIVE or _CONFIG); works on a shut-off domain.  Returns
 * how many maps were filled in. */
int rv_domain_get_vcpu_pin_info(rv_dom *dom, int ncpumaps, unsigned char *cpumaps, int maplen,
                                unsigned int flags);

/* The host's CPUs: returns how many are present; *cpumap (if not NULL)
 * gets a malloc'd map with a bit set per online CPU, *online (if not
 * NULL) how many are online. */
int rv_node_get_cpu_map(rv_conn *conn, unsigned char **cpumap, unsigned int *online,
                        unsigned int flags);

/* The scheduler's name ("fair", "posix", ...), malloc'd; *nparams (if not
 * NULL) gets how many parameters it has. */
char *rv_domain_get_scheduler_type(rv_dom *dom, int *nparams);

/* A typed parameter (libvirt's virTypedParameter): type RV_PARAM_*
 * says which member of value holds it. */
enum {
    RV_PARAM_INT = 1, RV_PARAM_UINT = 2, RV_PARAM_LLONG = 3,
    RV_PARAM_ULLONG = 4, RV_PARAM_DOUBLE = 5, RV_PARAM_BOOLEAN = 6,
    RV_PARAM_STRING = 7,
};
#define RV_PARAM_FIELD_LENGTH 80
typedef struct rv_typed_parameter {
    char field[RV_PARAM_FIELD_LENGTH];
    int type;
    union {
        int i;
        unsigned int ui;
        long long l;
        unsigned long long ul;
        double d;
        int b;
        char *s;            /* malloc'd; rv_typed_parameters_clear() frees it */
    } value;
} rv_typed_parameter;
/* Free the strings of n parameters. */
void rv_typed_parameters_clear(rv_typed_parameter *params, int n);
/* The scheduler's parameters: *nparams in, the room in params; out, how
 * many were filled in. */
int rv_domain_get_scheduler_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams);

/* ---- more readers (client/queries.c) ---- */

/* The tuning readers, as libvirt's: with *nparams 0, *nparams gets how
 * many parameters there are; else up to *nparams are filled into params
 * (free their strings with rv_typed_parameters_clear) and *nparams gets
 * how many.  flags: 0 current, 1 live, 2 config (libvirt's AFFECT_*). */
int rv_domain_get_memory_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                    unsigned int flags);
int rv_domain_get_blkio_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                   unsigned int flags);
int rv_domain_get_numa_parameters(rv_dom *dom, rv_typed_parameter *params, int *nparams,
                                  unsigned int flags);
/* device: the interface's target name or MAC address. */
int rv_domain_get_interface_parameters(rv_dom *dom, const char *device,
                                       rv_typed_parameter *params, int *nparams,
                                       unsigned int flags);
/* disk: its target or source path. */
int rv_domain_get_block_io_tune(rv_dom *dom, const char *disk, rv_typed_parameter *params,
                                int *nparams, unsigned int flags);
/* rv_typed_parameters_clear, then free(params). */
void rv_typed_parameters_free(rv_typed_parameter *params, int n);

/* An interface's counters (device: target name or MAC); -1: not counted. */
typedef struct rv_interface_stats {
    long long rx_bytes, rx_packets, rx_errs, rx_drop;
    long long tx_bytes, tx_packets, tx_errs, tx_drop;
} rv_interface_stats;
int rv_domain_interface_stats(rv_dom *dom, const char *device, rv_interface_stats *stats);

/* A disk's sizes in bytes (path: its target or source). */
typedef struct rv_block_info {
    unsigned long long capacity, allocation, physical;
} rv_block_info;
int rv_domain_get_block_info(rv_dom *dom, const char *path, rv_block_info *info,
                             unsigned int flags);

/* Where the emulator's threads may run: maplen bytes into cpumap.
 * Returns 1 when pinned, 0 when not. */
int rv_domain_get_emulator_pin_info(rv_dom *dom, unsigned char *cpumap, int maplen,
                                    unsigned int flags);

/* The domain's I/O threads: *info gets a malloc'd array (free it with
 * rv_iothread_info_free); returns how many. */
typedef struct rv_iothread_info {
    unsigned int iothread_id;
    unsigned char *cpumap;      /* maplen bytes: bit n, may run on CPU n */
    int maplen;
} rv_iothread_info;
int rv_domain_get_iothread_info(rv_dom *dom, rv_iothread_info **info, unsigned int flags);
void rv_iothread_info_free(rv_iothread_info *info, int n);
/* Let IOThread iothread_id run only on the host CPUs set in cpumap
 * (maplen bytes, bit n: CPU n), live and/or in the definition (flags
 * RV_DOMAIN_VCPU_LIVE, _CONFIG). */
int rv_domain_pin_iothread(rv_dom *dom, unsigned int iothread_id, const unsigned char *cpumap,
                           int maplen, unsigned int flags);
/* Change the running IOThread iothread_id's nparams parameters
 * ("poll-max-ns", "poll-grow", "poll-shrink", "aio-max-batch",
 * "thread-pool-min", "thread-pool-max"); flags RV_DOMAIN_VCPU_LIVE. */
int rv_domain_set_iothread_params(rv_dom *dom, unsigned int iothread_id,
                                  const rv_typed_parameter *params, int nparams,
                                  unsigned int flags);

/* The guest's clock (asked of its agent). */
int rv_domain_get_time(rv_dom *dom, long long *seconds, unsigned int *nseconds,
                       unsigned int flags);

/* The guest's interfaces and their addresses; source: 0 DHCP leases,
 * 1 guest agent, 2 ARP table.  *ifaces gets a malloc'd array (free it
 * with rv_dom_ifaces_free); returns how many. */
typedef struct rv_dom_ip_addr {
    int type;                   /* 0 IPv4, 1 IPv6 */
    char *addr;
    unsigned int prefix;
} rv_dom_ip_addr;
typedef struct rv_dom_iface {
    char *name;
    char *hwaddr;               /* NULL when unknown */
    unsigned int naddrs;
    rv_dom_ip_addr *addrs;
} rv_dom_iface;
int rv_domain_interface_addresses(rv_dom *dom, rv_dom_iface **ifaces, unsigned int source,
                                  unsigned int flags);
void rv_dom_ifaces_free(rv_dom_iface *ifaces, int n);

/* The most vCPUs a guest of type ("kvm", "qemu"; NULL: the driver's) may have. */
int rv_connect_get_max_vcpus(rv_conn *conn, const char *type);
/* Free memory (bytes) of up to max_cells NUMA cells from start_cell on;
 * returns how many cells were filled in. */
int rv_node_get_cells_free_memory(rv_conn *conn, unsigned long long *free_mem, int start_cell,
                                  int max_cells);
/* The host's CPU time counters (ns), of one CPU or all (cpu -1): *stats
 * gets a malloc'd array (free()); returns how many. */
typedef struct rv_node_cpu_counter {
    char field[RV_PARAM_FIELD_LENGTH];
    unsigned long long value;
} rv_node_cpu_counter;
int rv_node_get_cpu_stats(rv_conn *conn, int cpu, rv_node_cpu_counter **stats,
                          unsigned int flags);
/* The host's memory figures (KiB: total, free, buffers, cached; a
 * cell's: total, free), of the whole host (cell -1) or one NUMA cell;
 * *stats as rv_node_get_cpu_stats's. */
int rv_node_get_memory_stats(rv_conn *conn, int cell, rv_node_cpu_counter **stats,
                             unsigned int flags);
/* The most capable CPU (as <cpu> XML, malloc'd) that each of the ncpus
 * <cpu> definitions can run (flags RV_CONNECT_BASELINE_CPU_*); the
 * hypervisor variant asks what the hypervisor can give a guest (any of
 * emulator, arch, machine and virttype may be NULL: the driver's
 * defaults) and disables what it lacks. */
char *rv_connect_baseline_cpu(rv_conn *conn, const char *const *xml_cpus, unsigned int ncpus,
                              unsigned int flags);
char *rv_connect_baseline_hypervisor_cpu(rv_conn *conn, const char *emulator, const char *arch,
                                         const char *machine, const char *virttype,
                                         const char *const *xml_cpus, unsigned int ncpus,
                                         unsigned int flags);
/* A <cpu> definition against the CPU the hypervisor can give a guest:
 * RV_CPU_COMPARE_INCOMPATIBLE, _IDENTICAL or _SUPERSET, or -1. */
int rv_connect_compare_hypervisor_cpu(rv_conn *conn, const char *emulator, const char *arch,
                                      const char *machine, const char *virttype,
                                      const char *xml_cpu, unsigned int flags);
/* The CPU models the host knows for arch: *models (if not NULL) gets a
 * malloc'd NULL-terminated array of malloc'd names; returns how many. */
int rv_connect_get_cpu_model_names(rv_conn *conn, const char *arch, char ***models,
                                   unsigned int flags);
/* The domain capabilities XML (malloc'd); any argument may be NULL. */
char *rv_connect_get_domain_capabilities(rv_conn *conn, const char *emulator, const char *arch,
                                         const char *machine, const char *virttype,
                                         unsigned int flags);

/* Statistics of many domains in one call (libvirt's
 * virConnectGetAllDomainStats / virDomainListGetStats): of doms, or of
 * every domain when ndoms is 0 (flags then filter as
 * RV_CONNECT_GET_ALL_DOMAINS_STATS_*); stats: RV_DOMAIN_STATS_* groups, 0
 * all.  *records gets a malloc'd array (free it with
 * rv_domain_stats_free); returns how many. */
typedef struct rv_domain_stats {
    rv_dom *dom;
    rv_typed_parameter *params;
    int nparams;
} rv_domain_stats;
int rv_connect_get_all_domain_stats(rv_conn *conn, rv_dom *const *doms, unsigned int ndoms,
                                    unsigned int stats, rv_domain_stats **records,
                                    unsigned int flags);
void rv_domain_stats_free(rv_domain_stats *records, int n);

/* ---- asynchronous calls ----
 *
 * For one thread that wants many calls in flight on one connection (a
 * poller asking after hundreds of domains): a *_start function sends
 * nothing yet and returns at once; rv_connect_complete() sends every
 * started call in one write, then reads answers until at most
 * max_in_flight started calls are unanswered, running each answered
 * call's callback in the calling thread.  The callback gets NULL on
 * success (the result is filled) or the error (valid during the
 * callback only).  A call not yet answered when the connection fails or
 * closes gets the error then.  The synchronous calls may be used on the
 * same connection, from any thread, in between.  Returns 0 (started),
 * or -1 with the last error set (the callback will not run). */
typedef void (*rv_call_done)(void *opaque, const rv_error_info *error);
int rv_domain_get_info_start(rv_dom *dom, rv_domain_info *info, rv_call_done done,
                             void *opaque);
/* How many callbacks ran, or -1 with the last error set (no connection). */
int rv_connect_complete(rv_conn *conn, unsigned int max_in_flight);

/* ---- the calls generated from protocol/rv_remote.x ---- */

/* ---- virtual networks ---- */

/* rv_connect_list_all_networks filters: RV_CONNECT_LIST_NETWORKS_*
 * (remvirt-values.gen.h); 0 lists every network.  If nets is not NULL it
 * gets a NULL-terminated array: rv_network_free() each, then free() it. */
int rv_connect_list_all_networks(rv_conn *conn, rv_net ***nets, unsigned int flags);
/* uuid text: 8-4-4-4-12 hex digits (or 32 hex digits). */
rv_net *rv_network_lookup_by_uuid_string(rv_conn *conn, const char *uuid);
const char *rv_network_get_name(rv_net *net);       /* valid while net lives */
int rv_network_get_uuid(rv_net *net, unsigned char uuid[RV_UUID_BUFLEN]);
int rv_network_get_uuid_string(rv_net *net, char buf[RV_UUID_STRING_BUFLEN]);
void rv_network_free(rv_net *net);

/* One DHCP lease of a network (rv_network_get_dhcp_leases). */
typedef struct rv_network_dhcp_lease_info {
    char *iface;                /* the network's bridge */
    long long expiry_time;      /* seconds since the epoch */
    int type;                   /* 0 IPv4, 1 IPv6 */
    char *mac;                  /* may be NULL, as the next three */
    char *iaid;
    char *ipaddr;
    unsigned int prefix;
    char *hostname;
    char *clientid;
} rv_network_dhcp_lease_info;
/* The network's leases (mac: only that MAC's; NULL: all), an array of
 * the count returned (-1 on error); flags 0. */
int rv_network_get_dhcp_leases(rv_net *net, const char *mac, rv_network_dhcp_lease_info **leases,
                               unsigned int flags);
void rv_network_dhcp_leases_free(rv_network_dhcp_lease_info *leases, int n);

/* ---- storage pools and volumes ---- */

/* rv_connect_list_all_storage_pools filters: RV_CONNECT_LIST_STORAGE_POOLS_*
 * (remvirt-values.gen.h); 0 lists every pool.  If pools is not NULL it
 * gets a NULL-terminated array: rv_storage_pool_free() each, then free()
 * it.  Returns how many. */
int rv_connect_list_all_storage_pools(rv_conn *conn, rv_pool ***pools, unsigned int flags);
/* The pool's volumes, the same way (rv_storage_vol_free() each); flags 0. */
int rv_storage_pool_list_all_volumes(rv_pool *pool, rv_vol ***vols, unsigned int flags);
rv_pool *rv_storage_pool_lookup_by_uuid_string(rv_conn *conn, const char *uuid);
/* Pools of type ("logical", "netfs", ...) the host could define, as
 * <sources> XML (the caller frees it); src_spec (<source> XML, may be
 * NULL) narrows the search, e.g. to a netfs server.  flags 0. */
char *rv_connect_find_storage_pool_sources(rv_conn *conn, const char *type,
                                           const char *src_spec, unsigned int flags);
const char *rv_storage_pool_get_name(rv_pool *pool);    /* valid while pool lives */
int rv_storage_pool_get_uuid(rv_pool *pool, unsigned char uuid[RV_UUID_BUFLEN]);
int rv_storage_pool_get_uuid_string(rv_pool *pool, char buf[RV_UUID_STRING_BUFLEN]);
void rv_storage_pool_free(rv_pool *pool);

typedef struct rv_storage_pool_info {
    int state;                          /* RV_STORAGE_POOL_INACTIVE, ... */
    unsigned long long capacity;        /* bytes */
    unsigned long long allocation;      /* bytes */
    unsigned long long available;       /* bytes */
} rv_storage_pool_info;
int rv_storage_pool_get_info(rv_pool *pool, rv_storage_pool_info *info);

/* Valid while vol lives: its name, its key, and its pool's name. */
const char *rv_storage_vol_get_name(rv_vol *vol);
const char *rv_storage_vol_get_key(rv_vol *vol);
const char *rv_storage_vol_get_pool_name(rv_vol *vol);
void rv_storage_vol_free(rv_vol *vol);

typedef struct rv_storage_vol_info {
    int type;                           /* RV_STORAGE_VOL_FILE, ... */
    unsigned long long capacity;        /* bytes */
    unsigned long long allocation;      /* bytes */
} rv_storage_vol_info;
int rv_storage_vol_get_info(rv_vol *vol, rv_storage_vol_info *info);

/* ---- domain snapshots ---- */

/* The domain's snapshots matching flags (RV_DOMAIN_SNAPSHOT_LIST_*,
 * remvirt-values.gen.h; 0: all).  If snaps is not NULL it gets a
 * NULL-terminated array: rv_domain_snapshot_free() each, then free() it.
 * Returns how many. */
int rv_domain_list_all_snapshots(rv_dom *dom, rv_snap ***snaps, unsigned int flags);
/* The snapshot's children (with RV_DOMAIN_SNAPSHOT_LIST_DESCENDANTS all
 * its descendants), the same way. */
int rv_domain_snapshot_list_all_children(rv_snap *snap, rv_snap ***snaps, unsigned int flags);
const char *rv_domain_snapshot_get_name(rv_snap *snap);  /* valid while snap lives */
/* The snapshot's domain: valid while snap lives, not to be freed. */
rv_dom *rv_domain_snapshot_get_domain(rv_snap *snap);
void rv_domain_snapshot_free(rv_snap *snap);
/* ---- data streams (libvirt's virStream) ----
 *
 * A stream carries a volume's bytes (rv_storage_vol_upload / _download)
 * or a guest's console (rv_domain_open_console).  Make one with
 * rv_stream_new, hand it to one of those calls, then send or receive,
 * and end it with rv_stream_finish (all went well: the server commits
 * and reports its last error, if any) or rv_stream_abort; free it with
 * rv_stream_free before closing the connection.  Data the server sends
 * waits in the stream until received (at most 16 MiB: past that the
 * stream fails).  Any thread may use a stream, one at a time. */
typedef struct rv_stream rv_stream;

/* rv_stream_new flag: rv_stream_recv never waits; it returns
 * RV_STREAM_AGAIN when nothing has come (for an event loop: call it again
 * when rv_stream_fd() is readable). */
#define RV_STREAM_NONBLOCK 1
#define RV_STREAM_AGAIN (-2)

rv_stream *rv_stream_new(rv_conn *conn, unsigned int flags);
/* Send all n bytes: 0, or -1 (the stream failed: the last error says why). */
int rv_stream_send(rv_stream *st, const char *data, size_t n);
/* Up to n bytes: how many, 0 at the end of the data, -1 on error, or
 * RV_STREAM_AGAIN (RV_STREAM_NONBLOCK only).  A hole of a sparse stream
 * reads as zeros. */
int rv_stream_recv(rv_stream *st, char *data, size_t n);

/* Sparse streams (libvirt's virStreamSendHole, virStreamRecvFlags,
 * virStreamRecvHole): an upload or download opened with the SPARSE_STREAM
 * flag carries runs of zeros as holes, their
 * length only (a STREAM_HOLE packet), so a sparse file's holes survive
 * the trip.  On other streams holes are refused. */
/* Send a hole of length bytes (0: nothing); flags 0.  0 or -1. */
int rv_stream_send_hole(rv_stream *st, long long length, unsigned int flags);
/* rv_stream_recv, and with RV_STREAM_RECV_STOP_AT_HOLE data stops short
 * of a hole: when the hole is next it returns RV_STREAM_AT_HOLE, and
 * rv_stream_recv_hole takes it. */
#define RV_STREAM_RECV_STOP_AT_HOLE 1
#define RV_STREAM_AT_HOLE (-3)
int rv_stream_recv_flags(rv_stream *st, char *data, size_t n, unsigned int flags);
/* The hole that is next (after RV_STREAM_AT_HOLE): its length into
 * *length; flags 0.  0, or -1 when data (or nothing) is next. */
int rv_stream_recv_hole(rv_stream *st, long long *length, unsigned int flags);
int rv_stream_finish(rv_stream *st);
int rv_stream_abort(rv_stream *st);
/* The connection's socket, to poll for readability; -1 on error. */
int rv_stream_fd(rv_stream *st);
/* Aborts a stream that was not ended. */
void rv_stream_free(rv_stream *st);

/* Write into vol from offset, length bytes (0: up to its end), what is
 * sent on st; flags 0 or RV_STORAGE_VOL_UPLOAD_SPARSE_STREAM (holes may
 * be sent: rv_stream_send_hole). */
int rv_storage_vol_upload(rv_vol *vol, rv_stream *st, unsigned long long offset,
                          unsigned long long length, unsigned int flags);
/* Read vol from offset, length bytes (0: up to its end), on st; flags 0
 * or RV_STORAGE_VOL_DOWNLOAD_SPARSE_STREAM (holes may come:
 * rv_stream_recv_flags). */
int rv_storage_vol_download(rv_vol *vol, rv_stream *st, unsigned long long offset,
                            unsigned long long length, unsigned int flags);
/* Join st to the domain's console (dev_name NULL: the first one); flags
 * as virDomainOpenConsole's (RV_DOMAIN_CONSOLE_FORCE 1, _SAFE 2). */
int rv_domain_open_console(rv_dom *dom, const char *dev_name, rv_stream *st,
                           unsigned int flags);

/* ---- host devices, host interfaces, secrets, network filters ----
 * (client/host_objects.c) The wire names these by value, so they come
 * as plain values: a device by its name, the others as rv_*_ref structs
 * whose strings the caller frees with the matching *_free/_clear.  The
 * list calls return how many, the array (one spare entry at the end) in
 * the result pointer, or -1 with the last error set. */

/* flags: RV_CONNECT_LIST_NODE_DEVICES_CAP_* (any of them; none: all),
 * with libvirt's ACTIVE (1 << 31) and INACTIVE bits; *names is a
 * NULL-terminated array: free() each, then the array. */
int rv_connect_list_all_node_devices(rv_conn *conn, char ***names, unsigned int flags);
/* *parent: the parent device's name (the caller frees it), NULL at the top. */
int rv_node_device_get_parent(rv_conn *conn, const char *name, char **parent);
/* Make a device (libvirt's test driver: a vHBA under an FC host) from
 * XML; flags: VALIDATE 1.  *name: the new device's (the caller frees it).
 * rv_node_device_destroy removes it again. */
int rv_node_device_create_xml(rv_conn *conn, const char *xml, unsigned int flags, char **name);

typedef struct rv_interface_ref {
    char *name;
    char *mac;                  /* "aa:bb:cc:dd:ee:ff" */
} rv_interface_ref;
/* flags: RV_CONNECT_LIST_INTERFACES_INACTIVE 1, _ACTIVE 2 (none: all). */
int rv_connect_list_all_interfaces(rv_conn *conn, rv_interface_ref **ifaces, unsigned int flags);
void rv_interface_refs_free(rv_interface_ref *ifaces, int n);
int rv_interface_lookup_by_name(rv_conn *conn, const char *name, rv_interface_ref *iface);
int rv_interface_lookup_by_mac_string(rv_conn *conn, const char *mac, rv_interface_ref *iface);
void rv_interface_ref_clear(rv_interface_ref *iface);
/* 1, 0, or -1 on error. */
int rv_interface_is_active(rv_conn *conn, const rv_interface_ref *iface);
/* flags: 1 asks for the inactive definition. */
char *rv_interface_get_xml_desc(rv_conn *conn, const rv_interface_ref *iface, unsigned int flags);

typedef struct rv_secret_ref {
    char uuid[RV_UUID_STRING_BUFLEN];
    int usage_type;             /* 0 none, 1 volume, 2 ceph, 3 iscsi, 4 tls, 5 vtpm */
    char *usage_id;             /* what it is for: a path, a name */
} rv_secret_ref;
/* flags: libvirt's EPHEMERAL 1, NO_EPHEMERAL 2, PRIVATE 4, NO_PRIVATE 8. */
int rv_connect_list_all_secrets(rv_conn *conn, rv_secret_ref **secrets, unsigned int flags);
void rv_secret_refs_free(rv_secret_ref *secrets, int n);     /* n 1 for one lookup's result */
int rv_secret_lookup_by_uuid_string(rv_conn *conn, const char *uuid, rv_secret_ref *secret);
char *rv_secret_get_xml_desc(rv_conn *conn, const rv_secret_ref *secret, unsigned int flags);
/* flags: VALIDATE 1.  *secret: the defined secret (free usage_id). */
int rv_secret_define_xml(rv_conn *conn, const char *xml, unsigned int flags, rv_secret_ref *secret);
/* The value is bytes, at most 65536 of them (virsh's base64 is its own
 * business); flags 0. */
int rv_secret_set_value(rv_conn *conn, const rv_secret_ref *secret, const unsigned char *value,
                        size_t size, unsigned int flags);
/* *value: *size bytes the caller frees; refused for a private secret. */
int rv_secret_get_value(rv_conn *conn, const rv_secret_ref *secret, unsigned char **value,
                        size_t *size, unsigned int flags);
int rv_secret_undefine(rv_conn *conn, const rv_secret_ref *secret);

typedef struct rv_nwfilter_ref {
    char *name;
    char uuid[RV_UUID_STRING_BUFLEN];
} rv_nwfilter_ref;
int rv_connect_list_all_nwfilters(rv_conn *conn, rv_nwfilter_ref **filters, unsigned int flags);
void rv_nwfilter_refs_free(rv_nwfilter_ref *filters, int n);
int rv_nwfilter_lookup_by_name(rv_conn *conn, const char *name, rv_nwfilter_ref *filter);
int rv_nwfilter_lookup_by_uuid_string(rv_conn *conn, const char *uuid, rv_nwfilter_ref *filter);
char *rv_nwfilter_get_xml_desc(rv_conn *conn, const rv_nwfilter_ref *filter, unsigned int flags);
/* flags: VALIDATE 1.  *filter: the defined filter (free name). */
int rv_nwfilter_define_xml(rv_conn *conn, const char *xml, unsigned int flags, rv_nwfilter_ref *filter);
int rv_nwfilter_undefine(rv_conn *conn, const rv_nwfilter_ref *filter);

/* A filter applied to one guest network device. */
typedef struct rv_nwfilter_binding_ref {
    char *portdev;
    char *filtername;
} rv_nwfilter_binding_ref;
int rv_connect_list_all_nwfilter_bindings(rv_conn *conn, rv_nwfilter_binding_ref **bindings,
                                          unsigned int flags);
void rv_nwfilter_binding_refs_free(rv_nwfilter_binding_ref *bindings, int n);

#include "remvirt-calls.gen.h"

/* ---- the application's event loop ----
 *
 * Events and keepalive need an event loop: the application either plugs
 * in its own (rv_event_register_impl) or uses the built-in one
 * (rv_event_register_default_impl, then rv_event_run_default_impl in a
 * loop, typically in a thread of its own).  Register it before opening
 * connections: a connection opened without one gets no events and no
 * keepalive.  The loop's functions may be called from any thread, also
 * from inside callbacks; the callbacks run in the thread that runs the
 * loop, never with a lock of libremvirt's held. */

/* What a handle waits for or saw (libvirt's virEventHandleType values). */
enum {
    RV_EVENT_HANDLE_READABLE = 1,
    RV_EVENT_HANDLE_WRITABLE = 2,
    RV_EVENT_HANDLE_ERROR = 4,
    RV_EVENT_HANDLE_HANGUP = 8,
};

typedef void (*rv_free_callback)(void *opaque);
typedef void (*rv_event_handle_callback)(int watch, int fd, int events, void *opaque);
typedef void (*rv_event_timeout_callback)(int timer, void *opaque);

/* Add: returns a positive id, or -1.  A timeout's interval is in
 * milliseconds: -1 disabled, 0 fires on every iteration, N every N ms.
 * Remove: 0, or -1 for an unknown id; free_cb(opaque), if any, runs once
 * no callback of that handle or timer can be running any more. */
typedef int (*rv_event_add_handle_func)(int fd, int events, rv_event_handle_callback cb,
                                        void *opaque, rv_free_callback free_cb);
typedef void (*rv_event_update_handle_func)(int watch, int events);
typedef int (*rv_event_remove_handle_func)(int watch);
typedef int (*rv_event_add_timeout_func)(int interval_ms, rv_event_timeout_callback cb,
                                         void *opaque, rv_free_callback free_cb);
typedef void (*rv_event_update_timeout_func)(int timer, int interval_ms);
typedef int (*rv_event_remove_timeout_func)(int timer);

/* Plug in the application's loop (all six functions; once, before the
 * first connection that should use it). */
void rv_event_register_impl(rv_event_add_handle_func add_handle,
                            rv_event_update_handle_func update_handle,
                            rv_event_remove_handle_func remove_handle,
                            rv_event_add_timeout_func add_timeout,
                            rv_event_update_timeout_func update_timeout,
                            rv_event_remove_timeout_func remove_timeout);
/* Use the built-in poll() loop.  0, or -1 with the last error set. */
int rv_event_register_default_impl(void);
/* One iteration of the built-in loop: wait until a handle is ready or a
 * timeout is due (or another thread changed the loop), run the
 * callbacks, return.  0, or -1 with the last error set. */
int rv_event_run_default_impl(void);

/* The registered loop's functions, for the application's own use (the
 * built-in loop serves any file descriptor).  -1 when none is registered. */
int rv_event_add_handle(int fd, int events, rv_event_handle_callback cb, void *opaque,
                        rv_free_callback free_cb);
void rv_event_update_handle(int watch, int events);
int rv_event_remove_handle(int watch);
int rv_event_add_timeout(int interval_ms, rv_event_timeout_callback cb, void *opaque,
                         rv_free_callback free_cb);
void rv_event_update_timeout(int timer, int interval_ms);
int rv_event_remove_timeout(int timer);

/* ---- events and the connection's end ----
 * These need an event loop registered before the connection was opened
 * (see above); the callbacks run in the loop's thread, in the order the
 * server sent the events, and may call any function of the library. */

/* Lifecycle events (RV_DOMAIN_EVENT_DEFINED .., libvirt's virDomainEventType;
 * RV_DOMAIN_EVENT_ID_LIFECYCLE is the event ID); each has its own details,
 * e.g. RV_DOMAIN_EVENT_STOPPED_DESTROYED (remvirt-values.gen.h).  Both
 * reach the callback as the server sent them: a newer server may send
 * values not listed, so check the range before indexing anything by them. */

/* dom is valid during the call only (rv_domain_lookup_by_uuid() keeps one). */
typedef void (*rv_domain_lifecycle_callback)(rv_conn *conn, rv_dom *dom, int event, int detail,
                                             void *opaque);

/* Call cb for every lifecycle event of dom (NULL: of every domain),
 * whoever caused it.  Returns the callback's id (for deregistering), or
 * -1.  free_cb(opaque), if given, runs when the callback is deregistered
 * (once it is not running any more) or the connection is freed.  On -1
 * nothing is kept: cb never runs and free_cb is never called, so opaque
 * is still the caller's (a server's negative or duplicate callback ID is
 * such a failure, RV_ERROR_RPC). */
int rv_connect_domain_event_register_lifecycle(rv_conn *conn, rv_dom *dom,
                                               rv_domain_lifecycle_callback cb, void *opaque,
                                               rv_free_callback free_cb);
int rv_connect_domain_event_deregister(rv_conn *conn, int callback_id);

/* Network lifecycle events: event is RV_NETWORK_EVENT_DEFINED, _UNDEFINED,
 * _STARTED or _STOPPED (detail 0).  net is valid during the call only.
 * Registration and deregistration work as for domains above; net NULL
 * means every network.  The ids are the server's, separate from the
 * domain callbacks'. */
typedef void (*rv_network_lifecycle_callback)(rv_conn *conn, rv_net *net, int event,
                                              int detail, void *opaque);
int rv_connect_network_event_register_lifecycle(rv_conn *conn, rv_net *net,
                                                rv_network_lifecycle_callback cb, void *opaque,
                                                rv_free_callback free_cb);
int rv_connect_network_event_deregister(rv_conn *conn, int callback_id);

/* Storage pool events, the same way (pool NULL: every pool): lifecycle
 * events (RV_STORAGE_POOL_EVENT_DEFINED, _UNDEFINED, _STARTED, _STOPPED,
 * _CREATED for a build, _DELETED; detail 0) and refreshes.  One
 * deregistration call for both kinds; their ids are the server's, separate
 * from the domain and network callbacks'. */
typedef void (*rv_storage_pool_lifecycle_callback)(rv_conn *conn, rv_pool *pool, int event,
                                                   int detail, void *opaque);
typedef void (*rv_storage_pool_refresh_callback)(rv_conn *conn, rv_pool *pool, void *opaque);
int rv_connect_storage_pool_event_register_lifecycle(rv_conn *conn, rv_pool *pool,
                                                     rv_storage_pool_lifecycle_callback cb,
                                                     void *opaque, rv_free_callback free_cb);
int rv_connect_storage_pool_event_register_refresh(rv_conn *conn, rv_pool *pool,
                                                   rv_storage_pool_refresh_callback cb,
                                                   void *opaque, rv_free_callback free_cb);
int rv_connect_storage_pool_event_deregister(rv_conn *conn, int callback_id);

/* Why a connection ended (virConnectCloseReason). */
enum {
    RV_CONNECT_CLOSE_REASON_ERROR = 0,      /* an I/O or protocol error */
    RV_CONNECT_CLOSE_REASON_EOF = 1,        /* the server closed it */
    RV_CONNECT_CLOSE_REASON_KEEPALIVE = 2,  /* the server stopped answering */
    RV_CONNECT_CLOSE_REASON_CLIENT = 3,     /* rv_connect_close() */
};
typedef void (*rv_connect_close_callback)(rv_conn *conn, int reason, void *opaque);

/* One close callback per connection: called once, in the loop's thread
 * when the connection fails (every call waiting on it fails too), or in
 * the closing thread from rv_connect_close() with REASON_CLIENT. */
int rv_connect_register_close_callback(rv_conn *conn, rv_connect_close_callback cb,
                                       void *opaque, rv_free_callback free_cb);
int rv_connect_unregister_close_callback(rv_conn *conn, rv_connect_close_callback cb);

/* Keepalive: after `interval` seconds without a byte from the server,
 * PING it; after `count` PINGs with no sign of life, the connection is
 * dead (REASON_KEEPALIVE).  A connection opened with an event loop has
 * it on with 5 and 5 if the server supports it; interval <= 0 turns it
 * off.  0, or -1 (no event loop, or a server without keepalive). */
int rv_connect_set_keepalive(rv_conn *conn, int interval, unsigned int count);

#ifdef __cplusplus
}
#endif

#endif
