"""`vswbench clean`: remove what killed runs left behind, and nothing else.

Removed: namespaces, root-namespace links, pinned BPF objects and DPDK leftovers named exactly as
a run names them (`vsb` + 4 hex digits of the run id + one of the roles the code gives its objects,
nothing after: switches/catalog.py role_patterns), the engine's own DPDK prefix `vsbdpdk<pid>` (exactly),
CNI attachments recorded in a killed run's temp directory (DEL called for each, as a runtime would,
before its namespaces go: switches/cni/plugin.py), temporary directories `vsb-<run id>-XXXXXXXX`
(or `-ovs-`/`-bpf-`/`-agent-` before the 8 random
characters) in /tmp and $TMPDIR and wherever a run's state file says it made them, and the
processes recorded in the state file of a run whose owner is gone: by PID, and only if the PID's
start time and executable still match the record (run/procs.py). A narrower --prefix (e.g. one run
id) limits all of it. Never touched, and said so: objects of a run that is still alive (its state
file names a live owner), namespaces in which some process still runs (unless --force; those
processes are never killed), recorded processes that cannot be confirmed as ours (no start time,
another executable), names that merely start with `vsb` (`vsbcafebabe`, `vsbbeefeth0`,
`vsb-user`), directories not named exactly by a run id, and state files that are damaged or that
someone else could have written (run/statefile.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from vswbench.host.netns import ip
from vswbench.host.netns import ip_json
from vswbench.host.netns import list_namespaces
from vswbench.host.netns import namespace_pids
from vswbench.host.netns import run
from vswbench.run.ids import PREFIX
from vswbench.run.ids import is_project_name
from vswbench.run.procs import Identity
from vswbench.run.procs import RecordedProcess
from vswbench.run.procs import identify
from vswbench.run.procs import process_cmdline
from vswbench.run.procs import signal_if_same
from vswbench.run.state import RunState
from vswbench.run.state import read_states
from vswbench.switches.catalog import run_name_parts
from vswbench.switches.cni.plugin import recorded
from vswbench.switches.cni.plugin import undo_recorded

TEMP_ROOT = Path("/tmp")
TEMP_GLOB = "vsb-vsb*"
# what the project names its temp dirs: tempfile.mkdtemp(prefix=f"vsb-{run id}-" and -ovs-, -bpf-,
# -agent-; run/scope.py, ovs/daemon.py, bpf/redirect.py, agent.py) adds 8 random characters (a DUT's
# directory of deploy/lab/lab.yml: -lab- and 8 hex digits of its inventory name's hash); a
# directory of anyone else's that merely starts with vsb- is left alone
TEMP_NAME_RE = re.compile(
    r"^vsb-(vsb[0-9a-f]{4})-(?:(?:ovs|bpf|agent|lab)-)?[a-z0-9_]{8}\Z")
BPF_FS = Path("/sys/fs/bpf")  # pinned BPF objects named vsb<run id>... (programs on interfaces
                              # of a run's namespaces disappear with the namespaces themselves)
DPDK_RUN = Path("/var/run/dpdk")  # DPDK runtime dirs, one per --file-prefix (vsb...)
# the engine's own DPDK file prefix when none is given (engine/README.md): vsbdpdk<pid>, exactly
ENGINE_DPDK_RE = re.compile(r"^vsbdpdk[0-9]+\Z")
# a hugepage file of a DPDK file prefix: <prefix>map_<n>
HUGEPAGE_FILE_RE = re.compile(r"^(vsb.+?)map_[0-9]+\Z")


@dataclass
class CleanPlan:
    processes: list[tuple[str, RecordedProcess]] = field(default_factory=list)
    unconfirmed: list[tuple[str, RecordedProcess, str]] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    busy_namespaces: dict[str, list[int]] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    temp_dirs: list[Path] = field(default_factory=list)
    state_files: list[Path] = field(default_factory=list)
    live_runs: list[str] = field(default_factory=list)
    bpf_pins: list[Path] = field(default_factory=list)
    dpdk_files: list[Path] = field(default_factory=list)   # runtime dirs, hugepage files
    not_ours: list[str] = field(default_factory=list)       # vsb... names no run makes
    problems: list[str] = field(default_factory=list)       # state files skipped, and why

    @property
    def empty(self) -> bool:
        return not (self.processes or self.namespaces or self.links or self.temp_dirs
                    or self.state_files or self.bpf_pins or self.dpdk_files)


def temp_dir_run_id(name: str) -> str | None:
    """The run id of a directory named exactly as a run names its temp dirs, else None."""
    match = TEMP_NAME_RE.match(name)
    return match.group(1) if match else None


def _dpdk_name(name: str) -> str:
    """The DPDK file prefix a runtime dir or hugepage file belongs to."""
    match = HUGEPAGE_FILE_RE.match(name)
    return match.group(1) if match else name


def select_leftovers(*, namespaces: Iterable[str], links: Iterable[str],
                     temp_dirs: Iterable[Path], states: Iterable[RunState],
                     pids_in_namespace: Callable[[str], list[int]],
                     identify_process: Callable[[RecordedProcess], Identity],
                     force: bool = False, prefix: str = PREFIX,
                     bpf_pins: Iterable[Path] = (), dpdk_files: Iterable[Path] = (),
                     path_in_use: Callable[[Path], bool] = lambda p: False,
                     own_dir: Callable[[Path], bool] = lambda p: True,
                     problems: Iterable[str] = ()) -> CleanPlan:
    """Decide what to remove (pure: every fact about the host comes in as an argument).

    `prefix` narrows the search (e.g. one run id); it must itself start with `vsb`. `own_dir`
    says whether a directory is really there and this user's (not a link); `identify_process`
    whether a recorded process is still the very one recorded.
    """
    if not is_project_name(prefix):
        raise ValueError(f"clean prefix {prefix!r} does not start with {PREFIX!r}")
    plan = CleanPlan(problems=list(problems))
    protected_dirs, recorded_dirs = _read_states(plan, states, prefix, identify_process)
    ours = _ours(plan, prefix)
    _select_namespaces(plan, namespaces, ours, pids_in_namespace, force)
    plan.links = [name for name in links if ours(name)]
    plan.bpf_pins = [path for path in bpf_pins if ours(path.name)]
    # DPDK leaves its runtime dir (and, with hugepages, hugepage files) after a SIGKILL; a live
    # DPDK process keeps them open, so only files nobody holds are removed
    dpdk_ours = _dpdk_ours(prefix, ours)
    plan.dpdk_files = [path for path in dpdk_files if dpdk_ours(path) and not path_in_use(path)]
    plan.not_ours = sorted(set(plan.not_ours))
    _select_temp_dirs(plan, [*temp_dirs, *recorded_dirs], protected_dirs, prefix, own_dir)
    return plan


def _read_states(plan: CleanPlan, states: Iterable[RunState], prefix: str,
                 identify_process: Callable[[RecordedProcess], Identity]
                 ) -> tuple[set[str], list[Path]]:
    """The runs under `prefix` into the plan: a live one's id (its temp dirs protected), a dead
    one's processes (confirmed or not) and state file. (The protected dirs, the dead runs'
    recorded temp dirs.)"""
    protected_dirs: set[str] = set()
    recorded_dirs: list[Path] = []
    for state in states:
        if not state.run_id.startswith(prefix):
            continue
        if state.owner_alive():
            plan.live_runs.append(state.run_id)
            protected_dirs.update(state.temp_dirs)
            continue
        for proc in state.processes:
            found = identify_process(proc)
            if found.same:
                plan.processes.append((state.run_id, proc))
            elif found.alive:
                plan.unconfirmed.append((state.run_id, proc, found.reason))
        recorded_dirs += [Path(d) for d in state.temp_dirs
                          if temp_dir_run_id(Path(d).name) == state.run_id]
        if state.path is not None:
            plan.state_files.append(state.path)
    return protected_dirs, recorded_dirs


def _ours(plan: CleanPlan, prefix: str) -> Callable[[str], bool]:
    """Is a name under `prefix` one a run makes, of a run not alive? (A vsb name no run makes
    goes to plan.not_ours.)"""
    live = set(plan.live_runs)

    def ours(name: str) -> bool:
        if not name.startswith(prefix):
            return False
        parts = run_name_parts(name)
        if parts is None:
            plan.not_ours.append(name)
            return False
        return parts[0] not in live
    return ours


def _select_namespaces(plan: CleanPlan, namespaces: Iterable[str], ours: Callable[[str], bool],
                       pids_in_namespace: Callable[[str], list[int]], force: bool) -> None:
    """Our namespaces: removed, or busy (a process not being stopped runs in it) unless force."""
    doomed = {p.pid for _, p in plan.processes}
    for ns in namespaces:
        if not ours(ns):
            continue
        busy = [pid for pid in pids_in_namespace(ns) if pid not in doomed]
        if busy and not force:
            plan.busy_namespaces[ns] = busy
        else:
            plan.namespaces.append(ns)


def _dpdk_ours(prefix: str, ours: Callable[[str], bool]) -> Callable[[Path], bool]:
    """Is a DPDK runtime dir or hugepage file ours: a run's file prefix, or the engine's own
    (vsbdpdk<pid>) when the prefix covers it?"""
    engine_default = prefix == PREFIX or prefix.startswith("vsbdpdk")

    def dpdk_ours(path: Path) -> bool:
        name = _dpdk_name(path.name)
        if ENGINE_DPDK_RE.match(name):
            return engine_default and name.startswith(prefix)
        return ours(name)
    return dpdk_ours


def _select_temp_dirs(plan: CleanPlan, paths: list[Path], protected_dirs: set[str], prefix: str,
                      own_dir: Callable[[Path], bool]) -> None:
    """Temp dirs named by a run under `prefix` that is not alive, once each, if really ours."""
    live = set(plan.live_runs)
    seen: set[Path] = set()
    for path in paths:
        run_id = temp_dir_run_id(path.name)
        if (path in seen or run_id is None or str(path) in protected_dirs or run_id in live
                or not run_id.startswith(prefix) or not own_dir(path)):
            continue
        seen.add(path)
        plan.temp_dirs.append(path)


def project_temp_dirs(root: Path) -> list[Path]:
    """Directories under `root` named exactly as the project names its temp dirs (TEMP_NAME_RE)."""
    try:
        found = sorted(root.glob(TEMP_GLOB))
    except OSError:
        return []
    return [p for p in found if temp_dir_run_id(p.name) and own_directory(p)]


def own_directory(path: Path) -> bool:
    """Is this a directory (not a link to one) owned by this user (root)?"""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()


def temp_roots() -> list[Path]:
    """Where runs make temp dirs when no state file says so: /tmp and this process's $TMPDIR."""
    roots = [TEMP_ROOT]
    here = Path(tempfile.gettempdir())
    return roots if here == TEMP_ROOT else [*roots, here]


def plan_clean(force: bool = False, prefix: str = PREFIX) -> CleanPlan:
    root_links = [str(link["ifname"]) for link in ip_json("link", "show")]
    temp_dirs = [d for root in temp_roots() for d in project_temp_dirs(root)]
    try:
        pins = sorted(BPF_FS.glob(f"{PREFIX}*")) if BPF_FS.is_dir() else []
    except OSError:
        pins = []
    states, problems = read_states()
    return select_leftovers(bpf_pins=pins, dpdk_files=dpdk_leftovers(),
        path_in_use=paths_in_use(), own_dir=own_directory, problems=problems,
        namespaces=list_namespaces(), links=root_links, temp_dirs=temp_dirs, states=states,
        pids_in_namespace=namespace_pids, identify_process=identify, force=force, prefix=prefix)


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
                with contextlib.suppress(OSError):
                    held.add(os.readlink(fd))
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
    """SIGTERM, then SIGKILL after `grace` seconds, each only while the PID is still the very
    process recorded (pid, start time and executable: run/procs.py)."""
    found = signal_if_same(proc, signal.SIGTERM)
    if not found.same:
        return "already gone" if not found.alive else f"not signalled: {found.reason}"
    # a run killed while it held a polling switch's processes frozen (measure/rounds.py) left
    # them stopped: SIGCONT lets the SIGTERM take effect instead of waiting out the grace
    signal_if_same(proc, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not identify(proc).same:
            return "stopped (SIGTERM)"
        time.sleep(0.02)
    if signal_if_same(proc, signal.SIGKILL).same:
        return "killed (SIGKILL after SIGTERM)"
    return "stopped (SIGTERM)"


def execute(plan: CleanPlan, report: Callable[[str], None] = print) -> list[str]:
    """Carry out a plan; report each action as it happens; return the list of messages."""
    done: list[str] = []

    def say(message: str) -> None:
        done.append(message)
        report(message)

    _stop_processes(plan, say)
    for path in plan.temp_dirs:   # CNI: DEL for every ADD recorded, while the namespaces exist
        owner = temp_dir_run_id(path.name)
        for message in undo_recorded(path, owner) if owner else []:
            say(message)
    for ns in plan.namespaces:
        run(["ip", "netns", "delete", ns])
        say(f"removed namespace {ns}")
    _remove_links(plan.links, say)
    _remove_files(plan, say)
    return done


def _stop_processes(plan: CleanPlan, say: Callable[[str], None]) -> None:
    for run_id, proc in plan.processes:
        label = process_label(proc)                 # what it runs now, before it is stopped
        try:
            outcome = _stop_recorded(proc)
        except ProcessLookupError:
            outcome = "already gone"
        say(f"process {proc.pid} of run {run_id} ({label}): {outcome}")


def _remove_links(links: list[str], say: Callable[[str], None]) -> None:
    existing = {str(link["ifname"]) for link in ip_json("link", "show")} if links else set()
    for name in links:
        if name in existing:  # deleting one end of a veth pair also removes the other
            ip("link", "del", name, check=False)
            say(f"removed link {name}")
            existing = {str(link["ifname"]) for link in ip_json("link", "show")}


def _remove_files(plan: CleanPlan, say: Callable[[str], None]) -> None:
    """Temp dirs, BPF pins, DPDK leftovers and state files, in that order."""
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
        path.with_name(f".{path.name}.tmp").unlink(missing_ok=True)  # a save cut short by kill -9
        say(f"removed state file {path}")


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


def process_label(proc: RecordedProcess) -> str:
    """A recorded process in words: the program its state file recorded, and beside it the
    command line that PID runs now, read from /proc (a state file may be stale or planted: PID 1
    recorded as `sleep` shows as what it really is)."""
    real = process_cmdline(proc.pid)
    now = f"running now: {real}" if real else "no command line now (gone or a kernel thread)"
    return f"recorded: {command_name(proc.argv)}; {now}"


def describe_skips(plan: CleanPlan) -> list[str]:
    notes = [f"left namespace {ns} alone: processes {', '.join(map(str, pids))} still run in it "
             f"(use --force to remove it anyway)" for ns, pids in plan.busy_namespaces.items()]
    notes += [f"left run {run_id} alone: it is still running" for run_id in plan.live_runs]
    notes += [f"left process {p.pid} of run {run_id} ({process_label(p)}) alone, not "
              f"signalled: {why}" for run_id, p, why in plan.unconfirmed]
    notes += plan.problems
    notes += [f"left {name} alone: not named like a vswbench run's object (vsb + 4 hex digits "
              "of a run id + a role)" for name in plan.not_ours]
    return notes


def dry_run_lines(plan: CleanPlan) -> list[str]:
    lines = [f"would stop process {p.pid} of run {r} ({process_label(p)})"
             for r, p in plan.processes]
    lines += [f"would call CNI DEL for {record.stem} (recorded in {path})"
              for path in plan.temp_dirs for record in recorded(path)]
    lines += [f"would remove namespace {ns}" for ns in plan.namespaces]
    lines += [f"would remove link {name}" for name in plan.links]
    lines += [f"would remove directory {path}" for path in plan.temp_dirs]
    lines += [f"would remove pinned BPF object {path}" for path in plan.bpf_pins]
    lines += [f"would remove DPDK leftover {path}" for path in plan.dpdk_files]
    lines += [f"would remove state file {path}" for path in plan.state_files]
    return lines
