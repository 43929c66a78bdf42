"""``mropt methods``, ``mropt solve`` and ``mropt verify``.

``mropt verify FILE SOLUTION`` checks a solution with its kind's independent ``verify``;
``mropt verify WORKLOAD DIR``, DIR a ``mropt simulate --out`` folder, checks the run with
:func:`mropt.sim.verify.verify_simulation` (:func:`mropt.cli.simulate.run_verify_run`). Exit 0 when
it holds, 1 when verification finds problems (each printed), 2 on bad input (one line).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from mropt.cli.common import SEED, int_type, load_input, parse_param, write_text
from mropt.harness.profiles import load_profile
from mropt.harness.table import render
from mropt.model.errors import InputError
from mropt.model.io import load_instance, read_json
from mropt.model.solution import Solution
from mropt.registry import kinds, methods, solve, verify_solution


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("methods", help="list the registered methods")
    p.add_argument("--kind", help="only methods for this instance kind")
    p.add_argument("--params", action="store_true", help="list each parameter: type, range, default, meaning")
    p.set_defaults(handler=run_methods)

    p = sub.add_parser("solve", help="solve an instance file with a registered method")
    p.add_argument("instance", help="instance file (JSON)")
    p.add_argument("--method", "-m", help="method name (see `mropt methods`); may be left out with --profile")
    p.add_argument("--profile", help="solver profile: a name in solvers/ (e.g. cpsat) or a .toml path")
    p.add_argument("--time-limit", type=float, default=None, help="seconds (default: the profile's, else none)")
    p.add_argument(
        "--threads",
        type=int_type(1),
        default=None,
        help="solver threads (exact methods; default: the profile's, else 1)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    p.add_argument(
        "--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="method parameter, repeatable"
    )
    p.add_argument("--json", action="store_true", help="print the solution as one JSON object")
    p.add_argument("-o", "--output", help="also write the solution JSON to this file")
    p.set_defaults(handler=run_solve)

    p = sub.add_parser("verify", help="check a solution against its instance with independent code")
    p.add_argument("instance", help="instance file (JSON)")
    p.add_argument(
        "solution",
        help="solution file (JSON, as written by `mropt solve --json`), or a `mropt simulate --out` folder "
        "of a run of the workload FILE",
    )
    p.add_argument("--allow-late", action="store_true", help="admission: accept late jobs, charging eq. 1's penalty")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(handler=run_verify)


def run_methods(args: argparse.Namespace) -> int:
    if args.kind is not None and args.kind not in kinds():
        raise InputError(f"--kind: no methods for kind {args.kind!r} (kinds: {', '.join(kinds())})")
    found = methods(args.kind)
    width = max(len(m.name) for m in found) if found else 0
    for m in found:
        params = f" [params: {', '.join(m.params)}]" if m.params else ""
        print(f"{m.name.ljust(width)}  {m.kind:<10} {m.role:<9}  {m.summary}{params}")
        if args.params:
            for name, decl in m.params.items():
                print(f"{'':{width}}    {name}: {decl.describe()}")
    return 0


def run_solve(args: argparse.Namespace) -> int:
    instance = load_input(args.instance, workload=False)
    method, time_limit, params = args.method, args.time_limit, {}
    if args.profile:
        profile = load_profile(args.profile)
        if method is not None and method != profile.backend:
            raise InputError(
                f"--method {method!r} disagrees with profile {profile.name!r} (backend {profile.backend!r})"
            )
        method = profile.backend
        params = profile.method_params(args.threads)
        time_limit = profile.time_limit if time_limit is None else time_limit
    elif method is None:
        raise InputError("give --method NAME or --profile NAME")
    elif args.threads is not None:
        params["threads"] = args.threads
    params.update(parse_param(p) for p in args.param)
    solution = solve(instance, method, time_limit=time_limit, seed=args.seed, **params)
    text = json.dumps(solution.to_dict(), indent=2) + "\n"
    if args.output:
        write_text(text, args.output)
    if args.json:
        sys.stdout.write(text)
    else:
        print(solution_text(solution, instance))
    return 1 if solution.status == "error" else 0


#: launches of ``drf``'s order shown in the text output (the whole order: ``--json``)
ORDER_SHOWN = 10


def solution_text(s: Solution, instance: Any) -> str:
    """``mropt solve``'s text output: one table of the solution, every field whole but ``drf``'s launch
    order (one entry per task launched: its length and first launches), floats to 6 digits.

    Only the instance's kind's decision fields are shown (an ``error`` on a fairness
    instance has no admission rows).
    """
    rows: list[list[Any]] = [["method", s.method], ["status", s.status], ["objective", s.objective], ["bound", s.bound]]
    if s.typed_decision.kind == instance.kind:
        rows += [list(row) for row in s.typed_decision.text_rows(instance)]
        order = getattr(s.typed_decision, "order", None) if instance.kind == "fairness" else None
        if order is not None and len(order) > ORDER_SHOWN:
            first = " ".join(order[:ORDER_SHOWN])
            shown = f"{len(order)} launches (the first {ORDER_SHOWN}: {first}; all of them: --json)"
            rows = [[key, shown] if key == "order" else [key, value] for key, value in rows]
    rows.append(["wall time (s)", round(s.wall_time, 4)])
    rows.append(["solver", f"{s.solver.get('name', '?')} {s.solver.get('version', '')}".strip()])
    if s.status == "error":
        rows.append(["error", s.details.get("error")])
    return render(["field", "value"], rows)


def run_verify(args: argparse.Namespace) -> int:
    if os.path.isdir(args.solution):
        from mropt.cli.simulate import run_verify_run

        return run_verify_run(args)
    instance = load_instance(args.instance)
    data = read_json(args.solution)
    try:
        solution = Solution.from_dict(data, kind=instance.kind)
    except InputError as exc:
        raise InputError(f"{args.solution}: {exc}") from None
    options = {"allow_late": True} if args.allow_late else {}
    verdict = verify_solution(instance, solution, **options)
    if args.json:
        print(
            json.dumps(
                {
                    "ok": verdict.ok,
                    "objective": verdict.objective,
                    "claimed_objective": solution.objective,
                    "late": verdict.late,
                    "problems": verdict.problems,
                }
            )
        )
    elif verdict.ok:
        print(f"ok: {_verified_what(solution, verdict)}")
    else:
        for problem in verdict.problems:
            print(f"mropt verify: {problem}", file=sys.stderr)
    return 0 if verdict.ok else 1


def _verified_what(solution: Solution, verdict: Any) -> str:
    """What an accepted verdict rests on; "recomputed" only when the objective was."""
    if verdict.checked_schedule and verdict.objective is not None:
        return f"decision valid, objective {verdict.objective:g} recomputed"
    claimed = "none" if solution.objective is None else f"{solution.objective:g}"
    if solution.status == "bound":
        return f"bound-only result with no decision, objective {claimed} (a bound: nothing to recompute)"
    return f"no decision (status {solution.status}), objective {claimed}: nothing to recompute"
