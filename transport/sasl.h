/* The SASL security layer as a transport: wraps another transport,
 * writes what sasl_encode gives (the mechanism frames its own blocks, as
 * libvirt sends them) and feeds whatever arrives to sasl_decode (which
 * keeps partial blocks).  Decoded bytes not yet read count as pending.
 * The server switches a client to it only after the final AUTH_SASL
 * reply has been flushed; the client right after that reply. */
#ifndef RV_TRANSPORT_SASL_H
#define RV_TRANSPORT_SASL_H

#include "auth/sasl.h"
#include "transport/transport.h"

/* Takes ownership of inner and of s (both freed on failure too); same fd
 * as inner.  Fails unless s finished with an SSF > 0.  One thread may read
 * while another writes.  A write that failed (EAGAIN) keeps what it
 * encoded: retry with a buffer that starts with the same bytes, at least
 * as many as the batch it took (EINVAL otherwise); they count as written
 * only once all of their encoded form is sent. */
rv_transport *rv_sasl_transport_new(rv_transport *inner, rv_sasl *s, rv_err *err);

#endif
