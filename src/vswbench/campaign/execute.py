"""What one point of a campaign needs, whoever runs it (the runner, the agent, ab): its testbed's
plan (`plan_for`, the placements' CPUs), the campaign's up-front check of every testbed
(`check_points`), whether its switch can run here, and its measurement (`execute_point`) through
an open method context."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vswbench.campaign.estimate import testbed_key
from vswbench.campaign.point import Point
from vswbench.campaign.point import search_twin
from vswbench.campaign.run_sockets import socket_plan
from vswbench.campaign.values import SOCKET_KINDS
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.measure.method import WARMUP_RATE
from vswbench.measure.method import MethodOptions
from vswbench.measure.method import MethodPlan
from vswbench.measure.method import find_ndr
from vswbench.measure.method import plan_method
from vswbench.measure.method import profile_at
from vswbench.measure.plan import trial_options
from vswbench.results.points import read_point
from vswbench.results.store import ResultStore
from vswbench.switches.catalog import nf_unavailable
from vswbench.units import FrameSize


def placement_cpus(name: str, scenario_nfs: int) -> tuple[int | None, int | None, str | None]:
    """(tester, switch, nf_cpus) for a placement name on a 2-core machine (Raumer et al.,
    section V), the tester always on core 0: default = the CLI's; s_core = every network function
    and link on one core, core 1 (Raumer's generator is another machine: here the tester keeps
    core 0 to itself; NFs beside a busy-polling tester measured its scheduling, not their cost);
    bi (block-interleaving) = the first half of the chain on core 0, the second half on core 1
    (fewest core switches); pbp (pipeline-by-pipeline interleaving) = network functions alternate
    over both cores (a core switch after every element)."""
    if name in ("default", "unpinned"):   # unpinned: TrialOptions.unpinned (plan_for)
        return None, None, None
    if name == "s_core":
        return 0, 1, "1"
    if name == "pbp":
        return 0, 1, "0,1"
    if name == "bi":
        half = (scenario_nfs + 1) // 2
        cpus = ["0"] * half + ["1"] * (scenario_nfs - half)
        return 0, 1, ",".join(cpus or ["1"])
    raise UsageError(f"placement {name!r}: expected default, s_core, bi, pbp or unpinned")


def _tsc_hz() -> float | None:
    """The TSC frequency the engine measured (cycles per second), recorded with the run so that
    CPU time of any result converts to cycles (the chain cost model needs it)."""
    from vswbench.engine.probe import probe
    from vswbench.errors import VswbenchError

    try:
        return probe().tsc_hz
    except VswbenchError:
        return None


def plan_for(point: Point) -> MethodPlan:
    from vswbench.scenario import Role
    from vswbench.scenario import parse

    nfs = sum(1 for h in parse(point.scenario).hosts if h.role is Role.NF)
    tester, switch, nf = placement_cpus(point.placement, nfs)
    # the warm-up sends every flow at least once (switches that cache per flow install them all)
    warmup = max(1.0, point.flows / WARMUP_RATE)
    trial = trial_options(point.switch, point.scenario, size=FrameSize.parse(point.size),
                          flows=point.flows, burst=point.burst, io=point.io, warmup=warmup,
                          churn=point.churn, tester_cpu=tester, switch_cpu=switch, nf_cpus=nf,
                          options=dict(point.options), unpinned=point.placement == "unpinned")
    shape = None if point.shape_pps is None else str(point.shape_pps)
    return plan_method(MethodOptions(trial, shape))


def check_points(points: list[Point], *, local: bool = True) -> None:
    """Every testbed of the campaign planned as its run plans it (plan_for: the switch's option
    values, the io its ports take, the shaper, the CPUs of the placement), before anything is
    created, by `run` and `run --dry-run` alike: UsageError with every problem, one line each,
    naming a point it concerns. Nothing is probed: io auto is checked as afpacket (auto refuses
    nothing), and with `local` False (the points run on another host) the placement's CPUs are
    the other host's to check."""
    first: dict[tuple[Any, ...], Point] = {}
    for p in points:
        first.setdefault(testbed_key(p), p)
    found: dict[str, list[Point]] = {}
    for p in first.values():
        if p.kind in SOCKET_KINDS:
            try:
                tester, switch, _ = placement_cpus(p.placement, 0)
                socket_plan(p, tester if local else None, switch if local else None)
            except VswbenchError as exc:
                found.setdefault(str(exc).splitlines()[0][:300], []).append(p)
            continue
        planned = replace(p, io="afpacket") if p.io == "auto" else p
        if not local:
            planned = replace(planned, placement="unpinned")
        try:
            plan_for(planned)
        except VswbenchError as exc:
            found.setdefault(str(exc).splitlines()[0][:300], []).append(p)
    if not found:
        return
    lines = [f"study {ps[0].study}, point {ps[0].label}"
             + (f" (and {len(ps) - 1} more)" if len(ps) > 1 else "") + f": {problem}"
             for problem, ps in found.items()]
    if len(lines) == 1:
        raise UsageError(f"campaign: {lines[0]}")
    raise UsageError(f"campaign: {len(lines)} problems:\n" + "\n".join(f"  {x}" for x in lines))


def switch_stats(ctx: Any) -> dict[str, Any]:
    """The switch's own state after a point (OVS: datapath flows, cache hits), if it has any."""
    switch = ctx.testbed.switch
    try:
        return dict(switch.stats()) if switch is not None else {}
    except VswbenchError as exc:
        return {"error": str(exc)}


def unsupported_problem(point: Point) -> str | None:
    """A combination the switch cannot run (the testbed's own check, made before building)."""
    from vswbench.scenario import parse
    from vswbench.switches.catalog import all_switches
    from vswbench.testbed.build import unsupported

    cls = all_switches().get(point.switch)
    if cls is None:
        return None
    from vswbench.measure.plan import jumbo_problem
    from vswbench.units import FrameSize

    scenario = parse(point.scenario)
    problem = unsupported(scenario, cls) or nf_unavailable(dict(point.options))
    if problem or point.kind in SOCKET_KINDS:     # a socket point's size is its message's
        return problem
    return jumbo_problem(cls, dict(point.options), FrameSize.parse(point.size), scenario)


def availability_problem(switch: str) -> str | None:
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    if cls is None:
        return f"unknown switch {switch}"
    avail = cls.availability()
    if avail.ok:
        return None
    return avail.reason + (f" (fix: {avail.fix})" if avail.fix else "")


def _twin_ndr(store: ResultStore, campaign: str, point: Point) -> float | None:
    key = search_twin(point).key
    for stored in store.points(campaign):
        if stored.key == key and stored.status == "done" and stored.result:
            return read_point(stored).headline.ndr_pps or None
    return None


def execute_point(ctx: Any, p: Point, store: ResultStore, campaign: str) -> dict[str, Any]:
    """One point through an open method context; the result JSON to store."""
    ctx.session.trials.clear()
    run = _PointRun(ctx, p, store, campaign,
                    {**ctx.environment(), "point": p.params(), "label": p.label})
    kinds = {"search": run.search, "sweep": run.sweep, "latency": run.latency,
             "trial": run.trial, "b2b": run.b2b, "rule-update": run.rule_update}
    if p.kind not in kinds:
        raise UsageError(f"unknown kind {p.kind!r}")
    return kinds[p.kind]()


class _PointRun:
    """One point's measurement by its kind, in the point's method context (`env`: the context's
    environment with the point's parameters and label)."""

    def __init__(self, ctx: Any, p: Point, store: ResultStore, campaign: str,
                 env: dict[str, Any]) -> None:
        self.ctx, self.p, self.store, self.campaign, self.env = ctx, p, store, campaign, env
        self.session = ctx.session

    def ndr_for(self) -> tuple[float, dict[str, Any] | None]:
        """The NDR of the point's search twin when it is stored, else a search now."""
        ndr = _twin_ndr(self.store, self.campaign, self.p)
        if ndr:
            return ndr, None
        return find_ndr(self.ctx, self.p.preset or "fast", pdr_loss=self.p.pdr_loss)

    def search(self) -> dict[str, Any]:
        from vswbench.measure.search import preset
        from vswbench.measure.search import search

        p, ctx = self.p, self.ctx
        r = search(self.session, preset(p.preset or "fast", pdr_loss=p.pdr_loss), min_load=1000.0,
                   max_load=ctx.max_load(None), generator_ceiling=ctx.ceiling)
        out = {**self.env, **r.to_json(), "ndr": r.describe_ndr(),
               "notes": [*ctx.notes, *r.notes]}
        if p.profile and r.ndr_pps:
            out["profile_at_ndr"] = profile_at(self.session, r.ndr_pps)
        return out

    def sweep(self) -> dict[str, Any]:
        from vswbench.measure.loadcurve import run_sweep
        from vswbench.measure.loadcurve import saturation
        from vswbench.measure.loadcurve import sweep_loads

        loads = sweep_loads(self.ctx.max_load(None), self.p.points or 20)
        points = run_sweep(self.session, loads, self.p.duration or 2.0)
        return {**self.env, "points": [x.to_json() for x in points],
                "saturation": saturation(points),
                "overhead_per_trial": self.session.overhead_summary()}

    def latency(self) -> dict[str, Any]:
        from vswbench.measure.loadcurve import latency_at

        ndr, searched = self.ndr_for()
        points = latency_at(self.session, ndr, self.p.fractions or (0.9,), self.p.duration or 5.0)
        out = {**self.env, "ndr_pps": ndr, "search": searched,
               "points": [x.to_json() for x in points]}
        if self.p.profile:
            out["profile_at_ndr"] = profile_at(self.session, ndr)
        return out

    def trial(self) -> dict[str, Any]:
        p = self.p
        trial = self.session.measure(float(p.rate or 10_000), p.duration or 5.0,
                                     profile=p.profile)
        return {**self.env, **trial.result.to_json(), "session_trial": trial.to_json()}

    def b2b(self) -> dict[str, Any]:
        from vswbench.measure.b2b import B2BConfig
        from vswbench.measure.b2b import back_to_back

        ndr, searched = self.ndr_for()
        cfg = B2BConfig(trials=self.p.trials or 50, max_frames=self.p.max_frames or 100_000,
                        frame_size=self.p.size, tester_pps=self.ctx.ceiling)
        r = back_to_back(self.session, cfg, throughput_pps=ndr)
        return {**self.env, **r.to_json(), "throughput_pps": ndr, "search": searched}

    def rule_update(self) -> dict[str, Any]:
        return _rule_update(self.ctx, self.p, self.env, self.ndr_for)


def _rule_update(ctx: Any, p: Point, env: dict[str, Any], ndr_for: Any) -> dict[str, Any]:
    """Install/remove p.rules rules (3 times per mechanism), then loss and latency quiet vs
    during changes at p.update_rate per second, at p.rate or half the NDR."""
    from vswbench.campaign.spec import RULE_UPDATE_LOAD
    from vswbench.measure.rule_update import during_updates
    from vswbench.measure.rule_update import mechanisms_of
    from vswbench.measure.rule_update import time_updates

    switch = ctx.testbed.switch
    rules = p.rules or 1000
    timings = time_updates(switch, [rules], 3, progress=lambda m: None)
    ndr = None
    load = p.rate
    if load is None:
        ndr, _ = ndr_for()
        load = ndr * RULE_UPDATE_LOAD
    during = {m.name: [x.to_json() for x in during_updates(
        ctx.session, m, float(load), p.duration or 5.0, rules, p.update_rate or 2.0)]
        for m in mechanisms_of(switch)}
    return {**env, "ndr_pps": ndr, "load_pps": load, "update_rules": rules,
            "update_rate": p.update_rate, "timings": [t.to_json() for t in timings],
            "during": during}
