"""`vswbench latency | b2b | calibrate`: latency at fractions of the NDR, back-to-back frames
(RFC 2544 26.4 / RFC 9004), and the tester's own ceiling."""

from __future__ import annotations

import json
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
from vswbench.measure.calibration import baseline_switch
from vswbench.measure.calibration import calibrate as run_calibration
from vswbench.measure.loadcurve import check_fraction_loads
from vswbench.measure.loadcurve import parse_fractions
from vswbench.measure.method import B2BRun
from vswbench.measure.method import LatencyRequest
from vswbench.measure.method import LatencyRun
from vswbench.measure.method import b2b_method
from vswbench.measure.method import latency_method
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import plan_trial
from vswbench.measure.session import control_capable
from vswbench.units import FrameSize


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
    req = LatencyRequest(ndr_given, fractions, kw["duration"], kw["repeat"], kw["profile"])
    run = latency_method(plan, req, say=say, progress=trial_line)
    emit(run.data, kw)
    if not kw["as_json"]:
        _print_latency(run)
    return 0


def _print_latency(run: LatencyRun) -> None:
    """Per fraction of the NDR the point that stands for it: load, loss and the latency
    percentiles; then the profile at the NDR, if one was taken."""
    title = run.title
    table = Table(title=f"{title.switch} / {title.scenario} / {title.frame_size} B: "
                        f"latency at fractions of NDR {run.ndr_pps:,.0f} pps "
                        f"({run.latency_kind or '–'})")
    for col in ("% NDR", "offered pps", "lost", "min", "p25", "p50", "p90", "p95", "p99",
                "p99.9", "max"):
        table.add_column(col, justify="right")
    for pt in run.points:
        r = pt.trial.result
        lat = r.latency
        table.add_row(f"{(pt.fraction or 0.0) * 100:.0f}", num(pt.offered_pps), f"{r.lost:,}",
                      *(num(v, 1) for v in (lat.min, lat.p25, lat.p50, lat.p90, lat.p95,
                                            lat.p99, lat.p999, lat.max)))
    out.print(table)
    out.print("latency in microseconds", style="dim")
    if run.profiled is not None:
        print_profile(run.profiled.result.perf_profile)


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
    run = b2b_method(plan, cfg, throughput_given, say=say, progress=trial_line)
    emit(run.data, kw)
    if not kw["as_json"]:
        _print_b2b(run)
    return 0


def _print_b2b(run: B2BRun) -> None:
    """The benchmark over the searches, the burst rate and throughput, the buffer times, then
    the result's notes and warnings and the testbed's notes."""
    r, st = run.result, run.result.summary
    out.print(f"longest lossless burst over {len(r.searches)} searches: mean "
              f"{st.mean:,.1f} frames (min {st.min:,.0f}, max "
              f"{st.max:,.0f}, CV {(st.cv or 0) * 100:.1f} %)"
              f"{' (at least: unbounded)' if r.unbounded else ''}", highlight=False)
    out.print(f"burst rate {num(r.offered_pps)} pps ({r.max_rate_source}); "
              f"throughput {num(r.throughput_pps)} pps", highlight=False)
    implied, corrected = r.implied_buffer_s, r.corrected_buffer_s
    out.print(f"implied buffer time {num(implied and implied * 1e6, 1)} us, corrected "
              f"{num(corrected and corrected * 1e6, 1)} us (RFC 9004)", highlight=False)
    for note in [*r.notes, *r.warnings, *run.testbed_notes]:
        out.print(f"[yellow]{note}[/]", highlight=False)


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
