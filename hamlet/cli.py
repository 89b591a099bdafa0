"""The ``hamlet`` command line: evaluate, check, explain, trends."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import hamlet_native
import pyarrow as pa

from hamlet.analysis.attributes import UNKNOWN, check_attributes
from hamlet.analysis.workload import MAX_WINDOWS_PER_EVENT, Workload, load_workload_file
from hamlet.api import STRATEGIES, evaluate, evaluate_table, finalize_table
from hamlet.errors import EventError, HamletError, output_file
from hamlet.events import TIME_RANGE
from hamlet.explain import explain
from hamlet.io import (
    ARROW_SUFFIXES,
    EventsFile,
    format_table,
    open_csv,
    read_events_arrow,
    read_events_csv,
    write_jsonl,
)
from hamlet.stats import EvaluationStats


def _evaluate(args: argparse.Namespace) -> int:
    if args.output:  # before any work: writing it must not destroy an input nor block on a FIFO
        output_file(
            args.output, "output", inputs=[("the events file", args.events), ("the workload", args.workload)]
        )
    workload = load_workload_file(args.workload, args.max_windows_per_event)
    if args.strategy not in STRATEGIES:
        raise HamletError(f"unknown strategy {args.strategy!r}; choose one of: {', '.join(STRATEGIES)}")
    stats = EvaluationStats()
    if args.events.lower().endswith(ARROW_SUFFIXES):  # columnar in: the kernel reads the columns themselves
        table = read_events_arrow(args.events)
        _check_columns(workload, args, table.column_names)
        # (source: a bad row's error names the file, as the CSV reader's names its line)
        partials = evaluate_table(workload, table, strategy=args.strategy, stats=stats, source=args.events)
        rows = finalize_table(workload, partials)
        iso_times = pa.types.is_timestamp(table.schema.field("event_time").type)
    else:
        events_file = _csv_events(workload, args)
        rows = evaluate(workload, events_file.events, strategy=args.strategy, stats=stats, source=args.events)
        iso_times = events_file.iso_times
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as out:
                write_jsonl(rows, out)
        except OSError as e:
            raise HamletError(f"cannot write output {args.output}: {e.strerror}") from None
        print(f"{len(rows)} rows written to {args.output}", file=sys.stderr)
    else:
        print(format_table(rows, iso_times) if rows else "no trend matched: no rows")
    if args.stats:
        print("\n".join(f"{name}: {value}" for name, value in stats.as_dict().items()), file=sys.stderr)
    return 0


def _csv_events(workload: Workload, args: argparse.Namespace) -> EventsFile:
    """The CSV of ``--events``, read whole (with ``--scenario``, its columns as the loader of the events
    table types them), its columns checked against the workload (``_check_columns``)."""
    cell = None
    if args.scenario is not None:
        # (jobs.load_events imports Spark only inside its functions: the command stays light)
        from jobs.load_events import scenario_cells

        cell = scenario_cells(args.scenario)
    try:
        with open_csv(args.events) as f:
            events_file = read_events_csv(f, args.events, cell)
    except OSError as e:
        raise HamletError(f"cannot read events {args.events}: {e.strerror}") from None
    _check_columns(workload, args, events_file.columns)
    return events_file


def _check_columns(workload: Workload, args: argparse.Namespace, columns: Iterable[str]) -> None:
    """Every attribute the workload names is a column of the events file: one it lacks would be null on every
    event (``SUM(T.duraton)``). Values are read cell by cell, so only the names are checked, and the types of
    a ``--scenario``'s columns."""
    if args.scenario is not None and args.events.lower().endswith(ARROW_SUFFIXES):
        raise HamletError(
            "--scenario types a CSV's cells; a Parquet or Arrow file's columns have their own types"
        )
    typed = {}
    if args.scenario is not None:
        from jobs.schema import scenario_attributes

        typed = scenario_attributes(args.scenario)
    attributes = {
        c: typed.get(c, UNKNOWN) for c in columns if c not in ("event_type", "event_time", "event_id")
    }
    check_attributes(workload, args.workload, attributes, f"the events file {args.events}")


def _check(args: argparse.Namespace) -> int:
    workload = load_workload_file(args.workload, args.max_windows_per_event)
    fits = ""
    if args.events_table is not None or args.scenario is not None:  # (an empty name is checked, and refused)
        # jobs.schema imports deltalake only inside its functions, Spark never: `hamlet check` stays light.
        from jobs.schema import scenario_attributes, table_attributes

        if args.events_table is not None:
            schema, where = table_attributes(args.events_table), f"the events table {args.events_table}"
        else:
            schema, where = scenario_attributes(args.scenario), f"the {args.scenario} scenario"
        check_attributes(workload, args.workload, schema, where)
        fits = f"; its attributes fit {where}"
    print(
        f"{args.workload}: {len(workload.queries)} queries OK ({', '.join(q.name for q in workload.queries)}){fits}"
    )
    return 0


def _trends(args: argparse.Namespace) -> int:
    """The trends of one query, streamed (trends.py), at most ``--limit`` in all; per window and group the
    total the engine counts."""
    from hamlet.analysis.windows import as_number
    from hamlet.trends import list_trends, trend_text

    workload = load_workload_file(args.workload, args.max_windows_per_event)
    if args.events.lower().endswith(ARROW_SUFFIXES):  # (as evaluate reads them; the walk takes Events)
        from hamlet.runtime.columnar import checked, events_of, sorted_events

        table = sorted_events(checked(read_events_arrow(args.events), args.events))
        _check_columns(workload, args, table.column_names)
        events = events_of(table, [c for c in table.column_names if c not in ("event_type", "event_time")])
    else:
        events = _csv_events(workload, args).events
    start = None if args.window is None else _window_start(args.window)
    left, windows = args.limit, 0
    for found in list_trends(workload, args.query, events, start):
        windows += 1
        group = ", ".join(f"{k}={v!r}" for k, v in found.group.items()) or "-"
        window = f"[{as_number(found.window_start)}, {as_number(found.window_end)})"
        print(f"window {window} group {group}: {found.total} trend{'' if found.total == 1 else 's'}")
        shown = 0
        if left > 0:
            for trend in found.trends:
                print(f"  {trend_text(trend)}")
                shown += 1
                left -= 1
                if left == 0:
                    break
        if shown < found.total:
            print(f"  ... {found.total - shown} more (--limit {args.limit})")
    if windows == 0:
        print(
            f"no trend of {args.query} matched"
            + (f" in the window starting at {args.window}" if start is not None else "")
        )
    return 0


# Trends `hamlet trends` lists without --limit: n events make up to 2^n trends, and 60 of them printed 588,000
# lines in 10 s and would have gone on for 2^60.
TRENDS_LISTED = 1000


def _window_start(text: str) -> Fraction:
    """The start as written, exactly, to the microsecond the engine counts time in. Decimal first: Fraction
    would build the 10^99999999 of ``1e-99999999`` before any check could look at it."""
    try:
        if "_" in text:  # (Decimal takes 1_0 for 10, the events' readers do not)
            raise InvalidOperation
        start = Decimal(text)
    except InvalidOperation:
        raise HamletError(f"--window {text!r} is not a number: give the window's start in seconds") from None
    if not start.is_finite():
        raise HamletError(f"--window {text!r} is not a finite number: give the window's start in seconds")
    if not TIME_RANGE[0] <= start <= TIME_RANGE[1]:
        raise HamletError(f"--window {text!r} lies outside the years 1 to 9999 ({TIME_RANGE[0]} to "
                          f"{TIME_RANGE[1]} s)")  # fmt: skip
    micros = start.quantize(Decimal("1e-6"))
    if micros != start:
        raise HamletError(f"--window {text!r} is finer than a microsecond: no window starts there")
    return Fraction(micros)


def _explain(args: argparse.Namespace) -> int:
    workload = load_workload_file(args.workload, args.max_windows_per_event)
    if args.format == "text":
        print(explain(workload))
        return 0
    from pathlib import Path

    from hamlet.template_dot import render_svg, workload_dot

    dot = workload_dot(workload, Path(args.workload).stem)
    print(dot if args.format == "dot" else render_svg(dot), end="")
    return 0


# Spark (and table) commands: their code lives in jobs/ and is imported only when one of them runs (`import hamlet` and the
# other commands never import Spark); jobs/cli.py parses their arguments.
SPARK_COMMANDS = {
    "generate": "write synthetic events (rideshare, stock, sensor) into a Delta events table (Spark)",
    "aggregate": "run a workload over a Delta events table into trend_aggregates (Spark)",
    "load-events": "load a CSV of events into a Delta events table, rejecting bad rows with a reason (Spark)",
    "validate": "validate an interval of events or aggregates with Great Expectations; quarantine bad rows (Spark)",
    "report": "an HTML report of a trend_aggregates table: charts per query, the optimizer's decisions (no Spark)",
}


def _spark_command(argv: list[str]) -> int:
    from jobs.cli import main as jobs_main

    return jobs_main(argv)


def add_window_bound(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-windows-per-event", type=_positive, default=MAX_WINDOWS_PER_EVENT, metavar="N",
                        help=f"refuse queries whose windows hold an event more than N times, ceil(WITHIN / SLIDE) "
                        f"(default {MAX_WINDOWS_PER_EVENT}: the engine keeps state per window)")  # fmt: skip


def _scenario_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenario", help="read the CSV's columns as the pipeline's events table types them for "
                        "this scenario (rideshare, stock, sensor: jobs/schema.py): a string column keeps 007 "
                        "apart from 7, a number column refuses a cell that is none")  # fmt: skip


def _positive(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hamlet", description="Exact trend aggregation over event streams.")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="evaluate a workload over a CSV (or Parquet, Arrow) file of events")
    ev.add_argument("--workload", required=True, help="workload file (queries)")
    ev.add_argument("--events", required=True, help="CSV: event_type, event_time, attribute columns; or a "
                    "Parquet or Arrow IPC file (.parquet, .arrow, .feather) with those columns")  # fmt: skip
    ev.add_argument("--strategy", default="hamlet", help=f"execution strategy: {', '.join(STRATEGIES)}")
    _scenario_option(ev)
    ev.add_argument("--output", help="write JSON lines here instead of printing a table")
    ev.add_argument(
        "--stats", action="store_true", help="print what the strategy did (bursts, sharing, snapshots)"
    )
    ev.set_defaults(run=_evaluate)
    check = sub.add_parser("check", help="parse and validate a workload; exit 1 with the error")
    check.add_argument("workload")
    against = check.add_mutually_exclusive_group()
    against.add_argument("--events-table", metavar="PATH", help="also check attribute names and types against "
                         "this Delta events table's schema (read with deltalake, no Spark)")  # fmt: skip
    against.add_argument("--scenario", help="also check them against a generator scenario's schema "
                         "(rideshare, stock, sensor: jobs/schema.py)")  # fmt: skip
    check.set_defaults(run=_check)
    ex = sub.add_parser("explain", help="print templates, negations, predicates, panes and sharing")
    ex.add_argument("workload")
    ex.add_argument("--format", choices=("text", "dot", "svg"), default="text",
                    help="text (default); dot: the merged workload template (HAMLET Figure 3(b)) as Graphviz DOT, "
                    "sharable Kleene sub-patterns gray; svg: the same drawn by Graphviz's dot")  # fmt: skip
    ex.set_defaults(run=_explain)
    tr = sub.add_parser(
        "trends", help="list the trends of one query (streamed; the engine's total per window)"
    )
    tr.add_argument("--workload", required=True, help="workload file (queries)")
    tr.add_argument("--events", required=True, help="CSV: event_type, event_time, attribute columns; or a "
                    "Parquet or Arrow IPC file (.parquet, .arrow, .feather) with those columns")  # fmt: skip
    tr.add_argument("--query", required=True, help="the query's name")
    _scenario_option(tr)
    tr.add_argument("--window", metavar="START", help="only the window that starts at START (seconds)")
    tr.add_argument("--limit", type=_positive, metavar="N", default=TRENDS_LISTED,
                    help=f"list at most N trends in all (default {TRENDS_LISTED:,}; a window's total is counted "
                    "all the same)")  # fmt: skip
    tr.set_defaults(run=_trends)
    for command in (ev, check, ex, tr):
        add_window_bound(command)
    for name, text in SPARK_COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv and argv[0] in SPARK_COMMANDS:  # (their own errors said by each; a bug of ours said below)
            return _spark_command(argv)
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except (HamletError, EventError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader left (`hamlet trends ... | head`): no traceback, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (
        MemoryError
    ):  # (a bound raised by hand, e.g. --max-windows-per-event, that this machine cannot hold)
        print("error: out of memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for SIGINT, no traceback
        print("interrupted", file=sys.stderr)
        return 130
    except (Exception, hamlet_native.PanicException) as e:  # noqa: BLE001 (a bug of ours: said briefly)
        print(
            f"error: internal error in hamlet ({type(e).__name__}: {e}); please report it with the command, "
            "the workload and the events",
            file=sys.stderr,
        )
        return 70  # EX_SOFTWARE


if __name__ == "__main__":
    sys.exit(main())
