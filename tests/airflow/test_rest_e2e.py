"""End to end through Airflow's own processes: the API server, the scheduler and the DAG processor of the
venv's ``airflow`` run on 127.0.0.1 with the test environment (tests/airflow/conftest.py); the ad hoc DAG is
unpaused and triggered through the REST API as the UI does it (``logical_date: null`` and the Params as
conf), and its rows must equal those of a direct run of the Spark job. Its Spark tasks run as clients of one
Spark Connect server (``[spark] server = true``) that the first of them starts, as a team that runs the
pipeline all day would set it; test_pipeline.py runs the default, a JVM per task.

No triggerer: the ad hoc DAG has no deferrable task (SparkSubmitOperator and the @task functions run in the
LocalExecutor's workers). Every process is started in its own session (process group) and stopped at the
end, its children included; the test asserts that none is left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from services import AirflowApi, Service, alive, api_environment, api_server, free_port, started

pytestmark = pytest.mark.slow  # end to end: Airflow's API server, scheduler and DAG processor

DAG_ID = "hamlet_trends_adhoc"
WORKLOAD = "conf/workloads/rideshare_trips.hamlet"
START, END = "2026-01-05T09:00:00+00:00", "2026-01-05T10:00:00+00:00"
CONF = {"workload": WORKLOAD, "start": START, "end": END, "strategy": "hamlet"}
TASKS = {"check_params", "validate_events", "aggregate", "verify_commit", "validate_aggregates"}
SERVER = "\n[spark]\nserver = true\n"
SPARK_SERVER = [sys.executable, "-m", "jobs.spark_server"]
ROOT = Path(__file__).resolve().parents[2]
JVM_START = "Using incubator modules"  # every JVM prints it when it starts
COLUMNS = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
# Generous: 2 cores shared with other jobs. Measured at a load of 4-5: healthy after 10-12 s, the run
# 3.5-6 min with a JVM per task (1-2 min each); idle, 86 s with a JVM per task.
HEALTH_TIMEOUT = 240
DAG_TIMEOUT = 240
RUN_TIMEOUT = 600


# ----------------------------------------------------------------------------------------------- REST client


class Airflow(AirflowApi):
    """The running Airflow, and the ad hoc DAG's runs."""

    def __init__(self, base: str, home: Path, services: list[Service], env: dict[str, str]) -> None:
        super().__init__(base, home, services)
        self.env = env

    def task_instances(self, run_id: str) -> list[dict[str, Any]]:
        body = self.api("GET", f"/dags/{DAG_ID}/dagRuns/{quote(run_id, safe='')}/taskInstances")
        return body["task_instances"]

    def task_log(self, run_id: str, task_id: str, try_number: int) -> str:
        path = f"/dags/{DAG_ID}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}/logs/{try_number}"
        try:
            body = self.api(
                "GET", path, params={"full_content": "true"}, headers={"Accept": "application/json"}
            )
        except (AssertionError, requests.RequestException) as e:
            return f"(no log: {e})"
        lines = []
        for entry in body.get("content", []):
            if isinstance(entry, dict):
                extra = {k: v for k, v in entry.items() if k not in ("event", "timestamp", "level", "logger")}
                lines.append(f"{entry.get('timestamp', '')} {entry.get('level', '')} {entry.get('event', '')}"
                             + (f" {extra}" if extra else ""))  # fmt: skip
            else:
                lines.append(str(entry))
        return "\n".join(lines)

    def report(self, run_id: str) -> str:
        """Every task instance's state and log (all tries), then the tail of every process's log."""
        parts = []
        try:
            for ti in sorted(self.task_instances(run_id), key=lambda t: t.get("start_date") or ""):
                parts.append(f"=== {ti['task_id']}: {ti['state']} (try {ti['try_number']})")
                for attempt in range(1, (ti["try_number"] or 0) + 1):
                    parts.append(
                        f"--- log of try {attempt}:\n{self.task_log(run_id, ti['task_id'], attempt)}"
                    )
        except (AssertionError, requests.RequestException) as e:
            parts.append(f"(task instances not available: {e})")
        return "\n".join(parts) + "\n" + self.logs()


@pytest.fixture
def airflow(airflow_home: Path, clean_events: str, tmp_path: Path) -> Iterator[Airflow]:
    """API server, scheduler and DAG processor on a free port of 127.0.0.1, the pipeline's settings those of
    the other tests with ``[spark] server = true`` (tests/airflow/test_pipeline.py runs the default, a JVM per
    task); stopped (and checked to be gone) at the end, whatever happened, the Spark Connect server too."""
    port, spark_port = free_port(), free_port()
    conf = tmp_path / "pipeline.toml"
    conf.write_text(
        Path(os.environ["HAMLET_PIPELINE_CONF"]).read_text(encoding="utf-8") + SERVER, encoding="utf-8"
    )
    env = {
        **api_environment(port),
        "HAMLET_PIPELINE_CONF": str(conf),
        "HAMLET_SPARK_SERVER_PORT": str(spark_port),
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG": "2",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "10",
    }
    env.pop("HAMLET_SPARK_REMOTE", None)
    commands = {
        "api-server": api_server(port),
        "scheduler": ["scheduler"],
        "dag-processor": ["dag-processor"],
    }
    try:
        with started(commands, env, tmp_path) as services:
            yield Airflow(f"http://127.0.0.1:{port}", airflow_home, services, env)
    finally:  # (the test stops it and checks; this is for a test that failed before)
        subprocess.run(
            [*SPARK_SERVER, "stop"], env=env, cwd=ROOT, capture_output=True, timeout=120, check=False
        )
        shutil.rmtree(ROOT / "var" / "spark-server" / str(spark_port), ignore_errors=True)


# -------------------------------------------------------------------------------------------------- the test


def window_rows(table: str, run_id: str | None = None) -> list[tuple[str, ...]]:
    """The rows of workload rideshare_trips with window_end in (START, END], read with ``deltalake``."""
    import pandas as pd

    from jobs.tables import read_pandas

    frame = read_pandas(table, filters=[("workload", "=", "rideshare_trips")])
    ends = pd.to_datetime(frame["window_end"], utc=True)
    frame = frame[(ends > pd.Timestamp(START)) & (ends <= pd.Timestamp(END))]
    if run_id is not None:
        assert set(frame["run_id"]) == {run_id}, f"rows of other runs in {table}: {set(frame['run_id'])}"
    return sorted(
        (q, pd.Timestamp(s).isoformat(), pd.Timestamp(e).isoformat(), g, a, v)
        for q, s, e, g, a, v in frame[COLUMNS].itertuples(index=False, name=None)
    )


@pytest.fixture
def reference(spark, clean_events: str, tmp_path: Path) -> list[tuple[str, ...]]:
    """The Spark job run directly (strategy greta) on the same range into its own table."""
    from jobs.aggregate import main

    output = str(tmp_path / "reference" / "trend_aggregates")
    argv = ["--workload", WORKLOAD, "--start", START, "--end", END, "--events-table", clean_events,
            "--output-table", output, "--strategy", "greta"]  # fmt: skip
    assert main(argv) == 0
    rows = window_rows(output)
    assert len(rows) > 100
    return rows


def test_the_adhoc_dag_triggered_through_the_rest_api_equals_the_spark_job(config, reference, airflow):
    started = time.monotonic()

    def healthy() -> bool:
        response = airflow.http.get(f"{airflow.base}/api/v2/monitor/health", timeout=10)
        if response.status_code != 200:
            return False
        health = response.json()
        return all((health.get(part) or {}).get("status") == "healthy"
                   for part in ("metadatabase", "scheduler", "dag_processor"))  # fmt: skip

    airflow.wait("/api/v2/monitor/health: metadatabase, scheduler and dag_processor healthy",
                 HEALTH_TIMEOUT, healthy)  # fmt: skip
    print(f"\nAirflow healthy after {time.monotonic() - started:.0f} s at {airflow.base}")
    airflow.login()

    def serialized() -> dict[str, Any] | None:
        response = airflow.http.get(f"{airflow.base}/api/v2/dags/{DAG_ID}", timeout=10)
        return response.json() if response.status_code == 200 else None

    try:
        dag = airflow.wait(f"the DAG {DAG_ID} to be serialized", DAG_TIMEOUT, serialized)
    except pytest.fail.Exception as e:
        try:
            errors = json.dumps(airflow.api("GET", "/importErrors"), indent=1)
        except (AssertionError, requests.RequestException) as error:
            errors = f"(not available: {error})"
        pytest.fail(f"{e}\nimport errors: {errors}")
    print(f"{DAG_ID} serialized after {time.monotonic() - started:.0f} s (paused: {dag['is_paused']})")
    assert airflow.api("PATCH", f"/dags/{DAG_ID}", json={"is_paused": False})["is_paused"] is False

    # What the UI's Trigger form sends (airflow/ui: useTrigger): no logical date, the Params as conf.
    body = {"conf": CONF, "logical_date": None, "data_interval_start": None, "data_interval_end": None}
    # A Param naming a file outside conf/workloads/, or a time that is not one: refused, no run is made.
    # (counted from what is there: other tests of this Airflow home may have run this DAG before)
    runs_before = airflow.api("GET", f"/dags/{DAG_ID}/dagRuns")["total_entries"]
    for key, value in (("workload", "/etc/passwd"), ("start", "not a date")):
        refused = airflow.http.post(f"{airflow.base}/api/v2/dags/{DAG_ID}/dagRuns", timeout=30,
                                    json={**body, "conf": {**CONF, key: value}})  # fmt: skip
        assert refused.status_code == 400, f"{key}={value!r}: {refused.status_code} {refused.text}"
        assert f"Invalid input for param {key}" in refused.text and "root:" not in refused.text
    assert airflow.api("GET", f"/dags/{DAG_ID}/dagRuns")["total_entries"] == runs_before
    run = airflow.api("POST", f"/dags/{DAG_ID}/dagRuns", expect=(200, 201), json=body)
    run_id = run["dag_run_id"]
    assert run["conf"] == CONF and run["logical_date"] is None
    print(f"triggered {run_id} after {time.monotonic() - started:.0f} s")

    path = f"/dags/{DAG_ID}/dagRuns/{quote(run_id, safe='')}"
    try:
        state = airflow.wait(f"the run {run_id} to finish", RUN_TIMEOUT,
                             ready=lambda: (s := airflow.api("GET", path)["state"]) in ("success", "failed") and s)  # fmt: skip
    except pytest.fail.Exception as e:
        print(airflow.report(run_id))
        raise e from None
    states = {ti["task_id"]: ti["state"] for ti in airflow.task_instances(run_id)}
    print(f"run {run_id}: {state} after {time.monotonic() - started:.0f} s: {states}")
    if state != "success" or set(states.values()) != {"success"}:
        report = airflow.report(run_id)
        print(report)
        pytest.fail(f"run {run_id} ended {state}, tasks {states}\n{report}")
    assert states == dict.fromkeys(TASKS, "success")

    rows = window_rows(config.output_table, run_id)
    assert rows == reference

    # [spark] server = true: the first Spark task started the Spark Connect server, the later two joined it,
    # and no task started a JVM (the server is the run's one Spark application).
    logs = {
        task: airflow.task_log(run_id, task, 1)
        for task in ("validate_events", "aggregate", "validate_aggregates")
    }
    assert "spark-server: started (pid " in logs["validate_events"], logs["validate_events"][-3000:]
    for task, log in logs.items():
        assert JVM_START not in log, log[-3000:]
        assert f"{task} rideshare_trips [2026-01-05T09:00Z, 2026-01-05T10:00Z): " in log, log[-3000:]
        if task != "validate_events":
            assert "spark-server: running (pid " in log, log[-3000:]
    stopped = subprocess.run([*SPARK_SERVER, "stop"], env=airflow.env, cwd=ROOT, capture_output=True, text=True,
                             timeout=120, check=False)  # fmt: skip
    assert stopped.stdout.startswith("spark-server: stopped (pid "), stopped.stdout + stopped.stderr
    pid = int(stopped.stdout.split("(pid ")[1].split(")")[0])
    assert not alive([], {pid})  # (its zombie counts as gone)
    status = subprocess.run([*SPARK_SERVER, "status"], env=airflow.env, cwd=ROOT, capture_output=True,
                            text=True, timeout=60, check=False)  # fmt: skip
    assert (status.returncode, status.stdout.strip()) == (1, "spark-server: not running")

    # Extra Links: the run's Data Docs and the reports, served by the API server (plugins/) to logged-in users
    links = airflow.api("GET", f"{path}/taskInstances/aggregate/links")["extra_links"]
    folder = run_id.replace(":", "_").replace("+", "_")
    assert links == {
        "Data Docs (input)": f"http://127.0.0.1:8080/hamlet/data_docs/rideshare_trips/{folder}/events/index.html",
        "Data Docs (output)": f"http://127.0.0.1:8080/hamlet/data_docs/rideshare_trips/{folder}/trend_aggregates/index.html",
        "Report": "http://127.0.0.1:8080/hamlet/reports/",
    }  # (the links name [api] base_url, unset here: the default address)
    for link in links.values():
        local = link.replace("http://127.0.0.1:8080", airflow.base)
        served = airflow.http.get(local, timeout=30)
        assert served.status_code == 200 and "text/html" in served.headers["content-type"], (
            link,
            served.status_code,
        )
        assert requests.get(local, timeout=30).status_code == 401  # without the session or token: refused
    listing = airflow.http.get(f"{airflow.base}/hamlet/reports/", timeout=30).text
    assert '<a href="rideshare_trips.html">rideshare_trips.html</a>' in listing
    report = airflow.http.get(f"{airflow.base}/hamlet/reports/rideshare_trips.html", timeout=30).text
    assert report.count('<figure class="chart"') == 4  # q1-q4
    for outside in ("../pipeline.toml", "%2E%2E/pipeline.toml"):  # nothing outside the folders
        refused = airflow.http.get(f"{airflow.base}/hamlet/reports/{outside}", timeout=30)
        assert refused.status_code in (404, 422) and "[tables]" not in refused.text, outside
