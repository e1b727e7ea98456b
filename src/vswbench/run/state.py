"""Run state files: /run/vswbench/<run id>.json records what a run started.

The file lists the run's owner process and every PID the run started (with the PID's start time, so
a recycled PID is never mistaken for ours). It is removed when the run ends normally; a file left
behind marks a killed run, and `vswbench clean` may stop exactly the PIDs it names.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_STATE_DIR = "/run/vswbench"

# The RunState objects this process created (RunState.create) and has not removed: code that only
# knows the run id (e.g. a switch backend, handed a SwitchContext) records its PIDs through them, so
# every writer of one state file goes through the same object and no update is lost.
_open_states: dict[str, RunState] = {}


def state_dir() -> Path:
    return Path(os.environ.get("VSWBENCH_STATE_DIR", DEFAULT_STATE_DIR))


def process_start_time(pid: int) -> int | None:
    """Start time of a live process in clock ticks since boot (field 22 of /proc/PID/stat);
    None if there is no such process or it is a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (IndexError, ValueError):
        return None


def is_same_process(pid: int, start_time: int | None) -> bool:
    """Is `pid` alive and the very process that had this start time?"""
    current = process_start_time(pid)
    return current is not None and (start_time is None or current == start_time)


@dataclass
class RecordedProcess:
    pid: int
    start_time: int | None
    argv: list[str]


@dataclass
class RunState:
    run_id: str
    owner_pid: int
    owner_start_time: int | None
    created: float
    temp_dirs: list[str] = field(default_factory=list)
    processes: list[RecordedProcess] = field(default_factory=list)
    path: Path | None = field(default=None, repr=False, compare=False)

    @classmethod
    def create(cls, run_id: str) -> RunState:
        pid = os.getpid()
        state = cls(run_id, pid, process_start_time(pid), time.time())
        state.path = state_dir() / f"{run_id}.json"
        state.save()
        _open_states[run_id] = state
        return state

    @classmethod
    def load(cls, path: Path) -> RunState:
        data = json.loads(path.read_text())
        procs = [RecordedProcess(**p) for p in data.pop("processes", [])]
        state = cls(processes=procs, **data)
        state.path = path
        return state

    def owner_alive(self) -> bool:
        return is_same_process(self.owner_pid, self.owner_start_time)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        data.pop("path")
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, self.path)

    def add_process(self, pid: int, argv: list[str]) -> None:
        self.processes.append(RecordedProcess(pid, process_start_time(pid), list(argv)))
        self.save()

    def forget_process(self, pid: int) -> None:
        self.processes = [p for p in self.processes if p.pid != pid]
        self.save()

    def add_temp_dir(self, path: str) -> None:
        self.temp_dirs.append(path)
        self.save()

    def remove(self) -> None:
        if _open_states.get(self.run_id) is self:
            del _open_states[self.run_id]
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def open_state(run_id: str) -> RunState | None:
    """The state of a run this process created and still runs (None: no state file is kept)."""
    return _open_states.get(run_id)


def load_all() -> list[RunState]:
    """Every readable run state file (unreadable ones are skipped)."""
    directory = state_dir()
    if not directory.is_dir():
        return []
    states = []
    for path in sorted(directory.glob("vsb*.json")):
        try:
            states.append(RunState.load(path))
        except (OSError, ValueError, TypeError):
            continue
    return states
