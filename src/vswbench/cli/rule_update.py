"""`vswbench rule-update`: the time to install and remove N rules per switch mechanism, and
forwarding during updates against a quiet period (measure/rule_update.py)."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import FiniteRange
from vswbench.cli.common import emit
from vswbench.cli.common import method_plan
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import rate
from vswbench.cli.common import say
from vswbench.cli.common import seconds
from vswbench.cli.common import testbed_options
from vswbench.errors import UsageError
from vswbench.measure.rule_update import MAX_RULES
from vswbench.measure.rule_update import RuleUpdateRequest
from vswbench.measure.rule_update import RuleUpdateRun
from vswbench.measure.rule_update import check_counts
from vswbench.measure.rule_update import rule_update_method


def _counts(text: str) -> list[int]:
    try:
        counts = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--rules {text!r}: expected counts like 1000,10000") from None
    if not counts:
        raise UsageError("--rules: give at least one count, e.g. --rules 1000,10000")
    return counts


@click.command("rule-update")
@testbed_options
@click.option("--rules", "rules", default="1000,10000", show_default=True,
              help="Rule counts N to install and remove in one batch each.")
@click.option("--repeat", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Installs and removals per count (medians reported).")
@click.option("--rate", "load", default=None,
              help="Load during the forwarding comparison in pps [--fraction of the NDR].")
@click.option("--fraction", type=click.IntRange(1, 100), default=50, show_default=True,
              help="Percent of the NDR (found by a quick search) to load with, without --rate.")
@click.option("--update-rules", type=click.IntRange(1, MAX_RULES), default=1000, show_default=True,
              help="Rules per change during the forwarding comparison.")
@click.option("--update-rate", type=FiniteRange(0.1, 100), default=2.0, show_default=True,
              help="Changes (an install or a removal) per second during the comparison.")
@click.option("--duration", type=seconds(), default=5.0, show_default=True,
              help="Seconds of the quiet trial and of the trial during updates.")
@click.option("--no-load", is_flag=True, help="Time the updates only (no forwarding trials).")
def rule_update(**kw: Any) -> int:
    """Rule-update time: install/remove N rules per mechanism; loss and latency during updates."""
    counts = _counts(kw["rules"])
    check_counts(counts + [kw["update_rules"]])
    plan = method_plan(kw)
    run = rule_update_method(plan, RuleUpdateRequest(
        counts, kw["repeat"], rate(kw["load"]), kw["fraction"], kw["update_rules"],
        kw["update_rate"], kw["duration"], kw["no_load"]), say)
    emit(run.data, kw)
    if not kw["as_json"]:
        _print_timings(run, kw["repeat"])
        if run.phases:
            _print_phases(run)
    return 0


def _print_timings(run: RuleUpdateRun, repeat: int) -> None:
    table = Table(title=f"{run.title.switch}: rule-update time (medians of {repeat})")
    for col in ("mechanism", "rules", "install ms", "remove ms", "rules/s"):
        table.add_column(col, justify="right")
    for t in run.timings:
        table.add_row(t.mechanism, f"{t.rules:,}", num(t.install_median_s * 1e3, 1),
                      num(t.remove_median_s * 1e3, 1),
                      num(t.rules / t.install_median_s if t.install_median_s else None))
    out.print(table)


def _print_phases(run: RuleUpdateRun) -> None:
    table = Table(title=f"forwarding at {run.load:,.0f} pps, quiet vs during updates")
    for col in ("phase", "changes", "lost", "loss %", "p50 us", "p99 us", "max us"):
        table.add_column(col, justify="right")
    for ps in run.phases.values():
        for p in ps:
            lat = p.latency
            table.add_row(p.name, str(p.updates), f"{p.lost:,}",
                          num(p.loss_ratio * 100, 3), num(lat.p50, 1), num(lat.p99, 1),
                          num(lat.max, 1))
    out.print(table)
