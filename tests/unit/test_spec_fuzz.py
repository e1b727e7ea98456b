"""Property test of campaign specs with hostile values (hypothesis): whatever a [[study]]'s keys
hold (numbers at and past every bound, nan, 1e-320, 1e308, integers of thousands of digits,
texts of 5,000 characters, Arabic-Indic and full-width digits, lists of thousands of values,
lists and tables nested 100,000 deep, unknown keys), `vswbench run SPEC --dry-run` answers
within 5 s with exit status 0 or 2, never "this is a bug", one line on stderr per mistake (and
the line that counts them), no long value echoed, and no namespace or /tmp/vsb-* created.

Run in-process, as a non-root user would (os.geteuid() reports 1000: were --dry-run ever
ignored, the run would be refused before building anything), with entering a namespace made an
error; `ip netns list` and /tmp/vsb-* are compared before and after each example too."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from vswbench.campaign.spec import STUDY_KEYS
from vswbench.cli.app import main
from vswbench.host.netns import Namespace
from vswbench.switches.options import known

KNOWN = known()

# 100 examples by default (the unit tier in under 2 minutes); CI raises it to 300 (.ci/run,
# docs/development.md "Running the tests")
EXAMPLES = int(os.environ.get("VSB_FUZZ_EXAMPLES", "100"))
ANSWER_S = 5.0
LONG = 5000


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)     # JSON's escapes are TOML's (\uXXXX, \n, ...)


def toml_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


WORDS = ["search", "sweep", "trial", "latency", "b2b", "rule-update", "veth", "bridge", "ovs",
         "macvlan", "shaped", "testpmd", "ovs-dpdk", "memif", "*", "p2p", "pvp", "chain",
         "pairs", "chain:3", "pairs:2", "rr", "imix", "imix:aag", "fast", "quick", "afpacket",
         "afxdp", "xdplive", "udp", "dpdk", "auto", "s_core", "bi", "pbp", "unpinned", "l3",
         "acl", "nat", "100k", "1.5M", "1G", "0", "1000/0.5", "off", "0/0", "1e9/1e9", "nan",
         "\u0661\u0660\u0660k", "\uff11\uff10\uff10k", "\u0663", "chain:\u0663", "\uff16\uff14",
         "x" * LONG, "1" * LONG, "a\u00a0b", ""]
SCALAR = st.one_of(
    st.sampled_from(WORDS).map(toml_string),
    st.text(max_size=12).map(toml_string),
    st.sampled_from([0, -1, 1, 2, 63, 64, 1518, 1519, 9018, 9019, 200, 201, 1000, 1001, 32768, 32769,
                     65536, 65537, 1_000_000, 1_000_001, 10_000_000, 10_000_001, 2**63 - 1,
                     -(2**63)]).map(str),
    st.integers().map(str),
    st.just("9" * 4000),
    st.sampled_from([1e-320, 5e-324, 0.05, 0.1, 86400.0, 86401.0, 1e308, -0.0, 0.5, 99.9,
                     100.5, math.nan, math.inf, -math.inf]).map(toml_float),
    st.floats().map(toml_float),
    st.sampled_from(["true", "false"]),
)


def option_table(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    keys = st.one_of(st.sampled_from(sorted(KNOWN)), st.text(max_size=8), st.just("k" * LONG))
    return st.dictionaries(keys, values, max_size=3).map(
        lambda d: "{ " + ", ".join(f"{toml_string(k)} = {v}" for k, v in d.items()) + " }")


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


NESTED = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
                            option_table(inner)),
    max_leaves=8,
)
RARE = st.sampled_from([9, 30, 2000, 100_000]).map(deep) | st.integers(300, 3000).map(
    lambda n: str(list(range(1, n + 1))))          # long lists: products far past the limit
VALUE = st.integers(0, 9).flatmap(lambda n: RARE if n == 0 else NESTED)   # one value in ten
# plausible values per key, so that a hostile value often stands among good ones and the
# checks of combinations (io, options, placements, counts) are reached too
PLAUSIBLE = {
    "kind": ['"search"', '"trial"', '"sweep"', '"latency"', '"b2b"', '"rule-update"',
             '["search", "latency"]'],
    "switch": ['"veth"', '"bridge"', '"ovs"', '"macvlan"', '["*"]', '"shaped"', '"testpmd"',
               '["bridge", "ovs"]'],
    "scenario": ['"p2p"', '"pvp"', '"chain"', '"chain:3"', '"pairs:2"', '"rr"'],
    "size": ["64", "[64, 1518]", '"imix"'], "rate": ['"100k"', "[1000, 2000]"],
    "burst": ["1", "[1, 32]"], "flows": ["1", "[1, 1000]"], "chain": ["[1, 2]", "3"],
    "pairs": ["2"], "placement": ['"s_core"', '["default", "pbp"]', '"unpinned"'],
    "repetitions": ["2"], "preset": ['"quick"'], "duration": ["1", "[0.5, 2]"],
    "points": ["10"], "fractions": ["[50, 90]"],
    "io": ['"xdplive"', '"afxdp"', '"udp"', '"afpacket"'],
    "options": ['{ kernel_mode = "softirq" }', '{ nf = "router" }', '{ bridge_fdb = "learn" }',
                '{ ovs_mode = "normal" }', '[{ clones = 2 }, { flow_table = "exact" }]',
                '{ dpdk_port = "memif" }'],
    "shape_pps": ['"100k"'], "trials": ["10"], "max_frames": ["1000"],
    "churn": ['"1000/0.5"', '"off"'], "profile": ["true"], "pdr_loss": ["0.5"],
    "function": ['"l3"', '["l2", "acl"]'], "table_size": ["100"], "rules": ["100"],
    "update_rate": ["2"],
}
KEYS = st.sampled_from([*STUDY_KEYS, "bogus", "Kind", "k" * LONG])


def entry(key: str) -> st.SearchStrategy[tuple[str, str]]:
    good = PLAUSIBLE.get(key)
    return st.tuples(st.just(key), st.one_of(st.sampled_from(good), VALUE) if good else VALUE)


STUDY = st.lists(KEYS.flatmap(entry), max_size=6).map(dict)
DEFAULTS = {"kind": toml_string("search"), "switch": toml_string("veth")}
HEADER = st.sampled_from(['name = "fz"'] * 6 + ['name = "bad name!"', "", "name = 3",
                                               f'name = "{"n" * LONG}"', 'name = "fz"\nbogus = 1'])


def spec_text(header: str, studies: list[dict[str, str]]) -> str:
    body = "".join("[[study]]\n" + "".join(f"{toml_string(k)} = {v}\n"
                                            for k, v in {**DEFAULTS, **s}.items())
                   for s in studies)
    return f"[campaign]\n{header}\n{body}"


def vsb_namespaces() -> set[str]:
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return {line.split()[0] for line in done.stdout.splitlines()
            if line.strip() and line.split()[0].startswith("vsb")}


def vsb_temps() -> set[str]:
    return {p.name for p in Path("/tmp").glob("vsb-*")}


def no_namespace(self: object) -> None:
    raise AssertionError("a dry run entered a namespace")


def dry_run(path: Path) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "geteuid", lambda: 1000)
        mp.setattr(Namespace, "__enter__", no_namespace)    # would end as "this is a bug"
        mp.setenv("COLUMNS", "200")
        started = time.monotonic()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["run", str(path), "--dry-run"])
        elapsed = time.monotonic() - started
    return code, out.getvalue(), err.getvalue(), elapsed


def dry_run_watched(path: Path) -> tuple[int, str, str, float, set[str]]:
    """dry_run, and the vsb namespaces and /tmp/vsb-* directories that appeared meanwhile
    (other runs on this machine may add and remove their own: only additions count)."""
    before = vsb_namespaces() | vsb_temps()
    code, out, err, elapsed = dry_run(path)
    return code, out, err, elapsed, (vsb_namespaces() | vsb_temps()) - before


COUNTED = re.compile(r"has (?:more than )?(\d+) problems:|campaign: (\d+) problems:")


def check_answer(text: str, code: int, out: str, err: str, elapsed: float) -> None:
    shown = f"{text[:600]}\n--- exit {code}, {elapsed:.1f} s, stderr:\n{err[:2000]}"
    assert elapsed < ANSWER_S, shown
    assert code in (0, 2), shown
    assert "This is a bug" not in out + err and "Traceback" not in out + err, shown
    assert "x" * 100 not in err and "1" * 100 not in err and "k" * 100 not in err, shown
    lines = err.rstrip("\n").splitlines()
    if code == 0:
        assert not err, shown
        return
    assert lines and lines[0].startswith("vswbench: error: "), shown
    counted = COUNTED.search(lines[0])
    if counted is None:
        assert len(lines) == 1, shown                    # one mistake: one line
    else:
        mistakes = int(counted.group(1) or counted.group(2))
        stopped = "more than" in lines[0]
        assert len(lines) <= 1 + mistakes + stopped, shown     # the count's line, one a mistake


@pytest.mark.timeout(60)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(HEADER, st.lists(STUDY, min_size=1, max_size=3))
def test_hostile_specs_get_a_prompt_documented_answer(tmp_path_factory, header: str,
                                                      studies: list[dict[str, str]]) -> None:
    root = tmp_path_factory.mktemp("spec")
    path = root / "s.toml"
    text = spec_text(header, studies)
    path.write_text(text)
    code, out, err, elapsed, created = dry_run_watched(path)
    if created:      # another process's run on this machine, or this one? Once more decides
        code, out, err, elapsed, created = dry_run_watched(path)
    assert not created, f"a dry run created {created}"
    check_answer(text, code, out, err, elapsed)
    event(f"exit {code}" + (f", {err.count(chr(10))} lines" if code else ""))
    assert sorted(p.name for p in root.iterdir()) == ["s.toml"], "a dry run wrote files"


PAPER_HEAD = ('[paper]\nfigure = "f"\npaper = "emmerich"\nsource = "s"\ncaption = "c"\n'
              'varies = "v"\nanalogue = "a"\ndifferences = ["d"]\n')
TABLE_KEYS = {
    "campaign": st.sampled_from(["name", "description", "out", "bogus"]),
    "paper": st.sampled_from(["figure", "paper", "source", "caption", "differences", "bogus"]),
    "reference": st.sampled_from(["id", "quantity", "value", "unit", "source", "ours",
                                  "relative_to", "bogus"]),
    "claim": st.sampled_from(["law", "source", "check", "untestable", "margin", "bogus"]),
}
CHECKS = st.sampled_from(["tput[switch=ovs] > tput[switch=bridge]", "p50[switch=ovs] rises with "
                          "burst", "tput[size=\u0666\u0664] > 1", "tput[" + "a=b," * 2000 + "]",
                          "1" * 3000 + " > 2", "x" * LONG, "tput[load=x] < 1"]).map(toml_string)


@settings(max_examples=max(100, EXAMPLES // 3), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(TABLE_KEYS)).flatmap(
    lambda table: st.tuples(st.just(table), st.dictionaries(
        TABLE_KEYS[table], st.one_of(VALUE, CHECKS), max_size=4))))
def test_hostile_campaign_and_paper_tables_get_a_prompt_documented_answer(
        tmp_path_factory, drawn: tuple[str, dict[str, str]]) -> None:
    table, values = drawn
    lines = "".join(f"{k} = {v}\n" for k, v in values.items())
    head = {"campaign": f"[campaign]\n{lines}",
            "paper": f'[campaign]\nname = "fz"\n[paper]\n{lines}',
            "reference": f'[campaign]\nname = "fz"\n{PAPER_HEAD}[[reference]]\n{lines}',
            "claim": f'[campaign]\nname = "fz"\n{PAPER_HEAD}[[claim]]\n{lines}'}[table]
    text = head + '[[study]]\nkind = "search"\nswitch = "veth"\n'
    path = tmp_path_factory.mktemp("spec") / "s.toml"
    path.write_text(text)
    code, out, err, elapsed, created = dry_run_watched(path)
    if created:
        code, out, err, elapsed, created = dry_run_watched(path)
    assert not created, f"a dry run created {created}"
    check_answer(text, code, out, err, elapsed)
