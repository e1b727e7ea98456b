"""Profiling a trial with perf: `perf record -e cpu-clock -a -g` on the testbed's cores while the
trial runs, then `perf script` folded into per-core profiles (host/profile.py).

Software sampling (cpu-clock): this VM has no hardware counters (`cycles` is not supported).
perf and its perf.data live in a vsb-<run id> temp dir of the run (removed with the run, also on
error and Ctrl-C); perf is stopped by its own PID only (SIGINT, so it writes its data; SIGKILL
after a timeout) and recorded in the run's state file so `vswbench clean` finds it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from vswbench.errors import VswbenchError
from vswbench.host.profile import CATEGORIES
from vswbench.host.profile import CoreProfile
from vswbench.host.profile import fold_perf_script

PERF = "/usr/bin/perf"
SAMPLE_HZ = 997                    # per core; prime, so it does not beat with timer ticks
FOLDED_LIMIT = 1000                # distinct stacks kept per core (the rest summed in one line)
START_WAIT_S = 0.3                 # perf needs a moment before it samples
SCAN_S = 0.5                       # how often the run's threads are looked up during a profile


def perf_problem() -> str | None:
    """Why perf cannot profile here, or None."""
    if not shutil.which(PERF) and not Path(PERF).exists():
        return "perf is not installed (Debian package linux-perf; ./setup.sh installs it)"
    if os.geteuid() != 0:
        return "system-wide perf sampling needs root"
    return None


@dataclass
class TrialProfile:
    """A trial's profile: per core its samples, category shares (of its samples), perf-based
    busy share (of the window), top functions and folded stacks."""
    event: str
    hz: int
    seconds: float
    cpus: list[int]
    cores: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "hz": self.hz, "seconds": self.seconds, "cpus": self.cpus,
                "cores": self.cores, "warnings": self.warnings}


def run_threads(run_id: str, proc: Path = Path("/proc")) -> set[int]:
    """Thread ids of the run's own processes (a command line naming the run id: engines, OVS
    daemons, their threads) and kernel threads (a name with the run id: napi/vsb<id>...)."""
    tids: set[int] = set()
    key = run_id.encode()
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            mine = key in (entry / "cmdline").read_bytes() or key in (entry / "comm").read_bytes()
            if mine:
                tids.update(int(t.name) for t in (entry / "task").iterdir() if t.name.isdigit())
        except OSError:
            continue
    tids.discard(os.getpid())
    return tids


def _testbed(own: CoreProfile | None, total: int,
             daemons: tuple[str, ...] = ()) -> dict[str, Any] | None:
    if own is None or not own.samples:
        return None
    return {"samples": own.samples, "share": round(own.samples / total, 4) if total else None,
            "categories": own.categories(daemons), "top_functions": own.top_functions(5),
            "top_kernel_functions": own.top_functions(5, kernel_only=True)}


def summarize(cores: dict[int, CoreProfile], cpus: list[int], seconds: float,
              hz: int = SAMPLE_HZ, daemons: tuple[str, ...] = ()) -> TrialProfile:
    """The stored record of per-core profiles (only the asked-for CPUs). The window is the span
    of the samples' own times where perf printed them (else `seconds`, the wall clock). A core's
    perf-based busy share is its non-idle samples over the samples the window should hold: a
    core whose idle time perf does not sample (seen here: an idle core with its tick stopped
    gets no cpu-clock samples) is not 100 % busy for it."""
    times = [t for c in cores.values() for t in (c.first, c.last) if t is not None]
    if len(times) >= 2 and max(times) > min(times):
        seconds = max(times) - min(times) + 1.0 / hz
    prof = TrialProfile("cpu-clock", hz, round(seconds, 3), cpus)
    for cpu in cpus:
        core = cores.get(cpu, CoreProfile(cpu))
        expected = seconds * hz
        cats = core.categories(daemons) if core.samples else {c: 0.0 for c in CATEGORIES}
        busy_samples = core.samples * (1.0 - cats["idle"])
        prof.cores[str(cpu)] = {
            "samples": core.samples, "expected_samples": round(expected),
            "busy": round(min(1.0, busy_samples / expected), 4) if expected else None,
            "categories": cats,
            "top_functions": core.top_functions(10),
            "top_kernel_functions": core.top_functions(5, kernel_only=True),
            "top_comms": core.top_comms(),
            # the run's own threads only (others share the cores on a busy machine)
            "testbed": _testbed(core.own, core.samples, daemons),
            "folded": core.folded_lines(FOLDED_LIMIT)}
    return prof


class PerfRecorder:
    """Context manager: perf records the given CPUs while the block runs; `profile` is set when
    the block ended normally."""

    def __init__(self, run: Any, cpus: list[int], hz: int = SAMPLE_HZ,
                 daemons: tuple[str, ...] = ()) -> None:
        problem = perf_problem()
        if problem:
            raise VswbenchError(f"--profile: {problem}")
        self.run, self.cpus, self.hz = run, sorted(set(cpus)), hz
        self.daemons = daemons       # the switch daemons' comm prefixes (profile.py)
        self.proc: subprocess.Popen[bytes] | None = None
        self.dir: Path | None = None
        self.profile: TrialProfile | None = None
        self._t0 = 0.0
        self.own: set[int] = set()

    def __enter__(self) -> PerfRecorder:
        self.dir = self.run.temp_dir()
        data = self.dir / "perf.data"
        argv = [PERF, "record", "-e", "cpu-clock", "-F", str(self.hz), "-a", "-g",
                "-C", ",".join(str(c) for c in self.cpus), "-o", str(data), "--quiet"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     cwd=self.dir)
        reg = self.run.registry.register(f"perf record (pid {self.proc.pid})", self._stop)
        self._reg = reg
        if self.run.state is not None:
            self.run.state.add_process(self.proc.pid, argv)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:   # perf writes its header once it is sampling
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode()[-300:]
                self._stop()
                raise VswbenchError(f"--profile: perf record exited: {err.strip()}")
            if data.exists() and data.stat().st_size > 0:
                break
            time.sleep(0.05)
        time.sleep(START_WAIT_S)
        self.own = run_threads(str(self.run.id))
        self._stop_scan = threading.Event()
        self._scanner = threading.Thread(target=self._scan, daemon=True, name="vsb-perf-scan")
        self._scanner.start()
        self._t0 = time.monotonic()
        return self

    def _scan(self) -> None:
        """Look up the run's threads while perf records: engines that start and end inside the
        profile (a trial's drivers) are found too."""
        while not self._stop_scan.wait(SCAN_S):
            self.own |= run_threads(str(self.run.id))

    def _stop(self) -> None:
        """Stop perf by its PID (SIGINT: it writes its data), SIGKILL if it does not exit."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.kill(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if self.run.state is not None:
            self.run.state.forget_process(proc.pid)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        seconds = time.monotonic() - self._t0
        self._stop_scan.set()
        self._scanner.join(5)
        if exc_type is None:
            self.own |= run_threads(str(self.run.id))   # threads started during the trial
        self._reg.release()            # stops perf
        assert self.dir is not None
        try:
            if exc_type is None:
                self.profile = self._fold(self.dir / "perf.data", seconds)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _fold(self, data: Path, seconds: float) -> TrialProfile:
        try:
            proc = subprocess.run([PERF, "script", "-i", str(data), "-F",
                                   "comm,tid,cpu,time,ip,sym,dso"], capture_output=True, text=True,
                                  timeout=300, cwd=data.parent, errors="replace")
        except subprocess.TimeoutExpired:
            raise VswbenchError("--profile: perf script took over 5 minutes") from None
        if proc.returncode != 0:
            raise VswbenchError(f"--profile: perf script failed: {proc.stderr.strip()[-300:]}")
        return summarize(fold_perf_script(proc.stdout, self.own), self.cpus, seconds, self.hz,
                         self.daemons)
