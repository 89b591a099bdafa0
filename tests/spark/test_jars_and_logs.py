"""The Delta jars resolved once by the setup and named by path; the quiet log of a job and its summary line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from spark_env import maps_class_archive

from jobs import jvm_archive
from jobs.jars import MANIFEST, JarsMissing, Manifest, delta_package, jar_paths, resolve
from jobs.session import LOG4J_CONF, ROOT, driver_java_options, submit_options
from jobs.summary import Summary

# The one line the JVM prints itself when Spark adds its incubator module: no log4j setting reaches it.
JVM_LINE = "WARNING: Using incubator modules: jdk.incubator.vector"


def test_the_jars_are_those_delta_would_ask_maven_for():
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    asked = configure_spark_with_delta_pip(SparkSession.Builder())._options["spark.jars.packages"]  # type: ignore[attr-defined]
    assert asked == delta_package() == "io.delta:delta-spark_4.2_2.13:4.4.0"


def test_a_missing_or_stale_jars_folder_says_how_to_get_the_jars(tmp_path):
    package = delta_package()
    with pytest.raises(JarsMissing) as missing:
        jar_paths(tmp_path)
    assert str(missing.value) == (f"no Delta Lake jars in {tmp_path} (MANIFEST missing): run scripts/bootstrap "
                                  f"dev,spark, which resolves {package} once from Maven Central")  # fmt: skip
    (tmp_path / MANIFEST).write_text(Manifest(("io.delta:delta-spark_4.1_2.13:4.0.0",), ("a.jar",)).text())
    with pytest.raises(JarsMissing) as stale:
        jar_paths(tmp_path)
    assert str(stale.value) == (f"{tmp_path} holds the jars of io.delta:delta-spark_4.1_2.13:4.0.0, not of "
                                f"{package} (the installed delta-spark): run scripts/bootstrap dev,spark")  # fmt: skip
    (tmp_path / MANIFEST).write_text(Manifest((package,), ("a.jar", "b.jar")).text())
    (tmp_path / "a.jar").write_bytes(b"")
    with pytest.raises(JarsMissing) as partial:
        jar_paths(tmp_path)
    assert str(partial.value) == (f"{tmp_path}: 1 of the 2 jars in MANIFEST are missing (b.jar): run "
                                  "scripts/bootstrap dev,spark")  # fmt: skip
    (tmp_path / MANIFEST).write_text("package x\nwhatever\n")
    with pytest.raises(JarsMissing, match=r"MANIFEST:2: expected 'package COORDINATES' or 'jar FILE'"):
        jar_paths(tmp_path)


def test_a_folder_that_holds_the_jars_is_not_resolved_again(tmp_path):
    (tmp_path / MANIFEST).write_text(Manifest((delta_package(),), ("a.jar",)).text())
    (tmp_path / "a.jar").write_bytes(b"")
    assert resolve(tmp_path) is False  # no JVM started: it would fail on this fake jar folder's Ivy
    assert jar_paths(tmp_path) == [tmp_path / "a.jar"]


@pytest.mark.slow  # starts the test run's JVM
def test_sessions_name_the_jars_by_path_and_log_with_the_project_settings(spark):
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.jars") == ",".join(str(p) for p in jar_paths())
    assert conf.get("spark.jars.packages") is None and conf.get("spark.jars.ivy") is None
    # Spark puts its module options (--add-opens ...) first
    assert conf.get("spark.driver.extraJavaOptions").endswith(
        f" -Dlog4j2.configurationFile={LOG4J_CONF.as_uri()} {jvm_archive.java_options()}"
    )


def test_driver_options_add_the_project_logging_and_class_archive_unless_given_their_own(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HAMLET_VAR_DIR", str(tmp_path))
    log4j = f"-Dlog4j2.configurationFile={LOG4J_CONF.as_uri()}"
    # a user's own log4j2 file wins; other options keep theirs and get the project's logging
    assert driver_java_options("-Dlog4j2.configurationFile=file:/mine.properties") == (
        "-Dlog4j2.configurationFile=file:/mine.properties"
    )
    assert driver_java_options("-Xss4m") == f"-Xss4m {log4j}"  # (no archive dumped: a setup without Java)
    archive = jvm_archive.archive_path()  # (in tmp_path)
    archive.parent.mkdir()
    archive.write_bytes(b"")
    sharing = f"-XX:SharedArchiveFile={archive} -Xlog:cds*=off"
    assert driver_java_options(None) == f"{log4j} {sharing}"
    assert driver_java_options("-Dlog4j2.configurationFile=file:/mine.properties") == (
        f"-Dlog4j2.configurationFile=file:/mine.properties {sharing}"
    )
    # a user's own class sharing (or none) wins, and the archive's dump must not map the archive it replaces
    assert driver_java_options("-Xshare:off") == f"-Xshare:off {log4j}"
    assert (
        driver_java_options("-XX:ArchiveClassesAtExit=/tmp/a.jsa")
        == f"-XX:ArchiveClassesAtExit=/tmp/a.jsa {log4j}"
    )


@pytest.mark.slow  # starts the test run's JVM
def test_the_session_jvm_maps_the_class_archive_the_setup_dumped(spark):
    """The archive is the JVM's to validate (its build, the class path): mapped means it passed, and the
    driver started without parsing the classes it holds (jobs/jvm_archive.py)."""
    from pyspark import SparkContext

    assert jvm_archive.archive_path().is_file(), "scripts/bootstrap dumps it"
    assert maps_class_archive(SparkContext._gateway.proc.pid)


@pytest.mark.slow  # starts the test run's JVM
def test_a_session_asked_for_again_keeps_its_jvm_settings_and_takes_runtime_ones(spark):
    from jobs.session import build_session

    again = build_session("again", conf={"spark.sql.shuffle.partitions": "3"})
    try:
        assert again is spark and spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "2")


def test_the_summary_line_names_each_count_that_applies():
    start, end = datetime(2026, 1, 5, 9, tzinfo=UTC), datetime(2026, 1, 5, 10, tzinfo=UTC)
    line = Summary("aggregate", "trips", start, end, 21.43, rows_in=4000, quarantined=3, rows_out=1708,
                   shared_bursts=12).line()  # fmt: skip
    assert line == (
        "aggregate trips [2026-01-05T09:00Z, 2026-01-05T10:00Z): 4000 rows in, 3 quarantined, 1708 rows out, "
        "12 shared bursts, 21.4 s"
    )
    odd = datetime(2026, 1, 5, 9, 30, 15, 500000, tzinfo=UTC)
    assert Summary("wait_for_events", "trips", odd, end, 0.04, note="waiting").line() == (
        "wait_for_events trips [2026-01-05T09:30:15.500000Z, 2026-01-05T10:00Z): waiting, 0.0 s"
    )
    loaded = Summary("load-events", "e.csv", None, None, 3.0, rows_in=10, quarantined=1, rows_out=9,
                     note="loaded into t").line()  # fmt: skip
    assert loaded == "load-events e.csv: 10 rows in, 1 quarantined, 9 rows out, loaded into t, 3.0 s"


@pytest.mark.slow  # end to end: spark-submit of the job
def test_a_submitted_job_prints_its_report_and_a_summary_and_nothing_of_spark(events_table, workload_file,
                                                                               tmp_path):  # fmt: skip
    """The aggregation as the Airflow task submits it: one JVM with the jars by path, no Ivy, no warning."""
    from deltalake import DeltaTable

    output = tmp_path / "trend_aggregates"
    args = ["--workload", str(workload_file), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
            "--events-table", events_table, "--output-table", str(output), "--run-id", "submitted"]  # fmt: skip
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "HAMLET_ENV": "test", "PYSPARK_PYTHON": sys.executable,
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    done = subprocess.run([str(bin_dir / "spark-submit"), "--master", "local[2]", *submit_options("test"),
                           str(ROOT / "jobs" / "aggregate.py"), *args], env=env, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [JVM_LINE]
    lines = done.stdout.splitlines()
    rows = DeltaTable(str(output)).to_pyarrow_table().num_rows
    read = re.fullmatch(r"run submitted: (\d+) events read, (\d+) rows written to .*", lines[0])
    assert read is not None and int(read.group(2)) == rows > 0
    stats = DeltaTable(str(tmp_path / "run_stats")).to_pyarrow_table().to_pylist()
    shared = sum(int(dict(s["engine_stats"])["shared_bursts"]) for s in stats)
    summary = re.fullmatch(rf"aggregate trips \[2026-01-05T08:00Z, 2026-01-05T09:00Z\): {read.group(1)} rows in, "
                           rf"0 quarantined, {rows} rows out, {shared} shared bursts, \d+\.\d s", lines[-1])  # fmt: skip
    assert summary is not None, lines[-1]
    # the report: its head, the shuffle group and its two sets, the stages' seconds; then the summary
    assert len(lines) == 6 and lines[1].startswith("  shuffle by ") and lines[4].startswith("  read ")
