"""What the trials behind a headline lost, one definition for every reader (results/points.py).

Two questions, each answered from the stored trials:

- A latency figure: its trial's lost frames and loss ratio, and whether the trial's counter
  cross-check agreed (`counters_agree`: the engine's counts against the kernel's). Percentiles
  are computed over the frames that arrived; a lost frame's latency is unknown (it may have
  waited longer than any survivor, or forever). With loss ratio r, the q-quantile of every frame
  sent is bounded by the survivors' only while q <= 1 - r: every percentile above 1 - r is
  unreliable (`unreliable_percentiles`: at 1.86 % loss, p99 and above). The figure is shown
  with its loss and marked wherever it is printed.
- A search's headline: what its trials AT the NDR's load lost. The NDR is stored rounded to
  0.1 pps (measure/search.py) while each trial stores the load it offered unrounded
  (181529.3 against 181529.33572960983), so a trial is at the NDR's load when its load rounds
  to the stored value (`at_stored_load`), never by a float tolerance. MLRsearch's exceed ratio
  lets some trial time at the NDR fail the goal's loss ratio; `LoadLoss` says how much: the
  worst trial's loss and the share of trial time whose loss exceeded the goal's. Unsent frames
  count as lost, as in the search.
- And what its trials AROUND the NDR's load did (`LossAround`, excised host-stall trials left
  out): a switch whose loss is sporadic (a frame now and then at every load, not a threshold)
  has lossy trials far below the load its search settled on, or lossless ones far above it. Its
  NDR is then ill-defined: where the search stopped was a matter of which trials happened to
  lose. `ill_defined` says so when a lossy trial ran below ILL_DEFINED_FRACTION of the NDR or a
  lossless one at LOSSLESS_ABOVE_FACTOR times it or more (measured: tc-mirred at 1518 B stopped
  at 0.177 Mpps after small losses at nearly every load, with lossless trials up to 0.704).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from vswbench.measure.search import SearchResult
    from vswbench.measure.session import SessionTrial

STORED_DIGITS = 1               # the search stores its bounds and NDR rounded to 0.1 pps
# a lossy trial (no host stall) below this fraction of the NDR makes the NDR ill-defined: the
# search's own bracket is 5-10 % wide, so loss within a quarter of the NDR is the search's
# ordinary work near the threshold, and loss further down is loss at every load
ILL_DEFINED_FRACTION = 0.75
# ... and so does a lossless trial (no host stall) at twice the NDR or more: a quick search's
# mixed loads (some trials lossy, some not) sit within 1.2-1.6x of its NDR in the runs measured
# here; 2x and more only where losses came at nearly every load
LOSSLESS_ABOVE_FACTOR = 2.0
PERCENTILES = (("p25", 0.25), ("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99),
               ("p999", 0.999), ("p9999", 0.9999))
LABELS = {"p25": "p25", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
          "p999": "p99.9", "p9999": "p99.99"}


def at_stored_load(load: float, stored: float) -> bool:
    """Whether a trial that offered `load` ran at the load stored (rounded) as `stored`."""
    return round(load, STORED_DIGITS) == round(stored, STORED_DIGITS)


def unreliable_percentiles(loss_ratio: float | None) -> tuple[str, ...]:
    """The percentiles (PERCENTILES names) that a loss ratio makes unreliable: those above
    1 - loss ratio. None or no loss: none."""
    if loss_ratio is None or loss_ratio <= 0:
        return ()
    return tuple(name for name, q in PERCENTILES if q > 1 - loss_ratio)


def unreliable_text(loss_ratio: float | None) -> str | None:
    """"p99 and above" (the lowest unreliable percentile), or None."""
    names = unreliable_percentiles(loss_ratio)
    if not names:
        return None
    return LABELS[names[0]] + (" and above" if len(names) > 1 else "")


def loss_text(lost: int | None, ratio: float | None, counters_agree: bool | None) -> str:
    """"7,743 frames lost (1.86 %), p99 and above unreliable; counters disagree", "no loss"."""
    parts = []
    if lost or ratio:
        parts.append(f"{lost or 0:,} frames lost ({(ratio or 0) * 100:.3g} %)")
        unreliable = unreliable_text(ratio)
        if unreliable:
            parts.append(f"{unreliable} unreliable")
    else:
        parts.append("no loss")
    if counters_agree is False:
        parts.append("counters disagree")
    return ", ".join(parts)


@dataclass(frozen=True)
class LoadLoss:
    """What a search's trials at one load (its NDR's) lost."""
    trials: int                  # trials at that load
    lossy_trials: int            # of them, trials that lost (or could not send) any frame
    worst_lost_frames: int       # the worst trial's lost + unsent frames
    worst_loss_ratio: float      # the worst trial's (lost + unsent) / intended frames
    time_over_goal: float        # share of those trials' time over the goal's loss ratio
    excised_trials: int = 0      # lossy trials the search counted without a host stall's loss

    def describe(self) -> str:
        if not self.lossy_trials:
            return f"{self.trials} trial(s) at the NDR's load, none lost a frame"
        excised = (f"; {self.excised_trials} of them host stalls, their loss excised"
                   if self.excised_trials else "")
        return (f"{self.lossy_trials} of {self.trials} trial(s) at the NDR's load lost frames "
                f"(worst {self.worst_lost_frames:,}, {self.worst_loss_ratio * 100:.3g} %; "
                f"{self.time_over_goal * 100:.0f} % of their time over the goal's loss{excised})")


@dataclass(frozen=True)
class LossAround:
    """What a search's trials below its NDR's load lost, and how far above it a trial passed
    without loss; host-stall trials left out."""
    ndr_pps: float
    trials: int                  # trials below the NDR's load (excised ones not counted)
    lossy_trials: int            # of them, trials that lost (or could not send) any frame
    lowest_lossy_pps: float | None   # the lowest load at which a trial lost frames
    worst_loss_ratio: float      # the worst of those trials' loss ratio
    highest_lossless_pps: float | None = None   # the highest load above the NDR a trial passed

    @property
    def lossy_far_below(self) -> bool:
        return (self.lowest_lossy_pps is not None
                and self.lowest_lossy_pps < ILL_DEFINED_FRACTION * self.ndr_pps)

    @property
    def lossless_far_above(self) -> bool:
        return (self.highest_lossless_pps is not None
                and self.highest_lossless_pps >= LOSSLESS_ABOVE_FACTOR * self.ndr_pps)

    @property
    def ill_defined(self) -> bool:
        """Loss far below the NDR or no loss far above it: sporadic loss, not a threshold."""
        return self.lossy_far_below or self.lossless_far_above

    def evidence(self) -> str:
        """"lost frames from 0.550 Mpps (32 % of its NDR; 1 of 2 trials below it)" and/or
        "passed without loss at 0.704 Mpps (4.0x its NDR)"."""
        parts = []
        if self.lossy_far_below and self.lowest_lossy_pps is not None:
            parts.append(f"lost frames from {self.lowest_lossy_pps / 1e6:.3g} Mpps "
                         f"({self.lowest_lossy_pps / self.ndr_pps * 100:.0f} % of its NDR; "
                         f"{self.lossy_trials} of {self.trials} trials below it)")
        if self.lossless_far_above and self.highest_lossless_pps is not None:
            parts.append(f"passed without loss at {self.highest_lossless_pps / 1e6:.3g} Mpps "
                         f"({self.highest_lossless_pps / self.ndr_pps:.1f}x its NDR)")
        return " and ".join(parts)

    def describe(self) -> str:
        if not self.lossy_trials or self.lowest_lossy_pps is None:
            text = f"{self.trials} trial(s) below the NDR's load, none lost a frame"
        else:
            text = (f"{self.lossy_trials} of {self.trials} trial(s) below the NDR's load lost "
                    f"frames (no host stall; from {self.lowest_lossy_pps / 1e6:.3g} Mpps, "
                    f"{self.lowest_lossy_pps / self.ndr_pps * 100:.0f} % of the NDR; worst "
                    f"{self.worst_loss_ratio * 100:.3g} %)")
        if self.lossless_far_above and self.highest_lossless_pps is not None:
            text += (f"; a trial passed without loss at {self.highest_lossless_pps / 1e6:.3g} "
                     f"Mpps ({self.highest_lossless_pps / self.ndr_pps:.1f}x the NDR)")
        return text + (": NDR ill-defined, the loss is sporadic, not a threshold"
                       if self.ill_defined else "")


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


@dataclass(frozen=True)
class TrialLoss:
    """One search trial as the loss figures count it (unsent frames as lost)."""
    load: float                  # the load it offered, pps
    lost: int                    # lost + unsent frames
    ratio: float                 # their share of the intended frames
    seconds: float
    excised: bool


def stored_trial_loss(t: Any) -> TrialLoss | None:
    """A stored trial's TrialLoss; None when it is not a dict or stores no load."""
    at = _num(t.get("intended_pps")) if isinstance(t, dict) else None
    if at is None:
        return None
    lost, ratio, seconds = _trial_loss(t)
    return TrialLoss(at, lost, ratio, seconds, bool(t.get("excised")))


def session_trial_loss(t: SessionTrial) -> TrialLoss:
    """A fresh trial's TrialLoss, as stored_trial_loss reads its stored brief."""
    lost = t.result.lost + t.unsent_count
    count = t.intended_count or t.result.tx_frames
    ratio = lost / count if count > 0 else (t.result.loss_ratio or 0.0)
    return TrialLoss(t.intended_load, lost, ratio, t.intended_duration or 1.0, t.excised)


def load_loss(trials: Iterable[TrialLoss], load: float,
              goal_loss_ratio: float = 0.0) -> LoadLoss | None:
    """LoadLoss of the trials at `load` (the stored NDR); None when none ran there."""
    found = [t for t in trials if at_stored_load(t.load, load)]
    if not found:
        return None
    worst = max(found, key=lambda t: (t.ratio, t.lost))
    total = sum(t.seconds for t in found)
    over = sum(t.seconds for t in found if t.lost and t.ratio > goal_loss_ratio)
    return LoadLoss(len(found), sum(1 for t in found if t.lost), worst.lost, worst.ratio,
                    over / total if total else 0.0, sum(1 for t in found if t.lost and t.excised))


def loss_at_load(result: Mapping[str, Any], load: float | None,
                 goal_loss_ratio: float = 0.0) -> LoadLoss | None:
    """LoadLoss of the trials of a search result at `load` (the stored NDR); None when no trial
    ran there (or the result stores no trials)."""
    trials = result.get("trials")
    if load is None or not isinstance(trials, list):
        return None
    return load_loss([x for t in trials if (x := stored_trial_loss(t)) is not None], load,
                     goal_loss_ratio)


def search_load_loss(result: SearchResult) -> LoadLoss | None:
    """What a fresh search's trials at its NDR lost, as points.ndr_load_loss reads it from the
    stored search: against the NDR goal's loss ratio."""
    ndr = result.outcome("NDR")
    if result.ndr_pps is None:
        return None
    return load_loss([session_trial_loss(t) for t in result.trials], result.ndr_pps,
                     ndr.goal.loss_ratio if ndr else 0.0)


def _trial_loss(t: Mapping[str, Any]) -> tuple[int, float, float]:
    """(lost + unsent frames, their ratio to the intended frames, seconds) of a stored trial."""
    lost = int(_num(t.get("lost")) or 0) + int(_num(t.get("unsent")) or 0)
    count = _num(t.get("intended_count")) or _num(t.get("tx_frames")) or 0.0
    ratio = lost / count if count > 0 else (_num(t.get("loss_ratio")) or 0.0)
    return lost, ratio, _num(t.get("intended_s")) or 1.0


def loss_around_load(result: Mapping[str, Any], load: float | None) -> LossAround | None:
    """LossAround of the trials of a search result around `load` (the stored NDR), excised
    host-stall trials left out; None without an NDR or stored trials."""
    trials = result.get("trials")
    if not load or not isinstance(trials, list):
        return None
    below, above_lossless = [], []
    for t in trials:
        at = _num(t.get("intended_pps")) if isinstance(t, dict) else None
        if at is None or at_stored_load(at, load) or t.get("excised"):
            continue
        lost, ratio, _ = _trial_loss(t)
        if at < load:
            below.append((at, lost, ratio))
        elif not lost:
            above_lossless.append(at)
    lossy = [(at, ratio) for at, lost, ratio in below if lost]
    return LossAround(load, len(below), len(lossy), min((at for at, _ in lossy), default=None),
                      max((ratio for _, ratio in lossy), default=0.0),
                      max(above_lossless, default=None))


def combine_around(parts: list[LossAround], ndr_pps: float | None) -> LossAround | None:
    """The repetitions' LossAround as one, against the setup's NDR (their median): trials and
    lossy trials summed, the lowest lossy load and the worst ratio over them all."""
    if not parts or not ndr_pps:
        return None
    lows = [b.lowest_lossy_pps for b in parts if b.lowest_lossy_pps is not None]
    highs = [b.highest_lossless_pps for b in parts if b.highest_lossless_pps is not None]
    return LossAround(ndr_pps, sum(b.trials for b in parts), sum(b.lossy_trials for b in parts),
                      min(lows, default=None), max(b.worst_loss_ratio for b in parts),
                      max(highs, default=None))


__all__ = ["ILL_DEFINED_FRACTION", "LABELS", "LOSSLESS_ABOVE_FACTOR", "LoadLoss", "LossAround",
           "PERCENTILES", "TrialLoss", "at_stored_load", "combine_around", "load_loss",
           "loss_at_load", "loss_around_load", "loss_text", "search_load_loss",
           "session_trial_loss", "stored_trial_loss", "unreliable_percentiles", "unreliable_text"]
