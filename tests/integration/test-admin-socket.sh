#!/usr/bin/env bash
# remvirt-admin-sock: created with admin_unix_sock_perms (0700 by
# default), it serves the admin program only and the other sockets refuse
# it (an RPC error, the connection kept); a user other than remvirtd's
# cannot connect to it while it can reach the read-only socket; an
# unimplemented admin procedure is refused by its API's name.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

mode=$(stat -c %a "$REMVIRTD_ADMIN_SOCK")
[ "$mode" = 700 ] || fail "remvirt-admin-sock has mode $mode, not 700"
echo "ok   remvirt-admin-sock has mode 0700"

# Others may walk to the sockets (only the sockets' modes then decide).
chmod 0711 "$RV_TMP"

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_ADMIN_SOCK" <<'PY'
import os, socket, struct, sys
import rawclient as rc
import rv_protocol as rv

rw, ro, admin = sys.argv[1:]
ADMIN = dict(prog=rv.RV_ADMIN_PROGRAM, vers=rv.RV_ADMIN_VERSION)

# The remote program on the admin socket: refused, the connection kept.
c = rc.Client(admin)
serial = c.send_call(rc.PROC_AUTH_LIST)
hdr, body = c.recv_reply()
err = rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, "the remote program on the admin socket")
rc.check("cannot find program" in err["message"], "it names the program: " + err["message"])
hdr, body = c.call(rv.RV_ADMIN_PROC_CONNECT_OPEN, rc.xdr_uint(0), **ADMIN)
rc.check(hdr.status == rc.STATUS_OK, "then the admin program's CONNECT_OPEN on it succeeds")
hdr, body = c.call(rv.RV_ADMIN_PROC_CONNECT_GET_LIB_VERSION, **ADMIN)
u = rc.Unpacker(body)
rc.check(hdr.status == rc.STATUS_OK and u.uhyper() == 9000000, "CONNECT_GET_LIB_VERSION: 9000000")
# CONNECT_SET_DAEMON_TIMEOUT (19): unknown flags are refused, naming the
# API; timeout 0 (never) is taken.
serial = c.send_call(19, rc.xdr_uint(0) + rc.xdr_uint(1), **ADMIN)
hdr, body = c.recv_reply()
err = rc.expect_error_reply(hdr, body, serial, {rc.ERR_INVALID_ARG}, "CONNECT_SET_DAEMON_TIMEOUT with flags 1")
rc.check("virAdmConnectSetDaemonTimeout" in err["message"], "it names the API: " + err["message"])
hdr, body = c.call(19, rc.xdr_uint(0) + rc.xdr_uint(0), **ADMIN)
rc.check(hdr.status == rc.STATUS_OK and body == b"", "CONNECT_SET_DAEMON_TIMEOUT 0: OK, no body")
# A procedure number libvirt never had.
serial = c.send_call(999, **ADMIN)
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, "admin procedure 999")
# Bad arguments: a clear error, the connection kept.
serial = c.send_call(rv.RV_ADMIN_PROC_CONNECT_LOOKUP_SERVER, b"\xff\xff\xff\xff", **ADMIN)
hdr, body = c.recv_reply()
rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC}, "LOOKUP_SERVER with a truncated string")
hdr, body = c.call(rv.RV_ADMIN_PROC_CONNECT_GET_LIB_VERSION, **ADMIN)
rc.check(hdr.status == rc.STATUS_OK, "the admin connection still answers")
c.close()

# The admin program on the other two sockets: refused, the connection kept.
for path in (rw, ro):
    c = rc.Client(path)
    serial = c.send_call(rv.RV_ADMIN_PROC_CONNECT_OPEN, rc.xdr_uint(0), **ADMIN)
    hdr, body = c.recv_reply()
    err = rc.expect_error_reply(hdr, body, serial, {rc.ERR_RPC},
                                f"the admin program on {os.path.basename(path)}")
    c.open_connection()
    rc.expect_usable(c, f"{os.path.basename(path)} after the refusal")
    c.close()

# Another user: no entry to the admin socket, while the read-only one lets it in.
if os.geteuid() == 0:
    def try_connect(path):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path)
                os.write(w, b"connected")
            except OSError as e:
                os.write(w, e.strerror.encode())
            os._exit(0)
        os.close(w)
        out = os.read(r, 200).decode()
        os.waitpid(pid, 0)
        return out
    rc.check(try_connect(ro) == "connected", "uid 65534 can connect to remvirt-sock-ro (0777)")
    got = try_connect(admin)
    rc.check(got == "Permission denied", f"uid 65534 cannot connect to remvirt-admin-sock: {got}")
else:
    print("skip the other-user check: needs root")
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd

# admin_unix_sock_perms is honoured.
start_remvirtd 'admin_unix_sock_perms = "0770"'
mode=$(stat -c %a "$REMVIRTD_ADMIN_SOCK")
[ "$mode" = 770 ] || fail "admin_unix_sock_perms = 0770 gave mode $mode"
echo "ok   admin_unix_sock_perms = \"0770\" gives mode 0770"
stop_remvirtd
