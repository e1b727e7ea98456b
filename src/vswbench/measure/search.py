"""Throughput search: NDR and PDR in one MLRsearch (FD.io CSIT's reference implementation, PyPI
`MLRsearch`, draft-ietf-bmwg-mlrsearch), or a plain RFC 2544 binary search for comparison.

The presets are goal configurations of MLRsearch (except `binary`):

    fast     CSIT's: 1 s trials, 21 s duration sum per load, exceed ratio 50 %, width 0.5 %
    quick    0.25 s trials, 2 s duration sum per load, exceed ratio 50 %, width 5 % (the quick
             suite, which must compare every switch at two frame sizes in minutes: coarser and
             less patient with a noisy load than fast)
    rfc2544  one 60 s trial per load, no loss, no exceeding trial allowed (RFC 2544 26.1)
    tst009   ETSI GS NFV-TST 009 binary search with loss verification: 60 s trials, a load with
             loss is tried again and passes if the repeat is clean (exceed ratio 50 % over 120 s)
    binary   RFC 2544 binary search, one trial per load, no loss, until the interval is 0.5 %

The measurer runs each trial through a TrialSession (session.py); frames the generator could not
send count as lost, as MLRsearch requires (a load that was not offered was not passed). When the
search ends at the generator's own ceiling the result says "at least X (generator-bound)".
A trial classified "host stall" (hoststall.py) is handled by the stall policy (measure_valid):
`excise` (default) counts it with the loss its stall explains taken out, marked excised;
`repeat` measures it again, at most MAX_STALL_REPEATS times, and at most
MAX_STALL_REPEATS_PER_SEARCH in one search (then a host-stall trial counts as measured, marked).
The result keeps every trial, the number rejected (excised or repeated) and why, and RFC 2544's
NDR with every trial counted (classic_ndr_pps) beside the NDR.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.jsonvalues import as_dict
from vswbench.jsonvalues import as_list
from vswbench.jsonvalues import number
from vswbench.jsonvalues import text
from vswbench.measure.hoststall import MAX_STALL_REPEATS
from vswbench.measure.hoststall import MAX_STALL_REPEATS_PER_SEARCH
from vswbench.measure.hoststall import excisable
from vswbench.measure.hoststall import stall_policy
from vswbench.measure.hoststall import unoffered_load
from vswbench.measure.session import DEFAULT_DRAIN_QUIET
from vswbench.measure.session import SessionTrial
from vswbench.measure.session import TrialSession

GENERATOR_BOUND_FRACTION = 0.97   # a bound this close to the tester's ceiling is the tester's
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Goal:
    name: str                     # "NDR", "PDR"
    loss_ratio: float
    exceed_ratio: float
    relative_width: float
    initial_trial_duration: float
    final_trial_duration: float
    duration_sum: float


@dataclass(frozen=True)
class Preset:
    name: str
    algorithm: str                # "mlrsearch" | "binary"
    goals: tuple[Goal, ...]
    description: str
    drain_s: float = 0.05         # wait for frames in flight after a trial with loss
    drain_quiet_s: float = DEFAULT_DRAIN_QUIET  # ... ending once none came for this long (0: never)
    max_search_s: float = 3600.0


def _goals(exceed: float, width: float, initial: float, final: float, total: float,
           pdr: float = 0.005) -> tuple[Goal, ...]:
    return (Goal("NDR", 0.0, exceed, width, initial, final, total),
            Goal("PDR", pdr, exceed, width, initial, final, total))


PRESETS: dict[str, Preset] = {
    "fast": Preset("fast", "mlrsearch", _goals(0.5, 0.005, 1.0, 1.0, 21.0),
                   "CSIT: 1 s trials, 21 s duration sum, exceed ratio 50 %, width 0.5 %",
                   max_search_s=900.0),
    # width 5 %, not 2: two quick runs of one machine differ by 15 % (MAD of the NDR), and side
    # by side (6 kernel switches, 2 rounds) 5 % took 0.80x the time at NDRs within that noise.
    "quick": Preset("quick", "mlrsearch", _goals(0.5, 0.05, 0.25, 0.25, 2.0),
                    "the quick suite: quarter-second trials, 2 s duration sum, exceed ratio 50 %, "
                    "width 5 %", max_search_s=300.0),
    # the quick suite's since its paired rounds rank each group (campaign/rounds_phase.py): the
    # search gives each switch its conditional throughput and NDR, not the order, so half of
    # quick's duration sum and twice its width leave the rounds their share of the budget
    "brief": Preset("brief", "mlrsearch", _goals(0.5, 0.10, 0.25, 0.25, 1.0),
                    "the quick suite since its rounds rank: quarter-second trials, 1 s duration "
                    "sum per load, exceed ratio 50 %, width 10 %", max_search_s=300.0),
    "rfc2544": Preset("rfc2544", "mlrsearch", _goals(0.0, 0.005, 1.0, 60.0, 60.0),
                      "RFC 2544: a 60 s trial per load, zero loss, no exceeding trial",
                      drain_s=2.0, drain_quiet_s=0.0, max_search_s=7200.0),
    "tst009": Preset("tst009", "mlrsearch", _goals(0.5, 0.005, 1.0, 60.0, 120.0),
                     "NFV-TST 009 binary search with loss verification (60 s trials, one retry)",
                     drain_s=2.0, drain_quiet_s=0.0, max_search_s=7200.0),
    "binary": Preset("binary", "binary",
                     (Goal("NDR", 0.0, 0.0, 0.005, 60.0, 60.0, 60.0),),
                     "RFC 2544 binary search: one 60 s trial per load, zero loss, width 0.5 %",
                     drain_s=2.0, drain_quiet_s=0.0, max_search_s=7200.0),
}


def preset(name: str, *, trial_duration: float | None = None,
           pdr_loss: float | None = None) -> Preset:
    """A preset by name; `trial_duration` overrides the final (and, for binary, every) trial,
    `pdr_loss` the PDR goal's loss ratio (Emmerich et al. Table 2 use 0.10)."""
    if name not in PRESETS:
        raise UsageError(f"--preset {name!r}: choose from {', '.join(PRESETS)}")
    p = PRESETS[name]
    if pdr_loss is not None:
        if not 0 < pdr_loss < 1:
            raise UsageError(f"PDR loss ratio {pdr_loss}: give a ratio in (0, 1), e.g. 0.1")
        p = dataclasses.replace(p, goals=tuple(
            dataclasses.replace(g, loss_ratio=pdr_loss) if g.name == "PDR" else g
            for g in p.goals))
    if trial_duration is not None:
        if trial_duration <= 0:
            raise UsageError("--trial-duration must be positive")
        goals = tuple(dataclasses.replace(
            g, final_trial_duration=trial_duration,
            initial_trial_duration=min(g.initial_trial_duration, trial_duration),
            duration_sum=max(trial_duration, g.duration_sum * trial_duration
                             / g.final_trial_duration)) for g in p.goals)
        p = dataclasses.replace(p, goals=goals)
    return p


@dataclass
class GoalOutcome:
    goal: Goal
    lower_bound_pps: float | None
    upper_bound_pps: float | None
    conditional_throughput_pps: float | None


@dataclass
class SearchResult:
    preset: str
    algorithm: str
    goals: list[GoalOutcome]
    min_load_pps: float
    max_load_pps: float
    trials: list[SessionTrial]
    wall_seconds: float
    session: dict[str, Any]
    generator_ceiling_pps: float | None = None
    notes: list[str] = field(default_factory=list)

    def outcome(self, name: str) -> GoalOutcome | None:
        return next((g for g in self.goals if g.goal.name == name), None)

    def _throughput(self, name: str) -> float | None:
        g = self.outcome(name)
        if g is None:
            return None
        return g.conditional_throughput_pps if g.conditional_throughput_pps is not None \
            else g.lower_bound_pps

    @property
    def ndr_pps(self) -> float | None:
        return self._throughput("NDR")

    @property
    def pdr_pps(self) -> float | None:
        return self._throughput("PDR")

    @property
    def rejected(self) -> list[SessionTrial]:
        """Trials a host stall cost frames, whose loss the NDR and PDR leave out (excised or
        repeated)."""
        return [t for t in self.trials if t.rejected]

    @property
    def excised(self) -> list[SessionTrial]:
        """Rejected trials counted with their stall's loss taken out (policy excise)."""
        return [t for t in self.trials if t.excised]

    @property
    def classic_ndr_pps(self) -> float | None:
        """RFC 2544's NDR with every trial counted, the rejected ones too: the highest load of a
        lossless trial below the lowest load of any trial that lost frames (None if none)."""
        return classic_ndr(self.trials)

    @property
    def mean_overhead_s(self) -> float:
        """The session's mean overhead per trial, seconds (0 when it has none)."""
        return number(self.session.get("mean_s")) or 0.0

    @property
    def headroom(self) -> float | None:
        """The NDR's share of the tester's ceiling (None without either)."""
        return (round(self.ndr_pps / self.generator_ceiling_pps, 4)
                if self.ndr_pps and self.generator_ceiling_pps else None)

    @property
    def trial_seconds(self) -> float:
        return round(sum(t.intended_duration for t in self.trials), 3)

    @property
    def generator_bound(self) -> bool:
        """The NDR is the tester's limit, not the switch's: the search never found a failing load
        that the tester could offer, or the lower bound sits at the tester's own ceiling."""
        ndr = self.outcome("NDR")
        if ndr is None:
            return False
        if ndr.upper_bound_pps is None and ndr.lower_bound_pps is not None:
            return True
        ceiling = self.generator_ceiling_pps
        return bool(ceiling and ndr.lower_bound_pps is not None
                    and ndr.lower_bound_pps >= GENERATOR_BOUND_FRACTION * ceiling)

    def describe_ndr(self) -> str:
        ndr = self.ndr_pps
        if ndr is None:
            return f"below the minimum load {self.min_load_pps:,.0f} pps"
        if self.generator_bound:
            ceiling = self.generator_ceiling_pps or self.max_load_pps
            return (f"at least {ndr:,.0f} pps (generator-bound: the tester's ceiling here is "
                    f"{ceiling:,.0f} pps, so this is not the switch's limit)")
        return f"{ndr:,.0f} pps"

    def to_json(self) -> dict[str, Any]:
        ndr = self.outcome("NDR")
        return {
            "preset": self.preset, "algorithm": self.algorithm,
            "ndr_pps": self.ndr_pps, "pdr_pps": self.pdr_pps,
            "lower_bound_pps": ndr.lower_bound_pps if ndr else None,
            "upper_bound_pps": ndr.upper_bound_pps if ndr else None,
            "generator_bound": self.generator_bound,
            "generator_ceiling_pps": self.generator_ceiling_pps,
            "headroom": self.headroom,
            "goals": [{**dataclasses.asdict(g.goal), "lower_bound_pps": g.lower_bound_pps,
                       "upper_bound_pps": g.upper_bound_pps,
                       "conditional_throughput_pps": g.conditional_throughput_pps}
                      for g in self.goals],
            "min_load_pps": self.min_load_pps, "max_load_pps": self.max_load_pps,
            "trials": [t.to_json() for t in self.trials],
            "trial_count": len(self.trials),
            "trial_seconds": self.trial_seconds, "wall_seconds": round(self.wall_seconds, 3),
            "classic_ndr_pps": self.classic_ndr_pps,
            "trials_rejected": len(self.rejected), "trials_excised": len(self.excised),
            "rejected_reasons": [t.host_stall for t in self.rejected],
            "overhead_per_trial": self.session, "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        """A stored search (to_json's, or a stored point's result: other keys are ignored) read
        back leniently, as TrialResult.from_json reads a trial: a key missing or not of its type
        reads as the default; the trials are SessionTrial.from_json's. The figures to_json
        derives (the NDR, headroom, classic NDR, counts) are derived again, so for a
        SearchResult r, `SearchResult.from_json(r.to_json()).to_json() == r.to_json()`."""
        notes = [n for n in as_list(data.get("notes")) if isinstance(n, str)]
        return cls(text(data.get("preset")) or "", text(data.get("algorithm")) or "",
                   [stored_outcome(g) for g in as_list(data.get("goals")) if isinstance(g, dict)],
                   number(data.get("min_load_pps")) or 0.0, number(data.get("max_load_pps")) or 0.0,
                   [SessionTrial.from_json(t) for t in as_list(data.get("trials"))
                    if isinstance(t, dict)],
                   number(data.get("wall_seconds")) or 0.0,
                   dict(as_dict(data.get("overhead_per_trial"))),
                   number(data.get("generator_ceiling_pps")), notes)


def stored_outcome(data: Mapping[str, Any]) -> GoalOutcome:
    """A stored goal ({**asdict(goal), lower_bound_pps, upper_bound_pps,
    conditional_throughput_pps}): a number missing reads as 0 (a bound as None)."""
    goal = Goal(text(data.get("name")) or "", *(number(data.get(f.name)) or 0.0
                                                for f in dataclasses.fields(Goal)[1:]))
    return GoalOutcome(goal, number(data.get("lower_bound_pps")),
                       number(data.get("upper_bound_pps")),
                       number(data.get("conditional_throughput_pps")))


# -- MLRsearch ---------------------------------------------------------------------------------
def _mlrsearch_goal(goal: Goal) -> Any:
    from MLRsearch import SearchGoal

    return SearchGoal(loss_ratio=goal.loss_ratio, exceed_ratio=goal.exceed_ratio,
                      relative_width=goal.relative_width,
                      initial_trial_duration=goal.initial_trial_duration,
                      final_trial_duration=goal.final_trial_duration,
                      duration_sum=goal.duration_sum, fail_fast=False)


def measurement_of(trial: SessionTrial) -> Any:
    """A session trial as MLRsearch's MeasurementResult (unsent frames count as lost; an
    excised trial's loss, its stall's, does not)."""
    from MLRsearch import MeasurementResult

    return MeasurementResult(
        intended_duration=trial.intended_duration, intended_load=trial.intended_load,
        offered_count=trial.offered_count, forwarding_count=trial.counted_forwarded_count,
        intended_count=trial.offered_count + trial.unsent_count,
        offered_duration=trial.result.duration_s or trial.intended_duration,
        duration_with_overheads=trial.wall_s)


def classic_ndr(trials: list[SessionTrial]) -> float | None:
    """The highest load of a lossless trial below the lowest load of a lossy one (every trial
    counted, unsent frames as lost, host-stall trials too)."""
    lossy = [t.intended_load for t in trials if t.result.lost > 0 or t.unsent_count > 0]
    ceiling = min(lossy) if lossy else float("inf")
    passing = [t.intended_load for t in trials if t.intended_load < ceiling
               and t.result.lost == 0 and t.unsent_count == 0]
    return round(max(passing), 1) if passing else None


def measure_valid(session: TrialSession, load: float, duration: float,
                  progress: Callable[[SessionTrial], None]) -> SessionTrial:
    """One trial at this load; a trial classified "host stall" (hoststall.py: it lost frames
    while a stall of the path's CPUs long enough to explain the loss hit it) is marked rejected
    and, by the stall policy, excised (counted with its stall's loss taken out) or measured
    again, at most MAX_STALL_REPEATS times (the last one counts whatever it is)."""
    trial = session.measure(load, duration)
    progress(trial)
    for _ in range(MAX_STALL_REPEATS):    # a tester that did not offer the load: measured again
        why = unoffered_load(trial.result, trial.intended_count)
        if why is None or session.stall_repeats_left == 0:
            break
        if session.stall_repeats_left is not None:
            session.stall_repeats_left -= 1
        trial.rejected = True
        trial.result.host_stall = trial.result.host_stall or why
        log.info("trial at %.0f pps rejected: %s", load, why)
        trial = session.measure(load, duration)
        progress(trial)
    repeats = 0
    while True:
        if session.stall_policy == "excise" and excisable(trial.result):
            trial.rejected = trial.excised = True
            log.info("trial at %.0f pps: loss excised: %s", load, trial.host_stall)
            return trial
        # policy repeat, or (excise) a trial stalled for too long to excise
        if (trial.host_stall is None or session.stall_repeats_left == 0
                or repeats == MAX_STALL_REPEATS):
            return trial
        if session.stall_repeats_left is not None:
            session.stall_repeats_left -= 1
        repeats += 1
        trial.rejected = True
        log.info("trial at %.0f pps rejected: %s", load, trial.host_stall)
        trial = session.measure(load, duration)
        progress(trial)


def _make_measurer(session: TrialSession, progress: Callable[[SessionTrial], None]) -> Any:
    from MLRsearch import AbstractMeasurer

    class SessionMeasurer(AbstractMeasurer):  # type: ignore[misc]
        def measure(self, intended_duration: float, intended_load: float) -> Any:
            trial = measure_valid(session, float(intended_load), float(intended_duration),
                                  progress)
            return measurement_of(trial)

    return SessionMeasurer()


def _bound(stat: Any) -> float | None:
    return None if stat is None else round(float(stat), 1)


def run_mlrsearch(session: TrialSession, p: Preset, min_load: float, max_load: float,
                  progress: Callable[[SessionTrial], None]) -> list[GoalOutcome]:
    from MLRsearch import Config
    from MLRsearch import MultipleLossRatioSearch

    goals = [_mlrsearch_goal(g) for g in p.goals]
    config = Config(goals=goals, min_load=min_load, max_load=max_load,
                    search_duration_max=p.max_search_s, warmup_duration=None)
    try:
        found = MultipleLossRatioSearch(config=config).search(
            measurer=_make_measurer(session, progress), debug=log.debug)
    except RuntimeError as exc:
        raise VswbenchError(f"MLRsearch stopped: {exc}") from exc
    outcomes = []
    for goal, ml_goal in zip(p.goals, goals):
        r = found[ml_goal]
        outcomes.append(GoalOutcome(goal, _bound(r.relevant_lower_bound),
                                    _bound(r.relevant_upper_bound),
                                    _bound(r.conditional_throughput)))
    return outcomes


# -- RFC 2544 binary search --------------------------------------------------------------------
def run_binary(session: TrialSession, p: Preset, min_load: float, max_load: float,
               progress: Callable[[SessionTrial], None]) -> list[GoalOutcome]:
    """Trial at max_load; then halve the interval between the highest passing and the lowest
    failing load until it is narrower than the goal's relative width (of the upper end)."""
    goal = p.goals[0]

    def passes(load: float) -> bool:
        trial = measure_valid(session, load, goal.final_trial_duration, progress)
        return bool(measurement_of(trial).loss_ratio <= goal.loss_ratio)

    if passes(max_load):
        return [GoalOutcome(goal, max_load, None, max_load)]
    lo, hi = None, max_load
    if passes(min_load):
        lo = min_load
    else:
        return [GoalOutcome(goal, None, min_load, None)]
    while (hi - lo) > goal.relative_width * hi:
        mid = (lo + hi) / 2
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return [GoalOutcome(goal, round(lo, 1), round(hi, 1), round(lo, 1))]


def _pps(value: float | None) -> str:
    return "none" if value is None else f"{value:,.0f} pps"


def search(session: TrialSession, p: Preset, *, min_load: float, max_load: float,
           generator_ceiling: float | None = None,
           progress: Callable[[SessionTrial], None] = lambda t: None) -> SearchResult:
    if not 0 < min_load < max_load:
        raise UsageError(f"search range {min_load:,.0f}..{max_load:,.0f} pps: need "
                         "0 < --min-load < --max-load")
    start = time.monotonic()
    runner = run_binary if p.algorithm == "binary" else run_mlrsearch
    session.stall_repeats_left = MAX_STALL_REPEATS_PER_SEARCH
    session.stall_policy = stall_policy()
    try:
        outcomes = runner(session, p, min_load, max_load, progress)
    finally:
        session.stall_repeats_left = None
    result = SearchResult(p.name, p.algorithm, outcomes, min_load, max_load, list(session.trials),
                          time.monotonic() - start, session.overhead_summary(), generator_ceiling)
    if result.excised:
        result.notes.append(
            f"{len(result.excised)} trial(s) lost frames to a host stall (a CPU of the path "
            "stopped longer than its ring holds); the NDR counts them with the stall's loss "
            "taken out (excised), RFC 2544's with every trial counted is "
            f"{_pps(result.classic_ndr_pps)}")
    elif result.rejected:
        result.notes.append(
            f"{len(result.rejected)} trial(s) lost frames to a host stall (a CPU of the path "
            "stopped longer than its ring holds) and were repeated; the NDR uses the valid "
            f"trials, RFC 2544's with every trial counted is {_pps(result.classic_ndr_pps)}")
    counted = [t for t in result.trials if t.host_stall is not None and not t.rejected]
    if counted:
        result.notes.append(
            f"{len(counted)} more trial(s) lost frames to a host stall after the search's "
            f"{MAX_STALL_REPEATS_PER_SEARCH} repeats were spent, or on their last repeat: they "
            "count as measured (the machine stalls often: see the report's stall line)")
    skipped = sum(t.result.tx_skipped for t in result.trials)
    if skipped:
        longest = max((t.result.tester_gap_max_us or 0) for t in result.trials) / 1000
        gaps = sum(t.result.tester_gaps for t in result.trials)
        result.notes.append(
            f"the tester's CPU did not run its generator {gaps:,} times for more than the engine's "
            f"gap limit (longest {longest:.2f} ms): the {skipped:,} departures due then were "
            "skipped, not sent back to back afterwards into the switch's ring; never sent, "
            "they are neither offered nor lost")
    unsent = [t for t in result.trials if t.unsent_count]
    if unsent:
        result.notes.append(
            f"{len(unsent)} trial(s) could not send every frame (the sender was pushed back by "
            "the path or reached its own ceiling); those frames count as lost")
    return result
