"""How scripts/test's two workers share the test files (tests/conftest.py registers the hook)."""

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
