"""`vswbench latency | b2b | calibrate`: latency at fractions of the NDR, back-to-back frames
(RFC 2544 26.4 / RFC 9004), and the tester's own ceiling."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import KERNEL_IO
from vswbench.cli.common import emit
from vswbench.cli.common import err
from vswbench.cli.common import io_option
from vswbench.cli.common import method_plan
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import rate
from vswbench.cli.common import say
from vswbench.cli.common import seconds
from vswbench.cli.common import size_option
from vswbench.cli.common import testbed_options
from vswbench.cli.common import trial_line
from vswbench.cli.profile_view import print_profile
from vswbench.engine.params import MAX_FLOWS
from vswbench.engine.params import TrialParams
from vswbench.errors import UsageError
from vswbench.errors import require_root
from vswbench.measure.b2b import MAX_FRAMES_RANGE
from vswbench.measure.b2b import TRIALS_RANGE
from vswbench.measure.b2b import B2BConfig
from vswbench.measure.b2b import back_to_back
from vswbench.measure.calibration import baseline_switch
from vswbench.measure.calibration import calibrate as run_calibration
from vswbench.measure.loadcurve import check_fraction_loads
from vswbench.measure.loadcurve import latency_at
from vswbench.measure.loadcurve import parse_fractions
from vswbench.measure.loadcurve import repeated_points_json
from vswbench.measure.method import find_ndr
from vswbench.measure.method import method_context
from vswbench.measure.method import profile_at
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import plan_trial
from vswbench.measure.session import control_capable
from vswbench.units import FrameSize


def _ndr_first(ctx: Any, given: float | None) -> tuple[float, dict[str, Any] | None]:
    """The NDR given on the command line, or found now by a `fast` search in the same session."""
    if given is not None:
        return given, None

    say("no --ndr given: finding it first with a `fast` search")
    return find_ndr(ctx, "fast", progress=trial_line)


@click.command()
@testbed_options
@click.option("--ndr", default=None, help="The NDR in pps [found by a fast search first].")
@click.option("--at", "at", default="10,50,90,100", show_default=True,
              help="Percentages of the NDR to measure at.")
@click.option("--duration", type=seconds(), default=5.0, show_default=True)
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Measure every fraction N times (statistics per point).")
@click.option("--profile", is_flag=True,
              help="Then one extra trial at the NDR profiled by perf (never a latency trial).")
def latency(**kw: Any) -> int:
    """Latency distributions at fixed fractions of the NDR (full histograms in --json)."""
    plan = method_plan(kw)
    fractions = parse_fractions(kw["at"], "--at")
    ndr_given = rate(kw["ndr"])
    if ndr_given is not None:
        check_fraction_loads(ndr_given, fractions)
    with method_context(plan, drain=0.05, progress=say) as ctx:
        ndr, search_summary = _ndr_first(ctx, ndr_given)
        runs = [latency_at(ctx.session, ndr, fractions, kw["duration"],
                           progress=lambda pt: trial_line(pt.trial))
                for _ in range(kw["repeat"])]
        points = runs[0]
        points_json, warnings = repeated_points_json(runs)
        data = {**ctx.environment(), "method": "latency", "ndr_pps": ndr, "search": search_summary,
                "points": points_json, "repetitions": kw["repeat"], "warnings": warnings,
                "notes": ctx.notes}
        if kw["profile"]:
            say(f"profiling one extra trial at the NDR, {ndr:,.0f} pps")
            data["profile_at_ndr"] = profile_at(ctx.session, ndr)
    emit(data, kw)
    if not kw["as_json"]:
        table = Table(title=f"{data['switch']} / {data['scenario']} / {data['frame_size']} B: "
                            f"latency at fractions of NDR {ndr:,.0f} pps "
                            f"({points[0].trial.result.latency_kind or '–'})")
        for col in ("% NDR", "offered pps", "lost", "min", "p25", "p50", "p90", "p95", "p99",
                    "p99.9", "max"):
            table.add_column(col, justify="right")
        for pt in data["points"]:
            lat = pt["latency_us"]
            table.add_row(f"{pt['fraction_of_ndr'] * 100:.0f}", num(pt["offered_pps"]),
                          f"{pt['lost']:,}",
                          *(num(lat.get(k), 1) for k in ("min", "p25", "p50", "p90", "p95",
                                                         "p99", "p999", "max")))
        out.print(table)
        out.print("latency in microseconds", style="dim")
        if data.get("profile_at_ndr"):
            print_profile(data["profile_at_ndr"]["profile"])
    return 0


@click.command()
@testbed_options
@click.option("--trials", type=click.IntRange(*TRIALS_RANGE), default=50, show_default=True,
              help="Repetitions of the burst-length search (RFC 2544 asks for 50).")
@click.option("--max-frames", type=click.IntRange(*MAX_FRAMES_RANGE), default=100_000,
              show_default=True)
@click.option("--throughput", default=None,
              help="Measured throughput in pps for the corrected buffer time [fast search].")
def b2b(**kw: Any) -> int:
    """Back-to-back frames: the longest burst at maximum rate without loss (RFC 9004)."""
    plan = method_plan(kw)
    if not plan.restart_engines and not control_capable(plan.trial.scenario):
        raise UsageError(f"scenario {plan.trial.scenario.name}: back-to-back needs a tester that "
                         "sends and receives (p2p, pvp, chain:N, rr)")
    cfg = B2BConfig(trials=kw["trials"], max_frames=kw["max_frames"],
                    frame_size=plan.trial.params.frame_size)
    throughput_given = rate(kw["throughput"])
    with method_context(plan, drain=0.05, progress=say) as ctx:
        throughput, search_summary = _ndr_first(ctx, throughput_given)

        cfg = replace(cfg, tester_pps=ctx.ceiling)
        result = back_to_back(ctx.session, cfg, throughput_pps=throughput, progress=say)
        data = {**ctx.environment(), "method": "back-to-back", "throughput_pps": throughput,
                "search": search_summary, **result.to_json(), "notes_testbed": ctx.notes}
    emit(data, kw)
    if not kw["as_json"]:
        st = data["statistics"]
        out.print(f"longest lossless burst over {data['searches_run']} searches: mean "
                  f"{data['benchmark_frames']:,.1f} frames (min {st['min']:,.0f}, max "
                  f"{st['max']:,.0f}, CV {(st['cv'] or 0) * 100:.1f} %)"
                  f"{' (at least: unbounded)' if data['unbounded'] else ''}", highlight=False)
        out.print(f"burst rate {num(data['offered_pps'])} pps ({data['max_rate_source']}); "
                  f"throughput {num(data['throughput_pps'])} pps", highlight=False)
        implied, corrected = data["implied_buffer_s"], data["corrected_buffer_s"]
        out.print(f"implied buffer time {num(implied and implied * 1e6, 1)} us, corrected "
                  f"{num(corrected and corrected * 1e6, 1)} us (RFC 9004)", highlight=False)
        for note in [*data["notes"], *data["warnings"], *data["notes_testbed"]]:
            out.print(f"[yellow]{note}[/]", highlight=False)
    return 0


@click.command()
@click.option("--scenario", default="p2p", show_default=True)
@size_option()
@io_option((*KERNEL_IO, "dpdk"))
@click.option("--flows", type=click.IntRange(1, MAX_FLOWS), default=1, show_default=True)
@click.option("--tester-cpu", type=int, default=None)
@click.option("--switch-cpu", type=int, default=None)
@click.option("--force", is_flag=True, help="Measure again even if a cached value exists.")
@click.option("--json", "as_json", is_flag=True)
def calibrate(scenario: str, size: FrameSize, io: str, flows: int, tester_cpu: int | None,
              switch_cpu: int | None, force: bool, as_json: bool) -> int:
    """The tester's own ceiling on a scenario and frame size, through veth (memif for --io dpdk),
    cached per machine."""
    from vswbench.run.scope import run_scope

    traffic = TrialParams(size, flows=flows, io=io, warmup=0.0)
    plan = plan_trial(TrialOptions(baseline_switch(io), scenario, traffic, tester_cpu,
                                   switch_cpu))
    if not control_capable(plan.scenario):
        raise UsageError(f"scenario {scenario}: calibration needs a tester that sends and "
                         "receives (p2p, pvp, chain:N, rr)")
    require_root("calibration")
    with run_scope() as run:
        cal = run_calibration(run, plan.scenario, plan.params, plan.placement, force=force,
                              warn=lambda m: err.print(m, style="yellow", highlight=False))
    if as_json:
        click.echo(json.dumps(cal.to_json(), indent=1))
    else:
        out.print(f"tester ceiling ({scenario}, {size}, {io}): {cal.ceiling_pps:,.0f} pps "
                  f"received, {cal.tx_pps:,.0f} pps sent{' (cached)' if cal.cached else ''}",
                  highlight=False)
    return 0
