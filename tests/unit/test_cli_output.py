"""What `vswbench run` prints into a file or a pipe, `run --dry-run`, and every export format,
from fixture stores (invented numbers, tests/report_fixtures.py); nothing is measured."""

from __future__ import annotations

import csv
import json
import tomllib
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import load_spec
from vswbench.cli import app as cli
from vswbench.cli.campaign import print_ranking
from vswbench.report.text import point_line
from vswbench.results.export import HEADLINE_COLUMNS
from vswbench.results.export import point_record
from vswbench.results.points import load
from vswbench.results.points import read_point
from vswbench.results.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "specs").glob("*.toml"))


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("quick")
    write_fixture_store(base / "results.sqlite", variant="quick")
    return base


def test_ranking_redirected_is_plain_text_with_every_number_whole(quick, capsys) -> None:
    print_ranking(quick / "results.sqlite")          # stdout is not a terminal under pytest
    text = capsys.readouterr().out
    assert "…" not in text and "\x1b[" not in text    # nothing cut, no colour codes
    assert text.index("64 B, kernel switches") < text.index("64 B, DPDK switches") \
        < text.index("1518 B, kernel switches")      # sizes in numeric order
    lines = text.splitlines()
    xdp = next(line for line in lines if line.split()[1:2] == ["xdp"])
    cells = xdp.split()
    # no rounds in this store: MRR, its range and rounds are "-", the CT is MLRsearch's figure
    assert cells[:5] == ["=1", "xdp", "-", "-", "-"] and cells[6] == "0.690"
    assert any(line.startswith("baseline  veth") for line in lines)
    assert any(line.startswith("ceiling   tester's ceiling") and "0.870" in line
               for line in lines)
    assert "xdp, tc-bpf and bridge lead (0.690, 0.688, 0.510 Mpps, within noise of each other:" \
        in text
    assert max(len(line) for line in lines if not line.startswith(("64 B", "1518 B"))) > 80


def test_ranking_as_markdown(quick, capsys) -> None:
    assert cli.main(["report", str(quick), "--print", "md"]) == 0
    text = capsys.readouterr().out
    assert "## 64 B, kernel switches" in text and "| =1 | xdp | - | - | - |" in text and "| 0.690 |" in text
    assert "|:---|:---|---:|" in text


def test_done_lines_carry_the_headline(quick) -> None:
    with ResultStore(quick / "results.sqlite", create=False) as store:
        points = store.points()
    lines = {p.label: point_line(read_point(p)) for p in points}
    search = next(v for k, v in lines.items() if k.startswith("search xdp p2p 64B"))
    assert search.startswith("done search xdp p2p 64B") and "NDR 0.690 Mpps" in search
    latency = next(v for k, v in lines.items() if k.startswith("latency xdp p2p 64B"))
    assert "p99" in latency and "at 90 % of NDR 0.690 Mpps" in latency


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_dry_run_lists_every_point_of_each_shipped_spec(spec, capsys) -> None:
    assert cli.main(["run", str(spec), "--dry-run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = expand(load_spec(spec))
    assert [p["key"] for p in data["points"]] == [p.key for p in expected]
    assert data["total_points"] == len(expected) > 0 and data["estimated_s"] > 0
    assert cli.main(["run", str(spec), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert f"{len(expected):,} points" in text and "nothing measured" in text


def test_dry_run_of_a_suite_and_of_a_bad_spec(tmp_path, capsys) -> None:
    assert cli.main(["run", "--suite", "quick", "--dry-run"]) == 0
    assert "search bridge p2p 64B brief" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[campaign]\nname = "bad"\n[[study]]\nkind = "search"\nswitch = "vpp"\n')
    assert cli.main(["run", str(bad), "--dry-run"]) == 2
    assert "vpp" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "jsonl", "hdr"])
def test_export_formats(quick, tmp_path, fmt, capsys) -> None:
    target = tmp_path / f"r.{fmt}"
    assert cli.main(["export", str(quick), "--format", fmt, "--to", str(target)]) == 0
    assert target.is_file() and target.stat().st_size > 0
    if fmt == "csv":
        rows = list(csv.DictReader(target.open()))
        assert list(rows[0]) == HEADLINE_COLUMNS and len(rows) == 32
        ovs = next(r for r in rows if r["switch"] == "ovs" and r["kind"] == "latency")
        assert ovs["latency_p999_us"] and ovs["latency_max_us"] and ovs["started"]
        assert "userspace datapath" in ovs["backend"] and ovs["stack"] == "kernel"
        assert ovs["switch_versions"] == "ovs-vswitchd 3.1.0"
        search = next(r for r in rows if r["switch"] == "xdp" and r["kind"] == "search")
        assert search["lower_bound_pps"] and search["upper_bound_pps"]
        assert search["forwarding_mode"] == "napi-threaded cpu1"
    if fmt == "parquet":
        import pyarrow.parquet as pq
        assert pq.read_table(target).num_rows == 32
    if fmt == "hdr":
        from hdrh.histogram import HdrHistogram
        lines = [x for x in target.read_text().splitlines() if x.startswith("Tag=")]
        assert len(lines) == 16
        h = HdrHistogram.decode(lines[0].split(",")[-1])
        data = load(quick)
        first = next(p for p in data.done("latency"))
        entry = first.result["points"][0]
        assert h.get_total_count() == sum(b[2] for b in entry["histogram"])
        p50_us = h.get_value_at_percentile(50) / 1000
        assert abs(p50_us / entry["latency_us"]["p50"] - 1) < 0.01


def test_hdr_export_without_histograms_is_refused(tmp_path, capsys) -> None:
    write_fixture_store(tmp_path / "results.sqlite", variant="empty")
    assert cli.main(["export", str(tmp_path), "--format", "hdr"]) == 2
    assert "no latency histogram" in capsys.readouterr().err


def test_json_schemas_validate_specs_and_records(quick, tmp_path) -> None:
    import jsonschema

    schemas = ROOT / "src" / "vswbench" / "schemas"
    spec_schema = json.loads((schemas / "campaign-spec.schema.json").read_text())
    record_schema = json.loads((schemas / "point-record.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(spec_schema)
    jsonschema.Draft202012Validator.check_schema(record_schema)
    from vswbench.campaign.suites import BUILTIN
    for text in [p.read_text() for p in SPECS] + list(BUILTIN.values()):
        jsonschema.validate(tomllib.loads(text), spec_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"study": [{"kind": "search", "switch": "x", "size": 64,
                                        "speed": 3}]}, spec_schema)
    full = write_fixture_store(tmp_path / "full.sqlite")       # every kind, a failed point
    for store_file in (quick / "results.sqlite", full):
        with ResultStore(store_file, create=False) as store:
            for p in store.points():
                jsonschema.validate(point_record(p), record_schema)
    assert set(record_schema["required"]) == {"schema", "params", *HEADLINE_COLUMNS}
