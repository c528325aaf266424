#!/usr/bin/env bash
# test-sasl needs a user database and remvirtd's SASL config: make both in
# a temp dir (saslpasswd2, from sasl2-bin), point SASL_CONF_PATH at it (as
# remvirtd honours it too) and run the C program, under valgrind with
# make check-valgrind.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"
requires saslpasswd2

prog=$top_builddir/tests/unit/test-sasl
[ -x "$prog" ] || fail "$prog is not built"

# Both mechanisms' plugins must be there (libsasl2-modules).
for plugin in libscram libdigestmd5; do
    compgen -G "/usr/lib/*/sasl2/$plugin.so*" >/dev/null ||
        compgen -G "/usr/lib/sasl2/$plugin.so*" >/dev/null ||
        skip "cyrus-sasl plugin $plugin is not installed (libsasl2-modules)"
done

dir=$RV_TMP/sasl
mkdir -p "$dir"
# Only the sasldb auxprop plugin, so another installed one (LDAP, SQL)
# cannot answer for the test's users.
cat > "$dir/remvirtd.conf" <<CONF
mech_list: scram-sha-256 digest-md5
sasldb_path: $dir/passwd.db
auxprop_plugin: sasldb
CONF
export SASL_CONF_PATH=$dir
# -p: the password from stdin; the realm is the host's name, as remvirtd's.
printf '%s' 'wonderland-42' | saslpasswd2 -p -c -f "$dir/passwd.db" -a remvirtd alice ||
    fail "saslpasswd2 could not make the test user"

# Under ASan (tests/check.sh --asan) LeakSanitizer gets the same
# exception; cyrus and OpenSSL lack frame pointers, so only the slow
# unwinder sees the plugin on the stack.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/cyrus-sasl.lsan:fast_unwind_on_malloc=0"

cmd=("$prog")
if [ -n "${RV_VALGRIND:-}" ]; then
    # RV_VALGRIND is a command prefix: split into words on purpose.  The
    # suppressions cover a leak inside cyrus' DIGEST-MD5 plugin only.
    # shellcheck disable=SC2206
    cmd=($RV_VALGRIND "--suppressions=$top_srcdir/tests/cyrus-sasl.supp" "$prog")
fi
"${cmd[@]}"
