"""The CNI switch backends: containers wired by Debian's containernetworking-plugins, called as
a runtime calls them. netconf (the networks' configuration lists, pure), plugin (the execution
protocol, the records `vswbench clean` undoes), switch (CniSwitch and the bridge plugin's
backends), others (macvlan, ptp, host-device, vlan)."""

from vswbench.switches.cni.others import CniHostDevice, CniMacvlan, CniPtp, CniVlan
from vswbench.switches.cni.switch import (
                                          CniBridge,
                                          CniBridgeBandwidth,
                                          CniBridgeBare,
                                          CniBridgeFirewall,
                                          CniBridgePromisc,
                                          CniBridgeTuning,
                                          CniSwitch,
)

BACKENDS = (CniBridge, CniBridgePromisc, CniBridgeBare, CniBridgeBandwidth, CniBridgeFirewall,
            CniBridgeTuning, CniMacvlan, CniPtp, CniHostDevice, CniVlan)

__all__ = ["BACKENDS", "CniBridge", "CniBridgeBandwidth", "CniBridgeBare", "CniBridgeFirewall",
           "CniBridgePromisc", "CniBridgeTuning", "CniHostDevice", "CniMacvlan", "CniPtp",
           "CniSwitch", "CniVlan"]
