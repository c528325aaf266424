/* SSH transport for the client (libssh2): one SSH connection, one channel
 * running a command on the remote host that joins the channel to the
 * daemon's Unix socket; the protocol then runs over the channel. */
#ifndef RV_TRANSPORT_SSH_H
#define RV_TRANSPORT_SSH_H

#include "common/error.h"
#include "transport/transport.h"

typedef struct rv_ssh_options {
    const char *host;
    int port;                   /* 0: 22 */
    const char *user;           /* NULL: the local user's name */
    const char *keyfile;        /* NULL: ~/.ssh/id_ed25519, id_ecdsa, id_rsa */
    const char *known_hosts;    /* NULL: ~/.ssh/known_hosts */
    const char *known_hosts_verify;  /* "normal" (NULL), "auto" or "ignore" */
    const char *sshauth;        /* comma list of agent,privkey,password; NULL: all, in that order */
    const char *command;        /* run on the remote host */
    int no_tty;                 /* never prompt on the terminal */
} rv_ssh_options;

/* Connect, check the host key, authenticate, start the command.  The
 * transport's fd is the TCP socket; its ops are non-blocking once the
 * caller sets O_NONBLOCK, and safe for one reading and one writing thread
 * at a time.  A write that failed with EAGAIN must be retried with the
 * same bytes (part of them may already be on their way).  Errors name the
 * cause (host key mismatch, unknown host, authentication failed, ...) with
 * RV_FROM_SSH. */
rv_transport *rv_ssh_connect(const rv_ssh_options *opts, rv_err *err);

#endif
