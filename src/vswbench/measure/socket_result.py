"""The typed socket result (stream, rr, crr: measure/sockets.py), defined once for both sides:
the `sockets` commands print a fresh result through it, and results/sockets.py reads a stored
point's result back into it (`SocketResult.from_json` of the JSON measure/sockets.summarize and
measure_once wrote). Its latency is a `SocketLatency`, read by attribute like a frame trial's
`LatencySummary`; `to_json` gives the figures this record holds in the stored key names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from vswbench.jsonvalues import as_dict
from vswbench.jsonvalues import count
from vswbench.jsonvalues import number
from vswbench.jsonvalues import text

SOCKET_KINDS = ("stream", "rr", "crr")
SOCKET_LATENCY = ("p50", "p90", "p99", "p999", "min", "max")


@dataclass(frozen=True)
class SocketLatency:
    """The transactions' round trip, microseconds (None: not measured)."""
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    p999: float | None = None
    min: float | None = None
    max: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> SocketLatency:
        raw = as_dict(data)
        return cls(*(number(raw.get(k)) for k in SOCKET_LATENCY))

    def to_json(self) -> dict[str, float | None]:
        return dict(self.items())

    def items(self) -> list[tuple[str, float | None]]:
        """(name, microseconds) in SOCKET_LATENCY's order."""
        return [(k, getattr(self, k)) for k in SOCKET_LATENCY]


@dataclass(frozen=True)
class CoreCost:
    """One core's share of a socket run's cost (measure/sockets.per_core_cost)."""
    cpu_s_per_gb: float | None
    cycles_per_transaction: float | None


@dataclass(frozen=True)
class SocketResult:
    """One socket measurement: its workload and what the application got."""
    kind: str                                 # stream | rr | crr
    switch: str
    scenario: str
    proto: str
    msg_size: int | None                      # bytes per write, or per request and response
    flows: int | None
    pairs: int | None
    mtu: int | None
    offloads: str
    service: bool
    duration_s: float | None
    goodput_gbps: float | None                # stream
    udp_loss_ratio: float | None
    retransmits: int | None                   # TCP_INFO, summed over the flows
    transactions_per_s: float | None          # rr, crr
    connections_per_s: float | None           # crr
    latency: SocketLatency                    # of the transactions
    histogram: tuple[tuple[int, int, int], ...]   # [low_ns, high_ns, count]
    busy_cpu_s: float | None                  # every core, /proc/stat
    cpu_s_per_gb: float | None
    cycles_per_transaction: float | None
    forwarding_mode: str | None
    nf: str | None = None                     # pvp, chain:N: how the network functions forwarded
    read_size: int | None = None              # a TCP stream's server: bytes per recv
    service_vip: str | None = None
    rate_bps: float | None = None             # a UDP stream's pacing per client (None: unpaced)
    sent_gbps: float | None = None            # a UDP stream's clients sent
    send_waits: int | None = None             # departures a full socket buffer held up
    port_tx_drops: Mapping[str, int] = field(default_factory=dict)   # per host port
    cost_per_core: Mapping[str, CoreCost] = field(default_factory=dict)

    def headline(self) -> tuple[str, float | None]:
        """The kind's figure: goodput (Gbit/s), transactions/s or connections/s."""
        if self.kind == "stream":
            return "Gbit/s", self.goodput_gbps
        if self.kind == "crr":
            return "connections/s", self.connections_per_s
        return "transactions/s", self.transactions_per_s

    @classmethod
    def from_json(cls, kind: str, r: Mapping[str, Any],
                  params: Mapping[str, Any] | None = None) -> SocketResult:
        """The record of a socket result's JSON (`params`: the campaign point's, standing in
        for a switch, scenario or protocol the result did not record)."""
        prm = params or {}
        return cls(
            kind, str(r.get("switch") or prm.get("switch") or "?"),
            str(r.get("scenario") or prm.get("scenario") or "?"),
            str(r.get("proto") or prm.get("proto") or "tcp"), count(r.get("size")),
            count(r.get("flows")), count(r.get("pairs")), count(r.get("mtu")),
            str(r.get("offloads") or "default"), bool(r.get("service")),
            number(r.get("duration_s")), number(r.get("goodput_gbps")),
            number(r.get("udp_loss_ratio")), count(r.get("retransmits")),
            number(r.get("transactions_per_s")), number(r.get("connections_per_s")),
            SocketLatency.from_json(r.get("latency_us")), _histogram(r.get("histogram")),
            number(r.get("busy_cpu_s")), number(r.get("cpu_s_per_gb")),
            number(r.get("cycles_per_transaction")), text(r.get("forwarding_mode")),
            text(r.get("nf")), count(r.get("read_size")), text(r.get("service_vip")),
            number(r.get("rate_bps")), number(r.get("sent_gbps")), count(r.get("send_waits")),
            {str(k): n for k, n in as_dict(r.get("port_tx_drops")).items() if count(n) is not None},
            {str(c): CoreCost(number(as_dict(v).get("cpu_s_per_gb")),
                              number(as_dict(v).get("cycles_per_transaction")))
             for c, v in as_dict(r.get("cost_per_core")).items()})

    def to_json(self) -> dict[str, Any]:
        """This record's figures under the stored keys (a stored result holds more: the
        clients' and servers' own records, the placement, ...)."""
        return {
            "kind": self.kind, "switch": self.switch, "scenario": self.scenario,
            "proto": self.proto, "size": self.msg_size, "flows": self.flows,
            "pairs": self.pairs, "mtu": self.mtu, "offloads": self.offloads,
            "service": self.service, "duration_s": self.duration_s,
            "goodput_gbps": self.goodput_gbps, "udp_loss_ratio": self.udp_loss_ratio,
            "retransmits": self.retransmits, "transactions_per_s": self.transactions_per_s,
            "connections_per_s": self.connections_per_s, "latency_us": self.latency.to_json(),
            "histogram": [list(b) for b in self.histogram], "busy_cpu_s": self.busy_cpu_s,
            "cpu_s_per_gb": self.cpu_s_per_gb,
            "cycles_per_transaction": self.cycles_per_transaction,
            "forwarding_mode": self.forwarding_mode, "nf": self.nf, "read_size": self.read_size,
            "service_vip": self.service_vip, "rate_bps": self.rate_bps,
            "sent_gbps": self.sent_gbps, "send_waits": self.send_waits,
            "port_tx_drops": dict(self.port_tx_drops),
            "cost_per_core": {c: {"cpu_s_per_gb": v.cpu_s_per_gb,
                                  "cycles_per_transaction": v.cycles_per_transaction}
                              for c, v in self.cost_per_core.items()}}


def _histogram(raw: Any) -> tuple[tuple[int, int, int], ...]:
    return tuple((int(b[0]), int(b[1]), int(b[2])) for b in raw or []
                 if isinstance(b, list) and len(b) == 3 and all(count(x) is not None for x in b))
