"""Unit tests: no root, no kernel objects, no engine beyond tests/unit/fake_engine.py."""
