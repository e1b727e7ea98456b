"""`vswbench model`: the group of the papers' models (fit, predict: cli/model_cost.py; delay:
cli/model_delay.py)."""

from __future__ import annotations

import click

from vswbench.cli.model_cost import fit_cmd
from vswbench.cli.model_cost import predict_cmd
from vswbench.cli.model_delay import delay


@click.group("model")
def model() -> None:
    """The papers' models: the NF-chain cost model (fit, predict) and the empirical delay model
    (delay)."""


model.add_command(fit_cmd)
model.add_command(predict_cmd)
model.add_command(delay)
