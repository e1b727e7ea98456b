"""The one way vswbench writes a file: never through a link, never over a device, a FIFO or a
socket, never into a directory where a file is meant, never half a file.

vswbench runs as root, and many systems (containers, older kernels) have
fs.protected_symlinks=0: a link planted at an output path would make root overwrite its target.
So every output goes through here:

    check_output_file(path, "--out")      # before anything is measured: UsageError (exit 2)
    check_output_dir(path, "--out")       # a directory to write into (created if missing)
    write_bytes(path, data) / write_text(path, text) / with atomic_writer(path) as f: ...
    fd = open_regular(path, append=True)  # results.jsonl, the store's lock: O_NOFOLLOW
    append_line(fd, path, line)           # one whole line or nothing

A whole file is written to a temp file created in the same directory (O_CREAT | O_EXCL |
O_NOFOLLOW, so no link or earlier file is ever opened), then renamed over the target, which must
be a regular file or nothing: a rename replaces a directory entry and never follows a link. Only
the temp file, which this module created, is ever chmod-ed (to keep the permissions of the file
it replaces); nothing is ever chown-ed. A failure to write after the checks passed (a full disk,
a read-only file system) is WriteFailed: "disk full / cannot write PATH", exit 1, and the temp
file is removed. A directory given by the user (e.g. `--out results -> /data/results`) may be a
link: the user named it; the files inside it may not.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from typing import Any

from vswbench.errors import UsageError
from vswbench.errors import VswbenchError

TEMP_TAG = ".vsb-tmp-"              # temp files: .NAME.vsb-tmp-RANDOM beside NAME
DIR_MODE = 0o755                    # results directories and files at most: set explicitly,
FILE_MODE = 0o644                   # a umask of 000 must not make them anyone's to edit (a
                                    # stricter umask, e.g. 027, still takes away more)


def umask() -> int:
    """The process's umask, read without changing it (/proc/self/status), else 0o022."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def dir_mode() -> int:
    return DIR_MODE & ~umask()


def file_mode() -> int:
    return FILE_MODE & ~umask()
DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class WriteFailed(VswbenchError):
    """An output that passed its checks could not be written (disk full, I/O error): exit 1.
    What was recorded before stays; the same command resumes or writes again."""

    def __init__(self, path: str | Path, exc: OSError | str) -> None:
        self.path = Path(path)
        reason = exc if isinstance(exc, str) else (exc.strerror or str(exc))
        full = not isinstance(exc, str) and exc.errno in DISK_FULL
        head = "disk full: " if full or "full" in reason else ""
        super().__init__(f"{head}cannot write {path} ({reason}); free space or give a "
                         "writable place, then run the same command again")


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (None: a regular file)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _lstat(path: Path, flag: str | None = None) -> os.stat_result | None:
    what = f"{flag} {path}" if flag else str(path)
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"{what}: a part of the path is a file, not a directory: give a path "
                         "in a directory") from None
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror}: give a path you may write") from None


def refuse_unsafe(path: str | Path, flag: str | None = None) -> None:
    """UsageError (exit 2) unless `path` is a regular file or does not exist: a link (even a
    dangling one), a directory, a device, a FIFO or a socket is refused, untouched."""
    path = Path(path)
    st = _lstat(path, flag)
    if st is None:
        return
    kind = kind_of(st.st_mode)
    if kind is not None:
        what = f"{flag} {path}" if flag else str(path)
        fix = ("give a directory for the files instead" if kind == "a directory" and flag
               else "remove it or give another path")
        raise UsageError(f"{what} is {kind}, not a regular file: vswbench writes only regular "
                         f"files; {fix}")


def refuse_hard_links(path: str | Path) -> None:
    """UsageError (exit 2) if the existing file `path` has another name (a hard link): a
    report, a plot or an export is replaced, never written through, but a planted link is
    refused as a symbolic one is, so that no one mistakes the two files for separate ones."""
    st = _lstat(Path(path))
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise UsageError(f"{path} has {st.st_nlink} hard links: vswbench replaces only a file "
                         "that is its own: remove it (or its other names), or give another path")


def refuse_untrusted(path: str | Path, st: os.stat_result | None = None) -> None:
    """UsageError (exit 2) unless the existing file `path` is what this user made: one hard
    link (another name for it elsewhere would be written through: a hard link is refused as a
    symbolic one is), owned by this user, writable by nobody else. Nothing there: fine."""
    path = Path(path)
    st = st if st is not None else _lstat(path)
    if st is None or not stat.S_ISREG(st.st_mode):
        return
    if st.st_nlink > 1:
        raise UsageError(f"{path} has {st.st_nlink} hard links: another name for it may be a "
                         "file outside the results; vswbench writes only a file that is its "
                         "own: remove it (or its other names), or give another directory")
    if st.st_uid != os.geteuid():
        raise UsageError(f"{path} is owned by user {st.st_uid}, not by the user running "
                         f"vswbench ({os.geteuid()}): another user may have planted it; remove "
                         "it, or give another directory")
    if st.st_mode & 0o022:
        raise UsageError(f"{path} is writable by group or others (mode "
                         f"{stat.S_IMODE(st.st_mode):o}): anyone could have edited what would "
                         f"be read back; check it, then `chmod go-w {path}`, or remove it")


RESULTS_TREE = "results"      # ./results: the project's own tree, where defaults write


def in_results_tree(directory: str | Path) -> bool:
    """Is `directory` inside ./results (the default results tree: results/NAME,
    results/papers/NAME, results/ab-DATE)? Only there are missing parents made."""
    root = Path.cwd() / RESULTS_TREE
    where = Path(os.path.abspath(directory))
    return root in where.parents


def check_output_dir(directory: str | Path, flag: str | None = None,
                     create: bool = True) -> Path:
    """The directory files will be written into: created if missing (one level only, mode
    DIR_MODE at most whatever the umask) under a parent that must exist; it must be a directory
    (a link to one is followed: the user named it) where a new file can be made. UsageError
    (exit 2) otherwise, before anything is measured: a missing parent is named, never created
    (root making /nonexistent/dir/ in / for a typo), except inside ./results, the default tree.
    create=False: a missing directory is not made yet (a run that may still fail to start
    leaves nothing behind); its parent must be a directory where one can be made."""
    directory = Path(directory)
    what = f"{flag} {directory}" if flag else str(directory)
    missing = not directory.exists() and not directory.is_symlink()
    if missing and not _check_parent(directory, what, flag, create):
        return directory                       # create=False: its parent can take it
    _make_dir(directory, what)
    if not directory.is_dir():
        raise UsageError(f"{what} is a file, not a directory: give a directory")
    _probe_writable(directory, what)
    return directory


def _check_parent(directory: Path, what: str, flag: str | None, create: bool) -> bool:
    """For a missing directory: its parent exists (made inside ./results) and is a directory
    (where one can be made, for create=False). Whether to make the directory now (create)."""
    parent = directory.absolute().parent
    if not parent.exists() and in_results_tree(directory):
        if not create:                     # the nearest existing ancestor: writable
            check_output_dir(next(p for p in parent.parents if p.exists()),
                             f"{what}: its parent", create=True)
            return False
        check_output_dir(parent, flag, create=True)     # results/, results/papers/, ...
    elif not parent.exists():
        raise UsageError(f"{what}: its parent {parent} does not exist: create it first, "
                         "or give a directory in an existing one (vswbench makes one level "
                         "only, outside ./results)")
    if not parent.is_dir():
        raise UsageError(f"{what}: a part of the path is a file, not a directory: give a "
                         "directory")
    if not create:
        check_output_dir(parent, f"{what}: its parent", create=True)
    return create


def _make_dir(directory: Path, what: str) -> None:
    """Make the directory (mode DIR_MODE at most), or find it there; UsageError for what is
    in the way."""
    try:
        directory.mkdir(mode=dir_mode())
        os.chmod(directory, dir_mode())             # umask 000 does not make it 0777
    except FileExistsError:
        kind = kind_of(os.lstat(directory).st_mode) or "a file"
        if kind != "a directory" and not directory.is_dir():
            raise UsageError(f"{what} is {kind}, not a directory: give a directory") from None
    except NotADirectoryError:
        raise UsageError(f"{what}: a part of the path is a file, not a directory: give a "
                         "directory") from None
    except FileNotFoundError:
        raise UsageError(f"{what}: its parent {directory.absolute().parent} does not exist: "
                         "create it first, or give a directory in an existing one") from None
    except OSError as exc:
        raise UsageError(f"{what}: cannot create it ({exc.strerror}): give a directory you "
                         "may write") from None


def _probe_writable(directory: Path, what: str) -> None:
    """The only sure test that a file can be made there (read-only mounts, /proc, ACLs): make
    one, and remove it."""
    try:
        fd, tmp = _create_temp(directory / "probe")
    except OSError as exc:
        raise UsageError(f"{what}: cannot write there ({exc.strerror}): give a directory you "
                         "may write") from None
    os.close(fd)
    os.unlink(tmp)


def make_dir(directory: str | Path) -> Path:
    """A directory vswbench names inside an output directory (plots/, profiles/): made if
    missing; a link, or anything but a directory, there is refused (UsageError), untouched."""
    directory = Path(directory)
    st = _lstat(directory)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{directory} is {kind_of(st.st_mode) or 'a file'}, not a directory: "
                         "remove it, or give another output directory")
    if st is None:
        try:
            directory.mkdir(mode=dir_mode())
            os.chmod(directory, dir_mode())
        except FileExistsError:
            return make_dir(directory)
        except OSError as exc:
            raise WriteFailed(directory, exc) from None
    return directory


def check_output_file(path: str | Path, flag: str | None = None) -> Path:
    """A file to be written later: a regular file or nothing, in an existing directory where
    files can be made (a missing one is named, never created). UsageError (exit 2) otherwise,
    before anything is measured."""
    path = Path(path)
    what = f"{flag} {path}" if flag else str(path)
    if path.name in ("", ".", ".."):
        raise UsageError(f"{what}: give a file name, not a directory")
    refuse_unsafe(path, flag)
    parent = path.absolute().parent
    if not parent.exists() and not parent.is_symlink():
        raise UsageError(f"{what}: its directory {parent} does not exist: create it first, or "
                         "give a file in an existing directory (vswbench makes none for a file)")
    check_output_dir(path.parent, flag and f"{flag} {path}: its directory")
    if path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            os.close(fd)
        except OSError as exc:
            raise UsageError(f"{what}: cannot write it ({exc.strerror}): give a file you may "
                             "write") from None
    return path


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new file beside `path`, opened for writing: O_EXCL | O_NOFOLLOW, never an old one."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}{TEMP_TAG}{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o666)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(path))


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """with atomic_writer(path) as f: f.write(...): the whole file appears at `path` when the
    block ends, or nothing changes. mode "w" (text) or "wb"."""
    path = Path(path)
    refuse_unsafe(path)
    refuse_hard_links(path)
    try:
        fd, tmp = _create_temp(path)
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    try:
        raw = os.fdopen(fd, "wb")
        f: IO[Any] = raw if "b" in mode else io.TextIOWrapper(raw, encoding=encoding,
                                                              newline=newline)
        with f:
            yield f
            f.flush()
            _keep_mode(path, fd)
            os.fsync(fd)
        refuse_unsafe(path)                 # still a regular file or nothing
        os.rename(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise WriteFailed(path, exc) from None
    except BaseException:
        _remove(tmp)
        raise


def _keep_mode(path: Path, fd: int) -> None:
    """The new file keeps the permissions of the regular file it replaces, less group's and
    others' write (only our temp file is changed); a new file gets FILE_MODE, whatever the
    umask (at most 0644: a umask of 000 does not make it 0666)."""
    try:
        st = os.lstat(path)
    except OSError:
        os.fchmod(fd, file_mode())
        return
    os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o755 if stat.S_ISREG(st.st_mode) else file_mode())


def _remove(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_writer(path, "wb") as f:
        f.write(data)


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    with atomic_writer(path, "w", encoding=encoding) as f:
        f.write(text)


def open_regular(path: str | Path, *, append: bool = False, read: bool = False,
                 mode: int = FILE_MODE) -> int:
    """A file descriptor of a regular file, created if missing (O_NOFOLLOW: a link is refused,
    O_NONBLOCK: a FIFO never blocks; a device is refused before it is opened). append: writes
    go to the end (O_APPEND); read: O_RDWR. UsageError for what is not a regular file,
    WriteFailed when it cannot be opened."""
    path = Path(path)
    refuse_unsafe(path)
    refuse_untrusted(path)
    flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_RDWR if read else os.O_WRONLY
    flags |= os.O_APPEND if append else 0
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            refuse_unsafe(path)              # swapped since the check: say what it is now
            raise UsageError(f"{path} is not a regular file: remove it") from None
        raise WriteFailed(path, exc) from None
    st = os.fstat(fd)
    kind = kind_of(st.st_mode)
    if kind is not None:
        os.close(fd)
        raise UsageError(f"{path} is {kind}, not a regular file: remove it or give another path")
    try:
        if st.st_mode & 0o022 and st.st_size == 0 and st.st_uid == os.geteuid():
            os.fchmod(fd, mode & file_mode())    # just made: at most 0644
            st = os.fstat(fd)
        refuse_untrusted(path, st)               # what was opened (swapped since the check)
    except BaseException:
        os.close(fd)
        raise
    return fd


def append_line(fd: int, path: str | Path, line: str) -> None:
    """Append one whole line (a newline is added) with one write: a line is in the file
    whole or not at all (a short write, e.g. a full disk, is cut off again: WriteFailed)."""
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    end = os.fstat(fd).st_size
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, end)
        raise WriteFailed(path, exc) from None


def repair_lines(path: str | Path) -> bool:
    """Cut a trailing partial line (one a crash or a full disk left) off a JSON-lines file.
    True when the file had one."""
    path = Path(path)
    if _lstat(path) is None:
        return False
    fd = open_regular(path, read=True)
    try:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return False
        keep = 0
        chunk = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - chunk)
            block = os.pread(fd, pos - start, start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            pos = start
        os.ftruncate(fd, keep)
        return True
    except OSError as exc:
        raise WriteFailed(path, exc) from None
    finally:
        os.close(fd)
