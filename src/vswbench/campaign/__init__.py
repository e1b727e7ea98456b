"""Campaigns: specs (TOML), suites, the runner that records every point."""
