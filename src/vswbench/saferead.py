"""The one way vswbench reads an input file: a regular file only, opened without blocking, never
more than its kind's cap read: the counterpart of safefile, the one writer.

vswbench runs as root and reads files the user names: a campaign spec, an inventory, a switch
file, a history file, a store, an imported JSON file (a model, a calibration). /dev/zero,
/dev/urandom, a FIFO with no writer, a socket or a 2 GB sparse file there must be refused at
once, not read until memory runs out or waited on for ever. So every input goes through here:

    text = read_text(path, "inventory", "--inventory")   # the whole file, bounded, UTF-8
    data = read_bytes(path, "campaign spec")
    check_input(path, "store")                             # a file another library opens (SQLite)

The file is looked at with stat (following a link: the user named it), then opened O_RDONLY |
O_NONBLOCK | O_NOCTTY (a FIFO that appeared in between opens at once instead of waiting for a
writer), looked at again through the descriptor (fstat: what was opened, not what was looked
at), and read up to one byte past its kind's cap. Anything but a regular file of at most the cap
is a UsageError (exit 2) naming the file, what it is and what to give instead.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vswbench.errors import UsageError

MB = 1_000_000
# The largest input of each kind vswbench will read; the real ones are far smaller.
CAPS: dict[str, int] = {
    "campaign spec": 1 * MB,   # a few KB
    "inventory": 1 * MB,       # a lab of a few dozen hosts
    "switch file": 256_000,    # a few [switch.NAME] tables
    "JSON": 64 * MB,           # imported JSON: a model, a calibration, a results JSON
    "JSON lines": 256 * MB,    # results.jsonl read back on resume
    "history": 4_000 * MB,     # SQLite files: opened by SQLite, only their kind is checked
    "store": 16_000 * MB,
}
FIX = {
    "campaign spec": "give a TOML campaign spec, or a directory of them",
    "inventory": "give an Ansible-style YAML inventory file (hosts.yml)",
    "switch file": "give a TOML file with [switch.NAME] tables",
    "JSON": "give the JSON file vswbench wrote",
    "JSON lines": "give the results directory vswbench wrote",
    "history": "give the history file vswbench wrote (an SQLite file)",
    "store": "give a results directory or the results.sqlite vswbench wrote",
}


def describe(mode: int) -> str | None:
    """What a file that is not a regular one is, in words (None: a regular file)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


@dataclass(frozen=True)
class Input:
    """One file to read: its path, its kind (a key of CAPS), the flag that named it (None: an
    argument), its cap in bytes and what to give instead."""
    path: Path
    kind: str
    flag: str | None = None
    cap: int = 0
    fix: str = ""

    def refuse(self, reason: str) -> UsageError:
        what = f"{self.flag} {self.path}" if self.flag else f"{self.kind} {self.path}"
        return UsageError(f"cannot read {what}: {reason} ({self.fix})")

    def check(self, info: os.stat_result) -> None:
        what = describe(info.st_mode)
        if what == "a directory":
            raise self.refuse("a directory where a file is meant")
        if what is not None:
            raise self.refuse(f"{what}, not a regular file")
        if info.st_size > self.cap:
            raise self.refuse(f"{info.st_size:,} bytes, larger than {self.cap:,}")


def _input(path: str | Path, kind: str, flag: str | None, cap: int | None,
           fix: str | None) -> Input:
    return Input(Path(path), kind, flag, cap if cap is not None else CAPS.get(kind, 1 * MB),
                 fix or FIX.get(kind, "give a regular file"))


def _open(src: Input) -> int:
    try:
        src.check(os.stat(src.path))
        fd = os.open(src.path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise src.refuse("no such file") from None
    except OSError as exc:
        raise src.refuse(exc.strerror or str(exc)) from None
    try:
        src.check(os.fstat(fd))                  # what was opened, not what was looked at
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_input(path: str | Path, kind: str, flag: str | None = None, cap: int | None = None,
                fix: str | None = None) -> Path:
    """`path` is a regular file of at most its kind's cap, and can be opened for reading:
    for files another library opens (SQLite). UsageError (exit 2) otherwise."""
    src = _input(path, kind, flag, cap, fix)
    os.close(_open(src))
    return src.path


def read_bytes(path: str | Path, kind: str, flag: str | None = None, cap: int | None = None,
               fix: str | None = None) -> bytes:
    """The whole of the regular file `path`, at most its kind's cap; UsageError (exit 2) for
    anything else (a device, a FIFO, a socket, a directory, a file too large, unreadable)."""
    src = _input(path, kind, flag, cap, fix)
    fd = _open(src)
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= src.cap:
            chunk = os.read(fd, min(1 << 20, src.cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise src.refuse("it would block: not a regular file") from None
    except OSError as exc:
        raise src.refuse(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if size > src.cap:
        raise src.refuse(f"larger than {src.cap:,} bytes")
    return b"".join(chunks)


def read_text(path: str | Path, kind: str, flag: str | None = None, cap: int | None = None,
              fix: str | None = None) -> str:
    """read_bytes as UTF-8 text; UsageError for bytes that are not UTF-8."""
    data = read_bytes(path, kind, flag, cap, fix)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _input(path, kind, flag, cap, fix).refuse(
            f"not UTF-8 text (byte {exc.start})") from None
