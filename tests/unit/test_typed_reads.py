"""No reader above results/ looks a key up in a stored point's dict (issue 31, item 1), a run's
stored fingerprint or a latency dict (issue 45, part 1).

A stored point's params and result are read once, into typed records, in results/ (points.py,
record.py); a run's fingerprint into results/fingerprint.RunFingerprint (StoredRun.system); a
socket result into measure/socket_result.SocketResult, whose latency is a SocketLatency. This
walks every module of src/vswbench outside results/ and finds
- `.get(` calls on a stored point's dicts: on an expression that reads a `.result` or `.params`
  attribute, or on a name bound (directly or through other names, loops, comprehensions and the
  arguments of a call to a function of the same module) from one;
- `.get(` calls and `["key"]` subscripts on a `.fingerprint` or `.latency_us` attribute, or on
  a name bound from one the same way.
And the printers that read a fresh result through typed records only (ATTRIBUTES_ONLY: `vswbench
search | sweep | latency | b2b | rule-update | trial`, the `--profile` printer and the trial line of
a method: measure/method.SearchRun, SweepRun, LatencyRun, B2BRun, measure/rule_update.RuleUpdateRun,
measure/repeat.TrialStatistics, measure/profile_record.PerfProfile, TrialResult.latency and
core_usage) make no `.get(` call and no `["key"]` subscript at all, but on the names they are
allowed (click's options)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "vswbench"
STORED = {"result", "params"}      # StoredPoint's dict attributes: `.get(` flagged
TYPED = {"fingerprint", "latency_us"}   # read through types: `.get(` and `["key"]` flagged
# `.get(` calls the check flags that read no stored point: a fresh result before it is stored, an
# engine answer, live kernel data, or a name shared with a stored dict's. Per module, the flagged
# code and why it is not a stored read; every entry must still match a flagged line.
NOT_STORED: dict[str, dict[str, str]] = {
    "campaign/runner.py": {"self.search_seconds.get(": "seconds per switch, this run's own"},
    "engine/stalls.py": {'u.get("busy")': "the stall monitor's live per-CPU record",
                         'u.get("busy_s"': "the same record"},
    "measure/loadcurve.py": {"p.trial.result.latency_us.get(": "fresh trials of a sweep"},
    "measure/rule_update.py": {"r.latency_us.get(k)": "a fresh trial's latency, as measured"},
    "measure/session.py": {"answer.data.get(": "the control engine's answer"},
}


# modules that print a fresh result through its typed records only, and the names on which they
# may still read a key (click's parsed options; cli/common.py: also the switch registry by name)
ATTRIBUTES_ONLY: dict[str, set[str]] = {"cli/methods.py": {"kw"}, "cli/latency.py": {"kw"},
                                        "cli/rule_update.py": {"kw"}, "cli/trial.py": set(),
                                        "cli/profile_view.py": set(),
                                        "cli/common.py": {"kw", "switches"}}


def _mentions(node: ast.AST, tainted: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in STORED:
            return True
        if isinstance(n, ast.Name) and n.id in tainted:
            return True
    return False


def _mentions_typed(node: ast.AST, tainted: set[str]) -> bool:
    """Whether `node` is (not merely mentions) a `.fingerprint` / `.latency_us` dict or a name
    bound from one: `x.fingerprint`, `fp`, `fp or {}`, `fp["hosts"]`, `fp.get(...)`, its
    `.items()` and `.values()`, a comprehension or zip/sorted of them. Not a typed record's
    own fields (`fp.host.tsc_hz`) nor a test on it (`f.latency_us is not None`)."""
    if isinstance(node, ast.Name):
        return node.id in tainted
    if isinstance(node, ast.Attribute):
        return node.attr in TYPED
    if isinstance(node, (ast.BoolOp, ast.Tuple, ast.List)):
        return any(_mentions_typed(v, tainted) for v in getattr(node, "values", None)
                   or getattr(node, "elts", []))
    if isinstance(node, ast.IfExp):
        return _mentions_typed(node.body, tainted) or _mentions_typed(node.orelse, tainted)
    if isinstance(node, ast.Subscript):
        return _mentions_typed(node.value, tainted)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _mentions_typed(node.elt, tainted)
    if isinstance(node, ast.DictComp):
        return _mentions_typed(node.value, tainted)
    if isinstance(node, ast.Call):
        return _call_is_typed(node, tainted)
    return False


def _call_is_typed(node: ast.Call, tainted: set[str]) -> bool:
    """A call that hands such a dict on: its .get/.items/.values, or zip/sorted/... of it."""
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in ("get", "items", "values"):
        return _mentions_typed(f.value, tainted)
    if isinstance(f, ast.Name) and f.id in ("zip", "sorted", "list", "reversed", "dict"):
        return any(_mentions_typed(a, tainted) for a in node.args)
    return False


def _names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _bindings(tree: ast.AST, calls: bool = False) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) of every assignment, loop and comprehension; tuples paired element-wise;
    `calls`: also (parameter, argument) of calls to the module's own functions."""
    out: list[tuple[ast.AST, ast.AST]] = []
    defs = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
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
            if calls and isinstance(n.func, ast.Name) and n.func.id in defs:  # _cpu(fp)
                params = defs[n.func.id].args.args
                pairs += [(ast.Name(a.arg), v) for a, v in zip(params, n.args)]
        for t, v in pairs:
            if (isinstance(t, ast.Tuple) and isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                    and v.func.id == "zip" and len(t.elts) == len(v.args)):
                v = ast.Tuple(v.args)           # for a, b in zip(xs, ys): a of xs, b of ys
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts):
                out += list(zip(t.elts, v.elts))
            else:
                out.append((t, v))
    return out


def _tainted(bindings: list[tuple[ast.AST, ast.AST]],
             mentions: Callable[[ast.AST, set[str]], bool]) -> set[str]:
    """Names bound from the dicts `mentions` finds, and from those names, to a fixpoint."""
    tainted: set[str] = set()
    while True:
        more = {name for t, v in bindings if mentions(v, tainted) for name in _names(t)}
        if more <= tainted:
            return tainted
        tainted |= more


def stored_reads(source: str) -> list[int]:
    """Line numbers of key reads in `source`: `.get(` calls on a stored point's dicts, and
    `.get(` calls or `["key"]` subscripts on a fingerprint or latency dict."""
    tree = ast.parse(source)
    stored = _tainted(_bindings(tree), _mentions)
    typed = _tainted(_bindings(tree, calls=True), _mentions_typed)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get":
            if _mentions(n.func.value, stored) or _mentions_typed(n.func.value, typed):
                found.append(n.lineno)
        elif (isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
              and isinstance(n.slice.value, str) and _mentions_typed(n.value, typed)):
            found.append(n.lineno)
    return sorted(found)


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


# the fingerprint and latency reads report/, models/ and api.py made at 4df8ce3
OLD_TYPED_PATTERNS = '''
def _cpu(fp):
    return fp.get("cpu_model"), fp["smt_active"]
def summaries(runs, s):
    for info in runs:
        fp = info.fingerprint or {}
        _cpu(fp)
    tsc = {r.run_id: (r.fingerprint or {}).get("tsc_hz") for r in runs}
    return s.latency_us["p99"], s.latency_us.get("p50"), s.latency.p50, tsc.get("x")
'''


def test_the_check_finds_the_old_reads() -> None:
    """Not vacuous: the patterns report/ and models/ used before are found (lines 4 twice, 5,
    6, 8, 9; not the unrelated data.get and {}.get)."""
    assert stored_reads(OLD_PATTERNS) == [4, 4, 5, 6, 8, 9]


def test_the_check_finds_the_old_fingerprint_and_latency_reads() -> None:
    """Not vacuous: the stored fingerprint read by key in a helper it is passed to (line 3
    twice) and in a comprehension (8); on line 9 a socket result's latency dict by subscript and
    by `.get`, and `tsc.get` (tsc holds values read from fingerprints): three reads; the typed
    `s.latency.p50` is not one."""
    assert stored_reads(OLD_TYPED_PATTERNS) == [3, 3, 8, 9, 9, 9]


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


def key_reads(source: str, allowed: set[str]) -> list[int]:
    """Line numbers of every `.get(` call and `["key"]` subscript in `source` but those on a
    name in `allowed`."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get":
            target = n.func.value
        elif (isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
              and isinstance(n.slice.value, str)):
            target = n.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id in allowed):
            found.append(n.lineno)
    return sorted(found)


# how cli/methods.py printed a search before SearchRun was typed (issue 45): by the JSON's keys
OLD_PRINTER = '''
def _print(results, data, kw):
    title = f"{data['switch']} / {data['scenario']}" if kw["as_json"] else ""
    s = data["statistics"]["ndr_pps"]
    for r in results:
        mean = r.session.get('mean_s', 0)
    lat = data["latency_at_ndr"][0]["latency_us"]
    return lat.get('p50'), data.get("notes", []), kw.get("x")
'''


def test_the_attributes_only_check_finds_the_old_printer() -> None:
    """Not vacuous: the title's two keys (line 3; not `kw["as_json"]`), the statistics by two
    subscripts (4), the session's mean by `.get` (6), a latency point's two keys (7; not [0]),
    its percentile and the notes by `.get` (8; not `kw.get`)."""
    assert key_reads(OLD_PRINTER, {"kw"}) == [3, 3, 4, 4, 6, 7, 7, 8, 8]


# how cli/latency.py printed latency and b2b before LatencyRun and B2BRun were typed (issue 45)
OLD_LATENCY_PRINTER = '''
def _print(data, kw):
    for pt in data["points"]:
        lat = pt["latency_us"]
        row = [num(lat.get(k), 1) for k in ("min", "max")] if kw["as_json"] else []
    if data.get("profile_at_ndr"):
        st = data["statistics"]
        return st["cv"], row
'''


def test_the_attributes_only_check_finds_the_old_latency_printer() -> None:
    """Not vacuous for cli/latency.py either: the points (line 3), a point's latency (4), a
    percentile by `.get` (5; not `kw["as_json"]`), the profile by `.get` (6), the statistics
    (7) and their CV (8)."""
    assert key_reads(OLD_LATENCY_PRINTER, {"kw"}) == [3, 4, 5, 6, 7, 8]


# how cli/trial.py, cli/profile_view.py and cli/common.trial_line printed before TrialStatistics,
# PerfProfile and TrialResult.core_usage were typed (issue 45)
OLD_TRIAL_PRINTER = '''
def _print(r, stats, profile):
    for metric, s in stats.items():
        row = [s[k] for k in ("median", "min")], s["cv"], r.latency_us.get("p50")
    busy = [u["busy"] for u in r.cpu.values()]
    for cpu, core in profile["cores"].items():
        tops = [f["function"] for f in core["top_functions"][:6]]
    check = profile.get("cpu_check") or {}
    return row, busy, tops, all_switches().get(name), check["differ"]
'''


def test_the_attributes_only_check_finds_the_old_trial_printer() -> None:
    """Not vacuous for cli/trial.py, cli/profile_view.py and cli/common.py: a statistic's CV and
    a percentile by `.get` (line 4; not `s[k]`, a name's key), a core's busy share (5), the
    profile's cores (6), a core's top functions and a function's name (7), the CPU check by
    `.get` (8), the switch registry by `.get` and the check's flag (9)."""
    assert key_reads(OLD_TRIAL_PRINTER, set()) == [4, 4, 5, 6, 7, 7, 8, 9, 9]


def test_the_typed_printers_read_no_key() -> None:
    found = {module: lines for module, allowed in ATTRIBUTES_ONLY.items()
             if (lines := key_reads((SRC / module).read_text(), allowed))}
    assert not found, ("read these through the typed records (SearchRun, SweepRun, LatencyRun, "
                       f"B2BRun, RuleUpdateRun, TrialStatistics, PerfProfile): {found}")
