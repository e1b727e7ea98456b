"""Every command a user can run, from the command table (cli/app.py): the fuzz and property tests
walk them all."""
from __future__ import annotations

import click

from vswbench.cli.app import cli


def leaf_commands() -> dict[str, click.Command]:
    """"trial", "model fit", ...: each leaf of the command groups by its path."""
    found: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        else:
            found[" ".join(path)] = cmd
    walk(cli, ())
    return found
