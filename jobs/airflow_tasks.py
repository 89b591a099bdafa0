"""The tasks of the pipeline DAGs (``dags/``), one factory per step; each task calls one function of ``jobs/``.

    wait_for_events → validate_events → aggregate → verify_commit → validate_aggregates (→ the Asset)

The hourly DAG runs all five, the ad hoc DAG ``check_params`` (its Params: an offered workload, a bounded
range) instead of the sensor. Every task that opens the workload file first checks that it is one of
``workload_choices``: a Param must never make a task read (and quote in its log) any other file.

Times reach the tasks as Jinja templates: the hourly DAG passes its data interval, the ad hoc DAG its
Params. Imported at DAG-parse time, so nothing heavy is imported here: Great Expectations and Spark only
inside the running tasks.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, task
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from jobs.logs import quiet
from jobs.pipeline import ROOT, PipelineConfig, workload_choices

quiet()  # the DAG processor and every task process import this module first

# The interpreter running Airflow is the project's: spark-submit (found on PATH) and the Python of the
# Spark driver and workers must be the same venv's, else the workers lack pandas, pyarrow and hamlet.
PYTHON = sys.executable
VENV_BIN = str(Path(PYTHON).parent)


def default_args(config: PipelineConfig) -> dict[str, Any]:
    return {
        "owner": "hamlet-trends",
        "retries": config.retries,
        "retry_delay": timedelta(minutes=config.retry_delay_minutes),
        "retry_exponential_backoff": True,
        "max_retry_delay": timedelta(minutes=config.max_retry_delay_minutes),
    }


def aggregates_asset(config: PipelineConfig) -> Asset:
    """The output table as an Asset: downstream DAGs schedule on it (``schedule=[aggregates_asset(...)]``)."""
    uri = config.output_table if "://" in config.output_table else Path(config.output_table).as_uri()
    return Asset(name="hamlet_trend_aggregates", uri=uri)


def wait_for_events(config: PipelineConfig, start: str, end: str):  # type: ignore[no-untyped-def]
    """Sensor: the events table holds [start, end) completely (a partition for the last hour or a later
    one). Reschedule mode frees the worker slot between pokes."""

    @task.sensor(
        task_id="wait_for_events",
        poke_interval=config.sensor_poke_seconds,
        timeout=config.sensor_timeout_minutes * 60,
        mode="reschedule",
    )
    def wait(events_table: str, workload: str, start: str, end: str) -> bool:
        import time

        from jobs.pipeline import input_ready, instant, workload_name
        from jobs.summary import Summary

        started = time.perf_counter()
        ready = input_ready(events_table, start, end)
        note = "the events table holds the interval" if ready else "not complete yet, waiting"
        print(Summary("wait_for_events", workload_name(workload), instant(start), instant(end),
                      time.perf_counter() - started, note=note).line())  # fmt: skip
        return ready

    return wait(config.events_table, str(config.workload), start, end)


def check_params(config: PipelineConfig, workload: str, start: str, end: str):  # type: ignore[no-untyped-def]
    """The ad hoc DAG's first task: its Params checked (``jobs.pipeline.check_request``); a bad one fails
    the run at once, without retries (retrying does not change the Params)."""

    @task(task_id="check_params", retries=0)
    def check(source: str, workload: str, start: str, end: str) -> dict[str, str]:
        from jobs.pipeline import PipelineError, check_request, load_config

        try:
            request = check_request(load_config(source), workload, start, end)
        except PipelineError as error:
            raise AirflowFailException(str(error)) from None
        print(f"workload {workload}, [{request.start.isoformat()}, {request.end.isoformat()})")
        return {"workload": workload, "start": request.start.isoformat(), "end": request.end.isoformat()}

    return check(str(config.source), workload, start, end)


def validate(config: PipelineConfig, stage: str, workload: str, start: str, end: str,
             outlets: tuple[Asset, ...] = ()):  # type: ignore[no-untyped-def]  # fmt: skip
    """Great Expectations on the input (``stage="events"``) or on the rows the run wrote
    (``"aggregates"``): bad rows are quarantined; the task fails without retries (retrying does not change
    the data) when the gate closes, its log naming the failed expectations."""

    @task(task_id=f"validate_{stage}", outlets=list(outlets))
    def run(source: str, stage: str, workload: str, start: str, end: str, run_id: str | None = None) -> dict:
        from jobs.pipeline import PipelineError, allowed_workload, load_config
        from jobs.spark_server import ensure
        from jobs.validate import GATES

        try:
            config = load_config(source)
            path = str(allowed_workload(workload, workload_choices(config)))
            ensure(config.spark_server)  # [spark] server: join the long-lived Spark Connect server
            report = GATES[stage](config, start, end, str(run_id), workload=path)
        except (
            PipelineError
        ) as failed:  # the gate closed, or a bad workload or time: retrying changes nothing
            raise AirflowFailException(str(failed)) from None
        print(report.summary())
        # The counts as XCom (Airflow logs the returned value: the summary's text would print twice).
        return {"rows_in": report.rows, "quarantined": report.bad_rows, "rows_out": report.rows - report.bad_rows,
                "data_docs": str(report.docs / "index.html") if report.docs else None}  # fmt: skip

    return run(str(config.source), stage, workload, start, end)


def aggregate(config: PipelineConfig, workload: str, start: str, end: str, strategy: str):  # type: ignore[no-untyped-def]
    """The Spark job through ``spark-submit`` on the connection ``spark_default`` (local[*] as set up by
    scripts/airflow; point the connection at a cluster to run there), with the Delta jars of ``var/jars`` on
    its class path and the project's Spark settings and logging (``jobs.session.submit_conf``): one JVM, no
    dependency resolution. Without the jars (setup not run) it is submitted bare and the job says what is
    missing. With ``[spark] server = true`` the job runs in the task's process as a client of the Spark
    Connect server instead: no JVM at all in the task."""
    from jobs.jars import JarsMissing, jar_paths
    from jobs.session import submit_conf

    try:
        jars: str | None = ",".join(str(p) for p in jar_paths())
    except JarsMissing:
        jars = None
    arguments = {
        "--workload": workload, "--start": start, "--end": end, "--strategy": strategy,
        "--events-table": config.events_table, "--output-table": config.output_table,
        "--stats-table": config.stats_table, "--quarantine-table": config.quarantine_table,
        "--run-id": "{{ run_id }}",
    }  # fmt: skip
    allowed = [part for choice in workload_choices(config) for part in ("--allowed-workload", choice)]
    argv = [part for pair in arguments.items() for part in pair] + allowed
    if config.spark_server:
        return _aggregate_on_server(argv)
    return SparkSubmitOperator(
        task_id="aggregate",
        conn_id="spark_default",
        application=str(ROOT / "jobs" / "aggregate.py"),
        name="hamlet-aggregate",
        application_args=argv,
        jars=jars,
        conf=submit_conf(),
        env_vars={
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYSPARK_PYTHON": PYTHON,
            "PYSPARK_DRIVER_PYTHON": PYTHON,
        },
    )


def _aggregate_on_server(argv: list[str]):  # type: ignore[no-untyped-def]
    """``aggregate`` with ``[spark] server = true``: ``jobs.aggregate.main`` in the task's process, a client of
    the Spark Connect server (a spark-submit would start a JVM only to launch this same Python). A failed job
    fails the task as a failed spark-submit does (same retries); its error line is in the log."""

    @task(task_id="aggregate")
    def run(argv: list[str]) -> None:
        from jobs.aggregate import main
        from jobs.spark_server import ensure

        ensure(True)
        if main(argv, prog="aggregate") != 0:
            raise AirflowException("the aggregation failed: its error is the line above")

    return run(argv)


def verify_commit(config: PipelineConfig, workload: str, start: str, end: str):  # type: ignore[no-untyped-def]
    """The Delta commit of this run for this interval exists (spark-submit's exit status is not trusted)."""

    @task(task_id="verify_commit")
    def verify(output_table: str, workload: str, start: str, end: str, run_id: str | None = None) -> dict:
        import time

        from jobs.pipeline import instant, verify_commit, workload_name
        from jobs.summary import Summary

        started = time.perf_counter()
        commit = verify_commit(output_table, str(run_id), workload_name(workload), start, end)
        print(Summary("verify_commit", workload_name(workload), instant(start), instant(end),
                      time.perf_counter() - started, rows_out=commit["rows"],
                      note=f"run {run_id} committed version {commit['version']} of {output_table}").line())  # fmt: skip
        return commit

    return verify(config.output_table, workload, start, end)


def pipeline(config: PipelineConfig, workload: str, start: str, end: str, strategy: str,
             checked: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """[check_params →] validate_events → aggregate → verify_commit → validate_aggregates; returns (first,
    last). ``checked``: the times and workload are Params, checked first."""
    events = validate(config, "events", workload, start, end)
    last = validate(config, "aggregates", workload, start, end, outlets=(aggregates_asset(config),))
    (
        events
        >> aggregate(config, workload, start, end, strategy)
        >> verify_commit(config, workload, start, end)
        >> last
    )
    if not checked:
        return events, last
    first = check_params(config, workload, start, end)
    first >> events
    return first, last
