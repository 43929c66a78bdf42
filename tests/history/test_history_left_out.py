"""What the history's numbers leave out, said in the output or fixed (issue 31, item 6).

* Maps that read almost nothing (TeraGen's, the Sleep job's: 48-86 bytes) give no D (eq. 5):
  their seconds per MB were 5.5e5 on SLS's TeraGen sample. Below ``MIN_INPUT_BYTES`` (64 KiB)
  they are left out of D, and ``history import`` and ``history report`` count them.
* ``history report`` pools every source's jobs per user group; it says so, and ``--by-source``
  gives one row per source and group.
* Jobs without task rows (a SWIM trace's) add nothing to HEI's analyses: ``history import``,
  ``history report`` and ``hei`` on such a database say so in one line.

Source ``gen`` (hand-made, day 0): job t1 of group ``tera``, submitted at 01:00, four maps of
20 s that read 84 bytes each (TeraGen's split), so before the fix D(tera) = 80 s / 336e-6 MB =
238,095 s/MB; job r1 of group ``g``, submitted at 02:00, one map of 100 MB in 10 s and one of
exactly 64 KiB in 5 s: D(g) = 15 / 100.065536 s/MB, the 64 KiB map kept. Source ``other``:
job r2 of group ``g``, day 0 at 05:00, one map of 100 MB in 30 s: per source D(g) = 0.3.
Pooled D(g) = 45 / 200.065536. Demand (eq. 4) over two days ((gen, 0), (other, 0)): g's hour 2
has 15 / 2, hour 5 has 30 / 2, so its peak is hour 5 at 15 slot-s/day; per source, gen's peak
is hour 2 at 15 slot-s/day and other's hour 5 at 30.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mropt.history import analyses
from mropt.history.batch import batch_from_rows
from mropt.history.store import import_batches
from mropt.instances.workload_gen import generate_workload
from mropt.model.io import save_instance

from cli_capture import run_cli
from history_files import shared, write_swim


def _map(job: str, k: int, start: float, dur: float, nbytes: int) -> dict:
    return {"job_id": job, "task_id": f"{job}_m_{k}", "type": "map", "start_time": start, "finish_time": start + dur,
            "status": "SUCCEEDED", "host": "h1", "input_bytes": nbytes}  # fmt: skip


def _batches() -> list:
    gen = {
        "jobs": [
            {"job_id": "t1", "user": "root", "user_group": "tera", "submit_time": 3600.0},
            {"job_id": "r1", "user": "ann", "user_group": "g", "submit_time": 7200.0},
        ],
        "tasks": [_map("t1", k, 3601, 20, 84) for k in range(4)]
        + [_map("r1", 0, 7201, 10, 100_000_000), _map("r1", 1, 7201, 5, 65_536)],
    }
    other = {
        "jobs": [{"job_id": "r2", "user": "bob", "user_group": "g", "submit_time": 5 * 3600.0}],
        "tasks": [_map("r2", 0, 5 * 3600 + 1, 30, 100_000_000)],
    }
    return [batch_from_rows("gen", "test", gen), batch_from_rows("other", "test", other)]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("left-out") / "h.db"
    import_batches(path, _batches())
    return path


def test_maps_that_read_almost_nothing_give_no_d(db: Path) -> None:
    d = dict(zip(*analyses.map_cost_per_unit(db).to_dict("list").values()))
    assert d == {"g": pytest.approx(45 / 200.065536)}  # no 'tera' (was 238,095 s/MB); the 64 KiB map is kept
    assert analyses.MIN_INPUT_BYTES == 65_536 and analyses.tiny_input_maps(db) == {"gen": 4}
    need = analyses.job_map_need(db).set_index("job_id")
    assert "t1" not in need.index and need.loc["r1", "map_tasks"] == 2
    # they still hold their slots: R_total (eq. 4) and the demand count them
    assert analyses.job_resource(db).set_index("job_id").loc["t1", "r_total"] == 80.0


def _rows(lines: list[str], first: str) -> dict[str, list[str]]:
    """The table that follows the line starting with ``first``: its rows by their first cell(s)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    header = lines[start + 1].split()
    keys = 2 if header[0] == "source" else 1
    out = {}
    for line in lines[start + 2 :]:
        if not line.startswith("  ") or line.startswith("  note:"):
            break
        cells = line.split()
        out[" ".join(cells[:keys])] = cells[keys:]
    return out


def test_report_says_groups_pool_sources_and_splits_them_by_source(db: Path) -> None:
    r = run_cli("history", "report", db)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    pooled = _rows(lines, "per user group")
    # jobs, tasks, R_total h, D s/MB, reduce s, peak hour, slot-h/day
    assert pooled["g"][:2] == ["2", "3"] and float(pooled["g"][3]) == pytest.approx(45 / 200.065536, rel=1e-3)
    assert pooled["g"][5:] == ["5", f"{15 / 3600:.4g}"] and pooled["tera"][3] == "-"
    notes = [line.strip() for line in lines if line.startswith("  note:")]
    assert len(notes) == 2
    assert notes[0].startswith("note: 1 group(s) pool jobs of several sources (g)") and "--by-source" in notes[0]
    assert notes[1].startswith("note: 4 succeeded map task(s) read under 64 KiB (gen: 4): no D")

    r = run_cli("history", "report", db, "--by-source")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    split = _rows(lines, "per source and user group")
    assert set(split) == {"gen g", "gen tera", "other g"}
    assert float(split["gen g"][3]) == pytest.approx(15 / 100.065536, rel=1e-3) and split["other g"][3] == "0.3"
    assert split["gen g"][5:] == ["2", f"{15 / 3600:.4g}"] and split["other g"][5:] == ["5", f"{30 / 3600:.4g}"]
    assert not any("pool jobs of several sources" in line for line in lines)


def test_jobs_without_task_rows_are_said_at_import_report_and_hei(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    import_batches(db, _batches())
    r = run_cli("history", "import", db, write_swim(tmp_path / "s.tsv", rows=3))
    assert r.code == 0, r.err
    assert r.out == (
        "s.tsv: swim, 3 jobs, 0 tasks, 0 attempts, 0 jobconf rows; no task rows: its jobs add no demand, D or "
        "reduce cost to HEI's analyses\n"
    )
    r = run_cli("history", "report", db)
    assert "note: 3 job(s) have no task rows with times (s.tsv: 3)" in r.out
    workload = tmp_path / "w.json"
    save_instance(generate_workload("amb-dynamic", seed=3, jobs=8), workload)
    r = run_cli("simulate", workload, "--policy", "hei", "--param", f"history={db}", "--json")
    assert r.code == 0, r.err
    notes = [line for line in r.err.splitlines() if line.startswith("mropt: note: ")]
    assert len(notes) == 1 and r.err.count("\n") == 1, r.err
    assert f"3 job(s) of the history '{db}' have no task rows with times (s.tsv: 3)" in notes[0]
    assert "minShare 0" in notes[0]
    # a history of such jobs only stays refused (hei would be fair exactly)
    swim_only = tmp_path / "swim.db"
    assert run_cli("history", "import", swim_only, tmp_path / "s.tsv").code == 0
    r = run_cli("simulate", workload, "--policy", "hei", "--param", f"history={swim_only}")
    assert r.code == 2 and "no task rows" in r.err


def test_teragen_sample_of_sls_has_no_d(tmp_path: Path) -> None:
    """The shared traces: SLS's two TeraGen jobs (192 maps of 82-86 bytes) gave D = 5.5e5 s/MB."""
    rumen = shared("rumen", "2jobs2min-rumen-jh.json")
    teragen = shared(
        "hadoop-jobhistory",
        "job_1416424547277_0002-1416424775281-root-TeraGen-1416424785433-2-0-SUCCEEDED-default-1416424779349.jhist",
    )
    db = tmp_path / "h.db"
    r = run_cli("history", "import", db, rumen, teragen)
    assert r.code == 0, r.err
    assert r.out.splitlines()[0].endswith("; 192 succeeded map tasks read under 64 KiB: no D (s/MB) from them")
    assert r.out.splitlines()[1].endswith("; 2 succeeded map tasks read under 64 KiB: no D (s/MB) from them")
    assert analyses.map_cost_per_unit(db).empty  # no group of TeraGen jobs has a D
    assert analyses.tiny_input_maps(db) == {rumen.name: 192, teragen.name: 2}
