"""Measurement methods: trials, sessions, searches, load curves, b2b, calibration, statistics."""
