"""`veth`: the baseline, no switch at all: one veth pair joins the two host ports of each path.

attach() only records the HostPort; forward(paths) creates one veth pair per pair of ports that talk
(a path and its reverse share the pair), with the ends named HostPort.ifname in HostPort.netns.
Port plumbing follows the rule of all kernel backends (see switches/napi.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it; Attachment.host_mac is filled (in the
Attachment objects attach() returned) once forward() has created the link. A port no path names
gets no link. The switch namespace stays empty.

Placement: there is no switch, but the receiving end's stack would still run in the sender's
softirq; in kernel_mode=napi both ends get GRO + threaded NAPI pinned to the switch CPU, so the
baseline is measured the same way as the switches.
"""
from __future__ import annotations

from vswbench.errors import UsageError
from vswbench.netns import mac_address, wait_link_up
from vswbench.switches import register
from vswbench.switches.base import (Attachment, Availability, HostPort, Path, PortCounters,
                                    link_pairs)
from vswbench.switches.napi import (KernelSwitch, basic_availability, create_veth, finish_host_end,
                                    kernel_versions, place_napi, read_counters, section,
                                    switch_view)


@register
class VethSwitch(KernelSwitch):
    name = "veth"
    description = "direct veth link between the hosts (baseline, no switch)"
    direct = True

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(["ip", "ethtool", "taskset"], ["VETH"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    def setup(self) -> None:
        pass

    def attach(self, port: HostPort) -> Attachment:
        if port.key in self.attachments:
            raise UsageError(f"veth: port {port.key} attached twice")
        att = Attachment(port, None)
        self.attachments[port.key] = att
        return att

    def forward(self, paths: list[Path]) -> None:
        for a_key, b_key in link_pairs(paths, "veth"):
            a, b = (self.attachments.get(k) for k in (a_key, b_key))
            if a is None or b is None:
                raise UsageError(f"veth: path names a port that is not attached ({a_key}, {b_key})")
            if a.host_mac:
                continue  # linked by an earlier forward()
            ha, hb = a.host, b.host
            self.track(create_veth(self.ctx, ha.ifname, ha.netns, hb.ifname, hb.netns))
            for att in (a, b):
                att.host_mac = finish_host_end(att.host)
            for att in (a, b):
                wait_link_up(att.host.netns, att.host.ifname)
                att.host_mac = mac_address(att.host.netns, att.host.ifname)
                place_napi(self.ctx, att.host.netns, att.host.ifname, self.placed)

    def port_counters(self) -> list[PortCounters]:
        out = []
        for att in self.attachments.values():
            if att.host_mac:
                out += map(switch_view, read_counters(att.host.netns, [att.host.ifname]))
        return out  # the host ends, seen from the switch (rx = frames the host sent)

    def config_dump(self) -> str:
        parts = [section(att.host.key, ["ip", "-n", att.host.netns, "-d", "link", "show", "dev",
                                        att.host.ifname])
                 for att in self.attachments.values() if att.host_mac]
        return "\n".join([*parts, self.placement_notes()])
