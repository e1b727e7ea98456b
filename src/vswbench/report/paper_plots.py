"""The paper pages' figure of Sattar and Matrawy's kind (Figs. 3 and 4): the ECDF of
the switch's own delay, drawn as the quantile difference between each trial through the switch
and the trial through the baseline (veth: no switch) with the same other parameters, the
paper's variable (rate or frame size) one curve each.

For p in 0.5 %, 1 %, ..., 99.5 %: delay(p) = Q_switch(p) - Q_baseline(p), with Q the quantile
function of the engine's latency histogram (models.delay.DelayModel). This is a shift function
(the horizontal distance between the two ECDFs), which equals the switch's own delay
distribution when the path without the switch adds an independent, constant-shaped delay; it
is what "subtracting the no-switch baseline" can honestly mean for two measured distributions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vswbench.models.delay import DelayCondition
from vswbench.models.delay import DelayModel
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import MARKERS
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.figure import render
from vswbench.report.figure import report_style
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults

PROBABILITIES = np.linspace(0.005, 0.995, 199)
LOW, HIGH = 3, 189                    # indexes of the 2nd and 95th percentile in PROBABILITIES


@dataclass(frozen=True)
class DelayCurve:
    label: str                        # "ovs 576 B at 100 pps"
    delay_us: tuple[float, ...]       # at PROBABILITIES
    samples: int


def _model(p: PointRecord) -> DelayModel | None:
    hist = p.measured.as_trial.histogram if p.measured.as_trial is not None else ()
    if not hist:
        return None
    cond = DelayCondition(str(p.params.value("switch")), str(p.params.value("scenario")),
                          p.params.value("size", 64), kind="trial", offered_pps=p.params.rate)
    try:
        return DelayModel.from_histogram(hist, cond)
    except Exception:                           # noqa: BLE001 - a malformed histogram: no curve
        return None


def delay_curves(data: StoredResults, baseline: str = "veth") -> list[DelayCurve]:
    """One curve per trial of a switch other than the baseline that has a baseline trial with
    the same other parameters (repetitions: the first of each)."""
    def rest(p: PointRecord) -> tuple[tuple[str, str], ...]:
        return p.params.pairs(without=("switch", "repetition"))
    trials = [p for p in data.records("trial") if not p.params.value("repetition")]
    bases = {rest(p): p for p in trials if p.params.value("switch") == baseline}
    curves = []
    for p in trials:
        if p.params.value("switch") == baseline or rest(p) not in bases:
            continue
        mine, theirs = _model(p), _model(bases[rest(p)])
        if mine is None or theirs is None:
            continue
        diff = mine.quantile(PROBABILITIES) - theirs.quantile(PROBABILITIES)
        curves.append(DelayCurve(f"{mine.condition.label} - {baseline}",
                                 tuple(float(x) for x in diff), mine.samples))
    return curves


def delay_ecdf_png(curves: Sequence[DelayCurve], title: str) -> bytes | None:
    if not curves:
        return None
    with report_style():
        fig, (ax,) = new_figure()
        for i, c in enumerate(curves):
            ax.plot(c.delay_us, PROBABILITIES, linestyle=LINESTYLES[i % len(LINESTYLES)],
                    marker=MARKERS[i % len(MARKERS)], markevery=40,
                    label=f"{c.label} ({c.samples:,} samples)")
        ax.axvline(0.0, color="#999999", linewidth=0.8)
        lo = min(c.delay_us[LOW] for c in curves)     # the tails (preemption on a shared VM)
        hi = max(c.delay_us[HIGH] for c in curves)    # would hide the bulk: 2nd-95th pct shown
        pad = 0.1 * max(hi - lo, 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_xlabel("switch delay: quantile minus the baseline's (us), 2nd-95th pct shown")
        ax.set_ylabel("cumulative fraction of packets")
        ax.set_ylim(0, 1)
        ax.set_title(title)
        place_legend(ax, len(curves))
        png, _ = render(fig)
    return png
