#!/usr/bin/python3
"""The migration tuning calls with python3-libvirt against a QEMU driver
(remvirtd's or libvirtd's) on domain g: test-qemu-migrate-tune.sh runs it
and compares the output.  Usage: migtune-checks.py URI URI_RO QMP STEP
where QMP is the socket of a second QMP monitor that g's QEMU was given
(<qemu:commandline>), the test's own view of QEMU's parameters.

  off       g is shut off: each call's answer or error
  running   g runs: values set and read back, QEMU's own parameters
            (query-migrate-parameters) after each change, the refusals
  restarted g was started (again): what it has, what was kept
  ro        each call on a read-only connection
"""
import json
import socket
import sys

import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)
uri, uri_ro, qmp_path, step = sys.argv[1:5]
PC = libvirt.VIR_DOMAIN_MIGRATE_MAX_SPEED_POSTCOPY


def line(what, fn):
    try:
        r = fn()
        print(f'{what}: ok {r!r}')
    except libvirt.libvirtError as e:
        print(f'{what}: {e.get_error_code()} {e.get_error_domain()} {e.get_error_message()}')


def qemu_params(d):
    """QEMU's own values, as it answers query-migrate-parameters."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(qmp_path)
    f = s.makefile('rw')
    json.loads(f.readline())                    # the greeting
    r = None
    for cmd in ('qmp_capabilities', 'query-migrate-parameters'):
        f.write(json.dumps({'execute': cmd}) + '\n')
        f.flush()
        while True:
            m = json.loads(f.readline())
            if 'return' in m or 'error' in m:
                break                           # (events are skipped)
        r = m.get('return', m)
    s.close()
    keys = ('downtime-limit', 'max-bandwidth', 'max-postcopy-bandwidth', 'xbzrle-cache-size')
    print('  qemu:', ' '.join(f'{k}={r.get(k)}' for k in keys))


def getters(d):
    line('getMaxDowntime', lambda: d.migrateGetMaxDowntime(0))
    line('getMaxSpeed', lambda: d.migrateGetMaxSpeed(0))
    line('getMaxSpeed postcopy', lambda: d.migrateGetMaxSpeed(PC))
    line('getCompressionCache', lambda: d.migrateGetCompressionCache(0))


c = libvirt.open(uri_ro if step == 'ro' else uri)
d = c.lookupByName('g')
if step == 'off':
    getters(d)
    line('setMaxDowntime 100', lambda: d.migrateSetMaxDowntime(100, 0))
    line('setMaxSpeed 77', lambda: d.migrateSetMaxSpeed(77, 0))
    line('getMaxSpeed after', lambda: d.migrateGetMaxSpeed(0))
    line('setMaxSpeed postcopy 5', lambda: d.migrateSetMaxSpeed(5, PC))
    line('setMaxSpeed over the limit', lambda: d.migrateSetMaxSpeed(2**43, 0))
    line('setCompressionCache', lambda: d.migrateSetCompressionCache(1 << 20, 0))
    line('startPostCopy', lambda: d.migrateStartPostCopy(0))
    line('setMaxSpeed flags 2', lambda: d.migrateSetMaxSpeed(1, 2))
elif step == 'running':
    getters(d)
    qemu_params(d)
    line('setMaxDowntime 0', lambda: d.migrateSetMaxDowntime(0, 0))
    line('getMaxDowntime', lambda: d.migrateGetMaxDowntime(0))
    line('setMaxDowntime 2000000', lambda: d.migrateSetMaxDowntime(2000000, 0))
    line('setMaxDowntime 2000001', lambda: d.migrateSetMaxDowntime(2000001, 0))
    line('setMaxDowntime 2**62', lambda: d.migrateSetMaxDowntime(2**62, 0))
    line('setMaxDowntime 1234', lambda: d.migrateSetMaxDowntime(1234, 0))
    qemu_params(d)
    line('setMaxSpeed 2**43-1', lambda: d.migrateSetMaxSpeed(2**43 - 1, 0))
    line('getMaxSpeed', lambda: d.migrateGetMaxSpeed(0))
    qemu_params(d)
    line('setMaxSpeed 2**43', lambda: d.migrateSetMaxSpeed(2**43, 0))
    line('setMaxSpeed 0', lambda: d.migrateSetMaxSpeed(0, 0))
    line('getMaxSpeed', lambda: d.migrateGetMaxSpeed(0))
    qemu_params(d)
    line('setMaxSpeed 321', lambda: d.migrateSetMaxSpeed(321, 0))
    line('setMaxSpeed postcopy 2**44-1', lambda: d.migrateSetMaxSpeed(2**44 - 1, PC))
    line('getMaxSpeed postcopy', lambda: d.migrateGetMaxSpeed(PC))
    qemu_params(d)
    line('setMaxSpeed postcopy 2**44', lambda: d.migrateSetMaxSpeed(2**44, PC))
    line('setMaxSpeed postcopy 0', lambda: d.migrateSetMaxSpeed(0, PC))
    line('getMaxSpeed postcopy', lambda: d.migrateGetMaxSpeed(PC))
    line('setMaxSpeed postcopy 99', lambda: d.migrateSetMaxSpeed(99, PC))
    line('setCompressionCache 1000', lambda: d.migrateSetCompressionCache(1000, 0))
    line('setCompressionCache 0', lambda: d.migrateSetCompressionCache(0, 0))
    line('setCompressionCache 2**40', lambda: d.migrateSetCompressionCache(2**40, 0))
    line('setCompressionCache 2**62', lambda: d.migrateSetCompressionCache(2**62, 0))
    line('setCompressionCache 4096', lambda: d.migrateSetCompressionCache(4096, 0))
    line('setCompressionCache 2**23', lambda: d.migrateSetCompressionCache(2**23, 0))
    getters(d)
    qemu_params(d)
    line('startPostCopy', lambda: d.migrateStartPostCopy(0))
    line('startPostCopy flags 1', lambda: d.migrateStartPostCopy(1))
    line('setMaxDowntime flags 1', lambda: d.migrateSetMaxDowntime(1, 1))
    line('getMaxDowntime flags 1', lambda: d.migrateGetMaxDowntime(1))
    line('getMaxSpeed flags 2', lambda: d.migrateGetMaxSpeed(2))
    line('getCompressionCache flags 1', lambda: d.migrateGetCompressionCache(1))
    line('setCompressionCache flags 1', lambda: d.migrateSetCompressionCache(4096, 1))
elif step == 'restarted':
    getters(d)
    qemu_params(d)
elif step == 'ro':
    getters(d)
    line('setMaxDowntime', lambda: d.migrateSetMaxDowntime(100, 0))
    line('setMaxSpeed', lambda: d.migrateSetMaxSpeed(100, 0))
    line('setCompressionCache', lambda: d.migrateSetCompressionCache(4096, 0))
    line('startPostCopy', lambda: d.migrateStartPostCopy(0))
