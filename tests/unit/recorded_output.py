"""What a command prints, and its --json, against files recorded before a refactoring of its
printer (tests/data/<dir>/<case>.out, .err and .json): the reference tests of the CLI's printers
(test_cli_methods_print, test_cli_latency_print, test_cli_rule_update_print,
test_cli_trial_print)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vswbench.cli.app import main


def assert_as_recorded(argv: list[str], expected: Path, case: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    as_json = capsys.readouterr().out
    assert (printed.out, printed.err, as_json) == (
        (expected / f"{case}.out").read_text(), (expected / f"{case}.err").read_text(),
        (expected / f"{case}.json").read_text())
