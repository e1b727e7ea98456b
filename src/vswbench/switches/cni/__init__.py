"""The CNI switch backends: containers wired by Debian's containernetworking-plugins, called as
a runtime calls them. netconf (the networks' configuration lists, pure), plugin (the execution
protocol, the records `vswbench clean` undoes), switch (CniSwitch and the bridge plugin's
backends), others (macvlan, ptp, host-device, vlan)."""

from vswbench.switches.cni.others import CniHostDevice
from vswbench.switches.cni.others import CniMacvlan
from vswbench.switches.cni.others import CniPtp
from vswbench.switches.cni.others import CniVlan
from vswbench.switches.cni.switch import CniBridge
from vswbench.switches.cni.switch import CniBridgeBandwidth
from vswbench.switches.cni.switch import CniBridgeBare
from vswbench.switches.cni.switch import CniBridgeFirewall
from vswbench.switches.cni.switch import CniBridgePromisc
from vswbench.switches.cni.switch import CniBridgeTuning
from vswbench.switches.cni.switch import CniSwitch

BACKENDS = (CniBridge, CniBridgePromisc, CniBridgeBare, CniBridgeBandwidth, CniBridgeFirewall,
            CniBridgeTuning, CniMacvlan, CniPtp, CniHostDevice, CniVlan)

__all__ = ["BACKENDS", "CniBridge", "CniBridgeBandwidth", "CniBridgeBare", "CniBridgeFirewall",
           "CniBridgePromisc", "CniBridgeTuning", "CniHostDevice", "CniMacvlan", "CniPtp",
           "CniSwitch", "CniVlan"]
