#!/usr/bin/env bash
# The random-kill campaign of issue 26 (bench/kill_campaign.py): a
# private remvirtd killed with SIGKILL N times (default 1000) at random
# moments while two clients run many kinds of operation on the QEMU
# driver; after each restart the clients' acknowledged operations and the
# files' references are checked.  Prints the kills, the operations
# acknowledged and every inconsistency found; exits 1 if there was one.
# As root (QEMU guests, TCG); about 40 minutes for 1000 kills on 2 cores.
#
#   bench/run-kill-campaign.sh [--builddir DIR] [-- --kills N --seed S --keep]
set -euo pipefail

builddir=./build
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) echo "run-kill-campaign: unknown option '$1'" >&2; exit 2 ;;
    esac
done
remvirtd=$(cd "$builddir" && pwd)/remvirtd
[ -x "$remvirtd" ] || { echo "run-kill-campaign: $remvirtd not found: build it first" >&2; exit 1; }
command -v qemu-img > /dev/null || { echo "run-kill-campaign: needs qemu-img (qemu-utils)" >&2; exit 1; }
# Debian's libvirt binding is built for the system python only.
exec /usr/bin/python3 "$(dirname "$0")/kill_campaign.py" --remvirtd "$remvirtd" "$@"
