"""report/verdict.py, backends.py, summary.py: the report's first screen from a fixture store
shaped like the quick suite (invented numbers, tests/report_fixtures.py)."""

from __future__ import annotations

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.report.build import build_report
from vswbench.report.model import build_model
from vswbench.results.points import load


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    base = tmp_path_factory.mktemp("quick")
    write_fixture_store(base / "results.sqlite", variant="quick")
    return base


def test_verdict_lines(quick) -> None:
    model = build_model(load(quick))
    # the fixture's searches are quick-preset ones: their noise band is 30 % (results/noise.py
    # PRESET_NOISE), so one repetition of bridge 1.35x below xdp is not yet decided
    assert [v.line for v in model.verdicts] == [
        "64 B, kernel switches: xdp, tc-bpf and bridge lead (0.690, 0.688, 0.510 Mpps, within "
        "noise of each other: 1.35x apart, noise ranges 0.587-0.797 and 0.433-0.589 Mpps "
        "overlap, 1 repetition each), ovs 77 % lower (0.160 Mpps; noise ranges apart) "
        "(baseline veth 0.820 Mpps; tester's ceiling 0.870 Mpps).",
        "64 B, DPDK switches: testpmd leads (6.10 Mpps), ovs-dpdk 31 % lower (4.20 Mpps; noise "
        "ranges apart) (baseline memif ≥ 10.7 Mpps; tester's ceiling 10.7 Mpps).",
        "1518 B, kernel switches: tc-bpf, xdp and bridge lead (0.400, 0.400, 0.300 Mpps, within "
        "noise of each other: 1.33x apart, noise ranges 0.34-0.462 and 0.255-0.347 Mpps "
        "overlap, 1 repetition each; tc-bpf and xdp at the tester's ceiling), ovs 78 % lower "
        "(0.090 Mpps; noise ranges apart) (baseline veth ≥ 0.400 Mpps; tester's ceiling "
        "0.400 Mpps).",
        "1518 B, DPDK switches: testpmd leads (3.00 Mpps), ovs-dpdk 33 % lower (2.00 Mpps; noise "
        "ranges apart) (baseline memif ≥ 5.90 Mpps; tester's ceiling 5.90 Mpps)."]


def test_ranks_ties_baselines_and_stacks(quick) -> None:
    model = build_model(load(quick))
    k64 = model.verdicts[0]
    assert [(e.switch, e.rank, e.tied) for e in k64.ranked] == [
        ("xdp", 1, True), ("tc-bpf", 1, True), ("bridge", 1, True), ("ovs", 4, False)]
    assert [e.switch for e in k64.references] == ["veth"] and k64.references[0].rank is None
    assert k64.ceiling_pps == 870_000.0 and k64.stack == "kernel"
    dpdk = model.verdicts[1]
    assert dpdk.stack == "DPDK" and [e.switch for e in dpdk.references] == ["memif"]
    assert {e.switch for e in dpdk.ranked} == {"testpmd", "ovs-dpdk"}


def test_backends_described_with_how_they_ran(quick) -> None:
    infos = build_model(load(quick)).backends
    assert "userspace datapath (netdev)" in infos["ovs"].description
    assert "bpf_redirect" in infos["xdp"].description and "XDP" in infos["xdp"].description
    assert infos["ovs"].versions == ("ovs-vswitchd 3.1.0",)
    assert infos["ovs"].forwarding_modes == ("napi-threaded cpu1",)
    assert infos["memif"].role == "baseline" and infos["veth"].role == "baseline"
    assert infos["testpmd"].stack == "DPDK" and infos["bridge"].stack == "kernel"
    assert "tester cpu0, switch cpu1" in infos["bridge"].where()


def test_first_screen_html(quick, tmp_path) -> None:
    text = build_report(quick, tmp_path).html.read_text(encoding="utf-8")
    summary = text.split('id="summary"', 1)[1].split("</section>", 1)[0]
    assert "host fixture-host" in summary and "a virtual machine (KVM fixture)" in summary
    assert "preset quick: trials of 0.25 s" in summary and "exceed ratio" in summary
    assert summary.count('class="verdict"') == 4 and "Ranks and ties" in summary
    ranking = text.split('id="ranking"', 1)[1].split("</section>", 1)[0]
    assert ranking.count('class="ceiling"') == 4 and ranking.count('class="reference"') == 4
    assert "userspace datapath (netdev)" in ranking and "ovs-vswitchd 3.1.0" in ranking
    assert text.index('id="summary"') < text.index('id="ranking"') < text.index('id="system"')
