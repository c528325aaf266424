# Helpers for the virt-manager tests and bench/run-virt-manager-rtt.sh,
# sourced after tests/functions.sh.

# requires_virt_manager_ui: skip unless virt-manager, Xvfb and the AT-SPI
# pieces that drive it are installed.
requires_virt_manager_ui()
{
    requires virt-manager
    requires Xvfb
    requires dbus-run-session
    requires import
    requires gsettings
    requires /usr/bin/python3 -c 'import dogtail'
    [ -x /usr/libexec/at-spi-bus-launcher ] || skip "at-spi2-core is not installed"
    VM_UI=$top_srcdir/tests/interop/virt-manager-ui.py
    # Each of virt-manager-ui.py's waits; valgrind slows remvirtd down.
    export VM_UI_TIMEOUT=${VM_UI_TIMEOUT:-$((RV_TIMEOUT * 4))}
    VM_SHOTS=$top_builddir/tests/virt-manager-shots
}

# start_xvfb: a private X server on a display number it picks itself;
# exports DISPLAY.
start_xvfb()
{
    local display_fd
    exec {display_fd}> "$RV_TMP/display"
    Xvfb -displayfd "$display_fd" -screen 0 1280x1024x24 -nolisten tcp \
        </dev/null >"$RV_TMP/xvfb.log" 2>&1 &
    local pid=$!
    exec {display_fd}>&-
    cleanup_fn _rv_bg_kill "$pid"
    wait_for 30 "Xvfb's display number" test -s "$RV_TMP/display" ||
        fail "Xvfb did not start: $(cat "$RV_TMP/xvfb.log")"
    DISPLAY=:$(cat "$RV_TMP/display")
    export DISPLAY
}

# run_virt_manager NAME URI STEP...: one virt-manager on URI, one
# connection throughout (libvirtd's test driver forgets its state when its
# last client leaves), with its libvirt's log in $RV_TMP/NAME.log and its
# screenshots in $VM_SHOTS/NAME (emptied first, kept after).
run_virt_manager()
{
    local name=$1 uri=$2
    shift 2
    rm -rf "${VM_SHOTS:?}/$name"
    mkdir -p "$VM_SHOTS/$name"
    LIBVIRT_LOG_FILTERS="1:rpc.netclient 1:util.error" \
    LIBVIRT_LOG_OUTPUTS="1:file:$RV_TMP/$name.log" \
    dbus-run-session -- bash "$top_srcdir/tests/interop/virt-manager-session.sh" \
        "$uri" "$RV_TMP/$name.vm.out" "$VM_UI" "$VM_SHOTS/$name" "$@" \
        >"$RV_TMP/$name.ui.out" 2>&1 || {
        cat "$RV_TMP/$name.ui.out" >&2
        _rv_show_file "$RV_TMP/$name.vm.out"
        fail "virt-manager against $name failed (screenshots in $VM_SHOTS/$name)"
    }
    cat "$RV_TMP/$name.ui.out"
}

# wire_summary NAME: the calls and errors of NAME's session, sorted.
wire_summary()
{
    "$PYTHON3" "$top_srcdir/tests/interop/virt-manager-procs.py" \
        "$top_srcdir/protocol/rv_remote.x" "$RV_TMP/$1.log" > "$RV_TMP/$1.wire"
    # The log really has the session in it: the list of domains.
    grep -qx 'call CONNECT_LIST_ALL_DOMAINS' "$RV_TMP/$1.wire" ||
        fail "no CONNECT_LIST_ALL_DOMAINS in virt-manager's log of $1"
}

