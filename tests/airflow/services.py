"""Airflow's own processes for the tests that need them (the API server, the scheduler, ...): started each in
its own session (process group) with the test environment, stopped at the end with their children (the
tests assert that none is left), and a REST client that logs in as the UI does."""

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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

AIRFLOW = Path(sys.executable).parent / "airflow"
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


def api_environment(port: int) -> dict[str, str]:
    """The test environment (conftest.py: AIRFLOW_HOME, dags folder, HAMLET_PIPELINE_CONF, spark_default) for
    the processes of an Airflow whose API server listens on ``port`` of 127.0.0.1."""
    return {
        **os.environ,
        # The task runners report to the execution API of this server (default: localhost:8080).
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        # One secret for every component that signs or checks JWTs (API server, scheduler).
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(64),  # >= 64 bytes for HS512
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
    }


def api_server(port: int) -> list[str]:
    return ["api-server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]


@contextmanager
def started(commands: dict[str, list[str]], env: dict[str, str], logs: Path) -> Iterator[list[Service]]:
    """``airflow COMMAND...`` for each of ``commands`` (name → arguments), its output in ``logs/NAME.log``;
    all stopped at the end, whatever happened."""
    services: list[Service] = []
    try:
        for name, arguments in commands.items():
            log = logs / f"{name}.log"
            with log.open("wb") as out:
                process = subprocess.Popen([str(AIRFLOW), *arguments], env=env, stdout=out,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)  # fmt: skip
            services.append(Service(name, process, log))
        yield services
    finally:
        stop(services)


# ----------------------------------------------------------------------------------------------- REST client


class AirflowApi:
    """A running Airflow: its REST API (a bearer token from the simple auth manager) and its processes."""

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
