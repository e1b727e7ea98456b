"""The kernel switch backends (veth, bridge, docker-bridge,
router, router-flowtable, tc-mirred, macvlan, shaped) and what every kernel
backend shares: availability (root, tools, CONFIG_ options, versions), iface (/sys/class/net,
ethtool), napi (where the receive work runs), links (veth pairs, host ends), counters, and
switch.KernelSwitch, the base of the backends whose ports are veth pairs."""

from vswbench.switches.kernel.bridge import BridgeSwitch
from vswbench.switches.kernel.docker import DockerBridge
from vswbench.switches.kernel.flowtable import RouterFlowtable
from vswbench.switches.kernel.macvlan import MacvlanSwitch
from vswbench.switches.kernel.mirred import TcMirredSwitch
from vswbench.switches.kernel.router import RouterSwitch
from vswbench.switches.kernel.shaped import ShapedSwitch
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.switches.kernel.veth import VethSwitch

__all__ = ["BridgeSwitch", "DockerBridge", "KernelSwitch", "MacvlanSwitch", "RouterFlowtable",
           "RouterSwitch", "ShapedSwitch", "TcMirredSwitch", "VethSwitch"]
