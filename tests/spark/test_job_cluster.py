"""A real Spark standalone cluster: a master and one worker started from the installed pyspark on 127.0.0.1,
the same job run against it (``spark-submit jobs/aggregate.py ... --master spark://127.0.0.1:PORT``), its output
equal to the local run's, and both processes stopped by their PIDs.

The worker knows nothing of the project: its ``PYSPARK_PYTHON`` is the bare base interpreter (no ``hamlet``,
no pyarrow). The executors get the engine the way PySpark documents native dependencies: the packed
environment that ``scripts/bootstrap`` builds (``jobs/executor_env.py``), shipped with ``spark.archives``;
the job's own probe reports where an executor imported ``hamlet_native`` from, and that must be the archive
unpacked in the worker's folder, not this checkout's ``.venv``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest
from spark_env import ROOT, free_port, maps_class_archive

from jobs import jvm_archive

pytestmark = pytest.mark.slow  # end to end: a standalone Spark master and worker

# The interpreter the venv was made from: Python 3.11 without the project's packages.
BARE_PYTHON = str(Path(sys._base_executable).resolve())
START, END = datetime(2026, 1, 5, 8, tzinfo=UTC), datetime(2026, 1, 5, 9, tzinfo=UTC)


WORKERS = 2


def wait_for(log: Path, text: str, process: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.3)
    pytest.fail(
        f"no {text!r} in {log} (exit status {process.poll()}):\n{log.read_text(errors='replace')[-3000:]}"
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def stop(process: subprocess.Popen) -> None:
    """Stop one process by its PID: SIGTERM, then SIGKILL if it lingers."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import pyspark

    from jobs.session import JAVA_OPTIONS, settings

    home = Path(pyspark.__file__).resolve().parent
    spark_class = str(home / "bin" / "spark-class")
    base = tmp_path_factory.mktemp("cluster")
    env = {
        **os.environ,
        # The worker's own Python lacks the engine: only the shipped archive can give it to the executors.
        "PYSPARK_PYTHON": BARE_PYTHON,
        "SPARK_HOME": str(home),
        "SPARK_LOG_DIR": str(base),
        "SPARK_WORKER_DIR": str(base / "work"),
        # The master and workers of a test: the Java options conf/spark/test.toml gives the drivers (client
        # compiler only) and the class archive; Spark's own logging, whose lines wait_for reads
        "SPARK_DAEMON_JAVA_OPTS": jvm_archive.with_archive(settings(env="test")[1][JAVA_OPTIONS]),
    }
    port, master_ui = free_port(), free_port()
    master_log = base / "master.log"
    with master_log.open("w") as out:
        master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(master_ui)],
                                  stdout=out, stderr=subprocess.STDOUT, env=env)  # fmt: skip
    workers: list[subprocess.Popen] = []
    try:
        wait_for(master_log, "I have been elected leader", master)
        for number in range(WORKERS):  # each its own folder: an executor per worker unpacks the archive there
            worker_log = base / f"worker{number}.log"
            with worker_log.open("w") as out:
                workers.append(subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker",
                                                 f"spark://127.0.0.1:{port}", "--host", "127.0.0.1", "--cores", "1",
                                                 "--memory", "1500m", "--webui-port", str(free_port()),
                                                 "--work-dir", str(base / f"work{number}")],
                                                stdout=out, stderr=subprocess.STDOUT, env=env))  # fmt: skip
            wait_for(worker_log, "Successfully registered with master", workers[-1])
        yield {"url": f"spark://127.0.0.1:{port}", "ui": f"http://127.0.0.1:{master_ui}", "master": master,
               "base": base}  # fmt: skip
    finally:
        for process in (*workers, master):
            stop(process)
        for process in (*workers, master):
            assert not alive(process.pid), f"process {process.pid} still runs"


def run(command: list[str], status: int = 0, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "HAMLET_ENV": "test", **env}
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment, cwd=ROOT, timeout=400, check=False
    )
    assert done.returncode == status, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_the_workers_python_cannot_run_the_engine():
    """What the archive has to make up for: the workers' interpreter imports neither the engine nor pyarrow."""
    for module in ("hamlet_native", "pyarrow"):
        done = subprocess.run(
            [BARE_PYTHON, "-c", f"import {module}"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 1 and f"No module named '{module}'" in done.stderr


# The trips workload with one query more: one stream partition (no GROUP-BY, no equivalence), issue 19's shape,
# which the cluster run cuts into time segments.
HOT_PARTITION_QUERY = """
hot: RETURN COUNT(*), SUM(T.duration), AVG(T.speed) PATTERN SEQ(Request R, Travel T+, NOT Pickup P)
    WITHIN 30 min SLIDE 5 min
"""


def test_the_job_on_a_standalone_cluster_equals_the_local_run_hot_partition_cut_in_time_segments(
    spark, cluster, events_table, workload_file, tmp_path
):
    """One application on the cluster (each costs a minute here): the shipped environment, --master, and a hot
    stream partition whose segments run as tasks on both workers' executors and compose to the rows of the
    local run, which runs every partition whole."""
    from pyspark.testing import assertDataFrameEqual

    from jobs.aggregate import main

    workload = tmp_path / "trips_and_hot.hamlet"
    workload.write_text(workload_file.read_text(encoding="utf-8") + HOT_PARTITION_QUERY, encoding="utf-8")
    args = ["--workload", str(workload), "--start", START.isoformat(), "--end", END.isoformat(),
            "--events-table", events_table, "--workload-name", "trips"]  # fmt: skip
    assert (
        main([*args, "--output-table", str(tmp_path / "local"), "--segment-events", "0", "--run-id", "local"])
        == 0
    )
    # spark-submit (its own --master stays local) running the job with the job's --master pointing at the
    # cluster: covers both the spark-submit entry point and --master. `hamlet aggregate` is the same main().
    submit = str(Path(sys.executable).parent / "spark-submit")
    done = run([submit, "--master", "local[1]", "jobs/aggregate.py", *args, "--output-table",
                str(tmp_path / "cluster"), "--segment-events", "50", "--run-id", "cluster", "--master", cluster["url"]],
               PYSPARK_PYTHON=sys.executable)  # fmt: skip
    assert "rows written" in done.stdout and "time segments" in done.stdout, done.stdout[-3000:]

    # The executors imported the compiled engine from the shipped archive, unpacked in the worker's folder for
    # this application, with the archive's Python: not from the driver's .venv, not the worker's Python.
    # (spark-submit's JVM merges its Python driver's stderr into its stdout.)
    probe = [line for line in done.stdout.splitlines() if line.startswith("executors: ")]
    assert len(probe) == 1, done.stdout[-4000:]
    python, native = probe[0].removeprefix("executors: Python ").split(", hamlet_native from ")
    # (the first test's application: one executor per worker, the probe ran on one of them)
    unpacked = Path(python).parent.parent
    assert unpacked in [p.resolve() for p in cluster["base"].glob("work*/app-*/*/hamlet-env")]
    assert Path(python) == unpacked / "bin" / "python"
    assert Path(native).parent == unpacked / "lib" / "python3.11" / "site-packages" / "hamlet_native"
    assert Path(native).name == "__init__.py" and ".venv" not in native
    # (packed without what no worker imports: the libraries' tests, Arrow's headers)
    site = unpacked / "lib" / "python3.11" / "site-packages"
    assert (site / "pandas" / "core").is_dir() and (site / "pyarrow" / "compute.py").is_file()
    assert not any(
        (site / p).exists() for p in ("pandas/tests", "numpy/_core/tests", "pyarrow/tests", "pyarrow/include")
    )

    columns = ["workload", "query", "window_start", "window_end", "group", "group_key", "aggregate", "value",
               "value_exact", "strategy", "window_end_date"]  # fmt: skip
    local = spark.read.format("delta").load(str(tmp_path / "local")).select(*columns)
    assert local.where(local.query == "hot").count() > 20 and local.where(local.query != "hot").count() > 100
    assertDataFrameEqual(spark.read.format("delta").load(str(tmp_path / "cluster")).select(*columns), local)
    # run_stats (beside both outputs): the hot query's set whole in the local run, in >= 4 segments (2 per
    # core) on the cluster; the trips sets' partitions (a few events each) are never cut.
    stats = spark.read.format("delta").load(str(tmp_path / "run_stats")).collect()
    segments = {(r.run_id, tuple(r.queries)): r.engine_stats["segments"] for r in stats}
    assert segments.pop(("cluster", ("hot",))) >= 4 and segments.pop(("local", ("hot",))) == 0
    assert set(segments.values()) == {0} and len(segments) == 4, segments

    # It ran on the cluster: the master lists the finished application, its executors ran on the worker.
    with urllib.request.urlopen(f"{cluster['ui']}/json/", timeout=10) as response:
        state = json.load(response)
    finished = [app["name"] for app in state["completedapps"]]
    assert finished == ["hamlet-aggregate"], state  # this test runs first: the one application so far
    assert [w["state"] for w in state["workers"]] == ["ALIVE"] * WORKERS
    executors = list(cluster["base"].glob("work*/app-*/*/stderr"))
    assert len(executors) == WORKERS  # an executor on each worker
    # Each started with the setup's class archive (jobs/jvm_archive.py), which a JVM of Spark's class path maps:
    # the master, whose class path the workers give their executors too, has it mapped.
    archive = jvm_archive.archive_path()
    assert all(f"-XX:SharedArchiveFile={archive}" in path.read_text() for path in executors)
    assert maps_class_archive(cluster["master"].pid)


def test_executors_without_the_engine_fail_at_once_with_one_clear_error(cluster, events_table, workload_file,
                                                                        tmp_path):  # fmt: skip
    """Told to run on the workers' own Python (``HAMLET_EXECUTOR_PYTHON``), the job stops before any work: one
    line that says what the executors lack and how to give it to them, no traceback, no table written."""
    submit = str(Path(sys.executable).parent / "spark-submit")
    done = run([submit, "--master", "local[1]", "jobs/aggregate.py", "--workload", str(workload_file),
                "--start", START.isoformat(), "--end", END.isoformat(), "--events-table", events_table,
                "--output-table", str(tmp_path / "never"), "--master", cluster["url"]],
               status=1, PYSPARK_PYTHON=sys.executable, HAMLET_EXECUTOR_PYTHON=BARE_PYTHON)  # fmt: skip
    output = done.stdout + done.stderr  # spark-submit's JVM merges its Python driver's stderr into its stdout
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    expected = (
        f"error: aggregation failed: ExecutorsCannotRun: the executors' Python ({BARE_PYTHON}, executor_python = "
        f"'{BARE_PYTHON}') cannot import the compiled engine: No module named 'hamlet_native'. Build the shipped "
        "environment with `bash scripts/bootstrap dev,spark`, or install hamlet_native (pip install ./native), "
        "pyarrow and pandas into that Python"
    )
    assert errors == [expected], output[-4000:]
    assert "Traceback" not in output and not (tmp_path / "never").exists()
