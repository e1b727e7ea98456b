"""Softirq and interrupt counts per core: /proc/softirqs (NET_RX, NET_TX) and /proc/interrupts,
sampled before and after a trial and turned into rates per second (Raumer et al. Fig. 6b:
interrupts per second against latency)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path


@dataclass(frozen=True)
class IrqCounts:
    """Cumulative counts per CPU at one moment (time.monotonic())."""
    at: float
    softirqs: dict[str, dict[int, int]] = field(default_factory=dict)   # NET_RX -> cpu -> n
    interrupts: dict[int, int] = field(default_factory=dict)            # cpu -> all interrupts


def _cpu_columns(header: str) -> list[int]:
    return [int(col[3:]) for col in header.split() if col.startswith("CPU")]


def parse_softirqs(text: str) -> dict[str, dict[int, int]]:
    """/proc/softirqs: one row per softirq, one column per CPU."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {}
    cpus = _cpu_columns(lines[0])
    table: dict[str, dict[int, int]] = {}
    for line in lines[1:]:
        name, _, rest = line.partition(":")
        values = rest.split()
        try:
            table[name.strip()] = {cpu: int(v) for cpu, v in zip(cpus, values)}
        except ValueError:
            continue
    return table


def parse_interrupts(text: str) -> dict[int, int]:
    """/proc/interrupts: the sum of every row's per-CPU counts (device interrupts and the
    architecture's: local timer, rescheduling, function calls, TLB shootdowns, ...). Rows with
    a single total (ERR, MIS) have no per-CPU counts and are left out."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {}
    cpus = _cpu_columns(lines[0])
    totals = dict.fromkeys(cpus, 0)
    for line in lines[1:]:
        _, _, rest = line.partition(":")
        values = rest.split()[:len(cpus)]
        if len(values) < len(cpus) or not all(v.isdigit() for v in values):
            continue
        for cpu, v in zip(cpus, values):
            totals[cpu] += int(v)
    return totals


def read_irq_counts(proc: Path = Path("/proc")) -> IrqCounts | None:
    try:
        soft = (proc / "softirqs").read_text()
        hard = (proc / "interrupts").read_text()
    except OSError:
        return None
    return IrqCounts(time.monotonic(), parse_softirqs(soft), parse_interrupts(hard))


def irq_rates(before: IrqCounts | None, after: IrqCounts | None) -> dict[str, dict[str, float]]:
    """{"0": {"net_rx": per s, "net_tx": per s, "interrupts": per s}, ...}; {} without both."""
    if before is None or after is None or after.at <= before.at:
        return {}
    dt = after.at - before.at

    def rate(table_b: dict[int, int], table_a: dict[int, int], cpu: int) -> float:
        return round(max(0, table_a.get(cpu, 0) - table_b.get(cpu, 0)) / dt, 1)

    rates = {}
    for cpu in sorted(after.interrupts or after.softirqs.get("NET_RX", {})):
        rates[str(cpu)] = {
            "net_rx": rate(before.softirqs.get("NET_RX", {}), after.softirqs.get("NET_RX", {}), cpu),
            "net_tx": rate(before.softirqs.get("NET_TX", {}), after.softirqs.get("NET_TX", {}), cpu),
            "interrupts": rate(before.interrupts, after.interrupts, cpu)}
    return rates
