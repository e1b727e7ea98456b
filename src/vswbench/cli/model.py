"""`vswbench model`: the group of the papers' models (fit, predict: cli/model_cost.py; delay:
cli/model_delay.py).

Its commands load when one is run or listed (`SUBCOMMANDS`): they import numpy through
models/, 0.1 s that no other command's start-up should pay (tests/unit/test_startup.py)."""

from __future__ import annotations

import importlib

import click

SUBCOMMANDS = {"fit": "vswbench.cli.model_cost:fit_cmd",
               "predict": "vswbench.cli.model_cost:predict_cmd",
               "delay": "vswbench.cli.model_delay:delay"}


class LazyGroup(click.Group):
    """A group whose commands are imported by name (`module:attribute`) when first asked for."""

    def __init__(self, *args: object, lazy: dict[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, attribute = self.lazy[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)


@click.group("model", cls=LazyGroup, lazy=SUBCOMMANDS)
def model() -> None:
    """The papers' models: the NF-chain cost model (fit, predict) and the empirical delay model
    (delay)."""
