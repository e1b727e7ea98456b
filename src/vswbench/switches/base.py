"""The switch backend interface. One module per backend, each a subclass of Switch, listed in
switches/catalog.py. A backend is handed the wiring (which host ports attach to it and which paths
it must forward) and builds everything inside its own namespace; the root namespace is never touched.

Life cycle, driven by testbed.Testbed:

    cls.availability()                      -> Availability (ok, reason, fix); never raises
    sw = cls(ctx)                           # SwitchContext: run id, registry, switch namespace, placement
    sw.setup()                              # switch namespace contents: bridge device, daemons, programs
    for each HostPort: sw.attach(hp)        # create the host's link (veth pair, or macvlan child);
                                            #   the host end appears in hp.netns named hp.ifname, UP,
                                            #   returns an Attachment (DPDK switches: no link; the
                                            #   Attachment names the engine's vdev and its MAC)
    sw.forward(paths)                       # install forwarding for every ForwardPath (in -> out attachment):
                                            #   port-to-port rules (ovs, tc-bpf, xdp), policy routes
                                            #   (router); learning switches may ignore it
    ... trials ...
    sw.teardown()                           # idempotent; everything is also in the cleanup registry

Everything a backend creates carries the run id (ctx.run_id.name(...) / ifname(...)) and is
registered with ctx.registry at the moment it is created, so Ctrl-C or an exception at any point
removes it. Waiting for kernel state polls (netns.wait_until), never sleeps a guess.
"""
from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import ClassVar

from vswbench.run.ids import RunId
from vswbench.run.registry import CleanupRegistry
from vswbench.switches.rules.functions import function_problem

CHAIN_OPTIONS = frozenset({"nf", "nf_poll", "vm_accel"})   # chain/nf.py, testbed/vm.py
FUNCTION_OPTIONS = frozenset({"function", "table_size"})   # switches/rules/functions.py, checked below


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""      # why not (empty when ok)
    fix: str = ""         # what to do about it


@dataclass(frozen=True)
class Placement:
    """CPU placement. None = leave to the scheduler. Defaults keep tester and switch on disjoint
    cores where the machine has them (Emmerich et al., Guideline 2). `tester_cpus` and
    `switch_cpus` are all the cores of each side (measure.plan.make_placement's rule), the first
    being tester_cpu / switch_cpu; left out, they are that one core (or none when it is None)."""
    tester_cpu: int | None = 0
    switch_cpu: int | None = 1
    nf_cpus: tuple[int, ...] = (1,)
    tester_cpus: tuple[int, ...] = ()
    switch_cpus: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for one, many, name in ((self.tester_cpu, self.tester_cpus, "tester_cpus"),
                                (self.switch_cpu, self.switch_cpus, "switch_cpus")):
            if not many:
                object.__setattr__(self, name, () if one is None else (one,))
            elif many[0] != one:
                raise ValueError(f"Placement: {name} {many} must start with {one}")

    def tester_core(self, index: int) -> int | None:
        """Tester core of driver `index` (0-based) and its receiver: round robin over
        tester_cpus."""
        return self.tester_cpus[index % len(self.tester_cpus)] if self.tester_cpus else None

    def switch_core(self, index: int) -> int | None:
        """Switch core of the switch's port `index` (0-based, the order its receive work is
        placed in): round robin over switch_cpus."""
        return self.switch_cpus[index % len(self.switch_cpus)] if self.switch_cpus else None

    def legacy(self) -> dict[str, object]:
        """The placement as written before tester_cpus / switch_cpus existed, with the tuples
        only where they hold more than that one core (calibration cache keys stay valid)."""
        out: dict[str, object] = {"tester_cpu": self.tester_cpu, "switch_cpu": self.switch_cpu,
                                  "nf_cpus": list(self.nf_cpus)}
        if len(self.tester_cpus) > 1 or len(self.switch_cpus) > 1:
            out.update(tester_cpus=list(self.tester_cpus), switch_cpus=list(self.switch_cpus))
        return out

    def nf_cpu(self, index: int) -> int | None:
        """CPU of network function `index` (1-based): round robin over nf_cpus, else the
        switch CPU."""
        cpus = self.nf_cpus or ((self.switch_cpu,) if self.switch_cpu is not None else ())
        return cpus[(index - 1) % len(cpus)] if cpus else None


@dataclass
class SwitchContext:
    run_id: RunId
    registry: CleanupRegistry
    netns: str                     # the switch's own namespace (created by the testbed, empty)
    placement: Placement = field(default_factory=Placement)
    options: dict[str, str] = field(default_factory=dict)   # backend options, e.g. {"ovs_mode": "normal"}
    temp_dir: str = ""             # private temp dir of the run (for daemon run dirs, BPF objects)
    # hosts whose engines start before the drivers and run all along (NFs, receivers, servers)
    long_running_hosts: frozenset[str] = frozenset()
    # network functions the backend builds itself instead of engines (option nf=router|ovs of
    # the veth backend, chain/nf.py), in chain order; empty when the NFs are engines
    nf_hosts: tuple[str, ...] = ()
    # flows the drivers send (the workload's --flows): backends that install a rule per flow
    # (ovs flow_table=exact) size their tables by it
    flows: int = 1


@dataclass(frozen=True)
class HostPort:
    """A container's port that must be joined to the switch."""
    key: str                       # stable logical name, e.g. "tester.p0", "nf1.in"
    netns: str                     # the container namespace
    ifname: str                    # interface name to create there (<= 15 chars, carries the run id)
    ip_cidr: str                   # address the testbed puts on it, e.g. "198.18.1.2/24"


@dataclass
class Attachment:
    host: HostPort
    switch_ifname: str | None      # the switch-side interface in ctx.netns (None for macvlan/veth)
    host_mac: str = ""             # filled by the backend once the host end exists
    switch_mac: str = ""           # MAC of the switch-side interface, if any
    gateway_ip: str | None = None  # l3 switches: the address hosts on this port route through
    dpdk_port: str = ""            # DPDK switches: the engine's vdev string for this port


@dataclass(frozen=True)
class ForwardPath:
    """Frames entering the switch from `src` must leave towards `dst` (one direction)."""
    src: str                       # HostPort.key
    dst: str                       # HostPort.key


@dataclass
class PortCounters:
    port: str                      # interface or switch port name
    rx_packets: int = 0
    tx_packets: int = 0
    rx_dropped: int = 0
    tx_dropped: int = 0
    rx_errors: int = 0
    tx_errors: int = 0


@dataclass(frozen=True)
class BusyCycles:
    """Cycles a polling switch spent on work that carried frames (not idle polls), and the frames,
    both counted since the switch started (a trial takes the difference)."""
    cycles: int
    packets: int

    def per_packet_since(self, before: BusyCycles | None) -> float | None:
        if before is None:
            return None
        packets = self.packets - before.packets
        return round((self.cycles - before.cycles) / packets, 1) if packets > 0 else None


class RuleMechanism(ABC):
    """One way a backend changes its rules (route batch, nft transaction, OpenFlow bundle, BPF
    map updates), for the rule-update metric (measure/rule_update.py): `install(n)` adds n rules
    the measured traffic never matches, in one batch; `remove()` takes them out again, in one
    batch; both return the seconds they took."""
    name: str = ""

    @abstractmethod
    def install(self, n: int) -> float: ...

    @abstractmethod
    def remove(self) -> float: ...


class Switch(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    l3: ClassVar[bool] = False          # True: hosts route via Attachment.gateway_ip (router)
    direct: ClassVar[bool] = False      # True: no switch in the path (veth baseline)
    # True: a known-answer device (shaped), not a switch to rank: left out of switch = ["*"] (the
    # suites), and the only backend that takes --shape-pps
    calibration: ClassVar[bool] = False
    # True: a runtime's wiring of a mechanism another backend ranks (the CNI plugins, Docker's
    # bridge): left out of switch = ["*"] (the suites' ranking of mechanisms), compared with the
    # mechanism it wires by specs/containers.toml
    container_network: ClassVar[bool] = False
    # "kernel": host ports are kernel interfaces (veth, macvlan) the engine opens with afpacket,
    # udp or afxdp. "dpdk": host ports are DPDK virtual devices (vhost-user, memif); the engine
    # runs `--io dpdk` with Attachment.dpdk_port as its --port, and there is no kernel link.
    port_kind: ClassVar[str] = "kernel"
    # why its ports cannot take frames above 1518 B (MTU 9000), said after "switch <name>: ", or
    # None: they can (DPDK ports never can: jumbo_problem says so for every one)
    jumbo_refused: ClassVar[str | None] = None
    # backend options this backend reads, each with what it sets (`vswbench` lists their union,
    # switches/options.py); the chain keys nf and nf_poll (switches/chain/nf.py) and the function
    # keys are read for every switch. Any other key would be ignored: refused.
    options_read: ClassVar[Mapping[str, str]] = {}
    # programs the backend runs, each with the package that ships it (`vswbench doctor` checks them)
    tools: ClassVar[Mapping[str, str]] = {}
    # thread names (comm prefixes) of the backend's daemons: the profile classifier counts their
    # user space as "daemon" (host/profile.py)
    daemons: ClassVar[tuple[str, ...]] = ()
    # Can the in-kernel generator (engine --io xdplive) transmit into this switch? XDP_TX out of a
    # tester port needs NAPI on its veth peer (GRO or an XDP program there); without it the kernel
    # drops every frame uncounted (measured: macvlan, ovs with system ports lost 100 %).
    # True: the switch's work runs per port (a NAPI thread each, kernel.napi.place_napi) and
    # spreads round robin over Placement.switch_cpus; False: it polls on switch_cpu alone (OVS
    # PMD / handler threads, DPDK), and the default rule (measure.cores) gives it one core
    spreads_cores: ClassVar[bool] = False
    kernel_tx_ok: ClassVar[bool] = False
    # Can it take an existing interface as a port (adopt(): the wire between two emulated hosts
    # of scenario remote, or the VXLAN device on it)?
    wire_capable: ClassVar[bool] = False
    # forwarding functions this backend implements (switches/rules/functions.py: l2, l3, nat, acl);
    # any other is refused before anything is built, with this list as the reason
    functions: ClassVar[frozenset[str]] = frozenset({"l2"})
    # The roles (regexes) of the names it gives its objects after the run id (ctx.run_id.name /
    # ifname), each with what carries it: `vswbench clean` removes a leftover named run id + one
    # of the roles of any backend in the catalog (switches/catalog.py run_name_parts). Roles of
    # the testbed's own objects (namespaces, host ports) are run/ids.py RUN_ROLES.
    link_roles: ClassVar[Mapping[str, str]] = {}
    # A container network: the hand-built backend it wires, which the report's containers
    # section compares it with (None: not a container network)
    baseline: ClassVar[str | None] = None
    # Frames the path can hold while a CPU of it stops (a host stall): a kernel path's receive
    # queue is veth's 256-frame NAPI/XDP ring (VETH_RING_SIZE). A trial that lost frames while a
    # stall of length L hit a CPU of the path, with L x rate > this, is a "host stall" trial
    # (measure/hoststall.py). DPDK backends with longer rings say so.
    ingress_ring_frames: ClassVar[int] = 256
    # True: its processes keep a CPU busy while no frame arrives (a PMD thread polling its ports,
    # DPDK's testers), so its testbed cannot stay up, running, beside another's being measured:
    # a group's kept-up testbeds (measure/rounds.py Bench) freeze its processes between its turns
    idle_polls: ClassVar[bool] = False
    # True: the switch polls a port only some time after its peer connected (OVS-DPDK enables a
    # vhost-user queue once its vhost thread saw the state change: here 0.5-1 s after a trial's
    # first connection, about 20 ms after later ones, longer while a CPU stalls). A trial's
    # drivers then open their ports and wait until ports_polled() before any traffic (engine
    # --go-on-stdin): frames sent earlier queue in the port's ring, then count as the tester's
    # refused sends
    enables_ports_late: ClassVar[bool] = False

    def __init__(self, ctx: SwitchContext) -> None:
        self.ctx = ctx
        self.attachments: dict[str, Attachment] = {}

    @classmethod
    @abstractmethod
    def availability(cls) -> Availability: ...

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of the software behind the backend (kernel, ovs-vswitchd, ...)."""
        return {}

    @classmethod
    def check_options(cls, options: Mapping[str, str]) -> None:
        """UsageError for a backend option value this backend cannot take, before anything is
        built (subclasses check values; keys it does not read are refused by unread_options)."""

    @classmethod
    def check_trial_options(cls, options: Mapping[str, str]) -> None:
        """UsageError when a trial's options lack one this backend cannot run without (shaped:
        its rate, which a campaign adds per point, so check_options cannot ask for it)."""

    @classmethod
    def jumbo_problem(cls, options: Mapping[str, str]) -> str | None:
        """Why this switch's ports cannot take frames above 1518 B (MTU 9000), or None."""
        if cls.port_kind == "dpdk":
            return (f"switch {cls.name}: its DPDK ports (mbufs of 2048 B without scatter, MTU "
                    "1500) carry frames up to 1518 B; use a kernel switch (bridge, ovs) for "
                    "larger frames")
        return f"switch {cls.name}: {cls.jumbo_refused}" if cls.jumbo_refused else None

    @classmethod
    def kernel_tx_problem(cls, options: Mapping[str, str]) -> str | None:
        """Why the in-kernel generator cannot send through this switch with these options (None:
        it can)."""
        if not cls.kernel_tx_ok:
            return (f"switch {cls.name}: its ports give the tester's veth no NAPI, so frames the "
                    "kernel transmits there are dropped uncounted")
        if options.get("nf") == "ovs":
            return "nf=ovs: the chain's OVS system ports give the tester's veth no NAPI"
        return None

    @classmethod
    def unread_options(cls, options: Iterable[str], io: str | None = None) -> str | None:
        """Why this backend cannot take these option keys or this engine io (it would ignore
        them and the result would be labelled with them), or None."""
        unread = sorted(set(options) - set(cls.options_read) - CHAIN_OPTIONS - FUNCTION_OPTIONS)
        if unread:
            reads = ", ".join(sorted(set(cls.options_read) | CHAIN_OPTIONS))
            return (f"switch {cls.name} does not read option {', '.join(unread)} (it would be "
                    f"ignored); its options: {reads}")
        if FUNCTION_OPTIONS & set(options):
            problem = function_problem(cls.name, cls.functions,
                                       options if isinstance(options, dict) else {})
            if problem:
                return problem
        if io is not None and cls.port_kind == "dpdk" and io not in ("auto", "afpacket", "dpdk"):
            return (f"io {io}: switch {cls.name} has DPDK ports, its tester always uses dpdk; "
                    "leave io out for the DPDK switches")
        return None

    @abstractmethod
    def setup(self) -> None: ...

    @abstractmethod
    def attach(self, port: HostPort) -> Attachment: ...

    @abstractmethod
    def forward(self, paths: list[ForwardPath]) -> None: ...

    def adopt(self, key: str, ifname: str, underlay: str = "") -> Attachment:
        """Take the existing interface `ifname` in ctx.netns as a switch port named `key` (the
        wire of scenario remote, or a VXLAN device whose frames travel over `underlay`)."""
        from vswbench.errors import UsageError

        raise UsageError(f"switch {self.name} cannot take a wire between two hosts (scenario "
                         "remote): use bridge or ovs")

    @abstractmethod
    def teardown(self) -> None: ...

    @abstractmethod
    def config_dump(self) -> str:
        """Human-readable configuration (e.g. the OpenFlow table, bridge fdb, tc filters)."""

    @abstractmethod
    def port_counters(self) -> list[PortCounters]:
        """Per switch port counters, including drops."""

    def ports_polled(self) -> bool:
        """Whether the switch polls every attached port now (asked where enables_ports_late)."""
        return True

    def busy_cycles(self) -> BusyCycles | None:
        """Useful cycles, where the switch counts them (OVS PMD processing cycles, testpmd's
        --record-core-cycles); None elsewhere."""
        return None

    def sample(self) -> tuple[list[PortCounters], BusyCycles | None]:
        """Port counters and useful cycles, taken together around a trial (a backend whose two
        come from one query answers both from it)."""
        return self.port_counters(), self.busy_cycles()

    def flow_field(self) -> str | None:
        """The header field the drivers must vary across flows (the engine's --flow-field), when
        the backend's rules depend on it; None: the engine's default (the UDP source port)."""
        return None

    def rule_mechanisms(self) -> list[RuleMechanism]:
        """The ways this backend's rules can be changed while it forwards ([]: none measured)."""
        return []

    def destination_ip(self, default: str) -> str:
        """The IPv4 destination the drivers send to (their --dst-ip); l3 functions send into
        their routing table instead of to the receiver's address."""
        return default

    def stats(self) -> dict[str, object]:
        """The switch's own state worth keeping with a result (e.g. OVS datapath flows and cache
        hits); {} where there is none."""
        return {}

    def forwarding_mode(self) -> str:
        """How the switch's work is placed, recorded with every result (e.g. 'napi-threaded cpu1',
        'pmd cpu1', 'sender-softirq')."""
        return "n/a"

    def tester_cpu_free(self) -> bool:
        """Does the tester's CPU carry none of this switch's work? Then a gap of the generator
        there (its CPU stopped) is not the switch's cost, and the generator skips the departures
        due in it instead of sending them back to back afterwards (engine --gap-us). Elsewhere
        (the switch's work in the sender's softirq, a shaper) a gap can be the switch's own
        work, which the offered load must keep paying: no (the default)."""
        return False


def link_pairs(paths: list[ForwardPath], who: str = "a direct link") -> list[tuple[str, str]]:
    """The distinct unordered port pairs of `paths`, in first-seen order (the way back of a pair
    is the same pair); a port in two pairs is an error: `who` (veth, memif, testpmd's paired
    ports) joins exactly two ports."""
    from vswbench.errors import UsageError

    pairs: list[tuple[str, str]] = []
    peer: dict[str, str] = {}
    for path in paths:
        if path.src == path.dst:
            raise UsageError(f"{who}: path from {path.src} to itself")
        for a, b in ((path.src, path.dst), (path.dst, path.src)):
            if peer.get(a, b) != b:
                raise UsageError(f"{who}: port {a} talks to both {peer[a]} and {b}; {who} joins "
                                 "only two ports")
        if path.src not in peer:
            peer[path.src], peer[path.dst] = path.dst, path.src
            pairs.append((path.src, path.dst))
    return pairs
