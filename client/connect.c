#include "client/connect.h"

#include <stdlib.h>
#include <unistd.h>

#include "common/log.h"
#include "transport/ext.h"
#include "transport/socket.h"
#include "transport/ssh.h"
#include "transport/tcp.h"
#include "transport/tls.h"
#include "transport/unix.h"

RV_LOG_CATEGORY("client.connect");

/* libvirt's boolean params are on when they read as a non-zero number:
 * "no_verify=no", "=false" or a bare "no_verify" keep the checks. */
static int param_on(const rvc_uri *u, const char *name)
{
    const char *v = rvc_uri_param_value(u, name);
    return v && strtol(v, NULL, 10) != 0;
}

int rvc_never_prompt;

static rv_transport *open_tcp(const rvc_target *t, rv_err *err)
{
    int fd = rv_tcp_connect(t->host, t->port, err);
    if (fd < 0)
        return NULL;
    rv_transport *tr = rv_socket_transport_new(fd, 0, err);
    if (!tr)
        close(fd);
    return tr;
}

static rv_transport *open_tls(const rvc_uri *u, const rvc_target *t, rv_err *err)
{
    rv_tls_files files = { 0 };
    if (rv_tls_client_files(rvc_uri_param_value(u, "pkipath"), &files, err) < 0)
        return NULL;
    rv_tls_client_policy policy = {
        .priority = rvc_uri_param_value(u, "tls_priority"),
        .verify_server = !param_on(u, "no_verify"),
        .sanity_check = !param_on(u, "no_sanity"),
    };
    rv_tls_context *ctx = rv_tls_client_context_new(&files, &policy, err);
    rv_tls_files_free(&files);
    if (!ctx)
        return NULL;
    rv_transport *tr = NULL;
    int fd = rv_tcp_connect(t->host, t->port, err);
    if (fd >= 0)
        tr = rv_tls_client_connect(ctx, fd, t->host, err);
    /* The session keeps what it needs of the context. */
    rv_tls_context_free(ctx);
    return tr;
}

static rv_transport *open_ssh(const rvc_uri *u, const rvc_target *t, rv_err *err)
{
    rv_ssh_options o = {
        .host = t->host,
        .port = u->port,
        .user = u->user,
        .keyfile = rvc_uri_param_value(u, "keyfile"),
        .known_hosts = rvc_uri_param_value(u, "known_hosts"),
        .known_hosts_verify = rvc_uri_param_value(u, "known_hosts_verify"),
        .sshauth = rvc_uri_param_value(u, "sshauth"),
        .command = t->command,
        .no_tty = rvc_never_prompt || param_on(u, "no_tty"),
    };
    RV_DEBUG("ssh to %s port %d runs: %s", t->host, u->port, t->command);
    return rv_ssh_connect(&o, err);
}

rv_transport *(*rvc_test_transport_hook)(rv_err *err);

rv_transport *rvc_transport_open(const rvc_uri *u, int readonly, rv_err *err)
{
    if (rvc_test_transport_hook)
        return rvc_test_transport_hook(err);
    rvc_target t;
    if (rvc_uri_target(u, readonly, &t, err) < 0)
        return NULL;
    rv_transport *tr = NULL;
    switch (t.kind) {
    case RVC_UNIX:
        tr = rv_unix_connect(t.socket, err);
        break;
    case RVC_TCP:
        tr = open_tcp(&t, err);
        break;
    case RVC_TLS:
        tr = open_tls(u, &t, err);
        break;
    case RVC_SSH:
        tr = open_ssh(u, &t, err);
        break;
    case RVC_EXT:
        tr = rv_ext_spawn(t.command, err);
        break;
    }
    rvc_target_free(&t);
    return tr;
}
