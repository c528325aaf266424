#!/usr/bin/env bash
# Records the client fuzzer's seed corpus: the session fuzz-client's
# application runs (open, node info, list, domain info, register, suspend,
# resume, deregister, close), played against a real remvirtd and a private
# libvirtd (test:///default), keeping what each server sent.  Run as root
# from a build dir's environment:
#
#   abs_top_builddir=$PWD ../tests/fuzz/record-client-corpus.sh [ROUNDS]
#
# Events land in different places from round to round, so a few rounds
# (default 3) against each server give the fuzzer a few interleavings.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

rounds=${1:-3}
fuzz_client=$top_builddir/tests/fuzz/fuzz-client
corpus=$top_srcdir/tests/fuzz/corpus/client
[ -x "$fuzz_client" ] || fail "$fuzz_client is not built"
mkdir -p "$corpus"

start_remvirtd
for i in $(seq "$rounds"); do
    "$fuzz_client" --record "$REMVIRTD_SOCK" "$corpus/session-remvirtd-$i"
done
start_libvirtd
for i in $(seq "$rounds"); do
    "$fuzz_client" --record "$LIBVIRTD_SOCK" "$corpus/session-libvirtd-$i"
done
ls -l "$corpus"
