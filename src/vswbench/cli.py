"""The `vswbench` command line.

Exit statuses: 0 ok, 1 runtime failure, 2 bad usage, 3 not supported here (from the engine),
130 interrupted. Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from vswbench import __version__
from vswbench.engine import EngineError
from vswbench.errors import UsageError, VswbenchError

out = Console()
err = Console(stderr=True)

EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="vswbench")
def cli() -> None:
    """Benchmark virtual switches for containers (network namespaces)."""


# -- probe -------------------------------------------------------------------------------------
def _flatten(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        rows: list[tuple[str, str]] = []
        for key, item in value.items():
            rows += _flatten(f"{prefix}.{key}" if prefix else str(key), item)
        return rows
    if isinstance(value, list):
        return [(prefix, json.dumps(value))]
    return [(prefix, "–" if value is None else str(value))]


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the engine's probe JSON unchanged.")
def probe(as_json: bool) -> int:
    """What the engine can do here: I/O backends, kernel features, TSC."""
    from vswbench.probe import probe as run_probe

    result = run_probe()
    if as_json:
        click.echo(result.text.rstrip("\n"))
        return 0
    backends = Table(title="I/O backends")
    for column in ("backend", "usable", "reason"):
        backends.add_column(column)
    for b in result.backends:
        backends.add_row(b.name, "[green]yes[/]" if b.usable else "[red]no[/]", b.reason or "")
    facts = Table(title="probe")
    facts.add_column("key")
    facts.add_column("value")
    rest = {k: v for k, v in result.raw.items() if k not in ("backends", "type")}
    for key, value in _flatten("", rest):
        facts.add_row(key, value)
    out.print(backends)
    out.print(facts)
    return 0


# -- clean -------------------------------------------------------------------------------------
def _check_prefix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith("vsb"):
        raise click.BadParameter("must start with 'vsb': clean never touches other names")
    return value


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--force", is_flag=True,
              help="Also remove vsb namespaces in which unrecorded processes still run.")
@click.option("--prefix", default="vsb", show_default=True, callback=_check_prefix,
              help="Only names starting with this (e.g. one run id); must start with vsb.")
def clean(dry_run: bool, force: bool, prefix: str) -> int:
    """Remove what killed runs left behind (vsb* namespaces, links, /tmp/vsb-<run id>-*)."""
    from vswbench.clean import describe_skips, dry_run_lines, execute, plan_clean

    if os.geteuid() != 0:
        raise VswbenchError("clean removes network namespaces: run it as root")
    plan = plan_clean(force=force, prefix=prefix)
    for note in describe_skips(plan):
        err.print(f"[yellow]{note}[/]")
    if plan.empty:
        out.print("nothing to clean")
        return 0
    if dry_run:
        for line in dry_run_lines(plan):
            out.print(line)
        return 0
    execute(plan, report=lambda message: out.print(message, highlight=False))
    return 0


# -- demo --------------------------------------------------------------------------------------
def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


@cli.command()
@click.option("--duration", type=click.FloatRange(min=0.1), default=3.0, show_default=True,
              help="Seconds of gen -> sink per backend.")
@click.option("--size", type=click.IntRange(64, 1518), default=64, show_default=True,
              help="Frame size in bytes, FCS included.")
@click.option("--backend", "backends", multiple=True,
              type=click.Choice(["afpacket", "udp", "afxdp"]),
              help="Only this backend (repeatable). Default: every usable one.")
@click.option("--rtt-rate", default="10k", show_default=True, help="Round-trip probe rate (pps).")
@click.option("--rtt-duration", type=click.FloatRange(min=0.1), default=2.0, show_default=True)
@click.option("--tx-cpu", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--rx-cpu", type=click.IntRange(min=0), default=None,
              help="CPU for sink/reflect [default: 1, or 0 on a one-CPU machine].")
@click.option("--results-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
def demo(duration: float, size: int, backends: tuple[str, ...], rtt_rate: str,
         rtt_duration: float, tx_cpu: int, rx_cpu: int | None, results_dir: Path) -> int:
    """Engine demonstration: gen -> sink and loop <-> reflect over a veth pair, per backend."""
    from vswbench.demo import DemoOptions, run_demo, save_report

    if rx_cpu is None:
        rx_cpu = 1 if (os.cpu_count() or 1) > 1 else 0
    options = DemoOptions(duration=duration, size=size, rtt_rate=rtt_rate,
                          rtt_duration=rtt_duration, backends=backends, results_dir=results_dir,
                          tx_cpu=tx_cpu, rx_cpu=rx_cpu)
    report = run_demo(options, progress=lambda m: err.print(m, style="dim", highlight=False))
    table = Table(title=f"vswbench demo ({size}-byte frames, veth pair, run {report.run_id})")
    for column in ("backend", "TX kpps", "RX kpps", "loss", "RTT p50 µs", "RTT p99 µs"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for r in report.results:
        loss = "–" if r.loss_ratio is None else f"{r.lost:,} ({r.loss_ratio * 100:.2f} %)"
        table.add_row(r.backend, _num(r.tx_kpps), _num(r.rx_kpps), loss, _num(r.rtt_p50_us),
                      _num(r.rtt_p99_us))
    out.print(table)
    for r in report.results:
        for message in r.errors:
            err.print(f"[red]{r.backend}: {message}[/]", highlight=False)
    for name, reason in report.skipped.items():
        err.print(f"[yellow]{name}: skipped: {reason}[/]", highlight=False)
    json_path, html_path = save_report(report, results_dir)
    out.print(f"results: {json_path} and {html_path}", highlight=False)
    return 0 if report.ok and report.results else EXIT_FAILURE


# -- switches / trial / doctor -----------------------------------------------------------------
def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items()) or "–"


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def switches(as_json: bool) -> int:
    """Switch backends: available here or not, why, how to fix it, versions."""
    from dataclasses import asdict

    from vswbench.cmd_trial import switch_rows

    rows = switch_rows()
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    table = Table(title="virtual switches")
    for column in ("name", "available", "reason / fix", "version"):
        table.add_column(column)
    for r in rows:
        why = "" if r.available else r.reason + (f"\nfix: {r.fix}" if r.fix else "")
        table.add_row(r.name, "[green]yes[/]" if r.available else "[red]no[/]", why,
                      _versions(r.versions))
    out.print(table)
    return 0


@cli.command()
@click.option("--switch", "switch", required=True, help="Backend (see `vswbench switches`).")
@click.option("--scenario", default="p2p", show_default=True,
              help="p2p, p2p-pair, pvp, chain:N, pairs:N or rr.")
@click.option("--size", type=click.IntRange(64, 1518), default=64, show_default=True,
              help="Frame size in bytes, FCS included.")
@click.option("--rate", default="10k", show_default=True, help="Offered pps, e.g. 100k, 1.5M.")
@click.option("--duration", type=click.FloatRange(min=0.1), default=5.0, show_default=True)
@click.option("--warmup", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Seconds of warm-up traffic before the measurement.")
@click.option("--io", type=click.Choice(["afpacket", "udp", "afxdp"]), default="afpacket",
              show_default=True, help="Engine I/O backend.")
@click.option("--flows", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--burst", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--tester-cpu", type=int, default=None, help="CPU of the tester [default: 0].")
@click.option("--switch-cpu", type=int, default=None,
              help="CPU of the switch's threads [default: the next CPU].")
@click.option("--nf-cpus", default=None, help="CPUs of the network functions, e.g. 1,2.")
@click.option("--option", "options", multiple=True, help="Backend option key=value (repeatable).")
@click.option("--repeat", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="Repeat the trial N times (median, CI, CV, worst/best of N).")
@click.option("--json", "as_json", is_flag=True, help="Print the trial's JSON.")
def trial(switch: str, scenario: str, size: int, rate: str, duration: float, warmup: float,
          io: str, flows: int, burst: int, tester_cpu: int | None, switch_cpu: int | None,
          nf_cpus: str | None, options: tuple[str, ...], repeat: int, as_json: bool) -> int:
    """One trial: fixed offered load through a switch in a scenario."""
    from vswbench.cmd_trial import (TrialOptions, execute_trials, plan_trial,
                                    repeat_statistics)

    plan = plan_trial(TrialOptions(switch, scenario, size, rate, duration, warmup, io, flows,
                                   burst, tester_cpu, switch_cpu, nf_cpus, options))
    results = execute_trials(plan, repeat,
                             progress=lambda m: err.print(m, style="dim", highlight=False))
    if repeat > 1:
        stats, warnings = repeat_statistics(results)
        if as_json:
            click.echo(json.dumps({"trials": [r.to_json() for r in results],
                                   "statistics": stats, "warnings": warnings}, indent=1))
            return 0
        table = Table(title=f"{results[0].switch} / {results[0].scenario} / "
                            f"{results[0].frame_size} B: {repeat} trials")
        for column in ("metric", "median", "min", "max", "95 % CI", "CV %"):
            table.add_column(column, justify="right")
        for metric, s in stats.items():
            digits = 6 if metric == "loss_ratio" else 1
            table.add_row(metric, *(_num(s[k], digits) for k in ("median", "min", "max")),
                          f"{_num(s['ci_low'], digits)}..{_num(s['ci_high'], digits)}",
                          "–" if s["cv"] is None else f"{s['cv'] * 100:.2f}")
        out.print(table)
        for w in warnings:
            err.print(f"[yellow]warning: {w}[/]", highlight=False)
        return 0
    result = results[0]
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
    else:
        table = Table(title=f"{result.switch} / {result.scenario} / {result.frame_size} B "
                            f"({result.forwarding_mode})")
        table.add_column("metric")
        table.add_column("value", justify="right")
        lat = result.latency_us
        rows = [("offered pps", _num(result.offered_pps, 0)), ("tx pps", _num(result.tx_pps, 0)),
                ("achieved pps", _num(result.achieved_pps, 0)),
                ("tx / rx frames", f"{result.tx_frames:,} / {result.rx_frames:,}"),
                ("loss", f"{result.lost:,} ({result.loss_ratio * 100:.3f} %)"),
                (f"latency µs ({result.latency_kind or '–'}) min/p50/p99/max",
                 " / ".join(_num(lat.get(k), 1) for k in ("min", "p50", "p99", "max"))),
                ("cycles per packet (all cores)", _num(result.cycles_per_packet, 0)),
                ("CPU busy per core", ", ".join(f"cpu{c} {u['busy'] * 100:.0f} %"
                                                for c, u in result.cpu.items())),
                ("drops", ", ".join(f"{k} {v}" for k, v in result.drops.items() if v) or "none"),
                ("kernel counters agree", "yes" if result.counters_agree else "[red]no[/]")]
        for key, value in rows:
            table.add_row(key, value)
        out.print(table)
        for w in result.warnings:
            err.print(f"[yellow]warning: {w}[/]", highlight=False)
    return 0


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(as_json: bool) -> int:
    """Tools, kernel features and host tuning (what to change and why)."""
    from vswbench.doctor import run_doctor

    report = run_doctor()
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1))
        return 0
    tools = Table(title="tools")
    for column in ("tool", "present", "needed for"):
        tools.add_column(column)
    for t in report.tools:
        tools.add_row(t.name, "[green]yes[/]" if t.present else "[red]no[/]", t.needed_for)
    kernel = Table(title="kernel features (vswbench-engine probe)")
    kernel.add_column("feature")
    kernel.add_column("value")
    for key, value in report.kernel.items():
        kernel.add_row(key, "–" if value is None else str(value))
    for b in report.io_backends:
        kernel.add_row(f"engine io {b['name']}", "usable" if b["usable"] else
                       f"no: {b['reason'] or ''}")
    tuning = Table(title="tuning (Fang et al., 002_..., section 3.1)")
    for column in ("setting", "current", "recommended", "ok", "why"):
        tuning.add_column(column)
    for c in report.tuning:
        ok = "?" if c.ok is None else ("[green]yes[/]" if c.ok else "[red]no[/]")
        tuning.add_row(c.name, c.current, c.recommended, ok, c.why)
    for table in (tools, kernel, tuning):
        out.print(table)
    for note in report.notes:
        err.print(f"[yellow]{note}[/]", highlight=False)
    return 0


# -- entry point -------------------------------------------------------------------------------
def _error(message: str) -> None:
    err.print(f"vswbench: error: {message}", style="red", highlight=False, markup=False)


def main(argv: list[str] | None = None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="vswbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:  # includes click.UsageError: exit 2
        exc.show()
        return exc.exit_code
    except click.Abort:
        _error("interrupted; everything this run created has been removed")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        _error("interrupted; everything this run created has been removed")
        return EXIT_INTERRUPTED
    except EngineError as exc:
        _error(str(exc))
        return exc.exit_code
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except VswbenchError as exc:
        _error(str(exc))
        return int(getattr(exc, "exit_code", EXIT_FAILURE))
    except BrokenPipeError:
        return EXIT_FAILURE
    return rv if isinstance(rv, int) else 0


# The methodology commands register themselves on `cli` (kept in their own modules).
from vswbench import cli_campaign, cli_latency, cli_methods, cli_model  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(main())
