"""Integration tests: root, real network namespaces and the built engine (conftest.py)."""
