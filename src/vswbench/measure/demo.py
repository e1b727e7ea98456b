"""`vswbench demo`: a short engine demonstration over a veth pair between two namespaces.

For each backend the probe calls usable: `gen` in namespace a (CPU 0) against `sink` in namespace b
(CPU 1) at the highest rate, then `loop` (one port) against `reflect` for round-trip times. Results go
to results/demo-<timestamp>.json and .html. Everything created is removed on exit or Ctrl-C.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from vswbench import __version__
from vswbench.engine.probe import DEMO_BACKENDS
from vswbench.engine.probe import ProbeResult
from vswbench.engine.probe import probe
from vswbench.engine.process import EngineError
from vswbench.engine.process import EngineProcess
from vswbench.engine.process import EngineResult
from vswbench.engine.process import find_engine
from vswbench.engine.process import run_engine
from vswbench.errors import UsageError
from vswbench.errors import require_root
from vswbench.host.pair import Endpoint
from vswbench.host.pair import NamespacePair
from vswbench.host.pair import namespace_pair
from vswbench.host.tuning import set_mtu
from vswbench.run.scope import Run
from vswbench.run.scope import run_scope
from vswbench.units import MAX_FRAME
from vswbench.units import MIN_FRAME
from vswbench.units import STD_FRAME_MAX
from vswbench.units import FrameSize
from vswbench.units import parse_rate

READY_TIMEOUT = 15.0  # seconds for an engine to open its port and print its start record


@dataclass(frozen=True)
class DemoOptions:
    duration: float = 3.0
    size: int = 64
    rtt_rate: str = "10k"
    rtt_duration: float = 2.0
    backends: tuple[str, ...] = ()  # empty: every usable one of DEMO_BACKENDS
    results_dir: Path = Path("results")
    tx_cpu: int = 0
    rx_cpu: int = 1


@dataclass
class BackendResult:
    backend: str
    tx_frames: int | None = None
    rx_frames: int | None = None
    tx_kpps: float | None = None
    rx_kpps: float | None = None
    lost: int | None = None
    loss_ratio: float | None = None
    rtt_min_us: float | None = None
    rtt_p50_us: float | None = None
    rtt_p99_us: float | None = None
    rtt_max_us: float | None = None
    rtt_samples: int | None = None
    errors: list[str] = field(default_factory=list)
    finals: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class DemoReport:
    run_id: str
    started: str
    elapsed_s: float
    host: dict[str, Any]
    options: dict[str, Any]
    probe: dict[str, Any]
    skipped: dict[str, str]
    results: list[BackendResult]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["options"] = {k: str(v) if isinstance(v, Path) else v for k, v in self.options.items()}
        return data


def validate(options: DemoOptions) -> None:
    cpus = os.cpu_count() or 1
    for name in ("tx_cpu", "rx_cpu"):
        cpu = getattr(options, name)
        if not 0 <= cpu < cpus:
            option = "--" + name.replace("_", "-")
            raise UsageError(f"{option} {cpu}: this machine has CPUs 0..{cpus - 1}")
    if not MIN_FRAME <= options.size <= MAX_FRAME:
        raise UsageError(f"--size {options.size}: frame sizes are {MIN_FRAME}..{MAX_FRAME} bytes")
    if options.duration <= 0 or options.rtt_duration <= 0:
        raise UsageError("durations must be positive")
    try:
        parse_rate(options.rtt_rate)
    except UsageError as exc:
        raise UsageError(f"--rtt-rate: {exc}") from None
    unknown = [b for b in options.backends if b not in DEMO_BACKENDS]
    if unknown:
        raise UsageError(f"unknown backend {unknown[0]!r}; choose from {', '.join(DEMO_BACKENDS)}")


def choose_backends(options: DemoOptions, found: ProbeResult) -> tuple[list[str], dict[str, str]]:
    wanted = list(options.backends or DEMO_BACKENDS)
    chosen, skipped = [], {}
    for name in wanted:
        info = found.backend(name)
        if info is None:
            skipped[name] = "not compiled into the engine"
        elif not info.usable:
            skipped[name] = info.reason or "the probe says it is not usable here"
        elif info.max_frame is not None and options.size > info.max_frame:
            skipped[name] = (f"it carries frames up to {info.max_frame} B, not {options.size} "
                             "(use afpacket or udp)")
        else:
            chosen.append(name)
    return chosen, skipped


def _common(end: Endpoint, backend: str, cpu: int) -> list[str]:
    return ["--netns", end.netns, "--port", end.ifname, "--io", backend, "--cpu", str(cpu)]


def measure_throughput(run: Run, pair: NamespacePair, backend: str, opts: DemoOptions,
                       result: BackendResult) -> None:
    sink_args = ["sink", *_common(pair.b, backend, opts.rx_cpu),
                 "--duration", f"{opts.duration + 30:g}", "--idle", "1", "--no-hist"]
    gen_args = ["gen", *_common(pair.a, backend, opts.tx_cpu), "--size", str(opts.size),
                "--rate", "0", "--duration", f"{opts.duration:g}", "--no-hist"]
    with EngineProcess(sink_args, registry=run.registry, state=run.state, label="sink") as sink:
        sink.wait_for_record("start", READY_TIMEOUT)
        gen = run_engine(gen_args, timeout=opts.duration + 30, registry=run.registry,
                         state=run.state)
        sink_result = sink.wait(timeout=10).check()
    gen_final, sink_final = gen.final, sink_result.final
    result.finals["gen"], result.finals["sink"] = gen_final.raw, sink_final.raw
    received = sink_final.rx_frames - sink_final.duplicated
    result.tx_frames, result.rx_frames = gen_final.tx_frames, sink_final.rx_frames
    result.tx_kpps = (gen_final.achieved_pps or gen_final.tx_frames / opts.duration) / 1e3
    result.rx_kpps = (sink_final.rx_pps or sink_final.rx_frames / opts.duration) / 1e3
    result.lost = max(0, gen_final.tx_frames - received)
    result.loss_ratio = result.lost / gen_final.tx_frames if gen_final.tx_frames else None


def measure_round_trip(run: Run, pair: NamespacePair, backend: str, opts: DemoOptions,
                       result: BackendResult) -> None:
    reflect_args = ["reflect", *_common(pair.b, backend, opts.rx_cpu),
                    "--duration", f"{opts.rtt_duration + 30:g}", "--no-hist"]
    rate = f"{parse_rate(opts.rtt_rate):.6f}".rstrip("0").rstrip(".")
    loop_args = ["loop", *_common(pair.a, backend, opts.tx_cpu), "--size", str(opts.size),
                 "--rate", rate, "--duration", f"{opts.rtt_duration:g}"]
    with EngineProcess(reflect_args, registry=run.registry, state=run.state,
                       label="reflect") as reflect:
        reflect.wait_for_record("start", READY_TIMEOUT)
        loop: EngineResult = run_engine(loop_args, timeout=opts.rtt_duration + 30,
                                        registry=run.registry, state=run.state)
        reflect.stop().check()
    final = loop.final
    result.finals["loop"] = final.raw
    lat = final.latency_us
    if lat is None or lat.empty:
        result.errors.append("round trip: no latency samples (no reflected frame came back)")
        return
    result.rtt_min_us, result.rtt_p50_us = lat.min, lat.p50
    result.rtt_p99_us, result.rtt_max_us, result.rtt_samples = lat.p99, lat.max, lat.count


def host_facts() -> dict[str, Any]:
    return {"hostname": platform.node(), "kernel": platform.release(),
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "vswbench": __version__, "engine": str(find_engine())}


def run_demo(options: DemoOptions, progress: Callable[[str], None] = print) -> DemoReport:
    validate(options)
    require_root("the demo")
    found = probe()
    backends, skipped = choose_backends(options, found)
    for name, reason in skipped.items():
        progress(f"{name}: skipped ({reason})")
    started, t0 = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.monotonic()
    results: list[BackendResult] = []
    with run_scope() as run:
        progress(f"run {run.id}: namespaces {run.id}a and {run.id}b joined by a veth pair")
        with namespace_pair(run.id, run.registry) as pair:
            if options.size > STD_FRAME_MAX:
                mtu = FrameSize(bytes=options.size).link_mtu
                set_mtu([pair.a.netns, pair.b.netns], mtu)
                progress(f"run {run.id}: the veth pair at MTU {mtu} for {options.size}-byte frames")
            for backend in backends:
                result = BackendResult(backend)
                results.append(result)
                for what, step in (("throughput", measure_throughput),
                                   ("round trip", measure_round_trip)):
                    progress(f"{backend}: {what} ...")
                    try:
                        step(run, pair, backend, options, result)
                    except EngineError as exc:
                        result.errors.append(f"{what}: {exc}")
                        progress(f"{backend}: {what} failed: {exc}")
        report = DemoReport(str(run.id), started, round(time.monotonic() - t0, 3), host_facts(),
                            asdict(options), found.raw, skipped, results)
    return report
