"""HEI against Fair on the simulated cluster (HEI paper, ``docs/papers.md``).

Every simulated run is checked by the independent :func:`mropt.sim.verify.verify_simulation`
(asserted). Both parts compare ``hei`` (:mod:`mropt.sim.policies.hei`) with ``fair``, the same
Fair Scheduler code without the history.

1. **A multi-group day** (sec. 2.3's setting: groups whose submissions follow the hour of
   day, and consecutive days alike). The SWIM Facebook 2009 day
   (SWIM's ``FB-2009_samples_24_times_1hr_0.tsv``) imported as a workload
   (:func:`mropt.importers.swim_workload.import_swim_workload`, bytes scaled to ``--scale-nodes`` 100
   machines, 3 replicas) and run on a smaller cluster, ``--nodes`` (10) nodes of 2 map and 2
   reduce slots, so that the busy hours contend. **Groups** (pools) are the rows' map input
   size in the trace: ``small`` (< 64 MB: the interactive queries), ``medium`` (< 10 GB) and
   ``large`` (the batch jobs); each has its own busy hours in the trace. A map task's
   ``input_mb`` is its job's scaled input (at least SWIM's 64 MiB) over its map tasks.
   **Day 1** is the trace's day, run under ``fair``; its tables give the history
   (:func:`~mropt.sim.policies.hei_history.history_frames`, then
   ``HeiHistory.from_frames``: the path the history database's analyses take).
   **Day 2** (one per ``--seeds``, numpy's ``default_rng(seed)``) keeps every (group, hour)
   cell's job count: the paper's observation that consecutive days have the same number and
   kinds of jobs per group and hour. ``--day2 shuffle`` (default): the cell's own jobs at new
   times drawn uniformly in the hour (the history's demand is then exact); ``resample``: jobs
   drawn with replacement from the cell, at their offsets in the hour (a cell's demand varies:
   the trace's few huge jobs may be drawn twice or not at all). Day 2 is run under ``fair`` and under
   ``hei`` with day 1's history. Reported: per group, jobs, mean and 95th percentile of the
   completion time (finish - submit), and hei / fair.
2. **The paper's Table 1 situation**: a pool whose jobs hold few slots for a long time. 19
   nodes of 8 map slots (152, the paper's testbed), map-only jobs. Pool ``long``: a job of
   40 maps of 1,200 s at time 0, its minShare fixed at its need, 40 (the allocation file,
   for both schedulers, as the paper fixes it), then at ``T`` = 600 s three jobs of 30 such
   maps (the "temporarily added" jobs: need 130 slots). Pool ``short``: a job of 200 maps of
   10 s every 20 s for an hour (it always wants the cluster). HEI's history gives D and the
   reduce cost only (from a run of the same workload under ``fair``: no demand history, so
   the minShares stay the file's). Reported: slots granted to ``long`` (its running maps,
   time-weighted mean over [T + 60, T + 600] s, and at T + 300 s) against the 130 it needs,
   and the time from the added jobs' submission to their first map (mean over the three),
   plus the added jobs' and the short jobs' mean completion time.

Run (from the repository root)::

    PYTHONPATH=. MROPT_SHARED=../shared python benchmarks/bench_sim_hei.py            # all
    PYTHONPATH=. MROPT_SHARED=../shared python benchmarks/bench_sim_hei.py --quick    # one day-2 seed
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import mropt.sim.policies  # noqa: F401  (registers the policies)
from mropt.importers.swim_workload import import_swim_workload
from mropt.instances.workload_gen import rack_nodes
from mropt.model.workload import NodeSpec, PoolSpec, Stage, TaskGroup, WorkloadInstance, WorkloadJob
from mropt.sim.engine import Simulation
from mropt.sim.policies.hei import Hei
from mropt.sim.policies.hei_history import HeiHistory, history_frames
from mropt.sim.policy import make_policy
from mropt.sim.recorder import Recorder
from mropt.sim.verify import verify_simulation

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MROPT_SHARED", ROOT.parent / "shared"))
SWIM_DAY = SHARED / "traces" / "swim" / "FB-2009_samples_24_times_1hr_0.tsv"
GROUPS = ("small", "medium", "large")
MIN_INPUT = 64 * (1 << 20)


def render(headers: list[str], rows: list[list[Any]]) -> str:
    num = [all(isinstance(r[k], (int, float)) for r in rows) for k in range(len(headers))]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if n else "---" for n in num) + "|"]
    out += ["| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def simulate(w: WorkloadInstance, policy: Any) -> tuple[Recorder, float]:
    started = time.perf_counter()
    rec = Simulation(w, policy).run()
    wall = time.perf_counter() - started
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems[:3]
    return rec, wall


# -- part 1 -------------------------------------------------------------------------------------
def group_of(trace_bytes: int) -> str:
    if trace_bytes < 64e6:
        return "small"
    return "medium" if trace_bytes < 10e9 else "large"


def swim_day(scale_nodes: int, nodes: int) -> WorkloadInstance:
    """The SWIM day as a workload, pools by input size, input_mb per map task, on ``nodes`` nodes."""
    w = import_swim_workload(SWIM_DAY, nodes=scale_nodes)
    jobs = []
    for job in w.jobs:
        trace = job.extra["trace"]
        scaled = max(trace["map_input_bytes"] * scale_nodes // 600, MIN_INPUT)
        maps = job.stages[0].tasks[0]
        stages = (Stage("map", (dataclasses.replace(maps, input_mb=scaled / maps.count / 1e6),)), *job.stages[1:])
        jobs.append(dataclasses.replace(job, stages=stages, pool=group_of(trace["map_input_bytes"])))
    return dataclasses.replace(w, jobs=tuple(jobs), nodes=rack_nodes(nodes, 20, 2, 2), name="swim-day-groups")


def next_day(w: WorkloadInstance, seed: int, how: str = "shuffle") -> WorkloadInstance:
    """Day 2: each (group, hour) cell keeps its job count; ``shuffle``: its own jobs at new uniform
    times in the hour; ``resample``: jobs drawn with replacement from the cell, at their offsets."""
    rng = np.random.default_rng(seed)
    cells: dict[tuple[str, int], list[WorkloadJob]] = {}
    for job in w.jobs:
        cells.setdefault((job.pool_name, int(job.submit_time // 3600)), []).append(job)
    jobs = []
    for (_, hour), members in sorted(cells.items()):
        if how == "shuffle":
            for src, offset in zip(members, rng.uniform(0.0, 3600.0, size=len(members))):
                jobs.append((hour * 3600 + float(offset), src))
            continue
        for k in rng.integers(len(members), size=len(members)):
            src = members[int(k)]
            jobs.append((hour * 3600 + src.submit_time % 3600, src))
    jobs.sort(key=lambda item: item[0])
    out = tuple(
        dataclasses.replace(src, id=f"d2-{i}", submit_time=round(t, 3), deadline=None, benefit=None, extra={})
        for i, (t, src) in enumerate(jobs)
    )
    return dataclasses.replace(w, jobs=out, name=f"swim-day2-s{seed}")


def per_group(rec: Recorder) -> dict[str, np.ndarray]:
    j = rec.jobs_columns()
    ct = np.asarray(j["finish"], dtype=float) - np.asarray(j["submit_time"], dtype=float)
    pools = np.asarray(j["pool"])
    out = {g: ct[pools == g] for g in GROUPS}
    out["all"] = ct
    return out


def part1(args: argparse.Namespace) -> None:
    print("## 1. A multi-group day: SWIM groups by input size, history from day 1\n")
    started = time.perf_counter()
    day1 = swim_day(args.scale_nodes, args.nodes)
    rec1, wall1 = simulate(day1, make_policy("fair"))
    frames = history_frames(day1, rec1.jobs_columns(), rec1.tasks_columns())
    history = HeiHistory.from_frames(*frames)
    print(
        f"Day 1: {len(day1.jobs):,} jobs, {day1.n_tasks:,} tasks on {args.nodes} nodes x (2 map + 2 reduce) slots "
        f"(bytes scaled to {args.scale_nodes} machines); fair {wall1:.1f} s. History from its tables:\n"
    )
    rows = []
    for g in GROUPS:
        hours = history.demand.get(g, (0.0,) * 24)
        busiest = sorted(range(24), key=lambda h: -hours[h])[:3]
        rows.append(
            [
                g,
                int(sum(1 for job in day1.jobs if job.pool_name == g)),
                round(sum(hours) / 3600, 1),
                ", ".join(f"{h}h ({hours[h] / 3600:.1f})" for h in busiest),
                f"{history.D.get(g, float('nan')):.4f}",
                f"{history.reduce_cost.get(g, float('nan')):.1f}",
            ]
        )
    print(
        render(["group", "jobs", "demand slot-h/day", "busiest hours (slot-h)", "D s/MB", "reduce cost s"], rows) + "\n"
    )
    variants = {
        "fair": None,
        "hei-min": HeiHistory(demand=history.demand),  # step 1 only: weights as the file's
        "hei-w": HeiHistory(D=history.D, reduce_cost=history.reduce_cost),  # step 2 only: minShares 0
        "hei": history,
    }
    results: dict[str, dict[str, list[np.ndarray]]] = {name: {} for name in variants}
    walls: dict[str, list[float]] = {name: [] for name in variants}
    for seed in args.seeds:
        day2 = next_day(day1, seed, args.day2)
        for name, hist in variants.items():
            policy = make_policy("fair") if hist is None else Hei.with_history(hist)
            rec, wall = simulate(day2, policy)
            walls[name].append(wall)
            for g, ct in per_group(rec).items():
                results[name].setdefault(g, []).append(ct)
        print(f"<!-- day 2 seed {seed} done at {time.perf_counter() - started:.0f} s -->", file=sys.stderr, flush=True)
    print(
        f"Day 2 ({args.day2}), seeds {', '.join(map(str, args.seeds))} (jobs pooled over seeds); completion time = finish - submit "
        "(s), mean and 95th percentile; `hei-min`: HEI with the demand history only (step 1: hourly minShares, "
        "weights the file's), `hei-w`: with D and reduce cost only (step 2: weights, minShares 0), `hei`: both.\n"
    )
    for stat, fn in (("mean", np.mean), ("p95", lambda x: np.percentile(x, 95))):
        rows = []
        for g in (*GROUPS, "all"):
            vals = {name: float(fn(np.concatenate(results[name][g]))) for name in variants}
            row: list[Any] = [g, int(sum(len(x) for x in results["fair"][g]))]
            for name in variants:
                row.append(round(vals[name], 1))
            row += [round(vals[name] / vals["fair"], 3) for name in variants if name != "fair"]
            rows.append(row)
        heads = ["group", "jobs", *(f"{n} {stat}" for n in variants)]
        heads += [f"{n}/fair" for n in variants if n != "fair"]
        print(render(heads, rows) + "\n")
    print(
        "Wall time per day-2 run: "
        + ", ".join(f"{name} {np.mean(walls[name]):.1f} s" for name in variants)
        + f"; part 1 {time.perf_counter() - started:.0f} s.\n"
    )


# -- part 2 -------------------------------------------------------------------------------------
ADDED_AT = 600.0


def map_only(jid: str, pool: str, submit: float, count: int, duration: float) -> WorkloadJob:
    return WorkloadJob(
        id=jid, pool=pool, submit_time=submit, stages=(Stage("map", (TaskGroup(duration=duration, count=count),)),)
    )


def table1_workload() -> WorkloadInstance:
    jobs = [map_only("long-0", "long", 0.0, 40, 1200.0)]
    jobs += [map_only(f"long-add{k}", "long", ADDED_AT, 30, 1200.0) for k in range(3)]
    jobs += [map_only(f"short-{k}", "short", 20.0 * k, 200, 10.0) for k in range(180)]
    jobs.sort(key=lambda j: j.submit_time)
    return WorkloadInstance(
        nodes=(NodeSpec(id="n", count=19, map_slots=8, reduce_slots=0),),
        jobs=tuple(jobs),
        pools=(PoolSpec(id="long", min_maps=40),),
        name="hei-table1",
    )


def pool_slots(rec: Recorder, pool: str) -> tuple[np.ndarray, np.ndarray]:
    u = rec.utilisation_columns()
    keep = (np.asarray(u["pool"]) == pool) & (np.asarray(u["slot_type"]) == "map")
    return np.asarray(u["time"])[keep], np.asarray(u["busy"])[keep]


def at(times: np.ndarray, busy: np.ndarray, t: float) -> int:
    k = int(np.searchsorted(times, t, side="right")) - 1
    return int(busy[k]) if k >= 0 else 0


def mean_over(times: np.ndarray, busy: np.ndarray, lo: float, hi: float) -> float:
    grid = np.arange(lo, hi, 1.0)
    idx = np.searchsorted(times, grid, side="right") - 1
    return float(np.where(idx >= 0, busy[np.maximum(idx, 0)], 0).mean())


def part2() -> None:
    print("## 2. The paper's Table 1 situation: a pool of few long tasks\n")
    w = table1_workload()
    rec0, _ = simulate(w, make_policy("fair"))
    _, map_cost, reduce_cost = history_frames(w, rec0.jobs_columns(), rec0.tasks_columns())
    no_demand = pd.DataFrame({"group": [], "hour": [], "demand": []})
    history = HeiHistory.from_frames(no_demand, map_cost, reduce_cost)
    rows = []
    for name, policy in (("fair", make_policy("fair")), ("hei", Hei.with_history(history))):
        rec, wall = simulate(w, policy)
        times, busy = pool_slots(rec, "long")
        t = rec.tasks_columns()
        j = rec.jobs_columns()
        first = {}
        for jid, start in zip(t["job_id"], t["start"]):
            if jid.startswith("long-add"):
                first[jid] = min(first.get(jid, np.inf), float(start))
        ct = dict(zip(j["job_id"], np.asarray(j["finish"]) - np.asarray(j["submit_time"])))
        added = [ct[f"long-add{k}"] for k in range(3)]
        short = [v for k, v in ct.items() if k.startswith("short")]
        rows.append(
            [
                name,
                round(mean_over(times, busy, ADDED_AT + 60, ADDED_AT + 600), 1),
                at(times, busy, ADDED_AT + 300),
                130,
                round(float(np.mean([v - ADDED_AT for v in first.values()])), 1),
                round(float(np.mean(added)), 1),
                round(float(np.mean(short)), 1),
                round(wall, 2),
            ]
        )
    print(
        render(
            [
                "policy",
                "slots granted (mean, T+60..T+600)",
                "slots at T+300",
                "slots needed",
                "submission to first map s",
                "added jobs' completion s",
                "short jobs' completion s",
                "wall s",
            ],
            rows,
        )
    )
    print(
        f"\nHistory (from the fair run): D long {history.D['long']:.3f} s/MB, short {history.D['short']:.4f} s/MB "
        "(128 MB a map); no demand history, so minShares are the file's (long 40, short 0) for both.\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one day-2 seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--scale-nodes", type=int, default=100)
    ap.add_argument("--day2", choices=["shuffle", "resample"], default="shuffle", help="how day 2 is drawn from day 1")
    ap.add_argument("--part", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    args = ap.parse_args()
    if args.quick:
        args.seeds = args.seeds[:1]
    print("# HEI against Fair on the simulated cluster\n")
    print(
        f"Run {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on `{platform.node()}` "
        f"({os.cpu_count()} CPUs, Python {platform.python_version()}); command: "
        f"`python benchmarks/bench_sim_hei.py {' '.join(sys.argv[1:])}`\n"
    )
    started = time.perf_counter()
    if 1 in args.part:
        if not SWIM_DAY.exists():
            print(f"(part 1 skipped: {SWIM_DAY} not found; set MROPT_SHARED)\n")
        else:
            part1(args)
    if 2 in args.part:
        part2()
    print(f"Total wall time {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
