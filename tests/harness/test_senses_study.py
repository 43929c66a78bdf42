"""Gap studies of a minimised kind and of a kind with a relaxation, end to end.

The bugs: in a priority study the heuristic's 138 slots became the "proven optimum" and the
proven minimum 135 showed a 2.17 % gap, under a "Gap (maximisation)" header; in a fairness
study the continuous ``drf-lp`` became the reference and the proven integer optima showed 3.75 %.
"""

from __future__ import annotations

import pandas as pd
import pytest

from mropt.harness.experiment import load_experiment
from mropt.harness.reference import Reference
from mropt.harness.report import write_report
from mropt.harness.runner import results_frame, run_study
from mropt.instances.fairness_gen import generate_fairness
from mropt.instances.priority_gen import generate_priority
from mropt.model.io import save_instance


@pytest.mark.slow
def test_priority_study_minimises_and_fairness_study_never_takes_the_relaxation(write_experiment, tmp_path):
    (tmp_path / "prio").mkdir()
    save_instance(generate_priority(1, arrival_rate=0.0005), tmp_path / "prio" / "p1.json")
    (tmp_path / "fair").mkdir()
    for seed in (1, 2):
        save_instance(generate_fairness(seed, users=6), tmp_path / "fair" / f"f{seed}.json")
    prio = load_experiment(
        write_experiment(
            'name = "prio"\nmethods = ["mpsa", "mpsa-exact"]\n[[instances]]\nfolder = "prio"\n', "prio.toml"
        )
    )
    fair = load_experiment(
        write_experiment(
            'name = "fair"\nmethods = ["drf", "drf-lp", "drf-milp", "drf-cpsat"]\n[[instances]]\nfolder = "fair"\n',
            "fair.toml",
        )
    )
    run_study(prio, tmp_path / "p", workers=2, progress=False)
    df = results_frame(tmp_path / "p").set_index("method")
    exact, heuristic = df.loc["mpsa-exact"], df.loc["mpsa"]
    assert exact["status"] == "optimal" and exact["gap"] == 0.0 and exact["reference_tag"] == "optimal"
    assert heuristic["objective"] > exact["objective"] and exact["reference"] == exact["objective"]
    assert heuristic["gap"] == pytest.approx((heuristic["objective"] - exact["objective"]) / exact["objective"])
    entry = Reference.load(tmp_path / "p" / "reference.solu").entries[exact["instance_hash"]]
    assert (entry.sense, entry.value, entry.tag) == ("min", exact["objective"], "optimal")
    write_report(tmp_path / "p", tmp_path / "p-report")
    kinds = pd.read_csv(tmp_path / "p-report" / "kinds.csv").set_index("kind")
    assert kinds.loc["priority", "sense"] == "min"
    assert "Objective sense: priority: minimisation" in (tmp_path / "p-report" / "report.md").read_text()

    run_study(fair, tmp_path / "f", workers=2, progress=False)
    df = results_frame(tmp_path / "f")
    for method in ("drf-milp", "drf-cpsat"):
        rows = df[df["method"] == method]
        assert (rows["status"] == "optimal").all() and (rows["gap"] == 0.0).all(), rows[["gap", "reference"]]
    lp = df[df["method"] == "drf-lp"]
    milp = df[df["method"] == "drf-milp"].set_index("instance_hash")
    assert (lp["gap"] >= 0).all() and bool(lp["relaxation"].all())
    for _, r in lp.iterrows():
        assert r["reference"] == milp.loc[r["instance_hash"], "objective"]  # the integer optimum, not the LP's
    assert (df["gap"].dropna() >= 0).all()
