#!/usr/bin/python3
# Drives a running virt-manager through AT-SPI (dogtail), step by step,
# for tests/interop/test-virt-manager.sh.  Every wait polls a condition
# with a deadline; each step leaves a screenshot SHOTS/NN-step.png.  On a
# failure the widget tree of virt-manager goes to SHOTS/tree.txt.
#
#   virt-manager-ui.py SHOTS STEP...
#
# Steps: main, host, details, prefs, newvm (the wizard to Finish),
# new-disk (its disk in Host Details), console (a running guest's serial
# console), addhw (Add Hardware and Remove on a running guest), idle (the
# benchmark's wait).
# Each step prints "step NAME ok" when done.

import os
import subprocess
import sys
import time

from dogtail import config
# Before dogtail.tree opens its debug log in /tmp/dogtail-USER/logs.
config.config.logDebugToFile = False
from dogtail import rawinput                            # noqa: E402
from dogtail import tree                                # noqa: E402
from dogtail.predicate import GenericPredicate          # noqa: E402

config.config.searchShowingOnly = True
config.config.defaultDelay = 0.05
config.config.actionDelay = 0.1
config.config.typingDelay = 0.02
config.config.searchBackoffDuration = 0.1
config.config.searchCutoffCount = 2
config.config.logDebugToStdOut = False

# Generous: the machine is loaded and virt-manager is slow to draw.
TIMEOUT = float(os.environ.get("VM_UI_TIMEOUT", "40"))
shots = sys.argv[1]
shot_number = 0


def shot(name):
    global shot_number
    shot_number += 1
    path = os.path.join(shots, "%02d-%s.png" % (shot_number, name))
    subprocess.run(["import", "-window", "root", path], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def poll(what, cond, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = cond()
        except Exception:       # AT-SPI objects come and go while we look
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise RuntimeError("timed out after %ds waiting for %s" % (timeout, what))
        time.sleep(0.2)


def find(node, role, name=None, timeout=TIMEOUT, showing=True):
    """The first descendant of NODE with ROLE (and NAME, when given)."""
    def look():
        pred = GenericPredicate(name=name, roleName=role)
        found = node.findChild(pred, retry=False, requireResult=False,
                               showingOnly=showing)
        return found
    return poll("%s %r" % (role, name), look, timeout)


def find_cell(table, text, timeout=TIMEOUT):
    """A cell of TABLE reading TEXT, or TEXT and more lines (the VM list
    shows "name\nstate")."""
    def look():
        return table.findChild(
            lambda n: n.roleName == "table cell" and
            (n.name == text or (n.name or "").startswith(text + "\n")),
            retry=False, requireResult=False, showingOnly=True)
    return poll("table cell %r" % text, look, timeout)


def find_label(node, part):
    """A label of NODE whose text contains PART."""
    return node.findChild(
        lambda n: n.roleName == "label" and part in (n.name or ""),
        retry=False, requireResult=False, showingOnly=True)


def find_all(node, role):
    return node.findChildren(GenericPredicate(roleName=role), showingOnly=True)


def frame(title_part, timeout=TIMEOUT):
    """A top-level window of virt-manager whose title contains TITLE_PART."""
    def look():
        for child in app().children:
            if title_part in (child.name or "") and child.showing:
                return child
        return None
    return poll("window %r" % title_part, look, timeout)


def app():
    return tree.root.application("virt-manager")


def act(node, *names):
    """Do the first of NAMES that NODE offers (click, activate, press...)."""
    actions = node.actions
    for name in names or ("click", "activate", "press", "toggle", "switch"):
        if name in actions:
            node.doActionNamed(name)
            return
    raise RuntimeError("%s %r offers none of %s (it has %s)"
                       % (node.roleName, node.name, names, list(actions)))


def menu(win, top, item):
    act(find(win, "menu", top))
    entry = find(win, "menu item", item, showing=False)
    poll("menu item %r enabled" % item, lambda: entry.sensitive)
    act(entry)


def select_row(table, text):
    """Select the row of TABLE whose cell reads TEXT (a domain, a pool...)."""
    cell = find_cell(table, text)
    # Selecting through AT-SPI's Selection interface works without a
    # window manager, where a synthetic mouse click might not land.
    parent = cell.parent
    index = cell.indexInParent
    try:
        parent.querySelection().selectChild(index)
    except Exception:
        cell.click()
    return cell


def tab(win, name):
    page = find(win, "page tab", name)
    # GTK's page tabs offer no action: select through the tab list.
    page.parent.querySelection().selectChild(page.indexInParent)
    poll("tab %r selected" % name, lambda: page.selected)


def close(win):
    menu(win, "File", "Close")
    poll("window %r to close" % win.name, lambda: not win.showing)


# ---------------------------------------------------------------- steps

def step_main():
    main = frame("Virtual Machine Manager")
    table = find(main, "tree table", "vm-list")
    names = os.environ.get("VM_EXPECT_DOMAINS", "").split()
    for name in names:
        find_cell(table, name)
    shot("main")


def step_host(pool=None, vol=None):
    main = frame("Virtual Machine Manager")
    menu(main, "Edit", "Connection Details")
    host = frame("Connection Details")
    tab(host, "Overview")
    find(host, "label", "Libvirt URI:")
    poll("the host's memory", lambda: find_label(host, " MiB of "))
    shot("host-overview")
    tab(host, "Virtual Networks")
    net = os.environ.get("VM_EXPECT_NETWORK")
    if net:
        select_row(find(host, "table", "net-list"), net)
        name = find(host, "text", "net-name")
        poll("network %r shown" % net, lambda: name.text == net)
    shot("host-networks")
    tab(host, "Storage")
    pool = pool or os.environ.get("VM_EXPECT_POOL")
    if pool:
        select_row(find(host, "table", "pool-list"), pool)
        if vol:
            find_cell(find(host, "table", "vol-list"), vol)
    shot("host-storage")
    close(host)
    poll("the host window to close", lambda: not host.showing)


def step_details():
    main = frame("Virtual Machine Manager")
    dom = os.environ["VM_DOMAIN"]
    select_row(find(main, "tree table", "vm-list"), dom)
    menu(main, "Edit", "Virtual Machine Details")
    win = frame(dom + " on ")
    # The details page, not the console.
    details = find(win, "radio button", "Details", showing=True)
    act(details, "click")
    hw = find(win, "table", "hw-list")
    for entry in ("Overview", "CPUs", "Memory"):
        select_row(hw, entry)
        shot("details-" + entry.lower())
    rows = [c.name for c in find_all(hw, "table cell")]
    for row in rows:
        if row.startswith(("VirtIO Disk", "IDE Disk", "SATA Disk", "SCSI Disk",
                           "Xen Disk", "Disk", "NIC")):
            select_row(hw, row)
            shot("details-" + row.split()[0].lower())
    print("hardware rows: %s" % rows)
    close(win)
    poll("the details window to close", lambda: not win.showing)


def step_prefs():
    main = frame("Virtual Machine Manager")
    menu(main, "Edit", "Preferences")
    prefs = frame("Preferences")
    tab(prefs, "Polling")
    for box in ("Poll Disk I/O", "Poll Network I/O", "Poll Memory stats"):
        # The box has no name of its own: its label comes right after it.
        label = find(prefs, "label", box)
        check = label.parent.children[label.indexInParent - 1]
        if not check.checked:
            act(check, "click")
        poll("%r checked" % box, lambda: check.checked)
    shot("prefs")
    act(find(prefs, "push button", "Close"))
    poll("preferences to close", lambda: not prefs.showing)
    for graph in ("Memory Usage", "Disk I/O", "Network I/O"):
        item = find(main, "check menu item", graph, showing=False)
        if not item.checked:
            act(find(main, "menu", "View"))
            act(find(main, "menu", "Graph"))
            act(item)
        poll("graph %r on" % graph, lambda: item.checked)
    # The new columns of the list: the stats really polled.
    find(main, "table column header", "Memory usage")
    shot("graphs")


def step_newvm():
    main = frame("Virtual Machine Manager")
    menu(main, "File", "New Virtual Machine")
    wiz = frame("New VM")
    act(find(wiz, "radio button", "Manual install"))
    shot("newvm-1")
    act(find(wiz, "push button", "Forward"))
    os_entry = find(wiz, "text", "oslist-entry")
    os_entry.typeText("linux2022")
    # The popover's row wants a real click.
    find_cell(wiz, "Generic Linux 2022 (linux2022)").click()
    poll("the OS chosen", lambda: os_entry.text.startswith("Generic Linux 2022"))
    shot("newvm-2")
    act(find(wiz, "push button", "Forward"))
    find(wiz, "label", "Memory:")
    shot("newvm-3")
    act(find(wiz, "push button", "Forward"))
    create = find(wiz, "radio button", "Create a disk image for the virtual machine")
    act(create)
    shot("newvm-4")
    act(find(wiz, "push button", "Forward"))
    find(wiz, "label", "Ready to begin the installation")
    label = find(wiz, "label", "Name:")
    name = label.parent.children[label.indexInParent + 1]
    name.text = os.environ["VM_NEW_NAME"]
    poll("the new name typed", lambda: name.text == os.environ["VM_NEW_NAME"])
    shot("newvm-5")
    act(find(wiz, "push button", "Finish"))
    poll("the wizard to close", lambda: not wiz.showing, TIMEOUT * 2)
    # The new guest shows up in the main window's list.
    find_cell(find(main, "tree table", "vm-list"), os.environ["VM_NEW_NAME"])
    shot("newvm-listed")
    # virt-manager opens the new guest's window: close it.
    try:
        win = frame(os.environ["VM_NEW_NAME"] + " on ", 10)
        close(win)
    except RuntimeError:
        pass


def step_console():
    """The running guest VM_DOMAIN's serial console (it has no graphics):
    after VM_CONSOLE_RESET (a command that resets the guest) its boot
    says "remvirt-test-guest: ready" there, and what is typed there then
    comes back (the guest's tty echoes it)."""
    main = frame("Virtual Machine Manager")
    dom = os.environ["VM_DOMAIN"]
    select_row(find(main, "tree table", "vm-list"), dom)
    menu(main, "Edit", "Virtual Machine Details")
    win = frame(dom + " on ")
    act(find(win, "radio button", "Console"))
    term = find(win, "terminal")
    ready = "remvirt-test-guest: ready"
    # The guest may still be booting from its start, or not: count.
    before = term.text.count(ready)
    subprocess.run(os.environ["VM_CONSOLE_RESET"], shell=True, check=True)
    poll("the guest's boot on its console",
         lambda: term.text.count(ready) > before, TIMEOUT * 2)
    shot("console-ready")
    # Its shell reads the console now: the tty echoes what is typed.
    term.grabFocus()
    poll("the console focused", lambda: term.focused)
    rawinput.typeText("remvirt-typed")
    poll("the typed text echoed", lambda: "remvirt-typed" in term.text)
    shot("console-typed")
    close(win)


def step_idle():
    """For the benchmark: leave virt-manager polling for VM_IDLE_SECONDS
    and print the window's bounds (seconds since the epoch)."""
    start = time.time()
    time.sleep(float(os.environ["VM_IDLE_SECONDS"]))
    print("window %.3f %.3f" % (start, time.time()))


def step_new_disk():
    """Host Details again: the wizard's new disk is in the pool 'default'."""
    step_host("default", os.environ["VM_NEW_NAME"] + ".qcow2")


def open_details(dom):
    main = frame("Virtual Machine Manager")
    select_row(find(main, "tree table", "vm-list"), dom)
    menu(main, "Edit", "Virtual Machine Details")
    win = frame(dom + " on ")
    act(find(win, "radio button", "Details", showing=True), "click")
    return win


def hw_rows(win, prefix):
    return [c.name for c in find_all(find(win, "table", "hw-list"), "table cell")
            if (c.name or "").startswith(prefix)]


def add_hardware(win, kind):
    act(find(win, "push button", "add-hardware"))
    dlg = frame("Add New Virtual Hardware")
    select_row(find(dlg, "table"), kind)
    shot("addhw-" + kind.lower())
    act(find(dlg, "push button", "Finish"))
    poll("the Add Hardware dialog to close", lambda: not dlg.showing, TIMEOUT * 2)


def step_addhw():
    """Add Hardware on the running guest VM_DOMAIN: a new disk in the pool
    (Storage, the defaults) and a NIC (Network, the defaults), each then
    listed in the details; then Remove of the disk, confirmed, and the
    disk gone from the list (the live detach and the definition's)."""
    win = open_details(os.environ["VM_DOMAIN"])
    disks_before = hw_rows(win, "VirtIO Disk")
    add_hardware(win, "Storage")
    poll("a new disk listed", lambda: len(hw_rows(win, "VirtIO Disk")) > len(disks_before))
    nics_before = hw_rows(win, "NIC")
    add_hardware(win, "Network")
    poll("a new NIC listed", lambda: len(hw_rows(win, "NIC")) > len(nics_before))
    shot("addhw-done")
    disk = [r for r in hw_rows(win, "VirtIO Disk") if r not in disks_before][0]
    print("added: %s and %s" % (disk, [r for r in hw_rows(win, "NIC") if r not in nics_before][0]))
    select_row(find(win, "table", "hw-list"), disk)
    act(find(win, "push button", "config-remove"))
    # virt-manager asks before it removes a device, for a disk also
    # whether to delete its storage (no).
    def confirm():
        for child in app().children:
            if not child.showing or child is win:
                continue
            for name in ("Yes", "Remove", "Delete"):
                button = child.findChild(GenericPredicate(name=name, roleName="push button"),
                                         retry=False, requireResult=False, showingOnly=True)
                if button:
                    shot("rmhw-confirm")
                    act(button)
                    return True
        return False
    poll("the removal's confirmation", confirm)
    poll("the disk gone from the list", lambda: disk not in hw_rows(win, "VirtIO Disk"), TIMEOUT * 2)
    shot("rmhw-done")
    print("removed: %s" % disk)
    close(win)


STEPS = {
    "addhw": step_addhw,
    "new-disk": step_new_disk,
    "idle": step_idle,
    "console": step_console,
    "main": step_main,
    "host": step_host,
    "details": step_details,
    "prefs": step_prefs,
    "newvm": step_newvm,
}


def dump_tree(path):
    def walk(node, depth, out):
        if depth > 25:
            return
        try:
            out.write("%s%s %r%s\n" % ("  " * depth, node.roleName, node.name,
                                       "" if node.showing else " (hidden)"))
            for child in node.children:
                walk(child, depth + 1, out)
        except Exception as err:
            out.write("%s<%s>\n" % ("  " * depth, err))
    with open(path, "w") as out:
        walk(app(), 0, out)


def main():
    poll("virt-manager on the AT-SPI bus", lambda: app() is not None, TIMEOUT * 2)
    for name in sys.argv[2:]:
        try:
            STEPS[name]()
        except Exception as err:
            shot("FAILED-" + name)
            try:
                dump_tree(os.path.join(shots, "tree.txt"))
            except Exception:
                pass
            print("step %s FAILED: %s" % (name, err))
            return 1
        print("step %s ok" % name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
