"""A verdict group ranked by its paired rounds (results/paired.py), where the campaign took them.

The order and every step of it come from the rounds, never from figures measured minutes apart:
switches in order of their median received rate at the tester's ceiling (MRR), each adjacent
pair decided by the signed-rank test over the per-round ratios with its bootstrap interval, or a
tie with the reason on its line; a switch whose samples lost nothing (the tester's limit) is "at
least" its figure and not ranked below a switch it may beat. The verdict's first line names
every switch of the group in that order; the detail lines give each step's evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from vswbench.report.verdict_entry import Entry
from vswbench.report.verdict_entry import mpps
from vswbench.results.paired import PairedDecision
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import rank


def paired_rank(entries: Sequence[Entry], rounds: dict[str, SwitchRounds]
                ) -> tuple[list[Entry], list[PairedDecision]]:
    """The ranked entries in the rounds' order, each with its rank, tie and rounds; a switch
    at least its figure and undecided against the one above is unranked (rank None); entries
    without samples follow, unranked."""
    by_switch = {e.switch: e for e in entries}
    ranked, decisions = rank(rounds[s] for s in by_switch if s in rounds)
    out = [replace(by_switch[r.rounds.switch], rank=r.rank, tied=r.tied, paired=r.rounds)
           for r in ranked]
    seen = {r.rounds.switch for r in ranked}
    out += [replace(e, rank=None, tied=False) for s, e in by_switch.items() if s not in seen]
    return out, decisions


def order_line(head: str, ranked: Sequence[Entry], decisions: Sequence[PairedDecision],
               tail: str) -> str:
    """'64 B, kernel switches, 12 rounds: xdp ≥ 2.41 > tc-mirred 0.95 > router 0.552 = bridge
    0.521 Mpps; not ranked: macvlan ≥ 0.300 (lost nothing: the tester's limit).'"""
    decided = {frozenset((d.upper, d.lower)): d.decided for d in decisions}
    parts: list[str] = []
    unranked: list[str] = []
    above: str | None = None
    for e in ranked:
        sr = e.paired
        if sr is None or sr.median_pps is None:
            unranked.append(f"{e.switch} (no rounds)")
            continue
        fig = ("≥ " if sr.at_least else "") + mpps(sr.median_pps)
        if e.rank is None:
            unranked.append(f"{e.switch} {fig} (lost nothing: the tester's limit)")
            continue
        if above is not None:
            parts.append(">" if decided.get(frozenset((above, e.switch))) else "=")
        parts.append(f"{e.switch} {fig}")
        above = e.switch
    text = f"{head}: " + " ".join(parts) + " Mpps"
    if unranked:
        text += "; not ranked: " + ", ".join(unranked)
    return text + tail + "."


def detail_lines(decisions: Sequence[PairedDecision]) -> tuple[str, ...]:
    """One line per adjacent pair: 'router carries more than bridge: 6 of 6 rounds, 1.12x (95 %
    CI 1.03-1.25)', or the tie with its reason."""
    return tuple(d.describe() for d in decisions)
