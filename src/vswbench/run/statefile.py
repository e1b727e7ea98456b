"""The state directory and its files, trusted only when nobody else could have written them.

The directory (/run/vswbench or $VSWBENCH_STATE_DIR) is made 0700 and must be owned by this user
(root) and writable by nobody else; each file must be a regular file (not a link) with the same
owner and no group or other write bit. Anything else is refused with the reason and the fix, so a
planted file can never make `vswbench clean` signal a process or remove a directory. A file that is
trusted but damaged (not JSON, wrong types) is refused the same way: reported, then skipped.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError

DIR_MODE = 0o700
MAX_STATE_BYTES = 1 << 20
STATE_NAME_RE = re.compile(r"^(vsb[0-9a-f]{4})\.json\Z")
_PROCESS_KEYS = {"pid", "start_time", "argv", "exe", "exec_target"}


class StateDirError(UsageError):
    """The state directory is not safe to use (exit status 2)."""


class StateFileError(ValueError):
    """One state file is not trusted or is damaged (reported, then skipped)."""


def untrusted(st: os.stat_result, kind: str) -> str | None:
    """Why a directory or file with this lstat is not to be trusted, or None."""
    is_kind = stat.S_ISDIR(st.st_mode) if kind == "directory" else stat.S_ISREG(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not is_kind:
        return f"not a {kind}"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by uid {os.geteuid()} (this user)"
    if st.st_mode & 0o022:
        who = " and ".join(w for bit, w in ((0o020, "group"), (0o002, "others"))
                           if st.st_mode & bit)
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def dir_problem(directory: Path, reason: str) -> str:
    return (f"state directory {directory} is {reason}, so anyone could plant a run state in it: "
            f"not trusted. Remove it (rm -r {directory}; vswbench makes it again, mode 0700) or "
            f"make it this user's and private (chown $(id -u) {directory}; chmod 700 {directory})")


def check_state_dir(directory: Path) -> None:
    """StateDirError unless the directory is this user's and writable by nobody else."""
    reason = untrusted(os.lstat(directory), "directory")
    if reason is not None:
        raise StateDirError(dir_problem(directory, reason))


def ensure_state_dir(directory: Path) -> Path:
    """The state directory, made 0700 if missing (explicitly, whatever the umask), checked."""
    try:
        os.mkdir(directory, DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        directory.parent.mkdir(parents=True, exist_ok=True)
        return ensure_state_dir(directory)
    else:
        os.chmod(directory, DIR_MODE)   # we made it: its mode is ours to set
    st = os.lstat(directory)
    if os.geteuid() != 0 and st.st_uid != os.geteuid() and stat.S_ISDIR(st.st_mode):
        raise PermissionError(f"{directory} belongs to uid {st.st_uid}")  # not root: no state file
    check_state_dir(directory)
    return directory


def scan_state_dir(directory: Path) -> tuple[list[Path], list[str]]:
    """The run state files in the directory, and the reason if the directory is not trusted."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"state directory {directory}: {exc.strerror}; no run state read"]
    reason = untrusted(st, "directory")
    if reason is not None:
        return [], [dir_problem(directory, reason) + "; no run state read from it"]
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        return [], [f"state directory {directory}: {exc.strerror}; no run state read"]
    return [directory / name for name in names if STATE_NAME_RE.match(name)], []


def _skip(path: Path, why: str) -> StateFileError:
    return StateFileError(f"skipped state file {path}: {why}; if no run of that id is running, "
                          f"remove it (rm {path})")


def read_trusted(path: Path) -> str:
    """The text of a state file that is a regular file of this user's, written by nobody else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _skip(path, "a symbolic link" if os.path.islink(path) else
                    f"cannot be read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        reason = untrusted(st, "regular file")
        if reason is not None:
            raise _skip(path, f"not trusted: {reason}")
        if st.st_size > MAX_STATE_BYTES:
            raise _skip(path, f"damaged: larger than {MAX_STATE_BYTES} bytes")
        data = os.read(fd, MAX_STATE_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise _skip(path, "damaged: not UTF-8 text") from None


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(ok: bool, path: Path, what: str) -> None:
    if not ok:
        raise _skip(path, f"damaged: {what}")


def parse_state(text: str, path: Path) -> dict[str, Any]:
    """The fields of a RunState, every type checked (StateFileError names the first bad one)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise _skip(path, "damaged: not JSON") from None
    _check(isinstance(data, dict), path, f"a JSON {type(data).__name__}, not an object")
    name = STATE_NAME_RE.match(path.name)
    _check(name is not None and data.get("run_id") == name.group(1), path,
           "run_id is not the run id its name says")
    pid, start = data.get("owner_pid"), data.get("owner_start_time")
    _check(_int(pid) and pid > 0, path, "owner_pid is not a positive integer")
    _check(start is None or (_int(start) and start >= 0), path,
           "owner_start_time is not a clock tick count or null")
    created = data.get("created")
    _check((_int(created) or isinstance(created, float)) and math.isfinite(created), path,
           "created is not a time")
    temp_dirs = data.get("temp_dirs", [])
    _check(isinstance(temp_dirs, list) and all(isinstance(d, str) and os.path.isabs(d)
                                                for d in temp_dirs), path,
           "temp_dirs is not a list of absolute paths")
    processes = data.get("processes", [])
    _check(isinstance(processes, list), path, "processes is not a list")
    for proc in processes:
        _check(isinstance(proc, dict) and {"pid", "start_time", "argv"} <= proc.keys()
               and proc.keys() <= _PROCESS_KEYS, path, "a process record has other fields")
        _check(_int(proc["pid"]) and proc["pid"] > 0, path, "a process pid is not positive")
        _check(proc["start_time"] is None or _int(proc["start_time"]), path,
               "a process start_time is not an integer or null")
        _check(isinstance(proc["argv"], list) and all(isinstance(a, str) for a in proc["argv"]),
               path, "a process argv is not a list of strings")
        _check(all(proc.get(k) is None or isinstance(proc[k], str)
                   for k in ("exe", "exec_target")), path, "a process exe is not a path")
    return {"run_id": data["run_id"], "owner_pid": pid, "owner_start_time": start,
            "created": float(created), "temp_dirs": list(temp_dirs),
            "processes": [dict(p) for p in processes]}
