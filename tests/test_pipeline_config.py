"""conf/pipeline.toml's workloads ([[workloads]], one hourly DAG each) and the older single-workload shape;
every mistake is a PipelineError naming the file and the entry (no Airflow, no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.pipeline import ROOT, PipelineError, load_config

TOP = """strategy = "hamlet"
start_date = "2026-01-05T00:00:00+00:00"
"""
REST = """[tables]
trend_aggregates = "t/out"
run_stats = "t/stats"
quarantine = "t/q"
[validation]
expectations = "expectations"
data_docs = "t/docs"
max_bad_fraction = 0.05
max_bad_output_fraction = 0.0
[schedule]
sensor_poke_seconds = 60
sensor_timeout_minutes = 180
max_active_runs = 1
retries = 2
retry_delay_minutes = 2
max_retry_delay_minutes = 20
"""


def write(tmp_path: Path, head: str) -> Path:
    path = tmp_path / "pipeline.toml"
    path.write_text(TOP + head + REST, encoding="utf-8")  # (top-level keys before any [[workloads]] table)
    return path


def test_the_shipped_settings_list_both_workloads():
    config = load_config(ROOT / "conf" / "pipeline.toml")
    assert [(e.dag_id, e.scenario, e.events_table) for e in config.workloads] == [
        ("hamlet_trends_hourly_rideshare_trips", "rideshare", str(ROOT / "var/tables/events")),
        ("hamlet_trends_hourly_factory_sensors", "sensor", str(ROOT / "var/tables/sensor_events")),
    ]
    # the first is the default; for_workload picks another by path (as written or absolute) or name
    assert (config.workload, config.scenario) == (ROOT / "conf/workloads/rideshare_trips.hamlet", "rideshare")
    for name in ("conf/workloads/factory_sensors.hamlet", str(ROOT / "conf/workloads/factory_sensors.hamlet"),
                 "factory_sensors"):  # fmt: skip
        sensor = config.for_workload(name)
        assert (sensor.scenario, sensor.events_table) == ("sensor", str(ROOT / "var/tables/sensor_events"))
    assert config.for_workload("conf/workloads/stock.hamlet") == config  # not listed: the first's events
    assert (config.data_docs_keep_runs, config.reports) == (48, ROOT / "var/reports")


def test_the_older_single_workload_shape_still_loads(tmp_path):
    head = 'workload = "conf/workloads/stock.hamlet"\nscenario = "stock"\n'
    path = write(tmp_path, head)
    path.write_text(
        path.read_text().replace("[tables]\n", '[tables]\nevents = "t/events"\n'), encoding="utf-8"
    )
    config = load_config(path)
    assert [(e.name, e.scenario, e.events_table) for e in config.workloads] == [
        ("stock", "stock", str(ROOT / "t/events"))
    ]


@pytest.mark.parametrize(
    ("head", "message"),
    [
        ('[[workloads]]\nfile = "conf/workloads/stock.hamlet"\nscenario = "stock"\n',
         "workload 1 of [[workloads]] lacks events (text)"),
        ('[[workloads]]\nfile = "conf/workloads/stock.hamlet"\nscenario = "weather"\nevents = "e"\n',
         "workload 1 of [[workloads]]: unknown scenario 'weather'; known: rideshare, stock, sensor"),
        (('[[workloads]]\nfile = "a/stock.hamlet"\nscenario = "stock"\nevents = "e"\n'
          '[[workloads]]\nfile = "b/stock.hamlet"\nscenario = "stock"\nevents = "f"\n'),
         "two workloads of [[workloads]] are named stock: each gets its own DAG and rows, so names must differ"),
        ('[[workloads]]\nfile = "conf/x y.hamlet"\nscenario = "stock"\nevents = "e"\n',
         "workload 1 of [[workloads]]: workload name 'x y': use letters, digits, '_', '.', '-'"),
        ("workloads = []\n", "[[workloads]] must list at least one workload (file, scenario, events)"),
        ("", "workload is missing (or list the workloads as [[workloads]])"),
    ],
)  # fmt: skip
def test_mistakes_in_the_workloads_are_named(tmp_path, head, message):
    path = write(tmp_path, head)
    with pytest.raises(PipelineError) as error:
        load_config(path)
    assert str(error.value) == f"{path}: {message}"


def test_data_docs_retention_must_be_a_positive_number(tmp_path):
    path = write(
        tmp_path, '[[workloads]]\nfile = "conf/workloads/stock.hamlet"\nscenario = "stock"\nevents = "e"\n'
    )
    path.write_text(path.read_text().replace("[validation]\n", "[validation]\ndata_docs_keep_runs = 0\n"))
    with pytest.raises(PipelineError) as error:
        load_config(path)
    assert str(error.value) == f"{path}: [validation] data_docs_keep_runs must be a positive integer, not 0"


def test_settings_that_are_not_a_regular_file_are_refused_before_any_read(tmp_path):
    """A device never ends and a FIFO blocks: HAMLET_PIPELINE_CONF=/dev/zero must not hang a task."""
    import os

    os.mkfifo(tmp_path / "fifo")
    for path in ("/dev/zero", tmp_path / "fifo", tmp_path):
        with pytest.raises(
            PipelineError, match=f"^cannot read pipeline settings {path}: not a regular file$"
        ):
            load_config(path)
