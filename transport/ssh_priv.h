/* What the SSH transport's files share (not an interface): ssh.c the
 * transport (socket I/O for libssh2, the channel, setup and connect),
 * ssh_known_hosts.c the server's host key against known_hosts,
 * ssh_auth.c user authentication and its terminal prompts. */
#ifndef RV_TRANSPORT_SSH_PRIV_H
#define RV_TRANSPORT_SSH_PRIV_H

#include <libssh2.h>
#include <pthread.h>
#include <stddef.h>

#include "common/error.h"
#include "transport/ssh.h"

#define SSH_DEFAULT_PORT 22
/* Blocking libssh2 calls during setup give up after this long without
 * progress from the server. */
#define SETUP_TIMEOUT_MS 30000
/* close() and peer_error() wait at most this long for the server. */
#define CLOSE_WAIT_MS 2000
#define PEER_ERROR_WAIT_MS 1000
/* How much of the remote command's stderr is kept for peer_error. */
#define STDERR_KEEP 4096
/* One read takes at most this much: libssh2 widens the window it offers
 * the server by the size asked for, and the window bounds what it queues. */
#define READ_MAX (64 * 1024)
#define PROMPT_TRIES 3
#define PROMPT_MAX 1024
#define KNOWN_HOSTS_LINE_MAX (64 * 1024)
#define AUTH_LIST_MAX 8

typedef enum { VERIFY_NORMAL, VERIFY_AUTO, VERIFY_IGNORE } verify_mode;
typedef enum { AUTH_AGENT, AUTH_PRIVKEY, AUTH_PASSWORD, AUTH_KBDINT } auth_method;

/* The methods' names, as the server and sshauth= spell them. */
extern const char *const rv_ssh_auth_names[AUTH_KBDINT + 1];

/* What setup works from, with the defaults filled in. */
typedef struct ssh_setup {
    const rv_ssh_options *opts;
    const char *host;
    int port;
    char *user;
    char *home;
    char *known_hosts;
    char *host_name;            /* as known_hosts spells it: host or [host]:port */
    verify_mode verify;
    auth_method methods[AUTH_LIST_MAX];
    int n_methods;
    char *server_methods;       /* what the server accepts, comma list */
    char *tried;                /* what authentication tried, for the error */
    size_t tried_len;
    int kbdint_unanswered;      /* keyboard-interactive had no terminal */
} ssh_setup;

typedef struct ssh_transport {
    rv_transport base;
    pthread_mutex_t lock;       /* every libssh2 call and the fields below */
    LIBSSH2_SESSION *session;
    LIBSSH2_CHANNEL *channel;
    ssh_setup *setup;           /* during setup only (prompt callbacks) */

    /* Encrypted bytes libssh2 handed to send_cb that the socket has not
     * taken yet: out[out_head, out_len). */
    char *out;
    size_t out_head, out_len, out_cap;
    int sock_errno;             /* the socket failed; every call reports it */
    /* Bytes of the caller's last write that are packed in out but not yet
     * all on the wire: the retry of that write reports them. */
    size_t staged;
    int recv_blocked;           /* a write is in libssh2: never receive */
    int dead;                   /* closing: the socket calls fail at once */

    char err_text[STDERR_KEEP]; /* the remote command's stderr, first part */
    size_t err_len;
    int err_cut;
    char *peer_text;            /* peer_error's answer, made once */
} ssh_transport;

/* libssh2's last error text for session (never NULL). */
const char *rv_ssh_session_error(LIBSSH2_SESSION *session);
/* NO_MEMORY from SSH; -1. */
int rv_ssh_no_memory(rv_err *err);
/* The server's host key checked against known_hosts as s->verify says
 * (ssh_known_hosts.c); 0, or -1 with err set. */
int rv_ssh_check_host_key(LIBSSH2_SESSION *session, ssh_setup *s, rv_err *err);
/* Authenticate with s's methods in order (ssh_auth.c); 0, or -1. */
int rv_ssh_authenticate(ssh_transport *t, ssh_setup *s, rv_err *err);

#endif
