"""Bounded campaign specs (issue 30, "What to build" 3): a spec is read only if it is a regular file
of at most 1 MB (devices and FIFOs refused at once, never read or waited on); its points are
counted from its lists' lengths before anything is expanded; nesting is bounded; every numeric
bound of the command line holds for the spec's keys; every option, io and cross-key conflict is
refused at load (so `run --dry-run` refuses what `run` would); all mistakes are reported at once,
one line each, a bad value cut to a line; digits other than 0-9 are refused.

Each test answers within seconds (pytest-timeout). The device cases run the command in a child
process with its memory capped, so that a regression cannot fill this machine's memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import click
import pytest

from vswbench.campaign import spec as spec_module
from vswbench.campaign.spec import expand
from vswbench.campaign.spec import load_spec
from vswbench.campaign.spec import parse_spec
from vswbench.campaign.suites import BUILTIN
from vswbench.cli import app as cli
from vswbench.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
HEAD = '[campaign]\nname = "t"\n'
CHILD_MEMORY = 4 << 30            # a child that reads /dev/zero whole dies here, not the machine


def study(body: str) -> str:
    return HEAD + "[[study]]\n" + body


def refused(text: str) -> str:
    with pytest.raises(UsageError) as e:
        parse_spec(text)
    return str(e.value)


def run_child(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """`vswbench ARGS` in a child process with at most CHILD_MEMORY of address space."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    env = {**os.environ, "PYTHONPATH": str(Path(spec_module.__file__).parents[2])}
    return subprocess.run([sys.executable, "-m", "vswbench", *args], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit, env=env)


def no_expansion(monkeypatch: pytest.MonkeyPatch) -> None:
    """Expanding a spec's points fails the test: a refusal must come from the count."""
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("the points were expanded")
    monkeypatch.setattr(spec_module, "expand", fail)
    monkeypatch.setattr(spec_module, "_kind_points", fail)


# -- reading: regular files of at most 1 MB ---------------------------------------------------
@pytest.mark.timeout(40)          # a child's start on a busy machine; it answers in a second
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_spec_is_refused_at_once(device: str) -> None:
    done = run_child("run", device, "--dry-run")
    assert done.returncode == 2, done.stderr
    assert "a character device, not a regular file" in done.stderr
    assert "bug" not in done.stderr


@pytest.mark.timeout(10)
def test_a_fifo_as_the_spec_is_refused_without_waiting_for_a_writer(tmp_path: Path,
                                                                    capsys) -> None:
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    assert cli.main(["run", str(fifo), "--dry-run"]) == 2
    assert "a FIFO, not a regular file" in capsys.readouterr().err


@pytest.mark.timeout(10)
def test_a_fifo_inside_a_spec_directory_is_refused(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.toml").write_text(study('kind = "search"\nswitch = "veth"\n'))
    os.mkfifo(tmp_path / "b.toml")
    assert cli.main(["run", str(tmp_path), "--dry-run"]) == 2
    assert "b.toml: a FIFO" in capsys.readouterr().err


@pytest.mark.timeout(10)
def test_a_spec_over_a_megabyte_is_refused_unread(tmp_path: Path, capsys) -> None:
    big = tmp_path / "big.toml"
    big.write_text(study('kind = "search"\nswitch = "veth"\n') + "#" * 1_100_000 + "\n")
    assert cli.main(["run", str(big), "--dry-run"]) == 2
    assert "larger than 1,000,000" in capsys.readouterr().err


@pytest.mark.timeout(40)
def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    done = run_child("run", str(tmp_path / "zero.toml"), "--dry-run")
    assert done.returncode == 2, done.stderr
    assert "a character device, not a regular file" in done.stderr


@pytest.mark.timeout(10)
def test_a_directory_named_like_a_spec_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(UsageError, match="a directory where a file is meant"):
        load_spec(tmp_path / "d.toml")


# -- the point count, before anything is expanded ---------------------------------------------
def product_spec(sizes: int, rates: int, flows: int) -> str:
    return study('kind = "trial"\nswitch = "bridge"\n'
                 f"size = {list(range(64, 64 + sizes))}\n"
                 f"rate = {[1000 + i for i in range(rates)]}\n"
                 f"flows = {list(range(1, flows + 1))}\n")


@pytest.mark.timeout(10)
def test_a_spec_of_a_billion_points_is_refused_from_its_lists_lengths(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(product_spec(1300, 1000, 1000))           # 1.3e9 points, about 15 KB
    assert path.stat().st_size < 20_000
    no_expansion(monkeypatch)
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "1,300,000,000 points" in err and "20,000" in err


@pytest.mark.timeout(10)
def test_a_spec_of_a_million_points_is_refused_unexpanded(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "million.toml"
    path.write_text(product_spec(1300, 1000, 1))
    no_expansion(monkeypatch)
    assert cli.main(["run", str(path), "--dry-run", "--yes"]) == 2    # not even with --yes
    assert "1,300,000 points" in capsys.readouterr().err


@pytest.mark.timeout(10)
def test_studies_that_together_exceed_the_limit_are_refused(monkeypatch) -> None:
    one = '[[study]]\nkind = "trial"\nswitch = "bridge"\nrate = 1000\n' \
          f"size = {list(range(64, 164))}\nflows = {list(range(1, 101))}\n"   # 10,000 points
    no_expansion(monkeypatch)
    assert "studies 1 to 3 make 30,000 points" in refused(HEAD + one * 5)


def test_the_count_is_the_expansions_for_every_spec_here() -> None:
    """point_count is expand's product without expanding: equal for every study of the project's
    specs (summed over studies it is an upper bound: points several studies share count once)."""
    from vswbench.campaign.spec import point_count

    specs = [parse_spec(text) for text in BUILTIN.values()]
    specs += [load_spec(p) for p in sorted((ROOT / "specs").rglob("*.toml"))]
    for s in specs:
        for st in s.studies:
            assert point_count(st) == len(expand(replace(s, studies=(st,)))), (s.source, st.index)
        assert sum(point_count(st) for st in s.studies) >= len(expand(s))


# -- nesting ----------------------------------------------------------------------------------
@pytest.mark.timeout(10)
@pytest.mark.parametrize("levels", [20, 100_000])
def test_deep_nesting_is_a_usage_error_not_a_bug(tmp_path: Path, capsys, levels: int) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(study('kind = "search"\nswitch = "veth"\nsize = ' + "[" * levels
                          + "]" * levels + "\n"))
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "nested more than 8 deep" in err and "bug" not in err


@pytest.mark.timeout(10)
def test_an_integer_python_cannot_print_is_a_usage_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "digits.toml"
    path.write_text(study('kind = "search"\nswitch = "veth"\nflows = ' + "9" * 5000 + "\n"))
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "bug" not in err and len(err) < 400


# -- the command line's bounds hold in specs --------------------------------------------------
def flag_type(command: str, flag: str) -> click.ParamType:
    cmd = cli.cli
    for name in command.split():
        cmd = cmd.get_command(click.Context(cmd), name)   # type: ignore[attr-defined]
    return next(p.type for p in cmd.params if flag in p.opts)


# spec key, its study, the command and flag with the same bound, values on both sides of it
BOUNDS = [
    ("duration", 'kind = "trial"\nrate = 1000\n', "trial", "--duration",
     [1e-320, 0.05, 0.1, 1, 86400, 86401, 1e308, 10**400]),
    ("flows", 'kind = "search"\n', "search", "--flows", [0, 1, 1_000_000, 1_000_001, 10**10]),
    ("burst", 'kind = "search"\n', "search", "--burst", [0, 1, 65536, 65537]),
    ("points", 'kind = "sweep"\n', "sweep", "--points", [1, 2, 200, 201]),
    ("trials", 'kind = "b2b"\n', "b2b", "--trials", [0, 1, 1000, 1001]),
    ("max_frames", 'kind = "b2b"\n', "b2b", "--max-frames", [1, 2, 10_000_000, 10_000_001]),
    ("rules", 'kind = "rule-update"\n', "rule-update", "--update-rules", [0, 1, 32768, 32769]),
    ("update_rate", 'kind = "rule-update"\n', "rule-update", "--update-rate",
     [0.01, 0.1, 100, 100.5, 1e308, 10**400]),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("key,body,command,flag,values", BOUNDS, ids=[b[0] for b in BOUNDS])
def test_a_spec_key_takes_what_its_flag_takes(key: str, body: str, command: str, flag: str,
                                              values: list[float]) -> None:
    kind = flag_type(command, flag)
    for value in values:
        try:
            kind.convert(str(value), None, None)
            flag_ok = True
        except click.BadParameter:
            flag_ok = False
        text = study(body + f'switch = "ovs"\n{key} = {value!r}\n')
        try:
            parse_spec(text)
            spec_ok = True
        except UsageError as e:
            spec_ok = False
            assert f"study 1, {key}:" in str(e)
        assert spec_ok == flag_ok, f"{key} = {value!r}: spec {spec_ok}, {flag} {flag_ok}"


# -- every option, io and combination checked at load -----------------------------------------
@pytest.mark.timeout(10)
@pytest.mark.parametrize("switch", ["macvlan", "ovs"])
def test_xdplive_into_a_switch_that_drops_it_fails_the_dry_run(tmp_path: Path, capsys,
                                                               switch: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(study(f'kind = "search"\nswitch = "{switch}"\nio = "xdplive"\n'))
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "study 1, io: xdplive" in err and "afpacket" in err


@pytest.mark.timeout(10)
@pytest.mark.parametrize("body,named", [
    ('switch = "bridge"\noptions = { bridge_fdb = "bogus" }\n', "bridge_fdb"),
    ('switch = "testpmd"\noptions = { dpdk_port = "bogus" }\n', "dpdk_port"),
    ('switch = "shaped"\nshape_pps = "100k"\nsize = "imix"\n', "study 1, size"),
])
def test_a_backend_option_value_is_checked_at_load(body: str, named: str) -> None:
    message = refused(study('kind = "search"\n' + body))
    assert named in message


@pytest.mark.timeout(10)
def test_cpus_this_machine_lacks_fail_the_dry_run(tmp_path: Path, capsys, monkeypatch) -> None:
    """What depends on the machine (the placement's CPUs) is checked when the campaign starts,
    by the dry run as by the run, before anything is created."""
    path = tmp_path / "cpu.toml"
    path.write_text(study('kind = "search"\nswitch = "bridge"\nscenario = "pvp"\n'
                          'placement = ["default", "s_core"]\n'))
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "study 1, point search bridge pvp" in err and "CPUs 0..0" in err


@pytest.mark.timeout(10)
def test_the_runner_checks_every_testbed_before_the_store(tmp_path: Path, monkeypatch) -> None:
    from vswbench.campaign.runner import CampaignRunner

    spec = parse_spec(study('kind = "search"\nswitch = "bridge"\nplacement = "s_core"\n'))
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)       # nothing could be built anyway
    with pytest.raises(UsageError, match="CPUs 0..0"):
        CampaignRunner(spec, tmp_path / "out").run()
    assert not (tmp_path / "out").exists()


# -- every mistake at once, one line each, values cut -----------------------------------------
@pytest.mark.timeout(10)
def test_every_mistake_is_reported_at_once(tmp_path: Path, capsys) -> None:
    path = tmp_path / "many.toml"
    path.write_text(HEAD
                    + '[[study]]\nkind = "search"\nswitch = "macvlan"\nio = "xdplive"\n'
                      'flows = 2000000\noptions = { kernel_mode = "sometimes" }\n'
                    + '[[study]]\nkind = "trial"\nswitch = "bridge"\nrate = "10k"\n'
                      'duration = 1e308\noptions = { bridge_fdb = "bogus" }\n')
    assert cli.main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "has 5 problems" in err
    for where in ("study 1, io", "study 1, flows", "study 1, options", "study 2, duration",
                  "study 2, options"):
        assert err.count(where) == 1, (where, err)
    assert len(err.strip().splitlines()) <= 6            # at most a line per mistake


LONG = "x" * 5000


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", [
    study(f'kind = "search"\nswitch = "{LONG}"\n'),
    study(f'kind = "search"\nswitch = "veth"\n{LONG} = 1\n'),
    study(f'kind = "search"\nswitch = "ovs"\noptions = {{ clones = "{LONG}" }}\n'),
    study(f'kind = "trial"\nswitch = "veth"\nrate = "{LONG}"\n'),
    study(f'kind = "search"\nswitch = "veth"\nscenario = "chain:{LONG}"\n'),
    f'[campaign]\nname = "{LONG}"\n[[study]]\nkind = "search"\nswitch = "veth"\n',
    f'[campaign]\nname = "t"\n[paper]\nfigure = "{LONG}"\n[[study]]\nkind = "search"\n'
    'switch = "veth"\n',
], ids=["switch", "key", "option", "rate", "scenario", "name", "figure"])
def test_a_long_value_is_never_echoed_whole(text: str) -> None:
    message = refused(text)
    assert "x" * 100 not in message
    assert "5,002 characters" in message or "5,000 characters" in message or \
        "too long" in message, message


@pytest.mark.timeout(10)
def test_a_spec_of_thousands_of_mistakes_stops_at_fifty(monkeypatch) -> None:
    names = ", ".join(f'"vethx{i}"' for i in range(20_000))
    message = refused(study(f'kind = "search"\nswitch = [{names}]\n'))
    lines = message.splitlines()
    assert lines[0].endswith("has more than 50 problems:")
    assert len(lines) == 52 and "checking stopped" in lines[-1]


# -- digits 0-9 only --------------------------------------------------------------------------
@pytest.mark.timeout(10)
@pytest.mark.parametrize("body", [
    'kind = "trial"\nswitch = "veth"\nrate = "\u0661\u0660\u0660k"\n',          # Arabic-Indic
    'kind = "trial"\nswitch = "veth"\nrate = "\uff11\uff10\uff10k"\n',          # full-width
    'kind = "search"\nswitch = "veth"\nchurn = "\u0661\u0660\u0660\u0660/0.5"\n',
    'kind = "search"\nswitch = "ovs"\noptions = { clones = "\u0663" }\n',
    'kind = "search"\nswitch = "veth"\nscenario = "chain:\u0663"\n',
    'kind = "search"\nswitch = "shaped"\nshape_pps = "\uff11\uff10\uff10k"\n',
])
def test_digits_other_than_ascii_are_refused(body: str) -> None:
    assert "digits 0-9" in refused(study(body))


@pytest.mark.timeout(10)
def test_digits_other_than_ascii_in_a_claim_are_refused() -> None:
    text = (HEAD + '[paper]\nfigure = "f"\npaper = "emmerich"\nsource = "s"\ncaption = "c"\n'
            'varies = "v"\nanalogue = "a"\ndifferences = ["d"]\n[[claim]]\nlaw = "l"\n'
            'source = "s"\ncheck = "tput[size=\u0666\u0664] > 1"\n'
            '[[study]]\nkind = "search"\nswitch = "veth"\n')
    assert "digits 0-9" in refused(text)
