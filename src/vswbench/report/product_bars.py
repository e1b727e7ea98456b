"""Whole-product parameter error bars, exactly as Fang et al. (Fig. 7) define them.

Per switch and function (a point's `function` field, "l2" when it has none: plain port-to-port
forwarding) and metric (NDR of searches, achieved throughput of trials, peak of sweeps): the
throughput of every point of the campaign's Cartesian product of workload parameters (size, flows,
burst, rate, churn, ...; each point the median over its repetitions), their median, and whiskers
at their minimum and maximum, both divided by that median. A bar from 0.3 to 1.2 says that
somewhere in the product the switch fell to 30 % of its typical throughput, and somewhere rose to
120 %. Beside these, spread.py has the per-parameter bars (one parameter varied, the others fixed).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import fields

from matplotlib.figure import Figure

from vswbench.report.figure import Colours
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.results.params import Params
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults

DEFAULT_FUNCTION = "l2"
GROUP_KEYS = ("switch", "function")       # a bar per switch and function (and metric)
NOT_PRODUCT = ("repetition", *GROUP_KEYS)  # keys that do not make a point of the product


@dataclass(frozen=True)
class ProductBar:
    switch: str
    function: str                # "l2", or the function the point measured (l3, nat, acl, ...)
    metric: str                  # "NDR", "achieved", "peak achieved"
    median_pps: float            # median over every point of the product
    min_pps: float
    max_pps: float
    low: float                   # min / median (<= 1)
    high: float                  # max / median (>= 1)
    points: int                  # points of the product (repetitions folded into their median)
    parameters: str              # the parameters that varied over them, "burst x flows x size"


def function_of(p: PointRecord) -> str:
    value = p.params.value("function", p.measured.function)
    return str(value) if value else DEFAULT_FUNCTION


def product_bars(data: StoredResults) -> list[ProductBar]:
    """One bar per (switch, function, metric) with two points or more and a positive median."""
    groups: dict[tuple[str, str, str], dict[str, tuple[Params, list[float]]]] = \
        defaultdict(dict)
    for p in data.records():
        tp = p.throughput()
        if tp is None:
            continue
        group = (str(p.params.value("switch", "?")), function_of(p), tp[0])
        groups[group].setdefault(p.params.canonical(without=NOT_PRODUCT),
                                 (p.params, []))[1].append(tp[1])
    bars = []
    for (switch, function, metric), pts in sorted(groups.items()):
        values = [statistics.median(v) for _, v in pts.values()]
        median = statistics.median(values)
        if len(values) < 2 or not median > 0:
            continue        # one point is no product (its repetitions have spread.py's bar)
        # Params has keys() but is no mapping (not iterable): SIM118's `in prm` would fail
        varied = sorted(k for k in {k for prm, _ in pts.values() for k in prm.keys()}  # noqa: SIM118
                        if k not in NOT_PRODUCT
                        and len({prm.json(k) for prm, _ in pts.values()}) > 1)
        bars.append(ProductBar(switch, function, metric, median, min(values), max(values),
                               min(values) / median, max(values) / median, len(values),
                               " x ".join(varied)))
    return bars


def product_bars_json(bars: Sequence[ProductBar]) -> str:
    """The bars as data: schema vswbench.product-error-bars v1."""
    return json.dumps({"schema": "vswbench.product-error-bars", "version": 1,
                       "definition": "per switch, function and metric: median over every point "
                                     "of the product, whiskers at min and max, / median",
                       "bars": [asdict(b) for b in bars]}, indent=1, sort_keys=True) + "\n"


def product_bars_csv(bars: Sequence[ProductBar]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = [f.name for f in fields(ProductBar)]
    writer.writerow(names)
    for b in bars:
        writer.writerow([getattr(b, n) for n in names])
    return buf.getvalue()


def product_bar_plot(bars: Sequence[ProductBar], colours: Colours) -> Figure | None:
    """Fang's Fig. 7: per function (x) one marker per switch at 1 (the median) with whiskers to
    min/median and max/median; the median's pps written under it."""
    if not bars:
        return None
    metrics = sorted({b.metric for b in bars})
    categories = sorted({(b.function, b.metric) for b in bars},
                        key=lambda c: (c[0] != DEFAULT_FUNCTION, c))
    switches = sorted({b.switch for b in bars})
    fig, (ax,) = new_figure()
    width = 0.8 / max(1, len(switches))
    for k, sw in enumerate(switches):
        xs, lows, highs = [], [], []
        for i, cat in enumerate(categories):
            for b in bars:
                if b.switch == sw and (b.function, b.metric) == cat:
                    x = i - 0.4 + width * (k + 0.5)
                    xs.append(x)
                    lows.append(1 - b.low)
                    highs.append(b.high - 1)
                    ax.annotate(f"{b.median_pps / 1e3:,.0f}k", (x, b.low), fontsize=7,
                                ha="center", va="top", xytext=(0, -3),
                                textcoords="offset points")
        if xs:
            ax.errorbar(xs, [1.0] * len(xs), yerr=[lows, highs], fmt=colours.marker(sw),
                        capsize=4, color=colours(sw), label=sw)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([f if len(metrics) == 1 else f"{f}\n({m})" for f, m in categories])
    ax.set_xlim(-0.6, len(categories) - 0.4)
    ax.set_ylim(bottom=min(0.0, min(b.low for b in bars) - 0.1))
    ax.set_xlabel("function")
    ax.set_ylabel("throughput / median over the product (ratio)")
    metric = metrics[0] if len(metrics) == 1 else "throughput"
    ax.set_title(f"Whole-product error bars: {metric}, min and max over every point")
    place_legend(ax, len(switches))
    return fig
