"""Rule-update time, a metric Fang et al. (section 3.5) name and nobody measures:

1. timing: per mechanism of the switch (switches/rules/mechanisms.py) and rule count N, the seconds to
   install N rules in one batch and to remove them in one batch, `repeat` times (medians kept
   with every value);
2. forwarding during updates: under a constant load, a quiet trial, then a trial of the same
   length while a background thread installs and removes `update_rules` rules at `update_rate`
   changes per second; the frames lost and the latency percentiles of both, side by side.

The rules never match the measured traffic, so whatever the update costs the forwarding shows as
loss or latency, not as frames the new rules dropped on purpose.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from vswbench.engine.records import LatencySummary
from vswbench.engine.records import stored_latency
from vswbench.errors import UsageError
from vswbench.measure.session import TrialSession
from vswbench.measure.trial import TrialResult
from vswbench.measure.trial_result import NO_LATENCY
from vswbench.switches.base import RuleMechanism
from vswbench.switches.base import Switch

if TYPE_CHECKING:      # method.py's context holds the testbed (imported when the method runs)
    from vswbench.measure.method import MethodContext
    from vswbench.measure.method import MethodPlan
    from vswbench.measure.method import MethodTitle

MAX_RULES = 32768              # the update rules' destinations (switches/functions.ACL_BASE)
PERCENTILES = ("min", "p50", "p90", "p99", "p999", "max")
UPDATE_RATE_RANGE = (0.1, 100.0)  # changes per second: --update-rate, a campaign's update_rate


@dataclass(frozen=True)
class UpdateTiming:
    mechanism: str
    rules: int
    install_s: list[float]
    remove_s: list[float]

    @property
    def install_median_s(self) -> float:
        return statistics.median(self.install_s)

    @property
    def remove_median_s(self) -> float:
        return statistics.median(self.remove_s)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "install_median_s": round(self.install_median_s, 5),
                "remove_median_s": round(self.remove_median_s, 5),
                "install_rules_per_s": round(self.rules / self.install_median_s, 1)
                if self.install_median_s > 0 else None}


@dataclass(frozen=True)
class Phase:
    """One trial of the comparison: quiet, or during updates."""
    name: str
    offered_pps: float
    tx_frames: int
    lost: int
    loss_ratio: float
    latency_us: dict[str, float | None]
    updates: int = 0               # install + remove batches done during the trial
    update_s: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, name: str, r: TrialResult, updates: int = 0,
           update_s: list[float] | None = None) -> Phase:
        return cls(name, r.offered_pps, r.tx_frames, r.lost, r.loss_ratio,
                   {k: r.latency_us.get(k) for k in PERCENTILES}, updates, update_s or [])

    @property
    def latency(self) -> LatencySummary:
        """latency_us read through the engine's LatencySummary (engine/records.stored_latency:
        a value missing or not a finite number is None)."""
        return stored_latency(self.latency_us) or NO_LATENCY

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["update_median_s"] = (round(statistics.median(self.update_s), 5)
                                   if self.update_s else None)
        del data["update_s"]
        return data


def check_counts(counts: list[int]) -> None:
    for n in counts:
        if not 1 <= n <= MAX_RULES:
            raise UsageError(f"rule count {n}: give 1..{MAX_RULES:,} rules (their destinations "
                             "stay inside 198.19.128.0/17)")


NO_MECHANISM = ("no rule-update mechanism is implemented for it (router: routes and nftables, "
                "ovs: OpenFlow bundles)")


def rule_update_problem(switch_cls: type[Switch]) -> str | None:
    """Why rule updates cannot be measured on this backend (before anything is built), or None."""
    if switch_cls.rule_mechanisms is Switch.rule_mechanisms:
        return f"switch {switch_cls.name}: {NO_MECHANISM}"
    return None


def mechanisms_of(switch: Switch) -> list[RuleMechanism]:
    found = switch.rule_mechanisms()
    if not found:
        raise UsageError(f"switch {switch.name}: {NO_MECHANISM}")
    return found


def time_updates(switch: Switch, counts: list[int], repeat: int,
                 progress: Callable[[str], None] = print) -> list[UpdateTiming]:
    """Install and remove N rules, `repeat` times per count and mechanism."""
    check_counts(counts)
    out = []
    for mech in mechanisms_of(switch):
        for n in counts:
            ins, rem = [], []
            for _ in range(repeat):
                ins.append(round(mech.install(n), 5))
                rem.append(round(mech.remove(), 5))
            timing = UpdateTiming(mech.name, n, ins, rem)
            progress(f"{switch.name} {mech.name}: {n:,} rules install "
                     f"{timing.install_median_s * 1e3:,.1f} ms, remove "
                     f"{timing.remove_median_s * 1e3:,.1f} ms (medians of {repeat})")
            out.append(timing)
    return out


class _Updater(threading.Thread):
    """Installs and removes `rules` rules, one batch every 1/rate seconds, until stopped."""

    def __init__(self, mech: RuleMechanism, rules: int, rate: float) -> None:
        super().__init__(name="vsb-rule-updates", daemon=True)
        self.mech, self.rules, self.period = mech, rules, 1.0 / rate
        self.stop = threading.Event()
        self.times: list[float] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        installed = False
        next_at = time.monotonic()
        try:
            while not self.stop.is_set():
                self.times.append(self.mech.remove() if installed else self.mech.install(self.rules))
                installed = not installed
                next_at += self.period
                self.stop.wait(max(0.0, next_at - time.monotonic()))
            if installed:
                self.mech.remove()
        except BaseException as exc:   # reported by the caller, after the trial
            self.error = exc


def during_updates(session: TrialSession, mech: RuleMechanism, rate_pps: float, duration: float,
                   update_rules: int, update_rate: float) -> list[Phase]:
    """A quiet trial, then one with updates running, both at `rate_pps` for `duration` s."""
    check_counts([update_rules])
    if not 0 < update_rate <= 100:
        raise UsageError(f"--update-rate {update_rate:g}: give 0 < changes per second <= 100")
    session.warm_up(rate_pps, 0.5)
    quiet = session.measure(rate_pps, duration).result
    updater = _Updater(mech, update_rules, update_rate)
    updater.start()
    try:
        busy = session.measure(rate_pps, duration).result
    finally:
        updater.stop.set()
        updater.join(timeout=120)
    if updater.error is not None:
        raise updater.error
    return [Phase.of("quiet", quiet),
            Phase.of(f"during {mech.name}", busy, len(updater.times), updater.times)]


@dataclass(frozen=True)
class RuleUpdateRequest:
    """A `vswbench rule-update` as given (the counts checked)."""
    counts: list[int]
    repeat: int
    load: float | None          # pps during the comparison; None: `fraction` % of the NDR
    fraction: int
    update_rules: int
    update_rate: float
    duration: float
    no_load: bool


@dataclass(frozen=True)
class RuleUpdateRun:
    """A `vswbench rule-update`, typed (what the command prints); `data` is the same as the
    JSON emitted."""
    title: MethodTitle                   # the switch the rules were updated on
    timings: list[UpdateTiming]
    phases: dict[str, list[Phase]]       # per mechanism: quiet, then during updates
    load: float | None
    data: dict[str, Any]


def rule_update_method(plan: MethodPlan, req: RuleUpdateRequest,
                       say: Callable[[str], None]) -> RuleUpdateRun:
    """The body of `vswbench rule-update`: the update timings per mechanism and count, then
    (unless `no_load`) forwarding quiet and during updates per mechanism."""
    from vswbench.measure.method import method_context

    problem = rule_update_problem(plan.trial.switch_cls)
    if problem:
        raise UsageError(problem)
    with method_context(plan, drain=0.05, progress=say) as ctx:
        switch = ctx.testbed.switch
        assert switch is not None
        mechanisms_of(switch)                    # refuse before measuring anything
        timings = time_updates(switch, req.counts, req.repeat, progress=say)
        ndr, load, phases = (None, req.load, {}) if req.no_load else \
            _forwarding(ctx, switch, req, say)
        data = {**ctx.environment(), "method": "rule-update", "ndr_pps": ndr, "load_pps": load,
                "update_rules": req.update_rules, "update_rate": req.update_rate,
                "timings": [t.to_json() for t in timings],
                "during": {m: [p.to_json() for p in ps] for m, ps in phases.items()}}
        title = ctx.title
    return RuleUpdateRun(title, timings, phases, load, data)


def _forwarding(ctx: MethodContext, switch: Switch, req: RuleUpdateRequest,
                say: Callable[[str], None]) -> tuple[float | None, float, dict[str, list[Phase]]]:
    """The NDR (searched when no load was given), the load, and each mechanism's phases."""
    from vswbench.measure.method import find_ndr

    ndr, load = None, req.load
    if load is None:
        say("no --rate: finding the NDR first with a `quick` search")
        ndr, _ = find_ndr(ctx, "quick")
        load = ndr * req.fraction / 100
    phases: dict[str, list[Phase]] = {}
    for mech in switch.rule_mechanisms():
        say(f"{mech.name}: quiet, then {req.update_rules:,} rules changed "
            f"{req.update_rate:g}/s, at {load:,.0f} pps")
        phases[mech.name] = during_updates(ctx.session, mech, load, req.duration,
                                           req.update_rules, req.update_rate)
    return ndr, load, phases
