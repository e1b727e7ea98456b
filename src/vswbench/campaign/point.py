"""One measurement point of a campaign (`Point`): its parameters, the key the store finds it by
and its label; `search_twin`, the search point a latency or b2b point can take its NDR from.
campaign/spec.py expands a spec's studies into these."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

DEFAULT_DURATION = {"trial": 5.0, "sweep": 2.0, "latency": 5.0, "rule-update": 5.0,
                    "stream": 5.0, "rr": 5.0, "crr": 5.0}


@dataclass(frozen=True)
class Point:
    """One measurement. Dimensions a kind does not use are None (rate outside trial, ...)."""
    kind: str
    switch: str
    scenario: str                                # resolved: "p2p", "pvp", "chain:3", ...
    size: int | str                              # bytes with FCS, or "imix"
    rate: float | None
    burst: int
    flows: int
    placement: str
    preset: str | None
    duration: float | None
    points: int | None
    fractions: tuple[float, ...] | None          # of the NDR: 0.9 = 90 %
    io: str
    options: tuple[tuple[str, str], ...]
    shape_pps: float | None
    trials: int | None                           # b2b: searches for the longest burst
    max_frames: int | None
    repetition: int = 0                          # 0-based
    study: int = field(default=1, compare=False)  # the first study that produced it
    churn: str | None = None                     # "A/D" (engine/src/churn.h); None: fixed flows
    profile: bool = False                        # one perf-profiled trial with the point
    pdr_loss: float | None = None                # search/latency/b2b: the PDR's loss ratio
    rules: int | None = None                     # rule-update: rules per batch
    update_rate: float | None = None             # rule-update: changes per second
    # kinds stream, rr, crr (measure/sockets.py): `size` is then the message size in bytes
    proto: str | None = None                     # tcp | udp
    mtu: int | None = None                       # of every link: 1500 | 9000
    offloads: str | None = None                  # TSO/GSO/GRO: default | on | off
    service: bool | None = None                  # through a DNAT'ed virtual IP

    def params(self) -> dict[str, Any]:
        """The parameters that define the measurement. None, empty options and repetition 0 are
        left out, so that a dimension added later with a None default, or repetitions raised
        from 1 to N, keeps the keys of points already measured."""
        data: dict[str, Any] = {
            "kind": self.kind, "switch": self.switch, "scenario": self.scenario,
            "size": self.size, "rate": self.rate, "burst": self.burst, "flows": self.flows,
            "placement": self.placement, "preset": self.preset, "duration": self.duration,
            "points": self.points, "io": self.io, "shape_pps": self.shape_pps,
            "trials": self.trials, "max_frames": self.max_frames,
            "fractions": list(self.fractions) if self.fractions is not None else None,
            "options": dict(self.options) or None, "repetition": self.repetition or None,
            "churn": self.churn, "profile": self.profile or None, "pdr_loss": self.pdr_loss,
            "rules": self.rules, "update_rate": self.update_rate, "proto": self.proto,
            "mtu": self.mtu, "offloads": self.offloads, "service": self.service}
        return {k: v for k, v in data.items() if v is not None}

    @property
    def key(self) -> str:
        """12 hex digits of SHA-256 over the canonical JSON of params(): the same on every run
        and machine, so a rerun finds the points already in the store."""
        canon = json.dumps(self.params(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        size = "imix" if self.size == "imix" else f"{self.size}B"
        return " ".join([self.kind, self.switch, self.scenario, size, *self._socket_parts(),
                         *self._method_parts(), *self._setup_parts()])

    def _socket_parts(self) -> list[str]:
        if self.proto is None:
            return []
        return [self.proto, f"mtu{self.mtu}"] + (
            [f"offloads={self.offloads}"] if self.offloads != "default" else []) + (
            ["service"] if self.service else [])

    def _method_parts(self) -> list[str]:
        """The shaper, load, preset, fractions, points, rule updates and a duration not the
        kind's default."""
        parts = []
        if self.shape_pps is not None:
            parts.append(f"shape {_pps(self.shape_pps)}")
        if self.rate is not None:
            parts.append(f"{_pps(self.rate)}pps")
        if self.preset not in (None, "fast"):
            parts.append(str(self.preset))
        if self.fractions is not None:
            parts.append("at " + ",".join(f"{f * 100:g}" for f in self.fractions) + "%")
        if self.points is not None:
            parts.append(f"{self.points} points")
        if self.rules is not None:
            parts.append(f"{self.rules} rules {self.update_rate or 0:g}/s")
        if self.duration is not None and self.duration != DEFAULT_DURATION.get(self.kind):
            parts.append(f"{self.duration:g}s")
        return parts

    def _setup_parts(self) -> list[str]:
        """Traffic and placement not the default, the options, churn, PDR loss, profiling and
        the repetition."""
        parts = [f"{n}={v}" for n, v, d in (("flows", self.flows, 1), ("burst", self.burst, 1),
                                            ("placement", self.placement, "default"),
                                            ("io", self.io, "auto")) if v != d]
        parts += [f"{k}={v}" for k, v in self.options]
        if self.churn is not None:
            parts.append(f"churn={self.churn}")
        if self.pdr_loss is not None:
            parts.append(f"pdr_loss={self.pdr_loss * 100:g}%")
        if self.profile:
            parts.append("profiled")
        if self.repetition:
            parts.append(f"#{self.repetition + 1}")
        return parts

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "study": self.study, **self.params()}


def search_twin(point: Point) -> Point:
    """The search point with this point's testbed and workload: a latency or b2b point can take
    its NDR from the twin's stored result instead of searching again."""
    return replace(point, kind="search", rate=None, duration=None, points=None, fractions=None,
                   trials=None, max_frames=None, preset=point.preset or "fast", profile=False,
                   rules=None, update_rate=None, proto=None, mtu=None, offloads=None,
                   service=None)


def _pps(value: float) -> str:
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"
