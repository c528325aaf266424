/* The error codes, domains, states, flags and events of the public header
 * and of the internal ones are generated from one source
 * (protocol/rv_values.x).  The few numbers the public header still spells
 * itself (it is installed alone), and that the protocol or the internal
 * headers spell too, are checked here at compile time.  No code. */
#include "client/remvirt.h"

#include "common/error.h"
#include "common/util.h"
#include "rv_remote.h"

#define SAME(pub, internal) _Static_assert((int)(pub) == (int)(internal), #pub)
SAME(RV_CONNECT_READONLY, RV_CONNECT_RO);
SAME(RV_CONNECT_CLOSE_REASON_ERROR, RV_CLOSE_REASON_ERROR);
SAME(RV_CONNECT_CLOSE_REASON_EOF, RV_CLOSE_REASON_EOF);
SAME(RV_CONNECT_CLOSE_REASON_KEEPALIVE, RV_CLOSE_REASON_KEEPALIVE);
SAME(RV_CONNECT_CLOSE_REASON_CLIENT, RV_CLOSE_REASON_CLIENT);
SAME(RV_DOMAIN_EVENT_ID_LIFECYCLE, RV_DOM_EVENT_ID_LIFECYCLE);
SAME(RV_DOMAIN_XML_SECURE, RV_DOM_XML_SECURE);
SAME(RV_UUID_BUFLEN, RV_UUID_LEN);
SAME(RV_UUID_STRING_BUFLEN, RV_UUID_STRING_LEN);
_Static_assert(sizeof(((rv_node_info *)0)->model) == RV_NODE_MODEL_LEN + 1, "model size");
_Static_assert(sizeof(((rv_security_model *)0)->model) == RV_SECURITY_MODEL_MAX, "model size");
_Static_assert(sizeof(((rv_security_model *)0)->doi) == RV_SECURITY_DOI_MAX, "doi size");
_Static_assert(sizeof(((rv_security_label *)0)->label) == RV_SECURITY_LABEL_MAX, "label size");
