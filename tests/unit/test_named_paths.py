"""Every file a comment or docstring of the package names (`switches/chain/nf.py`, `plan.py`)
exists: a name left behind by a move (switches/chain_nf.py after the family split) points a
reader nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "vswbench"
NAMED = re.compile(r"(?<![\w./-])(\w[\w/.-]*\.py)\b")
SKIP = {".git", ".venv", "node_modules", "site", "__pycache__"}


def known_suffixes() -> set[str]:
    """Every path of a .py file in the checkout, and each of its tails (nf.py, chain/nf.py, ...)."""
    found: set[str] = set()
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if SKIP & set(parts):
            continue
        found |= {"/".join(parts[i:]) for i in range(len(parts))}
    return found


def test_every_named_file_exists() -> None:
    known = known_suffixes()
    assert "switches/chain/nf.py" in known and "plan.py" in known
    stale = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for name in NAMED.findall(line):
                if name not in known and name.removeprefix("vswbench/") not in known:
                    stale.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert not stale, "files named that do not exist (moved? give the path now):\n" + "\n".join(
        stale)
