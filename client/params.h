/* Typed parameters from the wire into the public rv_typed_parameter
 * (client/wrappers.c), for the readers in wrappers.c and queries.c. */
#ifndef RV_CLIENT_PARAMS_H
#define RV_CLIENT_PARAMS_H

#include "client/remvirt.h"
#include "rv_remote.h"

/* Copy n wire parameters into out (room entries), moving the strings out
 * of wire; more than room, or a name too long, is an RPC error (-1 with
 * the last error set, naming func).  Returns n. */
int rvc_params_from_wire(rv_typed_parameter *out, int room, rv_typed_param *wire, u_int n,
                         const char *func);

#endif
