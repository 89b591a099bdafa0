"""Load a CSV of real events into a Delta events table; what does not fit the schema is rejected, row by row,
with the reason.

    hamlet load-events --csv E.csv --table PATH [--scenario rideshare|stock] [--rejects PATH] [--max-rejects N]
                       [--existing replace|reject]
    spark-submit jobs/load_events.py (same arguments)

The CSV has a header with ``event_type``, ``event_time`` (seconds since the epoch, or ISO-8601 where a naive
time means UTC), optionally ``event_id``, and attribute columns. The schema checked against is the table's
own when it exists, else the scenario's (jobs/schema.py). A header naming a column the schema lacks is an
error for the whole file, and so is one naming a column of a type the loader cannot write from CSV (a date,
a timestamp, a map...). A row is rejected when it has the wrong number of fields, no event_type, an
unreadable event_time, a value that does not fit its column's type (an integer column takes integers
within its bits, a double or float column numbers within its range, a decimal column numbers of at most its
scale's decimal places, never rounded), or an event_id seen before in the file; an empty cell is a null.
Without an ``event_id`` column a row's id is derived from its content (``content_id``: type, time and
values), so files never collide by name or line, and a second row with the same content in one file is
rejected as the same event.

Rows are merged into the table by ``event_id``: a new id is inserted; an id the table holds with the same
values is left alone (reloading a file changes nothing); an id it holds with other values is replaced
(``--existing replace``, the default: a corrected re-export corrects the table) or the row is rejected
with that reason (``--existing reject``). The command prints how many rows were inserted, replaced, left
unchanged and rejected. Rejected rows are printed (line, reason, the row as written) and, with
``--rejects``, kept in that Delta table (source, line, row, reason, rejected_at): the rejects of a file are
those of its latest load, so reloading it does not add them again. The exit status is 1 when more than
``--max-rejects`` (default 0) rows were rejected; the good rows are loaded either way.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit jobs/load_events.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hamlet.errors import EventError, shown_char, shown_names
from hamlet.events import Time
from hamlet.io import Record, csv_records, open_csv, parse_number, parse_time, parse_value, shown
from hamlet.runtime.columnar import refuse_duplicate_columns
from jobs.commits import retried
from jobs.logs import error_line
from jobs.schema import (
    BASE_COLUMNS,
    EVENT_TIME_RANGE,
    PARTITION_COLUMNS,
    READABLE_END,
    SCENARIOS,
    delta_schema,
    delta_sql,
    scenario_attributes,
    sql_string,
    table_location,
    temp_view,
)
from jobs.summary import Summary

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

REJECTS_DDL = "source STRING, line BIGINT, row STRING, reason STRING, rejected_at TIMESTAMP"
EXISTING = ("replace", "reject")  # what a row whose event_id the table holds with other values does


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
    lines: list[int] = field(default_factory=list)  # the CSV line of each of ``rows``
    raw: list[str] = field(default_factory=list)  # each of ``rows`` as written


@dataclass
class Loaded:
    """What a load did: ``inserted`` new rows, ``updated`` replaced ones, ``unchanged`` rows the table held
    already with the same values; the rejected rows are ``parsed.rejected``."""

    parsed: Parsed
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0

    def summary(self, table: str) -> str:
        return (f"{self.inserted + self.updated} events loaded into {table}: {self.inserted} new, {self.updated} "
                f"replaced, {self.unchanged} unchanged (already loaded), {len(self.parsed.rejected)} rejected")  # fmt: skip


def content_id(event_type: str, micros: int, values: dict[str, Any]) -> str:
    """The id of a row without an event_id: a hash of its type, time (microseconds) and values, so the same
    event gets the same id from any file, and different events different ones."""
    text = json.dumps(
        [event_type, micros, sorted(values.items())], ensure_ascii=False, separators=(",", ":"), default=str
    )  # (a Decimal, at its column's scale)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


INTEGERS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}  # Spark's integer columns and their bits
_DECIMAL_TYPE = re.compile(r"decimal\((\d+),(\d+)\)")


def loadable(kind: str) -> bool:
    """Whether the loader writes a CSV cell into a column of this Spark type (``simpleString``)."""
    return kind in ("string", "double", "float", "boolean", *INTEGERS) or bool(_DECIMAL_TYPE.fullmatch(kind))


def scenario_cells(scenario: str) -> Callable[[str, str], Any]:
    """How the loader reads a CSV's cells for ``scenario``'s columns (``_cell``), the others as the engine's
    reader does (a number where one reads as one, else a text): ``hamlet evaluate --scenario`` counts a CSV as
    the pipeline will, ids such as 007 and 7 two drivers."""
    schema = scenario_attributes(scenario)

    def cell(name: str, text: str) -> Any:
        if name in schema:
            return _cell(schema[name], name, text)
        try:
            return parse_value(text)
        except ValueError as e:
            raise ValueError(f"{name} {shown(text.strip())} {e}") from None

    return cell


def _cell(kind: str, name: str, text: str) -> Any:
    """A CSV cell as a value of the column's type; ValueError with the reason when it does not fit. Numbers
    are what the engine's reader takes for numbers (``hamlet.io.parse_number``)."""
    if text == "":
        return None
    if kind == "string":
        return _text(name, text)
    _text(name, text)
    if kind in INTEGERS:
        bits = INTEGERS[kind]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if len(text.strip().lstrip("+-")) > 19 and _is_integer(text):  # no int() of thousands of digits
            raise ValueError(f"{name} {shown(text)} does not fit in {bits} bits")
        value = _number(name, text)
        if not isinstance(value, int):
            raise ValueError(f"{name} {shown(text)} is not an integer")
        if not low <= value <= high:
            raise ValueError(f"{name} {shown(text)} does not fit in {bits} bits")
        return value
    if kind in ("double", "float"):
        number = _number(name, text)
        if number is None:
            raise ValueError(f"{name} {shown(text)} is not a number")
        try:
            value = float(number)
        except OverflowError:  # an integer of hundreds of digits
            raise ValueError(f"{name} {shown(text)} is beyond the range of a double") from None
        if kind == "float" and abs(value) > FLOAT32_MAX:
            raise ValueError(f"{name} {shown(text)} is beyond the range of a float")
        return value
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise ValueError(f"{name} {shown(text)} is not true or false")
    decimal = _DECIMAL_TYPE.fullmatch(kind)
    if decimal:
        return _decimal(name, text, int(decimal.group(1)), int(decimal.group(2)))
    raise ValueError(f"{name}: column type {kind} is not supported by the loader")


FLOAT32_MAX = 3.4028234663852886e38


def _decimal(name: str, text: str, precision: int, scale: int) -> Decimal:
    """A cell of a ``decimal(precision, scale)`` column, exactly: a value with more decimal places than the
    scale or more integer digits than the precision leaves is refused, never rounded."""
    if _number(name, text) is None:
        raise ValueError(f"{name} {shown(text)} is not a number")
    value = Decimal(text.strip())
    step = Decimal(1).scaleb(-scale)
    if value.adjusted() >= precision - scale:
        raise ValueError(f"{name} {shown(text)} does not fit decimal({precision},{scale})")
    with localcontext(prec=precision + 2):  # (the default context holds 28 digits, a column up to 38)
        fitted = value.quantize(step)
    if fitted != value:
        raise ValueError(
            f"{name} {shown(text)} has more than {scale} decimal places (decimal({precision},{scale}))"
        )
    return fitted


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros_in(seconds: Time, text: str, time_range: tuple[datetime, datetime]) -> int:
    """The time in microseconds since 1970, when it lies in ``time_range``; ValueError naming both. (Decimal
    seconds come exact to the microsecond from ``parse_time``, which counts them from the text.)"""
    micros = round(seconds * 1_000_000)
    first, end = (round((t - EPOCH) / timedelta(microseconds=1)) for t in time_range)
    if not first <= micros < end:
        raise ValueError(f"event_time {shown(text.strip())} lies outside {time_range[0].isoformat()} to "
                         f"{time_range[1].isoformat()} (--earliest, --latest)")  # fmt: skip
    return micros


def _text(name: str, text: str) -> str:
    if "\x00" in text:
        raise ValueError(f"{name} holds a NUL byte")
    return text


def _is_integer(text: str) -> bool:
    stripped = text.strip()
    return stripped.lstrip("+-").isascii() and stripped.lstrip("+-").isdigit()


def _number(name: str, text: str) -> int | float | None:
    try:
        return parse_number(text)
    except ValueError as e:
        raise ValueError(f"{name} {shown(text)} {e}") from None


def _raw(record: Record) -> str:
    """A record as written in the CSV (the lines themselves, where the reader could not split them into
    cells); a byte that was not UTF-8 shown as ``\\xff``, so the text can be stored."""
    import io

    if record.text is not None:
        written = record.text.rstrip("\r\n")
    else:
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(record.cells)
        written = out.getvalue()
    return written.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def parse_csv(stream: IO[str], source: str, attributes: dict[str, str], rename: dict[str, str] | None = None,
              time_range: tuple[datetime, datetime] = EVENT_TIME_RANGE) -> Parsed:  # fmt: skip
    """Rows for the events table (event_time as an aware datetime) and the rejected rows with reasons.
    ``rename`` maps CSV header names to column names; a time outside ``time_range`` (the end excluded) is
    rejected. A line that cannot be read as CSV (a byte that is not UTF-8, a field over the csv module's
    size limit) is rejected alone; ``stream`` is best opened with ``hamlet.io.open_csv``."""
    records = csv_records(stream)
    first = next(records, None)
    if first is None:
        raise LoadError(f"{source}: the file is empty; expected a header with event_type and event_time")
    if first.problem:
        raise LoadError(f"{first.where(source)}: the header cannot be read: {first.problem}")
    header = [(rename or {}).get(h, h) for h in (h.strip() for h in first.cells)]
    _check_header(header, source, attributes)
    parsed = Parsed()
    seen: dict[str, int] = {}
    for record in records:
        try:
            if record.problem:
                where = f"column {record.column}: " if record.column else ""
                raise ValueError(where + record.problem)
            row = _row(record.cells, header, attributes, time_range)
            event_id, given = row["event_id"], "event_id" in header
            if event_id in seen and given:
                raise ValueError(f"event_id {event_id!r} was already used on line {seen[event_id]}")
            if event_id in seen:
                raise ValueError(f"the same event as line {seen[event_id]} (same type, time and values; an "
                                 "event_id column tells identical events apart)")  # fmt: skip
        except (ValueError, OverflowError) as e:
            parsed.rejected.append(Rejected(record.line, _raw(record), str(e)))
            continue
        seen[event_id] = record.line
        parsed.rows.append(row)
        parsed.lines.append(record.line)
        parsed.raw.append(_raw(record))
    return parsed


def _check_header(header: list[str], source: str, attributes: dict[str, str]) -> None:
    if "" in header:  # (a trailing comma: its values would have no column to go to)
        raise LoadError(f"{source}:1: column {header.index('') + 1} of the header has no name")
    for required in ("event_type", "event_time"):
        if required not in header:
            raise LoadError(f"{source}:1: the header has no {required} column (found: {shown_names(header)})"
                            + (_not_csv(header) or _case_only(header, [required])))  # fmt: skip
    try:
        refuse_duplicate_columns(header, f"{source}:1")
    except EventError as error:
        raise LoadError(str(error)) from None
    derived = {name for name, _, _ in PARTITION_COLUMNS}
    known = {name for name, _, _ in BASE_COLUMNS} | set(attributes)
    unknown = [h for h in header if h not in known]
    if unknown:
        what = "derived from event_time" if set(unknown) <= derived else "not columns of the events table"
        raise LoadError(f"{source}:1: column(s) {', '.join(unknown)} are {what} "
                        f"(attribute columns: {', '.join(attributes) or 'none'})"
                        + _case_only(unknown, [*known, *derived]))  # fmt: skip
    unloadable = [f"{h} ({attributes[h]})" for h in header if h in attributes and not loadable(attributes[h])]
    if unloadable:
        raise LoadError(f"{source}:1: column(s) {', '.join(unloadable)} of the events table cannot be loaded from "
                        "CSV (the loader writes string, integer, floating-point, decimal and boolean columns)")  # fmt: skip


def _not_csv(header: list[str]) -> str:
    """What a header without event_type looks like when it is no comma-separated header at all."""
    text = ",".join(header)
    if text.startswith("PAR1"):
        return "; the file is Parquet, and load-events reads CSV (`hamlet evaluate` reads Parquet)"
    if text.lstrip().startswith(("{", "[")):
        return "; the file looks like JSON, and load-events reads CSV, one event per line after a header"
    for name, separator in (("semicolons", ";"), ("tabs", "\t"), ("|", "|")):
        if len(header) == 1 and separator in text:
            return f"; its names are separated by {name}, and load-events reads comma-separated values"
    return ""


def _case_only(written: list[str], columns: list[str]) -> str:
    """ "; column names are case-sensitive: Driver is not driver" for written names that differ from a column
    only in case."""
    pairs = [
        f"{w} is not {c}" for w in written for c in sorted(columns) if w != c and w.casefold() == c.casefold()
    ]
    return f"; column names are case-sensitive: {', '.join(pairs)}" if pairs else ""


def _row(cells: list[str], header: list[str], attributes: dict[str, str],
         time_range: tuple[datetime, datetime]) -> dict[str, Any]:  # fmt: skip
    """One CSV row as a row of the events table; ValueError with the reason when it does not fit."""
    if len(cells) != len(header):
        raise ValueError(f"{len(cells)} fields, but the header has {len(header)}")
    named = dict(zip(header, cells))
    event_type = _text("event_type", named["event_type"].strip())
    if not event_type:
        raise ValueError("event_type is empty")
    try:
        seconds = parse_time(named["event_time"], "")
    except EventError as e:
        raise ValueError(e.message) from None
    micros = _micros_in(seconds, named["event_time"], time_range)
    moment = EPOCH + timedelta(microseconds=micros)
    values = {a: _cell(kind, a, named[a]) if a in named else None for a, kind in attributes.items()}
    given = "event_id" in named
    event_id = (
        _text("event_id", named["event_id"].strip()) if given else content_id(event_type, micros, values)
    )
    if not event_id:
        raise ValueError("event_id is empty")
    return {"event_id": event_id, "event_type": event_type, "event_time": moment, **values,
            "event_date": moment.date(), "event_hour": moment.hour}  # fmt: skip


def table_attributes(spark: SparkSession, table: str, scenario: str | None) -> dict[str, str]:
    """The attribute columns to check against: the existing table's, else the scenario's."""
    schema = delta_schema(spark, table)
    if schema is not None:
        fixed = {n for n, _, _ in BASE_COLUMNS + PARTITION_COLUMNS}
        return {f.name: f.dataType.simpleString() for f in schema.fields if f.name not in fixed}
    if scenario is None:
        raise LoadError(f"no Delta table at {table}: name a --scenario ({', '.join(SCENARIOS)}) to create it")
    if scenario not in SCENARIOS:
        raise LoadError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return dict(SCENARIOS[scenario])


def load(spark: SparkSession, csv_path: str, table: str, scenario: str | None = None,
         rejects_table: str | None = None, rename: dict[str, str] | None = None, existing: str = "replace",
         time_range: tuple[datetime, datetime] = EVENT_TIME_RANGE) -> Loaded:  # fmt: skip
    """Parse the CSV, merge the good rows into the table by event_id (``existing``: what a row whose id the
    table holds with other values does), keep the rejected ones in ``rejects_table``. Delta through SQL
    only (no ``delta.tables``): the same in a local session and over Spark Connect."""
    from jobs.schema import events_schema

    if existing not in EXISTING:
        raise LoadError(f"--existing {existing!r}: choose one of {', '.join(EXISTING)}")
    attributes = table_attributes(spark, table, scenario)
    if rejects_table:
        _check_rejects_table(spark, rejects_table, table)
    try:
        with open_csv(csv_path) as f:
            parsed = parse_csv(f, csv_path, attributes, rename, time_range)
    except OSError as e:
        raise LoadError(f"cannot read {csv_path}: {e.strerror}") from None
    held = delta_schema(spark, table)
    schema = held if held is not None else events_schema(attributes)  # (the table's types, whatever they are)
    loaded = Loaded(parsed)
    if parsed.rows and held is not None:
        if existing == "reject":
            _reject_conflicts(spark, table, parsed, schema)
        loaded.inserted, loaded.updated = _merge(spark, table, parsed.rows, schema)
        loaded.unchanged = len(parsed.rows) - loaded.inserted - loaded.updated
    elif parsed.rows:
        frame = spark.createDataFrame(parsed.rows, schema)
        writer = frame.write.format("delta").partitionBy("event_date", "event_hour")
        retried(lambda: writer.save(table), f"creating {table}")
        loaded.inserted = len(parsed.rows)
    if rejects_table:
        keep_rejects(spark, rejects_table, os.path.abspath(csv_path), parsed.rejected)
    return loaded


def _changed(columns: list[str]) -> str:
    """SQL: true where the table's row (t) and the file's (s) differ in any column (nulls equal)."""
    quoted = [c.replace("`", "``") for c in columns]
    return " OR ".join(f"NOT (t.`{c}` <=> s.`{c}`)" for c in quoted)


def _merge(spark: SparkSession, table: str, rows: list[dict[str, Any]], schema: Any) -> tuple[int, int]:
    """Merge by event_id in one Delta commit: new ids inserted, ids held with other values replaced (a row
    may move to another hour's partition), equal rows untouched; returns (inserted, updated) as Delta
    counted them."""
    frame = spark.createDataFrame(rows, schema)
    with temp_view(frame) as view:
        statement = (f"MERGE INTO {delta_sql(table)} t USING {view} s ON t.event_id = s.event_id "
                     f"WHEN MATCHED AND ({_changed(frame.columns)}) THEN UPDATE SET * "
                     "WHEN NOT MATCHED THEN INSERT *")  # fmt: skip
        metrics = retried(lambda: spark.sql(statement).first(), f"merging into {table}")
    assert metrics is not None
    return int(metrics["num_inserted_rows"]), int(metrics["num_updated_rows"])


def _reject_conflicts(spark: SparkSession, table: str, parsed: Parsed, schema: Any) -> None:
    """``--existing reject``: rows whose event_id the table holds with other values move from
    ``parsed.rows`` to ``parsed.rejected``, with that reason."""
    frame = spark.createDataFrame(parsed.rows, schema)
    held = spark.read.format("delta").load(table)
    ids = {r.event_id for r in frame.alias("s").join(held.alias("t"), "event_id")
           .where(_changed([c for c in frame.columns if c != "event_id"])).select("event_id").collect()}  # fmt: skip
    keep = [i for i, row in enumerate(parsed.rows) if row["event_id"] not in ids]
    for i, row in enumerate(parsed.rows):
        if row["event_id"] in ids:
            reason = (
                f"event_id {row['event_id']!r} is already in the table with other values (--existing reject)"
            )
            parsed.rejected.append(Rejected(parsed.lines[i], parsed.raw[i], reason))
    parsed.rejected.sort(key=lambda r: r.line)
    parsed.rows = [parsed.rows[i] for i in keep]
    parsed.lines = [parsed.lines[i] for i in keep]
    parsed.raw = [parsed.raw[i] for i in keep]


def _check_rejects_table(spark: SparkSession, rejects_table: str, table: str) -> None:
    """Before anything is written: ``--rejects`` names a table of rejected rows, or none yet. The events table
    (or any other) there made the MERGE of the rejects fail after the events were loaded, with a JVM stack
    trace (Spark could not even word Delta's error)."""
    columns = [c.split()[0] for c in REJECTS_DDL.split(", ")]
    if rejects_table.rstrip("/") == table.rstrip("/"):
        raise LoadError(f"--rejects {rejects_table} is the events table (--table): name another folder for "
                        f"the rejected rows ({', '.join(columns)})")  # fmt: skip
    held = delta_schema(spark, rejects_table)
    if held is not None and sorted(held.fieldNames()) != sorted(columns):
        raise LoadError(f"--rejects {rejects_table} is a Delta table of other columns ({', '.join(held.fieldNames())}), "
                        f"not one of rejected rows ({', '.join(columns)})")  # fmt: skip


def keep_rejects(spark: SparkSession, rejects_table: str, source: str, rejected: list[Rejected]) -> None:
    """Make the rejects of ``source`` in ``rejects_table`` those of this load, in one Delta commit: rows
    rejected again stay once, rows no longer rejected go, new ones come (other files' rejects stay)."""
    from jobs.schema import create_table

    create_table(spark, rejects_table, REJECTS_DDL)
    now = datetime.now(UTC)
    frame = spark.createDataFrame([(source, r.line, r.row, r.reason, now) for r in rejected], REJECTS_DDL)
    with temp_view(frame) as view:
        statement = (f"MERGE INTO {delta_sql(rejects_table)} t USING {view} s "
                     "ON t.source = s.source AND t.line = s.line AND t.row = s.row "
                     "WHEN MATCHED AND t.reason <> s.reason THEN UPDATE SET reason = s.reason "
                     "WHEN NOT MATCHED THEN INSERT * "
                     f"WHEN NOT MATCHED BY SOURCE AND t.source = {sql_string(source)} THEN DELETE")  # fmt: skip
        retried(lambda: spark.sql(statement), f"merging into {rejects_table}")


ROW_SHOWN = 200  # characters of a rejected row printed; the rejects table keeps it whole


def describe_rejects(parsed: Parsed, source: str) -> Iterator[str]:
    for r in parsed.rejected:
        row = r.row if len(r.row) <= ROW_SHOWN else f"{r.row[:ROW_SHOWN]}... ({len(r.row):,} characters)"
        # (on one line, and a NUL or a bidi override shown as its escape: it would corrupt the terminal)
        shown = "".join(shown_char(ch) for ch in row.replace(chr(10), " ").replace(chr(13), " "))
        yield f"{source}:{r.line}: rejected: {r.reason}: {shown}"


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
    parser.add_argument("--existing", choices=EXISTING, default="replace", help="a row whose event_id the table "
                        "holds with other values: replace that row (default) or reject this one")  # fmt: skip
    first, end = (t.isoformat() for t in EVENT_TIME_RANGE)
    parser.add_argument("--earliest", default=first, help=f"reject rows before this time (default {first})")
    parser.add_argument("--latest", default=end, help=f"reject rows at or after this time (default {end}; "
                        "deltalake and pandas read no timestamp beyond 2262)")  # fmt: skip
    parser.add_argument("--master", help="Spark master URL (default: conf/spark/$HAMLET_ENV.toml, local[*])")
    return parser


def time_range(earliest: str, latest: str) -> tuple[datetime, datetime]:
    """The range of ``--earliest`` and ``--latest``: ISO-8601 times (naive means UTC), within the years
    1970 to 2262 that deltalake and pandas can read."""
    moments = []
    for flag, text in (("--earliest", earliest), ("--latest", latest)):
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError:
            raise LoadError(
                f"{flag} {shown(text)} is not an ISO-8601 time such as 2026-01-05T08:00:00Z"
            ) from None
        moments.append(moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC))
    first, end = moments
    if not EPOCH <= first < end <= READABLE_END:
        raise LoadError(f"--earliest {first.isoformat()} and --latest {end.isoformat()}: need 1970-01-01 <= "
                        f"earliest < latest <= {READABLE_END.isoformat()}")  # fmt: skip
    return first, end


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
        what = "no regular file" if Path(args.csv).exists() else "no file"  # (a folder, a FIFO, a device)
        print(f"error: {what} {args.csv}", file=sys.stderr)
        return 1
    if args.max_rejects < 0:
        parser.error("--max-rejects takes 0 or more")
    try:
        times = time_range(args.earliest, args.latest)
    except LoadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    from jobs.session import command_session

    try:
        with command_session("hamlet-load-events", args.master) as spark:
            rejects = table_location(args.rejects) if args.rejects else None
            loaded = load(spark, args.csv, table_location(args.table), args.scenario, rejects, rename,
                          args.existing, times)  # fmt: skip
    except LoadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 (any failure: report it, exit 1)
        print(f"error: loading failed: {error_line(e)}", file=sys.stderr)
        return 1
    for line in describe_rejects(loaded.parsed, args.csv):
        print(line, file=sys.stderr)
    print(loaded.summary(args.table))
    parsed = loaded.parsed
    print(Summary("load-events", args.csv, None, None, time.perf_counter() - started,
                  rows_in=len(parsed.rows) + len(parsed.rejected), quarantined=len(parsed.rejected),
                  rows_out=loaded.inserted + loaded.updated, note=f"loaded into {args.table}").line())  # fmt: skip
    return 1 if len(parsed.rejected) > args.max_rejects else 0


if __name__ == "__main__":
    sys.exit(main(prog="spark-submit jobs/load_events.py"))
