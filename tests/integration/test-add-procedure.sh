#!/usr/bin/env bash
# "A procedure costs one .x entry and one slot per driver", end to end.
# In a copy of the source tree, add one procedure libvirt defines and
# remvirt lacks (CONNECT_DOMAIN_XML_FROM_NATIVE, 135) by editing only
# protocol/rv_remote.x (its structs and annotated enum entry) and each
# driver's slot: its function, named <driver prefix><slot> (declared by
# the generated RV_DRIVER_SLOTS), and its line in the driver's table,
# both in server/drivers/test/test_ops.c and server/drivers/qemu/qemu_ops.c;
# build the copy; then a small program compiled against the copy's public
# header and library calls the generated rv_connect_domain_xml_from_native():
#   - against the copy's remvirtd it gets what each driver's slot answers;
#   - against this tree's remvirtd it gets NO_SUPPORT naming the API.
# If the generator stopped writing the public function, its declaration
# or its symbol, the program would not compile or link.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires git
requires autoreconf
CC=${RV_HEADER_CC:-cc}
copy=$RV_TMP/src

copy_source_tree "$copy"
git -C "$copy" init -q
git -C "$copy" add -A
git -C "$copy" -c user.name=test -c user.email=test@invalid commit -qm base

# Edit 1: the protocol entry.
"$PYTHON3" - "$copy/protocol/rv_remote.x" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
structs = '''struct rv_connect_domain_xml_from_native_args {
    rv_nonnull_string nativeFormat;
    rv_nonnull_string nativeConfig;
    unsigned int flags;
};
struct rv_connect_domain_xml_from_native_ret { rv_nonnull_string domainXml; };

/* ---- procedure numbers ---- */
'''
entry = '''enum rv_remote_procedure {
    /* The domain XML a native configuration stands for. */
    /* @stubs both @auth required @readonly deny @handler driver @api generated */
    RV_PROC_CONNECT_DOMAIN_XML_FROM_NATIVE = 135,
'''
for old, new in (('/* ---- procedure numbers ---- */\n', structs),
                 ('enum rv_remote_procedure {\n', entry)):
    assert text.count(old) == 1, old
    text = text.replace(old, new)
open(path, 'w').write(text)
PY

# Edits 2 and 3: each driver's slot, a function and a line in its table.
add_slot()
{
    "$PYTHON3" - "$copy/$1" "$2" "$3" "$4" <<'PY'
import sys
path, prefix, table, answer = sys.argv[1:]
text = open(path).read()
slot = '''int PREFIXconnect_domain_xml_from_native(rv_driver_conn *c,
                                   const rv_connect_domain_xml_from_native_args *args,
                                   rv_connect_domain_xml_from_native_ret *ret, rv_err *err)
{
    (void)c;
    size_t len = strlen(args->nativeConfig);
    if (!(ret->domainXml = malloc(len + sizeof("ANSWER")))) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    memcpy(ret->domainXml, args->nativeConfig, len);
    memcpy(ret->domainXml + len, "ANSWER", sizeof("ANSWER"));
    return 0;
}

const rv_driver TABLE = {
'''.replace("PREFIX", prefix).replace("ANSWER", answer).replace("TABLE", table)
ops = '    .ops = {\n        .connect_domain_xml_from_native = %sconnect_domain_xml_from_native,\n' % prefix
for old, new in (('const rv_driver %s = {\n' % table, slot), ('    .ops = {\n', ops)):
    assert text.count(old) == 1, old
    text = text.replace(old, new)
if '#include <string.h>' not in text:
    text = text.replace('#include "', '#include <stdlib.h>\n#include <string.h>\n\n#include "', 1)
open(path, 'w').write(text)
PY
}
add_slot server/drivers/test/test_ops.c test_ rv_test_driver .e2e.test
add_slot server/drivers/qemu/qemu_ops.c rv_qemu_ rv_qemu_driver .e2e.qemu

changed=$(git -C "$copy" status --porcelain | sort)
expected=$(printf ' M protocol/rv_remote.x\n M server/drivers/qemu/qemu_ops.c\n M server/drivers/test/test_ops.c\n')
[ "$changed" = "$expected" ] || fail "the edits touched more than the three files: $changed"
git -C "$copy" diff --stat

# Build the copy (about as long as this tree's own build), apart from the
# make that runs this test.
unset MAKEFLAGS MFLAGS MAKELEVEL
build=$copy/build
mkdir -p "$build"
(cd "$copy" && autoreconf -fi) > "$RV_TMP/autoreconf.log" 2>&1 ||
    { cat "$RV_TMP/autoreconf.log" >&2; fail "autoreconf in the copy"; }
(cd "$build" && ../configure --enable-werror) > "$RV_TMP/configure.log" 2>&1 ||
    { tail -30 "$RV_TMP/configure.log" >&2; fail "configure in the copy"; }
(cd "$build" && make -j2) > "$RV_TMP/make.log" 2>&1 ||
    { grep -E "error|Error" "$RV_TMP/make.log" | head -30 >&2; fail "build of the copy"; }

grep -q -F 'char *rv_connect_domain_xml_from_native(rv_conn *conn, const char *nativeFormat, const char *nativeConfig, unsigned int flags);' \
    "$build/client/remvirt-calls.gen.h" || fail "no generated declaration"
# (grep -q at the end of a pipe would make the pipe fail under pipefail)
grep -B1 -F 'rv_connect_domain_xml_from_native(' "$build/client/remvirt-calls.gen.h" > "$RV_TMP/decl"
grep -q -F "The domain XML a native configuration stands for" "$RV_TMP/decl" || fail "the declaration lost its comment"
nm -D --defined-only "$build/.libs/libremvirt.so" > "$RV_TMP/exports"
grep -q -E ' rv_connect_domain_xml_from_native(@|$)' "$RV_TMP/exports" ||
    fail "libremvirt does not export rv_connect_domain_xml_from_native"

cat > "$RV_TMP/savexml.c" <<'C'
#include <stdio.h>
#include <stdlib.h>

#include "remvirt.h"

/* Print what rv_connect_domain_xml_from_native() gives for "/saved". */
int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    rv_conn *conn = rv_connect_open(argv[1], 0);
    if (!conn) {
        fprintf(stderr, "%s\n", rv_last_error()->message);
        return 2;
    }
    char *xml = rv_connect_domain_xml_from_native(conn, "native", "/saved", 0);
    if (xml) {
        printf("xml %s\n", xml);
        free(xml);
    } else {
        const rv_error_info *e = rv_last_error();
        printf("error %d %s\n", e->code, e->message);
    }
    rv_connect_close(conn);
    return 0;
}
C
"$CC" -std=c11 -Wall -Werror -I"$copy/client" -I"$build/client" -o "$RV_TMP/savexml" \
    "$RV_TMP/savexml.c" -L"$build/.libs" -lremvirt -Wl,-rpath,"$build/.libs" ||
    fail "a program using rv_connect_domain_xml_from_native does not build against the copy"

# This tree's remvirtd lacks the procedure.
start_remvirtd
out=$("$RV_TMP/savexml" "$REMVIRTD_URI") || fail "the call against this tree's remvirtd"
echo "unmodified remvirtd: $out"
[ "$out" = "error 3 this function is not supported by the connection driver: virConnectDomainXMLFromNative" ] ||
    fail "expected NO_SUPPORT naming virConnectDomainXMLFromNative"
stop_remvirtd

# The copy's remvirtd has the slot in both drivers.
REMVIRTD=$build/remvirtd
start_remvirtd_qemu
out=$("$RV_TMP/savexml" "$REMVIRTD_URI") || fail "the call against the copy's test driver"
echo "copy's remvirtd, test driver: $out"
[ "$out" = "xml /saved.e2e.test" ] || fail "the test driver's slot's answer did not arrive"
out=$("$RV_TMP/savexml" "$QEMU_URI") || fail "the call against the copy's QEMU driver"
echo "copy's remvirtd, QEMU driver: $out"
[ "$out" = "xml /saved.e2e.qemu" ] || fail "the QEMU driver's slot's answer did not arrive"
stop_remvirtd
echo "PASS: one .x entry and one slot per driver gave a working public call"
