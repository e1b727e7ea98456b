"""Calling CNI plugins exactly as a runtime does (CNI spec 1.0.0, "Execution protocol"): the
plugin binary from /usr/lib/cni (Debian's containernetworking-plugins) run with no shell, its
parameters in CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and CNI_PATH, the network
configuration as JSON on stdin, the result (or an error object) as JSON on stdout.

The plugins run inside the switch namespace (`ip netns exec <run id>sw`): what a plugin makes on
"the host" (the bridge, the host ends of veths, iptables chains, ifb devices) is made there, and
the root namespace is never touched. CNI_NETNS is the container's namespace, /run/netns/<run
id><host>.

Every ADD is recorded (`Attachment record`: the invocation and the result, a JSON file in the
run's own temp directory, `<dir>/cni/`) before anything else happens, and its DEL registered in
the run's cleanup registry; `vswbench clean` finds the records of a killed run in its temp
directory and calls DEL for each (`undo_recorded`) before the namespaces go.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from vswbench.errors import VswbenchError
from vswbench.safefile import write_text
from vswbench.switches.cni.netconf import CNI_VERSION
from vswbench.switches.cni.netconf import plugin_stdin
from vswbench.switches.cni.netconf import plugin_types

PLUGIN_DIR = Path("/usr/lib/cni")
PACKAGE = "containernetworking-plugins"
NETNS_DIR = "/run/netns"
RECORD_DIR = "cni"
TIMEOUT = 60.0


class PluginError(VswbenchError):
    """A plugin answered an error (its code and message, as the spec's error object says)."""


@dataclass(frozen=True)
class Invocation:
    """One container on one network: what a runtime hands the plugins."""
    netconf: dict[str, Any]          # the conflist
    plugin_netns: str                # where the plugins run (the switch namespace)
    container_netns: str             # the container (a host namespace of the testbed)
    ifname: str                      # CNI_IFNAME
    container_id: str                # CNI_CONTAINERID
    ips: tuple[str, ...] = ()        # runtimeConfig ips (capability "ips")
    result: dict[str, Any] = field(default_factory=dict)   # the final ADD result

    @property
    def netns_path(self) -> str:
        return f"{NETNS_DIR}/{self.container_netns}"

    def env(self, command: str) -> dict[str, str]:
        path = os.environ.get("PATH", "") or "/usr/sbin:/usr/bin:/sbin:/bin"
        if "/usr/sbin" not in path.split(":"):
            path += ":/usr/sbin:/sbin"
        return {"PATH": path, "CNI_COMMAND": command, "CNI_CONTAINERID": self.container_id,
                "CNI_NETNS": self.netns_path, "CNI_IFNAME": self.ifname,
                "CNI_PATH": str(PLUGIN_DIR)}


def plugin_argv(plugin_netns: str | None, kind: str) -> list[str]:
    """The plugin binary, run in the switch namespace (no shell)."""
    binary = str(PLUGIN_DIR / kind)
    return ["ip", "netns", "exec", plugin_netns, binary] if plugin_netns else [binary]


def _exec(argv: list[str], env: Mapping[str, str], stdin: str) -> dict[str, Any]:
    try:
        proc = subprocess.run(argv, input=stdin, env=dict(env), capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise PluginError(f"CNI plugin {argv[-1]} {env.get('CNI_COMMAND')}: no answer in "
                          f"{TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise PluginError(f"CNI plugin {argv[-1]}: {exc}") from None
    answer: Any = None
    if proc.stdout.strip():
        try:
            answer = json.loads(proc.stdout)
        except json.JSONDecodeError:
            answer = None
    if proc.returncode != 0:
        if isinstance(answer, dict) and "msg" in answer:
            why = f"code {answer.get('code')}: {answer['msg']}"
            if answer.get("details"):
                why += f" ({answer['details']})"
        else:
            why = (proc.stderr or proc.stdout).strip() or f"exit {proc.returncode}"
        raise PluginError(f"CNI plugin {Path(argv[-1]).name} {env.get('CNI_COMMAND')} "
                          f"{env.get('CNI_IFNAME', '')}: {why}")
    return answer if isinstance(answer, dict) else {}


def call(inv: Invocation, command: str, index: int,
         prev_result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One plugin of the list (`index`) for one command; its JSON result."""
    kind = plugin_types(inv.netconf)[index]
    stdin = plugin_stdin(inv.netconf, index, ips=inv.ips, prev_result=prev_result)
    return _exec(plugin_argv(inv.plugin_netns, kind), inv.env(command), json.dumps(stdin))


def add(inv: Invocation) -> dict[str, Any]:
    """ADD through the whole list, each plugin handed the previous one's result (libcni's
    AddNetworkList); the final result."""
    result: dict[str, Any] | None = None
    for index in range(len(inv.netconf["plugins"])):
        result = call(inv, "ADD", index, result)
    return result or {}


def delete(inv: Invocation) -> list[str]:
    """DEL through the list in reverse order, each plugin handed the ADD result as prevResult
    (libcni's DelNetworkList); goes on past a failing plugin; the errors."""
    errors: list[str] = []
    prev = inv.result or None
    for index in reversed(range(len(inv.netconf["plugins"]))):
        try:
            call(inv, "DEL", index, prev)
        except PluginError as exc:
            errors.append(str(exc))
    return errors


def version(kind: str) -> dict[str, Any]:
    """CNI_COMMAND=VERSION: the spec versions the plugin supports ({} when it cannot run)."""
    env = {"PATH": os.environ.get("PATH", ""), "CNI_COMMAND": "VERSION"}
    try:
        return _exec([str(PLUGIN_DIR / kind)], env, json.dumps({"cniVersion": CNI_VERSION}))
    except PluginError:
        return {}


def about(kind: str) -> str:
    """What the binary says of itself when run bare ("CNI bridge plugin version unknown" in
    Debian's build, which stamps no version: the package version is the one to trust)."""
    try:
        proc = subprocess.run([str(PLUGIN_DIR / kind)], capture_output=True, text=True,
                              timeout=10, env={"PATH": os.environ.get("PATH", "")},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or
                                                                     proc.stderr).strip() else ""


def package_version() -> str:
    try:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def plugin_versions(kinds: Sequence[str]) -> dict[str, str]:
    """The package's version and, per plugin, the CNI versions it answers to VERSION."""
    found = {PACKAGE: package_version() or "unknown"}
    for kind in kinds:
        answer = version(kind)
        spec = answer.get("supportedVersions") or []
        found[f"cni {kind}"] = (f"spec {spec[0]}..{spec[-1]}" if spec else "no answer")
    return found


# -- records, for `vswbench clean` ---------------------------------------------------------------
def record_path(temp_dir: str, inv: Invocation) -> Path:
    return Path(temp_dir) / RECORD_DIR / f"{inv.container_id}.json"


def record(temp_dir: str, inv: Invocation) -> Path:
    """Write the invocation (with its result once known) into the run's temp directory."""
    path = record_path(temp_dir, inv)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    write_text(path, json.dumps(asdict(inv), indent=1) + "\n")
    return path


def load_record(path: Path) -> Invocation | None:
    try:
        data = json.loads(path.read_text())
        return Invocation(netconf=dict(data["netconf"]), plugin_netns=str(data["plugin_netns"]),
                          container_netns=str(data["container_netns"]),
                          ifname=str(data["ifname"]), container_id=str(data["container_id"]),
                          ips=tuple(str(i) for i in data.get("ips", ())),
                          result=dict(data.get("result") or {}))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recorded(temp_dir: Path) -> list[Path]:
    folder = temp_dir / RECORD_DIR
    try:
        return sorted(p for p in folder.glob("*.json") if p.is_file() and not p.is_symlink())
    except OSError:
        return []


def undo_recorded(temp_dir: Path, run_id: str) -> list[str]:
    """DEL for every ADD a killed run recorded in `temp_dir` (plugins run in the recorded switch
    namespace, which must still exist and belong to `run_id`; never in the root namespace).
    One message per record."""
    from vswbench.host.netns import namespace_exists

    said: list[str] = []
    for path in recorded(temp_dir):
        inv = load_record(path)
        if inv is None:
            said.append(f"CNI record {path}: unreadable, skipped")
            continue
        if not inv.plugin_netns.startswith(run_id) or not inv.container_netns.startswith(run_id):
            said.append(f"CNI record {path}: names namespaces of another run, skipped")
            continue
        if not namespace_exists(inv.plugin_netns):
            said.append(f"CNI DEL {inv.container_id}/{inv.ifname}: namespace "
                        f"{inv.plugin_netns} is gone already")
            continue
        errors = delete(inv)
        path.unlink(missing_ok=True)
        kinds = ", ".join(plugin_types(inv.netconf))
        said.append(f"CNI DEL {inv.container_id}/{inv.ifname} ({kinds})"
                    + (f": {'; '.join(errors)}" if errors else ""))
    return said
