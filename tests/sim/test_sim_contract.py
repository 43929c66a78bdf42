"""The policy contract (``Policy``, ``SimView``) and the one attempt-time rule behind every time the engine gives.

A probe policy asks, before each launch, what the attempt would take (``next_work``: with the
straggler draw it would get; ``predicted_duration``: without), launches, and the run's table
must show exactly that time; the times are also checked against the workload's numbers worked
out by hand (duration / speed x Mumak's locality factor x the slowdown).
"""

from __future__ import annotations

import pytest

from mropt.sim.engine import Simulation
from mropt.sim.policy import Decision, Policy, make_policy, policies
from mropt.sim.speculation import make_speculation
from mropt.sim.state import ANY, MAP, NODE, REDUCE
from mropt.sim.task_states import PENDING

from sim_helpers import workload

#: three racks' worth of nodes of different speeds; the map input lives on "a-0" (rack r0)
NODES = [
    {"id": "a", "count": 2, "rack": "r0", "map_slots": 1, "reduce_slots": 1, "speed": 1.0},
    {"id": "b", "count": 2, "rack": "r1", "map_slots": 1, "reduce_slots": 1, "speed": 2.0},
]
RACK, REMOTE, SLOWDOWN = 1.5, 3.0, 4.0


def probe_workload(rate: float) -> object:
    jobs = [
        {
            "id": f"j{k}",
            "submit_time": 5.0 * k,
            "stages": [
                {"type": "map", "tasks": [{"duration": 12.0, "count": 5, "replicas": ["a-0"]}]},
                {"type": "reduce", "tasks": [{"duration": 6.0, "count": 2}]},
            ],
        }
        for k in range(4)
    ]
    timing = {"rack_factor": RACK, "remote_factor": REMOTE, "straggler_rate": rate, "straggler_slowdown": SLOWDOWN}
    return workload(NODES, jobs, timing=timing)


class Probe(Policy):
    """FIFO on one task at a time; before each launch it records what the engine says the attempt will take."""

    name = "probe"

    def __init__(self) -> None:
        super().__init__()
        self.told: dict[
            int, tuple[float, float, int, int, int]
        ] = {}  # attempt -> (next_work, predicted, job, stage, node)

    def assign(self, node: int) -> None:
        sim = self.sim
        for job in list(sim.active):
            for stype in (MAP, REDUCE):
                while sim.free[stype][node] > 0:
                    stage = sim.jobs[job].launchable(stype, sim.slowstart)
                    if stage is None:
                        break
                    # every task of a stage has the same replicas and none is re-queued: the
                    # launch takes the lowest pending task, whatever the level
                    task = list(stage.state).index(PENDING)
                    work = sim.next_work(job, stage.index, task, node)
                    predicted = sim.predicted_duration(job, stage.index, task, node)
                    aid = sim.launch(job, node, stype, ANY)
                    assert aid >= 0 and sim.running[aid].task == task
                    self.told[aid] = (work, predicted, job, stage.index, node)


def hand_time(stage: int, node: int) -> float:
    """The attempt time worked out from NODES and the replicas: a-0 holds the input, a-1 is in its rack."""
    if stage == 1:
        return 6.0 / (1.0 if node < 2 else 2.0)
    return {0: 12.0, 1: 12.0 * RACK, 2: 12.0 / 2.0 * REMOTE, 3: 12.0 / 2.0 * REMOTE}[node]


@pytest.mark.parametrize("draws", ["stream", "task"])
@pytest.mark.parametrize("rate", [0.0, 0.4])
def test_every_attempt_takes_what_next_work_said(draws: str, rate: float) -> None:
    w = probe_workload(rate)
    policy = Probe()
    rec = Simulation(w, policy, seed=3, mode="event", straggler_draws=draws).run()
    t = rec.tasks_columns()
    assert len(t["attempt"]) == len(policy.told) == 4 * 7
    slow = 0
    for aid, start, end in zip(t["attempt"].tolist(), t["start"].tolist(), t["end"].tolist(), strict=True):
        work, predicted, _, stage, node = policy.told[aid]
        assert end - start == pytest.approx(work, rel=1e-12)
        assert predicted == hand_time(stage, node)
        assert work in (predicted, predicted * SLOWDOWN)
        slow += work != predicted
    assert (slow > 0) == (rate > 0)


def test_launch_tasks_tells_what_it_started() -> None:
    # two map slots on a-0 (holds every input) and a-1: a run of launches at level NODE stops at
    # the node's slots; the tuple names the first attempt, how many, the last one's level and demand
    nodes = [{"id": "a", "count": 2, "rack": "r0", "map_slots": 2, "reduce_slots": 0, "resources": {"cpu": 4}}]
    job = {
        "id": "j",
        "stages": [
            {"type": "map", "tasks": [{"duration": 3.0, "count": 5, "replicas": ["a-0"], "demand": {"cpu": 1}}]}
        ],
    }
    seen: list[tuple[int, int, int, tuple[float, ...] | None]] = []

    class Runs(Policy):
        def assign(self, node: int) -> None:
            seen.append(self.sim.launch_tasks(0, node, MAP, NODE, count=5))

    Simulation(workload(nodes, [job]), Runs(), mode="event").run()
    assert seen[:2] == [(0, 2, NODE, (1.0,)), (-1, 0, -1, None)]


def test_every_policy_takes_the_test_switches() -> None:
    for name in policies():
        trace: list[Decision] = []
        policy = make_policy(name, reference=True, self_check=True, trace=trace)
        assert (policy.reference, policy.self_check, policy.trace is trace) == (True, True, True)
        assert make_policy(name).reference is False and make_policy(name).trace is None


class ByLatest(Policy):
    """Every slot to the latest job (a speculation rule visits jobs in arrival order)."""

    def latest_first(self) -> list[int]:
        return sorted(self.sim.active, reverse=True)

    def assign(self, node: int) -> None:
        for job in self.latest_first():
            while self.sim.launch(job, node, MAP) >= 0:
                pass


class ByLatestTold(ByLatest):
    """The same, and the rule is told the order (``Policy.job_order``)."""

    def job_order(self, slot_type: int) -> list[int]:
        return self.latest_first()


@pytest.mark.parametrize("policy,first", [(ByLatestTold, "j1"), (ByLatest, "j0")])
def test_a_speculation_rule_visits_jobs_in_the_policys_order(policy: type[ByLatest], first: str) -> None:
    # j0 and j1 each run their one map on the slow node (100 s); the fast node comes up at 1:
    # the clairvoyant rule backs up the first job in the policy's order (default: arrival) whose
    # backup gains (both do: 11 < 100), then the other once the fast node frees at 11
    nodes = [
        {"id": "slow", "map_slots": 2, "reduce_slots": 0, "speed": 0.1},
        {"id": "fast", "map_slots": 1, "reduce_slots": 0, "speed": 1.0},
    ]
    jobs = [{"id": f"j{k}", "stages": [{"type": "map", "tasks": [{"duration": 10.0}]}]} for k in range(2)]
    w = workload(nodes, jobs, faults=[{"node": "fast", "down": 0.0, "up": 1.0}])
    pol = policy()
    rec = Simulation(w, pol, mode="event", speculation=make_speculation("clairvoyant")).run()
    t = rec.tasks_columns()
    backups = [
        (j, float(s), float(e))
        for j, s, e, spec in zip(t["job_id"], t["start"], t["end"], t["speculative"], strict=True)
        if spec
    ]
    second = "j0" if first == "j1" else "j1"
    assert backups == [(first, 1.0, 11.0), (second, 11.0, 21.0)]
