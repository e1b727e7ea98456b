"""The public Python API: results as typed records, a search or a trial from Python.

    from pathlib import Path
    from vswbench.api import load_results

    results = load_results(max(Path("results").glob("quick-*")))   # the newest quick run
    for line in results.verdicts:                 # the report's verdict lines
        print(line)
    bridge = results.get("bridge", size=64)       # a SwitchResult: NDR, bounds, latency, loss
    assert results.ndr("bridge", size=64) >= 0.1 * results.ndr("veth", size=64)
    frame = results.dataframe()                   # one headline row per point (pandas)
    for s in results.sockets:                     # stream, rr, crr points (results/sockets.py)
        print(s.switch, s.kind, s.headline(), s.latency.p99, s.cpu_s_per_gb)

Every number is results/points.py's (the one definition of each headline, as the report, the
exports and `vswbench compare` show it); rows per switch are the report's (report/verdict.py:
the median NDR over repetitions, ranks and ties by the searches' noise ranges, the stack and
whether the backend is a baseline). `search`, `trial` and `sockets` measure (root, as the command line):
they run a one-point campaign into a results directory and return what it stored.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vswbench.errors import UsageError
from vswbench.measure.socket_result import SOCKET_KINDS
from vswbench.measure.socket_result import SocketResult
from vswbench.report.model import build_model
from vswbench.report.verdict_entry import Entry
from vswbench.results.confirm import confirmation
from vswbench.results.export import headline
from vswbench.results.export import point_record
from vswbench.results.loss import LoadLoss
from vswbench.results.loss import LossAround
from vswbench.results.paired import PairedDecision
from vswbench.results.points import Latency
from vswbench.results.points import PointRecord
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.sockets import socket_of

__all__ = ["Results", "SocketResult", "SwitchResult", "load_results", "run_campaign", "search",
           "sockets", "trial"]


@dataclass(frozen=True)
class SwitchResult:
    """One switch's searches in one setup (scenario, frame size, variant): the numbers to
    assert on. Rates in packets/s (frames with FCS), latency in µs at 90 % of the NDR."""
    switch: str
    scenario: str
    size: int | str
    variant: str
    stack: str                           # "kernel" or "DPDK"
    role: str                            # "switch", "baseline" (veth, memif) or "calibration"
    description: str
    # RFC 2544's NDR, every trial counted (None: every trial of the search lost frames)
    ndr_pps: float | None
    pdr_pps: float | None
    # the stated range of the headline (report/verdict_entry.py stated_range): its rounds'
    # span, or that of two or more repetitions; None from a single search
    noise_range_pps: tuple[float, float] | None
    generator_bound: bool                # at the tester's ceiling: a lower bound only
    generator_ceiling_pps: float | None
    latency_p50_us: float | None
    latency_p99_us: float | None
    cycles_per_packet: float | None
    repetitions: int
    rank: int | None                     # within its size and stack; None for a baseline
    tied: bool
    forwarding_modes: tuple[str, ...]
    versions: tuple[str, ...]
    latency: Latency | None = None       # the whole figure: every percentile, jitter, IPDV
    latency_lost_frames: int | None = None     # what its latency trial lost
    latency_loss_ratio: float | None = None
    latency_counters_agree: bool | None = None
    latency_unreliable: tuple[str, ...] = ()   # percentiles above 1 - loss ratio: unreliable
    ndr_load_loss: LoadLoss | None = None      # what the trials at the NDR's load lost
    loss_around_ndr: LossAround | None = None    # ... and below it (.ill_defined: sporadic loss)
    # MLRsearch's conditional throughput of the NDR goal (loss 0, exceed ratio 50 %, the
    # preset's trials; host-stall trials excised), the median over repetitions (RFC 9971)
    conditional_throughput_pps: float | None = None
    # what the group is ranked by: "MRR" (the median of its paired rounds) or "conditional
    # throughput" (no rounds), its value and whether it is a lower bound (the tester's limit)
    headline_name: str = "conditional throughput"
    headline_pps: float | None = None
    at_least: bool = False
    rounds: int = 0
    # the confirmation trial (latency at 90 %): "confirmed", "not confirmed", "host stall" (its
    # loss a measured stall's) or "none" (results/confirm.py)
    confirmation: str = "none"


def _switch_result(e: Entry, scenario: str, size: int | str, variant: str,
                   stack: str) -> SwitchResult:
    r, lat = e.row, e.row.latency
    paired = e.paired is not None and e.paired.median_pps is not None
    return SwitchResult(e.switch, scenario, size, variant, stack, e.info.role,
                        e.info.description, r.classic_ndr_pps, r.pdr_pps, e.stated_range,
                        r.generator_bound, r.generator_ceiling_pps, r.latency_p50_us,
                        r.latency_p99_us, r.cycles_per_packet, r.repetitions, e.rank, e.tied,
                        e.info.forwarding_modes, e.info.versions, lat,
                        None if lat is None else lat.lost_frames,
                        None if lat is None else lat.loss_ratio,
                        None if lat is None else lat.counters_agree,
                        () if lat is None else lat.unreliable, r.ndr_load_loss,
                        r.loss_around_ndr, r.ndr_pps,
                        "MRR" if paired else "conditional throughput", e.headline_pps,
                        e.at_least, 0 if e.paired is None else len(e.paired.samples),
                        confirmation(lat))


class Results:
    """A results directory (or store file) read once: points, per-switch rows, verdicts."""

    def __init__(self, data: StoredResults) -> None:
        self.data = data
        model = build_model(data)
        self.path: Path = data.store_path
        self.points: tuple[PointRecord, ...] = tuple(data.records())
        self.verdicts: tuple[str, ...] = tuple(v.line for v in model.verdicts if v.ranked)
        # every adjacent pair a group's paired rounds decided or left open, with its group:
        # (scenario, size, variant, stack, results.paired.PairedDecision)
        self.pairs: tuple[tuple[str, int | str, str, str, PairedDecision], ...] = tuple(
            (v.scenario, v.size, v.variant, v.stack, d) for v in model.verdicts for d in v.pairs)
        self.switches: tuple[SwitchResult, ...] = tuple(
            _switch_result(e, v.scenario, v.size, v.variant, v.stack)
            for v in model.verdicts for e in (*v.ranked, *v.references))
        self.sockets: tuple[SocketResult, ...] = tuple(
            s for k in SOCKET_KINDS for p in data.done(k) if (s := socket_of(p)) is not None)

    def find(self, switch: str, *, size: int | str | None = None, scenario: str | None = None,
             variant: str | None = None) -> list[SwitchResult]:
        """Every row of `switch` matching the given scenario, frame size and variant."""
        return [s for s in self.switches if s.switch == switch
                and (size is None or s.size == size)
                and (scenario is None or s.scenario == scenario)
                and (variant is None or s.variant == variant)]

    def get(self, switch: str, *, size: int | str | None = None, scenario: str | None = None,
            variant: str | None = None) -> SwitchResult:
        """The one row of `switch` that matches; UsageError naming the choices otherwise."""
        found = self.find(switch, size=size, scenario=scenario, variant=variant)
        if len(found) == 1:
            return found[0]
        rows = self.find(switch)
        choices = "; ".join(f"size={s.size!r} scenario={s.scenario!r} variant={s.variant!r}"
                            for s in rows) or "none: no finished search of it here"
        what = "no" if not found else f"{len(found)}"
        raise UsageError(f"{what} result of switch {switch!r} in {self.path} matches; give "
                         f"size=, scenario= or variant= to pick one of: {choices}")

    def ndr(self, switch: str, **where: Any) -> float:
        """RFC 2544's NDR (packets/s) of `switch` (see get): every trial at and below it lost
        no frame; UsageError when it has none."""
        row = self.get(switch, **where)
        if row.ndr_pps is None:
            raise UsageError(f"switch {switch!r} has no NDR in {self.path}: every trial of its "
                             "search lost frames; conditional_throughput() is MLRsearch's "
                             "figure with an exceed ratio")
        return row.ndr_pps

    def conditional_throughput(self, switch: str, **where: Any) -> float:
        """MLRsearch's conditional throughput of the NDR goal (packets/s) of `switch`."""
        row = self.get(switch, **where)
        if row.conditional_throughput_pps is None:
            raise UsageError(f"switch {switch!r} has no finished search in {self.path}")
        return row.conditional_throughput_pps

    def records(self) -> list[dict[str, Any]]:
        """Every point as the JSON-lines record (schemas/point-record.schema.json)."""
        return [point_record(p) for p in self.data.points]

    def dataframe(self) -> Any:
        """One headline row per point (the CSV export's columns) as a pandas DataFrame, or a
        polars one when only polars is installed."""
        rows = [headline(p) for p in self.data.points]
        try:
            import pandas
            return pandas.DataFrame(rows)
        except ImportError:
            pass
        try:
            import polars
            return polars.DataFrame(rows, infer_schema_length=None)
        except ImportError:
            raise UsageError("a DataFrame needs pandas or polars: pip install "
                             "'vswbench[dataframe]' (or pandas)") from None


def load_results(path: str | Path, campaign: str | None = None) -> Results:
    """A results directory (`vswbench run --out DIR`) or its results.sqlite, read-only."""
    return Results(load(path, campaign))


def run_campaign(spec: str | Path, out: str | Path, *, append: bool = False) -> Results:
    """Run a campaign spec (a TOML file's path, or TOML text) into `out`; needs root. A rerun
    with the same `out` resumes, as `vswbench run` does; another campaign or a changed spec
    into the same `out` is refused unless `append` (as `vswbench run --append`)."""
    from vswbench.campaign.runner import CampaignRunner
    from vswbench.campaign.spec import load_spec
    from vswbench.campaign.spec import parse_spec

    text = str(spec)
    parsed = (parse_spec(text, source="<api>") if "\n" in text or "[[study]]" in text
              else load_spec(Path(text)))
    CampaignRunner(parsed, Path(out), append=append).run()
    return load_results(out)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def _one_point(kind: str, out: str | Path | None, **study: Any) -> Results:
    body = "\n".join(f"{k} = {_toml(v)}" for k, v in study.items() if v is not None)
    text = f'[campaign]\nname = "api-{kind}"\n\n[[study]]\nkind = "{kind}"\n{body}\n'
    directory = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="vsb-api-"))
    return run_campaign(text, directory, append=True)   # one more point into `out`


def search(switch: str, *, size: int | str = 64, scenario: str = "p2p", preset: str = "fast",
           options: Mapping[str, str] | None = None, repetitions: int = 1,
           out: str | Path | None = None) -> SwitchResult:
    """NDR/PDR of one switch by MLRsearch (the campaign runner's search: calibration, the
    store, the same headline numbers); needs root. `out`: where the store goes [a temporary
    directory]."""
    results = _one_point("search", out, switch=switch, size=size, scenario=scenario,
                         preset=preset, options=options or None,
                         repetitions=repetitions if repetitions > 1 else None)
    return results.get(switch, size=size)


def trial(switch: str, *, rate: float | str, duration: float = 5.0, size: int | str = 64,
          scenario: str = "p2p", options: Mapping[str, str] | None = None,
          out: str | Path | None = None) -> PointRecord:
    """One fixed offered load for `duration` seconds; needs root. Returns the stored point
    (its headline: achieved rate, loss, latency)."""
    results = _one_point("trial", out, switch=switch, size=size, scenario=scenario, rate=rate,
                         duration=duration, options=options or None)
    done = [p for p in results.points if p.kind == "trial"]
    if not done:
        failed = [p for p in results.data.points if p.kind == "trial"]
        why = failed[0].error if failed else "nothing stored"
        raise UsageError(f"trial of {switch} did not finish: {why}")
    return done[-1]


def sockets(kind: str, switch: str, *, scenario: str = "rr", proto: str = "tcp",
            msg_size: int | None = None, flows: int = 1, mtu: int = 1500,
            offloads: str = "default", service: bool = False, duration: float = 5.0,
            out: str | Path | None = None) -> SocketResult:
    """One socket measurement (kind stream, rr or crr, as `vswbench stream|rr|crr`) as a
    one-point campaign; needs root. Returns what the application got (results/sockets.py)."""
    if kind not in SOCKET_KINDS:
        raise UsageError(f"kind {kind!r}: one of {', '.join(SOCKET_KINDS)}")
    results = _one_point(kind, out, switch=switch, scenario=scenario, duration=duration,
                         proto=None if kind == "crr" else proto, msg_size=msg_size,
                         flows=flows, mtu=mtu, offloads=offloads, service=service)
    done = [s for s in results.sockets if s.kind == kind and s.switch == switch]
    if not done:
        failed = [p for p in results.data.points if p.kind == kind]
        why = failed[-1].error if failed else "nothing stored"
        raise UsageError(f"{kind} through {switch} did not finish: {why}")
    return done[-1]
