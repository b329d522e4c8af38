"""Benchmarks: environments built from specs, the runner, the scorer and the reports."""
