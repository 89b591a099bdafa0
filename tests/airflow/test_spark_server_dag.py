"""The hourly DAG with ``[spark] server = true``: ``airflow dags test`` in a process of its own (as a worker
runs the tasks: no Spark session of the test's), its Spark tasks all clients of one Spark Connect server that
the first of them starts. The rows equal the job's own run, and no task started a JVM."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from airflow_env import START, WORK, write_conf

pytestmark = pytest.mark.slow  # end to end: a DAG run, a Spark Connect server, Great Expectations

ROOT = Path(__file__).resolve().parents[2]
HOUR_START, HOUR_END = START + timedelta(hours=1), START + timedelta(hours=2)  # 09:00-10:00
KEY = ["query", "window_start", "window_end", "group_key", "aggregate", "value", "value_exact"]
JVM_START = "Using incubator modules"  # every JVM prints it when it starts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hour(spark, table: str):
    return (
        spark.read.format("delta")
        .load(table)
        .where(
            f"window_end > TIMESTAMP'{HOUR_START:%Y-%m-%d %H:%M:%S}' AND "
            f"window_end <= TIMESTAMP'{HOUR_END:%Y-%m-%d %H:%M:%S}'"
        )
        .select(*KEY)
    )


# An Airflow home of its own (migrated in a process of its own: Airflow reads its home once per process): the
# output table's Asset is named once per home, with the URI of the other pipeline tests' table in theirs.
PREPARE = (
    "import json, sys; from pathlib import Path; from jobs.airflow_home import environment, prepare; "
    "home = Path(sys.argv[1]); print(json.dumps(environment(home))); prepare(home)"
)


def test_the_hourly_dag_over_one_spark_connect_server(spark, clean_events):
    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import build_parser, make_plan, run

    tables = WORK / "server-tables"
    conf = write_conf(WORK / "server.toml", tables)
    conf.write_text(conf.read_text(encoding="utf-8") + "\n[spark]\nserver = true\n", encoding="utf-8")
    # The events are the clean ones of the other pipeline tests (its settings name them under their tables).
    text = conf.read_text(encoding="utf-8").replace(
        f'events = "{tables / "events"}"', f'events = "{clean_events}"'
    )
    conf.write_text(text, encoding="utf-8")
    port = free_port()
    env = {**os.environ, "HAMLET_PIPELINE_CONF": str(conf), "HAMLET_SPARK_SERVER_PORT": str(port)}
    env.pop("HAMLET_SPARK_REMOTE", None)
    home = subprocess.run([sys.executable, "-c", PREPARE, str(WORK / "server-airflow")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    env.update(json.loads(home.stdout.splitlines()[0]))
    server = [sys.executable, "-m", "jobs.spark_server"]
    airflow = str(Path(sys.executable).parent / "airflow")
    try:
        done = subprocess.run([airflow, "dags", "test", "hamlet_trends_hourly_rideshare_trips", HOUR_END.isoformat()], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        log = done.stdout + done.stderr
        assert done.returncode == 0 and "state=success, run_type=manual" in log, log[-5000:]
        assert "spark-server: started (pid " in log and f"at sc://127.0.0.1:{port}" in log
        assert log.count("spark-server: running (pid ") == 2  # the two later Spark tasks found it
        assert JVM_START not in log  # no task started a JVM: the server is the run's one Spark application
        for task in ("validate_events", "aggregate", "validate_aggregates"):
            assert f"\n{task} rideshare_trips [2026-01-05T09:00Z, 2026-01-05T10:00Z): " in log
    finally:
        stopped = subprocess.run(
            [*server, "stop"], env=env, cwd=ROOT, capture_output=True, text=True, check=False
        )
    assert stopped.stdout.startswith("spark-server: stopped (pid ")
    shutil.rmtree(ROOT / "var" / "spark-server" / str(port))  # its PID file and log (kept when a test fails)

    argv = ["--workload", "conf/workloads/rideshare_trips.hamlet", "--start", HOUR_START.isoformat(),
            "--end", HOUR_END.isoformat(), "--events-table", clean_events,
            "--output-table", str(WORK / "server-reference")]  # fmt: skip
    run(spark, make_plan(build_parser().parse_args(argv)))
    reference = hour(spark, str(WORK / "server-reference"))
    assert reference.count() > 100
    assertDataFrameEqual(hour(spark, str(tables / "trend_aggregates")), reference)
