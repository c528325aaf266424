#!/usr/bin/python3
"""The guest agent's calls on a running guest "ga" whose agent answers
(the test guest's stand-in for qemu-ga, tests/tools/build-test-guest.sh).

    agent-checks.py URI

Prints each call's result, or its error's code, domain and message, for
test-qemu-calls.sh to compare between libvirtd's QEMU driver and
remvirtd's.
"""

import os
import sys

import libvirt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transcript import show  # noqa: E402

conn = libvirt.open(sys.argv[1])
d = conn.lookupByName("ga")
K = libvirt
APPEND = K.VIR_DOMAIN_AUTHORIZED_SSH_KEYS_SET_APPEND
REMOVE = K.VIR_DOMAIN_AUTHORIZED_SSH_KEYS_SET_REMOVE


def info(types):
    return sorted((k, v) for k, v in d.guestInfo(types, 0).items()
                  if k != "os.kernel-release")

show("fsfreeze", lambda: d.fsFreeze(None, 0))
show("fsthaw", lambda: d.fsThaw(None, 0))
show("fsfreeze list", lambda: d.fsFreeze(["/", "/tmp"], 0))
show("fsthaw", lambda: d.fsThaw(None, 0))
show("fsthaw list", lambda: d.fsThaw(["/"], 0))
show("fsfreeze bad flag", lambda: d.fsFreeze(None, 1))
show("fstrim", lambda: d.fSTrim(None, 0, 0))
show("fstrim mount point", lambda: d.fSTrim("/", 0, 0))
show("set password", lambda: d.setUserPassword("root", "secret", 0))
show("set password crypted", lambda: d.setUserPassword("root", "$6$x$y", K.VIR_DOMAIN_PASSWORD_ENCRYPTED))
show("ssh keys", lambda: d.authorizedSSHKeysGet("root", 0))
show("ssh keys set", lambda: d.authorizedSSHKeysSet("root", ["ssh-ed25519 AAAA a@b"], 0))
show("ssh keys append", lambda: d.authorizedSSHKeysSet("root", ["ssh-ed25519 BBBB c@d"], APPEND))
show("ssh keys", lambda: d.authorizedSSHKeysGet("root", 0))
show("ssh keys set again", lambda: d.authorizedSSHKeysSet("root", ["ssh-ed25519 CCCC e@f"], 0))
show("ssh keys", lambda: d.authorizedSSHKeysGet("root", 0))
show("ssh keys remove", lambda: d.authorizedSSHKeysSet("root", ["ssh-ed25519 CCCC e@f"], REMOVE))
show("ssh keys", lambda: d.authorizedSSHKeysGet("root", 0))
show("guest vcpus", lambda: d.guestVcpus(0))
show("set guest vcpus online", lambda: d.setGuestVcpus("0", 1, 0))
show("set guest vcpus absent", lambda: d.setGuestVcpus("5", 1, 0))
show("set guest vcpus not offlinable", lambda: d.setGuestVcpus("0", 0, 0))
show("set guest vcpus bad map", lambda: d.setGuestVcpus("x", 1, 0))
show("guest info users", lambda: info(K.VIR_DOMAIN_GUEST_INFO_USERS))
show("guest info os", lambda: info(K.VIR_DOMAIN_GUEST_INFO_OS))
show("guest info timezone+hostname",
     lambda: info(K.VIR_DOMAIN_GUEST_INFO_TIMEZONE | K.VIR_DOMAIN_GUEST_INFO_HOSTNAME))
show("guest info all", lambda: info(0))
show("guest info filesystem", lambda: info(K.VIR_DOMAIN_GUEST_INFO_FILESYSTEM))
show("guest info interfaces", lambda: info(K.VIR_DOMAIN_GUEST_INFO_INTERFACES))
show("agent timeout too small", lambda: d.agentSetResponseTimeout(-3, 0))
show("agent timeout", lambda: d.agentSetResponseTimeout(10, 0))
show("suspend with a duration", lambda: d.pMSuspendForDuration(K.VIR_NODE_SUSPEND_TARGET_MEM, 5, 0))
show("suspend bad target", lambda: d.pMSuspendForDuration(7, 0, 0))
show("agent timeout default", lambda: d.agentSetResponseTimeout(-1, 0))
