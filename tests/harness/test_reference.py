"""References and gaps never report a wrong number.

* every kind's objective sense: a minimisation (priority: total slots) keeps the smaller value
  as the reference, its bound is a lower bound, and its gaps are >= 0 too;
* a relaxation (``drf-lp``) is a bound, never the reference;
* float noise never shows as a gap (``-0``, ``1e-16``);
* ``reference.solu`` says its sense, old files read as maximisation, a name cannot inject a
  line, and a malformed line is skipped with a warning, never fatal.
"""

from __future__ import annotations

import math

import pytest

from mropt.harness import reference
from mropt.harness.reference import Reference, safe_name
from mropt.harness.runner import results_frame, update_reference
from mropt.harness.store import Store

H = "a" * 64  # an instance hash
G = "b" * 64


@pytest.fixture(autouse=True)
def fresh_warnings():
    """Warnings are printed once per process: each test sees its own."""
    reference._WARNED.clear()


def row(
    method: str,
    objective: float | None,
    *,
    status: str = "feasible",
    kind: str = "admission",
    exact: bool = False,
    bound: float | None = None,
    digest: str = H,
    **kw,
) -> dict:
    return {
        "instance_hash": digest,
        "instance_id": "inst",
        "kind": kind,
        "method": method,
        "method_name": method,
        "status": status,
        "objective": objective,
        "bound": bound,
        "verified": True,
        "exact": exact,
        **kw,
    }


# -- sense --------------------------------------------------------------------------------------
def test_priority_is_minimised_the_heuristic_is_not_the_optimum(tmp_path):
    """The bug: `mpsa` (138 slots) was recorded as the proven optimum of a minimisation whose proven
    minimum (`mpsa-exact`) is 135, with a 2.17 % gap for the optimum and 0 % for the heuristic."""
    ref = Reference()
    heuristic = row("mpsa", 138.0, kind="priority")
    exact = row("mpsa-exact", 135.0, kind="priority", status="optimal", exact=True, bound=135.0)
    for r in (heuristic, exact):
        ref.add_row(r)
    e = ref.entries[H]
    assert (e.sense, e.tag, e.value) == ("min", "optimal", 135.0)
    assert ref.gaps(exact)["gap"] == 0.0
    assert ref.gaps(heuristic)["gap"] == pytest.approx(3 / 135)
    assert ref.gaps(heuristic)["gap_to_bound"] == pytest.approx(3 / 135)
    ref.save(tmp_path / "reference.solu")
    text = (tmp_path / "reference.solu").read_text()
    assert "=sense=   min" in text and "138" not in text
    back = Reference.load(tmp_path / "reference.solu").entries[H]
    assert (back.sense, back.tag, back.value) == ("min", "optimal", 135.0)


def test_minimisation_bounds_are_lower_bounds_and_merge_upwards(tmp_path):
    ref = Reference()
    ref.add_row(row("lb1", None, kind="priority", status="bound", bound=120.0))
    ref.add_row(row("lb2", None, kind="priority", status="bound", bound=130.0))  # the tighter lower bound
    ref.add_row(row("h", 140.0, kind="priority"))
    ref.add_row(row("h2", 150.0, kind="priority"))
    e = ref.entries[H]
    assert (e.tag, e.value, e.bound) == ("best_known", 140.0, 130.0)
    assert ref.gaps(row("h2", 150.0, kind="priority"))["gap"] == pytest.approx(10 / 140)
    assert ref.gaps(row("h", 140.0, kind="priority"))["gap_to_bound"] == pytest.approx(10 / 130)
    assert ref.gaps(row("lb1", None, kind="priority", status="bound", bound=120.0))["gap"] == pytest.approx(20 / 140)
    ref.save(tmp_path / "r.solu")
    back = Reference.load(tmp_path / "r.solu").entries[H]
    assert (back.sense, back.tag, back.value, back.bound) == ("min", "best_known", 140.0, 130.0)
    ref.add_row(row("x", 130.0, kind="priority"))  # meets the lower bound: optimal
    assert ref.entries[H].tag == "optimal"


def test_both_senses_in_one_file_and_old_files_read_as_maximisation(tmp_path):
    ref = Reference()
    ref.add_row(row("a", 10.0, kind="admission"))
    ref.add_row(row("p", 5.0, kind="priority", digest=G))
    path = tmp_path / "r.solu"
    ref.save(path)
    back = Reference.load(path)
    assert back.entries[H].sense == "max" and back.entries[G].sense == "min"
    old = tmp_path / "old.solu"
    old.write_text(f"# an old file: no sense line\n=best=  {H}  10  a\n=bound= {H}  12  a\n")
    e = Reference.load(old).entries[H]
    assert (e.sense, e.value, e.bound, e.tag) == ("max", 10.0, 12.0, "best_known")


def test_an_old_file_of_a_minimised_kind_is_dropped_with_a_warning(tmp_path, capsys):
    """Files written before senses were recorded hold priority values as maximisation (the heuristic's
    138 as =opt=): rows of the kind replace them, with a warning, never merge with them."""
    old = tmp_path / "old.solu"
    old.write_text(f"=opt=  {H}  138  prio\n")
    ref = Reference()
    ref.merge(Reference.load(old))
    ref.add_row(row("mpsa", 138.0, kind="priority"))
    assert "recorded as maximisation" in capsys.readouterr().err
    ref.add_row(row("mpsa-exact", 135.0, kind="priority", status="optimal", exact=True))
    assert (ref.entries[H].value, ref.entries[H].tag) == (135.0, "optimal")


# -- relaxations --------------------------------------------------------------------------------
def test_a_relaxation_is_a_bound_never_the_reference():
    """The bug: `drf-lp` (continuous DRF) became the proven reference of integer allocations, so the
    proven-optimal `drf-milp` and `drf-cpsat` showed a 3.75 % gap."""
    ref = Reference()
    lp = row("drf-lp", 0.1425, kind="fairness", status="optimal", exact=True, bound=0.1425, relaxation=True)
    milp = row("drf-milp", 0.1375, kind="fairness", status="optimal", exact=True, bound=0.1375, relaxation=False)
    drf = row("drf", 0.125, kind="fairness", relaxation=False)
    for r in (lp, milp, drf):
        ref.add_row(r)
    e = ref.entries[H]
    assert (e.tag, e.value) == ("optimal", 0.1375)
    assert ref.gaps(milp)["gap"] == 0.0
    assert ref.gaps(lp)["gap"] == pytest.approx(0.005 / 0.1375)  # how far the relaxation lies above
    assert ref.gaps(drf)["gap"] == pytest.approx(0.0125 / 0.1375)


def test_rows_stored_before_the_relaxation_column_use_the_registration():
    ref = Reference()
    ref.add_row(row("drf-lp", 0.1425, kind="fairness", status="optimal", exact=True, bound=0.1425))  # no column
    ref.add_row(row("drf", 0.125, kind="fairness"))
    e = ref.entries[H]
    assert (e.tag, e.value, e.bound) == ("best_known", 0.125, 0.1425)


def test_a_time_limited_relaxation_gives_its_bound_only():
    ref = Reference()
    ref.add_row(row("drf-lp", 0.13, kind="fairness", status="time_limit", exact=True, bound=0.15, relaxation=True))
    e = ref.entries[H]
    assert (e.value, e.bound) == (None, 0.15)


# -- noise --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["admission", "fairness", "priority"])
def test_float_noise_never_shows_as_a_gap(kind):
    ref = Reference()
    exact = row("exact", 0.1375, kind=kind, status="optimal", exact=True, bound=0.1375)
    ref.add_row(exact)
    for noisy in (0.13750000000000001, 0.1375 * (1 + 1e-12), 0.1375 * (1 - 1e-12)):
        r = row("h", noisy, kind=kind)
        ref.add_row(r)
        g = ref.gaps(r)
        assert g["gap"] == 0.0 and math.copysign(1.0, g["gap"]) == 1.0  # not -0.0
        assert g["gap_to_bound"] == 0.0 and math.copysign(1.0, g["gap_to_bound"]) == 1.0
    assert ref.entries[H].value == 0.1375  # noise does not replace the proven optimum
    # an LP bound a hair on the wrong side of the optimum: gap 0, never negative
    lp = row("bound-lp", None, kind=kind, status="bound", bound=0.1375 * (1 - 1e-7 if kind != "priority" else 1 + 1e-7))
    assert ref.gaps(lp)["gap"] == 0.0


def test_an_answer_verify_rejected_has_no_gap():
    ref = Reference()
    ref.add_row(row("h", 10.0))
    bad = row("liar", 1e9, verified=False)
    ref.add_row(bad)
    assert ref.entries[H].value == 10.0 and ref.gaps(bad)["gap"] is None


# -- the file: names cannot inject lines, malformed lines are skipped ---------------------------
def test_an_instance_name_cannot_inject_a_line(tmp_path):
    """A name with a newline used to write a fake `=opt=` line into reference.solu."""
    name = f"evil\n=opt= {G} 99999\r\u2028=inf= {H} # x"
    ref = Reference()
    ref.add_row({**row("h", 10.0), "instance_id": name})
    path = tmp_path / "reference.solu"
    ref.save(path)
    lines = path.read_text().splitlines()
    assert [ln.split()[0] for ln in lines if not ln.startswith("#")] == ["=sense=", "=best="]
    back = Reference.load(path)
    assert set(back.entries) == {H}
    assert back.entries[H].value == 10.0 and back.entries[H].tag == "best_known"
    assert back.entries[H].name == safe_name(name) and "\n" not in back.entries[H].name
    assert safe_name("a \t b\n\nc#d\x00e") == "a_b_c_de"


def test_malformed_lines_are_skipped_with_a_warning_never_fatal(tmp_path, capsys):
    path = tmp_path / "reference.solu"
    path.write_text(
        "\n".join(
            [
                f"=opt=  {H}  10  good",
                "garbage line here",
                f"=opt=  {G}  nan  not-a-number",
                f"=opt=  {G}  inf",
                f"=bound= {G}",
                "=sense= sideways",
                f"=opt=  {G}  5  under-a-bad-sense",
                "=sense= max",
                f"=best= {G}  7  fine-again",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    ref = Reference.load(path)
    err = capsys.readouterr().err
    assert err.count("mropt: warning:") == 6 and "line 2" in err and "line 7" in err
    assert ref.entries[H].value == 10.0 and ref.entries[G].value == 7.0


@pytest.mark.slow
def test_results_and_report_survive_a_broken_reference_file(tmp_path, write_experiment, capsys):
    """A reference.solu with a fake or broken line never makes `results`, `report` or a resumed `gap` fail."""
    from mropt.harness.experiment import load_experiment
    from mropt.harness.report import write_report
    from mropt.harness.runner import run_study

    exp = load_experiment(
        write_experiment(
            'methods = ["edf-greedy"]\n[[instances]]\ngenerator = "admission"\nseeds = [1]\nparams = {jobs = 6}\n'
        )
    )
    out = tmp_path / "res"
    run_study(exp, out, progress=False)
    with open(out / "reference.solu", "a", encoding="utf-8") as f:
        f.write("=opt= \x00 broken\n=opt= zz 12 x y z\n")
    assert len(results_frame(out)) == 1
    write_report(out, tmp_path / "rep")
    run_study(exp, out, progress=False)
    update_reference(Store(out))
    assert "mropt: warning:" in capsys.readouterr().err
