"""`vswbench merge STORE... -o OUT`: the stores of several hosts as one, each point keeping its host.

A lab runs one campaign per DUT (deploy/lab/: Ansible, in parallel) and fetches each host's store;
merge copies every run and point of them into one new store, so that one report shows them all:

- every run keeps its fingerprint, with `host` added: the name the point was measured on;
- every point keeps its result and gets `host` in its parameters, a variant knob (params.KNOBS):
  the report's ranking, the exports and `compare` then keep the hosts' points apart
  (`bridge p2p 64 B host=d1`) and never pool them as repetitions of one setup; its key becomes
  `KEY@HOST` (a store holds one point per campaign and key);
- the host of a store: `--host NAME` (one per store, in order), else the DUT's name an
  inventory run recorded (fingerprint `hosts`: "dut NAME"), else the fingerprint's hostname; a
  run or point that already names its host (a merged store merged again) keeps it.

Two stores that come out with one host name and the same campaign points are refused (name them
with --host); a run id found twice is the same run given twice, refused too. Nothing is written
before every store has been read and checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path

from vswbench.errors import UsageError
from vswbench.results.fingerprint import HOST_KEY
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.points import store_file
from vswbench.results.store import ResultStore
from vswbench.results.store import StoredPoint
from vswbench.results.store import StoredRun


@dataclass(frozen=True)
class MergeSummary:
    out: Path
    hosts: tuple[str, ...]          # in order of first appearance
    runs: int
    points: int


def host_of(run: StoredRun, given: str | None) -> str:
    """The host a run measured on (see the module's doc)."""
    fp = run.system or RunFingerprint.from_json({})
    if fp.lab_name:
        return fp.lab_name
    if given:
        return given
    if fp.dut_names:
        return fp.dut_names[0]
    name = fp.host.hostname
    return str(name) if isinstance(name, str) and name and name != "n/a" else "unknown"


def _check_host(name: str, flag: str) -> str:
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise UsageError(f"{flag} {name[:40]!r}: a host name of 1-64 letters, digits, '-', '_' "
                         "or '.'")
    return name


def merge(stores: Sequence[str | Path], out_dir: Path, hosts: Sequence[str] = ()) -> MergeSummary:
    """Read every store, check, then write OUT_DIR/results.sqlite (which must not exist yet)."""
    if not stores:
        raise UsageError("merge: give at least one store")
    if hosts and len(hosts) != len(stores):
        raise UsageError(f"--host given {len(hosts)} times for {len(stores)} stores: one per store, "
                         "in the stores' order, or none")
    for h in hosts:
        _check_host(h, "--host")
    merged = _Merged()
    for i, given in enumerate(stores):
        path = store_file(given)
        with ResultStore(path, create=False) as store:
            these_runs, these_points = store.runs(), store.points()
        host_by_run = merged.add_runs(path, these_runs, hosts[i] if hosts else None)
        merged.add_points(path, these_points, host_by_run)
    out = out_dir / "results.sqlite"
    if out.exists() or out.is_symlink():
        raise UsageError(f"{out} exists: merge writes a new store; give a new -o directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    with ResultStore(out) as store:
        for run in merged.runs:
            store.copy_run(run)
        for p in merged.points:
            store.copy_point(p)
    return MergeSummary(out, tuple(merged.order), len(merged.runs), len(merged.points))


@dataclass
class _Merged:
    """The runs and points merge has read so far, each with its host, checked for clashes."""
    runs: list[StoredRun] = field(default_factory=list)
    points: list[StoredPoint] = field(default_factory=list)
    seen_runs: dict[str, Path] = field(default_factory=dict)
    seen_keys: dict[tuple[str, str], Path] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)          # hosts, in order of first appearance

    def add_runs(self, path: Path, runs: Sequence[StoredRun], given: str | None
                 ) -> dict[str, str]:
        """A store's runs, its fingerprint naming the host; the host of each run id."""
        host_by_run: dict[str, str] = {}
        for run in runs:
            if run.run_id in self.seen_runs:
                raise UsageError(f"run {run.run_id} is in both {self.seen_runs[run.run_id]} and "
                                 f"{path}: the same store given twice? give each host's store once")
            self.seen_runs[run.run_id] = path
            host = _check_host(host_of(run, given), f"{path}: host")
            host_by_run[run.run_id] = host
            if host not in self.order:
                self.order.append(host)
            self.runs.append(replace(run, fingerprint={**(run.fingerprint or {}), HOST_KEY: host}))
        return host_by_run

    def add_points(self, path: Path, points: Sequence[StoredPoint],
                   host_by_run: dict[str, str]) -> None:
        """A store's points, each keyed and labelled with its host."""
        for p in points:
            host = str(p.params.get(HOST_KEY) or host_by_run.get(p.run_id, "unknown"))
            key = p.key if p.params.get(HOST_KEY) else f"{p.key}@{host}"
            if (p.campaign, key) in self.seen_keys:
                raise UsageError(f"{path} and {self.seen_keys[p.campaign, key]} both hold point "
                                 f"{p.label!r} of campaign {p.campaign!r} for host {host}: name "
                                 "each store's host with --host")
            self.seen_keys[p.campaign, key] = path
            self.points.append(replace(p, key=key, params={**p.params, HOST_KEY: host}))


def describe(summary: MergeSummary) -> str:
    return (f"merged {summary.runs} runs, {summary.points} points of {len(summary.hosts)} hosts "
            f"({', '.join(summary.hosts)}) into {summary.out}")
