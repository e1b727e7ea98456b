"""The default CPU placement on machines with more than 2 cores, and the list forms of the CPU
flags (--tester-cpus 0-3, --switch-cpus 4-7).

The rule (measure.plan.make_placement applies it; docs/methodology/index.md, "CPU placement";
the report prints the cores a point used). On n <= 2 cores, or when any CPU flag is given, one
tester core (0, or --tester-cpu), one switch core (the next, or --switch-cpu) and the network
functions per plan.default_nf_cpus: the placement vswbench always had. On n >= 3 cores with no
CPU flag the busy-polling engines get cores of their own first, then the rest is shared out:

- the tester side starts with core 0, the switch with the next core;
- the E engines that poll beside the switch (the network functions of pvp / chain:N, the
  reflecting server of rr) get the last F = min(E, n - 2) cores, one each (round robin when
  E > F, and then they sleep when idle: nf_poll auto);
- of the R = n - 2 - F cores left, the tester takes one per further driver (pairs:N has N
  drivers, a sender each, with its receiver on the same core), at most half of R rounded up for a
  switch that spreads its work (kernel switches: one NAPI thread per port, round robin over the
  switch cores), all of R for one that polls on one core (OVS, DPDK: Switch.spreads_cores);
- a switch that spreads takes every core still left; one that polls keeps its one core.

So pairs:8 through the bridge on 16 cores: tester 0-7 (pair i on core i-1), switch 8-15;
chain:3 on 16: tester 0, switch 1-12, NFs 13, 14, 15; on 3 cores chain:1 is tester 0, switch 1,
NF 2, as before.
"""
from __future__ import annotations

from dataclasses import dataclass

from vswbench.errors import UsageError
from vswbench.scenario import Role
from vswbench.scenario import Scenario

DRIVER_ROLES = (Role.TESTER, Role.SENDER, Role.CLIENT)
BESIDE_SWITCH = (Role.NF, Role.SERVER)     # engines that poll on cores apart from the tester's


@dataclass(frozen=True)
class Spread:
    """The cores of each side under the rule above."""
    tester: tuple[int, ...]
    switch: tuple[int, ...]
    nf: tuple[int, ...]


def spread(scenario: Scenario, cpus: int, spreads_cores: bool) -> Spread:
    """The default placement on `cpus` >= 3 cores (module docstring)."""
    if cpus < 3:
        raise ValueError("spread() is the rule for 3 cores or more")
    drivers = max(1, sum(1 for h in scenario.hosts if h.role in DRIVER_ROLES))
    beside = sum(1 for h in scenario.hosts if h.role in BESIDE_SWITCH)
    nf_count = min(beside, cpus - 2)
    rest = cpus - 2 - nf_count
    extra = min(drivers - 1, (rest + 1) // 2 if spreads_cores else rest)
    tester = tuple(range(0, 1 + extra))
    switch_end = cpus - nf_count if spreads_cores else len(tester) + 1
    switch = tuple(range(len(tester), switch_end))
    nf = tuple(range(cpus - nf_count, cpus)) or switch[:1]
    return Spread(tester, switch, nf)


def parse_cpu_list(text: str, flag: str, cpus: int) -> tuple[int, ...]:
    """'0-3', '4,6,8-9' -> the cores in the order given; UsageError naming the problem and the
    fix for anything else (an empty list, a bad range, a repeated core, a core this machine
    lacks)."""
    example = f"expected a list like 0-3 or 0,2,4-5 of CPUs 0..{cpus - 1}"
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise UsageError(f"{flag} {text!r}: {part!r} is not a CPU or range: {example}") \
                from None
        if first < 0 or last < first:
            raise UsageError(f"{flag} {text!r}: {part!r} is not a range from low to high: "
                             f"{example}")
        for cpu in range(first, last + 1):
            if cpu >= cpus:
                raise UsageError(f"{flag} {text!r}: this machine has CPUs 0..{cpus - 1}, not "
                                 f"{cpu}: {example}")
            if cpu in out:
                raise UsageError(f"{flag} {text!r}: CPU {cpu} is named twice: name each once")
            out.append(cpu)
    return tuple(out)
