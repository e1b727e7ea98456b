"""`vswbench clean`: remove what killed runs left behind, and nothing else.

Removed: namespaces, root-namespace links, pinned BPF objects and DPDK leftovers named exactly as
a run names them (`vsb` + 4 hex digits of the run id + a role such as `sw`, `tester`, `nf3`,
`br0`; RUN_NAME_RE), temporary directories /tmp/vsb-<run id>-*, and the processes recorded in the
state file of a run whose owner is gone (by PID, and only if the PID still belongs to the very
process recorded). A narrower --prefix (e.g. one run id) limits all of it. Never touched, and said
so: objects of a run that is still alive (its state file names a live owner), namespaces in which
some process still runs (unless --force; those processes are never killed), names that merely
start with `vsb` (`vsb-user`, `vsbuser`, `vsbzzzz-notmine`), and /tmp directories not named by a
run id.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vswbench.host.netns import ip, ip_json, list_namespaces, namespace_pids, run
from vswbench.run.ids import PREFIX, is_project_name
from vswbench.run.state import RecordedProcess, RunState, is_same_process, load_all

TEMP_ROOT = Path("/tmp")
TEMP_GLOB = "vsb-vsb*"
# what the project names its temp dirs (run/scope.py, ovs_daemon.py, bpfobj.py): vsb-<run id>-...; a
# directory of anyone else's that merely starts with vsb- is left alone
TEMP_NAME_RE = re.compile(r"^vsb-vsb[0-9a-f]{4}-")
BPF_FS = Path("/sys/fs/bpf")  # pinned BPF objects named vsb<run id>... (programs on interfaces
                              # of a run's namespaces disappear with the namespaces themselves)
DPDK_RUN = Path("/var/run/dpdk")  # DPDK runtime dirs, one per --file-prefix (vsb...)
# what a run names its kernel objects: run id + role (run/ids.py RunId.name / ifname)
RUN_NAME_RE = re.compile(r"^(vsb[0-9a-f]{4})([a-z][a-z0-9]{0,11})?$")
# the engine's own DPDK file prefix when none is given (engine/README.md): vsbdpdk<pid>
ENGINE_DPDK_RE = re.compile(r"^vsbdpdk[0-9]+")


@dataclass
class CleanPlan:
    processes: list[tuple[str, RecordedProcess]] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    busy_namespaces: dict[str, list[int]] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    temp_dirs: list[Path] = field(default_factory=list)
    state_files: list[Path] = field(default_factory=list)
    live_runs: list[str] = field(default_factory=list)
    bpf_pins: list[Path] = field(default_factory=list)
    dpdk_files: list[Path] = field(default_factory=list)   # runtime dirs, hugepage files
    not_ours: list[str] = field(default_factory=list)       # vsb... names no run makes

    @property
    def empty(self) -> bool:
        return not (self.processes or self.namespaces or self.links or self.temp_dirs
                    or self.state_files or self.bpf_pins or self.dpdk_files)


def select_leftovers(*, namespaces: Iterable[str], links: Iterable[str],
                     temp_dirs: Iterable[Path], states: Iterable[RunState],
                     pids_in_namespace: Callable[[str], list[int]],
                     process_alive: Callable[[RecordedProcess], bool],
                     force: bool = False, prefix: str = PREFIX,
                     bpf_pins: Iterable[Path] = (), dpdk_files: Iterable[Path] = (),
                     path_in_use: Callable[[Path], bool] = lambda p: False) -> CleanPlan:
    """Decide what to remove (pure: every fact about the host comes in as an argument).

    `prefix` narrows the search (e.g. one run id); it must itself start with `vsb`.
    """
    if not is_project_name(prefix):
        raise ValueError(f"clean prefix {prefix!r} does not start with {PREFIX!r}")
    plan = CleanPlan()
    protected_dirs: set[str] = set()
    for state in states:
        if not state.run_id.startswith(prefix):
            continue
        if state.owner_alive():
            plan.live_runs.append(state.run_id)
            protected_dirs.update(state.temp_dirs)
            continue
        plan.processes += [(state.run_id, p) for p in state.processes if process_alive(p)]
        if state.path is not None:
            plan.state_files.append(state.path)
    live = tuple(plan.live_runs)

    def ours(name: str) -> bool:
        if not name.startswith(prefix):
            return False
        match = RUN_NAME_RE.match(name)
        if match is None:
            plan.not_ours.append(name)
            return False
        return match.group(1) not in live

    doomed = {p.pid for _, p in plan.processes}
    for ns in namespaces:
        if not ours(ns):
            continue
        busy = [pid for pid in pids_in_namespace(ns) if pid not in doomed]
        if busy and not force:
            plan.busy_namespaces[ns] = busy
        else:
            plan.namespaces.append(ns)
    plan.links = [name for name in links if ours(name)]
    plan.bpf_pins = [path for path in bpf_pins if ours(path.name)]
    # DPDK leaves its runtime dir (and, with hugepages, hugepage files) after a SIGKILL; a live
    # DPDK process keeps them open, so only files nobody holds are removed
    plan.dpdk_files = [path for path in dpdk_files
                       if (ours(path.name.split("map_")[0])
                           or (prefix == PREFIX and ENGINE_DPDK_RE.match(path.name)))
                       and not path_in_use(path)]
    plan.not_ours = sorted(set(n for n in plan.not_ours if not ENGINE_DPDK_RE.match(n)))
    for path in temp_dirs:
        run_part = path.name[len("vsb-"):]
        if str(path) in protected_dirs or (live and run_part.startswith(live)):
            continue
        if prefix != PREFIX and not run_part.startswith(prefix):
            continue
        plan.temp_dirs.append(path)
    return plan


def project_temp_dirs(root: Path) -> list[Path]:
    """Directories under `root` named as the project names its temp dirs (TEMP_NAME_RE)."""
    return sorted(p for p in root.glob(TEMP_GLOB)
                  if TEMP_NAME_RE.match(p.name) and p.is_dir() and not p.is_symlink())


def plan_clean(force: bool = False, prefix: str = PREFIX) -> CleanPlan:
    root_links = [str(link["ifname"]) for link in ip_json("link", "show")]
    temp_dirs = project_temp_dirs(TEMP_ROOT)
    try:
        pins = sorted(BPF_FS.glob(f"{PREFIX}*")) if BPF_FS.is_dir() else []
    except OSError:
        pins = []
    return select_leftovers(bpf_pins=pins, dpdk_files=dpdk_leftovers(),
        path_in_use=paths_in_use(),
        namespaces=list_namespaces(), links=root_links, temp_dirs=temp_dirs, states=load_all(),
        pids_in_namespace=namespace_pids,
        process_alive=lambda p: is_same_process(p.pid, p.start_time), force=force, prefix=prefix)


def hugetlbfs_mounts(mounts: str | None = None) -> list[Path]:
    """Mount points of hugetlbfs (from /proc/mounts)."""
    try:
        text = mounts if mounts is not None else Path("/proc/mounts").read_text()
    except OSError:
        return []
    return [Path(f[1]) for f in (line.split() for line in text.splitlines())
            if len(f) > 2 and f[2] == "hugetlbfs"]


def dpdk_leftovers() -> list[Path]:
    """vsb* DPDK runtime dirs and vsb* files on hugetlbfs mounts."""
    found: list[Path] = []
    for root in (DPDK_RUN, *hugetlbfs_mounts()):
        try:
            found += sorted(root.glob(f"{PREFIX}*"))
        except OSError:
            continue
    return found


def paths_in_use(proc: Path = Path("/proc")) -> Callable[[Path], bool]:
    """A predicate: does any live process hold this path (or a file under it) open or mapped?"""
    held: set[str] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                try:
                    held.add(os.readlink(fd))
                except OSError:
                    pass
            for line in (entry / "maps").read_text().splitlines():
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    held.add(parts[5].replace(" (deleted)", ""))
        except OSError:
            continue

    def in_use(path: Path) -> bool:
        base = str(path)
        return any(h == base or h.startswith(base + "/") for h in held)
    return in_use


def _stop_recorded(proc: RecordedProcess, grace: float = 3.0) -> str:
    if not is_same_process(proc.pid, proc.start_time):
        return "already gone"
    os.kill(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not is_same_process(proc.pid, proc.start_time):
            return "stopped (SIGTERM)"
        time.sleep(0.02)
    if is_same_process(proc.pid, proc.start_time):
        os.kill(proc.pid, signal.SIGKILL)
        return "killed (SIGKILL after SIGTERM)"
    return "stopped (SIGTERM)"


def execute(plan: CleanPlan, report: Callable[[str], None] = print) -> list[str]:
    """Carry out a plan; report each action as it happens; return the list of messages."""
    done: list[str] = []

    def say(message: str) -> None:
        done.append(message)
        report(message)

    for run_id, proc in plan.processes:
        try:
            outcome = _stop_recorded(proc)
        except ProcessLookupError:
            outcome = "already gone"
        say(f"process {proc.pid} of run {run_id} ({command_name(proc.argv)}): {outcome}")
    for ns in plan.namespaces:
        run(["ip", "netns", "delete", ns])
        say(f"removed namespace {ns}")
    existing = {str(link["ifname"]) for link in ip_json("link", "show")} if plan.links else set()
    for name in plan.links:
        if name in existing:  # deleting one end of a veth pair also removes the other
            ip("link", "del", name, check=False)
            say(f"removed link {name}")
            existing = {str(link["ifname"]) for link in ip_json("link", "show")}
    for path in plan.temp_dirs:
        shutil.rmtree(path, ignore_errors=True)
        say(f"removed directory {path}")
    for path in plan.bpf_pins:  # unlinking a pin drops the object once nothing else holds it
        _remove(path)
        say(f"removed pinned BPF object {path}")
    for path in plan.dpdk_files:
        _remove(path)
        say(f"removed DPDK leftover {path}")
    for path in plan.state_files:
        path.unlink(missing_ok=True)
        say(f"removed state file {path}")
    return done


def _remove(path: Path) -> None:
    """A file, or a directory with what is in it (never following a symlink)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def command_name(argv: list[str]) -> str:
    """The program a recorded argv runs, past `ip netns exec NS` (ovs-vswitchd, not "ip netns")."""
    rest = list(argv)
    while rest[:3] == ["ip", "netns", "exec"] and len(rest) > 4:
        rest = rest[4:]
    return Path(rest[0]).name if rest else "?"


def describe_skips(plan: CleanPlan) -> list[str]:
    notes = [f"left namespace {ns} alone: processes {', '.join(map(str, pids))} still run in it "
             f"(use --force to remove it anyway)" for ns, pids in plan.busy_namespaces.items()]
    notes += [f"left run {run_id} alone: it is still running" for run_id in plan.live_runs]
    notes += [f"left {name} alone: not named like a vswbench run's object (vsb + 4 hex digits "
              "of a run id + a role)" for name in plan.not_ours]
    return notes


def dry_run_lines(plan: CleanPlan) -> list[str]:
    lines = [f"would stop process {p.pid} of run {r}" for r, p in plan.processes]
    lines += [f"would remove namespace {ns}" for ns in plan.namespaces]
    lines += [f"would remove link {name}" for name in plan.links]
    lines += [f"would remove directory {path}" for path in plan.temp_dirs]
    lines += [f"would remove pinned BPF object {path}" for path in plan.bpf_pins]
    lines += [f"would remove DPDK leftover {path}" for path in plan.dpdk_files]
    lines += [f"would remove state file {path}" for path in plan.state_files]
    return lines
