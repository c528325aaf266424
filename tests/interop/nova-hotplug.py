#!/usr/bin/python3
# nova's libvirt driver (python3-nova, in-process, no cloud) hotplugs into
# a running guest on one daemon, as nova-compute does when a user attaches
# a volume or a port: attach_volume and detach_volume of a file-backed
# volume (driver_volume_type 'gpfs': a file on a file system already
# mounted on the host, the one volume driver that takes a plain file and
# mounts nothing), attach_interface and detach_interface of a bridge VIF
# (os-vif's linux_bridge plugin, onto a bridge that exists).  Each detach
# must end on libvirt's DEVICE_REMOVED event, not on nova's timeout.
# Prints the devices nova made and found, live and persistent, for
# test-nova-hotplug.sh to compare between two daemons.
#
#   nova-hotplug.py URI STATE_DIR UUID VOLUME_FILE BRIDGE
import eventlet
eventlet.monkey_patch()

import faulthandler                                 # noqa: E402
import sys                                          # noqa: E402
import time                                         # noqa: E402

from lxml import etree                              # noqa: E402

faulthandler.dump_traceback_later(600, exit=True)

uri, state, uuid, volume, bridge = sys.argv[1:6]

import nova.privsep                                 # noqa: E402
import os_vif                                       # noqa: E402
from nova import context as nova_context            # noqa: E402
from nova import objects                            # noqa: E402
from nova.network import model as network_model     # noqa: E402
from nova.virt.libvirt import event as libvirtevent  # noqa: E402
from vif_plug_linux_bridge import privsep as lb_privsep  # noqa: E402

import nova_setup                                   # noqa: E402

drv = nova_setup.init_driver(uri, state, "device_detach_timeout = 60\ndevice_detach_attempts = 1")
# We run as root: privileged helpers run in this process, not through
# sudo and privsep-helper.
nova.privsep.sys_admin_pctxt.set_client_mode(False)
lb_privsep.vif_plug.set_client_mode(False)
os_vif.initialize()
# No database: what nova-compute would read from it or save to it.
objects.BlockDeviceMappingList.get_by_instance_uuid = classmethod(
    lambda cls, ctx, uuid, *a, **kw: cls(objects=[]))
objects.VirtualInterfaceList.get_by_instance_uuid = classmethod(
    lambda cls, ctx, uuid, *a, **kw: cls(objects=[]))
objects.Instance.save = lambda self, *a, **kw: None
ctx = nova_context.get_admin_context()

flavor = objects.Flavor(name="m1.tiny", memory_mb=128, vcpus=1, root_gb=0, ephemeral_gb=0,
                        swap=0, extra_specs={}, flavorid="1", rxtx_factor=1.0)
instance = objects.Instance(id=1, uuid=uuid, display_name="g", host="rvhost", node="rvhost",
                            project_id="p", user_id="u", image_ref="", flavor=flavor,
                            system_metadata={}, vm_state="active", task_state=None,
                            info_cache=objects.InstanceInfoCache(
                                network_info=network_model.NetworkInfo([])))

# Each detach: the event nova's waiter got (None when it timed out).
waited = []
real_wait = drv._device_event_handler.wait


def wait(waiter, timeout):
    ev = real_wait(waiter, timeout)
    waited.append(ev)
    return ev


drv._device_event_handler.wait = wait


def timed(what, fn, *args, **kwargs):
    """fn's call, its time on stderr (the test prints it)."""
    t0 = time.monotonic()
    fn(*args, **kwargs)
    print(f"time {what} {time.monotonic() - t0:.3f} s", file=sys.stderr)


def devices(what):
    """The guest's disks and interfaces but the ones it started with."""
    guest = drv._host.get_guest(instance)
    lines = []
    live = guest.get_xml_desc()
    persistent = guest.get_xml_desc(dump_inactive=True)
    for name, xml in (("live", live), ("persistent", persistent)):
        dom = etree.fromstring(xml)
        for disk in dom.findall("./devices/disk"):
            src = disk.find("source")
            lines.append("%s %s disk %s %s bus=%s serial=%s alias=%s" % (
                what, name, disk.find("target").get("dev"),
                src.get("file") if src is not None else None,
                disk.find("target").get("bus"),
                disk.findtext("serial"),
                disk.find("alias").get("name") if disk.find("alias") is not None else None))
        for nic in dom.findall("./devices/interface"):
            if nic.find("mac").get("address") == "52:54:00:00:00:01":
                continue
            tgt = nic.find("target")
            drvr = nic.find("driver")
            lines.append("%s %s interface %s %s bridge=%s target=%s model=%s driver=%s alias=%s" % (
                what, name, nic.get("type"), nic.find("mac").get("address"),
                nic.find("source").get("bridge"),
                tgt.get("dev") if tgt is not None else None,
                nic.find("model").get("type") if nic.find("model") is not None else None,
                drvr.get("name") if drvr is not None else None,
                nic.find("alias").get("name") if nic.find("alias") is not None else None))
    return lines or [f"{what} none"]


def removed(what):
    ev = waited.pop()
    if not isinstance(ev, libvirtevent.DeviceRemovedEvent):
        sys.exit(f"{what}: nova's wait for DEVICE_REMOVED ended on {ev!r}")
    print(f"{what}: DEVICE_REMOVED for {ev.dev}", flush=True)


volume_id = "11111111-2222-3333-4444-555555555555"
connection_info = {"driver_volume_type": "gpfs", "serial": volume_id,
                   "data": {"device_path": volume, "volume_id": volume_id, "name": "vol"}}
timed("attach_volume", drv.attach_volume, ctx, connection_info, instance, "/dev/vdb", disk_bus="virtio",
                  device_type="disk", encryption={})
print("\n".join(devices("after attach_volume")), flush=True)
timed("detach_volume", drv.detach_volume, ctx, connection_info, instance, "/dev/vdb", encryption={})
removed("detach_volume")
print("\n".join(devices("after detach_volume")), flush=True)

vif = network_model.VIF(
    id="aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", address="52:54:00:12:34:56",
    type=network_model.VIF_TYPE_BRIDGE, vnic_type=network_model.VNIC_TYPE_NORMAL,
    devname="tapaaaaaaaa-bb", details={}, profile={},
    network=network_model.Network(id="net", bridge=bridge, label="private", subnets=[],
                                  meta={"should_create_bridge": False}))
timed("attach_interface", drv.attach_interface, ctx, instance, instance.image_meta, vif)
print("\n".join(devices("after attach_interface")), flush=True)
timed("detach_interface", drv.detach_interface, ctx, instance, vif)
removed("detach_interface")
print("\n".join(devices("after detach_interface")), flush=True)
