"""FIXTURES, NOT MEASUREMENTS: synthetic results stores for the report's tests (unit and browser).

Every number here is invented (in the ranges seen on the project's 2-core VM, so the plots look
like real ones) and shaped exactly like the JSON the methodology commands store (runner.
execute_point: search, sweep, latency, trial, b2b). The campaign is named "fixture" and its spec
text starts with a comment saying so, which the report prints in its spec section: a page built
from these stores can never pass for a measurement.

    write_fixture_store(tmp_path / "results.sqlite")              # every kind, every section
    write_fixture_store(path, variant="trials-only")              # most sections empty
    write_fixture_store(path, variant="empty")                    # a run with no points
    write_fixture_store(path, variant="quick")      # kernel and DPDK switches, baselines, ties
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

from vswbench.campaign.point import Point
from vswbench.campaign.spec import CampaignSpec
from vswbench.campaign.spec import parse_spec
from vswbench.errors import UsageError
from vswbench.results.store import ResultStore

FIXTURE_NOTE = "# FIXTURE: synthetic numbers for the report's tests, not measurements."
FULL_SPEC = FIXTURE_NOTE + """
[campaign]
name = "fixture"

[[study]]
kind = ["search", "latency"]
switch = ["bridge", "ovs", "xdp"]
size = [64, 1518]
fractions = [50, 90]

[[study]]
kind = "sweep"
switch = ["bridge", "ovs"]
size = 64
points = 6

[[study]]
kind = "search"
switch = ["cni-bridge", "docker-bridge"]
size = 64

[[study]]
kind = "search"
switch = "bridge"
scenario = ["p2p-pair", "remote", "remote-vxlan"]
size = 64

[[study]]
kind = "search"
switch = "bridge"
scenario = "pairs"
pairs = [1, 2, 4]
size = 64

[[study]]
kind = "trial"
switch = "bridge"
size = [64, 512]
flows = [1, 16]
rate = "300k"
repetitions = 2

[[study]]
kind = "b2b"
switch = "bridge"
size = 64

[[study]]
kind = "search"
switch = "veth"
scenario = "chain"
chain = [1, 2, 3, 4, 6, 8]
placement = ["s_core", "pbp"]
size = 64

[[study]]
kind = "search"
switch = "ovs"
size = 64
flows = [1, 100, 10000]
options = {flow_table = "exact"}

[[study]]
kind = "search"
switch = "ovs"
size = 64
options = [{clones = 1}, {clones = 2}, {clones = 3}]

[[study]]
kind = "search"
switch = "router"
size = 64
function = "l3"
table_size = [100, 10000, 60000]

[[study]]
kind = "rule-update"
switch = "router"
size = 64
rate = "50k"
rules = [1000, 10000]

[[study]]
kind = ["stream", "rr", "crr"]
switch = ["bridge", "ovs"]
scenario = "rr"
"""
TRIALS_SPEC = FIXTURE_NOTE + """
[campaign]
name = "fixture-trials"

[[study]]
kind = "trial"
switch = "bridge"
size = 64
rate = "100k"
"""
EMPTY_SPEC = FIXTURE_NOTE + """
[campaign]
name = "fixture-empty"

[[study]]
kind = "search"
switch = "bridge"
size = 64
"""
QUICK_SPEC = FIXTURE_NOTE + """
[campaign]
name = "fixture-quick"

[[study]]
kind = ["search", "latency"]
switch = ["veth", "bridge", "tc-bpf", "xdp", "ovs", "memif", "testpmd", "ovs-dpdk"]
size = [64, 1518]
preset = "quick"
fractions = [90]
duration = 1
"""
RUN_ID = "vsbf1x0"
TSC_HZ = 2.596e9
CEILING = {64: 520_000.0, 1518: 450_000.0}
# Invented NDRs (pps) per switch and size; xdp at 64 bytes is generator-bound, xdp 1518 fails.
NDR = {("bridge", 64): 218_000.0, ("bridge", 1518): 190_000.0, ("ovs", 64): 98_000.0,
       ("ovs", 1518): 91_000.0, ("xdp", 64): 520_000.0, ("cni-bridge", 64): 190_000.0,
       ("docker-bridge", 64): 150_000.0}
CNI_NETCONF = {"cniVersion": "1.0.0", "name": "vsbf1x0cni", "plugins": [
    {"type": "bridge", "bridge": "vsbf1x0br", "isGateway": True, "ipMasq": True,
     "hairpinMode": True, "promiscMode": False}]}
REMOTE_NDR = {"p2p-pair": 220_000.0, "remote": 150_000.0, "remote-vxlan": 120_000.0}
PAIRS_NDR = {1: 210_000.0, 2: 300_000.0, 4: 340_000.0}
TRIAL_ACHIEVED = {(64, 1): 231_000.0, (64, 16): 252_000.0, (512, 1): 214_000.0,
                  (512, 16): 226_000.0}
LATENCY_MEDIAN_US = {"bridge": 22.0, "ovs": 41.0, "xdp": 15.0}
# The "quick" variant: kernel and DPDK switches with their baselines and ceilings (pps).
QUICK_CEILING = {("kernel", 64): 870_000.0, ("kernel", 1518): 400_000.0,
                 ("DPDK", 64): 10_700_000.0, ("DPDK", 1518): 5_900_000.0}
QUICK_NDR = {("veth", 64): 820_000.0, ("xdp", 64): 690_000.0, ("tc-bpf", 64): 688_000.0,
             ("bridge", 64): 510_000.0, ("ovs", 64): 160_000.0,
             ("veth", 1518): 400_000.0, ("xdp", 1518): 400_000.0, ("tc-bpf", 1518): 400_000.0,
             ("bridge", 1518): 300_000.0, ("ovs", 1518): 90_000.0,
             ("memif", 64): 10_700_000.0, ("testpmd", 64): 6_100_000.0,
             ("ovs-dpdk", 64): 4_200_000.0, ("memif", 1518): 5_900_000.0,
             ("testpmd", 1518): 3_000_000.0, ("ovs-dpdk", 1518): 2_000_000.0}
QUICK_DPDK = ("memif", "testpmd", "ovs-dpdk")
QUICK_GOALS = [{"name": "NDR", "loss_ratio": 0.0, "exceed_ratio": 0.5, "relative_width": 0.02,
                "initial_trial_duration": 0.25, "final_trial_duration": 0.25,
                "duration_sum": 2.0},
               {"name": "PDR", "loss_ratio": 0.005, "exceed_ratio": 0.5, "relative_width": 0.02,
                "initial_trial_duration": 0.25, "final_trial_duration": 0.25,
                "duration_sum": 2.0}]
# OVS studies (Emmerich et al., Fig. 6 and 7): NDR per flow count (flow_table=exact), with the
# datapath flows OVS held, and per number of output ports (clones).
FLOWS_NDR = {1: 97_000.0, 100: 95_000.0, 10000: 82_000.0}
CLONES_NDR = {1: 98_000.0, 2: 69_000.0, 3: 52_000.0}
TABLE_NDR = {100: 240_000.0, 10000: 221_000.0, 60000: 204_000.0}
UPDATE_SECONDS = {1000: (0.034, 0.027), 10000: (0.32, 0.22)}   # route batch: install, remove


def fixture_fingerprint() -> dict[str, Any]:
    """A sysinfo.Fingerprint's JSON as the VM would give it (no isolated cores: one warning)."""
    return {"kernel_release": "6.18.0-fixture", "kernel_version": "#1 SMP PREEMPT_DYNAMIC",
            "cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro", "cpu_model": "AMD EPYC (fixture)",
            "logical_cpus": 2, "smt_active": "n/a", "governors": {"cpu0": "n/a", "cpu1": "n/a"},
            "turbo": "n/a", "thp_enabled": "madvise", "thp_defrag": "madvise",
            "hugepages_total": 0, "hugepages_free": 0, "hugepage_size_kb": 2048,
            "isolated_cpus": "", "nohz_full": "", "irqbalance_running": False, "tsc_hz": TSC_HZ,
            "vswbench_version": "0.1.0", "python_version": "3.11.2", "machine": "x86_64",
            "offloads": {"vsbf1x0a0": {"netns": "vsbf1x0a", "error": None, "features": {
                "rx-checksumming": "on", "tx-checksumming": "off", "scatter-gather": "on",
                "tcp-segmentation-offload": "off", "generic-segmentation-offload": "on",
                "generic-receive-offload": "on"}}},
            "switch_versions": {"ovs": {"ovs-vswitchd": "3.1.0"}, "bridge": {"kernel": "6.18"}},
            "hostname": "fixture-host", "virtualization": "vm (KVM fixture)"}


# -- latency samples and the engine's histogram -------------------------------------------------
def hist_bucket(v_ns: int) -> tuple[int, int]:
    """[low, high] of the engine's log-linear bucket holding v (engine/src/hist.c: exact below
    256 ns, then 128 buckets per power of two)."""
    if v_ns < 256:
        return v_ns, v_ns
    e = v_ns.bit_length() - 1 - 7
    low = (v_ns >> e) << e
    return low, low + (1 << e) - 1


def latency_samples(median_us: float, sigma: float = 0.35, n: int = 2000) -> list[int]:
    """Deterministic log-normal quantiles in ns plus a 0.2 % preemption tail near 1-3 ms."""
    unit = NormalDist()
    body = [median_us * 1000 * math.exp(sigma * unit.inv_cdf((i + 0.5) / n)) for i in range(n)]
    tail = [1_000_000 + 500_000 * i for i in range(max(1, n // 500))]
    return sorted(int(v) for v in body + tail)


def summarize(samples_ns: list[int]) -> tuple[dict[str, float], list[list[float]]]:
    """(latency_us summary, histogram [[low_ns, high_ns, count], ...]) of samples."""
    def q(p: float) -> float:
        return samples_ns[min(len(samples_ns) - 1, int(math.ceil(p * len(samples_ns))) - 1)] / 1e3
    summary = {"min": samples_ns[0] / 1e3, "p50": q(0.5), "p90": q(0.9), "p99": q(0.99),
               "p999": q(0.999), "max": samples_ns[-1] / 1e3,
               "mean": round(sum(samples_ns) / len(samples_ns) / 1e3, 3)}
    counts: dict[tuple[int, int], int] = {}
    for v in samples_ns:
        b = hist_bucket(v)
        counts[b] = counts.get(b, 0) + 1
    return summary, [[float(lo), float(hi), c] for (lo, hi), c in sorted(counts.items())]


# -- result shapes -----------------------------------------------------------------------------
def _env(switch: str, scenario: str, size: int, point: Point) -> dict[str, Any]:
    return {"switch": switch, "scenario": scenario, "frame_size": size, "io": "afpacket",
            "flows": point.flows, "burst": point.burst, "forwarding_mode": "napi-threaded",
            "placement": {"tester_cpu": 0, "switch_cpu": 1, "nf_cpus": [1]},
            "switch_versions": {"kernel": "6.18.0-fixture"},
            "session": "control", "run_id": RUN_ID, "point": point.params(),
            "label": point.label}


def _trial_json(load: float, achieved: float, cpp: float, lat_us: float) -> dict[str, Any]:
    tx = int(load)
    rx = int(min(load, achieved))
    lat, _ = summarize(latency_samples(lat_us, n=400))
    return {"intended_pps": load, "intended_s": 1.0, "intended_count": tx, "tx_frames": tx,
            "rx_frames": rx, "lost": tx - rx, "unsent": 0, "loss_ratio": (tx - rx) / tx,
            "tx_pps": load, "achieved_pps": float(rx), "latency_us": lat,
            "cycles_per_packet": cpp, "counters_agree": True, "overhead_s": 0.05, "wall_s": 1.05}


def search_json(point: Point, ndr: float, *, generator_bound: bool = False,
                cv: float | None = None) -> dict[str, Any]:
    size = int(point.size)
    ceiling = CEILING.get(size, 500_000.0)
    loads = [ndr * f for f in (0.5, 0.8, 0.95, 1.0, 1.02, 1.1)]
    trials = [_trial_json(x, min(x, ndr), round(TSC_HZ / ndr * (1.2 - 0.2 * x / ndr)), 20.0)
              for x in loads if not (generator_bound and x > ndr)]
    data = {**_env(point.switch, point.scenario, size, point), "preset": "fast",
            "algorithm": "MLRsearch", "ndr_pps": ndr, "pdr_pps": round(ndr * 1.04, 1),
            "lower_bound_pps": ndr, "upper_bound_pps": round(ndr * 1.005, 1),
            "generator_bound": generator_bound, "generator_ceiling_pps": ceiling,
            "headroom": round(ndr / ceiling, 4), "goals": [], "min_load_pps": 1000.0,
            "max_load_pps": ceiling, "trials": trials, "trial_count": len(trials),
            "trial_seconds": 21.0, "wall_seconds": 23.4, "overhead_per_trial": {"mean_s": 0.05},
            "notes": [], "ndr": f"{ndr:,.0f} pps"}
    if cv is not None:
        data["statistics"] = {"ndr_pps": {"n": 5, "median": ndr, "cv": cv},
                              "pdr_pps": {"n": 5, "median": ndr * 1.04, "cv": cv / 2}}
        data["repetitions"] = 5
    return data


def latency_json(point: Point, ndr: float, median_us: float) -> dict[str, Any]:
    pts = []
    for f in point.fractions or (0.9,):
        lat, hist = summarize(latency_samples(median_us * (1 + 2 * f * f)))
        pts.append({"offered_pps": round(ndr * f, 1), "fraction_of_ndr": f,
                    **_trial_json(ndr * f, ndr * f, 8000.0, 20.0), "latency_us": lat,
                    "latency_kind": "one-way", "drops": {}, "cpu": {}, "histogram": hist})
    return {**_env(point.switch, point.scenario, int(point.size), point), "ndr_pps": ndr,
            "search": None, "points": pts}


def sweep_json(point: Point, peak: float, median_us: float) -> dict[str, Any]:
    ceiling = CEILING[64]
    pts = []
    for i in range(1, (point.points or 6) + 1):
        offered = round(ceiling * i / (point.points or 6), 1)
        achieved = min(offered, peak) * (0.97 if offered > 1.3 * peak else 1.0)
        lat, hist = summarize(latency_samples(median_us * (1 + 8 * max(0.0, offered / peak - 0.8)),
                                              n=600))
        pts.append({"offered_pps": offered, "fraction_of_ndr": None,
                    **_trial_json(offered, achieved, 9000.0 - 2000 * min(1.0, offered / peak),
                                  median_us),
                    "latency_us": lat, "latency_kind": "one-way", "drops": {}, "cpu": {},
                    "histogram": hist})
    clean = [p["offered_pps"] for p in pts if p["lost"] == 0]
    best = max(pts, key=lambda p: p["achieved_pps"])
    return {**_env(point.switch, point.scenario, 64, point), "points": pts,
            "saturation": {"highest_lossless_offered_pps": max(clean, default=None),
                           "peak_achieved_pps": best["achieved_pps"],
                           "peak_at_offered_pps": best["offered_pps"],
                           "falls_beyond_peak": pts[-1]["achieved_pps"] < 0.95 * best[
                               "achieved_pps"]},
            "overhead_per_trial": {"mean_s": 0.05}}


def trial_json(point: Point, achieved: float, diagnostics: bool = False) -> dict[str, Any]:
    """A trial's result; with `diagnostics` also interrupt rates and, for the first 64-byte
    single-flow trial, a perf profile (the full store's profiles and diagnostics sections)."""
    rate = float(point.rate or 100_000.0)
    tx = int(rate * 5)
    rx = int(min(rate, achieved) * 5)
    lat, hist = summarize(latency_samples(25.0, n=500))
    return {**_env(point.switch, point.scenario, int(point.size), point),
            "offered_pps": rate, "tx_pps": rate, "achieved_pps": rx / 5, "tx_frames": tx,
            "rx_frames": rx, "lost": tx - rx, "loss_ratio": (tx - rx) / tx, "duration_s": 5.0,
            "latency_kind": "one-way", "latency_us": lat, "histogram": hist,
            "cycles_per_packet": 8800.0, "tsc_hz": TSC_HZ, "counters_agree": True,
            "warnings": [],
            **({} if not diagnostics else {"irq_rates": {
                "0": {"net_rx": rate * 0.03, "net_tx": 0.0, "interrupts": 1800.0},
                          "1": {"net_rx": rate * 0.07, "net_tx": 0.0,
                                "interrupts": 9000.0 + achieved * 0.01}}}),
            **({"profile": profile_json()} if diagnostics and point.repetition == 0
               and point.flows == 1 and point.size == 64 else {})}


PROFILE_DATA = Path(__file__).parent / "data" / "profile"


def profile_json() -> dict[str, Any]:
    """A trial's --profile record built from folded stacks recorded here (a bridge at 200 kpps),
    with an invented cross-check (one core flagged)."""
    from vswbench.host.perf import summarize as summarize_profile
    from vswbench.host.profile import parse_folded

    cores = {cpu: parse_folded((PROFILE_DATA / f"bridge-200k-cpu{cpu}.folded").read_text()
                               .splitlines(), cpu) for cpu in (0, 1)}
    prof = summarize_profile(cores, [0, 1], 5.0).to_json()
    prof["cpu_check"] = {"per_core": {
        "0": {"scheduler_busy": 0.87, "scheduler_softirq": 0.0, "perf_busy": 0.83,
              "differ": False},
        "1": {"scheduler_busy": 0.66, "scheduler_softirq": 0.12, "perf_busy": 0.93,
              "differ": True}}, "cycles_per_packet_scheduler": 24700.0,
        "cycles_per_packet_perf": 29300.0, "differ": True}
    return prof


def b2b_json(point: Point) -> dict[str, Any]:
    return {**_env(point.switch, point.scenario, 64, point), "method": "back-to-back",
            "trials": 50, "max_frames": 100_000, "min_frames": 2, "resolution": 0.01,
            "frame_size": 64, "searches_run": 50, "burst_lengths": [3100, 3200, 3150],
            "benchmark_frames": 3150.0, "statistics": {"n": 50, "mean": 3150.0, "cv": 0.09},
            "offered_pps": 480_000.0, "max_theoretical_pps": 14_880_952.0,
            "max_rate_source": "tester", "throughput_pps": 218_000.0, "meaningful": True,
            "implied_buffer_s": 0.000212, "corrected_buffer_s": 0.000209, "unbounded": False,
            "burst_trials": 600, "notes": [], "warnings": [], "searches": []}


CHAIN_COSTS = (6000.0, 4000.0, 1500.0, 2500.0)   # C_base, C_nf, C_x, C_sw (models/chain_cost.py)
CHAIN_WIGGLE = (0.03, -0.02, 0.01, -0.03, 0.02, -0.01)


def chain_search_json(point: Point) -> dict[str, Any]:
    """A chain:N search placed as execute.placement_cpus places it, its NDR invented from the chain
    cost model with invented costs and a few per cent of wiggle."""
    from vswbench.campaign.execute import placement_cpus
    from vswbench.models.chain_cost import CostModel
    from vswbench.models.chain_cost import Parameter
    from vswbench.models.chain_layout import PARAMS
    from vswbench.models.chain_layout import Layout

    n = 1 if point.scenario == "pvp" else int(point.scenario.split(":")[1])
    tester, switch, cpus = placement_cpus(point.placement, n)
    assert tester is not None and switch is not None and cpus, "fixtures place every chain"
    cycle = [int(c) for c in cpus.split(",")]
    nfs = [cycle[i % len(cycle)] for i in range(n)]
    costs = tuple(Parameter(name, c, None, None) for name, c in zip(PARAMS, CHAIN_COSTS))
    model = CostModel("veth", 64, True, TSC_HZ, "tsc", costs, "ndr", (), 0, None)
    ndr = model.predict_layout(Layout(tester, tuple(nfs), switch)).throughput_pps or 0.0
    ndr = round(ndr * (1 + CHAIN_WIGGLE[n % len(CHAIN_WIGGLE)]), 1)
    return {**search_json(point, ndr), "placement": {"tester_cpu": tester, "switch_cpu": switch,
                                                     "nf_cpus": nfs}}


def rule_update_json(point: Point) -> dict[str, Any]:
    """A rule-update point as runner._rule_update stores it (timings, quiet vs during)."""
    n = point.rules or 1000
    install, remove = UPDATE_SECONDS[n]
    timing = {"mechanism": "ip -batch routes", "rules": n, "install_s": [install] * 3,
              "remove_s": [remove] * 3, "install_median_s": install, "remove_median_s": remove}
    phases = [{"name": name, "offered_pps": 50_000.0, "tx_frames": 250_000, "lost": lost,
               "loss_ratio": lost / 250_000, "updates": updates,
               "latency_us": {"min": 6.0, "p50": p50, "p90": p50 * 2, "p99": p50 * 5,
                              "p999": p50 * 9, "max": p50 * 20}, "update_median_s": None}
              for name, lost, updates, p50 in (("quiet", 0, 0, 18.0),
                                               ("during ip -batch routes", 12, 10, 21.0))]
    return {**_env("router", "p2p", 64, point), "load_pps": 50_000.0, "update_rules": n,
            "update_rate": 2.0, "timings": [timing], "during": {"ip -batch routes": phases}}


SOCKET_FIGURES = {"bridge": (3.2, 9000.0, 2700.0), "ovs": (0.8, 5000.0, 1700.0)}


def socket_json(point: Any) -> dict[str, Any]:
    """A stream, rr or crr point as measure/sockets.py stores it (invented figures)."""
    gbps, tps, cps = SOCKET_FIGURES[point.switch]
    rate = {"stream": None, "rr": tps, "crr": cps}[point.kind]
    return {"kind": point.kind, "switch": point.switch, "scenario": point.scenario,
            "proto": "tcp", "size": point.size, "flows": 1, "pairs": 1, "mtu": 1500,
            "offloads": "default", "service": False, "duration_s": 5.0,
            "goodput_gbps": gbps if point.kind == "stream" else None, "udp_loss_ratio": None,
            "retransmits": 12, "transactions_per_s": rate,
            "connections_per_s": cps if point.kind == "crr" else None,
            "latency_us": {} if rate is None else {"p50": 1e6 / rate, "p90": 2e6 / rate,
                                                    "p99": 4e6 / rate, "p999": 9e6 / rate},
            "histogram": [], "busy_cpu_s": 9.0, "cpu_s_per_gb": 4.5,
            "cycles_per_transaction": None if rate is None else 2.6e9 * 1.8 / rate}


# -- the stores --------------------------------------------------------------------------------
def _full_search(p: Point, size: int) -> dict[str, Any] | None:
    """A search point's result in the full store (None: the fixture's failed point)."""
    options = dict(p.options)
    if p.switch == "veth":
        return chain_search_json(p)
    if "flow_table" in options:
        return {**search_json(p, FLOWS_NDR[p.flows]),
                "switch_stats": {"datapath_flows": p.flows, "exact_rules": p.flows}}
    if "table_size" in options:
        return search_json(p, TABLE_NDR[int(options["table_size"])])
    if "clones" in options:
        return search_json(p, CLONES_NDR[int(options["clones"])])
    if p.scenario in REMOTE_NDR:
        return search_json(p, REMOTE_NDR[p.scenario])
    if p.scenario.startswith("pairs:"):
        return search_json(p, PAIRS_NDR[int(p.scenario[6:])])
    if (p.switch, size) in NDR:
        result = search_json(p, NDR[(p.switch, size)],
                             generator_bound=(p.switch, size) == ("xdp", 64),
                             cv=0.08 if (p.switch, size) == ("bridge", 64) else None)
        if p.switch == "cni-bridge":
            result["switch_stats"] = {"cni_plugins": ["bridge"], "cni_netconf": CNI_NETCONF}
        return result
    return None


def _full_result(p: Point) -> dict[str, Any] | None:
    """A point's result in the full store, by its kind (None: the fixture's failed point)."""
    size = p.size if isinstance(p.size, int) else 64
    if p.kind == "search":
        return _full_search(p, size)
    if p.kind == "rule-update":
        return rule_update_json(p)
    if p.kind in ("stream", "rr", "crr"):
        return socket_json(p)
    if p.kind == "latency" and (p.switch, size) in NDR:
        return latency_json(p, NDR[(p.switch, size)], LATENCY_MEDIAN_US[p.switch])
    if p.kind == "sweep":
        return sweep_json(p, NDR[(p.switch, 64)] * 1.06, LATENCY_MEDIAN_US[p.switch])
    if p.kind == "trial":
        return trial_json(p, TRIAL_ACHIEVED[(size, p.flows)] * (1 + 0.02 * p.repetition),
                          diagnostics=True)
    if p.kind == "b2b":
        return b2b_json(p)
    return None


def _record_full(store: ResultStore, spec: CampaignSpec) -> None:
    for p in spec.points():
        result = _full_result(p)
        if result is None:
            store.record_point(RUN_ID, p, None, "failed",
                               "testbed: xdp_redirect did not attach (fixture failure)")
        else:
            store.record_point(RUN_ID, p, result, "done")


def _record_quick(store: ResultStore, spec: CampaignSpec) -> None:
    """Every switch at 64 and 1518 B, a search and a latency point each: xdp and tc-bpf tied at
    64 B (their search ranges overlap) and at the ceiling at 1518 B, veth and memif baselines."""
    for p in spec.points():
        size = int(p.size)
        stack = "DPDK" if p.switch in QUICK_DPDK else "kernel"
        ceiling = QUICK_CEILING[(stack, size)]
        ndr = QUICK_NDR[(p.switch, size)]
        bound = ndr >= ceiling
        env = {"io": "dpdk" if stack == "DPDK" else "afpacket",
               "forwarding_mode": "pmd cpu1" if stack == "DPDK" else "napi-threaded cpu1",
               "switch_versions": {"ovs-vswitchd": "3.1.0"} if "ovs" in p.switch else
               {"kernel": "6.18.0-fixture"}}
        if p.kind == "search":
            result = {**search_json(p, ndr, generator_bound=bound), **env, "preset": "quick",
                      "goals": QUICK_GOALS, "generator_ceiling_pps": ceiling}
        else:
            result = {**latency_json(p, ndr, LATENCY_MEDIAN_US.get(p.switch, 20.0)), **env}
        store.record_point(RUN_ID, p, result, "done", started="2026-11-24T08:17:51+0000")


def write_fixture_store(path: str | Path, variant: str = "full") -> Path:
    """Write a store of invented results (see the module's docstring) and return its path.
    Variants: "full" (every kind; every report section has data), "trials-only" (one trial
    point: every plot section is empty), "empty" (a run without points), "quick" (shaped like
    the quick suite: kernel and DPDK switches, 64 and 1518 B, baselines, ties)."""
    specs = {"full": FULL_SPEC, "trials-only": TRIALS_SPEC, "empty": EMPTY_SPEC,
             "quick": QUICK_SPEC}
    if variant not in specs:
        raise UsageError(f"fixture variant {variant!r}: one of {', '.join(specs)}")
    spec = parse_spec(specs[variant], source="<fixture>")
    path = Path(path)
    with ResultStore(path) as store:
        store.begin_run(RUN_ID, spec, fixture_fingerprint())
        if variant == "full":
            _record_full(store, spec)
        elif variant == "quick":
            _record_quick(store, spec)
        elif variant == "trials-only":
            (point,) = spec.points()
            store.record_point(RUN_ID, point, trial_json(point, 99_000.0), "done")
        store.end_run(RUN_ID, "done")
    return path
