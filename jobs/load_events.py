"""Load a CSV of real events into a Delta events table; what does not fit the schema is rejected, row by row,
with the reason.

    hamlet load-events --csv E.csv --table PATH [--scenario rideshare|stock] [--rejects PATH] [--max-rejects N]
    spark-submit jobs/load_events.py (same arguments)

The CSV has a header with ``event_type``, ``event_time`` (seconds since the epoch, or ISO-8601 where a naive
time means UTC), optionally ``event_id``, and attribute columns. The schema checked against is the table's
own when it exists, else the scenario's (jobs/schema.py). A header naming a column the schema lacks is an
error for the whole file. A row is rejected when it has the wrong number of fields, no event_type, an
unreadable event_time, a value that does not fit its column's type (an integer column takes integers
within 64 bits, a double column numbers), or an event_id seen before in the file; an empty cell is a null.
Without an ``event_id`` column a row's id is ``<file name>:<line>``.

Loading is idempotent: rows are merged into the table by (event_date, event_hour, event_id), so loading
the same file again changes nothing. Rejected rows are printed (line, reason, the row as written) and, with
``--rejects``, appended to that Delta table (source, line, row, reason, rejected_at). The exit status is 1
when more than ``--max-rejects`` (default 0) rows were rejected; the good rows are loaded either way.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit jobs/load_events.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hamlet.errors import EventError
from hamlet.io import parse_time
from jobs.schema import BASE_COLUMNS, PARTITION_COLUMNS, SCENARIOS, table_location
from jobs.summary import Summary

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

INT64 = (-(2**63), 2**63 - 1)
REJECTS_DDL = "source STRING, line BIGINT, row STRING, reason STRING, rejected_at TIMESTAMP"


class LoadError(Exception):
    """The file as a whole cannot be loaded (no header, unknown columns, ...)."""


@dataclass(frozen=True)
class Rejected:
    line: int
    row: str
    reason: str


@dataclass
class Parsed:
    rows: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def _cell(kind: str, name: str, text: str) -> Any:
    """A CSV cell as a value of the column's type; ValueError with the reason when it does not fit."""
    if text == "":
        return None
    if kind == "string":
        return text
    if kind == "bigint":
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"{name} {text!r} is not an integer") from None
        if not INT64[0] <= value <= INT64[1]:
            raise ValueError(f"{name} {text!r} does not fit in 64 bits")
        return value
    if kind == "double":
        try:
            number = float(text.strip())
        except ValueError:
            raise ValueError(f"{name} {text!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{name} {text!r} is not a finite number")
        return number
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise ValueError(f"{name} {text!r} is not true or false")
    raise ValueError(f"{name}: column type {kind} is not supported by the loader")


def _raw(row: list[str]) -> str:
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(row)
    return out.getvalue()


def parse_csv(stream: IO[str], source: str, attributes: dict[str, str],
              rename: dict[str, str] | None = None) -> Parsed:  # fmt: skip
    """Rows for the events table (event_time as an aware datetime) and the rejected rows with reasons.
    ``rename`` maps CSV header names to column names."""
    reader = csv.reader(stream)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise LoadError(
            f"{source}: the file is empty; expected a header with event_type and event_time"
        ) from None
    header = [(rename or {}).get(h, h) for h in header]
    for required in ("event_type", "event_time"):
        if required not in header:
            raise LoadError(f"{source}:1: the header has no {required} column (found: {', '.join(header)})")
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise LoadError(f"{source}:1: duplicate column(s) {', '.join(duplicates)}")
    derived = {name for name, _, _ in PARTITION_COLUMNS}
    known = {name for name, _, _ in BASE_COLUMNS} | set(attributes)
    unknown = [h for h in header if h not in known]
    if unknown:
        what = "derived from event_time" if set(unknown) <= derived else "not columns of the events table"
        raise LoadError(f"{source}:1: column(s) {', '.join(unknown)} are {what} "
                        f"(attribute columns: {', '.join(attributes) or 'none'})")  # fmt: skip
    parsed = Parsed()
    seen: dict[str, int] = {}
    name = Path(source).name
    for row in reader:
        line = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        try:
            if len(row) != len(header):
                raise ValueError(f"{len(row)} fields, but the header has {len(header)}")
            cells = dict(zip(header, row))
            event_type = cells["event_type"].strip()
            if not event_type:
                raise ValueError("event_type is empty")
            try:
                seconds = parse_time(cells["event_time"], f"{source}:{line}")
            except EventError as e:
                raise ValueError(e.message) from None
            moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=round(seconds * 1_000_000))
            event_id = cells["event_id"].strip() if "event_id" in cells else f"{name}:{line}"
            if not event_id:
                raise ValueError("event_id is empty")
            if event_id in seen:
                raise ValueError(f"event_id {event_id!r} was already used on line {seen[event_id]}")
            values = {a: _cell(kind, a, cells[a]) if a in cells else None for a, kind in attributes.items()}
        except (ValueError, OverflowError) as e:
            parsed.rejected.append(Rejected(line, _raw(row), str(e)))
            continue
        seen[event_id] = line
        parsed.rows.append({"event_id": event_id, "event_type": event_type, "event_time": moment, **values,
                            "event_date": moment.date(), "event_hour": moment.hour})  # fmt: skip
    return parsed


def table_attributes(spark: SparkSession, table: str, scenario: str | None) -> dict[str, str]:
    """The attribute columns to check against: the existing table's, else the scenario's."""
    from delta.tables import DeltaTable

    if DeltaTable.isDeltaTable(spark, table):
        fixed = {n for n, _, _ in BASE_COLUMNS + PARTITION_COLUMNS}
        schema = spark.read.format("delta").load(table).schema
        return {f.name: f.dataType.simpleString() for f in schema.fields if f.name not in fixed}
    if scenario is None:
        raise LoadError(f"no Delta table at {table}: name a --scenario ({', '.join(SCENARIOS)}) to create it")
    if scenario not in SCENARIOS:
        raise LoadError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return dict(SCENARIOS[scenario])


def load(spark: SparkSession, csv_path: str, table: str, scenario: str | None = None,
         rejects_table: str | None = None, rename: dict[str, str] | None = None) -> Parsed:  # fmt: skip
    """Parse the CSV, merge the good rows into the table, append the rejected ones to ``rejects_table``."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from jobs.schema import events_schema

    attributes = table_attributes(spark, table, scenario)
    try:
        with open(csv_path, encoding="utf-8", newline="") as f:
            parsed = parse_csv(f, csv_path, attributes, rename)
    except OSError as e:
        raise LoadError(f"cannot read {csv_path}: {e.strerror}") from None
    schema = events_schema(attributes)
    if parsed.rows:
        frame = spark.createDataFrame(parsed.rows, schema)
        if DeltaTable.isDeltaTable(spark, table):
            target = DeltaTable.forPath(spark, table).alias("t")
            key = "t.event_date = s.event_date AND t.event_hour = s.event_hour AND t.event_id = s.event_id"
            target.merge(frame.alias("s"), key).whenNotMatchedInsertAll().execute()
        else:
            frame.write.format("delta").partitionBy("event_date", "event_hour").save(table)
    if parsed.rejected and rejects_table:
        now = datetime.now(UTC)
        bad = [(csv_path, r.line, r.row, r.reason, now) for r in parsed.rejected]
        spark.createDataFrame(bad, REJECTS_DDL).withColumn("line", F.col("line").cast("bigint")).write.format(
            "delta"
        ).mode("append").save(rejects_table)
    return parsed


def describe_rejects(parsed: Parsed, source: str) -> Iterator[str]:
    for r in parsed.rejected:
        yield f"{source}:{r.line}: rejected: {r.reason}: {r.row}"


def build_parser(prog: str = "hamlet load-events") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Load a CSV of events into a Delta events table; "
                                     "rows that do not fit are rejected with the reason.")  # fmt: skip
    parser.add_argument("--csv", required=True, help="CSV: event_type, event_time, [event_id,] attributes")
    parser.add_argument("--table", required=True, help="Delta events table (created when missing)")
    parser.add_argument("--scenario", help=f"schema of a new table: {', '.join(SCENARIOS)}")
    parser.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="CSV_NAME=COLUMN",
        help="read a CSV column into a differently named table column (repeatable)",
    )
    parser.add_argument("--rejects", help="Delta table that receives the rejected rows and reasons")
    parser.add_argument(
        "--max-rejects", type=int, default=0, help="exit 1 when more rows are rejected (default 0)"
    )
    parser.add_argument("--master", help="Spark master URL (default: conf/spark/$HAMLET_ENV.toml, local[*])")
    return parser


def main(argv: list[str] | None = None, prog: str = "hamlet load-events") -> int:
    from jobs.session import reexec_without_submit_jvm

    started = time.perf_counter()
    reexec_without_submit_jvm()
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    rename = dict(item.split("=", 1) for item in args.rename if "=" in item)
    if len(rename) != len(args.rename):
        parser.error("--rename takes CSV_NAME=COLUMN")
    if not Path(args.csv).is_file():
        print(f"error: no file {args.csv}", file=sys.stderr)
        return 1
    from jobs.session import command_session

    try:
        with command_session("hamlet-load-events", args.master) as spark:
            rejects = table_location(args.rejects) if args.rejects else None
            parsed = load(spark, args.csv, table_location(args.table), args.scenario, rejects, rename)
    except LoadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 (any failure: report it, exit 1)
        print(f"error: loading failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for line in describe_rejects(parsed, args.csv):
        print(line, file=sys.stderr)
    total = len(parsed.rows) + len(parsed.rejected)
    print(Summary("load-events", args.csv, None, None, time.perf_counter() - started, rows_in=total,
                  quarantined=len(parsed.rejected), rows_out=len(parsed.rows),
                  note=f"loaded into {args.table}").line())  # fmt: skip
    return 1 if len(parsed.rejected) > args.max_rejects else 0


if __name__ == "__main__":
    sys.exit(main(prog="spark-submit jobs/load_events.py"))
