"""End to end through Airflow's own processes: the API server, the scheduler and the DAG processor of the
venv's ``airflow`` run on 127.0.0.1 with the test environment (tests/airflow/conftest.py); the ad hoc DAG is
unpaused and triggered through the REST API as the UI does it (``logical_date: null`` and the Params as
conf), and its rows must equal those of a direct run of the Spark job.

No triggerer: the ad hoc DAG has no deferrable task (SparkSubmitOperator and the @task functions run in the
LocalExecutor's workers). Every process is started in its own session (process group) and stopped at the
end, its children included; the test asserts that none is left.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests

pytestmark = pytest.mark.slow  # end to end: Airflow's API server, scheduler and DAG processor

DAG_ID = "hamlet_trends_adhoc"
WORKLOAD = "conf/workloads/rideshare_trips.hamlet"
START, END = "2026-01-05T09:00:00+00:00", "2026-01-05T10:00:00+00:00"
CONF = {"workload": WORKLOAD, "start": START, "end": END, "strategy": "hamlet"}
TASKS = {"check_params", "validate_events", "aggregate", "verify_commit", "validate_aggregates"}
COLUMNS = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
AIRFLOW = Path(sys.executable).parent / "airflow"

# Generous: 2 cores shared with other jobs. Measured at a load of 4-5: healthy after 10-12 s, the run
# 3.5-6 min (each validation task and the Spark job start a JVM of their own: 1-2 min each).
HEALTH_TIMEOUT = 240
DAG_TIMEOUT = 240
RUN_TIMEOUT = 600
STOP_TIMEOUT = 60


# ------------------------------------------------------------------------------------------------ processes


@dataclass
class Service:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
        except OSError as e:
            text = [f"(no log: {e})"]
        status = "running" if self.process.poll() is None else f"exited with {self.process.returncode}"
        body = "\n".join("    " + line for line in text)
        return (
            f"--- {self.name} (pid {self.process.pid}, {status}), last {lines} lines of {self.log}:\n{body}"
        )


def processes() -> dict[int, tuple[int, int, str, str]]:
    """pid → (parent pid, process group, state, command line) of every process (Linux /proc)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            command = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (int(fields[1]), int(fields[2]), fields[0], command.strip()[:160])
    return table


def descendants(roots: set[int]) -> set[int]:
    table = processes()
    found, frontier = set(), set(roots)
    while frontier:
        frontier = {pid for pid, (parent, *_) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(services: list[Service], others: set[int]) -> dict[int, str]:
    """The live processes (zombies count as gone) in the services' process groups or among ``others``."""
    groups = {s.process.pid for s in services}  # each leader's pid is its session's and group's id
    return {pid: f"pid {pid} group {group} state {state}: {command}"
            for pid, (_, group, state, command) in processes().items()
            if state != "Z" and (group in groups or pid in others)}  # fmt: skip


def signal_all(services: list[Service], others: set[int], sig: signal.Signals) -> None:
    for service in services:
        try:
            os.killpg(service.process.pid, sig)
        except ProcessLookupError:
            pass
    for pid in others:  # children that left their group (e.g. task runners in their own session)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stop(services: list[Service]) -> None:
    """SIGTERM to every process group (and every descendant), SIGKILL after STOP_TIMEOUT; assert that none
    is left."""
    others = descendants({s.process.pid for s in services})
    signal_all(services, others, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    for service in services:
        try:
            service.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    while alive(services, others) and time.monotonic() < deadline:
        time.sleep(0.5)
    if alive(services, others):
        signal_all(services, others, signal.SIGKILL)
        for service in services:
            service.process.wait(timeout=30)
        time.sleep(1)
    left = alive(services, others)
    assert not left, "processes left after stopping Airflow:\n" + "\n".join(left.values())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ----------------------------------------------------------------------------------------------- REST client


class Airflow:
    """The running Airflow: its REST API (a bearer token from the simple auth manager) and its processes."""

    def __init__(self, base: str, home: Path, services: list[Service]) -> None:
        self.base, self.home, self.services = base, home, services
        self.http = requests.Session()

    def logs(self) -> str:
        return "\n".join(s.tail() for s in self.services)

    def check_running(self) -> None:
        exited = [s for s in self.services if s.process.poll() is not None]
        assert not exited, f"{', '.join(s.name for s in exited)} exited early:\n{self.logs()}"

    def wait(self, what: str, timeout: float, ready: Callable[[], Any], every: float = 2.0) -> Any:
        """Poll ``ready()`` until it returns something truthy; fail with every process's log tail."""
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            self.check_running()
            try:
                if result := ready():
                    return result
            except requests.RequestException as e:
                last = e
            time.sleep(every)
        pytest.fail(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last})\n{self.logs()}")

    def login(self) -> None:
        """POST /auth/token with the admin user and the password the API server generated (simple auth
        manager: $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated)."""
        path = self.home / "simple_auth_manager_passwords.json.generated"
        password = self.wait(f"the admin password in {path}", 60,
                             lambda: path.is_file() and json.loads(path.read_text() or "{}").get("admin"))  # fmt: skip
        response = self.http.post(f"{self.base}/auth/token", json={"username": "admin", "password": password})
        assert response.status_code == 201, f"POST /auth/token: {response.status_code} {response.text}"
        self.http.headers["Authorization"] = f"Bearer {response.json()['access_token']}"

    def api(self, method: str, path: str, expect: tuple[int, ...] = (200,), **kwargs: Any) -> Any:
        response = self.http.request(method, f"{self.base}/api/v2{path}", timeout=30, **kwargs)
        assert response.status_code in expect, (
            f"{method} /api/v2{path}: {response.status_code} {response.text}"
        )
        return response.json() if response.content else None

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
    """API server, scheduler and DAG processor on a free port of 127.0.0.1; stopped (and checked to be
    gone) at the end, whatever happened."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,  # as set by conftest.py: AIRFLOW_HOME, dags folder, HAMLET_PIPELINE_CONF, spark_default
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG": "2",
        # The task runners report to the execution API of this server (default: localhost:8080).
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base}/execution/",
        # One secret for every component that signs or checks JWTs (API server, scheduler).
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(64),  # >= 64 bytes for HS512
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "10",
    }
    commands = {
        "api-server": ["api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        "scheduler": ["scheduler"],
        "dag-processor": ["dag-processor"],
    }
    services: list[Service] = []
    try:
        for name, arguments in commands.items():
            log = tmp_path / f"{name}.log"
            with log.open("wb") as out:
                process = subprocess.Popen([str(AIRFLOW), *arguments], env=env, stdout=out,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)  # fmt: skip
            services.append(Service(name, process, log))
        yield Airflow(base, airflow_home, services)
    finally:
        stop(services)


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
    for key, value in (("workload", "/etc/passwd"), ("start", "not a date")):
        refused = airflow.http.post(f"{airflow.base}/api/v2/dags/{DAG_ID}/dagRuns", timeout=30,
                                    json={**body, "conf": {**CONF, key: value}})  # fmt: skip
        assert refused.status_code == 400, f"{key}={value!r}: {refused.status_code} {refused.text}"
        assert f"Invalid input for param {key}" in refused.text and "root:" not in refused.text
    assert airflow.api("GET", f"/dags/{DAG_ID}/dagRuns")["total_entries"] == 0
    run = airflow.api("POST", f"/dags/{DAG_ID}/dagRuns", expect=(200, 201), json=body)
    run_id = run["dag_run_id"]
    assert run["conf"] == CONF and run["logical_date"] is None
    print(f"triggered {run_id} after {time.monotonic() - started:.0f} s")

    path = f"/dags/{DAG_ID}/dagRuns/{quote(run_id, safe='')}"
    try:
        state = airflow.wait(f"the run {run_id} to finish", RUN_TIMEOUT, every=5,
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
