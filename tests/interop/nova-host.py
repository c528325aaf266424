#!/usr/bin/python3
# nova's libvirt driver (python3-nova, in-process, no cloud: no database,
# no queue) against one daemon: Host.initialize, LibvirtDriver.init_host,
# get_available_resource and update_provider_tree, as nova-compute runs
# them at start and in its periodic resource update.  Prints what the
# driver read from the daemon in a form two daemons on one host share,
# for test-nova.sh to compare.
#
#   nova-host.py URI STATE_DIR
import eventlet
# As nova-compute starts: its libvirt event thread and greenthreads need it.
eventlet.monkey_patch()

import faulthandler                                 # noqa: E402
import json                                          # noqa: E402
import sys                                          # noqa: E402

# A hang shows where it is, then ends the run.
faulthandler.dump_traceback_later(300, exit=True)

uri, state = sys.argv[1], sys.argv[2]

from nova.compute import provider_tree              # noqa: E402

import nova_setup                                   # noqa: E402

drv = nova_setup.init_driver(uri, state)
res = drv.get_available_resource("rvhost")
tree = provider_tree.ProviderTree()
tree.new_root("rvhost", "00000000-0000-0000-0000-000000000001")
drv.update_provider_tree(tree, "rvhost")
inv = tree.data("rvhost").inventory
topo = json.loads(res["numa_topology"]) if isinstance(res["numa_topology"], str) else res["numa_topology"]
cells = topo["nova_object.data"]["cells"] if topo else []
print("vcpus", res["vcpus"])
print("memory_mb", res["memory_mb"])
print("hypervisor_type", res["hypervisor_type"])
print("numa cells", len(cells))
for c in cells:
    d = c["nova_object.data"]
    print("cell", d["id"], "cpus", sorted(d["cpuset"]), "memory", d["memory"])
cpu = json.loads(res["cpu_info"])
print("cpu arch", cpu["arch"], "vendor", cpu["vendor"], "model", cpu["model"],
      "topology", json.dumps(cpu["topology"], sort_keys=True))
print("cpu features", len(cpu["features"]))
for rc in sorted(inv):
    print("inventory", rc, inv[rc]["total"])
print("traits", " ".join(sorted(tree.data("rvhost").traits)))
