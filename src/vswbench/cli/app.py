"""The `vswbench` command group, its command table and the entry point: the one error boundary.

Exit statuses (docs/getting-started.md, "Exit statuses and bad input"):
  0    ok
  1    a measurement or the machine failed (a daemon died, the engine failed, a store in use)
  2    bad input: a flag, a spec, a path that cannot be read or written, a store that is not one
  3    not supported here (a switch or backend this machine cannot run), with the fix
  130  interrupted (Ctrl-C, SIGTERM): everything the run created has been removed
Every expected failure is one line on stderr. Anything else is a bug: one line saying so, and
the traceback only with `--debug` (or VSB_DEBUG=1).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import traceback

import click

from vswbench import __version__
from vswbench.cli import ab
from vswbench.cli import agent
from vswbench.cli import campaign
from vswbench.cli import history
from vswbench.cli import host
from vswbench.cli import latency
from vswbench.cli import methods
from vswbench.cli import model
from vswbench.cli import papers
from vswbench.cli import rule_update
from vswbench.cli import show
from vswbench.cli import sockets
from vswbench.cli import trial
from vswbench.cli.arguments import argument_problem
from vswbench.cli.arguments import one_line
from vswbench.cli.arguments import short_lines
from vswbench.cli.arguments import tolerant_output
from vswbench.cli.arguments import usage_line
from vswbench.cli.common import EXIT_FAILURE
from vswbench.cli.common import EXIT_INTERRUPTED
from vswbench.cli.common import EXIT_USAGE
from vswbench.cli.common import err
from vswbench.engine.process import EngineError
from vswbench.errors import UsageError
from vswbench.errors import VswbenchError
from vswbench.run.registry import unwinding_signals

EXIT_UNSUPPORTED = 3
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())   # click < 8.2: none
_debug = {"on": bool(os.environ.get("VSB_DEBUG"))}


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    _debug["on"] = _debug["on"] or value
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="vswbench")
@click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_set_debug,
              help="On an unexpected error, print the traceback (for a bug report).")
def cli() -> None:
    """Benchmark virtual switches for containers (network namespaces)."""


COMMANDS: tuple[click.Command, ...] = (
    host.probe, host.clean, host.demo, host.switches, host.doctor,       # the host
    trial.trial,                                                          # one trial
    methods.search, methods.sweep, latency.latency, latency.b2b,          # methods
    latency.calibrate, rule_update.rule_update,                          # rule-update time
    sockets.stream, sockets.rr, sockets.crr,                              # what applications see
    campaign.run, campaign.report, campaign.export, campaign.compare,     # campaigns, results
    campaign.merge,                                                       # several hosts' stores
    show.show,                                                            # a run's first screen
    history.history, history.trend, ab.ab,                                # regressions
    model.model,                                                          # models
    agent.agent,                                                          # other hosts
    papers.papers,                                                        # papers' figures
)
for command in COMMANDS:
    cli.add_command(command)


# -- entry point -------------------------------------------------------------------------------
def _error(message: str) -> None:
    """One line; a message that lists several mistakes (a spec's), one line per mistake."""
    _line(f"vswbench: error: {short_lines(message)}")


def _line(text: str) -> None:
    err.print(text, style="red", highlight=False, markup=False)


def _show_click_error(exc: click.ClickException) -> None:
    """One line, not click's usage block (a group without its command: its help)."""
    if isinstance(exc, _NO_ARGS_IS_HELP):       # click >= 8.2
        click.echo(exc.ctx.get_help())
    elif isinstance(exc, click.UsageError):
        _line(usage_line(exc))
    else:
        _line(f"vswbench: error: {one_line(exc.format_message())}")


def main(argv: list[str] | None = None) -> int:
    tolerant_output()
    args = sys.argv[1:] if argv is None else argv
    problem = argument_problem(cli, args)
    if problem is not None:
        _error(problem)
        return EXIT_USAGE
    try:
        # SIGTERM and SIGHUP take Ctrl-C's path from the very start (the engine probe included):
        # every `with` unwinds, the store's lock is released, the run is marked interrupted
        with unwinding_signals():
            rv = cli.main(args=argv, prog_name="vswbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt) as exc:
        cause = exc.__cause__ if isinstance(exc, click.Abort) else exc
        by = getattr(cause, "signal_name", None)
        _error(f"interrupted{f' by {by}' if by else ''}; everything this run created has been "
               "removed")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the boundary: anything else is a bug
        return _failed(exc)
    return rv if isinstance(rv, int) else 0


def _failed(exc: Exception) -> int:
    """The exit status of a command that raised, its one line printed (click's usage errors,
    vswbench's errors, paths, the store); anything else is a bug."""
    if isinstance(exc, click.ClickException):  # includes click.UsageError: exit 2
        _show_click_error(exc)
        return exc.exit_code
    if isinstance(exc, EngineError):
        _error(str(exc))
        return exc.exit_code
    if isinstance(exc, UsageError):
        _error(str(exc))
        return EXIT_USAGE
    if isinstance(exc, VswbenchError):
        _error(str(exc))
        return int(getattr(exc, "exit_code", EXIT_FAILURE))
    if isinstance(exc, BrokenPipeError):
        return EXIT_FAILURE
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, sqlite3.Error):
        return _store_error(exc)
    return _unexpected(exc)


def _os_error(exc: OSError) -> int:
    if exc.filename is None:
        return _unexpected(exc)
    what = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
    _error(f"{what}: {exc.strerror or exc}; check the path and its permissions")
    return EXIT_USAGE


def _store_error(exc: sqlite3.Error) -> int:
    locked = "locked" in str(exc) or "busy" in str(exc)
    _error(f"results store: {exc}" + ("; another run is writing it: wait for it to end"
                                      if locked else
                                      "; the file is damaged or not a vswbench store: "
                                      "measure again into a new --out directory"))
    return EXIT_FAILURE if locked else EXIT_USAGE


def _unexpected(exc: BaseException) -> int:
    if _debug["on"]:
        traceback.print_exception(exc)
    _error(f"unexpected {type(exc).__name__}: {exc}. This is a bug in vswbench: please report it "
           "with the output of the same command run with --debug")
    return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
