"""The recorder's store keeps each block of an integer column in the narrowest C type its values
fit (issue 32: the Alibaba day's memory); its readers get the columns' own types and values, at
and past every narrow type's bounds."""

from __future__ import annotations

from typing import Any

import numpy as np

from mropt.sim.attempts import Attempt
from mropt.sim.ended_attempts import ENTRY_FIELDS, ROW_COLUMNS, EndedAttempts

#: the type each reader gets, whatever the blocks keep (ROW_COLUMNS' documented types)
ROW_TYPES = {
    "job": np.intc,
    "stage": np.intc,
    "type": np.int8,
    "task": np.intc,
    "id": np.int64,
    "node": np.intc,
    "start": np.float64,
    "end": np.float64,
    "level": np.int8,
    "spec": np.bool_,
    "outcome": np.int8,
}
I32 = 2**31 - 1


def end(
    store: EndedAttempts,
    rows: list[dict[str, Any]],
    aid: int,
    job: int,
    stage: int,
    members: list[tuple[int, int]],
    *,
    dead: tuple[int, ...] = (),
    level: int = 0,
    spec: bool = False,
    outcome: int = 0,
) -> None:
    """Attempt ``aid`` (a batch of ``members``' (task, node) when more than one) ends at ``aid``'s
    start + 1; its expected rows, one per live member with id ``aid`` + its place, go to ``rows``."""
    (task, node), start = members[0], aid / 7
    a = Attempt(aid, job, stage, task, node, 1, start, level, spec, 1.0, None)
    if len(members) > 1:
        a.n = a.live = len(members)
        a.tasks, a.nodes = [t for t, _ in members], [n for _, n in members]
        a.dead = {m: start for m in dead}
    store.add(a, -1, start + 1, outcome)
    for m, (t, n) in enumerate(members):
        if m not in dead:
            rows.append(
                {
                    "job": job,
                    "stage": stage,
                    "type": 1,
                    "task": t,
                    "id": aid + m,
                    "node": n,
                    "start": start,
                    "end": start + 1,
                    "level": level,
                    "spec": spec,
                    "outcome": outcome,
                }
            )


def three_blocks() -> tuple[EndedAttempts, list[dict[str, Any]]]:
    """Block 0 of small values, block 1 at the int8/int16/int32 bounds, block 2 just past them."""
    store, rows = EndedAttempts(), []
    end(store, rows, 0, 1, 0, [(5, 2)])
    end(store, rows, 1, 1, 1, [(0, 1)], level=2, spec=True, outcome=1)
    end(store, rows, 2, 3, 0, [(7, 0), (8, 1), (9, 2)])
    store.flush()
    end(store, rows, I32 - 130, 2**15 - 1, 127, [(t, 2**15 - 1 - t) for t in range(127)])
    end(store, rows, I32, 2**15 - 1, 127, [(2**15 - 1, 2**15 - 1)], outcome=2)
    store.flush()
    end(store, rows, I32 + 1, 2**15, 128, [(t, 2**15 + t) for t in range(129)], dead=(1,))
    end(store, rows, 2**40, I32, I32, [(I32, I32)], level=1)
    end(store, rows, 9, 0, 0, [(-(2**31), 0)])
    store.flush()
    return store, rows


def test_each_block_keeps_the_narrowest_type_its_values_fit() -> None:
    """Ids, jobs, stages, counts, tasks and nodes of a block of small values take a byte each; at the
    bounds int8/int16/int32; one past them the next wider type (the store kept 4 and 8 bytes)."""
    store, _ = three_blocks()
    kept = {name: [b.typecode for b in store.entry[name]] for name, _ in ENTRY_FIELDS}
    assert kept["id"] == ["b", "i", "q"] and kept["job"] == ["b", "h", "i"] and kept["stage"] == ["b", "b", "i"]
    assert kept["count"] == ["b", "b", "h"] and kept["start"] == ["d"] * 3 and kept["spec"] == ["b"] * 3
    assert [b.typecode for b in store.task] == ["b", "h", "i"]
    assert [b.typecode for b in store.node] == ["b", "h", "i"]


def test_readers_get_the_columns_types_and_values_past_the_narrow_bounds() -> None:
    """Whole, in pieces, by entry, as the values used and as spans: the values added, in the types of
    ROW_COLUMNS and ENTRY_FIELDS, a block of one type next to blocks of others."""
    store, rows = three_blocks()
    whole = store.rows()
    assert len(whole["id"]) == len(rows) == store.n_rows == 5 + 128 + 130
    for name in ROW_COLUMNS:
        assert whole[name].dtype == ROW_TYPES[name], name
        assert whole[name].tolist() == [r[name] for r in rows], name
    for size in (1, 100, 1000):
        pieces = list(store.chunks(size))
        for name in ROW_COLUMNS:
            assert all(p[name].dtype == ROW_TYPES[name] for p in pieces), name
            assert np.concatenate([p[name] for p in pieces]).tolist() == [r[name] for r in rows], name
    firsts = [
        r for k, r in enumerate(rows) if k == 0 or (r["job"], r["start"]) != (rows[k - 1]["job"], rows[k - 1]["start"])
    ]
    for name, code in ENTRY_FIELDS:
        if name in ("job", "stage", "id"):
            column = store.column(name)
            assert column.dtype == np.dtype(code) and column.tolist() == [r[name] for r in firsts], name
    assert store.column("count").tolist() == [1, 1, 3, 127, 1, 128, 1, 1]
    assert store.used("node").dtype == np.intc and store.used("node").tolist() == sorted({r["node"] for r in rows})
    assert store.used("job").tolist() == [0, 1, 3, 2**15 - 1, 2**15, I32]
    spans = store.spans([], 0)
    assert spans["job"].dtype == np.int64 and spans["job"].tolist() == [r["job"] for r in firsts]
    assert spans["count"].tolist() == [1, 1, 3, 127, 1, 128, 1, 1]


def _times(starts: list[float], ends: list[float]) -> EndedAttempts:
    """A store of one block: attempt k starts at ``starts[k]`` and ends at ``ends[k]``."""
    store = EndedAttempts()
    for k, (start, stop) in enumerate(zip(starts, ends, strict=True)):
        store.add(Attempt(k, 0, 0, k, 0, 1, start, 0, False, 1.0, None), -1, stop, 0)
    store.flush()
    return store


def test_a_block_of_times_is_kept_as_c_ints_only_where_each_is_exactly_one() -> None:
    """Whole seconds at scale 1, heartbeats' hundredths at 100 (4 bytes a value); a value that no
    scale gives back bit for bit (1/7, -0.0, past int32 at every scale, NaN) keeps its block in
    doubles. Every reader gets the very floats added."""
    cases = [
        ([0.0, 3.0, 2.0**31 - 1], [5.0, 7.0, 9.0], (1.0, 1.0)),
        ([0.5, 1.5, 12.0], [1.25, 40736.87, 1e6 + 0.01], (10.0, 100.0)),
        ([1 / 7, 2.0, 3.0], [0.001, 2.0, 21474.836], ("d", 1000.0)),
        ([-0.0, 1.0, 2.0], [2.0**31, 4.0, 5.0], ("d", "d")),
        ([float("nan"), 1.0, 2.0], [1.0, 2.0, 3.0], ("d", 1.0)),
    ]
    for starts, ends, kept in cases:
        store = _times(starts, ends)
        got = tuple(getattr(store.entry[name][0], "scale", store.entry[name][0].typecode) for name in ("start", "end"))
        assert got == kept, (starts, ends)
        for name, values in (("start", starts), ("end", ends)):
            block = store.entry[name][0]
            assert block.itemsize == (8 if block.typecode == "d" else 4)
            for column in (store.column(name), store.rows((name,))[name], next(store.chunks(2, (name,)))[name]):
                assert column.dtype == np.float64
                assert column.tobytes() == np.array(values[: len(column)]).tobytes(), (name, values)
        assert store.last_end() == max(ends)


def test_a_copied_or_pickled_block_of_times_reads_the_same_floats() -> None:
    """A :class:`Scaled` block's scale is not in its ints: a copy that dropped it would read
    ``k`` for ``k / scale`` without an error (review: ``copy.copy`` gave a plain ``array('i')``)."""
    import copy
    import pickle

    from mropt.sim.ended_attempts import Scaled, _np

    block = _times([0.5, 1.25, 2.0], [1.0, 2.0, 3.0]).entry["start"][0]
    assert isinstance(block, Scaled) and block.scale == 100.0
    for again in (copy.copy(block), copy.deepcopy(block), pickle.loads(pickle.dumps(block))):
        assert isinstance(again, Scaled) and _np(again).tolist() == [0.5, 1.25, 2.0]
