"""Small rough edges of the output (issue 44, part 6), on fixture stores (FIXTURES, NOT
MEASUREMENTS: tests/history_fixtures.py, tests/report_fixtures.py): `trend` says how many runs
a trend needs and shows the values it has; CSV latency rows carry their load; `compare` names
its significant rows in its summary."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.history_fixtures import write_night
from tests.report_fixtures import write_fixture_store
from vswbench.cli.app import main
from vswbench.results.trend import MIN_RUNS


def _history(tmp_path: Path, nights: list[dict[str, float]]) -> Path:
    history = tmp_path / "history.sqlite"
    dirs = [str(write_night(tmp_path / f"night{i}", i, ndr)) for i, ndr in enumerate(nights)]
    assert main(["history", "add", "--history", str(history), *dirs]) == 0
    return history


def test_trend_with_one_run_says_what_it_needs_once_and_shows_the_values(tmp_path,
                                                                         capsys) -> None:
    history = _history(tmp_path, [{"bridge": 201_234.0, "veth": 380_000.0}])
    capsys.readouterr()
    assert main(["trend", str(history)]) == 0
    text = capsys.readouterr().out
    assert "too few runs to judge" not in text
    assert text.count(f"a trend needs {MIN_RUNS} runs") == 1
    assert "2 series with 1 run;" in text
    bridge = next(line for line in text.splitlines() if line.lstrip().startswith("bridge"))
    assert "201,234 pps (run 1, 2026-10-01)" in bridge


def test_trend_json_summary_of_a_short_series_has_its_values(tmp_path, capsys) -> None:
    history = _history(tmp_path, [{"bridge": 200_000.0, "veth": 380_000.0},
                                  {"bridge": 190_000.0, "veth": 381_000.0}])
    capsys.readouterr()
    from vswbench.results.history import History
    from vswbench.results.trend import trends

    with History(history, create=False) as h:
        report = trends(h.results())
    bridge = next(t for t in report.trends if t.setup.switch == "bridge")
    assert bridge.verdict == "too few runs"
    assert bridge.summary() == (f"not judged: 2 of the {MIN_RUNS} runs a trend needs; "
                                "200,000 pps (run 1, 2026-10-01), 190,000 pps (run 2, 2026-10-02)")


def test_csv_latency_rows_carry_their_load(tmp_path, capsys) -> None:
    write_fixture_store(tmp_path / "quick" / "results.sqlite", variant="quick")
    target = tmp_path / "points.csv"
    assert main(["export", str(tmp_path / "quick"), "--format", "csv", "--to", str(target)]) == 0
    rows = [r for r in csv.DictReader(target.open()) if r["kind"] == "latency"]
    assert rows
    for r in rows:
        offered, achieved, rate = (float(r[k]) for k in ("offered_pps", "achieved_pps",
                                                         "rate_pps"))
        assert rate == offered > 0 and 0 < achieved <= offered
        assert r["latency_p99_us"]


def test_compare_names_its_significant_rows_in_the_summary(tmp_path, capsys) -> None:
    a = write_night(tmp_path / "a", 1, {"bridge": 200_000.0, "veth": 380_000.0})
    b = write_night(tmp_path / "b", 2, {"bridge": 100_000.0, "veth": 381_000.0})
    assert main(["compare", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "comparisons," in line)
    assert lines[at] == "4 comparisons, 2 significant:"
    named = lines[at + 1:at + 3]
    assert all(line.startswith("  search bridge p2p 64B quick ") for line in named), named
    assert "ndr: 200,000.0 -> 100,000.0 (0.500x, -50.0 %" in named[0] + named[1]
    assert not any("veth" in line for line in lines[at:])
