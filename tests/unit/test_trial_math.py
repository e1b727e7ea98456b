"""Trial arithmetic without root: /proc/stat, cycles per packet, rates, latency merging."""
import pytest

from vswbench.engine.params import TrialParams
from vswbench.engine.records import parse_final
from vswbench.errors import UsageError
from vswbench.host.cpustat import busy_cycles
from vswbench.host.cpustat import core_usage
from vswbench.host.cpustat import cycles_per_packet
from vswbench.host.cpustat import parse_pid_stat
from vswbench.host.cpustat import parse_proc_stat
from vswbench.measure.trial import merge_latency
from vswbench.units import parse_rate

STAT0 = """cpu  10 0 10 100 0 0 0 0 0 0
cpu0 100 0 50 1000 0 5 10 0 0 0
cpu1 10 0 10 2000 0 0 0 0 0 0
intr 1 2 3
"""
STAT1 = """cpu  10 0 10 100 0 0 0 0 0 0
cpu0 150 0 100 1050 0 5 60 0 0 0
cpu1 10 0 10 2180 0 0 10 10 0 0
"""


def test_parse_and_usage():
    a, b = parse_proc_stat(STAT0), parse_proc_stat(STAT1)
    assert set(a) == {0, 1} and a[0].softirq == 10 and a[0].busy == 165
    u = core_usage(a, b, clk_tck=100)
    # cpu0: user 50 system 50 softirq 50 idle 50 -> 200 ticks, busy 150
    assert u[0].busy == 0.75 and u[0].user == 0.25 and u[0].softirq == 0.25 and u[0].idle == 0.25
    assert u[0].busy_s == 1.5
    # cpu1: idle 180 softirq 10 steal 10: steal neither busy nor idle
    assert u[1].busy == 0.05 and u[1].steal == 0.05 and u[1].idle == 0.9
    cycles = busy_cycles(u, 2e9)
    assert cycles == pytest.approx((1.5 + 0.1) * 2e9)
    assert cycles_per_packet(cycles, 16_000) == pytest.approx(200_000)
    assert cycles_per_packet(cycles, 0) is None


def test_pid_stat():
    line = "1234 (my (odd) name) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0 999 0 0\n"
    assert parse_pid_stat(line, clk_tck=100) == 3.0


@pytest.mark.parametrize("text,value", [("100k", 1e5), ("1.5M", 1.5e6), ("2500", 2500.0),
                                        ("10K", 1e4)])
def test_rates(text, value):
    assert parse_rate(text) == value


@pytest.mark.parametrize("text", ["fast", "", "-5k", "0", "k", "1e999"])
def test_bad_rates(text):
    with pytest.raises(UsageError):
        parse_rate(text)


def test_spec_validation():
    with pytest.raises(UsageError):
        TrialParams(size=32).validate()
    with pytest.raises(UsageError):
        TrialParams(io="dpdk-magic").validate()
    TrialParams().validate()


def _final(lat, hist, rx=100):
    return parse_final({"type": "final", "tx_frames": rx, "rx_frames": rx, "lost": 0,
                        "duplicated": 0, "reordered": 0, "latency_us": lat, "hist": hist})


def test_merge_latency():
    one = _final({"min": 1, "p50": 2, "p90": 3, "p99": 4, "p999": 5, "max": 6, "mean": 2.5,
                  "count": 100}, [[0, 1000, 50], [1000, 3000, 50]])
    assert merge_latency([one])["p50"] == 2
    two = _final({"min": 0.5, "p50": 9, "p90": 9, "p99": 9, "p999": 9, "max": 10, "mean": 9,
                  "count": 100}, [[8000, 10000, 100]])
    merged = merge_latency([one, two])
    assert merged["min"] == 0.5 and merged["max"] == 10
    assert merged["p50"] == 3.0 and merged["p90"] == 10.0
    assert merged["mean"] == pytest.approx(5.75)
    assert merge_latency([])["p50"] is None


def test_merge_latency_p25_p95_from_the_histogram():
    """Emmerich et al. Table 2 quote p25 and p95: every latency summary has them."""
    one = _final({"min": 0.2, "p50": 2, "p90": 3, "p99": 4, "p999": 5, "max": 6, "mean": 2.5,
                  "count": 100}, [[0, 1000, 30], [1000, 3000, 60], [3000, 5000, 10]])
    lat = merge_latency([one])
    assert lat["p25"] == 1.0 and lat["p95"] == 5.0
    assert lat["min"] <= lat["p25"] <= lat["p50"] <= lat["p95"] <= lat["max"]
    two = _final({"min": 7, "p50": 9, "p90": 9, "p99": 9, "p999": 9, "max": 10, "mean": 9,
                  "count": 100}, [[8000, 10000, 100]])
    merged = merge_latency([one, two])
    assert merged["p25"] == 3.0 and merged["p95"] == 10.0
    assert set(merge_latency([])) >= {"p25", "p95"}


def test_merge_latency_fills_p9999_stddev_and_delay_variation():
    """p99.99 and stddev are never empty where the engine measured them: one receiver's own,
    of several p99.99 from the merged histogram and the standard deviation pooled."""
    from vswbench.measure.trial import merge_delay_variation

    one = parse_final({"type": "final", "tx_frames": 100, "rx_frames": 100, "lost": 0,
                       "duplicated": 0, "reordered": 0, "jitter_us": 2.0,
                       "ipdv_us": {"p1": -1.0, "p50": 0.0, "p99": 1.5},
                       "latency_us": {"min": 1, "p50": 2, "p90": 3, "p99": 4, "p999": 5,
                                      "p9999": 5.5, "max": 6, "mean": 2.0, "stddev": 1.0,
                                      "count": 100}, "hist": [[1000, 3000, 100]]})
    lat = merge_latency([one])
    assert (lat["p9999"], lat["stddev"]) == (5.5, 1.0)
    assert merge_delay_variation([one]) == (2.0, {"p1": -1.0, "p50": 0.0, "p99": 1.5})
    two = parse_final({"type": "final", "tx_frames": 100, "rx_frames": 100, "lost": 0,
                       "duplicated": 0, "reordered": 0, "jitter_us": 4.0,
                       "latency_us": {"min": 3, "p50": 4, "p90": 4, "p99": 4, "p999": 4,
                                      "p9999": 4, "max": 5, "mean": 4.0, "stddev": 1.0,
                                      "count": 100}, "hist": [[3000, 5000, 100]]})
    merged = merge_latency([one, two])
    assert merged["p9999"] == 5.0
    assert merged["stddev"] == pytest.approx(2 ** 0.5)      # within 1, means 2 and 4 apart
    assert merge_delay_variation([one, two]) == (3.0, None)
