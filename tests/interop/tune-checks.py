"""The tuning setters' checks of their typed parameters, CPU maps and
flags, sent raw (virsh and python3-libvirt pick types and refuse much
before sending): one line per call, with the error or the reply's bytes.
test-virsh-stats.sh runs it against libvirtd's test driver and against
remvirtd and compares.  It changes the domain "test": run it last."""
import struct
import sys

import rawclient as rc

c = rc.Client(sys.argv[1])
c.open_connection()
dom = c.lookup("test")
u, i = rc.xdr_uint, rc.xdr_int
TIME = struct.Struct(">q")


def param(field, typ, val):
    b = rc.xdr_string(field) + i(typ)
    if typ in (1, 6):
        return b + i(val)
    if typ == 2:
        return b + u(val)
    if typ in (3, 4):
        return b + struct.pack(">Q", val & (2**64 - 1))
    if typ == 5:
        return b + struct.pack(">d", val)
    return b + rc.xdr_string(val)


def plist(*ps):
    return u(len(ps)) + b"".join(ps)


def show(what, proc, body):
    hdr, reply = c.call(proc, body)
    if hdr.status == rc.STATUS_ERROR:
        e = rc.decode_error(reply)
        print(what, "->", e["code"], e["domain"], e["message"])
    else:
        print(what, "-> ok", reply.hex())


UINT, INT, ULL, STR = 2, 1, 4, 7
S = rc.PROC_DOMAIN_SET_SCHEDULER_PARAMETERS_FLAGS
show("sched unknown", S, dom + plist(param("cap", UINT, 1)) + u(0))
show("sched unknown first by name", S,
     dom + plist(param("weight", UINT, 1), param("weight", UINT, 1), param("cap", UINT, 1)) + u(0))
show("sched wrong type", S, dom + plist(param("weight", INT, 1)) + u(0))
show("sched string", S, dom + plist(param("weight", STR, "x")) + u(0))
show("sched twice", S, dom + plist(param("weight", UINT, 1), param("weight", UINT, 2)) + u(0))
show("sched none", S, dom + plist() + u(0))
show("sched name of 80", S, dom + plist(param("w" * 80, UINT, 1)) + u(0))
show("sched name of 79", S, dom + plist(param("w" * 79, UINT, 1)) + u(0))
show("sched flags", S, dom + plist(param("weight", UINT, 1)) + u(1))
show("sched old call", rc.PROC_DOMAIN_SET_SCHEDULER_PARAMETERS, dom + plist(param("weight", UINT, 7)))
show("sched old call, none", rc.PROC_DOMAIN_SET_SCHEDULER_PARAMETERS, dom + plist())
M = rc.PROC_DOMAIN_SET_MEMORY_PARAMETERS
show("mem none", M, dom + plist() + u(0))
show("mem hard above swap", M,
     dom + plist(param("hard_limit", ULL, 100), param("swap_hard_limit", ULL, 50)) + u(0))
show("mem 2^63", M, dom + plist(param("hard_limit", ULL, 2**63)) + u(0))
show("mem live and config", M, dom + plist(param("hard_limit", ULL, 100)) + u(3))
show("mem flag 8", M, dom + plist(param("hard_limit", ULL, 100)) + u(8))
show("mem ok", M, dom + plist(param("hard_limit", ULL, 100), param("soft_limit", ULL, 9)) + u(0))
show("mem get", rc.PROC_DOMAIN_GET_MEMORY_PARAMETERS, dom + i(3) + u(0))
B = rc.PROC_DOMAIN_SET_BLKIO_PARAMETERS
show("blkio weight 2000", B, dom + plist(param("weight", UINT, 2000)) + u(0))
show("blkio devices", B, dom + plist(param("device_read_iops_sec", STR, "/dev/sdb,5,/dev/sda,6")) + u(0))
show("blkio device alone", B, dom + plist(param("device_weight", STR, "/dev/sda")) + u(0))
show("blkio bad value", B, dom + plist(param("device_weight", STR, "/dev/sdb,x,/dev/sda,1")) + u(0))
show("blkio none", B, dom + plist() + u(0))
show("blkio config", B, dom + plist(param("weight", UINT, 100)) + u(2))
show("blkio get", rc.PROC_DOMAIN_GET_BLKIO_PARAMETERS, dom + i(6) + u(4))
N = rc.PROC_DOMAIN_SET_NUMA_PARAMETERS
show("numa mode 9", N, dom + plist(param("numa_mode", INT, 9)) + u(0))
show("numa bad nodeset", N, dom + plist(param("numa_nodeset", STR, "x")) + u(0))
show("numa empty nodeset", N, dom + plist(param("numa_nodeset", STR, "")) + u(2))
show("numa all negated", N, dom + plist(param("numa_nodeset", STR, "1,^1")) + u(2))
show("numa mode without nodeset", N, dom + plist(param("numa_mode", INT, 1)) + u(2))
show("numa nodeset", N, dom + plist(param("numa_nodeset", STR, "5,1-2")) + u(0))
show("numa live mode change", N, dom + plist(param("numa_mode", INT, 1)) + u(0))
show("numa get", rc.PROC_DOMAIN_GET_NUMA_PARAMETERS, dom + i(2) + u(4))
P = rc.PROC_DOMAIN_PIN_VCPU_FLAGS
show("pin vcpu 5", P, dom + u(5) + u(1) + b"\x01\0\0\0" + u(0))
show("pin vcpu 70000", P, dom + u(70000) + u(1) + b"\x01\0\0\0" + u(0))
show("pin empty map", P, dom + u(0) + u(1) + b"\x00\0\0\0" + u(0))
show("pin no map", P, dom + u(0) + u(0) + u(0))
show("pin flags", P, dom + u(0) + u(1) + b"\x01\0\0\0" + u(3))
show("pin old call", rc.PROC_DOMAIN_PIN_VCPU, dom + u(1) + u(4) + b"\x02\0\0\x80")
show("pin info", rc.PROC_DOMAIN_GET_VCPU_PIN_INFO, dom + i(2) + i(1) + u(0))
E = rc.PROC_DOMAIN_PIN_EMULATOR
show("emulator empty map", E, dom + u(1) + b"\x00\0\0\0" + u(0))
show("emulator no map", E, dom + u(0) + u(0))
show("emulator live and config", E, dom + u(1) + b"\x01\0\0\0" + u(3))
show("emulator config", E, dom + u(1) + b"\x0c\0\0\0" + u(2))
show("emulator info config", rc.PROC_DOMAIN_GET_EMULATOR_PIN_INFO, dom + i(1) + u(2))
T = rc.PROC_DOMAIN_SET_TIME
show("time flag 2", T, dom + TIME.pack(5) + u(0) + u(2))
show("time 2e9 ns", T, dom + TIME.pack(5) + u(2000000000) + u(0))
show("time get", rc.PROC_DOMAIN_GET_TIME, dom + u(0))
show("time negative", T, dom + TIME.pack(-5) + u(0) + u(0))
show("time get", rc.PROC_DOMAIN_GET_TIME, dom + u(0))
show("control", rc.PROC_DOMAIN_GET_CONTROL_INFO, dom + u(0))
show("time 35003", T, dom + TIME.pack(35003) + u(0) + u(0))
show("control", rc.PROC_DOMAIN_GET_CONTROL_INFO, dom + u(0))
I = rc.PROC_DOMAIN_SET_INTERFACE_PARAMETERS
show("iface unknown", I, dom + rc.xdr_string("nosuch") + plist(param("inbound.average", UINT, 5)) + u(0))
show("iface none", I, dom + rc.xdr_string("testnet0") + plist() + u(0))
show("iface peak only", I, dom + rc.xdr_string("testnet0") + plist(param("inbound.peak", UINT, 5)) + u(0))
show("iface floor", I, dom + rc.xdr_string("testnet0") + plist(param("inbound.floor", UINT, 5)) + u(0))
show("iface get", rc.PROC_DOMAIN_GET_INTERFACE_PARAMETERS, dom + rc.xdr_string("testnet0") + i(7) + u(0))
IO = rc.PROC_DOMAIN_SET_BLOCK_IO_TUNE
show("io unknown disk", IO, dom + rc.xdr_string("nosuch") + plist(param("total_bytes_sec", ULL, 5)) + u(0))
show("io none", IO, dom + rc.xdr_string("vda") + plist() + u(0))
show("io total and read", IO, dom + rc.xdr_string("vda") + plist(
    param("total_bytes_sec", ULL, 5), param("read_bytes_sec", ULL, 5),
    param("total_bytes_sec_max", ULL, 10)) + u(0))
show("io above 1e15", IO, dom + rc.xdr_string("vda") + plist(param("total_bytes_sec", ULL, 10**16)) + u(0))
show("io above its max", IO, dom + rc.xdr_string("vda") + plist(param("write_iops_sec", ULL, 3)) + u(0))
show("io ok", IO, dom + rc.xdr_string("vda") + plist(
    param("total_bytes_sec_max", ULL, 10), param("total_bytes_sec", ULL, 5),
    param("group_name", STR, "g")) + u(0))
show("io by path", IO, dom + rc.xdr_string("/guest/diskimage1") + plist(param("size_iops_sec", ULL, 4)) + u(0))
show("io get", rc.PROC_DOMAIN_GET_BLOCK_IO_TUNE, dom + u(1) + rc.xdr_string("vda") + i(20) + u(4))
V = rc.PROC_DOMAIN_SET_VCPUS_FLAGS
show("vcpus 0", V, dom + u(0) + u(0))
show("vcpus 70000", V, dom + u(70000) + u(0))
show("vcpus 33", V, dom + u(33) + u(0))
show("vcpus 3", V, dom + u(3) + u(0))
show("vcpus maximum alone", V, dom + u(3) + u(4))
show("vcpus flag 8", V, dom + u(1) + u(8))
show("vcpus live and config", V, dom + u(1) + u(3))
show("vcpus maximum config", V, dom + u(1) + u(6))
show("vcpus count", rc.PROC_DOMAIN_GET_VCPUS_FLAGS, dom + u(6))
show("vcpus old call 0", rc.PROC_DOMAIN_SET_VCPUS, dom + u(0))
