"""Shared by every command: the consoles, exit statuses, number formatting, the testbed options
of the methodology commands, planning a method from them and writing its JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from vswbench.errors import UsageError
from vswbench.measure.plan import TrialOptions

out = Console()
err = Console(stderr=True)

EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


def versions_text(versions: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items()) or "–"


def say(message: str) -> None:
    err.print(message, style="dim", highlight=False)


def num(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def rate(text: str | None) -> float | None:
    from vswbench.units import parse_rate

    return None if text is None else parse_rate(text)


def testbed_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by every method: what to build and how to drive it."""
    decorators = [
        click.option("--switch", "switch", required=True, help="Backend (see `vswbench switches`)."),
        click.option("--scenario", default="p2p", show_default=True,
                     help="p2p, p2p-pair, pvp, chain:N, pairs:N or rr."),
        click.option("--size", type=click.IntRange(64, 1518), default=64, show_default=True,
                     help="Frame size in bytes, FCS included."),
        click.option("--io", type=click.Choice(["afpacket", "udp", "afxdp"]), default="afpacket",
                     show_default=True, help="Engine I/O backend."),
        click.option("--flows", type=click.IntRange(min=1), default=1, show_default=True),
        click.option("--burst", type=click.IntRange(min=1), default=1, show_default=True),
        click.option("--warmup", type=click.FloatRange(min=0), default=1.0, show_default=True,
                     help="Seconds of warm-up traffic before the first trial."),
        click.option("--tester-cpu", type=int, default=None, help="CPU of the tester [0]."),
        click.option("--switch-cpu", type=int, default=None, help="CPU of the switch [next]."),
        click.option("--nf-cpus", default=None, help="CPUs of the network functions, e.g. 1."),
        click.option("--option", "options", multiple=True, help="Backend option key=value."),
        click.option("--shape-pps", default=None,
                     help="shaped switch: the shaper's rate in packets/s for --size frames."),
        click.option("--no-calibration", "no_calibration", is_flag=True,
                     help="Do not measure the tester's ceiling on veth first."),
        click.option("--recalibrate", is_flag=True, help="Measure the ceiling even if cached."),
        click.option("--restart-engines", is_flag=True,
                     help="Fresh engine processes per trial instead of control mode."),
        click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
        click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
                     default=None, help="Also write the JSON result to this file."),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func


def method_plan(kw: dict[str, Any]):  # type: ignore[no-untyped-def]
    from vswbench.measure.method import MethodOptions, plan_method

    trial = TrialOptions(kw["switch"], kw["scenario"], kw["size"], "10k", 1.0, kw["warmup"],
                         kw["io"], kw["flows"], kw["burst"], kw["tester_cpu"], kw["switch_cpu"],
                         kw["nf_cpus"], tuple(kw["options"]))
    return plan_method(MethodOptions(trial, kw["shape_pps"], not kw["no_calibration"],
                                     kw["recalibrate"], kw["restart_engines"]))


def emit(data: dict[str, Any], kw: dict[str, Any]) -> None:
    text = json.dumps(data, indent=1, default=str)
    if kw.get("out_file"):
        try:
            kw["out_file"].write_text(text + "\n")
        except OSError as exc:
            raise UsageError(f"--out {kw['out_file']}: {exc.strerror}") from None
    if kw["as_json"]:
        click.echo(text)


def trial_line(t: Any) -> None:
    r = t.result
    say(f"  {t.intended_load:>12,.0f} pps {t.intended_duration:>5.1f} s  lost {r.lost:>8,}"
         f"  unsent {t.unsent_count:>7,}  p50 {num(r.latency_us.get('p50'), 1)} us")


