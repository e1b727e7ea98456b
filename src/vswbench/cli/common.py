"""Shared by every command: the consoles, exit statuses, number formatting, the testbed options
of the methodology commands, planning a method from them and writing its JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import click
from rich.console import Console
from rich.console import ConsoleDimensions

from vswbench.engine.params import MAX_BURST
from vswbench.engine.params import MAX_FLOWS
from vswbench.engine.params import parse_churn
from vswbench.engine.params import seconds_problem
from vswbench.errors import UsageError
from vswbench.measure.method import MethodOptions
from vswbench.measure.method import MethodPlan
from vswbench.measure.method import plan_method
from vswbench.measure.plan import TrialOptions
from vswbench.measure.plan import parse_options
from vswbench.measure.plan import trial_options as build_trial_options
from vswbench.measure.session import SessionTrial
from vswbench.safefile import check_output_file
from vswbench.safefile import write_text
from vswbench.switches.rules.functions import DEFAULT_TABLE_SIZE
from vswbench.switches.rules.functions import FUNCTIONS
from vswbench.switches.rules.functions import MAX_L3_TABLE
from vswbench.switches.rules.functions import TABLE_FUNCTIONS
from vswbench.units import JUMBO_MTU
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME
from vswbench.units import STD_FRAME_MAX
from vswbench.units import FrameSize
from vswbench.units import parse_rate

EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130
PIPE_WIDTH = 100_000     # a table printed to a pipe or a file: never cut, never folded


class WholeLines(Console):
    """A console whose output is whole lines when it is not a terminal: on a terminal, the
    terminal's width; to a pipe or a file (`| grep`, `> file`, a test's capture), as wide as any
    line, so no table cell is cut to 80 columns or ends in an ellipsis, and no number is folded.
    Decided at each print (the stream can change: a test swaps sys.stdout), not at import; an
    exported COLUMNS (which rich reads as a fixed width) counts only on a terminal."""

    def __init__(self, *, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(width=width, **kwargs)
        self._fixed = width is not None

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._fixed or self.is_terminal:
            return size
        return ConsoleDimensions(PIPE_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size
        self._fixed = True


out = WholeLines()
err = WholeLines(stderr=True, soft_wrap=True)   # messages are never cut into lines


def table_out() -> Console:
    """The console for tables: `out` (whole lines when piped, see WholeLines)."""
    return out


def versions_text(versions: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items()) or "–"


def say(message: str) -> None:
    err.print(message, style="dim", highlight=False)


def num(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def rate(text: str | None) -> float | None:
    return None if text is None else parse_rate(text)


if TYPE_CHECKING:     # generic from click 8.2; the project takes click >= 8.1
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class FrameSizeType(_ParamType):
    """--size: bytes MIN_FRAME..MAX_FRAME (FCS included) or imix / imix:GENOME, parsed into a
    FrameSize."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> FrameSize:
        try:
            return FrameSize.parse(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


class SecondsType(_ParamType):
    """A duration in seconds: finite, at least `low`, at most a day (nan, inf and 1e9 refused)."""

    name = "SECONDS"
    plain_number = True     # arguments.argument_problem: the digits 0-9 and one point only

    def __init__(self, low: float = 0.1) -> None:
        self.low = low

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        problem = seconds_problem(seconds, self.low)
        if problem:
            self.fail(f"{value!r}: {problem}", param, ctx)
        return seconds


def seconds(low: float = 0.1) -> SecondsType:
    return SecondsType(low)


class FiniteRange(click.FloatRange):
    """click.FloatRange without nan (which passes every comparison, so FloatRange takes it)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


KERNEL_IO = ("auto", "afpacket", "udp", "afxdp", "xdplive")


def size_option(**kw: Any) -> Callable[..., Any]:
    """The one declaration of --size (every command that sends frames)."""
    return click.option("--size", type=FrameSizeType(), default="64", show_default=True,
                        help=f"Frame size: bytes {MIN_FRAME}..{MAX_FRAME}, FCS included (above "
                        f"{STD_FRAME_MAX}: the links get MTU {JUMBO_MTU}), or imix.", **kw)


def io_option(choices: tuple[str, ...] = KERNEL_IO) -> Callable[..., Any]:
    return click.option("--io", type=click.Choice(choices), default="auto", show_default=True,
                        help="Engine I/O backend; auto: xdplive (the kernel generates and "
                             "counts) where it works, else afpacket (always above 1518 B); dpdk "
                             "for DPDK switches.")


def traffic_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--size, --io, --flows, --churn, --burst, --warmup: the fixed part of TrialParams."""
    decorators = [
        size_option(),
        io_option(),
        click.option("--flows", type=click.IntRange(1, MAX_FLOWS), default=1, show_default=True),
        click.option("--churn", default=None, metavar="A/D",
                     help="Flow churn instead of the fixed --flows: A new flows per second, each "
                          "living D seconds (about A*D active; e.g. 1000/0.5). io auto takes "
                          "afpacket then."),
        click.option("--burst", type=click.IntRange(1, MAX_BURST), default=1, show_default=True),
        click.option("--warmup", type=seconds(0.0), default=1.0,
                     show_default=True, help="Seconds of warm-up traffic before the measurement."),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func


def complete_switch(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[str]:
    """Shell completion of --switch: the backends this version has."""
    from vswbench.switches.catalog import all_switches

    return [name for name in all_switches() if name.startswith(incomplete)]


def switch_file(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """--switch-file FILE (eager): its [switch.NAME] tables become backends --switch can name."""
    from vswbench.switches.catalog import load_switch_file

    for path in value or ():
        load_switch_file(path)


SWITCH_FILE_OPTION = click.option(
    "--switch-file", multiple=True, callback=switch_file, is_eager=True, expose_value=False,
    metavar="FILE", help="A TOML file of [switch.NAME] tables: your own switch, built by its "
    "argv lists (docs/guide/containers.md, 'Your own switch'); --switch NAME then "
    "measures it.")


def placement_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--switch, --switch-file, --scenario, the CPUs and backend options: where a trial runs."""
    decorators = [
        SWITCH_FILE_OPTION,
        click.option("--switch", "switch", required=True, help="Backend (see `vswbench switches`).",
                     shell_complete=complete_switch),
        click.option("--scenario", default="p2p", show_default=True,
                     help="p2p, p2p-pair, pvp, chain:N, pvp-vm, chain-vm:N, pairs:N, rr, "
                     "remote[-vxlan][-rr], tester-dut."),
        click.option("--tester-cpu", type=int, default=None, help="CPU of the tester [0]."),
        click.option("--switch-cpu", type=int, default=None, help="CPU of the switch [next]."),
        click.option("--nf-cpus", default=None, help="CPUs of the network functions, e.g. 1."),
        click.option("--tester-cpus", default=None,
                     help="All the tester's cores, e.g. 0-3: pair i's engines on the i-th "
                     "(round robin); instead of --tester-cpu."),
        click.option("--switch-cpus", default=None,
                     help="All the switch's cores, e.g. 4-7: a kernel switch's ports' NAPI "
                     "threads round robin over them; instead of --switch-cpu."),
        click.option("--option", "options", multiple=True, help="Backend option key=value."),
        click.option("--unpinned", is_flag=True,
                     help="Pin nothing: the scheduler places tester, switch and NFs."),
        click.option("--function", "function", type=click.Choice(tuple(FUNCTIONS)),
                     default=None, help="What the switch does per frame: l2 (default), l3 "
                     "(longest-prefix match), nat (source NAT, conntrack), acl (filter rules); "
                     "switches that cannot are refused with the reason."),
        click.option("--vm-accel", "vm_accel", type=click.Choice(("tcg", "kvm")), default=None,
                     help="pvp-vm, chain-vm:N: how the VMs run: tcg (the default; emulated, a "
                     "functional check, not a performance figure) or kvm (refused where KVM "
                     "does not boot a guest)."),
        click.option("--table-size", "table_size", type=click.IntRange(1, MAX_L3_TABLE),
                     default=None, help="l3: prefixes in the routing table; acl: filter rules "
                     f"[{DEFAULT_TABLE_SIZE}]."),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func


def trial_options(kw: dict[str, Any], *, rate_pps: float | None = None,
                  duration: float | None = None) -> TrialOptions:
    """TrialOptions from the parsed placement and traffic options (a method varies the rate and
    duration of its trials: the record's defaults stand until then)."""
    parse_churn(kw.get("churn"))      # a bad --churn is refused first, as it always was
    if kw.get("unpinned") and any(kw.get(k) is not None for k in ("tester_cpu", "switch_cpu",
                                                                    "nf_cpus", "tester_cpus",
                                                                    "switch_cpus")):
        raise UsageError("--unpinned pins nothing: leave out --tester-cpu(s), --switch-cpu(s) "
                         "and --nf-cpus")
    flag_conflicts(kw)
    trial = build_trial_options(
        kw["switch"], kw["scenario"], size=kw["size"], flows=kw["flows"], burst=kw["burst"],
        io=kw["io"], warmup=kw["warmup"], churn=kw.get("churn"), tester_cpu=kw["tester_cpu"],
        switch_cpu=kw["switch_cpu"], nf_cpus=kw["nf_cpus"],
        options=parse_options(tuple(kw["options"]) + function_options(kw)),
        unpinned=bool(kw.get("unpinned")), tester_cpus=kw.get("tester_cpus"),
        switch_cpus=kw.get("switch_cpus"))
    if rate_pps is not None and duration is not None:
        trial = replace(trial, traffic=trial.traffic.at(rate_pps, duration, kw["warmup"]))
    return trial


def flag_conflicts(kw: dict[str, Any]) -> None:
    """UsageError for flags that each parse but say nothing together, which a run would ignore
    (and label its result with): --nf-cpus or option nf in a scenario without network
    functions, an --io the switch's tester cannot use (a repeated option: parse_options)."""
    from vswbench.scenario import Role
    from vswbench.scenario import parse
    from vswbench.switches.catalog import all_switches

    keys = [item.partition("=")[0].strip() for item in kw.get("options") or ()]
    scenario = parse(kw["scenario"])
    if not any(h.vm for h in scenario.hosts) and (kw.get("vm_accel") or "vm_accel" in keys):
        raise UsageError(f"--vm-accel applies to scenarios pvp-vm and chain-vm:N, and "
                         f"{scenario.name} has no VM (leave --vm-accel out)")
    if not any(h.role is Role.NF for h in scenario.hosts):
        for given, what in ((kw.get("nf_cpus") is not None, "--nf-cpus"),
                            ("nf" in keys, "option nf")):
            if given:
                raise UsageError(f"{what} applies to scenarios with network functions (pvp, "
                                 f"chain:N), and {scenario.name} has none (leave {what} out)")
    switches = all_switches()
    switch_cls = switches.get(kw["switch"])
    io = kw.get("io", "auto")
    if switch_cls is not None and switch_cls.port_kind == "dpdk" and io not in ("auto", "dpdk"):
        raise UsageError(f"--io {io}: switch {switch_cls.name} has DPDK ports, its tester always "
                         "uses dpdk: leave --io out")


def function_options(kw: dict[str, Any]) -> tuple[str, ...]:
    """--function and --table-size as the backend options they set (switches/rules/functions.py)."""
    extra = []
    if kw.get("vm_accel"):
        extra.append(f"vm_accel={kw['vm_accel']}")
    if kw.get("function") not in (None, "l2"):
        extra.append(f"function={kw['function']}")
    if kw.get("table_size") is not None:
        if kw.get("function") not in TABLE_FUNCTIONS:
            raise UsageError(f"--table-size: only --function {' or '.join(TABLE_FUNCTIONS)} has "
                             "a table; leave --table-size out or give such a function")
        extra.append(f"table_size={kw['table_size']}")
    return tuple(extra)


def testbed_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by every method: what to build and how to drive it."""
    decorators = [
        placement_options,
        traffic_options,
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


def writable_file(path: Path | None, flag: str = "--out") -> None:
    """Fail now, not after an hour of measuring, when `path` cannot be written (safefile: a
    link, a device, a FIFO or a directory is refused): its directory must exist (a missing
    one is named, never created)."""
    if path is not None:
        check_output_file(path, flag)


def method_plan(kw: dict[str, Any]) -> MethodPlan:
    if kw["no_calibration"] and kw["recalibrate"]:
        raise UsageError("--no-calibration and --recalibrate contradict each other: give one")
    writable_file(kw.get("out_file"))
    return plan_method(MethodOptions(trial_options(kw), kw["shape_pps"],
                                     not kw["no_calibration"], kw["recalibrate"],
                                     kw["restart_engines"]))


def emit(data: dict[str, Any], kw: dict[str, Any]) -> None:
    text = json.dumps(data, indent=1, default=str)
    if kw.get("out_file"):
        write_text(kw["out_file"], text + "\n")
    if kw["as_json"]:
        click.echo(text)


def trial_line(t: SessionTrial) -> None:
    r = t.result
    say(f"  {t.intended_load:>12,.0f} pps {t.intended_duration:>5.1f} s  lost {r.lost:>8,}"
         f"  unsent {t.unsent_count:>7,}  p50 {num(r.latency.p50, 1)} us"
         + ("  host stall" if t.host_stall else ""))


