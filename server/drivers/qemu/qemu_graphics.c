/* A client's own connection to the guest's display, handed over as a
 * descriptor (Unix sockets only): DOMAIN_OPEN_GRAPHICS_FD (a socketpair:
 * one end goes to QEMU, the other back in the reply) and
 * DOMAIN_OPEN_GRAPHICS (the socket the call carries goes to QEMU).  QEMU
 * takes a socket as a client of its VNC or SPICE server with QMP's getfd
 * and add_client, sent back to back so that no other getfd of the same
 * name comes between them; the loop never waits for either answer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/drivers/qemu/qemu_driver.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* libvirt's VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH. */
#define OPEN_GRAPHICS_SKIPAUTH 1u
/* The name QEMU knows the descriptor by between getfd and add_client
 * (libvirtd's). */
#define GRAPHICS_FD_NAME "graphicsfd"

typedef struct graphics_req {
    rv_qemu_live_req live;
    int answers;                /* QMP answers still to come (getfd, add_client) */
    bool answered;              /* the call has its reply */
    int mine;                   /* OPEN_GRAPHICS_FD: the end for the client; else -1 */
} graphics_req;

/* The protocol of the domain's idx-th <graphics>, in the order its XML
 * lists them (VNC, then SPICE); NULL with libvirtd's error. */
static const char *graphics_protocol(const qemu_dom *d, unsigned idx, rv_err *err)
{
    const char *have[2];
    unsigned n = 0;
    if (d->live->graphics.present)
        have[n++] = "vnc";
    if (d->live->spice.present)
        have[n++] = "spice";
    if (idx >= n) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: No graphics backend with index %u",
             idx);
        return NULL;
    }
    return have[idx];
}

static void req_done(graphics_req *req)
{
    if (--req->answers > 0)
        return;
    if (req->mine >= 0)
        close(req->mine);
    free(req->live.name);
    free(req);
}

static void on_getfd(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    graphics_req *req = opaque;
    /* add_client fails too then, but QEMU's first error is the one to say. */
    if (err && !req->answered) {
        req->answered = true;
        rv_deferred_finish(req->live.reply, err);
    }
    req_done(req);
}

static void on_add_client(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    graphics_req *req = opaque;
    if (!req->answered) {
        req->answered = true;
        if (rv_qemu_live_req_alive(&req->live, qmp, err)) {
            if (req->mine >= 0) {
                rv_deferred_finish_fd(req->live.reply, req->mine);
                req->mine = -1;
            } else {
                rv_deferred_finish(req->live.reply, NULL);
            }
        }
    }
    req_done(req);
}

/* Give QEMU's display server `fd` as a client (a copy is sent); mine is
 * the descriptor the reply carries (taken), or -1.  RV_DEFERRED or -1. */
static int add_client(qemu_dom *d, const char *protocol, int fd, int mine, unsigned flags,
                      rv_err *err)
{
    graphics_req *req = rv_qemu_live_req_new(sizeof(*req), d, err);
    if (!req) {
        if (mine >= 0)
            close(mine);
        return -1;
    }
    req->mine = mine;
    json_object *getfd = json_object_new_object(), *add = json_object_new_object();
    if (getfd)
        json_object_object_add(getfd, "fdname", json_object_new_string(GRAPHICS_FD_NAME));
    if (add) {
        json_object_object_add(add, "protocol", json_object_new_string(protocol));
        json_object_object_add(add, "fdname", json_object_new_string(GRAPHICS_FD_NAME));
        json_object_object_add(add, "skipauth",
                               json_object_new_boolean((flags & OPEN_GRAPHICS_SKIPAUTH) != 0));
    }
    rv_err qerr = { 0 };
    if (!getfd || !add) {
        json_object_put(getfd);
        json_object_put(add);
        rv_err_set(&qerr, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
    } else if (rv_qmp_command_fd(d->qmp, "getfd", getfd, fd, 0, on_getfd, req, &qerr) == 0) {
        req->answers = 1;
        if (rv_qmp_command(d->qmp, "add_client", add, 0, on_add_client, req, &qerr) == 0) {
            req->answers = 2;
            return RV_DEFERRED;
        }
        /* getfd's answer frees req and answers the call with its own
         * error if it has one; this one comes first. */
        req->answered = true;
        rv_deferred_finish(req->live.reply, &qerr);
        rv_err_clear(&qerr);
        return RV_DEFERRED;
    } else {
        json_object_put(add);
    }
    rv_deferred_finish(req->live.reply, &qerr);
    rv_err_clear(&qerr);
    req->answers = 1;
    req_done(req);
    return RV_DEFERRED;
}

/* Both calls: the client's socket is the call's descriptor (from_call),
 * or one end of a new pair whose other end goes back in the reply. */
static int open_graphics(const rv_nonnull_domain *wire, unsigned idx, unsigned flags,
                         const char *func, bool from_call, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, OPEN_GRAPHICS_SKIPAUTH, func, err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get_active(wire, err);
    if (!d)
        return -1;
    int rc = rv_qemu_need_monitor(d, err);
    if (rc != 0)
        return rc;      /* RV_DEFERRED: the call runs again once it may */
    const char *protocol = graphics_protocol(d, idx, err);
    if (!protocol)
        return -1;
    if (from_call) {
        int fd = rv_driver_call_fd(0, err);
        return fd < 0 ? -1 : add_client(d, protocol, fd, -1, flags, err);
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "Unable to create socket pair: %s",
                    strerror(errno));
    rc = add_client(d, protocol, pair[1], pair[0], flags, err);
    close(pair[1]);             /* QEMU has its copy (or none) */
    return rc;
}

int rv_qemu_domain_open_graphics_fd(rv_driver_conn *c,
                                    const rv_domain_open_graphics_fd_args *args, rv_err *err)
{
    (void)c;
    return open_graphics(&args->dom, args->idx, args->flags, "qemuDomainOpenGraphicsFD", false,
                         err);
}

int rv_qemu_domain_open_graphics(rv_driver_conn *c, const rv_domain_open_graphics_args *args,
                                 rv_err *err)
{
    (void)c;
    return open_graphics(&args->dom, args->idx, args->flags, "qemuDomainOpenGraphics", true,
                         err);
}
