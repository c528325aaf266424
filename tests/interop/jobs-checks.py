#!/usr/bin/python3
"""Domain jobs with python3-libvirt against a QEMU driver (remvirtd's or
libvirtd's): test-qemu-jobs.sh runs it.  Usage: jobs-checks.py URI STEP DIR

  events        print JOB_COMPLETED events (one JSON line each) until killed
  wait-job OP   wait until domain g is in a job of operation OP with bytes done
  abort         abortJob() on g
  completed     the completed job's stats, kept, then taken (JSON)
  errors        the refusals, one line each: what, error code, domain
"""
import json
import sys
import time

import libvirt

libvirt.registerErrorHandler(lambda ctx, err: None, None)
uri, step, out = sys.argv[1], sys.argv[2], sys.argv[3]


def err_line(what, fn):
    try:
        fn()
        return f'{what}: ok'
    except libvirt.libvirtError as e:
        return f'{what}: {e.get_error_code()} {e.get_error_domain()} {e.get_error_message()}'


if step == 'events':
    libvirt.virEventRegisterDefaultImpl()
    c = libvirt.open(uri)

    def cb(conn, dom, params, opaque):
        print(json.dumps({'dom': dom.name(), 'params': params}), flush=True)
    c.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_JOB_COMPLETED, cb, None)
    print('registered', flush=True)
    while True:
        libvirt.virEventRunDefaultImpl()
c = libvirt.open(uri)
d = c.lookupByName('g')
if step == 'wait-job':
    op = int(sys.argv[4])
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            s = d.jobStats()
        except libvirt.libvirtError:
            s = {}
        if s.get('type') == libvirt.VIR_DOMAIN_JOB_UNBOUNDED and s.get('operation') == op and \
                s.get('memory_processed', 0) > 0:
            info = d.jobInfo()
            json.dump({'stats': s, 'info': info}, open(f'{out}/job-{op}.json', 'w'))
            sys.exit(0)
        time.sleep(0.02)
    sys.exit('no job of operation %d seen' % op)
elif step == 'abort':
    d.abortJob()
elif step == 'completed':
    kept = d.jobStats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED |
                      libvirt.VIR_DOMAIN_JOB_STATS_KEEP_COMPLETED)
    taken = d.jobStats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED)
    gone = d.jobStats(libvirt.VIR_DOMAIN_JOB_STATS_COMPLETED)
    print(json.dumps({'kept': kept, 'taken': taken, 'gone': gone}))
elif step == 'errors':
    f = out + '/x.core'
    lines = [
        err_line('abort, no job', d.abortJob),
        err_line('abort postcopy', lambda: d.abortJobFlags(libvirt.VIR_DOMAIN_ABORT_JOB_POSTCOPY)),
        err_line('abort flag 2', lambda: d.abortJobFlags(2)),
        err_line('stats flag 4', lambda: d.jobStats(4)),
        err_line('no job', lambda: print('no job', d.jobStats(), d.jobInfo()) or None),
        err_line('format 9', lambda: d.coreDumpWithFormat(f, 9, 0)),
        err_line('kdump not memory-only', lambda: d.coreDumpWithFormat(f, 1, 0)),
        err_line('crash+live', lambda: d.coreDump(f, libvirt.VIR_DUMP_CRASH | libvirt.VIR_DUMP_LIVE)),
        err_line('crash+reset', lambda: d.coreDump(f, libvirt.VIR_DUMP_CRASH | libvirt.VIR_DUMP_RESET)),
        err_line('no dir', lambda: d.coreDump('/nonexistent/x.core', 0)),
    ]
    print('\n'.join(lines))
elif step == 'errors-inactive':
    print('\n'.join([
        err_line('abort inactive', d.abortJob),
        err_line('dump inactive', lambda: d.coreDump(out + '/y.core', 0)),
        err_line('stats inactive', d.jobStats),
        err_line('info inactive', d.jobInfo),
        err_line('managed save XML, no image', lambda: d.managedSaveGetXMLDesc(0)),
    ]))
