"""The one SparkSession builder of the project: jobs, tests and the benchmark all call ``build_session``.

Where settings come from, strongest first:

1. the caller's ``master`` / ``conf`` arguments (``--master`` of the jobs);
2. the environment: ``HAMLET_SPARK_MASTER``, and ``HAMLET_SPARK_CONF`` as ``key=value`` pairs separated by
   ``;`` or new lines;
3. ``conf/spark/<HAMLET_ENV>.toml`` (``HAMLET_ENV`` defaults to ``local``; the tests use ``test``);
4. ``local[*]``.

Always set here, whatever the above says: a local JVM on 127.0.0.1 (its UI too) unless ``SPARK_LOCAL_IP``
is set, and on a cluster no UI unless ``spark.ui.enabled`` is set; the UTC session time zone; Delta Lake's extension and catalog,
with the delta-spark jars resolved from Maven Central by ``configure_spark_with_delta_pip`` into the
project's Ivy cache ``var/ivy`` (``HAMLET_IVY_DIR`` moves it), so a fresh clone needs nothing but its own
scripts (one process at a time: ``ivy_lock``); and the workers' Python: the interpreter running this code, unless ``PYSPARK_PYTHON`` names one
(otherwise Spark starts ``python3`` from PATH, which lacks pyarrow and ``hamlet``).

Started by ``spark-submit``, the JVM exists before this code runs, so ``spark.jars.packages`` set here
would come too late: ``reexec_without_submit_jvm`` restarts the driver as plain Python when Delta is not
on that JVM's class path (see its docstring).
"""

from __future__ import annotations

import os
import sys
import tomllib
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parent.parent
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def var_dir() -> Path:
    """The project's runtime folder (ignored by git): Ivy cache, local tables, zips for clusters."""
    return Path(os.environ.get("HAMLET_VAR_DIR", ROOT / "var"))


def ivy_dir() -> Path:
    return Path(os.environ.get("HAMLET_IVY_DIR", var_dir() / "ivy"))


IVY_LOCK = ".hamlet-resolve.lock"


@contextmanager
def ivy_lock(ivy: Path) -> Iterator[None]:
    """Hold an exclusive lock on the Ivy cache while a JVM starts.

    Starting the JVM resolves ``spark.jars.packages`` (the Delta jars) into ``ivy``, and Ivy does not lock
    its cache: two JVMs resolving at once (pytest-xdist workers, two jobs started together on a fresh clone)
    download into and copy from the same files, and one may load the other's half-written jar. The lock
    (``flock`` on a file in the cache, released when the process dies) makes them resolve one after the
    other; a JVM that already runs resolves nothing, so holding the lock costs only the start-up."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (not POSIX: no lock)
        yield
        return
    with (ivy / IVY_LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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


def worker_python() -> str:
    return os.environ.get("PYSPARK_PYTHON") or sys.executable


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
    import warnings

    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    # PITFALLS: results are identical with pandas 2.3 and 3.x; the jobs use Arrow, not pandas.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    chosen_master, values = settings(master, conf, env)
    python = worker_python()
    os.environ.setdefault("PYSPARK_PYTHON", python)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    ivy = ivy_dir()
    ivy.mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder.appName(app_name).master(chosen_master)
    for key, value in values.items():
        builder = builder.config(key, value)
    builder = (
        builder.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", DELTA_EXTENSION)
        .config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
        .config("spark.jars.ivy", str(ivy))
        .config("spark.pyspark.python", python)
        .config("spark.executorEnv.PYSPARK_PYTHON", python)
        # Arrow must refuse lossy conversions (PITFALLS: overflow would wrap silently otherwise).
        .config("spark.sql.execution.pandas.convertToArrowArraySafely", "true")
    )
    if not chosen_master.startswith("local") and "SPARK_LOCAL_IP" not in os.environ:
        # The driver must be reachable by the cluster's executors, so it cannot bind to 127.0.0.1, and its
        # UI would then listen on every interface: off unless the settings turn it on.
        builder = builder.config("spark.ui.enabled", values.get("spark.ui.enabled", "false"))
    with ivy_lock(ivy), _loopback_jvm(chosen_master):
        spark = configure_spark_with_delta_pip(builder).getOrCreate()
    if not chosen_master.startswith("local"):
        _ship_code(spark)
    return spark


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


def _ship_code(spark: SparkSession) -> None:
    """On a cluster, executors may not have this checkout: send ``hamlet`` and ``jobs`` as a zip (named by
    its content, so reruns reuse it)."""
    import hashlib
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for package in ("hamlet", "jobs"):
            for path in sorted((ROOT / package).rglob("*.py")):
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

    spark-submit starts the JVM first and this Python file second, so the Delta jars that
    ``configure_spark_with_delta_pip`` asks for would never be resolved. When this process was started by
    spark-submit (``PYSPARK_GATEWAY_PORT`` is set) and Delta is not on that JVM's class path, the driver is
    started again as plain Python with the same arguments; the settings given to spark-submit (``--master``,
    ``--conf``) travel along in ``HAMLET_SPARK_MASTER`` / ``HAMLET_SPARK_CONF``. spark-submit's own JVM
    only waits for it and returns its exit code. With ``--packages io.delta:...`` nothing is restarted.
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
