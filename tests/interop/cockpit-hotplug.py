#!/usr/bin/python3
# cockpit-machines (through libvirt-dbus) in headless Chromium, driven by
# selenium, on a running guest "g" of one daemon: Add disk (a new volume
# in the pool "rvpool", then an existing file), Add network interface (on
# the network "rvnet"), Unplug of that NIC, then Remove of the NIC and of
# both disks.  After each step prints what cockpit's page shows and the
# guest's disks and NICs in its live and persistent XML (python3-libvirt
# on the daemon's own URI), for test-cockpit-hotplug.sh to compare
# between two daemons.
#
#   cockpit-hotplug.py COCKPIT_PORT URI EXISTING_FILE SHOTS_DIR
import sys
import time
import xml.etree.ElementTree as ET

import libvirt
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

port, uri, existing, shots = sys.argv[1:5]
conn = libvirt.open(uri)
dom = conn.lookupByName("g")

opts = webdriver.ChromeOptions()
for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
          "--window-size=1400,1800"):
    opts.add_argument(a)
drv = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
shot = 0


def fail(what):
    drv.save_screenshot(f"{shots}/failed.png")
    with open(f"{shots}/failed.html", "w") as f:
        f.write(drv.page_source)
    drv.quit()
    sys.exit(f"cockpit: {what} (page in {shots}/failed.html)")


def wait(what, cond, timeout=90):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            r = cond()
            if r:
                return r
        except (WebDriverException, libvirt.libvirtError):
            pass
        time.sleep(0.2)
    fail(f"timed out after {timeout} s waiting for {what}")


def el(css, timeout=90):
    return wait(css, lambda: next((e for e in drv.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None),
                timeout)


def gone(css, timeout=90):
    wait(f"{css} to go", lambda: not drv.find_elements(By.CSS_SELECTOR, css), timeout)


def click(css):
    """Found afresh on each try: the page may render it again meanwhile."""
    def attempt():
        e = next((e for e in drv.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None)
        if not e or not e.is_enabled() or e.get_attribute("aria-disabled") == "true":
            return False
        drv.execute_script("arguments[0].scrollIntoView({block: 'center'});", e)
        e.click()
        return True
    wait(f"{css} to take a click", attempt)


def tick(css):
    """A checkbox checked."""
    box = el(css)
    if not box.is_selected():
        box.click()
    wait(f"{css} checked", box.is_selected)


def text(css):
    return el(css).text.strip()


def modal_primary():
    """The dialog's primary button (Add, Remove, ...), then the dialog gone."""
    click(".pf-c-modal-box__footer button.pf-m-primary, .pf-c-modal-box__footer button.pf-m-danger")
    gone(".pf-c-modal-box", 120)


def alerts():
    return [e.text for e in drv.find_elements(By.CSS_SELECTOR, ".pf-c-alert") if e.is_displayed()]


def devices(step):
    """The guest's disks and interfaces, live and persistent."""
    out = []
    for name, flags in (("live", 0), ("persistent", libvirt.VIR_DOMAIN_XML_INACTIVE)):
        devs = ET.fromstring(dom.XMLDesc(flags)).find("devices")
        for d in devs.findall("disk"):
            src = d.find("source")
            drvr = d.find("driver")
            out.append("%s %s disk %s type=%s source=%s driver=%s/%s bus=%s alias=%s" % (
                step, name, d.find("target").get("dev"), d.get("type"),
                None if src is None else src.get("file") or f"{src.get('pool')}/{src.get('volume')}",
                drvr.get("type") if drvr is not None else None,
                drvr.get("discard") if drvr is not None else None,
                d.find("target").get("bus"),
                d.find("alias").get("name") if d.find("alias") is not None else None))
        for n in devs.findall("interface"):
            link = n.find("link")
            out.append("%s %s interface %s source=%s model=%s link=%s alias=%s" % (
                step, name, n.get("type"), n.find("source").get("network"),
                n.find("model").get("type") if n.find("model") is not None else None,
                link.get("state") if link is not None else None,
                n.find("alias").get("name") if n.find("alias") is not None else None))
    return out or [f"{step} no disk or interface"]


def report(step, page):
    global shot
    shot += 1
    drv.save_screenshot(f"{shots}/{shot:02d}-{step}.png")
    for line in page:
        print(f"{step} page {line}")
    for line in devices(step):
        print(line)
    sys.stdout.flush()


def disk_row(target):
    p = f"#vm-g-disks-{target}"
    return [f"disk {target} bus={text(p + '-bus')} device={text(p + '-device')}"]


def ndisks(flags=0):
    return len(ET.fromstring(dom.XMLDesc(flags)).findall("devices/disk"))


def nnics(flags=0):
    return len(ET.fromstring(dom.XMLDesc(flags)).findall("devices/interface"))


drv.get(f"http://127.0.0.1:{port}/cockpit/@localhost/machines/index.html#vm?name=g&connection=system")
# The machine's CPU flags may not show vmx/svm (TCG guests here): cockpit
# says so first, and its Ignore goes on.
page = wait("the page", lambda: drv.find_elements(By.CSS_SELECTOR, "#vm-g-disks-adddisk")
            or [b for b in drv.find_elements(By.TAG_NAME, "button") if b.text.strip() == "Ignore"], 180)[0]
if page.tag_name == "button" and page.text.strip() == "Ignore":
    page.click()
el("#vm-g-disks-adddisk", 180)
wait("the guest to show as running", lambda: "Running" in text("#vm-g-system-state"))

# Add disk: a new volume in rvpool (the dialog's first choice).
click("#vm-g-disks-adddisk")
el("#vm-g-disks-adddisk-createnew:checked")
pool = el("#vm-g-disks-adddisk-new-select-pool")
wait("the pool rvpool in the dialog", lambda: "rvpool" in [o.get_attribute("value") for o in Select(pool).options])
Select(pool).select_by_value("rvpool")
name = el("#vm-g-disks-adddisk-new-name")
name.clear()
name.send_keys("newvol")
size = el("#vm-g-disks-adddisk-new-size")
size.clear()
size.send_keys("16")
Select(el("#vm-g-disks-adddisk-new-unit")).select_by_value("MiB")
fmt = Select(el("#vm-g-disks-adddisk-new-format")).first_selected_option.get_attribute("value")
tick("#vm-g-disks-adddisk-permanent")        # "Always attach": live and persistent
modal_primary()
el("#vm-g-disks-vda-device", 120)
wait("vda in the persistent XML", lambda: ndisks(libvirt.VIR_DOMAIN_XML_INACTIVE) == 1)
report("add-new-volume", [f"format {fmt}", f"volume {text('#vm-g-disks-vda-source-volume')}"] + disk_row("vda"))
print("volume", conn.storagePoolLookupByName("rvpool").storageVolLookupByName("newvol").info()[1])

# Add disk: an existing file, by its path.
click("#vm-g-disks-adddisk")
click("#vm-g-disks-adddisk-custompath")
box = el("#vm-g-disks-adddisk-file input")
box.send_keys(existing)
# The file autocomplete offers the path it found; take it.
wait("the file offered", lambda: any(e.text.strip() == existing for e in
                                     drv.find_elements(By.CSS_SELECTOR, ".pf-c-select__menu-item")))
next(e for e in drv.find_elements(By.CSS_SELECTOR, ".pf-c-select__menu-item") if e.text.strip() == existing).click()
tick("#vm-g-disks-adddisk-permanent")
modal_primary()
el("#vm-g-disks-vdb-device", 120)
wait("vdb in the persistent XML", lambda: ndisks(libvirt.VIR_DOMAIN_XML_INACTIVE) == 2)
report("add-existing-file", [f"source {text('#vm-g-disks-vdb-source-file')}"] + disk_row("vdb"))

# Add network interface: its dialog's defaults (a virtual network, the
# first one: rvnet; the default model), always attached.
click("#vm-g-add-iface-button")
el(".pf-c-modal-box")
tick("#vm-g-add-iface-permanent")
modal_primary()
el("#vm-g-network-1-source", 120)
wait("the NIC in the persistent XML", lambda: nnics(libvirt.VIR_DOMAIN_XML_INACTIVE) == 1)
report("add-nic", [f"nic 1 type={text('#vm-g-network-1-type')} source={text('#vm-g-network-1-source')} "
                   f"state={text('#vm-g-network-1-state')}"])

# Unplug: the link goes down (UPDATE_DEVICE_FLAGS), the NIC stays.
click("#vm-g-iface-1-unplug")
el("#vm-g-iface-1-plug", 60)
wait("the link down in the live XML",
     lambda: ET.fromstring(dom.XMLDesc(0)).find("devices/interface/link").get("state") == "down")
report("unplug-nic", [f"nic 1 state={text('#vm-g-network-1-state')}"])
click("#vm-g-iface-1-plug")
el("#vm-g-iface-1-unplug", 60)
report("plug-nic", [f"nic 1 state={text('#vm-g-network-1-state')}"])

# Remove the NIC (its row's Remove button).
click("#delete-vm-g-iface-1")
modal_primary()
gone("#vm-g-network-1-source", 120)
wait("the NIC gone from the live XML", lambda: nnics() == 0)
report("remove-nic", alerts())

# Remove both disks (the new volume's storage stays: the dialog's default).
for target in ("vda", "vdb"):
    click(f"#vm-g-disks-{target}-action-kebab button")
    click(f"#delete-vm-g-disks-{target}")
    modal_primary()
    gone(f"#vm-g-disks-{target}-device", 120)
wait("the disks gone from the live XML", lambda: ndisks() == 0)
report("remove-disks", alerts())
print("volume kept", "newvol" in conn.storagePoolLookupByName("rvpool").listVolumes())
drv.quit()
