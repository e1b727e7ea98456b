"""The Ansible-style inventory of `run --inventory`, the agent's command line, and the deploy
playbook's syntax."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.campaign.inventory import load_inventory
from vswbench.campaign.inventory import parse_inventory
from vswbench.campaign.remote import agent_command
from vswbench.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
LAB = {"all": {"vars": {"ansible_user": "bench"}, "children": {
    "tester": {"hosts": {"t1": {"ansible_host": "198.18.250.1", "vswbench_wire": "eth1"},
                         "t2": None}},
    "dut": {"vars": {"vswbench_python": "/opt/v/bin/python"},
            "hosts": {"d1": {"ansible_host": "198.18.250.2", "ansible_port": 2222,
                             "vswbench_wire": ["eth1", "eth2"],
                             "vswbench_env": {"A": "1"}},
                      "d2": {"vswbench_pair": "t1"}}}}}}


def test_pairs_and_variables_from_groups() -> None:
    inv = parse_inventory(LAB, "lab.yml")
    d1 = inv.pair("d1").dut
    assert (d1.address, d1.port, d1.user, d1.python, d1.wire, d1.env) == (
        "198.18.250.2", 2222, "bench", "/opt/v/bin/python", ("eth1", "eth2"), (("A", "1"),))
    assert [(p.tester.name, p.dut.name) for p in inv.pairs()] == [("t1", "d1"), ("t1", "d2")]
    assert inv.pair().dut.name == "d1" and inv.testers[0].wire == ("eth1",)
    assert agent_command(d1) == "env A=1 /opt/v/bin/python -m vswbench agent"


@pytest.mark.parametrize("change,message", [
    (lambda d: d["all"]["children"].pop("dut"), "no group 'dut'"),
    (lambda d: d["all"]["children"]["dut"]["hosts"]["d1"].update(ansible_port=70000),
     "d1: ansible_port"),
    (lambda d: d["all"]["children"]["dut"]["hosts"]["d2"].update(vswbench_pair="t9"),
     "vswbench_pair 't9'"),
])
def test_bad_inventories_name_the_host_and_key(change, message) -> None:
    import copy

    data = copy.deepcopy(LAB)
    change(data)
    with pytest.raises(UsageError, match=message):
        parse_inventory(data, "lab.yml").pairs()


def test_unknown_dut_and_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no dut named 'd7'"):
        parse_inventory(LAB).pair("d7")
    with pytest.raises(UsageError, match="cannot read"):
        load_inventory(tmp_path / "missing.yml")
    (tmp_path / "bad.yml").write_text("all: [\n")
    with pytest.raises(UsageError, match="not YAML"):
        load_inventory(tmp_path / "bad.yml")


@pytest.mark.parametrize("book", ["deploy/playbook.yml", "deploy/lab/lab.yml"])
def test_playbook_syntax(tmp_path: Path, book: str) -> None:
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    if playbook is None:
        pytest.skip("ansible-core is not installed (pip install -e .[test])")
    inv = tmp_path / "hosts.yml"
    inv.write_text("all:\n  children:\n    tester:\n      hosts:\n        t1: {}\n"
                   "    dut:\n      hosts:\n        d1: {}\n        d2: {}\n")
    proc = subprocess.run([playbook, "-i", str(inv), "--syntax-check", str(ROOT / book)],
                          capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                            "ANSIBLE_LOCAL_TEMP": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
