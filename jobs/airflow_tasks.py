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

import attrs
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, BaseOperatorLink, task
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


def hourly_doc(config: PipelineConfig, entry: Any) -> str:
    """The hourly DAG's page (doc_md) for the workload ``entry`` (a ``jobs.pipeline.WorkloadEntry``)."""
    return f"""
### Trend aggregates of `{entry.name}`, hour by hour

Each run covers one hour of events, its data interval `[start, end)`, and writes the aggregates of every
window of the workload **`{entry.workload.name}`** that ends in `(start, end]` — so the runs of
consecutive hours together equal one run over the whole range, and rerunning an hour replaces its rows.

1. **wait_for_events** — waits (reschedule mode, up to {config.sensor_timeout_minutes} min) until the events
   table holds the hour: its partition, or a later one.
2. **validate_events** — Great Expectations (`expectations/events.json`, `events_{entry.scenario}.json`):
   rows that fail (null ids, unknown event types, duplicate ids, values out of range, times outside the
   hour) go to the quarantine table with the reason; above {config.max_bad_fraction:.0%} bad rows the run fails.
3. **aggregate** — `spark-submit jobs/aggregate.py` on the connection `spark_default` (edit it to run on a
   cluster), strategy `{config.strategy}`, leaving quarantined rows out. It waits for the previous hour's
   `aggregate` to succeed (`depends_on_past`): its read-ahead reads the previous hour, whose bad rows must
   be in quarantine first, so hours are aggregated in order on every path (scheduler, backfills of any
   max active runs, clears).
4. **verify_commit** — the Delta commit of this run for this hour must exist in the output table.
5. **validate_aggregates** — Great Expectations on the rows written (`expectations/trend_aggregates.json`);
   success updates the Asset `hamlet_trend_aggregates`, which downstream DAGs can be scheduled on.

Each validation task's **Data Docs** and the **Report** of the workload are links on the task (Extra Links).
Tables: events `{entry.events_table}`, output `{config.output_table}`, quarantine
`{config.quarantine_table}`; Data Docs per run under `{config.data_docs}` (the latest
{config.data_docs_keep_runs} runs kept). Settings: `{config.source}`.
Catchup is **{"on" if config.catchup else "off"}** (`[schedule] catchup`): unpausing this DAG runs
{"every hour since the start date" if config.catchup else "only the latest complete hour"}, then each new
hour. Backfill past hours: **Trigger → Backfill** in this DAG's page, or
`airflow backfill create --dag-id {entry.dag_id} --reprocess-behavior failed --from-date 2026-01-05T00:00:00+00:00 --to-date 2026-01-05T05:00:00+00:00` (both bounds inclusive: the hours 00:00 to 05:00).
"""


# ------------------------------------------------------------------------- links from every task (Extra Links)


def _base_url() -> str:
    from airflow.configuration import conf

    return str(conf.get("api", "base_url", fallback="") or "http://127.0.0.1:8080").rstrip("/")


@attrs.define
class DataDocsLink(BaseOperatorLink):
    """The run's Data Docs of one stage (``<data_docs>/<workload>/<run>/<stage>``), served by the API server
    (jobs/airflow_plugin.py). The ad hoc DAG's workload is a Param: its link is rendered from it."""

    stage: str = "events"
    workload: str = ""

    @property
    def name(self) -> str:
        return "Data Docs (input)" if self.stage == "events" else "Data Docs (output)"

    @property
    def xcom_key(self) -> str:
        return f"_link_DataDocsLink_{self.stage}"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        from jobs.validate import docs_folder

        workload = self.workload or _rendered_workload(operator)
        if not workload:  # (not rendered yet) the list of the workloads' Data Docs
            return f"{_base_url()}/hamlet/data_docs/"
        folder = docs_folder(Path(workload), ti_key.run_id)
        return f"{_base_url()}/hamlet/data_docs/{folder.as_posix()}/{self.stage}/index.html"


def _rendered_workload(operator: Any) -> str:
    """The workload name in a task's rendered arguments (the ad hoc DAG's Param, when the task ran): the
    ``--workload`` of spark-submit or of the job's arguments in a Python task (``[spark] server = true``), or
    the ``.hamlet`` file among a Python task's arguments."""
    op_args = getattr(operator, "op_args", None) or []
    args = [str(a) for a in (getattr(operator, "application_args", None) or [])]
    args += [str(a) for argv in op_args if isinstance(argv, list) for a in argv]
    values = args[args.index("--workload") + 1 :][:1] if "--workload" in args else []
    values += [str(a) for a in op_args if not isinstance(a, list)]
    found = [v for v in values if v.endswith(".hamlet") and "{{" not in v]
    return Path(found[0]).stem if found else ""


@attrs.define
class ReportLink(BaseOperatorLink):
    """The workload's report (charts per query, the optimizer's decisions per run), refreshed by validate_aggregates."""

    workload: str = ""

    @property
    def name(self) -> str:
        return "Report"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        return f"{_base_url()}/hamlet/reports/{self.workload + '.html' if self.workload else ''}"


def linked(operator: Any, workload: str) -> Any:
    """``operator`` (or the operator of a decorated task's XComArg) with the links to its run's Data Docs and
    its workload's report. The ad hoc DAG's workload is a Param, unknown when the DAG is parsed: its tasks link
    to the list of reports."""
    target = getattr(operator, "operator", operator)
    name = "" if "{{" in workload else Path(workload).stem
    target.operator_extra_links = (
        DataDocsLink("events", name),
        DataDocsLink("trend_aggregates", name),
        ReportLink(name),
    )
    return operator


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

    return linked(wait(config.events_table, str(config.workload), start, end), str(config.workload))


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
        events_table = load_config(source).for_workload(request.workload).events_table
        print(
            f"workload {workload}, [{request.start.isoformat()}, {request.end.isoformat()}), events {events_table}"
        )
        return {"workload": workload, "start": request.start.isoformat(), "end": request.end.isoformat(),
                "events_table": events_table}  # fmt: skip

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
            config = config.for_workload(path)  # its scenario's suite and its events table
            ensure(config.spark_server)  # [spark] server: join the long-lived Spark Connect server
            report = GATES[stage](config, start, end, str(run_id), workload=path)
        except (
            PipelineError
        ) as failed:  # the gate closed, or a bad workload or time: retrying changes nothing
            raise AirflowFailException(str(failed)) from None
        print(report.summary())
        if stage == "aggregates":  # the workload's report, refreshed with this run's rows (a second or so)
            from jobs.report import write_report

            name = Path(path).stem
            page = write_report(
                config.output_table, config.stats_table, config.reports / f"{name}.html", [name]
            )
            print(f"report: {page}")
        # The counts as XCom (Airflow logs the returned value: the summary's text would print twice).
        return {"rows_in": report.rows, "quarantined": report.bad_rows, "rows_out": report.rows - report.bad_rows,
                "data_docs": str(report.docs / "index.html") if report.docs else None}  # fmt: skip

    return run(str(config.source), stage, workload, start, end)


def aggregate(
    config: PipelineConfig,
    workload: str,
    start: str,
    end: str,
    strategy: str,
    events_table: str | None = None,
    in_order: bool = False,
) -> Any:
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
        "--events-table": events_table or config.events_table, "--output-table": config.output_table,
        "--stats-table": config.stats_table, "--quarantine-table": config.quarantine_table,
        "--run-id": "{{ run_id }}",
    }  # fmt: skip
    allowed = [part for choice in workload_choices(config) for part in ("--allowed-workload", choice)]
    argv = [part for pair in arguments.items() for part in pair] + allowed
    if config.spark_server:
        return _aggregate_on_server(argv, in_order)
    return SparkSubmitOperator(
        task_id="aggregate",
        conn_id="spark_default",
        application=str(ROOT / "jobs" / "aggregate.py"),
        name="hamlet-aggregate",
        application_args=argv,
        jars=jars,
        conf=submit_conf(),
        # Hourly runs: wait for the previous hour's aggregate (its quarantine is this run's read-ahead).
        depends_on_past=in_order,
        env_vars={
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYSPARK_PYTHON": PYTHON,
            "PYSPARK_DRIVER_PYTHON": PYTHON,
        },
    )


def _aggregate_on_server(argv: list[str], in_order: bool):  # type: ignore[no-untyped-def]
    """``aggregate`` with ``[spark] server = true``: ``jobs.aggregate.main`` in the task's process, a client of
    the Spark Connect server (a spark-submit would start a JVM only to launch this same Python). A failed job
    fails the task as a failed spark-submit does (same retries); its error line is in the log. ``in_order``:
    as the spark-submit task, wait for the previous hour's aggregate."""

    @task(task_id="aggregate", depends_on_past=in_order)
    def run(argv: list[str]) -> None:
        from jobs.aggregate import main
        from jobs.spark_server import ensure

        ensure(True)
        if main(argv, prog="aggregate") != 0:
            raise AirflowException("the aggregation failed: its error is the line above")

    return run(argv)


def verify_commit(config: PipelineConfig, workload: str, start: str, end: str):  # type: ignore[no-untyped-def]
    """The Delta commit of this run for this interval exists (spark-submit's exit status is not trusted)."""

    @task(task_id="verify_commit", retries=0)
    def verify(output_table: str, stats_table: str, workload: str, start: str, end: str,
               run_id: str | None = None) -> dict:  # fmt: skip
        import time

        from jobs.pipeline import PipelineError, instant, verify_commit, workload_name
        from jobs.summary import Summary

        started = time.perf_counter()
        try:
            commit = verify_commit(
                output_table, str(run_id), workload_name(workload), start, end, stats_table
            )
        except PipelineError as missing:  # the table's history will not change by asking again: no retries
            raise AirflowFailException(str(missing)) from None
        note = (f"run {run_id} committed version {commit['version']} of {output_table}" if commit["version"] is not None
                else f"run {run_id} found no trend ending in the interval: nothing to commit to {output_table}")  # fmt: skip
        print(Summary("verify_commit", workload_name(workload), instant(start), instant(end),
                      time.perf_counter() - started, rows_out=commit["rows"], note=note).line())  # fmt: skip
        return commit

    return verify(config.output_table, config.stats_table, workload, start, end)


def pipeline(config: PipelineConfig, workload: str, start: str, end: str, strategy: str,
             checked: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """[check_params →] validate_events → aggregate → verify_commit → validate_aggregates; returns (first,
    last). ``checked``: the times and workload are Params, checked first."""
    events = linked(validate(config, "events", workload, start, end), workload)
    last = linked(
        validate(config, "aggregates", workload, start, end, outlets=(aggregates_asset(config),)), workload
    )
    # The ad hoc DAG's workload is a Param: its events table is the one check_params found for it.
    events_table = "{{ ti.xcom_pull(task_ids='check_params')['events_table'] }}" if checked else None
    (
        events
        >> linked(
            aggregate(config, workload, start, end, strategy, events_table, in_order=not checked), workload
        )
        >> linked(verify_commit(config, workload, start, end), workload)
        >> last
    )
    if not checked:
        return events, last
    first = linked(check_params(config, workload, start, end), workload)
    first >> events
    return first, last
