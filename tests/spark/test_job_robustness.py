"""The aggregation job when things go wrong (issue 20): killed between its output commit and its statistics,
or run for two hours of one day at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

from spark_env import START

ROOT = Path(__file__).resolve().parents[2]


def job_args(events: str, output: Path, workload: Path, start, end, run_id: str) -> list[str]:
    return ["--workload", str(workload), "--start", start.isoformat(), "--end", end.isoformat(), "--events-table",
            events, "--output-table", str(output), "--run-id", run_id, "--strategy", "greta"]  # fmt: skip


def job_command(events: str, output: Path, workload: Path, start, end, run_id: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys; from jobs.aggregate import main; sys.exit(main(sys.argv[1:]))",
        *job_args(events, output, workload, start, end, run_id),
    ]


def committed(output: Path, run_id: str) -> bool:
    """The output table's log holds a commit whose userMetadata names ``run_id``."""
    for entry in sorted((output / "_delta_log").glob("*.json")):
        for line in entry.read_text().splitlines():
            info = json.loads(line).get("commitInfo") or {}
            if run_id in (info.get("userMetadata") or ""):
                return True
    return False


def test_a_run_killed_right_after_its_output_commit_leaves_its_statistics(spark, events_table, workload_file,
                                                                          tmp_path):  # fmt: skip
    output = tmp_path / "trend_aggregates"
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    env = {**os.environ, "HAMLET_ENV": "test", "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(job_command(events_table, output, workload_file, start, end, "killed-run"), env=env,
                          cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True) as job:  # fmt: skip
        deadline = time.monotonic() + 600
        while not (output / "_delta_log").is_dir() or not committed(output, "killed-run"):
            assert job.poll() is None and time.monotonic() < deadline, (
                "the job ended before its output commit"
            )
            time.sleep(0.01)
        os.killpg(job.pid, signal.SIGKILL)  # the driver and its JVM, the moment the output commit landed
        job.wait(timeout=60)
    stats = spark.read.format("delta").load(str(tmp_path / "run_stats")).where("run_id = 'killed-run'")
    assert sorted((r.query_set, r.status) for r in stats.collect()) in (
        [(0, "pending"), (1, "pending")],
        [(0, "committed"), (1, "committed")],  # the kill came after the stats were completed
    )
    output_rows = spark.read.format("delta").load(str(output)).where("run_id = 'killed-run'")
    assert output_rows.count() == sum(r.rows_written for r in stats.collect()) > 0
    # Airflow's retry runs the task again with the same run id: its rows replace the first attempt's (here in
    # this process, on the test run's session: a JVM of its own would prove nothing more)
    from jobs.aggregate import main

    assert main(job_args(events_table, output, workload_file, start, end, "killed-run")) == 0
    # read again: a Delta DataFrame keeps the table version it was made at
    stats = spark.read.format("delta").load(str(tmp_path / "run_stats")).where("run_id = 'killed-run'")
    assert sorted((r.query_set, r.status) for r in stats.collect()) == [(0, "committed"), (1, "committed")]
    output_rows = spark.read.format("delta").load(str(output)).where("run_id = 'killed-run'")
    assert output_rows.count() == sum(r.rows_written for r in stats.collect())


def test_a_run_stats_table_of_the_old_schema_gains_the_status_columns(spark, events_table, workload_file,
                                                                      tmp_path):  # fmt: skip
    from pyspark.sql import functions as F

    from jobs.aggregate import build_parser, make_plan, run
    from jobs.schema import RUN_STATS_DDL, create_table

    stats_table = str(tmp_path / "run_stats")
    old_schema = RUN_STATS_DDL.replace(", status STRING, output_version BIGINT", "")
    create_table(spark, stats_table, old_schema)
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    argv = ["--workload", str(workload_file), "--start", start.isoformat(), "--end", end.isoformat(),
            "--events-table", events_table, "--output-table", str(tmp_path / "out"), "--run-id", "old-schema"]  # fmt: skip
    run(spark, make_plan(build_parser().parse_args(argv)))
    rows = spark.read.format("delta").load(stats_table).collect()
    assert sorted((r.query_set, r.status, r.output_version) for r in rows) == [(0, "committed", 1),
                                                                               (1, "committed", 1)]  # fmt: skip
    # A retry of the run (the same run id) replaces every row of the run and workload, of query sets it no
    # longer has too (the workload file changed between the attempts); other runs' and workloads' rows stay.
    table = spark.read.format("delta").load(stats_table)
    strays = [("old-schema", "trips", 7), ("old-schema", "other_workload", 0), ("another-run", "trips", 0)]
    for run_id, workload, query_set in strays:
        stray = (
            table.where("query_set = 0")
            .limit(1)
            .withColumns(
                {"run_id": F.lit(run_id), "workload": F.lit(workload), "query_set": F.lit(query_set)}
            )
        )
        stray.write.format("delta").mode("append").save(stats_table)
    run(spark, make_plan(build_parser().parse_args(argv)))
    rows = spark.read.format("delta").load(stats_table).collect()
    assert sorted((r.run_id, r.workload, r.query_set, r.status, r.output_version) for r in rows) == [
        ("another-run", "trips", 0, "committed", 1),
        ("old-schema", "other_workload", 0, "committed", 1),
        ("old-schema", "trips", 0, "committed", 2),
        ("old-schema", "trips", 1, "committed", 2),
    ]


def test_hours_of_one_day_written_at_once_all_commit(spark, events_table, workload_file, tmp_path, capfd):
    """Three hourly runs of one day at once (threads of one session, as concurrent backfill runs): they write
    the same window_end_date partition of both tables, so Delta fails all but one commit of each round; the
    job commits again, and the three together equal one run over the three hours."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import build_parser, make_plan, run

    def plan(start, end, output: Path):
        argv = ["--workload", str(workload_file), "--start", start.isoformat(), "--end", end.isoformat(),
                "--events-table", events_table, "--output-table", str(output), "--strategy", "greta"]  # fmt: skip
        return make_plan(build_parser().parse_args(argv))

    output, whole = tmp_path / "concurrent" / "trend_aggregates", tmp_path / "whole" / "trend_aggregates"
    hours = [START + timedelta(hours=h) for h in range(4)]
    plans = [plan(start, end, output) for start, end in pairwise(hours)]
    with ThreadPoolExecutor(len(plans)) as pool:
        results = list(pool.map(lambda p: run(spark, p), plans))
    assert all(r.rows_written > 0 for r in results)
    run(spark, plan(hours[0], hours[-1], whole))
    columns = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
    assertDataFrameEqual(spark.read.format("delta").load(str(output)).select(*columns),
                         spark.read.format("delta").load(str(whole)).select(*columns))  # fmt: skip
    stats = spark.read.format("delta").load(str(output.parent / "run_stats"))
    assert sorted({(r.run_id, r.status) for r in stats.collect()}) == sorted(
        (p.run_id, "committed") for p in plans
    )
    print(capfd.readouterr().err.count("a concurrent commit won"), "commits tried again")
