"""The `vswbench` command group, its command table and the entry point.

Exit statuses: 0 ok, 1 runtime failure, 2 bad usage, 3 not supported here (from the engine),
130 interrupted. Errors are one clear message on stderr, never a traceback.
"""

from __future__ import annotations

import sys

import click

from vswbench import __version__
from vswbench.cli import campaign, host, latency, methods, model, trial
from vswbench.cli.common import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, err
from vswbench.engine.process import EngineError
from vswbench.errors import UsageError, VswbenchError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="vswbench")
def cli() -> None:
    """Benchmark virtual switches for containers (network namespaces)."""


COMMANDS: tuple[click.Command, ...] = (
    host.probe, host.clean, host.demo, host.switches, host.doctor,       # the host
    trial.trial,                                                          # one trial
    methods.search, methods.sweep, latency.latency, latency.b2b,          # methods
    latency.calibrate,
    campaign.run, campaign.report, campaign.export, campaign.compare,     # campaigns, results
    model.model,                                                          # models
)
for command in COMMANDS:
    cli.add_command(command)


# -- entry point -------------------------------------------------------------------------------
def _error(message: str) -> None:
    err.print(f"vswbench: error: {message}", style="red", highlight=False, markup=False)


def main(argv: list[str] | None = None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="vswbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:  # includes click.UsageError: exit 2
        exc.show()
        return exc.exit_code
    except click.Abort:
        _error("interrupted; everything this run created has been removed")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        _error("interrupted; everything this run created has been removed")
        return EXIT_INTERRUPTED
    except EngineError as exc:
        _error(str(exc))
        return exc.exit_code
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except VswbenchError as exc:
        _error(str(exc))
        return int(getattr(exc, "exit_code", EXIT_FAILURE))
    except BrokenPipeError:
        return EXIT_FAILURE
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
