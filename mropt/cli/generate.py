"""``mropt generate admission|priority|fairness|workload ...``: seeded instances with the papers' defaults.

The options are the fields of each generator's parameter dataclass (``AdmissionParams``,
``PriorityParams``, ``FairnessParams``), built by :func:`mropt.cli.common.add_param_options`:
a new generator parameter is a new option.
"""

from __future__ import annotations

import argparse

from mropt.cli.common import add_param_options, param_fields, params_from_args, write_text
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

    from mropt.instances.workload_gen import PRESETS, WorkloadParams

    p = kinds.add_parser(
        "workload",
        help="simulator workload: the AMB paper's job sets (static Table 2, dynamic sec. 5.2), DDRF's locality "
        "setting, LATE's heterogeneous cluster",
        description="Generate a workload for `mropt simulate`. --preset amb-static is the AMB paper's static set "
        "(Table 2: 30 jobs at time 0, U[0.5L, 1.5L] 64 MB splits with L = 150, deadlines U[0.5D, 1.5D] with "
        "D = 1000 s, benefits U[300, 700], 40 nodes x 2+2 slots; its jobs are those of `generate admission` with "
        "the same seed); amb-dynamic its dynamic set (sec. 5.2: 60 jobs over one hour, one a minute on average, "
        "deadline = submit + U[400, 600] s); ddrf the DDRF paper's locality setting (N = --tasks-per-job 20 map tasks "
        "per job, R = --replicas 3 HDFS-placed replicas, M = --nodes 100 nodes of <4 cpu, 8 mem> in racks of 20, "
        "offered load 0.95); late a heterogeneous cluster with stragglers for speculative execution (20 jobs of "
        "amb-static's draws over 10 minutes, 40 nodes of which --slow-fraction 0.25 run at --slow-speed 0.5, "
        "--straggler-rate 0.05 of the attempts --straggler-slowdown 3 times slower, reduce slow-start 0.05). "
        "An option overrides the preset's value (see "
        "mropt.instances.workload_gen). Same arguments, same file, byte for byte.",
    )
    p.add_argument("--preset", choices=list(PRESETS), default="amb-static", help="the job set (default amb-static)")
    add_param_options(p, WorkloadParams, first=("seed", "jobs", "mean_splits", "mean_deadline"))
    # an option left out keeps the preset's value: unset options are None (or [] for --job-type)
    p.set_defaults(**{f.name: None for f in param_fields(WorkloadParams) if f.name != "job_types"})
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_workload)


def run_admission(args: argparse.Namespace) -> int:
    instance = generate_admission(args.seed, params_from_args(AdmissionParams, args))
    write_text(instance_to_json(instance), args.output)
    return 0


def run_priority(args: argparse.Namespace) -> int:
    from mropt.instances.priority_gen import PriorityParams, generate_priority

    instance = generate_priority(args.seed, params_from_args(PriorityParams, args))
    write_text(instance_to_json(instance), args.output)
    return 0


def run_workload(args: argparse.Namespace) -> int:
    from mropt.instances.workload_gen import WorkloadParams, generate_workload, preset_params

    given = {}
    for f in param_fields(WorkloadParams):
        value = getattr(args, f.name)
        if f.name == "job_types":
            if value:  # repeated NAME=... records over the default table
                given[f.name] = {**preset_params(args.preset).job_types, **dict(value)}
        elif value is not None:
            given[f.name] = value
    instance = generate_workload(args.preset, args.seed, preset_params(args.preset, **given))
    write_text(instance_to_json(instance), args.output)
    return 0
