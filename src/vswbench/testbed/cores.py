"""Which core each host's engine of a testbed runs on (the placement's rule: tester side on the
tester cores pair by pair, network functions round-robin over theirs, the reflecting server on the
first NF core), and the DUT's cores of tester-dut, which must stand apart from the tester's."""

from __future__ import annotations

from vswbench.errors import UsageError
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.switches.base import Placement

DRIVERS = (Role.TESTER, Role.SENDER, Role.CLIENT)


def apart_problem(placement: Placement) -> None:
    """tester-dut: the tester's and the DUT's CPUs must be named and apart (UsageError)."""
    t, sw = placement.tester_cpu, placement.switch_cpu
    if t is None or sw is None or \
            set(placement.tester_cpus) & {*placement.switch_cpus, *placement.nf_cpus}:
        raise UsageError(f"scenario tester-dut needs the tester and the DUT on CPUs of their own "
                         f"(tester CPU {t}, switch CPU {sw}): give --tester-cpu and --switch-cpu "
                         "two different CPUs")


def dut_cpus(placement: Placement) -> frozenset[int]:
    """The DUT's CPUs in tester-dut: the switch's and the network functions'."""
    return frozenset((*placement.switch_cpus, *placement.nf_cpus))


def host_cpu(placement: Placement, role: Role, nf_index: int, pair_index: int = 0) -> int | None:
    """CPU of a host's engine: tester side (tester, sender, receiver, client) on the tester core
    pair_index mod len(tester_cpus) (driver i, 0-based, and its receiver i share one), network
    functions round-robin over nf_cpus, the reflecting server on the first NF CPU."""
    if role == Role.NF:
        return placement.nf_cpu(nf_index)
    if role == Role.SERVER:
        return placement.nf_cpus[0] if placement.nf_cpus else placement.switch_cpu
    return placement.tester_core(pair_index)


def pair_indexes(scenario: Scenario) -> dict[str, int]:
    """Each tester-side host's pair index for host_cpu: the n-th driver (tester, sender, client)
    and the n-th receiver are pair n-1 (pairs:N: s1 and r1 are pair 0)."""
    out: dict[str, int] = {}
    drivers = receivers = 0
    for host in scenario.hosts:
        if host.role in DRIVERS:
            out[host.name], drivers = drivers, drivers + 1
        elif host.role == Role.RECEIVER:
            out[host.name], receivers = receivers, receivers + 1
    return out
