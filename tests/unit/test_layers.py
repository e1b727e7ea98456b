"""The package's import layers (ARCHITECTURE.md): no module imports a higher layer, siblings of one
layer do not import each other, and no import cycle exists between modules. Imports inside
functions and under TYPE_CHECKING count too: a back-arrow is a back-arrow wherever it is written."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "vswbench"

# Lowest first. A module may import its own layer's package and any lower layer, never a higher
# one; the top-level modules errors and units are the ground floor.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("units", "safefile", "saferead", "jsonvalues"),
    ("run",),
    ("engine",),
    ("host",),
    ("scenario",),
    ("switches",),
    ("testbed",),
    ("measure",),
    ("results",),
    ("campaign",),
    ("models",),
    ("report",),
    ("api",),
    ("pytest_plugin",),
    ("cli",),
    ("__main__",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every vswbench module `name` imports (resolving `from pkg import module`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("vswbench")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("vswbench"):
                continue
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known}
    return {m for m in found if m in known and m != name}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "vswbench"


MODULES = modules()


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's vswbench imports; parsed on first use, not while pytest collects (the
    integration tier collects this file too)."""
    known = set(MODULES)
    return {m: imports_of(m, p, known) for m, p in MODULES.items()}


def test_every_package_has_a_layer() -> None:
    missing = sorted({layer_of(m) for m in MODULES} - set(RANK) - {"vswbench"})
    assert not missing, f"packages without a layer in ARCHITECTURE.md / this test: {missing}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_or_sideways_import(module: str) -> None:
    own = layer_of(module)
    if own == "vswbench":            # the package root holds only the version
        assert not graph()[module]
        return
    bad = [m for m in graph()[module]
           if layer_of(m) != "vswbench" and layer_of(m) != own and RANK[layer_of(m)] >= RANK[own]]
    assert not bad, f"{module} (layer {own}) imports {bad}: a higher or sibling layer"


def test_no_import_cycles() -> None:
    imports = graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for dep in sorted(imports[m]):
            if dep == "vswbench" or dep.count(".") and dep in imports and imports[dep] is None:
                continue
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[m] = 2

    for m in sorted(imports):
        if m not in state:
            visit(m)
    # a package's __init__ is imported by each of its modules implicitly, not an edge here
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_modules_are_small_and_say_what_they_hold() -> None:
    problems = []
    for m, path in MODULES.items():
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > 500:
            problems.append(f"{m}: {len(lines)} lines (at most 500)")
        doc = ast.get_docstring(ast.parse(text))
        if not doc or not lines[0].startswith('"""'):
            problems.append(f"{m}: the first line is not a docstring saying what it holds")
    assert not problems, "\n".join(problems)
