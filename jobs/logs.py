"""Python's side of a quiet log: library warnings and log records that repeat on every run and ask nothing of
a user (the JVM's side is ``conf/spark/log4j2.properties``). Each entry says why it is noise.

``quiet()`` is called by every entry point that imports these libraries: the Spark session builder, the
validation gates before Great Expectations is imported, the Airflow tasks and home, the demo. It only raises
thresholds of named loggers and ignores exact warnings, so anything else still shows.
"""

from __future__ import annotations

import logging
import re
import sys
import warnings

# (start of the message, category): warnings about the libraries' own internals, the same on every run.
NOISE: tuple[tuple[str, type[Warning]], ...] = (
    # PITFALLS: results are identical with pandas 2.3 and 3.x; the jobs use Arrow, not pandas.
    ("PySpark does not yet fully support pandas", FutureWarning),
    # Airflow's own in-process API server of dag.test (demo, tests) imports a deprecated test client.
    ("Using `httpx` with `starlette.testclient` is deprecated", Warning),
    # Airflow's standard provider (the @task.sensor decorator) imports a name Airflow itself deprecated.
    ("The `airflow.utils.operator_helpers.determine_kwargs` attribute is deprecated", Warning),
)

# Loggers whose INFO records say nothing about the user's data: Great Expectations logs ~50 lines
# ("Skipping registering function ... because it is a closure") each time it is imported, and its temporary
# folders; py4j its connections to the JVM. Their warnings and errors still show.
QUIET_LOGGERS: dict[str, int] = {"great_expectations": logging.WARNING, "py4j": logging.WARNING}


# PySpark logs every AnalysisException it raises (a missing column, a failed MERGE) as one JSON record of the
# JVM's whole stack trace on stderr, before the command catches the exception and prints its one-line error:
# a traceback in all but name. The exception itself still carries the message.
PYSPARK_ERROR_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def quiet() -> None:
    for message, category in NOISE:
        warnings.filterwarnings("ignore", message=re.escape(message), category=category)
    for name, level in QUIET_LOGGERS.items():
        logging.getLogger(name).setLevel(level)
    if "pyspark" not in sys.modules:  # (not imported for this: the DAG processor imports no PySpark; every
        return  # session builder imports it, then calls this)
    from pyspark.logger import PySparkLogger

    for name in PYSPARK_ERROR_LOGGERS:  # (PySpark's own logger class: its records take extra keywords)
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def error_line(error: BaseException) -> str:
    """An unexpected failure of a command in one line: its type and its message's first line (a Spark plan or
    a JVM stack trace follows it); for a JVM error reached through py4j, the Java exception's own line; for
    a Python worker's error, the last line of its traceback (the error itself)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    name = type(error).__name__
    if not lines:
        return name
    if (
        name == "Py4JJavaError" and len(lines) > 1
    ):  # ("An error occurred while calling o68.execute.", ": ...")
        return f"{name}: {lines[1].lstrip(': ')}"
    if (
        name == "PythonException"
    ):  # ("An exception was thrown from the Python worker...", "Traceback ...", ...)
        return f"{name}: {lines[-1]}"
    return f"{name}: {lines[0]}"
