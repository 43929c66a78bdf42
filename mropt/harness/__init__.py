"""Experiment harness: solver profiles (``solvers/*.toml``), experiment files, isolated
worker runs, the kill-safe Parquet store, reference optima and gaps, and reports."""

from mropt.harness.profiles import SolverProfile, load_profile

__all__ = ["SolverProfile", "load_profile"]
