"""The report's perf profiles (`--profile`, `profile = true` in a spec): a flame graph per core
per profiled point (a compact renderer of folded stacks, matplotlib rectangles: PNG and SVG),
a stacked bar of the categories per switch and core, the scheduler-vs-perf CPU table (Emmerich
et al. Fig. 12), and the folded stacks as files flamegraph.pl and speedscope read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from vswbench.host.profile import CATEGORIES
from vswbench.host.profile import CATEGORY_LABELS
from vswbench.host.profile import KERNEL_SUFFIX
from vswbench.host.profile import split_folded
from vswbench.report.figure import new_figure
from vswbench.results.points import StoredResults
from vswbench.results.record import Profile
from vswbench.safefile import make_dir
from vswbench.safefile import write_text

FOLDED_DIR = "profiles"
MIN_WIDTH = 0.004            # frames narrower than this share of the core's samples are left out
MAX_DEPTH = 40
CATEGORY_COLOURS = {"daemon": "#4c72b0", "receive": "#55a868", "transmit": "#c44e52",
                    "switching": "#8172b2", "scheduler": "#ccb974", "copies": "#64b5cd",
                    "idle": "#dddddd", "tester": "#937860", "other": "#999999"}
INTRO = ("perf cpu-clock samples with call graphs on the cores the testbed used, for one trial "
         "per profiled point (searches and latency points: an extra trial at the NDR, never "
         "one of the search's own). Samples are attributed by the frame nearest the leaf that "
         "names a category (host/profile.py). Everything on a core is sampled: on a shared "
         "machine other processes show up as 'other' (the table names the threads). cpu-clock "
         "is a timer interrupt, not an NMI: time spent with interrupts off is charged to where "
         "they are turned back on (_raw_spin_unlock_irqrestore, finish_task_switch, "
         "irqentry_exit_to_user_mode), so those functions are over-counted.")


@dataclass(frozen=True)
class ProfiledPoint:
    label: str
    switch: str
    key: str
    offered_pps: float | None
    profile: Profile


def profiled_points(data: StoredResults) -> list[ProfiledPoint]:
    """Every done point with a profile: a trial's own, or the extra trial at the NDR."""
    return [ProfiledPoint(p.label, str(p.params.value("switch", "?")), p.key,
                          p.measured.profile.offered_pps, p.measured.profile)
            for p in data.all_records() if p.done and p.measured.profile is not None]


# -- flame graph ---------------------------------------------------------------------------------
def _tree(lines: Sequence[str]) -> dict[str, Any]:
    root: dict[str, Any] = {"n": 0, "kids": {}}
    for line in lines:
        stack, count = split_folded(line)
        node = root
        node["n"] += count
        for frame in stack.split(";")[:MAX_DEPTH]:
            node = node["kids"].setdefault(frame, {"n": 0, "kids": {}})
            node["n"] += count
    return root


def _colour(frame: str) -> str:
    """Warm for kernel frames, cool for user space, varied by a hash of the name (stable)."""
    h = int(hashlib.sha1(frame.encode()).hexdigest()[:4], 16) / 0xFFFF
    if frame.endswith(KERNEL_SUFFIX):
        return f"#{230:02x}{int(110 + 100 * h):02x}{int(40 + 40 * h):02x}"
    return f"#{int(60 + 60 * h):02x}{int(140 + 60 * h):02x}{220:02x}"


def flame_graph(lines: Sequence[str], title: str) -> Figure | None:
    """A flame graph of folded stacks: root at the bottom, width = share of samples."""
    root = _tree(lines)
    total = root["n"]
    if not total:
        return None
    fig, (ax,) = new_figure(wide=True)
    depth_seen = [0]

    def draw(node: dict[str, Any], x: float, depth: int) -> None:
        for name, kid in sorted(node["kids"].items()):
            w = kid["n"] / total
            if w < MIN_WIDTH:
                x += w
                continue
            ax.add_patch(Rectangle((x, depth), w, 0.95, facecolor=_colour(name),
                                   edgecolor="white", linewidth=0.3))
            label = name.removesuffix(KERNEL_SUFFIX)
            chars = int(w * 180)
            if chars >= 4:
                ax.text(x + 0.002, depth + 0.45, label if len(label) <= chars
                        else label[:chars - 2] + "..", fontsize=5, va="center", clip_on=True)
            depth_seen[0] = max(depth_seen[0], depth + 1)
            draw(kid, x, depth + 1)
            x += w

    draw(root, 0.0, 0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(depth_seen[0], 1))
    ax.set_yticks([])
    ax.set_xlabel(f"share of {total:,} samples (frames under {MIN_WIDTH * 100:g} % left out; "
                  "orange: kernel, blue: user space)")
    ax.set_title(title, fontsize=8)
    return fig


# -- categories per switch and core ----------------------------------------------------------------
def category_bars(points: Sequence[ProfiledPoint]) -> Figure | None:
    """One stacked bar per profiled point and core: the share of its samples per category, of
    the run's own threads where the profile tells them apart (the whole core otherwise)."""
    bars = []
    for p in points:
        for core in p.profile.cores:
            if core.own_share is not None:
                bars.append((f"{p.switch} cpu{core.cpu} (run: {core.own_share * 100:.0f} %)",
                             core.own_categories))
            elif core.samples:
                bars.append((f"{p.switch} cpu{core.cpu} (whole core)", core.categories))
    if not bars:
        return None
    fig, (ax,) = new_figure(wide=len(bars) > 6)
    bottom = [0.0] * len(bars)
    for cat in CATEGORIES:
        values = [b[1].get(cat, 0.0) * 100 for b in bars]
        ax.bar(range(len(bars)), values, bottom=bottom, color=CATEGORY_COLOURS[cat],
               label=CATEGORY_LABELS[cat])
        bottom = [a + b for a, b in zip(bottom, values)]
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("share of the core's samples (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def profile_figures(points: Sequence[ProfiledPoint]) -> list[tuple[str, str, Figure]]:
    figs: list[tuple[str, str, Figure]] = []
    bars = category_bars(points)
    if bars is not None:
        figs.append(("profile-categories", "Time per category, per switch and core", bars))
    for p in points:
        for core in p.profile.cores:
            cpu = core.cpu
            fig = flame_graph(core.folded, f"{p.label}: cpu{cpu}")
            if fig is not None:
                figs.append((f"flame-{p.key}-cpu{cpu}", f"Flame graph: {p.label}, cpu{cpu}",
                             fig))
    return figs


# -- tables and exports ----------------------------------------------------------------------------
def _pct(v: Any) -> str:
    return "–" if v is None else f"{v * 100:.1f} %"


def cpu_check_table(points: Sequence[ProfiledPoint]) -> str:
    """Scheduler-based (/proc/stat) against perf-based CPU per profiled point and core; rows
    more than 10 % apart are marked."""
    rows = []
    for p in points:
        check = p.profile
        for c in check.checks:
            mark = " ⚠ differ > 10 %" if c.differ else ""
            rows.append(f"<tr><td>{escape(p.label)}</td><td>cpu{escape(c.cpu)}</td>"
                        f"<td class=num>{_pct(c.scheduler_busy)}</td>"
                        f"<td class=num>{_pct(c.scheduler_softirq)}</td>"
                        f"<td class=num>{_pct(c.perf_busy)}{mark}</td></tr>")
        s, f = check.cycles_per_packet_scheduler, check.cycles_per_packet_perf
        if s and f:
            mark = " ⚠ differ > 10 %" if check.differ else ""
            rows.append(f"<tr><td>{escape(p.label)}</td><td>cycles/packet</td>"
                        f"<td class=num>{s:,.0f}</td><td></td>"
                        f"<td class=num>{f:,.0f}{mark}</td></tr>")
    if not rows:
        return ""
    return ("<p>Scheduler-based CPU (/proc/stat: tick-sampled irq and softirq time without "
            "CONFIG_IRQ_TIME_ACCOUNTING) against perf sampling of the same trial.</p>"
            "<table><tr><th>point</th><th>core</th><th>busy (scheduler)</th>"
            "<th>softirq (scheduler)</th><th>busy (perf)</th></tr>" + "".join(rows)
            + "</table>")


def top_functions_table(points: Sequence[ProfiledPoint], n: int = 3) -> str:
    rows = []
    for p in points:
        for core in p.profile.cores:
            tops = ", ".join(f"{escape(f.name)} {f.share * 100:.1f} %"
                             for f in core.top_functions[:n])
            comms = ", ".join(f"{escape(c.name)} {c.share * 100:.0f} %"
                              for c in core.top_comms[:4])
            rows.append(f"<tr><td>{escape(p.label)}</td><td>cpu{escape(core.cpu)}</td>"
                        f"<td>{tops or '–'}</td><td>{comms or '–'}</td></tr>")
    if not rows:
        return ""
    return ("<table><tr><th>point</th><th>core</th><th>top kernel functions (self time; of "
            "the run's own threads where known)</th><th>threads on the core</th></tr>"
            + "".join(rows) + "</table>")


def write_folded(points: Sequence[ProfiledPoint], out_dir: Path) -> list[Path]:
    """OUT/profiles/<point key>-cpuN.folded: `stack count` lines (flamegraph.pl, speedscope)."""
    written: list[Path] = []
    if not points:
        return written
    folder = make_dir(out_dir / FOLDED_DIR)
    for p in points:
        for core in p.profile.cores:
            path = folder / f"{p.key}-cpu{core.cpu}.folded"
            write_text(path, "\n".join(core.folded) + "\n")
            written.append(path)
    return written
