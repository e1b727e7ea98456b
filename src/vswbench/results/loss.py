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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STORED_DIGITS = 1               # the search stores its bounds and NDR rounded to 0.1 pps
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


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def loss_at_load(result: Mapping[str, Any], load: float | None,
                 goal_loss_ratio: float = 0.0) -> LoadLoss | None:
    """LoadLoss of the trials of a search result at `load` (the stored NDR); None when no trial
    ran there (or the result stores no trials)."""
    trials = result.get("trials")
    if load is None or not isinstance(trials, list):
        return None
    found = []
    excised = 0
    for t in trials:
        at = _num(t.get("intended_pps")) if isinstance(t, dict) else None
        if at is None or not at_stored_load(at, load):
            continue
        lost = int(_num(t.get("lost")) or 0) + int(_num(t.get("unsent")) or 0)
        count = _num(t.get("intended_count")) or _num(t.get("tx_frames")) or 0.0
        ratio = lost / count if count > 0 else (_num(t.get("loss_ratio")) or 0.0)
        seconds = _num(t.get("intended_s")) or 1.0
        found.append((lost, ratio, seconds))
        excised += bool(lost and t.get("excised"))
    if not found:
        return None
    worst = max(found, key=lambda f: (f[1], f[0]))
    total = sum(s for _, _, s in found)
    over = sum(s for lost, ratio, s in found if lost and ratio > goal_loss_ratio)
    return LoadLoss(len(found), sum(1 for lost, _, _ in found if lost), worst[0], worst[1],
                    over / total if total else 0.0, excised)


__all__ = ["LABELS", "LoadLoss", "PERCENTILES", "at_stored_load", "loss_at_load", "loss_text",
           "unreliable_percentiles", "unreliable_text"]
