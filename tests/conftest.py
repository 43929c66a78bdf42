"""The whole suite's settings: hypothesis profiles, and the documented commands' tests in one xdist worker.

Hypothesis: deterministic by default, random on request.

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

pytest-xdist: under ``-n N`` the tests of ``test_docs_commands.py`` and ``test_golden.py`` run in
one worker (``--dist loadgroup``, group ``docs``), first; the other tests are shared as ``--dist
load`` shares them. Those tests run a documented command after the commands that write its inputs,
each at most once per worker: spread over two workers, the writers ran in both (16 s of CPU of 77
for the two files, 2026-11-26).
"""

from __future__ import annotations

import os

import pytest
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


#: the tests that run the documented commands, in one workspace per worker (tests/doc_examples.py)
DOCS_TESTS = ("test_docs_commands.py", "test_golden.py")


def pytest_configure(config: pytest.Config) -> None:
    """Under ``-n N`` (pytest-xdist's ``--dist load``), ``--dist loadgroup``: the same, except that the
    tests of the group ``docs`` all run in one worker, so that a documented command a test needs
    first (the writer of its input) runs once a session, not once in each worker."""
    if config.getoption("dist", "no") == "load":
        config.option.dist = "loadgroup"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker under ``loadgroup``: the documented commands' tests in the group ``docs``,
    collected first, so that their worker starts with them and the other one takes the rest."""
    if not config.getoption("loadgroup", False):
        return
    docs = [item for item in items if item.path.name in DOCS_TESTS]
    for item in docs:
        item.add_marker(pytest.mark.xdist_group("docs"))
    items[:] = docs + [item for item in items if item.path.name not in DOCS_TESTS]
