"""Speed of the job-history database: the Alibaba 2017 import and HEI sec. 2.2's analyses.

    PYTHONPATH=. python benchmarks/bench_history.py [--trace ../shared/traces/alibaba-2017/batch_task.csv] [--tasks 1000000]

1. Import the whole Alibaba 2017 ``batch_task.csv`` (80,553 rows, 11.9 M instances) into a
   new database (target < 60 s), against pandas reading the same file and building the same
   jobs table (``read_csv`` + ``groupby``).
2. Each analysis over it (target < 5 s each) against the same numbers computed in pandas
   (checked equal): R_total per job (eq. 4) and demand per group and hour.
3. The trace has no input bytes, reduces or hosts, so D (eqs. 5-7 with outliers), the reduce
   cost (eq. 9) and the slow nodes run over a synthetic history of ``--tasks`` map and reduce
   tasks (seeded: 20 groups, 200 hosts, 5 % of maps 4x slower), again against pandas.
Prints one table: seconds for mropt (DuckDB) and pandas, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from mropt.history import analyses
from mropt.history.batch import Batch, conform_table
from mropt.history.store import connect, import_batches
from mropt.importers.alibaba_trace import COLUMNS
from mropt.importers.table import read_batches

DEFAULT_TRACE = (
    Path(os.environ.get("MROPT_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    / "traces/alibaba-2017/batch_task.csv"
)


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def pandas_alibaba_jobs(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, header=0, names=list(COLUMNS), skipinitialspace=True)
    df["job_id"] = df.job_id.astype(str)
    g = df.groupby("job_id")
    return pd.DataFrame({"submit_time": g.task_create_time.min(), "finish_time": g.task_end_time.max()}), df


def pandas_demand(jobs: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    tasks = tasks[tasks.finish_time >= tasks.start_time]
    r = (tasks.slots * (tasks.finish_time - tasks.start_time)).groupby(tasks.job_id).sum()
    jobs = jobs.assign(r=jobs.job_id.map(r).fillna(0.0))
    jobs["hour"] = (np.floor((jobs.submit_time % 86400) / 3600)).astype(int)
    days = jobs.assign(day=np.floor(jobs.submit_time / 86400)).groupby(["source", "day"]).ngroups
    return jobs.groupby(["group", "hour"]).r.sum() / days


def pandas_map_cost(tasks: pd.DataFrame, jobs: pd.DataFrame, k: float = 2.0) -> tuple[pd.Series, pd.Series, pd.Series]:
    t = tasks.merge(jobs[["job_id", "group"]], on="job_id")
    t["r"] = t.slots * (t.finish_time - t.start_time)
    m = t[(t.type == "map") & (t.status == "SUCCEEDED") & (t.input_bytes >= analyses.MIN_INPUT_BYTES)].copy()
    m["mb"] = m.input_bytes / 1e6
    m["d"] = m.r / m.mb
    grp = m.groupby("job_id").d
    mean, sd = grp.transform("mean"), grp.transform(lambda x: x.std(ddof=0))
    out = (sd > 0) & ((m.d - mean).abs() > k * sd)
    keep = m[~out]
    d = keep.groupby("group").r.sum() / keep.groupby("group").mb.sum()
    red = t[(t.type == "reduce") & (t.status == "SUCCEEDED")].groupby("group").r.mean()
    slow = ((sd > 0) & (m.d - mean > k * sd)).groupby(m.host).sum()
    return d, red, slow


def synthetic(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    jobs_n = max(1, n // 50)
    jobs = pd.DataFrame(
        {"job_id": [f"j{i}" for i in range(jobs_n)], "user_group": [f"g{i % 20}" for i in range(jobs_n)]}
    )
    jobs["submit_time"] = rng.uniform(0, 7 * 86400, jobs_n)
    job = rng.integers(0, jobs_n, n)
    is_map = rng.random(n) < 0.8
    mb = rng.uniform(32, 128, n)
    rate = rng.uniform(0.1, 0.2, n) * np.where(rng.random(n) < 0.05, 4.0, 1.0)
    dur = np.where(is_map, mb * rate, rng.uniform(20, 200, n))
    start = jobs.submit_time.to_numpy()[job] + rng.uniform(0, 600, n)
    tasks = pd.DataFrame(
        {
            "job_id": jobs.job_id.to_numpy()[job],
            "task_id": [f"t{i}" for i in range(n)],
            "type": np.where(is_map, "map", "reduce"),
            "start_time": start,
            "finish_time": start + dur,
            "status": "SUCCEEDED",
            "slots": 1,
            "input_bytes": np.where(is_map, (mb * 1e6).astype(np.int64), 0),
            "host": [f"h{i}" for i in rng.integers(0, 200, n)],
        }
    )
    return jobs, tasks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--tasks", type=int, default=1_000_000)
    args = ap.parse_args()
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ali.db"
        t_db, _ = timed(lambda: import_batches(db, read_batches([args.trace])))
        t_pd, (pjobs, _raw) = timed(lambda: pandas_alibaba_jobs(args.trace))
        rows.append(("import Alibaba 2017 (80,553 rows)", t_db, t_pd))
        with connect(db) as con:
            tasks = con.execute("SELECT * FROM tasks").df()
            jobs = con.execute('SELECT *, coalesce(user_group, "user", \'default\') AS "group" FROM jobs').df()
            assert len(jobs) == len(pjobs) and np.allclose(
                jobs.set_index("job_id").sort_index().submit_time, pjobs.sort_index().submit_time.to_numpy()
            )
            t_db, jr = timed(lambda: analyses.job_resource(con))
            tt = tasks[tasks.finish_time >= tasks.start_time]
            t_pd, pr = timed(lambda: (tt.slots * (tt.finish_time - tt.start_time)).groupby(tt.job_id).sum())
            assert np.allclose(jr.set_index("job_id").r_total.reindex(pr.index), pr)
            rows.append(("R_total per job, eq. 4 (Alibaba)", t_db, t_pd))
            t_db, dem = timed(lambda: analyses.demand_by_group_hour(con))
            t_pd, pdem = timed(lambda: pandas_demand(jobs, tasks))
            got = dem.set_index(["group", "hour"]).demand
            assert np.allclose(got.reindex(pdem.index), pdem) and np.isclose(got.sum(), pdem.sum())
            rows.append(("demand per group and hour (Alibaba)", t_db, t_pd))
        sdb = Path(tmp) / "syn.db"
        sj, st = synthetic(args.tasks)
        sj_src = conform_table("jobs", pa.Table.from_pandas(sj, preserve_index=False), "syn")
        st_src = conform_table("tasks", pa.Table.from_pandas(st, preserve_index=False), "syn")
        import_batches(sdb, [Batch("syn", "synthetic", {"jobs": sj_src, "tasks": st_src})])
        sj = sj.assign(group=sj.user_group)
        pd_d, pd_red, pd_slow = pandas_map_cost(st, sj)
        with connect(sdb) as con:
            t_db, d = timed(lambda: analyses.map_cost_per_unit(con))
            t_pd, _ = timed(lambda: pandas_map_cost(st, sj))
            assert np.allclose(d.set_index("group").D.reindex(pd_d.index), pd_d)
            rows.append((f"D per group, eqs. 5-7 ({args.tasks:,} tasks)", t_db, t_pd))
            t_db, red = timed(lambda: analyses.mean_reduce_cost(con))
            t_pd, _ = timed(
                lambda: (
                    st[st.type == "reduce"]
                    .merge(sj[["job_id", "group"]], on="job_id")
                    .assign(r=lambda x: x.finish_time - x.start_time)
                    .groupby("group")
                    .r.mean()
                )
            )
            assert np.allclose(red.set_index("group").reduce_cost.reindex(pd_red.index), pd_red)
            rows.append((f"reduce cost per group, eq. 9 ({args.tasks:,} tasks)", t_db, t_pd))
            t_db, slow = timed(lambda: analyses.slow_nodes(con))
            assert (slow.set_index("host").slow_tasks.reindex(pd_slow.index) == pd_slow).all()
            rows.append((f"slow nodes ({args.tasks:,} tasks)", t_db, float("nan")))
    print(f"{'step':48s} {'mropt s':>9s} {'pandas s':>9s} {'pandas/mropt':>12s}")
    for name, a, b in rows:
        print(f"{name:48s} {a:9.3f} {b:9.3f} {b / a:12.2f}")


if __name__ == "__main__":
    main()
