import os
from pathlib import Path

import pytest

from vswbench.engine.process import ENGINE_NAME
from vswbench.engine.process import EngineNotFound
from vswbench.engine.process import find_engine


def make_exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def layout(tmp_path):
    return {
        "venv_python": tmp_path / "venv" / "bin" / "python",
        "repo": tmp_path / "repo",
        "pathdir": tmp_path / "pathdir",
    }


def locate(layout, env=None):
    return find_engine(env=env or {}, executable=str(layout["venv_python"]),
                       repo_root=layout["repo"], search_path=str(layout["pathdir"]))


def test_env_override_wins(layout, tmp_path):
    exe = make_exe(tmp_path / "custom-engine")
    make_exe(layout["venv_python"].parent / ENGINE_NAME)
    assert locate(layout, {"VSWBENCH_ENGINE": str(exe)}) == exe


def test_env_override_must_be_executable(layout, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(EngineNotFound, match="VSWBENCH_ENGINE"):
        locate(layout, {"VSWBENCH_ENGINE": str(plain)})


def test_beside_python_before_repo(layout):
    beside = make_exe(layout["venv_python"].parent / ENGINE_NAME)
    make_exe(layout["repo"] / "engine" / "build" / ENGINE_NAME)
    assert locate(layout) == beside


def test_repo_build_before_path(layout):
    in_repo = make_exe(layout["repo"] / "engine" / "build" / ENGINE_NAME)
    make_exe(layout["pathdir"] / ENGINE_NAME)
    assert locate(layout) == in_repo


def test_path_last(layout):
    on_path = make_exe(layout["pathdir"] / ENGINE_NAME)
    assert locate(layout) == on_path


def test_not_found_says_what_to_do(layout):
    with pytest.raises(EngineNotFound, match="setup.sh"):
        locate(layout)


def test_python_symlink_not_resolved(layout, tmp_path):
    """A venv's python is a symlink to the base interpreter: look beside the link."""
    real = make_exe(tmp_path / "base" / "bin" / "python3")
    layout["venv_python"].parent.mkdir(parents=True)
    os.symlink(real, layout["venv_python"])
    beside = make_exe(layout["venv_python"].parent / ENGINE_NAME)
    assert locate(layout) == beside
