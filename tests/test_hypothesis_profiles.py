"""The suite's hypothesis profiles (tests/conftest.py): the same examples every run by default,
also for a test that sets its own ``@settings``; random examples under ``MROPT_HYPOTHESIS=explore``."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

TESTS = Path(__file__).parent
CONFTEST = TESTS / "conftest.py"

#: the claims of the default profile; under ``MROPT_HYPOTHESIS=explore`` the examples are random
mropt_profile_only = pytest.mark.skipif(
    settings.get_current_profile_name() != "mropt",
    reason="the default profile's claims (this run's profile is MROPT_HYPOTHESIS's)",
)


def draws() -> list[int]:
    """The integers a test with its own ``@settings(max_examples=...)`` is given, in order."""
    seen: list[int] = []

    @settings(max_examples=20)
    @given(st.integers())
    def record(x: int) -> None:
        seen.append(x)

    record()
    return seen


@mropt_profile_only
def test_a_test_with_its_own_settings_is_given_the_same_examples_every_run() -> None:
    first = draws()
    assert len(set(first)) > 5  # real draws, not one value
    assert draws() == first


def test_the_suites_own_settings_inherit_the_default_profile() -> None:
    """A test module's ``@settings(max_examples=..., deadline=None)``, built at its import, is derandomized."""
    spec = importlib.util.spec_from_file_location("deadline_limits_again", TESTS / "model" / "test_deadline_limits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    own = module.test_limits_are_the_exact_values_rounded_down._hypothesis_internal_use_settings
    assert own.max_examples == 300 and own.deadline is None
    # the active profile's (mropt's, or explore's under MROPT_HYPOTHESIS=explore)
    assert (own.derandomize, own.database) == (settings.default.derandomize, settings.default.database)
    if settings.get_current_profile_name() == "mropt":
        assert own.derandomize and own.database is None
        assert settings.default.deadline is None


def test_explore_draws_at_random_and_an_unknown_profile_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Running the conftest again loads a profile: the one this run had is loaded back after."""
    active = settings.get_current_profile_name()
    try:
        monkeypatch.setenv("MROPT_HYPOTHESIS", "explore")
        runpy.run_path(str(CONFTEST))
        own = settings(max_examples=5)
        assert (own.derandomize, own.max_examples, settings.default.max_examples) == (False, 5, 1000)
        monkeypatch.setenv("MROPT_HYPOTHESIS", "random")
        with pytest.raises(SystemExit) as refused:
            runpy.run_path(str(CONFTEST))
        assert str(refused.value) == "MROPT_HYPOTHESIS: 'random' is not a profile (one of mropt, explore)"
    finally:
        settings.load_profile(active)
    assert settings.get_current_profile_name() == active
    assert settings.default.derandomize is (active == "mropt")
