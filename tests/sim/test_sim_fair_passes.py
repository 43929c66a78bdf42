"""``FairOffers._assign_fast``'s passes, one slot type at a time, and ``_launched``'s steps inline.

Hadoop 1.0.3's ``FairScheduler.assignTasks`` takes one task at a time of the type it chooses: MAP
where the tracker reported no more maps than reduces, else REDUCE, until that type is rejected (its
cap, every runnable task of it running, or no job launching one), then the other. The reported
counts are the heartbeat's, so the choice does not change between rejections: the fast heartbeat
runs a pass of the first type, then one of the other (without assignmultiple, one task in all).
It also makes ``_launched``'s steps (the running counts, the job's comparator key, the pool's place)
in its own body, unless a subclass has a ``_launched`` of its own (``Fair.inline_launched``), which
it then calls. Both forms must give the event log of the plain rule (``Fair._assign_reference``),
on heartbeats that launch both types in either order.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from mropt.sim.engine import Simulation
from mropt.sim.policies.fair import Fair
from mropt.sim.policy import make_policy
from mropt.sim.state import MAP, REDUCE

from sim_helpers import fair_params, policy_params, pooled_workload


class _Spied(Fair):
    """A Fair that records, per heartbeat, the slot types of its launches in order (a spy on the
    engine's ``launch_tasks``, which the heartbeat reads from the engine at each call)."""

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.orders: Counter[tuple[int, ...]] = Counter()
        launch_tasks, assign = sim.launch_tasks, self.assign
        got: list[int] = []

        def spy(job: int, node: int, slot_type: int, level: int, count: int = 1) -> Any:
            launched = launch_tasks(job, node, slot_type, level, count)
            if launched[0] >= 0:
                got.append(slot_type)
            return launched

        def heartbeat(node: int) -> None:
            got.clear()
            assign(node)
            self.orders[tuple(got)] += 1

        sim.launch_tasks = spy
        self.assign = heartbeat  # type: ignore[method-assign]


class _OwnLaunched(_Spied):
    """A Fair with a ``_launched`` of its own (counting its calls): the heartbeat must call it."""

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.launched_calls = 0

    def _launched(self, pool: Any, job: int, stype: int) -> None:
        self.launched_calls += 1
        super()._launched(pool, job, stype)


class _OwnKey(Fair):
    """A Fair with a ``_job_key`` of its own (counting its calls): the heartbeat and ``_refresh_keys``
    must call it."""

    def start(self, sim: Any) -> None:
        super().start(sim)
        self.key_calls = 0

    def _job_key(self, pool: Any, job: int, stype: int) -> tuple[Any, ...]:
        self.key_calls += 1
        return super()._job_key(pool, job, stype)


def test_the_steps_are_inline_only_for_fairs_own_launched_and_job_key() -> None:
    rng = random.Random("fair-passes-flag")
    for _ in range(3):
        w = pooled_workload(rng)
        params = fair_params(rng)
        fair = make_policy("fair", params)
        own, key = _OwnLaunched(**policy_params("fair", **params)), _OwnKey(**policy_params("fair", **params))
        assert isinstance(fair, Fair)
        logs = {Simulation(w, p, seed=5, stall_limit=300).run().event_log_hash() for p in (fair, own, key)}
        plain = Simulation(w, make_policy("fair", params, reference=True), seed=5, stall_limit=300).run()
        assert logs == {plain.event_log_hash()}, (params, w)
        assert fair.inline_launched and not own.inline_launched and not key.inline_launched
        assert own.launched_calls > 0 and key.key_calls > 0


def test_both_passes_in_either_order_give_the_plain_rules_log() -> None:
    """On seeded random pooled workloads (fifo and fair pools, priorities, weights, caps, assignmultiple
    off, preemption): the default heartbeat (steps inline) and a subclass with its own ``_launched``
    give the plain rule's event log; the subclass's ``_launched`` ran once a launch; heartbeats that
    launched a map and a reduce, in each order, were among them."""
    rng = random.Random("fair-passes")
    orders: Counter[tuple[int, ...]] = Counter()
    for _ in range(20):
        w = pooled_workload(rng)
        params = fair_params(rng)
        plain = Simulation(w, make_policy("fair", params, reference=True), seed=5, stall_limit=300).run()
        spied = _Spied(**policy_params("fair", **params))
        own = _OwnLaunched(**policy_params("fair", **params))
        for policy in (spied, own):
            rec = Simulation(w, policy, seed=5, stall_limit=300).run()
            assert rec.event_log_hash() == plain.event_log_hash(), (params, w)
        assert spied.inline_launched and not own.inline_launched
        assert own.launched_calls == sum(len(got) * n for got, n in own.orders.items()) > 0
        assert own.orders == spied.orders
        orders.update(spied.orders)
    assert (MAP, REDUCE) in {(got[0], got[-1]) for got in orders if len(got) > 1}, orders
    assert (REDUCE, MAP) in {(got[0], got[-1]) for got in orders if len(got) > 1}, orders
