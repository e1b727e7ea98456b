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
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from itertools import groupby
from pathlib import Path
from typing import Any

from vswbench.campaign.estimate import QUICK_SEARCH_SECONDS
from vswbench.campaign.estimate import TESTBED_SECONDS
from vswbench.campaign.estimate import estimates
from vswbench.campaign.estimate import testbed_key
from vswbench.campaign.execute import _tsc_hz
from vswbench.campaign.execute import availability_problem
from vswbench.campaign.execute import check_points
from vswbench.campaign.execute import execute_point
from vswbench.campaign.execute import placement_cpus
from vswbench.campaign.execute import plan_for
from vswbench.campaign.execute import switch_stats
from vswbench.campaign.execute import unsupported_problem
from vswbench.campaign.grouped import run_grouped
from vswbench.campaign.identity import check_campaign
from vswbench.campaign.point import Point
from vswbench.campaign.run_sockets import run_socket_group
from vswbench.campaign.run_sockets import socket_plan
from vswbench.campaign.spec import CampaignSpec
from vswbench.campaign.spec import expand
from vswbench.campaign.values import SOCKET_KINDS
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.errors import require_root
from vswbench.measure.method import method_context
from vswbench.results.export import point_record
from vswbench.results.store import STORE_NAME
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.results.store import now
from vswbench.safefile import WriteFailed
from vswbench.safefile import append_line
from vswbench.safefile import check_output_dir
from vswbench.safefile import open_regular
from vswbench.safefile import refuse_unsafe
from vswbench.safefile import repair_lines
from vswbench.safefile import write_text
from vswbench.saferead import read_text

JSONL_NAME = "results.jsonl"     # one export.point_record per finished point, appended as it ends


@dataclass
class Progress:
    """What the CLI shows: points done of the spec's total (known from the start, never
    growing: the decide phase's repetitions are counted apart, in `repeats`) and an ETA
    (`eta_s`) from per-kind estimates, the rounds' share still to come and the budget."""
    total: int
    done: int = 0
    skipped_before: int = 0
    failed: int = 0
    remaining_s: float = 0.0        # the points still to measure, estimated
    started: float = field(default_factory=time.monotonic)
    deadline: float | None = None   # the budget's end (time.monotonic), if any
    rounds_left_s: float = 0.0      # the fewest rounds of the groups still to pair, estimated
    repeats: int = 0                # decide-phase repetitions measured (beyond `total`)

    def eta_s(self) -> float:
        """Seconds left: the points and rounds still to come, and no less than the budget's
        remainder (a campaign with a budget spends it)."""
        left = self.remaining_s + self.rounds_left_s
        if self.deadline is not None:
            left = max(left, self.deadline - time.monotonic())
        return max(0.0, left)


@dataclass
class RunSummary:
    run_id: str
    store: Path
    done: int
    skipped: int
    failed: int
    already_done: int
    seconds: float



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
        self._keys = {p.key for p in self.points}
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
                            remaining_s=sum(self._estimates[p.key] for p in todo),
                            deadline=None if self.spec.budget_s is None
                            else start + self.spec.budget_s)
            self.on_progress(prog, "started")
            fingerprint = self.fingerprint_json()        # the probe: before the run is begun
            status = "failed"
            store.begin_run(run_id, self.spec, fingerprint)
            try:                                         # nothing between: a signal ends it
                if self.spec.budget_s is not None and self.local_cpus:
                    counts = run_grouped(self, store, run_id, self.points, todo, prog,
                                         start + self.spec.budget_s)
                else:
                    counts = self._run_points(store, run_id, todo, prog)
                if self.spec.budget_s is not None and not self.local_cpus:
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
            avail = availability_problem(head.switch) or unsupported_problem(head)
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

    @property
    def campaign(self) -> str:
        return self.spec.name

    def _say(self, prog: Progress, message: str) -> None:
        """A progress line that advances no point (the rounds)."""
        self.on_progress(prog, message)

    def _decide(self, store: ResultStore, run_id: str, prog: Progress,
                deadline: float) -> tuple[int, int, int]:
        """The decide phase of a campaign run on another host (campaign/decide_phase.py; here,
        campaign/grouped.py pairs a group's switches in rounds): one more repetition of every
        setup in an undecided pair, shuffled, while the budget's deadline allows one more
        search (that switch's mean search time so far, else QUICK_SEARCH_SECONDS, plus a
        testbed's build)."""
        import random

        from vswbench.campaign.decide_phase import next_round
        from vswbench.campaign.decide_phase import open_pairs

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
        if p.key in self._keys:
            prog.done += 1
        else:                            # a decide-phase repetition: not one of the spec's
            prog.repeats += 1
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


