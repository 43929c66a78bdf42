"""The Parquet store: atomic run files, compaction, duplicates, concurrent writers; the reference file."""

from __future__ import annotations

import multiprocessing as mp
import os

import pytest

from mropt.harness.reference import Reference
from mropt.harness.store import Store, key_digest, row_slot


def row(key: str, objective: float = 1.0, **kw) -> dict:
    """A row whose slot (experiment, instance, method, profile, seed) is its key's."""
    return {
        "experiment": "e",
        "run_key": key,
        "instance_hash": "h" + key[-1],
        "instance_id": "i",
        "method": "m",
        "profile": "-",
        "seed": int(key[1:]) if key[1:].isdigit() else 0,
        "status": "feasible",
        "objective": objective,
        "verified": True,
        "exact": False,
        **kw,
    }


def test_rows_survive_compaction_once(tmp_path):
    store = Store(tmp_path)
    store.create()
    for k in range(5):
        store.write_row(row(f"k{k}", k))
    store.write_row(row("k3", 3))  # the same run written twice: one row
    assert len(store.read()) == 5
    assert store.compact() == 5
    assert not list(store.runs.glob("*.parquet")) and len(list(store.compacted.glob("*.parquet"))) == 1
    store.write_row(row("k9", 9))
    store.write_row(row("k2", 2))  # rewritten after compaction: still one row
    df = store.read()
    assert sorted(df["run_key"]) == ["k0", "k1", "k2", "k3", "k4", "k9"]
    assert {p.stem for p in store.runs.glob("*.parquet")} == {key_digest(row_slot(row(k))) for k in ("k9", "k2")}
    store.compact()
    assert len(store.read()) == 6


def test_a_new_result_for_a_slot_replaces_the_old_row(tmp_path):
    """A run again with other settings (another run key) fills the same slot: one row, the newest,
    before and after compaction, and a compacted copy never beats a run file."""
    store = Store(tmp_path)
    store.create()
    store.write_row(row("k1", 1.0, run_key="old"))
    store.write_row(row("k2", 2.0))
    store.compact()
    store.write_row(row("k1", 5.0, run_key="new"))
    df = store.read().set_index("seed")
    assert len(df) == 2 and df.loc[1, "run_key"] == "new" and df.loc[1, "objective"] == 5.0
    assert store.read_table(["run_key"]).num_rows == 2
    store.compact()
    df = store.read().set_index("seed")
    assert len(df) == 2 and df.loc[1, "run_key"] == "new"
    assert store.experiments() == {"e"}


def test_temporary_files_are_ignored(tmp_path):
    store = Store(tmp_path)
    store.create()
    store.write_row(row("k1"))
    stale = store.runs / ".half-written.parquet.tmp"
    stale.write_bytes(b"PAR1 no footer")
    os.utime(stale, (1, 1))  # left by a writer killed long ago
    (store.runs / ".x.parquet").write_bytes(b"garbage")
    assert list(store.read()["run_key"]) == ["k1"]
    store.compact()
    assert not list(store.runs.glob(".*.tmp"))


def test_a_resume_removes_the_temporaries_a_killed_writer_left_and_only_those(tmp_path):
    """A study SIGKILLed mid-write leaves a fresh ``.<digest>.parquet.<8 hex>.tmp`` in
    runs/; the hour rule kept it from every resume that came sooner. The next writer alone removes it."""
    killed = Store(tmp_path)
    killed.create()
    killed.write_row(row("k1"))
    dead_run = killed.runs / f".{key_digest('x')}.parquet.0123abcd.tmp"  # as mropt.model.files names them
    dead_instance = killed.instances / f".{'0' * 64}.json.89abcdef.tmp"
    dead_compaction = killed.compacted / f".{'1' * 20}-{'2' * 32}.parquet.01234567.tmp"
    not_ours = [killed.runs / ".notes.tmp", killed.runs / ".x.parquet.0123abcd.tmp"]
    for path in [dead_run, dead_instance, dead_compaction, *not_ours]:
        path.write_bytes(b"PAR1 half")  # fresh: written a moment ago
    other = Store(tmp_path)
    other.create()  # `killed` still holds its lock: a live writer, whose temporaries these may be
    assert dead_run.exists() and dead_instance.exists()
    del killed, other  # the writers are gone (a SIGKILL releases the lock as well)
    resumed = Store(tmp_path)
    resumed.create()
    assert not dead_run.exists() and not dead_instance.exists()
    assert all(p.exists() for p in not_ours)
    resumed.compact()  # compacted/'s temporaries: only a compaction, under its lock, writes them
    assert not dead_compaction.exists() and list(resumed.read()["run_key"]) == ["k1"]


def _writer(root: str, start: int) -> None:
    store = Store(root)
    for k in range(start, start + 30):
        store.write_row(row(f"k{k % 40}", k % 40))
        if k % 10 == 0:
            store.compact()


@pytest.mark.slow
def test_concurrent_writers_and_compactions_never_corrupt(tmp_path):
    Store(tmp_path).create()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 10, 20)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    df = Store(tmp_path).read()
    assert df["run_key"].is_unique and len(df) == 40  # keys 0..39 (k % 40 of 0..49)


def test_reference_file_round_trip_and_gaps(tmp_path):
    ref = Reference()
    ref.add_row(row("a1", 90.0, instance_hash="H", instance_id="inst"))
    ref.add_row(row("a2", 100.0, instance_hash="H", instance_id="inst"))
    ref.add_row({"instance_hash": "H", "status": "bound", "objective": 120.0, "bound": 120.0, "exact": False})
    e = ref.entries["H"]
    assert (e.tag, e.value, e.bound) == ("best_known", 100.0, 120.0)
    g = ref.gaps({"instance_hash": "H", "status": "feasible", "objective": 90.0})
    assert g["gap"] == pytest.approx(0.1) and g["gap_to_bound"] == pytest.approx(0.25)
    assert ref.gaps({"instance_hash": "H", "status": "bound", "bound": 120.0})["gap"] == pytest.approx(0.2)
    # an exact method proving 100 optimal
    ref.add_row(row("a3", 100.0, instance_hash="H", status="optimal", exact=True, bound=100.0))
    assert ref.entries["H"].tag == "optimal"
    ref.entries["I"] = type(e)("other", "infeasible")
    path = tmp_path / "reference.solu"
    ref.save(path)
    text = path.read_text()
    assert "=opt=" in text and "=inf=" in text
    back = Reference.load(path)
    assert back.entries["H"].tag == "optimal" and back.entries["H"].value == 100.0
    assert back.entries["I"].tag == "infeasible"
    # unverified values never enter the reference
    ref2 = Reference()
    ref2.add_row(row("b", 999.0, verified=False))
    assert ref2.entries["h" + "b"].value is None
