"""Your own switch (issue 33): the two shipped examples (a bridge built with `ip`, nftables
netdev `fwd`) measured through `--switch-file`; a failing setup command reported with its output
and exit 1, and the declaration's teardown run all the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.integration_helpers import forwarded
from vswbench.host.netns import list_namespaces

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "switches"



def vswbench(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vswbench", *argv], capture_output=True,
                          text=True, timeout=180)


def run_id_of(stderr: str) -> str:
    return next(line.split()[1].rstrip(":") for line in stderr.splitlines()
                if line.startswith("run vsb"))


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("file", "name"), [("linux-bridge.toml", "ip-bridge"),
                                            ("nft-fwd.toml", "nft-fwd")])
def test_the_examples_run(root, engine, file, name):
    result = vswbench("trial", "--switch-file", str(EXAMPLES / file), "--switch", name,
                      "--rate", "5k", "--duration", "0.5", "--warmup", "0", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert forwarded(record), record
    # its port counters feed the same checks as a built-in switch's (the engine's counts
    # against the kernel's are noisy on a loaded machine, for every switch: not asserted)
    assert sum(p["rx_packets"] for p in record["switch_ports"]) >= record["rx_frames"]
    assert record["counter_checks"], "the engine's counts were checked against the kernel's"
    assert f"## user switch {name}" in record["config_dump"]
    assert "(exit 0)" in record["config_dump"]
    assert record["switch_versions"].get(name), record["switch_versions"]
    run_id = run_id_of(result.stderr)
    assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]


@pytest.mark.timeout(120)
def test_a_failing_setup_is_reported_with_its_output_and_teardown_still_runs(root, engine,
                                                                            tmp_path):
    marker = tmp_path / "torn-down"
    spec = tmp_path / "broken.toml"
    spec.write_text(f"""
[switch.broken]
setup = [["ip", "link", "add", "{{VSB_RUN_ID}}br", "type", "no-such-kind"]]
teardown = [["touch", "{marker}"]]
""")
    result = vswbench("trial", "--switch-file", str(spec), "--switch", "broken", "--rate",
                      "1k", "--duration", "0.5", "--warmup", "0")
    assert result.returncode == 1, result.stderr
    assert "[switch.broken].setup[0]" in result.stderr
    assert "failed with status" in result.stderr
    assert "no-such-kind" in result.stderr, "the command's own output is shown"
    assert "Traceback" not in result.stderr
    assert marker.exists(), "teardown must run after a failing setup"
    run_id = run_id_of(result.stderr) if "run vsb" in result.stderr else ""
    if run_id:
        assert not [ns for ns in list_namespaces() if ns.startswith(run_id)]


@pytest.mark.timeout(240)
def test_a_campaign_measures_a_switch_its_spec_declares_by_path(root, engine, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(f"""
[campaign]
name = "vsbtest-ext"
[switch]
nft-fwd = "{EXAMPLES / 'nft-fwd.toml'}"
[[study]]
kind = "trial"
switch = "nft-fwd"
scenario = "p2p"
rate = "2k"
duration = 0.5
""")
    result = vswbench("run", str(spec), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "nft-fwd" in result.stdout + result.stderr


COUNTERS = ("import json, os; d = {p: {k: int(open(f'/sys/class/net/{p}/statistics/{k}').read()) "
            "for k in ('rx_packets', 'tx_packets', 'rx_dropped', 'tx_dropped')} "
            "for p in os.environ['VSB_PORTS'].split()}; d['by-command'] = {}; "
            "print(json.dumps(d))")


@pytest.mark.timeout(120)
def test_user_port_names_cpus_and_a_user_counters_command(root, engine, tmp_path):
    text = (EXAMPLES / "nft-fwd.toml").read_text().replace(
        "[switch.nft-fwd]", f'[switch.nft-named]\nport_names = ["in", "out"]\ncpus = [0]\n'
        f'counters = ["{sys.executable}", "-c", "{COUNTERS}"]')
    path = tmp_path / "named.toml"
    path.write_text(text)
    result = vswbench("trial", "--switch-file", str(path), "--switch", "nft-named", "--rate",
                      "5k", "--duration", "0.5", "--warmup", "0", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    ports = {p["port"]: p for p in record["switch_ports"]}
    assert set(ports) == {"in", "out", "by-command"}, "the declared counters command answered"
    assert ports["in"]["rx_packets"] >= record["tx_frames"] > 0
    assert ports["out"]["tx_packets"] >= record["rx_frames"] > 0
    assert record["forwarding_mode"].startswith("napi-threaded cpu0"), "its declared CPU"


@pytest.mark.timeout(120)
def test_a_tcp_stream_through_your_own_switch(root, engine):
    """`--switch-file` on the socket commands too: what an application sees through a switch
    the user declared (the bridge built with `ip`)."""
    result = vswbench("stream", "--switch-file", str(EXAMPLES / "linux-bridge.toml"),
                      "--switch", "ip-bridge", "--duration", "1", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["switch"] == "ip-bridge" and record["goodput_gbps"] > 0
    assert not [ns for ns in list_namespaces() if ns.startswith(record["run_id"])]
