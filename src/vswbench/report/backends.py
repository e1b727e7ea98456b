"""What each backend of a report is, beside its numbers: its description, stack and role, and what
its stored points say about how it ran (forwarding mode, versions, CPUs, engine I/O).

The description, stack and role come from the backend's class (switches/catalog.py): `description`,
`port_kind` ("dpdk": the DPDK stack, else the kernel stack), `direct` (no switch in the path: a
baseline, veth for the kernel and memif for DPDK) and `calibration` (shaped, a device with a known
answer). How it ran comes from the points themselves (every point stores forwarding_mode,
switch_versions and placement), never from the machine the report is built on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from vswbench.results.points import StoredResults
from vswbench.results.record import Placement

KERNEL, DPDK = "kernel", "DPDK"
SWITCH, BASELINE, CALIBRATION = "switch", "baseline", "calibration"


@dataclass(frozen=True)
class BackendInfo:
    switch: str
    description: str                     # the backend class's own words
    stack: str                           # KERNEL or DPDK
    role: str                            # SWITCH, BASELINE (no switch) or CALIBRATION
    forwarding_modes: tuple[str, ...]    # as the points stored them (napi-threaded cpu1, ...)
    versions: tuple[str, ...]            # "ovs-vswitchd 3.1.0", "kernel 6.18.44", ...
    placements: tuple[str, ...]          # "tester cpu0, switch cpu1"
    io: tuple[str, ...]                  # the tester's engine I/O (afpacket, dpdk, ...)

    @property
    def ranked(self) -> bool:
        return self.role == SWITCH

    def where(self) -> str:
        """How it ran, in one phrase: forwarding mode, CPUs, versions."""
        parts = []
        if self.forwarding_modes:
            parts.append("mode " + " / ".join(self.forwarding_modes))
        if self.placements:
            parts.append(" / ".join(self.placements))
            if any(re.search(r"cpu\d+[-,]\d", p) for p in self.placements):
                parts.append(RULE)
        if self.io:
            parts.append("tester I/O " + " / ".join(self.io))
        if self.versions:
            parts.append(", ".join(self.versions))
        return "; ".join(parts)


def _class_facts(switch: str) -> tuple[str, str, str]:
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    if cls is None:
        return (f"{switch}: a backend this version of vswbench does not know", KERNEL, SWITCH)
    stack = DPDK if cls.port_kind == "dpdk" else KERNEL
    role = CALIBRATION if cls.calibration else BASELINE if cls.direct else SWITCH
    return cls.description, stack, role


def placement_text(value: Placement | None) -> str | None:
    if value is None:
        return None
    parts = []
    if value.tester_cpu is not None:
        parts.append(f"tester cpu{_cores(value.tester_cpus or (value.tester_cpu,))}")
    if value.switch_cpu is not None:
        parts.append(f"switch cpu{_cores(value.switch_cpus or (value.switch_cpu,))}")
    return ", ".join(parts) or None


# the default rule on more than 2 cores (measure/cores.py), said where a point used several
RULE = ("cores by the rule for more than 2 cores: NFs one core each, then a core per driver pair for the "
        "tester (at most half the rest), the other cores to the switch, its ports round robin")


def _cores(cores: tuple[int, ...]) -> str:
    """0,1,2,3,8 -> '0-3,8'."""
    runs: list[list[int]] = []
    for c in cores:
        if runs and c == runs[-1][-1] + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs)


def _unique(values: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def backend_infos(data: StoredResults) -> dict[str, BackendInfo]:
    """One BackendInfo per switch with a finished point, in name order."""
    modes: dict[str, list[str | None]] = {}
    versions: dict[str, list[str | None]] = {}
    places: dict[str, list[str | None]] = {}
    ios: dict[str, list[str | None]] = {}
    for rec in data.records():
        m = rec.measured
        switch = str(rec.params.switch or m.switch or "")
        if not switch:
            continue
        modes.setdefault(switch, []).append(m.forwarding_mode)
        versions.setdefault(switch, []).extend(f"{k} {v}" for k, v in m.switch_versions)
        places.setdefault(switch, []).append(placement_text(m.placement))
        ios.setdefault(switch, []).append(m.io)
    out = {}
    for switch in sorted(modes):
        description, stack, role = _class_facts(switch)
        out[switch] = BackendInfo(switch, description, stack, role, _unique(modes[switch]),
                                  _unique(versions[switch]), _unique(places[switch]),
                                  _unique(ios[switch]))
    return out


def info_for(infos: dict[str, BackendInfo], switch: str) -> BackendInfo:
    """The switch's info, or its class facts alone when no finished point named it."""
    if switch in infos:
        return infos[switch]
    description, stack, role = _class_facts(switch)
    return BackendInfo(switch, description, stack, role, (), (), (), ())
