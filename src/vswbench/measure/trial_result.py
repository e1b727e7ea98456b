"""One trial's result, the one struct written and read (issue 45, part 1): `TrialResult` and its
`CounterCheck`s, as measure/trial.py measures them; `to_json` is what the results store keeps (a
trial point's result; search, sweep and latency trials store session.SessionTrial's brief of it
with their own annotation keys), `from_json` reads any of those stored dicts back.

`from_json` is lenient, for older stores and the briefs: a key that is missing, or whose value has
not the field's type, reads as the field's default (numbers: finite, not bool; int fields: ints).
`read_trial` also says which fields the stored dict held (results/record.py's LoadPoint keeps
"not stored" apart from the default). For a TrialResult t,
`TrialResult.from_json(t.to_json()).to_json() == t.to_json()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from typing import Any

from vswbench.engine.records import LatencySummary
from vswbench.engine.records import stored_latency
from vswbench.engine.stalls import TrialStalls
from vswbench.host.cpustat import CoreUsage
from vswbench.jsonvalues import count
from vswbench.jsonvalues import number
from vswbench.measure.profile_record import PerfProfile
from vswbench.units import STD_MTU

NO_LATENCY = LatencySummary(None, None, None, None, None, None, None, None, None, 0)


@dataclass
class CounterCheck:
    port: str
    counter: str        # "tx_packets" / "rx_packets"
    kernel: int
    engine: int

    @property
    def ok(self) -> bool:
        return self.kernel == self.engine


@dataclass
class TrialResult:
    switch: str
    scenario: str
    frame_size: int | str          # bytes, or the IMIX text
    offered_pps: float
    tx_pps: float
    achieved_pps: float
    tx_frames: int
    rx_frames: int
    lost: int
    loss_ratio: float
    duration_s: float
    latency_kind: str | None
    latency_us: dict[str, float | None]
    histogram: list[list[float]]
    cpu: dict[str, dict[str, float]]
    cycles_per_packet: float | None
    cycles_per_packet_by_process: dict[str, float | None]
    process_cpu_s: dict[str, float | None]
    tsc_hz: float
    drops: dict[str, int]
    kernel_counters: dict[str, dict[str, int]]
    counter_checks: list[CounterCheck]
    switch_ports: list[dict[str, Any]]
    forwarding_mode: str
    placement: dict[str, Any]
    switch_versions: dict[str, str]
    config_dump: str
    spec: dict[str, Any]
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # polling switches: cycles per packet on bursts that carried frames (the rest is idle polling)
    switch_useful_cycles_per_packet: float | None = None
    # chains: how the network functions forward (switches/chain/nf.py: fwd, router, ovs; None without
    # NFs) and per NF its frames in and out and its drops (chain_nf.ElementCounters)
    nf_kind: str | None = None
    nf_counters: dict[str, dict[str, int]] = field(default_factory=dict)
    # flow churn (engine/src/churn.h), None without: new flows/s, seconds each, flows active on
    # average, and the distinct flows the senders started (about arrival x (duration + life))
    churn: dict[str, float] | None = None
    # per core NET_RX / NET_TX softirqs and interrupts per second (host/irqstat.py)
    irq_rates: dict[str, dict[str, float]] = field(default_factory=dict)
    # --profile: perf samples per core (host/perf.py TrialProfile) and the CPU cross-check
    profile: dict[str, Any] | None = None
    # RFC 3550 jitter and RFC 3393 IPDV percentiles as the engine measured them (merge_delay_variation)
    jitter_us: float | None = None
    ipdv_us: dict[str, float] | None = None
    # host stalls during the trial, per CPU of the path (engine/stalls.py; None: no session
    # monitor), and why the trial is a host-stall trial (measure/hoststall.py; None: it is not)
    stalls: TrialStalls | None = None
    host_stall: str | None = None
    # the generators' own gaps (a stall of the tester's CPU longer than the engine's --gap-us):
    # departures skipped, never sent (so neither offered nor lost), how many gaps, the longest
    tx_skipped: int = 0
    tester_gaps: int = 0
    tester_gap_max_us: float | None = None
    # tester-dut: `cpu` and cycles_per_packet are the DUT's cores only; the tester's cores here
    tester_cpu: dict[str, dict[str, float]] | None = None
    # the links' MTU (1500; frames above 1518 B: 9000 or more, set on every link of the testbed)
    # and the links raised to it ({netns/ifname: mtu}; empty at 1500)
    mtu: int = STD_MTU
    mtu_links: dict[str, int] = field(default_factory=dict)
    # pvp-vm, chain-vm:N: per VM network function its accelerator (tcg, kvm), mechanism, label
    # and the frames its guest counted (vm_figures); empty without VMs
    vm: dict[str, Any] = field(default_factory=dict)

    @property
    def counters_agree(self) -> bool:
        return all(c.ok for c in self.counter_checks)

    @property
    def latency(self) -> LatencySummary:
        """latency_us as the engine's LatencySummary (engine/records.stored_latency: a value
        missing or not a finite number is None)."""
        return stored_latency(self.latency_us) or NO_LATENCY

    @property
    def core_usage(self) -> dict[str, CoreUsage]:
        """cpu as host/cpustat.CoreUsage records, keyed as stored (the CPU's number as text)."""
        return {cpu: CoreUsage.from_json(int(cpu) if cpu.isdigit() else -1, usage)
                for cpu, usage in self.cpu.items()}

    @property
    def perf_profile(self) -> PerfProfile | None:
        """profile as a typed PerfProfile (measure/profile_record.py); None without one."""
        return PerfProfile.from_json(self.profile) if self.profile else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["counters_agree"] = self.counters_agree
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialResult:
        """A stored trial dict read back (see the module's docstring); other keys are ignored."""
        return read_trial(data)[0]



# -- reading a stored trial ------------------------------------------------------------------------
def _numbers(value: Any) -> dict[str, Any]:
    """A dict's finite numeric values (as stored: ints stay ints), other values left out."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if number(v) is not None}


def _nested(value: Any) -> dict[str, dict[str, Any]]:
    """{name: {key: number}}: the inner dicts' numbers; entries not a dict left out."""
    if not isinstance(value, dict):
        return {}
    return {str(k): _numbers(v) for k, v in value.items() if isinstance(v, dict)}


def _check(value: Any) -> CounterCheck | None:
    if not isinstance(value, dict):
        return None
    kernel, engine = count(value.get("kernel")), count(value.get("engine"))
    if kernel is None or engine is None:
        return None
    return CounterCheck(str(value.get("port", "")), str(value.get("counter", "")), kernel, engine)


def _histogram(value: Any) -> list[list[float]]:
    return [list(b) for b in value if isinstance(b, (list, tuple))
            and all(number(x) is not None for x in b)] if isinstance(value, list) else []


# how each field of TrialResult reads from its stored value: None = not of the field's type
_FLOATS = ("offered_pps", "tx_pps", "achieved_pps", "loss_ratio", "duration_s", "tsc_hz")
_OPTIONAL_FLOATS = ("cycles_per_packet", "switch_useful_cycles_per_packet", "jitter_us",
                    "tester_gap_max_us")
_INTS = ("tx_frames", "rx_frames", "lost", "tx_skipped", "tester_gaps", "mtu")
_TEXTS = ("switch", "scenario", "forwarding_mode", "config_dump")
_OPTIONAL_TEXTS = ("latency_kind", "nf_kind", "host_stall")
_DICTS = ("placement", "spec", "engines", "vm")     # kept as stored
_NUMBER_DICTS = ("drops", "mtu_links")
_NESTED = ("cpu", "kernel_counters", "nf_counters", "irq_rates", "tester_cpu")


def _read(name: str, value: Any) -> Any:
    """The stored `value` of field `name` as the field's type, or None when it is not one."""
    if name in _FLOATS or name in _OPTIONAL_FLOATS:
        return number(value)
    if name in _INTS:
        return count(value)
    if name in _TEXTS or name in _OPTIONAL_TEXTS:
        return value if isinstance(value, str) else None
    if not isinstance(value, (dict, list)):
        return _frame_size(value) if name == "frame_size" else None
    return _read_container(name, value)


def _frame_size(value: Any) -> int | str | None:
    return value if isinstance(value, str) else count(value)


def _read_container(name: str, value: dict[str, Any] | list[Any]) -> Any:
    return _read_list(name, value) if isinstance(value, list) else _read_dict(name, value)


def _read_list(name: str, value: list[Any]) -> Any:
    if name == "histogram":
        return _histogram(value)
    if name == "counter_checks":
        return [c for c in (_check(x) for x in value) if c is not None]
    if name == "switch_ports":
        return [dict(x) for x in value if isinstance(x, dict)]
    if name == "warnings":
        return [str(x) for x in value]
    return None


def _read_dict(name: str, value: dict[str, Any]) -> Any:
    if name in _DICTS or name == "profile":
        return dict(value)
    if name == "switch_versions":
        return {str(k): str(v) for k, v in value.items()}
    if name in _NUMBER_DICTS:
        return _numbers(value)
    if name in _NESTED:
        return _nested(value)
    if name == "stalls":
        return TrialStalls.from_json(value)
    if name == "latency_us":    # as stored (a count stays an int), a value not a number: None
        return {str(k): v if number(v) is not None else None for k, v in value.items()}
    if name in ("cycles_per_packet_by_process", "process_cpu_s"):
        return {str(k): number(v) for k, v in value.items()}   # a value not a number: None
    if name in ("ipdv_us", "churn"):
        return {k: float(v) for k, v in _numbers(value).items()}
    return None


# a required field's value when the stored dict lacks it (an older store, a search trial's brief);
# the fields with a dataclass default take that
_REQUIRED_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(_FLOATS, 0.0), **dict.fromkeys(_TEXTS, ""), "frame_size": 0,
    "tx_frames": 0, "rx_frames": 0, "lost": 0, "latency_kind": None, "cycles_per_packet": None}
_EMPTY_LISTS = ("histogram", "counter_checks", "switch_ports")
_EMPTY_DICTS = ("latency_us", "cpu", "cycles_per_packet_by_process", "process_cpu_s", "drops",
                "kernel_counters", "placement", "switch_versions", "spec")


def read_trial(data: Mapping[str, Any]) -> tuple[TrialResult, frozenset[str]]:
    """A stored trial dict as a TrialResult, and the names of the fields it held (with a value
    of the field's type); every other field has its default."""
    values: dict[str, Any] = {}
    for f in fields(TrialResult):
        value = _read(f.name, data[f.name]) if f.name in data else None
        if value is not None:
            values[f.name] = value
    held = frozenset(values)
    for name, default in _REQUIRED_DEFAULTS.items():
        values.setdefault(name, default)
    for name in _EMPTY_LISTS:
        values.setdefault(name, [])
    for name in _EMPTY_DICTS:
        values.setdefault(name, {})
    return TrialResult(**values), held
