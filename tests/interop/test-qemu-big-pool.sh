#!/usr/bin/env bash
# A directory pool with more volumes than one reply can carry (20,000):
# it starts and refreshes whole (the directory is read in slices of loop
# time; see bench/run-big-pool.sh for the loop's longest pass), counts
# every file, and a listing of all its volumes fails saying it has more
# than the wire's 16,384, as
# libvirtd's does, instead of a silently short list.  A FIFO or a
# symbolic link in the directory is no volume.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$SYSTEM_PYTHON3" -c "import libvirt"
start_remvirtd_qemu
dir=$RV_TMP/big
mkdir -p "$dir"
(cd "$dir" && seq -f 'v%05g' 0 19999 | xargs touch)
mkfifo "$dir/fifo"
ln -s /etc/passwd "$dir/link"

"$SYSTEM_PYTHON3" - "$QEMU_URI" "$dir" <<'PY'
import os, sys
import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)
uri, d = sys.argv[1], sys.argv[2]
c = libvirt.open(uri)

def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)
    print("ok   " + what)

p = c.storagePoolCreateXML(
    "<pool type='dir'><name>big</name><target><path>%s</path></target></pool>" % d, 0)
check(p.numOfVolumes() == 20000, "the started pool counts 20000 volumes (%d)" % p.numOfVolumes())
try:
    p.listAllVolumes()
    check(False, "listAllVolumes of 20000 volumes succeeded")
except libvirt.libvirtError as e:
    check("Too many storage_vols '20000' for limit '16384'" in str(e),
          "listAllVolumes says the pool has too many volumes: %s" % e)
open(os.path.join(d, "v20000"), "w").close()
os.unlink(os.path.join(d, "v00000"))
p.refresh(0)
check(p.numOfVolumes() == 20000, "a refresh sees one file gone and one new")
check(p.storageVolLookupByName("v20000").info()[0] == 0, "the new file is a volume")
for gone in ("v00000", "fifo", "link"):
    try:
        p.storageVolLookupByName(gone)
        check(False, "%s is a volume" % gone)
    except libvirt.libvirtError as e:
        check(e.get_error_code() == libvirt.VIR_ERR_NO_STORAGE_VOL, "%s is no volume" % gone)
for i in range(20000, 10000, -1):
    os.unlink(os.path.join(d, "v%05d" % i))
p.refresh(0)
check(len(p.listAllVolumes()) == 10000, "at 10000 volumes every one is listed")
p.destroy()
PY
