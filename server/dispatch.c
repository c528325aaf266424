#include "server/dispatch.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "rv_keepalive.h"
#include "rv_remote.h"
#include "server/rv_dispatch.gen.h"
#include "server/rv_driver_ops.gen.h"
#include "server/drivers/work_pool.h"
#include "server/preparse.h"
#include "server/stream.h"
#include "transport/frame.h"

RV_LOG_CATEGORY("server.dispatch");

/* Decoded arguments and results live here for the length of one call: the
 * loop is single-threaded and handlers finish before the next call, so no
 * allocation is needed for the structs themselves.  A call answered later
 * (rv_driver_defer) takes copies of both with it. */
#define RVS_SCRATCH 1024
static alignas(max_align_t) char args_scratch[RVS_SCRATCH];
static alignas(max_align_t) char ret_scratch[RVS_SCRATCH];

static const rvs_program remote_program = {
    .number = RV_REMOTE_PROGRAM,
    .version = RV_REMOTE_VERSION,
    .procs = rvs_remote_procs,
    .nprocs = &rvs_remote_nprocs,
    .driver_first = 1,
};

int rvs_dispatch_init(rv_err *err)
{
    return rvs_dispatch_check_program(&remote_program, err);
}

int rvs_dispatch_check_program(const rvs_program *prog, rv_err *err)
{
    for (int i = 0; i < *prog->nprocs; i++) {
        const rvs_proc *p = &prog->procs[i];
        if (p->handler && (p->args_size > RVS_SCRATCH || p->ret_size > RVS_SCRATCH)) {
            rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                       "procedure %s needs more than %d bytes of scratch", p->name, RVS_SCRATCH);
            return -1;
        }
    }
    return 0;
}

void rvs_queue_error(rvs_client *c, const rv_header *call, const rv_err *err)
{
    rv_header hdr = *call;
    hdr.type = call->type == RV_STREAM ? RV_STREAM : RV_REPLY;
    hdr.status = RV_ERROR;
    char *message = err->message ? err->message : (char *)"unknown error";
    rv_error body = {
        .code = err->code,
        .domain = err->domain,
        .message = &message,
        .level = err->level ? err->level : RV_ERR_LEVEL_ERROR,
        /* libvirtd's value for "no detail"; str1-3 stay absent (libvirtd
         * fills them with its message's format and arguments). */
        .int1 = -1,
        .int2 = -1,
    };
    rv_err encode_err = { 0 };
    rv_buf *out = rvs_client_output(c);
    if (rv_frame_encode(out, &hdr, (xdrproc_t)xdr_rv_error, &body, &encode_err) < 0) {
        /* Only an impossibly long message gets here; say less. */
        message = (char *)"error message too long to send";
        rv_frame_encode(out, &hdr, (xdrproc_t)xdr_rv_error, &body, &encode_err);
    }
    rv_err_clear(&encode_err);
}

static void reply_error(rvs_client *c, const rv_header *call, int domain, int code,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reply_error(rvs_client *c, const rv_header *call, int domain, int code,
                        const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, domain, code, fmt, ap);
    va_end(ap);
    RV_DEBUG("client %llu serial %u: error %d: %s", rvs_client_serial_no(c), call->serial, code,
             err.message);
    rvs_queue_error(c, call, &err);
    rv_err_clear(&err);
}

rv_driver_conn *rvs_call_conn(rvs_call *call)
{
    rv_driver_conn *conn = rvs_client_driver_conn(call->client);
    if (!conn)
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: hypervisor connection not open");
    return conn;
}

const rv_driver_ops *rvs_call_driver_ops(rvs_call *call)
{
    return rvs_call_conn(call) ? &rvs_client_driver(call->client)->ops : NULL;
}

/* What libvirtd answers for a function its driver lacks.  The first
 * refusal of each procedure to each client is logged, so an operator
 * sees what a tool is missing. */
static int unsupported(rvs_call *call, const rvs_proc *p)
{
    rv_err_set(&call->err, p->error_domain, RV_ERR_NO_SUPPORT,
               "this function is not supported by the connection driver: %s", p->api);
    if (RV_LOG_ENABLED(RV_LOG_INFO) && rvs_client_first_unsupported(call->client, call->proc)) {
        char name[256];
        const rv_driver *drv = rvs_client_driver(call->client);
        RV_INFO("%s called %s (procedure %d, %s), which the %s driver does not support",
                rvs_client_name(call->client, name, sizeof(name)), p->api, call->proc, p->name,
                drv ? drv->name : "(no)");
    }
    return -1;
}

int rvs_call_unsupported(rvs_call *call, int proc)
{
    return unsupported(call, &rvs_remote_procs[proc]);
}

int rvs_call_bad_max(rvs_call *call, const char *field, long long value, int max)
{
    rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_RPC, "%s %lld is outside 0..%d", field, value, max);
    return -1;
}

/* ---- replies that come later (driver.h) ---- */

/* The descriptors a call came with (CALL_WITH_FDS), owned by it until
 * it is answered. */
typedef struct call_fds {
    int *fds;
    unsigned n;
} call_fds;

static void call_fds_close(call_fds *f)
{
    for (unsigned i = 0; i < f->n; i++)
        if (f->fds[i] >= 0)
            close(f->fds[i]);
    f->n = 0;
}

struct rv_deferred {
    rvs_pending pending;        /* first: the client's list links */
    rv_header hdr;              /* the call's, for the reply */
    const rvs_proc *proc;
    void *args, *ret;           /* in the same allocation, after this */
    call_fds fds;               /* fds.fds in the allocation too */
    rvs_stream *stream;         /* the stream the call opened (a tunnelled
                                 * migration's prepare): started with the
                                 * answer, or dropped with an error */
    int fd_storage[];
};

/* The call a slot is running, for rv_driver_defer(). */
typedef struct running_call {
    rvs_client *client;
    const rv_header *hdr;
    const rvs_proc *proc;
    void *args, *ret;           /* the scratch */
    call_fds *fds;              /* the call's descriptors */
    rv_deferred *taken;         /* set by rv_driver_defer() */
    bool answered;              /* by another procedure (rvs_call_as) */
    bool taken_done;            /* taken, and already answered (freed) inside the slot */
    rvs_call *call;             /* the slot's call (its stream), NULL for a preparse */
} running_call;
static running_call *running;   /* NULL between calls */

rv_deferred *rv_driver_defer(rv_err *err)
{
    if (!running || running->taken || running->taken_done) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: a reply can only be deferred once, inside its call");
        return NULL;
    }
    const rvs_proc *p = running->proc;
    size_t head = (sizeof(rv_deferred) + alignof(max_align_t) - 1) / alignof(max_align_t) *
                  alignof(max_align_t);
    size_t args_at = head, ret_at = head + (p->args_size + alignof(max_align_t) - 1) /
                                               alignof(max_align_t) * alignof(max_align_t);
    unsigned nfds = running->fds ? running->fds->n : 0;
    size_t fds_at = (ret_at + p->ret_size + alignof(int) - 1) / alignof(int) * alignof(int);
    rv_deferred *d = malloc(fds_at + nfds * sizeof(int) + 1);
    if (!d) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    /* Its descriptors go with it too (a slot may run again, rerun). */
    d->fds.fds = (int *)((char *)d + fds_at);
    d->fds.n = nfds;
    if (nfds) {
        memcpy(d->fds.fds, running->fds->fds, nfds * sizeof(int));
        for (unsigned i = 0; i < nfds; i++)
            running->fds->fds[i] = -1;      /* no longer the dispatcher's to close */
        running->fds = &d->fds;
    }
    d->hdr = *running->hdr;
    d->proc = p;
    d->stream = running->call ? running->call->stream : NULL;
    d->args = (char *)d + args_at;
    d->ret = (char *)d + ret_at;
    /* The decoded arguments (and what the slot put in ret so far) change
     * owner: the scratch copies are not freed by the dispatcher. */
    memcpy(d->args, running->args, p->args_size);
    memcpy(d->ret, running->ret, p->ret_size);
    rvs_client_pending_add(running->client, &d->pending);
    running->taken = d;
    return d;
}

int rv_driver_call_fd(unsigned idx, rv_err *err)
{
    if (!running || !running->fds || idx >= running->fds->n || running->fds->fds[idx] < 0) {
        /* libvirtd's words when a call lacks its descriptor. */
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: No FD available at slot %u", idx);
        return -1;
    }
    return running->fds->fds[idx];
}

rvs_client *rvs_deferred_client(rv_deferred *d)
{
    return d->pending.client;
}

const void *rv_deferred_args(rv_deferred *d)
{
    return d->args;
}

void *rv_deferred_ret(rv_deferred *d)
{
    return d->ret;
}

static void queue_reply(rvs_client *c, const rv_header *call, const rvs_proc *proc, void *ret,
                        int fd);

/* The answer to deferred call d: err, or its result with fd (-1: none;
 * taken in any case). */
static void deferred_answer(rv_deferred *d, const rv_err *err, int fd)
{
    rvs_client *c = d->pending.client;
    rvs_client_pending_remove(&d->pending);
    if (running && running->taken == d) {
        /* (answered inside its own slot: call_slot must not touch it) */
        running->taken = NULL;
        running->taken_done = true;
    }
    if (c && !rvs_client_is_closing(c)) {
        if (err) {
            RV_DEBUG("client %llu serial %u: deferred %s failed: %s", rvs_client_serial_no(c),
                     d->hdr.serial, d->proc->name, err->message ? err->message : "");
            rvs_queue_error(c, &d->hdr, err);
            if (d->stream)
                rvs_stream_discard(d->stream);
        } else {
            queue_reply(c, &d->hdr, d->proc, d->ret, fd);
            fd = -1;
            if (d->stream)      /* its data follows the reply */
                rvs_stream_start(d->stream);
        }
        rvs_client_flush_soon(c);
    }
    if (fd >= 0)
        close(fd);
    call_fds_close(&d->fds);
    xdr_free(d->proc->ret_filter, d->ret);
    xdr_free(d->proc->args_filter, d->args);
    free(d);
}

void rv_deferred_finish(rv_deferred *d, const rv_err *err)
{
    deferred_answer(d, err, -1);
}

void rv_deferred_finish_fd(rv_deferred *d, int fd)
{
    deferred_answer(d, NULL, fd);
}

static void keepalive_message(rvs_client *c, const rv_header *hdr)
{
    if (hdr->proc == RV_KEEPALIVE_PROC_PING) {
        rv_buf *out = rvs_client_output(c);
        /* Out of memory: no PONG; the client's own keepalive decides. */
        if (rv_buf_reserve(out, RV_KEEPALIVE_FRAME_LEN) == 0) {
            rv_frame_keepalive(out->data + out->len, RV_KEEPALIVE_PROC_PONG);
            out->len += RV_KEEPALIVE_FRAME_LEN;
        }
    }
    /* A PONG, or anything else one-way, needs no answer. */
}

/* At debug in this category: each call's procedure, serial, client,
 * duration and result (timed only while debug is on here). */
static void log_call_done(rvs_client *c, const rv_header *hdr, const rvs_proc *proc,
                          const struct timespec *start, const rv_err *err)
{
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    long long us = (end.tv_sec - start->tv_sec) * 1000000LL +
                   (end.tv_nsec - start->tv_nsec) / 1000;
    if (err)
        RV_DEBUG("client %llu: %s serial %u: error %d (%s) in %lld us",
                 rvs_client_serial_no(c), proc->name, hdr->serial, err->code,
                 err->message ? err->message : "", us);
    else
        RV_DEBUG("client %llu: %s serial %u: ok in %lld us", rvs_client_serial_no(c),
                 proc->name, hdr->serial, us);
}

/* Run proc's slot on the decoded args and queue its answer; start: when
 * the call was timed for the debug log.  True when the slot deferred the
 * call: args and ret (their contents) then belong to the deferred call;
 * otherwise the caller frees them. */
static bool call_slot(rvs_client *c, const rv_header *hdr, const rvs_proc *proc, void *args,
                      void *ret, call_fds *fds, const struct timespec *start)
{
    rvs_call call = { .client = c, .proc = hdr->proc, .serial = hdr->serial };
    running_call now = { c, hdr, proc, args, ret, fds, NULL, false, false, &call };
    running_call *outer = running;
    running = &now;
    int rc = proc->handler(&call, args, ret);
    running = outer;
    if (now.answered) {
        rv_err_clear(&call.err);
        return false;
    }
    if (now.taken || now.taken_done) {
        /* Answered later (or already, inside the slot): the arguments
         * and result went with the call. */
        if (rc != RV_DEFERRED)
            RV_ERROR("internal error: %s deferred its reply but returned %d", proc->name, rc);
        if (now.taken)  /* (a stream opened after the defer) */
            now.taken->stream = call.stream;
        rv_err_clear(&call.err);
        return true;
    }
    if (rc < 0) {
        if (!rv_err_is_set(&call.err))
            rv_err_set(&call.err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                       "%s failed without saying why", proc->name);
        rvs_queue_error(c, hdr, &call.err);
        if (start)
            log_call_done(c, hdr, proc, start, &call.err);
        rv_err_clear(&call.err);
    } else {
        queue_reply(c, hdr, proc, ret, -1);
        if (call.stream)        /* its data follows the reply */
            rvs_stream_start(call.stream);
        if (start)
            log_call_done(c, hdr, proc, start, NULL);
    }
    return false;
}

int rvs_call_as(rvs_call *call, int as, void *args)
{
    const rvs_proc *proc = as >= 0 && as < rvs_remote_nprocs ? &rvs_remote_procs[as] : NULL;
    if (!running || running->taken || running->answered || !proc || !proc->handler) {
        if (proc)
            xdr_free(proc->args_filter, args);
        rv_err_set(&call->err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "internal error: cannot serve this call as procedure %d", as);
        return -1;
    }
    /* (as large as the scratch: every table entry is checked at start) */
    running_call *outer = running;
    alignas(max_align_t) char ret[RVS_SCRATCH];
    memset(ret, 0, proc->ret_size);
    outer->answered = true;
    if (!call_slot(call->client, outer->hdr, proc, args, ret, outer->fds, NULL)) {
        xdr_free(proc->ret_filter, ret);
        xdr_free(proc->args_filter, args);
    }
    return 0;
}

void rv_deferred_rerun(rv_deferred *d)
{
    rvs_client *c = d->pending.client;
    rvs_client_pending_remove(&d->pending);
    if (c && !rvs_client_is_closing(c)) {
        /* As the slot first saw it: nothing in ret. */
        xdr_free(d->proc->ret_filter, d->ret);
        memset(d->ret, 0, d->proc->ret_size);
        bool taken = call_slot(c, &d->hdr, d->proc, d->args, d->ret, &d->fds, NULL);
        rvs_client_flush_soon(c);
        if (taken) {
            free(d);
            return;
        }
    }
    call_fds_close(&d->fds);
    xdr_free(d->proc->ret_filter, d->ret);
    xdr_free(d->proc->args_filter, d->args);
    free(d);
}

/* Whether call (a remote program's, of len bytes, its arguments decoded)
 * was deferred to have its document parsed off the loop first
 * (preparse.h); its slot then runs later. */
static bool preparse(rvs_client *c, const rv_header *hdr, const rvs_proc *proc, void *args,
                     void *ret, call_fds *fds, size_t len)
{
    const char *doc;
    if (len < RVS_PREPARSE_MIN || !(doc = rvs_preparse_document(hdr->proc, args)) ||
        !rv_work_pool_running())
        return false;
    running_call now = { c, hdr, proc, args, ret, fds, NULL, false, false, NULL };
    running_call *outer = running;
    running = &now;
    rv_err err = { 0 };
    rv_deferred *d = rv_driver_defer(&err);
    running = outer;
    if (!d) {
        rv_err_clear(&err);
        return false;
    }
    /* The copied arguments point to the same text. */
    if (rvs_preparse_submit(c, d, doc) < 0)
        rv_deferred_rerun(d);   /* no memory for the job: at once, on the loop */
    return true;
}

static void run_procedure(rvs_client *c, const rv_header *hdr, const rvs_proc *proc,
                          const char *p, size_t len, call_fds *fds, bool remote)
{
    struct timespec start;
    int timed = RV_LOG_ENABLED(RV_LOG_DEBUG);
    if (timed)
        clock_gettime(CLOCK_MONOTONIC, &start);
    if (rvs_client_is_readonly(c) && !proc->readonly_ok) {
        /* From the API's own module, as libvirt reports it (NETWORK for
         * virNetworkDestroy); DOMAIN for a procedure without one. */
        reply_error(c, hdr, proc->error_domain ? proc->error_domain : RV_FROM_DOMAIN,
                    RV_ERR_OPERATION_DENIED, "operation forbidden: read only access prevents %s",
                    proc->api);
        return;
    }

    void *args = args_scratch, *ret = ret_scratch;
    memset(args, 0, proc->args_size);
    memset(ret, 0, proc->ret_size);
    rv_err err = { 0 };
    if (proc->args_size &&
        rv_frame_decode_payload(p, len, proc->args_filter, args, &err) < 0) {
        reply_error(c, hdr, RV_FROM_RPC, RV_ERR_RPC, "cannot decode the arguments of %s: %s",
                    proc->name, err.message ? err.message : "");
        rv_err_clear(&err);
        return;
    }
    if (!proc->args_size && len != RV_FRAME_MIN) {
        reply_error(c, hdr, RV_FROM_RPC, RV_ERR_RPC, "%s takes no arguments but got %zu bytes",
                    proc->name, len - RV_FRAME_MIN);
        return;
    }

    if (remote && preparse(c, hdr, proc, args, ret, fds, len))
        return;
    if (!call_slot(c, hdr, proc, args, ret, fds, timed ? &start : NULL)) {
        /* A failing handler may have filled part of ret. */
        xdr_free(proc->ret_filter, ret);
        xdr_free(proc->args_filter, args);
    }
}

/* A REPLY_WITH_FDS payload: the descriptor count, then the result. */
typedef struct with_fds {
    unsigned nfds;
    xdrproc_t fn;               /* NULL: a void result */
    void *ret;
} with_fds;

static bool_t xdr_with_fds(XDR *xdr, with_fds *w)
{
    return xdr_u_int(xdr, &w->nfds) && (!w->fn || w->fn(xdr, w->ret, 0));
}

/* The reply to call: ret, and fd after it (-1: none; taken either way). */
static void queue_reply(rvs_client *c, const rv_header *call, const rvs_proc *proc, void *ret,
                        int fd)
{
    rv_err err = { 0 };
    rv_header out = *call;
    out.type = fd >= 0 ? RV_REPLY_WITH_FDS : RV_REPLY;
    out.status = RV_OK;
    with_fds w = { 1, proc->ret_size ? proc->ret_filter : NULL, ret };
    rv_buf *buf = rvs_client_output(c);
    size_t before = buf->len;
    int rc = fd >= 0 ? rv_frame_encode(buf, &out, (xdrproc_t)xdr_with_fds, &w, &err)
                     : rv_frame_encode(buf, &out, w.fn, ret, &err);
    if (rc == 0 && fd >= 0 && rvs_client_queue_fd(c, fd) < 0) {
        buf->len = before;      /* the reply without its descriptor cannot go */
        rv_err_set(&err, RV_FROM_RPC, RV_ERR_RPC,
                   "cannot send a descriptor: %d are already waiting to be read",
                   RVS_CLIENT_FDS_MAX);
        rc = -1;
    } else if (rc == 0) {
        fd = -1;
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        rvs_queue_error(c, call, &err);
        rv_err_clear(&err);
    }
}

/* A procedure of libvirt's that remvirt does not implement: refused as
 * libvirtd refuses a function its driver lacks, after the check a real
 * call meets first (an open connection), so that a client sees which
 * function is missing rather than a protocol failure.  Its arguments are
 * never decoded. */
static void refuse_unimplemented(rvs_client *c, const rv_header *hdr, const rvs_program *prog,
                                 const rvs_proc *proc)
{
    rvs_call call = { .client = c, .proc = hdr->proc, .serial = hdr->serial };
    if (!prog->driver_first || rvs_call_conn(&call))
        unsupported(&call, proc);
    rvs_queue_error(c, hdr, &call.err);
    rv_err_clear(&call.err);
}

int rvs_dispatch_frame(rvs_client *c, const char *p, size_t len)
{
    return rvs_dispatch_frame_program(c, p, len, &remote_program);
}

int rvs_dispatch_frame_program(rvs_client *c, const char *p, size_t len,
                               const rvs_program *prog)
{
    rv_header hdr;
    rv_err err = { 0 };
    if (rv_frame_decode_header(p, len, &hdr, &err) < 0) {
        rv_err_clear(&err);
        return -1;
    }
    RV_DEBUG("client %llu: prog=%#x vers=%u proc=%d type=%d serial=%u status=%d len=%zu",
             rvs_client_serial_no(c), hdr.prog, hdr.vers, hdr.proc, hdr.type, hdr.serial,
             hdr.status, len);

    if (hdr.prog == RV_KEEPALIVE_PROGRAM) {
        if (hdr.type != RV_MESSAGE) {
            /* Keepalive is one-way messages only; an error reply to each
             * such packet would hand a stranger a 4x amplifier. */
            RV_WARN("client %llu: keepalive packet of type %d (only MESSAGE is allowed); "
                    "closing it", rvs_client_serial_no(c), hdr.type);
            return -1;
        }
        keepalive_message(c, &hdr);
        return 0;
    }
    if (hdr.prog != prog->number) {
        reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC, "cannot find program %#x version %u",
                    hdr.prog, hdr.vers);
        return 0;
    }
    if (hdr.vers != prog->version) {
        reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC,
                    "program %#x has version %u, not %u", hdr.prog, prog->version, hdr.vers);
        return 0;
    }
    if (hdr.type == RV_STREAM || hdr.type == RV_STREAM_HOLE) {
        rvs_stream_packet(c, &hdr, p + RV_FRAME_MIN, len - RV_FRAME_MIN);
        return 0;
    }
    call_fds fds = { NULL, 0 };
    if (hdr.type == RV_CALL_WITH_FDS) {
        if (!rvs_client_passes_fds(c)) {
            /* What follows may be carrier bytes meant to hold descriptors:
             * the stream cannot be followed further. */
            reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC,
                        "this transport cannot pass file descriptors (only a Unix socket can)");
            rvs_client_close_after_flush(c);
            return 0;
        }
        /* The descriptor count before the arguments (client.c checked it
         * and took the descriptors): decode as if the frame began 4
         * bytes later. */
        fds.fds = rvs_client_call_fds(c, &fds.n);
        p += 4;
        len -= 4;
        hdr.type = RV_CALL;
    }
    if (hdr.type != RV_CALL || hdr.status != RV_OK) {
        reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC,
                    "unexpected message type %d with status %d: only calls are accepted",
                    hdr.type, hdr.status);
        return 0;
    }
    const rvs_proc *proc = hdr.proc > 0 && hdr.proc < *prog->nprocs
                               ? &prog->procs[hdr.proc] : NULL;
    if (!proc || (!proc->handler && !proc->api))
        reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC, "unknown procedure: %d", hdr.proc);
    else if (proc->needs_auth && !rvs_client_is_authenticated(c))
        /* Before authentication nothing else is even decoded.  libvirtd
         * answers with an RPC error here, not AUTH_FAILED; so do we. */
        reply_error(c, &hdr, RV_FROM_RPC, RV_ERR_RPC, "authentication required");
    else if (!proc->handler)
        refuse_unimplemented(c, &hdr, prog, proc);
    else
        run_procedure(c, &hdr, proc, p, len, fds.n ? &fds : NULL, prog == &remote_program);
    return 0;
}
