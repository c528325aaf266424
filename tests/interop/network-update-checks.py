#!/usr/bin/env python3
# network-update-checks.py URI MODE SUBNET BRIDGE: the same virNetworkUpdate
# calls (every section, command and flag combination virsh net-update
# makes, good and bad) against one daemon, printed as a transcript: each
# call's result (or its error's code, domain and message), then the
# network's live and persistent XML; last, the network events seen.  Run
# against libvirtd and remvirtd, the transcripts must be the same.  MODE
# qemu: a NAT network nat1 of our own on SUBNET.0/24 and BRIDGE, defined,
# updated, started, updated, destroyed, updated, undefined; MODE test: the
# test driver's active network "default" (SUBNET 192.168.122).
import re
import sys
import threading
import time

import libvirt

uri, mode, subnet, bridge = sys.argv[1:5]
libvirt.registerErrorHandler(lambda *args: None, None)    # errors are printed here
libvirt.virEventRegisterDefaultImpl()
conn = libvirt.open(uri)
events = []


def on_event(conn_, net, event, detail, opaque):
    events.append("%s %d %d" % (net.name(), event, detail))


conn.networkEventRegisterAny(None, libvirt.VIR_NETWORK_EVENT_ID_LIFECYCLE, on_event, None)


def loop():
    while True:
        libvirt.virEventRunDefaultImpl()


threading.Thread(target=loop, daemon=True).start()

C = {"add": libvirt.VIR_NETWORK_UPDATE_COMMAND_ADD_LAST,
     "add-first": libvirt.VIR_NETWORK_UPDATE_COMMAND_ADD_FIRST,
     "modify": libvirt.VIR_NETWORK_UPDATE_COMMAND_MODIFY,
     "delete": libvirt.VIR_NETWORK_UPDATE_COMMAND_DELETE,
     "none": 0, "bad": 9}
S = {"bridge": 1, "domain": 2, "ip": 3, "ip-dhcp-host": 4, "ip-dhcp-range": 5, "forward": 6,
     "forward-interface": 7, "forward-pf": 8, "portgroup": 9, "dns-host": 10, "dns-txt": 11,
     "dns-srv": 12, "unknown": 13}
F = {"current": 0, "live": 1, "config": 2, "both": 3, "bad": 4}


def norm(text):
    text = text.replace(subnet + ".", "SUB.").replace(bridge, "BRIDGE")
    text = re.sub(r"<mac address='[0-9a-f:]*'/>", "<mac address='MAC'/>", text)
    # libvirtd's network driver shows the NAT port range it applied
    text = re.sub(r"\n *<nat>\s*<port start='1024' end='65535'/>\s*</nat>", "", text)
    text = re.sub(r"<forward mode='nat'>\s*</forward>", "<forward mode='nat'/>", text)
    return text


def show(net):
    for flags, what in ((0, "live"), (libvirt.VIR_NETWORK_XML_INACTIVE, "inactive")):
        try:
            print("--- %s XML\n%s" % (what, norm(net.XMLDesc(flags)).rstrip()))
        except libvirt.libvirtError as e:
            print("--- %s XML: error %d %d %s" % (what, e.get_error_code(), e.get_error_domain(), norm(str(e))))


def update(net, command, section, xml, flags="current", parent=-1):
    xml = xml.replace("SUB.", subnet + ".")
    print("=== %s %s %s %s parent %d" % (command, section, norm(xml), flags, parent))
    try:
        net.update(C[command], S[section], parent, xml, F[flags])
        print("ok")
    except libvirt.libvirtError as e:
        print("error %d %d %s" % (e.get_error_code(), e.get_error_domain(), norm(str(e))))
    show(net)


H1 = "<host mac='52:54:00:aa:bb:11' name='h1' ip='SUB.51'/>"
H2 = "<host mac='52:54:00:aa:bb:12' ip='SUB.52'/>"
H3 = "<host ip='SUB.53' name='h3' mac='52:54:00:AA:BB:13'/>"
R2 = "<range start='SUB.200' end='SUB.210'/>"
DH = "<host ip='SUB.70'><hostname>web</hostname></host>"
TXT = "<txt value='hello' name='example'/>"
SRV = ("<srv service='name' protocol='tcp' domain='test-domain-name' target='.' port='1024' "
       "priority='10' weight='10'/>")
PG = "<portgroup name='engineering' default='yes'><bandwidth><inbound average='1000'/></bandwidth></portgroup>"


def config_steps(net):
    """Updates of the persistent definition (the network inactive)."""
    update(net, "add", "ip-dhcp-host", H1, "live")          # not running
    update(net, "add", "ip-dhcp-host", H1, "both")
    update(net, "add", "ip-dhcp-host", H1, "config")
    update(net, "add", "ip-dhcp-host", H1, "config")        # the same again
    update(net, "add-first", "ip-dhcp-host", H2)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:19' name='h1' ip='SUB.59'/>")
    update(net, "add", "dns-txt", TXT, "config")


def common_steps(net, live):
    """Every section and its errors, on the state live/current names."""
    f = "live" if live else "config"
    update(net, "add", "ip-dhcp-host", H3, f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:13' name='x' ip='SUB.99'/>", f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:20' name='x' ip='SUB.53'/>", f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:20' name='h9'/>", f)
    update(net, "add", "ip-dhcp-host", "<host ip='SUB.60'/>", f)
    update(net, "add", "ip-dhcp-host", "<hast mac='52:54:00:aa:bb:20' ip='SUB.60'/>", f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:20' ip='SUB.60'", f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:20' ip='SUB.60'/>", f, 1)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:20' ip='SUB.60'/>", f, 0)
    update(net, "delete", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:77' ip='SUB.77'/>", f)
    update(net, "delete", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:13' ip='SUB.99'/>", f)
    update(net, "delete", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:13'/>", f)
    update(net, "modify", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:11' name='h1b' ip='SUB.51'/>", f)
    update(net, "modify", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:77' name='x' ip='SUB.77'/>", f)
    update(net, "add", "ip-dhcp-range", R2, f)
    update(net, "add", "ip-dhcp-range", R2, f)
    update(net, "add", "ip-dhcp-range", "<range start='SUB.220' end='SUB.210'/>", f)
    update(net, "add", "ip-dhcp-range", "<range start='10.0.0.1' end='10.0.0.9'/>", f)
    update(net, "modify", "ip-dhcp-range", R2, f)
    update(net, "delete", "ip-dhcp-range", R2, f)
    update(net, "delete", "ip-dhcp-range", R2, f)
    update(net, "add", "dns-host", DH, f)
    update(net, "add", "dns-host", DH, f)
    update(net, "add", "dns-host", "<host ip='SUB.71'><hostname>web</hostname></host>", f)
    update(net, "add", "dns-host", "<host ip='SUB.72'></host>", f)
    update(net, "modify", "dns-host", DH, f)
    update(net, "delete", "dns-host", "<host ip='SUB.79'><hostname>web</hostname></host>", f)
    update(net, "delete", "dns-host", "<host ip='SUB.71'><hostname>web2</hostname></host>", f)
    update(net, "add", "dns-txt", "<txt name='example' value='other'/>", f)
    update(net, "add-first", "dns-txt", "<txt name='first' value='one'/>", f)
    update(net, "modify", "dns-txt", "<txt name='first' value='two'/>", f)
    update(net, "delete", "dns-txt", "<txt name='exam' value='x'/>", f)
    update(net, "delete", "dns-txt", "<txt name='first' value='one'/>", f)
    update(net, "add", "dns-srv", SRV, f)
    update(net, "add", "dns-srv", SRV, f)
    update(net, "modify", "dns-srv", "<srv service='name' protocol='tcp'/>", f)
    update(net, "delete", "dns-srv", "<srv service='nope' protocol='tcp'/>", f)
    update(net, "add", "portgroup", PG, f)
    update(net, "add", "portgroup", "<portgroup name='engineering'/>", f)
    update(net, "add", "portgroup", "<portgroup name='sales' default='yes'/>", f)
    update(net, "add-first", "portgroup", "<portgroup name='sales'/>", f)
    update(net, "modify", "portgroup", "<portgroup name='sales2'/>", f)
    update(net, "delete", "portgroup", "<portgroup name='sales'/>", f)
    update(net, "delete", "portgroup", "<portgroup name='sales'/>", f)
    update(net, "add", "forward-interface", "<interface dev='eth5'/>", f)
    update(net, "delete", "forward-interface", "<interface dev='eth5'/>", f)
    for section, xml in (("bridge", "<bridge name='x'/>"), ("domain", "<domain name='x'/>"),
                         ("ip", "<ip address='1.2.3.4'/>"), ("forward", "<forward/>"),
                         ("forward-pf", "<pf dev='x'/>")):
        update(net, "add", section, xml, f)
    update(net, "none", "ip-dhcp-host", H1, f)
    update(net, "bad", "ip-dhcp-host", H1, f)
    update(net, "add", "unknown", H1, f)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:30' ip='SUB.30'/>", "bad")


if mode == "qemu":
    xml = ("<network><name>nat1</name><uuid>0e1f6a52-8d1c-4c55-9a8e-5d2b7c1a0f01</uuid>"
           "<forward mode='nat'/><bridge name='%s'/>"
           "<ip address='%s.1' netmask='255.255.255.0'><dhcp>"
           "<range start='%s.100' end='%s.199'/>"
           "<host mac='52:54:00:aa:bb:10' name='fixed1' ip='%s.50'/>"
           "</dhcp></ip></network>") % (bridge, subnet, subnet, subnet, subnet)
    net = conn.networkDefineXML(xml)
    show(net)
    config_steps(net)
    common_steps(net, False)
    net.create()
    print("=== started")
    show(net)
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:40' name='c1' ip='SUB.40'/>")
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:41' name='c2' ip='SUB.41'/>", "both")
    update(net, "add", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:42' name='c3' ip='SUB.42'/>", "config")
    common_steps(net, True)
    net.destroy()
    print("=== destroyed")
    show(net)
    update(net, "delete", "ip-dhcp-host", "<host mac='52:54:00:aa:bb:41'/>", "current")
    update(net, "add", "dns-txt", "<txt name='b' value='c'/>", "both")
    net.undefine()
    # a transient network: its persistent config cannot change
    net = conn.networkCreateXML(xml)
    update(net, "add", "dns-txt", "<txt name='t' value='c'/>", "config")
    update(net, "add", "dns-txt", "<txt name='t' value='c'/>", "current")
    net.destroy()
else:
    net = conn.networkLookupByName("default")
    update(net, "add", "ip-dhcp-host", H1, "live")
    update(net, "add", "ip-dhcp-host", H2, "config")
    update(net, "add", "ip-dhcp-host", H1, "current")
    common_steps(net, True)
    net.destroy()
    print("=== destroyed")
    show(net)
    config_steps(net)
    common_steps(net, False)
    net.create()
    print("=== started")
    show(net)

time.sleep(0.5)
print("=== events")
for e in events:
    print(e)
