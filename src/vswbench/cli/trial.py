"""`vswbench trial`: one fixed offered load through a switch in a scenario (measure/plan.py)."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import placement_options
from vswbench.cli.common import seconds
from vswbench.cli.common import traffic_options
from vswbench.cli.common import trial_options
from vswbench.cli.profile_view import print_profile
from vswbench.measure.plan import execute_trials
from vswbench.measure.plan import plan_trial
from vswbench.measure.repeat import repeated_trials
from vswbench.measure.trial import TrialResult
from vswbench.report.backends import placement_text
from vswbench.results.record import read_placement
from vswbench.units import parse_rate


def _stalls_text(result: TrialResult) -> str:
    s = result.stalls
    if s is None or not s.monitored:
        return "not monitored" + (f" ({s.reason})" if s is not None and s.reason else "")
    return ", ".join(f"cpu{cpu} {c.stalls} ({c.longest_us / 1000:.2f} ms"
                     + ("" if c.steal_ms is None else f"; steal {c.steal_ms:g} ms") + ")"
                     for cpu, c in s.cpus.items())


def _num(value: float | None, digits: int = 1) -> str:
    return num(value, digits)


@click.command()
@placement_options
@traffic_options
@click.option("--rate", default="10k", show_default=True, help="Offered pps, e.g. 100k, 1.5M.")
@click.option("--duration", type=seconds(), default=5.0,
              show_default=True)
@click.option("--repeat", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Repeat the trial N times (median, CI, CV, worst/best of N).")
@click.option("--json", "as_json", is_flag=True, help="Print the trial's JSON.")
@click.option("--profile", is_flag=True,
              help="Sample the testbed's cores with perf (cpu-clock, call graphs) during the "
                   "trial: time per category and top functions per core.")
def trial(rate: str, duration: float, repeat: int, as_json: bool, profile: bool,
          **kw: Any) -> int:
    """One trial: fixed offered load through a switch in a scenario."""
    plan = plan_trial(trial_options(kw, rate_pps=parse_rate(rate), duration=duration))
    results = execute_trials(plan, repeat,
                             progress=lambda m: err.print(m, style="dim", highlight=False),
                             profile=profile)
    if repeat > 1:
        _print_repeated(results, as_json)
    elif as_json:
        click.echo(json.dumps(results[0].to_json(), indent=1))
    else:
        _print_trial(results[0])
    return 0


def _print_repeated(results: list[TrialResult], as_json: bool) -> None:
    stats = repeated_trials(results)
    if as_json:
        click.echo(json.dumps({"trials": [r.to_json() for r in results],
                               "statistics": stats.to_json(), "warnings": stats.warnings},
                              indent=1))
        return
    table = Table(title=f"{results[0].switch} / {results[0].scenario} / "
                        f"{results[0].frame_size} B: {len(results)} trials")
    for column in ("metric", "median", "min", "max", "95 % CI", "CV %"):
        table.add_column(column, justify="right")
    for metric, s in stats.summaries.items():
        digits = 6 if metric == "loss_ratio" else 1
        table.add_row(metric, *(_num(v, digits) for v in (s.median, s.min, s.max)),
                      f"{_num(s.ci_low, digits)}..{_num(s.ci_high, digits)}",
                      "–" if s.cv is None else f"{s.cv * 100:.2f}")
    out.print(table)
    for w in stats.warnings:
        err.print(f"[yellow]warning: {w}[/]", highlight=False)


def _print_trial(result: TrialResult) -> None:
    table = Table(title=f"{result.switch} / {result.scenario} / {result.frame_size} B "
                        f"({result.forwarding_mode})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in _trial_rows(result):
        table.add_row(key, value)
    out.print(table)
    print_profile(result.perf_profile)
    for w in result.warnings:
        err.print(f"[yellow]warning: {w}[/]", highlight=False)


def _trial_rows(result: TrialResult) -> list[tuple[str, str]]:
    lat = result.latency
    rows = [("offered pps", _num(result.offered_pps, 0)), ("tx pps", _num(result.tx_pps, 0)),
            ("achieved pps", _num(result.achieved_pps, 0)),
            ("tx / rx frames", f"{result.tx_frames:,} / {result.rx_frames:,}"),
            ("loss", f"{result.lost:,} ({result.loss_ratio * 100:.3f} %)"),
            (f"latency µs ({result.latency_kind or '–'}) min/p50/p99/max",
             " / ".join(_num(v, 1) for v in (lat.min, lat.p50, lat.p99, lat.max))),
            ("cycles per packet (all cores)", _num(result.cycles_per_packet, 0)),
            ("CPU busy per core", ", ".join(f"cpu{c} {u.busy * 100:.0f} %"
                                            for c, u in result.core_usage.items())),
            ("drops", ", ".join(f"{k} {v}" for k, v in result.drops.items() if v) or "none"),
            ("kernel counters agree", "yes" if result.counters_agree else "[red]no[/]"),
            ("host stalls per CPU (count, longest; steal)", _stalls_text(result))]
    if result.host_stall:
        rows.append(("classified", f"[yellow]{result.host_stall}[/]"))
    cores = _cores_text(result.placement)
    if cores:
        rows.append(("cores (rule: docs/methodology, CPU placement)", cores))
    return rows


def _cores_text(placement: dict[str, Any]) -> str:
    """The sides' cores where one side had several (more than 2 cores, measure/cores.py);
    empty otherwise, so that a 2-core trial prints as it always did."""
    stored = read_placement(json.loads(json.dumps(placement)))
    if stored is None or (len(stored.tester_cpus) < 2 and len(stored.switch_cpus) < 2):
        return ""
    return placement_text(stored) or ""
