"""CPU of one more read of the utilisation rows after the SWIM day under ``fair`` (issue 32).

The rows are built as they are read, never kept (``mropt/sim/utilisation_rows.py``): the summary
reads them inside ``simulate()``'s ``wall_time``, and ``--out`` reads them once more to write
``utilisation.parquet``. This prints what that second read costs beside the run.

    .venv/bin/python benchmarks/rows_read_cost.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_sim

    from mropt.importers.swim_workload import import_swim_workload
    from mropt.sim.run import simulate

    workload = import_swim_workload(bench_sim.SWIM_DAY)
    start = time.process_time()
    run = simulate(workload, "fair")
    ran = time.process_time()
    rows = sum(len(block[0]) for block in run.recorder.utilisation_blocks())
    read = time.process_time()
    print(
        f"simulate (run + summary): {ran - start:.2f} s CPU, wall_time {run.summary['wall_time']:.2f} s; "
        f"one more read of the rows ({rows:,} rows): {read - ran:.2f} s CPU"
    )


if __name__ == "__main__":
    main()
