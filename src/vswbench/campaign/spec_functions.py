"""The campaign keys of the forwarding functions and of rule updates (switches/rules/functions.py,
measure/rule_update.py), kept out of spec.py: `function = [...]` and `table_size = [...]` become
each point's backend options; a rule-update study is refused for switches without a rule-update
mechanism."""

from __future__ import annotations

from typing import Any


def merge_functions(i: int, v: dict[str, Any], raw: dict[str, Any], problems: list[str]) -> None:
    """function = [...] and table_size = [...] into the options tables: one table per (options,
    function, table size); l2 and nat take no table size (and l2 adds no key, so l2 points keep
    the keys they had before functions existed)."""
    if "function" not in raw and "table_size" not in raw:
        return
    from vswbench.switches.rules.functions import TABLE_FUNCTIONS

    functions = v.get("function") or (["l2"] if "function" not in raw else [])
    sizes = v.get("table_size") or [None]
    if "table_size" in raw and not set(functions) & set(TABLE_FUNCTIONS):
        problems.append(f"study {i}, table_size: only function {' or '.join(TABLE_FUNCTIONS)} "
                        "has a table: add such a function or remove table_size")
        return
    tables: list[tuple[tuple[str, str], ...]] = []
    for table in v.get("options") or [()]:
        if {"function", "table_size"} & {k for k, _ in table}:
            problems.append(f"study {i}, options: give function and table_size as keys of the "
                            "study, not as options")
            return
        for fn in functions:
            for size in (sizes if fn in TABLE_FUNCTIONS else [None]):
                extra = (() if fn == "l2" else (("function", fn),)) + (
                    () if size is None else (("table_size", str(size)),))
                tables.append(tuple(table) + extra)
    v["options"] = list(dict.fromkeys(tables))


def rule_update_problems(i: int, switches: list[str]) -> list[str]:
    from vswbench.measure.rule_update import rule_update_problem
    from vswbench.switches.catalog import all_switches

    classes = all_switches()
    return [f"study {i}, kind rule-update: {problem}" for name in switches if name in classes
            for problem in [rule_update_problem(classes[name])] if problem]
