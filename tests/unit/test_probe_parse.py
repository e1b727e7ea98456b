import json

import pytest

from vswbench.engine.probe import parse_probe
from vswbench.engine.process import EngineError
from vswbench.measure.demo import DemoOptions
from vswbench.measure.demo import choose_backends


@pytest.mark.parametrize("raw", [
    {"type": "probe", "backends": [{"name": "afpacket", "usable": True},
                                   {"name": "udp", "usable": True},
                                   {"name": "afxdp", "usable": False, "reason": "no AF_XDP"}]},
    {"backends": {"afpacket": {"available": True}, "udp": True,
                  "afxdp": {"available": False, "reason": "no AF_XDP"}}},
    {"backends": ["afpacket", "udp", "afxdp"], "usable": ["afpacket", "udp"]},
])
def test_backend_shapes(raw):
    probe = parse_probe(json.dumps(raw))
    assert probe.usable() == ["afpacket", "udp"]
    assert probe.backend("afxdp") is not None and not probe.backend("afxdp").usable


def test_tsc_facts():
    probe = parse_probe(json.dumps({"backends": [], "tsc": {"hz": 2.596e9, "invariant": True}}))
    assert probe.tsc_hz == pytest.approx(2.596e9) and probe.tsc_invariant is True


def test_probe_as_json_line_among_others():
    text = '{"type":"warning","msg":"x"}\n{"type":"probe","backends":["udp"]}\n'
    assert parse_probe(text).usable() == ["udp"]


def test_not_json():
    with pytest.raises(EngineError):
        parse_probe("nope")


def test_demo_chooses_usable_and_explains_skips():
    probe = parse_probe(json.dumps({"backends": [
        {"name": "afpacket", "usable": True}, {"name": "afxdp", "usable": False,
                                               "reason": "no AF_XDP"}]}))
    chosen, skipped = choose_backends(DemoOptions(), probe)
    assert chosen == ["afpacket"]
    assert skipped == {"udp": "not compiled into the engine", "afxdp": "no AF_XDP"}
