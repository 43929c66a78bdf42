"""``mropt demo``: the main job on built-in defaults.

Generates a paper-default admission instance (AMB Table 2), solves it with every
registered admission method, verifies each solution independently and prints a
comparison table.
"""

from __future__ import annotations

import argparse

from tqdm import tqdm

from mropt.cli.table import render
from mropt.instances.admission_gen import generate_admission
from mropt.registry import methods, solve
from mropt.registry import verify_solution as verify


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="solve a paper-default instance with every method and compare")
    p.add_argument("--jobs", "-n", type=int, default=30, help="N (default 30)")
    p.add_argument("--seed", type=int, default=1, help="instance seed (default 1)")
    p.add_argument("--time-limit", type=float, default=20.0, help="seconds per exact method (default 20)")
    p.set_defaults(handler=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    instance = generate_admission(args.seed, jobs=args.jobs)
    gen = instance.meta["generator"]
    print(
        f"instance {instance.name}: {instance.n} jobs, M={instance.cluster.map_slots} map and "
        f"R={instance.cluster.reduce_slots} reduce slots, load factor {gen['load_factor']:.2f}"
    )
    rows = []
    for m in tqdm(methods("admission"), desc="methods", unit="method", leave=False):
        sol = solve(instance, m.name, time_limit=args.time_limit if m.exact else None, seed=args.seed)
        verdict = verify(instance, sol)
        rows.append(
            [
                m.name,
                sol.status,
                sol.objective,
                sol.bound,
                len(sol.accepted) if sol.sequence is not None else None,
                ("yes" if verdict.ok else "NO") if verdict.checked_schedule else "-",
                round(sol.wall_time, 3),
            ]
        )
    print(render(["method", "status", "objective", "bound", "accepted", "verified", "time (s)"], rows))
    return 0
