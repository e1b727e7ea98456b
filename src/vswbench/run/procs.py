"""Which process a PID is now: its start time and executable, read from /proc.

A run records each process it starts by PID, start time and executable. `vswbench clean` signals a
recorded process only if all three still match (`identify`): a recycled PID, a process that had
already exited when it was recorded (no start time) or a different program under the same PID is
never ours to signal. The signal itself goes through a pidfd opened before the check, so the PID
cannot be recycled between the check and the signal.
"""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_DELETED = " (deleted)"
WRAPPER = ["ip", "netns", "exec"]   # `ip netns exec NS PROG ...` becomes PROG (same PID)


def process_start_time(pid: int, proc: Path = PROC) -> int | None:
    """Start time of a live process in clock ticks since boot (field 22 of /proc/PID/stat);
    None if there is no such process or it is a zombie."""
    try:
        stat = (proc / str(int(pid)) / "stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        return None if fields[0] in ("Z", "X") else int(fields[19])
    except (IndexError, ValueError):
        return None


def process_exe(pid: int, proc: Path = PROC) -> str | None:
    """The executable a process runs (/proc/PID/exe), or None if it cannot be read."""
    try:
        target = os.readlink(proc / str(int(pid)) / "exe")
    except (OSError, ValueError):
        return None
    return target[: -len(_DELETED)] if target.endswith(_DELETED) else target


def process_cmdline(pid: int, proc: Path = PROC, limit: int = 200) -> str | None:
    """The command line a live process runs now (/proc/PID/cmdline, its NULs as spaces, cut to
    `limit` characters, unprintable characters escaped), or None if there is none to read (gone,
    a zombie or a kernel thread)."""
    try:
        fd = os.open(proc / str(int(pid)) / "cmdline", os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        raw = os.read(fd, limit * 4)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return (text[:limit - 3] + "...") if len(text) > limit else (text or None)


def exec_target(argv: list[str]) -> str | None:
    """For `ip netns exec NS PROG ...`: the executable PROG resolves to (the wrapper execs it under
    the same PID), else None."""
    rest = list(argv)
    target = None
    while rest[:3] == WRAPPER and len(rest) > 4:
        rest = rest[4:]
        found = rest[0] if "/" in rest[0] else shutil.which(rest[0])
        target = os.path.realpath(found) if found else None
    return target


def is_same_process(pid: int, start_time: int | None) -> bool:
    """Is `pid` alive and the very process that had this start time? (With no start time: is
    anything alive under that PID; used only to decide that a run may still be running.)"""
    current = process_start_time(pid)
    return current is not None and (start_time is None or current == start_time)


@dataclass
class RecordedProcess:
    pid: int
    start_time: int | None
    argv: list[str]
    exe: str | None = None            # /proc/PID/exe when it was recorded
    exec_target: str | None = None    # what an `ip netns exec` wrapper becomes (exec_target)

    @classmethod
    def of(cls, pid: int, argv: list[str], proc: Path = PROC) -> RecordedProcess:
        return cls(pid, process_start_time(pid, proc), list(argv), process_exe(pid, proc),
                   exec_target(argv))


@dataclass(frozen=True)
class Identity:
    same: bool     # pid, start time and executable all match the record: ours to signal
    alive: bool    # something runs under that PID now
    reason: str    # why it is not ours to signal ("" when same)


def identify(rec: RecordedProcess, proc: Path = PROC) -> Identity:
    """Is the process now under rec.pid the very one recorded?"""
    start = process_start_time(rec.pid, proc)
    if start is None:
        return Identity(False, False, "no longer running")
    if rec.start_time is None:
        return Identity(False, True, "no start time was recorded (it had exited when the run "
                        "recorded it, or vswbench did not write that record), so the process now "
                        "under that PID may be anyone's")
    if start != rec.start_time:
        return Identity(False, True, "that PID now belongs to another process (other start time)")
    exe = process_exe(rec.pid, proc)
    expected = {e for e in (rec.exe, rec.exec_target) if e}
    if not expected:
        return Identity(False, True, "no executable was recorded, so it cannot be confirmed")
    if exe is None or (exe not in expected and os.path.realpath(exe) not in expected):
        return Identity(False, True, f"it runs {exe or 'an unreadable executable'}, not "
                        f"{' or '.join(sorted(expected))} as recorded")
    return Identity(True, True, "")


def signal_if_same(rec: RecordedProcess, signum: int, proc: Path = PROC) -> Identity:
    """Send `signum` to the recorded process only if it is still the very one recorded. The PID is
    held by a pidfd across the check, so it cannot be recycled in between."""
    try:
        pidfd = os.pidfd_open(rec.pid)
    except (OSError, ValueError):
        return Identity(False, False, "no longer running")
    try:
        found = identify(rec, proc)
        if found.same:
            try:
                signal.pidfd_send_signal(pidfd, signum)
            except ProcessLookupError:
                return Identity(False, False, "no longer running")
        return found
    finally:
        os.close(pidfd)
