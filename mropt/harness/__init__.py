"""Experiment harness: solver profiles (``solvers/*.toml``) and, later, runners and tables."""

from mropt.harness.profiles import SolverProfile, load_profile

__all__ = ["SolverProfile", "load_profile"]
