"""Seeded HDFS-default replica placement for tasks that list no replicas.

HDFS's default block placement (``BlockPlacementPolicyDefault``, Hadoop 1.x): the first
replica on the writer's node, the second on a node of another rack, the third on another
node of that second rack; more replicas on random nodes distinct from those. The writer is
a node drawn uniformly at random, the other rack uniformly among the other racks, the two
nodes uniformly among that rack's pairs of distinct nodes. On a cluster of one rack the
replicas are distinct random nodes; on a rack of one node the third replica goes to a
random node distinct from the first two.

The draws are vectorised (the Alibaba 2017 day places 10.5 million tasks): one
``numpy.random.default_rng(placement.seed)`` draws, column by column, the replicas of every
placed task of the workload at once (jobs in the workload's order, tasks in id order), and
each job gets a view of shape (tasks, R) of one array of node indices (int16 on a cluster of
under 32,768 nodes, else int32: 63 MB, not 126 MB, for the Alibaba day). Distinct extra
replicas are drawn by rejection (rows whose draw collides draw again), so the placement
depends only on the seed, the cluster and the task counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mropt.model.workload import WorkloadInstance


def hdfs_replicas(rng: np.random.Generator, n_tasks: int, replicas: int, node_rack: Sequence[int]) -> np.ndarray:
    """Replicas of ``n_tasks`` tasks under the HDFS default policy: node indices, shape (n_tasks, R).

    The array is int16 when every node index fits (a cluster of under 32,768 nodes), else int32.
    The draws are made in place, in 4-byte columns where the values allow (the Alibaba day's
    10.5 million tasks made 8-byte temporaries of 84 MB each): the same draws, in the same order.
    """
    n_nodes = len(node_rack)
    r_count = max(min(replicas, n_nodes), 0)
    out = np.full((n_tasks, r_count), -1, dtype=np.int16 if n_nodes < 2**15 else np.int32)
    if n_tasks == 0 or r_count == 0:
        return out
    rack_arr = np.asarray(node_rack, dtype=np.int64)
    rack_ids, rack_pos = np.unique(rack_arr, return_inverse=True)
    rack_pos = rack_pos.astype(np.int32)
    n_racks = len(rack_ids)
    out[:, 0] = rng.integers(n_nodes, size=n_tasks)
    if r_count >= 2 and n_racks > 1:
        sizes = np.bincount(rack_pos, minlength=n_racks).astype(np.int32)
        members = np.full((n_racks, int(sizes.max())), -1, dtype=np.int32)
        order = np.argsort(rack_pos, kind="stable")  # nodes by rack, in node order
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        members[rack_pos[order], np.arange(n_nodes) - starts[rack_pos[order]]] = order
        # another rack, uniform among the n_racks - 1 others
        drawn = rng.integers(n_racks - 1, size=n_tasks)
        drawn += drawn >= rack_pos[out[:, 0]]
        other = drawn.astype(np.int32)
        del drawn
        size = sizes[other]
        # a = min(floor(u * size), size - 1), u uniform in [0, 1)
        u = rng.random(n_tasks)
        u *= size
        a = u.astype(np.int32)
        del u
        np.minimum(a, size - 1, out=a)
        out[:, 1] = members[other, a]
        if r_count >= 3:
            # b = min(floor(u * max(size - 1, 1)), max(size - 2, 0)), then past a; -1 on a rack of one node
            u = rng.random(n_tasks)
            u *= np.maximum(size - 1, 1)
            b = u.astype(np.int32)
            del u
            np.minimum(b, np.maximum(size - 2, 0), out=b)
            b += b >= a
            del a
            np.minimum(b, size - 1, out=b)
            third = members[other, b]
            third[size < 2] = -1
            out[:, 2] = third
    # the columns left (single rack, racks of one node, R > 3): distinct random nodes, by rejection
    for col in range(1, r_count):
        todo = np.flatnonzero(out[:, col] < 0)
        while len(todo):
            draw = rng.integers(n_nodes, size=len(todo)).astype(np.int32)
            clash = np.zeros(len(todo), dtype=bool)
            for prev in range(r_count):
                if prev != col:
                    clash |= out[todo, prev] == draw
            ok = ~clash
            out[todo[ok], col] = draw[ok]
            todo = todo[clash]
    return out


def place_replicas(workload: WorkloadInstance, node_rack: Sequence[int]) -> dict[int, np.ndarray]:
    """Generated replicas of every job whose first stage lists none (``workload.placement``).

    A job maps to an int16 (or int32) array of shape (tasks of its first stage, R): views of one array
    drawn at once for the whole workload (see the module docstring).
    """
    placement = workload.placement
    if placement is None:
        return {}
    rng = np.random.default_rng(placement.seed)
    jobs: list[int] = []
    counts: list[int] = []
    for j, job in enumerate(workload.jobs):
        first = job.stages[0]
        if any(g.replicas for g in first.tasks):
            continue
        jobs.append(j)
        counts.append(first.n_tasks)
    every = hdfs_replicas(rng, sum(counts), placement.replicas, node_rack)
    placed: dict[int, np.ndarray] = {}
    start = 0
    for j, n in zip(jobs, counts):
        placed[j] = every[start : start + n]
        start += n
    return placed
