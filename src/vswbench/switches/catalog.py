"""Every switch backend by name (an explicit table: backends are classes handed in), and the checks
of chain option nf that need the whole table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from vswbench.errors import UsageError
from vswbench.scenario import parse
from vswbench.switches.chain import nf as chain_nf
from vswbench.switches.base import Switch
from vswbench.switches.kernel.bridge import BridgeSwitch
from vswbench.switches.kernel.macvlan import MacvlanSwitch
from vswbench.switches.dpdk.memif import Memif
from vswbench.switches.ovs.switch import Ovs, OvsAfxdp
from vswbench.switches.ovs.dpdk import OvsDpdk
from vswbench.switches.kernel.router import RouterSwitch
from vswbench.switches.kernel.shaped import ShapedSwitch
from vswbench.switches.bpf.tc import TcBpfSwitch
from vswbench.switches.dpdk.testpmd import Testpmd
from vswbench.switches.kernel.veth import VethSwitch
from vswbench.switches.bpf.xdp import XdpSwitch

BACKENDS: tuple[type[Switch], ...] = (
    VethSwitch, BridgeSwitch, RouterSwitch, MacvlanSwitch, Ovs, OvsAfxdp, TcBpfSwitch, XdpSwitch,
    ShapedSwitch, Memif, Testpmd, OvsDpdk)


def all_switches() -> dict[str, type[Switch]]:
    """name -> backend class, for every backend this package has."""
    return {cls.name: cls for cls in BACKENDS}


def nf_option_problems(options: Iterable[Mapping[str, str]], switches: Sequence[str],
                    scenarios: Sequence[str]) -> list[str]:
    """A campaign study's problems with option nf: one line per bad value or combination."""
    classes = all_switches()
    found: list[str] = []
    for table in options:
        if chain_nf.OPTION not in table and chain_nf.POLL_OPTION not in table:
            continue
        try:
            kind = chain_nf.nf_kind(table)
            chain_nf.nf_poll(table)
        except UsageError as exc:
            found.append(str(exc))
            continue
        for switch in switches:
            for name in scenarios:
                problem = (chain_nf.nf_problem(kind, parse(name), switch)
                           or chain_nf.poll_problem(table, kind, parse(name), classes.get(switch)))
                if problem:
                    found.append(problem)
    return list(dict.fromkeys(found))


def nf_unavailable(options: Mapping[str, str]) -> str | None:
    """Why the elements of option nf cannot be built on this machine (nf=ovs without Open
    vSwitch, nf=ovs-afxdp without AF_XDP), with the fix; None when they can (or the value is
    bad: validation says so)."""
    kind = options.get(chain_nf.OPTION)
    if kind not in chain_nf.OVS_KINDS:
        return None
    backend = all_switches()["ovs" if kind == chain_nf.OVS else "ovs-afxdp"]
    state = backend.availability()
    if state.ok:
        return None
    return f"nf={kind} cannot be built here: {state.reason} (fix: {state.fix})"
