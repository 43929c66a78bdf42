"""The ``mpsa`` workload preset: MPSA sec. 5 and Table 2 (patterns, thirds, deadlines, cluster, pools, queues)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from mropt.instances.workload_gen import generate_workload
from mropt.model import instance_from_dict, instance_to_json
from mropt.model.errors import InputError


def _stage_types(job) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return tuple(s.type for s in job.stages)


def test_patterns_in_thirds_and_priorities_in_thirds() -> None:
    w = generate_workload("mpsa", 5)
    assert len(w.jobs) == 150
    patterns = Counter(_stage_types(j) for j in w.jobs)
    assert patterns == {
        ("map", "reduce"): 50,
        ("map", "reduce", "map", "reduce", "map", "reduce"): 50,
        ("map", "map", "reduce", "map"): 50,
    }
    assert Counter(j.priority for j in w.jobs) == {3: 50, 2: 50, 1: 50}
    # Table 2: T1 = 10 min (most urgent), T2 = 20, T3 = 40 min after submit
    relative = {3: 600.0, 2: 1200.0, 1: 2400.0}
    queue = {3: "T1", 2: "T2", 1: "T3"}
    for j in w.jobs:
        assert j.deadline == pytest.approx(j.submit_time + relative[j.priority], abs=0.11)
        assert j.queue == j.pool == queue[j.priority]


def test_sleepjob_tasks_and_cluster() -> None:
    w = generate_workload("mpsa", 0)
    assert sum(n.count for n in w.nodes) == 25
    assert {(n.map_slots, n.reduce_slots) for n in w.nodes} == {(4, 2)}
    for j in w.jobs:
        for s in j.stages:
            (g,) = s.tasks
            if s.type == "map":
                assert (g.count, g.duration) == (100, 60.0)  # 100 map tasks of 1 min (Table 2)
            else:
                assert (g.count, g.duration) == (50, 60.0)  # 50 min over the 50 reduce slots
    assert [(p.id, p.mode, p.min_maps, p.min_reduces) for p in w.pools] == [
        ("T1", "fifo", 33, 16),
        ("T2", "fifo", 33, 16),
        ("T3", "fifo", 33, 16),
    ]
    assert [q.id for q in w.queues] == ["T1", "T2", "T3"]
    assert sum(q.capacity for q in w.queues) == pytest.approx(100.0)
    assert all(q.capacity == pytest.approx(100 / 3) for q in w.queues)


def test_poisson_arrivals_at_the_rate() -> None:
    w = generate_workload("mpsa", 11, jobs=3000, arrival_rate=0.5, map_tasks=1)
    submits = np.array([j.submit_time for j in w.jobs])
    assert np.all(np.diff(submits) >= 0)
    gaps = np.diff(np.concatenate([[0.0], submits]))
    assert gaps.mean() == pytest.approx(120.0, rel=0.06)  # 0.5 jobs a minute: 2 min mean gap
    assert gaps.std() == pytest.approx(120.0, rel=0.08)  # exponential: sd = mean


def test_same_seed_same_file_and_the_round_trip() -> None:
    a = instance_to_json(generate_workload("mpsa", 4, jobs=9))
    assert a == instance_to_json(generate_workload("mpsa", 4, jobs=9))
    assert instance_to_json(instance_from_dict(json.loads(a))) == a
    assert instance_to_json(generate_workload("mpsa", 5, jobs=9)) != a


def test_bad_arrival_rate_is_one_line() -> None:
    with pytest.raises(InputError, match="parameter 'arrival_rate' must be in"):
        generate_workload("mpsa", 0, arrival_rate=0.0)


def test_cli_preset_mpsa(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from mropt.cli.main import main

    out = tmp_path / "w.json"
    assert (
        main(["generate", "workload", "--preset", "mpsa", "--arrival-rate", "0.6", "--seed", "2", "-o", str(out)]) == 0
    )
    assert out.read_text() == instance_to_json(generate_workload("mpsa", 2, arrival_rate=0.6))
