"""Planning and running trials: TrialOptions checked into a TrialPlan (nothing created), then
run through one testbed; the switch table of `vswbench switches`.

Every input is checked before anything is created: unknown switch or scenario, bad rate, CPUs
this machine lacks, malformed --option -> UsageError (exit 2). A switch that cannot run here ->
SwitchUnavailable (exit 3) with its reason and fix.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from types import MappingProxyType

from vswbench.engine.params import TrialParams
from vswbench.engine.params import parse_churn
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.errors import require_root
from vswbench.measure.cores import parse_cpu_list
from vswbench.measure.cores import spread
from vswbench.measure.trial import TrialResult
from vswbench.scenario import Role
from vswbench.scenario import Scenario
from vswbench.scenario import parse
from vswbench.switches.base import Placement
from vswbench.switches.base import Switch
from vswbench.switches.chain.nf import check_nf
from vswbench.switches.options import check_keys
from vswbench.testbed.vm import vm_accel
from vswbench.testbed.vm import vm_problem
from vswbench.units import STD_FRAME_MAX
from vswbench.units import FrameSize


class SwitchUnavailable(VswbenchError):
    exit_code = 3


@dataclass(frozen=True)
class SwitchRow:
    name: str
    available: bool
    reason: str
    fix: str
    versions: dict[str, str]
    description: str


def switch_rows(user_versions: bool = False) -> list[SwitchRow]:
    """Every backend, available or not. A user's declared switch ([switch.NAME] of a switch
    file) runs its `version` argv only with user_versions (`switches --versions`): listing
    runs nothing of the user's."""
    from vswbench.switches.catalog import all_switches

    rows = []
    for name, cls in sorted(all_switches().items()):
        avail = cls.availability()
        declared = getattr(cls, "declaration", None) is not None
        versions = cls.versions() if avail.ok and (user_versions or not declared) else {}
        rows.append(SwitchRow(name, avail.ok, avail.reason, avail.fix, versions,
                              getattr(cls, "description", "")))
    return rows


@dataclass(frozen=True)
class TrialOptions:
    """What a trial or a method is asked for: where (switch, scenario, CPUs, backend options) and
    the traffic (a search varies its rate and duration)."""
    switch: str
    scenario: str
    traffic: TrialParams = field(default_factory=TrialParams)
    tester_cpu: int | None = None
    switch_cpu: int | None = None
    nf_cpus: str | None = None
    # backend options, one mapping wherever they come from (--option key=value: parse_options;
    # a campaign point's options table)
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    unpinned: bool = False          # no CPU pinning at all: the scheduler places everything
    tester_cpus: str | None = None  # list forms (--tester-cpus 0-3, --switch-cpus 4-7)
    switch_cpus: str | None = None


def trial_options(switch: str, scenario: str, *, size: FrameSize, flows: int, burst: int,
                  io: str, warmup: float, churn: str | None, tester_cpu: int | None,
                  switch_cpu: int | None, nf_cpus: str | None, options: Mapping[str, str],
                  unpinned: bool, tester_cpus: str | None = None,
                  switch_cpus: str | None = None) -> TrialOptions:
    """TrialOptions, built one way for a campaign point (campaign/runner.py) and for the command
    line's flags (cli/common.py): the traffic record and where the trial runs."""
    arrival, life = parse_churn(churn)
    traffic = TrialParams(size, warmup=warmup, flows=flows, burst=burst, io=io,
                          flow_arrival=arrival, flow_life=life)
    return TrialOptions(switch, scenario, traffic, tester_cpu, switch_cpu, nf_cpus,
                        MappingProxyType(dict(options)), unpinned, tester_cpus, switch_cpus)


def _cpu(value: int, flag: str, cpus: int) -> int:
    if not 0 <= value < cpus:
        raise UsageError(f"{flag} {value}: this machine has CPUs 0..{cpus - 1}")
    return value


def default_nf_cpus(tester: int, switch: int, cpus: int, nfs: int = 1,
                    taken: tuple[int, ...] = ()) -> tuple[int, ...]:
    """Network functions on cores of their own where there are any (not the tester's, the
    switch's or `taken`). On a small machine a single
    NF goes beside the switch, not the tester: the tester busy-polls, so an NF sharing its core
    waits for the scheduler's time slice (seen on 2 vCPUs: pvp p50 7.9 ms beside the tester, 10 us
    beside a bridge's NAPI thread). Several NFs alternate over both cores, starting beside the
    tester (NFs are assigned round robin), so they never crowd the switch's core (seen: ovs
    chain:3 drops 0.2-0.7 % at 10 kpps with two NFs beside ovs-vswitchd, none this way, at the
    price of milliseconds of latency). NFs that share a core sleep when idle (--no-busy-poll)."""
    free = tuple(c for c in range(cpus) if c not in (tester, switch, *taken))
    if free:
        return free
    return (switch,) if nfs <= 1 else tuple(dict.fromkeys((tester, switch)))


CPU_FLAGS = ("tester_cpu", "switch_cpu", "nf_cpus", "tester_cpus", "switch_cpus")


def make_placement(opts: TrialOptions, cpus: int | None = None) -> Placement:
    """Where the trial's engines and switch run: measure.cores states the rule (n <= 2 cores or
    any CPU flag: one tester core, one switch core, default_nf_cpus; n >= 3 and no flag: every
    core, cores.spread)."""
    cpus = cpus or os.cpu_count() or 1
    if opts.unpinned:
        return Placement(None, None, ())
    scenario = parse(opts.scenario)
    nfs = sum(1 for h in scenario.hosts if h.role is Role.NF)
    if cpus >= 3 and all(getattr(opts, f) is None for f in CPU_FLAGS):
        s = spread(scenario, cpus, _spreads_cores(opts.switch))
        return Placement(s.tester[0], s.switch[0], s.nf, s.tester, s.switch)
    for one, many, side in ((opts.tester_cpu, opts.tester_cpus, "tester"),
                            (opts.switch_cpu, opts.switch_cpus, "switch")):
        if one is not None and many is not None:
            raise UsageError(f"--{side}-cpu and --{side}-cpus both name the {side}'s cores: "
                             f"give one of them")
    if opts.tester_cpus is not None:
        testers = parse_cpu_list(opts.tester_cpus, "--tester-cpus", cpus)
    else:
        testers = (_cpu(0 if opts.tester_cpu is None else opts.tester_cpu, "--tester-cpu", cpus),)
    if opts.switch_cpus is not None:
        switches = parse_cpu_list(opts.switch_cpus, "--switch-cpus", cpus)
    else:
        default_switch = next((c % cpus for c in range(testers[0] + 1, testers[0] + 1 + cpus)
                               if c % cpus not in testers[1:]), (testers[0] + 1) % cpus)
        switches = (_cpu(default_switch if opts.switch_cpu is None else opts.switch_cpu,
                         "--switch-cpu", cpus),)
    tester, switch = testers[0], switches[0]
    if opts.nf_cpus is None:
        nf: tuple[int, ...] = default_nf_cpus(tester, switch, cpus, nfs, testers + switches)
    else:
        try:
            nf = tuple(int(x) for x in opts.nf_cpus.split(",") if x.strip())
        except ValueError:
            raise UsageError(f"--nf-cpus {opts.nf_cpus!r}: expected a list like 1 or 1,2,3") \
                from None
        if not nf:
            raise UsageError("--nf-cpus: give at least one CPU, e.g. --nf-cpus 1")
        nf = tuple(_cpu(c, "--nf-cpus", cpus) for c in nf)
    return Placement(tester, switch, nf, testers, switches)


def _spreads_cores(switch: str) -> bool:
    """Does the switch spread its work over several cores (Switch.spreads_cores)? An unknown
    name is refused by plan_trial; here it counts as a kernel switch."""
    from vswbench.switches.catalog import all_switches

    cls = all_switches().get(switch)
    return True if cls is None else cls.spreads_cores


def parse_options(items: tuple[str, ...]) -> dict[str, str]:
    """--option key=value flags (and the flags that set options) as one mapping, checked."""
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {item!r}: expected key=value, e.g. --option ovs_mode=normal")
        result = with_options(result, {key.strip(): value.strip()})
    check_keys(result)
    return result


def with_options(options: Mapping[str, str], more: Mapping[str, str]) -> dict[str, str]:
    """`options` and `more` in one mapping; a key in both is a usage error."""
    for key in more:
        if key in options:
            raise UsageError(f"option {key} is given twice: give each option once "
                             "(--function, --table-size and --shape-pps set options too)")
    return {**options, **more}


@dataclass(frozen=True)
class TrialPlan:
    switch_cls: type[Switch]
    scenario: Scenario
    params: TrialParams
    placement: Placement
    options: dict[str, str]         # the run's own copy (a backend may add its defaults)


def plan_trial(opts: TrialOptions) -> TrialPlan:
    """Check every input; nothing is created here."""
    from vswbench.switches.catalog import all_switches

    scenario = parse(opts.scenario)
    params = opts.traffic
    params.validate()
    placement = make_placement(opts)
    options = dict(opts.options)
    check_keys(options)
    switches = all_switches()
    if opts.switch not in switches:
        raise UsageError(f"unknown switch {opts.switch!r}: choose from "
                         f"{', '.join(sorted(switches))} (see `vswbench switches`)")
    switch_cls = switches[opts.switch]
    nf = check_nf(options, scenario, switch_cls)   # option nf: veth chains only (chain/nf.py)
    vm = vm_problem(scenario, switch_cls, nf)      # pvp-vm, chain-vm:N (testbed/vm.py)
    if vm:
        raise UsageError(vm)
    vm_accel(options)
    problem = switch_cls.unread_options(options, params.io)
    if problem:
        raise UsageError(problem)
    switch_cls.check_options(options)
    switch_cls.check_trial_options(options)   # the calibration device needs its rate (--shape-pps)
    jumbo = jumbo_problem(switch_cls, options, params.size, scenario)
    if jumbo:
        raise SwitchUnavailable(jumbo)
    check_io_frame(params.io, params.size)
    return TrialPlan(switch_cls, scenario,
                     replace(params, io=engine_io(switch_cls, params.io, options,
                                                  churn=params.churn is not None,
                                                  size=params.size)),
                     placement, options)


def jumbo_problem(switch_cls: type[Switch], options: Mapping[str, str], size: FrameSize,
                  scenario: Scenario | None = None) -> str | None:
    """Why this switch (in this scenario) cannot carry `size` (frames above 1518 B need MTU 9000
    on every link of its testbed), or None."""
    if size.largest <= STD_FRAME_MAX:
        return None
    problem = switch_cls.jumbo_problem(options)
    if problem is None and scenario is not None and scenario.wire == "vxlan":
        problem = (f"scenario {scenario.name}: VXLAN adds 50 B to every frame on the wire, "
                   "whose links get the same MTU, so the tunnel refuses it; use scenario "
                   "remote (the switches joined by veth) for larger frames")
    return f"frame size {size} (MTU {size.link_mtu}): {problem}" if problem else None


def check_io_frame(io: str, size: FrameSize, limit: Callable[[str], int | None] | None = None) -> None:
    """UsageError (exit 2) if the engine I/O `io` cannot carry frames of `size`: the limit each
    backend states in the engine's probe (max_frame; `limit` stands in for the probe)."""
    if size.largest <= STD_FRAME_MAX or io in ("auto", "afpacket"):
        return
    most = (limit or io_max_frame)(io)
    if most is not None and size.largest > most:
        raise UsageError(f"--size {size}: --io {io} carries frames up to {most} B; use --io "
                         f"afpacket for frames above {most} B")


@functools.lru_cache(maxsize=8)
def io_max_frame(io: str) -> int | None:
    """The largest frame the engine's `io` carries (its probe), or None where it does not say."""
    from vswbench.engine.probe import probe

    try:
        info = probe().backend(io)
    except VswbenchError:
        return None   # the engine then refuses the size itself (exit 2, the same message)
    return None if info is None else info.max_frame


def jumbo_note(params: TrialParams) -> str:
    """What a trial of frames above 1518 B does differently (a progress line)."""
    return (f"every link at MTU {params.size.link_mtu} for frames of {params.size}; io "
            f"{params.io}" + (" (auto takes afpacket above 1518 B: the in-kernel generator "
                              "and DPDK carry standard frames only, AF_XDP up to 1796 B)"
                              if params.io == "afpacket" else ""))


def engine_io(switch_cls: type[Switch], io: str, options: Mapping[str, str] | None = None,
              kernel_tx: Callable[[], str | None] | None = None, *, churn: bool = False,
              size: FrameSize | None = None) -> str:
    """The engine I/O a switch's ports take: DPDK switches have DPDK ports only (`dpdk`), kernel
    switches kernel interfaces (never `dpdk`). `auto`: the fastest tester that works here, the
    in-kernel generator (xdplive) where the switch lets the kernel transmit into it and the
    engine's probe says it works (`kernel_tx`: why not, None if it does), else afpacket. With
    flow `churn` auto is afpacket: the in-kernel generator sends a fixed set of flows only; with
    frames above 1518 B (`size`) too, the tester that carries them to 9018 B (jumbo_note)."""
    options = options or {}
    if switch_cls.port_kind == "dpdk":
        return "dpdk"
    if io == "dpdk":
        raise UsageError(f"--io dpdk: switch {switch_cls.name} has kernel ports; DPDK ports come "
                         "with the DPDK switches (memif, testpmd, ovs-dpdk)")
    problem = switch_cls.kernel_tx_problem(options)
    if io == "xdplive" and problem:
        raise UsageError(f"--io xdplive: {problem}; use --io afpacket or afxdp")
    if io == "auto":
        if churn or (size is not None and size.largest > STD_FRAME_MAX):
            return "afpacket"
        if problem is None and (kernel_tx or xdplive_problem)() is None:
            return "xdplive"
        return "afpacket"
    return io


@functools.lru_cache(maxsize=1)
def xdplive_problem() -> str | None:
    """Why the engine cannot generate in the kernel here (its probe: kernel, BPF, root), or None."""
    from vswbench.engine.probe import probe

    try:
        info = probe().backend("xdplive")
    except VswbenchError as exc:
        return f"the engine's probe failed: {exc}"
    if info is None:
        return "this engine has no xdplive backend (rebuild it: ./setup.sh)"
    return None if info.usable else (info.reason or "not usable here")


def ensure_runnable(switch_cls: type[Switch]) -> None:
    """SwitchUnavailable (exit 3) with the reason and the fix, or UsageError without root."""
    require_root("a trial")
    avail = switch_cls.availability()
    if not avail.ok:
        fix = f"; fix: {avail.fix}" if avail.fix else ""
        raise SwitchUnavailable(f"switch {switch_cls.name} is not available here: "
                                f"{avail.reason}{fix}")


def execute_trial(plan: TrialPlan, progress: Callable[[str], None] = print) -> TrialResult:
    return execute_trials(plan, 1, progress)[0]


def execute_trials(plan: TrialPlan, repeat: int,
                   progress: Callable[[str], None] = print,
                   profile: bool = False) -> list[TrialResult]:
    """`repeat` trials, one after the other, through one testbed (each profiled by perf with
    `profile`)."""
    from vswbench.measure.hoststall import classify
    from vswbench.measure.hoststall import open_monitor
    from vswbench.measure.trial import run_trial
    from vswbench.run.scope import run_scope
    from vswbench.testbed.build import Testbed

    ensure_runnable(plan.switch_cls)
    if profile:
        from vswbench.host.perf import perf_problem

        if perf_problem():
            raise UsageError(f"--profile: {perf_problem()}")
    with run_scope() as run:
        progress(f"run {run.id}: {plan.switch_cls.name}, {plan.scenario.name}, "
                 f"{plan.params.size} at {plan.params.rate_pps:,.0f} pps for "
                 f"{plan.params.duration:g} s (warm-up {plan.params.warmup:g} s)")
        if plan.params.size.largest > STD_FRAME_MAX:
            progress(f"run {run.id}: {jumbo_note(plan.params)}")
        with Testbed(plan.scenario, plan.switch_cls, run, plan.placement, plan.options,
                     flows=plan.params.flows, mtu=plan.params.size.link_mtu) as tb:
            progress(f"run {run.id}: testbed ready ({tb.switch.forwarding_mode() if tb.switch else ''})")
            results = []
            monitor = open_monitor(tb)
            try:
                for i in range(repeat):
                    if repeat > 1:
                        progress(f"run {run.id}: trial {i + 1}/{repeat}")
                    result = run_trial(tb, plan.params, profile=profile, monitor=monitor)
                    classify(result, tb.switch_cls.ingress_ring_frames)
                    results.append(result)
            finally:
                monitor.stop()
            return results

