"""Fixtures of the Airflow tests; their environment (Airflow home, pipeline settings) is set by
airflow_env.py, imported first: Airflow reads its configuration when it is first imported."""

from __future__ import annotations

import shutil

import pytest
from airflow_env import HOME, RATE, SEED, START, WORK


@pytest.fixture(scope="session")
def airflow_home():
    """The metadata DB migrated once per test run (jobs.airflow_home.prepare, as scripts/airflow does)."""
    from jobs.airflow_home import prepare

    prepare(HOME)
    return HOME


def pytest_sessionfinish(session, exitstatus):
    """airflow_env.py made the folder at import, whichever tests ran (even none): it goes with the run."""
    shutil.rmtree(WORK, ignore_errors=True)


@pytest.fixture(scope="session")
def config():
    from jobs.pipeline import load_config

    return load_config()


@pytest.fixture(scope="session")
def clean_events(spark, config) -> str:
    """Two hours (08:00-10:00) of generated rideshare events in the configured events table."""
    from jobs.generate import generate

    generate(spark, "rideshare", START, 2, RATE, config.events_table, seed=SEED)
    return config.events_table
