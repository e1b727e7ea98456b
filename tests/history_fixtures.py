"""Results stores of nightly runs for the history and trend tests: FIXTURES, NOT MEASUREMENTS.

Each store is one campaign run written through ResultStore, with the shape of a real search
result (NDR, PDR, bounds, the switch's versions, the preset) and a fingerprint; its start time is
set to a night of its own so that the history orders the runs as a nightly job would."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "nightly"

[[study]]
kind = "search"
switch = ["bridge", "veth"]
size = 64
preset = "quick"
"""

MACHINE = {"hostname": "ci-runner-1", "cpu_model": "AMD EPYC (fixture)", "logical_cpus": 2,
           "machine": "x86_64", "virtualization": "vm (kvm)"}


def write_night(path: Path, night: int, ndr: dict[str, float], *, kernel: str = "6.1.0",
                switch_version: str = "6.1.0", hostname: str = MACHINE["hostname"]) -> Path:
    """One nightly run into PATH/results.sqlite, started on night `night` (2026-10-01 + night)."""
    spec = parse_spec(SPEC)
    path.mkdir(parents=True, exist_ok=True)
    run_id = f"vsb{night:04x}"
    fp = {**MACHINE, "hostname": hostname, "kernel_release": kernel}
    with ResultStore(path / "results.sqlite") as store:
        store.begin_run(run_id, spec, fp)
        for p in expand(spec):
            value = ndr[p.switch]
            result = {"switch": p.switch, "scenario": "p2p", "frame_size": 64,
                      "preset": "quick", "ndr_pps": value, "pdr_pps": value * 1.02,
                      "lower_bound_pps": value, "upper_bound_pps": value * 1.05,
                      "generator_bound": False, "trials": [], "trials_rejected": 1,
                      "switch_versions": {"iproute2": switch_version}}
            store.record_point(run_id, p, result, "done")
        store.end_run(run_id, "done")
    db = sqlite3.connect(path / "results.sqlite")
    with db:
        db.execute("UPDATE runs SET started = ?", (f"2026-10-{1 + night:02d}T02:00:00+0000",))
    db.close()
    return path


def step_series(base: Path, *, nights: int = 12, step_at: int = 8, drop: float = 0.20,
                noise: float = 0.02, seed: int = 7) -> list[Path]:
    """`nights` runs: the bridge's NDR steps down by `drop` from night `step_at` on, when the
    kernel changes from 6.1.0 to 6.2.0; veth stays level. Both carry `noise` (relative)."""
    rng = random.Random(seed)
    out = []
    for night in range(nights):
        bridge = 200_000 * (1 - drop if night >= step_at else 1.0)
        out.append(write_night(base / f"night{night:02d}", night,
                               {"bridge": bridge * (1 + rng.gauss(0, noise)),
                                "veth": 380_000 * (1 + rng.gauss(0, noise))},
                               kernel="6.2.0" if night >= step_at else "6.1.0"))
    return out
