#!/usr/bin/env bash
# What keeps the loop's passes short (issue 31) must not change what a
# client sees.  A client's pipelined batch is served a slice per pass
# (server/client.c, the yield queue) and a large XML document is parsed on
# a work thread before its call runs (server/preparse.c); so:
#  - two clients each pipelining 3,000 calls in one write, big definitions
#    among them, get every reply once, in the order of their calls;
#  - a big definition followed in the same write by a lookup of the
#    domain it defines finds it (the later call waits for the earlier),
#    and one followed by its undefine leaves nothing;
#  - a big document that is malformed, has the wrong root or a DOCTYPE is
#    refused with the errors of a small one (the parse's line, the
#    document's name), for domains and networks;
#  - the daemon still answers, with every big definition gone.
set -euo pipefail
source "$(dirname "$0")/../functions.sh"

requires "$PYTHON3" --version
start_remvirtd

rawpy "$REMVIRTD_SOCK" <<'PY'
import sys, threading, uuid
import rawclient as rc

path = sys.argv[1]
PAD = "x" * 40000       # past the 16 KiB from which a document is parsed off the loop


def uuid_of(name):
    return uuid.uuid5(uuid.NAMESPACE_DNS, name)


def domain_xml(name, pad=PAD):
    return ("<domain type='test'><name>%s</name><uuid>%s</uuid><description>%s</description>"
            "<memory>1024</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>"
            % (name, uuid_of(name), pad))


def domain_ref(name):
    return rc.xdr_domain(name, uuid_of(name).bytes, -1)


def pipeline(client, calls):
    """Send calls [(proc, payload)] in one write (from a thread: the daemon
    stops reading while replies wait) and read every reply; returns them in
    the order they came, as (serial, status, body)."""
    data = b""
    first = client.serial + 1
    for proc, payload in calls:
        data += rc.packet(proc, payload, serial=client.next_serial())
    sender = threading.Thread(target=client.send, args=(data,))
    sender.start()
    replies = []
    while len(replies) < len(calls):
        hdr, body = client.recv_reply()
        replies.append((hdr.serial, hdr.status, body))
    sender.join()
    rc.check([s for s, _, _ in replies] == list(range(first, first + len(calls))),
             "the replies come once each, in the order of the calls")
    return replies


# Two clients, 3,000 calls each in one write: lookups, host names and,
# every 500 calls, a big definition defined then undefined.
clients = [rc.Client(path, timeout=60) for _ in range(2)]
for c in clients:
    c.open_connection()
results = [None, None]


def batch(i):
    calls, kinds = [], []
    for n in range(3000):
        if n % 500 == 250:
            name = "batch%d_%d" % (i, n)
            calls.append((rc.PROC_DOMAIN_DEFINE_XML, rc.xdr_string(domain_xml(name))))
            kinds.append(("define", name))
            calls.append((rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string(name)))
            kinds.append(("lookup", name))
        elif n % 500 == 251:
            name = "batch%d_%d" % (i, n - 1)
            calls.append((rc.PROC_DOMAIN_UNDEFINE, domain_ref(name)))
            kinds.append(("undefine", name))
            calls.append((rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string(name)))
            kinds.append(("gone", name))
        elif n % 2:
            calls.append((rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("test")))
            kinds.append(("lookup", "test"))
        else:
            calls.append((rc.PROC_CONNECT_GET_HOSTNAME, b""))
            kinds.append(("hostname", None))
    results[i] = (kinds, pipeline(clients[i], calls))


threads = [threading.Thread(target=batch, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wrong = []
for i, res in enumerate(results):
    rc.check(res is not None, "client %d's batch finished" % i)
    kinds, replies = res
    for (kind, name), (serial, status, body) in zip(kinds, replies):
        what = "client %d serial %d (%s %s)" % (i, serial, kind, name)
        if kind == "gone":
            if status != rc.STATUS_ERROR or rc.decode_error(body)["code"] != 42:
                wrong.append(what + ": found after its undefine")
        elif status != rc.STATUS_OK:
            wrong.append(what + ": " + rc.decode_error(body)["message"])
        elif kind in ("define", "lookup") and rc.Unpacker(body).domain()["name"] != name:
            wrong.append(what + ": another domain")
rc.check(not wrong, "every answer right (%s)" % "; ".join(wrong[:5]))
print("ok   2 clients x 3,000 pipelined calls (big definitions among them): every reply once, "
      "in order; each big definition found by the lookup right after it, gone after its undefine")

c = clients[0]
# A big definition, its lookup and its undefine in one write.
replies = pipeline(c, [(rc.PROC_DOMAIN_DEFINE_XML, rc.xdr_string(domain_xml("bigorder"))),
                       (rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("bigorder"))])
rc.check(all(s == rc.STATUS_OK for _, s, _ in replies), "define then lookup of bigorder")
undef = pipeline(c, [(rc.PROC_DOMAIN_UNDEFINE, domain_ref("bigorder")),
                     (rc.PROC_DOMAIN_LOOKUP_BY_NAME, rc.xdr_string("bigorder"))])
rc.check(undef[0][1] == rc.STATUS_OK, "undefine of bigorder")
rc.check(undef[1][1] == rc.STATUS_ERROR and
         rc.decode_error(undef[1][2])["code"] == 42,      # VIR_ERR_NO_DOMAIN
         "bigorder is gone for the lookup right after its undefine")
print("ok   a big definition, then its lookup, in one write: found; undefined: gone")

# Refusals: each kind of bad document, small and big, the same error.
def refusal(proc, payload):
    hdr, body = c.call(proc, payload)
    rc.check(hdr.status == rc.STATUS_ERROR, "a bad document is refused")
    return rc.decode_error(body)


def same_refusal(what, small, big, make):
    a, b = refusal(*make(small)), refusal(*make(big))
    # The big one's message names the same place: only the echoed line
    # and its pointer differ with the padding.
    ma, mb = a["message"].split("\n")[0], b["message"].split("\n")[0]
    rc.check((a["code"], a["domain"], ma) == (b["code"], b["domain"], mb),
             "%s: small %r, big %r" % (what, (a["code"], a["domain"], ma),
                                       (b["code"], b["domain"], mb)))
    print("ok   %s, small and big (%d bytes): %s" % (what, len(big), mb))


define = lambda x: (rc.PROC_DOMAIN_DEFINE_XML, rc.xdr_string(x))
net_define = lambda x: (rc.PROC_NETWORK_DEFINE_XML, rc.xdr_string(x))
# Padding in an attribute keeps line 1 the only line either way.
pad = " a='%s'" % PAD
same_refusal("unclosed domain", "<domain><name>x</name>", "<domain%s><name>x</name>" % pad, define)
same_refusal("wrong root", "<notdomain/>", "<notdomain%s/>" % pad, define)
same_refusal("DOCTYPE", "<!DOCTYPE x><domain/>", "<!DOCTYPE x><domain%s/>" % pad, define)
same_refusal("not XML", "not XML", "not XML" + PAD, define)
same_refusal("unclosed network", "<network><name>n</name>", "<network%s><name>n</name>" % pad,
             net_define)

rc.check(c.call_ok(rc.PROC_CONNECT_GET_HOSTNAME), "the daemon answers")
for cl in clients:
    cl.close()
PY

remvirtd_alive || fail "remvirtd died"
stop_remvirtd
