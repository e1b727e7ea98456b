"""The documentation (issue 44, part 4): the README stays one screenful, the site builds with
`mkdocs build --strict`, its reference pages are what docs/gen_reference.py writes from the code
(not stale), every `vswbench ...` command the README and docs show is one the CLI accepts (parsed
by click, never run), and every campaign spec they show parses."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import click
import pytest

from vswbench.campaign.spec import parse_spec
from vswbench.cli.app import cli
from vswbench.cli.arguments import argument_problem

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# a span that shows a command's form, not a command: [optional] parts, a|b choices, A... lists
FORM = re.compile(r"\[|\]|\||\.\.\.|…|<|\bSTORE\b|: error:")


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_one_screenful_with_the_two_commands_on_top() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move detail into docs/"
    assert lines[4:6] == ["```sh", "./setup.sh && .venv/bin/vswbench run --suite quick"]
    assert lines[6].startswith("./setup.sh && .venv/bin/pytest") and lines[7] == "```"
    # CI runs the README's test command, as written
    assert lines[6] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_docs_have_their_sections() -> None:
    for page in ("getting-started.md", "concepts/index.md", "concepts/verdicts.md",
                 "recipes/compare-two-switches.md", "recipes/own-switch.md", "recipes/ci-gate.md",
                 "recipes/lab.md", "recipes/sockets.md", "recipes/containers.md",
                 "methodology/index.md", "methodology/history.md", "reference/commands.md",
                 "reference/spec.md", "reference/switches.md", "reference/export.md"):
        assert (DOCS / page).is_file(), page
    concepts = (DOCS / "concepts" / "index.md").read_text()
    for term in ("NDR", "PDR", "Conditional throughput", "MRR", "Exceed ratio", "Host stalls",
                 "Ties and intervals"):
        assert f"\n## {term}\n" in concepts, term
    assert "\n## Paired rounds\n" in (DOCS / "concepts" / "verdicts.md").read_text()


def test_the_generated_reference_is_current() -> None:
    stale = [str(p.relative_to(ROOT)) for p in _gen().stale()]
    assert not stale, (f"generated pages are stale: {', '.join(stale)}; run "
                       "`.venv/bin/python docs/gen_reference.py`")


def test_every_switch_of_the_catalog_is_listed() -> None:
    from vswbench.switches.catalog import BACKENDS

    for page in (ROOT / "README.md", DOCS / "index.md", DOCS / "reference" / "switches.md"):
        text = page.read_text()
        missing = [cls.name for cls in BACKENDS if f"`{cls.name}`" not in text]
        assert not missing, (page, missing)


def test_mkdocs_build_strict(tmp_path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()


# -- the commands shown ----------------------------------------------------------------------------
def _commands(text: str) -> list[tuple[str, bool]]:
    """`vswbench ...` as shown, and whether it is a whole command: each line of a shell block
    (whole), and inline spans that are not a form with [options], a|b or A... (a span in prose
    may name a command and one of its options without the required rest: `vswbench trial
    --profile`)."""
    found = []
    for lang, body in FENCE.findall(text):
        if lang in ("sh", "bash", "shell", "console", ""):
            found += [(line, True) for line in body.splitlines() if "vswbench " in line]
    for span in SPAN.findall(FENCE.sub("", text)):
        if span.startswith(("vswbench ", ".venv/bin/vswbench ")) and not FORM.search(span):
            found.append((span, False))
    return found


def _argvs(line: str) -> list[list[str]]:
    """The vswbench command lines of a shell line (`a && vswbench x`, `sudo vswbench y | z`)."""
    words = shlex.split(line.strip().removeprefix("$ "), comments=True)
    argvs: list[list[str]] = []
    current: list[str] | None = None
    for word in words:
        if word in ("&&", "||", "|", ";"):
            current = None
        elif current is None and (word == "vswbench" or word.endswith("/vswbench")):
            current = []
            argvs.append(current)
        elif current is not None:
            current.append(word)
    return argvs


def _problem(argv: list[str], whole: bool = True) -> str | None:
    """Why click refuses argv, or None. Values that name files are not checked (the docs' paths
    are examples): a click.Path that does not exist, a --switch-file that cannot be read."""
    problem = argument_problem(cli, argv)
    if problem is not None:
        return problem
    cmd: click.Command = cli
    ctx = click.Context(cli, info_name="vswbench")
    args = list(argv)
    while isinstance(cmd, click.Group):
        while args and args[0] in ("--debug",):
            args.pop(0)
        if not args or args[0] in ("-h", "--help", "-V", "--version"):
            return None
        sub = cmd.get_command(ctx, args[0])
        if sub is None:
            return f"no command {args[0]!r}"
        ctx = click.Context(sub, info_name=args.pop(0), parent=ctx)
        cmd = sub
    return _parse_problem(cmd, ctx, args, whole)


def _parse_problem(cmd: click.Command, ctx: click.Context, args: list[str],
                   whole: bool) -> str | None:
    """Why the (sub)command refuses its arguments, or None (as _problem says)."""
    try:
        cmd.make_context(ctx.info_name, args, parent=ctx.parent)
    except click.exceptions.Exit:
        return None
    except click.MissingParameter as exc:
        return None if not whole else exc.format_message()
    except click.BadParameter as exc:
        if isinstance(getattr(exc.param, "type", None), click.Path) or \
                getattr(exc.param, "name", "") == "switch_file":
            return None
        return exc.format_message()
    except click.UsageError as exc:
        partial = isinstance(exc, click.MissingParameter) or "requires an argument" in str(exc)
        return None if partial and not whole else exc.format_message()
    except Exception as exc:  # noqa: BLE001 - a callback reading an example's file
        if "switch-file" in str(exc) or "No such file" in str(exc):
            return None
        return f"{type(exc).__name__}: {exc}"
    return None


def test_the_command_extraction_finds_the_docs_commands() -> None:
    shown = [argv for page in PAGES for line, _ in _commands(page.read_text())
             for argv in _argvs(line)]
    assert ["run", "--suite", "quick"] in shown
    assert len(shown) >= 40, len(shown)
    assert _problem(["run", "--suite", "quick"]) is None
    assert _problem(["run", "--suite", "nonesuch"]) is not None
    assert _problem(["compare", "a", "b", "--fail-if", "ndr:-5%", "--no-such"]) is not None
    assert _problem(["nonesuch"]) is not None
    assert _problem(["trial", "--profile"]) is not None
    assert _problem(["trial", "--profile"], whole=False) is None
    assert _problem(["trial", "--no-such"], whole=False) is not None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_is_one_the_cli_accepts(page: Path) -> None:
    bad = []
    for line, whole in _commands(page.read_text()):
        for argv in _argvs(line):
            problem = _problem(argv, whole)
            if problem is not None:
                bad.append(f"vswbench {shlex.join(argv)}: {problem}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_campaign_spec_shown_parses(page: Path) -> None:
    for lang, body in FENCE.findall(page.read_text()):
        if lang == "toml" and "[[study]]" in body:
            tomllib.loads(body)
            parse_spec(body, source=str(page.relative_to(ROOT)))
