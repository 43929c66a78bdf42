"""The simulation report for every kind of cluster: its series by hand, its figures without empty panels.

Series are checked against hand values (Jain's index, bin means, held amounts, dominant shares);
the figures on a small cluster of resources (two users in two pools, input replicas) and on the
slot cluster of ``sim_helpers.TINY``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mropt.harness.sim_plots import GANTT_MAX_ATTEMPTS, gantt_window
from mropt.harness.sim_report import write_simulation_report
from mropt.harness.sim_series import bin_means, dominant_share_bins, held_integrals, jain_index, readable_bin
from mropt.model.workload import WorkloadInstance
from mropt.sim.outputs import write_outputs
from mropt.sim.run import simulate

from sim_helpers import TINY


def test_jain_index_by_hand() -> None:
    assert jain_index([0.3, 0.3, 0.3]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(1 / 4)  # one of n holds everything: 1/n
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / 20)  # (1 + 3)^2 / (2 (1 + 9))
    assert np.isnan(jain_index([])) and np.isnan(jain_index([0.0, 0.0]))


def test_bin_means_and_held_integrals_by_hand() -> None:
    # 1 on [0, 2), 3 on [2, 5), 0 after: bins [0, 4) -> (2 + 6) / 4, [4, 8) -> 3 / 4
    np.testing.assert_allclose(
        bin_means(np.array([0.0, 2.0, 5.0]), np.array([1.0, 3.0, 0.0]), np.array([0, 4, 8.0])), [2.0, 0.75]
    )
    # group 0 holds 2 over [1, 3); group 1 holds 1 over [0, 10): integrals at 0, 2, 4
    held = held_integrals(
        np.array([0, 1]), np.array([1.0, 0.0]), np.array([3.0, 10.0]), np.array([2.0, 1.0]), 2, np.array([0, 2, 4.0])
    )
    np.testing.assert_allclose(held, [[0, 2, 4], [0, 2, 4]])
    assert readable_bin(86400.0) == 600.0  # a day: 144 bins of 10 min
    assert readable_bin(100.0) == 1.0


def test_dominant_shares_and_jain_over_users_with_work_by_hand() -> None:
    """Cluster <4 CPU, 8 mem>. a: <2, 2> over [0, 10); b: <1, 4> over [0, 5); c submitted at 0, waits, <2, 6> over [5, 10).

    Bin [0, 5): a 2/4 = 0.5, b 4/8 = 0.5, c 0 (waiting): Jain (1)^2 / (3 x 0.5) = 2/3.
    Bin [5, 10): a 0.5, b gone, c 6/8 = 0.75: Jain 1.25^2 / (2 (0.25 + 0.5625)).
    """
    jobs = pd.DataFrame(
        {
            "job_id": ["A", "B", "C"],
            "user": ["a", "b", "c"],
            "accepted": [True, True, True],
            "submit_time": [0.0, 0.0, 0.0],
            "finish": [10.0, 5.0, 10.0],
        }
    )
    tasks = pd.DataFrame(
        {
            "job_id": ["A", "B", "C"],
            "start": [0.0, 0.0, 5.0],
            "end": [10.0, 5.0, 10.0],
            "demand_cpu": [2.0, 1.0, 2.0],
            "demand_mem": [2.0, 4.0, 6.0],
        }
    )
    users, shares, jain = dominant_share_bins(tasks, jobs, {"cpu": 4.0, "mem": 8.0}, np.array([0.0, 5.0, 10.0]))
    assert users == ["a", "b", "c"]
    np.testing.assert_allclose(shares, [[0.5, 0.5], [0.5, 0.0], [0.0, 0.75]])
    np.testing.assert_allclose(jain, [2 / 3, 1.25**2 / (2 * (0.25 + 0.5625))])


def resource_workload() -> WorkloadInstance:
    """Two racks of two <4 CPU, 8 mem> nodes; users a (pool p) and b (pool q), map-only jobs with input replicas."""
    jobs = []
    for k in range(6):
        demand = {"cpu": 1, "mem": 1} if k % 2 else {"cpu": 0.5, "mem": 2}
        task = {"duration": 5 * 3**k, "count": 4, "demand": demand}
        user, pool = ("a", "p") if k % 2 else ("b", "q")
        jobs.append(
            {
                "id": f"j{k}",
                "user": user,
                "pool": pool,
                "submit_time": 5 * k,
                "stages": [{"type": "map", "tasks": [task]}],
            }
        )
    nodes = [{"id": "n", "rack": f"r{k}", "count": 2, "resources": {"cpu": 4, "mem": 8}} for k in range(2)]
    nodes = [{**node, "id": f"n{k}"} for k, node in enumerate(nodes)]
    return WorkloadInstance.from_dict(
        {
            "kind": "workload",
            "schema_version": 1,
            "cluster": {"nodes": nodes},
            "jobs": jobs,
            "placement": {"replicas": 2, "seed": 1},
        }
    )


def panels_with_data(fig: Any) -> list[bool]:
    """Per visible axes: whether it holds a drawn artist with data (a line, a bar, a filled area)."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
        bars = [p for p in ax.patches if p.get_height() > 0 or p.get_width() > 0]
        out.append(bool(lines or bars or ax.collections))
    return out


@pytest.fixture(scope="module")
def resource_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("drf") / "sim"
    write_outputs(simulate(resource_workload(), "drf"), folder)
    return folder


def test_the_report_of_a_resource_run_draws_cpu_memory_shares_and_locality(
    resource_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mropt.harness import sim_report

    figures: dict[str, Any] = {}
    save = sim_report._save

    def keep(fig: Any, out: Path, stem: str) -> str:
        figures[stem] = fig
        return save(fig, out, stem)

    monkeypatch.setattr(sim_report, "_save", keep)
    out = resource_run / "report"
    write_simulation_report(resource_run, out)
    assert list(figures) == ["utilisation", "shares", "completion_cdf", "locality", "gantt"]
    for stem, fig in figures.items():
        assert (out / f"{stem}.png").is_file() and (out / f"{stem}.svg").is_file(), stem
        assert all(panels_with_data(fig)), stem  # no empty panel
    assert "## CPU and memory utilisation over time" in (out / "report.md").read_text()
    summary = json.loads((resource_run / "summary.json").read_text())
    assert set(summary["utilisation"]) == {"cpu", "memory"} and summary["on_time"] is None
    util = figures["utilisation"]
    assert util.axes[0].get_ylabel() == "in use (% of cluster)"  # not a slot plot of capacity 0
    assert [t.get_text() for t in util.axes[0].get_legend().get_texts()] == ["CPU", "memory"]
    assert len(util.axes) == 3  # the cluster, then CPU and memory stacked by pool (p, q)
    assert [ax.get_ylabel() for ax in figures["shares"].axes] == ["dominant share", "Jain's index"]
    completion = figures["completion_cdf"]
    titles = [ax.get_title() for ax in completion.axes if ax.get_visible()]
    assert titles == ["Job completion time CDF", "Slowdown CDF", "Completion time CDF per pool"]
    assert completion.axes[0].get_xscale() == "log"  # 5 s to over 1,215 s: two decades and more


def test_the_slot_report_keeps_its_slot_plot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mropt.harness import sim_report

    folder = tmp_path / "sim"
    write_outputs(simulate(WorkloadInstance.from_dict(TINY), "fifo", mode="event"), folder)
    figures: dict[str, Any] = {}
    monkeypatch.setattr(sim_report, "_save", lambda fig, out, stem: figures.setdefault(stem, fig) and "")
    write_simulation_report(folder, tmp_path / "report")  # test_sim_outputs renders the files
    assert list(figures) == ["utilisation", "completion_cdf", "gantt"]  # no shares, no locality (no replicas)
    assert [ax.get_ylabel() for ax in figures["utilisation"].axes] == ["map slots", "reduce slots"]
    for stem, fig in figures.items():
        assert all(panels_with_data(fig)), stem
    assert figures["completion_cdf"].axes[0].get_xscale() == "linear"  # 15 s and 20 s
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Slot utilisation over time" in text and "Locality of attempts left out" in text
    assert "resources" not in json.loads((folder / "summary.json").read_text())


def test_a_large_run_gets_a_gantt_of_a_named_window() -> None:
    n = GANTT_MAX_ATTEMPTS + 500
    tasks = pd.DataFrame(
        {"node": ["a"] * n, "stage_type": ["map"] * n, "start": np.arange(n, dtype=float), "end": np.arange(n) + 1.0}
    )
    part, words = gantt_window(tasks)
    assert len(part) == GANTT_MAX_ATTEMPTS and words == f"attempts starting in [0, {GANTT_MAX_ATTEMPTS}) s"
    part, words = gantt_window(tasks.iloc[:10])
    assert len(part) == 10 and words == ""


def test_the_amb_figure_title_is_inside_the_canvas(tmp_path: Path) -> None:
    from mropt.admission.report_panels import plot_figures
    from mropt.harness.report_plots import _save

    data = pd.DataFrame(
        [["jobs", x, m, 3, 2.0 * x, 0.5, 0.7] for x in (10, 20, 30) for m in ("amb", "ideal")],
        columns=["axis", "x", "method", "runs", "benefit", "acceptance", "completion"],
    )
    fig = plot_figures(data)  # one swept axis: a narrow figure under a long title
    _save(fig, tmp_path, "amb")
    fig.canvas.draw()
    box = fig._suptitle.get_window_extent()
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width and box.y1 <= fig.bbox.height
    assert json.dumps(fig._suptitle.get_text()).count("\\n") >= 1  # wrapped, not clipped
    assert " ".join(fig._suptitle.get_text().split()).endswith("against N")  # the swept axis alone
