"""Printing a trial's `--profile` (measure/profile_record.PerfProfile, read from host/perf.py's
TrialProfile JSON): category shares and top functions per core, and the scheduler-vs-perf CPU
cross-check (measure/profiling.py)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.host.profile import CATEGORIES
from vswbench.host.profile import CATEGORY_LABELS
from vswbench.measure.profile_record import CpuCheck
from vswbench.measure.profile_record import PerfProfile
from vswbench.measure.profile_record import ProfiledCore


def print_profile(profile: PerfProfile | None) -> None:
    if profile is None:
        return
    out.print(_category_table(profile))
    for core in profile.cores:
        _print_core(core)
    _print_cpu_check(profile.cpu_check)
    for w in profile.warnings:
        err.print(f"[yellow]warning: {w}[/]", highlight=False)


def _category_table(profile: PerfProfile) -> Table:
    """Each category's share per core, then the same for this run's threads only."""
    cores = profile.cores
    table = Table(title=f"perf {profile.event} profile, {profile.hz} Hz, "
                        f"{profile.seconds:.1f} s")
    table.add_column("category")
    for core in cores:
        table.add_column(f"cpu{core.cpu}", justify="right")
    for cat in CATEGORIES:
        table.add_row(CATEGORY_LABELS[cat],
                      *(f"{c.category_share(cat) * 100:.1f} %" for c in cores))
    table.add_row("samples", *(str(c.samples) for c in cores))
    if any(c.own is not None for c in cores):
        table.add_section()
        table.add_row("[b]this run's threads only[/]", *("" for _ in cores))
        for cat in CATEGORIES:
            table.add_row(CATEGORY_LABELS[cat], *(
                "–" if c.own is None else f"{c.own.category_share(cat) * 100:.1f} %"
                for c in cores))
        table.add_row("share of the core", *("–" if c.own is None else
                                             f"{c.own.share * 100:.1f} %" for c in cores))
    return table


def _print_core(core: ProfiledCore) -> None:
    tops = ", ".join(f"{escape(f.function)}{'' if f.kernel else ' (user)'} "
                     f"{f.share * 100:.1f} %" for f in core.top_functions[:6])
    out.print(f"cpu{core.cpu} top functions: {tops}", highlight=False)
    comms = ", ".join(f"{escape(c.comm)} {c.share * 100:.0f} %" for c in core.top_comms[:5])
    out.print(f"cpu{core.cpu} threads: {comms}", highlight=False)
    if core.own is not None:
        tops = ", ".join(f"{escape(f.function)} {f.share * 100:.1f} %"
                         for f in core.own.top_kernel_functions[:3])
        out.print(f"cpu{core.cpu} this run's top kernel functions: {tops}", highlight=False)


def _print_cpu_check(check: CpuCheck) -> None:
    """Scheduler against perf busy share per core, and cycles per packet by both."""
    for c in check.cores:
        flag = "  [yellow]differ > 10 %[/]" if c.differ else ""
        out.print(f"cpu{c.cpu} busy: scheduler (/proc/stat) {c.scheduler_busy * 100:.1f} % "
                  f"(softirq {c.scheduler_softirq * 100:.1f} %), perf "
                  f"{c.perf_busy * 100:.1f} %{flag}", highlight=False)
    if check.cycles_per_packet_perf is not None:
        out.print(f"cycles per packet on these cores: scheduler "
                  f"{num(check.cycles_per_packet_scheduler)}, perf "
                  f"{num(check.cycles_per_packet_perf)}"
                  f"{'  [yellow](differ > 10 %)[/]' if check.differ else ''}",
                  highlight=False)
