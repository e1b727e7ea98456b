"""Open vSwitch with AF_XDP ports (`ovs-afxdp`): the userspace datapath of switch.py, its ports
opened as AF_XDP sockets and a PMD thread, pinned, polling them.

Available only where ovs-vswitchd was built with --enable-afxdp and the kernel accepts AF_XDP
sockets; frames above 1518 B are refused (its XDP programs hold the veths below MTU 9000).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from vswbench.switches.base import Availability
from vswbench.switches.ovs.daemon import pmd_on
from vswbench.switches.ovs.switch import AF_XDP
from vswbench.switches.ovs.switch import Ovs


def _afxdp_in_binary() -> bool:
    """Does the installed ovs-vswitchd know the afxdp netdev class (built with --enable-afxdp)?"""
    path = Path(os.path.realpath("/usr/sbin/ovs-vswitchd"))
    try:
        return b"afxdp" in path.read_bytes()
    except OSError:
        return False


class OvsAfxdp(Ovs):
    name = "ovs-afxdp"
    idle_polls = True                   # its PMD thread polls the AF_XDP sockets
    description = "Open vSwitch, userspace datapath, AF_XDP ports, PMD thread pinned"
    kernel_tx_ok = True                 # OVS's XDP programs on the switch side give NAPI
    port_type = "afxdp"
    wire_capable = False    # its ports are afxdp: a system-port wire would mix two port kinds

    jumbo_refused = ("the XDP programs of its AF_XDP ports hold the veths below MTU 9000 "
                     "(measured: `mtu greater than device maximum`), and its UMEM frames are "
                     "2048 B; use ovs (kernel datapath) for frames above 1518 B")

    @classmethod
    def availability(cls) -> Availability:
        base = super().availability()
        if not base.ok:
            return base
        if not _afxdp_in_binary():
            return Availability(False, "this ovs-vswitchd is built without AF_XDP support "
                                "(no afxdp netdev class)",
                                "install an Open vSwitch built with --enable-afxdp "
                                "(Debian's openvswitch-switch >= 2.17 is)")
        if os.geteuid() == 0:
            try:
                socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
            except OSError as exc:
                return Availability(False, f"the kernel refuses AF_XDP sockets: {exc}",
                                    "use a kernel with CONFIG_XDP_SOCKETS=y")
        return Availability(True)

    def other_config(self) -> dict[str, str]:
        return pmd_on(self._switch_cpu())

    def setup(self) -> None:
        super().setup()
        self._instance().require_port_type("afxdp", self.name)

    def interface_settings(self) -> list[str]:
        return ["type=afxdp"]

    def forwarding_mode(self) -> str:
        cpu = self._switch_cpu()
        return f"pmd cpu{cpu}" if cpu is not None else "pmd unpinned"

