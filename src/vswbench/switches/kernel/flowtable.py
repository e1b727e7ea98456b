"""`router-flowtable`: the router (router.py) with nftables' software flow offload: a flowtable
on the switch-side ports and a forward chain that adds each flow to it, so that after its first
frames a flow's packets are forwarded from the ingress hook, skipping the routing lookup and the
rest of the forward path:

    table inet vsbflow {
      flowtable ft { hook ingress priority 0; devices = { sw0, sw1, ... }; }
      chain forward { type filter hook forward priority filter; policy accept;
                      meta l4proto { tcp, udp } flow add @ft }
    }

A flow enters the table only once conntrack calls it established, that is after a frame in each
direction: the one-way streams of p2p or pvp never are, and stay on the router's normal path
(every frame then also pays for conntrack); scenario rr (request-response) offloads. Needs
CONFIG_NF_FLOW_TABLE, CONFIG_NF_FLOW_TABLE_INET and CONFIG_NFT_FLOW_OFFLOAD: the kernel here has
none of them, so `vswbench switches` lists it unavailable with that reason and a run exits 3; it
has not been measured here.
"""
from __future__ import annotations

from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.router import RouterSwitch
from vswbench.switches.rules.batch import nft_file

TABLE = "vsbflow"


def flowtable_rules(devices: list[str], table: str = TABLE) -> str:
    devs = ", ".join(devices)
    return (f"table inet {table} {{\n"
            f"  flowtable ft {{\n    hook ingress priority 0; devices = {{ {devs} }};\n  }}\n"
            f"  chain forward {{\n    type filter hook forward priority filter; policy accept;\n"
            f"    meta l4proto {{ tcp, udp }} flow add @ft\n  }}\n}}\n")


class RouterFlowtable(RouterSwitch):
    name = "router-flowtable"
    description = "router with an nftables flowtable (software flow offload)"
    functions = frozenset({"l2"})
    tools = {**RouterSwitch.tools, "nft": "nftables"}

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools, ["VETH", "IP_ADVANCED_ROUTER",
                                                 "IP_MULTIPLE_TABLES", "NF_CONNTRACK",
                                                 "NF_FLOW_TABLE", "NF_FLOW_TABLE_INET",
                                                 "NFT_FLOW_OFFLOAD"])
        return Availability(False, *missing) if missing else Availability(True)

    def forward(self, paths: list[ForwardPath]) -> None:
        super().forward(paths)
        devices = [a.switch_ifname for a in self.attachments.values() if a.switch_ifname]
        nft_file(self.ctx.netns, flowtable_rules(devices), self.ctx.temp_dir, "flowtable.nft")

    def config_dump(self) -> str:
        ns = self.ctx.netns
        return "\n".join([super().config_dump(),
                          section("flowtable", ["ip", "netns", "exec", ns, "nft", "list",
                                                "table", "inet", TABLE])])
