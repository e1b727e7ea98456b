"""Hosts of a lab, read from an Ansible-style YAML inventory (`--inventory hosts.yml`): the same
file `ansible-playbook -i hosts.yml deploy/playbook.yml` installs vswbench with.

    all:
      children:
        tester:
          hosts:
            t1: {ansible_host: 198.18.250.1, vswbench_wire: eth1}
        dut:
          hosts:
            d1:
              ansible_host: 198.18.250.2
              ansible_port: 22
              ansible_user: root
              ansible_ssh_private_key_file: /root/.ssh/vsb_lab
              vswbench_python: /opt/vswbench/.venv/bin/python   # the agent runs `-m vswbench`
              vswbench_known_hosts: /root/.ssh/known_hosts_lab    # host keys to trust
              vswbench_wire: [eth1, eth2]       # the DUT's interfaces on the wire to its tester
              vswbench_pair: t1                 # its tester (default: the tester at its index)
              vswbench_env: {VSWBENCH_ENGINE: /opt/vswbench/engine/build/vswbench-engine}

Groups `tester` and `dut` are required; a pair is one tester and one DUT (vswbench_pair, else
by position), so a lab with several pairs lists them all and runs one campaign per pair
(ARCHITECTURE.md, "A lab of several pairs"). Variables a host does not set come from its
group's `vars`, then from `all`'s. Bad input is a UsageError naming the host and the key.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.saferead import read_text

GROUPS = ("tester", "dut")


@dataclass(frozen=True)
class LabHost:
    name: str
    group: str                     # tester | dut
    address: str                   # ansible_host (default: the name)
    port: int = 22
    user: str = "root"
    key_file: str = ""             # ansible_ssh_private_key_file
    known_hosts: str = ""          # vswbench_known_hosts ("" = the client's default)
    python: str = "python3"        # vswbench_python: runs `-m vswbench agent` there
    wire: tuple[str, ...] = ()     # vswbench_wire: interfaces on the wire between the pair
    pair: str = ""                 # vswbench_pair: the tester this DUT belongs to
    env: tuple[tuple[str, str], ...] = ()   # vswbench_env: environment of the agent there

    @property
    def label(self) -> str:
        return f"{self.group} {self.name} ({self.user}@{self.address}:{self.port})"


@dataclass(frozen=True)
class Pair:
    tester: LabHost
    dut: LabHost


@dataclass(frozen=True)
class Inventory:
    testers: tuple[LabHost, ...]
    duts: tuple[LabHost, ...]
    source: str = ""

    def pairs(self) -> list[Pair]:
        by_name = {t.name: t for t in self.testers}
        out = []
        for i, dut in enumerate(self.duts):
            if dut.pair:
                if dut.pair not in by_name:
                    raise UsageError(f"inventory {self.source}: dut {dut.name}: vswbench_pair "
                                     f"{dut.pair!r} is not a host of group tester")
                out.append(Pair(by_name[dut.pair], dut))
            elif i < len(self.testers):
                out.append(Pair(self.testers[i], dut))
            else:
                raise UsageError(f"inventory {self.source}: dut {dut.name} has no tester (add "
                                 "vswbench_pair or another host to group tester)")
        return out

    def pair(self, dut: str | None = None) -> Pair:
        pairs = self.pairs()
        if dut is None:
            return pairs[0]
        for p in pairs:
            if p.dut.name == dut:
                return p
        raise UsageError(f"inventory {self.source}: no dut named {dut!r} "
                         f"(hosts: {', '.join(p.dut.name for p in pairs)})")


def _table(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _host(name: str, group: str, values: dict[str, Any], where: str) -> LabHost:
    def text(key: str, default: str) -> str:
        v = values.get(key, default)
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise UsageError(f"{where}: host {name}: {key} must be a string")
        return str(v)

    port = values.get("ansible_port", 22)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise UsageError(f"{where}: host {name}: ansible_port must be 1..65535, got {port!r}")
    wire = values.get("vswbench_wire", ())
    wire = (wire,) if isinstance(wire, str) else wire
    if not isinstance(wire, (list, tuple)) or not all(isinstance(w, str) for w in wire):
        raise UsageError(f"{where}: host {name}: vswbench_wire must name interfaces")
    env = _table(values.get("vswbench_env"), f"{where}: host {name}: vswbench_env")
    return LabHost(name, group, text("ansible_host", name), port, text("ansible_user", "root"),
                   text("ansible_ssh_private_key_file", ""), text("vswbench_known_hosts", ""),
                   text("vswbench_python", "python3"), tuple(wire), text("vswbench_pair", ""),
                   tuple((str(k), str(v)) for k, v in sorted(env.items())))


def parse_inventory(data: Any, source: str = "<inventory>") -> Inventory:
    root = _table(data, source)
    top = _table(root.get("all", root), f"{source}: all")
    top_vars = _table(top.get("vars"), f"{source}: all.vars")
    children = _table(top.get("children", top), f"{source}: all.children")
    found: dict[str, list[LabHost]] = {}
    for group in GROUPS:
        if group not in children:
            raise UsageError(f"inventory {source}: no group {group!r} (groups: "
                             f"{', '.join(map(str, children)) or 'none'}); name the tester and "
                             "dut hosts")
        table = _table(children[group], f"{source}: {group}")
        group_vars = {**top_vars, **_table(table.get("vars"), f"{source}: {group}.vars")}
        hosts = _table(table.get("hosts"), f"{source}: {group}.hosts")
        if not hosts:
            raise UsageError(f"inventory {source}: group {group} has no hosts")
        found[group] = [_host(str(n), group, {**group_vars, **_table(v, f"{source}: {n}")},
                              source) for n, v in hosts.items()]
    return Inventory(tuple(found["tester"]), tuple(found["dut"]), source)


def load_inventory(path: str | Path) -> Inventory:
    import yaml

    text = read_text(path, "inventory", "--inventory")    # bounded: a regular file, 1 MB
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"inventory {path}: not YAML: {exc}") from None
    return parse_inventory(data, str(path))
