"""results/fingerprint.py: a run's stored fingerprint read into sysinfo.Fingerprint and back, in
every shape a store holds: a full one, an older one without later fields, a merged store's (key
`host`), a two-host run's (key `hosts`). Invented fingerprints: FIXTURES, NOT MEASUREMENTS."""

from __future__ import annotations

from dataclasses import replace

from vswbench.host.sysinfo import NA
from vswbench.host.sysinfo import Fingerprint
from vswbench.results.fingerprint import RunFingerprint
from vswbench.results.merge import host_of
from vswbench.results.store import StoredRun

FULL = Fingerprint("6.18.0", "#1", "ro", "AMD EPYC", 4, "off", {"cpu0": "performance"}, "off",
                   "madvise", "madvise", 0, 0, 2048, "2-3", "2-3", False, 2.4e9, "0.1.0",
                   "3.11.2", "x86_64", hostname="dut1", virtualization="none")


def run(fp: dict[str, object] | None) -> StoredRun:
    return StoredRun("vsb0r01", "demo", "2026-12-02T05:00:00+0000", None, "done", "", fp,
                     "0.1.0")


def test_a_full_fingerprint_reads_back_as_written() -> None:
    stored = FULL.to_json()
    fp = RunFingerprint.from_json(stored)
    assert fp.host == FULL and Fingerprint.from_json(stored) == FULL
    assert fp.to_json() == stored and list(fp.to_json()) == list(stored)
    assert fp.lab_name is None and fp.dut_names == () and not fp.extra


def test_an_older_fingerprint_reads_its_missing_fields_as_unknown() -> None:
    stored = {"kernel_release": "5.15", "cpu_model": "Xeon", "logical_cpus": 2}
    fp = RunFingerprint.from_json(stored)
    assert fp.host.kernel_release == "5.15" and fp.host.hostname == NA
    assert fp.host.tsc_hz is None and fp.host.offloads == {} and fp.host.governors == {}
    assert fp.has("cpu_model") and not fp.has("hostname")
    assert fp.to_json() == stored                      # nothing invented on the way back
    assert run(stored).system == fp and run(None).system is None


def test_a_merged_and_a_two_host_fingerprint_name_their_hosts() -> None:
    merged = {**FULL.to_json(), "host": "lab-d1"}
    assert RunFingerprint.from_json(merged).lab_name == "lab-d1"
    assert host_of(run(merged), None) == "lab-d1"
    two = {**FULL.to_json(), "hosts": {"tester t1": FULL.to_json(), "dut d7": {}}}
    fp = RunFingerprint.from_json(two)
    assert fp.dut_names == ("d7",) and fp.to_json() == two
    assert host_of(run(two), None) == "d7" and host_of(run(two), "given") == "given"
    assert host_of(run(FULL.to_json()), None) == "dut1"
    assert host_of(run(replace(FULL, hostname=NA).to_json()), None) == "unknown"
