"""A switch the user declares: `[switch.NAME]` in a spec or in a file given as `--switch-file`
(TOML), with argv lists that build it, tear it down, read its counters and say its version.
vswbench makes the ports (a veth pair per host port, the switch-side end in the switch
namespace, named vsb<id>sw<N> or as `port_names` says), runs the commands and measures through
it like any built-in backend.

    [switch.mybridge]
    description = "Linux bridge built with ip"
    setup    = [["ip", "link", "add", "{VSB_RUN_ID}br", "type", "bridge"], ...]   # once
    attach   = [["ip", "link", "set", "{VSB_PORT}", "master", "{VSB_RUN_ID}br"]]  # per port
    forward  = [[...]]          # per path: {VSB_SRC_PORT} -> {VSB_DST_PORT}
    teardown = [["ip", "link", "del", "{VSB_RUN_ID}br"]]
    counters = ["cmd", ...]     # optional: stdout JSON {"<port>": {"rx_packets": n, ...}}
    version  = ["ip", "-V"]     # optional: its first line is recorded with every result
    cpus     = [1]              # optional: CPUs it may use ({VSB_CPUS}; its ports' NAPI threads go
                                # to the first); default the switch CPU
    port_names = ["p0", "p1"]   # optional: names of the switch-side ends

Every command runs inside the switch namespace (`ip netns exec`), never through a shell (a user
who wants one writes ["sh", "-c", ...]), with the run's environment: VSB_RUN_ID,
VSB_SWITCH_NETNS, VSB_PORTS (the switch-side ends, space separated), VSB_PORT<i>,
VSB_HOST_NETNS<i>, VSB_HOST_IFNAME<i>, VSB_CPUS, and per command VSB_PORT / VSB_SRC_PORT /
VSB_DST_PORT. `{VSB_...}` in an argument is replaced by that variable (other braces stay, so
nft's `{ ... }` needs no escaping). Teardown is registered before the first setup command runs:
it runs on a normal end, an error (a failing setup command: its output, exit 1) and a signal.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.host.netns import in_netns
from vswbench.host.netns import ip
from vswbench.host.netns import namespace_exists
from vswbench.host.netns import set_up
from vswbench.host.netns import wait_link_up
from vswbench.saferead import read_text
from vswbench.switches.base import Attachment
from vswbench.switches.base import Availability
from vswbench.switches.base import ForwardPath
from vswbench.switches.base import HostPort
from vswbench.switches.base import PortCounters
from vswbench.switches.base import SwitchContext
from vswbench.switches.kernel.counters import read_counters
from vswbench.switches.kernel.napi import SWITCH_CPU
from vswbench.switches.kernel.napi import place_napi
from vswbench.switches.kernel.switch import KernelSwitch

KEYS = ("description", "setup", "attach", "forward", "teardown", "counters", "version", "cpus",
        "port_names")
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,39}\Z")
PORT_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}\Z")
VAR_RE = re.compile(r"\{(VSB_[A-Z0-9_]+)\}")
TIMEOUT = 120.0
MAX_FILE = 1_000_000
OUTPUT_SHOWN = 2000


class SetupFailed(VswbenchError):
    """A command of a user's switch failed (exit 1, with its output)."""


@dataclass(frozen=True)
class Declaration:
    name: str
    description: str
    setup: tuple[tuple[str, ...], ...] = ()
    attach: tuple[tuple[str, ...], ...] = ()
    forward: tuple[tuple[str, ...], ...] = ()
    teardown: tuple[tuple[str, ...], ...] = ()
    counters: tuple[str, ...] = ()
    version: tuple[str, ...] = ()
    cpus: tuple[int, ...] = ()
    port_names: tuple[str, ...] = ()
    source: str = ""            # the file or spec it came from

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in KEYS}


def _argv(where: str, value: Any) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(a, str) for a in value) or not value[0]):
        raise UsageError(f"{where}: expected an argv list of strings, e.g. [\"ip\", \"link\"], "
                         f"got {value!r}")
    return tuple(value)


def _argvs(where: str, value: Any) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise UsageError(f"{where}: expected a list of argv lists, e.g. [[\"ip\", \"-V\"]]")
    return tuple(_argv(f"{where}[{i}]", item) for i, item in enumerate(value))


BASE_VARS = re.compile(r"VSB_(RUN_ID|SWITCH_NETNS|PORTS|CPUS|PORT\d+|HOST_NETNS\d+|"
                       r"HOST_IFNAME\d+)")
EXTRA_VARS = {"attach": ("VSB_PORT",), "forward": ("VSB_SRC_PORT", "VSB_DST_PORT"),
              "version": None}     # version runs before any namespace: no placeholder at all


def _check_placeholders(where: str, key: str, argvs: Sequence[Sequence[str]]) -> None:
    """Every {VSB_...} in the commands of `key` is one that is set when they run: checked when
    the table is read, before the first namespace (UsageError, exit 2)."""
    extra = EXTRA_VARS.get(key, ())
    for i, argv in enumerate(argvs):
        for arg in argv:
            for var in VAR_RE.findall(arg):
                if extra is None:
                    raise UsageError(f"{where}.{key}: {{{var}}}: the version command runs "
                                     "before the testbed exists; give it no placeholder")
                if not (BASE_VARS.fullmatch(var) or var in extra):
                    known = "VSB_RUN_ID, VSB_SWITCH_NETNS, VSB_PORTS, VSB_CPUS, VSB_PORT<i>, " \
                            "VSB_HOST_NETNS<i>, VSB_HOST_IFNAME<i>" + "".join(
                                f", {v}" for v in extra)
                    raise UsageError(f"{where}.{key}[{i}]: unknown placeholder {{{var}}}; "
                                     f"known here: {known}")


def parse_declaration(name: str, table: Any, source: str = "",
                      builtin: Sequence[str] = ()) -> Declaration:
    """One [switch.NAME] table, checked; UsageError (exit 2) naming the key and the fix."""
    where = f"{source + ': ' if source else ''}[switch.{name}]"
    if not NAME_RE.match(name):
        raise UsageError(f"{where}: a switch name is lower case letters, digits and '-', "
                         "starting with a letter")
    if name in builtin:
        raise UsageError(f"{where}: {name} is a built-in switch; give yours another name")
    if not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table of keys ({', '.join(KEYS)})")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {', '.join(unknown)}; known: {', '.join(KEYS)}")
    if not table.get("setup") and not table.get("attach"):
        raise UsageError(f"{where}: needs `setup` or `attach` commands (what builds the switch)")
    description = table.get("description", f"user switch {name}")
    if not isinstance(description, str):
        raise UsageError(f"{where}: description must be a string")
    cpus = table.get("cpus", [])
    if not isinstance(cpus, list) or not all(isinstance(c, int) and not isinstance(c, bool)
                                             and 0 <= c < 4096 for c in cpus):
        raise UsageError(f"{where}: cpus must be a list of CPU numbers, e.g. [1]")
    names = table.get("port_names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and PORT_RE.match(n)
                                              for n in names) or len(set(names)) != len(names):
        raise UsageError(f"{where}: port_names must be distinct interface names (at most 15 "
                         "letters, digits, '_', '.', '-')")
    decl = Declaration(
        name, description, setup=_argvs(f"{where}.setup", table.get("setup", [])),
        attach=_argvs(f"{where}.attach", table.get("attach", [])),
        forward=_argvs(f"{where}.forward", table.get("forward", [])),
        teardown=_argvs(f"{where}.teardown", table.get("teardown", [])),
        counters=_argv(f"{where}.counters", table["counters"]) if "counters" in table else (),
        version=_argv(f"{where}.version", table["version"]) if "version" in table else (),
        cpus=tuple(cpus), port_names=tuple(names), source=source)
    for key in ("setup", "attach", "forward", "teardown"):
        _check_placeholders(where, key, getattr(decl, key))
    _check_placeholders(where, "counters", [decl.counters])
    _check_placeholders(where, "version", [decl.version])
    return decl


def parse_tables(tables: Any, source: str, builtin: Sequence[str] = ()) -> list[Declaration]:
    """The `switch` table of a spec or a switch file: {NAME: {...}, ...}."""
    if not isinstance(tables, dict) or not tables:
        raise UsageError(f"{source}: expected one or more [switch.NAME] tables")
    return [parse_declaration(name, table, source, builtin) for name, table in tables.items()]


def load_file(path: str | Path, builtin: Sequence[str] = (),
              flag: str | None = "--switch-file") -> list[Declaration]:
    """A switch file: TOML with [switch.NAME] tables and nothing else, read by saferead (a
    regular file of at most MAX_FILE). `flag`: the option that named it (None: a spec did),
    the only one its errors name."""
    text = read_text(path, "switch file", flag, cap=MAX_FILE)
    what = f"{flag} {path}" if flag else f"switch file {path}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{what}: not valid TOML: {exc}") from None
    except RecursionError:
        raise UsageError(f"{what}: tables nested too deep") from None
    if not isinstance(data, dict):
        raise UsageError(f"{what}: expected [switch.NAME] tables")
    extra = sorted(set(data) - {"switch"})
    if extra:
        raise UsageError(f"{what}: only [switch.NAME] tables belong here, not "
                         f"{', '.join(extra)}")
    return parse_tables(data.get("switch"), str(path), builtin)


def substitute(argv: Sequence[str], env: Mapping[str, str], where: str) -> list[str]:
    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in env:
            raise UsageError(f"{where}: {{{key}}} is not set here; set: {', '.join(sorted(env))}")
        return env[key]
    return [VAR_RE.sub(one, arg) for arg in argv]


@dataclass
class CommandRun:
    argv: list[str]
    returncode: int
    output: str


def run_command(netns: str, argv: Sequence[str], env: Mapping[str, str]) -> CommandRun:
    """One user command in the switch namespace, no shell; its status and output."""
    full = in_netns(netns, list(argv))
    environ = {**os.environ, **env}
    try:
        proc = subprocess.run(full, capture_output=True, text=True, env=environ,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        return CommandRun(list(argv), 127, str(exc))
    except subprocess.TimeoutExpired:
        return CommandRun(list(argv), 124, f"no exit within {TIMEOUT:.0f} s")
    return CommandRun(list(argv), proc.returncode, (proc.stdout + proc.stderr).strip())


class ExternalSwitch(KernelSwitch):
    """The base of every declared switch (make_class gives each its Declaration)."""
    declaration: Declaration
    kernel_tx_ok = False

    @classmethod
    def availability(cls) -> Availability:
        if os.geteuid() != 0:
            return Availability(False, "needs root (creates network namespaces and links)",
                                "run as root")
        import shutil
        decl = cls.declaration          # every command, before the first namespace
        for argv in (*decl.setup, *decl.attach, *decl.forward, *decl.teardown,
                     *((decl.counters,) if decl.counters else ())):
            prog = argv[0]
            found = (prog.startswith("{") or (os.access(prog, os.X_OK) if os.path.isabs(prog)
                                              else shutil.which(prog) is not None))
            if not found:
                return Availability(False, f"{argv[0]} not found (a command of "
                                    f"[switch.{cls.name}])", f"install {argv[0]}")
        return Availability(True)

    @classmethod
    def versions(cls) -> dict[str, str]:
        if not cls.declaration.version:
            return {}
        done = run_command_root(cls.declaration.version)
        first = done.output.splitlines()[0] if done.output else ""
        return {cls.name: first if done.returncode == 0 else f"(version failed: {first})"}

    def __init__(self, ctx: SwitchContext) -> None:
        super().__init__(ctx)
        self.log: list[str] = []
        self.env: dict[str, str] = {}

    def switch_port_name(self, index: int) -> str:
        names = self.declaration.port_names
        if names:
            if index >= len(names):
                raise UsageError(f"[switch.{self.name}]: port_names has {len(names)} names and "
                                 f"this scenario has more ports")
            return names[index]
        return self.ctx.run_id.ifname(f"sw{index}")

    def setup(self) -> None:
        pass   # the commands run in forward(), once every port exists

    def place_port(self, att: Attachment) -> None:
        """The ports' receive work (threaded NAPI of the switch-side ends) on the first of the
        declared CPUs, else round robin over the switch cores as for every kernel backend."""
        assert att.switch_ifname is not None
        cpus = self.declaration.cpus
        place_napi(self.ctx, self.ctx.netns, att.switch_ifname, self.placed,
                   cpu=cpus[0] if cpus else SWITCH_CPU)

    def attach(self, port: HostPort) -> Attachment:
        att = super().attach(port)
        wanted = self.switch_port_name(len(self.attachments) - 1)
        if att.switch_ifname != wanted:   # a link is renamed while down
            ns, old = self.ctx.netns, att.switch_ifname or ""
            ip("link", "set", "dev", old, "down", netns=ns)
            ip("link", "set", "dev", old, "name", wanted, netns=ns)
            set_up(ns, wanted)
            wait_link_up(ns, wanted)
            att.switch_ifname = wanted
        return att

    def base_env(self) -> dict[str, str]:
        atts = list(self.attachments.values())
        cpus = self.declaration.cpus or self.ctx.placement.switch_cpus
        env = {"VSB_RUN_ID": str(self.ctx.run_id), "VSB_SWITCH_NETNS": self.ctx.netns,
               "VSB_PORTS": " ".join(a.switch_ifname or "" for a in atts),
               "VSB_CPUS": ",".join(map(str, cpus))}
        for i, att in enumerate(atts):
            env[f"VSB_PORT{i}"] = att.switch_ifname or ""
            env[f"VSB_HOST_NETNS{i}"] = att.host.netns
            env[f"VSB_HOST_IFNAME{i}"] = att.host.ifname
        return env

    def run_all(self, what: str, argvs: Sequence[Sequence[str]], env: Mapping[str, str],
                check: bool = True) -> list[str]:
        errors = []
        for i, argv in enumerate(argvs):
            where = f"[switch.{self.name}].{what}[{i}]"
            done = run_command(self.ctx.netns, substitute(argv, env, where), env)
            self.log.append(f"$ {' '.join(done.argv)}  (exit {done.returncode})")
            if done.returncode != 0:
                shown = done.output[-OUTPUT_SHOWN:] or "(no output)"
                message = (f"{where} `{' '.join(done.argv)}` failed with status "
                           f"{done.returncode}:\n{shown}")
                if check:
                    raise SetupFailed(message)
                errors.append(message)
        return errors

    def forward(self, paths: list[ForwardPath]) -> None:
        self.env = self.base_env()
        netns = self.ctx.netns

        def teardown() -> None:
            if namespace_exists(netns):
                errors = self.run_all("teardown", self.declaration.teardown, self.env,
                                      check=False)
                if errors:
                    raise VswbenchError("; ".join(errors))

        self.register(f"teardown of switch {self.name}", teardown)
        self.run_all("setup", self.declaration.setup, self.env)
        for att in self.attachments.values():
            self.run_all("attach", self.declaration.attach,
                         {**self.env, "VSB_PORT": att.switch_ifname or ""})
        for src, dst in self.out_of(paths).items():
            self.run_all("forward", self.declaration.forward,
                         {**self.env, "VSB_SRC_PORT": self.attachments[src].switch_ifname or "",
                          "VSB_DST_PORT": dst.switch_ifname or ""})

    def port_counters(self) -> list[PortCounters]:
        if not self.declaration.counters:
            return read_counters(self.ctx.netns, [a.switch_ifname for a in
                                                  self.attachments.values() if a.switch_ifname])
        where = f"[switch.{self.name}].counters"
        done = run_command(self.ctx.netns, substitute(self.declaration.counters, self.env,
                                                      where), self.env)
        if done.returncode != 0:
            raise VswbenchError(f"{where} failed with status {done.returncode}: {done.output}")
        return parse_counters(done.output, where)

    def config_dump(self) -> str:
        decl = json.dumps(self.declaration.as_dict(), indent=1)
        return (f"## user switch {self.name} ({self.declaration.source})\n{decl}\n"
                f"## commands run\n" + "\n".join(self.log) + "\n" + self.placement_notes())

    def stats(self) -> dict[str, object]:
        return {"declaration": self.declaration.as_dict()}


def run_command_root(argv: Sequence[str]) -> CommandRun:
    """The version command: read-only, run where vswbench runs (no namespace yet)."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CommandRun(list(argv), 127, str(exc))
    return CommandRun(list(argv), proc.returncode, (proc.stdout + proc.stderr).strip())


COUNTER_FIELDS = ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped", "rx_errors",
                  "tx_errors")


def parse_counters(text: str, where: str) -> list[PortCounters]:
    """{"port": {"rx_packets": n, ...}, ...} -> PortCounters (missing fields count 0)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VswbenchError(f"{where}: its output is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise VswbenchError(f"{where}: expected {{\"port\": {{\"rx_packets\": n, ...}}}}")
    out = []
    for port, values in data.items():
        if not isinstance(values, dict):
            raise VswbenchError(f"{where}: port {port}: expected an object of counters")
        counts = {k: int(values.get(k, 0)) for k in COUNTER_FIELDS}
        out.append(PortCounters(str(port), **counts))
    return out


def make_class(decl: Declaration) -> type[ExternalSwitch]:
    """The backend class of one declaration (a subclass of ExternalSwitch)."""
    attrs: dict[str, Any] = {"name": decl.name, "description": decl.description,
                             "declaration": decl}
    cls = type(f"External_{decl.name.replace('-', '_')}", (ExternalSwitch,), attrs)
    return cls
