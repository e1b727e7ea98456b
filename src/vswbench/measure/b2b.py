"""Back-to-back frames: RFC 2544 section 26.4 as updated by RFC 9004.

The benchmark is the longest burst of frames, sent with minimum inter-frame gaps (here: as fast
as the tester can send), that the device forwards without losing one. It measures the DUT's
buffering: a burst longer than the buffer can absorb, less what the DUT forwards while the burst
arrives, loses frames.

One *search* (`longest_burst`) is a binary search on the burst length N: each step sends exactly
N frames at the tester's maximum rate (`session.measure(0, 0, count=N)`) and judges it by loss
alone. The search first tries the upper limit `max_frames`; if that passes, the result is "at
least max_frames" (`unbounded`): the DUT buffers more than the search may send, or the tester
cannot overload it. The search is repeated `trials` times (RFC 2544 asks for 50) and the average
of the longest bursts is the benchmark (RFC 9004 section 6.3), reported with its minimum,
maximum, standard deviation and every burst length (RFC 9004 section 7).

From the average burst, RFC 9004 derives how long the DUT can buffer:

    Implied DUT Buffer Time   = Average num of Back-to-back Frames / Max Theoretical Frame Rate
    Corrected DUT Buffer Time = Implied DUT Buffer Time
                                - Implied DUT Buffer Time x Measured Throughput
                                                            / Max Theoretical Frame Rate

(RFC 9004 section 3 for the implied time; section 6.4 "Benchmark Calculations" for the correction:
the far-right term removes the frames the DUT forwarded while the burst was still arriving, which
never occupied its buffer). On a virtual link there is no line rate, so the "Max Theoretical
Frame Rate" is the rate the tester actually reached in the bursts (the median of their sent
rates), unless the caller knows better (`max_theoretical_pps`). RFC 9004 (sections 3 and 6.1)
also says the test is only meaningful for frame sizes whose Measured Throughput is below the Max
Theoretical Frame Rate: otherwise the DUT never has to buffer, the correction is undefined, and
the result says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from vswbench.errors import UsageError
from vswbench.measure.stats import Summary
from vswbench.measure.stats import noise_warning
from vswbench.measure.stats import summarize
from vswbench.units import FrameSize

RFC = "RFC 2544 section 26.4 as updated by RFC 9004"
# the bounds of b2b --trials / --max-frames and of a campaign's trials / max_frames keys
TRIALS_RANGE = (1, 1000)
MAX_FRAMES_RANGE = (2, 10_000_000)


class _Result(Protocol):
    lost: int
    tx_pps: float


class _Trial(Protocol):
    """What a back-to-back search reads of a session trial (session.SessionTrial)."""
    @property
    def offered_count(self) -> int: ...
    @property
    def unsent_count(self) -> int: ...
    @property
    def result(self) -> _Result: ...


class _Session(Protocol):
    def measure(self, rate_pps: float, duration: float, *,
                count: int | None = None) -> _Trial: ...


@dataclass(frozen=True)
class B2BConfig:
    """How the back-to-back test searches.

    trials       repetitions of the whole burst-length search (RFC 2544 and RFC 9004: 50)
    max_frames   upper limit of the burst length searched; a pass at this length ends the search
                 as "at least max_frames" (unbounded)
    min_frames   the shortest burst tried; if it loses frames the search reports 0
    resolution   the search stops when the interval between the longest passing and shortest
                 failing burst is within this fraction of the failing one ((hi - lo) / hi), or
                 is one frame: the result is then within `resolution` of the true limit
    frame_size   the frame size as stored: bytes or the IMIX text (reported; the session sends it)
    tester_pps   the tester's own maximum rate (its calibrated ceiling). A burst of N frames must
                 have left within N / tester_pps + BURST_SLACK_S; frames still unsent then count
                 against it: over veth an overloaded path slows the sender down instead of
                 dropping frames, and a burst that was slowed down was not back to back. None:
                 no time limit (a path that pushes back then never fails a burst)
    """
    trials: int = 50
    max_frames: int = 100_000
    min_frames: int = 1
    tester_pps: float | None = None
    resolution: float = 0.01
    frame_size: int | str = 64

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise UsageError(f"{self.trials} back-to-back trials: need at least 1 (RFC 9004: 50)")
        if self.min_frames < 1:
            raise UsageError(f"min_frames {self.min_frames}: the shortest burst is 1 frame")
        if self.max_frames < self.min_frames:
            raise UsageError(f"max_frames {self.max_frames} is below min_frames {self.min_frames}")
        if not 0.0 <= self.resolution < 1.0:
            raise UsageError(f"resolution {self.resolution}: a fraction in [0, 1), e.g. 0.01")
        FrameSize.parse(self.frame_size)       # UsageError naming the bounds

    def to_json(self) -> dict[str, Any]:
        return {"trials": self.trials, "max_frames": self.max_frames,
                "min_frames": self.min_frames, "resolution": self.resolution,
                "frame_size": self.frame_size, "tester_pps": self.tester_pps}


@dataclass(frozen=True)
class BurstTrial:
    """One burst: `length` frames asked for, what the tester sent and what was lost."""
    length: int
    offered: int        # frames the tester sent
    lost: int
    unsent: int         # frames of the burst the tester did not send
    tx_pps: float       # the rate at which the tester sent the burst

    @property
    def passed(self) -> bool:
        """No frame lost, and the whole burst was sent (a burst not sent was not tested)."""
        return self.lost <= 0 and self.unsent == 0

    def to_json(self) -> dict[str, Any]:
        return {"length": self.length, "offered": self.offered, "lost": self.lost,
                "unsent": self.unsent, "tx_pps": self.tx_pps, "passed": self.passed}


@dataclass(frozen=True)
class BurstSearch:
    """One binary search for the longest lossless burst.

    `longest` is the longest burst that passed (0 if even `min_frames` lost frames);
    `shortest_failed` the shortest that did not (None when `unbounded`: `max_frames` passed, so
    the true limit is at least `longest`). `trials` lists every burst in the order sent.
    """
    longest: int
    shortest_failed: int | None
    unbounded: bool
    trials: tuple[BurstTrial, ...]

    @property
    def burst_pps(self) -> float | None:
        """The tester's sending rate in this search: the median over the bursts at least as long
        as the result (the short bursts of the search's first steps are dominated by start-up
        cost and say little about the rate a long burst reaches). None if none was measured."""
        floor = max(self.longest, 1)
        rates = [t.tx_pps for t in self.trials if t.length >= floor and t.tx_pps > 0]
        if not rates:
            rates = [t.tx_pps for t in self.trials if t.tx_pps > 0]
        return statistics.median(rates) if rates else None

    @property
    def unsent_trials(self) -> int:
        return sum(1 for t in self.trials if t.unsent > 0)

    def to_json(self) -> dict[str, Any]:
        return {"longest": self.longest, "shortest_failed": self.shortest_failed,
                "unbounded": self.unbounded, "burst_pps": self.burst_pps,
                "trials": [t.to_json() for t in self.trials]}


def _converged(lo: int, hi: int, resolution: float) -> bool:
    return hi - lo <= 1 or (hi - lo) / hi <= resolution


BURST_SLACK_S = 0.005


def _burst(session: _Session, length: int, tester_pps: float | None = None) -> BurstTrial:
    """Send one burst. Unsent frames are counted strictly (the session tolerates a couple of
    frames short of a paced trial; a burst of N frames that was N - 2 did not test N)."""
    limit = length / tester_pps + BURST_SLACK_S if tester_pps else 0
    trial = session.measure(0, limit, count=length)
    offered = int(trial.offered_count)
    unsent = max(int(trial.unsent_count), length - offered, 0)
    return BurstTrial(length, offered, int(trial.result.lost), unsent,
                      float(trial.result.tx_pps or 0.0))


def longest_burst(session: _Session, cfg: B2BConfig,
                  progress: Callable[[BurstTrial], None] = lambda t: None) -> BurstSearch:
    """Binary search for the longest burst (sent back to back at the tester's maximum rate) the
    DUT forwards without loss, between cfg.min_frames and cfg.max_frames.

    The first burst is max_frames: if it passes the search ends there, unbounded. Otherwise the
    interval (longest passing, shortest failing) is halved until it is within cfg.resolution;
    a burst of 0 frames passes by definition, and no burst shorter than min_frames is sent.
    """
    trials: list[BurstTrial] = []

    def run(length: int) -> bool:
        t = _burst(session, length, cfg.tester_pps)
        trials.append(t)
        progress(t)
        return t.passed

    if run(cfg.max_frames):
        return BurstSearch(cfg.max_frames, None, True, tuple(trials))
    lo, hi = 0, cfg.max_frames          # lo passed (0 trivially), hi failed
    while hi > cfg.min_frames and not _converged(lo, hi, cfg.resolution):
        mid = max((lo + hi) // 2, cfg.min_frames)
        if run(mid):
            lo = mid
        else:
            hi = mid
    return BurstSearch(lo, hi, False, tuple(trials))


@dataclass(frozen=True)
class B2BResult:
    """Back-to-back frames over `config.trials` searches (RFC 2544 26.4 / RFC 9004).

    `summary` summarizes the longest bursts (frames); its mean is the benchmark (RFC 9004 6.3).
    `offered_pps` is the median of the searches' burst rates: the rate the tester reached.
    `max_theoretical_pps` is the Max Theoretical Frame Rate used in the buffer times: the one
    given, or else `offered_pps` (`max_rate_source` says which). Buffer times are in seconds;
    None when they cannot be computed, with the reason in `notes`.
    """
    config: B2BConfig
    searches: tuple[BurstSearch, ...]
    summary: Summary
    offered_pps: float | None
    max_theoretical_pps: float | None
    max_rate_source: str                # "given" | "tester burst rate" | "unknown"
    throughput_pps: float | None
    implied_buffer_s: float | None
    corrected_buffer_s: float | None
    notes: tuple[str, ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def longest_bursts(self) -> list[int]:
        return [s.longest for s in self.searches]

    @property
    def unbounded(self) -> bool:
        """At least one search passed at max_frames: the results are lower bounds."""
        return any(s.unbounded for s in self.searches)

    @property
    def meaningful(self) -> bool | None:
        """RFC 9004 sections 3 and 6.1: only when Measured Throughput < Max Theoretical Frame
        Rate (None when either is unknown)."""
        if self.throughput_pps is None or not self.max_theoretical_pps:
            return None
        return self.throughput_pps < self.max_theoretical_pps

    def to_json(self) -> dict[str, Any]:
        return {"method": "back-to-back", "methodology": RFC, **self.config.to_json(),
                "searches_run": len(self.searches), "burst_lengths": self.longest_bursts,
                "benchmark_frames": self.summary.mean,
                "statistics": self.summary.to_json(),
                "offered_pps": self.offered_pps,
                "max_theoretical_pps": self.max_theoretical_pps,
                "max_rate_source": self.max_rate_source,
                "throughput_pps": self.throughput_pps, "meaningful": self.meaningful,
                "implied_buffer_s": self.implied_buffer_s,
                "corrected_buffer_s": self.corrected_buffer_s,
                "unbounded": self.unbounded,
                "burst_trials": sum(len(s.trials) for s in self.searches),
                "notes": list(self.notes), "warnings": list(self.warnings),
                "searches": [s.to_json() for s in self.searches]}


def implied_buffer_time(average_frames: float, max_rate_pps: float) -> float:
    """RFC 9004 section 3 (and 6.4): Implied DUT Buffer Time = Average num of Back-to-back
    Frames / Max Theoretical Frame Rate, in seconds."""
    if max_rate_pps <= 0:
        raise UsageError(f"max theoretical frame rate {max_rate_pps}: must be positive")
    return average_frames / max_rate_pps


def corrected_buffer_time(implied_s: float, throughput_pps: float,
                          max_rate_pps: float) -> float | None:
    """RFC 9004 section 6.4: Corrected DUT Buffer Time = Implied DUT Buffer Time - Implied DUT
    Buffer Time x Measured Throughput / Max Theoretical Frame Rate. The subtracted term accounts
    for the frames the DUT forwarded while the burst was being sent in: they were never in the
    buffer. None when Measured Throughput >= Max Theoretical Frame Rate (RFC 9004 sections 3 and
    6.1: the DUT then never has to buffer and the test does not apply)."""
    if max_rate_pps <= 0:
        raise UsageError(f"max theoretical frame rate {max_rate_pps}: must be positive")
    if throughput_pps < 0:
        raise UsageError(f"measured throughput {throughput_pps}: must not be negative")
    if throughput_pps >= max_rate_pps:
        return None
    return implied_s - implied_s * throughput_pps / max_rate_pps


def back_to_back(session: _Session, cfg: B2BConfig, *, throughput_pps: float | None,
                 max_theoretical_pps: float | None = None,
                 progress: Callable[[str], None] = lambda message: None) -> B2BResult:
    """Run cfg.trials burst-length searches and derive the RFC 9004 benchmark and buffer times.

    `throughput_pps` is the Measured Throughput of the same frame size and traffic (an RFC 2544 /
    MLRsearch NDR, RFC 9004 section 5 asks for it first); without it the corrected buffer time
    is not computed. `max_theoretical_pps` overrides the Max Theoretical Frame Rate (a physical
    link's line rate); by default it is the rate the tester reached in its bursts.
    `progress` receives one line per burst and one per finished search.
    """
    if throughput_pps is not None and not throughput_pps >= 0:
        raise UsageError(f"measured throughput {throughput_pps}: must not be negative")
    if max_theoretical_pps is not None and not max_theoretical_pps > 0:
        raise UsageError(f"max theoretical frame rate {max_theoretical_pps}: must be positive")
    searches: list[BurstSearch] = []
    for i in range(cfg.trials):
        def line(t: BurstTrial, i: int = i) -> None:
            progress(f"  search {i + 1}/{cfg.trials}: burst {t.length:,} frames at "
                     f"{t.tx_pps:,.0f} pps: lost {t.lost:,}, unsent {t.unsent:,}")
        s = longest_burst(session, cfg, progress=line)
        searches.append(s)
        progress(f"search {i + 1}/{cfg.trials}: longest lossless burst "
                 f"{'at least ' if s.unbounded else ''}{s.longest:,} frames "
                 f"({len(s.trials)} bursts)")
    return _result(cfg, searches, throughput_pps, max_theoretical_pps)


def _result(cfg: B2BConfig, searches: Sequence[BurstSearch], throughput_pps: float | None,
            max_theoretical_pps: float | None) -> B2BResult:
    notes: list[str] = [f"{RFC}: {len(searches)} searches; the benchmark is the average of "
                        "their longest lossless bursts, reported with every burst length"]
    summary = summarize([float(s.longest) for s in searches])
    rates = [r for r in (s.burst_pps for s in searches) if r is not None]
    offered = statistics.median(rates) if rates else None
    if max_theoretical_pps is not None:
        max_rate, source = max_theoretical_pps, "given"
    elif offered is not None:
        max_rate, source = offered, "tester burst rate"
        notes.append("no line rate on virtual links: the Max Theoretical Frame Rate is the rate "
                     f"the tester reached in its bursts ({offered:,.0f} pps, median)")
    else:
        max_rate, source = None, "unknown"
        notes.append("the tester reported no sending rate: buffer times cannot be computed")

    unbounded = sum(1 for s in searches if s.unbounded)
    if unbounded:
        notes.append(f"{unbounded} of {len(searches)} searches passed at the upper limit of "
                     f"{cfg.max_frames:,} frames: the DUT buffers at least that many, or the "
                     "tester cannot overload it; those bursts and the buffer times are lower "
                     "bounds, not a benchmark: raise max_frames and run again")
    empty = sum(1 for s in searches if s.longest == 0)
    if empty:
        notes.append(f"{empty} of {len(searches)} searches lost frames even in the shortest "
                     f"burst ({cfg.min_frames:,} frames): recorded as 0")
    unsent = sum(s.unsent_trials for s in searches)
    if unsent:
        notes.append(f"{unsent} bursts were not sent completely by the tester (unsent frames); "
                     "they count as failed, but it was the generator, not the DUT, that fell "
                     "short, so the longest bursts may be the tester's limit")

    implied = corrected = None
    if max_rate is not None:
        implied = implied_buffer_time(summary.mean, max_rate)
        if throughput_pps is None:
            notes.append("no Measured Throughput given (RFC 9004 section 5: measure it first): "
                         "the corrected buffer time is not computed")
        else:
            corrected = corrected_buffer_time(implied, throughput_pps, max_rate)
            if corrected is None:
                notes.append(f"Measured Throughput {throughput_pps:,.0f} pps is not below the "
                             f"Max Theoretical Frame Rate {max_rate:,.0f} pps: the DUT keeps up "
                             "with the fastest burst, so it never has to buffer; RFC 9004 "
                             "(sections 3 and 6.1) applies the test only when throughput is "
                             "below the max rate, and the corrected buffer time is undefined")
    warning = noise_warning("longest lossless burst", summary)
    return B2BResult(cfg, tuple(searches), summary, offered, max_rate, source, throughput_pps,
                     implied, corrected, tuple(notes), (warning,) if warning else ())
