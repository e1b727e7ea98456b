"""Every command a user can run, from the command table (cli/app.py): the fuzz and property tests
walk them all."""
from __future__ import annotations

import click

from vswbench.cli.app import cli


def leaf_commands() -> dict[str, click.Command]:
    """"trial", "model fit", ...: each leaf of the command groups by its path."""
    found: dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):   # through get_command: cli/model.py loads lazily
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, (*path, name))
        else:
            found[" ".join(path)] = cmd
    walk(cli, ())
    return found
