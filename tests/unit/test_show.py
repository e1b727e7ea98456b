"""The first screen fits the terminal (issue 44, part 1): `vswbench show DIR` at 80, 120 and 200
columns on fixture stores (tests/report_fixtures.py: FIXTURES, NOT MEASUREMENTS; one with the
quick suite's paired rounds added for the 64 B kernel group): no line over the width, no number
split across lines, one row per switch with its rank, name, headline and range, loss, p50, p99
and cycles per packet; more columns as the width grows; the verdict's first line at most two
lines at 80 columns and naming every switch of its group; --wide, md and json."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from tests.report_fixtures import QUICK_SPEC
from tests.report_fixtures import RUN_ID
from tests.report_fixtures import write_fixture_store
from vswbench.campaign.rounds_phase import rounds_point
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.results.store import ResultStore

# invented MRR per switch (pps) of the 64 B kernel group's rounds; xdp lost nothing (at least)
MRR = {"xdp": 860_000.0, "tc-bpf": 700_000.0, "bridge": 526_000.0, "ovs": 160_000.0,
       "veth": 850_000.0}
ROUNDS = 8
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _with_rounds(path: Path) -> None:
    spec = parse_spec(QUICK_SPEC, source="<fixture>")
    rng = random.Random(44)
    with ResultStore(path) as store:
        for p in spec.points():
            if p.kind != "search" or p.size != 64 or p.switch not in MRR:
                continue
            samples = []
            for r in range(ROUNDS):
                rate = MRR[p.switch] * rng.uniform(0.7, 1.3)
                sent = 870_000 * 0.5 if p.switch == "xdp" else rate * 0.5 * 1.2
                received = sent if p.switch == "xdp" else rate * 0.5
                samples.append({"round": r, "position": 0, "duration_s": 0.5,
                                "sent": int(sent), "received": int(received),
                                "ceiling_pps": 870_000.0})
            store.record_point(RUN_ID, rounds_point(p, 0.5), {
                "samples": samples, "rounds": ROUNDS, "sample_s": 0.5,
                "mrr_pps": MRR[p.switch]}, "done")


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("show")
    write_fixture_store(base / "quick" / "results.sqlite", variant="quick")
    write_fixture_store(base / "paired" / "results.sqlite", variant="quick")
    _with_rounds(base / "paired" / "results.sqlite")
    return {"quick": base / "quick", "paired": base / "paired"}


def _show(capsys, *args: str) -> str:
    assert cli.main(["show", *args]) == 0
    return capsys.readouterr().out


def _blocks(text: str) -> list[list[str]]:
    """Each verdict's lines up to its table's last row."""
    out: list[list[str]] = []
    for chunk in text.split("\n\n"):
        lines = chunk.splitlines()
        if lines and lines[0].startswith("#"):
            out[-1] += lines
        elif lines and re.match(r"\d+ B, ", lines[0]):
            out.append(lines)
    return out


def _row(lines: list[str], switch: str) -> list[str]:
    return next(line.split() for line in lines if line.split()[1:2] == [switch])


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("store", ["quick", "paired"])
def test_show_fits_the_width_and_splits_no_number(stores, capsys, store, width) -> None:
    text = _show(capsys, str(stores[store]), "--width", str(width))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width, [x for x in lines if len(x) > width]
    assert "…" not in text and "\x1b[" not in text
    for line, nxt in zip(lines, lines[1:]):     # a wrapped line ends and starts between words
        assert not (line[-1:].isdigit() and nxt.strip()[:1].isdigit()
                    and re.match(r"^\s+[\d.,]+\b", nxt)), (line, nxt)
    blocks = _blocks(text)
    assert [b[0].split(":")[0] for b in blocks] == [
        "64 B, kernel switches", "64 B, DPDK switches", "1518 B, kernel switches",
        "1518 B, DPDK switches"]
    for block in blocks:
        table = block[next(i for i, x in enumerate(block) if x.startswith("#")):]
        head = table[0]
        for col in ("switch", "Mpps (range)", "loss", "p50 us", "p99 us", "cyc/pkt"):
            assert col in head, (col, head)
        verdict = block[:next(i for i, x in enumerate(block) if x.startswith("  "))]
        if width == 80:
            assert len(verdict) <= 2, verdict
        names = [r.split()[1] for r in table[1:] if r.split()[0] not in ("base", "cal.", "ceil")]
        assert all(n in " ".join(verdict) for n in names), (names, verdict)
    kernel64 = blocks[0]
    bridge = _row(kernel64, "bridge")
    assert "5,090" in bridge                   # cycles per packet, whole
    assert "57.7" in bridge and "133.4" in bridge   # p50, p99
    if width >= 120:
        assert "PDR" in text and "Gbit/s" in text
    else:
        assert "Gbit/s" not in text


def test_the_paired_group_shows_mrr_with_its_range(stores, capsys) -> None:
    text = _show(capsys, str(stores["paired"]), "--width", "80")
    block = _blocks(text)[0]
    assert block[0].startswith("64 B, kernel switches: xdp > tc-bpf")
    assert "MRR Mpps (range)" in text and "paired rounds" in text
    xdp = " ".join(_row(block, "xdp"))
    assert re.search(r">=\d\.\d{3} \(\d\.\d+-\d\.\d+\)", xdp), xdp     # at least, its range
    bridge = " ".join(_row(block, "bridge"))
    assert re.search(r"^=?\d bridge \d\.\d{3} \(\d\.\d+-\d\.\d+\)", bridge), bridge
    wide = _show(capsys, str(stores["paired"]), "--wide")
    head = next(x for x in wide.splitlines() if x.startswith("#"))
    for col in ("NDR", "CT", "PDR", "rounds", "Gbit/s", "lat. loss", "useful", "reps", "mode"):
        assert f" {col} " in f" {head} ", col
    assert str(ROUNDS) in _row(_blocks(wide)[0], "bridge")


def test_more_columns_as_the_width_grows(stores, capsys) -> None:
    heads = [next(x for x in _show(capsys, str(stores["paired"]), "--width", str(w)).splitlines()
                  if x.startswith("#")).split() for w in (80, 120, 200)]
    assert len(heads[0]) < len(heads[1]) <= len(heads[2])


def test_markdown_and_json(stores, capsys) -> None:
    md = _show(capsys, str(stores["quick"]), "--format", "md")
    assert "## 64 B, kernel switches" in md and "| =1 | xdp |" in md
    data = json.loads(_show(capsys, str(stores["paired"]), "--format", "json"))
    first = data["verdicts"][0]
    assert first["rounds"] == ROUNDS and first["order"].startswith("64 B, kernel switches:")
    xdp = next(r for r in first["rows"] if r["switch"] == "xdp")
    assert xdp["headline"] == "mrr" and xdp["at_least"] is True and xdp["rounds"] == ROUNDS
    assert xdp["range_pps"][0] < xdp["headline_pps"] < xdp["range_pps"][1]


def test_bad_width_and_missing_store(tmp_path, capsys) -> None:
    assert cli.main(["show", str(tmp_path), "--width", "20"]) == 2
    assert cli.main(["show", str(tmp_path)]) == 2
    assert "no results store" in capsys.readouterr().err
