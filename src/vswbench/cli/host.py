"""`vswbench probe | clean | demo | switches | doctor`: what this host can do, its leftovers, and
the engine demonstration."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import click
from rich.table import Table

from vswbench.cli.common import EXIT_FAILURE
from vswbench.cli.common import SWITCH_FILE_OPTION
from vswbench.cli.common import FiniteRange
from vswbench.cli.common import err
from vswbench.cli.common import num
from vswbench.cli.common import out
from vswbench.cli.common import seconds
from vswbench.cli.common import table_out
from vswbench.cli.common import versions_text
from vswbench.errors import require_root
from vswbench.measure.plan import switch_rows
from vswbench.safefile import check_output_dir
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME

if TYPE_CHECKING:
    from vswbench.host.doctor import DoctorReport


def _num(value: float | None, digits: int = 1) -> str:
    return num(value, digits)


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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the engine's probe JSON unchanged.")
def probe(as_json: bool) -> int:
    """What the engine can do here: I/O backends, kernel features, TSC; whether the VM guest of
    pvp-vm boots under KVM and under TCG."""
    from vswbench.engine.probe import probe as run_probe
    from vswbench.host.doctor import vm_checks

    result = run_probe()
    vm = vm_checks()   # one boot under each (docs/guide/vm.md)
    if as_json:
        click.echo(json.dumps({**json.loads(result.text), "vm": vm}))
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
    for key, value in vm.items():
        facts.add_row(key, value)
    out.print(backends)
    out.print(facts)
    return 0


# -- clean -------------------------------------------------------------------------------------
def _check_prefix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith("vsb"):
        raise click.BadParameter("must start with 'vsb': clean never touches other names")
    return value


@click.command()
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--force", is_flag=True,
              help="Also remove vsb namespaces in which unrecorded processes still run.")
@click.option("--prefix", default="vsb", show_default=True, callback=_check_prefix,
              help="Only names starting with this (e.g. one run id); must start with vsb.")
def clean(dry_run: bool, force: bool, prefix: str) -> int:
    """Remove what killed runs left behind (vsb* namespaces, links, /tmp/vsb-<run id>-*)."""
    from vswbench.testbed.leftovers import describe_skips
    from vswbench.testbed.leftovers import dry_run_lines
    from vswbench.testbed.leftovers import execute
    from vswbench.testbed.leftovers import plan_clean

    require_root("clean", "removes network namespaces")
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
@click.command()
@click.option("--duration", type=seconds(), default=3.0, show_default=True,
              help="Seconds of gen -> sink per backend.")
@click.option("--size", type=click.IntRange(MIN_FRAME, MAX_FRAME), default=64, show_default=True,
              help="Frame size in bytes, FCS included (above 1518: the veth pair gets MTU 9000).")
@click.option("--backend", "backends", multiple=True,
              type=click.Choice(["afpacket", "udp", "afxdp"]),
              help="Only this backend (repeatable). Default: every usable one.")
@click.option("--rtt-rate", default="10k", show_default=True, help="Round-trip probe rate (pps).")
@click.option("--rtt-duration", type=seconds(), default=2.0, show_default=True)
@click.option("--tx-cpu", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--rx-cpu", type=click.IntRange(min=0), default=None,
              help="CPU for sink/reflect [default: 1, or 0 on a one-CPU machine].")
@click.option("--results-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
def demo(duration: float, size: int, backends: tuple[str, ...], rtt_rate: str,
         rtt_duration: float, tx_cpu: int, rx_cpu: int | None, results_dir: Path) -> int:
    """Engine demonstration: gen -> sink and loop <-> reflect over a veth pair, per backend."""
    from vswbench.measure.demo import DemoOptions
    from vswbench.measure.demo import run_demo
    from vswbench.measure.demo import validate
    from vswbench.report.demo_page import save_report

    if rx_cpu is None:
        rx_cpu = 1 if (os.cpu_count() or 1) > 1 else 0
    options = DemoOptions(duration=duration, size=size, rtt_rate=rtt_rate,
                          rtt_duration=rtt_duration, backends=backends, results_dir=results_dir,
                          tx_cpu=tx_cpu, rx_cpu=rx_cpu)
    validate(options)                                 # every value before anything is made
    require_root("the demo")
    check_output_dir(results_dir, "--results-dir")   # before measuring, not after
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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--versions", "user_versions", is_flag=True,
              help="Also run the `version` argv of the --switch-file switches (as the user "
                   "running vswbench: root); without it they are listed, nothing is run.")
@SWITCH_FILE_OPTION
def switches(as_json: bool, user_versions: bool) -> int:
    """Switch backends: available here or not, why, how to fix it, versions."""
    rows = switch_rows(user_versions)
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    table = Table(title="virtual switches")
    for column in ("name", "available", "reason / fix", "version"):
        table.add_column(column)
    for r in rows:
        why = "" if r.available else r.reason + (f"\nfix: {r.fix}" if r.fix else "")
        table.add_row(r.name, "[green]yes[/]" if r.available else "[red]no[/]", why,
                      versions_text(r.versions))
    out.print(table)
    return 0


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--stall-seconds", type=FiniteRange(0, 60), default=2.0, show_default=True,
              help="Measure host stalls (CPUs stopped) for this long; 0 skips it.")
def doctor(as_json: bool, stall_seconds: float) -> int:
    """Tools, kernel features, host tuning (what to change and why) and host stalls."""
    from vswbench.host.doctor import run_doctor
    from vswbench.switches.catalog import backend_tools

    report = run_doctor(stall_seconds, backend_tools())
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1))
        return 0
    tools, kernel, tuning = _doctor_tables(report)
    console = table_out()
    for table in (tools, kernel, tuning):
        console.print(table)
    if report.stalls is not None:
        console.print("host stalls (a busy CPU's heartbeat timer fired late: the vCPU stopped "
                      "or interrupts were off):", highlight=False)
        for line in report.stalls.lines():
            console.print(f"  {line}", highlight=False)
    for note in report.notes:
        err.print(f"[yellow]{note}[/]", highlight=False)
    return 0


def _doctor_tables(report: DoctorReport) -> tuple[Table, Table, Table]:
    """The tools, the kernel features (and engine io backends) and the host tuning."""
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
    tuning = Table(title="tuning (Fang et al., section 3.1)")
    for column in ("setting", "current", "recommended", "ok", "why"):
        tuning.add_column(column)
    for c in report.tuning:
        ok = "?" if c.ok is None else ("[green]yes[/]" if c.ok else "[red]no[/]")
        tuning.add_row(c.name, c.current, c.recommended, ok, c.why)
    return tools, kernel, tuning


