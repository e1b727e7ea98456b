"""The cleanup registry: everything a run creates is registered here and torn down in reverse order.

Context managers (Namespace, VethPair, EngineProcess, ...) register an undo action when they create
something and release it on exit. Whatever is still registered when the run ends (normal exit,
exception, SIGINT, SIGTERM) is undone by `teardown()`, newest first. `unwinding_signals()` turns
SIGINT into KeyboardInterrupt and SIGTERM/SIGHUP into `Terminated` (a KeyboardInterrupt that names
its signal), so that `with` blocks unwind and every command ends a SIGTERM exactly as it ends a
Ctrl-C (exit 130, its summary, the store's lock released, the run marked interrupted); while a
teardown runs, further signals are ignored so the cleanup itself is not cut short.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_teardown_depth = 0
_depth_lock = threading.Lock()


def tearing_down() -> bool:
    return _teardown_depth > 0


@contextmanager
def _teardown_guard() -> Iterator[None]:
    global _teardown_depth
    with _depth_lock:
        _teardown_depth += 1
    try:
        yield
    finally:
        with _depth_lock:
            _teardown_depth -= 1


def _log_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class CleanupFailure:
    description: str
    error: BaseException


class Registration:
    """Handle for one registered undo action."""

    def __init__(self, registry: CleanupRegistry, description: str, undo: Callable[[], Any]):
        self.registry = registry
        self.description = description
        self.undo = undo

    def release(self) -> None:
        """Undo now (once) and forget it."""
        self.registry.release(self)

    def discard(self) -> None:
        """Forget it without undoing (the object is already gone)."""
        self.registry.discard(self)

    def __repr__(self) -> str:
        return f"Registration({self.description!r})"


class CleanupRegistry:
    def __init__(self, log: Callable[[str], None] = _log_stderr) -> None:
        self._entries: list[Registration] = []
        self._lock = threading.RLock()
        self.failures: list[CleanupFailure] = []
        self.log = log

    def register(self, description: str, undo: Callable[[], Any]) -> Registration:
        reg = Registration(self, description, undo)
        with self._lock:
            self._entries.append(reg)
        return reg

    def discard(self, reg: Registration) -> bool:
        with self._lock:
            try:
                self._entries.remove(reg)
                return True
            except ValueError:
                return False

    def release(self, reg: Registration) -> None:
        if self.discard(reg):
            with _teardown_guard():
                self._run(reg)

    def pending(self) -> list[str]:
        with self._lock:
            return [reg.description for reg in self._entries]

    def __len__(self) -> int:
        return len(self._entries)

    def teardown(self) -> list[CleanupFailure]:
        """Undo everything still registered, newest first. Never raises; returns the failures."""
        failures_before = len(self.failures)
        with _teardown_guard():
            while True:
                with self._lock:
                    if not self._entries:
                        break
                    reg = self._entries.pop()
                self._run(reg)
        return self.failures[failures_before:]

    def _run(self, reg: Registration) -> None:
        try:
            reg.undo()
        except Exception as exc:  # keep going: the rest must still be cleaned
            self.failures.append(CleanupFailure(reg.description, exc))
            self.log(f"vswbench: cleanup of {reg.description} failed: {exc}")

    def __enter__(self) -> CleanupRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is (every `except KeyboardInterrupt` sees it)."""

    def __init__(self, signum: int) -> None:
        self.signal_name = signal.Signals(signum).name
        super().__init__(self.signal_name)


def _unwind_handler(signum: int, frame: object) -> None:
    if tearing_down():
        _log_stderr(f"vswbench: {signal.Signals(signum).name} ignored: still cleaning up")
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


UNWIND_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def unwinding_signals(signals: tuple[signal.Signals, ...] = UNWIND_SIGNALS) -> Iterator[None]:
    """Within the block, the given signals raise so `with` blocks unwind; old handlers restored after.

    Only possible in the main thread; elsewhere this is a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _unwind_handler) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def cleanup_scope(registry: CleanupRegistry | None = None) -> Iterator[CleanupRegistry]:
    """A registry whose leftovers are torn down however the block ends, signals included."""
    registry = CleanupRegistry() if registry is None else registry
    with unwinding_signals():
        try:
            yield registry
        finally:
            registry.teardown()


def wait_or_kill(proc: Any, timeout: float) -> None:
    """After a polite request to exit: wait, then SIGTERM, wait, then SIGKILL, always to this
    process's own PID (never by name), and reap it."""
    import os
    import signal
    import subprocess

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            proc.wait(timeout)
            break
        except subprocess.TimeoutExpired:
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                break
    proc.wait()
