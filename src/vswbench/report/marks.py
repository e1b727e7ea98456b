"""Loss beside the numbers it touches: the cells the ranking shows for a latency figure from a
lossy trial and for a search whose trials at the NDR's load lost frames (results/loss.py).

The same marks in the terminal table, the plain-text and Markdown ranking and the HTML report:

- a percentile from a latency trial that lost frames (or whose engine and kernel counters
  disagreed) gets `*`: it is of the frames that arrived;
- a percentile above 1 - the loss ratio gets `!` instead: the loss makes it unreliable (a lost
  frame may have waited longer than any that arrived);
- the "lat. loss" cell: the latency trial's lost frames and ratio ("0" when it lost none,
  "ctr!" when its counters disagreed); the "loss at NDR" cell: the worst trial at the NDR's
  load and the share of that load's trial time over the goal's loss ratio.
"""

from __future__ import annotations

from vswbench.results.loss import LoadLoss
from vswbench.results.points import Latency

MARKS_NOTE = ("*: from a latency trial that lost frames or whose counters disagreed (the "
              "percentile is of the frames that arrived); !: above 1 - its loss ratio, "
              "unreliable (a lost frame may have waited longer than any that arrived); lat. "
              "loss: frames the latency trial lost (ratio), ctr!: its engine and kernel "
              "counters disagreed; loss at NDR: the worst trial at the NDR's load (lost "
              "frames, ratio) and the share of that load's trial time over the goal's loss.")


def mark(lat: Latency | None, percentile: str) -> str:
    """"!", "*" or "" for percentile "p50", "p99", ... of a latency figure."""
    if lat is None or not lat.lossy:
        return ""
    return "!" if percentile in lat.unreliable else "*"


def percentile_cell(lat: Latency | None, percentile: str, missing: str = "-") -> str:
    value = None if lat is None else getattr(lat, f"{percentile}_us")
    if value is None:
        return missing
    return f"{value:,.1f}{mark(lat, percentile)}"


def latency_loss_cell(lat: Latency | None, missing: str = "-") -> str:
    if lat is None or (lat.lost_frames is None and lat.loss_ratio is None
                       and lat.counters_agree is None):
        return missing
    text = "0" if not (lat.lost_frames or lat.loss_ratio) else (
        f"{lat.lost_frames or 0:,} ({(lat.loss_ratio or 0) * 100:.3g} %)")
    return text + (" ctr!" if lat.counters_agree is False else "")


def ndr_loss_cell(loss: LoadLoss | None, missing: str = "-") -> str:
    if loss is None:
        return missing
    if not loss.lossy_trials:
        return "0"
    return (f"{loss.worst_lost_frames:,} ({loss.worst_loss_ratio * 100:.3g} %), "
            f"{loss.time_over_goal * 100:.0f} % of time"
            + (f", {loss.excised_trials} excised" if loss.excised_trials else ""))


def ndr_loss_mark(loss: LoadLoss | None, missing: str = "-") -> str:
    """The loss cell of a narrow table (the first screen at 80 columns): "0", or the worst
    trial's loss ratio at the NDR's load ("0.12%"); ndr_loss_cell says the rest."""
    if loss is None:
        return missing
    if not loss.lossy_trials:
        return "0"
    return f"{loss.worst_loss_ratio * 100:.2g}%"
