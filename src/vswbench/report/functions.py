"""The report's "table-size" and "rule-update" sections (switches/rules/functions.py,
measure/rule_update.py; Fang et al., Fig. 5/6 and section 3.5):

- table size: the throughput of one setup (switch, function, other knobs) measured at two or more
  table sizes (`table_size = [...]`: l3 prefixes, acl rules), against the table size on a log axis;
- rule update: per switch, mechanism and rule count, the median seconds to install and to remove
  the rules (figure and table), and the forwarding comparison of each point: frames lost and
  latency percentiles quiet against during the changes.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from matplotlib.figure import Figure

from vswbench.engine.records import LatencySummary
from vswbench.report.figure import LINESTYLES
from vswbench.report.figure import MARKERS
from vswbench.report.figure import PPS
from vswbench.report.figure import new_figure
from vswbench.report.figure import place_legend
from vswbench.report.studies import StudyPoint
from vswbench.report.studies import _by_series
from vswbench.report.studies import _collect
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults

TABLE_SIZE_EMPTY = ("no table-size study (one setup measured at two or more table_size values) "
                    "in this campaign")
TABLE_SIZE_INTRO = ("Throughput against the size of the switch's table, independent of the "
                    "flows (Fang et al., Fig. 5/6): function l3 is a routing table of that many "
                    "overlapping prefixes the destinations are spread over (longest-prefix "
                    "match), acl that many filter rules every frame traverses.")
RULE_UPDATE_EMPTY = "no rule-update point in this campaign"
RULE_UPDATE_INTRO = ("Time to install N rules in one batch and to remove them in one batch "
                     "(medians), per switch and mechanism: ip -batch routes and one nftables "
                     "transaction (router), one OpenFlow bundle (ovs). Below, forwarding at a "
                     "constant load, quiet against while rules were changed at the given rate "
                     "(Fang et al., section 3.5: rule-update time, jitter and loss).")


def table_size_of(p: PointRecord) -> int | None:
    return p.params.option_int("table_size")


def table_size_points(data: StoredResults) -> list[StudyPoint]:
    """Every series (setup without its table size) seen at two or more table sizes."""
    points = _collect(data, table_size_of, {"option": "table_size"})
    sizes: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for q in points:
        sizes[q.series].add(q.x)
    return [q for q in points if len(sizes[q.series]) >= 2]


def table_size_plot(points: Sequence[StudyPoint], colours: Any) -> Figure | None:
    if not points:
        return None
    fig, (ax,) = new_figure()
    series = _by_series(points)
    for i, (_, pts) in enumerate(series.items()):
        pts.sort(key=lambda q: q.x)
        ax.plot([q.x for q in pts], [q.throughput_pps for q in pts], color=colours(pts[0].switch),
                marker=MARKERS[i % len(MARKERS)], linestyle=LINESTYLES[i % len(LINESTYLES)],
                label=pts[0].label)
    ax.set_xscale("log")
    ax.yaxis.set_major_formatter(PPS)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("table size: prefixes (l3) or rules (acl) (log scale)")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Throughput vs table size")
    place_legend(ax, len(series))
    return fig


# -- rule updates ------------------------------------------------------------------------------
@dataclass(frozen=True)
class UpdateRow:
    switch: str
    mechanism: str
    rules: int
    install_s: float
    remove_s: float


@dataclass(frozen=True)
class DuringRow:
    switch: str
    mechanism: str
    rules: int
    update_rate: float | None
    phase: str
    load_pps: float
    changes: int
    lost: int
    loss_ratio: float
    latency: LatencySummary | None


def rule_update_rows(data: StoredResults) -> tuple[list[UpdateRow], list[DuringRow]]:
    """The timings (medians over repetitions of the point) and the forwarding comparisons."""
    times: dict[tuple[str, str, int], list[tuple[float, float]]] = defaultdict(list)
    during: list[DuringRow] = []
    for p in data.records("rule-update"):
        u = p.measured.rule_update
        if u is None:
            continue
        switch = str(p.params.value("switch", "?"))
        for t in u.timings:
            if t.install_median_s is not None and t.remove_median_s is not None:
                times[(switch, t.mechanism, t.rules)].append((t.install_median_s,
                                                              t.remove_median_s))
        for ph in u.phases:
            during.append(DuringRow(switch, ph.mechanism, u.update_rules, u.update_rate, ph.name,
                                    ph.offered_pps, ph.updates, ph.lost, ph.loss_ratio,
                                    ph.latency))
    rows = [UpdateRow(sw, mech, n, statistics.median(i for i, _ in v),
                      statistics.median(r for _, r in v))
            for (sw, mech, n), v in sorted(times.items())]
    return rows, during


def rule_update_plot(rows: Sequence[UpdateRow], colours: Any) -> Figure | None:
    if not rows:
        return None
    fig, (ax,) = new_figure()
    series: dict[tuple[str, str], list[UpdateRow]] = defaultdict(list)
    for r in rows:
        series[(r.switch, r.mechanism)].append(r)
    for i, ((sw, mech), pts) in enumerate(sorted(series.items())):
        pts.sort(key=lambda r: r.rules)
        for what, style in (("install", "-"), ("remove", "--")):
            ax.plot([r.rules for r in pts], [getattr(r, f"{what}_s") * 1e3 for r in pts],
                    color=colours(sw), marker=MARKERS[i % len(MARKERS)], linestyle=style,
                    label=f"{sw} {mech}: {what}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rules per batch (log scale)")
    ax.set_ylabel("milliseconds (log scale)")
    ax.set_title("Rule-update time: install and remove N rules")
    place_legend(ax, 2 * len(series))
    return fig


def _n(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def rule_update_tables(rows: Sequence[UpdateRow], during: Sequence[DuringRow]) -> str:
    if not rows and not during:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("switch", "mechanism", "rules", "install ms",
                                             "remove ms", "rules/s installed"))
    body = "".join(
        f"<tr><td>{escape(r.switch)}</td><td>{escape(r.mechanism)}</td>"
        f'<td class="num">{r.rules:,}</td><td class="num">{_n(r.install_s * 1e3)}</td>'
        f'<td class="num">{_n(r.remove_s * 1e3)}</td>'
        f'<td class="num">{_n(r.rules / r.install_s if r.install_s else None, 0)}</td></tr>'
        for r in rows)
    parts = [f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"]
    if during:
        cols = ("switch", "rules per change", "changes/s", "phase", "load pps", "changes",
                "lost", "loss %", "p50 us", "p99 us", "p99.9 us", "max us")
        head = "".join(f"<th>{h}</th>" for h in cols)
        body = "".join(
            f"<tr><td>{escape(d.switch)}</td><td class=\"num\">{d.rules:,}</td>"
            f'<td class="num">{_n(d.update_rate, 1)}</td><td>{escape(d.phase)}</td>'
            f'<td class="num">{d.load_pps:,.0f}</td><td class="num">{d.changes}</td>'
            f'<td class="num">{d.lost:,}</td><td class="num">{d.loss_ratio * 100:.3f}</td>'
            + "".join(f'<td class="num">{_n(getattr(d.latency, k, None))}</td>'
                      for k in ("p50", "p99", "p999", "max")) + "</tr>"
            for d in during)
        parts.append(f"<h3>Forwarding during updates</h3><table><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    return "".join(parts)
