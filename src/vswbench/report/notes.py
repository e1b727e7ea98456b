"""The report's warnings and the runs' system fingerprints.

Warnings a reader must see before trusting a number: results the tester, not the switch, limited
(generator-bound), repetitions that disagree (coefficient of variation above 5 %), host settings
that make numbers vary (sysinfo.missing_tuning on each run's fingerprint), and points that failed
or were skipped, with their error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from vswbench.host.sysinfo import missing_tuning
from vswbench.report.data import ranking
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults

HIGH_CV = 0.05


@dataclass(frozen=True)
class ReportWarning:
    category: str                # "generator-bound", "high CV", "missing tuning", "failed", "skipped"
    subject: str                 # the point's label or the runs concerned
    message: str


@dataclass(frozen=True)
class RunInfo:
    """Runs that share one fingerprint and one spec text (a resumed campaign has several)."""
    run_ids: tuple[str, ...]
    campaign: str
    started: str
    finished: str | None
    statuses: tuple[str, ...]
    version: str
    spec_text: str
    fingerprint: RunFingerprint | None     # typed (results/fingerprint.py); None: not recorded


def run_infos(data: StoredResults) -> list[RunInfo]:
    groups: dict[str, list[Any]] = {}
    for run in data.runs:
        key = json.dumps([run.spec_name, run.spec_text, run.fingerprint], sort_keys=True,
                         default=str)
        groups.setdefault(key, []).append(run)
    out = []
    for runs in groups.values():
        first, last = runs[0], runs[-1]
        out.append(RunInfo(tuple(r.run_id for r in runs), first.spec_name, first.started,
                           last.finished, tuple(r.status for r in runs), last.version,
                           first.spec_text, first.system))
    return out


def warnings(data: StoredResults) -> list[ReportWarning]:
    out = [w for rec in data.records() for w in _point_warnings(rec)]
    out += _repetition_cv(data)
    for info in run_infos(data):
        if info.fingerprint is None:
            continue
        runs = ", ".join(info.run_ids)
        out += [ReportWarning("missing tuning", f"run {runs}", message)
                for message in missing_tuning(info.fingerprint.host)]
    out += [ReportWarning(p.status, p.label, p.error or "(no error recorded)")
            for p in data.points if p.status in ("failed", "skipped")]
    return out


def _point_warnings(p: PointRecord) -> list[ReportWarning]:
    """A finished point's own warnings: generator-bound, and a high CV over its --repeat."""
    out: list[ReportWarning] = []
    m = p.measured
    label = p.setup.label + f" ({p.kind})"
    if p.kind == "search" and m.generator_bound:
        ceiling = m.generator_ceiling_pps
        out.append(ReportWarning(
            "generator-bound", label,
            "the NDR reached the tester's calibrated ceiling"
            + (f" ({ceiling:,.0f} pps)" if ceiling else "")
            + ": it is the tester's limit, the switch forwards at least this much"))
    for metric, cv in m.cvs:
        if cv is not None and cv > HIGH_CV:
            what = f"{metric} " if metric else ""
            out.append(ReportWarning(
                "high CV", label,
                f"{what}varies by {cv * 100:.1f} % (coefficient of variation) over its "
                f"repetitions, above {HIGH_CV * 100:.0f} %: interference, frequency "
                "scaling or VM steal time; quiet the host or run more repetitions"))
    return out


def _repetition_cv(data: StoredResults) -> list[ReportWarning]:
    """High CV of the NDR over repetitions stored as separate points (campaign repetitions)."""
    return [ReportWarning("high CV", row.setup.label + " (search)",
                          f"NDR varies by {row.ndr_cv * 100:.1f} % (coefficient of variation) "
                          f"over {row.repetitions} repetitions, above {HIGH_CV * 100:.0f} %")
            for row in ranking(data) if row.repetitions > 1 and row.ndr_cv is not None
            and row.ndr_cv > HIGH_CV]
