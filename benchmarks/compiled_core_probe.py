"""What a compiled core would cost (issue 32): section 1's FIFO model as one ``numba.njit`` function.

Run (numba is not a dependency of mropt; install it into a scratch venv, never into ``.venv``)::

    .venv/bin/pip freeze --exclude-editable > /tmp/numba-req.txt    # the .venv's own pins
    python3.11 -m venv /tmp/numba-venv
    /tmp/numba-venv/bin/pip install -r /tmp/numba-req.txt && /tmp/numba-venv/bin/pip install numba
    /tmp/numba-venv/bin/python benchmarks/compiled_core_probe.py [--quick]

(as RESULTS.md measured it; mropt is imported from this tree: ``bench_sim`` puts it on ``sys.path``).

Prints, for the rows of ``bench_sim.py`` section 1 (100/400/1000 jobs on 50/100/200 nodes of
2 + 2 slots, seed 7), the CPU seconds (best of 3, the three sides interleaved, as section 1
times them) of the plain heapq simulator (``heapq_fifo.py``), the same model compiled by numba
(run only, after its compile) and mropt (``fifo`` in event mode, ``bench_sim.run_mropt``), their
events-per-second ratios over heapq, and whether the mean JCTs are equal. Then the compile time
of the model with ``cache=False``, the load time from numba's cache in a second process
(``cache=True``), and the per-call cost of a small njit function called from Python with a few
numpy arrays and ints: what a piecewise core (compiled policy decisions called per offer by the
Python engine) would pay per call.

``fifo_model`` is the model written once in the subset of Python that numba compiles (a heap of
``(time, kind, job)`` tuples as ``heapq_fifo``, the per-job counts in numpy arrays): the same
function runs uncompiled in plain Python, which is how its mean JCT is checked against
``heapq_fifo`` without numba. Without numba the script says how to install it and exits 2.
"""

from __future__ import annotations

import argparse
import heapq
import importlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sim  # noqa: E402  (beside this file; it puts the repository on sys.path)

Jobs = list[tuple[float, int, float, int, float]]
_ARRIVE, _MAP_END, _REDUCE_END = 0, 1, 2
INSTALL = (
    "numba is not installed (it is no dependency of mropt): install the .venv's pins and numba into a scratch venv, "
    "as this script's docstring says, and run it with that venv's python"
)


def fifo_model(
    submit: np.ndarray,
    maps: np.ndarray,
    map_time: np.ndarray,
    reduces: np.ndarray,
    reduce_time: np.ndarray,
    slots: int,
) -> np.ndarray:
    """Finish time of each job: ``heapq_fifo.simulate``'s rules, line for line, over numpy arrays.

    Row 0 of ``left``/``running``/``duration`` is the maps, row 1 the reduces; ``queues[phase]``
    is the heap of job ranks with tasks of that phase waiting (a freed slot goes to the lowest
    rank). All arrivals and ends of one instant are taken before slots are handed out.
    """
    n = len(submit)
    events = [(submit[j], _ARRIVE, j) for j in range(n)]
    heapq.heapify(events)
    left = np.empty((2, n), dtype=np.int64)
    left[0], left[1] = maps, reduces
    running = np.zeros((2, n), dtype=np.int64)
    duration = np.empty((2, n), dtype=np.float64)
    duration[0], duration[1] = map_time, reduce_time
    queues = [[0], [0]]  # seeded so that numba can type them, then emptied
    queues[0].pop()
    queues[1].pop()
    free = np.array([slots, slots], dtype=np.int64)
    finish = np.zeros(n, dtype=np.float64)
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, j = heapq.heappop(events)
            if kind == _ARRIVE:
                heapq.heappush(queues[0], j)
                continue
            phase = kind - 1
            free[phase] += 1
            running[phase, j] -= 1
            if running[phase, j] == 0 and left[phase, j] == 0:
                if phase == 0 and left[1, j] > 0:
                    heapq.heappush(queues[1], j)
                else:  # the last reduce, or the last map of a map-only job
                    finish[j] = now
        for phase in range(2):
            queue = queues[phase]
            while free[phase] > 0 and len(queue) > 0:
                j = queue[0]
                while free[phase] > 0 and left[phase, j] > 0:
                    free[phase] -= 1
                    left[phase, j] -= 1
                    running[phase, j] += 1
                    heapq.heappush(events, (now + duration[phase, j], phase + 1, j))
                if left[phase, j] == 0:
                    heapq.heappop(queue)
    return finish


def as_arrays(jobs: Jobs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The jobs' five columns (submit, maps, map time, reduces, reduce time) as numpy arrays."""
    submit, maps, map_time, reduces, reduce_time = zip(*jobs)
    return (
        np.array(submit, dtype=np.float64),
        np.array(maps, dtype=np.int64),
        np.array(map_time, dtype=np.float64),
        np.array(reduces, dtype=np.int64),
        np.array(reduce_time, dtype=np.float64),
    )


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(CPU seconds of this process, result) of one call."""
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def rows_table(model: Callable[..., np.ndarray], quick: bool) -> None:
    """Section 1's rows: heapq, numba (run only) and mropt, CPU seconds best of 3, interleaved."""
    print(
        "| jobs | nodes | tasks | heapq s | numba s | mropt s | heapq ev/s | numba/heapq | mropt/heapq | same mean JCT |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for n_jobs, nodes in [(100, 50)] if quick else [(100, 50), (400, 100), (1000, 200)]:
        jobs = bench_sim.fifo_jobs(n_jobs, seed=7)
        arrays, workload = as_arrays(jobs), bench_sim.as_workload(jobs, nodes)
        runs: dict[str, list[tuple[float, float]]] = {"heapq": [], "numba": [], "mropt": []}
        for _ in range(3):
            runs["heapq"].append(bench_sim.run_heapq(jobs, nodes))
            wall, finish = cpu(lambda: model(*arrays, 2 * nodes))
            runs["numba"].append((wall, float(np.mean(finish - arrays[0]))))
            runs["mropt"].append(bench_sim.run_mropt(workload))
        (h, h_jct), (c, c_jct), (m, m_jct) = (min(runs[k]) for k in ("heapq", "numba", "mropt"))
        tasks = sum(m + r for _, m, _, r, _ in jobs)
        same = "yes" if c_jct == h_jct and abs(m_jct - h_jct) <= 1e-6 * h_jct else f"no ({h_jct}, {c_jct}, {m_jct})"
        print(
            f"| {n_jobs} | {nodes} | {tasks:,} | {h:.4f} | {c:.5f} | {m:.4f} | {2 * tasks / h:,.0f} "
            f"| {h / c:.1f}x | {h / m:.2f}x | {same} |"
        )
    print()


def compile_child(cache_dir: str) -> None:
    """Runs in a child process: import numba, compile ``fifo_model`` (or load it from ``cache_dir``), print the times.

    ``cache_dir`` "-": ``cache=False``; else ``cache=True`` with numba's cache in ``cache_dir``.
    """
    if cache_dir != "-":
        os.environ["NUMBA_CACHE_DIR"] = cache_dir
    imported, numba = cpu(lambda: importlib.import_module("numba"))
    model = numba.njit(cache=cache_dir != "-")(fifo_model)
    arrays = as_arrays(bench_sim.fifo_jobs(1, seed=7))
    first, _ = cpu(lambda: model(*arrays, 2))
    print(f"{imported:.3f} {first:.3f}")


def compile_times() -> None:
    """Compile time in a fresh process (cache=False); with cache=True, a first and a second process."""
    print("| process | import numba CPU s | first call (1 job) CPU s |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as cache_dir:
        for which, arg in (
            ("cache=False: compiles", "-"),
            ("cache=True, first: compiles, writes the cache", cache_dir),
            ("cache=True, second: loads the cache", cache_dir),
        ):
            child = [sys.executable, __file__, "--compile-child", arg]
            imported, first = subprocess.run(child, capture_output=True, text=True, check=True).stdout.split()
            print(f"| {which} | {imported} | {first} |")
    print()


def per_call(fn: Callable[[], Any], calls: int = 200_000) -> float:
    """Microseconds per call of ``fn`` (CPU, best of 3 loops of ``calls``)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, time.process_time() - start)
    return best / calls * 1e6


def _noop(a: np.ndarray, b: np.ndarray, c: np.ndarray, i: int, k: int) -> int:
    """Takes 3 arrays and 2 ints, does nothing with them: the bare cost of a call."""
    return i


def _pick(share: np.ndarray, demand: np.ndarray, free: np.ndarray, i: int, k: int) -> int:
    """A small decision: the user of least share among ``k`` from ``i`` whose demand fits ``free`` (-1: none)."""
    best, best_share = -1, np.inf
    for u in range(i, i + k):
        if share[u] < best_share and demand[u, 0] <= free[0] and demand[u, 1] <= free[1]:
            best, best_share = u, share[u]
    return best


def call_costs(numba: Any) -> None:
    """Per-call cost from Python of small njit functions against the same functions in plain Python.

    The last row builds the three arrays from Python lists at each call: what a compiled decision
    pays when the state it reads lives in Python objects (as the engine's and policies' do today).
    """
    rng = np.random.default_rng(7)
    share, demand, free = rng.random(64), rng.random((64, 2)), np.array([0.9, 0.9])
    lists = share.tolist(), demand.tolist(), free.tolist()
    noop, pick = numba.njit(cache=False)(_noop), numba.njit(cache=False)(_pick)
    assert pick(share, demand, free, 0, 64) == _pick(share, demand, free, 0, 64)
    rows: list[tuple[str, Callable[[], Any] | None, Callable[[], Any]]] = [
        ("`_noop`: a bare call", lambda: _noop(share, demand, free, 0, 8), lambda: noop(share, demand, free, 0, 8)),
        ("`_pick`, 8 users", lambda: _pick(share, demand, free, 0, 8), lambda: pick(share, demand, free, 0, 8)),
        ("`_pick`, 64 users", lambda: _pick(share, demand, free, 0, 64), lambda: pick(share, demand, free, 0, 64)),
        (
            "`_pick`, 8 users, its arrays built from Python lists per call",
            None,
            lambda: pick(*map(np.array, lists), 0, 8),
        ),
    ]
    print("| call (3 numpy arrays, 2 ints) | plain Python us/call | njit us/call |")
    print("|---|---:|---:|")
    for what, plain, compiled in rows:
        plain_us = f"{per_call(plain, calls=50_000):.2f}" if plain else "-"
        print(f"| {what} | {plain_us} | {per_call(compiled):.2f} |")
    print()
    # the Python engine would keep such arrays current: one item read and write per launch or end
    values, array = share.tolist(), share.copy()
    print("| from Python, one item (in a lambda) | list us | numpy array us |")
    print("|---|---:|---:|")
    print(f"| read `x[5]` | {per_call(lambda: values[5]):.3f} | {per_call(lambda: array[5]):.3f} |")
    write_list, write_array = (lambda: values.__setitem__(5, 0.5)), (lambda: array.__setitem__(5, 0.5))
    print(f"| write `x[5] = 0.5` | {per_call(write_list):.3f} | {per_call(write_array):.3f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 100-job row only")
    parser.add_argument("--compile-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compile_child:
        compile_child(args.compile_child)
        return
    try:
        numba = importlib.import_module("numba")
    except ImportError:
        print(INSTALL, file=sys.stderr)
        sys.exit(2)
    print(
        f"# compiled_core_probe: numba {numba.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}\n"
    )
    jobs = bench_sim.fifo_jobs(20, seed=7)  # the model's rules, uncompiled, against heapq_fifo first
    plain = fifo_model(*as_arrays(jobs), 8)
    assert plain.tolist() == bench_sim.heapq_fifo.simulate(jobs, 8), "fifo_model differs from heapq_fifo"
    print("## 1. Section 1's FIFO model: heapq, numba (run only), mropt\n")
    model = numba.njit(cache=False)(fifo_model)
    model(*as_arrays(jobs), 8)  # compiled here, outside the timings
    rows_table(model, args.quick)
    print("## 2. Compile and cache load\n")
    compile_times()
    print("## 3. Per-call cost of a small njit function called from Python\n")
    call_costs(numba)


if __name__ == "__main__":
    main()
