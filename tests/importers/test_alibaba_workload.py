"""The Alibaba 2017 workload importer (mropt.importers.alibaba_workload, ``import-alibaba --workload``)."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mropt.cli.main import main
from mropt.importers.alibaba_workload import AlibabaWorkloadParams, import_alibaba_workload
from mropt.model import InputError, instance_to_json, load_instance
from mropt.model.workload import WorkloadInstance
from mropt.sim.engine import Simulation
from mropt.sim.policy import ACCEPT, Admission, Policy, make_policy
from mropt.sim.state import ANY, MAP
from mropt.sim.verify import verify_simulation

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MROPT_SHARED") or ROOT.parent / "shared")
TRACE = SHARED / "traces" / "alibaba-2017" / "batch_task.csv"


def trace() -> Path:
    if not TRACE.is_file():
        pytest.skip(f"Alibaba 2017 trace not available at {TRACE} (kept in ../shared; set MROPT_SHARED)")
    return TRACE


class Greedy(Policy):
    """A minimal resource-only policy for these tests: jobs in submit order, each offered node
    filled with as many of the first waiting jobs' tasks as fit (first fit, no fairness, no
    locality); a job leaves the queue once every task is launched (nothing is re-queued here:
    no faults, no speculation)."""

    def start(self, sim) -> None:  # type: ignore[no-untyped-def]
        super().start(sim)
        self.waiting: dict[int, None] = {}  # arrival order (dicts keep insertion order)

    def on_arrival(self, job: int) -> Admission:
        self.waiting[job] = None
        return ACCEPT

    def assign(self, node: int) -> None:
        sim = self.sim
        jobs = sim.jobs
        misses = 0
        launched = []
        for j in self.waiting:
            pending = jobs[j].runnable[MAP]
            first, started, _, _ = sim.launch_tasks(j, node, MAP, ANY, pending)
            if first < 0:
                misses += 1
                if misses == 4:  # the node is full for the jobs at the head of the queue
                    break
            elif started == pending:
                launched.append(j)
        for j in launched:
            del self.waiting[j]


HEADER = (
    "task_create_time, task_end_time, job_id, task_id,number_of_instances, status, "
    "number_of_cpus_requested_per_instance_in_the_task,normalized_memory_requested_per_instance_in_the_task"
)
#: hand-written rows: 4 good ones (jobs 7 and 9), one of every skip reason, blank lines
ROWS = [
    "110,170,7,1,4,Terminated,50,0.01",  # good: 4 x <0.5 CPU, 0.01 mem>, 60 s, submit 110 - 100 = 10
    "100,130,9,2,1,Failed,100,0.25",  # good (failed rows held their resources): 30 s, submit 0
    "100,400,7,3,2,Terminated,200,0.5",  # good: same create time as 9/2, later in the file
    "",
    "500,900,11,4,3,Terminated,64,0.02",  # good, starts a third trace job
    "6036,6046,4,7,393,Waiting,,",  # empty_request
    "-5,100,5,8,1,Terminated,50,0.01",  # negative_time
    "120,180,5,9,0,Terminated,50,0.01",  # no_demand (0 instances)
    "120,abc,5,10,1,Terminated,50,0.01",  # malformed
    "1,2,3",  # malformed (too few columns)
    ",,,,,,,",  # malformed (commas only)
    '"120,180,5,11,1,Terminated,50,0.01',  # malformed (a stray quote spoils its line only)
    "150,150,5,12,1,Terminated,50,0.01",  # no_duration (end = create)
    "150,900,5,13,1,Running,50,0.01",  # unfinished
    "150,900,5,14,1,Terminated,50,1.5",  # too_large (more memory than a machine)
    "160,200,7,1,1,Terminated,50,0.01",  # duplicate job/task pair
]


def write_csv(tmp_path: Path, rows: list[str] = ROWS, header: bool = True) -> Path:
    path = tmp_path / "batch_task.csv"
    path.write_text("\n".join(([HEADER] if header else []) + rows) + "\n")
    return path


def cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def test_hand_written_rows(tmp_path: Path):
    w = import_alibaba_workload(write_csv(tmp_path), machines=45)
    assert [j.id for j in w.jobs] == ["j9-t2", "j7-t3", "j7-t1", "j11-t4"]  # create time, then file order
    assert [j.user for j in w.jobs] == ["job9", "job7", "job7", "job11"]
    assert [j.submit_time for j in w.jobs] == [0.0, 0.0, 10.0, 400.0]  # shifted by t0 = 100
    groups = [j.stages for j in w.jobs]
    assert all(len(s) == 1 and s[0].type == "map" and len(s[0].tasks) == 1 for s in groups)
    got = [(s[0].tasks[0].count, dict(s[0].tasks[0].demand), s[0].tasks[0].duration) for s in groups]
    assert got == [
        (1, {"cpu": 1.0, "mem": 0.25}, 30.0),
        (2, {"cpu": 2.0, "mem": 0.5}, 300.0),
        (4, {"cpu": 0.5, "mem": 0.01}, 60.0),
        (3, {"cpu": 0.64, "mem": 0.02}, 400.0),
    ]
    assert all(not g.replicas for j in w.jobs for g in j.stages[0].tasks)  # placed by the simulator
    assert w.placement is not None and (w.placement.replicas, w.placement.seed) == (3, 0)
    assert (w.timing.rack_factor, w.timing.remote_factor) == (1.0, 1.0)
    assert [(s.id, s.count, s.rack, dict(s.resources)) for s in w.nodes] == [
        ("r0", 20, "rack0", {"cpu": 64.0, "mem": 1.0}),
        ("r1", 20, "rack1", {"cpu": 64.0, "mem": 1.0}),
        ("r2", 5, "rack2", {"cpu": 64.0, "mem": 1.0}),
    ]
    src = w.meta["source"]
    assert src["skipped"] == {
        "malformed": 4,
        "empty_request": 1,
        "negative_time": 1,
        "no_demand": 1,
        "no_duration": 1,
        "unfinished": 1,
        "too_large": 1,
        "duplicate": 1,
    }
    assert (src["t0"], src["rows_usable"], src["rows_in_window"], src["trace_jobs"], src["instances"]) == (
        100,
        4,
        4,
        3,
        10,
    )


def test_window_and_jobs(tmp_path: Path):
    path = write_csv(tmp_path)
    w = import_alibaba_workload(path, start=105, duration=300)  # creates 110 only; 500 is out
    assert [(j.id, j.submit_time) for j in w.jobs] == [("j7-t1", 0.0)]
    w = import_alibaba_workload(path, jobs=1)  # the first trace job by create time: 9
    assert [j.id for j in w.jobs] == ["j9-t2"]
    w = import_alibaba_workload(path, jobs=2)  # 9 and 7, every row of them
    assert [j.id for j in w.jobs] == ["j9-t2", "j7-t3", "j7-t1"]
    w = import_alibaba_workload(path, AlibabaWorkloadParams(replicas=0, rack_size=7, machines=8))
    assert w.placement is None and [s.count for s in w.nodes] == [7, 1]
    with pytest.raises(InputError, match=r"no usable rows with task_create_time in \[1000, end\)"):
        import_alibaba_workload(path, start=1000)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"machines": 0}, "'machines' must be >= 1, got 0"),
        ({"duration": -1.0}, "'duration' must be >= 0"),
        ({"replicas": 17}, "'replicas' must be an integer in [0, 16], got 17"),
        ({"jobs": -1}, "'jobs' must be >= 0"),
        ({"rack_factor": 0.5}, "'rack_factor' must be >= 1"),
        ({"machines": "x"}, "'machines' must be"),
    ],
)
def test_bad_parameters_one_line(tmp_path: Path, overrides, words):
    with pytest.raises(InputError) as info:
        import_alibaba_workload(write_csv(tmp_path), **overrides)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_bad_or_empty_files_never_crash(tmp_path: Path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="no usable rows"):
        import_alibaba_workload(empty)
    only_bad = write_csv(tmp_path, ROWS[5:-1], header=False)  # every bad row but the duplicate
    with pytest.raises(InputError, match=r"0 usable rows in the file, skipped 10"):
        import_alibaba_workload(only_bad)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="not UTF-8"):
        import_alibaba_workload(binary)


#: characters of hostile CSV fields (as tests/test_malformed_inputs.py)
FIELD = st.text(alphabet="0123456789-.e,\t\"' xinfa\x00é", max_size=12) | st.sampled_from(
    ["inf", "nan", "-inf", "1e400", "1" + "0" * 500, "9" * 25, "", " ", '"', "1e12", "2e8", "0.001", "-5", "Running"]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(FIELD, min_size=0, max_size=9).map(",".join), max_size=8))
def test_hostile_rows_are_skipped_and_counted(tmp_path: Path, rows: list[str]):
    """Every data line is a job or counted under one reason; the file reads back as written."""
    lines = ["10,20,1,1,4,Terminated,50,0.01", *rows]
    path = tmp_path / "h.csv"
    path.write_text(HEADER + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    try:
        w = import_alibaba_workload(path, machines=2)
    except InputError as exc:  # only when no row is usable: never here, the first row is good
        raise AssertionError(f"unexpected error {exc}") from None
    src = w.meta["source"]
    data_lines = sum(1 for line in "\n".join(lines).splitlines() if line.strip())
    assert src["rows_usable"] + sum(src["skipped"].values()) == data_lines
    assert len(w.jobs) == src["rows_usable"]
    out = tmp_path / "h.json"
    out.write_text(instance_to_json(w))
    assert load_instance(out) == w


def test_cli_writes_a_workload_and_refuses_mixed_options(tmp_path: Path):
    path = write_csv(tmp_path)
    out = tmp_path / "w.json"
    code, _, err = cli(
        "import-alibaba", path, "--workload", "--machines", "2", "--replicas", "2", "--seed", "5", "-o", out
    )
    assert code == 0, err
    w = load_instance(out)
    assert isinstance(w, WorkloadInstance) and w.n_nodes == 2 and len(w.jobs) == 4
    assert w.placement is not None and (w.placement.replicas, w.placement.seed) == (2, 5)
    assert w.meta["source"]["skipped"]["malformed"] == 4
    code, _, err = cli("import-alibaba", path, "--replicas", "2")
    assert code == 2 and "option '--replicas' needs --workload" in err
    code, _, err = cli("import-alibaba", path, "--workload", "--group", "task")
    assert code == 2 and "option '--group' is not for --workload" in err


def test_hand_written_rows_run(tmp_path: Path):
    """2 machines (64 CPUs, memory 1): at 0, 9/2 (0.25 mem) and one instance of 7/3 (0.5) fill
    machine 0's memory to 0.75, 7/3's second instance goes to machine 1; 7/1 (4 x 0.01) fits
    on machine 0 at 10; 11/4 runs alone from 400. Nobody waits: finish = submit + duration."""
    w = import_alibaba_workload(write_csv(tmp_path), machines=2, replicas=0)
    rec = Simulation(w, Greedy(), seed=0).run()
    jobs = rec.jobs_columns()
    finish = dict(zip(jobs["job_id"], jobs["finish"], strict=True))
    assert finish == {"j9-t2": 30.0, "j7-t3": 300.0, "j7-t1": 70.0, "j11-t4": 800.0}


def test_real_trace_first_rows_run(tmp_path: Path):
    w = import_alibaba_workload(trace(), jobs=40, machines=50)
    src = w.meta["source"]
    assert src["trace_jobs"] == 40 and len(w.jobs) == src["rows_in_window"] > 40
    assert src["skipped"]["empty_request"] == 9017 and src["skipped"]["negative_time"] == 167  # the whole file's
    assert all(j.submit_time >= 0 for j in w.jobs) and w.jobs[0].submit_time == 0
    rec = Simulation(w, Greedy(), seed=0).run()
    jobs = rec.jobs_columns()
    assert not np.isnan(jobs["finish"]).any()  # every job ran to the end
    tasks = rec.tasks_columns()
    assert set(tasks["locality"]) <= {"node", "rack", "any"}  # synthetic replicas give every task a locality


def sim_run(w: WorkloadInstance, policy: str, **options: Any) -> Any:
    rec = Simulation(w, make_policy(policy), **options).run()
    verdict = verify_simulation(w, rec.jobs_columns(), rec.tasks_columns())
    assert verdict.ok, verdict.problems
    return rec


def test_slots_for_slot_schedulers(tmp_path: Path):
    """``slots`` = 2 on one machine: a task holds a slot and its requests. FIFO (event mode):
    9/2 and one instance of 7/3 at 0; 7/3's second at 30 (memory 0.5 + 0.5 = the machine's);
    7/1's four instances at 300, 330, 360, 390; 11/4's three at 420, 450 and 820."""
    w = import_alibaba_workload(write_csv(tmp_path), machines=1, replicas=0, slots=2)
    assert [(n.map_slots, n.reduce_slots) for n in w.nodes] == [(2, 0)]
    rec = sim_run(w, "fifo", mode="event")
    jobs = rec.jobs_columns()
    finish = dict(zip(jobs["job_id"], jobs["finish"], strict=True))
    assert finish == {"j9-t2": 30.0, "j7-t3": 330.0, "j7-t1": 450.0, "j11-t4": 1220.0}
    rec = sim_run(w, "fair")  # the slot-counting Fair Scheduler runs on it (verify checks slots and memory)
    assert not np.isnan(rec.jobs_columns()["finish"]).any()
    with pytest.raises(InputError, match="'slots' must be an integer in"):
        import_alibaba_workload(write_csv(tmp_path), slots=-1)
