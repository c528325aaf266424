/* From a parsed URI to a connected transport, whichever one it names. */
#ifndef RV_CLIENT_CONNECT_H
#define RV_CLIENT_CONNECT_H

#include "client/uri.h"
#include "common/error.h"
#include "transport/transport.h"

/* Connect as the URI says (unix, tcp, tls, ssh/libssh2, ext), with the
 * transport's own params (pkipath, no_verify, keyfile, known_hosts, ...).
 * The transport is blocking; errors name the cause. */
rv_transport *rvc_transport_open(const rvc_uri *uri, int readonly, rv_err *err);

/* Set by a program nobody sits at (remvirtd, whose peer-to-peer
 * migration opens its destination with this code): every connection then
 * acts as with no_tty=1, so that a password or passphrase fails at once
 * instead of being asked on a terminal the daemon may still have. */
extern int rvc_never_prompt;

/* Test-only: when set, rvc_transport_open returns what it gives instead of
 * connecting (tests/fuzz/fuzz-client hands over one end of a socketpair
 * and plays the server on the other).  Not exported by libremvirt.so, so
 * only programs that build the library's sources in can set it. */
extern rv_transport *(*rvc_test_transport_hook)(rv_err *err);

#endif
