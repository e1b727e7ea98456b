"""The `[paper]`, `[[reference]]` and `[[claim]]` tables of a campaign spec: which figure or table
of which paper a spec reproduces, the values the authors published (each with its source), and
the paper's qualitative laws as machine-checkable claims. report/paper_claims.py evaluates the
claims on the measured points; the verdict is never written in the spec.

    [paper]
    figure = "emmerich-table1"        # the id; a spec in specs/papers/ is named FIGURE.toml
    paper = "emmerich"                # emmerich | raumer | fang | ara | sattar (PAPERS)
    source = "section 5.1, Table 1"   # where the figure or table is in the paper
    caption = "Single Core Data Plane Performance Comparison"
    varies = "the forwarding technique"
    analogue = "namespaces joined by veth, p2p through each switch, quick NDR search"
    differences = ["namespaces instead of VMs", "veth instead of NICs", "2 vCPUs"]

    [[reference]]                     # a value the paper gives, with its source
    id = "ovs-vv"
    quantity = "Open vSwitch, vNIC to vNIC"
    value = 0.27
    unit = "Mpps"
    source = "section 5.1, Table 1"
    ours = "tput[switch=ovs]"         # optional: the measured term drawn beside it
    relative_to = "bridge-vv"         # optional: another reference's id; both theirs and ours
                                      # are divided by that reference's value and term
    [[claim]]
    law = "Open vSwitch forwards more than the Linux bridge (Guideline 1)"
    source = "section 5.1, Guideline 1"
    check = "tput[switch=ovs] > tput[switch=bridge]"
    # or: check = "p50[switch=ovs] rises with rate" / "falls with size"; margin = 0.05
    # or: untestable = "needs physical NICs with interrupt moderation (ixgbe)"

The check grammar (CHECK_RE, TERM_RE): `TERM OP TERM` with OP one of > < >= <=, a TERM being a
number or `[FACTOR *] METRIC[key=value,...]`, or `METRIC[...] rises|falls with KEY`. Metrics and
keys are listed in METRICS and SELECT_KEYS; a spec that names others is refused (exit 2).

Any spec may carry these tables: a spec of another issue becomes a paper spec by adding a
`[paper]` table (and its references and claims) without touching its studies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vswbench.campaign.values import did_you_mean
from vswbench.campaign.values import short

PAPERS = {
    "emmerich": ("000_c0e4d70d77362c00.txt", "Emmerich et al., \"Throughput and Latency of "
                 "Virtual Switching with Open vSwitch: A Quantitative Analysis\""),
    "raumer": ("001_53a62a9097a5399d.txt", "Raumer et al., \"Performance Implications for "
               "Intra-node Placement of Network Function Chains\""),
    "fang": ("002_417e2664e5c1693a.txt", "Fang et al., \"Evaluating Software Switches: Hard or "
             "Hopeless?\""),
    "ara": ("003_df22f08d22c71835.txt", "Ara et al., \"A Framework for Comparative Evaluation of "
            "High-Performance Virtualized Networking Mechanisms\""),
    "sattar": ("004_7e5c6d6ca162b0c2.txt", "Sattar and Matrawy, \"An Empirical Model of Packet "
               "Processing Delay of the Open vSwitch\""),
}
# tput: a search's NDR, a trial's achieved rate or a sweep's peak (results.points.throughput_of);
# gbps: tput on the wire; peak / lossless / overload: a sweep's peak achieved rate, its highest
# lossless offered load, its achieved rate at the highest offered load (of a latency point's
# loads alike); p50 .. max: latency in microseconds (a trial's, a latency point's at fraction=F
# percent, a sweep's or a latency point's at load=lowest|lossless|overload); delay_*: that
# percentile minus the same percentile of the baseline switch (veth unless baseline=NAME)
# measured with the same other keys (Sattar and Matrawy's switch delay);
# tail: p99 / p50; cpu: the switch's busy cycles per packet (results.points cycles).
METRICS = ("tput", "gbps", "peak", "lossless", "overload", "p50", "p90", "p99", "p999", "mean",
           "max", "min", "tail", "delay_p50", "delay_p90", "delay_p99", "delay_max", "cycles")
SELECT_KEYS = ("switch", "scenario", "size", "rate", "flows", "burst", "placement", "fraction",
               "load", "baseline", "clones", "nf", "kind")
TREND_KEYS = ("rate", "size", "flows", "burst", "fraction", "clones", "chain", "pairs", "load")
OPS = (">=", "<=", ">", "<")
TERM_RE = re.compile(r"\s*(?:(?P<factor>[0-9.]+)\s*\*\s*)?(?P<metric>[a-z_0-9]+)"
                     r"\[(?P<sel>[^\]]*)\]\s*|\s*(?P<number>[0-9.]+)\s*")
TREND_RE = re.compile(r"\s*(?P<term>[a-z_0-9]+\[[^\]]*\])\s+(?P<dir>rises|falls)\s+with\s+"
                      r"(?P<key>[a-z]+)\s*")
LOADS = ("lowest", "lossless", "overload")


@dataclass(frozen=True)
class Term:
    """A measured quantity: factor * METRIC over the points that match `select`; or a number."""
    metric: str | None
    select: tuple[tuple[str, str], ...] = ()
    factor: float = 1.0
    number: float | None = None

    def text(self) -> str:
        if self.metric is None:
            return f"{self.number:g}"
        sel = ",".join(f"{k}={v}" for k, v in self.select)
        return (f"{self.factor:g} * " if self.factor != 1.0 else "") + f"{self.metric}[{sel}]"


@dataclass(frozen=True)
class Check:
    """`left OP right`, or a trend: `left rises|falls with key` (right, op None)."""
    left: Term
    op: str | None = None
    right: Term | None = None
    trend: str | None = None            # "rises" | "falls"
    key: str | None = None


@dataclass(frozen=True)
class Reference:
    id: str
    quantity: str
    value: float
    unit: str
    source: str
    ours: Term | None = None
    relative_to: str | None = None


@dataclass(frozen=True)
class Claim:
    law: str
    source: str
    check: Check | None                  # None: untestable here
    check_text: str = ""
    untestable: str | None = None
    margin: float = 0.0                  # relative: a > b needs a > b * (1 + margin)


@dataclass(frozen=True)
class PaperInfo:
    figure: str
    paper: str
    source: str
    caption: str
    varies: str
    analogue: str
    differences: tuple[str, ...]
    references: tuple[Reference, ...] = ()
    claims: tuple[Claim, ...] = ()

    @property
    def paper_title(self) -> str:
        return PAPERS[self.paper][1]

    @property
    def paper_file(self) -> str:
        return PAPERS[self.paper][0]


PAPER_KEYS = ("figure", "paper", "source", "caption", "varies", "analogue", "differences")
REFERENCE_KEYS = ("id", "quantity", "value", "unit", "source", "ours", "relative_to")
CLAIM_KEYS = ("law", "source", "check", "untestable", "margin")


def parse_term(text: str) -> Term:
    m = TERM_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"{short(text.strip())} is not a term: write METRIC[key=value,...] "
                         "(with an optional FACTOR * before it) or a number")
    if m.group("number") is not None:
        return Term(None, number=_float(m.group("number")))
    metric = m.group("metric")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {short(metric)}{did_you_mean(metric, METRICS)}: the "
                         f"metrics are {', '.join(METRICS)}")
    select = []
    for part in filter(None, (x.strip() for x in m.group("sel").split(","))):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not value:
            raise ValueError(f"{short(part)} in {metric}[...] is not key=value")
        if key not in SELECT_KEYS:
            raise ValueError(f"unknown key {short(key)}{did_you_mean(key, SELECT_KEYS)} in "
                             f"{metric}[...]: the keys are {', '.join(SELECT_KEYS)}")
        if any(c.isnumeric() and not c.isascii() for c in value):
            raise ValueError(f"{short(value)} in {metric}[...]: write numbers with the digits 0-9")
        if key == "load" and value not in LOADS:
            raise ValueError(f"load={value}: use one of {', '.join(LOADS)}")
        select.append((key, value))
    factor = _float(m.group("factor")) if m.group("factor") else 1.0
    return Term(metric, tuple(select), factor)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{short(text)} is not a number") from None


def parse_check(text: str) -> Check:
    trend = TREND_RE.fullmatch(text)
    if trend is not None:
        key = trend.group("key")
        if key not in TREND_KEYS:
            raise ValueError(f"'{trend.group('dir')} with ...': {short(key)} is not a dimension a "
                             f"trend can follow ({', '.join(TREND_KEYS)})")
        return Check(parse_term(trend.group("term")), trend=trend.group("dir"), key=key)
    for op in OPS:
        left, found, right = text.partition(f" {op} ")
        if found:
            return Check(parse_term(left), op, parse_term(right))
    raise ValueError(f"{short(text)} is not a check: write 'TERM OP TERM' (OP one of "
                     f"{', '.join(OPS)}, spaces around it) or 'METRIC[...] rises|falls with KEY'")


def _text(table: dict[str, Any], key: str, where: str, problems: list[str],
          required: bool = True) -> str:
    value = table.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}, {key}: missing or empty: give a text")
        return ""
    return value.strip()


def _unknown(table: dict[str, Any], keys: tuple[str, ...], where: str,
             problems: list[str]) -> None:
    for key in table:
        if key not in keys:
            problems.append(f"{where}, unknown key {short(key)}{did_you_mean(key, keys)}: the keys "
                            f"are {', '.join(keys)}")


def parse_paper(data: dict[str, Any], problems: list[str]) -> PaperInfo | None:
    """The [paper], [[reference]] and [[claim]] tables of a parsed spec (None: no [paper]);
    every mistake is appended to `problems`."""
    head = data.get("paper")
    if head is None:
        for key in ("reference", "claim"):
            if key in data:
                problems.append(f"[[{key}]] needs a [paper] table naming the figure")
        return None
    if not isinstance(head, dict):
        problems.append("[paper] must be a table")
        return None
    before = len(problems)
    _unknown(head, PAPER_KEYS, "[paper]", problems)
    figure = _text(head, "figure", "[paper]", problems)
    if figure and not re.fullmatch(r"[a-z0-9][a-z0-9.-]{0,79}", figure):
        problems.append(f"[paper], figure: {short(figure)}: use lower-case letters, digits, '-' "
                        "(e.g. emmerich-table1)")
    paper = _text(head, "paper", "[paper]", problems)
    if paper and paper not in PAPERS:
        problems.append(f"[paper], paper: {short(paper)} is not one of {', '.join(PAPERS)}"
                        f"{did_you_mean(paper, tuple(PAPERS))}")
    texts = {k: _text(head, k, "[paper]", problems)
             for k in ("source", "caption", "varies", "analogue")}
    diffs = head.get("differences", [])
    if not isinstance(diffs, list) or not diffs or not all(
            isinstance(d, str) and d.strip() for d in diffs):
        problems.append("[paper], differences: give a list of texts (what differs here)")
        diffs = []
    refs = _references(data.get("reference", []), problems)
    claims = _claims(data.get("claim", []), problems)
    if len(problems) > before:
        return None
    return PaperInfo(figure, paper, texts["source"], texts["caption"], texts["varies"],
                     texts["analogue"], tuple(d.strip() for d in diffs), refs, claims)


def _references(raw: Any, problems: list[str]) -> tuple[Reference, ...]:
    if not isinstance(raw, list):
        problems.append("reference: write [[reference]] tables")
        return ()
    out: list[Reference] = []
    for i, r in enumerate(raw, 1):
        where = f"reference {i}"
        if not isinstance(r, dict):
            problems.append(f"{where}: must be a table")
            continue
        _unknown(r, REFERENCE_KEYS, where, problems)
        out.append(_reference(r, where, problems))
    _check_reference_ids(out, problems)
    return tuple(out)


def _reference(r: dict[str, Any], where: str, problems: list[str]) -> Reference:
    rid = _text(r, "id", where, problems)
    value = r.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{where}, value: {short(value)} is not a number (the paper's value)")
        value = 0.0
    ours = None
    if r.get("ours") is not None:
        try:
            ours = parse_term(str(r["ours"]))
        except ValueError as e:
            problems.append(f"{where}, ours: {e}")
    return Reference(rid, _text(r, "quantity", where, problems), float(value),
                     _text(r, "unit", where, problems),
                     _text(r, "source", where, problems), ours,
                     _text(r, "relative_to", where, problems, required=False) or None)


def _check_reference_ids(out: list[Reference], problems: list[str]) -> None:
    """An id used twice, and a relative_to that names no reference."""
    ids = [r.id for r in out]
    for r in out:
        if ids.count(r.id) > 1 and r.id:
            problems.append(f"reference {short(r.id)}: id used twice")
            break
    for r in out:
        if r.relative_to and r.relative_to not in ids:
            problems.append(f"reference {short(r.id)}, relative_to: no reference has id "
                            f"{short(r.relative_to)}")


def _claims(raw: Any, problems: list[str]) -> tuple[Claim, ...]:
    if not isinstance(raw, list):
        problems.append("claim: write [[claim]] tables")
        return ()
    out = []
    for i, c in enumerate(raw, 1):
        where = f"claim {i}"
        if not isinstance(c, dict):
            problems.append(f"{where}: must be a table")
            continue
        _unknown(c, CLAIM_KEYS, where, problems)
        has_check, has_reason = "check" in c, "untestable" in c
        if has_check == has_reason:
            problems.append(f"{where}: give either check = \"...\" (measured here) or "
                            "untestable = \"why this machine cannot test it\", not both")
        check = None
        if has_check:
            try:
                check = parse_check(str(c["check"]))
            except ValueError as e:
                problems.append(f"{where}, check: {e}")
        margin = c.get("margin", 0.0)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin < 0:
            problems.append(f"{where}, margin: a relative margin >= 0 (e.g. 0.05)")
            margin = 0.0
        out.append(Claim(_text(c, "law", where, problems), _text(c, "source", where, problems),
                         check, str(c.get("check", "")),
                         _text(c, "untestable", where, problems) if has_reason else None,
                         float(margin)))
    return tuple(out)
