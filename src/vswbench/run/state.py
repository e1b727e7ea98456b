"""Run state files: /run/vswbench/<run id>.json records what a run started.

The file lists the run's owner process, every PID the run started (with the PID's start time and
executable, so a recycled PID is never mistaken for ours: run/procs.py) and the temporary
directories it made (wherever $TMPDIR put them). It is removed when the run ends normally; a file
left behind marks a killed run, and `vswbench clean` may stop exactly the processes it names.

Nothing here trusts what it reads: the directory is created 0700 and each file 0600 whatever the
umask, both owned by this user (root); a directory or file owned by someone else or writable by
group or others is refused (statefile.py says why and what to do), and a damaged file is reported
and skipped, never a crash.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from vswbench.run.procs import RecordedProcess
from vswbench.run.procs import is_same_process
from vswbench.run.procs import process_start_time
from vswbench.run.statefile import StateDirError
from vswbench.run.statefile import ensure_state_dir
from vswbench.run.statefile import parse_state
from vswbench.run.statefile import read_trusted
from vswbench.run.statefile import scan_state_dir

__all__ = ["RecordedProcess", "RunState", "StateDirError", "is_same_process", "load_all",
           "open_state", "process_start_time", "read_states", "state_dir"]

DEFAULT_STATE_DIR = "/run/vswbench"
FILE_MODE = 0o600

# The RunState objects this process created (RunState.create) and has not removed: code that only
# knows the run id (e.g. a switch backend, handed a SwitchContext) records its PIDs through them, so
# every writer of one state file goes through the same object and no update is lost.
_open_states: dict[str, RunState] = {}


def state_dir() -> Path:
    return Path(os.environ.get("VSWBENCH_STATE_DIR", DEFAULT_STATE_DIR))


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
        """A new state file in the state directory (StateDirError: the directory is not safe;
        OSError: it cannot be made, e.g. not root)."""
        directory = ensure_state_dir(state_dir())
        pid = os.getpid()
        state = cls(run_id, pid, process_start_time(pid), time.time())
        state.path = directory / f"{run_id}.json"
        state.save()
        _open_states[run_id] = state
        return state

    @classmethod
    def load(cls, path: Path) -> RunState:
        """Read one state file (StateFileError: untrusted or damaged, with the reason)."""
        fields = parse_state(read_trusted(path), path)
        processes = [RecordedProcess(**p) for p in fields.pop("processes")]
        state = cls(processes=processes, **fields)
        state.path = path
        return state

    def owner_alive(self) -> bool:
        return is_same_process(self.owner_pid, self.owner_start_time)

    def save(self) -> None:
        """Write the file: a fresh 0600 temp file in the same directory (never following a link),
        renamed over the old one."""
        if self.path is None:
            return
        data = asdict(self)
        data.pop("path")
        payload = (json.dumps(data, indent=1) + "\n").encode()
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        if os.path.lexists(tmp):  # a killed save's leftover (the directory is ours, 0700)
            os.unlink(tmp)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)   # explicit: whatever the umask
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, self.path)

    def add_process(self, pid: int, argv: list[str]) -> None:
        self.processes.append(RecordedProcess.of(pid, list(argv)))
        self.save()

    def forget_process(self, pid: int) -> None:
        self.processes = [p for p in self.processes if p.pid != pid]
        self.save()

    def add_temp_dir(self, path: str) -> None:
        self.temp_dirs.append(os.path.abspath(path))
        self.save()

    def remove(self) -> None:
        if _open_states.get(self.run_id) is self:
            del _open_states[self.run_id]
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def open_state(run_id: str) -> RunState | None:
    """The state of a run this process created and still runs (None: no state file is kept)."""
    return _open_states.get(run_id)


def read_states() -> tuple[list[RunState], list[str]]:
    """Every trusted, readable run state file, and one line for each one (or the directory)
    that was refused or damaged and so skipped."""
    paths, problems = scan_state_dir(state_dir())
    states = []
    for path in paths:
        try:
            states.append(RunState.load(path))
        except ValueError as exc:   # StateFileError
            problems.append(str(exc))
    return states, problems


def load_all() -> list[RunState]:
    """Every trusted, readable run state file (the others are skipped: read_states says why)."""
    return read_states()[0]
