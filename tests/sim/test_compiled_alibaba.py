"""The compiled core on the real trace: the first 20 minutes of the Alibaba 2017 file (``mropt
import-alibaba --workload --duration 1200``: 1,300 machines, HDFS-default placement) under ``drf`` and
``ddrf`` (E1 1, E2 2, ``bench_sim.py``'s), the compiled run against the Python engine's: the same
event log, events, clock and tables. The random workloads of ``test_compiled_drf.py`` are small; this
one has thousands of users and jobs, hundreds of demand classes and a saturated cluster, as a day
has. Skipped without ``../shared`` (set ``MROPT_SHARED``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("numba")

from mropt.importers.alibaba_workload import import_alibaba_workload  # noqa: E402
from mropt.sim.engine import Simulation  # noqa: E402
from mropt.sim.policy import make_policy  # noqa: E402

from compiled_helpers import differences, run_outcome  # noqa: E402

SHARED = Path(os.environ.get("MROPT_SHARED") or Path(__file__).resolve().parents[2].parent / "shared")
TRACE = SHARED / "traces" / "alibaba-2017" / "batch_task.csv"


@pytest.mark.slow
@pytest.mark.parametrize(("policy", "params"), [("drf", {}), ("ddrf", {"e1": 1, "e2": 2})])
def test_the_first_20_minutes_of_the_alibaba_file_run_compiled_as_by_the_python_engine(
    policy: str, params: dict[str, int]
) -> None:
    if not TRACE.exists():
        pytest.skip(f"Alibaba 2017 trace not available at {TRACE} (kept in ../shared; set MROPT_SHARED)")
    from mropt.sim.compiled.drf_engine import run_compiled

    w = import_alibaba_workload(TRACE, duration=1200.0)
    py = Simulation(w, make_policy(policy, params))
    py_rec = py.run()
    cc = Simulation(w, make_policy(policy, params))
    cc_rec = run_compiled(cc)
    assert len(cc.jobs) > 1000 and cc_rec.attempts > 100_000  # (the window is the trace's, not a toy)
    problems = differences(run_outcome(py, py_rec), run_outcome(cc, cc_rec))
    assert not problems, "\n".join(problems[:6])
