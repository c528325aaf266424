#!/usr/bin/env python3
"""What a running daemon holds, from /proc: its memory and its open files.

    import procstat
    procstat.rss(pid)            # VmRSS in bytes (key="VmHWM": its peak)
    procstat.fds(pid)            # open file descriptors
    procstat.steady_fds(pid)     # the count once it stopped changing
"""
import os
import time


def rss(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key} for pid {pid}")


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def steady_fds(pid, quiet=0.5, timeout=10):
    """The daemon sees closes asynchronously: its fd count once it has not
    changed for `quiet` seconds (or after `timeout`)."""
    deadline = time.monotonic() + timeout
    last, since = fds(pid), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.05)
        now = fds(pid)
        if now != last:
            last, since = now, time.monotonic()
    return last
