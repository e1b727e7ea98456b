"""The report's verdicts: per frame size and stack (kernel / DPDK), which switches lead, which are
tied, how far the next one is, beside the baselines and the tester's ceiling.

Built on results/setups.py (one row per setup: the median NDR over a campaign's repetitions) and
results/noise.py (how uncertain a single search is); no threshold is invented here:

- Ranked: the switches of one scenario, frame size, variant and stack. Baselines (no switch:
  veth for the kernel stack, memif for DPDK) and calibration devices (shaped) are reference rows,
  never ranked; the tester's calibrated ceiling, as the searches recorded it, is a row of its own.
- Noise range (results/decide.py `noise_range`): the search's final bracket (the NDR goal's
  lower and upper bound), with repetitions widened to the interquartile range of their NDRs,
  then by half its preset's single-search noise band on each side (noise.PRESET_NOISE: two
  single searches of one switch differ within 10 % with fast, 30 % with quick). Never the lowest
  load at which any trial lost frames: one sporadic lossy trial at a low load (a host stall)
  would stretch a range into a tie.
- Tie rule (TIE_RULE, printed on the page exactly as `_rank` applies it): rows sorted by NDR; a
  row is tied with the first (highest) row of the current group unless results/decide.py
  decides the two at 95 % confidence (a rank test over repetitions, noise ranges apart, or
  medians TIE_MAX_RATIO = 1.5x apart); otherwise it starts the next group. The verdict line says
  how each step was decided, or why a tie is one. Rows that reached the tester's ceiling
  (generator-bound) are tied with each other (the tester, not the switch, stopped them).
  The campaign's decide phase (campaign/decide_phase.py) repeats the undecided neighbours.
- Baseline check: a switch whose NDR is above its own stack's baseline (the no-switch path)
  is named in the verdict line: the baseline was limited by a host stall or noise, not by veth.
- Ill-defined NDR: a switch whose searches lost frames (no host stall) at a load far below its
  NDR (results/loss.py LossAround, under 75 % of it) is named in the verdict line with the lowest
  such load: its loss is sporadic, its NDR where the search happened to stop.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace

from vswbench.report.backends import BASELINE
from vswbench.report.backends import DPDK
from vswbench.report.backends import KERNEL
from vswbench.report.backends import BackendInfo
from vswbench.report.backends import info_for
from vswbench.report.data import RankingRow
from vswbench.report.verdict_entry import Entry
from vswbench.report.verdict_entry import mpps
from vswbench.report.verdict_paired import detail_lines
from vswbench.report.verdict_paired import order_line
from vswbench.report.verdict_paired import paired_rank
from vswbench.results.confirm import unconfirmed_note as _unconfirmed_one
from vswbench.results.decide import ALPHA
from vswbench.results.decide import TIE_MAX_RATIO
from vswbench.results.decide import PairDecision
from vswbench.results.decide import decide
from vswbench.results.decide import noise_range as _range
from vswbench.results.noise import PRESET_NOISE
from vswbench.results.noise import overlap
from vswbench.results.noise import search_noise
from vswbench.results.paired import PairedDecision as Paired
from vswbench.results.paired import SwitchRounds
from vswbench.results.paired import stored_rounds
from vswbench.results.paired import variant_key
from vswbench.results.points import StoredResults
from vswbench.results.points import size_order
from vswbench.results.setups import SetupSearches
from vswbench.results.setups import search_setups

TIE_RULE = ("Each switch's noise range is its search's final bracket (the NDR's lower and "
            "upper bound), with repetitions widened to the interquartile range of their NDRs, "
            "then by half its preset's single-search noise band on each side (two single "
            "searches of one switch differ within "
            + ", ".join(f"{v * 100:g} % with {k}" for k, v in PRESET_NOISE.items())
            + "). Switches are taken in "
            "order of NDR (the median over repetitions): a switch is tied with the first "
            "(highest) switch of the current group, and shares its rank, unless the two are "
            f"decided at {(1 - ALPHA) * 100:g} % confidence: by the exact one-sided "
            "Mann-Whitney rank test over their repetitions (p ≤ "
            f"{ALPHA:g}; three repetitions each at least), by noise ranges that do not overlap, "
            f"or by medians {TIE_MAX_RATIO:g}x or more apart; otherwise it starts the next "
            "group (so a switch may overlap a tied switch other than its group's first and "
            "still rank below the group). The verdict line says how each step was decided and "
            "why a tie is one; a campaign with a budget (quick) repeats the searches of "
            "undecided neighbours, interleaved, while the budget lasts. Switches at the tester's "
            "ceiling (generator-bound) are tied "
            "with each other: the tester stopped them, not the switch. Baselines (no switch in "
            "the path) are reference rows, not ranked; a switch above its baseline is named in "
            "the verdict line (the baseline was limited by a host stall or noise). Kernel and "
            "DPDK switches are ranked apart (their testers differ, and so do their ceilings).")

Interval = tuple[float, float]


@dataclass(frozen=True)
class Verdict:
    scenario: str
    size: int | str
    variant: str
    stack: str                           # KERNEL or DPDK
    ranked: tuple[Entry, ...]            # by rank, then NDR
    references: tuple[Entry, ...]        # baselines and calibration devices
    ceiling_pps: float | None            # the tester's calibrated ceiling of these searches
    line: str                            # the verdict in one sentence
    details: tuple[str, ...] = ()        # each step's evidence, a line each (paired rounds)
    pairs: tuple[Paired, ...] = ()       # ... as decisions (results/paired.py)
    rounds: int = 0                      # the paired rounds behind the order (0: searches)

    @property
    def title(self) -> str:
        size = f"{self.size} B" if isinstance(self.size, int) else str(self.size)
        what = f"{self.stack} switches" if self.ranked else f"{self.stack} stack"
        extra = ", ".join(x for x in (self.scenario if self.scenario != "p2p" else "",
                                      self.variant) if x)
        return f"{size}, {what}" + (f" ({extra})" if extra else "")

    @property
    def leaders(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.ranked if e.rank == 1)


def _names(entries: Sequence[Entry]) -> str:
    names = [e.switch for e in entries]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def noise_range(s: SetupSearches) -> Interval | None:
    """The tie rule's range of one setup (results/decide.py noise_range)."""
    h = s.chosen.headline
    bracket = (None if h.lower_bound_pps is None
               else (h.lower_bound_pps, h.upper_bound_pps or h.lower_bound_pps))
    return _range(s.ndr_values, bracket, search_noise(h.preset))


def _setups(data: StoredResults) -> dict[str, SetupSearches]:
    return {s.setup.label: s for s in search_setups(data.records())}


def pair(a: Entry, b: Entry) -> PairDecision:
    return decide(a.contender, b.contender)


def _tied(head: Entry, e: Entry) -> bool:
    if e.row.ndr_pps is None or head.row.ndr_pps is None:
        return False
    if head.row.generator_bound and e.row.generator_bound:
        return True
    return not pair(head, e).decided


def _rank(entries: list[Entry]) -> list[Entry]:
    """Competition ranking by NDR; an entry tied with its group's first entry shares its rank."""
    entries = sorted(entries, key=lambda e: (-(e.row.ndr_pps or -1.0), e.switch))
    groups: list[list[Entry]] = []
    for e in entries:
        if groups and _tied(groups[-1][0], e):
            groups[-1].append(e)
        else:
            groups.append([e])
    out, position = [], 1
    for i, group in enumerate(groups):
        # at least its figure (the tester's limit), below a switch the tester did not stop: it
        # may beat that switch, so it is not ranked below it
        bound = [e for e in group if (i > 0 and e.row.generator_bound)
                 or (e.row.host_bound is not None and e.row.host_bound.bound)]
        group = [e for e in group if e not in bound]
        out += [replace(e, rank=position, tied=len(group) > 1) for e in group]
        out += [replace(e, rank=None, tied=False) for e in bound]
        position += len(group)
    return out


def _line(v: Verdict) -> str:
    size = v.title.split(",")[0]
    where = v.title[len(size) + 2:]
    refs = "; ".join(f"{'baseline' if e.info.role == BASELINE else 'calibration'} "
                     f"{e.switch} {('≥ ' if e.row.generator_bound else '')}{mpps(e.row.ndr_pps)}"
                     f" Mpps" for e in v.references)
    ceiling = f"tester's ceiling {mpps(v.ceiling_pps)} Mpps" if v.ceiling_pps else ""
    tail = "; ".join(x for x in (refs, ceiling) if x)
    tail = f" ({tail})" if tail else ""
    measured = [e for e in v.ranked if e.row.ndr_pps is not None]
    if not measured:
        return f"{size}, {where}: no switch ranked, only reference rows{tail}."
    leaders = [e for e in measured if e.rank == 1]
    values = ", ".join(mpps(e.row.ndr_pps) for e in leaders)
    if all(e.row.generator_bound for e in leaders):
        values = ", ".join(dict.fromkeys(mpps(e.row.ndr_pps) for e in leaders))
        verb = ("reach" if len(leaders) > 1 else "reaches") + (
            f" the tester's ceiling (≥ {values} Mpps, the tester's limit"
            + (", tied)" if len(leaders) > 1 else ")"))
    elif len(leaders) > 1:
        bound = [e for e in leaders if e.row.generator_bound]
        verb = (f"lead ({values} Mpps, within noise of each other: {_why_tied(leaders)}"
                + (f"; {_names(bound)} at the tester's ceiling" if bound else "") + ")")
    else:
        verb = f"leads ({values} Mpps)"
    text = f"{size}, {where}: {_names(leaders)} {verb}"
    top = leaders[0].row.ndr_pps or 0.0
    later = sorted({e.rank for e in measured if e.rank != 1 and e.rank is not None})
    if later and top:
        def lower(e: Entry) -> float:
            return (1 - (e.row.ndr_pps or 0.0) / top) * 100
        nxt = [e for e in measured if e.rank == later[0]]
        how = _how_decided(leaders[-1], nxt[0])
        if len(nxt) == 1:
            text += (f", {nxt[0].switch} {lower(nxt[0]):.0f} % lower "
                     f"({mpps(nxt[0].row.ndr_pps)} Mpps; {how})")
        else:
            text += (f", {_names(nxt)} next ({', '.join(mpps(e.row.ndr_pps) for e in nxt)} Mpps, "
                     f"{lower(nxt[0]):.0f}-{lower(nxt[-1]):.0f} % lower; {how}; among "
                     f"themselves within noise: {_why_tied(nxt)})")
        if len(later) > 1:
            last = [e for e in measured if e.rank == later[-1]][-1]
            text += f", last {last.switch} {lower(last):.0f} % lower ({mpps(last.row.ndr_pps)} Mpps)"
    unmeasured = [e for e in v.ranked if e.row.ndr_pps is None]
    if unmeasured:
        text += f"; no NDR for {_names(unmeasured)}"
    at_least = [e for e in measured if e.rank is None and not _host_bound_entry(e)]
    if at_least:
        text += "; not ranked: " + ", ".join(
            f"{e.switch} ≥ {mpps(e.row.ndr_pps)} Mpps (the tester's limit)" for e in at_least)
    return (text + tail + _above_baseline(v) + _ill_defined(v) + _unconfirmed(v.ranked)
            + _host_bound(v.ranked) + ".")


def _how_decided(upper: Entry, lower: Entry) -> str:
    """'decided: rank test p = 0.014, 4 of 4 repetitions' (or ranges apart, or the gap)."""
    if upper.row.generator_bound and not lower.row.generator_bound:
        return f"below {upper.switch} at the tester's ceiling"
    d = pair(upper, lower)
    return d.how_text() if d.decided else (f"not decided against {upper.switch}: "
                                           f"{d.open_reason(short=True)}")


def _why_tied(group: Sequence[Entry]) -> str:
    """Why the first and the last of a tie are one: ranges overlap, repetitions, p."""
    if all(e.row.generator_bound for e in group):
        return "both at the tester's ceiling"
    d = pair(group[0], group[-1])
    ratio = f"{d.ratio:.2f}x apart, " if d.ratio and d.ratio >= 1.1 else ""
    return ratio + d.open_reason(short=True)


def _above_baseline(v: Verdict) -> str:
    """"; baseline limited by host stall/noise: ..." when a switch's NDR is above its stack's
    baseline (a switch cannot forward more than the path without it)."""
    notes = []
    for b in v.references:
        if b.info.role != BASELINE or b.row.ndr_pps is None:
            continue
        above = [e for e in v.ranked if e.row.ndr_pps is not None
                 and e.row.ndr_pps > b.row.ndr_pps]
        for e in above:
            within = (e.interval is not None and b.interval is not None
                      and overlap(e.interval, b.interval))
            notes.append(f"{e.switch} {mpps(e.row.ndr_pps)} Mpps above its no-switch path "
                         f"{b.switch} {mpps(b.row.ndr_pps)} Mpps"
                         + (" (within noise)" if within else ""))
    return f"; baseline limited by host stall/noise: {'; '.join(notes)}" if notes else ""


def _ill_defined(v: Verdict) -> str:
    """"; NDR ill-defined ..." for the ranked switches whose searches, without a host stall, lost
    frames far below their NDR or passed without loss far above it (results/loss.py LossAround):
    their loss is sporadic, so where the search stopped, and so their rank, is a matter of which
    trials happened to lose."""
    notes = [f"{e.switch} {e.row.loss_around_ndr.evidence()}" for e in v.ranked
             if e.row.loss_around_ndr is not None and e.row.loss_around_ndr.ill_defined]
    if not notes:
        return ""
    return "; NDR ill-defined (sporadic loss, no host stall): " + "; ".join(notes)


def verdicts(rows: Sequence[RankingRow], data: StoredResults,
             infos: dict[str, BackendInfo]) -> list[Verdict]:
    """One verdict per scenario, frame size, variant and stack with a finished search, in
    scenario, numeric size, variant, kernel-before-DPDK order. Knobs every row shares (the
    preset of a suite) are left out of the variant: the page states them once."""
    setups = _setups(data)
    rounds = stored_rounds(data.points)
    common = set.intersection(*(set(r.setup.variant.split()) for r in rows)) if rows else set()
    groups: dict[tuple[str, int | str, str, str], list[Entry]] = defaultdict(list)
    for r in rows:
        info = info_for(infos, r.setup.switch)
        variant = " ".join(t for t in r.setup.variant.split() if t not in common)
        key = (r.setup.scenario, r.setup.size, variant, info.stack)
        s = setups.get(r.setup.label)
        paired = rounds.get((r.setup.scenario, r.setup.size, variant_key(r.setup.variant)), {})
        groups[key].append(Entry(r, info, None if s is None else noise_range(s), ndrs=(
            () if s is None else s.ndr_values), paired=paired.get(r.setup.switch)))
    out = []
    order = {KERNEL: 0, DPDK: 1}
    for key in sorted(groups, key=lambda k: (k[0], size_order(k[1]), k[2], order.get(k[3], 2))):
        entries = groups[key]
        refs = sorted((e for e in entries if not e.info.ranked), key=lambda e: e.switch)
        ceilings = [e.row.generator_ceiling_pps for e in entries
                    if e.row.generator_ceiling_pps is not None]
        ceiling = max(set(ceilings), key=ceilings.count) if ceilings else None
        contenders = [e for e in entries if e.info.ranked]
        with_rounds = {e.switch: e.paired for e in contenders
                       if e.paired is not None and e.paired.median_pps}
        if len(with_rounds) >= 2:
            out.append(_paired_verdict(key, contenders, with_rounds, refs, ceiling))
            continue
        v = Verdict(*key, tuple(_rank(contenders)), tuple(refs), ceiling, "")
        out.append(Verdict(*key, v.ranked, v.references, ceiling, _line(v)))
    return out


def _paired_verdict(key: tuple[str, int | str, str, str], contenders: list[Entry],
                    with_rounds: dict[str, SwitchRounds], refs: list[Entry],
                    ceiling: float | None) -> Verdict:
    """A group the campaign paired in rounds: ranked by them (report/verdict_paired.py)."""
    ranked, decisions = paired_rank(contenders, with_rounds)
    count = max(len({s.round for s in sr.samples}) for sr in with_rounds.values())
    v = Verdict(*key, tuple(ranked), tuple(refs), ceiling, "", rounds=count)
    size = v.title.split(",")[0]
    head = f"{size}, {v.title[len(size) + 2:]}, {count} rounds"
    refs_text = "; ".join(
        f"{'baseline' if e.info.role == BASELINE else 'calibration'} {e.switch} "
        + (("≥ " if e.paired.at_least else "") + mpps(e.paired.median_pps)
           if e.paired is not None and e.paired.median_pps else "no rounds")
        for e in refs)
    tail = f"; {refs_text}" if refs_text else ""
    line = order_line(head, ranked, decisions, tail + _unconfirmed(ranked) + _host_bound(ranked))
    return replace(v, line=line, details=detail_lines(decisions), pairs=tuple(decisions))


def _unconfirmed(ranked: Sequence[Entry]) -> str:
    """"; not confirmed: bridge (its 90 % trial lost 0.97 %, no stall explains it)" for the
    ranked switches whose confirmation trial lost frames that no measured stall explains."""
    notes = [f"{e.switch} ({note})" for e in ranked
             if (note := _unconfirmed_one(e.row.latency)) is not None]
    return "; throughput not confirmed: " + ", ".join(notes) if notes else ""


def _host_bound_entry(e: Entry) -> bool:
    return e.row.host_bound is not None and e.row.host_bound.bound


def _host_bound(ranked: Sequence[Entry]) -> str:
    """"; conditional throughput host-bound: testpmd 0.382 Mpps (its tester skipped 38 % ...)"
    for the switches whose search measured the host more than the switch (results/hostbound.py);
    without paired rounds they are not ranked."""
    notes = [f"{e.switch} {mpps(e.row.ndr_pps)} Mpps (tester skipped "
             f"{e.row.host_bound.skipped_share * 100:.0f} % of its departures, path stopped "
             f"{e.row.host_bound.stalled_share * 100:.0f} % of the time)"
             for e in ranked if _host_bound_entry(e) and e.row.host_bound is not None]
    return "; conditional throughput host-bound, not ranked by it: " + "; ".join(notes) \
        if notes else ""
