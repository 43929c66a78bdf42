"""``mropt history import|query|report`` (the job-history database, HEI sec. 2.1-2.2) and ``mropt import-rumen``."""

from __future__ import annotations

import argparse
import csv
import math
import sys

import duckdb

from mropt.cli.common import int_type, write_text
from mropt.history.analyses import MIN_INPUT_BYTES, create_views, tiny_input_maps
from mropt.history.guard import one_select
from mropt.history.report import report_lines
from mropt.history.store import DEFAULT_WAIT, connect, import_batches
from mropt.importers.rumen_workload import history_workload
from mropt.importers.table import read_batches
from mropt.model.errors import InputError
from mropt.model.io import instance_to_json, save_instance


def _wait(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be >= 0 seconds, got {text!r}")
    return value


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "history",
        help="the job-history database: import traces and simulations, query it in SQL, report",
        description="A job-history database (HEI sec. 2.1: jobs, tasks, attempts, jobconf) in one DuckDB file, "
        "with HEI sec. 2.2's analyses as SQL views (task_resource, job_resource, map_task_cost, job_map_cost, "
        "group_map_cost, reduce_cost, group_reduce_cost, slow_nodes, demand_by_group_hour).",
    )
    hs = p.add_subparsers(dest="history_command", required=True, metavar="ACTION")
    imp = hs.add_parser(
        "import",
        help="import .jhist, Rumen JSON, Alibaba 2017 CSV, SWIM TSV files or simulation folders",
        description="Import each FILE (its kind detected: a Hadoop .jhist, Rumen JSON, Alibaba 2017 batch_task.csv, "
        "SWIM TSV, or a `mropt simulate --out` folder) into DB (created when missing), all in one transaction: "
        "a malformed row, or the process killed, leaves DB as it was. A source name (the file name) already in "
        "DB is refused: give another with --source NAME.",
    )
    imp.add_argument("db", metavar="DB", help="history database file (DuckDB)")
    imp.add_argument("files", metavar="FILE", nargs="+", help="history file or simulation output folder")
    imp.add_argument("--source", default=None, help="the source name of a single FILE (default: its file name)")
    imp.add_argument(
        "--wait",
        type=_wait,
        default=DEFAULT_WAIT,
        help=f"seconds to wait for another process using DB (default {DEFAULT_WAIT:g})",
    )
    imp.set_defaults(handler=_import)
    q = hs.add_parser(
        "query",
        help="run one read-only SELECT, print CSV",
        description="Run one SELECT statement over DB and its views; print CSV. SQL is one statement that DuckDB "
        "parses as a plain SELECT (WITH, FROM-first, VALUES, UNION, subqueries, DESCRIBE, SHOW, SUMMARIZE, "
        "PIVOT ... IN (...), PRAGMA table_info(...)) whose table functions are generators or the read-only catalog (range, "
        "generate_series, unnest, repeat, json_each, json_tree, duckdb_tables() and the other duckdb_*() views, "
        "pragma_table_info, ...). Anything else is refused with exit 2 before it runs: two statements, EXPLAIN, "
        "CALL, other PRAGMAs, SET/RESET, CREATE/ALTER/DROP, INSERT/UPDATE/DELETE, COPY, EXPORT, ATTACH, INSTALL/LOAD, "
        "BEGIN, CHECKPOINT, and table functions with effects (checkpoint, enable_logging, query, read_csv, ...). "
        "The query sees DB's tables, the views and the catalog only: it reads no other file or URL, writes "
        "nothing, loads no extension and changes no setting (SECURITY.md).",
    )
    q.add_argument("db", metavar="DB")
    q.add_argument("sql", metavar="SQL")
    q.add_argument("--wait", type=_wait, default=DEFAULT_WAIT, help="seconds to wait for a writer (default 60)")
    q.set_defaults(handler=_query)
    r = hs.add_parser(
        "report",
        help="a short summary of DB",
        description="Counts, per source, per user group (every source's jobs pooled, as HEI's analyses pool them; "
        "--by-source: per source and group), slow nodes. Notes say what the group table leaves out.",
    )
    r.add_argument("db", metavar="DB")
    r.add_argument("--rows", type=int_type(1), default=20, help="at most this many groups and slow nodes (default 20)")
    r.add_argument("--by-source", action="store_true", help="one row per source and user group, not per group")
    r.set_defaults(handler=_report)

    w = sub.add_parser(
        "import-rumen",
        help="turn Rumen JSON / Hadoop .jhist files into a simulator workload",
        description="Build a workload for `mropt simulate` from Rumen traces or job history files: the hosts become "
        "nodes in their racks (slots: the most attempts seen at once), each succeeded map and reduce task a task "
        "of its real attempt's duration, maps local to the host they ran on (see mropt.importers.rumen_workload).",
    )
    w.add_argument("files", metavar="FILE", nargs="+", help="Rumen JSON or .jhist file")
    w.add_argument(
        "-o", "--output", required=True, metavar="WORKLOAD", help="workload JSON file to write (- for stdout)"
    )
    w.add_argument("--name", default=None, help="workload name (default: the first file's name)")
    w.set_defaults(handler=_import_rumen)


def _import(args: argparse.Namespace) -> int:
    batches = read_batches(args.files, args.source)
    counts = import_batches(args.db, batches, wait=args.wait)
    with connect(args.db, wait=args.wait) as con:
        tiny = tiny_input_maps(con)
    for batch in batches:
        c = counts[batch.source]
        notes = ""
        if c["jobs"] and not c["tasks"]:
            notes += "; no task rows: its jobs add no demand, D or reduce cost to HEI's analyses"
        if tiny.get(batch.source):
            notes += (
                f"; {tiny[batch.source]} succeeded map tasks read under {MIN_INPUT_BYTES // 1024} KiB: "
                "no D (s/MB) from them"
            )
        print(
            f"{batch.source}: {batch.kind}, {c['jobs']} jobs, {c['tasks']} tasks, {c['attempts']} attempts, "
            f"{c['jobconf']} jobconf rows{notes}"
        )
    return 0


def _query(args: argparse.Namespace) -> int:
    with connect(args.db, wait=args.wait) as con:
        statement = one_select(con, args.sql)  # refused before the views are made
        create_views(con)
        try:
            cur = con.execute(statement)
            header = [d[0] for d in cur.description or []]
            rows = cur.fetchall()
        except duckdb.Error as exc:
            raise InputError(f"query: {str(exc).splitlines()[0]}") from None
    writer = csv.writer(sys.stdout, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows(rows)
    return 0


def _report(args: argparse.Namespace) -> int:
    if args.rows < 1:
        raise InputError(f"history report: --rows must be >= 1, got {args.rows}")
    print("\n".join(report_lines(args.db, max_rows=args.rows, by_source=args.by_source)))
    return 0


def _import_rumen(args: argparse.Namespace) -> int:
    workload = history_workload(args.files, name=args.name)
    if args.output == "-":  # stdout, as the other importers' -o - (mropt.cli.importers)
        write_text(instance_to_json(workload), args.output)
        return 0
    save_instance(workload, args.output)
    src = workload.meta["source"]
    print(  # on stderr, as the other importers say what they wrote (mropt.cli.importers)
        f"mropt: wrote {args.output}: {len(workload.jobs)} jobs, {sum(j.n_tasks for j in workload.jobs)} tasks, "
        f"{src['nodes']} nodes; left out {len(src['jobs_left_out'])} jobs, {src['tasks_left_out']} tasks without "
        "a succeeded attempt",
        file=sys.stderr,
    )
    return 0
