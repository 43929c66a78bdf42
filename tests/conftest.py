"""Fixtures shared by the top-level test modules."""

from __future__ import annotations

import pytest

from readme_examples import Workspace


@pytest.fixture(scope="session")
def readme_workspace(tmp_path_factory) -> Workspace:
    """The folder the README's commands run in; each command runs once a session."""
    return Workspace(tmp_path_factory.mktemp("readme"))
