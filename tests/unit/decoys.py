"""The file planted links point at in the output-safety tests: it must never change."""
from __future__ import annotations

from pathlib import Path

DECOY_TEXT = "root:x:0:0:decoy, standing in for /etc/passwd\n"


def make_decoy(tmp_path: Path) -> Path:
    """tmp_path/elsewhere/passwd holding DECOY_TEXT (never the real /etc/passwd)."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    path = other / "passwd"
    path.write_text(DECOY_TEXT)
    return path
