#!/usr/bin/env bash
# DOMAIN_OPEN_CHANNEL on the QEMU driver, side by side with libvirtd's:
# a stream joined to a unix <channel> found by its virtio port name, its
# alias or (no name) as the first channel; data both ways (the channel's
# far end echoes, channel-checks.py); one session per channel unless
# FORCE takes over (the old session ends); a channel that does not
# exist, unknown flags and a guest that is gone give libvirtd's errors.
# (test-qemu-graphics-fd.sh checks the test driver's refusal.)
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

start_both_qemu chan
checks=$top_srcdir/tests/interop/channel-checks.py
qemu_domain_xml ch "<channel type='unix'><source mode='bind' path='@BIND@'/><target type='virtio' name='org.test.bind'/></channel><channel type='unix'><source mode='connect' path='@LISTEN@'/><target type='virtio' name='org.test.connect'/></channel>" \
    > "$OUT/ch.xml"
for side in libvirtd remvirtd; do
    if [ $side = libvirtd ]; then uri=$LIBVIRTD_QEMU_URI; else uri=$QEMU_URI; fi
    mkdir -p "$OUT/$side"
    chmod 777 "$OUT/$side"
    "$SYSTEM_PYTHON3" "$checks" "$uri" "$OUT/$side" "$OUT/ch.xml" > "$OUT/$side.out" 2>&1 ||
        { show "$OUT/$side.out"; fail "$side: channel-checks.py"; }
done
# Made the same: the guest's UUID (generated); how the forced-out session
# ends: libvirtd fails it (39/38 "stream had I/O failure"), remvirtd ends
# its data (docs/compatibility.md).
for side in libvirtd remvirtd; do
    sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/' \
        -e "s/^the forced-out session(: error 39 38 stream had I\/O failure|'s data: b'')$/the forced-out session ends/" \
        "$OUT/$side.out" > "$OUT/$side.norm"
done
has_line "$OUT/remvirtd.norm" "the forced-out session ends" || { show "$OUT/remvirtd.out"; fail "the forced-out session"; }
same "$OUT/libvirtd.norm" "$OUT/remvirtd.norm" "openChannel: data, sessions and errors"
