"""The importers of mropt.history: real traces (skipped without ../shared), small generated files, malformed rows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from mropt.history.store import import_batches
from mropt.importers.table import detect_kind, read_batches
from mropt.model.errors import InputError

from history_files import rumen_job, shared, write_alibaba, write_jhist, write_rumen, write_swim


def rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def counts(db: Path) -> dict[str, int]:
    return {t: rows(db, f"SELECT count(*) FROM {t}")[0][0] for t in ("jobs", "tasks", "attempts", "jobconf")}


# -- real files ---------------------------------------------------------------------------------
def test_real_job_history_files(tmp_path: Path) -> None:
    folder = shared("hadoop-jobhistory")
    files = sorted(folder.glob("*.jhist"))
    db = tmp_path / "h.db"
    import_batches(db, read_batches(files))
    jobs = {r[0]: r[1:] for r in rows(db, 'SELECT job_id, status, maps, reduces, user_group, "user" FROM jobs')}
    assert jobs["job_1329348432655_0001"] == ("SUCCEEDED", 10, 1, "default", "user")
    assert jobs["job_1416424547277_0002"] == ("SUCCEEDED", 2, 0, "default", "root")
    assert jobs["job_1399356417814_19732"] == ("FAILED", 2, 1, "unfunded", "rushabhs")
    per_source = dict(
        rows(db, "SELECT j.job_id, count(*) FROM attempts a JOIN jobs j USING (source, job_id) GROUP BY 1")
    )
    assert per_source == {"job_1329348432655_0001": 12, "job_1416424547277_0002": 2, "job_1399356417814_19732": 8}
    failed = dict(rows(db, "SELECT status, count(*) FROM attempts WHERE job_id = 'job_1399356417814_19732' GROUP BY 1"))
    assert failed == {"FAILED": 7, "KILLED": 1}
    assert sorted(r[0] for r in rows(db, "SELECT status FROM tasks WHERE job_id = 'job_1399356417814_19732'")) == [
        "FAILED",
        "KILLED",
        "KILLED",
    ]
    # TeraGen: Hadoop 2.6's avataar VIRGIN (not speculative), host mfs137.qa.lab
    assert rows(db, "SELECT DISTINCT host, speculative FROM attempts WHERE job_id = 'job_1416424547277_0002'") == [
        ("mfs137.qa.lab", False)
    ]
    # a reduce's shuffle and sort finish times
    assert rows(
        db,
        "SELECT shuffle_finish, sort_finish FROM attempts WHERE job_id = 'job_1329348432655_0001' AND type = 'reduce' ORDER BY attempt_id",
    ) == [
        (1329348468.462, 1329348468.517),
        (1329348468.462, 1329348468.507),
    ]


def test_real_rumen_files(tmp_path: Path) -> None:
    sls, wc = shared("rumen", "2jobs2min-rumen-jh.json"), shared("rumen", "wordcount.json")
    db = tmp_path / "h.db"
    import_batches(db, read_batches([sls, wc]))
    assert rows(db, "SELECT source, count(*) FROM tasks GROUP BY 1 ORDER BY 1") == [
        ("2jobs2min-rumen-jh.json", 192),
        ("wordcount.json", 6),
    ]
    assert rows(
        db, "SELECT count(DISTINCT host), min(rack) FROM attempts WHERE source = '2jobs2min-rumen-jh.json'"
    ) == [(4, "/default-rack")]
    assert rows(db, "SELECT count(*) FROM jobconf WHERE source = '2jobs2min-rumen-jh.json'")[0][0] == 918  # 459 per job
    assert rows(
        db, "SELECT input_bytes FROM tasks WHERE source = 'wordcount.json' AND type = 'map' ORDER BY task_id"
    ) == [
        (704270,),
        (577214,),
        (163907,),
    ]
    assert rows(
        db,
        "SELECT start_time, shuffle_finish, sort_finish, finish_time FROM attempts WHERE source = 'wordcount.json' AND type = 'reduce'",
    ) == [(1285322660.807, 1285322667.962, 1285322668.146, 1285322670.759)]


def test_real_alibaba_and_swim(tmp_path: Path) -> None:
    ali, swim = shared("alibaba-2017", "batch_task.csv"), shared("swim", "FB-2009_samples_24_times_1hr_0.tsv")
    db = tmp_path / "h.db"
    import_batches(db, read_batches([ali, swim]))
    # the README's counts: 80,553 task rows of 12,951 jobs; 11,909,321 instances in all
    assert rows(db, "SELECT count(*), count(DISTINCT job_id), sum(slots) FROM tasks") == [(80553, 12951, 11909321)]
    assert rows(db, "SELECT count(*) FROM jobs WHERE source = 'batch_task.csv'") == [(12951,)]
    assert dict(rows(db, "SELECT status, count(*) FROM tasks GROUP BY 1")) == {
        "SUCCEEDED": 67013,
        "PENDING": 8847,
        "RUNNING": 3567,
        "FAILED": 1126,
    }
    assert rows(db, "SELECT count(*) FROM jobs WHERE source = 'FB-2009_samples_24_times_1hr_0.tsv'") == [(5894,)]


# -- small generated files ------------------------------------------------------------------------
def test_detects_each_kind(tmp_path: Path) -> None:
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "jobs.parquet").write_bytes(b"")
    (tmp_path / "sim" / "tasks.parquet").write_bytes(b"")
    assert detect_kind(write_jhist(tmp_path / "a.jhist")) == "jhist"
    assert detect_kind(write_rumen(tmp_path / "a.json")) == "rumen"
    assert detect_kind(write_alibaba(tmp_path / "a.csv")) == "alibaba"
    assert detect_kind(write_swim(tmp_path / "a.tsv")) == "swim"
    assert detect_kind(tmp_path / "sim") == "simulation"
    (tmp_path / "x.txt").write_text("hello\n")
    with pytest.raises(InputError, match="cannot tell the kind"):
        detect_kind(tmp_path / "x.txt")


def test_small_files_give_the_rows_they_hold(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    files = [
        write_jhist(tmp_path / "a.jhist"),
        write_rumen(tmp_path / "b.json"),
        write_alibaba(tmp_path / "c.csv"),
        write_swim(tmp_path / "d.tsv"),
    ]
    out = import_batches(db, read_batches(files))
    assert out["a.jhist"] == {"jobs": 1, "tasks": 3, "attempts": 3, "jobconf": 0}
    assert out["b.json"] == {"jobs": 1, "tasks": 3, "attempts": 3, "jobconf": 2}
    assert out["c.csv"] == {"jobs": 2, "tasks": 3, "attempts": 0, "jobconf": 0}
    assert out["d.tsv"] == {"jobs": 3, "tasks": 0, "attempts": 0, "jobconf": 0}
    assert rows(
        db, "SELECT user_group, submit_time, launch_time, finish_time, input_bytes FROM jobs WHERE source = 'a.jhist'"
    ) == [("etl", 1e9, 1e9 + 1, 1e9 + 30, None)]
    assert rows(
        db,
        "SELECT type, finish_time - start_time, input_bytes, host, rack FROM tasks WHERE source = 'a.jhist' ORDER BY task_id",
    ) == [
        ("map", 10.0, 1_000_000, "h1", "/r1"),
        ("map", 10.0, 1_000_000, "h1", "/r1"),
        ("reduce", 20.0, 0, "h1", "/r1"),
    ]
    assert rows(db, "SELECT user_group, priority, input_bytes FROM jobs WHERE source = 'b.json'") == [
        ("adhoc", "HIGH", 6_000_000)
    ]
    # Alibaba: slots = instances, cpu in cores, empty requests null, statuses mapped, jobs aggregated
    assert rows(
        db,
        "SELECT job_id, task_id, start_time, finish_time, status, slots, cpu, mem FROM tasks WHERE source = 'c.csv' ORDER BY task_id",
    ) == [
        ("1", "10", 100.0, 160.0, "SUCCEEDED", 4, 0.5, 0.01),
        ("1", "11", 110.0, 150.0, "FAILED", 1, 1.0, 0.02),
        ("2", "20", 200.0, 260.0, "PENDING", 3, None, None),
    ]
    assert rows(
        db, "SELECT job_id, submit_time, finish_time, status FROM jobs WHERE source = 'c.csv' ORDER BY job_id"
    ) == [
        ("1", 100.0, 160.0, "FAILED"),
        ("2", 200.0, 260.0, "RUNNING"),
    ]
    assert rows(
        db,
        "SELECT job_id, submit_time, input_bytes, shuffle_bytes, output_bytes FROM jobs WHERE source = 'd.tsv' ORDER BY job_id",
    )[2] == (
        "job2",
        20.0,
        3000,
        200,
        100,
    )


# -- malformed rows: file, line, field; nothing of the import written ------------------------------
def _bad_jhist(tmp_path: Path) -> Path:
    path = write_jhist(tmp_path / "bad.jhist")
    lines = path.read_text().splitlines()
    lines[5] = lines[5].replace('"startTime": ', '"startTime": "soon", "x": ')
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "make,words",
    [
        (_bad_jhist, ["bad.jhist line 6", "field 'startTime'", "whole number"]),
        (
            lambda p: (p / "bad.jhist").write_text("Avro-Json\n{}\n{not json\n") and p / "bad.jhist",
            ["bad.jhist line 3", "not a JSON event"],
        ),
        (
            lambda p: write_rumen(
                p / "bad.json",
                [
                    rumen_job(),
                    {
                        **rumen_job("job_3_0001"),
                        "mapTasks": [
                            {**rumen_job()["mapTasks"][0], "attempts": [{"attemptID": "a", "startTime": "x"}]}
                        ],
                    },
                ],
            ),
            ["bad.json line", "field 'mapTasks[0].attempts[0].startTime'", "whole number"],
        ),
        (
            lambda p: write_alibaba(p / "bad.csv", ["1,2,3,4,5,Terminated,50,0.1", "1,2,3,4,5.5,Terminated,50,0.1"]),
            ["bad.csv line 3", "field 'number_of_instances'"],
        ),
        (
            lambda p: write_alibaba(p / "bad.csv", ["1,2,3,4,5,Terminated,fifty,0.1"]),
            ["bad.csv line 2", "field 'number_of_cpus_requested_per_instance_in_the_task'"],
        ),
        (
            lambda p: write_alibaba(p / "bad.csv", ["1,2,3,4,5,Terminated,50,0.1", "", "1,2,3,4,5,Terminated,50"]),
            ["bad.csv line 4", "8 comma-separated fields"],
        ),
        (
            lambda p: write_alibaba(p / "bad.csv", ["1,2,,4,5,Terminated,50,0.1"]),
            ["bad.csv line 2", "field 'job_id'", "empty"],
        ),
        (
            lambda p: (p / "bad.tsv").write_text("j0\t0\t0\t1\t1\t1\nj1\t5\t0\tmany\t1\t1\n") and p / "bad.tsv",
            ["bad.tsv line 2", "map_input_bytes"],
        ),
    ],
)
def test_a_malformed_row_names_file_line_and_field_and_nothing_is_written(
    tmp_path: Path, make, words: list[str]
) -> None:
    db = tmp_path / "h.db"
    import_batches(db, read_batches([write_swim(tmp_path / "before.tsv")]))
    before = counts(db)
    good = write_jhist(tmp_path / "good.jhist")
    bad = make(tmp_path)
    with pytest.raises(InputError) as err:
        import_batches(db, read_batches([good, bad]))
    message = str(err.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    assert counts(db) == before


def test_the_same_source_twice_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    import_batches(db, read_batches([write_rumen(tmp_path / "b.json")]))
    with pytest.raises(InputError, match="already in the history database"):
        import_batches(db, read_batches([write_swim(tmp_path / "new.tsv"), tmp_path / "b.json"]))
    assert counts(db)["jobs"] == 1
    # under another source name it lands
    import_batches(db, read_batches([tmp_path / "b.json"], source="b-again"))
    assert counts(db)["jobs"] == 2


def test_rumen_array_form_and_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "arr.json").write_text(json.dumps([rumen_job("job_5_0001"), rumen_job("job_5_0002")]))
    assert read_batches([tmp_path / "arr.json"])[0].count("jobs") == 2
    (tmp_path / "empty.json").write_text("  \n")
    with pytest.raises(InputError):
        read_batches([tmp_path / "empty.json"])
