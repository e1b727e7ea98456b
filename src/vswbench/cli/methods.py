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
from vswbench.measure.loadcurve import check_fraction_loads
from vswbench.measure.loadcurve import parse_fractions
from vswbench.measure.loadcurve import repeated_points_json
from vswbench.measure.loadcurve import run_sweep
from vswbench.measure.loadcurve import saturation
from vswbench.measure.loadcurve import sweep_loads
from vswbench.measure.method import SearchRequest
from vswbench.measure.method import method_context
from vswbench.measure.method import search_method
from vswbench.measure.search import PRESETS
from vswbench.measure.search import SearchResult
from vswbench.measure.search import preset
from vswbench.results.points import ndr_load_loss


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
        _print_search(run.results, run.data)
        if run.data.get("profile_at_ndr"):
            print_profile(run.data["profile_at_ndr"]["profile"])
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


def _print_search(results: list[SearchResult], data: dict[str, Any]) -> None:
    table = Table(title=f"{data['switch']} / {data['scenario']} / {data['frame_size']} B: "
                        f"{data['preset']} ({data['forwarding_mode']})")
    for col in ("#", "NDR pps", "PDR pps", "NDR bounds", "trials", "trial s", "wall s",
                "overhead/trial"):
        table.add_column(col, justify="right")
    for i, r in enumerate(results, 1):
        ndr = r.outcome("NDR")
        bounds = f"{num(ndr.lower_bound_pps)}..{num(ndr.upper_bound_pps)}" if ndr else "–"
        table.add_row(str(i), num(r.ndr_pps), num(r.pdr_pps), bounds, str(len(r.trials)),
                      f"{r.trial_seconds:g}", f"{r.wall_seconds:.1f}",
                      f"{r.session.get('mean_s', 0) * 1000:.0f} ms")
    out.print(table)
    out.print(f"NDR: {data['ndr']}", highlight=False)
    at_ndr = ndr_load_loss(data)
    if at_ndr is not None and at_ndr.lossy_trials:
        out.print(f"[yellow]{at_ndr.describe()}[/]", highlight=False)
    if data.get("headroom"):
        out.print(f"generator ceiling {data['generator_ceiling_pps']:,.0f} pps "
                  f"(NDR is {data['headroom'] * 100:.0f} % of it)", highlight=False)
    if "statistics" in data and "ndr_pps" in data["statistics"]:
        s = data["statistics"]["ndr_pps"]
        out.print(f"NDR over {s['n']} searches: median {s['median']:,.0f}, min {s['min']:,.0f}, "
                  f"max {s['max']:,.0f}, CI [{s['ci_low']:,.0f}, {s['ci_high']:,.0f}], "
                  f"CV {(s['cv'] or 0) * 100:.2f} %", highlight=False)
    for point in data.get("latency_at_ndr", []):
        lat = point["latency_us"]
        out.print(f"latency at {point['fraction_of_ndr'] * 100:.0f} % of NDR "
                  f"({point['offered_pps']:,.0f} pps): p50 {num(lat.get('p50'), 1)} "
                  f"p99 {num(lat.get('p99'), 1)} max {num(lat.get('max'), 1)} us, "
                  f"lost {point['lost']}", highlight=False)
    for note in [*data.get("notes", []), *data.get("warnings", [])]:
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
    if max_given is not None:
        sweep_loads(max_given, kw["points"], min_given)   # check before building anything
    with method_context(plan, drain=0.05, progress=say) as ctx:
        loads = sweep_loads(ctx.max_load(max_given), kw["points"], min_given)
        runs = [run_sweep(ctx.session, loads, kw["duration"],
                          progress=lambda pt: trial_line(pt.trial))
                for _ in range(kw["repeat"])]
        points_json, warnings = repeated_points_json(runs)
        data = {**ctx.environment(), "method": "sweep", "notes": ctx.notes,
                "points": points_json, "saturation": saturation(runs[0]),
                "repetitions": kw["repeat"], "warnings": warnings,
                "overhead_per_trial": ctx.session.overhead_summary()}
    emit(data, kw)
    if not kw["as_json"]:
        table = Table(title=f"{data['switch']} / {data['scenario']} / {data['frame_size']} B: "
                            "load sweep")
        for col in ("offered pps", "sent pps", "achieved pps", "loss %", "p50 us", "p99 us",
                    "cycles/pkt"):
            table.add_column(col, justify="right")
        for pt in data["points"]:
            lat = pt["latency_us"]
            table.add_row(num(pt["offered_pps"]), num(pt["tx_pps"]), num(pt["achieved_pps"]),
                          f"{pt['loss_ratio'] * 100:.3f}", num(lat.get("p50"), 1),
                          num(lat.get("p99"), 1), num(pt["cycles_per_packet"]))
        out.print(table)
        sat = data["saturation"]
        out.print(f"highest lossless offered load {num(sat.get('highest_lossless_offered_pps'))} "
                  f"pps; peak {num(sat.get('peak_achieved_pps'))} pps at "
                  f"{num(sat.get('peak_at_offered_pps'))} offered"
                  f"{'; throughput falls beyond the peak' if sat.get('falls_beyond_peak') else ''}",
                  highlight=False)
    return 0
