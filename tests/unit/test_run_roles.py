"""Every name a run makes is one `vswbench clean` recognises (switches/catalog.py role_patterns:
run/ids.py RUN_ROLES and each backend's link_roles), and nothing else is: the role list is checked
against the code that names things."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vswbench import scenario as scenarios
from vswbench.run.ids import RunId
from vswbench.switches.catalog import is_run_name
from vswbench.switches.catalog import run_name_parts
from vswbench.testbed.plan import host_abbr
from vswbench.testbed.plan import plan_ports

SRC = Path(__file__).resolve().parents[2] / "src" / "vswbench"
RID = RunId("vsb1a2b")
CALL = re.compile(r"\b(?:run_id|rid|run\.id|ctx\.run_id)\.(?:if)?name\(")
# call sites whose argument is computed: each is enumerated by a test below
COMPUTED = {
    ("host/pair.py", 'f"{tag}a"'), ("host/pair.py", 'f"{tag}b"'),
    ("host/pair.py", 'f"{tag}a0"'), ("host/pair.py", 'f"{tag}b0"'),
    ("testbed/plan.py", '"sw" if host.name in in_switch else host.name'),
    ("testbed/plan.py", "suffix"), ("testbed/plan.py", "host.name"),
    ("testbed/plan.py", "'e' + host_abbr(host.name)"),
    ("testbed/sites.py", "site"),
    ("testbed/vm.py", "host"), ("testbed/plan.py", "host"),   # a VM host's name: the scenarios', below
}
ALL_SCENARIOS = (["p2p", "p2p-pair", "pvp", "pvp-vm", "chain-vm:2", "rr", *scenarios.REMOTE]
                 + [f"chain:{n}" for n in range(1, scenarios.MAX_CHAIN + 1)]
                 + [f"pairs:{n}" for n in range(1, scenarios.MAX_PAIRS + 1)])


def argument(line: str, start: int) -> str:
    """The text between the parenthesis that opens at `start` - 1 and the one that closes it."""
    depth, i = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        i += 1
    return line[start:i - 1].strip()


def call_sites() -> list[tuple[str, str]]:
    sites = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "run":
            continue
        for line in path.read_text().splitlines():
            if line.lstrip().startswith("#") or "(...)" in line:
                continue
            sites += [(str(path.relative_to(SRC)), argument(line, m.end()))
                      for m in CALL.finditer(line)]
    return sites


def test_every_literal_role_in_the_code_is_a_run_name():
    sites = call_sites()
    assert len(sites) >= 20, "the scan no longer finds the naming code"
    computed = set()
    for where, arg in sites:
        literal = re.fullmatch(r"""f?["']([^"'{}]*(?:\{[^}]*\}[^"'{}]*)*)["']""", arg)
        if literal is None or "{tag}" in arg:
            computed.add((where, arg))
            continue
        for n in (0, 1, 9, 12):
            role = re.sub(r"\{[^}]*\}", str(n), literal.group(1))
            assert is_run_name(f"{RID}{role}"), f"{where}: role {role!r} is not in role_patterns()"
    assert computed == COMPUTED, "a new computed name: enumerate its values in this test"


@pytest.mark.parametrize("name", ALL_SCENARIOS)
def test_every_scenario_name_is_a_run_name(name):
    s = scenarios.parse(name)
    names = [RID.name("sw"), *(RID.name(site) for site in s.sites)]
    names += [RID.name(h.name) for h in s.hosts]
    names += [RID.name("e" + host_abbr(h.name)) for h in s.hosts]
    for l3 in (False, True):
        for in_switch in (frozenset(), frozenset(h.name for h in s.hosts if h.name.startswith("nf"))):
            for port in plan_ports(s, RID, l3=l3, in_switch=in_switch):
                names += [port.netns, port.ifname]
    missing = [n for n in names if not is_run_name(n)]
    assert not missing, f"names of {name} that clean would not recognise: {missing}"


def test_the_demo_pair_names():
    assert all(is_run_name(f"{RID}{role}") for role in ("a", "b", "a0", "b0"))


@pytest.mark.parametrize("name", ["vsbcafebabe", "vsb12abnotmine", "vsbbeefeth0", "vsbbeefeth1",
                                  "vsb1a2b", "vsb1a2bsw-1", "vsb1a2bsw\n", "vsb1a2btesterx",
                                  "vsbdpdk1", "vsb-vsbcafe-mydata", "vsb1a2bnf1234"])
def test_names_no_run_makes(name):
    assert not is_run_name(name)


def test_run_name_parts():
    assert run_name_parts("vsb1a2bnf3") == ("vsb1a2b", "nf3")
    assert run_name_parts("vsbcafebabe") is None
