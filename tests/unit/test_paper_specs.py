"""The paper specs (specs/papers/): every one parses, names its figure after its file, carries a
source for every reference value and claim; bad [paper] tables are refused with exit 2; claims
are judged from measured points (synthetic points here, labelled as such), never from the spec."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vswbench.campaign.paper import PAPERS
from vswbench.campaign.paper import parse_check
from vswbench.campaign.spec import load_spec
from vswbench.campaign.spec import parse_spec
from vswbench.cli.app import cli
from vswbench.cli.app import main
from vswbench.errors import UsageError
from vswbench.report.paper_claims import FAILS
from vswbench.report.paper_claims import HOLDS
from vswbench.report.paper_claims import UNTESTABLE
from vswbench.report.paper_claims import judge
from vswbench.report.paper_claims import overall
from vswbench.report.paper_claims import references
from vswbench.results.points import StoredResults
from vswbench.results.store import StoredPoint

SPECS = Path(__file__).resolve().parents[2] / "specs" / "papers"
PAPER_SPECS = sorted(SPECS.glob("*.toml"))


def test_there_are_at_least_ten_paper_specs() -> None:
    assert len(PAPER_SPECS) >= 10


@pytest.mark.parametrize("path", PAPER_SPECS, ids=lambda p: p.stem)
def test_paper_spec_parses_and_names_its_figure(path: Path) -> None:
    spec = load_spec(path)
    assert spec.paper is not None, f"{path.name} has no [paper] table"
    p = spec.paper
    assert p.figure == path.stem, "a paper spec is named after its figure"
    assert spec.name == p.figure
    assert p.paper in PAPERS
    assert "Fig" in p.source or "Table" in p.source, "the source names the figure or table"
    header = path.read_text().splitlines()[0]
    authors = p.paper_title.split(",")[0]              # "Emmerich et al.", "Sattar and Matrawy"
    assert header.startswith("#") and header[2:].startswith(authors), \
        "the header comment names the paper by its authors (not by its internal file name)"
    assert not re.search(r"\b\d{3}_", header), header
    for r in p.references:
        assert r.source.strip() and r.unit.strip(), f"reference {r.id} needs a source and a unit"
    assert p.claims, "every figure states at least one law"
    for c in p.claims:
        assert c.source.strip()
        assert (c.check is None) != (c.untestable is None)
    assert spec.points(), "the spec measures something"


def _bad(extra: str) -> str:
    return ('[campaign]\nname = "x"\n[[study]]\nkind = "search"\nswitch = "bridge"\n'
            '[paper]\nfigure = "x"\npaper = "emmerich"\nsource = "Table 1"\ncaption = "c"\n'
            'varies = "v"\nanalogue = "a"\ndifferences = ["d"]\n' + extra)


@pytest.mark.parametrize("extra, message", [
    ('[[reference]]\nid = "a"\nquantity = "q"\nvalue = 1.0\nunit = "Mpps"\n', "source"),
    ('[[reference]]\nid = "a"\nquantity = "q"\nvalue = "x"\nunit = "u"\nsource = "s"\n',
     "not a number"),
    ('[[claim]]\nlaw = "l"\nsource = "s"\ncheck = "tput[switch=ovs] >> 3"\n', "not a check"),
    ('[[claim]]\nlaw = "l"\nsource = "s"\ncheck = "speed[switch=ovs] > 3"\n', "unknown metric"),
    ('[[claim]]\nlaw = "l"\nsource = "s"\n', "either check"),
    ('[[claim]]\nlaw = "l"\nsource = "s"\ncheck = "tput[colour=red] > 1"\n', "unknown key"),
    ('[[reference]]\nid = "a"\nquantity = "q"\nvalue = 1\nunit = "u"\nsource = "s"\n'
     'relative_to = "b"\n', "no reference has id"),
])
def test_bad_paper_tables_are_refused(extra: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_spec(_bad(extra))


def test_bad_paper_spec_exits_2_in_the_cli(tmp_path: Path) -> None:
    d = tmp_path / "papers"
    d.mkdir()
    (d / "x.toml").write_text(_bad('[[claim]]\nlaw = "l"\nsource = "s"\n'))
    assert main(["run", str(d), "--dry-run"]) == 2


def test_directory_dry_run_lists_every_spec() -> None:
    result = CliRunner().invoke(cli, ["run", str(SPECS), "--dry-run"])
    assert result.exit_code == 0, result.output
    for path in PAPER_SPECS:
        assert path.stem in result.output


# -- verdicts from (synthetic, NOT MEASURED) points ------------------------------------------
def _point(key: str, kind: str, params: dict, result: dict) -> StoredPoint:
    return StoredPoint("fixture", "vsb0000", key, key, {"kind": kind, **params}, kind, "done",
                       result, None, None, "2026-01-01T00:00:00+0000")


def _fixture() -> StoredResults:
    """FIXTURE, NOT A MEASUREMENT: two switches' searches, trials at two rates."""
    pts = [_point("a", "search", {"switch": "ovs", "scenario": "p2p", "size": 64},
                  {"ndr_pps": 200_000.0}),
           _point("b", "search", {"switch": "bridge", "scenario": "p2p", "size": 64},
                  {"ndr_pps": 150_000.0})]
    for sw, base in (("ovs", 30.0), ("veth", 10.0)):
        for rate, extra in ((100.0, 20.0), (10_000.0, 5.0)):
            p50 = base + (extra if sw == "ovs" else 5.0)
            lat = {"p50": p50, "p99": 2 * p50, "max": 100.0}
            pts.append(_point(f"{sw}{rate}", "trial", {"switch": sw, "scenario": "p2p",
                                                       "size": 576, "rate": rate},
                              {"achieved_pps": rate, "latency_us": lat}))
    return StoredResults(Path("fixture"), tuple(pts), ())


def _claim(check: str):
    spec = parse_spec(_bad(f'[[claim]]\nlaw = "l"\nsource = "s"\ncheck = "{check}"\n'))
    assert spec.paper is not None
    return spec.paper.claims[0]


def test_comparison_verdicts_follow_the_measured_values() -> None:
    data = _fixture()
    assert judge(_claim("tput[switch=ovs,kind=search] > tput[switch=bridge]"),
                 data).verdict == HOLDS
    assert judge(_claim("tput[switch=bridge] > tput[switch=ovs,kind=search]"),
                 data).verdict == FAILS
    assert judge(_claim("tput[switch=ovs,kind=search] > 1.5 * tput[switch=bridge]"),
                 data).verdict == FAILS
    mixed = judge(_claim("tput[switch=ovs] > tput[switch=bridge]"), data)
    assert mixed.verdict == UNTESTABLE and "setups match" in mixed.detail
    missing = judge(_claim("tput[switch=ovs-dpdk] > tput[switch=ovs]"), data)
    assert missing.verdict == UNTESTABLE and "no finished point" in missing.detail


def test_delay_subtracts_the_baseline_and_trends_compare_ends() -> None:
    data = _fixture()
    v = judge(_claim("delay_p50[switch=ovs] falls with rate"), data)
    assert v.verdict == HOLDS            # 50 - 15 = 35 us at 100 pps, 35 - 15 = 20 at 10k
    assert "rate=100" in v.detail and "rate=10000" in v.detail
    assert judge(_claim("delay_p50[switch=ovs] rises with rate"), data).verdict == FAILS
    assert judge(_claim("p50[switch=ovs,rate=100] > p50[switch=veth,rate=100]"),
                 data).verdict == HOLDS


def test_overall_and_references() -> None:
    spec = parse_spec(_bad(
        '[[reference]]\nid = "b"\nquantity = "bridge"\nvalue = 0.19\nunit = "Mpps"\n'
        'source = "Table 1"\nours = "tput[switch=bridge]"\n'
        '[[reference]]\nid = "o"\nquantity = "ovs"\nvalue = 0.27\nunit = "Mpps"\n'
        'source = "Table 1"\nours = "tput[switch=ovs,kind=search]"\nrelative_to = "b"\n'
        '[[claim]]\nlaw = "l"\nsource = "s"\nuntestable = "needs NICs"\n'))
    assert spec.paper is not None
    rows = references(spec.paper, _fixture())
    assert rows[1].theirs_normalised == "1.42 x" and rows[1].ours_normalised == "1.33 x"
    verdicts = [judge(c, _fixture()) for c in spec.paper.claims]
    assert overall(verdicts) == UNTESTABLE
    assert verdicts[0].detail == "needs NICs"


def test_check_grammar() -> None:
    c = parse_check("2 * p99[scenario=pvp,fraction=90] >= p50[load=overload]")
    assert c.op == ">=" and c.left.factor == 2.0 and c.right is not None
    assert parse_check("tput[nf=ovs] falls with chain").trend == "falls"
    with pytest.raises(ValueError):
        parse_check("tput[] rises with colour")


def test_load_metrics_of_a_latency_point() -> None:
    """FIXTURE, NOT A MEASUREMENT: a latency point's loads at 50, 100, 200 % of its NDR."""
    loads = [{"offered_pps": 50e3, "achieved_pps": 50e3, "lost": 0, "fraction_of_ndr": 0.5,
              "latency_us": {"p50": 10.0, "p99": 12.0, "max": 20.0}},
             {"offered_pps": 100e3, "achieved_pps": 100e3, "lost": 0, "fraction_of_ndr": 1.0,
              "latency_us": {"p50": 15.0, "p99": 30.0, "max": 40.0}},
             {"offered_pps": 200e3, "achieved_pps": 130e3, "lost": 70_000,
              "fraction_of_ndr": 2.0, "latency_us": {"p50": 900.0, "p99": 990.0, "max": 999.0}}]
    data = StoredResults(Path("fixture"), (
        _point("l", "latency", {"switch": "ovs", "scenario": "p2p", "size": 64},
               {"ndr_pps": 100e3, "points": loads}),), ())
    assert judge(_claim("peak[switch=ovs] > lossless[switch=ovs]"), data).verdict == HOLDS
    assert judge(_claim("overload[switch=ovs] < peak[switch=ovs]"), data).verdict == FAILS
    assert judge(_claim("p50[switch=ovs] rises with fraction"), data).verdict == HOLDS
    assert judge(_claim("max[fraction=200] > 10 * max[fraction=100]"), data).verdict == HOLDS
    assert judge(_claim("max[fraction=200] > 30 * max[fraction=100]"), data).verdict == FAILS
    assert judge(_claim("p50[load=lossless] < p50[load=overload]"), data).verdict == HOLDS


def test_trials_at_several_rates_make_one_load_curve() -> None:
    """FIXTURE, NOT A MEASUREMENT: trials at 10k, 100k, 1M pps offered through one setup."""
    pts = tuple(_point(f"t{rate}", "trial", {"switch": "ovs", "scenario": "pvp", "size": 64,
                                             "rate": rate},
                       {"achieved_pps": got, "lost": lost, "latency_us": {"p50": p50}})
                for rate, got, lost, p50 in ((10e3, 10e3, 0, 20.0), (100e3, 80e3, 40_000, 300.0),
                                             (1e6, 120e3, 1_760_000, 900.0)))
    data = StoredResults(Path("fixture"), pts, ())
    assert judge(_claim("peak[scenario=pvp] > lossless[scenario=pvp]"), data).verdict == HOLDS
    assert judge(_claim("lossless[scenario=pvp] > 20000"), data).verdict == FAILS
    assert judge(_claim("p50[load=overload] > 10 * p50[load=lossless]"), data).verdict == HOLDS
    assert judge(_claim("p50[scenario=pvp] rises with rate"), data).verdict == HOLDS
    two = StoredResults(Path("fixture"), pts + (_point(
        "other", "trial", {"switch": "bridge", "scenario": "pvp", "size": 64, "rate": 10e3},
        {"achieved_pps": 10e3, "lost": 0}),), ())
    mixed = judge(_claim("peak[scenario=pvp] > 1"), two)
    assert mixed.verdict == UNTESTABLE and "load curves match" in mixed.detail


def test_repetitions_decide_only_when_their_ranges_agree() -> None:
    """FIXTURE, NOT A MEASUREMENT: three repetitions of two switches' searches."""
    def reps(ndrs_a: list[float], ndrs_b: list[float]) -> StoredResults:
        pts = []
        for i, (x, y) in enumerate(zip(ndrs_a, ndrs_b)):
            pts.append(_point(f"a{i}", "search", {"switch": "ovs", "scenario": "p2p",
                                                   "repetition": i or None}, {"ndr_pps": x}))
            pts.append(_point(f"b{i}", "search", {"switch": "bridge", "scenario": "p2p",
                                                   "repetition": i or None}, {"ndr_pps": y}))
        for p in pts:                              # repetition 0 is stored without the key
            p.params.pop("repetition") if p.params.get("repetition") is None else None
        return StoredResults(Path("fixture"), tuple(pts), ())
    claim = _claim("tput[switch=ovs] > tput[switch=bridge]")
    assert judge(claim, reps([200e3, 210e3, 190e3], [100e3, 120e3, 110e3])).verdict == HOLDS
    assert judge(claim, reps([90e3, 95e3, 80e3], [100e3, 120e3, 110e3])).verdict == FAILS
    mixed = judge(claim, reps([200e3, 100e3, 150e3], [120e3, 110e3, 130e3]))
    assert mixed.verdict == UNTESTABLE and "overlap" in mixed.detail
    assert "median of 3: 100.0 to 200.0" in mixed.detail


def test_paper_specs_follow_the_json_schema() -> None:
    import json
    import tomllib

    import jsonschema

    schema = json.loads((SPECS.parents[1] / "src" / "vswbench" / "schemas" /
                         "campaign-spec.schema.json").read_text())
    for path in PAPER_SPECS:
        jsonschema.validate(tomllib.loads(path.read_text()), schema)
    bad = tomllib.loads(_bad('[[reference]]\nid = "a"\nquantity = "q"\nvalue = 1.0\n'
                             'unit = "u"\n'))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
