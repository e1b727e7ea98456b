"""The report's "flow-count" and "cloning" sections: Emmerich et al.'s OVS studies
(section 5.3, Fig. 6 "Flow table entries vs. cache misses" and Fig. 7 "Effects of cloning a flow").

- flow count: the throughput of one setup (switch, scenario, frame size, other knobs) measured at
  two or more flow counts (`flows = [...]`), against the number of flows on a log axis; where the
  switch reported its datapath flows after the point (OVS: `switch_stats.datapath_flows`), they
  are drawn on a second axis, so one sees whether N flows really became N datapath flows;
- cloning: the throughput against the number of output ports a frame is copied to (the ovs
  option `clones = K`), labelled with the change against one port.

Throughput is what results.points.throughput_of takes (a search's NDR, a trial's achieved rate, a sweep's
peak), the median over repetitions. sections/flow_count.py and sections/cloning.py draw them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import MARKERS
from vswbench.report.figure import PPS
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.results.params import Params
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults
from vswbench.results.points import setup_with
from vswbench.results.points import size_order

FLOW_COUNT_EMPTY = ("no flow-count study (one setup measured at two or more flow counts) in this "
                    "campaign")
CLONING_EMPTY = "no cloning study (ovs option clones) in this campaign"
FLOW_COUNT_INTRO = ("Throughput against the number of flows of one setup (Emmerich et al., "
                    "Fig. 6). With the ovs option flow_table=exact every flow has a rule of its own on its "
                    "source MAC and IPv4 address, so each becomes a datapath flow (megaflow) and "
                    "OVS's caches work as with that many hosts; the dotted lines (right axis) "
                    "are the datapath flows OVS held after the point.")
CLONING_INTRO = ("Throughput against the number of ports each frame leaves on (the ovs option "
                 "clones=K: the destination and K-1 extra ports; Emmerich et al., Fig. 7), "
                 "labelled with the change against one port.")


@dataclass(frozen=True)
class StudyPoint:
    switch: str
    scenario: str
    size: int | str
    variant: str                     # the other non-default knobs (without the varied one)
    metric: str                      # "NDR", "achieved", "peak achieved"
    x: int                           # flows, or output ports
    throughput_pps: float
    generator_bound: bool = False
    datapath_flows: int | None = None

    @property
    def series(self) -> tuple[str, str, str, str, str]:
        return (self.switch, self.scenario, str(self.size), self.variant, self.metric)

    @property
    def label(self) -> str:
        size = f"{self.size} B" if isinstance(self.size, int) else str(self.size)
        return " ".join(x for x in (self.switch, self.scenario, size, self.variant,
                                    self.metric) if x)


def _without(p: PointRecord, flows: bool = False, option: str | None = None) -> Params:
    params = p.params.replaced(flows=None) if flows else p.params
    return params.without_option(option) if option is not None else params


def _collect(data: StoredResults, x_of: Any, strip: dict[str, Any]) -> list[StudyPoint]:
    found: dict[tuple[Any, ...], list[tuple[float, bool, int | None]]] = defaultdict(list)
    for p in data.records():
        x, tp = x_of(p), p.throughput()
        if x is None or tp is None:
            continue
        s = setup_with(p, _without(p, **strip))
        found[(s.switch, s.scenario, s.size, s.variant, tp[0], x)].append(
            (tp[1], p.measured.generator_bound, p.measured.datapath_flows))
    out = []
    for (sw, scen, size, variant, metric, x), values in found.items():
        dp = [d for _, _, d in values if d is not None]
        out.append(StudyPoint(sw, scen, size, variant, metric, x,
                              statistics.median(v for v, _, _ in values),
                              any(b for _, b, _ in values),
                              int(statistics.median(dp)) if dp else None))
    return sorted(out, key=lambda q: (q.metric, q.scenario, size_order(q.size), q.switch,
                                      q.variant, q.x))


def flow_count_points(data: StoredResults) -> list[StudyPoint]:
    """Every series (setup without its flow count, and metric) seen at two or more flow counts."""
    def flows(p: PointRecord) -> int | None:
        value = p.params.flows
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    points = _collect(data, flows, {"flows": True})
    counts: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for q in points:
        counts[q.series].add(q.x)
    return [q for q in points if len(counts[q.series]) >= 2]


def clone_ports(p: PointRecord) -> int | None:
    return p.params.option_int("clones")


def cloning_points(data: StoredResults) -> list[StudyPoint]:
    """Every point with the clones option, by its number of output ports."""
    return _collect(data, clone_ports, {"option": "clones"})


# -- figures -----------------------------------------------------------------------------------
def _by_series(points: Sequence[StudyPoint]) -> dict[tuple[str, ...], list[StudyPoint]]:
    series: dict[tuple[str, ...], list[StudyPoint]] = defaultdict(list)
    for q in points:
        series[q.series].append(q)
    return dict(sorted(series.items()))


def flow_count_plot(points: Sequence[StudyPoint], colours: Any) -> Figure | None:
    if not points:
        return None
    fig, (ax,) = new_figure()
    dp_ax = None
    count = 0
    for i, (_, pts) in enumerate(_by_series(points).items()):
        pts.sort(key=lambda q: q.x)
        colour = colours(pts[0].switch)
        ax.plot([q.x for q in pts], [q.throughput_pps for q in pts], color=colour,
                marker=MARKERS[i % len(MARKERS)], linestyle=LINESTYLES[i % len(LINESTYLES)],
                label=pts[0].label)
        count += 1
        dp = [(q.x, q.datapath_flows) for q in pts if q.datapath_flows]
        if dp:
            if dp_ax is None:
                dp_ax = ax.twinx()
                dp_ax.set_yscale("log")
                dp_ax.set_ylabel("datapath flows after the point (log scale)")
                dp_ax.grid(False)
            dp_ax.plot([x for x, _ in dp], [d for _, d in dp], color=colour, linestyle=":",
                       marker="x", linewidth=1)
            ax.plot([], [], color=colour, linestyle=":", marker="x", linewidth=1,
                    label=f"{pts[0].switch} datapath flows")
            count += 1
    ax.set_xscale("log")
    ax.yaxis.set_major_formatter(PPS)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("flows (log scale)")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Throughput vs number of flows")
    if dp_ax is None:
        place_legend(ax, count)
    else:   # beside the axes, clear of the right axis' labels
        ax.legend(loc="upper left", bbox_to_anchor=(1.16, 1.0), borderaxespad=0.0)
    return fig


def cloning_plot(points: Sequence[StudyPoint], colours: Any) -> Figure | None:
    if not points:
        return None
    fig, (ax,) = new_figure()
    series = _by_series(points)
    for i, (_, pts) in enumerate(series.items()):
        pts.sort(key=lambda q: q.x)
        ax.plot([q.x for q in pts], [q.throughput_pps for q in pts],
                color=colours(pts[0].switch), marker=MARKERS[i % len(MARKERS)],
                linestyle=LINESTYLES[i % len(LINESTYLES)], label=pts[0].label)
        one = next((q.throughput_pps for q in pts if q.x == 1), None)
        for q in pts:
            if one and q.x != 1:
                ax.annotate(f"{(q.throughput_pps / one - 1) * 100:+.0f} %",
                            (q.x, q.throughput_pps), textcoords="offset points",
                            xytext=(5, 5), fontsize=7)
    ax.set_xticks(sorted({q.x for q in points}))
    ax.yaxis.set_major_formatter(PPS)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("output ports per frame (clones)")
    ax.set_ylabel("throughput at the tester (packets/s)")
    ax.set_title("Effects of cloning a flow")
    place_legend(ax, len(series))
    return fig
