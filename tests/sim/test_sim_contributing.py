"""CONTRIBUTING.md's walk-through, done once: its example policy, as written there, registers,
takes its declared parameter, runs, and launches at the hand-computed times.

The example's code block is read from CONTRIBUTING.md and run in a fresh module against a copy of
the policy table, so the example registers nowhere else.
"""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

import mropt.sim.policy as policy_module
from mropt.model.errors import InputError
from mropt.registry import Table
from mropt.sim.policy import make_policy, policies

from sim_helpers import map_job, run, starts, workload

CONTRIBUTING = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"


def _example(section: str) -> str:
    """The first ```python block under the heading ``## <section>`` of CONTRIBUTING.md."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", body, re.S)
    assert found, f"no python block under '## {section}' in CONTRIBUTING.md"
    return found.group(1)


@pytest.fixture
def newest_first(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The walk-through's module, imported against a copy of the policy table."""
    table: Table = Table("policy")
    table.update(policies())
    monkeypatch.setattr(policy_module, "_POLICIES", table)
    module = types.ModuleType("newest_first")
    exec(compile(_example("Adding a simulator policy"), str(CONTRIBUTING), "exec"), module.__dict__)
    return module


def test_the_example_registers_with_its_declared_parameter(newest_first: types.ModuleType) -> None:
    info = policies()["newest-first"]
    assert info.cls is newest_first.NewestFirst and info.needs == ("slots",)
    assert make_policy("newest-first").params == {"cap": 0}  # the default, from the registration
    with pytest.raises(InputError, match="cap"):
        make_policy("newest-first", {"cap": -1})


def test_the_newest_job_gets_each_freed_slot(newest_first: types.ModuleType) -> None:
    # one map slot; a (0-10) runs alone, then c (submitted last) before b
    nodes = [{"id": "n", "count": 1, "map_slots": 1, "reduce_slots": 0}]
    jobs = [map_job(j, 1, 10.0, submit=float(k)) for k, j in enumerate("abc")]
    _, rec = run(workload(nodes, jobs), "newest-first")
    assert [starts(rec, j)[0][0] for j in "abc"] == [0.0, 20.0, 10.0]


@pytest.mark.parametrize(("cap", "a_starts", "b_starts"), [(0, [0, 0, 10], [10]), (1, [0, 10, 20], [1])])
def test_cap_limits_a_job_to_its_running_tasks(
    newest_first: types.ModuleType, cap: int, a_starts: list[float], b_starts: list[float]
) -> None:
    # two map slots; a: 3 tasks of 10 s at 0, b: 1 task at 1. No cap: a takes both slots, b waits
    # for 10 and gets one of the two freed. cap 1: a runs one at a time, b starts on arrival.
    nodes = [{"id": "n", "count": 1, "map_slots": 2, "reduce_slots": 0}]
    jobs = [map_job("a", 3, 10.0), map_job("b", 1, 10.0, submit=1.0)]
    _, rec = run(workload(nodes, jobs), "newest-first", {"cap": cap})
    assert [s[0] for s in starts(rec, "a")] == a_starts
    assert [s[0] for s in starts(rec, "b")] == b_starts
