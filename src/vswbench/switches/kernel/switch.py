"""KernelSwitch, the base class of the kernel switch backends whose every port is a veth pair
with its switch-side end in the switch namespace (bridge, router, tc-bpf, xdp, shaped; veth and
macvlan build their links their own way). Port plumbing follows links.py, the placement of the
receive work napi.py."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from vswbench.errors import UsageError
from vswbench.host.netns import mac_address
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.run.ids import NUM
from vswbench.run.registry import Registration
from vswbench.switches.base import Attachment
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import Switch
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel.availability import KERNEL_TOOLS
from vswbench.switches.kernel.counters import read_counters
from vswbench.switches.kernel.links import create_veth
from vswbench.switches.kernel.links import finish_host_end
from vswbench.switches.kernel.links import switch_ifname
from vswbench.switches.kernel.napi import PLACEMENT_HELP
from vswbench.switches.kernel.napi import PLACEMENT_OPTIONS
from vswbench.switches.kernel.napi import Placed
from vswbench.switches.kernel.napi import place_napi
from vswbench.switches.kernel.napi import placement_option


class KernelSwitch(Switch):
    """Life cycle shared by bridge, router, tc-bpf and xdp: every HostPort gets a veth pair whose
    switch-side end (vsb<id>swN) lives in ctx.netns; teardown releases what this instance
    registered, newest first (idempotent); counters come from the switch-side ends."""

    link_roles = {rf"sw{NUM}": "the switch-side veth end of each port (kernel/links.py)"}
    options_read = PLACEMENT_HELP
    tools = KERNEL_TOOLS
    spreads_cores = True                # one napi thread per port, round robin over switch_cpus
    kernel_tx_ok = True                 # in napi mode the switch side of each veth has NAPI

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        for key in PLACEMENT_OPTIONS:
            placement_option(options, key)

    @classmethod
    def kernel_tx_problem(cls, options: Mapping[str, str]) -> str | None:
        if options.get("kernel_mode") == "softirq":
            return ("kernel_mode=softirq: the switch side of the tester's veth has no NAPI, so "
                    "frames the kernel transmits there are dropped uncounted")
        return super().kernel_tx_problem(options)

    host_tx_csum: bool = True    # False: `ethtool -K host-end tx off` (frames leave the stack)
    host_gro: bool = False       # True: GRO on the host end (native XDP redirect needs it)

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.placed = Placed()
        self._regs: list[Registration] = []

    def track(self, reg: Registration) -> Registration:
        self._regs.append(reg)
        return reg

    def register(self, what: str, undo: Callable[[], Any]) -> Registration:
        return self.track(self.ctx.registry.register(what, undo))

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.attachments:
            raise UsageError(f"{self.name}: port {port.key} attached twice")
        swif = switch_ifname(self.ctx, len(self.attachments))
        self.track(create_veth(self.ctx, swif, self.ctx.netns, port.ifname, port.netns))
        host_mac = finish_host_end(port, tx_csum=self.host_tx_csum, gro=self.host_gro)
        set_up(self.ctx.netns, swif)
        wait_link_up(self.ctx.netns, swif)
        wait_link_up(port.netns, port.ifname)
        att = Attachment(port, swif, host_mac=host_mac,
                         switch_mac=mac_address(self.ctx.netns, swif))
        self.attachments[port.key] = att
        self.place_port(att)
        return att

    def place_port(self, att: Attachment) -> None:
        """Move the switch's receive work on this port onto the switch CPU (veth NAPI)."""
        assert att.switch_ifname is not None
        place_napi(self.ctx, self.ctx.netns, att.switch_ifname, self.placed)

    def teardown(self) -> None:
        while self._regs:
            self._regs.pop().release()
        self.attachments.clear()

    def port_counters(self) -> list[PortCounters]:
        names = [a.switch_ifname for a in self.attachments.values() if a.switch_ifname]
        return read_counters(self.ctx.netns, names)

    def forwarding_mode(self) -> str:
        return self.placed.mode()

    def tester_cpu_free(self) -> bool:
        """Only with every receive of the switch's ports on threaded NAPI (on the switch's core)."""
        return self.forwarding_mode().startswith("napi-threaded")

    def placement_notes(self) -> str:
        lines = [f"forwarding mode: {self.forwarding_mode()}", *self.placed.notes]
        return "## placement\n" + "\n".join(lines) + "\n"

    def attachment(self, key: str) -> Attachment:
        try:
            return self.attachments[key]
        except KeyError:
            raise UsageError(
                f"{self.name}: path names port {key!r}, which is not attached") from None

    def out_of(self, paths: list[ForwardPath]) -> dict[str, Attachment]:
        """src key -> dst attachment; a port whose frames must go to two places is an error."""
        out: dict[str, Attachment] = {}
        for path in paths:
            dst = self.attachment(path.dst)
            self.attachment(path.src)
            if path.src in out and out[path.src] is not dst:
                raise UsageError(f"{self.name}: frames from {path.src} cannot go both to "
                                 f"{out[path.src].host.key} and {path.dst} "
                                 "(port-to-port forwarding)")
            out[path.src] = dst
        return out
