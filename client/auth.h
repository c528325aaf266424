/* Authentication, once AUTH_LIST has said what the server takes: nothing,
 * or libvirt's SASL exchange (AUTH_SASL_INIT, START, then STEPs), after
 * which the connection may carry SASL's security layer. */
#ifndef RV_CLIENT_AUTH_H
#define RV_CLIENT_AUTH_H

#include "client/conn.h"
#include "client/credentials.h"
#include "client/uri.h"
#include "common/error.h"
#include "rv_remote.h"

/* types: what AUTH_LIST gave.  The URI's auth= picks the method as
 * libvirt's does ("sasl", or "sasl.MECH" for one SASL mechanism);
 * otherwise none when the server takes it, else SASL.  Plain TCP (and
 * ext commands) need a mechanism with a security layer of SSF 56 or more,
 * which then wraps every later packet.  0, or -1 with err
 * (RV_ERR_AUTH_FAILED for anything the server or the mechanism refused,
 * with the server's own message when it sent one). */
int rvc_authenticate(struct rvc_conn *rpc, const rvc_uri *uri, const rv_auth_type *types,
                     unsigned int ntypes, const rvc_asker *asker, rv_err *err);

#endif
