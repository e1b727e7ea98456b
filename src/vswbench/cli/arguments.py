"""What the error boundary (cli/app.py) does with the command line before and after click: the
arguments no command may take (a NUL byte, digits other than ASCII 0-9), click's usage errors as
one line, values never echoed longer than a line, and output that cannot fail on a terminal whose
encoding lacks a character (the C locale)."""

from __future__ import annotations

import contextlib
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import click

MAX_ECHOED = 60          # characters of a quoted bad value an error message repeats
MAX_WORD = 160           # characters of an unquoted word (a path): its middle is cut
_TOKEN = re.compile(r"""'[^'\n]*'|"[^"\n]*"|\S+""")


def _shorten_token(token: str) -> str:
    quoted = len(token) > 1 and token[0] in "'\"" and token[-1] == token[0]
    if quoted and len(token) > MAX_ECHOED:
        return f"{token[:MAX_ECHOED - 2]}…{token[0]}"
    if not quoted and len(token) > MAX_WORD:
        half = MAX_WORD // 2 - 1
        return f"{token[:half]}…{token[-half:]}"
    return token


def one_line(message: str) -> str:
    """`message` on one line, every quoted value longer than MAX_ECHOED characters cut with an
    ellipsis (a 5,000-character bad value is not echoed whole), a longer word (a path) cut in
    its middle so that its file name stays."""
    flat = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    return _TOKEN.sub(lambda m: _shorten_token(m.group(0)), flat)


def short_lines(message: str) -> str:
    """A message of several lines (a spec's mistakes, one a line) kept a line each, every line
    shortened as one_line does; a message of one line is one_line's."""
    lines = [part.rstrip() for part in str(message).splitlines() if part.strip()]
    return "\n".join(_TOKEN.sub(lambda m: _shorten_token(m.group(0)), line) for line in lines)


def usage_line(exc: click.ClickException) -> str:
    """click's usage error (four lines: usage, try, blank, error) as one line naming the command
    and where its help is."""
    message = one_line(exc.format_message()).rstrip(".")
    message = message[:1].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return f"vswbench: error: {message}"
    path = ctx.command_path
    return f"{path}: error: {message} (see {path} --help)"


def _non_ascii_digit(text: str) -> str | None:
    return next((c for c in text if unicodedata.category(c) == "Nd" and not "0" <= c <= "9"),
                None)


PLAIN_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")    # what an int or float option reads


@dataclass(frozen=True)
class _ValueOption:
    param: str          # the parameter's name (the same for every spelling of the option)
    path: bool          # its value is a path
    multiple: bool      # it may be given more than once
    number: bool = False    # an int or float: plain decimal digits (units.ascii_number)


def _value_options(command: click.Command) -> tuple[dict[str, _ValueOption], bool]:
    """The spellings of `command`'s options that take a value, and whether one of its arguments
    is a path."""
    options: dict[str, _ValueOption] = {}
    path_argument = False
    for param in command.params:
        is_path = isinstance(param.type, click.Path)
        if isinstance(param, click.Option):
            if not param.is_flag and not param.count:
                number = isinstance(param.type, (click.types.IntParamType,
                                                 click.types.FloatParamType)) \
                    or getattr(param.type, "plain_number", False)   # e.g. SecondsType
                taken = _ValueOption(param.name or "", is_path, param.multiple, number)
                options.update(dict.fromkeys(param.opts + param.secondary_opts, taken))
        elif is_path:
            path_argument = True
    return options, path_argument


def _leaf(group: click.Group, args: Sequence[str]) -> click.Command:
    command: click.Command = group
    for arg in args:
        if not isinstance(command, click.Group):
            break
        sub = command.get_command(click.Context(command), arg)   # a lazy group loads it
        if sub is not None:
            command = sub
    return command


def argument_problem(group: click.Group, args: Sequence[str]) -> str | None:
    """Why the command line cannot be taken whatever the command: a NUL byte (a shell cannot even
    pass one); a number written with other digits than ASCII 0-9 (Python's int() reads
    Arabic-Indic and full-width digits; a rate typed that way is a mistake, not a number); an
    option of one value given twice (click would keep the last one silently). Paths are exempt
    from the digit rule (a file may be named in any script), but none is empty (Path('') is the
    current directory, where a file was meant)."""
    bad = next((a for a in args if "\x00" in a), None)
    if bad is not None:
        return f"argument {one_line(repr(bad))} contains a NUL byte"
    options, path_argument = _value_options(_leaf(group, args))
    seen: set[str] = set()
    expects: _ValueOption | None = None     # the previous token was an option taking a value
    owner = ""                              # that option
    positional_only = False
    for arg in args:
        value, where, taken, belongs = arg, "", None, None     # belongs: the value's option
        if expects is not None:
            is_path, belongs, expects, where = expects.path, expects, None, f"{owner} "
        elif arg == "--" and not positional_only:
            positional_only = True
            continue
        elif arg.startswith("-") and not positional_only:
            name, eq, rest = arg.partition("=")
            taken = options.get(name)
            if eq:                    # --option=value
                is_path, where, value, owner = bool(taken and taken.path), f"{name} ", rest, name
                belongs = taken
            else:
                is_path, expects, owner = False, taken, name
        else:
            is_path = path_argument
        if taken is not None and not taken.multiple:
            if taken.param in seen:
                return f"{owner} is given twice: give it once"
            seen.add(taken.param)
        problem = _value_problem(value, is_path, where, owner, belongs)
        if problem is not None:
            return problem
    return None


def _value_problem(value: str, is_path: bool, where: str, owner: str,
                   belongs: _ValueOption | None) -> str | None:
    """An empty path, a digit other than 0-9, or a number option's value that is not plain."""
    if is_path and not value.strip():
        return (f"{where or 'a path argument '}is empty: give a file or directory name "
                "(. for the current directory)")
    digit = None if is_path else _non_ascii_digit(value)
    if digit is not None:
        return (f"{where}{one_line(repr(value))}: {digit!r} is not an ASCII digit "
                f"({unicodedata.name(digit, 'a digit').lower()}); write numbers with 0-9")
    if belongs is not None and belongs.number and not PLAIN_NUMBER.fullmatch(value):
        return (f"{owner} {one_line(repr(value))}: write a number with the digits 0-9 and at "
                "most one decimal point (no sign, underscore, space or exponent)")
    return None


def tolerant_output() -> None:
    """Make stdout and stderr replace what their encoding cannot show (the C locale without UTF-8
    coercion: ASCII) by escapes, instead of failing after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # a closed or detached stream: nothing to print to
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")
