"""The one SparkSession builder of the project: jobs, tests and the benchmark all call ``build_session``.

Where settings come from, strongest first:

1. the caller's ``master`` / ``conf`` arguments (``--master`` of the jobs);
2. the environment: ``HAMLET_SPARK_MASTER``, and ``HAMLET_SPARK_CONF`` as ``key=value`` pairs separated by
   ``;`` or new lines;
3. ``conf/spark/<HAMLET_ENV>.toml`` (``HAMLET_ENV`` defaults to ``local``; the tests use ``test``);
4. ``local[*]``.

With ``HAMLET_SPARK_REMOTE=sc://HOST:PORT`` (and no explicit master) the session is a Spark Connect client of
that server (``jobs/spark_server.py``, which has all of the below): no JVM starts in this process.

Always set here, whatever the above says: a local JVM on 127.0.0.1 (its UI too) unless ``SPARK_LOCAL_IP``
is set, and on a cluster no UI unless ``spark.ui.enabled`` is set; the UTC session time zone; Delta Lake's
extension and catalog, with the Delta jars by path (``spark.jars``) from ``var/jars``, where the project's
setup resolved them once (``jobs/jars.py``): no JVM resolves dependencies at run time; the logging of
``conf/spark/log4j2.properties`` (warnings and errors only, no start-up chatter); and the workers' Python:
the interpreter running this code, unless ``PYSPARK_PYTHON`` names one (otherwise Spark starts ``python3``
from PATH, which lacks pyarrow and ``hamlet``).

spark-submit starts its JVM before any of this runs: ``submit_options`` (``--jars``, the driver's Java
options, the settings of ``conf/spark``) gives it the same class path and logging, as the Airflow task does.
Started without them, ``reexec_without_submit_jvm`` restarts the driver as plain Python (see its docstring).
"""

from __future__ import annotations

import os
import sys
import tomllib
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs import jvm_archive

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def var_dir() -> Path:
    """The project's runtime folder (ignored by git): the Delta jars, local tables, zips for clusters."""
    return Path(os.environ.get("HAMLET_VAR_DIR", ROOT / "var"))


LOG4J_CONF = ROOT / "conf" / "spark" / "log4j2.properties"
JAVA_OPTIONS = "spark.driver.extraJavaOptions"
EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"


# Whatever the settings say: times in UTC, Delta, and Arrow refusing lossy conversions (PITFALLS: overflow
# would wrap silently otherwise).
ALWAYS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.extensions": DELTA_EXTENSION,
    "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
    "spark.sql.execution.pandas.convertToArrowArraySafely": "true",
}


def driver_java_options(given: str | None) -> str:
    """The driver JVM's options: ``given``, then the project's log4j2 settings unless ``given`` names a log4j2
    configuration of its own (a user debugging Spark), and the setup's class archive (``jobs/jvm_archive.py``)
    unless ``given`` says how to share classes itself."""
    given = (given or "").strip()
    if "log4j2.configurationFile" not in given and "log4j.configurationFile" not in given:
        given = f"{given} -Dlog4j2.configurationFile={LOG4J_CONF.as_uri()}".strip()
    return jvm_archive.with_archive(given)


def _parse_pairs(text: str) -> dict[str, str]:
    pairs = {}
    for item in text.replace("\n", ";").split(";"):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"HAMLET_SPARK_CONF: expected key=value, found {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def settings(master: str | None = None, conf: Mapping[str, str] | None = None,
             env: str | None = None) -> tuple[str, dict[str, str]]:  # fmt: skip
    """The master URL and Spark settings the session will get (without the always-set ones)."""
    env = env or os.environ.get("HAMLET_ENV", "local")
    path = ROOT / "conf" / "spark" / f"{env}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in (ROOT / "conf" / "spark").glob("*.toml"))
        raise ValueError(f"HAMLET_ENV={env!r}: no {path} (known: {', '.join(known)})")
    with path.open("rb") as f:
        data = tomllib.load(f)
    chosen_master = data.get("master", "local[*]")
    values = {str(k): str(v) for k, v in data.get("conf", {}).items()}
    if os.environ.get("HAMLET_SPARK_MASTER"):
        chosen_master = os.environ["HAMLET_SPARK_MASTER"]
    values.update(_parse_pairs(os.environ.get("HAMLET_SPARK_CONF", "")))
    if master:
        chosen_master = master
    values.update(conf or {})
    return chosen_master, values


def is_remote(spark: SparkSession) -> bool:
    """A Spark Connect session (``HAMLET_SPARK_REMOTE``): no JVM in this process, no SparkContext, and Delta's
    Python API (``delta.tables``) needs a server plugin it does not have, so callers use SQL instead."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def worker_python() -> str:
    return os.environ.get("PYSPARK_PYTHON") or sys.executable


def executor_python(env: str | None = None) -> str:
    """What a non-local master's executors run their Python workers with: ``archive`` (the default: the
    packed environment of ``jobs/executor_env.py``, shipped with ``spark.archives``), or the path of a Python
    installed on every node with the compiled engine, pyarrow and pandas. ``HAMLET_EXECUTOR_PYTHON``, then
    ``executor_python`` of ``conf/spark/<env>.toml``."""
    env = env or os.environ.get("HAMLET_ENV", "local")
    path = ROOT / "conf" / "spark" / f"{env}.toml"
    chosen = "archive"
    if path.is_file():
        with path.open("rb") as f:
            chosen = str(tomllib.load(f).get("executor_python", chosen))
    return os.environ.get("HAMLET_EXECUTOR_PYTHON") or chosen


def submitted_master() -> str | None:
    """The ``--master`` of the spark-submit that started this driver (the Airflow task's connection), which
    the session must keep: None when this process was not started by spark-submit."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return SparkConf().get("spark.master", None)


def owns_session() -> bool:
    """True when no SparkContext runs in this process yet: a command that starts one stops it at the end;
    one called inside a program that has a session (tests, notebooks) leaves it running."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context is None


@contextmanager
def command_session(app_name: str, master: str | None) -> Iterator[SparkSession]:
    """The session of one command (generate, load-events, aggregate): stopped at the end only when the
    command started it (``owns_session``), so tests and notebooks keep theirs."""
    owned = owns_session()
    spark = build_session(app_name, master=master)
    try:
        yield spark
    finally:
        if owned:
            spark.stop()


def build_session(app_name: str = "hamlet", master: str | None = None, conf: Mapping[str, str] | None = None,
                  env: str | None = None) -> SparkSession:  # fmt: skip
    """Get or create the SparkSession (Delta, UTC, the project's Python on workers)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from jobs.jars import jar_paths
    from jobs.logs import quiet

    quiet()
    remote = os.environ.get("HAMLET_SPARK_REMOTE")
    if remote and master is None and SparkContext._active_spark_context is None:
        # A Spark Connect server (jobs/spark_server.py) holds the JVM, the jars and the settings: connect.
        # Not when this process runs a JVM already (dag.test, notebooks): PySpark marks a process that made a
        # Connect session as Connect-only, which would break the session it has.
        # spark-submit exports its --master as MASTER, which PySpark refuses next to a remote: the server's wins.
        os.environ.pop("MASTER", None)
        return SparkSession.builder.remote(remote).appName(app_name).getOrCreate()
    chosen_master, values = settings(master or submitted_master(), conf, env)
    local = chosen_master.startswith("local")
    python = worker_python()
    values.update(ALWAYS)
    if not local:
        python = _executor_python(values, env)
        values[EXECUTOR_JAVA_OPTIONS] = jvm_archive.with_archive(
            values.get(EXECUTOR_JAVA_OPTIONS, "").strip()
        )
    values.update({"spark.pyspark.python": python, "spark.executorEnv.PYSPARK_PYTHON": python})
    if SparkContext._active_spark_context is not None:
        # This process has its session (a test run, the demo's tasks, a notebook): no JVM setting can change
        # any more, so set only what a session can take. A builder with options would apply the same and
        # warn "Using an existing Spark session" on every call.
        spark = SparkSession.builder.getOrCreate()
        for key, value in values.items():
            if spark.conf.isModifiable(key):
                spark.conf.set(key, value)
        return spark
    values[JAVA_OPTIONS] = driver_java_options(values.get(JAVA_OPTIONS))
    jars = [str(p) for p in jar_paths()]  # before any JVM starts: a missing jar is a setup error, said so
    values["spark.jars"] = ",".join(filter(None, [*jars, values.get("spark.jars", "")]))
    # This process's own (and local) workers: the project's Python, never a cluster's relative one.
    os.environ.setdefault("PYSPARK_PYTHON", worker_python())
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(chosen_master)
    for key, value in values.items():
        builder = builder.config(key, value)
    if not local and "SPARK_LOCAL_IP" not in os.environ:
        # The driver must be reachable by the cluster's executors, so it cannot bind to 127.0.0.1, and its
        # UI would then listen on every interface: off unless the settings turn it on.
        builder = builder.config("spark.ui.enabled", values.get("spark.ui.enabled", "false"))
    with _loopback_jvm(chosen_master), _executors_python(None if local else python):
        spark = builder.getOrCreate()
    if not local:
        _ship_code(spark)
        print(check_executors(spark), file=sys.stderr)
    return spark


def _executor_python(values: dict[str, str], env: str | None) -> str:
    """On a cluster: the executors' Python (``executor_python``); for ``archive`` the packed environment is
    added to ``spark.archives`` (unpacked by each executor as ``./hamlet-env``)."""
    from jobs.executor_env import ALIAS, EXECUTOR_PYTHON, archive_path

    chosen = executor_python(env)
    if chosen != "archive":
        return chosen
    shipped = f"{archive_path().resolve().as_uri()}#{ALIAS}"
    values["spark.archives"] = ",".join(filter(None, [values.get("spark.archives", ""), shipped]))
    return EXECUTOR_PYTHON


@contextmanager
def _executors_python(python: str | None) -> Iterator[None]:
    """PySpark takes the executors' Python from ``PYSPARK_PYTHON`` when the SparkContext starts (not from
    ``spark.pyspark.python``): set it to the cluster's for the start only, so that this process's later local
    work (and a spark-submit's driver) keep theirs."""
    if python is None:
        yield
        return
    previous = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = python
    try:
        yield
    finally:
        if previous is None:
            del os.environ["PYSPARK_PYTHON"]
        else:
            os.environ["PYSPARK_PYTHON"] = previous


class ExecutorsCannotRun(RuntimeError):
    """The cluster's executors cannot import the engine (no archive shipped, a Python without it)."""


def check_executors(spark: SparkSession) -> str:
    """One task on the cluster imports the compiled engine the way the job's tasks will, before any work:
    a Python without it fails here with one clear message instead of a task's traceback per partition.
    Returns the line the commands print: which Python the executors run and where ``hamlet_native`` came from
    (the test of the standalone cluster asserts it is the shipped archive)."""

    def probe(_: object) -> list[tuple[str, str, str, str]]:
        import sys as executor_sys

        try:
            import hamlet_native

            return [(executor_sys.executable, str(hamlet_native.__file__), kernel_build(hamlet_native), "")]
        except ImportError as error:  # reported by the driver, below
            return [(executor_sys.executable, "", "", str(error))]

    sc = spark.sparkContext
    python, native, build, error = sc.parallelize([0], 1).mapPartitions(probe).collect()[0]
    rebuild = ("Build the shipped environment with `bash scripts/bootstrap dev,spark`, or install hamlet_native "
               "(pip install ./native), pyarrow and pandas into that Python")  # fmt: skip
    if error:
        raise ExecutorsCannotRun(
            f"the executors' Python ({python}, executor_python = {executor_python()!r}) cannot import the compiled "
            f"engine: {error}. {rebuild}"
        )
    import hamlet_native

    if build != kernel_build(hamlet_native):  # (an older kernel would fail each task, or answer differently)
        raise ExecutorsCannotRun(
            f"the executors' compiled engine ({native}) is not the driver's ({hamlet_native.__file__}): {rebuild}"
        )
    return f"executors: Python {python}, hamlet_native from {native}"


def kernel_build(module: Any) -> str:
    """A digest of the compiled engine's extension files: equal on the driver and the executors when both run
    the same build."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(Path(module.__file__).parent.glob("*.so")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def _loopback_jvm(master: str) -> Iterator[None]:
    """Start a local JVM with ``SPARK_LOCAL_IP=127.0.0.1`` unless the caller set it: Spark binds its UI
    (port 4040) to that variable's address, and without it to every interface. The variable is read when
    the JVM starts, so it is set for the start only."""
    if not master.startswith("local") or "SPARK_LOCAL_IP" in os.environ:
        yield
        return
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    try:
        yield
    finally:
        del os.environ["SPARK_LOCAL_IP"]


def submit_conf(env: str | None = None) -> dict[str, str]:
    """What a spark-submit of a project job needs before its JVM starts, as ``--conf`` settings: the
    settings of ``conf/spark/<env>.toml`` and ``HAMLET_SPARK_CONF`` (the driver's memory cannot be set
    later) and the driver's Java options (logging). The master is the caller's (Airflow: the connection)."""
    _, values = settings(env=env)
    values[JAVA_OPTIONS] = driver_java_options(values.get(JAVA_OPTIONS))
    return values


def submit_options(env: str | None = None) -> list[str]:
    """spark-submit's options for a project job: ``--jars`` (the Delta jars of ``var/jars``, so Delta is on
    the submit JVM's class path and the driver is not restarted) and ``submit_conf``."""
    from jobs.jars import jar_paths

    options = ["--jars", ",".join(str(p) for p in jar_paths())]
    for key, value in submit_conf(env).items():
        options += ["--conf", f"{key}={value}"]
    return options


def _ship_code(spark: SparkSession) -> None:
    """On a cluster, executors may not have this checkout: send ``hamlet`` and ``jobs`` as a zip (named by
    its content, so reruns reuse it)."""
    import hashlib
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for package in ("hamlet", "jobs"):
            files = sorted((ROOT / package).rglob("*.py"))
            # A folder entry for every package: zipimport finds a namespace package (a folder without
            # __init__.py, such as hamlet/analysis) only by its entry.
            for folder in sorted({p.parent.relative_to(ROOT).as_posix() for p in files}):
                z.writestr(zipfile.ZipInfo(f"{folder}/", date_time=(1980, 1, 1, 0, 0, 0)), b"")
            for path in files:
                info = zipfile.ZipInfo(path.relative_to(ROOT).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
                z.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    data = buffer.getvalue()
    target = var_dir() / "pyfiles" / f"hamlet-jobs-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(target)
    spark.sparkContext.addPyFile(str(target))


def reexec_without_submit_jvm() -> None:
    """Make ``spark-submit jobs/X.py ARGS`` work without ``--packages``.

    spark-submit starts the JVM first and this Python file second, so the Delta jars that ``build_session``
    names would come too late. When this process was started by spark-submit (``PYSPARK_GATEWAY_PORT`` is
    set) and Delta is not on that JVM's class path, the driver is started again as plain Python with the same
    arguments; the settings given to spark-submit (``--master``, ``--conf``) travel along in
    ``HAMLET_SPARK_MASTER`` / ``HAMLET_SPARK_CONF``. spark-submit's own JVM only waits for it and returns its
    exit code. With ``submit_options`` (``--jars``: what the Airflow task passes) nothing is restarted.
    """
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    jvm = SparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(DELTA_EXTENSION, False, loader)
        return
    except Exception:  # noqa: BLE001, S110 (py4j wraps ClassNotFoundException: Delta is missing)
        pass
    submitted = dict(SparkConf().getAll())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    master = submitted.pop("spark.master", None)
    if master and "HAMLET_SPARK_MASTER" not in os.environ:
        env["HAMLET_SPARK_MASTER"] = master
    skip = ("spark.submit.", "spark.app.", "spark.master", "spark.jars", "spark.repl.", "spark.files",
            "spark.driver.host", "spark.driver.port", "spark.executor.id", "spark.pyspark.")  # fmt: skip
    forwarded = {k: v for k, v in submitted.items() if not k.startswith(skip)}
    if forwarded:
        previous = env.get("HAMLET_SPARK_CONF", "")
        env["HAMLET_SPARK_CONF"] = ";".join([*(f"{k}={v}" for k, v in forwarded.items()), previous])
    SparkContext._gateway = None
    SparkContext._jvm = None
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], env)
