"""Messy real-world inputs through ``hamlet load-events`` and ``hamlet aggregate`` on local Spark, with real
Delta tables in a temporary folder: every row ends up loaded or rejected with its reason, and the job's rows
are exactly what the engine gives on the same events."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

pytestmark = pytest.mark.slow  # end to end: the Spark jobs on real Delta tables


def output_rows(spark, path: str) -> list[tuple]:
    frame = spark.read.format("delta").load(path)
    return sorted((r.query, r.window_end.strftime("%H:%M"), json.loads(r.group_key)["zone"], r.aggregate, r.value_exact)
                  for r in frame.collect())  # fmt: skip


def write_events(spark, path: str, columns: str, events: list[tuple]) -> None:
    """A Delta events table at ``path`` as the loader writes one (ids, hour partitions): each event (type,
    minute after 08:00 on 2026-01-05, its values of ``columns``)."""
    rows = []
    for i, (kind, minute, *values) in enumerate(events):
        moment = datetime(2026, 1, 5, 8, minute, tzinfo=UTC)
        rows.append((f"e{i}", kind, moment, *values, moment.date(), moment.hour))
    schema = f"event_id string, event_type string, event_time timestamp, {columns}, event_date date, event_hour int"
    spark.createDataFrame(rows, schema).write.format("delta").partitionBy("event_date", "event_hour").save(
        path
    )


HOUR = ("2026-01-05T08:00:00Z", "2026-01-05T09:00:00Z")  # the hour write_events fills


def gate_of_half(spark, tmp_path, events: str, query: str) -> tuple:
    """The input gate over ``HOUR`` of ``events`` for the workload ``q: <query> WITHIN 10 min``, passing with
    up to half the rows bad: (the workload file, the pipeline settings, the gate's report)."""
    import dataclasses

    from spark_env import pipeline_conf

    from jobs.pipeline import load_config
    from jobs.validate import validate_events

    workload = tmp_path / "trips.hamlet"
    workload.write_text(f"q: {query} WITHIN 10 min\n")
    config = load_config(pipeline_conf(tmp_path / "pipeline.toml", events, workload, tmp_path / "tables"))
    config = dataclasses.replace(config, max_bad_fraction=0.5)
    return workload, config, validate_events(config, *HOUR, "gate", spark=spark)


def last_line_of_the_hour(capsys, workload, events: str, out: str) -> str:
    """``hamlet aggregate`` of ``HOUR`` of ``events`` into ``out``, which must succeed: its last line."""
    from jobs.aggregate import main

    assert main(["--workload", str(workload), "--start", HOUR[0], "--end", HOUR[1], "--events-table", events,
                 "--output-table", out]) == 0  # fmt: skip
    return capsys.readouterr().out.strip().splitlines()[-1]


def test_an_attribute_with_a_non_ascii_name_reaches_the_engine(spark, tmp_path, capsys):
    """``T.größe`` is an attribute name of the language; the job took the columns a query names from its text
    with an ASCII-only pattern, so ``größe`` stayed out of the engine's columns, null on every event: the
    predicate held for none and the run wrote 0 rows, without a word."""
    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    write_events(spark, events, "zone string, `größe` double", [
        ("Request", 40, "n", None), ("Travel", 41, "n", 1.5), ("Travel", 42, "n", 2.5), ("Travel", 43, "n", 0.5),
    ])  # fmt: skip
    workload = tmp_path / "sizes.hamlet"
    workload.write_text("q: RETURN T.zone, COUNT(*), SUM(T.größe) PATTERN SEQ(Request R, Travel T+) "
                        "WHERE T.größe > 1 GROUP-BY T.zone WITHIN 10 min\n", encoding="utf-8")  # fmt: skip
    assert last_line_of_the_hour(capsys, workload, events, out).startswith(
        "aggregate sizes [2026-01-05T08:00Z, 2026-01-05T09:00Z): 4 rows in, 0 quarantined, 2 rows out"
    )
    # the trends (R, 41), (R, 42), (R, 41, 42): 1.5 + 2.5 + 4.0
    assert output_rows(spark, out) == [
        ("q", "08:50", "n", "COUNT(*)", "3"),
        ("q", "08:50", "n", "SUM(T.größe)", "8.0"),
    ]


def test_a_zone_whose_values_pass_64_bits_runs_on_python_and_the_summary_says_so(spark, tmp_path, capsys):
    """A decimal(38, 0) value beyond 64 bits is Python's to compute: zone s's stream partition runs on the Python
    engine, zone n's on the kernel, and the job's last line counts the one."""
    from decimal import Decimal

    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    big = Decimal(10**30)
    write_events(spark, events, "zone string, v decimal(38, 0)", [
        ("Request", 40, "n", Decimal(0)), ("Travel", 41, "n", Decimal(7)), ("Request", 40, "s", Decimal(0)),
        ("Travel", 41, "s", big), ("Travel", 42, "s", Decimal(1)),
    ])  # fmt: skip
    workload = tmp_path / "zones.hamlet"
    workload.write_text("q: RETURN T.zone, COUNT(*), MAX(T.v) PATTERN SEQ(Request R, Travel T+) WHERE [zone] "
                        "GROUP-BY T.zone WITHIN 10 min\n")  # fmt: skip
    assert last_line_of_the_hour(capsys, workload, events, out).startswith(
        "aggregate zones [2026-01-05T08:00Z, 2026-01-05T09:00Z): 5 rows in, 0 quarantined, 4 rows out, 0 shared "
        "bursts, 1 stream partition on the Python engine, "
    )
    # zone n: (R, 41); zone s: (R, 41), (R, 42), (R, 41, 42)
    assert output_rows(spark, out) == [
        ("q", "08:50", "n", "COUNT(*)", "1"), ("q", "08:50", "n", "MAX(T.v)", "7"),
        ("q", "08:50", "s", "COUNT(*)", "3"), ("q", "08:50", "s", "MAX(T.v)", str(10**30)),
    ]  # fmt: skip


def test_a_table_with_int_decimal_and_float_columns_takes_csv_rows_of_those_types(spark, tmp_path, capsys):
    """An events table made elsewhere, with columns of Spark types the scenarios do not use: the loader knew
    string, bigint, double and boolean only, so a decimal column failed the whole load with
    "error: loading failed: KeyError: 'decimal(10,2)'" and an int column rejected every row that had a value
    ("level: column type int is not supported by the loader"). Values are now checked against the column's
    own range and scale (never rounded), and a column the loader cannot write from CSV is refused for the
    file, by name."""
    from decimal import Decimal

    from jobs.load_events import main

    table = str(tmp_path / "events")
    schema = ("event_id string, event_type string, event_time timestamp, level int, price decimal(10,2), "
              "ratio float, seen date, event_date date, event_hour int")  # fmt: skip
    spark.createDataFrame([], schema).write.format("delta").partitionBy("event_date", "event_hour").save(
        table
    )
    good = tmp_path / "good.csv"
    good.write_text("event_type,event_time,level,price,ratio\n"
                    "A,2026-01-05T08:00:00Z,7,1.5,0.25\n"
                    "A,2026-01-05T08:01:00Z,2147483648,1.5,0.25\n"
                    "A,2026-01-05T08:02:00Z,-2147483648,12345678.99,-0.5\n"
                    "A,2026-01-05T08:03:00Z,8,1.255,0.25\n"
                    "A,2026-01-05T08:04:00Z,9,123456789,0.25\n"
                    "A,2026-01-05T08:05:00Z,10,2,1e39\n"
                    "A,2026-01-05T08:06:00Z,,,\n", encoding="utf-8")  # fmt: skip
    assert main(["--csv", str(good), "--table", table, "--max-rejects", "3"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == (
        f"3 events loaded into {table}: 3 new, 0 replaced, 0 unchanged (already loaded), 4 rejected"
    )
    assert [line.split(": ", 2)[1:] for line in err.splitlines()] == [
        ["rejected", "level '2147483648' does not fit in 32 bits: A,2026-01-05T08:01:00Z,2147483648,1.5,0.25"],
        ["rejected", "price '1.255' has more than 2 decimal places (decimal(10,2)): A,2026-01-05T08:03:00Z,8,1.255,0.25"],
        ["rejected", "price '123456789' does not fit decimal(10,2): A,2026-01-05T08:04:00Z,9,123456789,0.25"],
        ["rejected", "ratio '1e39' is beyond the range of a float: A,2026-01-05T08:05:00Z,10,2,1e39"],
    ]  # fmt: skip
    loaded = (
        spark.read.format("delta").load(table).orderBy("event_time").select("level", "price", "ratio", "seen")
    )
    assert [tuple(r) for r in loaded.collect()] == [
        (7, Decimal("1.50"), 0.25, None), (-2147483648, Decimal("12345678.99"), -0.5, None), (None, None, None, None)
    ]  # fmt: skip
    dated = tmp_path / "dated.csv"
    dated.write_text("event_type,event_time,seen\nA,2026-01-05T08:00:00Z,2026-01-05\n", encoding="utf-8")
    assert main(["--csv", str(dated), "--table", table]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {dated}:1: column(s) seen (date) of the events table cannot be loaded from CSV (the loader "
        "writes string, integer, floating-point, decimal and boolean columns)"
    )


@pytest.mark.parametrize(
    ("header", "message"),
    [
        # a trailing comma: was "column(s)  are not columns of the events table", a name of nothing
        ("event_type,event_time,driver,", "f.csv:1: column 4 of the header has no name"),
        (
            "EVENT_TYPE,event_time",
            (
                "f.csv:1: the header has no event_type column (found: EVENT_TYPE, event_time); column names are "
                "case-sensitive: EVENT_TYPE is not event_type"
            ),
        ),
        (
            "event_type,event_time,Driver,Event_Hour",
            (
                "f.csv:1: column(s) Driver, Event_Hour are not columns of the events table (attribute columns: driver, "
                "speed); column names are case-sensitive: Driver is not driver, Event_Hour is not event_hour"
            ),
        ),
    ],
)
def test_a_header_column_without_a_name_or_in_another_case_is_named_in_the_error(header, message):
    import io

    from jobs.load_events import LoadError, parse_csv

    with pytest.raises(LoadError) as error:
        parse_csv(io.StringIO(header + "\nA,60,x,1\n"), "f.csv", {"driver": "string", "speed": "double"})
    assert str(error.value) == message


def test_an_events_table_without_hour_partitions_is_refused_in_one_line_before_spark(spark, tmp_path, capfd):
    """A Delta table of events written elsewhere, without event_date and event_hour: the job's partition
    filter failed inside Spark, and the command printed a JSON log record of the JVM's stack trace and a
    Spark plan after "error: aggregation failed: AnalysisException: [UNRESOLVED_COLUMN.WITH_SUGGESTION]"."""
    from jobs.aggregate import main

    events = str(tmp_path / "flat")
    moment = datetime(2026, 1, 5, 8, 40, tzinfo=UTC)
    spark.createDataFrame([("e1", "Request", moment, "n")], "event_id string, event_type string, "
                          "event_time timestamp, zone string").write.format("delta").save(events)  # fmt: skip
    capfd.readouterr()
    workload = tmp_path / "w.hamlet"
    workload.write_text(
        "q: RETURN T.zone, COUNT(*) PATTERN SEQ(Request R, Travel T+) GROUP-BY T.zone WITHIN 10 min\n"
    )
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", str(tmp_path / "out")]) == 1  # fmt: skip
    assert capfd.readouterr().err.splitlines() == [
        (
            f"error: the Delta table at {events} has no event_date and no event_hour column: events are read by their "
            "hour partitions (event_date, event_hour of event_time in UTC), as `hamlet load-events` and `hamlet "
            "generate` write them"
        )
    ]
    assert not (tmp_path / "out").exists()


def test_a_spark_analysis_error_is_not_logged_with_the_jvm_stack_trace(spark, capfd):
    """PySpark logged every AnalysisException it raised as a JSON record of the JVM's whole stack trace on
    stderr (its SQLQueryContextLogger and DataFrameQueryContextLogger), before the command that caught it
    printed its own one-line error: a traceback in all but name. The exception still says what is wrong."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    capfd.readouterr()
    with pytest.raises(AnalysisException, match="no_such_column"):
        spark.range(1).where("no_such_column = 1").collect()
    with pytest.raises(AnalysisException, match="nope"):
        spark.range(1).where(F.col("nope") == 1).collect()
    assert capfd.readouterr().err == ""


def test_rejects_named_at_the_events_table_or_another_table_are_refused_before_anything_is_written(
    spark, tmp_path, capsys
):
    """``--rejects`` at the events table itself: the rows were loaded, then the MERGE of the rejects failed,
    and Spark could not even word Delta's error: "error: loading failed: Py4JJavaError: An error occurred
    while calling z:org.apache.spark.SparkThrowableHelper.getMessage." and 40 lines of JVM stack trace."""
    from jobs.load_events import main
    from jobs.logs import error_line

    table, other = str(tmp_path / "events"), str(tmp_path / "other")
    spark.createDataFrame([(1,)], "x int").write.format("delta").save(other)
    source = tmp_path / "e.csv"
    source.write_text("event_type,event_time,driver\nTravel,2026-01-05T08:00:00Z,d1\nTravel,x,d1\n")
    argv = ["--csv", str(source), "--table", table, "--scenario", "rideshare"]
    assert main([*argv, "--rejects", table + "/"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        (
            f"error: --rejects {table} is the events table (--table): name another folder for the rejected rows "
            "(source, line, row, reason, rejected_at)"
        )
    ]
    assert main([*argv, "--rejects", other]) == 1
    assert capsys.readouterr().err.splitlines() == [
        (
            f"error: --rejects {other} is a Delta table of other columns (x), not one of rejected rows (source, line, "
            "row, reason, rejected_at)"
        )
    ]
    assert not (tmp_path / "events").exists()  # nothing loaded
    # any other failure: one line, the JVM's own
    java = "An error occurred while calling o1.save.\n: org.apache.spark.SparkException: boom\n\tat org.x(Y.scala:1)"
    assert error_line(type("Py4JJavaError", (Exception,), {})(java)) == (
        "Py4JJavaError: org.apache.spark.SparkException: boom"
    )
    assert error_line(ValueError("first\nsecond")) == "ValueError: first"


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('{"event_type": "Travel", "event_time": 60}\n', ("the file looks like JSON, and load-events reads CSV, one "
         "event per line after a header")),
        ("event_type;event_time\nTravel;60\n", ("its names are separated by semicolons, and load-events reads "
         "comma-separated values")),
        ("event_type\tevent_time\nTravel\t60\n", ("its names are separated by tabs, and load-events reads "
         "comma-separated values")),
    ],
)  # fmt: skip
def test_a_file_that_is_not_comma_separated_says_what_it_looks_like(text, hint):
    import io

    from jobs.load_events import LoadError, parse_csv

    with pytest.raises(LoadError) as error:
        parse_csv(io.StringIO(text), "f.csv", {})
    assert str(error.value).startswith("f.csv:1: the header has no event_type column (found: ")
    assert str(error.value).endswith(f"); {hint}")


def test_a_parquet_file_given_as_csv_is_named_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet.io import open_csv
    from jobs.load_events import LoadError, parse_csv

    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"event_type": ["Travel"] * 50, "event_time": [60.0] * 50}), path)
    with pytest.raises(LoadError) as error, open_csv(str(path)) as f:
        parse_csv(f, "e.parquet", {})
    assert str(error.value).endswith(
        "; the file is Parquet, and load-events reads CSV (`hamlet evaluate` reads Parquet)"
    )
    assert len(str(error.value)) < 400  # the binary after the magic bytes is cut


def test_seconds_with_microseconds_are_loaded_to_the_microsecond_written():
    """From 2106 on (2^32 s) a double no longer holds every microsecond: 4457817554.859217 was loaded as
    ...859216, 1 µs early, without a word."""
    import io

    from jobs.load_events import parse_csv

    text = "event_type,event_time\nA,4457817554.859217\nA,4499730399.224625\nA,1767603180.0000015\n"
    parsed = parse_csv(io.StringIO(text), "f.csv", {})
    assert [r["event_time"].isoformat() for r in parsed.rows] == [
        "2111-04-07T02:39:14.859217+00:00",
        "2112-08-04T05:06:39.224625+00:00",
        "2026-01-05T08:53:00.000002+00:00",  # (half to even below a microsecond)
    ]


def test_attributes_named_like_the_jobs_own_columns_keep_their_values(spark, tmp_path, capsys):
    """A column ``_bucket`` (or ``_segment``) of the events table: the job's shuffle put its hash bucket in a
    column of that name, so the GROUP-BY values became bucket numbers ({"_bucket": 12}, {"_bucket": 3} for
    "a" and "b") and two groups in one bucket would have been one. The stream is also cut by time here
    (``--segment-events 1``), the job's other column of its own."""
    from jobs.aggregate import main

    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    write_events(spark, events, "_bucket string, _segment int", [
        ("Request", 40, "a", -1), ("Travel", 41, "a", -1), ("Travel", 42, "a", -1), ("Request", 43, "b", -1),
        ("Travel", 44, "b", -1),
    ])  # fmt: skip
    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN T._bucket, COUNT(*), SUM(T._segment) PATTERN SEQ(Request R, Travel T+) "
                        "GROUP-BY T._bucket WITHIN 30 min\n")  # fmt: skip
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", out, "--buckets", "1", "--segment-events", "1"]) == 0  # fmt: skip
    frame = spark.read.format("delta").load(out)
    assert sorted((r.group_key, r.aggregate, r.value_exact) for r in frame.collect()) == [
        ('{"_bucket":"a"}', "COUNT(*)", "3"), ('{"_bucket":"a"}', "SUM(T._segment)", "-4"),
        ('{"_bucket":"b"}', "COUNT(*)", "1"), ('{"_bucket":"b"}', "SUM(T._segment)", "-1"),
    ]  # fmt: skip


def test_attributes_named_like_the_fingerprint_or_spark_s_count_keep_their_values(spark, tmp_path, capsys):
    """The job's read adds the row fingerprint where the quarantine holds rows of its hours: as
    ``_row_fingerprint`` it replaced an events column of that name, so each event was a group of its own (its
    hash) and the run wrote no row (a SUM over such a column: "SUM/AVG over Travel._row_fingerprint: ...
    non-numeric value '0719...'"). Counting the hot stream partitions (``--segment-events``) by an attribute
    ``count`` met Spark's own count column: "error: aggregation failed: AnalysisException:
    [AMBIGUOUS_REFERENCE] Reference `count` is ambiguous"."""
    from jobs.aggregate import main
    from jobs.schema import QUARANTINE_DDL, create_table

    events, out, quarantine = str(tmp_path / "events"), str(tmp_path / "out"), str(tmp_path / "quarantine")
    write_events(spark, events, "_row_fingerprint string, count bigint", [
        ("Request", 40, "a", 1), ("Travel", 41, "a", 1), ("Travel", 42, "a", 1), ("Request", 43, "b", 2),
        ("Travel", 44, "b", 2),
    ])  # fmt: skip
    create_table(spark, quarantine, QUARANTINE_DDL, ("stage",))  # a row of 08:00 (none of these events)
    spark.createDataFrame([("events", "w", "gate", datetime(2026, 1, 5, 8), "x", None, "bad", "0" * 64, "{}",
                            datetime(2026, 1, 5, 9))], QUARANTINE_DDL).write.format("delta").mode("append").save(
        quarantine)  # fmt: skip
    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN T._row_fingerprint, COUNT(*), SUM(T.count) PATTERN SEQ(Request R, Travel T+) "
                        "WHERE [count] GROUP-BY T._row_fingerprint WITHIN 30 min\n")  # fmt: skip
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", out, "--quarantine-table", quarantine,
                 "--segment-events", "1"]) == 0, capsys.readouterr().err  # fmt: skip
    frame = spark.read.format("delta").load(out)
    assert sorted((r.group_key, r.aggregate, r.value_exact) for r in frame.collect()) == [
        ('{"_row_fingerprint":"a"}', "COUNT(*)", "3"), ('{"_row_fingerprint":"a"}', "SUM(T.count)", "4"),
        ('{"_row_fingerprint":"b"}', "COUNT(*)", "1"), ('{"_row_fingerprint":"b"}', "SUM(T.count)", "2"),
    ]  # fmt: skip


def test_columns_named_like_the_input_gates_own_are_checked_and_quarantined_whole(spark, tmp_path):
    """The input gate adds columns to the events it checks: an events table with a column ``_row_fingerprint``
    or ``_partition_start`` failed it with "AnalysisException: [AMBIGUOUS_REFERENCE] Reference
    `_row_fingerprint` is ambiguous", one with ``non_finite`` or ``nul_bytes`` with "failed
    expect_column_values_to_be_null(non_finite): observed None"; a column named with a leading '_' was
    neither checked for NaN nor kept in the quarantined row. An events table made elsewhere with a column
    of a name the gate now uses (``#non_finite``) is refused in one line, before Spark."""
    import dataclasses

    import pyarrow as pa
    from deltalake import write_deltalake

    from jobs.validate import ValidationFailed, validate_events

    events = str(tmp_path / "events")
    ours = "_row_fingerprint string, _partition_start string, non_finite double, nul_bytes string, _x double"
    write_events(spark, events, "driver string, rider string, district string, request_type string, speed double, "
                 f"duration bigint, {ours}", [
                     ("Travel", 10, "d", "r", "n", None, 1.0, 5, "fp", "ps", 1.5, "nb", 2.5),
                     ("Travel", 11, "d", "r", "n", None, 1.0, 5, "fp", "ps", 1.5, "nb", float("nan")),
                 ])  # fmt: skip
    _, config, report = gate_of_half(
        spark, tmp_path, events, "RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+)"
    )
    assert (report.rows, report.bad_rows, report.passed) == (2, 1, True)
    quarantined = spark.read.format("delta").load(config.quarantine_table).collect()
    assert [(q.expectation, q.column, q.reason, json.loads(q.row)) for q in quarantined] == [(
        "expect_column_values_to_be_null(#non_finite)", "#non_finite", "not a finite number: '_x = NaN'",
        {"event_id": "e1", "event_type": "Travel", "event_time": "2026-01-05T08:11:00.000Z", "driver": "d",
         "rider": "r", "district": "n", "request_type": None, "speed": 1.0, "duration": 5, "_row_fingerprint": "fp",
         "_partition_start": "ps", "non_finite": 1.5, "nul_bytes": "nb", "_x": "NaN", "event_date": "2026-01-05",
         "event_hour": 8},
    )]  # fmt: skip

    made = str(tmp_path / "made")
    moment = pa.array([datetime(2026, 1, 5, 8, 10, tzinfo=UTC)], pa.timestamp("us", tz="UTC"))
    write_deltalake(made, pa.table({"event_id": ["e0"], "event_type": ["Travel"], "event_time": moment,
                                    "#non_finite": ["x"], "event_date": pa.array([date(2026, 1, 5)]),
                                    "event_hour": pa.array([8], pa.int32())}))  # fmt: skip
    with pytest.raises(ValidationFailed) as refused:
        validate_events(dataclasses.replace(config, events_table=made), *HOUR, "made", spark=spark)
    assert str(refused.value) == (
        f"the events table {made} has a column #non_finite: the input gate names a column of its own so; rename "
        "that column of the table"
    )


def test_a_failure_inside_spark_is_one_line_naming_the_jvms_or_the_workers_error(spark, tmp_path, capsys):
    """An output table under a file: "error: aggregation failed: Py4JJavaError: An error occurred while
    calling o68.execute." and 4,000 characters of JVM stack trace; now the Delta error's own line."""
    from pyspark.sql import functions as F

    from jobs.aggregate import main
    from jobs.logs import error_line

    events, blocker = str(tmp_path / "events"), tmp_path / "blocker"
    blocker.write_text("a file where the output table should go")
    moment = datetime(2026, 1, 5, 8, 40, tzinfo=UTC)
    spark.createDataFrame([("e1", "Request", moment, moment.date(), 8)], "event_id string, event_type string, "
                          "event_time timestamp, event_date date, event_hour int").write.format("delta").save(events)  # fmt: skip
    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min\n")
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", str(blocker / "out")]) == 1  # fmt: skip
    assert capsys.readouterr().err.splitlines() == [
        (
            "error: aggregation failed: Py4JJavaError: org.apache.spark.sql.delta.DeltaIOException: "
            f"[DELTA_CANNOT_CREATE_LOG_PATH] Cannot create file:{blocker}/out/_delta_log"
        )
    ]

    @F.udf("int")
    def broken(x):  # type: ignore[no-untyped-def]  # (no hints: PySpark would infer an eval type from them)
        raise ValueError(f"no value {x}")

    with pytest.raises(Exception) as error:
        spark.range(1).select(broken("id")).collect()
    assert error_line(error.value) == "PythonException: ValueError: no value 0"


def test_a_decimal_column_sums_the_same_in_time_segments(spark, tmp_path):
    """A decimal column with a scale is read by the engine as doubles; the job told the segments' composition
    of its double columns only (Spark's ``double``/``float``), so a decimal SUM cut into segments composed as
    an int of scaled units: inf instead of 7.5."""
    from decimal import Decimal

    from jobs.aggregate import main

    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    write_events(spark, events, "zone string, fare decimal(10,2)", [
        ("Request", 40, "n", None), ("Travel", 41, "n", Decimal("1.25")), ("Travel", 42, "n", Decimal("2.50")),
    ])  # fmt: skip
    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN T.zone, COUNT(*), SUM(T.fare), MAX(T.fare) PATTERN SEQ(Request R, Travel T+) "
                        "GROUP-BY T.zone WITHIN 30 min\n")  # fmt: skip
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", out, "--segment-events", "1"]) == 0  # fmt: skip
    # the trends (R, 41), (R, 42), (R, 41, 42): 1.25 + 2.5 + 3.75
    assert output_rows(spark, out) == [
        ("q", "09:00", "n", "COUNT(*)", "3"), ("q", "09:00", "n", "MAX(T.fare)", "2.5"),
        ("q", "09:00", "n", "SUM(T.fare)", "7.5"),
    ]  # fmt: skip


def test_whole_decimal_columns_of_20_and_38_digits_keep_every_id_and_sum_exactly(spark, tmp_path):
    """Spark's ``decimal(20,0)`` ids and ``decimal(38,0)`` amounts: the engine read a whole decimal of more
    than 18 digits as doubles, so the zones 2^53 and 2^53 + 1 were one group (6 trends where each has 3) and
    the sums were rounded. Now they are exact ints, whole and in time segments."""
    from decimal import Decimal

    from jobs.aggregate import main

    zone, fare = 2**53, 2**62
    events = str(tmp_path / "events")
    write_events(spark, events, "zone decimal(20,0), fare decimal(38,0)", [
        (kind, minute, Decimal(zone + minute % 2), None if kind == "Request" else Decimal(fare + minute))
        for minute, kind in enumerate(["Request", "Request", "Travel", "Travel", "Travel", "Travel"], 40)
    ])  # fmt: skip
    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN T.zone, COUNT(*), SUM(T.fare) PATTERN SEQ(Request R, Travel T+) "
                        "WHERE [zone] GROUP-BY T.zone WITHIN 30 min\n")  # fmt: skip
    for segment_events in ("0", "1"):
        out = str(tmp_path / f"out{segment_events}")
        assert main(["--workload", str(workload), "--start", HOUR[0], "--end", HOUR[1], "--events-table", events,
                     "--output-table", out, "--segment-events", segment_events]) == 0  # fmt: skip
        # per zone: R then two T (minutes 42 and 44, or 43 and 45): (R, a), (R, b), (R, a, b)
        assert output_rows(spark, out) == [
            ("q", "09:00", zone, "COUNT(*)", "3"),
            ("q", "09:00", zone, "SUM(T.fare)", str(2 * (fare + 42) + 2 * (fare + 44))),
            ("q", "09:00", zone + 1, "COUNT(*)", "3"),
            ("q", "09:00", zone + 1, "SUM(T.fare)", str(2 * (fare + 43) + 2 * (fare + 45))),
        ], segment_events


def test_an_hour_of_only_types_no_query_reads_passes_the_gate_and_aggregates_to_no_rows(
    spark, tmp_path, capsys
):
    """An hour holding only Foo events, for a workload reading Request, Travel and Pickup: the input gate
    quarantined each as "event_type 'Foo' is not a type of the workload" and refused the hour ("3 rows, 3
    quarantined (100.00%, threshold 5.00%)"), though the job leaves them out by their type anyway; and the
    job recorded 0 events read, as for an empty hour. Now the hour passes and its run says: 3 read, none
    matched, no row. The quarantine row the refused run left is replaced (by none) when the hour is rerun; a
    second rerun, with nothing to replace, commits nothing."""
    from pyspark.sql import functions as F
    from spark_env import pipeline_conf

    from jobs.aggregate import main
    from jobs.pipeline import load_config
    from jobs.schema import QUARANTINE_DDL, create_table, row_fingerprint
    from jobs.validate import validate_events

    events, tables = str(tmp_path / "events"), tmp_path / "tables"
    write_events(spark, events, "driver string, rider string, district string, request_type string, "
                 "speed double, duration bigint", [("Foo", m, "d", "r", "n", None, None, None) for m in (10, 11, 12)])  # fmt: skip
    workload = tmp_path / "trips.hamlet"
    workload.write_text("q: RETURN T.district, COUNT(*) PATTERN SEQ(Request R, Travel T+, NOT Pickup P) "
                        "WHERE [driver, rider] GROUP-BY T.district WITHIN 10 min\n")  # fmt: skip
    config = load_config(pipeline_conf(tmp_path / "pipeline.toml", events, workload, tables))
    # what the refused run left in the quarantine for e0
    create_table(spark, config.quarantine_table, QUARANTINE_DDL, ("stage",))
    table = spark.read.format("delta").load(events)
    table.where("event_id = 'e0'").select(
        F.lit("events").alias("stage"), F.lit("trips").alias("workload"), F.lit("refused").alias("run_id"),
        F.lit(datetime(2026, 1, 5, 8)).alias("partition_start"),
        F.lit("expect_column_values_to_be_in_set(event_type)").alias("expectation"), F.lit("event_type").alias("column"),
        F.lit("event_type 'Foo' is not a type of the workload").alias("reason"),
        row_fingerprint(table.columns).alias("row_fingerprint"), F.lit("{}").alias("row"),
        F.lit(datetime(2026, 1, 5, 9)).alias("quarantined_at"),
    ).write.format("delta").mode("append").save(config.quarantine_table)  # fmt: skip

    start, end = "2026-01-05T08:00:00Z", "2026-01-05T09:00:00Z"
    report = validate_events(config, start, end, "rerun", spark=spark)
    assert (report.rows, report.bad_rows, report.failures, report.passed) == (3, 0, [], True)
    assert spark.read.format("delta").load(config.quarantine_table).count() == 0
    # Once more: nothing flagged and nothing of the hour left to replace, so no commit to the quarantine.
    versions = spark.sql(f"DESCRIBE HISTORY delta.`{config.quarantine_table}`").count()
    assert validate_events(config, start, end, "again", spark=spark).passed
    assert spark.sql(f"DESCRIBE HISTORY delta.`{config.quarantine_table}`").count() == versions == 3
    capsys.readouterr()
    assert main(["--workload", str(workload), "--start", HOUR[0], "--end", HOUR[1], "--events-table", events,
                 "--output-table", config.output_table, "--quarantine-table", config.quarantine_table,
                 "--run-id", "rerun"]) == 0  # fmt: skip
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .startswith(
            "aggregate trips [2026-01-05T08:00Z, 2026-01-05T09:00Z): 3 rows in, 0 quarantined, 0 rows out, "
            "0 shared bursts, "
        )
    )
    assert spark.read.format("delta").load(config.output_table).count() == 0
    stats = spark.read.format("delta").load(config.stats_table)
    assert [
        tuple(r) for r in stats.select("events_read", "set_events", "rows_written", "status").collect()
    ] == [(3, 0, 0, "committed")]


def test_spark_trims_exactly_the_whitespace_the_engine_strips_from_an_event_type(spark):
    """The job reads a stored type as the engine reads it, ``TYPE_SPACE`` stripped (``jobs.aggregate.read_events``):
    ``event_type_as_read`` removes exactly those characters, multi-byte ones too, and nothing else (a zero-width
    space, a byte-order mark, NUL, a letter) — every code point up to U+3100 (past the last of TYPE_SPACE,
    U+3000) and a few beyond, each around an "A"."""
    from hamlet.events import TYPE_SPACE
    from jobs.schema import event_type_as_read

    points = [c for c in range(0x3101) if not 0xD800 <= c < 0xE000] + [0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF]
    rows = [(c, chr(c) * 2 + "A" + chr(c)) for c in points]
    trimmed = spark.createDataFrame(rows, "c int, event_type string").select("c", event_type_as_read())
    found = dict(trimmed.collect())
    assert found == {c: text.strip(TYPE_SPACE) for c, text in rows}
    assert sorted(c for c, t in found.items() if t == "A") == sorted(map(ord, TYPE_SPACE))


def test_event_types_with_whitespace_around_them_count_as_the_engine_counts_them(spark, tmp_path):
    """An events table written by another tool than our loader (which strips the types) may hold " Travel":
    the job kept the rows whose raw event_type is one of the workload's types, so over these 6 events it
    counted 1 trend (R40 T45), where ``hamlet.evaluate`` on the same rows strips the whitespace (``TYPE_SPACE``)
    and counts 18: R40 with any of the 15 non-empty subsequences of T41 T42 T44 T45, R43 with T44, T45 or
    both. Now the job reads the type as the engine reads it."""
    import hamlet
    from jobs.aggregate import main

    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    write_events(spark, events, "zone string", [
        ("Request", 40, "n"), (" Travel", 41, "n"), ("Travel\u3000", 42, "n"), ("\xa0Request\u2028", 43, "n"),
        ("\tTravel\x85", 44, "n"), ("Travel", 45, "n"), (" Pickup ", 46, "n"),
    ])  # fmt: skip
    text = "q: RETURN T.zone, COUNT(*) PATTERN SEQ(Request R, Travel T+) GROUP-BY T.zone WITHIN 10 min\n"
    workload = tmp_path / "w.hamlet"
    workload.write_text(text, encoding="utf-8")
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", out]) == 0  # fmt: skip
    assert output_rows(spark, out) == [("q", "08:50", "n", "COUNT(*)", "18")]
    rows = spark.read.format("delta").load(events).select("event_type", "event_time", "zone").toPandas()
    assert [(r.aggregate, r.value) for r in hamlet.evaluate(text, rows)] == [("COUNT(*)", 18)]


def test_columns_named_with_a_dot_or_a_backtick_are_checked_quarantined_and_left_out_whole(
    spark, tmp_path, capsys
):
    """A Delta table made elsewhere may name columns ``a.b`` or ``c`d`` (Delta refuses neither). No query can
    name such an attribute (the language's identifiers are words), so the engine never needs their values;
    but the input gate checks every column and fingerprints every row, and the job fingerprints the rows it
    reads to leave the quarantined ones out, each by ``F.col(name)``, which takes ``a.b`` for field b of a
    column a: the gate and the job failed. Now both quote the names: the NaN in ``a.b`` is quarantined with
    the whole row, and the job leaves that row out (3 trends of R40 with T41 and T43, not 7)."""

    from jobs.aggregate import main

    events = str(tmp_path / "events")
    rideshare = (
        "driver string, rider string, district string, request_type string, speed double, duration bigint"
    )
    write_events(spark, events, f"{rideshare}, zone string, `a.b` double, `c``d` string", [
        (kind, minute, "d", "r", "n", None, 1.0, 5, "n", value, text) for kind, minute, value, text in [
            ("Request", 40, 1.0, "x"), ("Travel", 41, 1.0, "x"), ("Travel", 42, float("nan"), "y"),
            ("Travel", 43, 2.0, "x"),
        ]
    ])  # fmt: skip
    workload, config, report = gate_of_half(
        spark, tmp_path, events, "RETURN T.zone, COUNT(*) PATTERN SEQ(Request R, Travel T+) GROUP-BY T.zone"
    )
    assert (report.rows, report.bad_rows, report.passed) == (4, 1, True)
    quarantined = spark.read.format("delta").load(config.quarantine_table).collect()
    assert [(q.reason, json.loads(q.row)["event_id"], json.loads(q.row)["a.b"], json.loads(q.row)["c`d"])
            for q in quarantined] == [("not a finite number: 'a.b = NaN'", "e2", "NaN", "y")]  # fmt: skip
    capsys.readouterr()
    assert main(["--workload", str(workload), "--start", HOUR[0], "--end", HOUR[1], "--events-table", events,
                 "--output-table", config.output_table, "--quarantine-table", config.quarantine_table]) == 0, (
        capsys.readouterr().err)  # fmt: skip
    assert output_rows(spark, config.output_table) == [("q", "08:50", "n", "COUNT(*)", "3")]
    assert " 4 rows in, 1 quarantined, 1 rows out" in capsys.readouterr().out
