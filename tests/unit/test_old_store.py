"""A store written by an older vswbench still loads, into today's typed records (issue 45, part 1).

tests/data/store-4df8ce3.sqlite.gz is the "full" fixture store (tests/report_fixtures.py:
invented results, FIXTURES, NOT MEASUREMENTS) as commit 4df8ce3's own code wrote it:
`git worktree add /tmp/vsb-old 4df8ce3`, then with PYTHONPATH=/tmp/vsb-old/src
`write_fixture_store(PATH, "full")`, VACUUM, gzip -9. Every kind of point is in it (search,
trial, latency, sweep, b2b, rule-update, stream, rr, crr), with the run's system fingerprint."""

from __future__ import annotations

import gzip
import shutil
from collections import Counter
from pathlib import Path

import pytest

from vswbench.measure.socket_result import SOCKET_KINDS
from vswbench.measure.socket_result import SocketLatency
from vswbench.measure.socket_result import SocketResult
from vswbench.report.model import build_model
from vswbench.report.summary import machine_summaries
from vswbench.results.export import headline_row
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.points import StoredResults
from vswbench.results.points import load
from vswbench.results.sockets import socket_of

OLD = Path(__file__).resolve().parents[1] / "data" / "store-4df8ce3.sqlite.gz"


@pytest.fixture(scope="module")
def old(tmp_path_factory: pytest.TempPathFactory) -> StoredResults:
    path = tmp_path_factory.mktemp("vsb-old-store") / "results.sqlite"
    with gzip.open(OLD) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return load(path)


def test_every_point_of_the_4df8ce3_store_reads_into_records(old: StoredResults) -> None:
    kinds = Counter(p.kind for p in old.points)
    assert kinds == {"search": 35, "trial": 8, "latency": 6, "sweep": 2, "rule-update": 2,
                     "stream": 2, "rr": 2, "crr": 2, "b2b": 1}
    records = old.all_records()
    assert len(records) == 60 and Counter(r.status for r in records) == {"done": 58, "failed": 2}
    searches = [r for r in records if r.kind == "search" and r.done]
    assert all(r.headline.ndr_pps and r.measured.trials for r in searches)
    assert all(headline_row(r)["point_key"] == p.key
               for r, p in zip(records, old.points))


def test_the_4df8ce3_fingerprint_reads_typed_and_back(old: StoredResults) -> None:
    (run,) = old.runs
    fp = run.system
    assert isinstance(fp, RunFingerprint) and run.fingerprint is not None
    assert fp.host.cpu_model == "AMD EPYC (fixture)" and fp.host.logical_cpus == 2
    assert fp.host.tsc_hz and fp.has("kernel_release") and fp.lab_name is None
    assert fp.to_json() == run.fingerprint
    assert list(fp.to_json()) == list(run.fingerprint)      # the stored order, for the report
    (machine,) = machine_summaries(build_model(old).runs)
    assert machine.host == "fixture-host" and machine.kernel == "6.18.0-fixture"
    assert machine.cpu.startswith("AMD EPYC (fixture), 2 logical CPUs")


def test_the_4df8ce3_socket_results_read_typed_and_back(old: StoredResults) -> None:
    socks = [(p, socket_of(p)) for p in old.points if p.kind in SOCKET_KINDS]
    assert len(socks) == 6 and all(s is not None for _, s in socks)
    for p, s in socks:
        assert s is not None and isinstance(s.latency, SocketLatency)
        assert SocketResult.from_json(s.kind, s.to_json()) == s
        if p.kind != "stream":
            assert s.latency.p99 is not None and s.latency.p50 is not None
            assert p.result is not None and s.latency.p99 == p.result["latency_us"]["p99"]
