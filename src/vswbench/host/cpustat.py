"""CPU accounting without hardware counters: /proc/stat per core, /proc/PID/stat per process.

Busy time of a core is user + nice + system + irq + softirq (the kernel's forwarding work on veth
runs in softirq, often on the sender's core: it must be counted). Steal is neither busy nor idle
(another guest ran). Cycles = busy seconds x TSC Hz.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields
from pathlib import Path
from typing import Any

from vswbench.jsonvalues import number

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY = ("user", "nice", "system", "irq", "softirq")


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative ticks of one core (USER_HZ)."""
    user: int = 0
    nice: int = 0
    system: int = 0
    idle: int = 0
    iowait: int = 0
    irq: int = 0
    softirq: int = 0
    steal: int = 0

    @property
    def busy(self) -> int:
        return sum(getattr(self, f) for f in BUSY)

    @property
    def total(self) -> int:
        return sum(getattr(self, f) for f in FIELDS)


@dataclass(frozen=True)
class CoreUsage:
    """Fractions of the interval (0..1) of one core, and its busy seconds."""
    cpu: int
    user: float
    system: float
    softirq: float
    irq: float
    idle: float
    steal: float
    busy: float
    busy_s: float

    @classmethod
    def from_json(cls, cpu: int, data: Mapping[str, Any]) -> CoreUsage:
        """A trial's stored core (TrialResult.cpu[str(cpu)]: the fields but `cpu`) read back; a
        field missing or not a number reads as 0."""
        return cls(cpu, *(number(data.get(f.name)) or 0.0 for f in fields(cls) if f.name != "cpu"))


def parse_proc_stat(text: str) -> dict[int, CpuTimes]:
    cores: dict[int, CpuTimes] = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu") or parts[0] == "cpu":
            continue
        try:
            cpu = int(parts[0][3:])
            values = [int(v) for v in parts[1:1 + len(FIELDS)]]
        except ValueError:
            continue
        values += [0] * (len(FIELDS) - len(values))
        cores[cpu] = CpuTimes(*values)
    return cores


def read_proc_stat(path: Path = Path("/proc/stat")) -> dict[int, CpuTimes]:
    return parse_proc_stat(path.read_text())


def core_usage(before: dict[int, CpuTimes], after: dict[int, CpuTimes],
               clk_tck: int = CLK_TCK) -> dict[int, CoreUsage]:
    usage = {}
    for cpu in sorted(set(before) & set(after)):
        a, b = before[cpu], after[cpu]
        delta = {f: max(0, getattr(b, f) - getattr(a, f)) for f in FIELDS}
        total = sum(delta.values())
        busy = sum(delta[f] for f in BUSY)

        def frac(ticks: int, total: int = total) -> float:
            return round(ticks / total, 4) if total else 0.0

        usage[cpu] = CoreUsage(cpu, frac(delta["user"] + delta["nice"]), frac(delta["system"]),
                               frac(delta["softirq"]), frac(delta["irq"]),
                               frac(delta["idle"] + delta["iowait"]), frac(delta["steal"]),
                               frac(busy), busy / clk_tck)
    return usage


def busy_cycles(usage: dict[int, CoreUsage], tsc_hz: float) -> float:
    return sum(u.busy_s for u in usage.values()) * tsc_hz


def cycles_per_packet(cycles: float, packets: int) -> float | None:
    return cycles / packets if packets > 0 else None


def parse_pid_stat(text: str, clk_tck: int = CLK_TCK) -> float:
    """utime + stime of a /proc/PID/stat line, in seconds."""
    fields = text[text.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / clk_tck


def process_cpu_s(pid: int) -> float | None:
    try:
        return parse_pid_stat(Path(f"/proc/{pid}/stat").read_text())
    except (OSError, IndexError, ValueError):
        return None
