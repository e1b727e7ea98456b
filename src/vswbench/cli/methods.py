"""`vswbench search | sweep`: NDR/PDR searches and load sweeps (bodies in measure/)."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import FiniteRange
from vswbench.cli.common import emit
from vswbench.cli.common import err
from vswbench.cli.common import method_plan
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import rate
from vswbench.cli.common import say
from vswbench.cli.common import seconds
from vswbench.cli.common import testbed_options
from vswbench.cli.common import trial_line
from vswbench.cli.profile_view import print_profile
from vswbench.errors import UsageError
from vswbench.host.perf import perf_problem
from vswbench.measure.loadcurve import SWEEP_POINTS_RANGE
from vswbench.measure.loadcurve import Saturation
from vswbench.measure.loadcurve import check_fraction_loads
from vswbench.measure.loadcurve import parse_fractions
from vswbench.measure.method import SearchRequest
from vswbench.measure.method import SearchRun
from vswbench.measure.method import SweepRequest
from vswbench.measure.method import SweepRun
from vswbench.measure.method import search_method
from vswbench.measure.method import sweep_method
from vswbench.measure.search import PRESETS
from vswbench.measure.search import preset
from vswbench.results.loss import search_load_loss


# -- search ------------------------------------------------------------------------------------
@click.command()
@testbed_options
@click.option("--preset", "preset_name", type=click.Choice(list(PRESETS)),
              default="fast", show_default=True, help="Search goals (docs/methodology).")
@click.option("--min-load", default="1k", show_default=True, help="Lowest load searched (pps).")
@click.option("--max-load", default=None, help="Highest load [the tester's calibrated ceiling].")
@click.option("--trial-duration", type=seconds(), default=None,
              help="Override the preset's final trial duration (s).")
@click.option("--repeat", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Repeat the whole search N times (statistics over the repetitions).")
@click.option("--latency-at", default=None,
              help="Then measure latency at these percentages of the NDR, e.g. 10,50,90,100.")
@click.option("--latency-duration", type=seconds(), default=5.0, show_default=True)
@click.option("--profile", is_flag=True,
              help="Then one extra trial at the NDR profiled by perf (never a search trial).")
@click.option("--pdr-loss", type=FiniteRange(0, 100, min_open=True, max_open=True),
              default=None, help="The PDR's loss ratio in percent [the preset's, 0.5].")
def search(**kw: Any) -> int:
    """NDR and PDR by MLRsearch (or RFC 2544 binary search), with bounds and trial counts."""
    plan = method_plan(kw)
    run = search_method(plan, _search_request(kw), say=say, progress=trial_line)
    emit(run.data, kw)
    if not kw["as_json"]:
        _print_search(run)
        if run.profiled is not None:
            print_profile(run.profiled.result.perf_profile)
    return 0


def _search_request(kw: dict[str, Any]) -> SearchRequest:
    """The search's flags checked (nothing built yet): preset, load range, latency fractions."""
    p = preset(kw["preset_name"], trial_duration=kw["trial_duration"],
               pdr_loss=None if kw["pdr_loss"] is None else kw["pdr_loss"] / 100)
    if kw["profile"] and perf_problem():
        raise click.UsageError(f"--profile: {perf_problem()}")
    min_load, max_given = rate(kw["min_load"]), rate(kw["max_load"])
    if min_load is not None and max_given is not None and min_load >= max_given:
        raise UsageError(f"--min-load {kw['min_load']} is not below --max-load {kw['max_load']}: "
                         "give a lower --min-load or a higher --max-load")
    fractions = parse_fractions(kw["latency_at"]) if kw["latency_at"] else ()
    if fractions and max_given is not None:
        check_fraction_loads(max_given, fractions, "--latency-at", "--max-load", upper_only=True)
    return SearchRequest(p, min_load or 1000.0, max_given, kw["repeat"], fractions,
                         kw["latency_duration"], kw["profile"])


def _print_search(run: SearchRun) -> None:
    """The searches' table, then the median search's NDR, the loss at its load, its headroom,
    the NDR over the searches, latency at its fractions, notes and warnings."""
    title, chosen = run.title, run.chosen
    table = Table(title=f"{title.switch} / {title.scenario} / {title.frame_size} B: "
                        f"{chosen.preset} ({title.forwarding_mode})")
    for col in ("#", "NDR pps", "PDR pps", "NDR bounds", "trials", "trial s", "wall s",
                "overhead/trial"):
        table.add_column(col, justify="right")
    for i, r in enumerate(run.results, 1):
        ndr = r.outcome("NDR")
        bounds = f"{num(ndr.lower_bound_pps)}..{num(ndr.upper_bound_pps)}" if ndr else "–"
        table.add_row(str(i), num(r.ndr_pps), num(r.pdr_pps), bounds, str(len(r.trials)),
                      f"{r.trial_seconds:g}", f"{r.wall_seconds:.1f}",
                      f"{r.mean_overhead_s * 1000:.0f} ms")
    out.print(table)
    out.print(f"NDR: {chosen.describe_ndr()}", highlight=False)
    at_ndr = search_load_loss(chosen)
    if at_ndr is not None and at_ndr.lossy_trials:
        out.print(f"[yellow]{at_ndr.describe()}[/]", highlight=False)
    if chosen.headroom and chosen.generator_ceiling_pps:
        out.print(f"generator ceiling {chosen.generator_ceiling_pps:,.0f} pps "
                  f"(NDR is {chosen.headroom * 100:.0f} % of it)", highlight=False)
    s = run.ndr_statistics
    if s is not None:
        out.print(f"NDR over {s.n} searches: median {s.median:,.0f}, min {s.min:,.0f}, "
                  f"max {s.max:,.0f}, CI [{s.ci_low:,.0f}, {s.ci_high:,.0f}], "
                  f"CV {(s.cv or 0) * 100:.2f} %", highlight=False)
    for point in run.latency_at_ndr:
        measured = point.trial.result
        lat = measured.latency
        out.print(f"latency at {(point.fraction or 0.0) * 100:.0f} % of NDR "
                  f"({point.offered_pps:,.0f} pps): p50 {num(lat.p50, 1)} "
                  f"p99 {num(lat.p99, 1)} max {num(lat.max, 1)} us, "
                  f"lost {measured.lost}", highlight=False)
    for note in [*run.notes, *run.warnings]:
        err.print(f"[yellow]{note}[/]", highlight=False)


# -- sweep -------------------------------------------------------------------------------------
@click.command()
@testbed_options
@click.option("--points", type=click.IntRange(*SWEEP_POINTS_RANGE), default=20, show_default=True)
@click.option("--min-load", default=None, help="Lowest offered load [max / points].")
@click.option("--max-load", default=None, help="Highest offered load [the tester's ceiling].")
@click.option("--duration", type=seconds(), default=2.0, show_default=True)
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Run the whole sweep N times (statistics per point).")
def sweep(**kw: Any) -> int:
    """Offered load from low to beyond saturation: achieved throughput, loss, latency."""
    plan = method_plan(kw)
    max_given, min_given = rate(kw["max_load"]), rate(kw["min_load"])
    req = SweepRequest(kw["points"], min_given, max_given, kw["duration"], kw["repeat"])
    run = sweep_method(plan, req, say=say, progress=lambda pt: trial_line(pt.trial))
    emit(run.data, kw)
    if not kw["as_json"]:
        _print_sweep(run)
    return 0


def _print_sweep(run: SweepRun) -> None:
    """Per load the point that stands for it, then where the curve bends."""
    title = run.title
    table = Table(title=f"{title.switch} / {title.scenario} / {title.frame_size} B: load sweep")
    for col in ("offered pps", "sent pps", "achieved pps", "loss %", "p50 us", "p99 us",
                "cycles/pkt"):
        table.add_column(col, justify="right")
    for pt in run.points:
        r = pt.trial.result
        table.add_row(num(pt.offered_pps), num(r.tx_pps), num(r.achieved_pps),
                      f"{r.loss_ratio * 100:.3f}", num(r.latency.p50, 1), num(r.latency.p99, 1),
                      num(r.cycles_per_packet))
    out.print(table)
    out.print(_saturation_line(run.saturation), highlight=False)


def _saturation_line(sat: Saturation | None) -> str:
    highest, peak, at = ((sat.highest_lossless_offered_pps, sat.peak_achieved_pps,
                          sat.peak_at_offered_pps) if sat is not None else (None, None, None))
    falls = sat is not None and sat.falls_beyond_peak
    return (f"highest lossless offered load {num(highest)} pps; peak {num(peak)} pps at "
            f"{num(at)} offered{'; throughput falls beyond the peak' if falls else ''}")
