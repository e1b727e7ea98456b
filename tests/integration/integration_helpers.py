"""Helpers shared by the integration tests."""

from __future__ import annotations

import os
from pathlib import Path

from vswbench.host.pair import Endpoint

TX_CPU = 0
RX_CPU = 1 if (os.cpu_count() or 1) > 1 else 0
# A sink's --idle: it ends this long after its last frame, once its generator is done. A
# generator stopped longer mid-stream would end it early; the matrix's zero loss at 10 kpps
# through a 256-frame ring already needs every stop of the path under 25 ms (1 s cost each
# sink 0.7 s more, 1 min over the tier)
SINK_IDLE_S = "0.3"


def port_args(end: Endpoint, backend: str, cpu: int) -> list[str]:
    """Engine options that open one port inside its namespace, pinned to a CPU."""
    return ["--netns", end.netns, "--port", end.ifname, "--io", backend, "--cpu", str(cpu)]


def processes_mentioning(run_id: str) -> list[str]:
    """Processes (other than pytest) whose command line names the run id: what a run left."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if run_id in cmdline and "pytest" not in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def forwarded(record: dict[str, object]) -> bool:
    """The switch carried the trial's frames: at least half arrived (a loaded, shared machine
    stalls a CPU now and then; a switch that does not forward delivers none)."""
    tx, rx = int(str(record["tx_frames"])), int(str(record["rx_frames"]))
    return tx > 0 and rx >= tx // 2
