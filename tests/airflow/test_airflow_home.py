"""jobs.airflow_home.prepare, which scripts/airflow and scripts/demo run on every call: it migrates a new or
outdated metadata DB, and on an up-to-date one only checks the revision (no migration); it stores the
connection spark_default once. The DB is read with sqlite3, not through Airflow."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

# The metadata DB revision of Airflow 3.3 (airflow.utils.db._REVISION_HEADS_MAP["3.3.0"]; 3.3.2 adds none).
HEAD = "d2f4e1b3c5a7"
SPARK_DEFAULT = ("spark_default", "spark", "local[*]")
# Logged by airflow.utils.db: the revision check failing, a new DB created, an existing one migrated.
MIGRATION_LOGS = (
    "Waiting for migrations",
    "Creating Airflow database tables",
    "Migrating the Airflow database",
)


def stored(home: Path) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The DB's Alembic revision and its connections."""
    with sqlite3.connect(home / "airflow.db") as db:
        return (
            db.execute("SELECT version_num FROM alembic_version").fetchall(),
            db.execute("SELECT conn_id, conn_type, host FROM connection").fetchall(),
        )


def prepare_command(home: Path) -> tuple[list[str], str]:
    """``python -m jobs.airflow_home prepare HOME`` as the scripts run it, in its own process (this one's
    Airflow has the tests' home): its report lines (stderr) and Airflow's log (stdout). Without pytest's
    variables, with which Airflow logs differently."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "jobs.airflow_home", "prepare", str(home)], env=env,
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return [line for line in done.stderr.splitlines() if line.startswith("airflow_home:")], done.stdout


@pytest.mark.slow  # a new metadata DB migrated in a process of its own
def test_prepare_migrates_a_new_home_then_only_checks_its_revision(tmp_path):
    home = tmp_path / "airflow"
    report, log = prepare_command(home)
    assert report == [
        f"airflow_home: metadata DB migrated to revision {HEAD}; connection spark_default created"
    ]
    assert "Waiting for migrations... 0 second(s)" in log and "Airflow database tables created" in log
    assert stored(home) == ([(HEAD,)], [SPARK_DEFAULT])

    report, log = prepare_command(home)
    assert report == []  # nothing migrated, nothing created
    assert "Context impl SQLiteImpl." in log  # Alembic read the revision (and Airflow's log was captured)
    assert [line for line in log.splitlines() if any(m in line for m in MIGRATION_LOGS)] == []
    assert stored(home) == ([(HEAD,)], [SPARK_DEFAULT])


def test_prepare_of_the_tests_home_in_this_process_finds_it_up_to_date(airflow_home):
    from jobs.airflow_home import Prepared, prepare

    assert stored(airflow_home) == ([(HEAD,)], [SPARK_DEFAULT])  # prepared by the session fixture
    assert prepare(airflow_home) == Prepared(revision=HEAD, migrated=False, connection_created=False)
    assert stored(airflow_home) == ([(HEAD,)], [SPARK_DEFAULT])


def test_prepare_refuses_a_home_other_than_the_one_airflow_was_imported_with(airflow_home, tmp_path):
    from jobs.airflow_home import prepare

    with pytest.raises(RuntimeError) as error:
        prepare(tmp_path)
    assert str(error.value) == (
        f"Airflow is configured for {airflow_home} in this process, not {tmp_path.resolve()}: "
        f"run `python -m jobs.airflow_home prepare {tmp_path.resolve()}`"
    )
    assert not (tmp_path / "airflow.db").exists()
