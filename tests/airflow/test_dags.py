"""The DAG files: they load without errors, without importing Spark or Great Expectations at parse time,
and declare the tasks, schedule, catchup (a setting), retries, tags and Params users rely on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest

HOURLY_TASKS = {
    "wait_for_events": set(),
    "validate_events": {"wait_for_events"},
    "aggregate": {"validate_events"},
    "verify_commit": {"aggregate"},
    "validate_aggregates": {"verify_commit"},
}


@pytest.fixture(scope="module")
def dags():
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag()
    assert bag.import_errors == {}
    return bag.dags


def test_the_dag_folder_holds_the_two_pipeline_dags(dags):
    # one hourly DAG per workload of the settings ([[workloads]]), one ad hoc DAG
    assert set(dags) == {"hamlet_trends_hourly_rideshare_trips", "hamlet_trends_hourly_factory_sensors",
                         "hamlet_trends_adhoc"}  # fmt: skip


def upstream(dag) -> dict[str, set[str]]:
    return {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}


def test_the_hourly_dag_runs_hour_intervals_without_catchup_with_retries_and_tags(dags, config):
    from airflow.sdk import CronDataIntervalTimetable

    dag = dags["hamlet_trends_hourly_rideshare_trips"]
    assert upstream(dag) == HOURLY_TASKS
    # not a plain cron (zero-length intervals in Airflow 3): hour-long data intervals in UTC
    assert dag.timetable == CronDataIntervalTimetable("0 * * * *", timezone="UTC")
    # the test settings have no [schedule] catchup: off, Airflow 3's default (unpausing runs the latest hour)
    assert config.catchup is False
    assert dag.catchup is False
    assert dag.start_date == config.start_date
    assert dag.max_active_runs == 1
    assert dag.tags == {"hamlet", "trends", "hourly", "rideshare_trips"}
    assert "validate_events" in dag.doc_md and "backfill create" in dag.doc_md
    assert (
        "Catchup is **off** (`[schedule] catchup`): unpausing this DAG runs\nonly the latest complete hour"
        in dag.doc_md
    )
    for task in dag.tasks:
        # verify_commit reads the table's history: asking again cannot change it (AirflowFailException)
        assert (task.retries, task.retry_delay, task.retry_exponential_backoff) == (
            0 if task.task_id == "verify_commit" else 2,
            timedelta(minutes=2),
            True,
        )
        assert task.max_retry_delay == timedelta(minutes=20)
    sensor = dag.get_task("wait_for_events")
    assert (sensor.mode, sensor.poke_interval, sensor.timeout) == ("reschedule", 5, 60)
    aggregate = dag.get_task("aggregate")
    assert aggregate.task_type == "SparkSubmitOperator"
    assert aggregate._conn_id == "spark_default"
    args = aggregate.application_args
    assert args[args.index("--start") + 1] == "{{ data_interval_start.isoformat() }}"
    assert args[args.index("--end") + 1] == "{{ data_interval_end.isoformat() }}"
    assert args[args.index("--quarantine-table") + 1] == config.quarantine_table
    (outlet,) = dag.get_task("validate_aggregates").outlets
    assert outlet.name == "hamlet_trend_aggregates"
    assert outlet.uri.endswith("/tables/trend_aggregates")


def test_catchup_is_the_setting_of_the_pipeline_conf(tmp_path, monkeypatch):
    from airflow.dag_processing.dagbag import DagBag
    from airflow_env import write_conf

    from jobs.pipeline import DEFAULT_CONF, PipelineError, load_config

    assert load_config(DEFAULT_CONF).catchup is False  # the shipped conf/pipeline.toml
    monkeypatch.setenv(
        "HAMLET_PIPELINE_CONF", str(write_conf(tmp_path / "on.toml", tmp_path, catchup="true"))
    )
    bag = DagBag()
    assert bag.import_errors == {}
    hourly = bag.dags["hamlet_trends_hourly_rideshare_trips"]
    assert (hourly.catchup, bag.dags["hamlet_trends_adhoc"].catchup) == (True, False)
    assert (
        "Catchup is **on** (`[schedule] catchup`): unpausing this DAG runs\nevery hour since the start date"
        in hourly.doc_md
    )
    off = write_conf(tmp_path / "off.toml", tmp_path, catchup="false")
    assert load_config(off).catchup is False
    quoted = write_conf(tmp_path / "quoted.toml", tmp_path, catchup='"false"')
    with pytest.raises(PipelineError) as error:
        load_config(quoted)
    assert str(error.value) == f"{quoted}: [schedule] catchup must be true or false, not 'false'"


def test_the_adhoc_dag_is_triggered_with_workload_range_and_strategy(dags):
    dag = dags["hamlet_trends_adhoc"]
    assert upstream(dag) == {
        "check_params": set(),
        **{k: v - {"wait_for_events"} for k, v in HOURLY_TASKS.items() if k != "wait_for_events"},
        "validate_events": {"check_params"},
    }
    assert dag.get_task("check_params").retries == 0
    assert type(dag.timetable).__name__ == "NullTimetable"  # triggered only
    assert dag.catchup is False
    assert dag.tags == {"hamlet", "trends", "adhoc"}
    params = dag.params.dump()
    assert params == {
        "workload": "conf/workloads/rideshare_trips.hamlet",
        "start": "2026-01-05T00:00:00+00:00",  # the settings' start_date: the demo's first hours
        "end": "2026-01-05T02:00:00+00:00",
        "strategy": "greta",
    }
    assert dag.params.get_param("strategy").schema["enum"] == ["greta", "static", "hamlet"]
    assert dag.params.get_param("workload").schema["enum"] == [
        "conf/workloads/cluster.hamlet", "conf/workloads/factory_sensors.hamlet", "conf/workloads/heartbeat.hamlet",
        "conf/workloads/rideshare.hamlet",
        "conf/workloads/rideshare50.hamlet", "conf/workloads/rideshare_trips.hamlet", "conf/workloads/stock.hamlet",
        "conf/workloads/traffic.hamlet",
    ]  # fmt: skip
    args = dag.get_task("aggregate").application_args
    assert args[args.index("--strategy") + 1] == "{{ params.strategy }}"
    assert args[args.index("--allowed-workload") :: 2] == ["--allowed-workload"] * 8
    # the workload is a Param: the events table is the one check_params found for it
    assert (
        args[args.index("--events-table") + 1]
        == "{{ ti.xcom_pull(task_ids='check_params')['events_table'] }}"
    )
    # a range at once: no order between runs to keep
    assert dag.get_task("aggregate").depends_on_past is False


def test_parsing_the_dags_imports_neither_spark_nor_great_expectations():
    probe = (
        "import sys, json\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        "bag = DagBag()\n"
        "print(json.dumps([sorted(bag.dags), sorted(bag.import_errors),\n"
        "                  [m for m in ('pyspark', 'great_expectations') if m in sys.modules]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=os.environ.copy(), capture_output=True, text=True,
                          timeout=300, check=True)  # fmt: skip
    dags, errors, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    assert (dags, errors, heavy) == (
        [
            "hamlet_trends_adhoc",
            "hamlet_trends_hourly_factory_sensors",
            "hamlet_trends_hourly_rideshare_trips",
        ],
        [],
        [],
    )


def test_each_workload_has_its_hourly_dag_with_its_events_and_suite(dags, config):
    dag = dags["hamlet_trends_hourly_factory_sensors"]
    assert upstream(dag) == HOURLY_TASKS
    assert dag.tags == {"hamlet", "trends", "hourly", "factory_sensors"}
    sensor = config.for_workload("conf/workloads/factory_sensors.hamlet")
    assert (sensor.scenario, sensor.events_table) == (
        "sensor",
        str(config.source.parent / "tables" / "sensor_events"),
    )
    args = dag.get_task("aggregate").application_args
    assert args[args.index("--workload") + 1] == "conf/workloads/factory_sensors.hamlet"
    assert args[args.index("--events-table") + 1] == sensor.events_table
    assert "`events_sensor.json`" in dag.doc_md and f"events `{sensor.events_table}`" in dag.doc_md
    # hours in order on every path (backfills bring their own max active runs): each hour's aggregate waits
    # for the previous hour's, whose quarantine its read-ahead needs
    for hourly in (dag, dags["hamlet_trends_hourly_rideshare_trips"]):
        assert {t.task_id: t.depends_on_past for t in hourly.tasks} == {
            "wait_for_events": False, "validate_events": False, "aggregate": True, "verify_commit": False,
            "validate_aggregates": False,
        }  # fmt: skip


def test_every_task_links_to_its_runs_data_docs_and_its_workloads_report(dags):
    from airflow.serialization.serialized_objects import DagSerialization

    key = type("Key", (), {"run_id": "scheduled__2026-01-05T01:00:00+00:00"})()
    for dag_id, report in [("hamlet_trends_hourly_factory_sensors", "reports/factory_sensors.html"),
                           ("hamlet_trends_adhoc", "reports/")]:  # fmt: skip
        dag = dags[dag_id]
        # as the API server sees them (the serialized DAG): three links on every task
        served = DagSerialization.deserialize_dag(DagSerialization.serialize_dag(dag))
        assert {t.task_id: sorted(t.extra_links) for t in served.tasks} == {
            t.task_id: ["Data Docs (input)", "Data Docs (output)", "Report"] for t in dag.tasks
        }
        # the ad hoc DAG's workload is a Param: its links are made from the task's rendered arguments, those
        # of spark-submit or (``[spark] server = true``) the job's arguments of the Python task
        argv = ["--workload", "conf/workloads/factory_sensors.hamlet", "--start", "2026-01-05T01:00:00+00:00"]
        for arguments in ({"application_args": argv}, {"op_args": [argv]}):
            rendered = type("Rendered", (), arguments)()
            links = [
                link.get_link(rendered, ti_key=key) for link in dag.get_task("aggregate").operator_extra_links
            ]
            assert links == [
                "http://127.0.0.1:8080/hamlet/data_docs/factory_sensors/scheduled__2026-01-05T01_00_00_00_00/events/index.html",
                "http://127.0.0.1:8080/hamlet/data_docs/factory_sensors/scheduled__2026-01-05T01_00_00_00_00/trend_aggregates/index.html",
                f"http://127.0.0.1:8080/hamlet/{report}",
            ], arguments


def test_the_plugin_serves_only_files_inside_its_folders(config, tmp_path):
    from fastapi import HTTPException

    from jobs.airflow_plugin import served_file, served_folder

    config.reports.mkdir(parents=True, exist_ok=True)
    (config.reports / "factory_sensors.html").write_text("<p>report</p>")
    assert (
        served_file("reports", "factory_sensors.html") == (config.reports / "factory_sensors.html").resolve()
    )
    outside = tmp_path / "secret.html"
    outside.write_text("no")
    (config.reports / "link.html").symlink_to(outside)
    for path in ("../pipeline.toml", "link.html", "missing.html", "/etc/passwd"):
        with pytest.raises(HTTPException) as refused:
            served_file("reports", path)
        assert refused.value.status_code == 404
    assert served_folder("reports", "") == config.reports.resolve()
    with pytest.raises(HTTPException):
        served_folder("reports", "../")
