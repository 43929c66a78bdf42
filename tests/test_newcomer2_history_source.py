"""``mropt history import`` of a source name the database holds says how to import it under another.

The refusal said "nothing imported" and stopped there; it now names ``--source NAME``, and
following it imports the same folder again under the new name.
"""

from __future__ import annotations

from pathlib import Path

import mropt
from mropt.instances.workload_gen import generate_workload

from cli_capture import assert_input_error, run_cli


def test_a_taken_source_name_is_refused_with_the_option_that_renames_it(tmp_path: Path) -> None:
    run = tmp_path / "sim-a"
    mropt.simulate(generate_workload("amb-static", 1, jobs=3), "fifo").write(run)
    db = tmp_path / "h.duckdb"
    assert run_cli("history", "import", db, run).code == 0
    line = assert_input_error(run_cli("history", "import", db, run), "'sim-a'", "already in the history database")
    assert "--source NAME" in line, line
    again = run_cli("history", "import", db, run, "--source", "sim-a-2")
    assert again.code == 0, again.err
    assert again.out.startswith("sim-a-2: simulation, 3 jobs"), again.out
