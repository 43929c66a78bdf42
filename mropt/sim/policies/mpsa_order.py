"""MPSA's hunger degree (eqs. 19-20) and Algorithm 2's order of the queues (MPSA paper sec. 4.4).

The rule of :mod:`mropt.sim.policies.mpsa` (its docstring: shared slots first, the listing against
the prose), apart so that its plain slot (``Mpsa.choose``) and its accelerated one
(:mod:`mropt.sim.policies.mpsa_slots`) share it.
"""

from __future__ import annotations

import math


def hunger_degree(assigned: int, reserved: int) -> float:
    """Eqs. 19-20: 1 - assigned / reserved; for reserved = 0, 0 while nothing is held, else -inf."""
    if reserved > 0:
        return 1.0 - assigned / reserved
    return 0.0 if assigned == 0 else -math.inf


def shared_left(assigned: list[int], reserved: list[int], total: int) -> int:
    """``Mapshared``: shared slots (total - sum of reservations) minus those held beyond reservations."""
    shared = total - sum(reserved)
    return shared - sum(max(0, a - s) for a, s in zip(assigned, reserved))


def algorithm2_order(
    assigned: list[int], reserved: list[int], total: int, wants: list[bool], *, liveness_open: bool = False
) -> list[int]:
    """The queues that may take a new slot, hungriest first (Algorithm 2 before its locality test).

    ``wants[i]``: queue i has a pending task of the type. With no shared slot left only queues
    below their reservation stay (sec. 4.4), unless ``liveness_open``. Ties in hunger go to the
    lower index (the more urgent queue: callers list queues by priority, highest first).
    """
    n = len(assigned)
    cand = [i for i in range(n) if wants[i]]
    if not liveness_open and shared_left(assigned, reserved, total) <= 0:
        cand = [i for i in cand if assigned[i] < reserved[i]]
    return sorted(cand, key=lambda i: (-hunger_degree(assigned[i], reserved[i]), i))


__all__ = ["algorithm2_order", "hunger_degree", "shared_left"]
