"""A group's testbeds kept up together: its points measured one switch after another, then paired
rounds (results/paired.py says why rounds; campaign/rounds_phase.py decides when they stop).

`Bench` holds one testbed and trial session per switch of a group (one scenario, frame size,
variant and stack), each in a run scope of its own (its own run id: two testbeds of one run id
would share names), built once and kept up for the group's searches, latency trials and rounds.
A switch that keeps a CPU busy while idle (`Switch.idle_polls`: a PMD thread polling its ports,
DPDK's testers) would take the CPU the measured switch needs: its testbed's processes (its
daemons and engines, never kernel threads) are frozen (SIGSTOP) while another switch is measured
and thawed (SIGCONT) for its own measurements; every frozen process is thawed before its testbed
is torn down, on error and on a signal too, so its own exit path stops it.

A sample is one trial of `duration` seconds with the tester at its ceiling (rate 0: as fast as
it can), CSIT's MRR: what arrived, what was sent, and the host stalls the session's monitor
recorded on the path's CPUs in its window.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import ExitStack
from contextlib import contextmanager
from contextlib import suppress
from dataclasses import dataclass

from vswbench.errors import VswbenchError
from vswbench.measure.method import MethodContext
from vswbench.measure.method import MethodPlan
from vswbench.measure.method import method_context
from vswbench.measure.trial import _daemon_pids
from vswbench.run.ids import new_run_id

SAMPLE_SECONDS = 0.25


@dataclass(frozen=True)
class Member:
    """One switch of the group and the plan of its testbed (the campaign's plan_for)."""
    switch: str
    plan: MethodPlan
    idle_polls: bool


@dataclass(frozen=True)
class Measured:
    """One sample as the trial measured it (results/paired.Sample adds round and position)."""
    duration_s: float
    sent: int
    received: int
    stall_ms: float
    host_stall: str | None
    ceiling_pps: float | None = None    # the tester's calibrated ceiling on this testbed


def _open(member: Member, progress: Callable[[str], None]) -> AbstractContextManager[MethodContext]:
    return method_context(member.plan, drain=0.05, progress=progress, run_id=new_run_id())


def _processes(ctx: MethodContext) -> list[int]:
    """The testbed's user-space processes: the switch's daemons and the session's engines."""
    pids = _engine_pids(ctx)
    if ctx.testbed.switch is not None:
        pids += [pid for label, pid in _daemon_pids(ctx.testbed.switch).items()
                 if label.startswith("daemon ")]
    return sorted(set(pids))


def _monitor_on(ctx: MethodContext) -> None:
    """The session's stall monitor, started for this switch's turn (watching its engines)."""
    session = ctx.session
    if session.monitor is None:
        session._start_monitor(_engine_pids(ctx))


def _monitor_off(ctx: MethodContext) -> None:
    """Stop the session's stall monitor: its timers fire every period on every CPU of the path,
    and eleven idle testbeds' monitors cost the measured one its CPU (seen: ovs 0.05 Mpps)."""
    session = ctx.session
    if session.monitor is not None:
        session.monitor.stop()
        session.monitor = None


def _engine_pids(ctx: MethodContext) -> list[int]:
    session = ctx.session
    pids = [p.pid for p in getattr(session, "servers", {}).values()]
    driver = getattr(session, "driver", None)
    return ([driver.pid] if driver is not None else []) + pids


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, sig)


class Bench:
    """The group's testbeds, built on entry (failures kept per switch); `use(switch)` hands out
    one switch's context (thawed while in use), `sample(switch)` measures it."""

    def __init__(self, members: list[Member], duration: float = SAMPLE_SECONDS,
                 progress: Callable[[str], None] = lambda m: None) -> None:
        self.members = {m.switch: m for m in members}
        self.duration = duration
        self.progress = progress
        self._stack = ExitStack()
        self.contexts: dict[str, MethodContext] = {}
        self.failed: dict[str, str] = {}          # switch -> why its testbed did not come up
        self._frozen: dict[str, list[int]] = {}

    def __enter__(self) -> Bench:
        try:
            for m in self.members.values():
                try:
                    ctx = self._stack.enter_context(_open(m, self.progress))
                except VswbenchError as exc:
                    self.failed[m.switch] = str(exc)
                    continue
                self.contexts[m.switch] = ctx
                _monitor_off(ctx)
                if m.idle_polls:
                    self._freeze(m.switch)
                    self._stack.callback(self._thaw, m.switch)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _freeze(self, switch: str) -> None:
        pids = _processes(self.contexts[switch])
        _signal_all(pids, signal.SIGSTOP)
        self._frozen[switch] = pids

    def _thaw(self, switch: str) -> None:
        _signal_all(self._frozen.pop(switch, []), signal.SIGCONT)

    @property
    def frozen_switches(self) -> tuple[str, ...]:
        """The switches whose processes are frozen while another is measured."""
        return tuple(m.switch for m in self.members.values() if m.idle_polls)

    @contextmanager
    def use(self, switch: str) -> Iterator[MethodContext]:
        """The switch's context, its processes running while the caller measures."""
        ctx = self.contexts[switch]
        frozen = switch in self._frozen
        if frozen:
            self._thaw(switch)
        try:
            _monitor_on(ctx)
            yield ctx
        finally:
            _monitor_off(ctx)
            if frozen:
                self._freeze(switch)

    def sample(self, switch: str) -> Measured:
        with self.use(switch) as ctx:
            return _measure(ctx, self.duration)


def _measure(ctx: MethodContext, duration: float) -> Measured:
    trial = ctx.session.measure(0.0, duration)
    r = trial.result
    stalls = r.stalls
    stalled = stalls.stalled_ms() if stalls is not None and stalls.monitored else 0.0
    took = r.duration_s if r.duration_s and r.duration_s > 0 else duration
    return Measured(round(took, 6), int(r.tx_frames), int(r.rx_frames), round(stalled, 3),
                    getattr(r, "host_stall", None), ctx.ceiling)
