"""`vswbench agent`: the DUT side of a campaign run with --inventory (campaign/agent.py); it
reads one JSON request on stdin and answers in JSON lines. Started over SSH, not by hand."""
from __future__ import annotations

import sys

import click

from vswbench.errors import UsageError


@click.command(hidden=False)
def agent() -> int:
    """Run testbed pieces for a controller over SSH (JSON on stdin/stdout; see campaign/agent.py)."""
    from vswbench.campaign.agent import serve

    if sys.stdin.isatty():
        raise UsageError("vswbench agent reads a JSON request on stdin: it is started over SSH "
                         "by `vswbench run SPEC --inventory hosts.yml`, not by hand")
    return serve(sys.stdin, sys.stdout)
