"""The OVS backends' options and OpenFlow rule text (pure: no OVS, no root, unit-tested alone).

Backend options (`--option KEY=VALUE`, or a campaign study's `options = {KEY = VALUE}`):

- `ovs_mode`: `p2p` (default; OpenFlow rules on a fail_mode=secure bridge) or `normal` (the
  learning NORMAL flow of a standalone bridge).
- `flow_table`: `port` (default) or `exact`. With `port`, one rule per path (`in_port=X,
  actions=output:Y`): every frame of a path hits one datapath flow (megaflow) whatever its
  addresses. With `exact`, one rule per flow on every path that starts at a driver's port,
  matching the flow's source MAC and source IPv4 address (`in_port=X,ip,dl_src=M,nw_src=A`), so
  each flow becomes a datapath flow of its own and OVS's flow caches (EMC, SMC, megaflow
  classifier) are exercised as with many attached hosts (Emmerich et al., section 5.3,
  Fig. 6). The drivers then vary source MAC and IPv4 together (engine `--flow-field smac+sip`);
  the rules follow the workload's flow count, from the port's own MAC and address up, exactly as
  the engine counts (MAC: low 24 bits + flow; IPv4: address + flow, inside 198.18.0.0/15).
  Frames of no installed flow are dropped (no fallback rule), so a mismatch shows up as loss.
  Paths from network functions or reflectors keep their port rule (those rewrite the source MAC).
  The datapath's flow limit is raised to FLOW_LIMIT at once (`ovs-appctl upcall/set-flow-limit`):
  OVS starts it at 10,000 and its revalidators raise it by 1,000 per round (two a second), so
  100,000 flows would otherwise be refused for the first minute (measured: "miss with failed
  upcall", dropped frames) and a result would depend on how long the campaign had been running.
- `clones`: K output ports per rule, 1 (default) to MAX_CLONES: the path's own destination and
  K-1 extra ports, veth pairs whose other ends sit in a sink namespace of the run and drop what
  arrives (Emmerich et al., Fig. 7: "Effects of cloning a flow").
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from vswbench.errors import UsageError

MODES = ("p2p", "normal")
FLOW_TABLES = ("port", "exact")
MAX_CLONES = 8
ENGINE_FLOW_FIELD = "smac+sip"       # what the drivers vary under flow_table=exact
BENCHMARK_NET = ipaddress.ip_network("198.18.0.0/15")
FLOW_LIMIT = 200_000                 # OVS's default maximum (other_config:flow-limit)
EXACT_COOKIE = 0x1                   # per-flow rules carry it (dump-aggregate counts them)
PORT_COOKIE = 0x0


@dataclass(frozen=True)
class OvsOptions:
    mode: str = "p2p"
    flow_table: str = "port"
    clones: int = 1

    @property
    def exact(self) -> bool:
        return self.flow_table == "exact"


def parse_ovs_options(options: Mapping[str, str], switch: str = "ovs") -> OvsOptions:
    """The OVS options of a backend option table; UsageError naming the option and its values."""
    mode = options.get("ovs_mode", "p2p")
    if mode not in MODES:
        raise UsageError(f"{switch}: ovs_mode must be one of {', '.join(MODES)}, not {mode!r}")
    table = options.get("flow_table", "port")
    if table not in FLOW_TABLES:
        raise UsageError(f"{switch}: flow_table must be port (one rule per path) or exact (one "
                         f"rule per flow, on source MAC and IPv4 address), not {table!r}")
    raw = options.get("clones", "1")
    try:
        clones = int(raw)
    except ValueError:
        clones = 0
    if not 1 <= clones <= MAX_CLONES or str(raw).strip() != str(clones):
        raise UsageError(f"{switch}: clones must be a whole number of output ports 1..{MAX_CLONES} "
                         f"(1 = no copy; K = the destination and K-1 extra ports), not {raw!r}")
    if mode == "normal" and (table != "port" or clones != 1):
        raise UsageError(f"{switch}: ovs_mode=normal forwards by MAC learning and installs no "
                         "rules: flow_table=exact and clones need the default ovs_mode=p2p")
    return OvsOptions(mode, table, clones)


# -- addresses ---------------------------------------------------------------------------------
def mac_plus(mac: str, n: int) -> str:
    """The engine's source MAC of flow n: the low 24 bits + n (modulo 2^24), the first three
    bytes unchanged (engine/src/frame.c)."""
    octets = [int(x, 16) for x in mac.split(":")]
    if len(octets) != 6:
        raise UsageError(f"not a MAC address: {mac!r}")
    low = ((octets[3] << 16 | octets[4] << 8 | octets[5]) + n) & 0xFFFFFF
    return ":".join(f"{b:02x}" for b in (*octets[:3], low >> 16, (low >> 8) & 0xFF, low & 0xFF))


def check_flow_range(ip: str, flows: int, switch: str = "ovs") -> None:
    """UsageError unless ip, ip + 1, ..., ip + flows - 1 all lie in 198.18.0.0/15."""
    first = ipaddress.ip_address(ip)
    last_int = int(first) + max(1, flows) - 1
    inside = first in BENCHMARK_NET and last_int <= int(BENCHMARK_NET.broadcast_address)
    if not inside:
        last = ipaddress.ip_address(min(last_int, 2 ** 32 - 1))
        raise UsageError(f"{switch}: flow_table=exact with {flows:,} flows from {first} would "
                         f"use {first}..{last}, outside {BENCHMARK_NET} (the benchmarking "
                         "range, the only addresses vswbench uses): use fewer flows")


# -- rules -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlowSource:
    """A driver's port: the frames entering there come from its MAC and IPv4 address, + flow."""
    mac: str
    ip: str


@dataclass(frozen=True)
class RulePath:
    in_port: int                       # OpenFlow port the frames enter on
    outputs: tuple[int, ...]           # OpenFlow ports they leave on (destinations, then clones)
    source: FlowSource | None = None   # exact rules for this path's flows; None: a port rule


def actions(outputs: Sequence[int]) -> str:
    return "actions=" + ",".join(f"output:{p}" for p in outputs)


def rule_lines(paths: Sequence[RulePath], flows: int, switch: str = "ovs") -> Iterator[str]:
    """ovs-ofctl add-flows lines: a port rule per path without a source, a rule per flow for
    each path with one (addresses checked against 198.18.0.0/15 first)."""
    for path in paths:
        if path.source is not None:
            check_flow_range(path.source.ip, flows, switch)
    for path in paths:
        acts = actions(path.outputs)
        if path.source is None:
            yield f"cookie={PORT_COOKIE:#x},in_port={path.in_port},{acts}"
            continue
        head = f"cookie={EXACT_COOKIE:#x},in_port={path.in_port},ip"
        for mac, ip in flow_addresses(path.source, flows):
            yield f"{head},dl_src={mac},nw_src={ip},{acts}"


def flow_addresses(source: FlowSource, flows: int) -> Iterator[tuple[str, str]]:
    """(source MAC, source IPv4) of flows 0..flows-1, as the engine writes them."""
    norm = mac_plus(source.mac, 0)               # lower case, validated
    prefix, low = norm[:8], int(norm[9:].replace(":", ""), 16)
    base = int(ipaddress.ip_address(source.ip))
    for i in range(max(1, flows)):
        m, a = (low + i) & 0xFFFFFF, base + i
        yield (f"{prefix}:{m >> 16:02x}:{(m >> 8) & 0xFF:02x}:{m & 0xFF:02x}",
               f"{a >> 24}.{(a >> 16) & 0xFF}.{(a >> 8) & 0xFF}.{a & 0xFF}")


def clone_outputs(first_free_ofport: int, clones: int) -> tuple[int, ...]:
    """OpenFlow port numbers of the K-1 extra ports, after the attached ones."""
    return tuple(range(first_free_ofport, first_free_ofport + clones - 1))
