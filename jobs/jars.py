"""The Delta Lake jars of every Spark JVM the project starts, resolved once by the project's setup.

    python -m jobs.jars resolve   # scripts/bootstrap runs it: Maven Central -> var/jars, once per Delta version
    python -m jobs.jars paths     # the jars, comma-separated (for spark-submit --jars)

``spark.jars.packages`` makes every JVM start run Ivy: seconds of resolution, ~90 lines of output and Maven
Central on the path of every job. Here Spark's own resolver runs once, in a JVM that does nothing else; the
jars it would put on the class path are copied to ``var/jars`` and listed, with the coordinates they were
resolved for, in ``var/jars/MANIFEST``. Sessions and spark-submit name them by path (``spark.jars``,
``--jars``), so nothing is resolved at run time.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

MANIFEST = "MANIFEST"
SCALA = "2.13"


class JarsMissing(RuntimeError):
    """The jars are not (or not all, or not for this Delta version) in the jars folder."""


def delta_package() -> str:
    """The coordinates ``delta.configure_spark_with_delta_pip`` asks Maven for: the delta-spark artifact of
    this Spark's major.minor and of the installed delta-spark version (tests/spark checks they agree)."""
    from importlib.metadata import version

    spark = ".".join(version("pyspark").split(".")[:2])
    return f"io.delta:delta-spark_{spark}_{SCALA}:{version('delta-spark')}"


def jars_dir() -> Path:
    from jobs.session import var_dir

    return var_dir() / "jars"


@dataclass(frozen=True)
class Manifest:
    packages: tuple[str, ...]
    jars: tuple[str, ...]  # file names in the folder, in class-path order

    def text(self) -> str:
        head = (
            "# The jars of these packages, resolved by `python -m jobs.jars resolve` (scripts/bootstrap).\n"
        )
        return (
            head + "".join(f"package {p}\n" for p in self.packages) + "".join(f"jar {j}\n" for j in self.jars)
        )

    @classmethod
    def parse(cls, text: str, where: Path) -> Manifest:
        packages, jars = [], []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            kind, _, value = line.partition(" ")
            if kind == "package" and value:
                packages.append(value)
            elif kind == "jar" and value and "/" not in value:
                jars.append(value)
            else:
                raise JarsMissing(
                    f"{where}:{number}: expected 'package COORDINATES' or 'jar FILE', found {line!r}"
                )
        return cls(tuple(packages), tuple(jars))


def read_manifest(folder: Path) -> Manifest | None:
    try:
        return Manifest.parse((folder / MANIFEST).read_text(encoding="utf-8"), folder / MANIFEST)
    except FileNotFoundError:
        return None


def jar_paths(folder: Path | None = None) -> list[Path]:
    """The jars every session puts on its class path; JarsMissing (saying how to get them) otherwise."""
    folder = folder or jars_dir()
    wanted = (delta_package(),)
    manifest = read_manifest(folder)
    if manifest is None:
        raise JarsMissing(f"no Delta Lake jars in {folder} ({MANIFEST} missing): run scripts/bootstrap dev,spark, "
                          f"which resolves {wanted[0]} once from Maven Central")  # fmt: skip
    if manifest.packages != wanted:
        raise JarsMissing(f"{folder} holds the jars of {', '.join(manifest.packages) or 'no package'}, not of "
                          f"{wanted[0]} (the installed delta-spark): run scripts/bootstrap dev,spark")  # fmt: skip
    missing = [j for j in manifest.jars if not (folder / j).is_file()]
    if missing or not manifest.jars:
        raise JarsMissing(f"{folder}: {len(missing)} of the {len(manifest.jars)} jars in {MANIFEST} are missing "
                          f"({', '.join(missing[:3]) or 'none listed'}): run scripts/bootstrap dev,spark")  # fmt: skip
    return [folder / j for j in manifest.jars]


def resolve(folder: Path | None = None) -> bool:
    """Make ``folder`` hold the jars of ``delta_package()``; False when it did already (no JVM started).

    Spark's resolver runs as ``spark.jars.packages`` would run it at a session's start (same Ivy settings,
    same exclusions), into the Ivy cache ``var/ivy``; the class path it computes (``spark.jars``) is what
    is copied. Its output goes to ``folder/resolve.log``, shown only when it fails."""
    folder = folder or jars_dir()
    try:
        jar_paths(folder)
        return False
    except JarsMissing:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    package = delta_package()
    resolved = _resolve_with_spark(package, folder.parent / "ivy", folder / "resolve.log")
    names = []
    for source in resolved:
        names.append(source.name)
        target = folder / source.name
        if not target.is_file():
            partial = folder / f".{source.name}.{os.getpid()}.tmp"
            try:
                os.link(source, partial)  # the Ivy cache is beside: no second copy of ~100 MB
            except OSError:
                shutil.copyfile(source, partial)
            partial.replace(target)
    manifest = Manifest((package,), tuple(names))
    partial = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    partial.write_text(manifest.text(), encoding="utf-8")
    partial.replace(folder / MANIFEST)
    for stale in folder.glob("*.jar"):  # other versions' jars
        if stale.name not in names:
            stale.unlink()
    return True


def _resolve_with_spark(package: str, ivy: Path, log: Path) -> list[Path]:
    """Start a JVM that only resolves ``package`` (py4j gateway, no SparkContext) and return the jars Spark
    put in ``spark.jars``."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    from jobs.session import LOG4J_CONF

    ivy.mkdir(parents=True, exist_ok=True)
    conf = SparkConf(loadDefaults=False)
    conf.set("spark.jars.packages", package).set("spark.jars.ivy", str(ivy))
    conf.set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J_CONF.as_uri()}")
    with log.open("w", encoding="utf-8") as output:
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": output, "stderr": output})
        except Exception as e:  # noqa: BLE001 (the JVM exited: Ivy failed, the reason is in its log)
            raise JarsMissing(f"resolving {package} from Maven Central failed ({type(e).__name__}); Ivy's "
                              f"output:\n{_tail(log)}") from None  # fmt: skip
    try:
        listed = str(gateway.jvm.System.getProperty("spark.jars") or "")
    finally:
        gateway.shutdown()
    jars = [Path(unquote(urlparse(uri).path)) for uri in listed.split(",") if uri]
    if not jars or not all(j.is_file() for j in jars):
        raise JarsMissing(
            f"resolving {package} gave no usable jars ({listed!r}); Ivy's output:\n{_tail(log)}"
        )
    return jars


def _tail(log: Path, lines: int = 40) -> str:
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no output)"


def main(argv: list[str]) -> int:
    if argv == ["resolve"]:
        try:
            jar_paths()
            return 0
        except JarsMissing:
            print(
                f"jars: resolving {delta_package()} from Maven Central into {jars_dir()} (once)",
                file=sys.stderr,
            )
        try:
            resolve()
        except JarsMissing as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"jars: {len(jar_paths())} jars in {jars_dir()}", file=sys.stderr)
        return 0
    if argv == ["paths"]:
        try:
            print(",".join(str(p) for p in jar_paths()))
        except JarsMissing as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
