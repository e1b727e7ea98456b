"""Property test over every command of the CLI (issue 30, item 5): each example is a command
line that holds at least one value the command can never take (a hostile number: huge, NaN,
negative, in Unicode digits; an empty, long or NUL-bearing string; a bad choice; an unknown
option; a path that does not exist), among other options with ordinary or hostile values. Each
must be answered with exit status 2 (README, "Exit statuses": bad input), one line on stderr,
never "This is a bug" nor a traceback, within 5 s, and without reaching any point where the
command starts acting on the machine (build_guard.py: a namespace, a run scope, a switch's
availability check, the engine's probe, a campaign runner, `clean`'s scan). Nothing is measured:
a command line that would be valid has no way through the guard, so an example that is not
refused fails with BuildReached naming where it went.

Run in-process through click.testing.CliRunner's isolation, with the CLI's own error boundary
(cli/app.py main) and os.geteuid() reporting root, so that a check placed after the root check
is seen. 100 examples a command by default, 300 in CI (VSB_PROPERTY_EXAMPLES, set by .ci/run;
docs/development.md "Running the tests"), derandomized: the same examples on every run."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.unit.build_guard import BuildReached
from tests.unit.build_guard import guard_build
from tests.unit.cli_commands import leaf_commands
from vswbench.cli.app import main
from vswbench.cli.common import FrameSizeType
from vswbench.cli.common import SecondsType

EXAMPLES = int(os.environ.get("VSB_PROPERTY_EXAMPLES", "100"))
BAD_INPUT = 2
SECONDS_PER_ANSWER = 5.0
MISSING = "/nonexistent-vsb-property/x"
LONG = "9" * 5000
UNICODE_DIGITS = ["١٠", "١٠٠k", "１０", "６４", "٣", "۵", "१०"]
BAD_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e308", "1e309", "-1", "-1e9", "", " ", "x", LONG,
               "1.5.5", "0x10", "10q", "\x00", *UNICODE_DIGITS]
# the string options with a meaning of their own: values none of them can take
BAD_STRINGS: dict[str, list[str]] = {
    "rate": ["nan", "inf", "-1", "0", "0.5", "1e308", "2G", "10q", "", " ", LONG, "k",
             *UNICODE_DIGITS],
    "--scenario": ["", "star", "chain:0", "chain:-1", "chain:x", "pairs:0", "chain:٣", LONG,
                   "p2p\x00"],
    "--switch": ["", "bogus", "VETH", "veth\n", LONG, "../veth"],
    "--option": ["", "novalue", "=x", "bogus=1", "kernal_mode=softirq", "nf=bogus",
                 "shape_pps=nan", "bridge_fdb=bogus", "x" * 5000 + "=1"],
    "--churn": ["0/0", "nan/1", "1/nan", "1/0", "-1/1", "x", "1/2/3", "1e308/1", "١/١", "/"],
    "--nf-cpus": ["", "x", "99999", "-1", "1,,x", "٢", "1e3"],
    "--at": ["", "0", "-10", "201", "nan", "inf", "x", "10,,x", "١٠"],
    "--latency-at": ["0", "-10", "201", "nan", "x", "١٠"],
    "--rules": ["", "x", "0", "-5", "1e3", "nan", "٣"],
    "--prefix": ["", "notvsb", "VSB", LONG, "vsb\x00"],
    "--fail-if": ["ndr:-200%", "ndr:-100%", "x", "", "ndr:+nan%", "bogus:+5%", "ndr:-١٠%"],
    "--dut": ["", "foo", LONG],            # without --inventory: a DUT named is refused
}
RATE_OPTIONS = {"--rate", "--min-load", "--max-load", "--ndr", "--throughput", "--rtt-rate",
                "--shape-pps"}
# ordinary values, so that an example reaches the checks behind click's
GOOD: dict[str, list[str]] = {
    "rate": ["10k", "100k", "1.5M", "2500"], "--scenario": ["p2p", "pvp", "chain:2"],
    "--switch": ["veth", "bridge", "ovs", "shaped", "memif"],
    "--option": ["kernel_mode=softirq", "ovs_mode=normal", "bridge_fdb=learn"],
    "--churn": ["1000/0.5", "off"], "--nf-cpus": ["1", "0,1"], "--at": ["10,50"],
    "--latency-at": ["50,90"], "--rules": ["1000"], "--prefix": ["vsb", "vsbabcd"],
    "--fail-if": ["ndr:-5%"],
}
UNKNOWN_OPTIONS = ["--bogus", "--swich", "--no-such=1", "-Z", "--json=yes", "--size-x"]


COMMANDS = leaf_commands()


def _key(opt: click.Option) -> str:
    name = opt.opts[0]
    return "rate" if name in RATE_OPTIONS else name


def _out_of_range(kind: Any) -> list[str]:
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    values = []
    if low is not None:
        values += [str(low - 1), str(low - 10**12)]
    if high is not None:
        values += [str(high + 1), str(high * 10**6 + 1)]
    return values


def bad_values(param: click.Parameter) -> list[str] | None:
    """Values `param` can never take (None: no such value is known for it: a flag, or a free
    text of another command whose meaning this table does not know)."""
    kind = param.type
    if isinstance(param, click.Option) and param.is_flag:
        return None
    if isinstance(kind, click.Path):
        return ["", " ", "\x00", MISSING] if kind.exists else ["", " ", "\x00"]
    if isinstance(kind, click.Choice):
        folded = {str(c).casefold() for c in kind.choices}
        return [v for v in ["", "bogus", "x" * 5000, "١", "nan", "-1", "0", "JSON ", "auto\x00"]
                if v.casefold() not in folded]
    if isinstance(kind, FrameSizeType):
        return ["63", "9019", "0", "-64", "imix:z", "imix:", "64.5", *BAD_NUMBERS]
    if isinstance(kind, SecondsType):
        return ["90000", *BAD_NUMBERS]
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        numbers = [v for v in BAD_NUMBERS
                   if not (isinstance(kind, click.types.FloatParamType)
                           and not isinstance(kind, click.types._NumberRangeBase)
                           and v in ("-1", "-1e9", "1e308"))]
        return numbers + _out_of_range(kind)
    if isinstance(param, click.Option):
        return BAD_STRINGS.get(_key(param))
    return None


def good_values(param: click.Parameter) -> list[str]:
    """Ordinary values of `param` (flags: none, given bare)."""
    kind = param.type
    if isinstance(kind, click.Choice):
        return [str(c) for c in kind.choices]
    if isinstance(kind, FrameSizeType):
        return ["64", "1518", "imix"]
    if isinstance(kind, SecondsType):
        return ["1", "2.5"]
    if isinstance(kind, click.types._NumberRangeBase):
        low = kind.min if kind.min is not None else 0
        return [str(low)]
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return ["0", "1"]
    if isinstance(param, click.Option):
        return GOOD.get(_key(param), ["1"])
    return []


def option_tokens(opt: click.Option, values: list[str]) -> st.SearchStrategy[list[str]]:
    name = opt.opts[0]
    if opt.is_flag:
        return st.just([name])
    return st.sampled_from(values).map(lambda v: [name, v])


def command_lines(command: click.Command,
                  store_dir: Path) -> st.SearchStrategy[tuple[list[str], list[str]]]:
    """(the command line, its poison): the command's arguments (mostly an existing results
    directory), its required options and some others, each once, mostly with ordinary values
    (so that the line gets past click to the command's own checks), and one poison among them:
    a value the command can never take, an option given twice, an unknown option, or a stray
    argument that is not an existing file."""
    options = [p for p in command.params if isinstance(p, click.Option)]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    poisonable = [o for o in options if bad_values(o)]
    repeatable = [o for o in options if good_values(o) and not o.multiple and not o.is_flag]
    unknown = st.sampled_from(UNKNOWN_OPTIONS).map(lambda t: ("", [t]))
    poisons: list[st.SearchStrategy[tuple[str, list[str]]]] = [unknown,
                                                               st.just(("", [MISSING]))]
    if poisonable:      # a bad value: the poison drawn most often
        bad = st.sampled_from(poisonable).flatmap(
            lambda o: option_tokens(o, bad_values(o) or []).map(lambda t: (o.name, t)))
        poisons += [bad, bad, bad, bad]
    if repeatable:      # an option of one value given twice
        poisons.append(st.sampled_from(repeatable).flatmap(
            lambda o: st.tuples(st.sampled_from(good_values(o)), st.sampled_from(good_values(o)))
            .map(lambda vs: (o.name, [o.opts[0], vs[0], o.opts[0], vs[1]]))))

    @st.composite
    def build(draw: Any) -> tuple[list[str], list[str]]:
        poisoned, poison = draw(st.one_of(*poisons))
        others = [o for o in options if o.name != poisoned]
        chosen = draw(st.lists(st.sampled_from(others), unique_by=lambda o: o.name,
                               max_size=5)) if others else []
        chosen += [o for o in others if o.required and o not in chosen]
        parts = []
        for opt in chosen:
            good, bad = good_values(opt), bad_values(opt)
            use_bad = bool(bad) and (not good or draw(st.integers(0, 4)) == 0)
            if opt.is_flag or good or bad:
                parts.append(draw(option_tokens(opt, (bad if use_bad else good) or [""])))
        parts.insert(draw(st.integers(0, len(parts))), poison)
        args = [draw(st.sampled_from([str(store_dir), str(store_dir), MISSING]))
                for _ in arguments[:1]]
        return [*args, *(token for part in parts for token in part)], poison

    return build()


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results directory with a store of invented results (report_fixtures.py: FIXTURES, not
    measurements), so that commands reading one get past their argument."""
    from tests.report_fixtures import write_fixture_store

    directory = tmp_path_factory.mktemp("property-store")
    write_fixture_store(directory / "results.sqlite", "quick")
    return directory


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)      # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        return CliRunner()                      # click >= 8.2: stderr is always apart


def answer(runner: CliRunner, argv: list[str]) -> tuple[int, str, str, float]:
    with runner.isolation(env={"COLUMNS": "200"}) as streams:
        t0 = time.monotonic()
        code = main(argv)
        elapsed = time.monotonic() - t0
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        out, err = streams[0].getvalue(), streams[1].getvalue()
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), elapsed


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_refuses_hostile_input_in_one_line(name: str, store_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    reached = guard_build(monkeypatch)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.chdir(tmp_path)
    runner = _runner()
    command = COMMANDS[name]

    @settings(max_examples=EXAMPLES, deadline=int(SECONDS_PER_ANSWER * 1000),
              derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(command_lines(command, store_dir))
    def refused(line: tuple[list[str], list[str]]) -> None:
        tokens, poison = line
        argv = [*name.split(), *tokens]
        reached.clear()
        try:
            code, out, err, elapsed = answer(runner, argv)
        except BuildReached as exc:
            pytest.fail(f"{argv!r} (poison {poison!r}) went on to {exc} instead of being refused")
        shown = f"{argv!r} (poison {poison!r}): exit {code}\n{err}"
        assert code == BAD_INPUT, shown
        assert "This is a bug" not in err and "Traceback" not in err, shown
        assert len(err.strip().splitlines()) == 1, shown
        assert elapsed < SECONDS_PER_ANSWER, shown
        assert not reached, shown

    refused()
    assert not list(tmp_path.iterdir()), "a refused command left files in the working directory"
