"""Hypothesis profiles of the whole suite: deterministic by default, random on request.

pytest imports this file before any test module under ``tests/``, so the profile loaded here is
the parent of every ``@settings(...)`` a test module builds at import: a test that sets only
``max_examples`` (or ``deadline``) inherits ``derandomize`` and ``database`` from it.

* ``mropt`` (the default, what CI and ``make test`` run): ``derandomize=True`` draws the same
  examples every run (seeded from each test function's source), so a test passes or fails the
  same way on every machine and every run; no example database (``.hypothesis/`` is neither read
  nor written); no ``deadline``, since a per-example time limit fails at random on a loaded machine.
* ``explore`` (``MROPT_HYPOTHESIS=explore``, for a maintainer hunting bugs): new random examples
  each run, ten times the default's number of examples for the tests that do not set their own,
  failures saved to ``.hypothesis/`` and replayed first on the next run. See docs/testing.md.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: the environment variable that picks the profile, and its values
PROFILE_ENV = "MROPT_HYPOTHESIS"
PROFILES = ("mropt", "explore")

settings.register_profile("mropt", derandomize=True, database=None, deadline=None)
settings.register_profile(
    "explore",
    derandomize=False,
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_chosen = os.environ.get(PROFILE_ENV, "") or "mropt"
if _chosen not in PROFILES:
    raise SystemExit(f"{PROFILE_ENV}: {_chosen!r} is not a profile (one of {', '.join(PROFILES)})")
settings.load_profile(_chosen)
