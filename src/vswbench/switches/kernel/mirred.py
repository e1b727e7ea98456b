"""`tc-mirred`: port-to-port forwarding with tc alone, no BPF: clsact on every switch-side veth
end and one u32 filter matching every frame whose action is `mirred egress redirect` to the
path's egress interface:

    tc qdisc replace dev SRC clsact
    tc filter add dev SRC ingress protocol all prio 1 u32 match u32 0 0 \\
        action mirred egress redirect dev DST

(the kernel here has no matchall or flower classifier: u32 with an empty match is the match-all
filter). It is what users switch on beside tc-bpf and xdp: the same redirect, done by an action
instead of a program. Port plumbing, placement and counters as every veth-port kernel backend
(switches/kernel/switch.py); TX checksum offload off on the host ends, as tc-bpf does.
"""
from __future__ import annotations

from vswbench.host.netns import namespace_exists
from vswbench.host.netns import run
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.kernel.availability import TC
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.switch import KernelSwitch


def mirred_argv(netns: str, src: str, dst: str) -> list[str]:
    return ["tc", "-n", netns, "filter", "add", "dev", src, "ingress", "protocol", "all", "prio",
            "1", "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
            "dev", dst]


class TcMirredSwitch(KernelSwitch):
    name = "tc-mirred"
    description = "clsact + u32 match-all + mirred egress redirect port to port (no BPF)"
    host_tx_csum = False
    tools = {**KernelSwitch.tools, **TC}

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH", "NET_SCH_INGRESS", "NET_CLS_U32",
                                                 "NET_CLS_ACT", "NET_ACT_MIRRED"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    def setup(self) -> None:
        pass

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        for src_key, dst in self.out_of(paths).items():
            src = self.attachments[src_key].switch_ifname
            assert src is not None and dst.switch_ifname is not None
            run(["tc", "-n", ns, "qdisc", "replace", "dev", src, "clsact"])

            def delete(dev: str = src) -> None:
                if namespace_exists(ns):
                    run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "clsact"], check=False)

            self.register(f"clsact {ns}/{src}", delete)
            run(mirred_argv(ns, src, dst.switch_ifname))

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section(f"tc filters {a.switch_ifname}",
                         ["tc", "-n", ns, "-s", "filter", "show", "dev", a.switch_ifname or "",
                          "ingress"]) for a in self.attachments.values()]
        return "\n".join([*parts, self.placement_notes()])
