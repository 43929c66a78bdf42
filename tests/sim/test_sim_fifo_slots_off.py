"""FIFO's bulk passes take the free slots off as they list them, and a segment makes its attempt inline (issue 32).

``fifo_runs._slots_taken`` lowers ``free[node]`` as it lists a node's launches (every free slot
set to 0 where each capacity is its slots and the maps outnumber the free slots; else by the
launches listed, the last node's extra slots given back, ``_give_back``), ``_with_reduces`` takes
its reduce slots off too, and both start their segments with ``LaunchRuns.slots_taken_off`` set, so
``LaunchRuns.segment`` does not lower them a task at a time. ``segment`` opens a batch without
``Attempt.__init__`` (``object.__new__``, its slots set inline): every slot is set, as the
constructor would set it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
import test_sim_fifo_maps_alone
import test_sim_fifo_with_reduces

from mropt.sim.attempts import Attempt
from mropt.sim.engine import Simulation
from mropt.sim.launch_runs import LaunchRuns
from mropt.sim.policies import fifo_runs
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP, NONE, REDUCE, RUNNING

from sim_helpers import fifo_same_as_plain, workload


def watch(monkeypatch: pytest.MonkeyPatch, seen: Counter[str]) -> list[list[list[int]]]:
    """After each bulk pass: ``slots_taken_off`` is off again and every slot type's free slots are its slots
    less its running attempts (each node >= 0); the free map slots after each pass are returned."""
    after: list[list[list[int]]] = []
    maps_alone, with_reduces, slots_taken, give_back = (
        fifo_runs._maps_alone,
        fifo_runs._with_reduces,
        fifo_runs._slots_taken,
        fifo_runs._give_back,
    )

    def checked(answer: bool, runs: LaunchRuns) -> bool:
        sim = runs.sim
        assert runs.slots_taken_off is False
        for stype in (MAP, REDUCE):
            free = sim.free[stype]
            assert min(free) >= 0 and sum(free) == sim.total_slots[stype] - sim.busy[stype], (stype, free)
        after.append([list(sim.free[MAP]), list(sim.free[REDUCE])])
        return answer

    def alone(policy: Any, nodes: Sequence[int], runs: LaunchRuns) -> bool:
        return checked(maps_alone(policy, nodes, runs), runs)

    def reduces(policy: Any, nodes: Sequence[int], runs: LaunchRuns, map_nodes: Sequence[int] | None) -> bool:
        seen["with reduces"] += 1
        return checked(with_reduces(policy, nodes, runs, map_nodes), runs)

    def listed(runs: LaunchRuns, nodes: Sequence[int], room: Any, wanted: int | None) -> list[int]:
        seen["every free slot" if room is None and wanted is None else "counted"] += 1
        return slots_taken(runs, nodes, room, wanted)

    def given(runs: LaunchRuns, taken: list[int], n: int) -> None:
        seen["given back"] += 1
        give_back(runs, taken, n)

    monkeypatch.setattr(fifo_runs, "_maps_alone", alone)
    monkeypatch.setattr(fifo_runs, "_with_reduces", reduces)
    monkeypatch.setattr(fifo_runs, "_slots_taken", listed)
    monkeypatch.setattr(fifo_runs, "_give_back", given)
    return after


def test_the_last_nodes_extra_slot_is_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 nodes of 2 map slots, one job of 3 maps at 0: 3 maps remain of 4 slots, so the list stops at
    node 1's two slots ([0, 0, 1, 1]); the fourth is given back, node 1 keeps a free slot."""
    seen: Counter[str] = Counter()
    after = watch(monkeypatch, seen)
    job = {"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 3}]}]}
    w = workload([{"id": "n", "count": 2, "map_slots": 2, "reduce_slots": 1}], [job])
    fifo_same_as_plain(w)
    assert after[0][0] == [0, 1]
    assert seen["given back"] == 1


def test_random_bulk_passes_keep_the_slot_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random workloads of ``test_sim_fifo_maps_alone`` (mixed slot counts, nodes down and up) and
    of ``test_sim_fifo_with_reduces`` (one reduce slot count): the plain pass's event log, and the
    counts hold after every bulk pass, on each of its paths."""
    seen: Counter[str] = Counter()
    watch(monkeypatch, seen)
    rng = random.Random("fifo-slots-off")
    for _ in range(40):
        fifo_same_as_plain(test_sim_fifo_maps_alone.random_workload(rng))
    for _ in range(40):
        nodes = [
            {"id": f"n{i}", "rack": f"r{i % 3}", "map_slots": rng.randint(1, 3), "reduce_slots": rng.choice([1, 2])}
            for i in range(rng.randint(2, 14))
        ]
        nodes = [dict(n, reduce_slots=nodes[0]["reduce_slots"]) for n in nodes]
        fifo_same_as_plain(workload(nodes, test_sim_fifo_with_reduces.random_jobs(rng)))
    for path in ("every free slot", "counted", "given back", "with reduces"):
        assert seen[path] > 5, seen


def test_a_segments_batch_has_every_slot_its_constructor_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each attempt a segment opens reads as ``Attempt(...)`` made it, with the batch's members."""
    opened: list[tuple[dict[str, Any], int]] = []  # each opened attempt's slots, read as it opens
    segment = LaunchRuns.segment

    def kept(self: LaunchRuns, job: int, stype: int, nodes: list[int]) -> None:
        first = self.sim.next_attempt
        segment(self, job, stype, nodes)
        o = self.sim.batches.open
        if o is not None and o.id == first:
            opened.append(({name: getattr(o, name) for name in Attempt.__slots__}, len(nodes)))

    monkeypatch.setattr(LaunchRuns, "segment", kept)
    jobs = [
        {"id": f"j{i}", "submit_time": float(i), "stages": [{"type": "map", "tasks": [{"duration": 3.0, "count": c}]}]}
        for i, c in enumerate([5, 1, 4, 2])
    ]
    w = workload([{"id": "n", "count": 3, "map_slots": 2, "reduce_slots": 1}], jobs)
    Simulation(w, make_policy("fifo"), mode="event").run()
    assert {c > 1 for _, c in opened} == {True, False}
    # the plain rule's attempts (no segments) say what each member is: job, stage, task, node, start, end
    rows = Simulation(w, make_policy("fifo", reference=True), mode="event").run().ended_attempts.rows()
    plain = {
        int(i): (int(j), int(st), int(t), int(n), float(a), float(b))
        for i, j, st, t, n, a, b in zip(*(rows[k] for k in ("id", "job", "stage", "task", "node", "start", "end")))
    }
    for o, c in opened:
        nodes = o["nodes"] if c > 1 else [o["node"]]
        for m in range(c):
            member = (o["job"], o["stage"], o["task"] + m, nodes[m], o["start"], o["start"] + o["work"])
            assert plain[o["id"] + m] == member, (o["id"] + m, member)
    for o, c in opened:
        ref = Attempt(
            o["id"], o["job"], o["stage"], o["task"], o["node"], o["type"], o["start"], NONE, False, o["work"], None
        )
        ref.end = o["start"] + o["work"]
        if c > 1:
            ref.n = ref.live = c
            ref.tasks = range(o["task"], o["task"] + c)
            ref.nodes = o["nodes"]
        assert o == {name: getattr(ref, name) for name in Attempt.__slots__}


def test_a_segment_of_64_tasks_or_more_sets_its_states_running() -> None:
    """Segments of fewer than 64 tasks set their tasks' states from a bytearray made once
    (``launch_runs._RUNNINGS``), longer ones repeat one: 70 maps on a node of 80 slots, then 5."""
    jobs = [
        {"id": "a", "submit_time": 0.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 70}]}]},
        {"id": "b", "submit_time": 1.0, "stages": [{"type": "map", "tasks": [{"duration": 2.0, "count": 5}]}]},
    ]
    w = workload([{"id": "n", "count": 1, "map_slots": 80, "reduce_slots": 1}], jobs)
    sim = Simulation(w, make_policy("fifo"), mode="event")
    states: list[bytes] = []
    segment = sim.offers._runs.segment  # type: ignore[attr-defined]

    def kept(job: int, stype: int, nodes: list[int]) -> None:
        segment(job, stype, nodes)
        states.append(bytes(sim.jobs[job].stages[0].state))

    sim.offers._runs.segment = kept  # type: ignore[attr-defined]
    same = Simulation(w, make_policy("fifo", reference=True), mode="event").run().event_log_hash()
    assert sim.run().event_log_hash() == same
    assert states == [bytes([RUNNING]) * 70, bytes([RUNNING]) * 5]
