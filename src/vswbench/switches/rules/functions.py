"""Forwarding functions beyond port-to-port (Fang et al., Fig. 5-7; Sattar and
Matrawy): what a switch does with every frame, chosen by the backend options `function` and
`table_size` (`--function`, `--table-size`, a campaign's `function = [...]`, `table_size = [...]`).
Pure: the tables and rule texts, no root, unit-tested alone; the backends install them.

- `l2` (default): today's port-to-port forwarding.
- `l3`: longest-prefix match over a routing table of `table_size` prefixes, independent of the
  workload's flow count. The drivers send to L3_BASE + flow (engine `--flow-field dip`). The
  table: 198.19.0.0/16 (so every destination has a route), then for pair i = 0, 1, ... the /31
  at L3_BASE + 2i and the /32 inside it at L3_BASE + 2i, in that order, up to `table_size`
  prefixes. Even destinations match their /32, odd ones only the /31 around them, every one also
  the /16: the lookup must find the longest (a test points one /32 at a blackhole).
- `nat`: source NAT with connection tracking (nftables `snat` on the way out of the switch): the
  receiver sees the switch's address on its own port as the source, each flow one conntrack entry.
- `acl`: `table_size` filter rules every frame traverses before it is accepted: rule i drops
  destination ACL_BASE + i (198.19.128.0 up), which the measured traffic never uses, so each frame
  is compared with all of them (nftables evaluates a chain rule by rule).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import ClassVar

from vswbench.errors import UsageError

FUNCTIONS: dict[str, str] = {
    "l2": "port-to-port forwarding (default)",
    "l3": "longest-prefix match over table_size prefixes",
    "nat": "source NAT with connection tracking",
    "acl": "table_size filter rules every frame traverses",
}
TABLE_FUNCTIONS = ("l3", "acl")      # the functions that read table_size
DEFAULT_TABLE_SIZE = 1000
L3_BASE = ipaddress.ip_address("198.19.0.0")
L3_COVER = ipaddress.ip_network("198.19.0.0/16")
MAX_L3_TABLE = 1 + 2 * 32768         # the /16 and a /31 + /32 for each pair of 198.19.0.0/17
ACL_BASE = ipaddress.ip_address("198.19.128.0")
MAX_ACL_TABLE = 32768                # 198.19.128.0 .. 198.19.255.255
L3_ENGINE_FIELD = "dip"


@dataclass(frozen=True)
class Function:
    name: str = "l2"
    table_size: int = 0              # 0 for the functions without a table

    @property
    def label(self) -> str:
        return f"{self.name} N={self.table_size:,}" if self.table_size else self.name


def parse_function(options: Mapping[str, str], switch: str = "") -> Function:
    """The function of a backend option table; UsageError naming the value and the choices."""
    who = f"switch {switch}: " if switch else ""
    name = options.get("function", "l2")
    if name not in FUNCTIONS:
        raise UsageError(f"{who}function {name!r}: choose from "
                         + ", ".join(f"{k} ({v})" for k, v in FUNCTIONS.items()))
    raw = options.get("table_size")
    if raw is None:
        return Function(name, DEFAULT_TABLE_SIZE if name in TABLE_FUNCTIONS else 0)
    if name not in TABLE_FUNCTIONS:
        raise UsageError(f"{who}table_size: only functions {' and '.join(TABLE_FUNCTIONS)} have "
                         f"a table, not {name}: leave table_size out")
    limit = MAX_L3_TABLE if name == "l3" else MAX_ACL_TABLE
    try:
        size = int(str(raw).replace("_", ""))
    except ValueError:
        size = 0
    if not 1 <= size <= limit:
        raise UsageError(f"{who}table_size {raw!r}: function {name} takes 1..{limit:,} entries "
                         "(its addresses stay inside 198.18.0.0/15)")
    return Function(name, size)


class FunctionOptions:
    """For backends that declare `functions`: the function their options ask for, and what an l3
    function changes for the drivers (the flow field they vary, the address they send to). List
    it before the backend's base class so these override the base's defaults."""

    ctx: Any
    name: ClassVar[str]

    @property
    def function(self) -> Function:
        return parse_function(self.ctx.options, self.name)

    def flow_field(self) -> str | None:
        return L3_ENGINE_FIELD if self.function.name == "l3" else None

    def destination_ip(self, default: str) -> str:
        return str(L3_BASE) if self.function.name == "l3" else default


def function_problem(switch: str, supported: frozenset[str], options: Mapping[str, str]) -> str | None:
    """Why `switch` cannot run the function of these options (a bad value, or a function it has
    not got, with the ones it has), or None."""
    try:
        fn = parse_function(options, switch)
    except UsageError as exc:
        return str(exc)
    if fn.name not in supported:
        has = ", ".join(f for f in FUNCTIONS if f in supported)
        return (f"switch {switch} cannot do function {fn.name} ({FUNCTIONS[fn.name]}): it "
                f"implements {has}; choose one of those or another switch (see `vswbench "
                "switches`)")
    return None


def check_flows(fn: Function, flows: int) -> None:
    """l3 destinations L3_BASE + flow must stay inside 198.19.0.0/16 (the engine checks the /15)."""
    if fn.name == "l3" and flows > L3_COVER.num_addresses:
        raise UsageError(f"function l3: {flows:,} flows would send beyond {L3_COVER}; use at "
                         f"most {L3_COVER.num_addresses:,} flows")


# -- l3 ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prefix:
    network: str                     # e.g. "198.19.0.2/31"
    role: str                        # "cover" (/16), "pair" (/31), "leaf" (/32)


def l3_prefixes(n: int) -> list[Prefix]:
    """The `n` prefixes of an l3 table, in the order above (unit-tested: overlapping, LPM)."""
    out = [Prefix(str(L3_COVER), "cover")]
    base = int(L3_BASE)
    pair = 0
    while len(out) < n:
        addr = ipaddress.ip_address(base + 2 * pair)
        out.append(Prefix(f"{addr}/31", "pair"))
        if len(out) < n:
            out.append(Prefix(f"{addr}/32", "leaf"))
        pair += 1
    return out[:n]


def longest_match(prefixes: list[Prefix], address: str) -> Prefix | None:
    """The longest prefix of `prefixes` holding `address` (the reference the tests check the
    kernel and OVS against)."""
    addr = ipaddress.ip_address(address)
    best: Prefix | None = None
    for p in prefixes:
        net = ipaddress.ip_network(p.network)
        if addr in net and (best is None or
                            net.prefixlen > ipaddress.ip_network(best.network).prefixlen):
            best = p
    return best


def route_batch(prefixes: list[Prefix], verb: str, via: str, dev: str, table: str) -> str:
    """`ip -batch -` text: one route per prefix in `table` (verb add, replace or del)."""
    return "".join(f"route {verb} {p.network} via {via} dev {dev} table {table}\n"
                   for p in prefixes)


def ovs_l3_rules(prefixes: list[Prefix], in_port: int, out_port: int, cookie: int) -> Iterator[str]:
    """OpenFlow rules doing the LPM: the priority is the prefix length (OVS takes the highest)."""
    for p in prefixes:
        plen = ipaddress.ip_network(p.network).prefixlen
        yield (f"cookie={cookie:#x},priority={100 + plen},in_port={in_port},ip,"
               f"nw_dst={p.network},actions=output:{out_port}")


# -- acl ---------------------------------------------------------------------------------------
def acl_denied(n: int, first: int = 0) -> list[str]:
    """The destinations rules first..first+n-1 drop."""
    base = int(ACL_BASE)
    return [str(ipaddress.ip_address(base + first + i)) for i in range(n)]


def ovs_acl_rules(n: int, in_port: int, cookie: int) -> Iterator[str]:
    """N drop rules above the port rules (those keep OVS's default priority 32768)."""
    for addr in acl_denied(n):
        yield f"cookie={cookie:#x},priority=40000,in_port={in_port},ip,nw_dst={addr},actions=drop"


# -- OpenFlow (the OVS backends) --------------------------------------------------------------
FUNCTION_COOKIE = 0x2                # the function's rules carry it
OVS_NAT_SOURCE = "198.18.254.1"      # OVS has no address of its own: frames leave from this one


def ovs_function_rules(fn: Function, in_port: int, out_port: int) -> list[str]:
    """The rules of a driver's path under function `fn` (replacing its port rule): l3 the LPM
    table, acl the port rule under table_size drop rules, nat the port rule through conntrack
    with source NAT (userspace conntrack of the netdev datapath)."""
    port_rule = f"cookie={FUNCTION_COOKIE:#x},in_port={in_port},actions=output:{out_port}"
    if fn.name == "l3":
        return list(ovs_l3_rules(l3_prefixes(fn.table_size), in_port, out_port, FUNCTION_COOKIE))
    if fn.name == "acl":
        return [port_rule, *ovs_acl_rules(fn.table_size, in_port, FUNCTION_COOKIE)]
    if fn.name == "nat":
        return [f"cookie={FUNCTION_COOKIE:#x},priority=40000,in_port={in_port},ip,"
                f"actions=ct(commit,nat(src={OVS_NAT_SOURCE})),output:{out_port}", port_rule]
    return [port_rule]


# -- nftables ----------------------------------------------------------------------------------
def nft_acl(table: str, n: int, first: int = 0, family: str = "ip") -> str:
    """An nftables table whose forward chain holds n rules (one transaction with `nft -f -`).
    family "ip": a router's forwarding; "bridge": frames a Linux bridge forwards (no
    br_netfilter: the bridge family's own forward hook)."""
    if family not in ("ip", "bridge"):
        raise ValueError(f"nft_acl family {family!r}: ip or bridge")
    rules = "".join(f"    ip daddr {a} drop\n" for a in acl_denied(n, first))
    return (f"table {family} {table} {{\n  chain vsbfwd {{\n    type filter hook forward priority "
            f"filter; policy accept;\n{rules}  }}\n}}\n")


def nft_nat(table: str, out_ifs: dict[str, str]) -> str:
    """Source NAT on the way out: frames leaving interface IF take source address ADDR
    (`out_ifs`: IF -> ADDR, the switch's own address on that port)."""
    rules = "".join(f'    oifname "{ifname}" snat to {addr}\n' for ifname, addr in out_ifs.items())
    return (f"table ip {table} {{\n  chain vsbpost {{\n    type nat hook postrouting priority "
            f"srcnat; policy accept;\n{rules}  }}\n}}\n")
