"""The report's first screen fits 1280 px (issue 44, part 3), as HTML (the browser's check is
tests/integration/test_report_fit.py): a ranking table of at most 9 columns with the verdict's
order above it, every other column in a second table behind a disclosure, the summary's verdicts
naming every switch and linking to their tables, the fingerprint's versions taken from the
points when the run's fingerprint has none, and the KS matrix in a box of its own. Fixture
stores (tests/report_fixtures.py): FIXTURES, NOT MEASUREMENTS."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.report.build import build_report
from vswbench.report.delay import delay_tables
from vswbench.report.model import build_model
from vswbench.report.ranking_html import HEAD
from vswbench.report.ranking_html import ranking_tables
from vswbench.report.sections.system import system_section
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.points import load


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fit")
    for variant in ("quick", "full"):
        write_fixture_store(base / variant / "results.sqlite", variant=variant)
    return {v: base / v for v in ("quick", "full")}


def test_a_ranking_table_has_at_most_nine_columns_and_its_detail_apart(stores) -> None:
    model = build_model(load(stores["quick"]))
    html = ranking_tables(model.verdicts)
    assert len(HEAD) <= 9
    tables = re.findall(r'<table class="ranking">(.*?)</table>', html, re.S)
    assert len(tables) == 4
    for table in tables:
        assert table.split("</tr>", 1)[0].count("<th>") <= 9
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
        assert all(r.count("<td") <= 9 for r in rows)
    assert html.count('<details class="more">') == 4                # every column, behind it
    assert html.count('<table class="ranking-detail">') == 4
    assert '<h3 class="verdict" id="ranking-64-b--kernel-switches">64 B, kernel switches: xdp = ' \
        "tc-bpf = bridge &gt; ovs</h3>" in html


def test_the_summary_names_every_switch_and_links_to_its_table(stores, tmp_path) -> None:
    text = build_report(stores["quick"], tmp_path).html.read_text(encoding="utf-8")
    summary = text.split('id="summary"', 1)[1].split("</section>", 1)[0]
    items = re.findall(r'<li class="verdict"><a href="#([^"]+)">(.*?)</a></li>', summary)
    assert [i[1] for i in items] == [
        "64 B, kernel switches: xdp = tc-bpf = bridge &gt; ovs",
        "64 B, DPDK switches: testpmd &gt; ovs-dpdk",
        "1518 B, kernel switches: tc-bpf = xdp = bridge &gt; ovs",
        "1518 B, DPDK switches: testpmd &gt; ovs-dpdk"]
    assert all(f'id="{anchor}"' in text for anchor, _ in items)
    assert '<details class="rule"><summary>Ranks and ties' in summary


def test_the_fingerprint_shows_the_versions_the_points_recorded(stores) -> None:
    model = build_model(load(stores["quick"]))
    runs = [replace(r, fingerprint=RunFingerprint.from_json(
        {**(r.fingerprint.to_json() if r.fingerprint else {}), "switch_versions": {}}))
        for r in model.runs]
    html = system_section(runs, model.backends)
    cell = re.search(r"<td>switch_versions</td><td>(.*?)</td>", html)
    assert cell and "ovs-vswitchd 3.1.0 (ovs, ovs-dpdk)" in cell.group(1)
    assert "kernel 6.18.0-fixture (bridge, memif, tc-bpf, testpmd, veth, xdp)" in cell.group(1)
    assert "as the points recorded them" in cell.group(1)


def test_the_ks_matrix_scrolls_in_its_own_box(stores) -> None:
    html = delay_tables(build_model(load(stores["full"])))
    assert '<h3>KS distance between conditions</h3><div class="scroll"><table>' in html
