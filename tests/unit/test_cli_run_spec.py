"""`vswbench run SPEC` with an invalid spec: one clear message, exit 2, no traceback, and nothing
created (no results directory, no store). Checked before anything needs root."""

from __future__ import annotations

from pathlib import Path

import pytest

from vswbench.cli import app as cli

HEAD = '[campaign]\nname = "bad"\n'
CASES = {
    "wrong type": (HEAD + '[[study]]\nkind = "search"\nswitch = "veth"\nsize = "big"\n', "size"),
    "unknown switch": (HEAD + '[[study]]\nkind = "search"\nswitch = "vpp-magic"\n', "vpp-magic"),
    "unknown kind": (HEAD + '[[study]]\nkind = "benchmark"\nswitch = "veth"\n', "kind"),
    "impossible combination": (HEAD + '[[study]]\nkind = "b2b"\nswitch = "veth"\n'
                               'scenario = "pairs:2"\n', "pairs:2"),
    "unknown key": (HEAD + '[[study]]\nkind = "search"\nswitch = "veth"\nspeed = 3\n', "speed"),
    "not TOML": ("[campaign\nname = ", "TOML"),
    "no study": (HEAD, "study"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_invalid_spec_exits_2_and_creates_nothing(tmp_path: Path, capsys, name: str):
    text, mentioned = CASES[name]
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out_dir = tmp_path / "results"
    code = cli.main(["run", str(spec), "--out", str(out_dir)])
    captured = capsys.readouterr()
    message = captured.out + captured.err
    assert code == 2, message
    assert "Traceback" not in message
    assert mentioned.lower() in message.lower(), message
    assert not out_dir.exists()


def test_unreadable_spec_exits_2(tmp_path: Path, capsys):
    out_dir = tmp_path / "results"
    code = cli.main(["run", str(tmp_path / "missing.toml"), "--out", str(out_dir)])
    captured = capsys.readouterr()
    assert code == 2
    assert "missing.toml" in captured.out + captured.err
    assert not out_dir.exists()


def test_spec_and_suite_together_exit_2(tmp_path: Path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(HEAD + '[[study]]\nkind = "search"\nswitch = "veth"\n')
    code = cli.main(["run", str(spec), "--suite", "quick", "--out", str(tmp_path / "r")])
    assert code == 2
    assert not (tmp_path / "r").exists()
