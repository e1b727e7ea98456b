"""`vswbench model ...`: the papers' models. The group lives here; its subcommands register
themselves from their own modules (cli_model_cost.py: fit, predict; cli_model_delay.py: delay)."""

from __future__ import annotations

import click

from vswbench.cli import cli


@cli.group("model")
def model() -> None:
    """The papers' models: the NF-chain cost model (fit, predict) and the empirical delay model
    (delay)."""


def _register() -> None:
    import importlib

    for name in ("cli_model_cost", "cli_model_delay"):
        try:
            importlib.import_module(f"vswbench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"vswbench.{name}":
                raise


_register()
