#!/usr/bin/env python3
"""subreaper.py CMD ARG...: run CMD as the child of a process that adopts
and reaps every orphan below it (PR_SET_CHILD_SUBREAPER), so that QEMUs
which libvirtd lets go do not linger as zombies on a PID 1 that reaps
slowly.  SIGTERM and SIGINT go to CMD.  When CMD has exited, whatever it
left running (its guests) is killed and reaped; the exit status is CMD's.
A daemon restarted with its guests running on (tests/functions.sh
pause_libvirtd_qemu): SIGUSR1 stops CMD with SIGTERM, SIGUSR2 with
SIGKILL, and SIGHUP runs it again."""
import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def children():
    """The pids whose parent is this process."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == me:
            found.append(int(entry))
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: subreaper.py CMD ARG...")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("subreaper: prctl(PR_SET_CHILD_SUBREAPER) failed")
    def run():
        pid = os.fork()
        if pid == 0:
            os.execvp(sys.argv[1], sys.argv[1:])
        return pid

    # cmd[0]: CMD's pid; cmd[1]: it is being stopped to run again later.
    cmd = [run(), False]

    def pause(sig):
        if cmd[0] and not cmd[1]:
            cmd[1] = True
            os.kill(cmd[0], signal.SIGTERM if sig == signal.SIGUSR1 else signal.SIGKILL)

    def resume():
        if cmd[1] and cmd[0] is None:
            cmd[0], cmd[1] = run(), False

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, _f: cmd[0] and os.kill(cmd[0], s))
    for sig in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda s, _f: pause(s))
    signal.signal(signal.SIGHUP, lambda _s, _f: resume())
    status = None
    while status is None:
        try:
            who, st = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            time.sleep(0.1)     # CMD stopped and no guest left: wait for SIGHUP
            continue
        if who == cmd[0] and cmd[1]:
            cmd[0] = None
        elif who == cmd[0]:
            status = os.waitstatus_to_exitcode(st)
    # The command is gone: end what it left behind.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = children()
        if not left:
            break
        for child in left:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.05)
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
