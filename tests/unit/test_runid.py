import pytest

from vswbench.run.ids import IFNAME_MAX
from vswbench.run.ids import RunId
from vswbench.run.ids import is_project_name
from vswbench.run.ids import new_run_id


def test_new_run_id_format(monkeypatch, tmp_path):
    monkeypatch.setenv("VSWBENCH_STATE_DIR", str(tmp_path))
    run_id = new_run_id()
    assert str(run_id).startswith("vsb") and len(str(run_id)) == 7
    int(str(run_id)[3:], 16)


def test_interface_names_fit():
    run_id = RunId("vsb1a2b")
    assert run_id.ifname("b0") == "vsb1a2bb0"
    assert len(run_id.ifname("x" * (IFNAME_MAX - 7))) == IFNAME_MAX
    with pytest.raises(ValueError):
        run_id.ifname("x" * (IFNAME_MAX - 6))


@pytest.mark.parametrize("bad", ["abc1234", "vsb12", "vsbxyz1", "VSB1234"])
def test_run_id_validated(bad):
    with pytest.raises(ValueError):
        RunId(bad)


def test_suffix_validated():
    with pytest.raises(ValueError):
        RunId("vsb0000").name("a b")


def test_project_names():
    assert is_project_name("vsb1a2ba")
    assert not is_project_name("xvsb1a2b")
    assert not is_project_name("eth0")
