"""``mropt locality ...`` (DDRF sec. 3.2 and 4.2) and ``mropt generate fairness``."""

from __future__ import annotations

import argparse
import json
import math

from mropt.cli.common import SEED, add_param_options, int_type, params_from_args, write_text
from mropt.fairness.locality import MAX_TASKS, MC_MAX_DRAWS_PER_K
from mropt.harness.table import render
from mropt.model import files
from mropt.model.errors import InputError
from mropt.model.io import instance_to_json

#: the integer options of ``mropt locality``, bounded when parsed (issue 28, part 7): delays, skip
#: counts and free slots (>= 0); replicas, nodes, rack sizes, slots per node (>= 1); a job's tasks
#: N (``locality.MAX_TASKS``); Monte Carlo trials (its draws' cap)
_DELAY = int_type(0)
_COUNT = int_type(1)
_TASKS = int_type(1, MAX_TASKS)
_TRIALS = int_type(0, MC_MAX_DRAWS_PER_K)


def _ints(text: str) -> list[int]:
    """``2,6,10`` -> [2, 6, 10]: comma-separated integers >= 0."""
    return [_DELAY(v) for v in text.split(",") if v.strip()]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    loc = sub.add_parser("locality", help="locality analysis of delay scheduling and DDRF (DDRF paper sec. 3.2, 4.2)")
    kinds = loc.add_subparsers(dest="what", required=True, metavar="WHAT")

    p = kinds.add_parser(
        "delay-bound",
        help="the delay D that delay scheduling needs for a locality lambda (sec. 3.2)",
        description="Prints the paper's bound D >= -(M/R) ln((1-lambda)N / (1+(1-lambda)N)) as min_delay, the smallest "
        "whole D whose exact L(D) reaches lambda, and L(D) there (bound and exact).",
    )
    p.add_argument("--locality", type=float, default=0.95, help="lambda, target locality (default 0.95)")
    p.add_argument("--tasks", type=_TASKS, default=20, help="N, tasks of the job (default 20; at most 100,000)")
    p.add_argument("--replicas", type=_COUNT, default=3, help="R, replicas (default 3)")
    p.add_argument("--nodes", type=_COUNT, default=100, help="M, nodes (default 100)")
    p.add_argument(
        "--slots-per-node",
        type=_COUNT,
        default=8,
        help="L, slots per node, for the wait D/(L M) in task lengths (default 8)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_delay_bound)

    p = kinds.add_parser(
        "ddrf",
        help="DDRF locality L(E1, E2): the paper's bound and the exact probability (sec. 4.2)",
        description="For each E1 and E2: the paper's L(E1), L(E2) and L(E) = L(E1) + L(E2) (a chain of loose "
        "inequalities, may exceed 1), and the exact node, rack and non-local probabilities with "
        "L = node + theta * rack; optionally a seeded Monte Carlo of the skip rule.",
    )
    p.add_argument("--e1", type=_ints, default=[2, 6, 10], help="E1 values, comma-separated (default 2,6,10)")
    p.add_argument("--e2", type=_ints, default=[10, 20, 40], help="E2 values, comma-separated (default 10,20,40)")
    p.add_argument("--tasks", type=_TASKS, default=20, help="N (default 20; at most 100,000)")
    p.add_argument("--replicas", type=_COUNT, default=3, help="R (default 3)")
    p.add_argument("--nodes", type=_COUNT, default=100, help="M (default 100)")
    p.add_argument("--rack-size", type=_COUNT, default=5, help="G, nodes per rack (default 5)")
    p.add_argument("--theta", type=float, default=0.05, help="contribution of a rack-local task (default 0.05)")
    p.add_argument(
        "--monte-carlo",
        type=_TRIALS,
        default=0,
        metavar="TRIALS",
        help="also simulate with this many trials (at most 1e7 trials x E2 x R x M/G draws per K, 2e8 in all)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="Monte Carlo seed (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run_ddrf)

    p = kinds.add_parser("table2", help="the paper's Table 2, computed beside the printed values (errata)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run_table2)

    p = kinds.add_parser("figures", help="data of Figs 1-4 (bound and exact) as JSON, and PNG plots")
    p.add_argument("--out", required=True, help="folder for fig1.png .. fig4.png and figures.json")
    p.set_defaults(handler=run_figures)

    p = kinds.add_parser(
        "round",
        help="one scheduling round of an instance with nodes and task_inputs: DRF, delay, DDRF vs min-cost flow",
        description="Slots freeing on random nodes (seeded) offered to users by DRF share under each policy's skip "
        "rule, beside the Quincy-style min-cost flow (the locality optimum) of the same round.",
    )
    p.add_argument("instance", help="fairness instance with nodes and task_inputs")
    p.add_argument("--e1", type=_DELAY, default=3, help="DDRF node-level delay E1 (default 3)")
    p.add_argument("--e2", type=_DELAY, default=8, help="DDRF rack-level delay E2 (default 8)")
    p.add_argument("--delay", type=_DELAY, default=5, help="delay scheduling's D (default 5)")
    p.add_argument(
        "--slots-per-node",
        type=_DELAY,
        default=None,
        help="free slots per node (default: largest tasks that fit; at most 1,000,000 slots in all)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="offer order seed (default 0)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run_round)


def add_generate_fairness(kinds: argparse._SubParsersAction) -> None:
    """The ``mropt generate fairness`` subparser (called from :mod:`mropt.cli.generate`)."""
    from mropt.instances.fairness_gen import FairnessParams

    p = kinds.add_parser(
        "fairness",
        help="DRF instance: CPU- and memory-heavy users (DDRF sec. 3)",
        description="Generate a fairness instance (model drf-mix, see mropt.instances.fairness_gen). Same arguments, same file.",
    )
    add_param_options(p, FairnessParams, first=("users", "seed"))  # one option per field
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_generate_fairness)


def run_generate_fairness(args: argparse.Namespace) -> int:
    from mropt.instances.fairness_gen import FairnessParams, generate_fairness

    instance = generate_fairness(args.seed, params_from_args(FairnessParams, args))
    write_text(instance_to_json(instance), args.output)
    return 0


def run_delay_bound(args: argparse.Namespace) -> int:
    from mropt.fairness.locality import delay_locality_bound, delay_locality_exact, min_delay, min_delay_exact

    lam, n, r, m = args.locality, args.tasks, args.replicas, args.nodes
    d = min_delay(lam, n, r, m)
    d_exact = min_delay_exact(lam, n, r, m)
    out = {
        "locality": lam,
        "tasks": n,
        "replicas": r,
        "nodes": m,
        "min_delay": round(d, 6),
        "min_delay_per_node": round(d / m, 6),
        "min_delay_whole": math.ceil(d),
        "locality_bound_at_min_delay": round(delay_locality_bound(d, n, r, m), 6),
        "locality_exact_at_min_delay_whole": round(delay_locality_exact(math.ceil(d), n, r, m), 6),
        "min_delay_exact": d_exact,
        "max_wait_task_lengths": round(d / (args.slots_per_node * m), 6),
        "kinds": "min_delay: the paper's bound (sec. 3.2); *_exact: exact under the model",
    }
    if args.json:
        print(json.dumps(out))
    else:
        rows = [[k, v] for k, v in out.items() if k != "kinds"]
        print(render(["quantity", "value"], rows))
        print(out["kinds"])
    return 0


def run_ddrf(args: argparse.Namespace) -> int:
    from mropt.fairness.locality import ddrf_locality_bound, ddrf_locality_exact, monte_carlo

    rows = []
    for e1 in args.e1:
        for e2 in args.e2:
            if e2 < e1 or e2 < 1:
                continue
            b = ddrf_locality_bound(e1, e2, args.tasks, args.replicas, args.nodes, args.theta)
            x = ddrf_locality_exact(e1, e2, args.tasks, args.replicas, args.nodes, args.rack_size, args.theta)
            row = {
                "E1": e1,
                "E2": e2,
                "bound_L_E1": b["L_E1"],
                "bound_L_E2": b["L_E2"],
                "bound_L": b["L"],
                "exact_node": x["node"],
                "exact_rack": x["rack"],
                "exact_any": x["any"],
                "exact_L": x["L"],
            }
            if args.monte_carlo:
                mc = monte_carlo(
                    e1,
                    e2,
                    args.tasks,
                    args.replicas,
                    args.nodes,
                    args.rack_size,
                    args.theta,
                    trials=args.monte_carlo,
                    seed=args.seed,
                )
                row.update({"mc_L": mc.L, "mc_half_width": mc.half_width})
            rows.append(row)
    if not rows:
        raise InputError("--e1/--e2: no pair with E1 <= E2 and E2 >= 1")
    if args.json:
        print(
            json.dumps(
                {
                    "N": args.tasks,
                    "R": args.replicas,
                    "M": args.nodes,
                    "G": args.rack_size,
                    "theta": args.theta,
                    "rows": rows,
                }
            )
        )
    else:
        head = list(rows[0])
        print(render(head, [[round(v, 4) if isinstance(v, float) else v for v in r.values()] for r in rows]))
        print(
            "bound_*: the paper's sec. 4.2 formulas (L = L(E1) + L(E2), may exceed 1); exact_*: probabilities under the model"
        )
    return 0


def run_table2(args: argparse.Namespace) -> int:
    from mropt.fairness.figures import table2

    rows = table2()
    if args.json:
        print(json.dumps(rows))
    else:
        print(
            render(
                ["E1", "computed 1-(1-p)^E1", "printed"],
                [[r["E1"], f"{r['computed']:.1%}", f"{r['printed']:.0%}"] for r in rows],
            )
        )
    return 0


def run_figures(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mropt.fairness.figures import all_figures, plot_figures

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file; --out needs a folder")
    files.make_folder(out)
    data = all_figures()
    paths = plot_figures(data, out)
    files.write_text(out / "figures.json", json.dumps(data, indent=1) + "\n")
    for p in [*paths, out / "figures.json"]:
        print(p)
    return 0


def run_round(args: argparse.Namespace) -> int:
    from mropt.fairness.ddrf import compare_round
    from mropt.fairness.flow import round_from_instance
    from mropt.model.fairness import FairnessInstance
    from mropt.model.io import load_instance

    instance = load_instance(args.instance)
    if not isinstance(instance, FairnessInstance):
        raise InputError(f"{args.instance}: a round needs a fairness instance, got kind {instance.kind!r}")
    rnd = round_from_instance(instance, args.slots_per_node)
    if not rnd.tasks:
        raise InputError(f"{args.instance}: no user gives 'task_inputs', so the round has no pending task")
    rows = compare_round(rnd, E1=args.e1, E2=args.e2, D=args.delay, seed=args.seed, instance=instance)
    if args.json:
        print(json.dumps(rows))
    else:
        print(render(list(rows[0]), [list(r.values()) for r in rows]))
    return 0
