"""Run vswbench-engine: find the binary, start it with an argv list, collect its JSON records.

`run_engine()` runs one bounded command to completion. `EngineProcess` is a context manager for a
long-running engine (sink, reflect): it is stopped on exit by its own PID (SIGTERM, then SIGKILL only
after a timeout) and its final record is collected. Failures raise `EngineError` carrying the
engine's stderr and exit status (3 = "not supported here").
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from vswbench.engine.records import EngineRecord
from vswbench.engine.records import FinalRecord
from vswbench.engine.records import LatencySummary
from vswbench.engine.records import RecordError
from vswbench.engine.records import parse_final
from vswbench.engine.records import parse_line
from vswbench.errors import VswbenchError
from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import Registration
from vswbench.run.state import RunState

__all__ = ["ENGINE_NAME", "EngineError", "EngineNotFound", "EngineProcess", "EngineRecord",
           "EngineResult", "FinalRecord", "LatencySummary", "find_engine", "run_engine"]

ENGINE_NAME = "vswbench-engine"
REPO_ROOT = Path(__file__).resolve().parents[2]
EXIT_USAGE = 2
EXIT_NOT_SUPPORTED = 3


class EngineNotFound(VswbenchError):
    pass


class EngineError(VswbenchError):
    """The engine failed: exit status, stderr and the command are kept."""

    def __init__(self, message: str, *, argv: Sequence[str] = (), returncode: int | None = None,
                 stderr: str = "") -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr.strip()
        self.message = message
        super().__init__(self._format())

    def _format(self) -> str:
        text = self.message
        if self.returncode is not None:
            text += f" (exit status {self.returncode})"
        if self.stderr:
            lines = self.stderr.splitlines()
            tail = lines[-20:]
            text += ":\n" + ("  ...\n" if len(lines) > len(tail) else "") + "\n".join(
                "  " + line for line in tail)
        return text

    @property
    def not_supported(self) -> bool:
        return self.returncode == EXIT_NOT_SUPPORTED

    @property
    def exit_code(self) -> int:  # type: ignore[override]
        return EXIT_NOT_SUPPORTED if self.not_supported else 1


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_engine(env: Mapping[str, str] | None = None, executable: str | None = None,
                repo_root: Path | None = None, search_path: str | None = None) -> Path:
    """The engine binary: $VSWBENCH_ENGINE, else beside the venv's python, else the repo's
    engine/build, else $PATH. The arguments exist for tests; all default to this process."""
    env = os.environ if env is None else env
    override = env.get("VSWBENCH_ENGINE")
    if override:
        path = Path(override)
        if not _is_executable(path):
            raise EngineNotFound(f"VSWBENCH_ENGINE={override} is not an executable file")
        return path
    # sys.executable is not resolved: in a venv it is .venv/bin/python, a symlink to the base python.
    beside_python = Path(executable or sys.executable).parent / ENGINE_NAME
    in_repo = (repo_root or REPO_ROOT) / "engine" / "build" / ENGINE_NAME
    for candidate in (beside_python, in_repo):
        if _is_executable(candidate):
            return candidate
    on_path = shutil.which(ENGINE_NAME, path=search_path if search_path is not None
                           else env.get("PATH", os.defpath))
    if on_path:
        return Path(on_path)
    raise EngineNotFound(f"{ENGINE_NAME} not found (looked at $VSWBENCH_ENGINE, {beside_python}, "
                         f"{in_repo}, $PATH): run ./setup.sh to build it")


@dataclass
class EngineResult:
    argv: list[str]
    returncode: int | None  # None: still running
    records: list[EngineRecord]
    stderr: str
    timed_out: bool = False
    bad_lines: list[str] = field(default_factory=list)

    def of_type(self, rtype: str) -> list[EngineRecord]:
        return [r for r in self.records if r.type == rtype]

    @property
    def start(self) -> EngineRecord | None:
        starts = self.of_type("start")
        return starts[0] if starts else None

    @property
    def warnings(self) -> list[str]:
        return [str(r.data.get("msg", "")) for r in self.of_type("warning")]

    @property
    def final(self) -> FinalRecord:
        finals = self.of_type("final")
        if not finals:
            raise EngineError("the engine printed no final record", argv=self.argv,
                              returncode=self.returncode, stderr=self.stderr)
        try:
            return parse_final(finals[-1])
        except RecordError as exc:
            raise EngineError(f"bad final record: {exc}", argv=self.argv) from exc

    def check(self) -> EngineResult:
        """Raise EngineError unless the engine exited 0 and printed only valid records."""
        if self.returncode is None:
            raise EngineError(f"the engine is still running: {' '.join(self.argv)}", argv=self.argv)
        if self.returncode != 0:
            if self.returncode < 0:
                what = f"the engine was killed by {signal.Signals(-self.returncode).name}"
            elif self.returncode == EXIT_NOT_SUPPORTED:
                what = "not supported here"
            elif self.returncode == EXIT_USAGE:
                what = "the engine rejected its arguments"
            else:
                what = "the engine failed"
            raise EngineError(f"{what}: {' '.join(self.argv)}", argv=self.argv,
                              returncode=self.returncode, stderr=self.stderr)
        if self.bad_lines:
            raise EngineError(f"the engine printed a line that is not a record: "
                              f"{self.bad_lines[0][:200]!r}", argv=self.argv, stderr=self.stderr)
        return self


class EngineProcess:
    """A running engine. Use as a context manager; it is stopped (by PID) on exit."""

    def __init__(self, args: Sequence[str], *, engine: Path | str | None = None,
                 registry: CleanupRegistry | None = None, state: RunState | None = None,
                 label: str = "", stop_timeout: float = 5.0, interactive: bool = False,
                 env: dict[str, str] | None = None) -> None:
        self.interactive = interactive  # stdin is a pipe: control mode (send_command)
        self.env = {**os.environ, **env} if env else None
        self.argv = [str(engine or find_engine()), *map(str, args)]
        self.registry = registry
        self.state = state
        self.label = label or (args[0] if args else ENGINE_NAME)
        self.stop_timeout = stop_timeout
        self.proc: subprocess.Popen[str] | None = None
        self._records: list[EngineRecord] = []
        self._bad_lines: list[str] = []
        self._stderr: list[str] = []
        self._cond = threading.Condition()
        self._stdout_done = False
        self._threads: list[threading.Thread] = []
        self._reg: Registration | None = None
        self._timed_out = False
        self._first_seen_ns: dict[str, int] = {}   # record type -> when its first one arrived
        self.go_ns: int | None = None   # --go-on-stdin: when go() released its traffic

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> EngineProcess:
        try:
            # Own process group: a terminal's Ctrl-C reaches only us; we stop the engine ourselves.
            stdin = subprocess.PIPE if self.interactive else subprocess.DEVNULL
            self.proc = subprocess.Popen(self.argv, stdin=stdin,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, bufsize=1, process_group=0, env=self.env)
        except OSError as exc:
            raise EngineError(f"cannot start {self.argv[0]}: {exc}", argv=self.argv) from exc
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()
        if self.registry is not None:
            self._reg = self.registry.register(f"engine {self.label} (PID {self.pid})", self.stop)
        if self.state is not None:
            self.state.add_process(self.pid, self.argv)
        return self

    def __enter__(self) -> EngineProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        assert self.proc is not None, "engine not started"
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.strip():
                continue
            arrived = time.monotonic_ns()
            with self._cond:
                try:
                    record = parse_line(line)
                    self._records.append(record)
                    self._first_seen_ns.setdefault(record.type, arrived)
                except RecordError:
                    self._bad_lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._stdout_done = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def wait_for_record(self, rtype: str, timeout: float,
                        where: Callable[[EngineRecord], bool] | None = None) -> EngineRecord:
        """Block until the engine printed a record of this type (e.g. "start": ports are open),
        the first one `where` accepts if given."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for record in self._records:
                    if record.type == rtype and (where is None or where(record)):
                        return record
                if self._stdout_done:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise EngineError(f"no {rtype!r} record from the engine within {timeout:g} s",
                                      argv=self.argv, stderr="".join(self._stderr))
                self._cond.wait(remaining)
        # The engine closed stdout without that record: it has exited (or is about to).
        self._finish(timeout=self.stop_timeout)
        self.result().check()
        raise EngineError(f"the engine ended without a {rtype!r} record", argv=self.argv,
                          returncode=self.proc.returncode if self.proc else None,
                          stderr="".join(self._stderr))

    # -- control mode ------------------------------------------------------------------------
    def send_command(self, command: Mapping[str, object]) -> None:
        """One JSON line to a control-mode engine (interactive=True)."""
        assert self.proc is not None and self.proc.stdin is not None, "not an interactive engine"
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise EngineError(f"the control engine is gone ({exc})", argv=self.argv,
                              returncode=self.proc.poll(), stderr="".join(self._stderr)) from None

    def go(self) -> None:
        """Release the traffic of an engine started with --go-on-stdin (interactive=True), its
        ports open (start record seen)."""
        assert self.proc is not None and self.proc.stdin is not None, "not an interactive engine"
        self.go_ns = time.monotonic_ns()
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass    # it ended meanwhile: its result says how

    def traffic_start_ns(self) -> int | None:
        """When its traffic began: go() for a gated engine, else its start record."""
        return self.go_ns if self.go_ns is not None else self.first_seen_ns("start")

    def first_seen_ns(self, rtype: str) -> int | None:
        """When (CLOCK_MONOTONIC ns) this process read the engine's first record of this type:
        for "start", just before its traffic began (the engine prints it, then runs the trial)."""
        with self._cond:
            return self._first_seen_ns.get(rtype)

    def record_count(self) -> int:
        with self._cond:
            return len(self._records)

    def wait_for_answer(self, after: int, timeout: float) -> EngineRecord:
        """The first "final" or "error" record printed after the first `after` records."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for record in self._records[after:]:
                    if record.type in ("final", "error"):
                        return record
                remaining = deadline - time.monotonic()
                if self._stdout_done or remaining <= 0:
                    what = "ended" if self._stdout_done else f"gave no answer within {timeout:g} s"
                    raise EngineError(f"the control engine {what}", argv=self.argv,
                                      returncode=self.proc.poll() if self.proc else None,
                                      stderr="".join(self._stderr))
                self._cond.wait(remaining)

    def quit(self, timeout: float = 5.0) -> EngineResult:
        """Ask a control-mode engine to end ({"cmd":"quit"}), stop it if it does not."""
        assert self.proc is not None
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.write('{"cmd":"quit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout)
            except (BrokenPipeError, ValueError, subprocess.TimeoutExpired):
                pass
        return self.stop()

    def wait(self, timeout: float | None = None) -> EngineResult:
        """Wait for the engine to end by itself; after `timeout` seconds stop it (SIGTERM, which
        still yields a final record) and mark the result timed_out."""
        assert self.proc is not None, "engine not started"
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._timed_out = True
            self.stop()
        return self._finish(timeout=self.stop_timeout)

    def wait_until_ended(self, timeout: float) -> bool:
        """Whether the engine ended within `timeout` seconds (it keeps running otherwise). Asleep
        until its output ends or the time is up (Popen.wait(timeout) would poll every few ms)."""
        assert self.proc is not None, "engine not started"
        with self._cond:
            closed = self._cond.wait_for(lambda: self._stdout_done, timeout)
        if closed:   # its output ended: it is exiting
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
        return self.proc.poll() is not None

    def stop(self, timeout: float | None = None) -> EngineResult:
        """End the engine: SIGTERM to its PID, wait, SIGKILL only if it does not end in time."""
        assert self.proc is not None, "engine not started"
        timeout = self.stop_timeout if timeout is None else timeout
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait()
        return self._finish(timeout=timeout)

    def send_signal(self, sig: signal.Signals) -> None:
        """A signal to the running engine (e.g. SIGUSR1: the stall monitor's flush request)."""
        self._signal(sig)

    def _signal(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, sig)  # by our own child's PID, never by name

    def _finish(self, timeout: float) -> EngineResult:
        assert self.proc is not None
        self.proc.wait()
        for thread in self._threads:
            thread.join(timeout)
        if self._reg is not None:
            self._reg.discard()
            self._reg = None
            if self.state is not None:
                self.state.forget_process(self.proc.pid)
        return self.result()

    def result(self) -> EngineResult:
        assert self.proc is not None, "engine not started"
        with self._cond:
            return EngineResult(self.argv, self.proc.poll(), list(self._records),
                                "".join(self._stderr), self._timed_out, list(self._bad_lines))


def run_engine(args: Sequence[str], *, timeout: float | None = None,
               engine: Path | str | None = None, registry: CleanupRegistry | None = None,
               state: RunState | None = None, check: bool = True) -> EngineResult:
    """Run one engine command to completion and return its records (EngineError on failure)."""
    with EngineProcess(args, engine=engine, registry=registry, state=state) as proc:
        result = proc.wait(timeout)
    return result.check() if check else result
