"""Wall time of one small hourly job against an empty Spark job with Delta: what a run pays before any work.

    .venv/bin/python bench/startup.py --label LABEL [--baseline REV] [--repeats 3] [--rate 2000]
                                      [--output bench/results/startup.md]

Generates two hours of rideshare events (``--rate`` per hour, seed 2021) into a temporary Delta table (not
timed), then times, each as its own process (wall clock, Python start-up and JVM included):

- ``empty``: ``jobs.session.build_session`` (Delta configured), a new empty Delta table written, stopped;
- ``hamlet aggregate``: ``conf/workloads/rideshare_trips.hamlet`` over the second hour (its read-ahead
  reaches into the first), as a user runs it;
- ``spark-submit``: the same job as the Airflow task ``aggregate`` starts it (``jobs/aggregate.py`` with
  ``jobs.session.submit_options()`` when the checkout has it, bare otherwise).

``--pipeline`` also times the hourly DAG's five tasks over that hour (``airflow dags test hamlet_trends_hourly``
with the project's Airflow home and pipeline settings pointing at the temporary tables), as Airflow runs
them: each Spark task starting its own JVM (``[spark] server = false``), and each joining one long-lived
Spark Connect server (``[spark] server = true``: ``jobs/spark_server.py``, started before the untimed round,
its CPU seconds during a run added to the run's, stopped at the end). Besides the process's wall clock (the
``airflow`` CLI's start included) it reports the five tasks' own seconds: the first task's start to the last
one's end, from the ``[DAG TEST]`` lines of the log. It also times ``hamlet aggregate`` of the hour as a client
of that server (``HAMLET_SPARK_REMOTE``, as the ``aggregate`` task runs it then).

``--baseline REV`` runs the same commands on that commit too (``git archive`` into ``var/bench-baseline``,
sharing this checkout's venv and Ivy cache), interleaved with this checkout's runs, so that both see the same
load on a shared machine. CPU seconds (user + system of the whole process tree, JVMs included) are recorded beside the wall clock: on
a shared machine they move far less with the load. One untimed round first (caches; and for a checkout that resolves its jars at every
start, the first download). The lines of output (stdout and stderr) are counted too: that is the log a user
reads. The results go to ``--output`` as a Markdown section with the machine, its load average before and
after, the commits and every command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
WORKLOAD = "conf/workloads/rideshare_trips.hamlet"
FIRST_HOUR = "2026-01-05T08:00:00+00:00"
START, END = "2026-01-05T09:00:00+00:00", "2026-01-05T10:00:00+00:00"
OPTIONS = (
    "from jobs import session; import json; print(json.dumps(getattr(session, 'submit_options', list)()))"
)


@dataclass
class Timing:
    tree: str  # which checkout
    name: str
    command: list[str]
    cwd: Path
    env: dict[str, str]
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    # A long-lived process the command uses but does not start (the Spark Connect server): its CPU counts too.
    server_pid: int | None = None
    # For a DAG run: the seconds from the first task's start to the last one's end.
    tasks: list[float] = field(default_factory=list)


def empty_job(path: str) -> None:
    """The empty job: a Delta-enabled session, a new empty Delta table written under ``path``, the session
    stopped. Imports ``jobs`` from PYTHONPATH (the checkout measured). A new table each run: overwriting the
    table an earlier run left would first replay its log on a cold JVM (about 3.5 s at idle), which is work,
    not start-up (until 2026-11-28 every run after the first did, and the ratios were about 0.6 lower)."""
    import uuid

    from jobs.session import build_session

    spark = build_session("hamlet-empty")
    spark.createDataFrame([], "x INT").write.format("delta").save(str(Path(path) / uuid.uuid4().hex))
    spark.stop()


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor() or platform.machine())  # fmt: skip
    kib = next((int(line.split()[1]) for line in _lines("/proc/meminfo") if line.startswith("MemTotal")), 0)
    java = subprocess.run(
        ["java", "-version"], check=False, capture_output=True, text=True
    ).stderr.splitlines()
    return (f"{model}, {os.cpu_count()} cores, {kib / 2**20:.0f} GiB, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, {java[0] if java else 'java ?'}")  # fmt: skip


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def describe(rev: str) -> str:
    head = subprocess.run(
        ["git", "log", "-1", "--format=%h %s", rev], check=True, cwd=ROOT, capture_output=True, text=True
    )
    return head.stdout.strip()


def working_tree() -> str:
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], check=True, cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return describe("HEAD") + (" (with uncommitted changes)" if dirty else "")


def baseline_tree(rev: str) -> Path:
    """``rev`` exported into var/bench-baseline/<rev>, its var/ivy this checkout's (no second download)."""
    target = ROOT / "var" / "bench-baseline" / rev
    if not (target / "jobs" / "session.py").is_file():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    (target / "var").mkdir(exist_ok=True)
    for shared in ("ivy", "jars"):
        link = target / "var" / shared
        if not link.exists() and (ROOT / "var" / shared).exists():
            link.symlink_to(ROOT / "var" / shared)
    return target


def commands(tree: str, root: Path, work: Path) -> list[Timing]:
    env = {**os.environ, "PYSPARK_PYTHON": str(VENV_BIN / "python"), "HAMLET_ENV": "local", "PYTHONPATH": str(root),
           "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    events, output = str(work / "events"), str(work / f"trend_aggregates-{tree}")
    job_args = ["--workload", WORKLOAD, "--start", START, "--end", END, "--events-table", events,
                "--output-table", output]  # fmt: skip
    probe = subprocess.run([str(VENV_BIN / "python"), "-c", OPTIONS], cwd=root, env=env, capture_output=True,
                           text=True, check=True)  # fmt: skip
    submit = [str(VENV_BIN / "spark-submit"), *json.loads(probe.stdout), str(root / "jobs" / "aggregate.py")]
    empty = [
        str(VENV_BIN / "python"),
        str(ROOT / "bench" / "startup.py"),
        "--empty-job",
        str(work / f"empty-{tree}"),
    ]
    return [
        Timing(tree, "empty PySpark job with Delta", empty, root, env),
        Timing(tree, "hamlet aggregate", [str(VENV_BIN / "hamlet"), "aggregate", *job_args], root, env),
        Timing(tree, "spark-submit jobs/aggregate.py (the Airflow task)", [*submit, *job_args], root, env),
    ]


PIPELINE_CONF = """workload = "{root}/conf/workloads/rideshare_trips.hamlet"
scenario = "rideshare"
strategy = "hamlet"
start_date = "2026-01-05T00:00:00+00:00"
[tables]
events = "{work}/events"
trend_aggregates = "{work}/{tree}/trend_aggregates"
run_stats = "{work}/{tree}/run_stats"
quarantine = "{work}/{tree}/quarantine"
[validation]
expectations = "{root}/expectations"
data_docs = "{work}/{tree}/data_docs"
max_bad_fraction = 0.05
max_bad_output_fraction = 0.0
[schedule]
sensor_poke_seconds = 60
sensor_timeout_minutes = 180
max_active_runs = 1
retries = 0
retry_delay_minutes = 1
max_retry_delay_minutes = 1
[spark]
server = {server}
"""


# An Airflow home (SQLite) of its own per variant: an Asset (the output table) is named once per home, with
# its table's URI. Its environment, the DB migrated (not timed).
AIRFLOW_HOME = (
    "import json, sys; from pathlib import Path; from jobs.airflow_home import environment, prepare; "
    "home = Path(sys.argv[1]); print(json.dumps(environment(home))); prepare(home)"
)


def pipeline_commands(work: Path) -> list[Timing]:
    """The hourly DAG over the second hour, a JVM per Spark task and over one Spark Connect server."""
    base = {**os.environ, "PYSPARK_PYTHON": str(VENV_BIN / "python"), "HAMLET_ENV": "local"}
    timings = []
    for name, server in (("hourly DAG, 5 tasks, a JVM per Spark task", "false"),
                         ("hourly DAG, 5 tasks, one Spark Connect server", "true")):  # fmt: skip
        tree = f"dag-{server}"
        home = subprocess.run([str(VENV_BIN / "python"), "-c", AIRFLOW_HOME, str(work / tree / "airflow")],
                              cwd=ROOT, env=base, capture_output=True, text=True, check=True)  # fmt: skip
        env = {**base, **json.loads(home.stdout.splitlines()[0])}
        conf = work / f"{tree}.toml"
        conf.write_text(
            PIPELINE_CONF.format(root=ROOT, work=work, tree=tree, server=server), encoding="utf-8"
        )
        command = [str(VENV_BIN / "airflow"), "dags", "test", "hamlet_trends_hourly_rideshare_trips", END]
        timings.append(Timing("t-pipeline", name, command, ROOT, {**env, "HAMLET_PIPELINE_CONF": str(conf)}))
    return timings


REMOTE = "hamlet aggregate over the running Spark Connect server"


def remote_aggregate(timings: list[Timing], tree: str, server_pid: int) -> Timing:
    """``hamlet aggregate`` of the hour as a client of the running Spark Connect server (``HAMLET_SPARK_REMOTE``,
    as the ``aggregate`` task runs it with ``[spark] server = true``): this checkout's command, its output
    table of its own, compared with this checkout's empty job; the server's CPU seconds during the run count."""
    local = next(t for t in timings if t.tree == tree and t.name == "hamlet aggregate")
    command = [re.sub(r"trend_aggregates-(t\d+)$", r"trend_aggregates-\1-remote", c) for c in local.command]
    env = {**local.env, "HAMLET_SPARK_REMOTE": spark_server_url()}
    return Timing(tree, REMOTE, command, local.cwd, env,
                  server_pid=server_pid)  # fmt: skip


def spark_server_url() -> str:
    probe = [str(VENV_BIN / "python"), "-c", "from jobs.spark_server import url; print(url())"]
    return subprocess.run(probe, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def timed(t: Timing) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the process tree, JVMs included: what the load of the
    shared machine barely moves) and lines of output of one run."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        server_before = _cpu(t.server_pid) if t.server_pid else 0.0
        started = time.perf_counter()
        process = subprocess.Popen(t.command, cwd=t.cwd, env=t.env, stdout=out, stderr=err, text=True)
        cpu = _tree_cpu(process)
        seconds = time.perf_counter() - started
        if t.server_pid:
            cpu += _cpu(t.server_pid) - server_before
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0 or "state=failed" in stdout + stderr:
        sys.exit(f"{' '.join(t.command)} failed ({process.returncode}):\n{stdout}\n{stderr}")
    stamps = re.findall(r"^(\S+)Z .*\[DAG TEST\] (?:starting|end) task", stdout + stderr, re.MULTILINE)
    if stamps:
        moments = sorted(datetime.fromisoformat(s) for s in stamps)
        t.tasks.append((moments[-1] - moments[0]).total_seconds())
    return seconds, cpu, len(stdout.splitlines()) + len(stderr.splitlines())


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu(process: subprocess.Popen[str], every: float = 0.1) -> float:
    """Wait for ``process``; its CPU seconds and those of every descendant, sampled from /proc every
    ``every`` seconds (a JVM that PySpark starts is never waited for, so the kernel's child accounting
    misses it; a sample misses at most the last ``every`` seconds of a process)."""
    tick = os.sysconf("SC_CLK_TCK")
    seen: dict[int, float] = {}
    while process.poll() is None:
        parents: dict[int, int] = {}
        times: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
        tree = {process.pid}
        grew = True
        while grew:
            grew = False
            for pid, parent in parents.items():
                if parent in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        for pid in tree:
            if pid in times:
                seen[pid] = max(seen.get(pid, 0.0), times[pid])
        time.sleep(every)
    return sum(seen.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", help="what this measurement is")
    parser.add_argument("--baseline", metavar="REV", help="also time this commit, interleaved")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rate", type=int, default=2000, help="events per hour")
    parser.add_argument("--output", default=str(ROOT / "bench" / "results" / "startup.md"))
    parser.add_argument("--pipeline", action="store_true", help="also time the hourly DAG's five tasks")
    parser.add_argument("--empty-job", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.empty_job:
        empty_job(args.empty_job)
        return
    if not args.label:
        parser.error("--label is required")
    work = Path(tempfile.mkdtemp(prefix="hamlet-startup-"))
    try:
        env = {**os.environ, "PYSPARK_PYTHON": str(VENV_BIN / "python"), "PYTHONPATH": str(ROOT)}
        subprocess.run([str(VENV_BIN / "hamlet"), "generate", "--scenario", "rideshare", "--start", FIRST_HOUR,
                        "--hours", "2", "--events-per-hour", str(args.rate), "--table", str(work / "events"),
                        "--seed", "2021"], cwd=ROOT, env=env, check=True, capture_output=True)  # fmt: skip
        trees = [("this checkout", ROOT)]
        if args.baseline:
            trees.insert(0, (f"baseline {args.baseline}", baseline_tree(args.baseline)))
        timings = [t for i, (name, root) in enumerate(trees) for t in commands(f"t{i}", root, work)]
        names = {f"t{i}": name for i, (name, _) in enumerate(trees)}
        if args.pipeline:
            server_env = {**os.environ, "HAMLET_ENV": "local"}
            started = subprocess.run([str(VENV_BIN / "python"), "-m", "jobs.spark_server", "start"], cwd=ROOT,
                                     env=server_env, capture_output=True, text=True, check=True)  # fmt: skip
            print(started.stdout.strip(), file=sys.stderr)
            pid = int(started.stdout.split("(pid ")[1].split(")")[0])
            timings += pipeline_commands(work)
            timings[-1].server_pid = pid
            timings.append(remote_aggregate(timings, f"t{len(trees) - 1}", pid))
            names["t-pipeline"] = "this checkout"
        for t in timings:  # untimed round
            timed(t)
            t.tasks.clear()
        load_before = load()
        for r in range(args.repeats):
            for t in timings[r % len(timings) :] + timings[: r % len(timings)]:
                seconds, cpu, lines = timed(t)
                t.seconds.append(seconds)
                t.cpu.append(cpu)
                t.lines.append(lines)
        load_after = load()
    finally:
        if args.pipeline:
            subprocess.run(
                [str(VENV_BIN / "python"), "-m", "jobs.spark_server", "stop"], cwd=ROOT, check=False
            )
        shutil.rmtree(work, ignore_errors=True)
    section = report(args, timings, names, load_before, load_after)
    print(section)
    with open(args.output, "a", encoding="utf-8") as f:
        f.write(section + "\n")


def report(args: argparse.Namespace, timings: list[Timing], names: dict[str, str], load_before: str,
           load_after: str) -> str:  # fmt: skip
    def shown(t: Timing) -> str:
        parts = (Path(c).relative_to(ROOT).as_posix() if c.startswith(str(ROOT)) else c for c in t.command)
        text = " ".join(re.sub(r"^.*/hamlet-startup-[^/]+", "$TMP", p) for p in parts)
        if t.name == REMOTE:  # (the DAG's tasks set it themselves)
            text = f"HAMLET_SPARK_REMOTE={t.env['HAMLET_SPARK_REMOTE']} {text}"
        return re.sub(r"--jars \S+", "--jars $(.venv/bin/python -m jobs.jars paths)", text)

    command = f"--label '{args.label}' --repeats {args.repeats} --rate {args.rate}"
    if args.baseline:
        command += f" --baseline {args.baseline}"
    if args.pipeline:
        command += " --pipeline"
    lines = [
        f"## {args.label} ({time.strftime('%Y-%m-%d %H:%M %Z')})",
        "",
        f"- this checkout: {working_tree()}",
        *([f"- baseline: {describe(args.baseline)}"] if args.baseline else []),
        f"- machine: {machine()}",
        f"- load average (1, 5, 15 min) before the timed runs: {load_before}; after: {load_after}",
        (
            f"- command: `.venv/bin/python bench/startup.py {command}`; {args.rate} events per hour, 2 hours "
            "generated, the second one aggregated; runs interleaved"
        ),
        "",
        (
            "| checkout | what | wall seconds (median) | runs | × empty of the same checkout "
            "| CPU seconds (median) | lines of output |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for t in timings:
        empty = statistics.median(next(e for e in timings if e.tree == t.tree).seconds)
        median = statistics.median(t.seconds)
        runs = ", ".join(f"{s:.1f}" for s in t.seconds)
        cpu = statistics.median(t.cpu)
        lines.append(f"| {names[t.tree]} | {t.name} | {median:.1f} | {runs} | {median / empty:.2f} | {cpu:.1f} "
                     f"| {max(t.lines)} |")  # fmt: skip
    lines.append("")
    dags = [t for t in timings if t.tasks]
    if dags:
        lines += ["| what | five tasks: first start to last end, seconds (median) | runs |", "|---|---|---|"]
        lines += [f"| {t.name} | {statistics.median(t.tasks):.1f} | {', '.join(f'{s:.1f}' for s in t.tasks)} |"
                  for t in dags]  # fmt: skip
        lines.append("")
    lines += [f"- {names[t.tree]}, {t.name}: `{shown(t)}`" for t in timings]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
