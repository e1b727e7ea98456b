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
# `.get(` calls the check flags that read no stored point: a fresh result before it is stored, an
# engine answer, live kernel data, or a name shared with a stored dict's. Per module, the flagged
# code and why it is not a stored read; every entry must still match a flagged line.
NOT_STORED: dict[str, dict[str, str]] = {
    "campaign/runner.py": {"self.search_seconds.get(": "seconds per switch, this run's own"},
    "cli/common.py": {"r.latency_us.get(": "a fresh TrialResult's latency, printed as measured"},
    "cli/latency.py": {"lat.get(": "the latency command's own fresh result",
                       'data.get("profile_at_ndr")': "the same fresh result"},
    "engine/stalls.py": {'u.get("busy")': "the stall monitor's live per-CPU record",
                         'u.get("busy_s"': "the same record"},
    "measure/loadcurve.py": {"p.trial.result.latency_us.get(": "fresh trials of a sweep"},
    "measure/session.py": {"answer.data.get(": "the control engine's answer"},
}


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
    unexpected, used = {}, set()
    for rel_path, lines in found.items():
        text = (SRC / rel_path).read_text().splitlines()
        for line in lines:
            allowed = [code for code in NOT_STORED.get(rel_path, {}) if code in text[line - 1]]
            if allowed:
                used.update((rel_path, code) for code in allowed)
            else:
                unexpected.setdefault(rel_path, []).append(line)
    assert not unexpected, ("read these through results/ records (points.PointRecord, "
                            f"params.Params, record.Measured): {unexpected}")
    stale = {(m, code) for m, codes in NOT_STORED.items() for code in codes} - used
    assert not stale, f"no longer flagged: remove from NOT_STORED: {sorted(stale)}"
