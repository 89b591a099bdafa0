"""An Airflow home inside the project (SQLite), the same for scripts/airflow, scripts/demo and the tests.

    eval "$(python -m jobs.airflow_home env [HOME])"   # the environment: AIRFLOW_HOME, dags folder, ...
    python -m jobs.airflow_home prepare                # migrate the metadata DB, create spark_default

Airflow reads its settings when it is first imported, so the environment is set before that: by the
scripts in the shell, by the tests before they import Airflow.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from jobs.pipeline import ROOT

DEFAULT_HOME = ROOT / "var" / "airflow"
# local[*]: every core of this machine. Edit the connection (UI: Admin → Connections) to use a cluster,
# e.g. host spark://HOST, port 7077.
SPARK_CONNECTION = {"conn-type": "spark", "conn-host": "local[*]"}


def environment(home: Path = DEFAULT_HOME) -> dict[str, str]:
    """The variables every Airflow process of the project runs with."""
    venv_bin = str(Path(sys.executable).parent)
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # 2 cores: a handful of task processes (the default starts 32); one Spark job at a time anyway.
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG": "4",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "30",
        # The DAG files import jobs/ and hamlet/ (installed editable in the venv; the root for safety).
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
        # spark-submit and the venv's Python first on PATH (SparkSubmitOperator looks spark-submit up there).
        "PATH": os.pathsep.join([venv_bin, os.environ.get("PATH", "")]),
        "PYSPARK_PYTHON": sys.executable,
    }


def airflow(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "airflow"), *args]
    return subprocess.run(command, env={**os.environ, **env}, text=True, capture_output=True, check=check)


def prepare(home: Path = DEFAULT_HOME) -> None:
    """Migrate the metadata DB (SQLite in ``home``) and create the connection spark_default unless it
    exists (Airflow's fallback for a missing one is yarn)."""
    env = environment(home)
    home.mkdir(parents=True, exist_ok=True)
    airflow("db", "migrate", env=env)
    if airflow("connections", "get", "spark_default", env=env, check=False).returncode != 0:
        options = [f"--{key}={value}" for key, value in SPARK_CONNECTION.items()]
        airflow("connections", "add", "spark_default", *options, env=env)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("env", "prepare"):
        print(__doc__, file=sys.stderr)
        return 2
    home = Path(argv[1]).resolve() if len(argv) > 1 else DEFAULT_HOME
    if argv[0] == "env":
        print("\n".join(f"export {k}={shlex.quote(v)}" for k, v in environment(home).items()))
        return 0
    try:
        prepare(home)
    except subprocess.CalledProcessError as error:
        print(f"error: {' '.join(error.cmd[1:3])} failed:\n{error.stdout}{error.stderr}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
