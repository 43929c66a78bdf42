"""``mropt solve``'s text output shows whole results (but ``drf``'s launch order: its length and first
launches), rounded, and only the instance kind's fields."""

from __future__ import annotations

from mropt.cli.solve import solution_text
from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.decisions import FairnessDecision, PriorityDecision, text_lines
from mropt.model.fairness import FairnessInstance
from mropt.model.solution import Solution


def fairness_instance(users: int) -> FairnessInstance:
    return FairnessInstance.from_dict(
        {
            "kind": "fairness",
            "resources": {"cpu": 1000.0, "mem": 1000.0},
            "users": [{"id": f"user{k:02d}", "demand": {"cpu": 1.0, "mem": 2.0}} for k in range(users)],
        }
    )


def test_nested_mappings_are_whole_and_rounded():
    users = [f"user{k:02d}" for k in range(30)]
    decision = FairnessDecision(
        allocation={u: k + 1 for k, u in enumerate(users)},
        dominant_shares={u: (k + 1) / 3 for k, u in enumerate(users)},
        utilisation={"cpu": 0.869140625, "mem": 0.99886760325},
        order=tuple(users * 3),
        placement={u: {f"node{n}": n + 1 for n in range(12)} for u in users},
    )
    sol = Solution(method="drf", status="feasible", objective=1 / 3, decision=decision)
    text = solution_text(sol, fairness_instance(30))
    assert "..." not in text
    for u in users:  # every user's placement on every node, one line per user
        assert f"{u}: " + " ".join(f"node{n}={n + 1}" for n in range(12)) in text
    assert "user29: 0.333333" not in text and "user29: 10" in text  # 30/3 = 10.0 -> "10"
    assert "user00: 0.333333" in text  # 1/3 to 6 significant digits
    assert "cpu: 0.869141" in text and "mem: 0.998868" in text
    # the launch order (one entry per task launched: thousands on a trace): its length and first launches
    assert f"order            90 launches (the first 10: {' '.join(users[:10])}; all of them: --json)" in text
    assert "0.3333333" not in text


def test_priority_allocation_rows():
    decision = PriorityDecision(
        allocation={"T1": {"map_slots": 47, "reduce_slots": 24, "sojourn": 582.5581395348836}},
        shared={"map_slots": 9, "reduce_slots": 3},
        infeasible=(),
        routing={"q11": 1 / 7},
        a=7 / 3,
        b=5 / 3,
    )
    assert text_lines(decision.allocation) == ["T1: map_slots=47 reduce_slots=24 sojourn=582.558"]
    rows = dict(decision.text_rows(None))
    assert rows["a"] == "2.33333" and rows["b"] == "1.66667" and rows["infeasible"] == "-"
    assert rows["routing"] == "q11: 0.142857"


def test_deeper_mappings_are_indented():
    assert text_lines({"a": {"b": {"c": 1.0}}}) == ["a:", "  b: c=1"]


def test_no_admission_fields_on_other_kinds():
    """An error on a fairness instance carries no fairness decision: no 'accepted' or 'sequence' row."""
    sol = Solution(method="drf-milp", status="error", objective=None, details={"error": "RuntimeError: boom"})
    text = solution_text(sol, fairness_instance(3))
    fields = [line.split()[0] for line in text.splitlines()[2:] if line.strip()]
    assert fields == ["method", "status", "objective", "bound", "wall", "solver", "error"]
    admission = AdmissionInstance(
        Cluster(1, 1), (Job(id="j0", map_phase_time=1, reduce_phase_time=1, deadline=5, benefit=1),)
    )
    text = solution_text(
        Solution(method="amb", status="feasible", objective=1.0, accepted=("j0",), sequence=("j0",)), admission
    )
    assert "accepted       1 of 1" in text and "sequence       j0" in text
