"""An Airflow home inside the project (SQLite), the same for scripts/airflow, scripts/demo and the tests.

    eval "$(python -m jobs.airflow_home env [HOME])"   # the environment: AIRFLOW_HOME, dags folder, ...
    python -m jobs.airflow_home prepare [HOME]         # migrate the metadata DB if needed, add spark_default

Airflow reads its settings when it is first imported, so the environment is set before that: by the
scripts in the shell, by the tests before they import Airflow.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from jobs.pipeline import ROOT

DEFAULT_HOME = ROOT / "var" / "airflow"
# local[*]: every core of this machine. Edit the connection (UI: Admin → Connections) to use a cluster,
# e.g. host spark://HOST, port 7077.
SPARK_CONNECTION = {"conn_type": "spark", "host": "local[*]"}


def environment(home: Path = DEFAULT_HOME) -> dict[str, str]:
    """The variables every Airflow process of the project runs with."""
    venv_bin = str(Path(sys.executable).parent)
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        # plugins/: the API server serves the Data Docs and reports the tasks link to (jobs/airflow_plugin.py).
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # 2 cores: a handful of task processes (the default starts 32); one Spark job at a time anyway.
        "AIRFLOW__CORE__PARALLELISM": "4",
        "AIRFLOW__CORE__MAX_ACTIVE_TASKS_PER_DAG": "4",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "30",
        # The DAG files import jobs/ and hamlet/ (installed editable in the venv; the root for safety);
        # conf/airflow holds airflow_local_settings.py (bind_log_servers).
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT), str(LOCAL_SETTINGS), os.environ.get("PYTHONPATH", "")])
        ),
        # spark-submit and the venv's Python first on PATH (SparkSubmitOperator looks spark-submit up there).
        "PATH": os.pathsep.join([venv_bin, os.environ.get("PATH", "")]),
        "PYSPARK_PYTHON": sys.executable,
        # Airflow's default is every interface: the UI and REST API stay on this machine unless the caller
        # sets AIRFLOW__API__HOST (e.g. 0.0.0.0 for a team; README, "Security").
        "AIRFLOW__API__HOST": os.environ.get("AIRFLOW__API__HOST", "127.0.0.1"),
        # Airflow's scheduler and triggerer serve task logs (ports 8793, 8794) on every interface, a host
        # no setting of Airflow 3.3 changes: bind_log_servers makes them bind this one (e.g. 0.0.0.0 for
        # workers on other machines; README, "Security").
        LOG_SERVER_HOST: os.environ.get(LOG_SERVER_HOST, "127.0.0.1"),
    }


LOCAL_SETTINGS = ROOT / "conf" / "airflow"
LOG_SERVER_HOST = "AIRFLOW__LOGGING__WORKER_LOG_SERVER_HOST"


def bind_log_servers() -> None:
    """Make the log servers of this Airflow process bind ``[logging] worker_log_server_host`` (127.0.0.1
    unless set). Airflow 3.3's ``serve_logs`` (run in a subprocess by the scheduler and the triggerer, which
    import it from ``airflow.utils.serve_logs`` when they start it) hands uvicorn the host "" (every
    interface); ``serve_logs_on_host`` takes its place there. Called by conf/airflow/airflow_local_settings.py."""
    import airflow.utils.serve_logs as package

    package.serve_logs = serve_logs_on_host  # type: ignore[assignment]


def serve_logs_on_host(port: int | None = None) -> None:
    """Airflow's own ``serve_logs`` (its app, port and logging), with uvicorn's host replaced."""
    import uvicorn
    from airflow.configuration import conf
    from airflow.utils.serve_logs import core

    host = conf.get("logging", "worker_log_server_host", fallback="127.0.0.1")
    run = uvicorn.run
    # This process serves the logs and nothing else: uvicorn.run is replaced in it alone.
    uvicorn.run = lambda app, **options: run(app, **{**options, "host": host})  # type: ignore[assignment]
    core.serve_logs(port)


@dataclass(frozen=True)
class Prepared:
    revision: str  # the metadata DB's Alembic revision afterwards
    migrated: bool  # False: the DB was already at the revision of the installed Airflow
    connection_created: bool


def prepare(home: Path = DEFAULT_HOME) -> Prepared:
    """Migrate the metadata DB (SQLite in ``home``) unless it is at the installed Airflow's revision, and
    create the connection spark_default unless it is stored (Airflow's fallback for a missing one is yarn).

    Runs in this process, which must not have imported Airflow with another home: one Airflow import
    (~1.5 s) instead of an ``airflow`` process per step, and no migration when there is nothing to migrate
    (scripts/airflow and scripts/demo prepare on every call)."""
    from jobs.logs import quiet

    quiet()
    home = home.resolve()
    if "airflow" not in sys.modules:
        os.environ.update(environment(home))
    from airflow import configuration, settings
    from airflow.models.connection import Connection
    from airflow.utils import db
    from airflow.utils.providers_configuration_loader import providers_configuration_loaded
    from alembic.migration import MigrationContext
    from sqlalchemy import select

    if Path(configuration.AIRFLOW_HOME).resolve() != home:
        raise RuntimeError(
            f"Airflow is configured for {configuration.AIRFLOW_HOME} in this process, not {home}: "
            f"run `python -m jobs.airflow_home prepare {home}`"
        )
    home.mkdir(parents=True, exist_ok=True)
    try:
        # What `airflow db check-migrations` runs: the DB's Alembic heads against the installed ones. On a
        # mismatch it sleeps 1 s before raising, a cost paid only when a migration follows anyway.
        db.check_migrations(timeout=1)
        migrated = False
    except TimeoutError:
        # As `airflow db migrate` (its providers' configuration included): creates a new DB from the models.
        providers_configuration_loaded(db.upgradedb)()
        migrated = True
    _private_password_file(Path(configuration.conf.get("core", "simple_auth_manager_passwords_file",
                                                       fallback=None) or home / PASSWORDS))  # fmt: skip
    with settings.Session() as session:
        revision = MigrationContext.configure(session.connection()).get_current_revision()
        stored = session.scalar(select(Connection.id).where(Connection.conn_id == "spark_default"))
        if stored is None:
            session.add(Connection(conn_id="spark_default", **SPARK_CONNECTION))
            session.commit()
    return Prepared(revision=str(revision), migrated=migrated, connection_created=stored is None)


PASSWORDS = "simple_auth_manager_passwords.json.generated"


def _private_password_file(path: Path) -> None:
    """The simple auth manager writes the generated admin password into this file, opened for appending:
    made beforehand with mode 0600 (or made 0600), it keeps that mode instead of the umask's 0644."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("env", "prepare"):
        print(__doc__, file=sys.stderr)
        return 2
    home = Path(argv[1]).resolve() if len(argv) > 1 else DEFAULT_HOME
    if argv[0] == "env":
        print("\n".join(f"export {k}={shlex.quote(v)}" for k, v in environment(home).items()))
        return 0
    done = prepare(home)
    changes = [f"metadata DB migrated to revision {done.revision}"] if done.migrated else []
    changes += ["connection spark_default created"] if done.connection_created else []
    if changes:
        print(f"airflow_home: {'; '.join(changes)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
