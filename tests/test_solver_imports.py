"""OR-Tools and highspy load together in one process, in either order.

OR-Tools bundles its own ``libhighs.so.1``; highspy ships one with the same soname. When
their HiGHS versions differ, whichever is loaded second fails with an undefined symbol,
which would break every process that uses both CP-SAT and PuLP's HiGHS (the harness
workers, ``make demo``). pyproject.toml pins matching versions; this test guards the pin.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SNIPPETS = {
    "highspy first": "import highspy\nfrom ortools.sat.python import cp_model\n",
    "ortools first": "from ortools.sat.python import cp_model\nimport highspy\n",
    "pulp first": "import pulp\nfrom ortools.sat.python import cp_model\n",
}
CHECK = """
m = cp_model.CpModel(); x = m.NewBoolVar('x'); m.Maximize(x)
assert cp_model.CpSolver().Solve(m) == cp_model.OPTIMAL
import pulp
p = pulp.LpProblem('t', pulp.LpMaximize); y = pulp.LpVariable('y', 0, 1); p += y
p.solve(pulp.HiGHS(msg=False)); assert pulp.value(y) == 1
print('ok')
"""


@pytest.mark.parametrize("name", SNIPPETS)
def test_cpsat_and_highs_in_one_process(name):
    result = subprocess.run([sys.executable, "-c", SNIPPETS[name] + CHECK], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
