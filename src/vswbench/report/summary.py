"""The report's first screen in words: when and on what the campaign ran (host, CPU, whether a
virtual machine), what its search preset means, and the verdict lines (report/verdict.py).

Everything is read from the store: the runs' fingerprints (host/sysinfo.py) and the searches'
own goals as they ran, never the machine the report is built on.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from vswbench.host.sysinfo import Fingerprint
from vswbench.jsonvalues import number
from vswbench.measure.search import PRESETS
from vswbench.report.notes import RunInfo
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.points import StoredResults
from vswbench.results.record import Goal


@dataclass(frozen=True)
class MachineSummary:
    started: str
    finished: str | None
    host: str
    cpu: str
    virtualization: str                  # "a virtual machine (kvm)", "bare metal", "not recorded"
    kernel: str
    vswbench: str

    def sentence(self) -> str:
        def when(stamp: str) -> str:
            return stamp.replace("T", " ", 1)
        span = when(self.started) + (f" to {when(self.finished)}" if self.finished
                                     else " (not finished)")
        return (f"Measured {span} on host {self.host}: {self.cpu}, {self.virtualization}, "
                f"Linux {self.kernel}; vswbench {self.vswbench}.")


def _virtualization(fp: Fingerprint) -> str:
    value = fp.virtualization
    if not isinstance(value, str) or value in ("", "n/a"):
        return "virtual machine or bare metal: not recorded (this store predates that field)"
    if value == "none":
        return "bare metal (no hypervisor flag)"
    return "a virtual machine" + (value[2:] if value.startswith("vm ") else "")


def _cpu(run: RunFingerprint) -> str:
    fp = run.host
    model = (fp.cpu_model if run.has("cpu_model") else None) or "CPU not recorded"
    cpus = fp.logical_cpus
    parts = [str(model)]
    if isinstance(cpus, int):
        parts.append(f"{cpus} logical CPU{'s' if cpus != 1 else ''}")
    if fp.smt_active in ("on", "off"):
        parts.append(f"SMT {fp.smt_active}")
    tsc = number(fp.tsc_hz)
    if tsc:
        parts.append(f"TSC {tsc / 1e9:.3f} GHz")
    return ", ".join(parts)


def machine_summaries(runs: tuple[RunInfo, ...] | list[RunInfo]) -> list[MachineSummary]:
    out = []
    for info in runs:
        fp = info.fingerprint or RunFingerprint.from_json({})
        host = fp.host.hostname
        name = host if isinstance(host, str) and host not in ("", "n/a") else "(name not recorded)"
        lab = fp.lab_name    # a merged store's (results/merge.py): the lab's name for it
        if lab and lab != name:
            name = f"{lab} (hostname {name})"
        kernel = fp.host.kernel_release if fp.has("kernel_release") else None
        out.append(MachineSummary(
            info.started, info.finished, name,
            _cpu(fp), _virtualization(fp.host), str(kernel or "not recorded"), info.version))
    return out


def _pct(value: Any) -> str:
    v = number(value)
    return "?" if v is None else f"{v * 100:g} %"


def _seconds(value: Any) -> str:
    v = number(value)
    return "?" if v is None else f"{v:g} s"


def preset_sentences(data: StoredResults) -> list[str]:
    """What each search preset used in the store did, from the goals its searches stored."""
    seen: dict[str, tuple[dict[str | None, Goal], str | None]] = {}
    named: set[str] = set()
    for rec in data.records("search"):
        m = rec.measured
        name = m.preset or rec.params.preset or "fast"
        if m.recorded:
            named.add(name)
        goals = {g.name: g for g in m.goals}
        if name not in seen and goals:
            seen[name] = (goals, m.algorithm)
    out = []
    for name in sorted(named - set(seen)):
        known = PRESETS.get(name)
        out.append(f"Searches: preset {name}" + (
            f" ({known.description}; as this version defines it: its searches stored no goals)"
            if known else " (unknown to this version; its searches stored no goals)") + ".")
    for name, (goals, algorithm) in seen.items():
        ndr = goals.get("NDR") or next(iter(goals.values()))
        pdr = goals.get("PDR")
        trial = _seconds(ndr.final_trial_duration)
        first = ndr.initial_trial_duration
        if first is not None and first != ndr.final_trial_duration:
            trial = f"{_seconds(first)} growing to {trial}"
        out.append(
            f"Searches: {str(algorithm or 'MLRsearch').replace('mlrsearch', 'MLRsearch')}"
            f", preset {name}: trials of {trial}, {_seconds(ndr.duration_sum)} of trials "
            f"per load at most; a load fails when more than {_pct(ndr.exceed_ratio)} of "
            f"its trial time exceeded the loss goal (exceed ratio); the search stops when its "
            f"bounds are within {_pct(ndr.relative_width)} (width). NDR: "
            f"{_pct(ndr.loss_ratio)} loss" + (f", PDR: {_pct(pdr.loss_ratio)} "
                                               "loss" if pdr else "") + ".")
    lat: Counter[tuple[str, str, str]] = Counter()
    for rec in data.records("latency"):
        fractions = rec.params.fractions or (0.9,)
        loads = rec.measured.loads or ()
        latency_kind = loads[0].latency_kind if loads else None
        lat[(_seconds(rec.params.duration or 5.0),
             ", ".join(f"{f * 100:g} %" for f in fractions if isinstance(f, (int, float))),
             str(latency_kind or "latency"))] += 1
    for (seconds, at, kind), _ in lat.most_common():
        out.append(f"Latency: a trial of {seconds} at {at} of each switch's NDR, "
                   f"{kind} latency of the frames it sent.")
    return out
