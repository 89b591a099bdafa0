"""The Python environment a cluster's executors run the engine in: a packed virtualenv shipped with
``spark.archives``, the way PySpark documents native dependencies (Python Package Management: venv-pack).

The engine's graph kernel ``hamlet_native`` is a compiled extension: ``--py-files`` cannot carry it (zipimport
loads no ``.so``), and a cluster's nodes do not have this checkout's ``.venv``. So the project's setup
(``scripts/bootstrap`` with the ``spark`` extra: ``python -m jobs.executor_env build``) packs a small virtualenv
with the kernel's wheel and the libraries the executors' Python imports (pyarrow, pandas, numpy, at the
versions of ``.venv``, so a cluster run computes what a local run does) into
``var/dist/hamlet-executor-env.tar.gz``. ``jobs/session.py`` ships it to every non-local master; each executor
unpacks it as ``./hamlet-env`` and starts its Python workers with ``./hamlet-env/bin/python``.

Not in the archive: PySpark (each node's Spark puts its own ``pyspark.zip`` on the workers' path, and must
be the driver's version anyway) and the pure-Python code of ``hamlet`` and ``jobs`` (shipped per run as a
zip by ``jobs.session``: it changes with every edit, the archive only when the kernel or a library does).

venv-pack keeps the virtualenv's link to its base interpreter (the ``home`` of ``.venv/pyvenv.cfg``): the
nodes need the same Python 3 minor version at that path (``venv-pack --python-prefix`` rewrites it, see README, Spark on a
cluster).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

from jobs.session import ROOT, var_dir

ARCHIVE = "hamlet-executor-env.tar.gz"
# The folder each executor unpacks the archive to (``spark.archives PATH#ALIAS``), relative to its work dir.
ALIAS = "hamlet-env"
EXECUTOR_PYTHON = f"./{ALIAS}/bin/python"
# What the executors' Python imports besides pyspark and the shipped code (jobs/engine.py: pyarrow; PySpark's
# Arrow serializers: pandas, numpy), pinned to the driver's versions.
LIBRARIES = ("pyarrow", "pandas", "numpy")


class ExecutorEnvMissing(RuntimeError):
    """The archive is not built: the project's setup was not run with the spark extra."""


def dist_dir() -> Path:
    return var_dir() / "dist"


def archive_path() -> Path:
    """The packed environment, or ``ExecutorEnvMissing`` naming the setup command that builds it."""
    path = dist_dir() / ARCHIVE
    if not path.is_file():
        raise ExecutorEnvMissing(
            f"{path} is missing: the executors' environment (the compiled engine, pyarrow, pandas) is built by "
            "the project's setup: run `bash scripts/bootstrap dev,spark` (or set executor_python in "
            "conf/spark/<env>.toml to a Python installed on every node)"
        )
    return path


def native_wheel(wheels: Path) -> Path:
    """Build the compiled kernel's wheel (maturin, cargo) into ``wheels``: the one file both ``.venv`` and the
    executors' environment install, so driver and executors run the same binary."""
    for old in wheels.glob("hamlet_native-*.whl"):
        old.unlink()
    wheels.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "wheel", "-qq", "--disable-pip-version-check", "--no-input", "--no-deps",
          "-w", str(wheels), str(ROOT / "native")])  # fmt: skip
    found = sorted(wheels.glob("hamlet_native-*.whl"))
    if len(found) != 1:
        raise RuntimeError(f"building native/ left {len(found)} hamlet_native wheels in {wheels}")
    return found[0]


def build(wheel: Path) -> Path:
    """Pack a virtualenv of ``wheel`` and ``LIBRARIES`` (at this interpreter's versions) into the archive."""
    dist = dist_dir()
    env = dist / "executor-env"
    shutil.rmtree(env, ignore_errors=True)
    dist.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", "--clear", str(env)])
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in LIBRARIES]
    _run([str(env / "bin" / "python"), "-m", "pip", "install", "-qq", "--disable-pip-version-check",
          "--no-input", *pins, str(wheel)])  # fmt: skip
    # pip and setuptools of a fresh venv are not needed by the workers: leaving them out saves ~15 MB.
    _run([str(env / "bin" / "python"), "-m", "pip", "uninstall", "-qq", "-y", "pip"])
    _drop_unused(env)
    partial = dist / f"{ARCHIVE}.tmp"
    partial.unlink(missing_ok=True)
    _run([str(Path(sys.executable).parent / "venv-pack"), "--prefix", str(env), "--output", str(partial),
          "--format", "tar.gz", "--quiet"])  # fmt: skip
    target = dist / ARCHIVE
    partial.replace(target)
    shutil.rmtree(env)
    return target


def _drop_unused(env: Path) -> None:
    """The libraries' own test suites and Arrow's C++ headers and sources, which no worker imports: each
    executor fetches and unpacks the archive, and they are about a sixth of it (17 of 108 MB packed)."""
    for site in env.glob("lib/python*/site-packages"):
        for library in LIBRARIES:
            for tests in sorted((site / library).rglob("tests"), reverse=True):
                if tests.is_dir():
                    shutil.rmtree(tests)
        for folder in ("include", "src"):
            shutil.rmtree(site / "pyarrow" / folder, ignore_errors=True)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"executor_env: `{' '.join(command)}` failed ({done.returncode}):\n{done.stderr[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.executor_env", description="The executors' packed "
                                     "Python environment (built by scripts/bootstrap).")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("wheel", help="build the compiled kernel's wheel into var/dist/wheels; print its path")
    pack = sub.add_parser("build", help="pack var/dist/hamlet-executor-env.tar.gz")
    pack.add_argument("--wheel", type=Path, help="the kernel's wheel (default: build it)")
    sub.add_parser("path", help="print the archive's path (exit 1 when it is not built)")
    args = parser.parse_args(argv)
    if args.command == "wheel":
        print(native_wheel(dist_dir() / "wheels"))
    elif args.command == "build":
        wheel = args.wheel or native_wheel(dist_dir() / "wheels")
        target = build(wheel)
        print(f"executor_env: {target} ({target.stat().st_size / 2**20:.0f} MiB)", file=sys.stderr)
    else:
        try:
            print(archive_path())
        except ExecutorEnvMissing as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
