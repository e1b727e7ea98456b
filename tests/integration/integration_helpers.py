"""Helpers shared by the integration tests."""

from __future__ import annotations

import os

from vswbench.pair import Endpoint

TX_CPU = 0
RX_CPU = 1 if (os.cpu_count() or 1) > 1 else 0


def port_args(end: Endpoint, backend: str, cpu: int) -> list[str]:
    """Engine options that open one port inside its namespace, pinned to a CPU."""
    return ["--netns", end.netns, "--port", end.ifname, "--io", backend, "--cpu", str(cpu)]
