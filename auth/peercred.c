#include "auth/peercred.h"

#include <errno.h>
#include <sys/socket.h>

int rv_peercred_get(int fd, rv_peer_identity *id, rv_err *err)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        rv_err_set_errno(err, RV_FROM_RPC, errno, "cannot read the peer credentials of fd %d", fd);
        return -1;
    }
    id->uid = cred.uid;
    id->gid = cred.gid;
    id->pid = cred.pid;
    return 0;
}
