"""``drf``'s run length and blocked nodes against brute force (issue 32's speed work).

``_run_length`` must give the count of the plain loop (the key ``share_key_with_tie`` of the
user's share before each task, compared with the rival's, the share summed task by task), also
where the rival's share is the user's own rounded share or within the rounding of it.
``BlockedNodes`` must answer as a plain record of each node's block would.
"""

from __future__ import annotations

import random

import pytest

from mropt.fairness.drf import share_key_with_tie
from mropt.fairness.metrics import significant
from mropt.sim.policies.blocked_nodes import BlockedNodes
from mropt.sim.policy import make_policy


def _plain_run(
    use: list[float], vec: list[float], totals: list[float], tie: float, u: int, rival: tuple, limit: int
) -> int:
    """The run length as the loop before issue 32 computed it."""
    use = list(use)
    count = 0
    while count < limit:
        key = share_key_with_tie(max(x / t for x, t in zip(use, totals)), tie, u)
        if not key < rival:
            break
        count += 1
        for k, x in enumerate(vec):
            if x:
                use[k] += x
    return count


@pytest.mark.parametrize("n_res", [2, 3])  # (two resources: the spelled-out path)
@pytest.mark.parametrize("seed", range(30))
def test_run_length_is_the_plain_loops(seed: int, n_res: int) -> None:
    rng = random.Random(seed)
    p = make_policy("drf")
    totals = [rng.choice([64.0, 1300.0, 83200.0]) for _ in range(n_res - 1)] + [rng.choice([1.0, 1300.0])]
    p._totals, p._two, p._all_positive = totals, n_res == 2, True
    u = rng.randrange(5)
    for _ in range(40):
        vec = [rng.choice([0.0, 0.5, 1.0, 3.0]) for _ in range(n_res - 1)] + [rng.choice([0.01, 0.0123, 1 / 3])]
        use = [rng.randrange(0, 40) * x for x in vec]
        p._use = [list(use)] * 5
        tie = -rng.choice([0.0, 0.5, 0.25])
        limit = rng.randrange(0, 30)
        # the rival's share: the user's rounded share after some tasks (a tie), nudged by less
        # or more than the rounding, or 0
        after = list(use)
        for _ in range(rng.randrange(0, 30)):
            after = [a + x for a, x in zip(after, vec)]
        share = max(a / t for a, t in zip(after, totals))
        nudge = rng.choice([0.0, 0.0, 3e-13, -3e-13, 2e-11, -2e-11, 1e-3])
        r = significant(share * (1 + nudge)) if rng.random() < 0.9 else 0.0
        rival = (r, -rng.choice([0.0, 0.5, 0.25]), rng.randrange(5))
        want = _plain_run(use, vec, totals, tie, u, rival, limit)
        assert p._run_length(u, vec, tie, rival, limit) == want


@pytest.mark.parametrize("seed", range(10))
def test_blocked_nodes_answer_as_a_plain_record(seed: int) -> None:
    rng = random.Random(seed)
    n, width = 12, 2
    blocked = BlockedNodes(n, width)
    record: dict[int, tuple[list[float], int, tuple[int, ...]]] = {}  # node -> its block
    epochs = [0] * n
    for step in range(400):
        op = rng.random()
        node = rng.randrange(n)
        if op < 0.4:
            free = [rng.choice([0.0, 1.0, 2.0]), rng.choice([0.0, 0.5])]
            decliners = tuple(rng.sample(range(5), rng.randrange(0, 2)))
            blocked.block(node, free, step, decliners)
            record[node] = (free, step, decliners)
            epochs[node] = step
        elif op < 0.8:
            got = blocked.take(node)
            want = record.pop(node, None)
            if want is not None:
                want = (want[0], epochs[node], want[2])
            assert got == want
        else:
            needs = [[rng.choice([0.5, 1.0, 2.0]), rng.choice([0.25, 0.5])] for _ in range(rng.randrange(0, 3))]
            got = blocked.worth_offering(needs, step)
            want = [
                v
                for v in range(n)
                if v not in record
                or record[v][2]
                or any(all(f + 1e-9 >= x for f, x in zip(record[v][0], need)) for need in needs)
            ]
            assert got == want
            for v in record:
                if v not in want:
                    epochs[v] = step
