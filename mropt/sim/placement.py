"""Seeded HDFS-default replica placement for tasks that list no replicas.

HDFS's default block placement (``BlockPlacementPolicyDefault``, Hadoop 1.x): the first
replica on the writer's node, the second on a node of another rack, the third on another
node of that second rack; more replicas on random nodes. The writer is a node drawn
uniformly at random. On a cluster of one rack the replicas are distinct random nodes; on a
rack with fewer than two nodes the third replica goes to any other node. Draws come from
``numpy.random.default_rng(placement.seed)``, job by job in the workload's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.model.workload import WorkloadInstance


def hdfs_replicas(
    rng: np.random.Generator, n_tasks: int, replicas: int, node_rack: Sequence[int]
) -> list[tuple[int, ...]]:
    """``n_tasks`` replica tuples (node indices) of the HDFS default policy."""
    n_nodes = len(node_rack)
    replicas = min(replicas, n_nodes)
    racks: dict[int, list[int]] = {}
    for node, rack in enumerate(node_rack):
        racks.setdefault(rack, []).append(node)
    rack_ids = sorted(racks)
    out: list[tuple[int, ...]] = []
    for _ in range(n_tasks):
        first = int(rng.integers(n_nodes))
        chosen = [first]
        if replicas >= 2 and len(rack_ids) > 1:
            others = [r for r in rack_ids if r != node_rack[first]]
            rack = others[int(rng.integers(len(others)))]
            members = racks[rack]
            pick = rng.choice(len(members), size=min(2, len(members), replicas - 1), replace=False)
            chosen.extend(members[int(k)] for k in pick)
        while len(chosen) < replicas:
            node = int(rng.integers(n_nodes))
            if node not in chosen:
                chosen.append(node)
        out.append(tuple(chosen))
    return out


def place_replicas(workload: WorkloadInstance, node_rack: Sequence[int]) -> dict[int, list[tuple[int, ...]]]:
    """Generated replicas of every job whose first stage lists none (``workload.placement``)."""
    placement = workload.placement
    if placement is None:
        return {}
    rng = np.random.default_rng(placement.seed)
    placed: dict[int, list[tuple[int, ...]]] = {}
    for j, job in enumerate(workload.jobs):
        first = job.stages[0]
        if any(g.replicas for g in first.tasks):
            continue
        placed[j] = hdfs_replicas(rng, first.n_tasks, placement.replicas, node_rack)
    return placed
