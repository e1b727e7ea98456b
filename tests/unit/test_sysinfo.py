"""sysinfo.py over fake /proc and /sys trees: values read, "n/a" when absent, never an exception."""
import json

from vswbench.host import sysinfo
from vswbench.host.sysinfo import NA
from vswbench.host.sysinfo import fingerprint
from vswbench.host.sysinfo import missing_tuning
from vswbench.host.sysinfo import parse_cpulist
from vswbench.host.sysinfo import parse_ethtool_k

ETHTOOL = """Features for vsb1a0:
rx-checksumming: on
tx-checksumming: off
\ttx-checksum-ipv4: off [fixed]
generic-receive-offload: on
"""


def tree(root, files: dict[str, str]):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


TUNED_BADLY = {
    "proc/sys/kernel/osrelease": "6.18.1\n",
    "proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC\n",
    "proc/cmdline": "quiet isolcpus=1\n",
    "proc/cpuinfo": "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\n"
                    "model name\t: AMD EPYC 7B13\n",
    "proc/meminfo": "MemTotal: 1 kB\nHugePages_Total:     512\nHugePages_Free:      500\n"
                    "Hugepagesize:       2048 kB\n",
    "proc/42/comm": "irqbalance\n",
    "proc/7/comm": "bash\n",
    "sys/devices/system/cpu/online": "0-1\n",
    "sys/devices/system/cpu/smt/active": "1\n",
    "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave\n",
    "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance\n",
    "sys/devices/system/cpu/cpu10/cpufreq/scaling_governor": "schedutil\n",
    "sys/devices/system/cpu/intel_pstate/no_turbo": "0\n",
    "sys/devices/system/cpu/isolated": "\n",
    "sys/devices/system/cpu/nohz_full": "(null)\n",
    "sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
    "sys/kernel/mm/transparent_hugepage/defrag": "always defer [madvise] never\n",
}


def test_fake_tree_read(tmp_path) -> None:
    root = tree(tmp_path, TUNED_BADLY)
    fp = fingerprint(root=root, tsc_hz=2.6e9, switch_versions={"bridge": {"iproute2": "6.1"}})
    assert (fp.kernel_release, fp.kernel_version) == ("6.18.1", "#1 SMP PREEMPT_DYNAMIC")
    assert fp.cmdline == "quiet isolcpus=1"
    assert (fp.cpu_model, fp.logical_cpus, fp.smt_active) == ("AMD EPYC 7B13", 2, "on")
    assert fp.governors == {"cpu0": "powersave", "cpu1": "performance", "cpu10": "schedutil"}
    assert list(fp.governors) == ["cpu0", "cpu1", "cpu10"]
    assert fp.turbo == "on"
    assert (fp.thp_enabled, fp.thp_defrag) == ("always", "madvise")
    assert (fp.hugepages_total, fp.hugepages_free, fp.hugepage_size_kb) == (512, 500, 2048)
    assert (fp.isolated_cpus, fp.nohz_full) == ("", "")
    assert fp.irqbalance_running is True
    assert fp.tsc_hz == 2.6e9 and fp.switch_versions == {"bridge": {"iproute2": "6.1"}}
    json.dumps(fp.to_json())
    warnings = missing_tuning(fp)
    text = "\n".join(warnings)
    for expected in ("governor is not performance", "powersave, schedutil", "cpu0, cpu10",
                     "no isolated cores", "irqbalance running", "THP always", "turbo",
                     "SMT is on"):
        assert expected in text
    assert len(warnings) == 6


def test_empty_tree_is_all_na(tmp_path) -> None:
    fp = fingerprint(root=tmp_path / "nothing")
    assert fp.kernel_release == fp.cmdline == fp.cpu_model == fp.smt_active == NA
    assert fp.turbo == fp.thp_enabled == fp.thp_defrag == fp.isolated_cpus == NA
    assert fp.logical_cpus is None and fp.hugepages_total is None and fp.governors == {}
    assert fp.irqbalance_running is None and fp.offloads == {}
    assert missing_tuning(fp) == ["no isolated cores: other tasks share the tester's and "
                                  "switch's cores; boot with isolcpus= and nohz_full= for them"]


def test_vm_without_cpufreq_and_a_tuned_host(tmp_path) -> None:
    root = tree(tmp_path, {
        "proc/1/comm": "init\n",
        "proc/cpuinfo": "processor : 0\nprocessor : 1\nprocessor : 2\n",
        "sys/devices/system/cpu/cpu0/online": "1\n",      # cpu dirs without cpufreq (a VM)
        "sys/devices/system/cpu/cpu1/online": "1\n",
        "sys/devices/system/cpu/cpufreq/boost": "0\n",
        "sys/devices/system/cpu/smt/active": "0\n",
        "sys/devices/system/cpu/isolated": "1-2\n",
        "sys/devices/system/cpu/nohz_full": "1-2\n",
        "sys/kernel/mm/transparent_hugepage/enabled": "always madvise [never]\n",
    })
    fp = fingerprint(root=root)
    assert fp.governors == {"cpu0": NA, "cpu1": NA}
    assert fp.logical_cpus == 3                         # from cpuinfo: no online file
    assert (fp.turbo, fp.smt_active, fp.isolated_cpus, fp.nohz_full) == ("off", "off", "1-2",
                                                                         "1-2")
    assert fp.irqbalance_running is False and fp.thp_enabled == "never"
    assert missing_tuning(fp) == []


def test_unreadable_file_is_na(tmp_path) -> None:
    root = tree(tmp_path, {"proc/cmdline": "x"})
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").mkdir()        # a directory where a file should be
    assert sysinfo.kernel(root)[0] == NA and sysinfo.cmdline(root) == "x"


def test_offloads_runs_argv_lists_and_records_failures() -> None:
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[-1] == "gone":
            raise RuntimeError("status 1: Cannot get device features")
        if argv[-1] == "noprog":
            raise FileNotFoundError(2, "No such file or directory", "ethtool")
        return ETHTOOL

    fp = fingerprint({"vsb1a0": "vsb1a", "gone": "vsb1a", "noprog": "", "lo": ""}, run=run,
                     root="/nonexistent")
    assert ["ip", "netns", "exec", "vsb1a", "ethtool", "-k", "vsb1a0"] in calls
    assert ["ethtool", "-k", "lo"] in calls
    ok = fp.offloads["vsb1a0"]
    assert ok["error"] is None and ok["netns"] == "vsb1a"
    assert ok["features"]["tx-checksumming"] == "off"
    assert ok["features"]["tx-checksum-ipv4"] == "off [fixed]"
    assert "Cannot get device features" in fp.offloads["gone"]["error"]
    assert "No such file" in fp.offloads["noprog"]["error"]


def test_parsers() -> None:
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == [] and parse_cpulist("x-y") == []
    assert "Features for vsb1a0" not in parse_ethtool_k(ETHTOOL)
