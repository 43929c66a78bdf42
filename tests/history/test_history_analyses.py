"""HEI sec. 2.2's analyses on a small hand-computed history (every expected number worked by hand below).

Source ``hand`` (times in seconds; day = 86400 s):

* job a1, queue ``a``, submitted day 0 at 02:00:10. Six map tasks of 100 MB (1e8 bytes):
  five of 10 s on h1, one of 40 s on ``slowhost``; two reduces of 30 s and 50 s.
  D_i = 0.1 (x5) and 0.4 s/MB; mean 0.15; population sd = sqrt((5 x 0.05^2 + 0.25^2) / 6)
  = sqrt(0.0125) = 0.1118; 0.4 - 0.15 = 0.25 > 2 sd = 0.2236: the 40 s task is an
  outlier and slow. D(a1) = 50 s / 500 MB = 0.1 (eq. 7 without it); P = 600 MB;
  R_Map = 0.1 x 600 = 60 (eq. 8). R_total = 5 x 10 + 40 + 30 + 50 = 170 (eq. 4).
* job a2, queue ``a``, submitted day 1 at 02:30:00: one map of 200 MB, 30 s (D 0.15, sd 0:
  no outlier); one reduce of 20 s. D(a2) = 0.15, R_Map = 30, R_total = 50.
* job b1, user ``bob``, no queue (group ``bob``), submitted day 0 at 05:00:01: one task of
  4 slots for 100 s (R = 400, eq. 2) and one FAILED map of 10 s with input (counted in
  R_total, not in D): R_total = 410.
* job c1, queue ``a``, no tasks (job level only), submitted day 1 at 02:00: adds nothing.

Group a: D = (50 + 30) / (500 + 200) = 0.1142857 s/MB (eq. 7 over its non-outlier maps);
reduce cost = (30 + 50 + 20) / 3 = 33.333 s (eq. 9). Days in the history: (hand, 0) and
(hand, 1) = 2, so demand(a, 2h) = (170 + 50) / 2 = 110 and demand(bob, 5h) = 410 / 2 = 205.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pytest

from mropt.history import analyses
from mropt.history.batch import batch_from_rows
from mropt.history.store import import_batches

DAY = 86400.0


def _task(
    job: str, k: int, ttype: str, start: float, dur: float, host: str | None = None, mb: float | None = None, **kw
) -> dict:
    return {
        "job_id": job,
        "task_id": f"{job}_{ttype}_{k}",
        "type": ttype,
        "start_time": start,
        "finish_time": start + dur,
        "status": kw.get("status", "SUCCEEDED"),
        "host": host,
        "input_bytes": None if mb is None else int(mb * 1e6),
        "slots": kw.get("slots", 1),
    }


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    a1, a2, b1, c1 = 2 * 3600 + 10.0, DAY + 2.5 * 3600, 5 * 3600 + 1.0, DAY + 2 * 3600
    jobs = [
        {"job_id": "a1", "user": "ann", "user_group": "a", "submit_time": a1},
        {"job_id": "a2", "user": "ann", "user_group": "a", "submit_time": a2},
        {"job_id": "b1", "user": "bob", "submit_time": b1},
        {"job_id": "c1", "user": "cy", "user_group": "a", "submit_time": c1},
    ]
    tasks = [_task("a1", k, "map", a1 + 1, 10, "h1", 100) for k in range(5)]
    tasks += [_task("a1", 5, "map", a1 + 1, 40, "slowhost", 100)]
    tasks += [_task("a1", 0, "reduce", a1 + 50, 30, "h1"), _task("a1", 1, "reduce", a1 + 50, 50, "h2")]
    tasks += [_task("a2", 0, "map", a2 + 1, 30, "h1", 200), _task("a2", 0, "reduce", a2 + 40, 20, "h1")]
    tasks += [_task("b1", 0, "other", b1, 100, slots=4), _task("b1", 1, "map", b1, 10, "h2", 50, status="FAILED")]
    path = tmp_path_factory.mktemp("hist") / "hand.db"
    import_batches(path, [batch_from_rows("hand", "test", {"jobs": jobs, "tasks": tasks})])
    return path


def test_task_and_job_resource_eqs_2_to_4(db: Path) -> None:
    tr = analyses.task_resource(db)
    assert len(tr) == 12
    assert tr.loc[tr.task_id == "b1_other_0", "r"].item() == 400.0  # N_slot 4 x 100 s
    jr = analyses.job_resource(db).set_index("job_id")
    assert jr.loc["a1", "r_total"] == 170.0 and jr.loc["a1", "r_map"] == 90.0 and jr.loc["a1", "r_reduce"] == 80.0
    assert jr.loc["a2", "r_total"] == 50.0
    assert jr.loc["b1", "r_total"] == 410.0 and jr.loc["b1", "group"] == "bob"
    assert jr.loc["c1", "r_total"] == 0.0 and jr.loc["c1", "tasks"] == 0


def test_map_cost_per_unit_eqs_5_to_7_without_the_outlier(db: Path) -> None:
    d = analyses.map_cost_per_unit(db)
    assert list(d.columns) == ["group", "D"]
    assert d["group"].tolist() == ["a"]  # bob's only map failed: no D
    assert d["D"].item() == pytest.approx(80 / 700)
    # with a looser rule (k = 3) the 40 s task stays: (90 + 30) / (600 + 200)
    assert analyses.map_cost_per_unit(db, k=3)["D"].item() == pytest.approx(120 / 800)


def test_job_map_need_eq_8(db: Path) -> None:
    need = analyses.job_map_need(db).set_index("job_id")
    assert need.loc["a1", "outliers"] == 1 and need.loc["a1", "map_tasks"] == 6
    assert need.loc["a1", "d"] == pytest.approx(0.1)
    assert need.loc["a1", "input_mb"] == pytest.approx(600)
    assert need.loc["a1", "r_map_need"] == pytest.approx(60)
    assert need.loc["a2", "r_map_need"] == pytest.approx(30)


def test_mean_reduce_cost_eq_9(db: Path) -> None:
    r = analyses.mean_reduce_cost(db)
    assert list(r.columns) == ["group", "reduce_cost"]
    assert r.to_dict("records") == [{"group": "a", "reduce_cost": pytest.approx(100 / 3)}]


def test_slow_nodes_by_the_standard_deviation_of_d(db: Path) -> None:
    s = analyses.slow_nodes(db)
    assert s.iloc[0]["host"] == "slowhost" and s.iloc[0]["slow_tasks"] == 1 and s.iloc[0]["slow_share"] == 1.0
    assert s.iloc[0]["mean_z"] == pytest.approx(0.25 / math.sqrt(0.0125))
    assert set(s.loc[s.slow_tasks == 0, "host"]) == {"h1"}


def test_demand_by_group_hour(db: Path) -> None:
    d = analyses.demand_by_group_hour(db)
    assert list(d.columns) == ["group", "hour", "demand"]
    assert len(d) == 2 * 24 and sorted(set(d["group"])) == ["a", "bob"]
    assert d["hour"].tolist()[:24] == list(range(24))
    nonzero = {(g, h): v for g, h, v in d.itertuples(index=False) if v}
    assert nonzero == {("a", 2): 110.0, ("bob", 5): 205.0}


def test_an_open_connection_works_too(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert analyses.mean_reduce_cost(con)["reduce_cost"].item() == pytest.approx(100 / 3)
        assert con.execute("SELECT count(*) FROM slow_nodes").fetchone()[0] == 2  # h1, slowhost (h2: a failed map)
    finally:
        con.close()
