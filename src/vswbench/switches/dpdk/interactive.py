"""A daemon driven through its stdin, its stdout read by a thread (dpdk-testpmd's prompt).

Started in its own process group (a terminal's Ctrl-C reaches only vswbench, which stops it), owned
by PID: registered with the cleanup registry and recorded in the run state the moment it exists.
`command()` writes one line and waits until the output that follows it satisfies a predicate.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable
from collections.abc import Sequence

from vswbench.errors import VswbenchError
from vswbench.run.registry import CleanupRegistry
from vswbench.run.registry import Registration
from vswbench.run.registry import wait_or_kill
from vswbench.run.state import RunState


class InteractiveProcess:
    def __init__(self, argv: Sequence[str], label: str, registry: CleanupRegistry,
                 state: RunState | None, quit_line: str = "quit") -> None:
        self.argv = list(argv)
        self.label = label
        self.quit_line = quit_line
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._state = state
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, errors="replace",
                                         bufsize=1, process_group=0)
        except OSError as exc:
            raise VswbenchError(f"cannot start {label}: {exc}") from exc
        self._reg: Registration | None = registry.register(f"{label} (PID {self.proc.pid})",
                                                            self.stop)
        if state is not None:
            state.add_process(self.proc.pid, self.argv)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def tail(self, n: int = 15) -> str:
        with self._cond:
            return "\n".join(self.lines[-n:])

    def wait_for(self, ready: Callable[[list[str]], bool], timeout: float, what: str,
                 start: int = 0) -> list[str]:
        """Wait until ready(output lines from `start`) holds; the lines. Raises if the process
        exits first or the time runs out (with the tail of its output)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                lines = self.lines[start:]
                if ready(lines):
                    return lines
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise VswbenchError(f"{self.label} exited (status {self.proc.returncode}) "
                                        f"while waiting for {what}:\n{self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VswbenchError(f"{self.label}: no {what} within {timeout:g} s:\n"
                                        f"{self.tail()}")
                self._cond.wait(min(left, 0.2))

    def command(self, line: str, ready: Callable[[list[str]], bool], timeout: float = 10.0
                ) -> list[str]:
        """Send one line; the output lines that followed it once ready() holds."""
        with self._cond:
            start = len(self.lines)
        if self.proc.stdin is None or self.proc.poll() is not None:
            raise VswbenchError(f"{self.label} is not running:\n{self.tail()}")
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise VswbenchError(f"{self.label}: cannot send {line!r}: {exc}") from exc
        return self.wait_for(ready, timeout, f"the answer to {line!r}", start)

    def stop(self, timeout: float = 5.0) -> None:
        """The quit line, then SIGTERM, then SIGKILL: only ever to our own PID. Idempotent."""
        if self.proc.poll() is None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.write(self.quit_line + "\n")
                    self.proc.stdin.flush()
            except OSError:
                pass
            wait_or_kill(self.proc, timeout)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._reader.join(2.0)
        if self._reg is not None:
            self._reg.discard()
            self._reg = None
        if self._state is not None:
            self._state.forget_process(self.proc.pid)
            self._state = None
