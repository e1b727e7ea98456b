"""`vswbench trial / switches / doctor` without root: usage errors exit 2 (nothing created),
an unavailable switch exits 3 with its reason and fix."""
import json

import pytest

from vswbench.cli import app as cli
from vswbench.switches.base import Availability
from vswbench.switches.base import Switch


class FakeUnavailable(Switch):
    name = "fake-off"
    description = "a switch this machine lacks"

    @classmethod
    def availability(cls):
        return Availability(False, "no fake kernel module", "modprobe fake")

    def setup(self): ...
    def attach(self, port): ...
    def forward(self, paths): ...
    def teardown(self): ...
    def config_dump(self): return ""
    def port_counters(self): return []


class FakeOk(FakeUnavailable):
    name = "fake-on"

    @classmethod
    def availability(cls):
        return Availability(True)

    @classmethod
    def versions(cls):
        return {"fake": "1.0"}


@pytest.fixture(autouse=True)
def fake_switches(monkeypatch):
    import vswbench.run.scope
    import vswbench.switches.catalog as sw

    monkeypatch.setattr(sw, "all_switches", lambda: {"fake-off": FakeUnavailable, "fake-on": FakeOk})

    def no_run(*a, **k):
        raise AssertionError("nothing may be created for bad input")

    monkeypatch.setattr(vswbench.run.scope, "run_scope", no_run)


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv,fragment", [
    (["trial", "--switch", "nope"], "unknown switch 'nope'"),
    (["trial", "--switch", "fake-on", "--scenario", "star"], "unknown scenario"),
    (["trial", "--switch", "fake-on", "--scenario", "chain:0"], "chain:0"),
    (["trial", "--switch", "fake-on", "--rate", "fast"], "rate 'fast'"),
    (["trial", "--switch", "fake-on", "--rate", "0"], "must be 1 to"),
    (["trial", "--switch", "fake-on", "--rate", "0.5"], "must be 1 to"),
    (["trial", "--switch", "fake-on", "--rate", "2000000000"], "must be 1 to"),
    (["trial", "--switch", "fake-on", "--rate", "1e26"], "expected packets per second"),
    (["trial", "--switch", "fake-on", "--duration", "nan"], "digits 0-9"),   # issue 47
    (["trial", "--switch", "fake-on", "--duration", "1000000000"], "give seconds"),
    (["trial", "--switch", "fake-on", "--duration", "1e9"], "digits 0-9"),
    (["search", "--switch", "fake-on", "--trial-duration", "inf"], "digits 0-9"),
    (["trial", "--switch", "fake-on", "--size", "20"], "20"),
    (["trial", "--switch", "fake-on", "--tester-cpu", "999"], "--tester-cpu 999"),
    (["trial", "--switch", "fake-on", "--nf-cpus", "1,x"], "--nf-cpus"),
    (["trial", "--switch", "fake-on", "--option", "novalue"], "key=value"),
    (["trial", "--switch", "fake-on", "--io", "dpdk-magic"], "dpdk-magic"),
    (["trial"], "--switch"),
])
def test_trial_usage_errors(capsys, argv, fragment):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert fragment in err
    assert "Traceback" not in out + err


def test_unavailable_switch_exit_3(capsys):
    code, out, err = run_cli(capsys, "trial", "--switch", "fake-off", "--scenario", "p2p")
    assert code == 3
    assert "no fake kernel module" in err and "modprobe fake" in err
    assert "Traceback" not in out + err


def test_switches_table_and_json(capsys):
    code, out, _ = run_cli(capsys, "switches")
    assert code == 0 and "fake-off" in out and "no fake kernel module" in out
    code, out, _ = run_cli(capsys, "switches", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["fake-on"]["available"] and rows["fake-on"]["versions"] == {"fake": "1.0"}
    assert rows["fake-off"]["fix"] == "modprobe fake"


def test_doctor_json(capsys, monkeypatch):
    import vswbench.engine.probe
    import vswbench.host.doctor as doctor

    monkeypatch.setattr(vswbench.engine.probe, "probe", lambda *a, **k: vswbench.engine.probe.parse_probe(
        '{"backends":[{"name":"afpacket","usable":true}],"kernel":{"af_xdp":true},'
        '"tsc":{"hz":2e9,"invariant":true}}'))
    from vswbench.host.stallcheck import StallCheck

    seen: list[float] = []
    monkeypatch.setattr(doctor, "check_stalls", lambda s: seen.append(s) or StallCheck(
        s, True, cpus={"1": {"stalls": 3, "per_s": 1.5, "longest_us": 2500.0}}))
    code, out, _ = run_cli(capsys, "doctor", "--json")
    data = json.loads(out)
    assert code == 0 and data["kernel"]["af_xdp"] is True
    assert seen == [2.0] and data["stalls"]["cpus"]["1"]["longest_us"] == 2500.0
    assert {t["name"] for t in data["tuning"]} == {"cpu governor", "turbo", "SMT",
                                                    "transparent hugepages", "irqbalance",
                                                    "DAMON (kdamond)", "IRQ time accounting"}
    assert any(t["name"] == "ip" for t in data["tools"])
    assert doctor  # imported for monkeypatch side


def test_doctor_prints_host_stalls_and_can_skip_them(capsys, monkeypatch):
    import vswbench.host.doctor as doctor
    from vswbench.host.stallcheck import StallCheck

    calls: list[float] = []
    monkeypatch.setattr(doctor, "check_stalls", lambda s: calls.append(s) or StallCheck(
        s, True, cpus={"0": {"stalls": 4, "per_s": 2.0, "longest_us": 1250.0}}))
    code, out, _ = run_cli(capsys, "doctor", "--stall-seconds", "2")
    assert code == 0 and "CPU 0: 4 stalls in 2 s (2.0 a second), longest 1.25 ms" in out
    code, out, _ = run_cli(capsys, "doctor", "--json", "--stall-seconds", "0")
    assert code == 0 and json.loads(out)["stalls"] is None and calls == [2.0]
    assert StallCheck(2, False, "not root").lines() == ["host stalls not measured: not root"]


def test_doctor_reads_fake_sys(tmp_path):
    from vswbench.host.doctor import tuning_checks

    (tmp_path / "sys/devices/system/cpu/smt").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/smt/active").write_text("1\n")
    (tmp_path / "sys/kernel/mm/transparent_hugepage").mkdir(parents=True)
    (tmp_path / "sys/kernel/mm/transparent_hugepage/enabled").write_text(
        "always madvise [never]\n")
    proc = tmp_path / "proc"
    (proc / "42").mkdir(parents=True)
    (proc / "42/comm").write_text("irqbalance\n")
    (proc / "77").mkdir()
    (proc / "77/comm").write_text("kdamond.0\n")
    checks = {c.name: c for c in tuning_checks(tmp_path / "sys", proc)}
    assert checks["DAMON (kdamond)"].ok is False
    assert checks["DAMON (kdamond)"].current == "running: kdamond.0 (PID 77)"
    (proc / "77/comm").write_text("bash\n")
    assert {c.name: c for c in tuning_checks(tmp_path / "sys", proc)}["DAMON (kdamond)"].ok
    assert checks["cpu governor"].ok is None and "VM" in checks["cpu governor"].current
    assert checks["SMT"].ok is False and checks["SMT"].current.startswith("on")
    assert checks["transparent hugepages"].ok and checks["transparent hugepages"].current == "never"
    assert checks["irqbalance"].ok is False and "42" in checks["irqbalance"].current
    assert all(c.why for c in checks.values())


def test_search_output_path_checked_before_anything_runs(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run_cli(capsys, "search", "--switch", "fake-on", "--out",
                           str(blocker / "sub" / "r.json"))
    assert code == 2 and "--out" in err and "Traceback" not in err


def test_a_huge_campaign_needs_yes(capsys, tmp_path):
    spec = tmp_path / "big.toml"
    spec.write_text('[campaign]\nname = "big"\n[[study]]\nkind = "search"\nswitch = "fake-on"\n'
                    'size = [64, 128, 256, 512, 1024, 1280, 1518]\n'
                    'flows = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nburst = [1, 2, 4, 8, 16, 32, 64, 128]\n'
                    'repetitions = 2\n')
    code, _, err = run_cli(capsys, "run", str(spec), "--out", str(tmp_path / "out"))
    assert code == 2 and "1,120 points" in err and "--yes" in err
    assert not (tmp_path / "out").exists(), "nothing created before the refusal"
