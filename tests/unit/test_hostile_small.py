"""Issue 47, findings 5 and 6: commands that run commands say so (listing a switch file runs
nothing without --versions; every placeholder is checked when the file is read, before any
namespace), and the small ones: numbers parsed as documented, errors that name only the flags
given, a lock conflict that names its holder or says it cannot tell, `report --print` on a store
with nothing to rank, `clean` showing a process's real command line beside the recorded one.
Each test fails on 4df8ce3."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.report_fixtures import trial_json
from vswbench.campaign.runner import CampaignRunner
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.cli import app as cli
from vswbench.cli.arguments import argument_problem
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.results.store import ResultStore
from vswbench.run.procs import Identity
from vswbench.run.state import RecordedProcess
from vswbench.switches import catalog
from vswbench.testbed.leftovers import describe_skips
from vswbench.testbed.leftovers import select_leftovers
from vswbench.units import FrameSize
from vswbench.units import parse_rate


@pytest.fixture(autouse=True)
def no_user_switches_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """A switch file's backends do not outlive the test."""
    monkeypatch.setattr(catalog, "_USER", {})


def switch_file(tmp: Path, table: str) -> Path:
    path = tmp / "sw.toml"
    path.write_text("[switch.mine]\n" + table)
    return path


# -- 5. commands that run commands --------------------------------------------------------------
def test_switches_lists_a_switch_file_without_running_its_version(tmp_path: Path,
                                                                  capsys) -> None:
    marker = tmp_path / "ran"
    f = switch_file(tmp_path, f'setup = [["true"]]\nversion = ["touch", "{marker}"]\n')
    assert cli.main(["switches", "--switch-file", str(f), "--json"]) == 0
    assert not marker.exists(), "listing ran the switch file's version argv"
    assert "mine" in capsys.readouterr().out
    if os.geteuid() == 0:          # available only as root: then --versions runs it
        assert cli.main(["switches", "--switch-file", str(f), "--versions", "--json"]) == 0
        assert marker.exists()


@pytest.mark.parametrize(("table", "needle"), [
    ('setup = [["ip", "link", "add", "{VSB_NOPE}", "type", "bridge"]]\n',
     "unknown placeholder {VSB_NOPE}"),
    ('setup = [["true"]]\nforward = [["echo", "{VSB_PORT}"]]\nattach = [["echo", '
     '"{VSB_SRC_PORT}"]]\n', "unknown placeholder {VSB_SRC_PORT}"),
    ('setup = [["true"]]\nversion = ["echo", "{VSB_RUN_ID}"]\n', "give it no placeholder"),
])
def test_every_placeholder_is_checked_when_the_file_is_read(table: str, needle: str,
                                                            tmp_path: Path, capsys) -> None:
    """On 4df8ce3 {VSB_NOPE} was refused only after the run's first namespace existed."""
    f = switch_file(tmp_path, table)
    assert cli.main(["switches", "--switch-file", str(f)]) == 2
    assert needle in capsys.readouterr().err


# -- 6. the small ones ------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1_000", "+5k", "1_0k", "1e3", "-5", "5 k", "0x10"])
def test_rates_are_plain_decimal_numbers(text: str) -> None:
    with pytest.raises(UsageError):
        parse_rate(text)


def test_documented_number_forms_still_read() -> None:
    assert parse_rate("10k") == parse_rate("10K") == parse_rate(" 10k ") == 1e4
    assert parse_rate("1.5M") == 1.5e6 and FrameSize.parse("64").bytes == 64
    for text in ("+64", "6_4", "64.0"):
        with pytest.raises(UsageError):
            FrameSize.parse(text)


@pytest.mark.parametrize("argv", [["trial", "--duration", "1_0"], ["trial", "--duration=+1"],
                                  ["search", "--warmup", " 1"], ["trial", "--duration", "1e1"]])
def test_number_options_read_plain_decimal_digits(argv: list[str]) -> None:
    problem = argument_problem(cli.cli, argv)
    assert problem is not None and "digits 0-9" in problem


def test_a_specs_switch_file_error_names_no_flag(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[campaign]\nname = "t"\n[[study]]\nkind = "search"\nswitch = "mine"\n'
                    f'size = [64]\n[switch]\nmine = "{tmp_path / "none.toml"}"\n')
    assert cli.main(["run", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "none.toml" in err and "--switch-file" not in err


def test_a_switch_file_that_is_a_fifo_is_called_a_fifo(tmp_path: Path, capsys) -> None:
    os.mkfifo(tmp_path / "f.toml")
    assert cli.main(["switches", "--switch-file", str(tmp_path / "f.toml")]) == 2
    err = capsys.readouterr().err
    assert "a FIFO" in err and "no such file" not in err


def test_a_lock_conflict_names_its_holder_or_says_it_cannot_tell(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with ResultStore(path):                       # holds the lock; no run named yet
        with pytest.raises(VswbenchError) as e:
            ResultStore(path)
        assert "run ?" not in str(e.value) and f"pid {os.getpid()}" in str(e.value)
        with open(path.with_name(path.name + ".lock"), "w") as f:
            f.write("garbage")
        with pytest.raises(VswbenchError, match="cannot be told"):
            ResultStore(path)


def test_report_print_on_a_store_with_nothing_to_rank_says_so(tmp_path: Path, capsys) -> None:
    spec = parse_spec('[campaign]\nname = "t"\n[[study]]\nkind = "trial"\nswitch = "veth"\n'
                      'rate = [1000, 2000]\n')
    out = tmp_path / "run"
    out.mkdir()
    runner = CampaignRunner(spec, out)
    with ResultStore(out / "results.sqlite") as store, runner._jsonl(store):
        store.begin_run("vsb0001", spec, None)
        for p in expand(spec):
            runner._record(store, "vsb0001", p, trial_json(p, 900.0), "done", None, None)
        store.end_run("vsb0001", "done")
    capsys.readouterr()
    assert cli.main(["report", str(out), "--print", "text"]) == 0
    assert "nothing to rank" in capsys.readouterr().out


def test_clean_shows_the_real_command_line_beside_the_recorded_one() -> None:
    """A state file records PID P as `sleep`; P runs this Python: both are shown (on 4df8ce3
    PID 1 showed as "(sleep)")."""
    me = os.getpid()
    rec = RecordedProcess(me, 6, ["sleep", "100"])
    plan = select_leftovers(namespaces=(), links=(), temp_dirs=(), states=[_dead_state(rec)],
                            pids_in_namespace=lambda ns: [],
                            identify_process=lambda p: Identity(False, True, "another start"))
    notes = " ".join(describe_skips(plan))
    assert "recorded: sleep" in notes
    assert f"running now: {sys.executable}" in notes or "python" in notes.lower()


def _dead_state(rec: RecordedProcess):  # type: ignore[no-untyped-def]
    from vswbench.run.state import RunState

    s = RunState("vsbeeee", os.getpid(), -1, 0.0, temp_dirs=[], processes=[rec])
    s.path = Path("/run/vswbench/vsbeeee.json")
    return s


def test_holder_text_is_json_of_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as store:
        store._write_holder("vsb1234")
        with pytest.raises(VswbenchError, match="in use by run vsb1234"):
            ResultStore(path)
        assert json.loads((tmp_path / "results.sqlite.lock").read_text())["run_id"] == "vsb1234"


@pytest.mark.skipif(os.geteuid() != 0, reason="run reaches its output check only as root")
def test_run_without_out_names_no_out_flag(tmp_path: Path, monkeypatch, capsys) -> None:
    """On 4df8ce3 an unwritable default results directory was reported as `--out ...`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").write_text("a file where the results tree goes")
    spec = tmp_path / "t.toml"
    spec.write_text('[campaign]\nname = "t"\n[[study]]\nkind = "trial"\nswitch = "veth"\n'
                    'rate = [1000]\n')
    assert cli.main(["run", str(spec), "--yes", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "results/t" in err and "--out" not in err, err


@pytest.mark.skipif(os.geteuid() != 0, reason="a declared switch is available only as root")
@pytest.mark.parametrize("key", ["teardown", "forward", "counters"])
def test_every_command_of_a_switch_file_is_found_before_a_namespace(key: str, tmp_path: Path,
                                                                    capsys) -> None:
    """On 4df8ce3 only setup and attach were looked up: a missing teardown command was found
    missing after the testbed was built, and what setup made stayed."""
    value = ('["/nonexistent/vsb-tool"]' if key == "counters"     # an argv; the others: lists
             else '[["vsb-no-such-tool"]]')
    f = switch_file(tmp_path, f'setup = [["true"]]\n{key} = {value}\n')
    assert cli.main(["switches", "--switch-file", str(f), "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == "mine")
    assert not row["available"] and "not found" in row["reason"]
