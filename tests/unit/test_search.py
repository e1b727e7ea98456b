"""search.py: presets, the RFC 2544 binary search and MLRsearch over a simulated DUT.

The sessions here are test doubles of a DUT with a known zero-loss rate, never measurements:
a trial at rate r loses (r - limit) x duration frames when r > limit, and a tester that cannot
offer more than `ceiling` pps leaves the rest unsent.
"""
from dataclasses import dataclass
from dataclasses import field

import pytest

from vswbench.engine.stalls import Stall
from vswbench.engine.stalls import summarize
from vswbench.errors import UsageError
from vswbench.measure.hoststall import MAX_STALL_REPEATS
from vswbench.measure.search import PRESETS
from vswbench.measure.search import classic_ndr
from vswbench.measure.search import measurement_of
from vswbench.measure.search import preset
from vswbench.measure.search import search
from vswbench.measure.session import SessionTrial


@dataclass
class FakeResult:
    """The fields of trial.TrialResult the search reads."""
    tx_frames: int
    lost: int
    duration_s: float
    latency_us: dict
    cycles_per_packet: float | None = None
    switch_useful_cycles_per_packet: float | None = None
    counters_agree: bool = True
    host_stall: str | None = None
    tx_skipped: int = 0
    tester_gaps: int = 0
    tester_gap_max_us: float | None = None
    stalls: object = None
    spec: dict = field(default_factory=dict)
    placement: dict = field(default_factory=dict)
    engines: dict = field(default_factory=dict)

    @property
    def rx_frames(self) -> int:
        return self.tx_frames - self.lost

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_frames if self.tx_frames else 0.0

    @property
    def tx_pps(self) -> float:
        return self.tx_frames / self.duration_s

    @property
    def achieved_pps(self) -> float:
        return self.rx_frames / self.duration_s


class SimulatedDut:
    kind = "simulated"

    def __init__(self, limit: float, ceiling: float = 1e9) -> None:
        self.limit, self.ceiling = limit, ceiling
        self.trials: list[SessionTrial] = []

    def measure(self, rate_pps: float, duration: float, *, count=None) -> SessionTrial:
        intended = round(rate_pps * duration)
        sent = min(intended, round(self.ceiling * duration))
        lost = max(0, round((min(rate_pps, self.ceiling) - self.limit) * duration))
        t = SessionTrial(FakeResult(sent, lost, duration, {}), rate_pps, duration,  # type: ignore
                         intended, duration + 0.01)
        self.trials.append(t)
        return t

    def overhead_summary(self):
        return {"session": self.kind, "trials": len(self.trials)}


def test_presets_are_the_issue_s_goal_configurations():
    fast = PRESETS["fast"]
    assert fast.algorithm == "mlrsearch"
    ndr, pdr = fast.goals
    assert (ndr.loss_ratio, ndr.exceed_ratio, ndr.relative_width) == (0.0, 0.5, 0.005)
    assert (ndr.final_trial_duration, ndr.duration_sum) == (1.0, 21.0)
    assert pdr.loss_ratio == 0.005
    rfc = PRESETS["rfc2544"].goals[0]
    assert (rfc.final_trial_duration, rfc.exceed_ratio, rfc.loss_ratio) == (60.0, 0.0, 0.0)
    tst = PRESETS["tst009"].goals[0]
    assert tst.exceed_ratio == 0.5 and tst.duration_sum == 2 * tst.final_trial_duration
    assert PRESETS["binary"].algorithm == "binary"


def test_trial_duration_override_and_unknown_preset():
    p = preset("binary", trial_duration=2.0)
    assert p.goals[0].final_trial_duration == 2.0 and p.goals[0].initial_trial_duration <= 2.0
    assert preset("fast", trial_duration=2.0).goals[0].duration_sum == 42.0
    with pytest.raises(UsageError):
        preset("slow")
    with pytest.raises(UsageError):
        preset("fast", trial_duration=0)


@pytest.mark.parametrize("name", ["fast", "rfc2544", "tst009", "binary"])
def test_search_finds_a_known_limit(name):
    dut = SimulatedDut(limit=123_456)
    p = preset(name, trial_duration=1.0)
    r = search(dut, p, min_load=1_000, max_load=400_000)   # type: ignore[arg-type]
    ndr = r.outcome("NDR")
    assert ndr is not None and ndr.lower_bound_pps <= 123_456 <= ndr.upper_bound_pps
    assert r.ndr_pps == pytest.approx(123_456, rel=0.006)
    assert not r.generator_bound
    data = r.to_json()
    for key in ("ndr_pps", "pdr_pps", "lower_bound_pps", "upper_bound_pps", "trials",
                "trial_seconds", "generator_bound"):
        assert key in data
    assert data["trial_seconds"] == sum(t["intended_s"] for t in data["trials"])
    if name != "binary":
        assert r.pdr_pps >= r.ndr_pps
    else:
        assert r.pdr_pps is None


def test_binary_search_trial_count_is_logarithmic():
    dut = SimulatedDut(limit=50_000)
    r = search(dut, preset("binary", trial_duration=1.0), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)
    # two end points, then halvings until the interval is 0.5 % of ~50k: log2(399k / 250) ~ 10.6
    assert len(r.trials) == 2 + 11


def test_a_tester_slower_than_the_switch_is_reported_generator_bound():
    dut = SimulatedDut(limit=10e6, ceiling=300_000)
    r = search(dut, preset("fast"), min_load=1_000, max_load=400_000,  # type: ignore[arg-type]
               generator_ceiling=300_000)
    assert r.generator_bound
    assert r.describe_ndr().startswith("at least")
    assert any("could not send" in n for n in r.notes)


def test_a_switch_limit_well_below_the_ceiling_is_not_generator_bound():
    dut = SimulatedDut(limit=100_000, ceiling=300_000)
    r = search(dut, preset("fast"), min_load=1_000, max_load=300_000,  # type: ignore[arg-type]
               generator_ceiling=300_000)
    assert not r.generator_bound and r.describe_ndr() == f"{r.ndr_pps:,.0f} pps"


def test_unsent_frames_count_as_loss():
    t = SessionTrial(FakeResult(90_000, 0, 1.0, {}), 100_000, 1.0, 100_000, 1.05)  # type: ignore
    m = measurement_of(t)
    assert t.unsent_count == 10_000 and m.loss_ratio == pytest.approx(0.1)
    # an exact-count trial 2 frames short is pacing granularity; 10 short is a failure
    t2 = SessionTrial(FakeResult(99_998, 0, 1.0, {}), 100_000, 1.0, 100_000, 1.05)  # type: ignore
    assert t2.unsent_count == 0 and measurement_of(t2).loss_ratio == 0.0
    t3 = SessionTrial(FakeResult(99_990, 0, 1.0, {}), 100_000, 1.0, 100_000, 1.05)  # type: ignore
    assert t3.unsent_count == 10
    # a duration-bound trial (fresh processes) tolerates the frames of its slack
    t4 = SessionTrial(FakeResult(99_600, 0, 1.0, {}), 100_000, 1.0, 100_000, 1.05,  # type: ignore
                      unsent_tolerance=500)
    assert t4.unsent_count == 0


def test_bad_range():
    with pytest.raises(UsageError):
        search(SimulatedDut(1e5), preset("fast"), min_load=5e5, max_load=4e5)  # type: ignore


class StallingDut(SimulatedDut):
    """A simulated DUT whose host stalls now and then: every `every`-th trial loses `stall_lost`
    frames more and is classified host stall (as hoststall.classify would from the monitor)."""

    def __init__(self, limit: float, every: int, stall_lost: int = 200,
                 stall_us: float = 2000.0) -> None:
        super().__init__(limit)
        self.every, self.stall_lost, self.stall_us = every, stall_lost, stall_us

    def measure(self, rate_pps: float, duration: float, *, count=None) -> SessionTrial:
        t = super().measure(rate_pps, duration)
        if self.every and len(self.trials) % self.every == 0:
            t.result.lost += self.stall_lost
            if self.flagged(t.result.lost):
                t.result.host_stall = "host stall: CPU 1 2.00 ms (simulated)"
                t.result.stalls = summarize([Stall(1, "vcpu", 10 * 10**6, self.stall_us)],
                                            0, 10**9, [0, 1])
        return t

    def flagged(self, lost: int) -> bool:
        return True


@pytest.fixture
def repeat_policy(monkeypatch):
    monkeypatch.setenv("VSWBENCH_STALL_POLICY", "repeat")


class ClassifiedStallingDut(StallingDut):
    """Flagged host stall only when its loss is within what hoststall.classify allows
    (STALL_LOSS_FACTOR x the stall's frames): over the limit, the switch's own loss is far larger
    and the trial is not flagged."""

    def flagged(self, lost: int) -> bool:
        from vswbench.measure.hoststall import STALL_LOSS_FACTOR

        return lost <= STALL_LOSS_FACTOR * self.stall_lost


@pytest.mark.parametrize("every", [3, 1])
def test_host_stall_trials_are_excised_by_default(monkeypatch, every):
    monkeypatch.delenv("VSWBENCH_STALL_POLICY", raising=False)
    dut = ClassifiedStallingDut(limit=123_456, every=every)
    r = search(dut, preset("fast", trial_duration=1.0), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)
    # as without stalls, even when every trial stalls (the repeat policy would stall forever)
    assert r.ndr_pps == pytest.approx(123_456, rel=0.006)
    excised = r.excised
    assert excised and all(t.host_stall and t.rejected for t in excised)
    assert r.rejected == excised
    # no trial repeated: the search measured exactly the trials the DUT ran
    assert len(r.trials) == len(dut.trials)
    # the loss stays on the stored trial; RFC 2544's NDR counts it
    assert all(t.result.lost >= 200 for t in excised)
    classic = r.classic_ndr_pps
    assert classic is None or classic < min(t.intended_load for t in excised)
    data = r.to_json()
    assert data["trials_excised"] == len(excised) == data["trials_rejected"]
    assert all(t["excised"] for t in data["trials"] if t["host_stall"])
    assert any("excised" in n for n in r.notes)


def test_an_unknown_stall_policy_is_a_usage_error(monkeypatch):
    from vswbench.errors import UsageError

    monkeypatch.setenv("VSWBENCH_STALL_POLICY", "ignore")
    with pytest.raises(UsageError, match="VSWBENCH_STALL_POLICY='ignore'.*excise, repeat"):
        search(SimulatedDut(limit=1e5), preset("quick"), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)


def test_host_stall_trials_are_repeated_and_left_out_of_the_ndr(repeat_policy):
    dut = StallingDut(limit=123_456, every=3)
    r = search(dut, preset("fast", trial_duration=1.0), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)
    assert r.ndr_pps == pytest.approx(123_456, rel=0.006)   # as without stalls
    # every third trial stalls: the first MAX_STALL_REPEATS_PER_SEARCH are repeated, the rest
    # count as measured, marked, and a note says so
    from vswbench.measure.hoststall import MAX_STALL_REPEATS_PER_SEARCH
    stalled = [t for t in r.trials if t.host_stall]
    assert len(stalled) == len(dut.trials) // 3 > MAX_STALL_REPEATS_PER_SEARCH
    assert len(r.rejected) == MAX_STALL_REPEATS_PER_SEARCH
    assert any("count as measured" in n for n in r.notes)
    assert all(t.host_stall for t in r.rejected)
    # every rejected trial was followed by a repeat at the same load
    for i, t in enumerate(r.trials):
        if t.rejected:
            assert r.trials[i + 1].intended_load == t.intended_load
    # RFC 2544's NDR counts the stalled trials: below the lowest load a stall cost frames
    stalled_loads = [t.intended_load for t in r.rejected]
    classic = r.classic_ndr_pps
    assert classic is None or classic < min(stalled_loads)
    assert classic is None or classic < r.ndr_pps
    data = r.to_json()
    assert data["trials_rejected"] == len(r.rejected)
    assert data["classic_ndr_pps"] == r.classic_ndr_pps
    assert len(data["rejected_reasons"]) == len(r.rejected)
    assert any("host stall" in n for n in r.notes)


def test_a_quiet_dut_rejects_nothing_and_both_ndrs_agree():
    dut = SimulatedDut(limit=123_456)
    r = search(dut, preset("binary", trial_duration=1.0), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)
    assert r.rejected == [] and r.to_json()["trials_rejected"] == 0
    assert r.classic_ndr_pps == r.ndr_pps
    assert not any("host stall" in n for n in r.notes)


def test_a_load_that_always_stalls_is_tried_at_most_max_repeats_more_times(repeat_policy):
    dut = StallingDut(limit=1e9, every=1)   # every trial stalls
    r = search(dut, preset("binary", trial_duration=1.0), min_load=1_000,  # type: ignore[arg-type]
               max_load=400_000)
    assert r.trials[0].intended_load == 400_000
    first = [t for t in r.trials if t.intended_load == 400_000]
    assert len(first) == 1 + MAX_STALL_REPEATS
    assert [t.rejected for t in first] == [True] * MAX_STALL_REPEATS + [False]


def test_classic_ndr_counts_every_trial():
    def trial(load, lost):
        return SessionTrial(FakeResult(round(load), lost, 1.0, {}), load, 1.0,  # type: ignore
                            round(load), 1.0)
    assert classic_ndr([trial(100, 0), trial(200, 0), trial(300, 5)]) == 200
    assert classic_ndr([trial(100, 0), trial(200, 3), trial(300, 0)]) == 100
    assert classic_ndr([trial(100, 1)]) is None
    assert classic_ndr([trial(100, 0), trial(300, 0)]) == 300


class SkippingDut(SimulatedDut):
    """A simulated DUT whose tester's CPU stops now and then: every `every`-th trial's generator
    skips `share` of its departures (never sent: neither offered nor lost)."""

    def __init__(self, limit: float, every: int, share: float) -> None:
        super().__init__(limit)
        self.every, self.share = every, share

    def measure(self, rate_pps: float, duration: float, *, count=None) -> SessionTrial:
        t = super().measure(rate_pps, duration)
        if len(self.trials) % self.every == 0:
            skipped = round(self.share * t.intended_count)
            t.result.tx_frames -= skipped
            t.result.lost = min(t.result.lost, t.result.tx_frames)
            t.result.tx_skipped, t.result.tester_gaps, t.result.tester_gap_max_us = skipped, 3, 9e3
        return t


def test_skipped_departures_are_not_unsent_and_a_trial_short_of_its_load_is_repeated():
    from vswbench.measure.hoststall import MAX_STALL_REPEATS_PER_SEARCH
    from vswbench.measure.hoststall import TESTER_SKIP_LIMIT

    small = search(SkippingDut(123_456, every=2, share=TESTER_SKIP_LIMIT / 2),  # type: ignore[arg-type]
                   preset("binary", trial_duration=1.0), min_load=1_000, max_load=400_000)
    assert small.ndr_pps == pytest.approx(123_456, rel=0.006)   # counted at their load
    assert not small.rejected and not any(t.unsent_count for t in small.trials)
    assert any("skipped, not sent back to back" in n for n in small.notes)
    big = search(SkippingDut(123_456, every=2, share=2 * TESTER_SKIP_LIMIT),  # type: ignore[arg-type]
                 preset("binary", trial_duration=1.0), min_load=1_000, max_load=400_000)
    assert big.ndr_pps == pytest.approx(123_456, rel=0.006)
    assert len(big.rejected) == MAX_STALL_REPEATS_PER_SEARCH
    assert all("tester gap" in (t.host_stall or "") for t in big.rejected)
    for i, t in enumerate(big.trials):     # each followed by a repeat at its load
        if t.rejected:
            assert big.trials[i + 1].intended_load == t.intended_load


def test_a_trial_stalled_for_most_of_its_time_is_repeated_not_excised():
    """Excise takes a stall's loss out only while the stall is a small share of the trial
    (hoststall.MAX_EXCISE_SHARE): a trial stalled for 30 % of its time measured the machine."""
    from vswbench.measure.hoststall import MAX_EXCISE_SHARE
    from vswbench.measure.hoststall import MAX_STALL_REPEATS_PER_SEARCH

    short = search(StallingDut(123_456, every=3),  # type: ignore[arg-type]
                   preset("binary", trial_duration=1.0), min_load=1_000, max_load=400_000)
    assert short.excised and len(short.excised) == len(short.rejected)
    assert MAX_EXCISE_SHARE < 0.3
    long = search(StallingDut(123_456, every=3, stall_us=300_000.0),  # type: ignore[arg-type]
                  preset("binary", trial_duration=1.0), min_load=1_000, max_load=400_000)
    assert not long.excised
    assert 0 < len(long.rejected) <= MAX_STALL_REPEATS_PER_SEARCH   # repeated, within the budget
    for i, t in enumerate(long.trials):
        if t.rejected:
            assert long.trials[i + 1].intended_load == t.intended_load
    assert long.ndr_pps == pytest.approx(123_456, rel=0.006)
