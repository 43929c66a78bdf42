"""What each policy needs of its workload: declared in the policy table, checked before the run.

The declarations are read from the table (:func:`mropt.sim.policy.policies`), never from a list
kept here. For every policy and every need it declares, a tiny workload that lacks that need is
refused by ``Policy.check_input`` and by ``simulate`` (an InputError naming the policy and the
need). And the declarations are true, seen by running without the check (``Simulation``
directly): a policy that declares ``slots`` launches nothing on a cluster of resources, one that
declares ``deadlines`` accepts no job of a workload without deadlines, ``amb`` (the admission
model) cannot start on either; a policy that does not declare a need runs every job of a
workload that lacks it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mropt.model.errors import InputError
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import NEEDS, make_policy, policies
from mropt.sim.run import simulate
from mropt.sim.verify import verify_simulation

from cli_capture import run_cli


def job(k: int, *, demand: dict[str, float] | None = None, **fields: Any) -> dict[str, Any]:
    """Two 10 s maps then a 5 s reduce, submitted at k."""
    extra = {"demand": demand} if demand else {}
    return {
        "id": f"j{k}",
        "submit_time": k,
        "stages": [
            {"type": "map", "tasks": [{"duration": 10, "count": 2, **extra}]},
            {"type": "reduce", "tasks": [{"duration": 5, **extra}]},
        ],
        **fields,
    }


def workload(nodes: dict[str, Any], jobs: list[dict[str, Any]]) -> WorkloadInstance:
    return WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "cluster": {"nodes": [{"id": "n", "count": 2, **nodes}]},
            "jobs": jobs,
        }
    )


SLOTS = {"map_slots": 2, "reduce_slots": 1}
RESOURCES = {"resources": {"cpu": 4, "mem": 8}}
DUE = {"deadline": 500, "benefit": 10}
#: every need met: slots, deadlines, the admission model (one task time per stage, nodes of one shape)
FULL = workload(SLOTS, [job(k, **DUE) for k in range(3)])
#: the workload that lacks each need (and what it lacks names the need first for every policy)
LACKING = {
    "slots": workload(RESOURCES, [job(k, demand={"cpu": 1, "mem": 2}, **DUE) for k in range(3)]),
    "deadlines": workload(SLOTS, [job(k) for k in range(3)]),
    "admission": workload(SLOTS, [job(k, deadline=500) for k in range(3)]),  # no benefit
}
DECLARED = [(name, need) for name, info in policies().items() for need in info.needs]


def test_every_need_has_a_workload_that_lacks_it() -> None:
    assert set(LACKING) == set(NEEDS)
    for need, w in LACKING.items():
        assert NEEDS[need].missing(w) is not None and NEEDS[need].missing(FULL) is None
    assert DECLARED  # the table declares needs


@pytest.mark.parametrize(("name", "need"), DECLARED)
def test_a_workload_lacking_a_declared_need_is_refused_before_the_run(name: str, need: str) -> None:
    words = f"policy {name!r} needs {NEEDS[need].what}, but "
    with pytest.raises(InputError) as err:
        make_policy(name).check_input(LACKING[need])
    assert str(err.value).startswith(words) and "\n" not in str(err.value)
    if not policies()[name].needs_plan:  # seq asks for its plan first
        with pytest.raises(InputError, match="^" + words.replace("(", r"\(").replace(")", r"\)")):
            simulate(LACKING[need], name)


def _runs_nothing(name: str, w: WorkloadInstance) -> bool:
    """Run without the check: True when nothing is launched or no job is accepted (or it cannot start)."""
    try:
        rec = Simulation(w, make_policy(name), stall_limit=50).run()
    except InputError:
        return True
    jobs = rec.jobs_columns()
    return len(rec.a_id) == 0 or not any(jobs["accepted"])


@pytest.mark.parametrize(("name", "need"), [(n, d) for n, d in DECLARED if not policies()[n].needs_plan])
def test_the_declared_needs_are_true(name: str, need: str) -> None:
    assert _runs_nothing(name, LACKING[need])


@pytest.mark.parametrize("name", [n for n, info in policies().items() if not info.needs_plan])
def test_a_policy_runs_a_workload_that_lacks_only_what_it_does_not_need(name: str) -> None:
    needs = policies()[name].needs
    ran = 0
    for w in [FULL, *LACKING.values()]:
        if any(NEEDS[n].missing(w) for n in needs):
            continue
        run = simulate(w, name)
        rec = run.recorder
        assert verify_simulation(w, rec.jobs_columns(), rec.tasks_columns()).ok
        s = run.summary
        assert s["finished"] == s["accepted"] >= 2, (name, s)  # minedf-wc's admission rejects one job of FULL
        ran += 1
    assert ran >= 1  # FULL at least
    if not needs:
        assert ran == 1 + len(LACKING)


def test_fair_on_a_cluster_of_resources_is_an_input_error(tmp_path) -> None:
    # the Alibaba day without --slots: fair used to exit 0 having run nothing (every job "rejected", no reason)
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(LACKING["slots"].to_dict()))
    r = run_cli("simulate", path, "--policy", "fair")
    assert r.code == 2 and len(r.err_lines) == 1 and r.out == "", r.err
    assert "policy 'fair' needs map and reduce slots on the nodes, but the workload's nodes give resources" in r.err
    assert "(cpu, mem)" in r.err and "import-alibaba --slots N" in r.err and "drf, ddrf, delay" in r.err
    assert run_cli("simulate", path, "--policy", "drf").code == 0


def test_hei_refuses_a_history_without_task_rows(tmp_path) -> None:
    # a job-history database of a SWIM import: jobs without tasks give no demand, D or reduce cost, and
    # hei would be fair exactly: refused (one line) rather than run as fair under another name
    swim = tmp_path / "swim.tsv"
    swim.write_text("".join(f"job{i}\t{10 * i}\t10\t{1000 * (i + 1)}\t{100 * i}\t{50 * i}\n" for i in range(3)))
    assert run_cli("history", "import", tmp_path / "h.duckdb", swim).code == 0
    path = tmp_path / "w.json"
    path.write_text(json.dumps(FULL.to_dict()))
    r = run_cli("simulate", path, "--policy", "hei", "--param", f"history={tmp_path / 'h.duckdb'}")
    assert r.code == 2 and len(r.err_lines) == 1, r.err
    assert "policy 'hei': the history" in r.err and "no task rows" in r.err and "run fair" in r.err
    # no history at all stays documented as fair (not refused)
    assert run_cli("simulate", path, "--policy", "hei").code == 0
