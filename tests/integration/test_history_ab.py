"""`vswbench run --history` and `vswbench ab` for real: a one-search campaign of veth added to a
history when it ends (its machine and kernel this host's), and a two-round A/B of veth whose B
side sets a sysctl of its switch namespace, interleaved into one store. Short searches (brief,
the shortest preset: only what is recorded is checked; quick took 17 s, brief 7 s); the
NDRs themselves are not checked (a shared VM), only what is recorded."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from vswbench.host.netns import list_namespaces
from vswbench.results.ab import sides_of
from vswbench.results.history import History
from vswbench.results.points import load

SPEC = """
[campaign]
name = "vsbtest-history"

[[study]]
kind = "search"
switch = "veth"
scenario = "p2p"
size = 64
preset = "brief"
"""


def vswbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vswbench", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.timeout(400)
def test_run_adds_the_finished_run_to_the_history(root, engine, tmp_path) -> None:
    spec, out, history = tmp_path / "h.toml", tmp_path / "run", tmp_path / "history.sqlite"
    spec.write_text(SPEC)
    done = vswbench("run", str(spec), "--out", str(out), "--no-report", "--history",
                    str(history))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "added to" in done.stdout and "as history run 1 (1 setups)" in done.stdout
    with History(history, create=False) as h:
        runs, rows = h.runs(), h.results()
    assert len(runs) == 1 and runs[0].kernel == platform.release()
    assert runs[0].machine != "unknown" and runs[0].campaign == "vsbtest-history"
    assert len(rows) == 1 and rows[0].setup.switch == "veth" and rows[0].setup.preset == "brief"
    assert rows[0].switch_version                     # the search's switch_versions
    again = vswbench("history", "add", str(out), "--history", str(history))
    assert again.returncode == 0 and "already in" in again.stdout


@pytest.mark.timeout(400)
def test_ab_interleaves_two_rounds_into_one_store(root, engine, tmp_path) -> None:
    # both sides the shaper at 50 kpps: each search ends near 50 kpps in about 4 s, where veth's
    # at the tester's ceiling (1.5 Mpps) took 7-9 s, most of its trials excised as host stalls
    out = tmp_path / "ab"
    done = vswbench("ab", "--switch", "shaped", "--a-shape-pps", "50000", "--b-shape-pps",
                    "50000", "--method", "searches", "--rounds", "2",
                    "--b-sysctl", "net.core.somaxconn=1024", "--preset", "brief", "--out",
                    str(out), "--json", "--seed", "4")
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert sorted(data["order"]) == ["1A", "1B", "2A", "2B"]
    assert data["order"][0][0] == data["order"][1][0] == "1"     # a round is both sides
    assert "can never decide" in data["verdict"] or data["verdict"].startswith("not judged")
    stored = load(out)
    assert {r.spec_name for r in stored.runs} == {"ab-A", "ab-B"}
    b_text = next(r.spec_text for r in stored.runs if r.spec_name == "ab-B")
    assert "# sysctl net.core.somaxconn = 1024" in b_text
    assert len(stored.done("search")) == 4
    a, b = sides_of(out)
    assert a.label == b.label == "shaped p2p 64 B preset=brief shape_pps=50000"


@pytest.mark.timeout(400)
def test_ab_in_paired_rounds_keeps_both_testbeds_up_and_judges_the_rounds(root, engine,
                                                                          tmp_path) -> None:
    """The default method: both sides' testbeds up at once, one MRR sample of each a round in a
    random order, each side's samples one rounds point of its campaign; a known slowdown (side B
    the shaper at a quarter of the plain path's rate) is found with its interval."""
    from vswbench.results.ab import judge_paired
    from vswbench.results.ab import paired_sides_of

    out = tmp_path / "rounds"
    before = set(list_namespaces())
    done = vswbench("ab", "--a-switch", "tc-mirred", "--b-switch", "shaped", "--b-shape-pps",
                    "50000", "--rounds", "6", "--out", str(out), "--json", "--seed", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["method"] == "rounds" and len(data["sides"]["A"]["mrr_pps"]) == 6
    assert data["differs"] is True and data["ratio"] < 0.5
    assert "B is slower" in data["verdict"] and "6 paired rounds" in data["verdict"]
    sides = paired_sides_of(out)
    assert sides is not None
    a, b = sides
    assert {x.round for x in a.samples} == {x.round for x in b.samples} == set(range(6))
    assert judge_paired(a, b).differs
    assert set(list_namespaces()) <= before          # both testbeds gone


@pytest.mark.timeout(400)
def test_ab_of_two_switch_files_measures_each_side_s_own_switch(root, engine, tmp_path) -> None:
    """Two "builds" as two files (examples/switches: a bridge built with ip, nftables' netdev
    fwd), both up at once in paired rounds (the default method; the searches' storing of a
    side's setup is test_ab_interleaves_two_rounds_into_one_store's): each side's rounds ran
    through its own declared switch, named in its stored spec."""
    from vswbench.results.ab import paired_sides_of

    examples = Path(__file__).resolve().parents[2] / "examples" / "switches"
    out = tmp_path / "builds"
    done = vswbench("ab", "--a-switch-file", str(examples / "linux-bridge.toml"),
                    "--b-switch-file", str(examples / "nft-fwd.toml"), "--rounds", "2",
                    "--out", str(out), "--json", "--seed", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    sides = paired_sides_of(out)
    assert sides is not None and all(len(side.samples) == 2 for side in sides)
    stored = load(out)
    switches = {p.campaign: p.params["switch"] for p in stored.points
                if p.kind == "rounds" and p.status == "done"}
    assert switches == {"ab-A": "ip-bridge", "ab-B": "nft-fwd"}
    texts = {r.spec_name: r.spec_text for r in stored.runs}
    assert f'switch."nft-fwd" = "{examples / "nft-fwd.toml"}"' in texts["ab-B"]
    assert "linux-bridge.toml" in texts["ab-A"] and "nft-fwd" not in texts["ab-A"]
