"""Small builders for simulator tests: workloads from a few lines, a run checked by verify."""

from __future__ import annotations

from typing import Any

from mropt.model.workload import WorkloadInstance
from mropt.registry import check_params
from mropt.sim.engine import Simulation
from mropt.sim.policy import make_policy, policy_info
from mropt.sim.recorder import Recorder
from mropt.sim.verify import verify_simulation


def policy_params(name: str, **given: Any) -> dict[str, Any]:
    """Every parameter of the registered policy ``name`` as :func:`make_policy` hands them (for test subclasses)."""
    return check_params("policy", name, policy_info(name).params, given, defaults=True)


def workload(nodes: list[dict[str, Any]], jobs: list[dict[str, Any]], **extra: Any) -> WorkloadInstance:
    return WorkloadInstance.from_dict(
        {"kind": "workload", "schema_version": 1, "cluster": {"nodes": nodes}, "jobs": jobs, **extra}
    )


def mr_job(
    job_id: str, maps: list[float] | float, reduces: list[float] | float | None = None, **fields: Any
) -> dict[str, Any]:
    """A job with one map stage (a group per duration) and an optional reduce stage."""

    def groups(d: list[float] | float) -> list[dict[str, Any]]:
        return [{"duration": x} for x in d] if isinstance(d, list) else [{"duration": d}]

    stages = [{"type": "map", "tasks": groups(maps)}]
    if reduces is not None:
        stages.append({"type": "reduce", "tasks": groups(reduces)})
    return {"id": job_id, "stages": stages, **fields}


def run(
    w: WorkloadInstance, policy: str = "fifo", params: dict[str, Any] | None = None, **options: Any
) -> tuple[Simulation, Recorder]:
    """Simulate and check the outputs with the independent verify; fails the test on a problem."""
    sim = Simulation(w, make_policy(policy, params), **options)
    rec = sim.run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    return sim, rec


def attempts(rec: Recorder) -> list[tuple[str, int, int, str, float, float, str]]:
    """(job, stage, task, node, start, end, outcome) per attempt, in start order."""
    t = rec.tasks_columns()
    rows = list(
        zip(
            t["job_id"],
            t["stage"].tolist(),
            t["task"].tolist(),
            t["node"],
            t["start"].tolist(),
            t["end"].tolist(),
            t["outcome"],
        )
    )
    return sorted(rows, key=lambda r: (r[4], r[0], r[1], r[2], r[5]))


def map_job(jid: str, count: int, duration: float, submit: float = 0.0, **fields: Any) -> dict[str, Any]:
    """A map-only job of ``count`` identical tasks (``replicas=[...]``: their input nodes)."""
    task: dict[str, Any] = {"duration": duration, "count": count}
    if "replicas" in fields:
        task["replicas"] = fields.pop("replicas")
    return {"id": jid, "submit_time": submit, "stages": [{"type": "map", "tasks": [task]}], **fields}


def starts(rec: Recorder, jid: str) -> list[tuple[float, str, str | None]]:
    """(start, node, locality) of the job's attempts, in start order."""
    tasks = rec.tasks_columns()
    return sorted(
        (float(s), n, loc)
        for j, s, n, loc in zip(tasks["job_id"], tasks["start"], tasks["node"], tasks["locality"], strict=True)
        if j == jid
    )


#: a two-job workload of hand-checkable times (FIFO, event mode: j1's maps end at 10, its
#: reduce at 15; j2 ends at 20, late against its deadline 12)
TINY: dict[str, Any] = {
    "kind": "workload",
    "schema_version": 1,
    "name": "tiny",
    "cluster": {"nodes": [{"id": "n0", "map_slots": 2, "reduce_slots": 1}]},
    "jobs": [
        {
            "id": "j1",
            "deadline": 20,
            "benefit": 100,
            "stages": [
                {"type": "map", "tasks": [{"duration": 10, "count": 2}]},
                {"type": "reduce", "tasks": [{"duration": 5}]},
            ],
        },
        {"id": "j2", "deadline": 12, "benefit": 50, "stages": [{"type": "map", "tasks": [{"duration": 10}]}]},
    ],
}


def succeeded_once(rec: Recorder) -> None:
    """Every task of every job succeeded exactly once and every job finished."""
    tasks = rec.tasks_columns()
    done: dict[tuple[str, int, int], int] = {}
    for jid, stage, task, outcome in zip(tasks["job_id"], tasks["stage"], tasks["task"], tasks["outcome"], strict=True):
        if outcome == "succeeded":
            key = (jid, int(stage), int(task))
            done[key] = done.get(key, 0) + 1
    jobs = rec.jobs_columns()
    assert set(done.values()) == {1}
    assert len(done) == sum(jobs["tasks"])
    assert all(f is not None and f == f for f in jobs["finish"])


def count_assign_paths(policy: Any) -> dict[str, int]:
    """Wrap ``policy``'s ``_assign_reference`` and ``_assign_fast`` with call counters (returned, by
    ``"reference"`` / ``"fast"``): a reference test requires that the path it compares ran, alone."""
    calls = {"reference": 0, "fast": 0}
    for name, attr in (("reference", "_assign_reference"), ("fast", "_assign_fast")):
        inner = getattr(policy, attr)

        def counting(node: int, name: str = name, inner: Any = inner) -> None:
            calls[name] += 1
            inner(node)

        setattr(policy, attr, counting)
    return calls


def assert_only_path_ran(calls: dict[str, int], reference: bool) -> None:
    assert calls["reference" if reference else "fast"] > 0
    assert calls["fast" if reference else "reference"] == 0
