/* A live migration's QEMU capabilities and parameters chosen by the
 * client's flags and typed parameters, and its TLS, as libvirtd 9.0 sets
 * them (observed in its QMP traffic, docs/qemu-driver.md "Capabilities
 * and TLS"):
 *   AUTO_CONVERGE  auto-converge, source only; auto_converge.initial /
 *                  .increment as cpu-throttle-initial / -increment
 *   COMPRESSED     compression methods "xbzrle" (the default) and "mt":
 *                  capabilities xbzrle / compress on both ends, with
 *                  xbzrle-cache-size, compress-level, compress-threads,
 *                  decompress-threads on both ends
 *   PARALLEL       multifd on both ends, parallel.connections as
 *                  multifd-channels
 *   TLS            a tls-creds-x509 object objlibvirt_migrate_tls0 over
 *                  qemu_migrate_tls_x509_cert_dir (the destination the
 *                  server, the source the client), tls-creds (and on the
 *                  source tls-hostname) naming it; removed when the
 *                  stream is over, and at reattach after a restart.
 * The four capabilities are sent on or off every time (QEMU keeps them
 * between migrations).  Both ends see the flags and parameters (PREPARE3
 * gets them as PERFORM3 does), so the destination's QEMU is set up to
 * receive what the source sends.  The commands go before migrate /
 * migrate-incoming and their answers are waited for: QEMU's refusal
 * (a TLS directory without certificates, a level out of range) fails the
 * step with QEMU's words, before any of the guest's memory goes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/tune_params.h"

#define fail(err, ...) rv_err_fail(err, RV_FROM_QEMU, __VA_ARGS__)

#define TLS_OBJ "objlibvirt_migrate_tls0"       /* libvirtd 9.0's id */

/* A parameter of the right type, or NULL (absent); -1 and err when of
 * another type. */
static int find(const rv_typed_param *params, u_int n, const char *name, int type,
                const rv_typed_param **out, rv_err *err)
{
    static const char *const names[] = { "", "int", "uint", "llong", "ullong", "double",
                                         "boolean", "string" };
    *out = rv_tune_param_find(params, n, name);
    if (!*out || (*out)->value.type == type)
        return 0;
    int got = (*out)->value.type;
    return fail(err, RV_ERR_INVALID_ARG,
                "invalid argument: invalid type '%s' for parameter '%s', expected '%s'",
                got > 0 && got < 8 ? names[got] : "unknown", name, names[type]);
}

static int find_int(const rv_typed_param *params, u_int n, const char *name, int *val,
                    bool *given, rv_err *err)
{
    const rv_typed_param *p;
    if (find(params, n, name, RV_TYPED_PARAM_INT, &p, err) < 0)
        return -1;
    *given = p != NULL;
    if (p)
        *val = p->value.rv_typed_param_value_u.i;
    return 0;
}

int rv_qemu_migcaps_parse(unsigned int flags, const rv_typed_param *params, u_int n, bool incoming,
                          rv_qemu_migcaps *out, rv_err *err)
{
    rv_qemu_migcaps c = { .flags = flags & RV_QEMU_MIGRATE_CAPS & ~RV_QEMU_MIGRATE_ZEROCOPY };
    /* Compression methods: each "compression" parameter names one. */
    bool methods = false;
    for (u_int i = 0; i < n; i++) {
        if (strcmp(params[i].field, "compression") != 0)
            continue;
        if (params[i].value.type != RV_TYPED_PARAM_STRING)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: invalid type for parameter '%s', "
                        "expected 'string'", "compression");
        const char *m = params[i].value.rv_typed_param_value_u.s;
        bool *which = strcmp(m, "xbzrle") == 0 ? &c.xbzrle : strcmp(m, "mt") == 0 ? &c.mt : NULL;
        if (!which)
            return fail(err, RV_ERR_INVALID_ARG, "invalid argument: Unsupported compression method '%s'", m);
        if (*which)
            return fail(err, RV_ERR_INVALID_ARG,
                        "invalid argument: Compression method '%s' is specified twice", m);
        *which = methods = true;
    }
    /* (a method alone turns compression on, as with libvirtd; its words
     * for each tuning without its feature, observed) */
    if (find_int(params, n, "compression.mt.level", &c.mt_level, &c.has_mt_level, err) < 0 ||
        find_int(params, n, "compression.mt.threads", &c.mt_threads, &c.has_mt_threads, err) < 0 ||
        find_int(params, n, "compression.mt.dthreads", &c.mt_dthreads, &c.has_mt_dthreads, err) < 0 ||
        find_int(params, n, "auto_converge.initial", &c.ac_initial, &c.has_ac_initial, err) < 0 ||
        find_int(params, n, "auto_converge.increment", &c.ac_increment, &c.has_ac_increment, err) < 0 ||
        find_int(params, n, "parallel.connections", &c.connections, &c.has_connections, err) < 0)
        return -1;
    const rv_typed_param *cache, *tlsdest;
    if (find(params, n, "compression.xbzrle.cache", RV_TYPED_PARAM_ULLONG, &cache, err) < 0 ||
        find(params, n, "tls.destination", RV_TYPED_PARAM_STRING, &tlsdest, err) < 0)
        return -1;
    if ((c.has_mt_level || c.has_mt_threads || c.has_mt_dthreads) && !c.mt)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "Turn multithread compression on to tune it");
    if (cache && !c.xbzrle)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "Turn xbzrle compression on to tune it");
    /* (libvirt's client leaves AUTO_CONVERGE, the source's alone, out of
     * the destination's flags, not its parameters) */
    if ((c.has_ac_initial || c.has_ac_increment) && !incoming &&
        !(flags & RV_QEMU_MIGRATE_AUTO_CONVERGE))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "Turn auto convergence on to tune it");
    if (c.has_connections && !(flags & RV_QEMU_MIGRATE_PARALLEL))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s",
                    "Turn parallel migration on to tune it");
    if ((flags & RV_QEMU_MIGRATE_ZEROCOPY) && !(flags & RV_QEMU_MIGRATE_PARALLEL))
        return fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: %s",
                    "zero-copy is only available for parallel migration");
    if (flags & RV_QEMU_MIGRATE_ZEROCOPY)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED, "argument unsupported: %s",
                    "remvirtd does not do zero-copy migration (it would lock the guest's memory): "
                    "migrate without --zerocopy");
    if (tlsdest && strlen(tlsdest->value.rv_typed_param_value_u.s) >= sizeof(c.tls_hostname))
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: %s", "tls.destination is too long");
    if ((flags & RV_QEMU_MIGRATE_COMPRESSED) && !methods)
        c.xbzrle = true;        /* libvirt's default method */
    if (cache) {
        c.xbzrle_cache = cache->value.rv_typed_param_value_u.ul;
        c.has_xbzrle_cache = true;
    }
    if (tlsdest)
        snprintf(c.tls_hostname, sizeof(c.tls_hostname), "%s", tlsdest->value.rv_typed_param_value_u.s);
    if (out)
        *out = c;
    return 0;
}

void rv_qemu_migcaps_set_host(rv_qemu_migcaps *c, const char *uri)
{
    /* tcp:HOST:PORT or tcp:[V6]:PORT, as PERFORM3 checked it */
    if (c->tls_hostname[0] || strncmp(uri, "tcp:", 4) != 0)
        return;
    const char *h = uri + 4, *colon = strrchr(h, ':');
    size_t len = colon ? (size_t)(colon - h) : strlen(h);
    if (len >= 2 && h[0] == '[' && h[len - 1] == ']')
        h++, len -= 2;
    if (len < sizeof(c->tls_hostname))
        snprintf(c->tls_hostname, sizeof(c->tls_hostname), "%.*s", (int)len, h);
}

/* ---------------------------------------------------------------- QMP */

typedef struct apply_op {
    rv_qmp *qmp;
    rv_err first;               /* QEMU's first refusal, worded as libvirtd's */
    void (*next)(qemu_dom *d, const rv_err *err);
} apply_op;

static bool dom_has_qmp(const void *obj, const void *qmp)
{
    return ((const qemu_dom *)obj)->qmp == qmp;
}

static void on_step(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)qmp, (void)ret;
    apply_op *op = opaque;
    if (err && !rv_err_is_set(&op->first)) {
        char msg[1024];
        int code = rv_qemu_qmp_error_text(err, msg, sizeof(msg));
        rv_err_set(&op->first, RV_FROM_QEMU, code, "%s", msg);
    }
}

static void on_last(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    apply_op *op = opaque;
    on_step(qmp, ret, err, op);
    qemu_dom *d = rv_dom_list_find(&rv_qemu.doms, dom_has_qmp, op->qmp);
    if (d && d->qmp == qmp)
        op->next(d, rv_err_is_set(&op->first) ? &op->first : NULL);
    /* (its QEMU gone: the code that saw it go ends the step) */
    rv_err_clear(&op->first);
    free(op);
}

static void cap(json_object *caps, const char *name, bool on)
{
    json_object *c = json_object_new_object();
    json_object_object_add(c, "capability", json_object_new_string(name));
    json_object_object_add(c, "state", json_object_new_boolean(on));
    json_object_array_add(caps, c);
}

static void put_int(json_object *o, const char *key, bool given, long long v)
{
    if (given)
        json_object_object_add(o, key, json_object_new_int64(v));
}

void rv_qemu_migcaps_apply(qemu_dom *d, bool incoming, void (*next)(qemu_dom *d, const rv_err *err))
{
    const rv_qemu_migcaps *c = &d->migcaps;
    apply_op *op = calloc(1, sizeof(*op));
    json_object *caps = json_object_new_object(), *list = json_object_new_array();
    json_object *p = json_object_new_object();
    rv_err e = { 0 };
    if (!op || !caps || !list || !p) {
        free(op);
        json_object_put(caps);
        json_object_put(list);
        json_object_put(p);
        rv_err_set(&e, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        next(d, &e);
        rv_err_clear(&e);
        return;
    }
    op->qmp = d->qmp;
    op->next = next;
    if (c->flags & RV_QEMU_MIGRATE_TLS) {
        /* (one a killed remvirtd left would make object-add fail) */
        rv_qemu_send_quietly(d->qmp, "object-del", "id", TLS_OBJ);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "qom-type", json_object_new_string("tls-creds-x509"));
        json_object_object_add(o, "id", json_object_new_string(TLS_OBJ));
        json_object_object_add(o, "dir", json_object_new_string(rv_qemu.migrate_tls_dir));
        json_object_object_add(o, "endpoint", json_object_new_string(incoming ? "server" : "client"));
        json_object_object_add(o, "verify-peer", json_object_new_boolean(rv_qemu.migrate_tls_verify));
        if (rv_qmp_command(d->qmp, "object-add", o, 0, on_step, op, &e) < 0)
            on_step(d->qmp, NULL, &e, op);
        rv_err_clear(&e);
        d->migcaps.tls_added = true;
    }
    cap(list, "xbzrle", c->xbzrle);
    cap(list, "auto-converge", !incoming && (c->flags & RV_QEMU_MIGRATE_AUTO_CONVERGE));
    cap(list, "compress", c->mt);
    cap(list, "multifd", c->flags & RV_QEMU_MIGRATE_PARALLEL);
    json_object_object_add(caps, "capabilities", list);
    if (rv_qmp_command(d->qmp, "migrate-set-capabilities", caps, 0, on_step, op, &e) < 0)
        on_step(d->qmp, NULL, &e, op);
    rv_err_clear(&e);
    /* Parameters: only those asked for (QEMU's own defaults otherwise),
     * and the TLS ones always (an earlier TLS migration's would stay). */
    if (!incoming) {
        put_int(p, "cpu-throttle-initial", c->has_ac_initial, c->ac_initial);
        put_int(p, "cpu-throttle-increment", c->has_ac_increment, c->ac_increment);
    }
    put_int(p, "compress-level", c->has_mt_level, c->mt_level);
    put_int(p, "compress-threads", c->has_mt_threads, c->mt_threads);
    put_int(p, "decompress-threads", c->has_mt_dthreads, c->mt_dthreads);
    if (c->has_xbzrle_cache)
        json_object_object_add(p, "xbzrle-cache-size", json_object_new_uint64(c->xbzrle_cache));
    put_int(p, "multifd-channels", c->has_connections, c->connections);
    bool tls = c->flags & RV_QEMU_MIGRATE_TLS;
    json_object_object_add(p, "tls-creds", json_object_new_string(tls ? TLS_OBJ : ""));
    json_object_object_add(p, "tls-hostname",
                           json_object_new_string(tls && !incoming ? c->tls_hostname : ""));
    if (rv_qmp_command(d->qmp, "migrate-set-parameters", p, 0, on_last, op, &e) < 0)
        on_last(d->qmp, NULL, &e, op);
    rv_err_clear(&e);
}

void rv_qemu_migcaps_reset(rv_qmp *qmp)
{
    json_object *p = json_object_new_object();
    if (!p)
        return;
    json_object_object_add(p, "tls-creds", json_object_new_string(""));
    json_object_object_add(p, "tls-hostname", json_object_new_string(""));
    rv_qemu_send_quietly_args(qmp, "migrate-set-parameters", p);
    rv_qemu_send_quietly(qmp, "object-del", "id", TLS_OBJ);
}

void rv_qemu_migcaps_end(qemu_dom *d)
{
    if (d->migcaps.tls_added && d->qmp)
        rv_qemu_migcaps_reset(d->qmp);
    d->migcaps.tls_added = false;
}
