"""b2b.py: the back-to-back burst search and the RFC 9004 buffer times, against a simulated DUT.

The sessions here are test doubles of a DUT with a known buffer, never measurements: a burst of N
frames offered at `offered` pps to a DUT forwarding `forwarding` pps leaves N x (1 - fwd/offered)
frames to buffer, and is lossless iff that fits in `buffer` frames.
"""

from dataclasses import dataclass

import pytest

from vswbench.errors import UsageError
from vswbench.measure.b2b import B2BConfig
from vswbench.measure.b2b import BurstSearch
from vswbench.measure.b2b import back_to_back
from vswbench.measure.b2b import corrected_buffer_time
from vswbench.measure.b2b import implied_buffer_time
from vswbench.measure.b2b import longest_burst
from vswbench.measure.session import SessionTrial


@dataclass
class FakeResult:
    """The fields of trial.TrialResult a back-to-back search reads."""
    tx_frames: int
    lost: int
    tx_pps: float
    tx_skipped: int = 0


class SimulatedDut:
    """A session over a simulated DUT: buffer of `buffers[i]` frames during search i (cycled),
    drained at `forwarding` pps while bursts arrive at `offered` pps. Integer arithmetic, so the
    longest lossless burst is exactly buffer x offered / (offered - forwarding) when that divides.
    `tester_limit` simulates a generator that cannot send more than that many frames."""

    def __init__(self, buffers: list[int], offered: int = 1_000_000, forwarding: int = 400_000,
                 tester_limit: int | None = None) -> None:
        self.buffers, self.offered, self.forwarding = buffers, offered, forwarding
        self.tester_limit = tester_limit
        self.calls: list[tuple[float, float, int | None]] = []
        self.search = 0
        self.max_frames: int | None = None

    def measure(self, rate_pps: float, duration: float, *,
                count: int | None = None) -> SessionTrial:
        assert count is not None
        self.calls.append((rate_pps, duration, count))
        if count == self.max_frames and len(self.calls) > 1:
            self.search += 1                      # every search starts at max_frames
        buffer = self.buffers[self.search % len(self.buffers)]
        sent = count if self.tester_limit is None else min(count, self.tester_limit)
        excess = sent * (self.offered - self.forwarding) - buffer * self.offered
        lost = max(0, -(-excess // self.offered))          # ceil, in frames
        return SessionTrial(FakeResult(sent, lost, float(self.offered)),  # type: ignore[arg-type]
                            rate_pps, duration, count, 0.0)


def dut(buffers: list[int], cfg: B2BConfig, **kw) -> SimulatedDut:
    d = SimulatedDut(buffers, **kw)
    d.max_frames = cfg.max_frames
    return d


# 3000 frames of buffer, offered 1 Mpps, forwarded 400 kpps: 0.6 of each burst stays behind,
# so the longest lossless burst is 3000 / 0.6 = 5000 frames.
TRUE_LONGEST = 5000


def test_search_finds_the_known_answer_within_the_resolution():
    cfg = B2BConfig(trials=1, max_frames=100_000, resolution=0.01)
    session = dut([3000], cfg)
    s = longest_burst(session, cfg)
    assert not s.unbounded
    assert TRUE_LONGEST * (1 - cfg.resolution) <= s.longest <= TRUE_LONGEST
    assert s.shortest_failed is not None and s.shortest_failed > TRUE_LONGEST
    assert (s.shortest_failed - s.longest) / s.shortest_failed <= cfg.resolution
    # every burst was sent back to back at the tester's maximum rate, exact counts
    assert all(rate == 0 and duration == 0 for rate, duration, _ in session.calls)
    assert s.trials[0].length == cfg.max_frames and not s.trials[0].passed
    assert [t.length for t in s.trials] == [c for _, _, c in session.calls]
    assert all(t.passed == (t.length <= TRUE_LONGEST) for t in s.trials)
    assert all(t.tx_pps == 1_000_000 for t in s.trials)
    assert len(s.trials) < 20


def test_exact_answer_at_one_frame_resolution():
    cfg = B2BConfig(trials=1, max_frames=100_000, resolution=0.0)
    s = longest_burst(dut([3000], cfg), cfg)
    assert (s.longest, s.shortest_failed) == (TRUE_LONGEST, TRUE_LONGEST + 1)


def test_unbounded_when_max_frames_passes():
    cfg = B2BConfig(trials=1, max_frames=4000)
    session = dut([3000], cfg)
    s = longest_burst(session, cfg)
    assert s.unbounded and s.longest == 4000 and s.shortest_failed is None
    assert len(session.calls) == 1


def test_nothing_passes_when_the_dut_cannot_buffer():
    cfg = B2BConfig(trials=1, max_frames=1000, min_frames=10)
    session = dut([0], cfg)
    s = longest_burst(session, cfg)
    assert (s.longest, s.shortest_failed, s.unbounded) == (0, 10, False)
    assert min(c for _, _, c in session.calls) == 10          # never below min_frames


def test_unsent_frames_fail_the_burst():
    cfg = B2BConfig(trials=1, max_frames=100_000, resolution=0.0)
    s = longest_burst(dut([3000], cfg, tester_limit=2000), cfg)
    # beyond 2000 frames the tester falls short: not a pass, whatever the DUT did
    assert s.longest == 2000
    assert any(t.unsent > 0 and not t.passed for t in s.trials)


def test_progress_sees_every_burst():
    cfg = B2BConfig(trials=1, max_frames=10_000)
    seen = []
    s = longest_burst(dut([3000], cfg), cfg, progress=seen.append)
    assert tuple(seen) == s.trials


def test_repeats_are_summarized_and_buffer_times_match_hand_values():
    cfg = B2BConfig(trials=4, max_frames=100_000, resolution=0.0)
    # buffers per search -> longest bursts 5000, 5100, 4900, 5000 (buffer / 0.6)
    session = dut([3000, 3060, 2940, 3000], cfg)
    lines: list[str] = []
    r = back_to_back(session, cfg, throughput_pps=400_000, progress=lines.append)
    assert r.longest_bursts == [5000, 5100, 4900, 5000]
    assert (r.summary.n, r.summary.mean, r.summary.median) == (4, 5000.0, 5000.0)
    assert (r.summary.min, r.summary.max) == (4900.0, 5100.0)
    assert r.summary.stdev == pytest.approx((20_000 / 3) ** 0.5)
    assert r.offered_pps == 1_000_000 and r.max_rate_source == "tester burst rate"
    assert r.max_theoretical_pps == 1_000_000
    # RFC 9004: implied = average frames / max rate = 5000 / 1e6 s
    assert r.implied_buffer_s == pytest.approx(0.005)
    # corrected = implied - implied x throughput / max rate = 5 ms x (1 - 0.4) = 3 ms,
    # which is exactly the simulated buffer (3000 frames) at the offered rate
    assert r.corrected_buffer_s == pytest.approx(0.003)
    assert r.corrected_buffer_s * r.max_theoretical_pps == pytest.approx(3000)
    assert r.meaningful is True and not r.unbounded
    assert any(line.startswith("search 4/4") for line in lines)
    data = r.to_json()
    assert data["burst_lengths"] == [5000, 5100, 4900, 5000]
    assert data["trials"] == 4 and data["searches_run"] == 4
    assert data["benchmark_frames"] == 5000.0
    assert data["statistics"]["n"] == 4
    assert data["corrected_buffer_s"] == pytest.approx(0.003)
    assert len(data["searches"]) == 4 and all(s["trials"] for s in data["searches"])
    assert any("RFC 9004" in note for note in data["notes"])


def test_given_max_theoretical_rate_is_used():
    cfg = B2BConfig(trials=2, max_frames=100_000, resolution=0.0)
    r = back_to_back(dut([3000], cfg), cfg, throughput_pps=400_000,
                     max_theoretical_pps=2_000_000)
    assert r.max_rate_source == "given" and r.offered_pps == 1_000_000
    assert r.implied_buffer_s == pytest.approx(5000 / 2_000_000)             # 2.5 ms
    assert r.corrected_buffer_s == pytest.approx(0.0025 * (1 - 0.2))        # 2 ms


def test_corrected_time_undefined_when_throughput_reaches_max_rate():
    cfg = B2BConfig(trials=2, max_frames=4000)
    r = back_to_back(dut([3000], cfg), cfg, throughput_pps=1_000_000)
    assert r.corrected_buffer_s is None
    assert r.implied_buffer_s == pytest.approx(4000 / 1_000_000)
    assert r.meaningful is False
    assert r.unbounded and r.longest_bursts == [4000, 4000]
    text = " ".join(r.notes)
    assert "not below the Max Theoretical Frame Rate" in text
    assert "upper limit of 4,000 frames" in text
    assert r.to_json()["corrected_buffer_s"] is None


def test_no_throughput_no_corrected_time():
    cfg = B2BConfig(trials=1, max_frames=100_000)
    r = back_to_back(dut([3000], cfg), cfg, throughput_pps=None)
    assert r.corrected_buffer_s is None and r.implied_buffer_s is not None
    assert any("Measured Throughput" in n for n in r.notes)


def test_unsent_bursts_are_noted():
    cfg = B2BConfig(trials=1, max_frames=100_000)
    r = back_to_back(dut([3000], cfg, tester_limit=2000), cfg, throughput_pps=400_000)
    assert any("not sent completely" in n for n in r.notes)


def test_formulas_directly():
    assert implied_buffer_time(5000, 1_000_000) == pytest.approx(0.005)
    assert corrected_buffer_time(0.005, 400_000, 1_000_000) == pytest.approx(0.003)
    assert corrected_buffer_time(0.005, 0, 1_000_000) == pytest.approx(0.005)
    assert corrected_buffer_time(0.005, 1_000_000, 1_000_000) is None
    assert corrected_buffer_time(0.005, 1_200_000, 1_000_000) is None
    with pytest.raises(UsageError):
        implied_buffer_time(5000, 0)


def test_burst_rate_ignores_short_bursts():
    from vswbench.measure.b2b import BurstTrial
    s = BurstSearch(1000, 1001, False, (BurstTrial(2000, 2000, 5, 0, 900_000.0),
                                        BurstTrial(10, 10, 0, 0, 50_000.0),
                                        BurstTrial(1000, 1000, 0, 0, 1_000_000.0)))
    assert s.burst_pps == pytest.approx(950_000.0)


@pytest.mark.parametrize("kwargs", [{"trials": 0}, {"min_frames": 0},
                                    {"max_frames": 5, "min_frames": 10}, {"resolution": 1.0},
                                    {"resolution": -0.1}, {"frame_size": 20}])
def test_config_rejects_bad_values(kwargs):
    with pytest.raises(UsageError):
        B2BConfig(**kwargs)


def test_back_to_back_rejects_bad_rates():
    cfg = B2BConfig(trials=1, max_frames=100)
    with pytest.raises(UsageError):
        back_to_back(dut([3000], cfg), cfg, throughput_pps=-1.0)
    with pytest.raises(UsageError):
        back_to_back(dut([3000], cfg), cfg, throughput_pps=1.0, max_theoretical_pps=0.0)
