"""The typed parts of a stored point: what its result JSON measured (trials and load points,
placement, goals, profiles, rule updates).

A point's params and result are JSON as the methodology commands wrote them (execute.execute_point);
they are read here, once, into frozen records, so that no reader above results/ looks a key up in
a stored dict (tests/unit/test_typed_reads.py checks that). points.py assembles these into
`PointRecord`s; series.py groups the load points into curves.

- its parameters and the variant knobs with their defaults (`Params`, `KNOBS`): params.py;
- `LoadPoint`: one stored trial (a search's trial, a sweep's or latency point's load, a trial
  point's own result), with the engine's `LatencySummary` and `HistogramBucket`s;
- `Measured`: the rest of a result a reader needs, typed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from vswbench.engine.records import HistogramBucket
from vswbench.engine.records import LatencySummary
from vswbench.engine.records import stored_histogram
from vswbench.engine.records import stored_latency
from vswbench.engine.stalls import TrialStalls
from vswbench.jsonvalues import as_dict as _dict
from vswbench.jsonvalues import as_list as _list
from vswbench.jsonvalues import count
from vswbench.jsonvalues import flag
from vswbench.jsonvalues import number
from vswbench.jsonvalues import text
from vswbench.measure.trial_result import read_trial


# -- one stored trial --------------------------------------------------------------------------
@dataclass(frozen=True)
class LoadPoint:
    """One stored trial: a search's trial, one load of a sweep or latency point, or a trial
    point's own result. `latency` and `histogram` are the engine's types (engine/records.py)."""
    offered_pps: float | None
    achieved_pps: float | None
    loss_ratio: float | None
    latency: LatencySummary | None
    histogram: tuple[HistogramBucket, ...]
    fraction_of_ndr: float | None = None
    lost: int | None = None
    cycles_per_packet: float | None = None
    useful_cycles_per_packet: float | None = None
    intended_pps: float | None = None
    tx_pps: float | None = None
    unsent: bool = False
    latency_kind: str | None = None
    by_process: Mapping[str, float] = field(default_factory=dict)   # cycles/packet per process
    has_by_process: bool = False
    cpu_busy_s: Mapping[str, float] = field(default_factory=dict)   # per core
    nf_drops: Mapping[str, int] = field(default_factory=dict)       # per chain element
    irq_rates: tuple[tuple[float, float], ...] = ()                 # (interrupts/s, NET_RX/s) per cpu
    stalls: TrialStalls | None = None   # engine/stalls.py's record, read back (from_json)
    rejected: bool = False
    jitter_us: float | None = None
    ipdv_us: tuple[float | None, float | None, float | None] = (None, None, None)  # p1 p50 p99
    counters_agree: bool | None = None
    excised: bool = False               # a host stall's loss taken out (measure/hoststall.py)
    tx_skipped: int = 0                 # departures skipped in the tester's own gaps (never sent)
    tester_gaps: int = 0
    tester_gap_max_us: float | None = None


def load_point(raw: Any) -> LoadPoint | None:
    """The LoadPoint of one stored trial dict (None: not a dict). The trial's own fields read
    through TrialResult.from_json (measure/trial_result.py: read_trial), a field the dict did
    not hold as None; the keys only stored trials have (annotations of a search, a sweep, a
    session: fraction_of_ndr, intended_pps, unsent, rejected, excised, counters_agree,
    useful_cycles_per_packet) read here."""
    if not isinstance(raw, dict):
        return None
    t, held = read_trial(raw)

    def stored(name: str, value: float) -> float | None:
        return value if name in held else None

    ipdv = t.ipdv_us or {}
    by = t.cycles_per_packet_by_process
    return LoadPoint(
        stored("offered_pps", t.offered_pps), stored("achieved_pps", t.achieved_pps),
        stored("loss_ratio", t.loss_ratio),
        stored_latency(t.latency_us) if "latency_us" in held else None,
        stored_histogram(t.histogram), number(raw.get("fraction_of_ndr")),
        t.lost if "lost" in held else None, t.cycles_per_packet,
        number(raw.get("useful_cycles_per_packet")), number(raw.get("intended_pps")),
        stored("tx_pps", t.tx_pps), bool(raw.get("unsent")), t.latency_kind,
        {k: v for k, v in by.items() if v is not None}, bool(by),
        {k: float(v.get("busy_s") or 0) for k, v in t.cpu.items()},
        {e: int(c.get("dropped", 0)) for e, c in t.nf_counters.items()},
        tuple((float(r.get("interrupts", 0)), float(r.get("net_rx", 0)))
              for r in t.irq_rates.values()),
        t.stalls, bool(raw.get("rejected")), t.jitter_us,
        (ipdv.get("p1"), ipdv.get("p50"), ipdv.get("p99")),
        flag(raw.get("counters_agree")), bool(raw.get("excised")),
        t.tx_skipped, t.tester_gaps, t.tester_gap_max_us)


def load_points(raw: Any) -> tuple[LoadPoint, ...]:
    return tuple(lp for lp in (load_point(x) for x in _list(raw)) if lp is not None)


# -- the rest of a result ----------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """The cores a point ran on, as its result recorded them."""
    tester_cpu: int | None
    switch_cpu: int | None
    nf_cpus: tuple[int, ...]
    recorded: bool = True                   # a placement object was stored
    # every core of each side (measure.cores); results stored before they existed: the one core
    tester_cpus: tuple[int, ...] = ()
    switch_cpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class Goal:
    """One search goal (NDR, PDR) with the preset's settings it ran with."""
    name: str | None
    loss_ratio: float | None
    exceed_ratio: float | None
    relative_width: float | None
    final_trial_duration: float | None
    initial_trial_duration: float | None
    duration_sum: float | None


@dataclass(frozen=True)
class FunctionShare:
    name: str
    share: float


@dataclass(frozen=True)
class CoreProfile:
    """One core's perf profile: folded stacks, shares per category (of the run's own threads
    where the profile tells them apart: `own_share`), its top functions and threads."""
    cpu: str
    folded: tuple[str, ...]
    samples: bool
    categories: Mapping[str, float]
    own_share: float | None                     # None: the whole core
    own_categories: Mapping[str, float]
    top_functions: tuple[FunctionShare, ...]    # of the run's own threads where known
    top_comms: tuple[FunctionShare, ...]


@dataclass(frozen=True)
class CoreCheck:
    cpu: str
    scheduler_busy: float | None
    scheduler_softirq: float | None
    perf_busy: float | None
    differ: bool


@dataclass(frozen=True)
class Profile:
    """A trial's perf profile (host/profile.py) and the scheduler-vs-perf CPU check."""
    offered_pps: float | None
    cores: tuple[CoreProfile, ...]
    checks: tuple[CoreCheck, ...]
    cycles_per_packet_scheduler: float | None
    cycles_per_packet_perf: float | None
    differ: bool


@dataclass(frozen=True)
class RuleTiming:
    mechanism: str
    rules: int
    install_median_s: float | None
    remove_median_s: float | None


@dataclass(frozen=True)
class RulePhase:
    mechanism: str
    name: str
    offered_pps: float
    updates: int
    lost: int
    loss_ratio: float
    latency: LatencySummary | None


@dataclass(frozen=True)
class RuleUpdate:
    """A rule-update point's timings and its forwarding while rules changed."""
    timings: tuple[RuleTiming, ...]
    phases: tuple[RulePhase, ...]
    update_rules: int
    update_rate: float | None


@dataclass(frozen=True)
class Measured:
    """What a point's result holds beyond its headline, typed."""
    switch: str | None = None
    scenario: str | None = None
    frame_size: Any = None
    io: str | None = None
    preset: str | None = None
    algorithm: str | None = None
    forwarding_mode: str | None = None
    switch_versions: tuple[tuple[str, str], ...] = ()
    placement: Placement | None = None
    tsc_hz: float | None = None
    generator_bound: bool = False
    generator_ceiling_pps: float | None = None
    ndr_pps: float | None = None
    cycles_per_packet: float | None = None
    goals: tuple[Goal, ...] = ()
    cvs: tuple[tuple[str, float | None], ...] = ()     # a search's --repeat statistics
    loads: tuple[LoadPoint, ...] | None = None          # "points": a sweep's, a latency point's
    trials: tuple[LoadPoint, ...] = ()                  # a search's trials
    own: LoadPoint | None = None                        # a trial point's result, as a trial
    as_trial: LoadPoint | None = None                   # the whole result read as one trial
    recorded: bool = False                              # a result dict was stored
    profile: Profile | None = None
    datapath_flows: int | None = None
    cni_netconf: str = ""   # a CNI backend's netconf, JSON text (switch_stats.cni_netconf)
    function: str | None = None
    rule_update: RuleUpdate | None = None
    started_at: str | None = None

    @property
    def trials_of_point(self) -> tuple[LoadPoint, ...]:
        """A point's trials as stored: its load points, or a trial's own result."""
        if self.loads is not None:
            return self.loads
        return (self.own,) if self.own is not None else ()


def read_placement(value: Any) -> Placement | None:
    if not isinstance(value, dict):
        return None
    nf = [int(c) for c in _list(value.get("nf_cpus")) if c is not None]
    tester, switch = count(value.get("tester_cpu")), count(value.get("switch_cpu"))
    return Placement(tester, switch, tuple(nf), tester_cpus=_cores(value.get("tester_cpus"), tester),
                     switch_cpus=_cores(value.get("switch_cpus"), switch))


def _cores(value: Any, first: int | None) -> tuple[int, ...]:
    """A side's stored cores, or its one core where the result predates the list."""
    cores = tuple(c for c in (count(x) for x in _list(value)) if c is not None)
    return cores or (() if first is None else (first,))


def _goal(g: dict[str, Any]) -> Goal:
    return Goal(None if g.get("name") is None else str(g.get("name")),
                number(g.get("loss_ratio")), number(g.get("exceed_ratio")),
                number(g.get("relative_width")), number(g.get("final_trial_duration")),
                number(g.get("initial_trial_duration")), number(g.get("duration_sum")))


def _shares(raw: Any, key: str) -> tuple[FunctionShare, ...]:
    return tuple(FunctionShare(str(f[key]), float(f["share"])) for f in _list(raw)
                 if isinstance(f, dict) and key in f and number(f.get("share")) is not None)


def _core(cpu: str, core: dict[str, Any]) -> CoreProfile:
    own = core.get("testbed")
    src = own or core
    return CoreProfile(
        str(cpu), tuple(str(x) for x in _list(core.get("folded"))), bool(core.get("samples")),
        dict(_dict(core.get("categories"))), float(own["share"]) if own else None,
        dict(_dict(own.get("categories"))) if own else {},
        _shares(src.get("top_kernel_functions"), "function"),
        _shares(core.get("top_comms"), "comm"))


def profile_of(r: dict[str, Any]) -> Profile | None:
    """A trial's own profile, or the extra trial's at the NDR."""
    prof, offered = r.get("profile"), r.get("offered_pps")
    if not prof and isinstance(r.get("profile_at_ndr"), dict):
        prof, offered = r["profile_at_ndr"].get("profile"), r["profile_at_ndr"].get("offered_pps")
    if not (isinstance(prof, dict) and prof.get("cores")):
        return None
    check = _dict(prof.get("cpu_check"))
    checks = tuple(CoreCheck(str(cpu), number(c.get("scheduler_busy")),
                             number(c.get("scheduler_softirq")), number(c.get("perf_busy")),
                             bool(c.get("differ")))
                   for cpu, c in sorted(_dict(check.get("per_core")).items()) if isinstance(c, dict))
    return Profile(offered, tuple(_core(cpu, core) for cpu, core in sorted(prof["cores"].items())),
                   checks, number(check.get("cycles_per_packet_scheduler")),
                   number(check.get("cycles_per_packet_perf")), bool(check.get("differ")))


def _rule_update(r: dict[str, Any]) -> RuleUpdate:
    timings = tuple(RuleTiming(str(t.get("mechanism")), int(t.get("rules", 0)),
                               number(t.get("install_median_s")), number(t.get("remove_median_s")))
                    for t in r.get("timings") or [])
    phases = tuple(RulePhase(str(mech), str(ph.get("name")), float(ph.get("offered_pps") or 0),
                             int(ph.get("updates") or 0), int(ph.get("lost") or 0),
                             float(ph.get("loss_ratio") or 0),
                             stored_latency(ph.get("latency_us") or {}))
                   for mech, phs in (r.get("during") or {}).items() for ph in phs)
    return RuleUpdate(timings, phases, int(r.get("update_rules") or 0),
                      number(r.get("update_rate")))


def _cvs(stats: Any) -> tuple[tuple[str, float | None], ...]:
    if not isinstance(stats, dict):
        return ()
    if "cv" in stats:
        return (("", number(stats.get("cv"))),)
    return tuple((k, number(v.get("cv"))) for k, v in stats.items() if isinstance(v, dict))


def measured_of(kind: str, r: dict[str, Any], recorded: bool = True) -> Measured:
    """`recorded`: False for a point without a stored result (`r` then stands in empty)."""
    sv = r.get("switch_versions")
    as_trial = load_point(r)
    stats = _dict(r.get("switch_stats"))
    flows = number(stats.get("datapath_flows"))
    function = r.get("function")
    return Measured(
        switch=None if r.get("switch") is None else str(r["switch"]),
        scenario=None if r.get("scenario") is None else str(r["scenario"]),
        frame_size=r.get("frame_size"), io=text(r.get("io")),
        preset=str(r["preset"]) if r.get("preset") else None, algorithm=text(r.get("algorithm")),
        forwarding_mode=text(r.get("forwarding_mode")),
        switch_versions=tuple((str(k), str(v)) for k, v in sorted(sv.items()))
        if isinstance(sv, dict) else (),
        placement=read_placement(r.get("placement")), tsc_hz=number(r.get("tsc_hz")),
        generator_bound=bool(r.get("generator_bound")),
        generator_ceiling_pps=number(r.get("generator_ceiling_pps")),
        ndr_pps=number(r.get("ndr_pps")), cycles_per_packet=number(r.get("cycles_per_packet")),
        goals=tuple(_goal(g) for g in r.get("goals") or [] if isinstance(g, dict)),
        cvs=_cvs(r.get("statistics")),
        loads=load_points(r["points"]) if isinstance(r.get("points"), list) else None,
        trials=load_points(r.get("trials")),
        own=as_trial if "offered_pps" in r else None, as_trial=as_trial, recorded=recorded,
        profile=profile_of(r), datapath_flows=None if flows is None else int(flows),
        cni_netconf=json.dumps(stats["cni_netconf"], indent=1)
        if isinstance(stats.get("cni_netconf"), dict) else "",
        function=str(function) if function else None,
        rule_update=_rule_update(r) if kind == "rule-update" and r else None,
        started_at=text(r.get("started_at")))
