"""A long-lived local Spark Connect server that the pipeline's tasks connect to, instead of each starting a JVM.

    python -m jobs.spark_server start|stop|status      (scripts/spark-server does the same after the setup)

Every Airflow task is a process of its own, so a SparkSession cannot be shared between the gates and the
aggregation of a run; a Spark Connect server can: one Spark application (the project's Delta jars from
``var/jars``, its settings and logging, the project's Python on its workers), warm across tasks and runs. A
task whose environment sets ``HAMLET_SPARK_REMOTE=sc://127.0.0.1:PORT`` (``jobs.session.build_session``)
connects in about a second instead of starting a driver JVM (10-40 s here). Measured in
bench/results/startup.md.

The server listens on 127.0.0.1 only (``[server] port`` 15002 unless ``HAMLET_SPARK_SERVER_PORT``); its PID,
log are in ``var/spark-server/PORT/``. ``stop`` ends that one process by its
PID (SIGTERM, then SIGKILL after 30 s).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from jobs.session import ALWAYS, JAVA_OPTIONS, ROOT, driver_java_options, settings, var_dir

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002


def port() -> int:
    return int(os.environ.get("HAMLET_SPARK_SERVER_PORT", DEFAULT_PORT))


def url() -> str:
    """What ``HAMLET_SPARK_REMOTE`` is set to for the tasks."""
    return f"sc://127.0.0.1:{port()}"


def state_dir() -> Path:
    """PID and log of the server on ``port()`` (one folder per port: a test's server beside a developer's)."""
    return var_dir() / "spark-server" / str(port())


def listening(timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port()), timeout=timeout):
            return True
    except OSError:
        return False


def running_pid() -> int | None:
    """The server's PID when the process in the PID file still runs."""
    path = state_dir() / "pid"
    if not path.is_file():
        return None
    pid = int(path.read_text().strip())
    status = Path(f"/proc/{pid}/status")
    if not status.exists() or "\nState:\tZ" in status.read_text():
        return None
    return pid


def command(env: str | None = None) -> list[str]:
    """spark-submit of the Connect server with the project's jars, settings and logging (no Ivy)."""
    from jobs.jars import jar_paths

    master, values = settings(env=env)
    values.update(ALWAYS)
    values[JAVA_OPTIONS] = driver_java_options(values.get(JAVA_OPTIONS))
    if master.startswith("local") and "spark.default.parallelism" not in values:
        # Clients have no SparkContext to ask for the cores (jobs.aggregate.default_buckets reads this).
        cores = master.removeprefix("local").strip("[]").split(",")[0]
        values["spark.default.parallelism"] = str(os.cpu_count() or 2) if cores in ("", "*") else cores
    values["spark.connect.grpc.binding.address"] = "127.0.0.1"
    values["spark.connect.grpc.binding.port"] = str(port())
    submit = str(Path(sys.executable).parent / "spark-submit")
    options = ["--class", SERVER_CLASS, "--name", "hamlet-spark-server", "--master", master,
               "--jars", ",".join(str(p) for p in jar_paths())]  # fmt: skip
    for key, value in values.items():
        options += ["--conf", f"{key}={value}"]
    return [submit, *options, "spark-internal"]


def start(wait_seconds: float = 180) -> str:
    """Start the server unless it runs; wait until it accepts connections. Returns what happened. Tasks
    started at once (a backfill) take turns (a lock file): the first starts it, the others find it."""
    import fcntl

    state_dir().mkdir(parents=True, exist_ok=True)
    with (state_dir() / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _start(wait_seconds)


def ensure(pipeline_server: bool) -> None:
    """For a pipeline task: with ``[spark] server = true``, the server runs and this process (and the
    spark-submit it starts) connects to it (``HAMLET_SPARK_REMOTE``)."""
    if pipeline_server:
        print(start(), file=sys.stderr)
        os.environ["HAMLET_SPARK_REMOTE"] = url()


def _start(wait_seconds: float) -> str:
    pid = running_pid()
    if pid is not None and listening():
        return f"spark-server: running (pid {pid}) at {url()}"
    if listening():
        raise SystemExit(f"error: port {port()} is taken by another process (set HAMLET_SPARK_SERVER_PORT)")
    folder = state_dir()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    log = folder / "server.log"
    with log.open("w") as out:
        # A session of its own (setsid): the task or shell that started it may end, the server stays. None of
        # its starter's streams either: an Airflow task's stdin is its supervisor's channel, which waits for
        # it to close; a server holding it kept the task that started it running until the server stopped.
        process = subprocess.Popen(command(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   env=env, cwd=ROOT, start_new_session=True)  # fmt: skip
    (folder / "pid").write_text(f"{process.pid}\n")
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"error: the Spark Connect server exited ({process.returncode}); its log, {log}:\n"
                             + log.read_text(errors="replace")[-3000:])  # fmt: skip
        if listening():
            return f"spark-server: started (pid {process.pid}) at {url()}, log {log}"
        time.sleep(0.5)
    stop()
    raise SystemExit(f"error: the Spark Connect server did not listen within {wait_seconds:.0f} s; log {log}")


def stop() -> str:
    pid = running_pid()
    if pid is None:
        return "spark-server: not running"
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and running_pid() is not None:
        time.sleep(0.3)
    if running_pid() is not None:
        os.kill(pid, signal.SIGKILL)
    (state_dir() / "pid").unlink(missing_ok=True)
    return f"spark-server: stopped (pid {pid})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.spark_server", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("start", "stop", "status", "url"))
    args = parser.parse_args(argv)
    if args.action == "start":
        print(start())
    elif args.action == "stop":
        print(stop())
    elif args.action == "url":
        print(url())
    else:
        pid = running_pid()
        up = pid is not None and listening()
        print(f"spark-server: running (pid {pid}) at {url()}" if up else "spark-server: not running")
        return 0 if up else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
