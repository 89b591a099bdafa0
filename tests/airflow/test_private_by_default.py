"""What listens where by default (issue 20, Security 3): Airflow's API server and log servers (everything
`airflow standalone` starts) and Spark's UI on 127.0.0.1 unless a setting opens them, the generated admin
password readable by its owner only."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from services import free_port


def airflow_setting(section: str, key: str, env: dict[str, str]) -> str:
    done = subprocess.run([str(Path(sys.executable).parent / "airflow"), "config", "get-value", section, key],
                          env=env, capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # Airflow's API server in a process of its own
def test_the_api_server_listens_on_127_0_0_1_unless_a_host_is_set(tmp_path):
    from jobs.airflow_home import environment

    env = {k: v for k, v in os.environ.items() if k != "AIRFLOW__API__HOST"}
    home = tmp_path / "airflow"
    assert airflow_setting("api", "host", {**env, "AIRFLOW_HOME": str(home)}) == "0.0.0.0"  # Airflow's own
    opened = {**env, "AIRFLOW__API__HOST": "0.0.0.0"}
    for base, expected in ((env, "127.0.0.1"), (opened, "0.0.0.0")):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "environ", base)
            variables = environment(home)
        assert airflow_setting("api", "host", {**base, **variables}) == expected


@pytest.mark.slow  # Airflow processes of their own
def test_the_generated_admin_password_file_is_readable_by_its_owner_only(tmp_path):
    home = tmp_path / "airflow"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["AIRFLOW_HOME"] = str(home)
    subprocess.run([sys.executable, "-m", "jobs.airflow_home", "prepare", str(home)], env=env,
                   capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    path = home / "simple_auth_manager_passwords.json.generated"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # what the API server runs at its first start: it generates the admin password into that file
    probe = ("from airflow.api_fastapi.auth.managers.simple.simple_auth_manager import SimpleAuthManager\n"
             "SimpleAuthManager().init()\n")  # fmt: skip
    subprocess.run([sys.executable, "-c", probe], env={**env, "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin"},
                   capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    assert list(json.loads(path.read_text())) == ["admin"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)  # a file made before: prepare makes it private again
    subprocess.run([sys.executable, "-m", "jobs.airflow_home", "prepare", str(home)], env=env,
                   capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def listening(port: int) -> list[str]:
    """The local addresses listening on ``port`` (Linux /proc/net/tcp and tcp6): IPv4-mapped IPv6 addresses
    as IPv4, every interface ('0.0.0.0' or '::') as '*'."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                text = socket.inet_ntop(socket.AF_INET if len(address) == 8 else socket.AF_INET6,
                                        _address_bytes(address))  # fmt: skip
                text = text.removeprefix("::ffff:")
                found.append("*" if text in ("0.0.0.0", "::") else text)
    return found


def _address_bytes(hex_address: str) -> bytes:
    raw = bytes.fromhex(hex_address)  # little-endian 32-bit words
    return b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))


UI_PROBE = """
import sys, time
from jobs.session import build_session
spark = build_session("ui-probe", conf={"spark.ui.port": sys.argv[1], "spark.ui.enabled": "true"})
print("UI", spark.sparkContext.uiWebUrl, flush=True)
sys.stdin.readline()
spark.stop()
"""


@pytest.mark.slow  # a local Spark job: a JVM
@pytest.mark.parametrize("opened", [False, True])
def test_the_spark_ui_of_a_local_job_listens_on_127_0_0_1_unless_spark_local_ip_is_set(opened):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    if opened:
        env["SPARK_LOCAL_IP"] = "0.0.0.0"
    with subprocess.Popen([sys.executable, "-c", UI_PROBE, str(port)], env={**env, "HAMLET_ENV": "local"},
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as probe:  # fmt: skip
        assert probe.stdout is not None and probe.stdin is not None
        line = probe.stdout.readline()
        try:
            assert line.startswith("UI http://") and line.strip().endswith(f":{port}")
            assert listening(port) == (["*"] if opened else ["127.0.0.1"])
        finally:
            probe.stdin.write("\n")
            probe.stdin.flush()
            probe.wait(timeout=120)


SERVE_LOGS = """
import sys, airflow.settings
from airflow.utils.serve_logs import serve_logs
serve_logs(int(sys.argv[1]))
"""


@pytest.mark.parametrize("opened", [False, True])
def test_the_log_server_of_a_scheduler_or_triggerer_binds_127_0_0_1_unless_a_host_is_set(opened, tmp_path):
    # What the scheduler and the triggerer run in a subprocess of theirs (Airflow's serve_logs, found where they
    # import it), in a process of the project's Airflow environment (conf/airflow/airflow_local_settings.py).
    from jobs.airflow_home import LOG_SERVER_HOST, environment

    port = free_port()
    base = {k: v for k, v in os.environ.items() if k != LOG_SERVER_HOST}
    if opened:
        base[LOG_SERVER_HOST] = "0.0.0.0"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", base)
        env = {**base, **environment(tmp_path / "airflow")}
    with subprocess.Popen([sys.executable, "-c", SERVE_LOGS, str(port)], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True) as server:  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not listening(port) and server.poll() is None and time.monotonic() < deadline:
                time.sleep(0.3)
            assert listening(port) == (["*"] if opened else ["127.0.0.1"])
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)


@pytest.mark.slow  # Airflow standalone: API server, scheduler, DAG processor, triggerer
def test_airflow_standalone_listens_on_127_0_0_1_only(airflow_home, tmp_path):
    # scripts/airflow standalone's environment (the test run's, tests/airflow/airflow_env.py), on free ports
    import psutil

    ports = {key: free_port() for key in ("API__PORT", "LOGGING__WORKER_LOG_SERVER_PORT",
                                          "LOGGING__TRIGGER_LOG_SERVER_PORT")}  # fmt: skip
    env = {**os.environ, **{f"AIRFLOW__{key}": str(port) for key, port in ports.items()},
           "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{ports['API__PORT']}/execution/"}  # fmt: skip
    log = tmp_path / "standalone.log"
    with log.open("wb") as out:
        standalone = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"], env=env,
                                      stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not all(listening(p) for p in ports.values()):
            assert standalone.poll() is None and time.monotonic() < deadline, log.read_text()[-5000:]
            time.sleep(1)
        processes = [psutil.Process(standalone.pid), *psutil.Process(standalone.pid).children(recursive=True)]
        sockets = sorted({(c.laddr.ip, c.laddr.port, p.name()) for p in processes
                          for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN})  # fmt: skip
        assert {port for _, port, _ in sockets} >= set(ports.values()), sockets
        assert {ip for ip, _, _ in sockets} == {"127.0.0.1"}, sockets
    finally:
        os.killpg(standalone.pid, signal.SIGTERM)
        try:
            standalone.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(standalone.pid, signal.SIGKILL)
            standalone.wait(timeout=30)
