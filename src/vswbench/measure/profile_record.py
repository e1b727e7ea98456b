"""A trial's `--profile` read back as typed records (issue 45): `PerfProfile.from_json` reads the
dict that measure/profiling.profiled stores in TrialResult.profile (host/perf.TrialProfile's JSON
with the scheduler-vs-perf `cpu_check`), so that its printers read attributes, never keys.

Lenient, as trial_result.read_trial: a number missing or not a number reads as 0 (the CPU
check's cycles per packet: None), a missing text as empty, a flag by its truth; list entries and
cores that are not objects are left out. The cores and the checked cores keep the stored order
(the order the profile printed them in)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vswbench.jsonvalues import as_dict
from vswbench.jsonvalues import as_list
from vswbench.jsonvalues import count
from vswbench.jsonvalues import number


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in as_list(value) if isinstance(v, dict)]


def _share(value: Any) -> float:
    return number(value) or 0.0


def _shares(value: Any) -> dict[str, float]:
    """A category -> share mapping (shares of the samples), values not a number left out."""
    return {str(k): v for k, v in ((k, number(v)) for k, v in as_dict(value).items())
            if v is not None}


@dataclass(frozen=True)
class TopFunction:
    """A leaf function's share of a core's samples (host/profile.CoreProfile.top_functions)."""
    function: str
    kernel: bool
    share: float

    @classmethod
    def read_all(cls, value: Any) -> tuple[TopFunction, ...]:
        return tuple(cls(str(f.get("function", "")), bool(f.get("kernel")), _share(f.get("share")))
                     for f in _dicts(value))


@dataclass(frozen=True)
class TopThread:
    """A thread name's (comm) share of a core's samples (CoreProfile.top_comms)."""
    comm: str
    share: float

    @classmethod
    def read_all(cls, value: Any) -> tuple[TopThread, ...]:
        return tuple(cls(str(c.get("comm", "")), _share(c.get("share"))) for c in _dicts(value))


@dataclass(frozen=True)
class OwnThreads:
    """The run's own threads on a core: their share of its samples, their categories and top
    kernel functions (host/perf._testbed)."""
    share: float
    categories: Mapping[str, float]
    top_kernel_functions: tuple[TopFunction, ...]

    def category_share(self, category: str) -> float:
        return self.categories.get(category, 0.0)


@dataclass(frozen=True)
class ProfiledCore:
    """One core's samples, category shares, top functions and threads; `own`: the run's own
    threads where the profile told them apart (None: it did not, or they had no sample)."""
    cpu: str
    samples: int
    categories: Mapping[str, float]
    top_functions: tuple[TopFunction, ...]
    top_comms: tuple[TopThread, ...]
    own: OwnThreads | None

    def category_share(self, category: str) -> float:
        return self.categories.get(category, 0.0)

    @classmethod
    def from_json(cls, cpu: str, data: Mapping[str, Any]) -> ProfiledCore:
        own = as_dict(data.get("testbed"))
        return cls(cpu, count(data.get("samples")) or 0, _shares(data.get("categories")),
                   TopFunction.read_all(data.get("top_functions")),
                   TopThread.read_all(data.get("top_comms")),
                   OwnThreads(_share(own.get("share")), _shares(own.get("categories")),
                              TopFunction.read_all(own.get("top_kernel_functions")))
                   if own else None)


@dataclass(frozen=True)
class CoreCpuCheck:
    """A core's busy share by the scheduler (/proc/stat) and by perf; `differ`: more than
    measure/profiling.DIFFER apart."""
    cpu: str
    scheduler_busy: float
    scheduler_softirq: float
    perf_busy: float
    differ: bool


@dataclass(frozen=True)
class CpuCheck:
    """measure/profiling.cpu_check: per core, and cycles per packet over the cores both ways."""
    cores: tuple[CoreCpuCheck, ...] = ()
    cycles_per_packet_scheduler: float | None = None
    cycles_per_packet_perf: float | None = None
    differ: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CpuCheck:
        cores = tuple(CoreCpuCheck(str(cpu), _share(c.get("scheduler_busy")),
                                   _share(c.get("scheduler_softirq")), _share(c.get("perf_busy")),
                                   bool(c.get("differ")))
                      for cpu, c in as_dict(data.get("per_core")).items() if isinstance(c, dict))
        return cls(cores, number(data.get("cycles_per_packet_scheduler")),
                   number(data.get("cycles_per_packet_perf")), bool(data.get("differ")))


def _hz(value: Any) -> int | float:
    """The sampling frequency as stored (an int; a float stays one)."""
    whole = count(value)
    return whole if whole is not None else (number(value) or 0)


@dataclass(frozen=True)
class PerfProfile:
    """A trial's perf profile: the event, its rate per core, the window, the cores, the CPU
    cross-check and perf's warnings."""
    event: str
    hz: int | float
    seconds: float
    cores: tuple[ProfiledCore, ...]
    cpu_check: CpuCheck
    warnings: tuple[str, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PerfProfile:
        """TrialResult.profile read back (see the module's docstring)."""
        warnings = data.get("warnings")
        return cls(str(data.get("event", "")), _hz(data.get("hz")), _share(data.get("seconds")),
                   tuple(ProfiledCore.from_json(str(cpu), core)
                         for cpu, core in as_dict(data.get("cores")).items()
                         if isinstance(core, dict)),
                   CpuCheck.from_json(as_dict(data.get("cpu_check"))),
                   tuple(str(w) for w in warnings) if isinstance(warnings, list) else ())
