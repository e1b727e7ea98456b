"""The Open vSwitch backends: ovs and ovs-afxdp (switch.py), ovs-dpdk (dpdk.py); a private
ovsdb-server and ovs-vswitchd per run (daemon.py), the options and OpenFlow rules (rules.py) and
the datapath and PMD statistics (stats.py)."""

from vswbench.switches.ovs.afxdp import OvsAfxdp
from vswbench.switches.ovs.dpdk import OvsDpdk
from vswbench.switches.ovs.switch import Ovs

__all__ = ["Ovs", "OvsAfxdp", "OvsDpdk"]
