"""The hourly DAG run for real (``dag.test()``: sensor, GX validation, spark-submit, commit check, output
validation) on local Spark and Delta tables in a temporary folder, and the validation gates on bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from airflow_env import START, WORK, write_conf

pytestmark = pytest.mark.slow  # end to end: DAG runs, spark-submit, Great Expectations

HOUR_START, HOUR_END = START + timedelta(hours=1), START + timedelta(hours=2)  # 09:00-10:00
KEY = ["query", "window_start", "window_end", "group_key", "aggregate", "value", "value_exact"]


def direct_run(events_table: str, output: str, quarantine: str | None = None):
    """The Spark job itself on [09:00, 10:00), into its own output table: the reference for the DAG."""
    from jobs.aggregate import build_parser, make_plan

    argv = ["--workload", "conf/workloads/rideshare_trips.hamlet", "--start", HOUR_START.isoformat(),
            "--end", HOUR_END.isoformat(), "--events-table", events_table, "--output-table", output]  # fmt: skip
    if quarantine:
        argv += ["--quarantine-table", quarantine]
    return make_plan(build_parser().parse_args(argv))


def aggregates(spark, table: str, run_id: str | None = None):
    frame = spark.read.format("delta").load(table).where(
        f"window_end > TIMESTAMP'{HOUR_START:%Y-%m-%d %H:%M:%S}' AND "
        f"window_end <= TIMESTAMP'{HOUR_END:%Y-%m-%d %H:%M:%S}'"
    )  # fmt: skip
    if run_id is not None:
        assert {r.run_id for r in frame.select("run_id").distinct().collect()} == {run_id}
    return frame.select(*KEY)


@pytest.fixture(scope="module")
def reference(spark, clean_events):
    """The job's rows for 09:00-10:00 of the clean events (the job equals `hamlet evaluate`: tests/spark)."""
    from jobs.aggregate import run

    output = str(WORK / "reference" / "trend_aggregates")
    result = run(spark, direct_run(clean_events, output))
    assert result.rows_written == aggregates(spark, output).count() > 100
    return output


def hourly_dag():
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag()
    assert bag.import_errors == {}
    return bag.dags["hamlet_trends_hourly_rideshare_trips"]


def run_hourly(logical_date: datetime):
    """A manual run, as Trigger in the UI or dag.test() make it: the hour that ends at ``logical_date``."""
    run = hourly_dag().test(logical_date=logical_date)
    return run, {ti.task_id: ti.state for ti in run.get_task_instances()}


def backfill_dry_run(first: datetime, last: datetime) -> list[str]:
    """The logical dates for which `airflow backfill create` would make a run (the real CLI, this home)."""
    command = [str(Path(sys.executable).parent / "airflow"), "backfill", "create", "--dry-run",
               "--dag-id", "hamlet_trends_hourly_rideshare_trips", "--reprocess-behavior", "failed", "--from-date", first.isoformat(),
               "--to-date", last.isoformat()]  # fmt: skip
    done = subprocess.run(
        command, env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=True
    )
    return re.findall(r"\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00) \|", done.stdout)


def test_the_hourly_dag_runs_one_hour_end_to_end(airflow_home, spark, config, clean_events, reference, capfd,
                                                  tmp_path):  # fmt: skip
    from pyspark.testing import assertDataFrameEqual

    from jobs.demo import run_scheduled, scheduled_runs
    from jobs.tables import read_arrow

    # as scripts/demo runs an hour: the run the scheduler makes for [09:00, 10:00)
    (scheduled,) = scheduled_runs(hourly_dag(), HOUR_START, 1)
    run = run_scheduled(hourly_dag(), scheduled)
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert (run.run_id, run.run_type, run.logical_date) == (
        "scheduled__2026-01-05T10:00:00+00:00",
        "scheduled",
        HOUR_START,
    )
    assert (run.data_interval_start, run.data_interval_end) == (HOUR_START, HOUR_END)
    assert states == dict.fromkeys(
        ["wait_for_events", "validate_events", "aggregate", "verify_commit", "validate_aggregates"], "success"
    )
    assert run.state == "success"
    # true start and end dates (dag.test() starts its run at the logical date: the UI showed months)
    assert timedelta(0) < run.end_date - run.start_date < timedelta(minutes=30)
    assert_the_ui_counts_it(airflow_home, run, tmp_path)
    # a backfill of 08:00-10:00 finds the run of 09:00 and makes runs for the other two hours only
    assert backfill_dry_run(HOUR_START - timedelta(hours=1), HOUR_END) == [
        "2026-01-05 08:00:00+00:00",
        "2026-01-05 10:00:00+00:00",
    ]
    assertDataFrameEqual(aggregates(spark, config.output_table, run.run_id), aggregates(spark, reference))
    # the whole output table is this run's windows, the run's statistics are stored, nothing was quarantined
    assert aggregates(spark, config.output_table).count() == spark.read.format("delta").load(
        config.output_table).count()  # fmt: skip
    stats = spark.read.format("delta").load(config.stats_table).select("run_id", "query_set").collect()
    assert sorted(stats) == [(run.run_id, 0), (run.run_id, 1)]  # {q1, q2, q3} and {q4}
    assert read_arrow(config.quarantine_table).num_rows == 0
    folder = run.run_id.replace(":", "_").replace("+", "_")
    for stage in ("events", "trend_aggregates"):
        assert (config.data_docs / "rideshare_trips" / folder / stage / "index.html").is_file()
    assert_quiet_log_with_summaries(capfd.readouterr(), spark, config, run.run_id)


def assert_the_ui_counts_it(home: Path, run, tmp_path: Path) -> None:
    """The run as the UI shows it, from a real API server on this home: triggered by the CLI (scripts/demo),
    not "dag_test", and counted by Home's run statistics (its request: the runs whose run_after lies in the
    chosen range, the last 24 hours by default) as one successful run."""
    from services import AirflowApi, api_environment, api_server, free_port, started

    port = free_port()
    with started({"api-server": api_server(port)}, api_environment(port), tmp_path) as services:
        api = AirflowApi(f"http://127.0.0.1:{port}", home, services)
        api.wait(
            "the API server", 240, lambda: api.http.get(f"{api.base}/api/v2/monitor/health", timeout=10).ok
        )
        api.login()
        shown = api.api("GET", f"/dags/{run.dag_id}/dagRuns/{quote(run.run_id, safe='')}")
        assert (shown["run_type"], shown["triggered_by"], shown["state"]) == ("scheduled", "cli", "success")
        # Home's request, for a range that holds this run only
        this_run = {"start_date": run.start_date.isoformat(), "end_date": run.end_date.isoformat()}
        response = api.http.get(
            f"{api.base}/ui/dashboard/historical_metrics_data", params=this_run, timeout=30
        )
        assert response.status_code == 200, response.text
        assert {k: v for k, v in response.json()["dag_run_states"].items() if v} == {"success": 1}


def assert_quiet_log_with_summaries(log, spark, config, run_id: str) -> None:
    """Each task's log holds its one-line summary with the exact counts, and none of the noise: no Ivy,
    no Great Expectations registrations, no Spark start-up warnings."""
    text = log.out + log.err
    for noise in (":: resolving dependencies", "Ivy Default Cache", "Skipping registering function",
                  "Using an existing Spark session", "resolves to a loopback address", "NativeCodeLoader",
                  "Truncated the string representation", "Closing down clientserver connection"):  # fmt: skip
        assert noise not in text
    events = spark.read.format("delta").load(config.events_table).where("event_hour = 9").count()
    written = aggregates(spark, config.output_table).count()
    (stats,) = spark.read.format("delta").load(config.stats_table).where("query_set = 0").collect()
    bursts = sum(int(r.engine_stats["shared_bursts"]) for r in spark.read.format("delta").load(
        config.stats_table).collect())  # fmt: skip
    version = len(spark.sql(f"DESCRIBE HISTORY delta.`{config.output_table}`").collect()) - 1
    interval = re.escape("rideshare_trips [2026-01-05T09:00Z, 2026-01-05T10:00Z): ")
    seconds = r", \d+\.\d s"
    for line in (
        rf"wait_for_events {interval}the events table holds the interval{seconds}",
        rf"validate_events {interval}{events} rows in, 0 quarantined, {events} rows out{seconds}",
        (
            rf"aggregate {interval}{stats.events_read} rows in, 0 quarantined, {written} rows out, {bursts} shared "
            rf"bursts{seconds}"
        ),
        (
            rf"verify_commit {interval}{written} rows out, run {re.escape(run_id)} committed version {version} of "
            rf"{re.escape(config.output_table)}{seconds}"
        ),
        rf"validate_aggregates {interval}{written} rows in, 0 quarantined, {written} rows out{seconds}",
    ):
        assert re.search(line, text), line


# --------------------------------------------------------------------------------------------- bad input

BAD_ROWS = [  # (event_id, event_type, minute, speed, duration, request_type, expected quarantine reasons)
    (None, "Request", 30, None, None, "Pool", {"event_id is null"}),
    ("bad-1", None, 30, None, None, None, {"event_type is null"}),
    ("bad-dup", "Travel", 31, 12.0, 20, None, {"event_id 'bad-dup' occurs more than once in the hour"}),
    ("bad-dup", "Travel", 32, 13.0, 20, None, {"event_id 'bad-dup' occurs more than once in the hour"}),
    ("bad-3", "Travel", 33, 500.0, 20, None, {"speed 500.0 is not a speed in mph (0 to 200)"}),
    ("bad-4", "Travel", 34, 10.0, -5, None, {"duration -5 is not a duration in seconds (0 to 86400)"}),
    ("bad-5", "Request", 35, None, None, "Limo", {"request_type 'Limo' is neither Pool nor Single"}),
    ("bad-6", "Travel", 95, 10.0, 20, None, {"event_time 2026-01-05 10:35:00 lies outside the interval read"}),
    ("bad-7", "Travel", None, 10.0, -1, None, {"event_time is null",
                                                "duration -1 is not a duration in seconds (0 to 86400)"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def bad_events(spark, clean_events):
    """The clean events plus BAD_ROWS in the 09:00 partition; the bad Travel events belong to a real trip
    of that hour, so counting them would change its aggregates."""
    from pyspark.sql import functions as F

    from jobs.schema import scenario_schema

    path = str(WORK / "bad-tables" / "events")
    clean = spark.read.format("delta").load(clean_events)
    clean.write.format("delta").partitionBy("event_date", "event_hour").save(path)
    trip = clean.where("event_type = 'Travel' AND event_hour = 9").orderBy("event_time").first()
    rows = [(i, t, None if m is None else HOUR_START + timedelta(minutes=m), trip.driver, trip.rider, trip.district,
             r, s, d, HOUR_START.date(), 9) for i, t, m, s, d, r, _ in BAD_ROWS]  # fmt: skip
    bad = spark.createDataFrame(rows, scenario_schema("rideshare").simpleString().removeprefix("struct<")[:-1]
                                .replace(":", " ").replace(",", ", "))  # fmt: skip
    bad.select(*clean.columns).write.format("delta").mode("append").save(path)
    assert spark.read.format("delta").load(path).where(F.col("event_hour") == 9).count() == (
        clean.where("event_hour = 9").count() + len(BAD_ROWS)
    )
    return path


def bad_config(max_bad_fraction: float):
    from jobs.pipeline import load_config

    conf = write_conf(WORK / f"bad-{max_bad_fraction}.toml", WORK / "bad-tables", max_bad_fraction)
    return load_config(conf)


def test_bad_rows_are_quarantined_with_reasons_and_the_good_rows_processed(spark, bad_events, reference):
    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import read_events, run, summary
    from jobs.validate import validate_events

    config = bad_config(0.05)
    report = validate_events(config, HOUR_START, HOUR_END, "bad-run", spark=spark)
    assert report.bad_rows == len(BAD_ROWS)  # every bad row once, however many expectations it fails
    assert report.passed and report.bad_fraction < 0.05
    quarantined = spark.read.format("delta").load(config.quarantine_table).collect()
    assert {(q.stage, q.workload, q.run_id) for q in quarantined} == {
        ("events", "rideshare_trips", "bad-run")
    }
    found: dict[str | None, set[str]] = {}
    for q in quarantined:
        found.setdefault(json.loads(q.row)["event_id"], set()).add(q.reason)
    expected: dict[str | None, set[str]] = {}
    for event_id, *_, reasons in BAD_ROWS:
        expected.setdefault(event_id, set()).update(reasons)
    assert found == expected
    assert {q.expectation for q in quarantined} >= {
        "expect_column_values_to_not_be_null(event_id)", "expect_column_values_to_be_unique(event_id)",
        "expect_column_values_to_not_be_null(event_type)", "expect_column_values_to_be_between(speed)",
    }  # fmt: skip

    output = str(WORK / "bad-tables" / "trend_aggregates")
    plan = direct_run(bad_events, output, quarantine=config.quarantine_table)
    unguarded = direct_run(bad_events, output)
    # without the quarantine the job would read the bad rows of known types inside the range: the null id
    # Request, "Limo", the duplicates, the speed and the duration out of range
    assert read_events(spark, unguarded).count() == read_events(spark, plan).count() + 6
    result = run(spark, plan)
    interval = "rideshare_trips [2026-01-05T09:00Z, 2026-01-05T10:00Z)"
    # rows in: every event of the range, whatever its type (the null type too); quarantined: those 6 and it
    assert summary(result, 2.0).line() == (
        f"aggregate {interval}: {result.events_read + 7} rows in, 7 quarantined, {result.rows_written} rows out, "
        f"{result.shared_bursts} shared bursts, 2.0 s"
    )
    assert replace(report, seconds=1.5).line() == (
        f"validate_events {interval}: {report.rows} rows in, {len(BAD_ROWS)} quarantined, "
        f"{report.rows - len(BAD_ROWS)} rows out, 1.5 s"
    )
    assertDataFrameEqual(aggregates(spark, output), aggregates(spark, reference))


def test_a_column_of_the_wrong_type_fails_validation_naming_the_expectation(spark, clean_events):
    from pyspark.sql import functions as F

    from jobs.pipeline import load_config
    from jobs.validate import ValidationFailed, validate_events

    config = load_config(write_conf(WORK / "typed.toml", WORK / "typed-tables"))
    clean = spark.read.format("delta").load(clean_events).where("event_hour = 9")
    # driver only partitions the stream ([driver, rider]): the workload takes any type there, the suite not
    clean.withColumn("driver", F.lit(None).cast("bigint")).write.format("delta").partitionBy(
        "event_date", "event_hour").save(config.events_table)  # fmt: skip
    with pytest.raises(ValidationFailed) as failed:
        validate_events(config, HOUR_START, HOUR_END, "typed-run", spark=spark)
    assert "failed expect_column_values_to_be_in_type_list(driver): observed 'LongType'" in str(failed.value)


def test_a_workload_that_does_not_fit_the_events_table_fails_the_gate_before_spark(spark, clean_events):
    from pyspark.sql import functions as F

    from jobs.pipeline import load_config
    from jobs.validate import ValidationFailed, validate_events

    config = load_config(write_conf(WORK / "mistyped.toml", WORK / "mistyped-tables"))
    clean = spark.read.format("delta").load(clean_events).where("event_hour = 9")
    clean.withColumn("duration", F.col("duration").cast("string")).write.format("delta").partitionBy(
        "event_date", "event_hour").save(config.events_table)  # fmt: skip
    with pytest.raises(ValidationFailed) as failed:
        validate_events(config, HOUR_START, HOUR_END, "mistyped-run", spark=spark)
    workload = config.workload
    where = f"the events table {config.events_table}"
    line = "q{}: RETURN T.district, COUNT(*), SUM(T.duration)"
    column = line.format(1).index("T.duration") + 1
    assert str(failed.value) == "\n".join(
        f"{workload}:{n}:{column}: query 'q{q}': SUM(T.duration): SUM takes a number attribute; duration is string "
        f"in {where}\n  {line.format(q)}\n  {' ' * (column - 1)}^"
        for q, n in ((1, 8), (3, 22))
    )
    assert not Path(config.quarantine_table).exists()  # nothing ran


def test_over_the_threshold_the_validation_task_fails_naming_the_expectations(
    airflow_home, bad_events, monkeypatch, capfd
):
    config = bad_config(0.001)  # 9 bad rows of ~300 in the hour: about 3 %
    monkeypatch.setenv("HAMLET_PIPELINE_CONF", str(config.source))
    run, states = run_hourly(HOUR_END)
    assert run.state == "failed"
    assert states["validate_events"] == "failed"
    assert {states[t] for t in ("aggregate", "verify_commit", "validate_aggregates")} == {"upstream_failed"}
    log = capfd.readouterr()
    text = log.out + log.err
    assert "threshold 0.10%" in text
    for name in (
        "expect_column_values_to_not_be_null(event_id)",
        "expect_column_values_to_be_unique(event_id)",
        "expect_column_values_to_not_be_null(event_type)",
        "expect_column_values_to_be_between(duration)",
    ):
        assert f"failed {name}" in text  # fmt: skip


def test_the_output_gate_refuses_a_missing_value_only_where_one_is_certain(spark, clean_events, reference):
    """COUNT rows always have a value; SUM(T.duration) one when no Travel event of its window lacks a
    duration. A null where a value is certain is quarantined; a null where a Travel of the window has no
    duration may be right, and is not. That Travel is stored as " Travel\t" (another tool's table): the job
    reads it as Travel, and so must the gate."""
    from pyspark.sql import functions as F

    from jobs.pipeline import load_config
    from jobs.validate import ValidationFailed, validate_aggregates

    config = load_config(write_conf(WORK / "nulls.toml", WORK / "nulls-tables"))
    events = spark.read.format("delta").load(clean_events)
    last = events.where("event_type = 'Travel' AND event_hour = 9").orderBy(F.desc("event_time")).first()
    it = F.col("event_id") == last.event_id
    events.withColumn("duration", F.when(it, None).otherwise(F.col("duration"))).withColumn(
        "event_type", F.when(it, " Travel\t").otherwise(F.col("event_type"))
    ).write.format("delta").partitionBy("event_date", "event_hour").save(config.events_table)
    rows = spark.read.format("delta").load(reference)
    sums = rows.where("aggregate = 'SUM(T.duration)'").orderBy("query", "window_end", "group_key")
    t = F.lit(last.event_time)
    maybe = sums.where((F.col("window_start") <= t) & (t < F.col("window_end"))).first()  # holds that Travel
    certain = sums.where(F.col("window_end") <= t).first()
    count = rows.where("aggregate = 'COUNT(*)'").orderBy("query", "window_end", "group_key").first()
    emptied = [(r.query, r.window_end, r.group_key, r.aggregate) for r in (maybe, certain, count)]
    key = F.struct("query", "window_end", "group_key", "aggregate")
    hit = key.isin([F.struct(*map(F.lit, e)) for e in emptied])
    rows.select(*[F.when(hit, None).otherwise(F.col(c)).alias(c) if c in ("value", "value_exact") else c
                  for c in rows.columns]).write.format("delta").partitionBy("workload", "window_end_date").save(
        config.output_table)  # fmt: skip
    with pytest.raises(ValidationFailed) as failed:
        validate_aggregates(config, HOUR_START, HOUR_END, "nulls-run", spark=spark)
    total = rows.count()
    assert f"failed expect_column_values_to_not_be_null(required_value): 2 of {total} rows" in str(
        failed.value
    )
    quarantined = spark.read.format("delta").load(config.quarantine_table).collect()
    reason = ("the aggregate has no value, but must have one: a COUNT always has one, a SUM, AVG, MIN or MAX over "
              "E.a one when every E event of its window has a value for a")  # fmt: skip
    assert sorted(
        (json.loads(q.row)["query"], json.loads(q.row)["aggregate"], q.reason) for q in quarantined
    ) == (sorted([(certain.query, "SUM(T.duration)", reason), (count.query, "COUNT(*)", reason)]))
