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

pytest-xdist: under ``-n N --dist loadgroup`` (``make test``) the tests of ``test_docs_commands.py``
and ``test_golden.py`` are one work unit, sent first to one worker (:class:`DocsGroupScheduling`,
chosen by path: the ``xdist_group`` mark does not group under pytest 9.2); the other tests are
shared one by one. Those tests run a documented command after the commands that write its inputs,
each at most once per worker: spread over two workers, the writers ran in both. With
``tests/history`` beside them, ``-n 2``: 87 and 88 s of CPU grouped against 112 and 113 s spread
(2026-11-26, a loaded 2-core machine).
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
DOCS_TESTS = ("tests/test_docs_commands.py::", "tests/test_golden.py::")

try:
    from xdist.scheduler import LoadGroupScheduling
except ImportError:  # pytest-xdist is not installed: no -n, nothing to schedule
    pass
else:

    class DocsGroupScheduling(LoadGroupScheduling):
        """pytest-xdist's ``--dist loadgroup``, with the tests of ``DOCS_TESTS`` in the group ``docs`` by path.

        ``pytest.mark.xdist_group`` cannot carry the group here: pytest-xdist 3.8 tells the group to the
        scheduler as an ``@group`` suffix of the node id, which pytest 9.2 no longer lets it change
        (pytest-dev/pytest-xdist#1386), so marked tests are spread as ``--dist load`` spreads them.
        """

        def _split_scope(self, nodeid: str) -> str:
            return "docs" if nodeid.startswith(DOCS_TESTS) else super()._split_scope(nodeid)

    @pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist's: -p no:xdist leaves it unknown)
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> LoadGroupScheduling | None:
        """Under ``-n N --dist loadgroup`` (``make test``), the tests of ``test_docs_commands.py`` and
        ``test_golden.py`` in one worker (one work unit, the largest, so sent first), the others spread
        one by one; each documented command, and the commands that write its inputs, then run once."""
        if config.getvalue("dist") != "loadgroup":
            return None
        return DocsGroupScheduling(config, log)
