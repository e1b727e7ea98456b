"""`vswbench run --switches A,B --sizes 64` (issue 44, part 5): the quick suite's text with the
switches and sizes replaced and its budget scaled to them; bad names and sizes are exit 2 with
the catalog's choices, before anything is made. Nothing is measured (--dry-run)."""

from __future__ import annotations

import json

import pytest

from vswbench.campaign.adhoc import adhoc_campaign
from vswbench.campaign.spec import builtin
from vswbench.campaign.spec import expand
from vswbench.campaign.suites import MIN_ADHOC_BUDGET_S
from vswbench.cli import app as cli
from vswbench.errors import UsageError
from vswbench.switches.catalog import ranked_switches


def test_quick_methodology_for_the_switches_and_sizes_given() -> None:
    quick = builtin("quick")
    spec = adhoc_campaign("bridge,xdp", "64")
    (study,) = spec.studies
    (q,) = quick.studies
    assert study.switches == ("bridge", "xdp") and study.sizes == (64,)
    for key in ("kinds", "scenarios", "presets", "fractions", "durations"):
        assert getattr(study, key) == getattr(q, key), key
    assert [p.label for p in expand(spec)] == [
        p.label for p in expand(quick) if p.switch in ("bridge", "xdp") and p.size == 64]
    assert spec.budget_s == MIN_ADHOC_BUDGET_S            # two of quick's many: the floor
    every = adhoc_campaign(",".join(ranked_switches()), "64,1518,imix")
    assert every.budget_s == pytest.approx(quick.budget_s * 1.5, abs=1)   # 3 sizes for quick's 2


def test_duplicates_are_dropped_and_defaults_are_quick_s() -> None:
    spec = adhoc_campaign("xdp,bridge,xdp", None)
    assert spec.studies[0].switches == ("xdp", "bridge") and spec.studies[0].sizes == (64, 1518)
    assert set(adhoc_campaign(None, "64").studies[0].switches) == set(ranked_switches())


@pytest.mark.parametrize("switches, sizes, said", [
    ("bridge,xpd", "64", "--switches: unknown switch 'xpd' (did you mean 'xdp'?): choose from"),
    ("bridge", "63", "--sizes: frame size 63"),
    ("bridge", "big", "--sizes: 'big' is not a frame size"),
    ("bridge,,xdp", "64", "--switches 'bridge,,xdp': give a comma-separated list"),
    ("", "64", "--switches '': give a comma-separated list"),
])
def test_bad_names_and_sizes_are_named(switches, sizes, said) -> None:
    with pytest.raises(UsageError) as info:
        adhoc_campaign(switches, sizes)
    assert said in str(info.value)


def test_the_cli_runs_it_and_refuses_bad_input(tmp_path, capsys) -> None:
    assert cli.main(["run", "--switches", "bridge,xdp", "--sizes", "64", "--dry-run",
                     "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["campaign"] == "adhoc" and len(data["points"]) == 4
    out = tmp_path / "never"
    assert cli.main(["run", "--switches", "bridge,vpp", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "choose from" in err and "xdp" in err and "Traceback" not in err
    assert cli.main(["run", "--suite", "quick", "--switches", "bridge", "--dry-run"]) == 2
    assert "without a spec file or --suite" in capsys.readouterr().err
    assert not out.exists()
