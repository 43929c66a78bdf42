"""``mropt import-swim TRACE.tsv ...``: an admission instance, or with ``--workload`` a simulator
workload, from a SWIM Facebook trace."""

from __future__ import annotations

import argparse

from mropt.cli.common import SEED, int_type, write_text
from mropt.instances.swim import (
    DEFAULT_JOBS,
    DEFAULT_RACK_SIZE,
    MIB,
    SOURCE_MACHINES,
    SwimParams,
    SwimWorkloadParams,
    import_swim,
    import_swim_workload,
)
from mropt.model.errors import InputError
from mropt.model.io import instance_to_json

_DEFAULTS = SwimParams()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = _DEFAULTS
    p = sub.add_parser(
        "import-swim",
        help="import a window of a SWIM (Facebook 2009) trace as an admission instance",
        description="Turn rows of a SWIM trace (six tab-separated columns: job_id, submit time, gap, map input, "
        "shuffle and reduce output bytes) into an admission instance. Bytes are scaled from the 600-machine "
        "source cluster to --nodes; task counts follow SWIM's replay (64 MiB partitions; map-only rows get 0 "
        "reduce tasks); task times come from the throughputs below; deadlines and benefits from a seeded model "
        "(see mropt.instances.swim). Submit times are relative to --start. Every parameter, the seed and the "
        "trace's SHA-256 are recorded under 'source'. With --workload, the rows become a workload for `mropt "
        "simulate` instead: the whole file by default, on the 600-node source cluster, with the same task counts, "
        "times, deadlines and benefits. Same arguments, same file, byte for byte.",
    )
    p.add_argument("trace", metavar="TRACE.tsv", help="SWIM trace file")
    win = p.add_argument_group("window")
    win.add_argument("--start", type=float, default=d.start, help="window start S, seconds of trace time (default 0)")
    win.add_argument(
        "--jobs",
        "-n",
        type=int_type(),
        default=None,
        help=f"take the first N jobs submitted at or after S (default {DEFAULT_JOBS} unless --duration is given; "
        "with --workload: every job)",
    )
    win.add_argument(
        "--duration",
        type=float,
        default=None,
        help="take the jobs submitted in [S, S+T) (with --jobs: at most N of them)",
    )
    p.add_argument("--seed", type=SEED, default=0, help="seed of deadlines and benefits (default 0)")
    cl = p.add_argument_group("cluster")
    cl.add_argument(
        "--nodes",
        type=int_type(),
        default=None,
        help=f"target cluster nodes (default {d.nodes}, AMB paper; with --workload {SOURCE_MACHINES}, the source cluster)",
    )
    cl.add_argument(
        "--map-slots-per-node", type=int_type(), default=d.map_slots_per_node, help=f"default {d.map_slots_per_node}"
    )
    cl.add_argument(
        "--reduce-slots-per-node",
        type=int_type(),
        default=d.reduce_slots_per_node,
        help=f"default {d.reduce_slots_per_node}",
    )
    cl.add_argument(
        "--source-machines",
        type=int_type(),
        default=d.source_machines,
        help=f"machines of the traced cluster; bytes scale by nodes / this (default {d.source_machines})",
    )
    tasks = p.add_argument_group("tasks")
    tasks.add_argument(
        "--partition-size",
        type=int_type(),
        default=d.partition_bytes,
        help=f"bytes per map task (default {d.partition_bytes // MIB} MiB)",
    )
    tasks.add_argument(
        "--min-input",
        type=int_type(),
        default=d.min_input_bytes,
        help=f"minimum input bytes of a job (default {d.min_input_bytes // MIB} MiB)",
    )
    tasks.add_argument(
        "--bytes-per-reduce",
        type=int_type(),
        default=d.bytes_per_reduce,
        help=f"shuffle+output bytes per reduce task (default {d.bytes_per_reduce // MIB} MiB)",
    )
    tasks.add_argument("--map-rate", type=float, default=d.map_rate, help=f"MB/s per map slot (default {d.map_rate:g})")
    tasks.add_argument(
        "--reduce-rate", type=float, default=d.reduce_rate, help=f"MB/s per reduce slot (default {d.reduce_rate:g})"
    )
    tasks.add_argument(
        "--task-overhead",
        type=float,
        default=d.task_overhead,
        help=f"seconds added to every task (default {d.task_overhead:g})",
    )
    model = p.add_argument_group("deadlines and benefits")
    model.add_argument(
        "--slack-min",
        type=float,
        default=d.slack_min,
        help=f"deadline = submit + slack x standalone time; default {d.slack_min:g}",
    )
    model.add_argument("--slack-max", type=float, default=d.slack_max, help=f"default {d.slack_max:g}")
    model.add_argument(
        "--benefit-ref",
        type=float,
        default=d.benefit_ref,
        help=f"mean benefit of the reference job (default {d.benefit_ref:g})",
    )
    model.add_argument(
        "--benefit-noise",
        type=float,
        default=d.benefit_noise,
        help=f"benefit varies by +/- this fraction (default {d.benefit_noise:g})",
    )
    model.add_argument(
        "--benefit-exponent",
        type=float,
        default=d.benefit_exponent,
        help=f"benefit grows as work ** this (default {d.benefit_exponent:g}: proportional)",
    )
    model.add_argument("--alpha", type=float, default=d.alpha, help=f"penalty ratio (default {d.alpha:g})")
    model.add_argument("--beta", type=float, default=d.beta, help=f"penalty threshold of eq. 3 (default {d.beta:g})")
    model.add_argument("--rho", type=float, default=d.rho, help=f"slack factor (default {d.rho:g})")
    wl = p.add_argument_group("workload (with --workload)")
    wl.add_argument(
        "--workload",
        action="store_true",
        help="write a simulator workload (kind 'workload') instead of an admission instance",
    )
    w = SwimWorkloadParams()
    wl.add_argument(
        "--rack-size",
        type=int_type(),
        default=None,
        help=f"nodes per rack (default {DEFAULT_RACK_SIZE}: 600 nodes, 30 racks)",
    )
    wl.add_argument(
        "--replicas",
        type=int_type(),
        default=None,
        help=f"HDFS replicas of each map input, placed by the simulator; 0 = no locality (default {w.replicas})",
    )
    wl.add_argument(
        "--users",
        type=int_type(),
        default=None,
        help=f"users (Fair pools) drawn uniformly per job; 1 = every job in 'default' (default {w.users})",
    )
    p.add_argument("-o", "--output", help="output file (default stdout)")
    p.set_defaults(handler=run_import_swim)


def run_import_swim(args: argparse.Namespace) -> int:
    d = _DEFAULTS
    layout = {k: getattr(args, k) for k in ("rack_size", "replicas", "users") if getattr(args, k) is not None}
    if layout and not args.workload:
        flag = "--" + next(iter(layout)).replace("_", "-")
        raise InputError(f"import-swim: option '{flag}' needs --workload")
    params = SwimParams(
        start=args.start,
        jobs=args.jobs,
        duration=args.duration,
        nodes=args.nodes if args.nodes is not None else (args.source_machines if args.workload else d.nodes),
        map_slots_per_node=args.map_slots_per_node,
        reduce_slots_per_node=args.reduce_slots_per_node,
        source_machines=args.source_machines,
        partition_bytes=args.partition_size,
        min_input_bytes=args.min_input,
        bytes_per_reduce=args.bytes_per_reduce,
        map_rate=args.map_rate,
        reduce_rate=args.reduce_rate,
        task_overhead=args.task_overhead,
        slack_min=args.slack_min,
        slack_max=args.slack_max,
        benefit_ref=args.benefit_ref,
        benefit_noise=args.benefit_noise,
        benefit_exponent=args.benefit_exponent,
        alpha=args.alpha,
        beta=args.beta,
        rho=args.rho,
    )
    if args.workload:
        workload = import_swim_workload(args.trace, params, SwimWorkloadParams(**layout), seed=args.seed)
        write_text(instance_to_json(workload), args.output)
        return 0
    instance = import_swim(args.trace, params, seed=args.seed)
    write_text(instance_to_json(instance), args.output)
    return 0
