#!/usr/bin/env bash
# The README's quick start with a real guest, as root, from a copy of the
# tree as a fresh clone has it: `./quickstart.sh --qemu` builds remvirt,
# starts remvirtd with its QEMU driver and the test guest on a NAT network
# of its own, and shows the guest running, its DHCP lease, a ping it
# answers and its console; the test pings it too; then
# `./quickstart.sh --stop` leaves no remvirtd, QEMU, dnsmasq, bridge,
# nftables table or run directory.  In a network and mount namespace of
# its own (bridges and nft tables never reach the host), where apt-get has
# no way out: the packages are there already, and the guest is the suite's
# (built out here), copied where quickstart.sh builds it.
set -euo pipefail
rv_netns_guest=1
source "$(dirname "$0")/../netns.sh"
source "$(dirname "$0")/../functions.sh"

netns_view
requires git
requires nft --version
requires dnsmasq --version
requires ping -V
requires qemu-system-x86_64 --version

test_guest
clone=$RV_TMP/clone
copy_source_tree "$clone"
mkdir -p "$clone/build/tests/guest"
cp "$TEST_GUEST_KERNEL" "$TEST_GUEST_INITRD" "$(dirname "$TEST_GUEST_KERNEL")/version" "$clone/build/tests/guest/"

stopped=0
stop_quickstart()
{
    [ "$stopped" = 1 ] || "$clone/quickstart.sh" --stop > "$RV_TMP/stop" 2>&1
}
cleanup_fn stop_quickstart
start=$SECONDS
"$clone/quickstart.sh" --qemu > "$RV_TMP/out" 2>&1 || { cat "$RV_TMP/out"; fail "quickstart.sh --qemu failed"; }
echo "ok   quickstart.sh --qemu: $((SECONDS - start)) s"
OUT=$RV_TMP/out
show_out() { sed -n '/^== Starting remvirtd/,$p' "$OUT"; }

rundir=$(cat "$clone/build/quickstart-rundir")
uri=$(cat "$rundir/uri")
[ "$uri" = "qemu+unix:///system?socket=$rundir/remvirt-sock" ] || fail "quickstart's URI is '$uri'"
accel=$(sed -n 's/^== remvirtd and the guest are still running (remvirtd pid [0-9]*, \(KVM\|TCG\)).$/\1/p' "$OUT")
[ -n "$accel" ] || { show_out; fail "quickstart.sh does not say KVM or TCG at the end"; }
grep -qE '^ *[0-9]+ +guest +running$' "$OUT" || { show_out; fail "rvsh list does not show the guest running"; }
grep -qE '^State: +running$' "$OUT" || { show_out; fail "dominfo does not say running"; }
ip=$(sed -n 's/^== ping .* \([0-9.]*\)$/\1/p' "$OUT")
[ -n "$ip" ] || { show_out; fail "quickstart.sh shows no lease"; }
grep -qE "ipv4 +$ip/24" "$OUT" || { show_out; fail "net-dhcp-leases does not list $ip"; }
grep -q "bytes from $ip" "$OUT" || { show_out; fail "quickstart.sh shows no answer from $ip"; }
grep -q "remvirt-test-guest: ready" "$OUT" || { show_out; fail "the console's last lines are not the guest's"; }
grep -qF "rvsh -c '$uri' console guest" "$OUT" || { show_out; fail "no console command at the end"; }
echo "ok   the guest runs with $accel, leased $ip, its console says it is ready"

# Still running after quickstart.sh has finished: ours to reach.
virsh -q -c "$uri" list > "$RV_TMP/list" 2>&1 || { cat "$RV_TMP/list"; fail "virsh list"; }
grep -qE '^ *[0-9]+ +guest +running$' "$RV_TMP/list" || { cat "$RV_TMP/list"; fail "virsh list does not show the guest"; }
ping -c 1 -W 5 "$ip" > "$RV_TMP/ping" 2>&1 || { cat "$RV_TMP/ping"; fail "the guest does not answer ping"; }
echo "ok   virsh with its URI lists the guest; it answers ping at $ip"
qemu=$(pgrep -f "qemu-system.*$rundir/" || true)
[ -n "$qemu" ] || fail "no QEMU process runs from $rundir"

"$clone/quickstart.sh" --stop > "$RV_TMP/stop" 2>&1 || { cat "$RV_TMP/stop"; fail "quickstart.sh --stop failed"; }
stopped=1
[ ! -e "$rundir" ] || fail "$rundir is left after --stop"
[ ! -e "$clone/build/quickstart-rundir" ] || fail "build/quickstart-rundir is left after --stop"
for pid in $qemu; do
    wait_for 10 "QEMU $pid to go" _rv_gone "$pid" || fail "QEMU $pid still runs after --stop"
done
[ -z "$(pgrep -f "$rundir" || true)" ] || fail "processes of $rundir left: $(pgrep -af "$rundir")"
[ -z "$(ip -o link show type bridge)" ] || fail "a bridge is left: $(ip -o link show type bridge)"
[ -z "$(nft list tables)" ] || fail "nft tables are left: $(nft list tables)"
echo "ok   quickstart.sh --stop: no remvirtd, QEMU, dnsmasq, bridge, nft table or run directory left"
