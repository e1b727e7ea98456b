"""Testbeds: a scenario instantiated around a switch, and the removal of leftovers."""
