"""Chains whose network functions are kernel routers or OVS bridges (`--switch veth --option
nf=router|ovs|ovs-afxdp`): a short `vswbench trial` delivers (>= 99 % at 5 kpps), no other frame moves (no
ARP, no ICMP, nothing against the stream), it reports per-element counters, and leaves nothing
behind; killed with SIGKILL, `vswbench clean --prefix <run id>`
removes everything, the OVS daemons included (their PIDs are in the run state).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.integration_helpers import processes_mentioning
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.run.state import state_dir
from vswbench.switches.catalog import all_switches

VSWBENCH = Path(sys.executable).parent / "vswbench"
RATE = 5_000
DURATION = 1.0


def _needs(nf: str) -> None:
    avail = all_switches()["veth"].availability()
    if not avail.ok:
        pytest.skip(f"veth: {avail.reason}")
    from vswbench.switches.catalog import nf_unavailable as unavailable

    why = unavailable({"nf": nf})
    if why:
        pytest.skip(why)


def _run_id(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("run vsb"):
            return line.split()[1].rstrip(":")
    raise AssertionError(f"no run id in the output:\n{stderr}")


def _leftovers(run_id: str) -> dict[str, list[str]]:
    return {"namespaces": [ns for ns in list_namespaces() if ns.startswith(run_id)],
            "links": [str(link["ifname"]) for link in ip_json("link", "show")
                      if str(link["ifname"]).startswith(run_id)],
            "processes": processes_mentioning(run_id),
            "temp dirs": [str(p) for p in Path("/tmp").glob(f"vsb-{run_id}*")],
            "state file": [str(p) for p in state_dir().glob(f"{run_id}*")]}


def _trial(nf: str, scenario: str) -> tuple[str, dict, str]:
    """One short trial: (run id, its JSON result, a summary for assertion messages)."""
    proc = subprocess.run([str(VSWBENCH), "trial", "--switch", "veth", "--scenario", scenario,
                           "--option", f"nf={nf}", "--rate", str(RATE), "--duration",
                           str(DURATION), "--warmup", "0.3", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    run_id = _run_id(proc.stderr)
    r = json.loads(proc.stdout)
    stalls = r.get("stalls") or {}
    longest = {cpu: c.get("longest_us") for cpu, c in (stalls.get("cpus") or {}).items()}
    summary = (f"{nf} {scenario}: tx {r['tx_frames']} rx {r['rx_frames']} "
               f"elements {r['nf_counters']} mode {r['forwarding_mode']} host stall "
               f"{r.get('host_stall')} longest stall per CPU (us) {longest} "
               f"process CPU (s) {r.get('process_cpu_s')}")
    assert r["tx_frames"] + r["tx_skipped"] >= 0.99 * RATE * DURATION, summary  # skipped: gaps
    assert r["counters_agree"], summary
    return run_id, r, summary


@pytest.mark.parametrize("scenario", ["chain:1", "chain:3"])
@pytest.mark.parametrize("nf", ["router", "ovs", "ovs-afxdp"])
def test_chain_trial_delivers_and_cleans_up(root, engine, nf, scenario):
    _needs(nf)
    run_id, r, summary = _trial(nf, scenario)
    if r["rx_frames"] < 0.99 * r["tx_frames"]:
        # Once, in CI, OVS chain:3 lost 266 of 5,000 frames, all inside nf1: the signature of
        # ovs-vswitchd kept off its CPU for ~0.1 s (SIGSTOP of it for 0.1 s mid-trial: 276
        # frames, all nf1's lost_inside; its socket buffer holds ~50 ms at 5 kpps), while 30 s
        # of undisturbed traffic, a busy loop beside it on its CPU and 30 namespaces deleted
        # meanwhile lost none. The loss must be accounted for, element by element; then the
        # trial runs once more, and that one must deliver.
        elements = list(r["nf_counters"].values())
        accounted = sum(e["dropped"] for e in elements) + elements[-1]["output_dropped"]
        assert accounted >= r["lost"], f"loss not accounted for by the elements: {summary}"
        left = _leftovers(run_id)
        assert not any(left.values()), f"left behind by run {run_id}: {left}"
        run_id, r, summary = _trial(nf, scenario)
    assert r["rx_frames"] >= 0.99 * r["tx_frames"], summary
    n = int(scenario.split(":")[1])
    assert r["nf_kind"] == nf
    assert sorted(r["nf_counters"]) == [f"nf{i}" for i in range(1, n + 1)], summary
    first, last = r["nf_counters"]["nf1"], r["nf_counters"][f"nf{n}"]
    assert first["rx_packets"] >= r["rx_frames"] and last["tx_packets"] >= r["rx_frames"]
    assert not any(a["args"][0] == "fwd" for a in r["engines"].values()), "an NF engine ran"
    # nothing but the stream: no ARP, no ICMP, nothing sent backwards along the chain
    k = r["kernel_counters"]
    backwards = {key: (c["rx_packets"] if key.endswith((".out", ".p0")) else c["tx_packets"])
                 for key, c in k.items() if key.endswith((".in", ".out", ".p0", ".p1"))}
    assert not any(backwards.values()), f"{summary}: frames against the stream: {backwards}"
    assert r["engines"]["tester"]["final"].get("foreign", 0) == 0, summary
    if nf == "router":
        assert r["forwarding_mode"].startswith("per-element"), summary
        assert set(r["cycles_per_packet_by_process"]) >= {f"nf{i}" for i in range(1, n + 1)}
    else:
        assert r["forwarding_mode"].startswith("ovs-vswitchd pinned"), summary
        assert "daemon ovs-vswitchd" in r["cycles_per_packet_by_process"]
        assert sum(1 for p in r["switch_ports"] if p["port"].startswith("ovs:")) == 2 * n
        assert r["placement"]["nf_cpus"] == [r["placement"]["switch_cpu"]]
        assert ("afxdp ports, pmd pinned" in r["forwarding_mode"]) == (nf == "ovs-afxdp"), summary
    left = _leftovers(run_id)
    assert not any(left.values()), f"left behind by run {run_id}: {left}"


def _state_names_ovs(run_id: str) -> bool:
    try:
        data = json.loads((state_dir() / f"{run_id}.json").read_text())
    except (OSError, ValueError):
        return False
    argv = [" ".join(p["argv"]) for p in data["processes"]]
    return any("ovs-vswitchd" in a for a in argv) and any(" loop " in f" {a} " or " control "
                                                          in f" {a} " for a in argv)


def test_sigkill_then_clean_stops_the_ovs_daemons(root, engine):
    _needs("ovs")
    proc = subprocess.Popen([str(VSWBENCH), "trial", "--switch", "veth", "--scenario", "chain:2",
                             "--option", "nf=ovs", "--rate", str(RATE), "--duration", "30",
                             "--warmup", "0"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    run_id = ""
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while not run_id and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if line.startswith("run vsb"):
                run_id = line.split()[1].rstrip(":")
        assert run_id, "the trial never printed its run id"
        while not _state_names_ovs(run_id):
            assert proc.poll() is None, "the trial ended before it was killed"
            assert time.monotonic() < deadline, "the trial never started its tester"
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        proc.kill()  # SIGKILL, by our own child's PID
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert processes_mentioning(run_id), "the OVS daemons should outlive the killed run"
    clean = subprocess.run([str(VSWBENCH), "clean", "--prefix", run_id], capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    left = _leftovers(run_id)
    assert not any(left.values()), f"left behind by run {run_id}: {left}\n{clean.stdout}"
