#include "transport/sasl.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"

RV_LOG_CATEGORY("transport.sasl");

/* One read from the inner transport; sasl_decode keeps partial blocks, so
 * any size works. */
#define RAW_READ_SIZE 16384
/* The most caller bytes one write encodes before sending. */
#define WRITE_BATCH 65536
/* Buffers above this are given back once empty. */
#define KEEP_BUFFER 131072

typedef struct sasl_transport {
    rv_transport base;
    rv_transport *inner;
    rv_sasl *sasl;
    size_t max_encode;
    /* cyrus' connection is not thread-safe: held around every encode and
     * decode (and over `decoded`, which pending() reads from any thread),
     * never across the inner transport's I/O. */
    pthread_mutex_t lock;
    /* The writer's: encoded bytes the inner transport has not taken yet,
     * and how many of the caller's bytes they carry.  Those bytes count
     * as written only once all of them are sent; until then the caller
     * retries with a buffer that starts with them. */
    rv_buf encoded;
    size_t encoded_plain;
    /* The reader's: decoded bytes not yet read (under lock). */
    rv_buf decoded;
    int read_failed;            /* the peer sent something decode refused */
    char raw[RAW_READ_SIZE];
} sasl_transport;

static const rv_transport_ops sasl_ops;

static ssize_t sasl_read(rv_transport *t, void *buf, size_t len)
{
    sasl_transport *st = (sasl_transport *)t;
    if (len == 0)
        return 0;
    for (;;) {
        pthread_mutex_lock(&st->lock);
        size_t have = rv_buf_used(&st->decoded);
        if (have > 0) {
            size_t n = have < len ? have : len;
            memcpy(buf, rv_buf_head(&st->decoded), n);
            rv_buf_consume(&st->decoded, n);
            rv_buf_shrink(&st->decoded, KEEP_BUFFER);
            pthread_mutex_unlock(&st->lock);
            return (ssize_t)n;
        }
        pthread_mutex_unlock(&st->lock);
        if (st->read_failed) {
            errno = EIO;
            return -1;
        }

        ssize_t got = rv_transport_read(st->inner, st->raw, sizeof(st->raw));
        if (got <= 0)
            return got;

        rv_err err = { 0 };
        const char *plain;
        size_t plain_len;
        pthread_mutex_lock(&st->lock);
        if (rv_sasl_decode(st->sasl, st->raw, (size_t)got, &plain, &plain_len, &err) < 0) {
            pthread_mutex_unlock(&st->lock);
            RV_WARN("fd %d: %s", t->fd, err.message ? err.message : "SASL decoding failed");
            rv_err_clear(&err);
            st->read_failed = 1;
            errno = EIO;
            return -1;
        }
        if (plain_len == 0) {
            /* Only part of a block so far: cyrus keeps it; read on. */
            pthread_mutex_unlock(&st->lock);
            continue;
        }
        /* cyrus' output lives until the next decode: keep what the caller
         * has no room for. */
        size_t n = plain_len < len ? plain_len : len;
        memcpy(buf, plain, n);
        if (n < plain_len) {
            if (rv_buf_reserve(&st->decoded, plain_len - n) < 0) {
                pthread_mutex_unlock(&st->lock);
                st->read_failed = 1;
                errno = ENOMEM;
                return -1;
            }
            memcpy(st->decoded.data + st->decoded.len, plain + n, plain_len - n);
            st->decoded.len += plain_len - n;
        }
        pthread_mutex_unlock(&st->lock);
        return (ssize_t)n;
    }
}

/* Encode up to WRITE_BATCH of buf into st->encoded, max_encode at a time. */
static int encode_batch(sasl_transport *st, const char *buf, size_t len)
{
    size_t take = len < WRITE_BATCH ? len : WRITE_BATCH;
    rv_err err = { 0 };
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    for (size_t off = 0; off < take;) {
        size_t chunk = take - off < st->max_encode ? take - off : st->max_encode;
        const char *enc;
        size_t enc_len;
        if (rv_sasl_encode(st->sasl, buf + off, chunk, &enc, &enc_len, &err) < 0) {
            RV_WARN("fd %d: %s", st->base.fd, err.message ? err.message : "SASL encoding failed");
            rv_err_clear(&err);
            errno = EIO;
            rc = -1;
            break;
        }
        if (rv_buf_reserve(&st->encoded, enc_len) < 0) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
        memcpy(st->encoded.data + st->encoded.len, enc, enc_len);
        st->encoded.len += enc_len;
        off += chunk;
    }
    pthread_mutex_unlock(&st->lock);
    if (rc < 0) {
        st->encoded.start = st->encoded.len = 0;
        return -1;
    }
    st->encoded_plain = take;
    return 0;
}

static ssize_t sasl_write(rv_transport *t, const void *buf, size_t len)
{
    sasl_transport *st = (sasl_transport *)t;
    if (st->encoded_plain == 0) {
        if (len == 0)
            return 0;
        if (encode_batch(st, buf, len) < 0)
            return -1;
    } else if (len < st->encoded_plain) {
        /* A retry must start with the bytes already encoded. */
        errno = EINVAL;
        return -1;
    }
    while (rv_buf_used(&st->encoded) > 0) {
        ssize_t n = rv_transport_write(st->inner, rv_buf_head(&st->encoded),
                                       rv_buf_used(&st->encoded));
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        rv_buf_consume(&st->encoded, (size_t)n);
    }
    size_t done = st->encoded_plain;
    st->encoded_plain = 0;
    rv_buf_shrink(&st->encoded, KEEP_BUFFER);
    return (ssize_t)done;
}

static size_t sasl_pending(rv_transport *t)
{
    sasl_transport *st = (sasl_transport *)t;
    pthread_mutex_lock(&st->lock);
    size_t n = rv_buf_used(&st->decoded);
    pthread_mutex_unlock(&st->lock);
    return n + rv_transport_pending(st->inner);
}

static short sasl_wait_events(rv_transport *t, short op)
{
    return rv_transport_wait_events(((sasl_transport *)t)->inner, op);
}

static const char *sasl_peer_error(rv_transport *t)
{
    return rv_transport_peer_error(((sasl_transport *)t)->inner);
}

static void sasl_close(rv_transport *t)
{
    sasl_transport *st = (sasl_transport *)t;
    rv_sasl_free(st->sasl);
    rv_transport_close(st->inner);
    rv_buf_free(&st->encoded);
    rv_buf_free(&st->decoded);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static const rv_transport_ops sasl_ops = {
    .name = "sasl",
    .read = sasl_read,
    .write = sasl_write,
    .pending = sasl_pending,
    .wait_events = sasl_wait_events,
    .peer_error = sasl_peer_error,
    .close = sasl_close,
};

rv_transport *rv_sasl_transport_new(rv_transport *inner, rv_sasl *s, rv_err *err)
{
    size_t max_encode = rv_sasl_max_encode(s);
    if (rv_sasl_ssf(s) <= 0 || max_encode == 0) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_INTERNAL_ERROR,
                   "no SASL security layer was negotiated, so there is nothing to wrap");
        goto fail;
    }
    sasl_transport *st = calloc(1, sizeof(*st));
    if (!st) {
        rv_err_set(err, RV_FROM_RPC, RV_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    st->base.ops = &sasl_ops;
    st->base.fd = inner->fd;
    st->inner = inner;
    st->sasl = s;
    st->max_encode = max_encode;
    pthread_mutex_init(&st->lock, NULL);
    RV_DEBUG("fd %d: SASL security layer on (SSF %d, %zu bytes per block) over %s", inner->fd,
             rv_sasl_ssf(s), max_encode, inner->ops->name);
    return &st->base;

fail:
    rv_sasl_free(s);
    rv_transport_close(inner);
    return NULL;
}
