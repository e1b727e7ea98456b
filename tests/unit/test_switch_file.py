"""The user's switch declarations (switches/external.py): a switch file's [switch.NAME] tables
parsed and checked; bad input is exit 2 with the key and the fix; {VSB_...} substitution."""

from __future__ import annotations

from pathlib import Path

import pytest

from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.switches import catalog
from vswbench.switches.catalog import all_switches
from vswbench.switches.catalog import load_switch_file
from vswbench.switches.external import load_file
from vswbench.switches.external import parse_counters
from vswbench.switches.external import parse_declaration
from vswbench.switches.external import substitute

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "switches"


@pytest.fixture(autouse=True)
def no_user_switches_after(monkeypatch):
    """Switches declared here stay out of every other test's catalog."""
    monkeypatch.setattr(catalog, "_USER", {})


def test_the_shipped_examples_parse_and_become_backends():
    names = load_switch_file(str(EXAMPLES / "linux-bridge.toml"))
    names += load_switch_file(str(EXAMPLES / "nft-fwd.toml"))
    assert names == ["ip-bridge", "nft-fwd"]
    cls = all_switches()["nft-fwd"]
    assert cls.declaration.forward[1][-3:] == ("fwd", "to", "{VSB_DST_PORT}")  # type: ignore
    assert cls.description.startswith("nftables netdev")


@pytest.mark.parametrize(("table", "message"), [
    ({"setup": [["ip"]], "shell": "x"}, "unknown key shell"),
    ({}, "needs `setup` or `attach`"),
    ({"setup": "ip link add"}, "list of argv lists"),
    ({"setup": [["ip", 3]]}, "argv list of strings"),
    ({"setup": [[]]}, "argv list of strings"),
    ({"setup": [["ip"]], "cpus": ["1"]}, "cpus must be a list of CPU numbers"),
    ({"setup": [["ip"]], "port_names": ["a", "a"]}, "distinct interface names"),
    ({"setup": [["ip"]], "port_names": ["x" * 16]}, "at most 15"),
    ({"setup": [["ip"]], "version": "ip -V"}, "version: expected an argv list"),
])
def test_bad_declarations_name_the_key_and_the_fix(table, message):
    with pytest.raises(UsageError, match=message):
        parse_declaration("mine", table, "f.toml")


def test_names_must_be_new_and_well_formed():
    with pytest.raises(UsageError, match="built-in switch"):
        parse_declaration("bridge", {"setup": [["ip"]]}, "f", builtin=["bridge"])
    with pytest.raises(UsageError, match="lower case"):
        parse_declaration("My Switch", {"setup": [["ip"]]}, "f")


def test_file_level_problems(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        load_file(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[switch.x\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_file(bad)
    bad.write_text('[campaign]\nname = "x"\n')
    with pytest.raises(UsageError, match="only \\[switch.NAME\\] tables"):
        load_file(bad)


def test_cli_refuses_a_bad_switch_file_with_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[switch.mine]\nsetup = "ip link"\n')
    assert main(["trial", "--switch-file", str(bad), "--switch", "mine", "--rate", "1k"]) == 2
    err = capsys.readouterr().err
    assert "setup: expected a list of argv lists" in err and "Traceback" not in err


def test_substitution_leaves_other_braces_and_refuses_unknown_variables():
    env = {"VSB_PORT": "vsb0001sw0"}
    assert substitute(["{", "{VSB_PORT}", "}", "x{VSB_PORT}y"], env, "w") == [
        "{", "vsb0001sw0", "}", "xvsb0001sw0y"]
    with pytest.raises(UsageError, match="VSB_NOPE"):
        substitute(["{VSB_NOPE}"], env, "w")


def test_counters_output_is_checked():
    got = parse_counters('{"p0": {"rx_packets": 5, "tx_dropped": 2}}', "w")
    assert (got[0].port, got[0].rx_packets, got[0].tx_dropped, got[0].tx_packets) == (
        "p0", 5, 2, 0)
    with pytest.raises(Exception, match="not JSON"):
        parse_counters("nope", "w")


def test_a_spec_declares_its_own_switches_inline_or_by_path(tmp_path):
    from vswbench.campaign.spec import parse_spec

    (tmp_path / "mine.toml").write_text((EXAMPLES / "nft-fwd.toml").read_text())
    spec_path = tmp_path / "spec.toml"
    text = """
[campaign]
name = "t"
[switch]
nft-fwd = "mine.toml"
[switch.inline]
attach = [["ip", "link", "set", "dev", "{VSB_PORT}", "up"]]
[[study]]
kind = "trial"
switch = ["nft-fwd", "inline"]
rate = "1k"
"""
    spec_path.write_text(text)
    spec = parse_spec(text, source=str(spec_path))
    assert {p.switch for p in spec.points()} == {"nft-fwd", "inline"}
    assert "inline" in all_switches()


@pytest.mark.parametrize(("table", "message"), [
    ('[switch.bad]\nsetup = "x"\n', r"\[switch.bad\].setup: expected a list of argv lists"),
    ('[switch]\nnft-fwd = "nowhere.toml"\n', "no such file"),
    ('[switch.veth]\nsetup = [["ip"]]\n', "veth is a built-in switch"),
])
def test_a_spec_s_bad_switch_is_exit_2_with_the_reason(table, message):
    from vswbench.campaign.spec import parse_spec

    text = f'[campaign]\nname = "t"\n{table}[[study]]\nkind = "trial"\nswitch = "veth"\n'
    with pytest.raises(UsageError, match=message):
        parse_spec(text, source="/tmp/x/spec.toml")


def test_switches_lists_cni_docker_and_declared_switches_with_reasons(monkeypatch, capsys):
    """`vswbench switches --switch-file F --json`: the CNI backends, docker-bridge and the file's
    switches, each available or not with the reason (unit tests run as any user: a backend
    that needs root says so)."""
    import json as json_

    assert main(["switches", "--switch-file", str(EXAMPLES / "nft-fwd.toml"), "--json"]) == 0
    rows = {r["name"]: r for r in json_.loads(capsys.readouterr().out)}
    for name in ("cni-bridge", "cni-bridge-bare", "cni-ptp", "cni-vlan", "docker-bridge",
                 "tc-mirred", "router-flowtable", "nft-fwd"):
        assert name in rows, name
        assert rows[name]["available"] or rows[name]["reason"], rows[name]
    assert rows["nft-fwd"]["description"].startswith("nftables netdev")
