"""Spark fixtures: ONE local SparkSession per test run (local[2], conf/spark/test.toml), real Delta tables in
temporary folders, and a small generated rideshare events table shared by the job tests. The session itself
(``spark``) is in tests/conftest.py: the Airflow tests share it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("delta")

from spark_env import START

HOURS = 4
RATE = 400
SEED = 7

# Groups, equivalence, negation, an edge predicate, MIN/MAX and a query without GROUP-BY: two sharable
# query sets ({q1, q2, q4} share Travel+ and partition alike; q3 asks MIN/MAX and has no GROUP-BY), windows
# from 15 min to 1 h, every aggregate function.
WORKLOAD = """
q1: RETURN T.district, COUNT(*), SUM(T.duration)
    PATTERN SEQ(Request R, Travel T+, NOT Pickup P)
    WHERE [driver, rider]
    GROUP-BY T.district
    WITHIN 20 min SLIDE 5 min
q2: RETURN T.district, COUNT(*), AVG(T.speed)
    PATTERN SEQ(Request R, Travel T+, Dropoff D)
    WHERE [driver, rider] AND R.request_type = Pool
    GROUP-BY T.district
    WITHIN 30 min SLIDE 10 min
q3: RETURN COUNT(*), MIN(T.speed), MAX(T.duration)
    PATTERN SEQ(Request R, Travel T+, Cancel C)
    WHERE [driver, rider] AND T.speed < 10
    WITHIN 15 min SLIDE 5 min
q4: RETURN T.district, COUNT(T), SUM(T.speed)
    PATTERN SEQ(Pickup P, Travel T+, Dropoff D)
    WHERE [driver, rider] AND T.speed > NEXT(T).speed
    GROUP-BY T.district
    WITHIN 1 h SLIDE 30 min
"""


@pytest.fixture(scope="session")
def workload_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("workload") / "trips.hamlet"
    path.write_text(WORKLOAD, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def events_table(spark, tmp_path_factory) -> str:
    from jobs.generate import generate

    path = str(tmp_path_factory.mktemp("tables") / "events")
    generate(spark, "rideshare", START, HOURS, RATE, path, seed=SEED)
    return path


@pytest.fixture(scope="session")
def spark_server(tmp_path_factory):
    """ONE Spark Connect server per test run (``jobs.spark_server``, HAMLET_ENV=test, a free port) for the
    tests whose clients run as processes of their own: the environment such a client runs with
    (``HAMLET_SPARK_REMOTE``). Stopped by its PID at the end."""
    import os
    import shutil
    import subprocess
    import sys

    from spark_env import ROOT, free_port

    from jobs.session import JAVA_OPTIONS

    port = free_port()
    # long-lived: the C2 compiler pays (tests/conftest.py, LONG_LIVED_JVM)
    env = {
        **os.environ,
        "HAMLET_ENV": "test",
        "HAMLET_SPARK_SERVER_PORT": str(port),
        "HAMLET_SPARK_CONF": f"{JAVA_OPTIONS}=",
    }
    server = [sys.executable, "-m", "jobs.spark_server"]
    # (started with a pipe for stdin, as an Airflow task's supervisor gives its task one)
    subprocess.run([*server, "start"], env=env, cwd=ROOT, input="", capture_output=True, text=True, timeout=300,
                   check=True)  # fmt: skip
    yield {**env, "HAMLET_SPARK_REMOTE": f"sc://127.0.0.1:{port}"}
    subprocess.run([*server, "stop"], env=env, cwd=ROOT, capture_output=True, timeout=120, check=True)
    shutil.rmtree(ROOT / "var" / "spark-server" / str(port), ignore_errors=True)
