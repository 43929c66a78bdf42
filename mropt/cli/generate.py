"""``mropt generate admission ...``: seeded instances with the papers' defaults."""

from __future__ import annotations

import argparse

from mropt.cli.common import write_text
from mropt.instances.admission_gen import PAPER_JOB_TYPES, AdmissionParams, JobType, generate_admission
from mropt.model.errors import InputError
from mropt.model.io import instance_to_json

_DEFAULTS = AdmissionParams()


def _mix(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.partition("=")
        try:
            out[name.strip()] = float(weight) if sep else 1.0
        except ValueError:
            raise InputError(f"--mix expects type=weight,..., got {text!r}") from None
    return out


def _job_type(text: str) -> tuple[str, JobType]:
    name, sep, values = text.partition("=")
    try:
        map_time, fanout, reduce_time = (float(v) for v in values.split(","))
    except ValueError:
        raise InputError(
            f"--job-type expects name=map_task_time,reduce_fanout,reduce_task_time, got {text!r}"
        ) from None
    if not sep or not name:
        raise InputError(f"--job-type expects name=map_task_time,reduce_fanout,reduce_task_time, got {text!r}")
    return name.strip(), JobType(map_time, fanout, reduce_time)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    gen = sub.add_parser("generate", help="generate a seeded instance (paper defaults)")
    kinds = gen.add_subparsers(dest="kind", required=True, metavar="KIND")
    p = kinds.add_parser(
        "admission",
        help="AMB admission instance (Table 2 defaults)",
        description="Generate an admission instance; defaults are the AMB paper's experiment (Table 2, sec. 5.1). "
        "Same arguments, same file, byte for byte.",
    )
    d = _DEFAULTS
    p.add_argument("--jobs", "-n", type=int, default=d.jobs, help=f"N, number of jobs (default {d.jobs})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--size", type=float, default=d.size, help=f"L, mean job size in 64 MB splits (default {d.size:g})")
    p.add_argument("--deadline", type=float, default=d.deadline, help=f"D, mean relative deadline in s (default {d.deadline:g})")
    p.add_argument("--benefit-min", type=int, default=d.benefit_min, help=f"default {d.benefit_min}")
    p.add_argument("--benefit-max", type=int, default=d.benefit_max, help=f"default {d.benefit_max}")
    p.add_argument("--alpha", type=float, default=d.alpha, help=f"penalty ratio (default {d.alpha:g})")
    p.add_argument("--beta", type=float, default=d.beta, help=f"penalty threshold of eq. 3 (default {d.beta:g})")
    p.add_argument("--rho", type=float, default=d.rho, help=f"slack factor (default {d.rho:g})")
    p.add_argument("--nodes", type=int, default=d.nodes, help=f"cluster nodes (default {d.nodes})")
    p.add_argument("--map-slots-per-node", type=int, default=d.map_slots_per_node, help=f"default {d.map_slots_per_node}")
    p.add_argument("--reduce-slots-per-node", type=int, default=d.reduce_slots_per_node, help=f"default {d.reduce_slots_per_node}")
    p.add_argument("--task-time-jitter", type=float, default=d.task_time_jitter, help=f"task times vary by +/- this fraction (default {d.task_time_jitter:g})")
    p.add_argument("--mean-interarrival", type=float, default=d.mean_interarrival, help="mean gap between submissions in s; 0 = all at time 0 (default)")
    p.add_argument("--mix", type=_mix, default=None, help="job type weights, e.g. wordcount=1,grep=2 (default equal thirds)")
    p.add_argument(
        "--job-type",
        type=_job_type,
        action="append",
        default=[],
        metavar="NAME=MAP_TIME,FANOUT,REDUCE_TIME",
        help="add or override a job type (known: " + ", ".join(PAPER_JOB_TYPES) + ")",
    )
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_admission)

    from mropt.instances.priority_gen import PriorityParams

    q = PriorityParams()
    p = kinds.add_parser(
        "priority",
        help="MPSA priority instance (Table 2 defaults)",
        description="Generate a priority instance; defaults are the MPSA paper's experiment (Table 2, sec. 5): "
        "100 map and 50 reduce slots, deadlines 10/20/40 min, 100 one-minute map tasks and 50 min of reduce work "
        "per visit, 0.1 jobs/min per priority. Same arguments, same file, byte for byte.",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--arrival-rate", type=float, default=q.arrival_rate, help="jobs/s per priority (default 1/600)")
    p.add_argument("--workload-scale", type=float, default=q.workload_scale, help="multiplies map and reduce work (default 1)")
    p.add_argument("--deadlines", type=lambda t: tuple(float(v) for v in t.split(",")), default=q.deadlines, help="seconds, comma-separated (default 600,1200,2400)")
    p.add_argument("--map-slots", type=int, default=q.map_slots, help=f"default {q.map_slots}")
    p.add_argument("--reduce-slots", type=int, default=q.reduce_slots, help=f"default {q.reduce_slots}")
    p.add_argument("--map-tasks", type=int, default=q.map_tasks, help=f"map tasks per map visit (default {q.map_tasks})")
    p.add_argument("--map-task-time", type=float, default=q.map_task_time, help=f"s (default {q.map_task_time:g})")
    p.add_argument("--reduce-work", type=float, default=q.reduce_work, help=f"slot-seconds per reduce visit (default {q.reduce_work:g})")
    p.add_argument("--pattern-mix", type=_mix, default=None, help="simple=1,iterative=1,chain=1 (default equal thirds)")
    p.add_argument("--iterations", type=int, default=q.iterations, help=f"rounds of an iterative job (default {q.iterations})")
    p.add_argument("--jitter", type=float, default=q.jitter, help="per-priority rate and work vary by +/- this fraction (default 0)")
    p.add_argument("--history-slices", type=int, default=q.history_slices, help="AR(1) history length instead of explicit values (default 0)")
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_priority)

    from mropt.cli.fairness import add_generate_fairness

    add_generate_fairness(kinds)


def run_admission(args: argparse.Namespace) -> int:
    job_types = {**PAPER_JOB_TYPES, **dict(args.job_type)}
    params = AdmissionParams(
        jobs=args.jobs,
        size=args.size,
        deadline=args.deadline,
        benefit_min=args.benefit_min,
        benefit_max=args.benefit_max,
        alpha=args.alpha,
        beta=args.beta,
        rho=args.rho,
        nodes=args.nodes,
        map_slots_per_node=args.map_slots_per_node,
        reduce_slots_per_node=args.reduce_slots_per_node,
        task_time_jitter=args.task_time_jitter,
        mean_interarrival=args.mean_interarrival,
        mix=args.mix if args.mix is not None else {t: 1.0 for t in PAPER_JOB_TYPES},
        job_types=job_types,
    )
    instance = generate_admission(args.seed, params)
    write_text(instance_to_json(instance), args.output)
    return 0


def run_priority(args: argparse.Namespace) -> int:
    from mropt.instances.priority_gen import PATTERNS, generate_priority

    instance = generate_priority(
        args.seed,
        arrival_rate=args.arrival_rate,
        workload_scale=args.workload_scale,
        deadlines=args.deadlines,
        map_slots=args.map_slots,
        reduce_slots=args.reduce_slots,
        map_tasks=args.map_tasks,
        map_task_time=args.map_task_time,
        reduce_work=args.reduce_work,
        pattern_mix=args.pattern_mix if args.pattern_mix is not None else {t: 1.0 for t in PATTERNS},
        iterations=args.iterations,
        jitter=args.jitter,
        history_slices=args.history_slices,
    )
    write_text(instance_to_json(instance), args.output)
    return 0
