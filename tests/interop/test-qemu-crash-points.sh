#!/usr/bin/env bash
# Crash consistency of the QEMU driver's multi-step operations, step by
# step: remvirtd is started with RV_CRASH_AT=OP:N, which makes it kill
# itself (SIGKILL) where step N of operation OP begins
# (server/drivers/crash_point.h), for N = 1, 2, ... until the operation
# completes without reaching step N.  After each kill remvirtd is started
# again (unarmed) and the invariant of docs/qemu-driver.md is checked:
# the guest is in its old state or in its new one, whole, and no file
# refers to a missing one (no autostart link without its definition, no
# shut-off (saved) domain without its image, no tombstone, no snapshot
# listed that its qcow2 image lacks and none in the image that is not
# listed).  The operations: restore, undefine (with the managed image
# and the snapshots, and of an autostarted domain), a definition's write,
# managedsave, managedsave-define, a dump to the caller's path, snapshot-create and
# snapshot-delete, checkpoint-create and checkpoint-delete (a running
# guest's), vol-create, a network's define and undefine (the
# families' queue, qemu_fileq.c), and a domain's rename (its old name or
# its new one, never both or neither).
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires virsh
requires qemu-img --version
start_remvirtd_qemu
V=(virsh -q -c "$QEMU_URI")
OUT=$RV_TMP/out
mkdir -p "$OUT"
ETC=$QEMU_DIR/etc
SAVE=$QEMU_DIR/save

state() { "${V[@]}" domstate --reason "$1" 2>&1 || true; }
# remvirtd again; answered once the QEMU driver has loaded (and finished
# what a kill interrupted).
restart() { start_remvirtd_qemu; "${V[@]}" list --all > /dev/null; }

# arm OP STEP: remvirtd again, armed to die where step STEP of OP begins.
arm()
{
    stop_remvirtd
    RV_CRASH_AT="$1:$2" restart
}

# alive PID: running, not a zombie waiting to be reaped.
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# run_armed OP STEP CMD...: CMD against the armed remvirtd; true when
# remvirtd died at the crash point (then started again, unarmed), false
# when CMD finished without reaching it (remvirtd still armed).
run_armed()
{
    local op=$1 step=$2
    shift 2
    bg "$OUT/cmd" "$@"
    local cmd=$BG_PID
    _over() { ! alive "$REMVIRTD_PID" || ! alive "$cmd"; }
    wait_for 120 "$op to finish or to reach step $step" _over || fail "$op hangs at step $step"
    # (The client may see the end of its connection before we see the
    # daemon's: a kill in progress is one too.)
    sleep 0.2
    if alive "$REMVIRTD_PID"; then
        finish "$cmd" || true
        ! grep -q "crash point" "$REMVIRTD_DIR/stderr" || fail "remvirtd reported a crash point and lives"
        return 1
    fi
    grep -qx "remvirtd: crash point $op:$step" "$REMVIRTD_DIR/stderr" ||
        { show "$REMVIRTD_DIR/stderr"; fail "remvirtd died at $op:$step, but not at its crash point"; }
    wait "$REMVIRTD_PID" 2>/dev/null || true
    REMVIRTD_PID=
    rm -f "$REMVIRTD_SOCK" "$REMVIRTD_SOCK_RO" "$REMVIRTD_ADMIN_SOCK" "$REMVIRTD_DIR/remvirtd.pid"
    finish "$cmd" || true
    restart
    return 0
}

# No file refers to a missing one.
check_files()
{
    local link
    for link in "$ETC"/autostart/*.xml; do
        [ -e "$link" ] || [ ! -L "$link" ] || fail "a dangling autostart link: $link"
    done
    [ -z "$(find "$ETC" -name '*.undefine-*')" ] || fail "a tombstone is left: $(ls "$ETC")"
    [ -z "$(find "$SAVE" -name '*.save.*' 2>/dev/null)" ] || fail "a partial save image is left"
    local name
    for name in $("${V[@]}" list --all --name); do
        if [ "$(state "$name")" = "shut off (saved)" ]; then
            [ "$(head -c 8 "$SAVE/$name.save" 2>/dev/null)" = RVSAVE01 ] ||
                fail "$name is shut off (saved) without a whole image"
        fi
    done
}

# steps_done OP N: the operation went through all its steps (N - 1 of them).
steps_done()
{
    [ "$2" -gt 1 ] || fail "$1 has no crash point at all"
    echo "ok   $1: killed at each of its $(($2 - 1)) steps, old or new state each time"
}

# ---------------------------------------------------------------- restore from a managed image
qemu_domain_xml g > "$OUT/g.xml"
"${V[@]}" define "$OUT/g.xml" > /dev/null
_settled_restore()
{
    case $(state g) in
    "shut off (saved)")
        [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] && [ -e "$SAVE/g.save" ] ;;
    "running (restored)")
        [ ! -e "$SAVE/g.save" ] && [ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" = 1 ] ;;
    *) false ;;
    esac
}
step=1
while :; do
    arm restore "$step"
    if [ "$(state g)" != "shut off (saved)" ]; then
        "${V[@]}" start g > /dev/null 2>&1 || true
        "${V[@]}" managedsave g > /dev/null
    fi
    run_armed restore "$step" "${V[@]}" start g || break
    wait_for 60 "g to settle after a kill at restore:$step" _settled_restore ||
        fail "after a kill at restore:$step g is $(state g), image: $(ls "$SAVE"), QEMUs: $(qemu_pids "$QEMU_DIR/run/")"
    check_files
    step=$((step + 1))
done
[ "$(state g)" = "running (restored)" ] || fail "the unarmed restore gave $(state g)"
steps_done restore "$step"
"${V[@]}" destroy g > /dev/null

# ---------------------------------------------------------------- restore from a file (the file is kept)
"${V[@]}" start g > /dev/null
"${V[@]}" save g "$OUT/g.img" > /dev/null
cp "$OUT/g.img" "$OUT/g.img.orig"
_settled_file_restore()
{
    cmp -s "$OUT/g.img" "$OUT/g.img.orig" || return 1
    case $(state g) in
    "shut off"*) [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] ;;
    "running (restored)") [ "$(qemu_pids "$QEMU_DIR/run/" | wc -l)" = 1 ] ;;
    *) false ;;
    esac
}
step=1
while :; do
    arm restore "$step"
    "${V[@]}" destroy g > /dev/null 2>&1 || true
    run_armed restore "$step" "${V[@]}" restore "$OUT/g.img" || break
    wait_for 60 "g to settle after a kill at restore:$step (a file)" _settled_file_restore ||
        fail "after a kill at restore:$step from a file g is $(state g), QEMUs: $(qemu_pids "$QEMU_DIR/run/")"
    check_files
    step=$((step + 1))
done
[ "$(state g)" = "running (restored)" ] || fail "the unarmed restore from a file gave $(state g)"
echo "ok   restore from a file: killed at each step, shut off or running (restored), the file as it was"
"${V[@]}" destroy g > /dev/null

# ---------------------------------------------------------------- undefine --managed-save --snapshots-metadata
qemu-img create -q -f qcow2 "$OUT/u.qcow2" 16M
disk="<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/u.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_domain_xml u "$disk" > "$OUT/u.xml"
# The old state: defined, a snapshot and a managed image.
_u_old()
{
    [ "$(state u)" = "shut off (saved)" ] && [ -e "$ETC/u.xml" ] &&
        [ -e "$ETC/snapshot/u.json" ] && [ -e "$SAVE/u.save" ] &&
        [ "$("${V[@]}" snapshot-list --name u)" = s1 ]
}
_u_new()
{
    ! "${V[@]}" domstate u > /dev/null 2>&1 && [ ! -e "$ETC/u.xml" ] &&
        [ ! -e "$ETC/autostart/u.xml" ] && [ ! -L "$ETC/autostart/u.xml" ] &&
        [ ! -e "$ETC/snapshot/u.json" ] && [ ! -e "$SAVE/u.save" ]
}
step=1
while :; do
    arm undefine "$step"
    if ! _u_old; then
        "${V[@]}" define "$OUT/u.xml" > /dev/null
        "${V[@]}" snapshot-create-as u s1 > /dev/null
        "${V[@]}" start u > /dev/null
        "${V[@]}" managedsave u > /dev/null
        _u_old || fail "cannot set up u's old state"
    fi
    run_armed undefine "$step" "${V[@]}" undefine --managed-save --snapshots-metadata u || break
    _u_old || _u_new || fail "after a kill at undefine:$step u is neither old nor new: $(state u); $(ls -R "$ETC" "$SAVE")"
    check_files
    step=$((step + 1))
done
_u_new || fail "the unarmed undefine left $(ls -R "$ETC" "$SAVE")"
steps_done undefine "$step"

# ---------------------------------------------------------------- undefine of an autostarted domain
qemu_domain_xml a > "$OUT/a.xml"
_a_old() { [ -e "$ETC/a.xml" ] && [ -L "$ETC/autostart/a.xml" ] && "${V[@]}" domstate a > /dev/null 2>&1; }
_a_new() { [ ! -e "$ETC/a.xml" ] && [ ! -L "$ETC/autostart/a.xml" ] && ! "${V[@]}" domstate a > /dev/null 2>&1; }
step=1
while :; do
    arm undefine "$step"
    "${V[@]}" destroy a > /dev/null 2>&1 || true     # (started by the restart)
    if ! _a_old; then
        "${V[@]}" define "$OUT/a.xml" > /dev/null
        "${V[@]}" autostart a > /dev/null
    fi
    run_armed undefine "$step" "${V[@]}" undefine a || break
    _a_old || _a_new || fail "after a kill at undefine:$step a is neither old nor new: $(state a); $(ls -lR "$ETC")"
    check_files
    step=$((step + 1))
done
_a_new || fail "the unarmed undefine left $(ls -R "$ETC")"
echo "ok   undefine of an autostarted domain: old or new state at each step"

# ---------------------------------------------------------------- a definition's write (setmem --config)
step=1
mem=$((40 * 1024))
while :; do
    arm define "$step"
    old=$("${V[@]}" dominfo g | awk '/^Used memory/ {print $3}')
    "${V[@]}" dumpxml --inactive g > "$OUT/g-before.xml"
    run_armed define "$step" "${V[@]}" setmem --config g "$mem" || break
    now=$("${V[@]}" dumpxml --inactive g | sed -n "s|.*<currentMemory unit='KiB'>\([0-9]*\)<.*|\1|p")
    [ "$now" = "$old" ] || [ "$now" = "$mem" ] || fail "after a kill at define:$step g has $now KiB"
    grep -q "<currentMemory unit='KiB'>$now<" "$ETC/g.xml" || fail "g's file differs from its definition"
    check_files
    step=$((step + 1))
    mem=$((mem + 1024))
done
steps_done define "$step"

# ---------------------------------------------------------------- managedsave
_settled_save()
{
    case $(state g) in
    "shut off (saved)")
        [ -z "$(qemu_pids "$QEMU_DIR/run/")" ] && [ "$(head -c 8 "$SAVE/g.save" 2>/dev/null)" = RVSAVE01 ] ;;
    running*)
        [ ! -e "$SAVE/g.save" ] && [ ! -e "$QEMU_DIR/run/g.saving" ] &&
            [ "$(qemu_pids "$QEMU_DIR/run/")" = "$pid" ] ;;
    *) false ;;
    esac
}
step=1
while :; do
    arm save "$step"
    case $(state g) in
    running*) ;;
    *) "${V[@]}" start g > /dev/null ;;
    esac
    pid=$(qemu_pids "$QEMU_DIR/run/")
    run_armed save "$step" "${V[@]}" managedsave g || break
    wait_for 60 "g to settle after a kill at save:$step" _settled_save ||
        fail "after a kill at save:$step g is $(state g), image: $(ls "$SAVE"), QEMUs: $(qemu_pids "$QEMU_DIR/run/") (was $pid)"
    check_files
    step=$((step + 1))
done
[ "$(state g)" = "shut off (saved)" ] || fail "the unarmed managedsave gave $(state g)"
steps_done save "$step"

# ---------------------------------------------------------------- managedsave-define (the image's definition replaced)
# Each round replaces on_poweroff's value with the other one, with a long
# <description> every other round so the record goes after QEMU's
# stream and after the record in use in turn; after a kill the image
# holds the old definition or the new one, whole.
ms_poweroff() { "${V[@]}" managedsave-dumpxml g | sed -n 's|.*<on_poweroff>\(.*\)</on_poweroff>.*|\1|p'; }
step=1
long=$(head -c 6000 /dev/zero | tr '\0' x)
while :; do
    arm save-image-define "$step"
    was=$(ms_poweroff)
    [ "$was" = destroy ] && want=restart || want=destroy
    "${V[@]}" managedsave-dumpxml g |
        sed "s|<on_poweroff>$was</on_poweroff>|<on_poweroff>$want</on_poweroff>|; /<description>/d" > "$OUT/ms.xml"
    [ $((step % 2)) = 1 ] || sed -i "s|</name>|</name><description>$long</description>|" "$OUT/ms.xml"
    run_armed save-image-define "$step" "${V[@]}" managedsave-define g "$OUT/ms.xml" || break
    now=$(ms_poweroff) || fail "after a kill at save-image-define:$step the image is unreadable"
    [ "$now" = "$was" ] || [ "$now" = "$want" ] || fail "after a kill at save-image-define:$step on_poweroff is '$now'"
    [ "$(state g)" = "shut off (saved)" ] || fail "after a kill at save-image-define:$step g is $(state g)"
    check_files
    step=$((step + 1))
done
[ "$(ms_poweroff)" = "$want" ] || fail "the unarmed managedsave-define left on_poweroff $(ms_poweroff)"
steps_done save-image-define "$step"
"${V[@]}" managedsave-remove g > /dev/null

# ---------------------------------------------------------------- dump to a path of the caller's
# Old state: no core file; new: the whole one (QEMU's stream, "QEVM").
# Either way the same QEMU runs on, and neither a partial file nor the
# marker is left.
_settled_dump()
{
    case $(state g) in running*) ;; *) return 1 ;; esac
    [ "$(qemu_pids "$QEMU_DIR/run/")" = "$pid" ] && [ ! -e "$QEMU_DIR/run/g.saving" ] &&
        [ -z "$(find "$OUT" -name 'g.core.*')" ] &&
        { [ ! -e "$OUT/g.core" ] || [ "$(head -c 4 "$OUT/g.core")" = QEVM ]; }
}
step=1
while :; do
    arm dump "$step"
    case $(state g) in
    running*) ;;
    *) "${V[@]}" start g > /dev/null ;;
    esac
    pid=$(qemu_pids "$QEMU_DIR/run/")
    rm -f "$OUT/g.core"
    run_armed dump "$step" "${V[@]}" dump g "$OUT/g.core" || break
    wait_for 60 "g to settle after a kill at dump:$step" _settled_dump ||
        fail "after a kill at dump:$step g is $(state g), files: $(ls "$OUT"), QEMUs: $(qemu_pids "$QEMU_DIR/run/") (was $pid)"
    check_files
    step=$((step + 1))
done
[ "$(head -c 4 "$OUT/g.core")" = QEVM ] || fail "the unarmed dump wrote no core file"
_settled_dump || fail "after the unarmed dump g is $(state g)"
steps_done dump "$step"
"${V[@]}" destroy g > /dev/null
rm -f "$OUT/g.core"

# ---------------------------------------------------------------- start
# Killed once the status says the guest runs but before the caller has
# its answer: the restarted remvirtd reattaches the guest (never kills
# it as a start that failed).
step=1
while :; do
    arm start "$step"
    run_armed start "$step" "${V[@]}" start g || break
    _started() { case $(state g) in running*) [ -n "$(qemu_pids "$QEMU_DIR/run/")" ] ;; *) false ;; esac; }
    wait_for 60 "g to settle after a kill at start:$step" _started ||
        fail "after a kill at start:$step g is $(state g), QEMUs: $(qemu_pids "$QEMU_DIR/run/")"
    check_files
    "${V[@]}" destroy g > /dev/null
    step=$((step + 1))
done
case $(state g) in running*) ;; *) fail "the unarmed start gave $(state g)" ;; esac
steps_done start "$step"
"${V[@]}" destroy g > /dev/null

# ---------------------------------------------------------------- snapshot-create and snapshot-delete (shut off: qemu-img)
qemu-img create -q -f qcow2 "$OUT/s.qcow2" 16M
disk="<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/s.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_domain_xml s "$disk" > "$OUT/s.xml"
"${V[@]}" define "$OUT/s.xml" > /dev/null
"${V[@]}" snapshot-create-as s base > /dev/null
in_image() { qemu-img snapshot -l "$OUT/s.qcow2" | awk 'NR > 2 {print $2}' | sort | tr '\n' ' '; }
listed() { "${V[@]}" snapshot-list --name s | sed '/^$/d' | sort | tr '\n' ' '; }
# The snapshots listed are those in the image, and they are $1 or $2.
_snaps_are()
{
    local l i
    l=$(listed) i=$(in_image)
    [ "$l" = "$i" ] && { [ "$l" = "$1" ] || [ "$l" = "$2" ]; }
}
step=1
while :; do
    arm snapshot-create "$step"
    run_armed snapshot-create "$step" "${V[@]}" snapshot-create-as s "n$step" || break
    _snaps_are "base " "base n$step " ||
        fail "after a kill at snapshot-create:$step: listed $(listed), in the image $(in_image)"
    [ -z "$(grep -l trash "$ETC/snapshot/s.json")" ] || fail "the trash is left after the restart: $(cat "$ETC/snapshot/s.json")"
    check_files
    "${V[@]}" snapshot-delete s "n$step" > /dev/null 2>&1 || true
    step=$((step + 1))
done
_snaps_are "base n$step " "" || fail "the unarmed snapshot-create: listed $(listed), in the image $(in_image)"
steps_done snapshot-create "$step"
"${V[@]}" snapshot-delete s "n$step" > /dev/null
step=1
while :; do
    arm snapshot-delete "$step"
    [ "$(listed)" = "base " ] || "${V[@]}" snapshot-create-as s base > /dev/null
    run_armed snapshot-delete "$step" "${V[@]}" snapshot-delete s base || break
    _snaps_are "base " "" ||
        fail "after a kill at snapshot-delete:$step: listed $(listed), in the image $(in_image)"
    check_files
    step=$((step + 1))
done
_snaps_are "" "" || fail "the unarmed snapshot-delete: listed $(listed), in the image $(in_image)"
steps_done snapshot-delete "$step"

# ---------------------------------------------------------------- checkpoint-create and checkpoint-delete (a running guest)
# Listed or not, never half; and whatever a kill left on the disk (a
# bitmap without its checkpoint) does not stop the same name being made
# again.  Once the guest is off, the image holds the bitmaps listed.
qemu-img create -q -f qcow2 "$OUT/k.qcow2" 16M
qemu_domain_xml k "<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/k.qcow2'/><target dev='vda' bus='virtio'/></disk>" > "$OUT/k.xml"
"${V[@]}" define "$OUT/k.xml" > /dev/null
"${V[@]}" start k > /dev/null
ck_listed() { "${V[@]}" checkpoint-list --name k | sed '/^$/d' | sort | tr '\n' ' '; }
step=1
while :; do
    arm checkpoint-create "$step"
    run_armed checkpoint-create "$step" "${V[@]}" checkpoint-create-as k "k$step" || break
    l=$(ck_listed)
    [ -z "$l" ] || [ "$l" = "k$step " ] || fail "after a kill at checkpoint-create:$step: listed '$l'"
    [ -z "$l" ] || "${V[@]}" checkpoint-delete k "k$step" > /dev/null
    "${V[@]}" checkpoint-create-as k "k$step" > /dev/null ||
        fail "k$step cannot be made again after a kill at checkpoint-create:$step"
    "${V[@]}" checkpoint-delete k "k$step" > /dev/null
    check_files
    step=$((step + 1))
done
[ "$(ck_listed)" = "k$step " ] || fail "the unarmed checkpoint-create: listed '$(ck_listed)'"
steps_done checkpoint-create "$step"
"${V[@]}" checkpoint-delete k "k$step" > /dev/null
step=1
while :; do
    arm checkpoint-delete "$step"
    [ "$(ck_listed)" = "d " ] || "${V[@]}" checkpoint-create-as k d > /dev/null
    run_armed checkpoint-delete "$step" "${V[@]}" checkpoint-delete k d || break
    l=$(ck_listed)
    [ -z "$l" ] || [ "$l" = "d " ] || fail "after a kill at checkpoint-delete:$step: listed '$l'"
    [ -n "$l" ] || "${V[@]}" checkpoint-create-as k d > /dev/null ||
        fail "d cannot be made again after a kill at checkpoint-delete:$step"
    check_files
    step=$((step + 1))
done
[ -z "$(ck_listed)" ] || fail "the unarmed checkpoint-delete: listed '$(ck_listed)'"
steps_done checkpoint-delete "$step"
"${V[@]}" checkpoint-create-as k last > /dev/null
"${V[@]}" destroy k > /dev/null
bitmaps=$(qemu-img info --output=json "$OUT/k.qcow2" | grep -o '"name": "[^"]*"' | sed 's/.*: //' | tr -d '"' | sort | tr '\n' ' ')
[ "$bitmaps" = "last " ] || fail "k's image holds the bitmaps '$bitmaps', not those listed: $(ck_listed)"
! grep -qs trash "$ETC/checkpoint/k.json" || fail "the trash is left: $(cat "$ETC/checkpoint/k.json")"
echo "ok   checkpoints: the image holds the bitmap listed, and no other"

# ---------------------------------------------------------------- snapshot-revert: the current one and the disk agree
requires qemu-io --version
qemu-io -f qcow2 -c 'write -P 0x11 0 64k' "$OUT/s.qcow2" > /dev/null
"${V[@]}" snapshot-create-as s r1 > /dev/null
qemu-io -f qcow2 -c 'write -P 0x22 0 64k' "$OUT/s.qcow2" > /dev/null
"${V[@]}" snapshot-create-as s r2 > /dev/null
# The disk holds what snapshot $1 held.
_disk_is()
{
    local p=0x11
    [ "$1" = r1 ] || p=0x22
    qemu-io -f qcow2 -r -c "read -P $p 0 64k" "$OUT/s.qcow2" 2>&1 | grep -q "read 65536/65536"
}
step=1
while :; do
    # (Back to r2 before arming: the same operation would hit the step.)
    "${V[@]}" snapshot-revert s r2 > /dev/null
    arm snapshot-revert "$step"
    run_armed snapshot-revert "$step" "${V[@]}" snapshot-revert s r1 || break
    current=$("${V[@]}" snapshot-current --name s)
    [ "$current" = r1 ] || [ "$current" = r2 ] || fail "after a kill at snapshot-revert:$step the current snapshot is '$current'"
    _disk_is "$current" || fail "after a kill at snapshot-revert:$step the current snapshot is $current, the disk is not"
    _snaps_are "r1 r2 " "" || fail "after a kill at snapshot-revert:$step: listed $(listed), in the image $(in_image)"
    check_files
    step=$((step + 1))
done
[ "$("${V[@]}" snapshot-current --name s)" = r1 ] && _disk_is r1 || fail "the unarmed snapshot-revert did not bring back r1"
steps_done snapshot-revert "$step"

# ---------------------------------------------------------------- vol-create (qcow2 through qemu-img, and raw)
mkdir -p "$OUT/pool"
cat > "$OUT/pool.xml" <<XML
<pool type='dir'><name>p</name><target><path>$OUT/pool</path></target></pool>
XML
"${V[@]}" pool-define "$OUT/pool.xml" > /dev/null
"${V[@]}" pool-start p > /dev/null
for format in qcow2 raw; do
    step=1
    while :; do
        arm vol-create "$step"
        vol=$format$step
        run_armed vol-create "$step" "${V[@]}" vol-create-as p "$vol" 1M --format "$format" || break
        _pool_up() { "${V[@]}" vol-list p > /dev/null 2>&1; }
        wait_for 30 "pool p to be active again" _pool_up || fail "pool p is not active after the restart"
        if "${V[@]}" vol-info --pool p "$vol" > /dev/null 2>&1; then
            [ "$(qemu-img info --output=json "$OUT/pool/$vol" | sed -n 's/.*"format": "\(.*\)".*/\1/p')" = "$format" ] ||
                fail "after a kill at vol-create:$step $vol is listed but not a whole $format image"
        else
            [ ! -e "$OUT/pool/$vol" ] || fail "after a kill at vol-create:$step $vol is a file but not a volume"
        fi
        [ -z "$(find "$OUT/pool" -name '.rv-new.*')" ] || fail "a partial volume is left: $(ls -a "$OUT/pool")"
        check_files
        step=$((step + 1))
    done
    "${V[@]}" vol-info --pool p "$vol" > /dev/null || fail "the unarmed vol-create made no $vol"
    steps_done "vol-create ($format)" "$step"
done

# ---------------------------------------------------------------- a network's define and undefine
cat > "$OUT/net.xml" <<XML
<network><name>n</name><forward mode='bridge'/><bridge name='rvcrashbr0'/></network>
XML
_net_old() { ! "${V[@]}" net-info n > /dev/null 2>&1 && [ ! -e "$ETC/networks/n.xml" ]; }
_net_new() { "${V[@]}" net-info n > /dev/null 2>&1 && grep -q "<name>n</name>" "$ETC/networks/n.xml"; }
step=1
while :; do
    arm network "$step"
    "${V[@]}" net-undefine n > /dev/null 2>&1 || true
    run_armed network "$step" "${V[@]}" net-define "$OUT/net.xml" || break
    _net_old || _net_new || fail "after a kill at network:$step (define) n is neither old nor new"
    check_files
    step=$((step + 1))
done
_net_new || fail "the unarmed net-define did not define n"
steps_done "network (define)" "$step"
"${V[@]}" net-autostart n > /dev/null
step=1
while :; do
    arm network "$step"
    _net_new || { "${V[@]}" net-define "$OUT/net.xml" > /dev/null; "${V[@]}" net-autostart n > /dev/null; }
    run_armed network "$step" "${V[@]}" net-undefine n || break
    _net_new || _net_old || fail "after a kill at network:$step (undefine) n is neither old nor new"
    check_files
    for link in "$ETC"/networks/autostart/*.xml; do
        [ -e "$link" ] || [ ! -L "$link" ] || fail "a dangling network autostart link: $link"
    done
    step=$((step + 1))
done
_net_old || fail "the unarmed net-undefine left n"
steps_done "network (undefine)" "$step"

# ---------------------------------------------------------------- domrename (autostarted, with a snapshot)
qemu-img create -q -f qcow2 "$OUT/m.qcow2" 16M
disk="<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$OUT/m.qcow2'/><target dev='vda' bus='virtio'/></disk>"
qemu_domain_xml m "$disk" > "$OUT/m.xml"
"${V[@]}" define "$OUT/m.xml" > /dev/null
"${V[@]}" snapshot-create-as m s1 > /dev/null
"${V[@]}" autostart m > /dev/null
# _renamed_as NAME OTHER: the domain is NAME, whole (definition, autostart
# link, snapshot metadata), and nothing is left under OTHER.
_renamed_as()
{
    [ -f "$ETC/$1.xml" ] && grep -q "<name>$1</name>" "$ETC/$1.xml" && [ ! -e "$ETC/$2.xml" ] &&
        [ "$(readlink "$ETC/autostart/$1.xml")" = "$ETC/$1.xml" ] && [ ! -L "$ETC/autostart/$2.xml" ] &&
        [ -e "$ETC/snapshot/$1.json" ] && [ ! -e "$ETC/snapshot/$2.json" ] &&
        [ -z "$(find "$ETC" -name '*.rename-*')" ] &&
        ! "${V[@]}" domstate "$2" > /dev/null 2>&1 &&
        [ "$("${V[@]}" snapshot-list --name "$1" | sed '/^$/d')" = s1 ]
}
from=m to=m2 step=1 renamed=0
while :; do
    arm rename "$step"
    # (Autostarted by the restart: stopped once it runs.)
    _up() { [ "$(state "$from")" = "running (booted)" ]; }
    wait_for 60 "$from to be autostarted" _up || fail "$from is not autostarted: $(state "$from")"
    "${V[@]}" destroy "$from" > /dev/null
    run_armed rename "$step" "${V[@]}" domrename "$from" "$to" || break
    if _renamed_as "$to" "$from"; then
        read -r from to <<< "$to $from"
        renamed=$((renamed + 1))
    else
        _renamed_as "$from" "$to" ||
            fail "after a kill at rename:$step the domain is neither $from nor $to: $(ls -lR "$ETC")"
    fi
    check_files
    step=$((step + 1))
done
_renamed_as "$to" "$from" || fail "the unarmed rename left $(ls -lR "$ETC")"
steps_done rename "$step"
[ "$renamed" -gt 0 ] && [ "$renamed" -lt $((step - 1)) ] ||
    fail "the kills left the new name $renamed times out of $((step - 1)): the commit point is not among the steps"
echo "ok   rename: $renamed of the kills came after the commit point (the new name), the others before"
