"""The Airflow tests' environment (imported by conftest.py before anything imports Airflow): an Airflow home (SQLite) and the pipeline's settings in a temporary folder, set before
Airflow is first imported (it reads its configuration then); the tables are real Delta tables there.

The tests run the DAGs for real: ``dag.test()`` in this process (its Spark session is the test run's one,
shared with the validation tasks; the aggregation task is a real spark-submit), and the end-to-end test
starts Airflow's API server, scheduler and DAG processor."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.airflow_home import environment
from jobs.logs import quiet

WORK = Path(tempfile.mkdtemp(prefix="hamlet-airflow-tests-"))
HOME = WORK / "airflow"
START = datetime(2026, 1, 5, 8, tzinfo=UTC)  # the generated events hold 08:00-10:00
RATE = 300
SEED = 11


def write_conf(path: Path, tables: Path, max_bad_fraction: float = 0.05, catchup: str | None = None) -> Path:
    """Pipeline settings like conf/pipeline.toml, with every table and folder under ``tables``; ``catchup``
    is written as given (TOML), none by default."""
    path.write_text(
        f"""
strategy = "greta"
start_date = "2026-01-05T00:00:00+00:00"
[[workloads]]
file = "conf/workloads/rideshare_trips.hamlet"
scenario = "rideshare"
events = "{tables / "events"}"
[[workloads]]
file = "conf/workloads/factory_sensors.hamlet"
scenario = "sensor"
events = "{tables / "sensor_events"}"
[tables]
trend_aggregates = "{tables / "trend_aggregates"}"
run_stats = "{tables / "run_stats"}"
quarantine = "{tables / "quarantine"}"
[validation]
expectations = "expectations"
data_docs = "{tables / "data_docs"}"
reports = "{tables / "reports"}"
max_bad_fraction = {max_bad_fraction}
max_bad_output_fraction = 0.0
[schedule]
{"" if catchup is None else f"catchup = {catchup}"}
sensor_poke_seconds = 5
sensor_timeout_minutes = 1
max_active_runs = 1
retries = 2
retry_delay_minutes = 2
max_retry_delay_minutes = 20
""",
        encoding="utf-8",
    )
    return path


os.environ.update(environment(HOME))
os.environ["HAMLET_ENV"] = "test"
os.environ["HAMLET_PIPELINE_CONF"] = str(write_conf(WORK / "pipeline.toml", WORK / "tables"))
# local[2] through the connection, as a user would set it (an environment connection: no DB write needed).
os.environ["AIRFLOW_CONN_SPARK_DEFAULT"] = '{"conn_type": "spark", "host": "local[2]"}'

# Only now: importing Airflow reads the configuration from the environment above.
quiet()
pytest.importorskip("airflow")
# Present, not imported: the tasks import Great Expectations when they validate (~5 s), not the collection.
if importlib.util.find_spec("great_expectations") is None:
    pytest.skip("great_expectations is not installed", allow_module_level=True)
