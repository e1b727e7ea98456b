import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture
def fake_engine(tmp_path) -> Path:
    """An executable stand-in for vswbench-engine (see fake_engine.py)."""
    exe = tmp_path / "vswbench-engine"
    exe.write_text(f"#!{sys.executable}\n" + (HERE / "fake_engine.py").read_text())
    exe.chmod(0o755)
    return exe


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path, monkeypatch):
    """Unit tests never write /run/vswbench."""
    monkeypatch.setenv("VSWBENCH_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture(autouse=True)
def no_vm_boots(monkeypatch):
    """Unit tests boot no VM: doctor's guest checks (host/doctor.py vm_checks) say so."""
    import vswbench.host.doctor

    monkeypatch.setattr(vswbench.host.doctor, "vm_checks",
                        lambda: {"VM guest under KVM": "not checked in unit tests",
                                 "VM guest under TCG (emulated)": "not checked in unit tests"})
