"""What a long replay keeps in memory (issue 32: the Alibaba 2017 day under 1 GB).

The HDFS replica draws are the same draws as before they were made in place (hashes pinned
from the int64 code they replaced), in half the peak memory; a batch keeps 4 bytes a member
for its tasks and nodes until the tables are built.
"""

from __future__ import annotations

import hashlib
import tracemalloc

import numpy as np
import pytest

from mropt.sim.engine import Simulation
from mropt.sim.placement import hdfs_replicas
from mropt.sim.policy import make_policy

from sim_helpers import workload

#: (tasks, replicas, rack of each node, seed) -> SHA-256 (first 16 hex digits) of the int32 bytes
#: drawn by the code before this change (int64 temporaries, int32 output)
PINNED = [
    ((5000, 3, [0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 3], 0), "eec2d3d9c8a4a05f"),
    ((3000, 2, [0, 1, 2, 3], 7), "fd0af65c9c4c512a"),
    ((2000, 5, [0, 0, 1, 1, 1, 2, 2, 2, 2], 0), "12d8f0ff546d6bf0"),
    ((4000, 3, [r for r in range(13) for _ in range(100)], 7), "842eea87d3964056"),
    ((1000, 3, [0] * 10, 0), "08f96103308defaf"),
]


@pytest.mark.parametrize(("case", "digest"), PINNED)
def test_replica_draws_are_the_pinned_ones(case: tuple, digest: str) -> None:
    n, r, racks, seed = case
    out = hdfs_replicas(np.random.default_rng(seed), n, r, racks)
    assert hashlib.sha256(out.astype(np.int32).tobytes()).hexdigest()[:16] == digest


def test_replicas_narrow_to_int16_below_32768_nodes() -> None:
    assert hdfs_replicas(np.random.default_rng(0), 10, 3, [0, 1] * 650).dtype == np.int16
    big = hdfs_replicas(np.random.default_rng(0), 10, 3, [k // 100 for k in range(40_000)])
    assert big.dtype == np.int32 and big.max() >= 2**15  # (indices past int16's range drawn)


def test_replica_draws_peak_under_40_bytes_a_task() -> None:
    """The Alibaba day's 10.5 M tasks: 69 bytes a task at the peak with int64 temporaries (725 MB),
    34 now; the output alone is 6 (int16, R = 3)."""
    n = 300_000
    racks = [k // 65 for k in range(1300)]
    tracemalloc.start()
    try:
        hdfs_replicas(np.random.default_rng(1), n, 3, racks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * n


@pytest.mark.parametrize(("nodes", "per_task"), [(100, 16), (2, 48)])
def test_what_a_run_keeps_per_task(nodes: int, per_task: int) -> None:
    """20,000 equal maps on one-slot nodes: batches of ``nodes`` tasks. What the run leaves behind
    (the recorder keeps every attempt) is under ``per_task`` bytes a task: 8 a member and 40 a
    batch. A list of int objects per batch kept 53 bytes a task on 100 nodes; an attempt object
    and a row tuple per batch about 230 on 2 nodes."""
    n = 20_000
    w = workload(
        [{"id": "n", "count": nodes, "rack": "r", "map_slots": 1, "reduce_slots": 0}],
        [{"id": "j", "stages": [{"type": "map", "tasks": [{"duration": 5.0, "count": n}]}]}],
    )
    sim = Simulation(w, make_policy("fifo"), mode="event", record_utilisation=False)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sim.run()
        sim.record.ended_attempts.flush()  # (its lists hold at most CHUNK endings, whatever the run)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert sim.record.spans()["count"].tolist() == [nodes] * (n // nodes)
    assert sim.record.a_id == list(range(n)) and sim.record.a_end == [5.0 * (1 + k // nodes) for k in range(n)]
    assert kept < per_task * n
