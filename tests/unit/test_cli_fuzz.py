"""Property test of the command line (hypothesis): for every command, whatever its options and
arguments, and for campaign specs of arbitrary values, the exit status is one of the documented
ones (cli/app.py), no traceback and no "this is a bug" line is printed, and nothing is created
(no namespace, no /tmp/vsb-* directory, no file in the working directory).

Run as a non-root user would: os.geteuid() reports 1000, so every command that would build a
testbed must refuse (exit 2) after validating its input, never start measuring."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.unit.cli_commands import leaf_commands
from vswbench.cli.app import main

# 100 examples by default (the unit tier in under 2 minutes); CI raises it to 300 (.ci/run,
# docs/development.md "Running the tests")
EXAMPLES = int(os.environ.get("VSB_FUZZ_EXAMPLES", "100"))
DOCUMENTED = {0, 1, 2, 3}
ATOMS = ["0", "1", "-1", "2", "64", "1518", "9000", "imix", "imix:zz", "nan", "inf", "-inf",
         "1e26", "1e9", "0.5", "10k", "1.5M", "fast", "", " ", "x", "1,2", "1,x", "p2p",
         "chain:3", "chain:0", "pairs:2", "rr", "star", "veth", "bridge", "ovs", "shaped",
         "afpacket", "afxdp", "dpdk", "udp", "key=value", "novalue", "nf=router",
         "kernel_mode=softirq", "/nonexistent/x", "/proc/x/y", "vsb", "vsbabcd", "ndr:-5%",
         "p99:+10%", "quick", "standard", "s_core", "json", "csv", "parquet", "\x00", "é",
         "--", "-h"]
VALUE = st.one_of(st.sampled_from(ATOMS), st.text(max_size=6),
                  st.floats(allow_nan=True, allow_infinity=True).map(repr),
                  st.integers(-10**12, 10**12).map(str))


COMMANDS = leaf_commands()


def argv_for(cmd: click.Command) -> st.SearchStrategy[list[str]]:
    """Some of the command's own options, each with a value from the pool (flags bare), its
    arguments from the pool, and now and then a stray token."""
    choices = []
    for p in cmd.params:
        if isinstance(p, click.Option):
            name = p.opts[0]
            if p.is_flag:
                choices.append(st.just([name]))
            else:
                choices.append(VALUE.map(lambda v, n=name: [n, v]))
        else:
            choices.append(VALUE.map(lambda v: [v]))
    choices.append(VALUE.map(lambda v: [v]))
    return st.lists(st.one_of(*choices), max_size=6).map(lambda parts: sum(parts, []))


class Sandbox:
    """Runs one command line in-process as a non-root user, in an empty working directory,
    and reports what it left."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def netns(self) -> set[str]:
        d = Path("/run/netns")
        return {p.name for p in d.iterdir()} if d.is_dir() else set()

    def temps(self) -> set[str]:
        return {p.name for p in Path("/tmp").glob("vsb-*")}

    def run(self, argv: list[str]) -> tuple[int, str]:
        work = self.root / "work"
        work.mkdir(exist_ok=True)
        before = (self.netns(), self.temps())
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "geteuid", lambda: 1000)
            mp.setenv("COLUMNS", "200")
            os.chdir(work)
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(argv)
            finally:
                os.chdir(cwd)
        text = out.getvalue() + err.getvalue()
        left = sorted(p.name for p in work.iterdir())
        assert not left, f"{argv}: left {left} in the working directory"
        assert (self.netns(), self.temps()) == before, f"{argv}: created kernel objects or dirs"
        return code, text


def check(sandbox: Sandbox, argv: list[str]) -> None:
    code, text = sandbox.run(argv)
    assert code in DOCUMENTED, f"{argv}: exit {code}\n{text}"
    assert "Traceback" not in text, f"{argv}:\n{text}"
    assert "This is a bug" not in text, f"{argv}:\n{text}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_any_options_get_a_documented_answer(command: str, tmp_path_factory) -> None:
    sandbox = Sandbox(tmp_path_factory.mktemp("fuzz"))

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(argv_for(COMMANDS[command]))
    def prop(argv: list[str]) -> None:
        check(sandbox, [*command.split(), *argv])

    prop()


SPEC_KEYS = ["kind", "switch", "scenario", "size", "rate", "burst", "flows", "chain", "pairs",
             "placement", "repetitions", "preset", "duration", "points", "fractions", "io",
             "options", "shape_pps", "trials", "max_frames", "bogus"]
TOML_VALUE = st.one_of(
    st.sampled_from(['"search"', '"trial"', '"sweep"', '"latency"', '"b2b"', '"veth"', '"*"',
                     '"p2p"', '"chain"', '"imix"', '"fast"', '"quick"', '"afxdp"', '"dpdk"',
                     '{ nf = "router" }', '{ kernel_mode = "x" }', "nan", "inf", "-1", "0",
                     "1e26", "64", "1518", "true", '"x"', "[]", '["veth", "bridge"]',
                     "[64, 1518]", "[10, 90]", "[0]", "{}", "1.5"]),
    st.integers(-10**6, 10**9).map(str))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.sampled_from(SPEC_KEYS), TOML_VALUE, max_size=8),
       st.sampled_from(['name = "fz"', 'name = "bad name!"', "", 'name = 3']))
def test_any_spec_gets_a_documented_answer(tmp_path_factory, study, header) -> None:
    root = tmp_path_factory.mktemp("spec")
    spec = root / "s.toml"
    spec.write_text(f"[campaign]\n{header}\n[[study]]\n"
                    + "".join(f"{k} = {v}\n" for k, v in study.items()))
    check(Sandbox(root), ["run", str(spec), "--out", str(root / "out")])
    assert not (root / "out").exists(), "a run refused before measuring creates no directory"
