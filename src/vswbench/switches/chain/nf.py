"""How the network functions of a chain forward (the backend option `nf`), after Raumer et al.:
the same chain of n = 1..10 elements built three ways.

    nf=fwd     each NF a namespace running the engine `fwd` (the default; every switch)
    nf=router  each NF a namespace forwarding with the kernel's IP routing (ip_forward=1, a /32
               route to the stream's destination out of `out`, a permanent neighbour entry for
               the next hop's MAC); no engine runs for the NFs
    nf=ovs     each NF an Open vSwitch bridge (userspace datapath, datapath_type=netdev) with the
               NF's two veth ends as system ports and port-to-port rules; all bridges live in one
               private ovs-vswitchd in the switch namespace, pinned to the switch CPU
    nf=ovs-afxdp
               the same bridges with afxdp ports: one PMD thread on the switch CPU polls them all
               (no main-loop wake-ups, whose cost does not grow with the packets: switches/chain/ovs.py)

Option `nf_poll` says how fwd engines wait for frames: auto (the default: busy-poll on a core of
their own, sleep when the core is shared with the tester or another NF), busy or sleep. A chain
study sets it to sleep so that its NFs wait the same way at every n: under auto the single NF of
chain:1 polled beside its links' NAPI threads, and n = 1 forwarded less than n = 2 (chains9).

router and ovs need `--switch veth`: the hops between elements are then direct veth pairs, so the
chain is nothing but its elements (switches/kernel/veth.py builds them, with switches/chain/router.py and
switches/chain/ovs.py). Any other combination is a UsageError naming the fix.

This module is pure (no kernel): the option's validation, which hosts are elements, where their
ports live, and the per-element counters of a trial (Raumer's drops per chain element, Fig. 5).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING

from vswbench.errors import UsageError
from vswbench.scenario import Role
from vswbench.scenario import Scenario

if TYPE_CHECKING:
    from vswbench.host.netns import LinkCounters
    from vswbench.switches.base import Placement
    from vswbench.switches.base import PortCounters
    from vswbench.switches.base import Switch

OPTION = "nf"
FWD, ROUTER, OVS, OVS_AFXDP = "fwd", "router", "ovs", "ovs-afxdp"
KINDS = (FWD, ROUTER, OVS, OVS_AFXDP)
OVS_KINDS = (OVS, OVS_AFXDP)  # bridges of one private ovs-vswitchd in the switch namespace
DESCRIPTION = {FWD: "namespaces running the engine fwd",
               ROUTER: "namespaces forwarding with the kernel's IP routing",
               OVS: "Open vSwitch bridges (userspace datapath) with two veth ports each",
               OVS_AFXDP: "Open vSwitch bridges with two afxdp ports each, polled by one PMD "
                          "thread"}
HOST_SWITCH = "veth"          # the only switch that builds router / ovs elements
# forwarding_mode() of router elements starts with this: each element's receive work runs on
# that element's own CPU (threaded NAPI), so there is no separate switch core (chain_data.py)
PER_ELEMENT = "per-element"
OVS_PORT_PREFIX = "ovs:"      # PortCounters.port of an OVS bridge port: "ovs:<interface>"


POLL_OPTION = "nf_poll"
AUTO, BUSY, SLEEP = "auto", "busy", "sleep"
POLL_MODES = {AUTO: "busy-poll alone on a core, sleep when sharing it",
              BUSY: "always busy-poll", SLEEP: "always sleep until frames arrive"}


def nf_poll(options: Mapping[str, str]) -> str:
    """The validated value of option nf_poll (default auto)."""
    mode = str(options.get(POLL_OPTION, AUTO))
    if mode not in POLL_MODES:
        raise UsageError(f"option nf_poll={options.get(POLL_OPTION)!r}: expected one of "
                         + ", ".join(f"{k} ({v})" for k, v in POLL_MODES.items()))
    return mode


def poll_problem(options: Mapping[str, str], kind: str, scenario: Scenario,
                 switch_cls: type[Switch] | None) -> str | None:
    """Why option nf_poll cannot be used here, or None (also for a valid default)."""
    if POLL_OPTION not in options:
        return None
    if nf_poll(options) == SLEEP and switch_cls is not None and switch_cls.port_kind == "dpdk":
        return (f"option nf_poll=sleep: with switch {switch_cls.name} the network functions are "
                "DPDK engines, which always poll (leave nf_poll out)")
    if kind != FWD:
        return (f"option nf_poll applies to fwd engines, and nf={kind} runs none "
                "(leave nf_poll out)")
    if not nf_hosts(scenario):
        return (f"option nf_poll applies to scenarios with network functions (pvp, chain:N), "
                f"and {scenario.name} has none (leave nf_poll out)")
    return None


def nf_kind(options: Mapping[str, str]) -> str:
    """The validated value of option nf (default fwd)."""
    kind = str(options.get(OPTION, FWD))
    if kind not in KINDS:
        raise UsageError(f"option nf={options.get(OPTION)!r}: expected one of "
                         f"{', '.join(KINDS)} (how the chain's network functions forward: "
                         + "; ".join(f"{k} = {DESCRIPTION[k]}" for k in KINDS) + ")")
    return kind


def nf_problem(kind: str, scenario: Scenario, switch_name: str) -> str | None:
    """Why option nf=`kind` cannot be used with this switch and scenario, or None."""
    if kind == FWD:
        return None
    if switch_name != HOST_SWITCH:
        return (f"option nf={kind} needs switch {HOST_SWITCH}: the chain's elements are then "
                f"{DESCRIPTION[kind]}, joined by direct veth pairs, while through switch "
                f"{switch_name} the network functions are engines (use switch {HOST_SWITCH}, "
                "or leave option nf out)")
    if not nf_hosts(scenario):
        return (f"option nf={kind} applies to scenarios with network functions (pvp, chain:N), "
                f"and {scenario.name} has none (use scenario chain:N, or leave option nf out)")
    return None


def check_nf(options: Mapping[str, str], scenario: Scenario,
             switch_cls: type[Switch]) -> str:
    """The NF kind, or UsageError for a bad value or combination (nothing is created)."""
    kind = nf_kind(options)
    problem = (nf_problem(kind, scenario, switch_cls.name)
               or poll_problem(options, kind, scenario, switch_cls))
    if problem:
        raise UsageError(problem)
    return kind


def calibration_target(options: Mapping[str, str], scenario: Scenario, placement: Placement,
                       *, on_baseline: bool = False) -> tuple[Scenario, Placement]:
    """Where the tester's ceiling (a search's highest load) is measured. Through a switch, fwd
    engines are part of the tester's setup: the same chain on the baseline (veth), as for every
    switch. When the chain itself is measured (on the baseline switch, `on_baseline`, or with
    router and ovs elements) the ceiling is the tester's alone: p2p, its placement without NF
    CPUs, so one calibration serves every chain. Calibrated on itself, a veth chain of fwd
    engines is always "generator-bound" (measured: bi and pbp chains at n = 2, 3 were, and the
    model had to leave them out); a router chain on chain:1 reached the fwd chain's 104.8 kpps."""
    if scenario.sites:   # remote: the tester's ceiling on the same roles, one switch
        from vswbench.scenario import local_twin

        return local_twin(scenario), placement
    if any(h.vm for h in scenario.hosts):
        # pvp-vm, chain-vm:N: the VMs are part of what is measured, not of the tester: its
        # ceiling is that of the same chain of fwd engines (a TCG guest flooded at the tester's
        # ceiling collapsed to 710 pps while it forwarded 5 kpps without loss)
        from vswbench.scenario import chain

        return chain(len(nf_hosts(scenario))), placement
    if options.get(OPTION, FWD) == FWD and not (on_baseline and nf_hosts(scenario)):
        return scenario, placement
    from vswbench.scenario import p2p

    return p2p(), replace(placement, nf_cpus=())


def nf_hosts(scenario: Scenario) -> tuple[str, ...]:
    """The network-function hosts in chain order (nf1, nf2, ...)."""
    return tuple(h.name for h in scenario.hosts if h.role is Role.NF)


def ports_in_switch_namespace(kind: str) -> bool:
    """ovs elements are bridges: their ports are veth ends in the switch's namespace, without
    addresses (switch ports); fwd and router elements are namespaces of their own."""
    return kind in OVS_KINDS


def runs_engine(kind: str) -> bool:
    return kind == FWD


def effective_placement(kind: str, placement: Placement) -> Placement:
    """Where the elements really run, as recorded with every result: all OVS bridges are one
    ovs-vswitchd on the switch CPU, whatever nf_cpus said."""
    if kind in OVS_KINDS and placement.switch_cpu is not None:
        return replace(placement, nf_cpus=(placement.switch_cpu,))
    return placement


# -- per-element counters ----------------------------------------------------------------------
@dataclass(frozen=True)
class ElementCounters:
    """One chain element over one trial (deltas, frames).

    rx_packets      frames the element took in on `in`
    tx_packets      frames it sent on `out`
    input_dropped   frames that could not enter it: `in`'s rx_dropped, plus, behind another
                    router or ovs element, that element's `out` tx_dropped (a veth drops a frame
                    when its peer's receive ring is full). Behind the tester or an engine the
                    sender's tx_dropped is not counted: an AF_PACKET sender sends such a frame
                    again (measured: 39,493 tx_dropped on the tester's port, no frame lost)
    lost_inside     frames taken in but neither sent nor refused downstream
                    (rx - tx - output_dropped): routing drops, a full socket buffer, ...
    output_dropped  `out`'s tx_dropped: refused by the next hop (counted there as its input
                    drops when it is an element; behind the last one, the tester's input)
    dropped         input_dropped + lost_inside: the element's share of the loss
    switch_rx_dropped, switch_tx_dropped
                    ovs: the bridge's own port counters (ovs-appctl dpctl/show -s)
    """
    rx_packets: int
    tx_packets: int
    input_dropped: int
    lost_inside: int
    output_dropped: int = 0
    switch_rx_dropped: int = 0
    switch_tx_dropped: int = 0

    @property
    def dropped(self) -> int:
        return self.input_dropped + self.lost_inside

    def to_json(self) -> dict[str, int]:
        return {"rx_packets": self.rx_packets, "tx_packets": self.tx_packets,
                "input_dropped": self.input_dropped, "lost_inside": self.lost_inside,
                "output_dropped": self.output_dropped, "dropped": self.dropped,
                "switch_rx_dropped": self.switch_rx_dropped,
                "switch_tx_dropped": self.switch_tx_dropped}


def element_counters(scenario: Scenario, kind: str, kernel_delta: Mapping[str, LinkCounters],
                     ifnames: Mapping[str, str], switch_before: Sequence[PortCounters],
                     switch_after: Sequence[PortCounters]) -> dict[str, dict[str, int]]:
    """Per network function of `scenario` (elements of `kind`): ElementCounters from the kernel
    counters of the host ports (deltas by port key) and, for OVS bridge ports, the switch's
    port counters."""
    upstream = {hop.dst: hop.src for hop in scenario.hops}
    elements = nf_hosts(scenario)
    before = {c.port: c for c in switch_before}
    out: dict[str, dict[str, int]] = {}
    for name in elements:
        host = scenario.host(name)
        key_in, key_out = (f"{name}.{p}" for p in host.ports[:2])
        k_in, k_out = kernel_delta.get(key_in), kernel_delta.get(key_out)
        if k_in is None or k_out is None:
            continue                    # DPDK ports: no kernel counters
        up_key = upstream.get(key_in, "")
        up = kernel_delta.get(up_key)
        refused = (up.tx_dropped if up is not None and kind != FWD
                   and up_key.split(".")[0] in elements else 0)
        sw_rx = sw_tx = 0
        for key in (key_in, key_out):
            for after in switch_after:
                if after.port == OVS_PORT_PREFIX + ifnames.get(key, "?"):
                    b = before.get(after.port)
                    sw_rx += after.rx_dropped - (b.rx_dropped if b else 0)
                    sw_tx += after.tx_dropped - (b.tx_dropped if b else 0)
        inside = k_in.rx_packets - k_out.tx_packets - k_out.tx_dropped
        out[name] = ElementCounters(k_in.rx_packets, k_out.tx_packets,
                                    refused + k_in.rx_dropped, max(0, inside), k_out.tx_dropped,
                                    sw_rx, sw_tx).to_json()
    return out
