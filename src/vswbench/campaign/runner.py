"""`vswbench run`: execute a campaign (campaign/spec.py) point by point into a results store
(results/store.py).

Points that share a testbed (switch, scenario, placement, options, frame size, flows, burst, I/O)
run through one testbed and one trial session, in the spec's order. Every point is written to the
store the moment it ends; a rerun of the same spec skips the points already done, so a killed run
loses at most the point it was measuring. A switch that cannot run here is recorded as skipped,
with its reason. Latency and back-to-back points take the NDR of their search twin from the store
(searching first only if the twin is not there).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path
from typing import Any

from vswbench.campaign.estimate import (EST_SECONDS, MAX_POINTS_WITHOUT_YES,  # noqa: F401
                                       MAX_SECONDS_WITHOUT_YES, PROFILE_SECONDS,
                                       QUICK_SEARCH_SECONDS, TESTBED_SECONDS, CampaignSize,
                                       campaign_size, estimate, estimates, testbed_key)
from vswbench.campaign.identity import check_campaign
from vswbench.campaign.run_sockets import run_socket_group, socket_plan
from vswbench.campaign.spec import CampaignSpec, Point, expand, search_twin
from vswbench.campaign.values import SOCKET_KINDS
from vswbench.errors import UsageError, VswbenchError, require_root
from vswbench.measure.method import (WARMUP_RATE, MethodOptions, MethodPlan, find_ndr,
                                     method_context, plan_method, profile_at)
from vswbench.measure.plan import trial_options
from vswbench.results.export import point_record
from vswbench.results.points import read_point
from vswbench.results.store import STORE_NAME, ResultStore, StoredPoint, now
from vswbench.saferead import read_text
from vswbench.safefile import (WriteFailed, append_line, check_output_dir, open_regular,
                               refuse_unsafe, repair_lines, write_text)
from vswbench.switches.catalog import nf_unavailable
from vswbench.units import FrameSize
JSONL_NAME = "results.jsonl"     # one export.point_record per finished point, appended as it ends


@dataclass
class Progress:
    """What the CLI shows: points done/total and an ETA from per-kind estimates."""
    total: int
    done: int = 0
    skipped_before: int = 0
    failed: int = 0
    remaining_s: float = 0.0
    started: float = field(default_factory=time.monotonic)


@dataclass
class RunSummary:
    run_id: str
    store: Path
    done: int
    skipped: int
    failed: int
    already_done: int
    seconds: float



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
    from vswbench.scenario import Role, parse

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


class CampaignRunner:
    local_cpus = True                 # the placements' CPUs are this machine's (remote.py: not)

    def __init__(self, spec: CampaignSpec, out_dir: Path,
                 on_progress: Callable[[Progress, str], None] = lambda p, m: None,
                 on_point: Callable[[StoredPoint], None] = lambda p: None, *,
                 append: bool = False) -> None:
        """append: add to a store that holds another campaign or this one with another spec
        (refused otherwise: campaign/identity.py)."""
        self.spec = spec
        self.out_dir = out_dir
        self.append = append
        self._jsonl_fd: int | None = None
        self.on_progress = on_progress
        self.on_point = on_point          # each point as stored, the moment it is
        self.points = expand(spec)
        self._estimates = estimates(self.points)
        # wall time of each search measured, per switch (the testbed's build not included)
        self.search_seconds: dict[str, list[float]] = defaultdict(list)
        self.decide_rounds = 0

    def run(self) -> RunSummary:
        from vswbench.run.ids import new_run_id

        check_points(self.points, local=self.local_cpus)
        require_root("a campaign")
        check_output_dir(self.out_dir, "--out")
        refuse_unsafe(self.out_dir / JSONL_NAME)       # a file in it: no flag named it
        store_path = self.out_dir / STORE_NAME
        start = time.monotonic()
        with ResultStore(store_path) as store, self._jsonl(store):
            finished = store.finished_keys(self.spec.name)
            todo = [p for p in self.points if p.key not in finished]
            self.run_id = new_run_id()
            run_id = str(self.run_id)
            prog = Progress(len(self.points), skipped_before=len(self.points) - len(todo),
                            remaining_s=sum(self._estimates[p.key] for p in todo))
            fingerprint = self.fingerprint_json()        # the probe: before the run is begun
            status = "failed"
            store.begin_run(run_id, self.spec, fingerprint)
            try:                                         # nothing between: a signal ends it
                counts = self._run_points(store, run_id, todo, prog)
                if self.spec.budget_s is not None:
                    extra = self._decide(store, run_id, prog, start + self.spec.budget_s)
                    counts = tuple(a + b for a, b in zip(counts, extra))  # type: ignore[assignment]
                status = "done"
            except KeyboardInterrupt:
                status = "interrupted"
                raise
            finally:
                try:
                    store.end_run(run_id, status)
                except WriteFailed:
                    if status == "done":       # else the first failure is the one to report
                        raise
        done, skipped, failed = counts
        return RunSummary(run_id, store_path, done, skipped, failed, prog.skipped_before,
                          time.monotonic() - start)

    @contextlib.contextmanager
    def _jsonl(self, store: ResultStore) -> Iterator[None]:
        """First: the store holds this campaign with this spec, or --append (identity.py:
        refused before anything is measured). Then results.jsonl beside the store, open for
        appending whole lines: a partial last line (a full disk, a crash) is cut off, and the
        file is written again from the store when points are missing from it."""
        check_campaign(store, self.spec.name, self.spec.text, append=self.append)
        path = self.out_dir / JSONL_NAME
        repair_lines(path)
        if not _jsonl_complete(path, store):
            write_text(path, "".join(json.dumps(point_record(p), default=str) + "\n"
                                     for p in store.points()))
        self._jsonl_fd = open_regular(path, append=True)
        try:
            yield
        finally:
            os.close(self._jsonl_fd)
            self._jsonl_fd = None

    def fingerprint_json(self) -> dict[str, Any]:
        """The machine the run measures on (campaign/remote.py adds the DUT host's)."""
        from vswbench.host.sysinfo import fingerprint

        return fingerprint(tsc_hz=_tsc_hz()).to_json()

    def _run_points(self, store: ResultStore, run_id: str, todo: list[Point],
                    prog: Progress) -> tuple[int, int, int]:
        done = skipped = failed = 0
        for _, group_iter in groupby(todo, key=testbed_key):
            group = list(group_iter)
            head = group[0]
            avail = _availability(head.switch) or _unsupported(head)
            if avail is not None:
                for p in group:
                    self._record(store, run_id, p, None, "skipped", avail, None)
                    skipped += 1
                    self._advance(prog, p, f"skipped {p.label}: {avail}")
                continue
            try:
                for p, outcome in self._run_group(store, group):
                    status, result, error, started = outcome
                    self._record(store, run_id, p, result, status, error, started)
                    done += status == "done"
                    failed += status == "failed"
                    self._advance(prog, p, f"{status} {p.label}" + (f": {error}" if error else ""))
            except WriteFailed:            # a full disk: stop here, the points so far are kept
                raise
            except VswbenchError as exc:   # the testbed itself failed: the rest of the group too
                recorded = set(store.finished_keys(self.spec.name, ("done", "failed")))
                for p in group:
                    if p.key not in recorded:
                        self._record(store, run_id, p, None, "failed", f"testbed: {exc}", None)
                        failed += 1
                        self._advance(prog, p, f"failed {p.label}: {exc}")
        return done, skipped, failed

    def _decide(self, store: ResultStore, run_id: str, prog: Progress,
                deadline: float) -> tuple[int, int, int]:
        """The decide phase (campaign/decide_phase.py): rounds of one more repetition of every
        setup in an undecided pair, shuffled, while the budget's deadline allows one more
        search (that switch's mean search time so far, else QUICK_SEARCH_SECONDS, plus a
        testbed's build)."""
        import random

        from vswbench.campaign.decide_phase import next_round, open_pairs

        rng = random.Random(run_id)
        done = skipped = failed = 0
        while True:
            stored = store.points(self.spec.name)
            opens = open_pairs(self.points, stored)
            batch = next_round(opens, stored, rng)
            if not batch:
                break
            self.decide_rounds += 1
            for p in batch:
                took = self.search_seconds.get(p.switch)
                per_search = (statistics.fmean(took) if took else QUICK_SEARCH_SECONDS) + \
                    TESTBED_SECONDS
                if time.monotonic() + per_search > deadline:
                    return done, skipped, failed
                self._estimates[p.key] = per_search
                prog.total += 1
                prog.remaining_s += per_search
                d, s, f = self._run_points(store, run_id, [p], prog)
                done, skipped, failed = done + d, skipped + s, failed + f
                if f or s:               # it cannot be measured here: stop repeating
                    return done, skipped, failed
        return done, skipped, failed

    def _record(self, store: ResultStore, run_id: str, p: Point, result: dict[str, Any] | None,
                status: str, error: str | None, started: str | None) -> None:
        """Store the point, append its record to results.jsonl, hand it to on_point."""
        store.record_point(run_id, p, result, status, error, started=started)
        stored = StoredPoint(self.spec.name, run_id, p.key, p.label, p.params(), p.kind, status,
                             result, error, started, now())
        if self._jsonl_fd is not None:
            append_line(self._jsonl_fd, self.out_dir / JSONL_NAME,
                        json.dumps(point_record(stored), default=str))
        self.on_point(stored)

    def _advance(self, prog: Progress, p: Point, message: str) -> None:
        prog.done += 1
        prog.remaining_s = max(0.0, prog.remaining_s - self._estimates[p.key])
        self.on_progress(prog, message)

    def _run_group(self, store: ResultStore, group: list[Point]
                   ) -> Iterator[tuple[Point, tuple[str, Any, str | None, str | None]]]:
        if group[0].kind in SOCKET_KINDS:
            tester, switch, _ = placement_cpus(group[0].placement, 0)
            plans = [socket_plan(p, tester, switch) for p in group]
            yield from run_socket_group(group, plans, self.run_id)
            return
        plan = plan_for(group[0])
        with method_context(plan, drain=0.05, progress=lambda m: None,
                            run_id=self.run_id) as ctx:
            for p in group:
                started = now()
                began = time.monotonic()
                try:
                    result = execute_point(ctx, p, store, self.spec.name)
                    if p.kind == "search":
                        self.search_seconds[p.switch].append(time.monotonic() - began)
                    stats = switch_stats(ctx)
                    yield p, ("done", {**result, "switch_stats": stats} if stats else result,
                              None, started)
                except (UsageError, WriteFailed):
                    raise
                except VswbenchError as exc:
                    yield p, ("failed", None, str(exc), started)


def _jsonl_complete(path: Path, store: ResultStore) -> bool:
    """Does results.jsonl hold a readable line for every point of the store (the last
    outcome of each)?"""
    wanted = {(p.campaign, p.key, p.status) for p in store.points()}
    if not wanted:
        return True
    try:
        lines = read_text(path, "JSON lines").splitlines()      # bounded, regular file only
    except UsageError:
        return False
    seen = set()
    for line in lines:
        try:
            record = json.loads(line)
            seen.add((record["campaign"], record["point_key"], record["status"]))
        except (ValueError, KeyError, TypeError):
            return False
    return wanted <= seen


def switch_stats(ctx: Any) -> dict[str, Any]:
    """The switch's own state after a point (OVS: datapath flows, cache hits), if it has any."""
    switch = ctx.testbed.switch
    try:
        return dict(switch.stats()) if switch is not None else {}
    except VswbenchError as exc:
        return {"error": str(exc)}


def _unsupported(point: Point) -> str | None:
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


def _availability(switch: str) -> str | None:
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
    from vswbench.measure.loadcurve import latency_at, run_sweep, saturation, sweep_loads
    from vswbench.measure.search import preset, search

    session = ctx.session
    session.trials.clear()
    env = {**ctx.environment(), "point": p.params(), "label": p.label}

    def ndr_for() -> tuple[float, dict[str, Any] | None]:
        ndr = _twin_ndr(store, campaign, p)
        if ndr:
            return ndr, None
        return find_ndr(ctx, p.preset or "fast", pdr_loss=p.pdr_loss)

    if p.kind == "search":
        r = search(session, preset(p.preset or "fast", pdr_loss=p.pdr_loss), min_load=1000.0,
                   max_load=ctx.max_load(None), generator_ceiling=ctx.ceiling)
        out = {**env, **r.to_json(), "ndr": r.describe_ndr(), "notes": [*ctx.notes, *r.notes]}
        if p.profile and r.ndr_pps:
            out["profile_at_ndr"] = profile_at(session, r.ndr_pps)
        return out
    if p.kind == "sweep":
        loads = sweep_loads(ctx.max_load(None), p.points or 20)
        points = run_sweep(session, loads, p.duration or 2.0)
        return {**env, "points": [x.to_json() for x in points], "saturation": saturation(points),
                "overhead_per_trial": session.overhead_summary()}
    if p.kind == "latency":
        ndr, searched = ndr_for()
        points = latency_at(session, ndr, p.fractions or (0.9,), p.duration or 5.0)
        out = {**env, "ndr_pps": ndr, "search": searched,
               "points": [x.to_json() for x in points]}
        if p.profile:
            out["profile_at_ndr"] = profile_at(session, ndr)
        return out
    if p.kind == "trial":
        trial = session.measure(float(p.rate or 10_000), p.duration or 5.0, profile=p.profile)
        return {**env, **trial.result.to_json(), "session_trial": trial.to_json()}
    if p.kind == "b2b":
        from vswbench.measure.b2b import B2BConfig, back_to_back

        ndr, searched = ndr_for()
        cfg = B2BConfig(trials=p.trials or 50, max_frames=p.max_frames or 100_000,
                        frame_size=p.size,
                        tester_pps=ctx.ceiling)
        r = back_to_back(session, cfg, throughput_pps=ndr)
        return {**env, **r.to_json(), "throughput_pps": ndr, "search": searched}
    if p.kind == "rule-update":
        return _rule_update(ctx, p, env, ndr_for)
    raise UsageError(f"unknown kind {p.kind!r}")


def _rule_update(ctx: Any, p: Point, env: dict[str, Any], ndr_for: Any) -> dict[str, Any]:
    """Install/remove p.rules rules (3 times per mechanism), then loss and latency quiet vs
    during changes at p.update_rate per second, at p.rate or half the NDR."""
    from vswbench.campaign.spec import RULE_UPDATE_LOAD
    from vswbench.measure.rule_update import during_updates, mechanisms_of, time_updates

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
