"""Generator calibration: the tester's own ceiling on a scenario and frame size, measured through
the `veth` backend (no switch at all) with the same placement, I/O backend and flows. Every search
reports its result beside this ceiling (the headroom): a switch "NDR" at the tester's ceiling is
the tester's limit, not the switch's.

The ceiling is the rate the tester both sends and receives at its maximum rate over CAL_SECONDS
(the median of CAL_TRIALS trials). Results are cached per machine in CACHE_PATH, keyed by the
engine binary, kernel, CPU model and the workload, for CACHE_MAX_AGE_S at most;
`vswbench calibrate --force` measures again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

from vswbench.engine.params import TrialParams
from vswbench.engine.process import find_engine
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.measure.session import ControlSession
from vswbench.measure.session import control_capable
from vswbench.run.scope import Run
from vswbench.safefile import refuse_unsafe
from vswbench.safefile import write_text
from vswbench.scenario import Scenario
from vswbench.switches.base import Placement
from vswbench.testbed.build import Testbed
from vswbench.units import MAX_RATE_PPS

CACHE_PATH = Path(os.environ.get("VSWBENCH_CACHE", "/var/cache/vswbench")) / "generator-ceiling.json"
# A cached ceiling is used for a day at most: the key cannot see what else ran on the machine when
# it was measured (a veth ceiling of 0.42 Mpps, cached, capped a quick run's 64-byte kernel
# switches where a fresh calibration measured 0.64).
CACHE_MAX_AGE_S = 24 * 3600.0
CAL_SECONDS = 1.0
CAL_TRIALS = 3
SPORT_FLOWS = 65535 - 1024 + 1   # the engine's UDP source ports 1024..65535


@dataclass(frozen=True)
class Calibration:
    key: str
    ceiling_pps: float          # received at the maximum rate (median of the trials)
    tx_pps: float               # sent at the maximum rate (median)
    trials: int
    seconds_each: float
    measured_at: float          # unix time
    scenario: str
    frame_size: int | str
    io: str
    flows: int
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _engine_digest() -> str:
    try:
        return hashlib.sha256(Path(find_engine()).read_bytes()).hexdigest()[:16]
    except (OSError, Exception):  # noqa: BLE001 - a missing engine fails later, clearly
        return "?"


# Raised whenever the calibration testbed changes how it forwards, so that cached ceilings measured
# the old way are not reused. 2: TSO off on veth in napi mode (the receive work moved to the
# switch CPU's NAPI threads, which lifted the tester's own ceiling). 3: the napi threads run
# SCHED_FIFO (switches/kernel/napi.py: napi_priority), so a ms-long thread no longer overflows veth's ring.
TESTBED_VERSION = "3"


def cache_key(scenario: Scenario, workload: TrialParams, placement: Placement) -> str:
    parts = [TESTBED_VERSION, platform.release(), _cpu_model(), str(os.cpu_count()), _engine_digest(),
             scenario.name, str(workload.frame_size), workload.io, str(workload.flows),
             str(workload.burst), json.dumps(placement.legacy(), sort_keys=True)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _load_cache(path: Path) -> dict[str, Any]:
    try:
        refuse_unsafe(path)              # a link, a FIFO or a device is no cache of ours
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, UsageError):
        return {}


def _store(path: Path, cal: Calibration) -> None:
    data = _load_cache(path)
    data[cal.key] = {k: v for k, v in cal.to_json().items() if k != "cached"}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(data, indent=1))
    except (OSError, VswbenchError):
        pass  # a read-only cache (or a link there) only costs a new calibration next time


def entry_problem(entry: Any) -> str | None:
    """Why a cache entry cannot be a measured ceiling (the cache is a file anyone with root may
    have edited or truncated), or None."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    for name in ("ceiling_pps", "tx_pps", "measured_at"):
        value = entry.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} is {value!r}, not a number"
        if not math.isfinite(value) or value < 0:
            return f"{name} is {value!r}, not a finite number of at least 0"
    if entry["ceiling_pps"] > MAX_RATE_PPS:
        return f"ceiling_pps {entry['ceiling_pps']!r} is beyond {MAX_RATE_PPS:g} pps"
    return None


def cached(scenario: Scenario, workload: TrialParams, placement: Placement,
           path: Path = CACHE_PATH, now: float | None = None,
           warn: Callable[[str], None] = lambda message: None) -> Calibration | None:
    """The cached ceiling of this scenario, workload and placement, unless older than
    CACHE_MAX_AGE_S (or dated in the future: a clock that jumped). A damaged entry (a ceiling
    "abc", null or Infinity) is not used: `warn` says so, and the ceiling is measured again."""
    entry = _load_cache(path).get(cache_key(scenario, workload, placement))
    if entry is None:
        return None
    problem, hit = entry_problem(entry), None
    try:
        hit = None if problem else Calibration(**{**entry, "cached": True})
    except TypeError as exc:
        problem = f"unexpected fields ({exc})"
    if hit is None:
        warn(f"calibration cache {path}: the entry of this workload is damaged ({problem}); "
             "measuring the ceiling again")
        return None
    age = (time.time() if now is None else now) - float(hit.measured_at)
    return hit if 0 <= age <= CACHE_MAX_AGE_S else None


def baseline_switch(io: str) -> str:
    """Where the tester's ceiling is measured: no switch at all, over the same kind of port
    (veth for the kernel I/O paths, memif for DPDK): the catalog's direct backend of that kind."""
    from vswbench.switches.catalog import baseline_switch as direct_backend

    return direct_backend(io)


def measure(run: Run, scenario: Scenario, workload: TrialParams, placement: Placement) -> Calibration:
    """Build the scenario on the baseline (veth or memif) and measure the tester at its maximum
    rate."""
    from vswbench.switches.catalog import all_switches

    if not control_capable(scenario):
        raise_unsupported(scenario)
    base = all_switches()[baseline_switch(workload.io)]
    with (Testbed(scenario, base, run, placement, mtu=workload.size.link_mtu) as tb,
          ControlSession(tb, workload) as session):
        session.warm_up(10_000, 0.3)
        rx, tx = [], []
        for _ in range(CAL_TRIALS):
            trial = session.measure(0, CAL_SECONDS)
            rx.append(trial.result.achieved_pps)
            tx.append(trial.result.tx_pps)
    return Calibration(cache_key(scenario, workload, placement), round(statistics.median(rx), 1),
                       round(statistics.median(tx), 1), CAL_TRIALS, CAL_SECONDS, time.time(),
                       scenario.name, workload.frame_size, workload.io, workload.flows)


def raise_unsupported(scenario: Scenario) -> None:
    from vswbench.errors import UsageError

    raise UsageError(f"calibration of scenario {scenario.name} is not supported: it needs one "
                     "tester that sends and receives (p2p, pvp, chain:N, rr)")


def calibrate(run: Run, scenario: Scenario, workload: TrialParams, placement: Placement, *,
              force: bool = False, path: Path = CACHE_PATH,
              warn: Callable[[str], None] = lambda message: None) -> Calibration:
    # The baseline varies flows by UDP source port (from 1024: room for SPORT_FLOWS); the tester's
    # work per frame is the same whatever field varies, so more flows calibrate at that count.
    workload = replace(workload, flows=min(workload.flows, SPORT_FLOWS))
    if not force:
        hit = cached(scenario, workload, placement, path, warn=warn)
        if hit is not None:
            return hit
    cal = measure(run, scenario, workload, placement)
    _store(path, cal)
    return cal
