"""`vswbench doctor`: tools present, kernel features, and the host tuning that decides whether
numbers are trustworthy (Fang et al., section 3.1 "System Configuration": energy saving,
HyperThreading, core isolation and hugepages change switch throughput and its stability; their
BESS story: transparent hugepages caused losses of tens of milliseconds on a worker core).

Only reads: nothing here changes the host or stops a process (the stall check loads the
engine's BPF monitor for its few seconds and unloads it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from vswbench.engine.process import EngineError
from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine
from vswbench.host.stallcheck import StallCheck
from vswbench.host.stallcheck import check_stalls

TOOLS = {  # tool -> what needs it; each switch backend's own tools are handed in (its `tools`)
    "ip": "every testbed (iproute2)", "ethtool": "offloads, GRO for veth NAPI",
    "trafgen": "comparison generator (netsniff-ng)", "iperf3": "comparison generator",
    "sockperf": "comparison latency tool",
}
SYS = Path("/sys")
PAPER = "Fang et al., section 3.1"


@dataclass(frozen=True)
class ToolCheck:
    name: str
    present: bool
    path: str
    needed_for: str


@dataclass(frozen=True)
class TuningCheck:
    name: str
    current: str
    recommended: str
    ok: bool | None          # None: cannot tell here
    why: str


@dataclass
class DoctorReport:
    tools: list[ToolCheck]
    kernel: dict[str, Any]
    io_backends: list[dict[str, Any]]
    tuning: list[TuningCheck]
    notes: list[str] = field(default_factory=list)
    stalls: StallCheck | None = None      # host stalls measured for a few seconds (stallcheck.py)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _processes(proc_root: Path) -> list[tuple[str, str]]:
    """(pid, comm) of every process under proc_root."""
    entries = proc_root.iterdir() if proc_root.is_dir() else []
    return [(e.name, comm) for e in entries if e.name.isdigit() and (comm := _read(e / "comm"))]


def check_tools(backend_tools: Mapping[str, str] | None = None) -> list[ToolCheck]:
    """TOOLS, then the switch backends' tools not among them (tool -> what needs it: from
    switches/catalog.py backend_tools, handed in by the CLI), then the engine."""
    wanted = {t: why for t, why in (backend_tools or {}).items() if t not in TOOLS}
    checks = [ToolCheck(t, shutil.which(t) is not None, shutil.which(t) or "", why)
              for t, why in {**TOOLS, **wanted}.items()]
    try:
        engine = str(find_engine())
        checks.append(ToolCheck("vswbench-engine", True, engine, "all traffic"))
    except EngineNotFound as exc:
        checks.append(ToolCheck("vswbench-engine", False, "", f"all traffic: {exc}"))
    return checks


def governor(sys_root: Path = SYS) -> TuningCheck:
    why = (f"energy saving lowers and destabilises throughput; {PAPER} disables it: set "
           "`cpupower frequency-set -g performance`")
    govs = sorted({g for p in (sys_root / "devices/system/cpu").glob("cpu[0-9]*/cpufreq/"
                                                                   "scaling_governor")
                   if (g := _read(p))})
    if not govs:
        return TuningCheck("cpu governor", "no cpufreq in /sys (a VM: the hypervisor decides)",
                           "performance", None, why)
    return TuningCheck("cpu governor", ",".join(govs), "performance", govs == ["performance"], why)


def turbo(sys_root: Path = SYS) -> TuningCheck:
    why = (f"turbo/boost makes the clock depend on load and temperature, so cycles per packet "
           f"drift between trials; {PAPER} turns it off")
    no_turbo = _read(sys_root / "devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        return TuningCheck("turbo", "off" if no_turbo == "1" else "on", "off", no_turbo == "1", why)
    boost = _read(sys_root / "devices/system/cpu/cpufreq/boost")
    if boost is not None:
        return TuningCheck("turbo", "on" if boost == "1" else "off", "off", boost == "0", why)
    return TuningCheck("turbo", "no boost control in /sys (a VM: the hypervisor decides)", "off",
                       None, why)


def smt(sys_root: Path = SYS) -> TuningCheck:
    why = (f"SMT siblings share a core's pipeline: a switch thread and a generator on siblings "
           f"disturb each other; {PAPER}: 'standard practice to disable HyperThreading' "
           "(echo off > /sys/devices/system/cpu/smt/control)")
    active = _read(sys_root / "devices/system/cpu/smt/active")
    control = _read(sys_root / "devices/system/cpu/smt/control")
    if active is None:
        return TuningCheck("SMT", "unknown (no /sys/devices/system/cpu/smt)", "off", None, why)
    current = ("on" if active == "1" else "off") + (f" (control: {control})" if control else "")
    return TuningCheck("SMT", current, "off", active == "0", why)


def thp(sys_root: Path = SYS) -> TuningCheck:
    why = ("khugepaged compaction can run on a switch core and stall it for tens of milliseconds "
           "(Fang et al., the BESS loss story); set "
           "`echo never > /sys/kernel/mm/transparent_hugepage/enabled` and use explicit hugepages")
    value = _read(sys_root / "kernel/mm/transparent_hugepage/enabled")
    if value is None:
        return TuningCheck("transparent hugepages", "not available", "never", None, why)
    current = value[value.find("[") + 1:value.find("]")] if "[" in value else value
    return TuningCheck("transparent hugepages", current, "never", current == "never", why)


def irqbalance(proc_root: Path = Path("/proc")) -> TuningCheck:
    why = ("irqbalance moves interrupts between cores during a run, so the switch core changes "
           f"under the measurement; {PAPER}: isolate and assign cores by hand "
           "(systemctl stop irqbalance)")
    pids = [pid for pid, comm in _processes(proc_root) if comm == "irqbalance"]
    current = f"running (PID {', '.join(pids)})" if pids else "not running"
    return TuningCheck("irqbalance", current, "not running", not pids, why)


def damon(proc_root: Path = Path("/proc")) -> TuningCheck:
    why = ("DAMON's kdamond is a kernel thread of normal priority that woke every 0.5 s on this "
           "VM and held a CPU for up to 4 ms (`perf sched timehist`): longer than a veth's ring "
           "lasts. vswbench runs its napi threads SCHED_FIFO against it (napi_priority); the "
           "tester, ovs-vswitchd and the DPDK pollers still meet it. If it is yours: echo off > "
           "/sys/kernel/mm/damon/admin/kdamonds/N/state")
    found = [f"{comm} (PID {pid})" for pid, comm in _processes(proc_root)
             if comm.startswith("kdamond")]
    current = f"running: {', '.join(sorted(found))}" if found else "not running"
    return TuningCheck("DAMON (kdamond)", current, "not running", not found, why)


def irq_accounting(root: Path = Path("/")) -> TuningCheck:
    from vswbench.host.sysinfo import irq_time_accounting

    why = ("without CONFIG_IRQ_TIME_ACCOUNTING /proc/stat's irq and softirq times are "
           "tick-sampled estimates, so kernel switches' cycles per packet are too (Emmerich et "
           "al., Guideline 3): cross-check with `--profile` (perf sampling) or use a kernel "
           "built with it")
    current = irq_time_accounting(root)
    return TuningCheck("IRQ time accounting", current, "on",
                       None if current == "unknown" else current == "on", why)


def tuning_checks(sys_root: Path = SYS, proc_root: Path = Path("/proc")) -> list[TuningCheck]:
    return [governor(sys_root), turbo(sys_root), smt(sys_root), thp(sys_root),
            irqbalance(proc_root), damon(proc_root), irq_accounting(Path(str(sys_root)).parent)]


def run_doctor(stall_seconds: float = 0.0,
               backend_tools: Mapping[str, str] | None = None) -> DoctorReport:
    report = DoctorReport(check_tools(backend_tools), {}, [], tuning_checks())
    if stall_seconds > 0:
        report.stalls = check_stalls(stall_seconds)
    try:
        from vswbench.engine.probe import probe

        found = probe()
        report.kernel = dict(found.raw.get("kernel") or {})
        report.kernel["tsc_hz"] = found.tsc_hz
        report.kernel["tsc_invariant"] = found.tsc_invariant
        report.io_backends = [asdict(b) for b in found.backends]
    except (EngineError, EngineNotFound) as exc:
        report.notes.append(f"kernel features unknown: the engine's probe failed: {exc}")
    if os.geteuid() != 0:
        report.notes.append("not root: trials need root (network namespaces)")
    report.kernel.update(vm_checks())
    return report


def vm_checks() -> dict[str, str]:
    """Scenarios pvp-vm, chain-vm:N: does the guest boot under KVM and under TCG (one boot each;
    the reason when not). A TCG guest is a functional check, never a performance figure."""
    from vswbench.host.vm_nf import boot_probe

    out = {}
    for accel, what in (("kvm", "VM guest under KVM"), ("tcg", "VM guest under TCG (emulated)")):
        boots, why = boot_probe(accel)
        out[what] = why if boots else f"no: {why}"
    return out
