"""``mropt generate admission|priority|fairness ...``: seeded instances with the papers' defaults.

The options are the fields of each generator's parameter dataclass (``AdmissionParams``,
``PriorityParams``, ``FairnessParams``), built by :func:`mropt.cli.common.add_param_options`
(issue 12, item 7): a new generator parameter is a new option.
"""

from __future__ import annotations

import argparse

from mropt.cli.common import add_param_options, params_from_args, write_text
from mropt.instances.admission_gen import AdmissionParams, generate_admission
from mropt.model.io import instance_to_json


def add_parsers(sub: argparse._SubParsersAction) -> None:
    gen = sub.add_parser("generate", help="generate a seeded instance (paper defaults)")
    kinds = gen.add_subparsers(dest="kind", required=True, metavar="KIND")
    p = kinds.add_parser(
        "admission",
        help="AMB admission instance (Table 2 defaults)",
        description="Generate an admission instance; defaults are the AMB paper's experiment (Table 2, sec. 5.1). "
        "Same arguments, same file, byte for byte.",
    )
    add_param_options(p, AdmissionParams, first=("jobs", "seed"))  # one option per field
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_admission)

    from mropt.instances.priority_gen import PriorityParams

    p = kinds.add_parser(
        "priority",
        help="MPSA priority instance (Table 2 defaults)",
        description="Generate a priority instance; defaults are the MPSA paper's experiment (Table 2, sec. 5): "
        "100 map and 50 reduce slots, deadlines 10/20/40 min, 100 one-minute map tasks and 50 min of reduce work "
        "per visit, 0.1 jobs/min per priority. Same arguments, same file, byte for byte.",
    )
    add_param_options(p, PriorityParams, first=("seed", "arrival_rate", "workload_scale", "deadlines"))
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_priority)

    from mropt.cli.fairness import add_generate_fairness

    add_generate_fairness(kinds)


def run_admission(args: argparse.Namespace) -> int:
    instance = generate_admission(args.seed, params_from_args(AdmissionParams, args))
    write_text(instance_to_json(instance), args.output)
    return 0


def run_priority(args: argparse.Namespace) -> int:
    from mropt.instances.priority_gen import PriorityParams, generate_priority

    instance = generate_priority(args.seed, params_from_args(PriorityParams, args))
    write_text(instance_to_json(instance), args.output)
    return 0
