"""The locks a suite run by several pytest-xdist workers takes around each test (tests/conftest.py
says which): flock locks in a directory the workers share, each shared or exclusive, and fair: a
test waiting for a lock exclusively holds that lock's turnstile, which every test passes before
it takes the lock shared, so it is never starved. Locks are taken in the order given (conftest
always gives "machine" before "runs"), so two tests never wait for each other."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import ExitStack
from contextlib import contextmanager
from pathlib import Path


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


@contextmanager
def _held(directory: Path, name: str, *, exclusive: bool) -> Iterator[None]:
    turnstile, lock = _open(directory / f"{name}.turnstile"), _open(directory / f"{name}.lock")
    try:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if exclusive:
            fcntl.flock(lock, fcntl.LOCK_EX)    # the tests that hold it shared end first
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        if not exclusive:
            fcntl.flock(lock, fcntl.LOCK_SH)
        yield
    finally:
        os.close(lock)        # closing a descriptor releases its lock
        os.close(turnstile)


@contextmanager
def held_locks(directory: Path, locks: Sequence[tuple[str, bool]]) -> Iterator[None]:
    """Each (name, exclusive) lock in turn, all released when the block ends."""
    with ExitStack() as stack:
        for name, exclusive in locks:
            stack.enter_context(_held(directory, name, exclusive=exclusive))
        yield
