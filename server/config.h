/* remvirtd.conf: `key = value` lines with libvirtd.conf's key names where
 * the meaning is the same.  Values are decimal integers or "strings";
 * '#' starts a comment. */
#ifndef RV_SERVER_CONFIG_H
#define RV_SERVER_CONFIG_H

#include <sys/types.h>

#include "common/error.h"

typedef struct rvs_config {
    char *unix_sock_dir;            /* holds remvirt-sock and remvirt-sock-ro */
    mode_t unix_sock_rw_perms;
    mode_t unix_sock_ro_perms;
    mode_t admin_unix_sock_perms;   /* remvirt-admin-sock: the admin program only */
    int admin_max_clients;          /* admin clients at once (not in max_clients) */
    char *unix_sock_group;          /* group of the sockets remvirtd creates; NULL: its own */
    int max_clients;                /* connected clients; past it new ones are closed */
    int max_queued_clients;         /* listen() backlog */
    int max_client_requests;        /* calls in flight per client */
    char *auth_unix_rw;             /* "none" or "sasl", per listener */
    char *auth_unix_ro;
    char *auth_tcp;
    char *auth_tls;
    char **sasl_allowed_username_list;  /* NULL-terminated globs; NULL: any */
    int tcp_min_ssf;                /* least SASL security strength on plain TCP */
    int auth_timeout;               /* seconds to authenticate before being dropped */
    int max_anonymous_clients;      /* clients not yet authenticated, at once */
    int keepalive_interval;         /* seconds of silence before a PING; -1: off */
    int keepalive_count;            /* unanswered PINGs before a client is dropped */
    size_t max_client_output_bytes; /* unread output (replies, events, ...) per client */
    int client_output_timeout;      /* seconds a client may stay at that cap */
    size_t stream_window_bytes;     /* a download's unread output before it waits */
    /* The memory budget (server/budget.h): what clients may make the
     * daemon hold, all together, the read-only ones, and each user. */
    size_t memory_budget_bytes;
    size_t memory_budget_readonly_bytes;
    size_t memory_budget_user_bytes;
    /* Network listeners (off by default, as libvirtd's). */
    int listen_tcp;
    int listen_tls;
    char *tcp_port;                 /* "16509" */
    char *tls_port;                 /* "16514" */
    char *listen_addr;              /* NULL: every IPv4 and IPv6 address */
    /* TLS: libvirt's file names and policy keys. */
    char *ca_file;
    char *cert_file;
    char *key_file;
    char *crl_file;
    char *tls_priority;
    int tls_no_verify_certificate;
    int tls_no_sanity_certificate;
    char **tls_allowed_dn_list;     /* NULL-terminated globs; NULL: any DN */
    int tls_handshake_timeout;      /* seconds a client may take to finish the handshake */
    int work_threads;               /* threads for TLS handshakes and block peeks */
    int timeout;                    /* seconds without clients before exiting; 0: never */
    int log_level;                  /* 1..4, 0: unset */
    char *log_filters;
    char *log_outputs;
    /* The QEMU driver (NULL: the defaults in docs/qemu-driver.md). */
    char *qemu_config_dir;          /* persistent domain definitions */
    char *qemu_run_dir;             /* running domains: status, monitor sockets, logs */
    char *qemu_save_dir;            /* managed save images */
    char *qemu_dump_dir;            /* a watchdog's automatic core dumps */
    char *qemu_binary;              /* qemu-system-x86_64 */
    /* A pull backup's NBD server with <server tls='yes'> (NULL: /etc/pki/qemu). */
    char *qemu_backup_tls_x509_cert_dir;
    int qemu_backup_tls_x509_verify;
    /* VIR_MIGRATE_TLS: QEMU's x509 credentials for the migration stream
     * (NULL: /etc/pki/qemu) and whether the peer must show a certificate. */
    char *qemu_migrate_tls_x509_cert_dir;
    int qemu_migrate_tls_x509_verify;
    /* Incoming migrations: the host name or address the source is told
     * (NULL: this host's name) and the ports QEMU listens on. */
    char *qemu_migration_host;
    int qemu_migration_port_min, qemu_migration_port_max;
    int qemu_keepalive_interval, qemu_keepalive_count;
    int qemu_migration_stall_timeout;   /* s; -1: never */
} rvs_config;

void rvs_config_init(rvs_config *cfg);
void rvs_config_free(rvs_config *cfg);

/* Read path into cfg.  Errors name the file, the line and the reason:
 * "remvirtd.conf:7: max_clients: expected a positive integer". */
int rvs_config_load(rvs_config *cfg, const char *path, rv_err *err);
/* Set one key from text as it would appear after `=` (used for
 * command-line flags too; `where` prefixes the error). */
int rvs_config_set(rvs_config *cfg, const char *key, const char *value, const char *where,
                   rv_err *err);
/* Parse a whole config text (for tests and rvs_config_load). */
int rvs_config_parse(rvs_config *cfg, const char *text, const char *filename, rv_err *err);

#endif
