#!/usr/bin/env bash
# A procedure libvirt defines and remvirt does not implement is refused as
# libvirtd refuses a function its driver lacks: VIR_ERR_NO_SUPPORT in the
# API's error domain, "this function is not supported by the connection
# driver: virXxx".  python3-libvirt calls functions that libvirtd's test
# driver lacks too, against both daemons, and must see the same error
# (the migration tuning calls among them: only QEMU drivers have them).
# Raw calls check the rest: before CONNECT_OPEN, before authentication, a
# CALL of an event's number and a number libvirt never assigned.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c 'import libvirt'
requires libvirtd
start_remvirtd 'auth_unix_ro = "sasl"' 'log_filters = "2:server.dispatch"'
start_libvirtd

checks=$RV_TMP/no-support.py
cat > "$checks" <<'PY'
import sys, libvirt

libvirt.registerErrorHandler(lambda *a: None, None)
conn = libvirt.open(sys.argv[1])
dom = conn.lookupByName("test")
calls = [
    ("virDomainAuthorizedSSHKeysGet", lambda: dom.authorizedSSHKeysGet("root")),
    ("virDomainGetJobInfo", lambda: dom.jobInfo()),
    ("virNodeGetSEVInfo", lambda: conn.getSEVInfo()),
    ("virNodeGetMemoryParameters", lambda: conn.getMemoryParameters()),
    ("virConnectListAllSecrets", lambda: conn.listAllSecrets()),
    ("virConnectListAllNWFilters", lambda: conn.listAllNWFilters()),
    # migration tuning: the QEMU driver's alone, as in libvirt
    ("virDomainMigrateSetMaxDowntime", lambda: dom.migrateSetMaxDowntime(100, 0)),
    ("virDomainMigrateGetMaxSpeed", lambda: dom.migrateGetMaxSpeed(0)),
    ("virDomainMigrateSetMaxSpeed", lambda: dom.migrateSetMaxSpeed(10, 0)),
    ("virDomainMigrateSetCompressionCache", lambda: dom.migrateSetCompressionCache(4096, 0)),
    ("virDomainMigrateStartPostCopy", lambda: dom.migrateStartPostCopy(0)),
]
for api, call in calls:
    try:
        call()
        print(f"{api}: succeeded")
    except libvirt.libvirtError as e:
        print(f"{api}: {e.get_error_code()} {e.get_error_domain()} {e.get_error_message()}")
PY
"$SYSTEM_PYTHON3" "$checks" "$REMVIRTD_URI" > "$RV_TMP/remvirtd.out" || fail "python against remvirtd"
"$SYSTEM_PYTHON3" "$checks" "$LIBVIRTD_URI" > "$RV_TMP/libvirtd.out" || fail "python against libvirtd"
cat "$RV_TMP/remvirtd.out"
same "$RV_TMP/libvirtd.out" "$RV_TMP/remvirtd.out" "remvirtd refuses what it lacks as libvirtd does"
grep -q "^virDomainAuthorizedSSHKeysGet: 3 20 this function is not supported by the connection driver: virDomainAuthorizedSSHKeysGet$" \
    "$RV_TMP/remvirtd.out" || fail "not the NO_SUPPORT error libvirtd gives"

rawpy "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" <<'PY'
import sys
import rawclient as rc
import rv_protocol as rv

rw, ro = sys.argv[1:]
unimplemented = next(n for n, (name, _) in rv.UNIMPLEMENTED_PROCS.items()
                     if name == "DOMAIN_SET_LAUNCH_SECURITY_STATE")

def expect(client, proc, code, domain, message, what):
    serial = client.send_call(proc, b"\xff" * 12)      # arguments are never decoded
    hdr, body = client.recv_reply()
    err = rc.expect_error_reply(hdr, body, serial, {code}, what)
    rc.check((err["domain"], err["message"]) == (domain, message),
             f"{what}: domain {err['domain']}, {err['message']!r}")

c = rc.Client(rw)
c.call_ok(rc.PROC_AUTH_LIST)
expect(c, unimplemented, rc.ERR_INTERNAL_ERROR, rc.FROM_RPC, "internal error: hypervisor connection not open",
       "before CONNECT_OPEN")
c.open_connection()
expect(c, unimplemented, rc.ERR_NO_SUPPORT, rc.FROM_DOMAIN, "this function is not supported by the connection driver: "
       "virDomainSetLaunchSecurityState", "after CONNECT_OPEN")
expect(c, rc.PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE, rc.ERR_RPC, rc.FROM_RPC,
       f"unknown procedure: {rc.PROC_DOMAIN_EVENT_CALLBACK_LIFECYCLE}", "a CALL of an event's number")
beyond = max(rv.UNIMPLEMENTED_PROCS) + 1
expect(c, beyond, rc.ERR_RPC, rc.FROM_RPC, f"unknown procedure: {beyond}", "a number libvirt never assigned")
rc.expect_usable(c, "after the refusals")

# auth_unix_ro = "sasl": a stranger hears only that it must authenticate.
s = rc.Client(ro)
s.call_ok(rc.PROC_AUTH_LIST)
expect(s, unimplemented, rc.ERR_RPC, rc.FROM_RPC, "authentication required", "before authentication")
PY

# Each refusal is logged at info level once per client and procedure
# (issue 29 item 6): an operator sees what a tool is missing, a tool
# that retries does not flood the log.
"$SYSTEM_PYTHON3" - "$REMVIRTD_URI" <<'PY' || fail "python's repeated refusals"
import sys, libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
first, second = libvirt.open(sys.argv[1]), libvirt.open(sys.argv[1])
for conn, times in ((first, 3), (second, 1)):
    dom = conn.lookupByName("test")
    for _ in range(times):
        for call in (dom.jobInfo, conn.getSEVInfo):
            try:
                call()
                sys.exit("an unsupported call succeeded")
            except libvirt.libvirtError:
                pass
PY
# The first script's client, then these two: three each.
for api in virDomainGetJobInfo virNodeGetSEVInfo; do
    n=$(grep -c ": client [0-9]* (pid [0-9]* uid [0-9]* gid [0-9]*) called $api (procedure [0-9]*, [A-Z_]*), which the test driver does not support$" "$REMVIRTD_LOG" || true)
    [ "$n" = 3 ] || { grep "does not support" "$REMVIRTD_LOG" | tail -20; fail "$api logged $n times, not once per client (3)"; }
done
grep -q " info : server.dispatch : .*called virDomainGetJobInfo (procedure 163, DOMAIN_GET_JOB_INFO)" "$REMVIRTD_LOG" ||
    fail "the refusal is not logged at info level with the procedure's name and number"
echo "ok   an unsupported procedure is logged by name once per client"
