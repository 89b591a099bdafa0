import os

import pytest
from hypothesis import HealthCheck, settings

# CI runs the property tests with at least 500 examples each, derandomized so a failure reproduces.
settings.register_profile(
    "ci", max_examples=500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def spark():
    """ONE local SparkSession per test run (local[2], conf/spark/test.toml), for the job and Airflow tests."""
    pytest.importorskip("pyspark")
    pytest.importorskip("delta")
    os.environ["HAMLET_ENV"] = "test"
    from jobs.session import build_session

    session = build_session("hamlet-tests")
    yield session
    session.stop()
