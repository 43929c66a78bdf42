"""``mropt locality``, ``mropt import-alibaba``, ``mropt generate fairness`` and ``mropt solve`` on fairness files:
exit status, stdout and stderr (run in this process: ``cli_capture.run_completed``)."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from mropt.model import load_instance
from mropt.model.solution import Solution
from mropt.registry import verify_solution

from cli_capture import run_completed
from conftest import PAPER_EXAMPLE, alibaba_trace


def mropt(*args) -> subprocess.CompletedProcess:
    return run_completed(*args)


def one_line_error(result, *words):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_delay_bound_json():
    r = mropt(
        "locality", "delay-bound", "--locality", "0.95", "--tasks", "20", "--replicas", "3", "--nodes", "100", "--json"
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert round(out["min_delay"], 1) == 23.1
    assert out["min_delay_per_node"] == pytest.approx(0.231, abs=5e-4)
    assert out["min_delay_exact"] <= 24


def test_ddrf_table_and_table2():
    r = mropt("locality", "ddrf", "--e1", "2,6", "--e2", "10,40", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 4 and any(row["bound_L"] > 1 for row in rows)
    assert all(row["exact_L"] <= 1 for row in rows)
    r = mropt("locality", "table2")
    assert r.returncode == 0 and "95.4%" in r.stdout and "98%" in r.stdout


@pytest.mark.slow
def test_figures_written(tmp_path):
    r = mropt("locality", "figures", "--out", tmp_path / "figs")
    assert r.returncode == 0, r.stderr
    for k in range(1, 5):
        assert (tmp_path / "figs" / f"fig{k}.png").read_bytes()[:4] == b"\x89PNG"
    assert "fig4" in json.loads((tmp_path / "figs" / "figures.json").read_text())


@pytest.mark.slow
def test_solve_drf_json_and_verify(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(PAPER_EXAMPLE))
    r = mropt("solve", path, "--method", "drf", "--json", "-o", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["allocation"] == {"A": 3, "B": 2} and out["order"] == ["B", "A", "A", "B", "A"]
    assert set(out) >= {"dominant_shares", "utilisation"}
    r = mropt("verify", path, tmp_path / "s.json")
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stderr


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d["users"][1].update(max_tasks=-3), ["user 'B'", "'max_tasks'", "-3"]),
        (lambda d: d["users"][0]["demand"].update(cpu=None), ["user 'A'", "'cpu'"]),
        (lambda d: d.update(nodes=[{"id": "n1", "capacity": {"cpu": 9, "mem": -18}}]), ["node 'n1'", "'mem'", "-18"]),
    ],
)
def test_bad_files_exit_2_one_line(tmp_path, mutate, words):
    data = copy.deepcopy(PAPER_EXAMPLE)
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    one_line_error(mropt("solve", path, "--method", "drf"), *words)


@pytest.mark.slow
def test_generate_fairness_deterministic(tmp_path):
    a = mropt("generate", "fairness", "--users", "5", "--seed", "3", "--with-nodes", "--replicas", "2")
    b = mropt("generate", "fairness", "--users", "5", "--seed", "3", "--with-nodes", "--replicas", "2")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    path = tmp_path / "g.json"
    path.write_text(a.stdout)
    inst = load_instance(path)
    assert inst.n == 5 and inst.nodes is not None
    r = mropt("solve", path, "--method", "drf-cpsat", "--json")
    sol = Solution.from_dict(json.loads(r.stdout))
    assert verify_solution(inst, sol).ok


@pytest.mark.slow
def test_import_alibaba_bad_rows_counted(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text(
        "task_create_time, task_end_time, job_id, task_id,number_of_instances, status, cpus,mem\n"
        "10,20,1,1,4,Terminated,50,0.01\n"
        "12,30,1,2,2,Terminated,100,0.04\n"
        "15,25,2,3,3,Waiting,,\n"
        "-5,25,3,4,3,Terminated,50,0.01\n"
        "16,x,4,5,3,Terminated,50,0.01\n"
        "18,40,5,6,1,Running,100,0.02\n"
    )
    out = tmp_path / "a.json"
    r = mropt("import-alibaba", csv, "--machines", "2", "-o", out)
    assert r.returncode == 0, r.stderr
    inst = load_instance(out)
    assert inst.ids == ("job1", "job5")
    job1 = inst.users[0]
    assert job1.max_tasks == 6 and job1.demand["cpu"] == pytest.approx((4 * 0.5 + 2 * 1.0) / 6, abs=1e-4)
    assert dict(inst.resources) == {"cpu": 128, "mem": 2}
    assert inst.meta["source"]["skipped"] == {"malformed": 1, "empty_request": 1, "negative_time": 1, "no_demand": 0}
    one_line_error(mropt("import-alibaba", csv, "--start", "1000"), "no usable rows")
    one_line_error(mropt("import-alibaba", tmp_path / "nope.csv"), "no such file")


@pytest.mark.slow
def test_import_alibaba_real_trace(tmp_path):
    trace = alibaba_trace()
    out = tmp_path / "a.json"
    r = mropt("import-alibaba", trace, "--duration", "1800", "--machines", "4", "--max-users", "12", "-o", out)
    assert r.returncode == 0, r.stderr
    inst = load_instance(out)
    src = inst.meta["source"]
    assert inst.n == 12 and src["skipped"]["empty_request"] > 0 and src["skipped"]["negative_time"] > 0
    for method in ("drf", "drf-cpsat"):
        r = mropt("solve", out, "--method", method, "--json", "--time-limit", "30")
        assert verify_solution(inst, Solution.from_dict(json.loads(r.stdout))).ok


NODES_BAD_INPUT = {
    "kind": "fairness",
    "schema_version": 1,
    "users": [{"id": "A", "demand": {"cpu": 1}, "task_inputs": [["n9"]]}],
    "nodes": [{"id": "n1", "capacity": {"cpu": 2}}],
}


@pytest.mark.parametrize(
    "content, words",
    [
        ("{bad", ["not valid JSON"]),
        (json.dumps(NODES_BAD_INPUT), ["user 'A'", "'task_inputs[0]'", "'n9'"]),
        (
            json.dumps({**PAPER_EXAMPLE, "users": [{"id": "A", "demand": {"cpu": 1}, "weight": -2}]}),
            ["user 'A'", "'weight'", "-2"],
        ),
        (json.dumps({**PAPER_EXAMPLE, "nodes": [{"id": "n1", "rack": "r1"}]}), ["node 'n1'", "'capacity'", "missing"]),
    ],
)
def test_more_bad_files_exit_2(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    one_line_error(mropt("solve", path, "--method", "drf-milp"), *words)


@pytest.mark.parametrize(
    "args, words",
    [
        (["locality", "delay-bound", "--locality", "1.5"], ["lambda", "1.5"]),
        (["locality", "ddrf", "--e1", "9", "--e2", "3"], ["E1 <= E2"]),
        (["locality", "ddrf", "--monte-carlo", "10", "--tasks", "30"], ["distinct racks"]),
        (["solve", "{paper}", "--method", "drf", "--param", "mode=bogus"], ["'mode'", "listing", "bogus"]),
        (["locality", "round", "{paper}"], ["no 'nodes'"]),
        (["import-alibaba", "{tmp}"], ["is a directory"]),
    ],
)
def test_bad_arguments_exit_2_one_line(tmp_path, args, words):
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps(PAPER_EXAMPLE))
    args = [a.format(paper=paper, tmp=tmp_path) for a in args]
    one_line_error(mropt(*args), *words)


@pytest.mark.slow
def test_listing_option_stops_at_first_task_that_does_not_fit(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(
        json.dumps(
            {
                "kind": "fairness",
                "schema_version": 1,
                "resources": {"cpu": 4, "mem": 100},
                "users": [{"id": "A", "demand": {"cpu": 2, "mem": 1}, "weight": 4}, {"id": "C", "demand": {"mem": 10}}],
            }
        )
    )
    text = json.loads(mropt("solve", path, "--method", "drf", "--json").stdout)
    listing = json.loads(mropt("solve", path, "--method", "drf", "--param", "mode=listing", "--json").stdout)
    assert text["allocation"] == {"A": 2, "C": 9} and listing["allocation"] == {"A": 2, "C": 3}


@pytest.mark.slow
def test_solve_with_nodes_reports_placement(tmp_path):
    path = tmp_path / "n.json"
    data = {
        **PAPER_EXAMPLE,
        "resources": {"cpu": 9, "mem": 18},
        "nodes": [
            {"id": "n1", "rack": "r1", "capacity": {"cpu": 5, "mem": 9}},
            {"id": "n2", "rack": "r1", "capacity": {"cpu": 4, "mem": 9}},
        ],
    }
    path.write_text(json.dumps(data))
    for rule in ("first-fit", "best-fit"):
        out = json.loads(mropt("solve", path, "--method", "drf", "--param", f"placement={rule}", "--json").stdout)
        placed = {u: sum(v.values()) for u, v in out["placement"].items()}
        assert placed == {u: n for u, n in out["allocation"].items() if n}
        assert set(out) >= {"allocation", "dominant_shares", "utilisation", "order", "placement"}
