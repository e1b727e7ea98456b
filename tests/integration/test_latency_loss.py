"""A real latency trial that lost frames shows that loss in the text ranking, the report, the CSV
and the API (issue 29).

The loss is real: the `shaped` calibration device (a token bucket at `shape_pps`) forwards
20 kpps; the latency point is measured at 90 % of an NDR of 60 kpps, so its queue overflows and
about two thirds of the frames are lost. The 60 kpps NDR is a test double: the campaign's
search point is stored beforehand (labelled so in its result) so that the run measures only the
latency point at that load; everything the test checks about loss comes from the measured
latency trial."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.campaign.spec import expand
from vswbench.campaign.spec import parse_spec
from vswbench.results.store import ResultStore

VSWBENCH = Path(sys.executable).parent / "vswbench"
SHAPE, TWIN_NDR = 20_000, 60_000.0
SPEC = f"""
[campaign]
name = "vsbtest-latloss"

[[study]]
kind = ["search", "latency"]
switch = "shaped"
shape_pps = {SHAPE}
size = 64
fractions = [90]
duration = 1
"""


def _vswbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VSWBENCH), *args], capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(300)
def test_a_lossy_latency_trial_shows_its_loss_everywhere(root, engine, tmp_path):
    spec_file = tmp_path / "latloss.toml"
    spec_file.write_text(SPEC)
    out = tmp_path / "out"
    out.mkdir()
    spec = parse_spec(SPEC)
    twin = next(p for p in expand(spec) if p.kind == "search")
    with ResultStore(out / "results.sqlite") as store:      # the search: a stored test double
        store.begin_run("vsbtwin", spec, {})
        store.record_point("vsbtwin", twin, {
            "switch": "shaped", "ndr_pps": TWIN_NDR, "pdr_pps": TWIN_NDR,
            "lower_bound_pps": TWIN_NDR, "upper_bound_pps": TWIN_NDR * 1.01,
            "generator_bound": False, "trials": [],
            "notes": ["test double: not measured (tests/integration/test_latency_loss.py)"]},
            "done")
        store.end_run("vsbtwin", "done")
    run = _vswbench("run", str(spec_file), "--out", str(out), "--no-report")
    assert run.returncode == 0, run.stderr[-2000:]
    progress = " ".join(run.stderr.split())        # the point's progress line
    assert "latency trial:" in progress and "frames lost" in progress

    from vswbench.api import load_results

    shaped = load_results(out).get("shaped", size=64)
    assert shaped.latency_lost_frames and shaped.latency_lost_frames > 0
    assert shaped.latency_loss_ratio is not None and 0.3 < shaped.latency_loss_ratio < 0.95
    assert "p99" in shaped.latency_unreliable and "p50" in shaped.latency_unreliable
    lost = f"{shaped.latency_lost_frames:,}"

    text = _vswbench("report", str(out), "--print", "text")
    assert text.returncode == 0, text.stderr
    row = next(line for line in text.stdout.splitlines() if line.startswith("calib."))
    assert lost in row and "!" in row

    csv_file = tmp_path / "h.csv"
    exported = _vswbench("export", str(out), "--format", "csv", "--to", str(csv_file))
    assert exported.returncode == 0, exported.stderr
    latency = next(r for r in csv.DictReader(csv_file.open(encoding="utf-8"))
                   if r["kind"] == "latency")
    assert int(latency["latency_lost_frames"]) == shaped.latency_lost_frames
    assert float(latency["loss_ratio"]) == pytest.approx(shaped.latency_loss_ratio)
    assert "p99" in latency["latency_unreliable"].split()

    from vswbench.report.build import build_report

    html = build_report(out, tmp_path / "report").html.read_text(encoding="utf-8")
    assert lost in html.split('id="ranking"', 1)[1]
