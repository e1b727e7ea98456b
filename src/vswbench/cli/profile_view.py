"""Printing a trial's `--profile` (host/perf.py TrialProfile JSON): category shares and top
functions per core, and the scheduler-vs-perf CPU cross-check (measure/profiling.py)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from vswbench.cli.common import err
from vswbench.cli.common import out
from vswbench.host.profile import CATEGORIES
from vswbench.host.profile import CATEGORY_LABELS


def print_profile(profile: dict[str, Any] | None) -> None:
    if not profile:
        return
    out.print(_category_table(profile))
    for cpu, core in profile["cores"].items():
        _print_core(cpu, core)
    _print_cpu_check(profile.get("cpu_check") or {})
    for w in profile.get("warnings", []):
        err.print(f"[yellow]warning: {w}[/]", highlight=False)


def _category_table(profile: dict[str, Any]) -> Table:
    """Each category's share per core, then the same for this run's threads only."""
    cores = profile["cores"]
    table = Table(title=f"perf {profile['event']} profile, {profile['hz']} Hz, "
                        f"{profile['seconds']:.1f} s")
    table.add_column("category")
    for cpu in cores:
        table.add_column(f"cpu{cpu}", justify="right")
    for cat in CATEGORIES:
        table.add_row(CATEGORY_LABELS[cat],
                      *(f"{c['categories'][cat] * 100:.1f} %" for c in cores.values()))
    table.add_row("samples", *(str(c["samples"]) for c in cores.values()))
    own = {cpu: c["testbed"] for cpu, c in cores.items() if c.get("testbed")}
    if own:
        table.add_section()
        table.add_row("[b]this run's threads only[/]", *("" for _ in cores))
        for cat in CATEGORIES:
            table.add_row(CATEGORY_LABELS[cat], *(
                f"{own[cpu]['categories'][cat] * 100:.1f} %" if cpu in own else "–"
                for cpu in cores))
        table.add_row("share of the core", *(f"{own[cpu]['share'] * 100:.1f} %" if cpu in own
                                             else "–" for cpu in cores))
    return table


def _print_core(cpu: str, core: dict[str, Any]) -> None:
    tops = ", ".join(f"{escape(f['function'])}{'' if f['kernel'] else ' (user)'} "
                     f"{f['share'] * 100:.1f} %" for f in core["top_functions"][:6])
    out.print(f"cpu{cpu} top functions: {tops}", highlight=False)
    comms = ", ".join(f"{escape(c['comm'])} {c['share'] * 100:.0f} %"
                      for c in core.get("top_comms", [])[:5])
    out.print(f"cpu{cpu} threads: {comms}", highlight=False)
    if core.get("testbed"):
        tops = ", ".join(f"{escape(f['function'])} {f['share'] * 100:.1f} %"
                         for f in core["testbed"]["top_kernel_functions"][:3])
        out.print(f"cpu{cpu} this run's top kernel functions: {tops}", highlight=False)


def _print_cpu_check(check: dict[str, Any]) -> None:
    """Scheduler against perf busy share per core, and cycles per packet by both."""
    for cpu, c in check.get("per_core", {}).items():
        flag = "  [yellow]differ > 10 %[/]" if c["differ"] else ""
        out.print(f"cpu{cpu} busy: scheduler (/proc/stat) {c['scheduler_busy'] * 100:.1f} % "
                  f"(softirq {c['scheduler_softirq'] * 100:.1f} %), perf "
                  f"{c['perf_busy'] * 100:.1f} %{flag}", highlight=False)
    if check.get("cycles_per_packet_perf") is not None:
        out.print(f"cycles per packet on these cores: scheduler "
                  f"{check['cycles_per_packet_scheduler']:,.0f}, perf "
                  f"{check['cycles_per_packet_perf']:,.0f}"
                  f"{'  [yellow](differ > 10 %)[/]' if check.get('differ') else ''}",
                  highlight=False)
