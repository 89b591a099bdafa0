"""The aggregation job on local Spark with real Delta tables: it equals ``hamlet evaluate``, hourly runs equal
one long run, reruns replace, empty hours write nothing, and the deltalake package reads the same rows."""

from __future__ import annotations

import calendar
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from spark_env import START, export_csv, pipeline_conf, read_jsonl

from hamlet.cli import main as hamlet_main

pytestmark = pytest.mark.slow  # end to end: the Spark job on real Delta tables

MICROS = 1_000_000
COLUMNS = ["workload", "query", "window_start", "window_end", "group", "group_key", "aggregate", "value",
           "value_exact", "strategy", "window_end_date"]  # fmt: skip


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def aggregate(events: str, output: Path, workload: Path, start: datetime, end: datetime, *extra: str) -> int:
    from jobs.aggregate import main

    argv = ["--workload", str(workload), "--start", iso(start), "--end", iso(end), "--events-table", events,
            "--output-table", str(output), "--workload-name", "trips", *extra]  # fmt: skip
    return main(argv)


def table(spark, path: Path):
    return spark.read.format("delta").load(str(path))


def rows_of(spark, path: Path, start: datetime | None = None, end: datetime | None = None):
    frame = table(spark, path).select(*COLUMNS)
    if start is not None:
        frame = frame.where(
            (frame.window_end > start.replace(tzinfo=None)) & (frame.window_end <= end.replace(tzinfo=None))
        )
    return frame


@pytest.fixture(scope="module")
def hour_run(spark, events_table, workload_file, tmp_path_factory):
    """One run over [08:00, 09:00) into a fresh output table."""
    out = tmp_path_factory.mktemp("hour") / "trend_aggregates"
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    assert aggregate(events_table, out, workload_file, start, end) == 0
    return out, start, end


def test_the_job_equals_hamlet_evaluate(spark, events_table, workload_file, hour_run, tmp_path):
    out, start, end = hour_run
    expected = evaluated_rows(workload_file, events_table, tmp_path, start, end)
    assert {r.query for r in expected} == {"q1", "q2", "q3", "q4"}  # every query set produced windows
    assert len(expected) > 100
    assert_equals_evaluated(spark, out, expected)
    # the whole output is this run's: its workload, strategy, and window ends in (start, end]
    meta = table(spark, out).select("workload", "strategy", "run_id").distinct().collect()
    assert [(m.workload, m.strategy) for m in meta] == [("trips", "hamlet")]


SEMANTICS_WORKLOAD = """
qany: RETURN T.district, COUNT(*), SUM(T.duration)
    PATTERN SEQ(Request R, Travel T+, Dropoff D)
    WHERE [driver, rider] GROUP-BY T.district WITHIN 20 min SLIDE 5 min
qnext: RETURN T.district, COUNT(*), SUM(T.duration)
    PATTERN SEQ(Request R, Travel T+, Dropoff D) SEMANTICS skip-till-next-match
    WHERE [driver, rider] GROUP-BY T.district WITHIN 20 min SLIDE 5 min
qcont: RETURN COUNT(*), MAX(T.speed)
    PATTERN SEQ(Request R, Travel T+) SEMANTICS contiguous
    WHERE [driver, rider] WITHIN 15 min SLIDE 5 min
"""


def test_the_job_equals_hamlet_evaluate_under_next_and_contiguous_semantics(spark, events_table, tmp_path):
    # NEXT and CONT queries next to an ANY one: the CONT query's set reads every event type of the table (a
    # Pickup or Cancel between a Request and a Travel of one driver and rider breaks contiguity).
    job_equals_evaluated(spark, events_table, tmp_path, SEMANTICS_WORKLOAD, {"qany", "qnext", "qcont"})


def job_equals_evaluated(spark, events_table: str, tmp_path: Path, text: str, queries: set[str]) -> list:
    """The job over 08:00-09:00 with the workload ``text`` wrote ``hamlet evaluate``'s rows, which hold
    every query of ``queries``; those rows."""
    workload = tmp_path / "workload.hamlet"
    workload.write_text(text, encoding="utf-8")
    out = tmp_path / "trend_aggregates"
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    assert aggregate(events_table, out, workload, start, end) == 0
    expected = evaluated_rows(workload, events_table, tmp_path, start, end)
    assert {r.query for r in expected} == queries
    assert_equals_evaluated(spark, out, expected)
    return expected


MILLISECONDS_WORKLOAD = """
qms: RETURN COUNT(*), SUM(T.duration), MAX(T.speed) PATTERN SEQ(Request R, Travel T+)
    WHERE [driver, rider] WITHIN 10 min SLIDE 2500 ms
qnot: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+, NOT Pickup P) WHERE [driver, rider] WITHIN 20 min SLIDE 5 min
"""


def test_timestamps_with_milliseconds_and_windows_of_milliseconds_equal_hamlet_evaluate(
    spark, events_table, tmp_path
):
    # Real feeds' timestamps have fractions of a second: every event moved by 0-999 ms (never out of its
    # second, so of its hour partition), windows sliding by 2.5 s. The job's engine counts microseconds;
    # hamlet evaluate reads the same times exactly from ISO-8601 text.
    from pyspark.sql import functions as F

    moved = str(tmp_path / "events_ms")
    offset = F.pmod(F.xxhash64("event_id"), F.lit(1000)) * 1000
    frame = table(spark, Path(events_table)).withColumn(
        "event_time", F.timestamp_micros(F.unix_micros("event_time") + offset)
    )
    frame.write.format("delta").partitionBy("event_date", "event_hour").save(moved)
    expected = job_equals_evaluated(spark, moved, tmp_path, MILLISECONDS_WORKLOAD, {"qms", "qnot"})
    assert any(r.window_start.microsecond for r in expected)  # (windows starting at .5 s)


# One stream partition (no GROUP-BY, no equivalence) and a hot one per district: issue 19's shape.
HOT_PARTITION_WORKLOAD = """
qall: RETURN COUNT(*), SUM(T.duration), AVG(T.speed), COUNT(T), MAX(T.speed), MIN(T.duration)
    PATTERN SEQ(Request R, Travel T+) WITHIN 30 min SLIDE 5 min
qnot: RETURN COUNT(*) PATTERN SEQ(NOT Cancel C, Request R, Travel T+, NOT Pickup P)
    WHERE T.speed < 30 WITHIN 20 min SLIDE 10 min
qdistrict: RETURN T.district, COUNT(*) PATTERN SEQ(Request R, Travel T+, Dropoff D)
    WHERE [district] GROUP-BY T.district WITHIN 15 min SLIDE 5 min
"""


def job_cached(spark) -> list[str]:
    """The session's cached RDDs but Delta's own (a table's state, cached once per table it reads), by name."""
    names = [rdd.name() or "" for rdd in spark.sparkContext._jsc.getPersistentRDDs().values()]
    return sorted(name for name in names if not name.startswith("Delta Table State"))


def test_hot_stream_partitions_run_in_time_segments_with_the_same_rows(spark, events_table, tmp_path):
    # Every partition over 40 events is cut by time into at least 2 segments per core (local[2]), its segments
    # evaluated in parallel tasks, then composed: the rows are hamlet evaluate's, digit for digit.
    from pyspark.testing import assertDataFrameEqual

    workload = tmp_path / "hot.hamlet"
    workload.write_text(HOT_PARTITION_WORKLOAD, encoding="utf-8")
    out = tmp_path / "trend_aggregates"
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    cached = job_cached(spark)
    assert aggregate(events_table, out, workload, start, end, "--segment-events", "40") == 0
    # (the hot partitions and the composed segments were left cached: a Spark Connect server kept every run's)
    assert job_cached(spark) == cached
    expected = evaluated_rows(workload, events_table, tmp_path, start, end)
    assert {r.query for r in expected} == {"qall", "qnot", "qdistrict"}
    assert (
        max(len(r.value_exact) for r in expected if r.aggregate == "COUNT(*)") > 40
    )  # counts beyond 128 bits
    schema = "query string, window_start timestamp, window_end timestamp, `group` map<string,string>, " \
             "aggregate string, value double, value_exact string"  # fmt: skip
    actual = table(spark, out).select(
        "query", "window_start", "window_end", "group", "aggregate", "value", "value_exact"
    )
    assertDataFrameEqual(actual, spark.createDataFrame(expected, schema))
    stats = {r.query_set: r.engine_stats for r in table(spark, tmp_path / "run_stats").collect()}
    assert stats and all(s["segments"] >= 4 and s["segmented_partitions"] >= 1 for s in stats.values())


def test_hot_partitions_are_found_by_a_sample_and_counted_exactly(spark):
    # Above HOT_SAMPLE events per threshold the job samples for candidates and counts only them: a partition
    # of exactly the threshold is a candidate but not hot, one of a single event more is.
    from jobs.aggregate import EVENTS, HOT_SAMPLE, _hot_partitions

    threshold = 2 * HOT_SAMPLE
    sizes = {("hot", 1): threshold + 1, ("edge", 1): threshold, ("big", 2): 3 * threshold}
    rows = [(d, r) for (d, r), n in sizes.items() for _ in range(n)]
    rows += [(f"trip{i}", i % 7) for i in range(3_000)]
    events = spark.createDataFrame(rows, "driver string, rider long")
    found = _hot_partitions(events, ("driver", "rider"), threshold)
    assert found is not None
    hot = found.collect()
    assert sorted((r.driver, r.rider, r[EVENTS]) for r in hot) == [("big", 2, 6_000), ("hot", 1, 2_001)]
    small = events.where("driver NOT IN ('hot', 'big', 'edge')")
    assert _hot_partitions(small, ("driver", "rider"), threshold) is None


def test_three_hourly_runs_equal_one_three_hour_run(spark, events_table, workload_file, tmp_path):
    from pyspark.testing import assertDataFrameEqual

    hourly, whole = tmp_path / "hourly", tmp_path / "whole"
    first = START + timedelta(hours=1)
    for h in range(3):
        assert (
            aggregate(
                events_table,
                hourly,
                workload_file,
                first + timedelta(hours=h),
                first + timedelta(hours=h + 1),
            )
            == 0
        )
    assert aggregate(events_table, whole, workload_file, first, first + timedelta(hours=3)) == 0
    combined = rows_of(spark, hourly)
    # windows crossing the hour boundaries are there (started in one hour's read, ended in the next)
    crossing = combined.where("hour(window_start) != hour(window_end - INTERVAL 1 MICROSECOND)").count()
    assert crossing > 0
    assertDataFrameEqual(combined, rows_of(spark, whole))
    assert table(spark, hourly).select("run_id").distinct().count() == 3


def test_rerunning_an_hour_leaves_the_same_rows(spark, events_table, workload_file, hour_run):
    from pyspark.testing import assertDataFrameEqual

    out, start, end = hour_run
    before = rows_of(spark, out).collect()
    runs_before = {r.run_id for r in table(spark, out).select("run_id").distinct().collect()}
    assert aggregate(events_table, out, workload_file, start, end) == 0
    after = rows_of(spark, out)
    assert after.count() == len(before)
    assertDataFrameEqual(after, before)
    runs_after = {r.run_id for r in table(spark, out).select("run_id").distinct().collect()}
    assert len(runs_after) == 1 and runs_after != runs_before  # replaced, not added to


def test_an_hour_without_events_succeeds_and_writes_nothing(
    spark, events_table, workload_file, hour_run, tmp_path
):
    from jobs.pipeline import PipelineError, verify_commit

    out = tmp_path / "trend_aggregates"
    empty_start = START + timedelta(hours=30)  # far beyond the generated hours: nothing to read
    empty_end = empty_start + timedelta(hours=1)
    assert aggregate(events_table, out, workload_file, empty_start, empty_end, "--run-id", "quiet-hour") == 0
    assert table(spark, out).count() == 0
    stats = table(spark, tmp_path / "run_stats").collect()
    assert [(s.events_read, s.set_events, s.rows_written) for s in stats] == [(0, 0, 0)] * 2
    # Delta made no commit (nothing added, nothing removed): the pipeline's check reads the finished run
    # from run_stats, and still fails a run that left no trace
    stats_path = str(tmp_path / "run_stats")
    assert verify_commit(str(out), "quiet-hour", "trips", empty_start, empty_end, stats_path) == {
        "version": None, "rows": 0, "timestamp": None}  # fmt: skip
    for run_id, stats_table in (("quiet-hour", None), ("another-run", stats_path)):
        with pytest.raises(PipelineError, match=f"has no commit of run {run_id} for workload trips"):
            verify_commit(str(out), run_id, "trips", empty_start, empty_end, stats_table)
    # and into a table that has other hours: those stay as they were
    hour_out, _, _ = hour_run
    before = table(spark, hour_out).count()
    assert (
        aggregate(events_table, hour_out, workload_file, empty_start, empty_start + timedelta(hours=1)) == 0
    )
    assert table(spark, hour_out).count() == before


def test_deltalake_reads_the_same_rows_as_spark(spark, hour_run):
    from pyspark.testing import assertDataFrameEqual

    from jobs.tables import read_arrow

    out, _, _ = hour_run
    arrow = read_arrow(str(out))
    assert arrow.num_rows == table(spark, out).count()
    rows = [(r["query"], r["window_start"].replace(tzinfo=None), r["window_end"].replace(tzinfo=None),
             dict(r["group"]), r["group_key"], r["aggregate"], r["value"], r["value_exact"])
            for r in arrow.to_pylist()]  # fmt: skip
    schema = "query string, window_start timestamp, window_end timestamp, `group` map<string,string>, " \
             "group_key string, aggregate string, value double, value_exact string"  # fmt: skip
    expected = table(spark, out).select("query", "window_start", "window_end", "group", "group_key", "aggregate",
                                        "value", "value_exact")  # fmt: skip
    assertDataFrameEqual(spark.createDataFrame(rows, schema), expected)


def test_run_stats_hold_every_query_set_with_stage_times(spark, hour_run):
    out, _, _ = hour_run
    stats = (
        table(spark, out.parent / "run_stats").where("range_start = TIMESTAMP'2026-01-05 08:00:00'").collect()
    )
    run_ids = {s.run_id for s in stats}
    latest = max(run_ids, key=lambda r: next(s.computed_at for s in stats if s.run_id == r))
    mine = sorted((s for s in stats if s.run_id == latest), key=lambda s: s.query_set)
    assert [list(s.queries) for s in mine] == [["q1", "q2", "q4"], ["q3"]]
    assert [list(s.partition_attributes) for s in mine] == [
        ["district", "driver", "rider"],
        ["driver", "rider"],
    ]
    for s in mine:
        assert s.read_start == datetime(2026, 1, 5, 7, 0)  # start - the longest WITHIN (1 h, q4)
        assert s.engine_stats["events"] > 0 and s.set_events > 0 and s.partitions > 0
        assert s.events_read >= s.set_events
        # The skew of the engine calls: each call's events of the set, from the smallest to the largest.
        skew = [s.engine_stats[f"call_events_{k}"] for k in ("min", "median", "max")]
        assert skew == sorted(skew) and skew[2] <= s.set_events <= skew[2] * s.engine_calls
        for seconds in (s.read_seconds, s.shuffle_seconds, s.engine_seconds, s.engine_cpu_seconds,
                        s.combine_seconds, s.write_seconds):  # fmt: skip
            assert 0 <= seconds <= s.total_seconds
    assert sum(s.rows_written for s in mine) == table(spark, out).count()
    # recorded as pending before the output commit, then marked committed with that commit's version
    from delta.tables import DeltaTable

    history = DeltaTable.forPath(spark, str(out)).history().where("operation = 'WRITE'").collect()
    (commit,) = [h for h in history if latest in (h.userMetadata or "")]
    assert {(s.status, s.output_version) for s in mine} == {("committed", commit.version)}


def test_every_strategy_gives_the_same_rows_and_its_statistics_are_stored(spark, events_table, workload_file,
                                                                          hour_run, tmp_path):  # fmt: skip
    from pyspark.testing import assertDataFrameEqual

    import hamlet

    out, start, end = hour_run
    reference = rows_of(spark, out).drop("strategy")
    for strategy in [s for s in hamlet.STRATEGIES if s != "greta"]:
        target = tmp_path / strategy
        assert aggregate(events_table, target, workload_file, start, end, "--strategy", strategy) == 0
        assertDataFrameEqual(rows_of(spark, target).drop("strategy"), reference)
        stats = table(spark, tmp_path / "run_stats").where(f"strategy = '{strategy}'").collect()
        assert stats and all(set(s.engine_stats) >= {"events", "bursts", "shared_bursts"} for s in stats)
        assert [s.engine_stats["python_partitions"] for s in stats] == [0] * len(stats)  # (all compiled)


def test_one_engine_call_per_partition_gives_the_same_rows(
    spark, events_table, workload_file, hour_run, tmp_path
):
    from pyspark.testing import assertDataFrameEqual

    out, start, end = hour_run
    target = tmp_path / "per_partition"
    assert aggregate(events_table, target, workload_file, start, end, "--buckets", "0") == 0
    assertDataFrameEqual(rows_of(spark, target), rows_of(spark, out))
    stats = table(spark, tmp_path / "run_stats").collect()
    # Both sets share the shuffle by [driver, rider] (what their partition attributes have in common): one
    # call per (driver, rider) that holds a set's events, and its own partitions within. Counted here from
    # the events table, each set's types from its read start on.
    from pyspark.sql import functions as F

    from jobs.aggregate import load_workload, plan_sets

    events = table(spark, Path(events_table))
    assert len(stats) == 2
    for query_set in plan_sets(load_workload(str(workload_file)), events.columns):
        read_start = (start - timedelta(microseconds=query_set.within_us)).replace(tzinfo=None)
        mine = events.where(F.col("event_type").isin(list(query_set.types)) & (F.col("event_time") >= read_start)
                            & (F.col("event_time") < end.replace(tzinfo=None)))  # fmt: skip
        for attribute in query_set.partition_attributes:
            mine = mine.where(F.col(attribute).isNotNull())
        (row,) = [s for s in stats if s.query_set == query_set.index]
        assert row.engine_calls == mine.select("driver", "rider").distinct().count()
        assert row.partitions == mine.select(*query_set.partition_attributes).distinct().count()


def test_the_read_prunes_hour_partitions(spark, events_table, workload_file):
    from jobs.aggregate import build_parser, make_plan, read_events

    args = build_parser().parse_args(["--workload", str(workload_file), "--start", "2026-01-05T08:00:00Z",
                                      "--end", "2026-01-05T09:00:00Z", "--events-table", events_table,
                                      "--output-table", "/unused/out"])  # fmt: skip
    plan = make_plan(args)
    assert plan.read_start == datetime(2026, 1, 5, 7, tzinfo=UTC)
    files = read_events(spark, plan).inputFiles()
    hours = {p.split("event_hour=")[1].split("/")[0] for p in files}
    assert hours == {"7", "8"}  # of 6, 7, 8, 9
    times = read_events(spark, plan).selectExpr("min(event_time)", "max(event_time)").first()
    assert times[0] >= datetime(2026, 1, 5, 7) and times[1] < datetime(2026, 1, 5, 9)


def test_a_workload_error_is_reported_before_spark_starts(tmp_path, events_table):
    bad = tmp_path / "bad.hamlet"
    bad.write_text("q1: RETURN COUNT(*)\n    PATTERN SEQ(A, B+\n    WITHIN 10 min\n", encoding="utf-8")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hamlet.cli", "aggregate", "--workload", str(bad), "--start",
                           "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z", "--events-table", events_table,
                           "--output-table", str(tmp_path / "out")], capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {bad}:3:")
    assert "Ivy" not in done.stderr and "spark" not in done.stderr.lower()
    assert time.perf_counter() - started < 15  # no JVM was started
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--strategy": "fastest"}, "unknown strategy 'fastest'"),
        ({"--start": "yesterday"}, "--start 'yesterday' is not an ISO-8601 time"),
        ({"--end": "2026-01-05T07:00:00Z"}, "must be before --end"),
        # (a run_stats row past 2262 left the table unreadable to deltalake, and so to ``hamlet report``)
        (
            {"--end": "2300-01-01T00:00:00Z"},
            (
                "[2026-01-05T08:00:00+00:00, 2300-01-01T00:00:00+00:00) is not within "
                "the times a run covers, 1970-01-01T00:00:00+00:00 to 2262-04-11"
            ),
        ),
        ({"--start": "0001-01-01T00:00:00Z"}, "is not within the times a run covers"),
        ({"--events-table": "/nonexistent/events"}, "no Delta table at /nonexistent/events"),
    ],
)
def test_bad_arguments_exit_non_zero_without_spark(change, message, events_table, workload_file, capsys):
    from jobs.aggregate import main

    args = {"--workload": str(workload_file), "--start": "2026-01-05T08:00:00Z", "--end": "2026-01-05T09:00:00Z",
            "--events-table": events_table, "--output-table": "/unused/out", **change}  # fmt: skip
    assert main([x for kv in args.items() for x in kv]) == 1
    assert message in capsys.readouterr().err


def test_an_output_table_that_is_the_events_table_is_refused_without_spark(
    events_table, workload_file, capsys
):
    """The whole job ran, and then Delta refused the write (DELTA_METADATA_MISMATCH): refused first now."""
    from jobs.aggregate import main

    argv = ["--workload", str(workload_file), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
            "--events-table", events_table, "--output-table", events_table + "/"]  # fmt: skip
    assert main(argv) == 1
    assert capsys.readouterr().err.endswith(
        f"the output tables must not be the events table {events_table}\n"
    )


KNOWN = "driver, rider, district, request_type, speed, duration"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "q: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) WHERE [vehicle] WITHIN 10 min",
            "vehicle: the events table {table} has no attribute vehicle; its attributes: {known}",
        ),
        (
            "q: RETURN COUNT(*), SUM(T.duraton) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min",
            (
                "T.duraton: the events table {table} has no attribute duraton (did you mean duration?); its attributes: "
                "{known}"
            ),
        ),
        (
            "q: RETURN COUNT(*), MAX(T.district) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min",
            "MAX(T.district): MAX takes a number attribute; district is string in the events table {table}",
        ),
        (
            "q: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) WHERE T.district > 3 WITHIN 10 min",
            (
                "the condition T.district > 3 compares T.district (string) with the number 3: it is false for every "
                "event"
            ),
        ),
    ],
)
def test_a_workload_that_does_not_fit_the_events_table_is_refused_before_spark(query, message, tmp_path,
                                                                                events_table, capsys):  # fmt: skip
    from jobs.aggregate import main

    workload = tmp_path / "w.hamlet"
    workload.write_text(query + "\n")
    column = {"vehicle": query.find("vehicle"), "duraton": query.find("T.duraton"),
              "MAX": query.find("T.district"), "condition": query.find("T.district")}  # fmt: skip
    at = next(c for word, c in column.items() if word in message) + 1
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events_table, "--output-table", str(tmp_path / "out")]) == 1  # fmt: skip
    assert capsys.readouterr().err == (
        f"error: {workload}:1:{at}: query 'q': {message.format(table=events_table, known=KNOWN)}\n"
        f"  {query}\n  {' ' * (at - 1)}^\n"
    )
    assert not (tmp_path / "out").exists()


def test_hamlet_check_reads_the_attributes_of_the_events_table(tmp_path, events_table, workload_file, capsys):
    from hamlet.cli import main

    assert main(["check", str(workload_file), "--events-table", events_table]) == 0
    assert capsys.readouterr().out == (
        f"{workload_file}: 4 queries OK (q1, q2, q3, q4); its attributes fit the events table {events_table}\n"
    )
    assert main(["check", str(workload_file), "--events-table", str(tmp_path / "none")]) == 1
    assert capsys.readouterr().err == (
        f"error: no Delta table at {tmp_path / 'none'} (create one with `hamlet generate` or `hamlet load-events`)\n"
    )


def test_a_spark_failure_exits_non_zero(spark, events_table, workload_file, tmp_path, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the output table should go")
    code = aggregate(events_table, blocker / "trend_aggregates", workload_file,
                     datetime(2026, 1, 5, 8, tzinfo=UTC), datetime(2026, 1, 5, 9, tzinfo=UTC))  # fmt: skip
    assert code == 1
    assert "error: aggregation failed" in capsys.readouterr().err
    assert spark.range(3).count() == 3  # the shared session survives


def test_a_window_too_long_for_any_timestamp_is_refused_before_spark_starts(tmp_path, capsys):
    from jobs.aggregate import main

    workload = tmp_path / "w.hamlet"
    workload.write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+)\n  WITHIN 1000000000000000000000000000000 s\n")
    argv = ["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
            "--events-table", str(tmp_path / "none"), "--output-table", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error: {workload}:2:10: query 'q': 1000000000000000000000000000000 s is longer than 100 years "
        "(3155760000 s), the longest window or slide")  # fmt: skip


def test_two_workloads_runs_of_one_hour_keep_their_own_run_stats(spark, events_table, workload_file, hour_run,
                                                                  tmp_path):  # fmt: skip
    # The hourly DAGs of two workloads give their runs of an hour the same run id (scheduled__<hour end>):
    # run_stats rows are keyed by run id, workload and query set, so the second run adds its rows.
    _, start, end = hour_run
    run = ["--run-id", "scheduled__2026-01-05T09:00:00+00:00"]
    for name in ("first", "second"):
        assert (
            aggregate(
                events_table, tmp_path / "out", workload_file, start, end, "--workload-name", name, *run
            )
            == 0
        )
    stats = table(spark, tmp_path / "run_stats").select("workload", "query_set", "status").collect()
    assert sorted(tuple(s) for s in stats) == [
        ("first", 0, "committed"), ("first", 1, "committed"), ("second", 0, "committed"), ("second", 1, "committed")
    ]  # fmt: skip


def test_the_input_gate_passes_every_type_to_a_workload_with_a_contiguous_query(
    spark, events_table, tmp_path
):
    # The gate quarantines no event for its type: a contiguous query reads every event of its partition (a
    # Pickup or Cancel breaks a Request-Travel run), the others leave out the types they do not name, and the
    # gated job still equals `hamlet evaluate` on every event of the table.
    from jobs.pipeline import load_config
    from jobs.validate import validate_events

    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    hour = table(spark, Path(events_table)).where(
        f"event_time >= TIMESTAMP'{start:%Y-%m-%d %H:%M:%S}' AND event_time < TIMESTAMP'{end:%Y-%m-%d %H:%M:%S}'"
    )
    in_hour = hour.count()
    unnamed = hour.where("event_type NOT IN ('Request', 'Travel', 'Dropoff')").count()
    assert unnamed > 0  # Pickup and Cancel events, which no query of SEMANTICS_WORKLOAD names
    contiguous, other = tmp_path / "semantics.hamlet", tmp_path / "no_cont.hamlet"
    contiguous.write_text(SEMANTICS_WORKLOAD, encoding="utf-8")
    other.write_text(SEMANTICS_WORKLOAD.split("qcont:")[0], encoding="utf-8")  # the same without qcont

    # without a contiguous query, the types no query names are no bad rows either (they were quarantined,
    # and refused the hour: unnamed / in_hour is above max_bad_fraction)
    assert unnamed / in_hour > 0.05
    config = load_config(pipeline_conf(tmp_path / "other.toml", events_table, other, tmp_path / "other"))
    report = validate_events(config, start, end, "gate-other", spark=spark)
    assert (report.rows, report.bad_rows) == (in_hour, 0)

    config = load_config(pipeline_conf(tmp_path / "cont.toml", events_table, contiguous, tmp_path / "cont"))
    report = validate_events(config, start, end, "gate-cont", spark=spark)
    assert (report.rows, report.bad_rows) == (in_hour, 0)
    out = tmp_path / "cont" / "trend_aggregates"
    assert aggregate(events_table, out, contiguous, start, end, "--workload-name", "semantics",
                     "--quarantine-table", config.quarantine_table) == 0  # fmt: skip
    expected = evaluated_rows(contiguous, events_table, tmp_path, start, end)
    assert {r.query for r in expected} == {"qany", "qnext", "qcont"}
    assert_equals_evaluated(spark, out, expected)


def evaluated_rows(workload, events_table, tmp_path, start, end) -> list:
    """What ``hamlet evaluate`` gives on the table's events exported to CSV, windows ending in (start, end],
    as the output table's rows: the reference the job is held to."""
    from pyspark.sql import Row

    csv_path = export_csv(events_table, tmp_path / "events.csv")
    jsonl = tmp_path / "expected.jsonl"
    assert hamlet_main(["evaluate", "--workload", str(workload), "--events", str(csv_path),
                        "--output", str(jsonl)]) == 0  # fmt: skip
    low, high = calendar.timegm(start.timetuple()), calendar.timegm(end.timetuple())
    expected = []
    for r in read_jsonl(jsonl):
        if not low < r["window_end"] <= high:
            continue
        value = r["value"]
        exact = None if value is None else repr(value) if isinstance(value, float) else str(value)
        expected.append(Row(query=r["query"], window_start=datetime.fromtimestamp(r["window_start"], UTC).replace(tzinfo=None),
                            window_end=datetime.fromtimestamp(r["window_end"], UTC).replace(tzinfo=None),
                            group={k: str(v) for k, v in r["group"].items()}, aggregate=r["aggregate"],
                            value=None if value is None else float(value), value_exact=exact))  # fmt: skip
    return expected


def assert_equals_evaluated(spark, out: Path, expected: list) -> None:
    """The output table's rows are ``expected`` (``evaluated_rows``), digit for digit."""
    from pyspark.testing import assertDataFrameEqual

    schema = "query string, window_start timestamp, window_end timestamp, `group` map<string,string>, " \
             "aggregate string, value double, value_exact string"  # fmt: skip
    actual = table(spark, out).select(
        "query", "window_start", "window_end", "group", "aggregate", "value", "value_exact"
    )
    assertDataFrameEqual(actual, spark.createDataFrame(expected, schema))
