"""`router`: an IP-forwarding namespace (l3). Every attached port is its own /24 inside
198.18.0.0/15: the host keeps HostPort.ip_cidr (e.g. 198.18.3.2/24) and the router takes the
first other address of that network (198.18.3.1/24) on the switch-side veth end, reported as
Attachment.gateway_ip.

Port plumbing follows the rule of all kernel backends (switches/kernel/links.py): the backend creates
the host end, brings it UP and puts HostPort.ip_cidr on it; as it creates the host end, it also adds
the host's route to 198.18.0.0/15 via the gateway (a metric per port, so two ports of one host do
not collide) and permanent neighbour entries on both sides, so no ARP frame mixes with the
measured ones.

forward(paths) uses policy routing so that a frame entering from src's port leaves towards dst's
host whatever its destination address (chains: the NFs forward frames unchanged at L3):
    ip rule add iif <src switch-side if> lookup <table>
    ip route add default via <dst host ip> dev <dst switch-side if> table <table>
ip_forward is turned on and rp_filter off in the switch namespace only.

Functions (switches/rules/functions.py): l3 puts the table_size prefixes of the l3 table into each
path's table instead of the default route (one `ip -batch`); nat adds an nftables `snat` to the
router's own address on the way out of each port; acl an nftables forward chain of table_size
drop rules the traffic never matches. The nftables tables live in the switch namespace and go with
it.
"""
from __future__ import annotations

import ipaddress

from vswbench.errors import UsageError
from vswbench.host.netns import BENCHMARK_NET
from vswbench.host.netns import add_address
from vswbench.host.netns import ip
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import set_neighbour
from vswbench.host.netns import sysctl
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import RuleMechanism
from vswbench.switches.kernel.availability import basic_availability
from vswbench.switches.kernel.availability import kernel_versions
from vswbench.switches.kernel.counters import section
from vswbench.switches.kernel.switch import KernelSwitch
from vswbench.switches.rules.batch import ip_batch
from vswbench.switches.rules.batch import nft_file
from vswbench.switches.rules.functions import FunctionOptions
from vswbench.switches.rules.functions import check_flows
from vswbench.switches.rules.functions import l3_prefixes
from vswbench.switches.rules.functions import nft_acl
from vswbench.switches.rules.functions import nft_nat
from vswbench.switches.rules.functions import route_batch

TABLE_BASE = 100
NFT_TABLE = "vsbfn"          # inside the switch namespace only


def gateway_for(ip_cidr: str) -> tuple[str, str]:
    """(gateway address, gateway cidr) for a host address: the lowest other host of its network."""
    iface = ipaddress.ip_interface(ip_cidr)
    if iface.ip not in BENCHMARK_NET:
        raise UsageError(f"router: host address {ip_cidr} is outside {BENCHMARK_NET}")
    if iface.network.num_addresses < 4:
        raise UsageError(f"router: host network {iface.network} is too small for a gateway")
    gw = next(a for a in iface.network.hosts() if a != iface.ip)
    return str(gw), f"{gw}/{iface.network.prefixlen}"


class RouterSwitch(FunctionOptions, KernelSwitch):
    name = "router"
    description = "IP forwarding namespace, policy routes port to port"
    l3 = True
    _first_path: tuple[str, str, str] | None = None     # (table, via, dev) for rule updates
    functions = frozenset({"l2", "l3", "nat", "acl"})

    @classmethod
    def availability(cls) -> Availability:
        missing = basic_availability(cls.tools,
                                     ["VETH", "IP_ADVANCED_ROUTER", "IP_MULTIPLE_TABLES"])
        return Availability(False, *missing) if missing else Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        return kernel_versions()

    def setup(self) -> None:
        # Defaults first: interfaces created afterwards inherit rp_filter=0.
        sysctl(self.ctx.netns, **{"net.ipv4.ip_forward": 1, "net.ipv4.conf.all.rp_filter": 0,
                                  "net.ipv4.conf.default.rp_filter": 0,
                                  "net.ipv4.conf.all.send_redirects": 0,
                                  "net.ipv4.conf.default.send_redirects": 0})

    def attach(self, port: HostPort) -> Attachment:
        if not port.ip_cidr:
            raise UsageError(f"router: port {port.key} has no address")
        gw, gw_cidr = gateway_for(port.ip_cidr)
        host_ip = port.ip_cidr.split("/")[0]
        index = len(self.attachments)
        att = super().attach(port)
        assert att.switch_ifname is not None
        add_address(self.ctx.netns, att.switch_ifname, gw_cidr)
        att.gateway_ip = gw
        set_neighbour(self.ctx.netns, att.switch_ifname, host_ip, att.host_mac)
        set_neighbour(port.netns, port.ifname, gw, att.switch_mac)
        ip("route", "add", str(BENCHMARK_NET), "via", gw, "dev", port.ifname,
           "metric", str(TABLE_BASE + index), netns=port.netns)
        return att

    def forward(self, paths: list[ForwardPath]) -> None:
        ns = self.ctx.netns
        keys = list(self.attachments)
        fn = self.function
        check_flows(fn, self.ctx.flows)
        self.install_seconds: dict[str, float] = {}
        for src_key, dst in self.out_of(paths).items():
            src = self.attachments[src_key]
            table = str(TABLE_BASE + keys.index(src_key))
            host_ip = dst.host.ip_cidr.split("/")[0]
            assert src.switch_ifname and dst.switch_ifname
            if self._first_path is None:
                self._first_path = (table, host_ip, dst.switch_ifname)
            if fn.name == "l3":   # the table instead of the default route
                text = route_batch(l3_prefixes(fn.table_size), "add", host_ip,
                                   dst.switch_ifname, table)
                self.install_seconds[f"routes table {table}"] = round(
                    ip_batch(ns, text, self.ctx.temp_dir, f"routes-{table}.batch"), 4)
            else:
                ip("route", "replace", "default", "via", host_ip, "dev", dst.switch_ifname,
                   "table", table, netns=ns)
            rule = ("iif", src.switch_ifname, "lookup", table, "priority", table)
            ip("rule", "add", *rule, netns=ns)

            def delete(rule: tuple[str, ...] = rule) -> None:
                if namespace_exists(ns):
                    ip("rule", "del", *rule, netns=ns, check=False)

            self.register(f"ip rule {ns}: {' '.join(rule)}", delete)
        if fn.name in ("nat", "acl"):
            text = (nft_acl(NFT_TABLE, fn.table_size) if fn.name == "acl" else nft_nat(
                NFT_TABLE, {a.switch_ifname: a.gateway_ip for a in self.attachments.values()
                            if a.switch_ifname and a.gateway_ip}))
            self.install_seconds["nft"] = round(nft_file(ns, text, self.ctx.temp_dir), 4)

    def rule_mechanisms(self) -> list[RuleMechanism]:
        """Route batches into the table of the first path's port, and nftables transactions."""
        from vswbench.switches.rules.mechanisms import NftTransaction
        from vswbench.switches.rules.mechanisms import RouteBatch

        first = self._first_path
        if first is None:
            return []
        table, via, dev = first
        return [RouteBatch(self.ctx.netns, table, via, dev, self.ctx.temp_dir),
                NftTransaction(self.ctx.netns, self.ctx.temp_dir)]

    def stats(self) -> dict[str, object]:
        fn = self.function
        if fn.name == "l2":
            return {}
        return {"function": fn.name, "table_size": fn.table_size,
                "install_seconds": getattr(self, "install_seconds", {})}

    def config_dump(self) -> str:
        ns = self.ctx.netns
        parts = [section("addresses", ["ip", "-n", ns, "-br", "addr", "show"]),
                 section("ip rule", ["ip", "-n", ns, "rule", "show"]),
                 section("main table", ["ip", "-n", ns, "route", "show"])]
        for i, att in enumerate(self.attachments.values()):
            argv = ["ip", "-n", ns, "route", "show", "table", str(TABLE_BASE + i)]
            block = section(f"table {TABLE_BASE + i} ({att.host.key})", argv)
            lines = block.splitlines()
            if len(lines) > 12:   # l3: never 10,000 routes per result
                block = "\n".join(lines[:12] + [f"... {len(lines) - 2:,} routes in all"]) + "\n"
            parts.append(block)
        if self.function.name in ("nat", "acl"):
            parts.append(section("nftables", ["ip", "netns", "exec", ns, "nft", "list",
                                              "ruleset"]))
        parts += [section("neighbours", ["ip", "-n", ns, "neigh", "show"]), self.placement_notes()]
        return "\n".join(parts)
