"""The history store and trends over it (results/history.py, results/trend.py, `vswbench history`
and `vswbench trend`), on stores written by tests/history_fixtures.py: made-up numbers with the
shape of real results, never measurements."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.history_fixtures import step_series
from tests.history_fixtures import write_night
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.results.history import History
from vswbench.results.trend import trends


def _history(tmp_path, dirs):
    path = tmp_path / "history.sqlite"
    with History(path) as h:
        for d in dirs:
            h.add(d)
    return path


def test_a_20_percent_step_is_exactly_one_regression_naming_the_kernel(tmp_path):
    dirs = step_series(tmp_path / "runs", nights=12, step_at=8)
    path = _history(tmp_path, dirs)
    with History(path, create=False) as h:
        report = trends(h.results(), fail_on=0.05)
    by_switch = {t.setup.switch: t for t in report.trends}
    bridge, veth = by_switch["bridge"], by_switch["veth"]
    assert bridge.verdict == "regression" and bridge.change_at == 8
    assert len(bridge.groups) == 2
    assert bridge.ratio is not None and 0.75 < bridge.ratio < 0.85
    assert [c.describe() for c in bridge.changed] == ["kernel 6.1.0 -> 6.2.0"]
    assert bridge.failed and report.failures == [bridge]
    assert veth.verdict == "within noise" and not veth.failed
    assert "regression -" in bridge.describe() and "kernel 6.1.0 -> 6.2.0" in bridge.describe()


def test_trend_command_exits_1_on_the_regression_and_names_it(tmp_path, capsys):
    dirs = step_series(tmp_path / "runs")
    path = tmp_path / "h.sqlite"
    assert main(["history", "add", *map(str, dirs), "--history", str(path)]) == 0
    capsys.readouterr()
    assert main(["trend", str(path), "--fail-on-regression", "5"]) == 1
    text = capsys.readouterr()
    assert "regression" in text.out and "kernel 6.1.0 -> 6.2.0" in text.out
    assert "bridge" in text.err            # the failure line names the setup
    assert main(["trend", str(path)]) == 0                         # no threshold: no gate
    assert main(["trend", str(path), "--fail-on-regression", "25"]) == 0   # 20 % < 25 %
    capsys.readouterr()
    assert main(["trend", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    bridge = next(t for t in data["trends"] if t["setup"]["switch"] == "bridge")
    assert bridge["verdict"] == "regression" and bridge["change_at_run"] == 9


def test_noise_only_reports_no_change(tmp_path):
    dirs = step_series(tmp_path / "runs", nights=14, drop=0.0, noise=0.04, seed=3)
    path = _history(tmp_path, dirs)
    with History(path, create=False) as h:
        report = trends(h.results(), fail_on=0.0)
    assert {t.verdict for t in report.trends} == {"within noise"}
    assert not report.failures
    assert main(["trend", str(path), "--fail-on-regression", "1"]) == 0


def test_recent_limits_failures_to_new_groups(tmp_path):
    dirs = step_series(tmp_path / "runs", nights=12, step_at=4)
    path = _history(tmp_path, dirs)
    with History(path, create=False) as h:
        assert trends(h.results(), fail_on=0.05).failures
        assert not trends(h.results(), fail_on=0.05, recent=3).failures


def test_machines_are_never_mixed_unless_asked(tmp_path):
    a = [write_night(tmp_path / f"a{i}", i, {"bridge": 200_000, "veth": 380_000})
         for i in range(4)]
    b = [write_night(tmp_path / f"b{i}", 10 + i, {"bridge": 120_000, "veth": 380_000},
                     hostname="other-box") for i in range(4)]
    path = _history(tmp_path, a + b)
    with History(path, create=False) as h:
        apart = trends(h.results())
        joined = trends(h.results(), any_machine=True)
    assert len(apart.trends) == 4 and {t.verdict for t in apart.trends} == {"within noise"}
    bridge = next(t for t in joined.trends if t.setup.switch == "bridge")
    assert len(joined.trends) == 2 and bridge.verdict == "regression"


def test_adding_twice_is_skipped_and_remove_works(tmp_path, capsys):
    d = write_night(tmp_path / "n0", 0, {"bridge": 200_000, "veth": 380_000})
    path = tmp_path / "h.sqlite"
    with History(path) as h:
        first, = h.add(d)
        again, = h.add(d)
        assert first.run == 1 and first.setups == 2 and again.run is None
        runs = h.runs()
        assert len(runs) == 1 and runs[0].kernel == "6.1.0" and runs[0].campaign == "nightly"
        rows = h.results()
        assert {r.setup.switch for r in rows} == {"bridge", "veth"}
        assert rows[0].setup.preset == "quick" and rows[0].switch_version == "iproute2 6.1.0"
        assert rows[0].excised_trials == 1
    assert main(["history", "list", "--history", str(path)]) == 0
    assert "nightly" in capsys.readouterr().out
    assert main(["history", "show", "1", "--history", str(path)]) == 0
    assert "bridge" in capsys.readouterr().out
    assert main(["history", "remove", "7", "--history", str(path)]) == 2
    assert main(["history", "remove", "1", "--history", str(path)]) == 0
    with History(path, create=False) as h:
        assert h.runs() == [] and h.results() == []


def test_bad_input_is_refused_with_exit_2(tmp_path, capsys):
    d = write_night(tmp_path / "n0", 0, {"bridge": 200_000, "veth": 380_000})
    store = d / "results.sqlite"
    # a results store given as the history, an empty file, a foreign database, a newer schema
    assert main(["history", "add", str(d), "--history", str(store)]) == 2
    assert "results store" in capsys.readouterr().err
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert main(["history", "list", "--history", str(empty)]) == 2
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE x (a)")
    db.commit()
    db.close()
    assert main(["trend", str(foreign)]) == 2
    newer = tmp_path / "newer.sqlite"
    with History(newer):
        pass
    db = sqlite3.connect(newer)
    db.execute("INSERT INTO history_schema VALUES (99, 'x')")
    db.commit()
    db.close()
    capsys.readouterr()
    assert main(["trend", str(newer)]) == 2
    assert "newer vswbench" in capsys.readouterr().err
    assert main(["trend", str(tmp_path / "missing.sqlite")]) == 2
    assert main(["history", "add", str(tmp_path / "nothing"), "--history",
                 str(tmp_path / "h.sqlite")]) == 2
    link = tmp_path / "link.sqlite"
    link.symlink_to(tmp_path / "elsewhere.sqlite")
    assert main(["history", "add", str(d), "--history", str(link)]) == 2
    assert not (tmp_path / "elsewhere.sqlite").exists()
    assert main(["trend", str(newer), "--fail-on-regression", "150"]) == 2
    with pytest.raises(UsageError):
        History(tmp_path / "absent.sqlite", create=False)


def test_a_bad_directory_among_good_ones_adds_nothing(tmp_path):
    good = write_night(tmp_path / "n0", 0, {"bridge": 200_000, "veth": 380_000})
    path = tmp_path / "h.sqlite"
    assert main(["history", "add", str(good), str(tmp_path / "missing"),
                 "--history", str(path)]) == 2
    assert not path.exists()


def test_the_nightly_recipe_uses_options_that_exist():
    """deploy/ci/nightly.yml is an example, not run here: its vswbench lines must still parse."""
    import re
    from pathlib import Path

    from tests.unit.cli_commands import leaf_commands

    text = (Path(__file__).resolve().parents[2] / "deploy" / "ci" / "nightly.yml").read_text()
    commands = leaf_commands()
    lines = re.findall(r"vswbench (run|trend) ([^\n]*(?:\\\n[^\n]*)?)", text)
    assert {c for c, _ in lines} == {"run", "trend"}
    for name, rest in lines:
        known = {o for p in commands[name].params for o in p.opts}
        flags = re.findall(r"(--[a-z-]+)", rest)
        assert flags and set(flags) <= known, (name, set(flags) - known)


def test_run_refuses_a_bad_history_before_anything(tmp_path, capsys):
    d = write_night(tmp_path / "n0", 0, {"bridge": 200_000, "veth": 380_000})
    assert main(["run", "--suite", "quick", "--dry-run", "--history",
                 str(d / "results.sqlite")]) == 2
    assert "not a history" in capsys.readouterr().err
    fresh = tmp_path / "new" / "history.sqlite"
    assert main(["run", "--suite", "quick", "--dry-run", "--history", str(fresh)]) == 0
    assert not fresh.parent.exists()                 # a dry run makes nothing
