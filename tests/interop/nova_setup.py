"""nova's libvirt driver in this process, as nova-compute starts it, with
no cloud: no database, no queue (for nova-host.py and nova-hotplug.py,
which monkey-patch with eventlet before they import this)."""
import os
import tempfile


def init_driver(uri, state, libvirt_extra=""):
    """A LibvirtDriver on uri, its state in the directory state, after
    init_host("rvhost"); libvirt_extra: more lines for nova.conf's
    [libvirt] section."""
    os.makedirs(os.path.join(state, "instances"), exist_ok=True)
    conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    conf.write(f"""[DEFAULT]
state_path = {state}
instances_path = {state}/instances
compute_driver = libvirt.LibvirtDriver
[libvirt]
connection_uri = {uri}
virt_type = qemu
cpu_mode = none
{libvirt_extra}
""")
    conf.close()

    import nova.conf
    from nova import config
    from nova import objects
    from nova.virt.libvirt import driver as libvirt_driver

    config.parse_args(["nova-test", "--config-file", conf.name], configure_db=False, init_rpc=False)
    objects.register_all()
    # What nova-compute registers once it has read the config (the
    # physnets' and tunnels' NUMA affinity).
    nova.conf.neutron.register_dynamic_opts(nova.conf.CONF)
    # No database: this host runs no instance nova knows of.
    objects.InstanceList.get_by_host = classmethod(lambda cls, ctx, host, *a, **kw: cls(objects=[]))

    class VirtAPI:
        """What the driver asks of the compute manager: nothing here."""

    drv = libvirt_driver.LibvirtDriver(VirtAPI(), False)
    drv.init_host("rvhost")
    return drv
