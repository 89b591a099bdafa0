"""One long-lived Spark Connect server (``jobs/spark_server.py``) on 127.0.0.1, the input gate and the job run
against it as separate processes (``HAMLET_SPARK_REMOTE``, as the pipeline's tasks do with ``[spark] server =
true``): the same rows as the local run, the run's statistics committed, no JVM started by the clients."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from spark_env import ROOT, pipeline_conf
from spark_env import START as EVENTS_START

from jobs.schema import NOT_YET_A_TABLE

pytestmark = pytest.mark.slow  # end to end: a Spark Connect server and its clients

START, END = datetime(2026, 1, 5, 8, tzinfo=UTC), datetime(2026, 1, 5, 9, tzinfo=UTC)
HAMLET = str(Path(sys.executable).parent / "hamlet")
# The line every JVM prints when it starts (conf/spark/log4j2.properties cannot reach it): a Connect client
# that printed it would have started a JVM of its own.
JVM_START = "Using incubator modules"


def run(command: list[str], env: dict[str, str], status: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=400, check=False
    )
    assert done.returncode == status, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_gate_and_the_job_over_one_spark_connect_server_equal_the_local_run(
    spark, spark_server, events_table, workload_file, tmp_path
):
    """The run's one server (tests/spark/conftest.py); starting one where it runs joins it. (A task starting
    it, and stopping it by its PID: tests/airflow/test_rest_e2e.py.)"""
    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import main
    from jobs.pipeline import load_config
    from jobs.validate import validate_events

    server = [sys.executable, "-m", "jobs.spark_server"]
    port = spark_server["HAMLET_SPARK_SERVER_PORT"]
    status = run([*server, "status"], spark_server).stdout.strip()
    running = re.fullmatch(rf"spark-server: running \(pid (\d+)\) at sc://127\.0\.0\.1:{port}", status)
    assert running, status
    pid = int(running[1])
    assert run([*server, "start"], spark_server).stdout.startswith(f"spark-server: running (pid {pid})")

    # The input gate (Great Expectations on Spark) as a client, against the same gate in this process.
    conf = pipeline_conf(
        tmp_path / "pipeline.toml", events_table, workload_file, tmp_path / "remote", server=True
    )
    gate = run([HAMLET, "validate", "events", "--start", START.isoformat(), "--end", END.isoformat(),
                "--run-id", "remote", "--conf", str(conf)], spark_server)  # fmt: skip
    local_conf = pipeline_conf(
        tmp_path / "local.toml", events_table, workload_file, tmp_path / "local", server=True
    )
    local_gate = validate_events(load_config(local_conf), START, END, "local", spark=spark)
    assert local_gate.rows > 100
    expected = f"{local_gate.rows} rows in, {local_gate.bad_rows} quarantined, "
    assert expected in gate.stdout.splitlines()[-1], gate.stdout
    assert JVM_START not in gate.stderr

    # The job as a client: the same rows as the local run, its statistics committed.
    args = ["--workload", str(workload_file), "--start", START.isoformat(), "--end", END.isoformat(),
            "--events-table", events_table, "--workload-name", "trips"]  # fmt: skip
    assert main([*args, "--output-table", str(tmp_path / "local" / "out")]) == 0
    job = run([HAMLET, "aggregate", *args, "--output-table", str(tmp_path / "remote" / "out"),
               "--run-id", "remote-run"], spark_server)  # fmt: skip
    assert "rows written" in job.stdout and JVM_START not in job.stderr
    columns = ["workload", "query", "window_start", "window_end", "group", "group_key", "aggregate", "value",
               "value_exact", "strategy", "window_end_date"]  # fmt: skip
    local = spark.read.format("delta").load(str(tmp_path / "local" / "out")).select(*columns)
    assert local.count() > 100
    assertDataFrameEqual(
        spark.read.format("delta").load(str(tmp_path / "remote" / "out")).select(*columns), local
    )
    stats = spark.read.format("delta").load(str(tmp_path / "remote" / "run_stats")).collect()
    assert {(r.run_id, r.status) for r in stats} == {("remote-run", "committed")}
    assert len({r.output_version for r in stats}) == 1 and stats[0].output_version is not None


def test_hours_of_one_day_committed_at_once_over_spark_connect_are_retried(spark, spark_server, events_table,
                                                                           workload_file, tmp_path):  # fmt: skip
    """Three hourly jobs of one day at once, each a Connect client process (concurrent backfill runs with
    ``[spark] server = true``): their commits to the same window_end_date partition conflict on the server,
    the clients get Delta's conflicts (not Connect's UnknownException) and commit again; the three together
    equal one local run over the three hours."""
    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import build_parser, make_plan, run

    def argv(start, end, output: Path) -> list[str]:
        return ["--workload", str(workload_file), "--start", start.isoformat(), "--end", end.isoformat(),
                "--events-table", events_table, "--output-table", str(output), "--strategy", "greta"]  # fmt: skip

    output, whole = tmp_path / "connect" / "trend_aggregates", tmp_path / "whole" / "trend_aggregates"
    hours = [EVENTS_START + timedelta(hours=h) for h in range(4)]
    jobs = [subprocess.Popen([HAMLET, "aggregate", *argv(start, end, output), "--run-id", f"hour-{start:%H}"],
                             env=spark_server, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for start, end in pairwise(hours)]  # fmt: skip
    finished = [(job.wait(timeout=600), *job.communicate()) for job in jobs]
    for status, out, err in finished:
        assert status == 0, f"{out[-2000:]}\n{err[-3000:]}"
        assert JVM_START not in err
    retried = {
        name
        for _, _, err in finished
        for name in re.findall(r": ([\w\[\]]+) \(a concurrent commit won\)", err)
    }
    # Delta's own classes (ProtocolChangedException: two jobs creating the output table at once; the
    # AnalysisException: a creation that found the winner's files before its first commit, schema.NOT_YET_A_TABLE)
    assert "ConcurrentAppendException" in retried, "no commit conflicted: the test proved nothing"
    assert retried <= {"ConcurrentAppendException", "ProtocolChangedException", "MetadataChangedException",
                       f"AnalysisException[{NOT_YET_A_TABLE}]"}  # fmt: skip
    run(spark, make_plan(build_parser().parse_args(argv(hours[0], hours[-1], whole))))
    columns = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
    assertDataFrameEqual(spark.read.format("delta").load(str(output)).select(*columns),
                         spark.read.format("delta").load(str(whole)).select(*columns))  # fmt: skip
    stats = spark.read.format("delta").load(str(output.parent / "run_stats")).collect()
    assert sorted({(r.run_id, r.status) for r in stats}) == [
        (f"hour-{h:%H}", "committed") for h in hours[:-1]
    ]


def test_two_workloads_runs_of_one_hour_keep_their_own_run_stats_over_spark_connect(
    spark, spark_server, events_table, workload_file, tmp_path
):
    # The hourly DAGs of two workloads give their runs of an hour the same run id: over Connect too, run_stats
    # rows are merged and completed by run id, workload and query set (the second run adds its rows).
    args = ["--workload", str(workload_file), "--start", START.isoformat(), "--end", END.isoformat(),
            "--events-table", events_table, "--output-table", str(tmp_path / "out"), "--strategy", "greta",
            "--run-id", "scheduled__2026-01-05T09:00:00+00:00"]  # fmt: skip
    for name in ("first", "second"):
        run([HAMLET, "aggregate", *args, "--workload-name", name], spark_server)
    stats = (
        spark.read.format("delta").load(str(tmp_path / "run_stats")).select("workload", "query_set", "status")
    )
    assert sorted(tuple(s) for s in stats.collect()) == [
        ("first", 0, "committed"), ("first", 1, "committed"), ("second", 0, "committed"), ("second", 1, "committed")
    ]  # fmt: skip


def test_the_server_keeps_none_of_the_streams_of_the_process_that_started_it(spark_server):
    """The server reads nothing and writes its log: an Airflow task's stdin is its supervisor's channel, which
    waits for every holder to close it. A server that inherited it kept the task that started it running (a
    LocalExecutor slot busy) until the server stopped: 57 s of the REST test's run."""
    state = ROOT / "var" / "spark-server" / spark_server["HAMLET_SPARK_SERVER_PORT"]
    pid = int((state / "pid").read_text(encoding="utf-8"))
    streams = [Path(os.readlink(f"/proc/{pid}/fd/{fd}")) for fd in (0, 1, 2)]
    assert streams == [Path("/dev/null"), state / "server.log", state / "server.log"]
