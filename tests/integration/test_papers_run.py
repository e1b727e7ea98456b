"""`vswbench run DIRECTORY` of paper specs: each spec into OUT/<figure>, its report and paper page,
the index with every figure, and `vswbench papers table` from the stores, verdicts computed from
what was measured (a claim that must hold holds, one that cannot hold does not)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

VSWBENCH = Path(sys.executable).parent / "vswbench"


def spec(name: str, switch: str) -> str:
    return f"""# test paper spec (Emmerich et al., section 5.1, Table 1)
[campaign]
name = "{name}"

[paper]
figure = "{name}"
paper = "emmerich"
source = "section 5.1, Table 1"
caption = "a test"
varies = "nothing"
analogue = "one trial through {switch}"
differences = ["a test"]

[[study]]
kind = "trial"
switch = "{switch}"
scenario = "p2p"
rate = "5k"
duration = 1

[[reference]]
id = "r"
quantity = "a value"
value = 1.0
unit = "Mpps"
source = "section 5.1, Table 1"
ours = "tput[switch={switch}]"

[[claim]]
law = "it forwards more than 1,000 pps"
source = "nowhere"
check = "tput[switch={switch}] > 1000"
[[claim]]
law = "it forwards more than 10 Mpps"
source = "nowhere"
check = "tput[switch={switch}] > 10000000"
[[claim]]
law = "needs NICs"
source = "nowhere"
untestable = "no NICs here"
"""


@pytest.mark.timeout(300)
def test_run_directory_writes_pages_index_and_table(root, engine, tmp_path):
    specs = tmp_path / "papers"
    specs.mkdir()
    (specs / "vsbtest-a.toml").write_text(spec("vsbtest-a", "veth"))
    (specs / "vsbtest-b.toml").write_text(spec("vsbtest-b", "bridge"))
    out = tmp_path / "out"
    r = subprocess.run([str(VSWBENCH), "run", str(specs), "--out", str(out)],
                       capture_output=True, text=True, timeout=280)
    assert r.returncode == 0, r.stderr
    assert "2 specs in" in r.stderr and "estimated" in r.stderr
    for name in ("vsbtest-a", "vsbtest-b"):
        page = (out / name / "paper.md").read_text()
        assert (out / name / "report.html").is_file()
        assert "| it forwards more than 1,000 pps |" in page and "| holds |" in page
        assert "| does not hold |" in page and "no NICs here" in page
    index = (out / "index.md").read_text()
    assert "vsbtest-a" in index and "vsbtest-b" in index
    t = subprocess.run([str(VSWBENCH), "papers", "table", str(out)], capture_output=True,
                       text=True, timeout=60)
    assert t.returncode == 0, t.stderr
    assert "does not hold (1 of 2 tested claims)" in t.stdout
    assert "Total time here" in t.stdout
