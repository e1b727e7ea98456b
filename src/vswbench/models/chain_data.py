"""Chain measurements out of a results store, for the cost model (chain_cost.py).

What the model reads (execute.execute_point's result JSON; scenario "pvp" is chain:1):
- search points of scenario chain:N: `ndr_pps`, `generator_bound` (a lower bound, left out of
  the fit), `placement` {tester_cpu, switch_cpu, nf_cpus} and `forwarding_mode` (where the links'
  receive work runs: "sender-softirq", or a core such as "napi-threaded cpu1"), `tsc_hz` when the
  result has it, else the run fingerprint's;
- sweep points: the saturation's `peak_achieved_pps` (the throughput when no search measured the
  group), and beyond the peak, `tx_pps`, `achieved_pps` and `cycles_per_packet` per load point:
  the cycles wasted per frame dropped in software, C_SWdrops (Raumer et al., section IV);
- trial points, and each load of a latency point (e.g. at 90 % of the NDR: near saturation
  whatever the chain): `cycles_per_packet`, `cycles_per_packet_by_process` {tester, nf1..nfN}
  and `cpu` per core: the measured breakdown C_RX + C_TX (tester), C_VNF (each NF engine), and the CPU
  outside the engines (softirq, NAPI threads, interrupts) regressed on the n + 1 links:
  slope C_link, intercept C_other. Busy-polling engines count their spin: read these near
  saturation.

Observations are grouped by switch, NF kind (the point's option nf: fwd engines, kernel routers
or OVS bridges, switches/chain/nf.py), frame size and link placement: each group is fitted on its own.
For router elements (forwarding_mode "per-element ...") each element's link work runs on its own
core, so there is no switch core; their "nfI" CPU time is the element's NAPI thread. OVS elements
all run in ovs-vswitchd on the switch core (the result's placement says so); their links' receive
work runs where the mode after ", links " says: on the switch core (napi-threaded cpuN), or in
the sender's softirq (the tester's core for the first link, the daemon's for the rest).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from vswbench.errors import UsageError
from vswbench.models.chain_cost import LEVEL
from vswbench.models.chain_cost import ChainObservation
from vswbench.models.chain_cost import Group
from vswbench.models.chain_cost import Parameter
from vswbench.models.chain_layout import Layout
from vswbench.models.student_t import t_quantile
from vswbench.results.points import PointRecord
from vswbench.results.points import load as load_store
from vswbench.results.points import read_point
from vswbench.results.record import LoadPoint
from vswbench.results.record import Measured
from vswbench.results.store import StoredPoint
from vswbench.results.store import StoredRun
from vswbench.switches.chain.nf import FWD
from vswbench.switches.chain.nf import PER_ELEMENT

CHAIN_RE = re.compile(r"chain:(\d+)$")
MIN_DROP_SHARE = 0.01        # beyond the peak, a load point with fewer drops says nothing
CONSTANT_COST_TOLERANCE = 0.15   # constancy_note: the held-out target; a larger drift is flagged
NEAR_SATURATION = 0.7            # constancy_note: trials at this share of the maximum rate or more


@dataclass(frozen=True)
class CostBreakdown:
    """Per-packet costs of one trial, from CPU time per process and per core (cycles)."""
    group: Group
    n: int
    placement: str
    achieved_pps: float
    total: float                  # all cores
    tester: float | None          # C_RX + C_TX (the tester engine)
    vnf: tuple[float, ...]        # each NF engine: C_VNF
    outside: float | None         # total minus the engines: links, softirq, NAPI, other
    per_core: dict[str, float]
    daemon: float | None = None   # the switch's daemons (e.g. ovs-vswitchd holding every bridge)


@dataclass(frozen=True)
class DropCost:
    """Cycles spent per frame dropped in software, at one overloaded sweep point."""
    group: Group
    n: int
    offered_pps: float
    cycles_per_dropped: float


@dataclass(frozen=True)
class ChainData:
    observations: tuple[ChainObservation, ...]
    breakdowns: tuple[CostBreakdown, ...]
    drop_costs: tuple[DropCost, ...]
    skipped: tuple[str, ...]      # chain points the model could not use, with the reason


LINKS_SEP = ", links "


def chain_length(scenario: Any) -> int | None:
    if scenario == "pvp":
        return 1
    m = CHAIN_RE.fullmatch(str(scenario))
    return int(m.group(1)) if m else None


def layout_of(measured: Measured, n: int) -> Layout | str:
    """The cores a chain ran on, or why they are unknown (testbed.host_cpu's rule)."""
    place = measured.placement
    if place is None or place.tester_cpu is None:
        return "no pinned placement recorded (the model needs the tester's and NFs' cores)"
    nf_cpus: list[int | None] = list(place.nf_cpus) or [place.switch_cpu]
    if None in nf_cpus:
        return "network functions were not pinned"
    mode = measured.forwarding_mode or ""
    # a daemon's mode names the links' own after ", links " (nf=ovs: "ovs-vswitchd pinned cpu1,
    # links sender-softirq"): where the links' receive work runs decides, not where the daemon is
    mode = mode.split(LINKS_SEP, 1)[1] if LINKS_SEP in mode else mode
    switch: int | None = None
    if mode and mode not in ("n/a", "sender-softirq") and not mode.startswith(PER_ELEMENT):
        m = re.search(r"cpu(\d+)", mode)
        switch = int(m.group(1)) if m else place.switch_cpu
        if switch is None:
            return f"forwarding mode {mode!r} runs the links on an unpinned core"
    cpus = [int(c) for c in nf_cpus if c is not None]
    return Layout(place.tester_cpu, tuple(cpus[i % len(cpus)] for i in range(n)), switch)


def _size(p: PointRecord) -> int | str:
    frame = p.measured.frame_size
    size = p.params.value("size", 64 if frame is None else frame)
    return size if isinstance(size, (int, str)) else 64


def from_points(points: Iterable[StoredPoint | PointRecord],
                runs: Sequence[StoredRun] = ()) -> ChainData:
    """`points`: stored points, or their records (read_point)."""
    tsc_of_run = {r.run_id: r.system.host.tsc_hz if r.system else None for r in runs}
    found = _Found()
    for p in (q if isinstance(q, PointRecord) else read_point(q) for q in points):
        n = chain_length(p.params.scenario)
        if n is None or p.status != "done" or not p.measured.recorded:
            continue
        layout = layout_of(p.measured, n)
        if isinstance(layout, str):
            found.skipped.append(f"{p.label}: {layout}")
            continue
        _add_point(found, p, _base(p, n, layout, tsc_of_run.get(p.run_id)))
    return ChainData(tuple(found.obs), tuple(found.parts), tuple(found.drops),
                     tuple(found.skipped))


@dataclass
class _Found:
    """What from_points collects."""
    obs: list[ChainObservation] = field(default_factory=list)
    parts: list[CostBreakdown] = field(default_factory=list)
    drops: list[DropCost] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _base(p: PointRecord, n: int, layout: Layout, run_tsc: float | None) -> ChainObservation:
    """The observation of a point without its throughput (metric "": to be replaced)."""
    m = p.measured
    tsc = m.tsc_hz or run_tsc
    return ChainObservation(
        switch=str(p.params.switch), frame_size=_size(p), n=n, placement=p.params.placement,
        layout=layout, throughput_pps=0.0, metric="", tsc_hz=float(tsc) if tsc else None,
        forwarding_mode=m.forwarding_mode or "", key=p.key, nf=str(p.params.option("nf", FWD)),
        repetition=p.params.repetition)


def _add_point(found: _Found, p: PointRecord, base: ChainObservation) -> None:
    """A chain point's observation, cost breakdowns or drop costs, by its kind."""
    m, n, place = p.measured, base.n, base.placement
    group: Group = (base.switch, base.nf, base.frame_size, base.layout.switch_cpu is not None)
    h = p.headline if p.kind == "search" else None
    if h is not None and h.ndr_pps:
        found.obs.append(replace(base, throughput_pps=h.ndr_pps, metric="ndr",
                                 lower_bound=bool(h.generator_bound),
                                 cycles_per_packet=h.cycles_per_packet))
    elif p.kind == "sweep" and m.loads:
        peak = max(m.loads, key=lambda q: q.achieved_pps or 0)
        if peak.achieved_pps:
            found.obs.append(replace(base, throughput_pps=peak.achieved_pps, metric="peak",
                                     cycles_per_packet=peak.cycles_per_packet))
        found.drops += _drop_costs(group, n, m.loads, peak)
    elif p.kind == "trial":
        b = _breakdown(group, n, place, m.as_trial) if m.as_trial is not None else None
        if b is not None:
            found.parts.append(b)
    elif p.kind == "latency" and m.loads is not None:
        found.parts += [b for q in m.loads if q.has_by_process
                        and (b := _breakdown(group, n, place, q)) is not None]


def _drop_costs(group: Group, n: int, pts: Sequence[LoadPoint],
                peak: LoadPoint) -> list[DropCost]:
    """Beyond the peak: B = d C_peak + s C_drop (busy cycles per second, d delivered and s
    dropped per second), so C_drop = d (C - C_peak) / s with C the cycles per delivered frame."""
    base = peak.cycles_per_packet
    out = []
    for q in pts:
        if base is None or (q.offered_pps or 0) <= (peak.offered_pps or 0):
            continue
        d, tx, c = q.achieved_pps or 0.0, q.tx_pps or 0.0, q.cycles_per_packet
        s = tx - d
        if c is None or d <= 0 or s <= MIN_DROP_SHARE * tx:
            continue
        out.append(DropCost(group, n, float(q.offered_pps or 0), d * (c - base) / s))
    return out


def _breakdown(group: Group, n: int, place: str, r: LoadPoint) -> CostBreakdown | None:
    total = r.cycles_per_packet
    if not total:
        return None
    busy = dict(r.cpu_busy_s)
    all_busy = sum(busy.values())
    per_core = {k: total * b / all_busy for k, b in busy.items()} if all_busy else {}
    by = r.by_process
    tester = by.get("tester")
    vnf = tuple(by[f"nf{i}"] for i in range(1, n + 1) if f"nf{i}" in by)
    engines = list(by.values())
    outside = total - sum(engines) if engines else None
    daemon = sum(v for k, v in by.items() if k.startswith("daemon "))
    return CostBreakdown(group, n, place, r.achieved_pps or 0.0, total, tester, vnf, outside,
                         per_core, daemon or None)


def load(results_dir: str | Path) -> ChainData:
    """Read DIR/results.sqlite (or the store file itself) without changing it."""
    stored = load_store(results_dir)
    store = stored.store_path
    data = from_points(stored.points, stored.runs)
    if not data.observations:
        why = f" ({len(data.skipped)} skipped: {data.skipped[0]})" if data.skipped else ""
        raise UsageError(f"no chain throughput in {store}{why}: run a campaign with search or "
                         "sweep points of scenario chain:N (e.g. chain = [1, 2, 4, 8], "
                         "placement = [\"s_core\", \"bi\", \"pbp\"]), then fit")
    return data


# -- the measured breakdown, summarized per group ----------------------------------------------
def _mean(name: str, values: Sequence[float], meaning: str) -> Parameter | None:
    if not values:
        return None
    m = sum(values) / len(values)
    if len(values) < 2:
        return Parameter(name, m, None, None, True, meaning)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
    half = t_quantile(0.5 + LEVEL / 2, len(values) - 1) * sd / math.sqrt(len(values))
    return Parameter(name, m, m - half, m + half, True, meaning)


def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[Parameter, Parameter] | None:
    """y = a + b x by least squares with t intervals: C_other (a) and C_link (b)."""
    if len(set(xs)) < 2:
        return None
    x = np.column_stack([np.ones(len(xs)), np.array(xs, dtype=float)])
    coef, *_ = np.linalg.lstsq(x, np.array(ys, dtype=float), rcond=None)
    dof = len(xs) - 2
    half: list[float | None] = [None, None]
    if dof > 0:
        resid = np.array(ys) - x @ coef
        cov = float(resid @ resid) / dof * np.linalg.inv(x.T @ x)
        t = t_quantile(0.5 + LEVEL / 2, dof)
        half = [t * math.sqrt(cov[i, i]) for i in range(2)]
    a, b = (Parameter(name, float(coef[i]), None if half[i] is None else coef[i] - half[i],
                      None if half[i] is None else coef[i] + half[i], True, meaning)
            for i, (name, meaning) in enumerate((
                ("C_other", "measured: CPU outside the engines not growing with the links"),
                ("C_link", "measured: CPU outside the engines per veth link (n + 1 links)"))))
    return a, b


def extras(data: ChainData, group: Group) -> tuple[Parameter, ...]:
    """The measured per-component costs of one group (what is available of them)."""
    parts = [b for b in data.breakdowns if b.group == group]
    out = [_mean("C_RX+C_TX", [b.tester for b in parts if b.tester is not None],
                 "measured: the tester engine per packet (includes its busy-poll spin)"),
           _mean("C_VNF", [v for b in parts for v in b.vnf],
                 "measured: one NF engine per packet (process CPU time)")]
    outside = [(b.n + 1, b.outside) for b in parts if b.outside is not None]
    line = _line([x for x, _ in outside], [y for _, y in outside])
    if line:
        out += list(line)
    out.append(_mean("C_SWdrops", [d.cycles_per_dropped for d in data.drop_costs
                                   if d.group == group],
                     "measured: cycles per frame dropped in software, beyond the sweep's peak"))
    return tuple(p for p in out if p is not None)


def constancy_note(data: ChainData, group: Group,
                   max_rate: Mapping[int, float] | None = None) -> str | None:
    """The model's assumption checked on the switch daemon: its CPU per element per packet,
    measured near saturation (the median per chain length), should not depend on n. Measured for
    nf=ovs (ovs-vswitchd holds every bridge) with the links on threaded NAPI: 18,886 cycles per
    bridge at n = 1 and 14,723 at n = 10 in one run of specs/chains.toml (20,070 and 13,741 in
    another), and at a fixed 8 kpps about the same daemon CPU for 1 bridge as for 10: its time
    follows its poll loop's wake-ups, not the packets. With the links in the sender's softirq
    (the spec's setting since): 13,484 at n = 3 and 11,420 at n = 10. A note when the drift
    exceeds the 15 % target.

    Only trials near saturation count: with `max_rate` (the maximum forwarding rate per n), those
    at NEAR_SATURATION of it or more. A daemon's cost per packet grows as its load falls (its
    wake-ups serve fewer packets), and 90 % of an NDR is not near saturation when the chain
    forwards far more under overload (nf=ovs with links in the sender's softirq, n = 1: NDR
    76.6 kpps, sweep peak 174.7 kpps; at 90 % of that NDR ovs-vswitchd spent 34,487 cycles per
    packet, against 12,758 per element at n = 10 where the NDR is near the peak)."""
    per_n: dict[int, list[float]] = {}
    for b in data.breakdowns:
        if not (b.group == group and b.daemon and b.n > 0):
            continue
        if max_rate and b.achieved_pps < NEAR_SATURATION * max_rate.get(b.n, 0.0):
            continue
        per_n.setdefault(b.n, []).append(b.daemon / b.n)
    if len(per_n) < 2:
        return None
    lo, hi = min(per_n), max(per_n)
    c_lo, c_hi = float(np.median(per_n[lo])), float(np.median(per_n[hi]))
    drift = c_hi / c_lo - 1
    if abs(drift) <= CONSTANT_COST_TOLERANCE:
        return None
    return (f"the switch daemon's CPU per element and packet near saturation is {c_lo:,.0f} "
            f"cycles at n = {lo} and {c_hi:,.0f} at n = {hi} ({drift:+.0%}): not the constant "
            "per-packet cost the model assumes (its time follows its poll loop's wake-ups), so "
            "errors of up to that order can follow between those lengths")
