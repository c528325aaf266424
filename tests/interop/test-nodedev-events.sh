#!/usr/bin/env bash
# Node device event registration (CONNECT_NODE_DEVICE_EVENT_REGISTER_ANY,
# DEREGISTER_ANY), which virt-manager does when it connects:
# python3-libvirt registers lifecycle and update callbacks, for every
# device and for one, deregisters them, and tries a bad event ID and an
# unknown callback ID; remvirtd must answer as libvirtd's test driver
# does (the callback IDs, the error codes).  No device changes on either
# test driver, so no event arrives.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires_root
requires "$SYSTEM_PYTHON3" -c 'import libvirt'

session()
{
    "$SYSTEM_PYTHON3" - "$1" <<'PY'
import sys, libvirt
libvirt.registerErrorHandler(lambda *a: None, None)
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(sys.argv[1])
dev = conn.listAllDevices()[0]
def cb(*args):
    print("unexpected event", args[1:])
ids = [conn.nodeDeviceEventRegisterAny(None, libvirt.VIR_NODE_DEVICE_EVENT_ID_LIFECYCLE, cb, None),
       conn.nodeDeviceEventRegisterAny(dev, libvirt.VIR_NODE_DEVICE_EVENT_ID_UPDATE, cb, None),
       conn.nodeDeviceEventRegisterAny(None, libvirt.VIR_NODE_DEVICE_EVENT_ID_UPDATE, cb, None)]
print("registered", ids)
for i in ids:
    conn.nodeDeviceEventDeregisterAny(i)
print("deregistered")
for what, call in (("bad event ID", lambda: conn.nodeDeviceEventRegisterAny(None, 7, cb, None)),
                   ("unknown callback", lambda: conn.nodeDeviceEventDeregisterAny(ids[0]))):
    try:
        call()
        print(what, "accepted")
    except libvirt.libvirtError as e:
        print(what, "refused, code", e.get_error_code())
print("again", conn.nodeDeviceEventRegisterAny(None, 0, cb, None))
PY
}

start_remvirtd
start_libvirtd
session "$REMVIRTD_URI" > "$RV_TMP/remvirtd.out" || fail "python against remvirtd failed"
session "$LIBVIRTD_URI" > "$RV_TMP/libvirtd.out" || fail "python against libvirtd failed"
cat "$RV_TMP/remvirtd.out"
diff -u "$RV_TMP/libvirtd.out" "$RV_TMP/remvirtd.out" || fail "remvirtd answers otherwise than libvirtd"
grep -qx 'registered \[0, 1, 2\]' "$RV_TMP/remvirtd.out" || fail "unexpected callback IDs"
