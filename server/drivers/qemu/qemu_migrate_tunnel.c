/* Tunnelled live migration (VIR_MIGRATE_PEER2PEER | VIR_MIGRATE_TUNNELLED):
 * QEMU's migration stream goes through the daemons' own connection, as
 * the data of a stream, instead of QEMU to QEMU over a port of its own.
 *   source       the peer-to-peer thread (qemu_migrate_p2p.c) calls the
 *                destination's PREPARE_TUNNEL3_PARAMS (a stream call;
 *                PREPARE_TUNNEL3 with plain arguments to a destination
 *                without MIGRATION_PARAMS, as libvirtd does);
 *                the loop passes one end of a socket pair to QEMU (getfd)
 *                and migrates to "fd:NAME"; the thread reads the other
 *                end and sends it on the stream, then finishes the stream
 *                (aborts it if the migration failed) before FINISH3
 *   destination  PREPARE_TUNNEL3_PARAMS: PREPARE3's domain and paused
 *                QEMU (qemu_migrate.c), its migrate-incoming on "fd:NAME",
 *                the read end of a pipe passed with getfd; the stream
 *                (opened with the reply) writes into the pipe's other end
 *                from the loop (stream_fd.c: non-blocking, held while QEMU
 *                does not read)
 * Why a socket pair at the source: QEMU's migrate_cancel shuts down a
 * socket channel (a pipe it cannot), and the loop can shut the thread's
 * end down to make QEMU's writes fail at once when the migration ends
 * badly, whatever the thread is doing.  Failures keep the guest on one
 * host as with peer-to-peer: the stream cut or aborted makes the
 * destination's QEMU read the end of its pipe (its incoming migration
 * fails, it exits), and the source's QEMU, its socket shut down, fails its
 * migration and runs the guest on (CONFIRM3 cancelled). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/conn.h"
#include "common/log.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/stream_fd.h"

RV_LOG_CATEGORY("qemu.migrate");

#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

enum { MIGRATE_TUNNELLED = 1u << 2 };   /* (virDomainMigrateFlags) */

/* The names QEMU knows the descriptors by (getfd), on each end. */
#define TUNNEL_IN_FD "rv-migrate-tunnel-in"
#define TUNNEL_OUT_FD "rv-migrate-tunnel-out"
/* What the thread reads from QEMU at once (the stream's packets are at
 * most 256 KiB of data, libvirt's). */
#define PUMP_CHUNK (256 * 1024)

/* ================================================================ destination */

int rv_qemu_domain_migrate_prepare_tunnel3_params(rv_driver_conn *c,
                                                  const rv_domain_migrate_prepare_tunnel3_params_args *args,
                                                  rv_domain_migrate_prepare_tunnel3_params_ret *ret,
                                                  rv_err *err)
{
    (void)c;
    (void)ret;
    if (rv_qemu_migrate_check_flags(args->flags, "qemuDomainMigratePrepareTunnel3Params", err) < 0)
        return -1;
    if (!(args->flags & MIGRATE_TUNNELLED))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "PREPARE_TUNNEL3 is for tunnelled migrations (VIR_MIGRATE_TUNNELLED)");
    rv_qemu_migcaps caps;
    if (rv_qemu_migcaps_parse(args->flags, args->params.params_val, args->params.params_len, true,
                              &caps, err) < 0)
        return -1;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "cannot make the migration's pipe: %s", strerror(errno));
    /* (a larger pipe: fewer passes of the loop per packet of 256 KiB;
     * the default still works) */
    (void)fcntl(pfd[1], F_SETPIPE_SZ, PUMP_CHUNK * 4);
    /* The stream writes into the pipe; QEMU reads its other end. */
    rv_stream_io *io = rv_stream_fd_new(rv_qemu.loop, pfd[1], 0, 1, err);
    if (!io || rv_driver_stream_open(io, err) < 0) {
        close(pfd[0]);
        return -1;
    }
    qemu_dom *d;
    rv_deferred *reply = rv_qemu_migrate_prepare_in(args->params.params_val, args->params.params_len,
                                                    args->flags, &caps, 0, &d, err);
    if (!reply) {
        close(pfd[0]);          /* (the stream's end goes with the failed call) */
        return -1;
    }
    d->migrate_tunnel = true;
    d->migrate_tunnel_fd = pfd[0];
    d->migrate_in_conn = c;     /* (its close before FINISH3 destroys the waiting QEMU) */
    rv_domain_migrate_prepare_tunnel3_params_ret *r = rv_deferred_ret(reply);
    rv_err cerr = { 0 };        /* (out of memory only: the reply goes without) */
    if (rv_qemu_migrate_cookie(d->live, true, 0, &r->cookie_out.cookie_out_val,
                               &r->cookie_out.cookie_out_len, &cerr) < 0)
        rv_err_clear(&cerr);
    RV_INFO("domain '%s': tunnelled incoming migration prepared", d->live->name);
    rv_qemu_job_add(d, QJOB_START, QJOB_MIGRATE_IN | RV_DOMAIN_START_PAUSED, reply, NULL);
    return RV_DEFERRED;
}

static void on_getfd(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp;
    (void)ret;
    /* (the migrate or migrate-incoming after it fails too, with the reason) */
    if (err)
        RV_WARN("getfd %s: %s", (const char *)opaque, err->message ? err->message : "");
}

/* getfd of fd under name; ours closed in any case (QMP sends a copy). */
static int pass_fd(qemu_dom *d, int fd, const char *name, rv_err *err)
{
    json_object *args = json_object_new_object();
    int rc = -1;
    if (!args || json_object_object_add(args, "fdname", json_object_new_string(name)) < 0) {
        json_object_put(args);
        fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    } else if (!d->qmp) {
        json_object_put(args);
        fail(err, RV_ERR_OPERATION_FAILED, "operation failed: %s", "no QEMU monitor");
    } else {
        rc = rv_qmp_command_fd(d->qmp, "getfd", args, fd, 0, on_getfd, (void *)name, err);
    }
    close(fd);
    return rc;
}

int rv_qemu_migtunnel_pass_in(qemu_dom *d, char *uri, size_t len, rv_err *err)
{
    if (d->migrate_tunnel_fd < 0)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: %s", "the tunnel was passed already");
    int fd = d->migrate_tunnel_fd;
    d->migrate_tunnel_fd = -1;
    if (pass_fd(d, fd, TUNNEL_IN_FD, err) < 0)
        return -1;
    snprintf(uri, len, "fd:%s", TUNNEL_IN_FD);
    return 0;
}

void rv_qemu_migtunnel_gone(qemu_dom *d)
{
    if (d->migrate_tunnel && d->migrate_tunnel_fd >= 0)
        close(d->migrate_tunnel_fd);
    d->migrate_tunnel = false;
    d->migrate_tunnel_fd = -1;
}

/* ================================================================ source */

int rv_qemu_migtunnel_prepare(struct rvc_conn *rpc, const rv_domain_migrate_prepare3_params_args *a,
                              struct rvc_stream **out, rv_err *err)
{
    /* (the same arguments on the wire; the stream comes with the answer) */
    rv_domain_migrate_prepare_tunnel3_params_args t = {
        .params = { a->params.params_len, a->params.params_val },
        .cookie_in = { a->cookie_in.cookie_in_len, a->cookie_in.cookie_in_val },
        .flags = a->flags,
    };
    rv_domain_migrate_prepare_tunnel3_params_ret r = { 0 };
    if (rvc_conn_stream_call_ret(rpc, RV_PROC_DOMAIN_MIGRATE_PREPARE_TUNNEL3_PARAMS,
                                 (xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_params_args, &t,
                                 (xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_params_ret, &r, 0,
                                 out, err) < 0)
        return -1;
    xdr_free((xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_params_ret, (char *)&r);
    return 0;
}

int rv_qemu_migtunnel_prepare_plain(struct rvc_conn *rpc,
                                    const rv_domain_migrate_prepare_tunnel3_args *a,
                                    struct rvc_stream **out, rv_err *err)
{
    rv_domain_migrate_prepare_tunnel3_ret r = { 0 };
    if (rvc_conn_stream_call_ret(rpc, RV_PROC_DOMAIN_MIGRATE_PREPARE_TUNNEL3,
                                 (xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_args, (void *)a,
                                 (xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_ret, &r, 0, out,
                                 err) < 0)
        return -1;
    xdr_free((xdrproc_t)xdr_rv_domain_migrate_prepare_tunnel3_ret, (char *)&r);
    return 0;
}

int rv_qemu_migtunnel_pass_out(qemu_dom *d, int fd, const char **uri, rv_err *err)
{
    if (pass_fd(d, fd, TUNNEL_OUT_FD, err) < 0)
        return -1;
    *uri = "fd:" TUNNEL_OUT_FD;
    return 0;
}

int rv_qemu_migtunnel_pump(int fd, struct rvc_stream *s, rv_err *err)
{
    char *buf = malloc(PUMP_CHUNK);
    if (!buf) {
        shutdown(fd, SHUT_RDWR);
        return fail(err, RV_ERR_NO_MEMORY, "%s", "out of memory");
    }
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, PUMP_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            break;              /* QEMU closed it, or the loop shut it down */
        if (n < 0) {
            rc = fail(err, RV_ERR_SYSTEM_ERROR, "cannot read the migration stream: %s",
                      strerror(errno));
            break;
        }
        if (rvc_stream_send(s, buf, (size_t)n, err) < 0) {
            rc = -1;
            break;
        }
    }
    /* QEMU's next write fails (its migration with it) if it is still on. */
    if (rc < 0)
        shutdown(fd, SHUT_RDWR);
    free(buf);
    return rc;
}
