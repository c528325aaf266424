/* Who is on the other end of a Unix socket (SO_PEERCRED). */
#ifndef RV_AUTH_PEERCRED_H
#define RV_AUTH_PEERCRED_H

#include <sys/types.h>

#include "common/error.h"

typedef struct rv_peer_identity {
    uid_t uid;
    gid_t gid;
    pid_t pid;
} rv_peer_identity;

int rv_peercred_get(int fd, rv_peer_identity *id, rv_err *err);

#endif
