#!/usr/bin/env bash
# A pull backup's NBD server with <server tls='yes'>, side by side with
# libvirtd's QEMU driver: both given the same QEMU x509 directory
# (libvirtd: qemu.conf backup_tls_x509_cert_dir and backup_tls_x509_verify;
# remvirtd: qemu_backup_tls_x509_cert_dir and qemu_backup_tls_x509_verify),
# certificates made by certtool (tests/tools/make-pki.sh).  The export read
# over TCP by qemu-img with TLS client credentials and compared with the
# guest's disk; a read without TLS, and one with TLS but no client
# certificate (verify on), refused; backup-dumpxml; the credentials object
# gone when the backup ends (a second TLS backup works); tls='yes' with
# the directory's certificates missing refused with libvirtd's error, and
# nothing left (the next one works); remvirtd killed during a TLS pull,
# and the next one after its restart.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires nbdinfo --version
requires certtool --version
requires virsh
requires qemu-img --version
requires "$SYSTEM_PYTHON3" -c 'import libvirt'
PKI=$RV_TMP/pki
make_pki "$PKI"
# QEMU's layout: the server's directory, and a client's (with and without
# a certificate).
SRV=$RV_TMP/qemu-tls CLI=$RV_TMP/qemu-tls-client NOCERT=$RV_TMP/qemu-tls-nocert
mkdir -p "$SRV" "$CLI" "$NOCERT"
cp "$PKI/server/cacert.pem" "$SRV/ca-cert.pem"
cp "$PKI/server/servercert.pem" "$SRV/server-cert.pem"
cp "$PKI/server/serverkey.pem" "$SRV/server-key.pem"
cp "$PKI/client/cacert.pem" "$CLI/ca-cert.pem"
cp "$PKI/client/clientcert.pem" "$CLI/client-cert.pem"
cp "$PKI/client/clientkey.pem" "$CLI/client-key.pem"
cp "$PKI/client/cacert.pem" "$NOCERT/ca-cert.pem"
chmod -R a+rX "$RV_TMP"

test_guest
export RV_LIBVIRTD_QEMU_CONF="backup_tls_x509_cert_dir = \"$SRV\"
backup_tls_x509_verify = 1"
start_libvirtd_qemu 'log_filters = "1:qemu.qemu_monitor"' \
    "log_outputs = \"3:file:$RV_TMP/libvirtd/libvirtd.log 1:file:$RV_TMP/libvirtd/qmp.log\""
start_remvirtd_qemu "qemu_backup_tls_x509_cert_dir = \"$SRV\"" "qemu_backup_tls_x509_verify = 1"
OUT=$RV_TMP/backup-tls
mkdir -p "$OUT"
chmod 755 "$RV_TMP" "$OUT"

boot()      # URI DIR
{
    mkdir -p "$2"
    chmod 777 "$2"
    qemu-img create -q -f qcow2 "$2/vda.qcow2" 64M
    qemu-io -f qcow2 -c "write -P 7 1M 2M" -c "write -P 9 40M 1M" "$2/vda.qcow2" > /dev/null
    chmod 666 "$2"/*
    qemu_guest_xml g | sed "s|<serial type='pty'/>|<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='$2/vda.qcow2'/><target dev='vda' bus='virtio'/></disk><serial type='pty'/>|" > "$2/g.xml"
    virsh -q -c "$1" define "$2/g.xml" > /dev/null
    virsh -q -c "$1" start g > /dev/null
}

run()
{
    local rc=0
    virsh -c "$u" "$@" > "$OUT/o" 2> "$OUT/e" || rc=$?
    echo "=== virsh $*"
    sed -e "s/index='[0-9]*'/index='N'/" "$OUT/o"
    echo "--- stderr"
    cat "$OUT/e"
    echo "--- exit status $rc"
}

# read DIR PORT CLIENT-DIR: the export read with TLS into DIR/r.raw.
tls_read()
{
    rm -f "$1/r.raw"
    qemu-img convert -U --object "tls-creds-x509,id=tls0,endpoint=client,dir=$3" -O raw \
        "json:{\"driver\":\"raw\",\"file\":{\"driver\":\"nbd\",\"server\":{\"type\":\"inet\",\"host\":\"127.0.0.1\",\"port\":\"$2\"},\"export\":\"vda\",\"tls-creds\":\"tls0\"}}" \
        "$1/r.raw" 2> "$1/read.err"
}

transcript()    # URI DIR PORT
{
    local u=$1 d=$2 p=$3
    boot "$u" "$d"
    cat > "$d/pull.xml" <<XML
<domainbackup mode='pull'><server tls='yes' transport='tcp' name='127.0.0.1' port='$p'/><disks><disk name='vda' type='file'><scratch file='$d/s.qcow2'/></disk></disks></domainbackup>
XML
    for round in 1 2; do
        run backup-begin g "$d/pull.xml"
        run backup-dumpxml g
        tls_read "$d" "$p" "$CLI" && qemu-img compare -q -U -f qcow2 -F raw "$d/vda.qcow2" "$d/r.raw" &&
            echo "TLS read: same content as the disk" || { echo "TLS read failed"; cat "$d/read.err"; }
        tls_read "$d" "$p" "$NOCERT" && echo "read without a client certificate accepted" ||
            echo "read without a client certificate refused"
        nbdinfo "nbd://127.0.0.1:$p/vda" > /dev/null 2>&1 && echo "plain read accepted" || echo "plain read refused"
        run domjobabort g
    done
    # The certificates gone from the directory: QEMU's error, nothing left.
    mkdir -p "$RV_TMP/away"
    mv "$SRV"/* "$RV_TMP/away/"
    run backup-begin g "$d/pull.xml"
    run backup-dumpxml g
    run domjobinfo g
    mv "$RV_TMP/away"/* "$SRV/"
    run backup-begin g "$d/pull.xml"
    run domjobabort g
    virsh -q -c "$u" destroy g > /dev/null
}

port=$((20000 + RANDOM % 20000))
transcript "$LIBVIRTD_QEMU_URI" "$OUT/lv" "$port" | sed -e "s|$OUT/lv|DIR|g" > "$OUT/libvirtd.txt"
transcript "$QEMU_URI" "$OUT/rv" "$port" | sed -e "s|$OUT/rv|DIR|g" > "$OUT/remvirtd.txt"
cat "$OUT/remvirtd.txt"
# libvirtd's QMP, for the record.
grep -o '"execute":"\(object-add\|nbd-server-start\)".*' "$LIBVIRTD_DIR/qmp.log" | sed 's/}.*/}/' | head -3 || true
same "$OUT/libvirtd.txt" "$OUT/remvirtd.txt" "a TLS pull backup as against libvirtd"
for what in "TLS read: same content as the disk" "read without a client certificate refused" "plain read refused"; do
    [ "$(grep -cF "$what" "$OUT/remvirtd.txt")" = 2 ] || fail "not twice in the transcript: $what"
done
grep -q "Unable to access credentials" "$OUT/remvirtd.txt" || fail "tls='yes' without certificates not refused"

# remvirtd killed during a TLS pull: the restarted one's clean-up deletes
# the credentials object with the server (else the next object-add fails
# on the duplicate id), and the next TLS pull works.
RV=$OUT/rv
virsh -q -c "$QEMU_URI" start g > /dev/null
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pull.xml" > /dev/null
pids=$(qemu_pids "$QEMU_DIR/run")
kill_remvirtd
start_remvirtd_qemu "qemu_backup_tls_x509_cert_dir = \"$SRV\"" "qemu_backup_tls_x509_verify = 1"
virsh -q -c "$QEMU_URI" list > /dev/null
left()  { ! ls -l "/proc/$pids/fd" 2> /dev/null | grep -q "$RV/s.qcow2"; }
wait_for 30 "the old backup's scratch to be let go" left
rm -f "$RV/s.qcow2"
virsh -q -c "$QEMU_URI" backup-begin g "$RV/pull.xml" > "$OUT/o" 2>&1 || fail "a TLS backup after the restart: $(cat "$OUT/o")"
tls_read "$RV" "$port" "$CLI" || fail "TLS read after the restart: $(cat "$RV/read.err")"
qemu-img compare -q -U -f qcow2 -F raw "$RV/vda.qcow2" "$RV/r.raw" || fail "TLS read after the restart differs"
virsh -q -c "$QEMU_URI" domjobabort g > /dev/null
echo "PASS: test-qemu-backup-tls"
