"""Where a chain's elements run, and what each core pays per packet (chain_cost.py's model).

Why a module of its own: the layouts are the one place that knows Raumer's placements (section
V) and this testbed's (execute.placement_cpus, measure.plan.default_nf_cpus); the fit, the
predictions and the report all go through Layout.loads().
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vswbench.errors import UsageError

PARAMS = ("C_base", "C_nf", "C_x", "C_sw")          # order = priority when columns are collinear
PLACEMENTS = ("s_core", "bi", "pbp", "default")


# -- layouts -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """Where the chain's elements run: the tester's core, each NF's core in chain order, and the
    core doing every hop's link work (None: the sender's core, the kernel's default for veth)."""
    tester_cpu: int
    nf_cpus: tuple[int, ...]
    switch_cpu: int | None = None

    @property
    def n(self) -> int:
        return len(self.nf_cpus)

    def path(self) -> list[int]:
        """Cores a packet visits in order (hops included when they have their own core)."""
        ends = [self.tester_cpu, *self.nf_cpus, self.tester_cpu]
        if self.switch_cpu is None:
            return ends
        cores = [ends[0]]
        for c in ends[1:]:
            cores += [self.switch_cpu, c]
        return cores

    @property
    def crossings(self) -> int:
        p = self.path()
        return sum(a != b for a, b in zip(p, p[1:]))

    def loads(self) -> dict[int, np.ndarray]:
        """Per core, the coefficients of (C_base, C_nf, C_x, C_sw) in its cost per packet."""
        rows: dict[int, np.ndarray] = {}

        def add(cpu: int, param: str, amount: float) -> None:
            rows.setdefault(cpu, np.zeros(len(PARAMS)))[PARAMS.index(param)] += amount
        add(self.tester_cpu, "C_base", 1)
        for c in self.nf_cpus:
            add(c, "C_nf", 1)
        if self.switch_cpu is not None:
            add(self.switch_cpu, "C_sw", self.n + 1)
        p = self.path()
        for a, b in zip(p, p[1:]):
            if a != b:
                add(a, "C_x", 0.5)
                add(b, "C_x", 0.5)
        return rows


def bottleneck_loads(loads: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """The cores that can bound a chain: those running a network function or a hop. A core with
    the tester alone (C_base and its crossings) is bounded by the tester's own ceiling, which the
    calibration measures and which flags a result as generator-bound (such results are not
    fitted): as a fitted bottleneck it would only absorb measurements (nf=ovs without n = 1: the
    tester's core as the bottleneck of n = 2 predicted n = 1 at 46 kpps, measured 86)."""
    nf, sw = PARAMS.index("C_nf"), PARAMS.index("C_sw")
    dut = {c: row for c, row in loads.items() if row[nf] or row[sw]}
    return dut or loads


def layout_for(placement: str, n: int, cores: int = 2, switch_core: bool = False) -> Layout:
    """Raumer's placements (section V) with the tester on core 0: s_core = every NF on one core,
    core 1, the tester alone on core 0 (Raumer's generator is another machine; campaign/runner.py);
    bi (block interleaving) = consecutive blocks of ceil(n/k) NFs per core, the fewest core
    switches; pbp (pipeline by pipeline) = NF i on core (i-1) mod k, a switch after every NF;
    default = the CLI's (measure.plan.default_nf_cpus): NFs round robin over the cores other than
    the tester's and the switch's, else one NF on core 1 and several alternating over 0 and 1.
    The switch core, if any, is 1."""
    if n < 1:
        raise UsageError(f"chain length {n}: must be at least 1")
    if cores < 1:
        raise UsageError(f"--cores {cores}: must be at least 1")
    if placement not in PLACEMENTS:
        raise UsageError(f"placement {placement!r}: expected {', '.join(PLACEMENTS)}")
    if cores == 1:
        return Layout(0, (0,) * n, 0 if switch_core else None)
    if placement == "s_core":
        return Layout(0, (1,) * n, 1 if switch_core else None)
    if placement == "bi":
        block = math.ceil(n / cores)
        nfs = tuple(min(i // block, cores - 1) for i in range(n))
    elif placement == "pbp":
        nfs = tuple(i % cores for i in range(n))
    else:
        free = tuple(range(2, cores)) or ((1,) if n == 1 else (0, 1))
        nfs = tuple(free[i % len(free)] for i in range(n))
    return Layout(0, nfs, 1 if switch_core else None)


def classify(layout: Layout) -> str:
    """Raumer's name of a measured layout (any core count), or "custom"."""
    used = {layout.tester_cpu, *layout.nf_cpus} | ({layout.switch_cpu} - {None})
    if len(used) == 1:
        return "s_core"                # a one-core machine: the tester shares the NFs' core
    if layout.tester_cpu == 0 and layout.switch_cpu in (None, 1):
        k = max(2, max(layout.nf_cpus) + 1)
        for name in ("s_core", "pbp", "bi", "default"):
            if layout_for(name, layout.n, k, layout.switch_cpu is not None) == layout:
                return name
    return "custom"
