"""`vswbench ab`: two configurations of a switch, interleaved, and whether B differs from A
(bodies in campaign/ab.py and results/ab.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import SWITCH_FILE_OPTION
from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import say
from vswbench.cli.common import size_option
from vswbench.cli.common import table_out
from vswbench.errors import UsageError
from vswbench.host.sysinfo import fingerprint
from vswbench.measure.search import PRESETS
from vswbench.units import IMIX_DEFAULT_GENOME
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME

if TYPE_CHECKING:      # campaign/ is imported when a run starts, not at start-up
    from vswbench.campaign.ab import ABPlan
    from vswbench.campaign.ab import ABRun
    from vswbench.campaign.ab import Side
    from vswbench.results.ab import ABVerdict
    from vswbench.results.compare import Threshold


@click.command()
@click.option("--switch", default=None, help="The switch of both sides (see `vswbench switches`).")
@SWITCH_FILE_OPTION
@click.option("--a-switch", default=None, help="Side A's switch instead of --switch.")
@click.option("--b-switch", default=None, help="Side B's switch instead of --switch.")
@click.option("--a-switch-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Side A's own switch, declared in this file (e.g. one build of it).")
@click.option("--b-switch-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Side B's own switch, declared in this file (e.g. the other build).")
@click.option("--a-opt", "a_opts", multiple=True, metavar="K=V",
              help="A backend option of side A, e.g. bridge_fdb=learn (repeatable).")
@click.option("--b-opt", "b_opts", multiple=True, metavar="K=V",
              help="A backend option of side B, e.g. function=acl (repeatable).")
@click.option("--a-sysctl", "a_sysctls", multiple=True, metavar="K=V",
              help="A net.* sysctl set in side A's switch namespace (repeatable).")
@click.option("--b-sysctl", "b_sysctls", multiple=True, metavar="K=V",
              help="A net.* sysctl set in side B's switch namespace (repeatable).")
@click.option("--a-shape-pps", type=click.FloatRange(1000, 1e9), default=None,
              help="Side A's shaper rate in packets/s (switch shaped, the calibration device).")
@click.option("--b-shape-pps", type=click.FloatRange(1000, 1e9), default=None,
              help="Side B's shaper rate in packets/s (switch shaped): a known slowdown.")
@click.option("--scenario", default="p2p", show_default=True)
@size_option()
@click.option("--method", type=click.Choice(["rounds", "searches"]), default="rounds",
              show_default=True,
              help="rounds: both testbeds kept up, one MRR sample of each side per round, judged "
                   "by the paired signed-rank test (6 rounds or more can decide); searches: one "
                   "search of each side per round on fresh testbeds (rank test, 4 or more).")
@click.option("--preset", type=click.Choice(list(PRESETS)), default="quick", show_default=True,
              help="The searches' preset (--method searches).")
@click.option("--rounds", type=click.IntRange(2, 100), default=None,
              help="Rounds, each side once a round in a random order [rounds: 12, searches: 5].")
@click.option("--seed", type=click.IntRange(0), default=None,
              help="Seed of the rounds' order [random].")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="A new results directory [results/ab-<date-time>].")
@click.option("--fail-if", "fail_if", multiple=True,
              help="Exit 1 when B differs from A beyond this, e.g. ndr:-5%.")
@click.option("--json", "as_json", is_flag=True)
def ab(**kw: Any) -> int:
    """A/B: two configurations of a switch in randomised interleaved rounds; does B differ?"""
    from vswbench.campaign.ab import run_ab

    thresholds = _thresholds(kw["fail_if"])
    plan = _ab_plan(kw)
    out_dir = kw["out_dir"] or Path(f"results/ab-{time.strftime('%Y%m%d-%H%M%S')}")
    done = run_ab(plan, out_dir, fingerprint=fingerprint().to_json(), progress=say)
    verdict, a, b = _judged(plan, done)
    failures = [f"B/A {verdict.ratio:.3f}, beyond {t.change * 100:+g} %" for t in thresholds
                if verdict.differs and verdict.ratio is not None
                and t.violated_by(verdict.ratio)]
    if kw["as_json"]:
        _print_json(done, verdict, a, b, failures)
    else:
        _print_table(done, verdict, ((a, plan.a), (b, plan.b)))
    for w in verdict.warnings():
        err.print(f"warning: {w}", style="yellow", highlight=False, markup=False)
    for f in failures:
        err.print(f"fail: {f}", style="red", highlight=False, markup=False)
    return 1 if failures or done.failed else 0


def _thresholds(fail_if: tuple[str, ...]) -> list[Threshold]:
    from vswbench.results.compare import parse_threshold

    thresholds = [parse_threshold(t) for t in fail_if]
    for t in thresholds:
        if t.metric not in ("ndr", "mrr"):
            raise UsageError(f"--fail-if {t.metric}: ab compares its sides' throughput (MRR in "
                             "rounds, NDR in searches); give mrr:-N% or ndr:-N%")
    return thresholds


def _ab_plan(kw: dict[str, Any]) -> ABPlan:
    """The two sides (each its switch, options, sysctls, shaper) and the rounds, checked."""
    from vswbench.campaign.ab import ABPlan
    from vswbench.campaign.ab import Side
    from vswbench.campaign.ab import parse_pairs
    from vswbench.campaign.ab import side_switch

    sides = []
    for name in ("A", "B"):
        low = name.lower()
        file = kw[f"{low}_switch_file"]
        switch, path = side_switch(name, kw[f"{low}_switch"] or (None if file else kw["switch"]),
                                   file)
        sides.append(Side(name, switch, parse_pairs(kw[f"{low}_opts"], f"--{low}-opt"),
                          parse_pairs(kw[f"{low}_sysctls"], f"--{low}-sysctl"), path,
                          kw[f"{low}_shape_pps"]))
    size = kw["size"]
    if size.is_imix and size.genome != IMIX_DEFAULT_GENOME:
        raise UsageError(f"--size: ab takes imix with its default genome, or bytes "
                         f"{MIN_FRAME}..{MAX_FRAME}")
    method = kw["method"]
    rounds = kw["rounds"] or (12 if method == "rounds" else 5)
    return ABPlan(sides[0], sides[1], kw["scenario"], "imix" if size.is_imix else
                  int(size.bytes or 64), kw["preset"], rounds, kw["seed"], method)


def _judged(plan: ABPlan, done: ABRun) -> tuple[ABVerdict, Any, Any]:
    """The verdict and the two sides as judged: paired rounds (MRR), else the searches' NDRs."""
    from vswbench.results.ab import judge
    from vswbench.results.ab import judge_paired
    from vswbench.results.ab import paired_sides_of
    from vswbench.results.ab import sides_of

    paired = paired_sides_of(done.store) if plan.method == "rounds" else None
    if paired is not None:
        verdict = judge_paired(*paired, label=f"{plan.scenario} {plan.size}")
        return verdict, verdict.a, verdict.b
    a, b = sides_of(done.store)
    return judge(a, b), a, b


def _print_json(done: ABRun, verdict: ABVerdict, a: Any, b: Any, failures: list[str]) -> None:
    click.echo(json.dumps({
        "store": str(done.store), "order": [f"{r + 1}{s}" for r, s in done.order],
        "sides": {s.side: {"setup": s.label, ("mrr_pps" if verdict.method == "rounds"
                                              else "ndr_pps"): list(s.ndrs),
                           "median": s.median,
                           "excised_trials": s.excised_trials, "trials": s.trials,
                           "generator_bound": s.generator_bound} for s in (a, b)},
        "method": verdict.method, "differs": verdict.differs,
        "p_value": verdict.p_value, "ratio": verdict.ratio,
        "ci": list(verdict.ci), "verdict": verdict.describe(), "failures": failures,
        "warnings": verdict.warnings()},
        indent=1))


def _print_table(done: ABRun, verdict: ABVerdict, sides: tuple[tuple[Any, Side], ...]) -> None:
    table = Table(title=f"A/B: {done.store.parent}")
    figure = "MRR pps per round" if verdict.method == "rounds" else "NDR pps per round"
    for col in ("side", "configuration", figure, "median", "stall trials excised"):
        table.add_column(col)
    for s, side in sides:
        table.add_row(s.side, side.describe(), ", ".join(num(v) for v in s.ndrs),
                      num(s.median), str(s.excised_trials))
    table_out().print(table)
    out.print(verdict.describe(), style="bold", highlight=False, markup=False)
    if done.failed:
        err.print(f"{done.failed} search(es) failed (recorded in the store)", style="yellow",
                  highlight=False)
