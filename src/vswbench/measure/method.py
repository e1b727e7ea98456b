"""Bodies of `vswbench search | sweep | latency | b2b | calibrate` (cli/methods.py and
cli/latency.py parse and print). Every input is checked before anything is created
(plan_method); then one run scope holds the calibration testbed (veth, if the ceiling is not
cached) and the testbed under test, with one trial session over it for all the method's
trials. A search, sweep, latency or b2b returns what it found twice: typed (SearchRun,
SweepRun, LatencyRun, B2BRun: what the command prints) and as the JSON it emits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from functools import cached_property
from typing import Any

from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.vm_nf import TCG_LABEL
from vswbench.measure.b2b import B2BConfig
from vswbench.measure.b2b import B2BResult
from vswbench.measure.b2b import back_to_back
from vswbench.measure.calibration import Calibration
from vswbench.measure.calibration import baseline_switch
from vswbench.measure.calibration import calibrate
from vswbench.measure.loadcurve import LoadTrial
from vswbench.measure.loadcurve import Saturation
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import TrialPlan
from vswbench.measure.plan import ensure_runnable
from vswbench.measure.plan import jumbo_note
from vswbench.measure.plan import plan_trial
from vswbench.measure.plan import with_options
from vswbench.measure.search import Preset
from vswbench.measure.search import SearchResult
from vswbench.measure.session import DEFAULT_DRAIN_QUIET
from vswbench.measure.session import SessionTrial
from vswbench.measure.session import TrialSession
from vswbench.measure.session import control_capable
from vswbench.measure.session import open_session
from vswbench.measure.stats import Summary
from vswbench.run.ids import RunId
from vswbench.scenario import vm_hosts
from vswbench.switches.catalog import all_switches
from vswbench.switches.catalog import calibration_switches
from vswbench.switches.chain.nf import calibration_target
from vswbench.testbed.build import Testbed
from vswbench.testbed.build import unsupported
from vswbench.testbed.vm import vm_accel
from vswbench.units import STD_FRAME_MAX

WARMUP_RATE = 10_000.0
FALLBACK_MAX_LOAD = 1_000_000.0


@dataclass(frozen=True)
class MethodOptions:
    trial: TrialOptions             # switch, scenario, size, io, flows, burst, CPUs, --option
    shape_pps: str | None = None
    calibrate: bool = True          # measure (or reuse) the tester's ceiling on veth
    recalibrate: bool = False
    restart_engines: bool = False   # fresh engine processes per trial (slow; for comparison)


@dataclass(frozen=True)
class MethodPlan:
    trial: TrialPlan                # its params: the traffic every trial of the method sends
    calibrate: bool
    recalibrate: bool
    restart_engines: bool


def plan_method(opts: MethodOptions) -> MethodPlan:
    """Check every input; nothing is created here."""
    trial_opts = opts.trial
    options = dict(trial_opts.options)
    if opts.shape_pps is not None:
        devices = calibration_switches()
        if trial_opts.switch not in devices:
            raise UsageError(f"--shape-pps is for --switch {' or '.join(devices)} (the calibration "
                             "device)")
        size = trial_opts.traffic.size
        if size.is_imix:
            raise UsageError("--shape-pps: the shaper's byte rate needs one frame size, not IMIX")
        options = with_options(options, {"shape_pps": str(opts.shape_pps),
                                         "shape_frame_size": str(size.bytes)})
    trial_opts = replace(trial_opts, options=options)
    plan = plan_trial(trial_opts)
    return MethodPlan(plan, opts.calibrate, opts.recalibrate, opts.restart_engines)


@dataclass(frozen=True)
class MethodTitle:
    """What a method's printed title names: the switch, scenario, frame size (bytes, or the
    IMIX text) and how the switch forwards."""
    switch: str
    scenario: str
    frame_size: int | str
    forwarding_mode: str


@dataclass
class MethodContext:
    session: TrialSession
    testbed: Testbed
    calibration: Calibration | None
    notes: list[str]

    @cached_property
    def title(self) -> MethodTitle:
        tb = self.testbed
        assert tb.switch is not None
        return MethodTitle(tb.switch_cls.name, tb.scenario.name, self.session.params.frame_size,
                           tb.switch.forwarding_mode())

    def environment(self) -> dict[str, Any]:
        tb, title = self.testbed, self.title
        return {"switch": title.switch, "scenario": title.scenario,
                "frame_size": title.frame_size, "io": self.session.params.io,
                "flows": self.session.params.flows, "burst": self.session.params.burst,
                "churn": self.session.params.churn,
                "forwarding_mode": title.forwarding_mode,
                "mtu": tb.mtu, "mtu_links": dict(tb.mtu_links),
                "placement": asdict(tb.placement), "switch_versions": tb.switch_cls.versions(),
                "session": self.session.kind, "run_id": str(tb.run.id),
                "calibration": self.calibration.to_json() if self.calibration else None,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}

    @property
    def ceiling(self) -> float | None:
        return self.calibration.ceiling_pps if self.calibration else None

    def max_load(self, given: float | None) -> float:
        if given is not None:
            return given
        if self.ceiling:
            return self.ceiling
        self.notes.append(f"no generator calibration: searching up to {FALLBACK_MAX_LOAD:,.0f} pps")
        return FALLBACK_MAX_LOAD


@contextmanager
def method_context(plan: MethodPlan, *, drain: float, drain_quiet: float = DEFAULT_DRAIN_QUIET,
                   progress: Callable[[str], None] = print,
                   run_id: RunId | None = None) -> Iterator[MethodContext]:
    tp = plan.trial
    ensure_runnable(tp.switch_cls)
    from vswbench.run.scope import run_scope

    notes: list[str] = []
    if vm_hosts(tp.scenario) and vm_accel(tp.options) == "tcg":
        notes.append(TCG_LABEL)   # pvp-vm, chain-vm:N under emulation (docs/guide/vm.md)
    with run_scope(run_id=run_id) as run:
        cal = None
        base = all_switches()[baseline_switch(plan.trial.params.io)]
        cal_scenario, cal_placement = calibration_target(
            tp.options, tp.scenario, tp.placement, on_baseline=tp.switch_cls is base)
        if plan.calibrate and control_capable(tp.scenario) and unsupported(tp.scenario, base):
            notes.append(f"no generator calibration for {tp.scenario.name} on the DPDK switches: "
                         f"{unsupported(tp.scenario, base)}")
        elif plan.calibrate and control_capable(tp.scenario):
            progress(f"run {run.id}: generator ceiling on "
                     f"{baseline_switch(plan.trial.params.io)} ({cal_scenario.name}, "
                     f"{plan.trial.params.size})")
            cal = calibrate(run, cal_scenario, plan.trial.params, cal_placement,
                            force=plan.recalibrate, warn=progress)
            progress(f"run {run.id}: generator ceiling {cal.ceiling_pps:,.0f} pps"
                     f"{' (cached)' if cal.cached else ''}")
        elif plan.calibrate:
            notes.append(f"generator calibration is not available for {tp.scenario.name}")
        if tp.params.size.largest > STD_FRAME_MAX:
            progress(f"run {run.id}: {jumbo_note(tp.params)}")
        with Testbed(tp.scenario, tp.switch_cls, run, tp.placement, tp.options,
                     flows=plan.trial.params.flows, mtu=tp.params.size.link_mtu) as tb:
            assert tb.switch is not None
            progress(f"run {run.id}: {tp.switch_cls.name} / {tp.scenario.name} ready "
                     f"({tb.switch.forwarding_mode()})")
            with open_session(tb, plan.trial.params, drain=drain, drain_quiet=drain_quiet,
                              restart=plan.restart_engines) as session:
                if tp.params.warmup > 0:
                    session.warm_up(WARMUP_RATE, tp.params.warmup)
                try:
                    yield MethodContext(session, tb, cal, notes)
                except KeyboardInterrupt:
                    progress(interrupted_summary(session.trials))
                    raise


@dataclass(frozen=True)
class SearchRequest:
    """A `vswbench search` as given: the preset, load range (no highest: the tester's ceiling),
    repetitions and what follows at the NDR (latency at fractions of it, one profiled trial)."""
    preset: Preset
    min_load: float
    max_load: float | None
    repeat: int = 1
    latency_fractions: tuple[float, ...] = ()
    latency_duration: float = 5.0
    profile: bool = False


@dataclass(frozen=True)
class SearchRun:
    """A `vswbench search`: each search, the median one, the NDR over them, the latency points
    and the profiled trial at its NDR, typed; `data` is the same as the JSON emitted."""
    results: list[SearchResult]
    data: dict[str, Any]          # the median search's record, statistics, points at the NDR
    title: MethodTitle
    chosen: SearchResult          # the median search (by NDR): data's record
    ndr_statistics: Summary | None      # the NDR over the searches (None: one search, no NDR)
    latency_at_ndr: list[LoadTrial]     # latency at fractions of the chosen NDR, as requested
    profiled: SessionTrial | None       # the extra trial at the NDR profiled by perf
    notes: list[str]              # the method's and the chosen search's
    warnings: list[str]           # noise warnings over the searches


def search_method(plan: MethodPlan, req: SearchRequest, *, say: Callable[[str], None],
                  progress: Callable[[SessionTrial], None]) -> SearchRun:
    """The body of `vswbench search`: the repeated searches (measure/repeat.py), then latency
    at fractions of the median NDR and one extra profiled trial at it, as requested."""
    from vswbench.measure.loadcurve import latency_at
    from vswbench.measure.repeat import repeat_search
    from vswbench.measure.repeat import search_json

    p = req.preset
    points: list[LoadTrial] = []
    profiled = None
    with method_context(plan, drain=p.drain_s, drain_quiet=p.drain_quiet_s, progress=say) as ctx:
        repeated = repeat_search(ctx.session, p, req.repeat, min_load=req.min_load,
                                 max_load=ctx.max_load(req.max_load),
                                 generator_ceiling=ctx.ceiling, say=say, progress=progress)
        title, chosen = ctx.title, repeated.chosen
        notes = [*ctx.notes, *chosen.notes]
        data = search_json(repeated, ctx.environment(), notes)
        ndr = chosen.ndr_pps
        if req.latency_fractions and ndr:
            points = latency_at(ctx.session, ndr, req.latency_fractions, req.latency_duration,
                                progress=lambda pt: progress(pt.trial))
            data["latency_at_ndr"] = [pt.to_json() for pt in points]
        if req.profile and ndr:
            say(f"profiling one extra trial at the NDR, {ndr:,.0f} pps")
            profiled = profiled_trial(ctx.session, ndr)
            data["profile_at_ndr"] = profile_json(profiled, ndr, PROFILE_SECONDS)
    return SearchRun(repeated.results, data, title, chosen, repeated.summaries.get("ndr_pps"),
                     points, profiled, notes, repeated.warnings)


@dataclass(frozen=True)
class SweepRequest:
    """A `vswbench sweep` as given: how many loads, between which (none given: from the highest
    over the count of points to the tester's ceiling), each trial's duration, repetitions."""
    points: int
    min_load: float | None
    max_load: float | None
    duration: float
    repeat: int = 1


@dataclass(frozen=True)
class SweepRun:
    """A `vswbench sweep`: per load the point that stands for it and where the first
    repetition's curve bends, typed; `data` is the same as the JSON emitted."""
    title: MethodTitle
    points: list[LoadTrial]             # loadcurve.representative_points
    saturation: Saturation | None
    data: dict[str, Any]


def sweep_method(plan: MethodPlan, req: SweepRequest, *, say: Callable[[str], None],
                 progress: Callable[[LoadTrial], None]) -> SweepRun:
    """The body of `vswbench sweep`: the loads checked before anything is built (when the
    highest is given), then the sweep `req.repeat` times in one session."""
    from vswbench.measure.loadcurve import repeated_points_json
    from vswbench.measure.loadcurve import representative_points
    from vswbench.measure.loadcurve import run_sweep
    from vswbench.measure.loadcurve import saturation_of
    from vswbench.measure.loadcurve import sweep_loads

    if req.max_load is not None:
        sweep_loads(req.max_load, req.points, req.min_load)
    with method_context(plan, drain=0.05, progress=say) as ctx:
        loads = sweep_loads(ctx.max_load(req.max_load), req.points, req.min_load)
        runs = [run_sweep(ctx.session, loads, req.duration, progress=progress)
                for _ in range(req.repeat)]
        points_json, warnings = repeated_points_json(runs)
        found, title = saturation_of(runs[0]), ctx.title
        data = {**ctx.environment(), "method": "sweep", "notes": ctx.notes,
                "points": points_json, "saturation": found.to_json() if found else {},
                "repetitions": req.repeat, "warnings": warnings,
                "overhead_per_trial": ctx.session.overhead_summary()}
    return SweepRun(title, representative_points(runs), found, data)


@dataclass(frozen=True)
class LatencyRequest:
    """A `vswbench latency` as given: the NDR (None: found by a `fast` search first), the
    fractions of it, each trial's duration, repetitions, and one profiled trial at the NDR."""
    ndr_pps: float | None
    fractions: tuple[float, ...]
    duration: float
    repeat: int = 1
    profile: bool = False


@dataclass(frozen=True)
class LatencyRun:
    """A `vswbench latency`: the NDR measured at, per fraction the point that stands for it,
    the first repetition's latency kind and the profiled trial, typed; `data` is the same as the
    JSON emitted."""
    title: MethodTitle
    ndr_pps: float
    points: list[LoadTrial]             # loadcurve.representative_points
    latency_kind: str | None            # of the first repetition's first point
    profiled: SessionTrial | None       # the extra trial at the NDR profiled by perf
    data: dict[str, Any]


def latency_method(plan: MethodPlan, req: LatencyRequest, *, say: Callable[[str], None],
                   progress: Callable[[SessionTrial], None]) -> LatencyRun:
    """The body of `vswbench latency`: the NDR (given, or found first in the same session),
    then latency at its fractions `req.repeat` times, then one profiled trial at it."""
    from vswbench.measure.loadcurve import latency_at
    from vswbench.measure.loadcurve import repeated_points_json
    from vswbench.measure.loadcurve import representative_points

    profiled = None
    with method_context(plan, drain=0.05, progress=say) as ctx:
        ndr, search_summary = _ndr_first(ctx, req.ndr_pps, say, progress)
        runs = [latency_at(ctx.session, ndr, req.fractions, req.duration,
                           progress=lambda pt: progress(pt.trial))
                for _ in range(req.repeat)]
        points_json, warnings = repeated_points_json(runs)
        data = {**ctx.environment(), "method": "latency", "ndr_pps": ndr, "search": search_summary,
                "points": points_json, "repetitions": req.repeat, "warnings": warnings,
                "notes": ctx.notes}
        if req.profile:
            say(f"profiling one extra trial at the NDR, {ndr:,.0f} pps")
            profiled = profiled_trial(ctx.session, ndr)
            data["profile_at_ndr"] = profile_json(profiled, ndr, PROFILE_SECONDS)
        title = ctx.title
    return LatencyRun(title, ndr, representative_points(runs),
                      runs[0][0].trial.result.latency_kind, profiled, data)


@dataclass(frozen=True)
class B2BRun:
    """A `vswbench b2b`: the bursts' result over its searches (with the throughput its buffer
    time was corrected by) and the testbed's notes, typed; `data` is the same as the JSON
    emitted."""
    result: B2BResult
    testbed_notes: list[str]
    data: dict[str, Any]


def b2b_method(plan: MethodPlan, cfg: B2BConfig, throughput_pps: float | None, *,
               say: Callable[[str], None],
               progress: Callable[[SessionTrial], None]) -> B2BRun:
    """The body of `vswbench b2b`: the throughput (given, or found first by a `fast` search in
    the same session), then `cfg.trials` burst-length searches at the tester's ceiling (the
    command has checked that the scenario's tester sends and receives)."""
    with method_context(plan, drain=0.05, progress=say) as ctx:
        throughput, search_summary = _ndr_first(ctx, throughput_pps, say, progress)
        cfg = replace(cfg, tester_pps=ctx.ceiling)
        result = back_to_back(ctx.session, cfg, throughput_pps=throughput, progress=say)
        data = {**ctx.environment(), "method": "back-to-back", "throughput_pps": throughput,
                "search": search_summary, **result.to_json(), "notes_testbed": ctx.notes}
    return B2BRun(result, ctx.notes, data)


def _ndr_first(ctx: MethodContext, given: float | None, say: Callable[[str], None],
               progress: Callable[[SessionTrial], None]) -> tuple[float, dict[str, Any] | None]:
    """The NDR given on the command line, or found now by a `fast` search in the same session."""
    if given is not None:
        return given, None
    say("no --ndr given: finding it first with a `fast` search")
    return find_ndr(ctx, "fast", progress=progress)


def interrupted_summary(trials: list[Any]) -> str:
    """What an interrupted method had found: its trials, the highest load without loss and the
    lowest with loss (the bounds a search had reached)."""
    if not trials:
        return "interrupted before the first measured trial"
    clean = [t.intended_load for t in trials if t.result.lost == 0]
    lossy = [t.intended_load for t in trials if t.result.lost > 0]
    lower = f"{max(clean):,.0f} pps without loss" if clean else "no load without loss"
    upper = f"{min(lossy):,.0f} pps with loss" if lossy else "no load with loss"
    return f"interrupted after {len(trials)} trials: highest {lower}, lowest {upper}"


def find_ndr(ctx: MethodContext, preset_name: str = "fast",
             progress: Callable[[Any], None] = lambda t: None,
             pdr_loss: float | None = None) -> tuple[float, dict[str, Any]]:
    """Search the NDR in the context's session (for latency and back-to-back points that were
    given none): the NDR and the search's summary (without its trials); the session's trial list
    is left empty for the measurement that follows."""
    from vswbench.measure.search import preset
    from vswbench.measure.search import search

    found = search(ctx.session, preset(preset_name, pdr_loss=pdr_loss), min_load=1000.0,
                   max_load=ctx.max_load(None), generator_ceiling=ctx.ceiling, progress=progress)
    ctx.session.trials.clear()
    if found.ndr_pps is None:
        raise VswbenchError("the search found no load without loss: nothing to measure at")
    return found.ndr_pps, {k: v for k, v in found.to_json().items() if k != "trials"}



PROFILE_SECONDS = 5.0


def profile_at(session: TrialSession, rate_pps: float,
               duration: float = PROFILE_SECONDS) -> dict[str, Any]:
    """profile_json of profiled_trial."""
    return profile_json(profiled_trial(session, rate_pps, duration), rate_pps, duration)


def profiled_trial(session: TrialSession, rate_pps: float,
                   duration: float = PROFILE_SECONDS) -> SessionTrial:
    """One extra trial at `rate_pps` (a search's NDR), profiled by perf: never one of the
    search's own trials, so profiling cannot move the NDR; the session's trial list is left as
    it was."""
    before = len(session.trials)
    trial = session.measure(rate_pps, duration, profile=True)
    del session.trials[before:]
    return trial


def profile_json(trial: SessionTrial, rate_pps: float, duration: float) -> dict[str, Any]:
    """A profiled trial as stored: its load and duration, headline, profile and CPU
    cross-check."""
    r = trial.result
    return {"offered_pps": rate_pps, "duration_s": duration, "achieved_pps": r.achieved_pps,
            "loss_ratio": r.loss_ratio, "latency_us": r.latency_us,
            "cycles_per_packet": r.cycles_per_packet, "cpu": r.cpu, "profile": r.profile}
