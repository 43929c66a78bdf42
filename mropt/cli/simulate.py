"""``mropt simulate`` and ``mropt policies``: run a scheduling policy on a workload.

``mropt simulate FILE --policy NAME [--plan SOLUTION.json] [--param K=V]... [--seed S]
[--out DIR [--force]] [--json] [--mode event|heartbeat] [--speculation RULE [--speculation-param K=V]...]
[--max-memory GIB] [--until T] [--time-limit S] [--no-progress] [--history DB [--history-source NAME]]
[--engine auto|python|compiled]`` (a contract; ``-o`` is ``--out``). ``--engine`` picks what runs the
simulation, the same run either way (:mod:`mropt.sim.engines`: the compiled core runs ``drf``, ``ddrf``
and ``delay`` on clusters of two resources, ``fair`` and ``capacity`` on clusters of slots, and ``fifo``
in event mode; ``auto``, the default, uses it where it applies for workloads of 100,000 tasks or more).
``--speculation`` (a registered rule,
:mod:`mropt.sim.speculation.table`: ``none``, ``hadoop-0.20``, ``late``, ``late-percentile``, ``clairvoyant``;
default ``none``) adds backup attempts under any policy; with a rule the summary has ``backups`` and
``wasted_work``. ``mropt policies`` lists the policies, then the speculation rules, each with its parameters. FILE is a workload or an
admission instance (converted on the fly, :mod:`mropt.sim.run`); ``--param`` values are read
as ``mropt solve --param`` reads them (:func:`mropt.cli.common.parse_param`); ``--out DIR``
writes the Parquet tables and ``summary.json`` into a new folder swapped in whole, and refuses a
``DIR`` that is not an earlier run's output unless ``--force`` (:mod:`mropt.sim.outputs`). Without
``--json`` a one-screen summary is printed. Bad input is one line on stderr, exit 2; so is a
policy that cannot run on the workload (what it needs: ``mropt policies`` lists it) and a run
whose memory estimate is above ``--max-memory GIB`` (16 GiB by default, :mod:`mropt.sim.memory`),
both before the run. A trace given as FILE (a SWIM TSV, Alibaba's ``batch_task.csv``, Rumen JSON, a
``.jhist``) is told, on the error's line, the import command that makes it a workload.

``--until T`` stops the run at simulated time T (after the events of T), ``--time-limit S``
after S seconds of wall-clock time, and so does Ctrl-C: the outputs are then those of what
happened so far, the summary's ``stopped`` saying which (``until``, ``time_limit``,
``interrupted``; null for a run to its end), and the exit status is 0, or 130 after Ctrl-C
(:mod:`mropt.sim.watch`; a second Ctrl-C abandons the run, writing nothing). A progress bar is
drawn on stderr when it is a terminal, unless ``--no-progress``. Files written one by one
(``--force``) are never cut by Ctrl-C: it is held until they are written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mropt.cli.common import SEED, load_input, parse_param
from mropt.harness.table import render
from mropt.model.errors import InputError
from mropt.model.io import read_json
from mropt.registry import Param
from mropt.sim.engines import ENGINES


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from mropt.sim.speculation.table import rules

    p = sub.add_parser("policies", help="list the simulator's scheduling policies and speculation rules")
    p.add_argument("--params", action="store_true", help="list each parameter: type, range, default, meaning")
    p.set_defaults(handler=run_policies)

    p = sub.add_parser(
        "simulate",
        help="run a scheduling policy on a workload (or an admission instance) in the cluster simulator",
        description="Simulate FILE (a workload, or an admission instance run on the idealised cluster of "
        "the SEQ model) under a policy (`mropt policies`). Prints a summary (or --json); --out DIR "
        "writes jobs.parquet, tasks.parquet, utilisation.parquet and summary.json.",
    )
    p.add_argument("instance", metavar="FILE", help="workload or admission instance file (JSON)")
    p.add_argument("--policy", required=True, help="policy name (see `mropt policies`)")
    p.add_argument("--plan", metavar="SOLUTION.json", help="a plan written by `mropt solve --json` (what seq executes)")
    p.add_argument(
        "--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="policy parameter, repeatable"
    )
    p.add_argument("--seed", type=SEED, default=0, help="random seed: stragglers, placement (default 0)")
    p.add_argument("--mode", choices=("event", "heartbeat"), help="assignment mode (default: the policy's)")
    p.add_argument(
        "--speculation",
        choices=tuple(rules()),
        default="none",
        help="speculative execution rule, with any policy (default none; see `mropt policies`)",
    )
    p.add_argument(
        "--speculation-param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the speculation rule, repeatable (e.g. slow_task_threshold=0.5)",
    )
    p.add_argument(
        "--straggler-draws",
        choices=("stream", "task"),
        help="straggler draws: one stream in launch order (default without --speculation) or per task attempt "
        "(default with one; give it to a run without speculation to compare on the same stragglers)",
    )
    p.add_argument(
        "--out",
        "-o",
        metavar="DIR",
        help="write the tables (Parquet) and summary.json into DIR, replacing an earlier run's DIR whole",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write the files into an --out folder that is not an earlier run's output (refused otherwise; "
        "the rest of it is kept)",
    )
    p.add_argument(
        "--history",
        metavar="DB",
        help="record the run in a job-history database (created if missing; as `mropt history import DB DIR`)",
    )
    p.add_argument(
        "--history-source",
        metavar="NAME",
        help="the run's source name in --history (default: the --out folder's name, else FILE-POLICY-seedN)",
    )
    p.add_argument(
        "--max-memory",
        type=float,
        metavar="GIB",
        help="refuse a run whose memory estimate exceeds GIB gibibytes (default 16; see mropt.sim.memory); with "
        "--until the estimate counts the attempts of the jobs submitted by then",
    )
    p.add_argument(
        "--until",
        type=float,
        metavar="T",
        help="stop at simulated time T (seconds), keeping what happened by then (summary: stopped until)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        help="stop after S seconds of wall-clock time, keeping what happened (summary: stopped time_limit); "
        "Ctrl-C stops likewise (stopped interrupted)",
    )
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (drawn on stderr only when it is a terminal)"
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="what runs the simulation: the Python engine, or the compiled core (numba; drf, ddrf and delay on clusters of two "
        "resources, fair and capacity on clusters of slots, fifo in event mode: which runs, see mropt.sim.engines); auto "
        "(default): the compiled core where it applies, for 100,000 tasks or more. The same run either way",
    )
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(handler=run_simulate)


def run_policies(args: argparse.Namespace) -> int:
    """The policies (name, mode, summary, needs, parameters), then the speculation rules likewise."""
    from mropt.sim.policy import policies
    from mropt.sim.speculation.table import rules

    found = list(policies().values())
    width = max((len(p.name) for p in found), default=0)
    for info in found:
        needs = ["--plan"] * info.needs_plan + list(info.needs)
        plan = f" (needs {', '.join(needs)})" if needs else ""
        print(f"{info.name.ljust(width)}  {info.cls.mode:<9}  {info.summary}{plan}{_params_note(info.params)}")
        _print_params(info.params, width, args.params)
    spec = list(rules().values())
    width = max((len(r.name) for r in spec), default=0)
    print("\nspeculation rules (mropt simulate --speculation NAME [--speculation-param K=V]...), with any policy:")
    for rule in spec:
        print(f"{rule.name.ljust(width)}  {rule.summary}{_params_note(rule.params)}")
        _print_params(rule.params, width, args.params)
    return 0


def _params_note(params: Mapping[str, Param]) -> str:
    return f" [params: {', '.join(params)}]" if params else ""


def _print_params(params: Mapping[str, Param], width: int, show: bool) -> None:
    if show:
        for name, decl in params.items():
            print(f"{'':{width}}    {name}: {decl.describe()}")


def run_simulate(args: argparse.Namespace) -> int:
    from mropt.sim.outputs import prepare_out, summary_json, write_outputs
    from mropt.sim.policy import policy_info
    from mropt.sim.run import read_plan, simulate
    from mropt.sim.watch import INTERRUPTED, held_interrupts

    if args.until is not None and not 0 <= args.until < float("inf"):
        raise InputError(f"--until must be a simulated time in seconds >= 0, got {args.until}")
    if args.time_limit is not None and not 0 < args.time_limit < float("inf"):
        raise InputError(f"--time-limit must be a number of seconds > 0, got {args.time_limit}")
    if args.max_memory is not None and not 0 < args.max_memory < float("inf"):
        raise InputError(f"--max-memory must be a number of GiB > 0, got {args.max_memory}")
    policy_info(args.policy)  # an unknown name before the file is read
    in_place = False
    if args.out is not None:
        if not args.out:
            raise InputError("option '--out' must name a folder, got ''")
        in_place = prepare_out(args.out, args.force)  # a folder it would refuse, before the run
    elif args.force:
        raise InputError("option '--force' needs --out")
    if args.history_source and not args.history:  # before the run, not after it (its outputs were written)
        raise InputError("option '--history-source' needs --history")
    if args.history:
        _check_history_source(args)  # a source name already in DB, before the run rather than after it
    if args.speculation_param and args.speculation == "none":
        raise InputError(
            f"option '--speculation-param' needs --speculation RULE (a rule of `mropt policies`), "
            f"got {args.speculation_param[0]!r} without one"
        )
    params = dict(parse_param(p) for p in args.param)
    instance = load_input(args.instance, workload=True)
    plan = read_plan(read_json(args.plan), args.plan) if args.plan else None
    spec_params = dict(parse_param(p) for p in args.speculation_param)
    run = simulate(
        instance,
        args.policy,
        params,
        seed=args.seed,
        mode=args.mode,
        plan=plan,
        speculation=args.speculation,
        speculation_params=spec_params,
        straggler_draws=args.straggler_draws,
        max_memory=None if args.max_memory is None else int(args.max_memory * (1 << 30)),
        until=args.until,
        time_limit=args.time_limit,
        progress=not args.no_progress and sys.stderr.isatty(),
        stop_on_interrupt=True,
        engine=args.engine,
    )
    if args.out:
        with held_interrupts(in_place):  # files written one by one: never cut in two by Ctrl-C
            write_outputs(run, args.out, args.force)
    if args.history:
        _record_history(run, args)
    if args.json:
        sys.stdout.write(summary_json(run))
    else:
        print(summary_text(run.summary, args.out))
    from mropt.sim.low_acceptance import warn_low_acceptance

    warn_low_acceptance(run.summary)  # one stderr line when most jobs were rejected on an idle cluster
    return 130 if run.summary["stopped"] == INTERRUPTED else 0


def run_verify_run(args: argparse.Namespace) -> int:
    """``mropt verify WORKLOAD DIR``: the run in DIR checked against WORKLOAD (:meth:`RunResult.verify`)."""
    from mropt.sim.run_result import load_run, load_workload_file

    if args.allow_late:
        raise InputError("option '--allow-late' is for admission solutions, not a simulation folder")
    run = load_run(args.solution)
    workload = load_workload_file(args.instance)  # parsed once: checked, then named below when it fails
    verdict = run.verify(workload)
    if args.json:
        claimed = run.summary.get("benefit")
        print(json.dumps({"ok": verdict.ok, "objective": verdict.objective, "claimed_objective": claimed,
                          "late": verdict.late, "problems": verdict.problems}))  # fmt: skip
    elif verdict.ok:
        stopped = run.summary.get("stopped")
        early = (
            f"; a run stopped early ({stopped}, at simulated time {run.summary['stopped_at']:g} s)" if stopped else ""
        )
        print(
            f"ok: {len(run.jobs)} jobs and {len(run.tasks)} attempts checked against {args.instance}, "
            f"benefit {verdict.objective:g} recomputed (AMB eq. 1){early}"
        )
    else:
        recorded, given = run.summary.get("workload"), getattr(workload, "name", None)
        if recorded and given and recorded != given:  # first, what most likely explains every line below
            print(
                f"mropt verify: the run in {args.solution} is of workload {recorded!r}, "
                f"{args.instance} is {given!r}: is it the run's workload?",
                file=sys.stderr,
            )
        for problem in verdict.problems:
            print(f"mropt verify: {problem}", file=sys.stderr)
    return 0 if verdict.ok else 1


def _record_history(run: Any, args: argparse.Namespace) -> None:
    """Import the run's tables into the history database ``args.history`` (one transaction)."""
    import tempfile

    from mropt.history.store import import_batches
    from mropt.importers.simulation import simulation_batch
    from mropt.sim.outputs import write_outputs

    source = _history_source(args)
    if args.out:
        import_batches(args.history, [simulation_batch(args.out, source)])
        return
    with tempfile.TemporaryDirectory() as tmp:
        write_outputs(run, tmp)
        import_batches(args.history, [simulation_batch(tmp, source)])


def _history_source(args: argparse.Namespace) -> str:
    """The run's source name in ``--history``: ``--history-source``, else the ``--out`` folder's name, else
    ``FILE-POLICY-seedN``."""
    if args.history_source:
        return str(args.history_source)
    if args.out:
        return Path(args.out).resolve().name
    return f"{Path(args.instance).stem}-{args.policy}-seed{args.seed}"


def _check_history_source(args: argparse.Namespace) -> None:
    """Refuse, before the run, a source name ``--history`` already holds (the import refuses it after the run)."""
    from mropt.history.store import connect, refuse_present

    path = Path(args.history)
    if not path.is_file():  # created by the import; anything else there is its error to give
        return
    with connect(path) as con:
        refuse_present(con, path, [_history_source(args)], "give this run another name with --history-source NAME")


#: width of the summary's ``params`` value before it goes on to another row
PARAMS_WIDTH = 60


def _params_rows(policy: str, params: Mapping[str, Any]) -> list[list[Any]]:
    """The summary's ``params`` rows: the parameters given other than their defaults, ``name=value``
    (JSON values), wrapped at :data:`PARAMS_WIDTH`, then where the defaults are listed (the whole
    dict, defaults included, is the ``--json`` summary's ``params``)."""
    if not params:
        return [["params", "-"]]
    from mropt.sim.policy import policies

    info = policies().get(policy)
    defaults = {name: decl.default for name, decl in info.params.items()} if info is not None else {}
    changed = [f"{k}={json.dumps(v)}" for k, v in sorted(params.items()) if k not in defaults or defaults[k] != v]
    note = f"{'the others' if changed else 'all'} at their defaults (`mropt policies --params`)"
    lines: list[str] = []
    for item in [*[f"{c}," for c in changed[:-1]], *[f"{c};" for c in changed[-1:]], note]:
        if lines and len(lines[-1]) + 1 + len(item) <= PARAMS_WIDTH:
            lines[-1] += " " + item
        else:
            lines.append(item)
    return [["params" if k == 0 else "", line] for k, line in enumerate(lines)]


def summary_text(s: dict[str, Any], out: str | None = None) -> str:
    """The one-screen summary of ``mropt simulate``."""
    util = s.get("utilisation") or {}
    loc = s.get("locality")  # a run with input replicas only (mropt.sim.summary.locality_shares)
    shares = ", ".join(f"{k} {100 * loc[k]:.1f} %" for k in ("node", "rack", "any")) if loc else ""
    rows: list[list[Any]] = [
        ["policy", f"{s['policy']} ({s['mode']} mode)"],
        *_params_rows(s["policy"], s["params"]),
        ["seed", s["seed"]],
        ["jobs", s["jobs"]],
        ["accepted", s["accepted"]],
        ["rejected", s["rejected"]],
        ["dropped", s["dropped"]],
        ["finished", s["finished"]],
        ["on time", s["on_time"]],
        ["late", s["late"]],
        ["unfinished", s["unfinished"]],
        ["benefit (eq. 1)", s["benefit"]],
        ["ideal (eq. 4)", "-" if s.get("ideal") is None else s["ideal"]],
        ["makespan (s)", s["makespan"]],
        *[[f"utilisation {k}", "-" if v is None else f"{100 * v:.1f} %"] for k, v in util.items()],
        *([["locality", f"{shares} of {loc['attempts']} attempts"]] if loc else []),
        ["attempts", s["attempts"]],
        ["events", s["events"]],
        ["wall time (s)", round(s["wall_time"], 4)],
        ["event log sha256", s["event_log_sha256"][:16] + "..."],
    ]
    if "backups" in s:
        rows.append(["speculation", s["speculation"]])
        rows.append(["backups", s["backups"]])
        rows.append(["wasted work (slot-s)", s["wasted_work"]])
    if s.get("stalled"):
        rows.append(["stalled", "yes: the policy kept declining work"])
    if s.get("stopped"):
        rows.append(["stopped", f"{s['stopped']}, at simulated time {s['stopped_at']:g} s"])
        rows.append(["not submitted", s["not_submitted"]])
    if out:
        rows.append(["outputs", out])
    return render(["field", "value"], rows)
