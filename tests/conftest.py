"""Shared by the unit and integration tests: tests/ on sys.path, so that both import the report's
fixture stores (report_fixtures.py: invented numbers, never measurements) as a plain module."""

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
