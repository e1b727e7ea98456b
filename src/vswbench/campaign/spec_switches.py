"""A campaign spec's own switches: `[switch.NAME]` tables (switches/external.py, the same keys as
a --switch-file), or `switch.NAME = "PATH"`, a switch file (relative to the spec's folder) whose
[switch.NAME] table declares it. Declared before the studies are checked, so a study's
`switch = "NAME"` finds it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.switches.catalog import BACKENDS
from vswbench.switches.catalog import add_user_switches
from vswbench.switches.external import Declaration
from vswbench.switches.external import load_file
from vswbench.switches.external import parse_declaration


def declare_spec_switches(data: dict[str, Any], source: str, problems: list[str]) -> None:
    tables = data.get("switch")
    if tables is None:
        return
    if not isinstance(tables, dict) or not tables:
        problems.append("[switch.NAME]: expected tables of your own switches (README, 'Your own "
                        "switch'), or switch.NAME = \"path/to/file.toml\"")
        return
    builtin = [cls.name for cls in BACKENDS]
    found: list[Declaration] = []
    for name, value in tables.items():
        try:
            if isinstance(value, str):
                base = Path(source).parent if source and not source.startswith("<") else Path()
                path = Path(value) if Path(value).is_absolute() else base / value
                match = [d for d in load_file(path, builtin, None) if d.name == name]
                if not match:
                    raise UsageError(f"switch.{name} = {value!r}: that file declares no "
                                     f"[switch.{name}]")
                found.append(match[0])
            else:
                found.append(parse_declaration(name, value, source, builtin))
        except UsageError as exc:
            problems.append(str(exc))
    if found and not problems:
        try:
            add_user_switches(found)
        except UsageError as exc:
            problems.append(str(exc))
