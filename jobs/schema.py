"""Table schemas, defined once: the events table, ``trend_aggregates`` and ``run_stats``.

Events: ``event_id``, ``event_type``, ``event_time`` (TIMESTAMP, UTC), the attribute columns of a scenario,
and the partition columns ``event_date`` (DATE) and ``event_hour`` (INT, 0-23) derived from ``event_time``.
An events table holds the attributes of one scenario; ``SCENARIOS`` lists them with their types. A table
that exists already is authoritative: the CSV loader checks rows against the table's own schema.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from hamlet.errors import HamletError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import DataType, StructType

EVENT_PARTITIONS = ("event_date", "event_hour")
# The event times an events table takes (from, to: the end excluded), unless a loader is told otherwise:
# deltalake and pandas read timestamps only between 1677 and 2262 (nanoseconds), and a table holding one
# outside can no longer be read by them; a time before 1970 in real event data is an error anyway.
EVENT_TIME_RANGE = (datetime(1970, 1, 1, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC))
READABLE_END = datetime(2262, 4, 11, tzinfo=UTC)  # the last day of pandas' nanosecond timestamps


def interval_problem(
    start: datetime, end: datetime, names: tuple[str, str] = ("--start", "--end")
) -> str | None:
    """What is wrong with a run's interval [start, end), or None: start before end, both between 1970 and the
    last day deltalake and pandas read (a run's window times and statistics are written to Delta: a table
    holding a later timestamp can no longer be read by them, and ``hamlet report`` reads run_stats so)."""
    if not start < end:
        return f"{names[0]} {start.isoformat()} must be before {names[1]} {end.isoformat()}"
    if start < EVENT_TIME_RANGE[0] or end > READABLE_END:
        return (f"[{start.isoformat()}, {end.isoformat()}) is not within the times a run covers, "
                f"{EVENT_TIME_RANGE[0].isoformat()} to {READABLE_END.isoformat()}")  # fmt: skip
    return None


OUTPUT_PARTITIONS = ("workload", "window_end_date")

# Attribute columns per scenario: name → Spark SQL type. Strings identify, numbers measure.
SCENARIOS: dict[str, dict[str, str]] = {
    "rideshare": {
        "driver": "string",
        "rider": "string",
        "district": "string",
        "request_type": "string",
        "speed": "double",
        "duration": "bigint",
    },
    "stock": {
        "company": "string",
        "sector": "string",
        "price": "double",
        "volume": "bigint",
    },
    "sensor": {
        "machine": "string",
        "line": "string",
        "product": "string",
        "temperature": "double",
        "vibration": "double",
        "power": "bigint",
    },
}

BASE_COLUMNS = (
    ("event_id", "string", False),
    ("event_type", "string", False),
    ("event_time", "timestamp", False),
)
PARTITION_COLUMNS = (("event_date", "date", False), ("event_hour", "int", False))


def _type(name: str) -> DataType:
    from pyspark.sql.types import (
        BooleanType,
        DateType,
        DoubleType,
        IntegerType,
        LongType,
        StringType,
        TimestampType,
    )

    types = {"string": StringType(), "double": DoubleType(), "bigint": LongType(), "int": IntegerType(),
             "timestamp": TimestampType(), "date": DateType(), "boolean": BooleanType()}  # fmt: skip
    return types[name]


def events_schema(attributes: dict[str, str]) -> StructType:
    """The events table: base columns, the given attribute columns (nullable), partition columns."""
    from pyspark.sql.types import StructField, StructType

    reserved = {name for name, _, _ in BASE_COLUMNS + PARTITION_COLUMNS}
    clash = sorted(reserved & set(attributes))
    if clash:
        raise ValueError(f"attribute column(s) {', '.join(clash)} clash with the events table's own columns")
    fields = [StructField(n, _type(t), nullable) for n, t, nullable in BASE_COLUMNS]
    fields += [StructField(n, _type(t), True) for n, t in attributes.items()]
    fields += [StructField(n, _type(t), nullable) for n, t, nullable in PARTITION_COLUMNS]
    return StructType(fields)


def scenario_schema(scenario: str) -> StructType:
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return events_schema(SCENARIOS[scenario])


FIXED_COLUMNS = frozenset(name for name, _, _ in BASE_COLUMNS + PARTITION_COLUMNS)


def table_attributes(path: str, partitioned: bool = False) -> dict[str, str]:
    """The attribute columns of a Delta events table and their types (``string``, ``long``, ...), read from
    its log with the ``deltalake`` package: no Spark, milliseconds. ``partitioned``: the table must have the
    hour partition columns too (the job and the gate read an hour by them)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    from jobs.tables import first_line

    try:
        fields = DeltaTable(path).schema().fields
    except TableNotFoundError:
        raise HamletError(
            f"no Delta table at {path} (create one with `hamlet generate` or `hamlet load-events`)"
        ) from None
    except (DeltaError, OSError) as e:  # (a file, a device, a broken log: deltalake's own words, first line)
        raise HamletError(f"cannot read a Delta table at {path}: {first_line(e)}") from None
    missing = [n for n in ("event_type", "event_time") if n not in {f.name for f in fields}]
    if missing:
        raise HamletError(
            f"the Delta table at {path} is no events table: it has no {' and no '.join(missing)} column"
        )
    time_type = next(str(getattr(f.type, "type", f.type)) for f in fields if f.name == "event_time")
    # (the job reads hours of timestamps: Spark refused any other event_time in the hour's filter)
    if time_type not in ("timestamp", "timestamp_ntz"):
        raise HamletError(f"the Delta table at {path} has an event_time of type {time_type}: events tables hold "
                          "timestamps, as `hamlet load-events` and `hamlet generate` write them")  # fmt: skip
    unpartitioned = [n for n in EVENT_PARTITIONS if n not in {f.name for f in fields}]
    if partitioned and unpartitioned:
        raise HamletError(f"the Delta table at {path} has no {' and no '.join(unpartitioned)} column: events are "
                          "read by their hour partitions (event_date, event_hour of event_time in UTC), as "
                          "`hamlet load-events` and `hamlet generate` write them")  # fmt: skip
    return {f.name: str(getattr(f.type, "type", f.type)) for f in fields if f.name not in FIXED_COLUMNS}


def scenario_attributes(scenario: str) -> dict[str, str]:
    if scenario not in SCENARIOS:
        raise HamletError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return dict(SCENARIOS[scenario])


def attribute_columns(schema: StructType) -> list[str]:
    fixed = {name for name, _, _ in BASE_COLUMNS + PARTITION_COLUMNS}
    return [f.name for f in schema.fields if f.name not in fixed]


def hour_partition_filter(start: datetime, end: datetime) -> str:
    """A predicate on (event_date, event_hour) alone that keeps every hour overlapping [start, end): Delta
    prunes the files of all other partitions before reading anything."""
    first, after = hours_read(start, end)
    last = after - timedelta(hours=1)
    d0, h0, d1, h1 = first.date().isoformat(), first.hour, last.date().isoformat(), last.hour
    # No BETWEEN: Spark 4 rewrites it into a With expression that Delta's replaceWhere fails to resolve
    # ("Invalid call to nullable on unresolved object").
    if d0 == d1:
        return f"event_date = DATE'{d0}' AND event_hour >= {h0} AND event_hour <= {h1}"
    return (
        f"event_date >= DATE'{d0}' AND event_date <= DATE'{d1}'"
        f" AND (event_date > DATE'{d0}' OR event_hour >= {h0})"
        f" AND (event_date < DATE'{d1}' OR event_hour <= {h1})"
    )


def timestamp_sql(moment: datetime) -> str:
    """A UTC instant as a Spark SQL TIMESTAMP literal (the session time zone is UTC)."""
    return f"TIMESTAMP'{moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}'"


def table_location(path: str) -> str:
    """A table location as Spark and Delta want it: URIs (s3a://, file:/, ...) as they are, local paths made
    absolute (DeltaTable.createIfNotExists takes a relative path for a table name and refuses it)."""
    import os
    import re

    if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", path) and not re.match(r"^[A-Za-z]:[\\/]", path):
        return path
    return os.path.abspath(path)


def _floor_hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0, tzinfo=None)


def hours_read(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """[first, last) of the hour partitions ``hour_partition_filter`` keeps (naive UTC): the whole hours that
    overlap [start, end) (end exclusive), whose rows all belong where they are stored."""
    return _floor_hour(start), _floor_hour(end - timedelta(microseconds=1)) + timedelta(hours=1)


TREND_AGGREGATES_DDL = (
    "workload STRING NOT NULL, query STRING NOT NULL, window_start TIMESTAMP NOT NULL, "
    "window_end TIMESTAMP NOT NULL, `group` MAP<STRING, STRING> NOT NULL, group_key STRING NOT NULL, "
    "aggregate STRING NOT NULL, value DOUBLE, value_exact STRING, strategy STRING NOT NULL, "
    "run_id STRING NOT NULL, computed_at TIMESTAMP NOT NULL, window_end_date DATE NOT NULL"
)

RUN_STATS_DDL = (
    "run_id STRING NOT NULL, workload STRING NOT NULL, strategy STRING NOT NULL, "
    "range_start TIMESTAMP NOT NULL, range_end TIMESTAMP NOT NULL, read_start TIMESTAMP NOT NULL, "
    "query_set INT NOT NULL, queries ARRAY<STRING> NOT NULL, partition_attributes ARRAY<STRING> NOT NULL, "
    "events_read BIGINT NOT NULL, set_events BIGINT NOT NULL, partitions BIGINT NOT NULL, "
    "engine_calls BIGINT NOT NULL, rows_written BIGINT NOT NULL, "
    "engine_stats MAP<STRING, DOUBLE> NOT NULL, "
    "read_seconds DOUBLE NOT NULL, shuffle_seconds DOUBLE NOT NULL, engine_seconds DOUBLE NOT NULL, "
    "engine_cpu_seconds DOUBLE NOT NULL, combine_seconds DOUBLE NOT NULL, write_seconds DOUBLE NOT NULL, "
    "total_seconds DOUBLE NOT NULL, computed_at TIMESTAMP NOT NULL, status STRING, output_version BIGINT"
)
"""One row per run and sharable query set. ``status`` is ``pending`` from just before the run's output
commit, ``committed`` once it landed (``output_version``: that commit's version of the output table, and the
write and total seconds filled in). A run killed between the two leaves its rows pending: its output may
have landed (``jobs.pipeline.verify_commit`` says), its statistics are there either way."""

QUARANTINE_DDL = (
    "stage STRING NOT NULL, workload STRING NOT NULL, run_id STRING NOT NULL, partition_start TIMESTAMP NOT NULL, "
    "expectation STRING NOT NULL, `column` STRING, reason STRING NOT NULL, row_fingerprint STRING NOT NULL, "
    "`row` STRING NOT NULL, quarantined_at TIMESTAMP NOT NULL"
)
"""Rows that failed a row-level expectation (jobs/validate.py), one per row and failed expectation: ``row``
is the whole row as JSON (nothing is lost), ``partition_start`` the start of the event's hour partition (or
the aggregate's window end), ``row_fingerprint`` what the aggregation job leaves out. Partitioned by stage."""

# A row's fingerprint beside its columns (jobs/validate.py, jobs/aggregate.py): a name no attribute of the
# language has. As _row_fingerprint, it replaced an events column of that name in the job's read, so the
# queries got the hashes as that attribute's values.
FINGERPRINT = "#row_fingerprint"


def column(name: str):  # type: ignore[no-untyped-def]
    """The column named ``name``, whatever characters it holds: ``F.col("a.b")`` is field b of a column a, and
    ``F.col("c`d")`` a syntax error, where a table made elsewhere may name its columns so (Delta allows it).
    Quoted in backticks (one inside doubled), the name is one part."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def event_type_as_read():  # type: ignore[no-untyped-def]
    """The event_type column as every engine path reads a type: without the whitespace around it
    (``hamlet.events.TYPE_SPACE``). ``btrim``, not the two-argument ``trim``: Spark 4 warns on every query that
    signature is deprecated, in the log of each run."""
    from pyspark.sql import functions as F

    from hamlet.events import TYPE_SPACE

    return F.btrim(F.col("event_type"), F.lit(TYPE_SPACE))


def row_json(columns: list[str]):  # type: ignore[no-untyped-def]
    """A row as JSON text, nulls included (to_json drops null fields by default), its keys the columns'
    names as they are (``column``)."""
    from pyspark.sql import functions as F

    return F.to_json(F.struct(*[column(c) for c in columns]), {"ignoreNullFields": "false"})


def row_fingerprint(columns: list[str]):  # type: ignore[no-untyped-def]
    """SHA-256 of the row as JSON: the identity of a row that may lack a usable id (null or duplicated)."""
    from pyspark.sql import functions as F

    return F.sha2(row_json(columns), 256)


def delta_sql(path: str) -> str:
    """A Delta table by its path in SQL text (a backtick in the path doubled)."""
    return f"delta.`{path.replace('`', '``')}`"


def sql_string(text: str) -> str:
    """Any text as a Spark SQL string literal (Delta's MERGE and UPDATE leave SQL parameters unbound)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def delta_schema(spark, path: str):  # type: ignore[no-untyped-def]
    """The schema of the Delta table at ``path``; None when there is none. Unlike ``DeltaTable.isDeltaTable``
    it works over Spark Connect too (delta.tables needs a server plugin there)."""
    from pyspark.errors import AnalysisException

    try:
        return spark.read.format("delta").load(path).schema
    except AnalysisException:  # no such folder, or not a Delta table
        return None


@contextmanager
def temp_view(frame) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """``frame`` as a temporary view of a unique name, for SQL (MERGE) that works the same in a classic and
    a Spark Connect session; dropped afterwards."""
    name = f"hamlet_{uuid.uuid4().hex}"
    frame.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        frame.sparkSession.catalog.dropTempView(name)


NOT_YET_A_TABLE = "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"  # a concurrent creation, half done
# The same race seen from the other side: the loser's createIfNotExists found the winner's log and then no
# table in it (met once in a fresh clone's CI, test_hours_of_one_day_written_at_once_all_commit).
NOT_FOUND_YET = "DELTA_TABLE_NOT_FOUND"


def create_table(spark, path: str, ddl: str, partitions: tuple[str, ...] = ()) -> None:  # type: ignore[no-untyped-def]
    """Create the Delta table at ``path`` with this schema unless it exists."""
    from delta.tables import DeltaTable
    from pyspark.sql.types import StructType

    from jobs.commits import retried
    from jobs.session import is_remote

    if is_remote(spark):
        # Over Spark Connect, delta.tables needs a server plugin; the server's Delta SQL extension does the same.
        by = f" PARTITIONED BY ({', '.join(f'`{p}`' for p in partitions)})" if partitions else ""
        statement = f"CREATE TABLE IF NOT EXISTS {delta_sql(path)} ({ddl}) USING delta{by}"
        retried(lambda: spark.sql(statement), f"creating {path}", also=(NOT_YET_A_TABLE,))
        return
    if DeltaTable.isDeltaTable(spark, path):
        return  # (a few ms on a warm session; the builder analyses its statement first: 40-100 ms)
    schema = StructType.fromDDL(ddl)
    assert isinstance(schema, StructType)
    builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(schema)
    if partitions:
        builder = builder.partitionedBy(*partitions)
    # Two runs creating the table at once: the loser's retry finds it and leaves it as it is. The loser may
    # also see the winner's files before its first commit: a location "not empty and not a Delta table".
    retried(builder.execute, f"creating {path}", also=(NOT_YET_A_TABLE, NOT_FOUND_YET))
