"""Forwarding placement of the kernel switches: where the receive work of a switch port runs
(options kernel_mode and napi_priority).

A veth has no queue of its own, so by default a frame crosses veth -> switch -> veth -> receiver
synchronously in the *sender's* softirq and the switch never drops anything. In mode "napi" (the
default, ctx.options["kernel_mode"]) each switch-side veth end gets GRO on (so veth receives
through NAPI), threaded NAPI (/sys/class/net/IF/threaded = 1, written inside the interface's
namespace), and its `napi/IF-<id>` kernel thread pinned to ctx.placement.switch_cpu with taskset.
Where the switch has no veth of its own (macvlan), RPS on the receiving port moves the receive
work instead. Mode "softirq" leaves the kernel's default. The result is recorded as a short
string, e.g. "napi-threaded cpu1 fifo", "rps cpu1" or "sender-softirq".

The napi threads run SCHED_FIFO at priority 50 (option napi_priority, default "fifo"), as
PREEMPT_RT kernels run threaded interrupt and NAPI work: receive work done in softirq preempts
every thread, and a threaded NAPI of normal priority lost that. Measured here: kdamond.0 (the
VM's DAMON thread, woken every 0.5 s) held the CPU for 4 ms while a veth's napi thread waited
(`perf sched timehist`, sch delay 3.9 ms), longer than veth's 256-frame ring lasts at
200 kpps: 9 of 10 one-second trials lost frames. napi_priority=normal keeps the old way.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from vswbench.errors import CommandError
from vswbench.errors import UsageError
from vswbench.host.netns import run
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel.iface import ethtool_k
from vswbench.switches.kernel.iface import write_sys

KERNEL_MODES = ("napi", "softirq")
NAPI_PRIORITIES = ("fifo", "normal")
NAPI_FIFO_PRIORITY = 50   # PREEMPT_RT's default for threaded interrupt handlers and NAPI
SENDER_SOFTIRQ = "sender-softirq"

PLACEMENT_OPTIONS = {"kernel_mode": KERNEL_MODES, "napi_priority": NAPI_PRIORITIES}  # first: default
PLACEMENT_HELP = {
    "kernel_mode": "kernel switches: where the links' receive work runs: napi, softirq",
    "napi_priority": ("kernel switches, kernel_mode napi: the napi threads' scheduling: fifo, "
                      "normal")}


def placement_option(options: Mapping[str, str], key: str) -> str:
    """The value of a placement option (its default when not given); UsageError if not allowed."""
    allowed = PLACEMENT_OPTIONS[key]
    value = options.get(key, allowed[0])
    if value not in allowed:
        raise UsageError(f"--option {key}={value}: expected one of {', '.join(allowed)}")
    return value


def kernel_mode(ctx: SwitchContext) -> str:
    return placement_option(ctx.options, "kernel_mode")


def napi_priority(ctx: SwitchContext) -> str:
    return placement_option(ctx.options, "napi_priority")


def make_fifo(pid: int) -> None:
    """SCHED_FIFO at NAPI_FIFO_PRIORITY for a napi thread (OSError when not permitted)."""
    os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(NAPI_FIFO_PRIORITY))


def napi_thread_pids(ifname: str, proc: Path = Path("/proc")) -> list[int]:
    """PIDs of the threaded-NAPI kernel threads of `ifname` (comm `napi/<ifname>-<napi id>`)."""
    prefix = f"napi/{ifname}-"
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if comm.startswith(prefix) and comm[len(prefix):].isdigit():
            pids.append(int(entry.name))
    return sorted(pids)


def pin(pid: int, cpu: int) -> None:
    run(["taskset", "-p", "-c", str(cpu), str(pid)])


@dataclass
class Placed:
    """What place_napi() / place_rps() achieved; several interfaces fold into one mode string."""
    modes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ports: int = 0      # interfaces given a switch core so far: the next takes switch core `ports`

    def switch_core(self, ctx: SwitchContext) -> int | None:
        """The next switch port's core: round robin over the placement's switch_cpus."""
        cpu = ctx.placement.switch_core(self.ports)
        self.ports += 1
        return cpu

    def mode(self) -> str:
        if not self.modes:
            return SENDER_SOFTIRQ
        distinct = sorted(set(_fold_cores(self.modes)))
        return distinct[0] if len(distinct) == 1 else "mixed: " + ", ".join(distinct)


def _fold_cores(modes: list[str]) -> list[str]:
    """Modes that differ only in their core as one: 'napi-threaded cpu8 fifo' and
    'napi-threaded cpu9 fifo' -> 'napi-threaded cpu8,9 fifo' (the first core first, so that
    'cpu(\\d+)' still finds the first switch core)."""
    groups: dict[str, list[int]] = {}
    for mode in modes:
        m = re.search(r"cpu(\d+)", mode)
        if m is None:
            groups.setdefault(mode, [])
            continue
        key = mode[:m.start()] + "cpu{}" + mode[m.end():]
        cores = groups.setdefault(key, [])
        if int(m.group(1)) not in cores:
            cores.append(int(m.group(1)))
    return [key.format(",".join(str(c) for c in cores)) if cores else key
            for key, cores in groups.items()]


SWITCH_CPU = -1   # place_napi(cpu=...): the placement's switch cores, round robin per port


def place_napi(ctx: SwitchContext, netns: str | None, ifname: str, placed: Placed,
               *, gro: bool = True, cpu: int | None = SWITCH_CPU) -> None:
    """GRO on (veth NAPI), threaded NAPI, napi thread pinned to the next switch core (round robin
    over switch_cpus in the order the ports are placed: Placed.switch_core) or `cpu` (None
    leaves it unpinned) and made SCHED_FIFO (napi_priority). Failures are recorded in `placed`
    (the interface then stays on the sender's softirq, or its thread at normal priority), never
    raised."""
    if kernel_mode(ctx) != "napi":
        return
    fifo = napi_priority(ctx) == "fifo"
    if cpu == SWITCH_CPU:
        cpu = placed.switch_core(ctx)
    try:
        if gro:
            ethtool_k(netns, ifname, gro=True)
        write_sys(netns, f"{ifname}/threaded", "1")
        pids = napi_thread_pids(ifname)
        if not pids:
            placed.notes.append(f"{ifname}: threaded NAPI set but no napi/{ifname}-* thread")
            return
        placed.modes.append(_place_threads(ifname, pids, cpu, fifo, placed))
    except CommandError as exc:
        placed.notes.append(f"{ifname}: threaded NAPI not possible: {exc.stderr or exc}")


def _place_threads(ifname: str, pids: list[int], cpu: int | None, fifo: bool,
                   placed: Placed) -> str:
    """Pin the napi threads of `ifname` to `cpu` (None: leave them) and, with fifo, make them
    SCHED_FIFO (a failure noted in `placed`); the forwarding mode that makes."""
    if cpu is not None:
        for pid in pids:
            pin(pid, cpu)
    mode = f"napi-threaded cpu{cpu}" if cpu is not None else "napi-threaded"
    if fifo:
        try:
            for pid in pids:
                make_fifo(pid)
            mode += " fifo"
        except OSError as exc:
            placed.notes.append(f"{ifname}: napi thread not made SCHED_FIFO: {exc}")
    return mode


def place_rps(ctx: SwitchContext, netns: str | None, ifname: str, placed: Placed) -> None:
    """RPS: the receive work of `ifname` (frames queued with netif_rx) runs on the next switch
    core (round robin over switch_cpus)."""
    if kernel_mode(ctx) != "napi" or ctx.placement.switch_cpu is None:
        return
    cpu = placed.switch_core(ctx)
    assert cpu is not None
    try:
        write_sys(netns, f"{ifname}/queues/rx-0/rps_cpus", format(1 << cpu, "x"))
        placed.modes.append(f"rps cpu{cpu}")
    except CommandError as exc:
        placed.notes.append(f"{ifname}: RPS not possible: {exc.stderr or exc}")
