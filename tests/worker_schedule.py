"""How scripts/test's two workers share the test files (tests/conftest.py registers the hook)."""

from xdist.scheduler import LoadFileScheduling

# scripts/test's two workers (``--dist loadfile``) take a test file at a time. Files that ask for the run's Spark
# Connect server (a JVM, seconds to start and tens of CPU seconds to warm up) run in one worker, which starts
# it once; on two workers each started its own.
SCOPES = {"tests/spark/test_load_events.py": "tests/spark/test_spark_server.py"}
# The longest files first (longest processing time first): a 100-second file taken last kept one worker busy
# while the other had finished. Summed test seconds per file (bench/results/test_time.md), a developer's run;
# a file not listed is short and keeps xdist's order (most tests first).
SECONDS = {
    "tests/spark/test_spark_server.py": 210,  # with test_load_events.py
    "tests/spark/test_job_aggregate.py": 160,
    "tests/airflow/test_pipeline.py": 105,
    "tests/spark/test_messy_inputs.py": 90,
    "tests/airflow/test_rest_e2e.py": 80,
    "tests/spark/test_job_cluster.py": 75,
    "tests/spark/test_job_robustness.py": 55,
    "tests/airflow/test_private_by_default.py": 40,
    "tests/spark/test_jars_and_logs.py": 25,
    "tests/spark/test_delta_readers.py": 20,
    "tests/test_property.py": 20,
    "tests/airflow/test_security.py": 10,
}
# Under CI's Hypothesis profile (500 examples a property, tests/conftest.py) the property files are long too.
CI_SECONDS = {
    "tests/test_property.py": 155,
    "tests/test_mixed.py": 80,
    "tests/test_native.py": 45,
    "tests/test_merged_template.py": 45,
    "tests/test_numeric_values.py": 30,
    "tests/test_differential.py": 25,
    "tests/test_window_ends.py": 25,
    "tests/test_trends.py": 20,
}


def seconds() -> dict[str, int]:
    """The expected seconds per file under the Hypothesis profile loaded."""
    from hypothesis import settings

    return {**SECONDS, **CI_SECONDS} if settings.get_current_profile_name() == "ci" else SECONDS


class FileScheduling(LoadFileScheduling):
    """xdist's ``--dist loadfile``, with SCOPES' files in one scope and the queue ordered by ``seconds()``."""

    ordered = False  # (the queue is complete once work is first assigned: ordered then)

    def _split_scope(self, nodeid: str) -> str:
        path = super()._split_scope(nodeid)
        return SCOPES.get(path, path)

    def _assign_work_unit(self, node) -> None:
        if not self.ordered:
            expected = seconds()
            units = sorted(self.workqueue.items(), key=lambda unit: -expected.get(unit[0], 0))
            self.workqueue.clear()
            self.workqueue.update(units)
            self.ordered = True
        super()._assign_work_unit(node)


def pytest_xdist_make_scheduler(config, log):
    return FileScheduling(config, log) if config.getvalue("dist") == "loadfile" else None
