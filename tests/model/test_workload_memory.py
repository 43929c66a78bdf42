"""A loaded workload's size (issue 32): read-only demands shared by the groups that read the same."""

from __future__ import annotations

from typing import Any

import pytest

from mropt.model import workload as workload_module
from mropt.model.workload import WorkloadInstance


def _doc(demands: list[dict[str, float]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    jobs = [
        {"id": f"j{k}", "stages": [{"type": "map", "tasks": [{"duration": 5, "count": 2, "demand": d}]}]}
        for k, d in enumerate(demands)
    ]
    if extra:
        jobs[0].update(extra)
    return {
        "kind": "workload",
        "schema_version": 1,
        "cluster": {
            "nodes": [{"id": "a", "rack": "r", "map_slots": 1, "reduce_slots": 1, "resources": {"cpu": 4, "mem": 8}}]
        },
        "jobs": jobs,
    }


def _demands(w: WorkloadInstance) -> list[Any]:
    return [job.stages[0].tasks[0].demand for job in w.jobs]


def test_equal_demands_share_one_read_only_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fresh cache: one that earlier loads left near its bound would be cleared between two groups
    monkeypatch.setattr(workload_module, "_AMOUNTS", {})
    doc = _doc([{"cpu": 1.5}, {"cpu": 1.5}, {"cpu": 2}, {"cpu": 1.5, "mem": 0.5}, {"cpu": 0.0}, {"cpu": -0.0}])
    w = WorkloadInstance.from_dict(doc)
    d = _demands(w)
    assert d[0] is d[1] and d[0] == {"cpu": 1.5}
    assert d[2] is not d[0] and d[2] == {"cpu": 2.0} and d[3] == {"cpu": 1.5, "mem": 0.5} and d[3] is not d[0]
    # -0.0 equals 0.0 but is not the same value: its own mapping
    assert d[4] is not d[5] and str(d[5]["cpu"]) == "-0.0" and str(d[4]["cpu"]) == "0.0"
    with pytest.raises(TypeError):
        d[0]["cpu"] = 3.0  # type: ignore[index]
    # a second load shares the first load's mappings; the document round-trips unchanged
    again = WorkloadInstance.from_dict(doc)
    assert _demands(again)[0] is d[0] and again.to_dict() == w.to_dict()
    # jobs without extra fields share one empty mapping; a job with its own keeps them
    extra = WorkloadInstance.from_dict(_doc([{"cpu": 1}, {"cpu": 1}, {"cpu": 1}], {"note": "x"}))
    assert extra.jobs[0].extra == {"note": "x"} and extra.jobs[1].extra is extra.jobs[2].extra == {}


def test_the_kept_demands_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workload_module, "_AMOUNTS", {})
    monkeypatch.setattr(workload_module, "_AMOUNTS_KEPT", 2)
    w = WorkloadInstance.from_dict(_doc([{"cpu": float(k % 5)} for k in range(12)]))
    assert [d["cpu"] for d in _demands(w)] == [float(k % 5) for k in range(12)]
    assert len(workload_module._AMOUNTS) <= 2
