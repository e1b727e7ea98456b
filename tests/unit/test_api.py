"""vswbench.api and the pytest plugin on fixture stores (invented numbers); the API guide's
(docs/guide/api.md) API example and its pytest plugin example run here as written, against a
fixture store where the quick suite writes (results/quick-<date-time>)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report_fixtures import write_fixture_store
from vswbench import api
from vswbench.cli import app as cli
from vswbench.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = "docs/guide/api.md"       # the API and plugin examples (README links there)


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("api") / "results" / "quick-20261127-010203"
    base.mkdir(parents=True)
    write_fixture_store(base / "results.sqlite", variant="quick")
    return base


def readme_example(marker: str = "api-example") -> str:
    text = (ROOT / API_PAGE).read_text(encoding="utf-8")
    m = re.search(rf"<!-- {marker} -->\s*```python\n(.*?)```", text, re.S)
    assert m, f"{API_PAGE} lost its example marked <!-- {marker} -->"
    return m.group(1)


def test_readme_example_runs(quick, monkeypatch, capsys) -> None:
    monkeypatch.chdir(quick.parent.parent)
    exec(compile(readme_example(), API_PAGE, "exec"), {})
    printed = capsys.readouterr().out
    assert "64 B, kernel switches: xdp, tc-bpf and bridge lead" in printed
    assert "Linux bridge" in printed and "ndr_pps" in printed
    assert "latency_loss_ratio" in printed and "unreliable: none" in printed


def test_results_are_typed_records(quick) -> None:
    results = api.load_results(quick)
    assert len(results.points) == 32 and results.points[0].setup.switch == "veth"
    ovs = results.get("ovs", size=64)
    assert isinstance(ovs, api.SwitchResult)
    assert ovs.ndr_pps == 160_000.0 and ovs.stack == "kernel" and ovs.rank == 4
    assert "userspace datapath" in ovs.description and ovs.versions == ("ovs-vswitchd 3.1.0",)
    veth = results.get("veth", size=1518)
    assert veth.role == "baseline" and veth.rank is None and veth.generator_bound
    assert results.get("xdp", size=64).tied and results.get("tc-bpf", size=64).tied
    assert len(results.verdicts) == 4
    assert results.records()[0]["schema"] == "vswbench.point/1"
    frame = results.dataframe()
    assert len(frame) == 32 and "latency_p999_us" in frame.columns


def test_ambiguous_or_missing_lookups_name_the_choices(quick) -> None:
    results = api.load_results(quick)
    with pytest.raises(UsageError, match="2 result of switch 'bridge'.*size=64.*size=1518"):
        results.get("bridge")
    with pytest.raises(UsageError, match="no result of switch 'vpp'"):
        results.ndr("vpp", size=64)


def test_measuring_needs_root(tmp_path, monkeypatch) -> None:
    if os.geteuid() == 0:
        pytest.skip("as root api.search would measure: not in unit tests")
    with pytest.raises(Exception, match="root"):
        api.search("bridge", out=tmp_path / "s")


PLUGIN_TEST = readme_example("plugin-example") + '''

def test_loader(vswbench_load, vswbench_results):
    assert vswbench_load(vswbench_results.path).ndr("xdp", size=64) == 690000.0
'''


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_switch_perf.py").write_text(PLUGIN_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("VSWBENCH_RESULTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "vswbench.pytest_plugin", *args, str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


def test_pytest_plugin(quick, tmp_path) -> None:
    proc = _pytest(tmp_path, "--vswbench-results", str(quick))
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout + proc.stderr
    proc = _pytest(tmp_path, "-rs")
    assert proc.returncode == 0 and "2 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert "--vswbench-results" in proc.stdout


def test_shell_completion_of_switch_names(monkeypatch, capsys) -> None:
    monkeypatch.setenv("_VSWBENCH_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "vswbench search --switch ovs")
    monkeypatch.setenv("COMP_CWORD", "3")
    with pytest.raises(SystemExit):
        cli.main([])
    assert capsys.readouterr().out.split() == ["plain,ovs", "plain,ovs-afxdp", "plain,ovs-dpdk"]
