"""No reader above results/ looks a key up in a stored point's dict (issue 31, item 1).

A stored point's params and result are read once, into typed records, in results/ (points.py,
record.py). This walks every module of src/vswbench outside results/ and finds `.get(` calls on
a stored point's dicts: on an expression that reads a `.result` or `.params` attribute, or on a
name bound (directly or through other names, loops and comprehensions) from one."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "vswbench"
STORED = {"result", "params"}      # StoredPoint's dict attributes
# modules that still read stored dicts: this set may only shrink (each entry must still have a
# read, so it cannot go stale); empty when issue 31's item 1 is done. The first five read a
# result dict before (or as) it is stored: the writer's side, typed by item 1's options step.
NOT_YET_TYPED: set[str] = {
    "campaign/runner.py", "cli/common.py", "cli/latency.py", "engine/stalls.py",
    "measure/loadcurve.py", "measure/session.py",
    "report/model.py", "report/summary.py"}


def _mentions(node: ast.AST, tainted: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in STORED:
            return True
        if isinstance(n, ast.Name) and n.id in tainted:
            return True
    return False


def _names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _bindings(tree: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) of every assignment, loop and comprehension; tuples paired element-wise."""
    out: list[tuple[ast.AST, ast.AST]] = []
    for n in ast.walk(tree):
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(n, ast.Assign):
            pairs = [(t, n.value) for t in n.targets]
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and n.value is not None:
            pairs = [(n.target, n.value)]
        elif isinstance(n, (ast.For, ast.comprehension)):
            pairs = [(n.target, n.iter)]
        elif isinstance(n, ast.Call):    # max(pts, key=lambda q: ...): q is one of pts
            lambdas = [a for a in [*n.args, *(k.value for k in n.keywords)]
                       if isinstance(a, ast.Lambda)]
            pairs = [(ast.Tuple([ast.Name(a.arg) for a in f.args.args]), ast.Tuple(n.args))
                     for f in lambdas]
        for t, v in pairs:
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts):
                out += list(zip(t.elts, v.elts))
            else:
                out.append((t, v))
    return out


def stored_reads(source: str) -> list[int]:
    """Line numbers of `.get(` calls on a stored point's dicts in `source`."""
    tree = ast.parse(source)
    tainted: set[str] = set()
    bindings = _bindings(tree)
    while True:       # names bound from stored dicts, and from those names, to a fixpoint
        more = {name for t, v in bindings if _mentions(v, tainted) for name in _names(t)}
        if more <= tainted:
            break
        tainted |= more
    return sorted(n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr == "get" and _mentions(n.func.value, tainted))


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "results" not in p.relative_to(SRC).parts[:1])


OLD_PATTERNS = '''
def f(p, data):
    r = p.result or {}
    switch = str(p.params.get("switch") or r.get("switch") or "")
    for t in (p.result or {}).get("trials") or []:
        s = t.get("stalls")
    pts = r["points"]
    peak = max(pts, key=lambda q: q.get("achieved_pps") or 0)
    return peak.get("cycles_per_packet"), data.get("x"), {}.get("y")
'''


def test_the_check_finds_the_old_reads() -> None:
    """Not vacuous: the patterns report/ and models/ used before are found (lines 4 twice, 5,
    6, 8, 9; not the unrelated data.get and {}.get)."""
    assert stored_reads(OLD_PATTERNS) == [4, 4, 5, 6, 8, 9]


def test_no_get_on_stored_point_dicts_outside_results() -> None:
    modules = _modules()
    rel = {str(p.relative_to(SRC)) for p in modules}
    assert len(modules) > 100 and {"report/paper_claims.py",
                                   "api.py"} <= rel
    found = {}
    for path in modules:
        lines = stored_reads(path.read_text())
        if lines:
            found[str(path.relative_to(SRC))] = lines
    unexpected = {k: v for k, v in found.items() if k not in NOT_YET_TYPED}
    assert not unexpected, ("read these through results/ records (points.PointRecord, "
                            f"record.Params, record.Measured): {unexpected}")
    stale = NOT_YET_TYPED - set(found)
    assert not stale, f"typed now: remove from NOT_YET_TYPED: {sorted(stale)}"
