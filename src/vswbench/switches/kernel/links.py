"""The links of the kernel backends: veth pairs (registered for removal the moment they exist)
and host ends. One rule for all kernel backends: **the backend creates the host end, brings it UP
and puts HostPort.ip_cidr on it**; Attachment.host_mac is filled once the host end exists."""
from __future__ import annotations

from vswbench.host.netns import add_address
from vswbench.host.netns import ip
from vswbench.host.netns import mac_address
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import set_up
from vswbench.run.registry import Registration
from vswbench.switches.base import HostPort
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel.iface import ethtool_k
from vswbench.switches.kernel.napi import kernel_mode


def finish_host_end(port: HostPort, *, tx_csum: bool = True, gro: bool = False) -> str:
    """Offloads, UP, address; returns the host end's MAC. The link itself must exist already."""
    if not tx_csum:
        ethtool_k(port.netns, port.ifname, tx=False)
    if gro:
        ethtool_k(port.netns, port.ifname, gro=True)
    set_up(port.netns, port.ifname)
    if port.ip_cidr:
        add_address(port.netns, port.ifname, port.ip_cidr)
    return mac_address(port.netns, port.ifname)


def create_veth(ctx: SwitchContext, name_a: str, ns_a: str, name_b: str, ns_b: str) -> Registration:
    """A veth pair (name_a in ns_a, name_b in ns_b), registered for removal the moment it exists.

    In kernel_mode napi both ends get TSO off: a veth hands a frame to its peer's NAPI (the
    threaded, pinned receive work of place_napi) only if the sending end has no TSO (veth_xmit:
    veth_skb_is_eligible_for_gro); with TSO on, as created, the frame goes to the sender CPU's
    backlog and the pinned napi thread never runs. Measured: bridge p2p at 100 kpps, napi threads
    0 ticks and the switch CPU 98 % idle, every cycle on the tester's core."""
    ip("link", "add", name_a, "netns", ns_a, "type", "veth", "peer", "name", name_b, "netns", ns_b)

    def delete() -> None:
        if namespace_exists(ns_a):
            ip("link", "del", name_a, netns=ns_a, check=False)
        elif namespace_exists(ns_b):
            ip("link", "del", name_b, netns=ns_b, check=False)

    registration = ctx.registry.register(f"veth {ns_a}/{name_a} - {ns_b}/{name_b}", delete)
    if kernel_mode(ctx) == "napi":
        ethtool_k(ns_a, name_a, tso=False)
        ethtool_k(ns_b, name_b, tso=False)
    return registration


def switch_ifname(ctx: SwitchContext, index: int) -> str:
    return ctx.run_id.ifname(f"sw{index}")
