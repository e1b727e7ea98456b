#!/usr/bin/env python3
"""Fail on a circle between the engine's source files.

Two graphs, each file -> the files it depends on:
- includes: a file of SRC (.c or .h, any depth) -> each header it includes with #include "...",
  found beside the including file or under SRC (the build's -Isrc); system headers are left out;
- symbols: an object file -> the object files that define the global symbols it uses (nm).

A circle in either is reported with its files (and, for symbols, which symbol makes each step) and
the exit status is 1. Usage: check_deps.py --src SRC [OBJECT ...]. `make check` runs it.
"""
from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
DEFINED = set("TDBRVWGSCiu")  # nm: text, data, bss, read-only, weak, small, common, ifunc, unique


def include_graph(src: Path) -> dict[str, dict[str, str]]:
    """file -> {included file: the #include line's name}, paths relative to src."""
    graph: dict[str, dict[str, str]] = {}
    files = sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h") and p.is_file())
    for f in files:
        edges: dict[str, str] = {}
        for name in INCLUDE.findall(f.read_text(errors="replace")):
            for base in (f.parent, src):
                target = (base / name).resolve()
                if target.is_file():
                    with contextlib.suppress(ValueError):  # a header outside src: not ours
                        edges[str(target.relative_to(src.resolve()))] = name
                    break
        graph[str(f.relative_to(src))] = edges
    return graph


def nm_symbols(obj: Path, nm: str = "nm") -> tuple[set[str], set[str]]:
    """(defined global symbols, undefined symbols) of an object file."""
    out = subprocess.run([nm, "-P", str(obj)], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in DEFINED:
            defined.add(name)
    return defined, undefined


def symbol_graph(objects: list[Path], nm: str = "nm") -> dict[str, dict[str, str]]:
    """object -> {object defining a symbol it uses: one such symbol}."""
    tables = {str(o): nm_symbols(o, nm) for o in objects}
    owner: dict[str, str] = {}
    for o, (defined, _) in tables.items():
        for sym in defined:
            owner.setdefault(sym, o)
    graph: dict[str, dict[str, str]] = {}
    for o, (_, undefined) in tables.items():
        edges: dict[str, str] = {}
        for sym in sorted(undefined):
            target = owner.get(sym)
            if target and target != o:
                edges.setdefault(target, sym)
        graph[o] = edges
    return graph


def circles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (or a node on itself), each as a
    closed path through it (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, {})))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = _pop_component(stack, on_stack, node)
                if len(comp) > 1 or node in graph.get(node, {}):
                    comps.append(_path(graph, set(comp)))
    return comps


def _pop_component(stack: list[str], on_stack: set[str], node: str) -> list[str]:
    """The stack popped down to `node`, its root: the nodes of one strongly connected component."""
    comp = []
    while True:
        n = stack.pop()
        on_stack.discard(n)
        comp.append(n)
        if n == node:
            return comp


def _path(graph: dict[str, dict[str, str]], comp: set[str]) -> list[str]:
    """A closed path inside a strongly connected component: start -> ... -> start."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:  # breadth first, back to start
        nxt = []
        for n in frontier:
            for m in sorted(graph.get(n, {})):
                if m not in comp:
                    continue
                if m == start:
                    path = [start]
                    while n != start:
                        path.append(n)
                        n = prev[n]
                    path.append(start)
                    return path[::-1]
                if m not in prev:
                    prev[m] = n
                    nxt.append(m)
        frontier = nxt
    return [start, start]


def describe(graph: dict[str, dict[str, str]], path: list[str], how: str) -> str:
    steps = [f"{a} -> {b} ({how} {graph[a][b]})" for a, b in zip(path, path[1:])]
    return "\n    ".join(steps)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, required=True, help="the source folder (engine/src)")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("objects", nargs="*", type=Path, help="object files of the build")
    args = ap.parse_args(argv)
    found = []
    inc = include_graph(args.src)
    for path in circles(inc):
        found.append("include circle:\n    " + describe(inc, path, "#include"))
    if args.objects:
        sym = symbol_graph(args.objects, args.nm)
        for path in circles(sym):
            found.append("symbol circle:\n    " + describe(sym, path, "uses"))
    for f in found:
        print(f"check_deps: {f}", file=sys.stderr)
    if found:
        print(f"check_deps: {len(found)} circle(s) in {args.src}: a file must not depend, through "
              "others, on itself; move what both sides need into a third file", file=sys.stderr)
        return 1
    print(f"check_deps: no circle ({len(inc)} files' includes, {len(args.objects)} objects' symbols)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
