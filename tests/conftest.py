import os

import pytest
from hypothesis import HealthCheck, settings

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


# scripts/test's two workers (``--dist loadfile``) take a test file at a time. Files that ask for the run's Spark
# Connect server (a JVM, seconds to start and tens of CPU seconds to warm up) run in one worker, which starts
# it once; on two workers each started its own.
SCOPES = {"tests/spark/test_load_events.py": "tests/spark/test_spark_server.py"}
# The longest files first (longest processing time first): a 100-second file taken last kept one worker busy
# while the other had finished. Summed test seconds per file, a developer's run (bench/results/test_time.md);
# a file not listed is short and keeps xdist's order (most tests first).
SECONDS = {
    "tests/spark/test_spark_server.py": 270,  # with test_load_events.py
    "tests/spark/test_job_aggregate.py": 200,
    "tests/airflow/test_pipeline.py": 120,
    "tests/spark/test_messy_inputs.py": 110,
    "tests/spark/test_job_cluster.py": 100,
    "tests/spark/test_job_robustness.py": 80,
    "tests/airflow/test_rest_e2e.py": 70,
    "tests/airflow/test_private_by_default.py": 50,
    "tests/spark/test_delta_readers.py": 30,
    "tests/test_property.py": 30,
    "tests/spark/test_jars_and_logs.py": 20,
    "tests/airflow/test_security.py": 20,
}


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        ordered = False  # (the queue is complete once work is first assigned: ordered then)

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SCOPES.get(path, path)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: -SECONDS.get(unit[0], 0))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return FileScheduling(config, log)


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
