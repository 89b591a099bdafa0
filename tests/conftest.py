import os

import pytest
from hypothesis import HealthCheck, settings
from worker_schedule import pytest_xdist_make_scheduler  # noqa: F401 (a hook: pytest finds it here)

from jobs.session import JAVA_OPTIONS

# CI runs the property tests with at least 500 examples each, derandomized so a failure reproduces
# (scripts/test sets the profile when CI is set; HYPOTHESIS_PROFILE=ci scripts/test does the same here).
# A developer's run draws 60 fresh ones each time, so ``scripts/test -m "not slow"`` stays a quick loop (issue
# 17's 2 minutes) and, run after run, still covers new ground. Costly properties draw fewer under CI only
# (``workloads.examples``): a profile's count holds everywhere else, the bug hunt's 3,000 too.
settings.register_profile(
    "ci", max_examples=500, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A bug hunt: many fresh random examples (HYPOTHESIS_PROFILE=deep scripts/test tests/test_property.py ...).
settings.register_profile("deep", max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# A test that asks for one of these starts a JVM or Airflow's metadata DB (directly or through a fixture that
# does): it is slow whatever its own marks say, so ``scripts/test -m "not slow"`` never waits for one.
JVM_OR_AIRFLOW = frozenset(
    {"spark", "spark_server", "events_table", "clean_events", "airflow_home", "cluster"}
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if JVM_OR_AIRFLOW & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


# The driver options of the run's long-lived JVMs (its session, its Spark Connect server): conf/spark/test.toml
# gives the short-lived ones the client compiler only, which makes a JVM that runs every test slower.
LONG_LIVED_JVM = {JAVA_OPTIONS: ""}


@pytest.fixture(scope="session")
def spark():
    """ONE local SparkSession per test run (local[2], conf/spark/test.toml), for the job and Airflow tests."""
    pytest.importorskip("pyspark")
    pytest.importorskip("delta")
    os.environ["HAMLET_ENV"] = "test"
    from jobs.session import build_session

    session = build_session("hamlet-tests", conf=LONG_LIVED_JVM)
    yield session
    session.stop()
