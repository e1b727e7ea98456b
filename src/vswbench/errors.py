"""Exceptions shared across modules. The CLI maps them to exit statuses."""

import os


class VswbenchError(Exception):
    """A runtime failure with a message meant for the user (exit status 1)."""

    exit_code = 1


class UsageError(VswbenchError):
    """Bad input from the user: unknown option value, impossible combination (exit status 2)."""

    exit_code = 2


def require_root(what: str, why: str = "creates network namespaces") -> None:
    """UsageError (exit 2, the same for every command) unless running as root."""
    if os.geteuid() != 0:
        raise UsageError(f"{what} {why}: run it as root (e.g. with sudo)")


class CommandError(VswbenchError):
    """An external command (ip, tc, ethtool, ...) failed."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr.strip()
        detail = f": {self.stderr}" if self.stderr else ""
        super().__init__(f"`{' '.join(self.argv)}` failed with status {returncode}{detail}")


class NotAvailableHere(VswbenchError):
    """A feature this machine cannot run (exit status 3): the message says why and the fix."""

    exit_code = 3
