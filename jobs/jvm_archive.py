"""A class-data-sharing archive of the Spark driver JVM (the JDK's AppCDS), dumped once by the project's setup.

    python -m jobs.jvm_archive build   # scripts/bootstrap runs it after the jars are resolved

A driver JVM with Spark and Delta parses and verifies some ten thousand classes before it does any work; mapped
from an archive, they are ready at once: an empty PySpark job with Delta starts in 8–9 s instead of 12–13 here
(bench/results/startup.md). Every driver the project starts (a job's session, the Airflow task's
spark-submit, the Spark Connect server) names the archive through ``jobs.session.driver_java_options``, and
so do the executors of a cluster (a node without the file, or with another JDK, starts them as before).

The archive is the JVM's own dynamic one (``-XX:ArchiveClassesAtExit``): the classes one small Delta and Arrow
job loaded, dumped when its JVM exits. A JVM of another build, or with another class path, cannot map it and
starts as it would without, so a stale archive costs nothing but the time it would have saved; the setup
dumps a new one whenever the JDK, Spark or the jars change.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

# (a JVM that cannot map the archive says so on stdout: not a thing a user of a job can act on)
QUIET = "-Xlog:cds*=off"


def archive_path() -> Path:
    from jobs.session import var_dir

    return var_dir() / "jvm" / "spark-driver.jsa"


def java_options() -> str:
    """The JVM options that map the archive, or nothing where the setup dumped none."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.is_file() else ""


def with_archive(given: str) -> str:
    """``given`` JVM options, with the archive's unless they say how to share classes themselves (a user's
    ``-Xshare:off``, the dump's own ``ArchiveClassesAtExit``, which must not map the archive it replaces)."""
    if any(flag in given for flag in ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit")):
        return given
    return " ".join(filter(None, [given, java_options()]))


def build() -> None:
    """Dump the archive in a JVM of its own (the job below), then put it in place at once: a driver starting
    meanwhile maps the old archive or none, never half a file."""
    path = archive_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    dumping = path.with_name(f".{path.name}.{os.getpid()}")
    dumping.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "jobs.jvm_archive", "dump", str(dumping)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not dumping.is_file():
        dumping.unlink(missing_ok=True)
        raise RuntimeError(f"the JVM dumped no archive (exit {done.returncode}):\n{done.stderr[-2000:]}")
    os.replace(dumping, path)


def dump(target: str) -> None:
    """A small job that loads what the project's drivers load (a Delta write, an overwrite of one slice, a
    filtered read, Arrow to Python workers and back), in a driver that writes its classes to ``target`` when
    it exits."""
    from pyspark import SparkContext

    from jobs.session import JAVA_OPTIONS, build_session

    spark = build_session("hamlet-jvm-archive", master="local[1]",
                          conf={JAVA_OPTIONS: f"-XX:ArchiveClassesAtExit={target} {QUIET}"})  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        table = str(Path(folder) / "t")
        frame = spark.range(100).selectExpr("id", "id % 4 AS part", "CAST(id AS DOUBLE) AS v")
        frame.write.format("delta").partitionBy("part").save(table)
        frame.where("part = 1").write.format("delta").mode("overwrite").option(
            "replaceWhere", "part = 1"
        ).save(table)
        read = spark.read.format("delta").load(table).where("v > 3")
        read.groupBy("part").applyInArrow(lambda t: t.slice(0, 1), read.schema).collect()
    spark.stop()
    # The JVM dumps when it exits, which it does when its standard input closes: wait for it here, so the
    # archive is whole when this process ends.
    gateway = SparkContext._gateway
    assert gateway is not None  # (the session above started it)
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=300)


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["build"]:
        try:
            build()
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"jvm_archive: {e}", file=sys.stderr)
            sys.exit(1)
    elif command == ["dump"] and len(sys.argv) == 3:
        dump(sys.argv[2])
    else:
        print("usage: python -m jobs.jvm_archive build", file=sys.stderr)
        sys.exit(2)
