"""`compare --fail-if` on latency and PDR, and its output piped (results/compare.py, cli). The
stores are test doubles shaped like stored searches and latency points (invented figures)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli.app import cli
from vswbench.cli.app import main
from vswbench.results.compare import compare
from vswbench.results.compare import parse_threshold
from vswbench.results.store import ResultStore

SPEC = """
[campaign]
name = "gates"

[[study]]
kind = ["search", "latency"]
switch = ["bridge", "veth"]
size = 64
fractions = [90]
"""
NDR = {"bridge": 462_000.0, "veth": 1_280_000.0}


def _trial(load: float, lost: int = 0) -> dict:
    count = int(load * 0.25)
    return {"intended_pps": load, "intended_s": 0.25, "intended_count": count, "lost": lost,
            "unsent": 0}


def _search(ndr: float, pdr: float) -> dict:
    goals = [{"name": "NDR", "loss_ratio": 0.0, "lower_bound_pps": ndr,
              "upper_bound_pps": ndr * 1.01},
             {"name": "PDR", "loss_ratio": 0.005, "lower_bound_pps": pdr,
              "upper_bound_pps": pdr * 1.01}]
    trials = [_trial(ndr), _trial(ndr * 1.01, lost=3), _trial(pdr),
              _trial(pdr * 1.01, lost=int(pdr * 0.25 * 0.02))]
    return {"ndr_pps": ndr, "pdr_pps": pdr, "lower_bound_pps": ndr,
            "upper_bound_pps": ndr * 1.01, "generator_bound": False, "goals": goals,
            "trials": trials}


def write_run(path: Path, *, latency_scale: float = 1.0, pdr_scale: float = 1.0,
              lost: int = 0) -> Path:
    spec = parse_spec(SPEC)
    path.mkdir(parents=True, exist_ok=True)
    with ResultStore(path / "results.sqlite") as store:
        store.begin_run(path.name, spec, {})
        for p in expand(spec):
            ndr = NDR[p.switch]
            if p.kind == "search":
                pdr = ndr * 1.5 * (pdr_scale if p.switch == "bridge" else 1.0)
                result = _search(ndr, pdr)
            else:
                sent = int(ndr * 0.9)
                result = {"ndr_pps": ndr, "points": [{
                    "fraction_of_ndr": 0.9, "offered_pps": ndr * 0.9, "tx_frames": sent,
                    "lost": lost, "loss_ratio": lost / sent, "counters_agree": True,
                    "latency_us": {"p50": 40.0 * latency_scale,
                                   "p99": 120.0 * latency_scale}}]}
            store.record_point(path.name, p, result, "done")
        store.end_run(path.name, "done")
    return path


def test_doubled_latency_fails_the_p99_gate(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", latency_scale=2.0)
    assert main(["compare", str(a), str(b), "--fail-if", "p99:+10%"]) == 1
    assert main(["compare", str(a), str(a), "--fail-if", "p99:+10%"]) == 0
    assert main(["compare", str(b), str(a), "--fail-if", "p99:+10%"]) == 0   # it fell
    c = compare([a, b])
    p99 = [ch for ch in c.changes if ch.metric == "p99"]
    assert len(p99) == 2 and all(ch.significant and ch.ratio == 2.0 for ch in p99)


def test_a_latency_change_within_its_noise_is_not_a_failure(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", latency_scale=1.2)           # +20 %: inside the 30 % band
    assert main(["compare", str(a), str(b), "--fail-if", "p99:+10%"]) == 0


def test_a_p99_its_loss_makes_unreliable_is_never_judged(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", latency_scale=2.0, lost=20_000)   # about 5 % lost
    c = compare([a, b], thresholds=[parse_threshold("p99:+10%")])
    p99 = [ch for ch in c.changes if ch.metric == "p99"]
    assert p99 and not any(ch.significant for ch in p99) and not c.failures
    assert all("unreliable" in ch.how for ch in p99)
    p50 = [ch for ch in c.changes if ch.metric == "p50"]          # p50 is still judged
    assert all(ch.significant for ch in p50)


def test_a_pdr_drop_with_apart_ranges_is_judged_like_ndr(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", pdr_scale=0.6)                # PDR -40 %, NDR unchanged
    c = compare([a, b], thresholds=[parse_threshold("pdr:-10%")])
    bridge = next(ch for ch in c.changes if " bridge " in ch.label and ch.metric == "pdr")
    assert bridge.significant and "apart" in bridge.how
    assert not any(ch.significant for ch in c.changes if ch.metric == "ndr")
    assert main(["compare", str(a), str(b), "--fail-if", "pdr:-10%"]) == 1


def test_piped_compare_keeps_whole_numbers_and_lines(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a")
    b = write_run(tmp_path / "b", latency_scale=2.0)
    result = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert "1,280,000.0" in result.output and "462,000.0" in result.output
    assert "30 % latency noise band" in result.output         # the "how" column, not cut


def test_piped_doctor_keeps_its_fix_commands_whole(monkeypatch) -> None:
    from vswbench.host import doctor

    fix = ("set `echo never > /sys/kernel/mm/transparent_hugepage/enabled` (and "
           "transparent_hugepage=never on the kernel command line) so khugepaged leaves the "
           "switch cores alone")
    report = doctor.DoctorReport(
        [doctor.ToolCheck("ip", True, "/usr/sbin/ip", "every testbed (iproute2)")],
        {"release": "6.18.0-fixture"}, [],
        [doctor.TuningCheck("transparent hugepages", "madvise", "never", False, fix)])
    monkeypatch.setattr(doctor, "run_doctor", lambda stall_seconds=0.0, backend_tools=None: report)
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 0, result.output
    assert fix in result.output and "…" not in result.output
