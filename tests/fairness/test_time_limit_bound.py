"""A time-limited ``drf-milp`` reports the bound it proved.

The objective is the minimum weighted dominant share, the first leximin level ``S_1``. Once
level 1 is solved, its optimum bounds the objective of any allocation, so a run stopped at a
later level reports it as ``bound`` (it used to report none); a run stopped within level 1
has proven nothing and reports none.
"""

from __future__ import annotations

import pytest

from mropt.fairness.exact import _leximin_pulp, _solution
from mropt.instances.fairness_gen import generate_fairness
from mropt.registry import solve, verify_solution


@pytest.mark.parametrize("seed", [1, 2])
def test_a_run_stopped_after_level_1_reports_level_1_as_its_bound(seed):
    inst = generate_fairness(seed, users=5)
    status, values, info = _leximin_pulp(inst, integer=True, time_limit=None, threads=1)
    assert status == "optimal" and info["cumulative_sums"]
    stopped = _solution(inst, "drf-milp", "time_limit", values, info, {"name": "CBC", "version": ""})
    optimum = solve(inst, "drf-cpsat").objective
    assert stopped.bound == pytest.approx(optimum, rel=1e-7) and stopped.bound >= stopped.objective
    assert verify_solution(inst, stopped).ok
    nothing = _solution(
        inst, "drf-milp", "time_limit", values, {**info, "cumulative_sums": []}, {"name": "CBC", "version": ""}
    )
    assert nothing.bound is None
