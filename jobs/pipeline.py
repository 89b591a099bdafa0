"""The hourly pipeline's settings (``conf/pipeline.toml``) and the checks around the Spark job that need no
Spark: is an input hour complete (the sensor), did the job's Delta commit for an interval land.

Nothing here imports Spark, Airflow or Great Expectations: the DAG files import this module at parse time.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from jobs.schema import interval_problem

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONF = ROOT / "conf" / "pipeline.toml"
CONF_VARIABLE = "HAMLET_PIPELINE_CONF"
# The workloads a DAG may run: a Param naming any other file would let whoever triggers runs read it (error
# messages quote what they cannot parse), so the ad hoc DAG offers these and nothing else.
WORKLOADS = ROOT / "conf" / "workloads"
# Names that reach SQL text (replaceWhere) and folder names: the aggregation job's rule for workload names.
NAME = re.compile(r"[A-Za-z0-9_.\-]+")
# ISO-8601 with an explicit offset (the ad hoc DAG's start/end): a pattern, which JSON Schema enforces at
# trigger time; ``format: date-time`` is enforced only when an optional validator package is installed.
ISO_WITH_OFFSET = r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:\d\d)$"
# The longest range one ad hoc run may reprocess unless [adhoc] max_range_hours says otherwise (31 days).
MAX_RANGE_HOURS = 744


class PipelineError(Exception):
    """A pipeline step found something wrong; the message says what and where."""


@dataclass(frozen=True)
class WorkloadEntry:
    """One workload the pipeline runs every hour (``[[workloads]]`` in conf/pipeline.toml): its file, the
    generator scenario whose attribute suite validates its events (``expectations/events_<scenario>.json``)
    and its events table. Each gets an hourly DAG of its own, ``hamlet_trends_hourly_<name>``."""

    workload: Path
    scenario: str
    events_table: str

    @property
    def name(self) -> str:
        return workload_name(self.workload)

    @property
    def dag_id(self) -> str:
        return f"hamlet_trends_hourly_{self.name}"


@dataclass(frozen=True)
class PipelineConfig:
    source: Path  # the file the settings came from
    workload: Path
    scenario: str
    strategy: str
    start_date: datetime
    events_table: str
    output_table: str
    stats_table: str
    quarantine_table: str
    expectations: Path
    data_docs: Path
    max_bad_fraction: float
    max_bad_output_fraction: float
    sensor_poke_seconds: int
    sensor_timeout_minutes: int
    catchup: bool
    max_active_runs: int
    retries: int
    retry_delay_minutes: int
    max_retry_delay_minutes: int
    max_range_hours: int = MAX_RANGE_HOURS
    # Every workload of the pipeline; ``workload``, ``scenario`` and ``events_table`` above are the first's,
    # or those of the one chosen by ``for_workload``.
    workloads: tuple[WorkloadEntry, ...] = ()
    # Data Docs of at most this many runs are kept (the oldest run folders are removed after a validation).
    data_docs_keep_runs: int = 48
    # Where validate_aggregates writes each workload's report, <reports>/<workload>.html (``hamlet report``).
    reports: Path = ROOT / "var" / "reports"
    # [spark] server: the Spark tasks join one long-lived Spark Connect server (jobs/spark_server.py, started by
    # the first task that needs it) instead of each starting a JVM.
    spark_server: bool = False

    def for_workload(self, workload: str | os.PathLike[str]) -> PipelineConfig:
        """These settings with the scenario and events table of ``workload`` (a path as users write it, a
        path inside the repo, or a workload name) when the pipeline lists it; else unchanged (the ad hoc DAG
        may run any workload of conf/workloads/ over the first workload's events)."""
        wanted = str(workload)
        for entry in self.workloads:
            if wanted in (entry.name, shown_path(entry.workload), str(entry.workload)):
                return replace(self, workload=entry.workload, scenario=entry.scenario,
                               events_table=entry.events_table)  # fmt: skip
        return self


def load_config(path: str | os.PathLike[str] | None = None) -> PipelineConfig:
    """The settings of ``path``, else of ``$HAMLET_PIPELINE_CONF``, else of ``conf/pipeline.toml``; relative
    paths in it are relative to the repo root."""
    source = Path(path or os.environ.get(CONF_VARIABLE) or DEFAULT_CONF)
    if source.exists() and not source.is_file():  # a device or a FIFO: a read that never ends or blocks
        raise PipelineError(f"cannot read pipeline settings {source}: not a regular file")
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as e:
        raise PipelineError(f"cannot read pipeline settings {source}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise PipelineError(f"{source}: {e}") from None

    def get(section: str | None, key: str) -> Any:
        table = data if section is None else data.get(section, {})
        if key not in table:
            where = f"[{section}] " if section else ""
            raise PipelineError(f"{source}: {where}{key} is missing")
        return table[key]

    def local(value: str) -> Path:
        candidate = Path(value)
        return candidate if candidate.is_absolute() else ROOT / candidate

    def table(key: str) -> str:
        value = str(get("tables", key))
        return value if "://" in value else str(local(value))

    entries = _workload_entries(source, data, local, table)
    start = datetime.fromisoformat(str(get(None, "start_date")))
    # Optional, false when absent (Airflow 3's default): with catchup on, unpausing the hourly DAG queues a
    # run for every hour since start_date at once.
    catchup = data.get("schedule", {}).get("catchup", False)
    if not isinstance(catchup, bool):
        raise PipelineError(f"{source}: [schedule] catchup must be true or false, not {catchup!r}")
    server = data.get("spark", {}).get("server", False)
    if not isinstance(server, bool):
        raise PipelineError(f"{source}: [spark] server must be true or false, not {server!r}")
    return PipelineConfig(
        source=source,
        workload=entries[0].workload,
        scenario=entries[0].scenario,
        strategy=str(get(None, "strategy")),
        start_date=start.replace(tzinfo=UTC) if start.tzinfo is None else start.astimezone(UTC),
        events_table=entries[0].events_table,
        output_table=table("trend_aggregates"),
        stats_table=table("run_stats"),
        quarantine_table=table("quarantine"),
        expectations=local(get("validation", "expectations")),
        data_docs=local(get("validation", "data_docs")),
        max_bad_fraction=float(get("validation", "max_bad_fraction")),
        max_bad_output_fraction=float(get("validation", "max_bad_output_fraction")),
        sensor_poke_seconds=int(get("schedule", "sensor_poke_seconds")),
        sensor_timeout_minutes=int(get("schedule", "sensor_timeout_minutes")),
        catchup=catchup,
        max_active_runs=int(get("schedule", "max_active_runs")),
        retries=int(get("schedule", "retries")),
        retry_delay_minutes=int(get("schedule", "retry_delay_minutes")),
        max_retry_delay_minutes=int(get("schedule", "max_retry_delay_minutes")),
        max_range_hours=_positive_int(
            source, data.get("adhoc", {}).get("max_range_hours", MAX_RANGE_HOURS), "[adhoc] max_range_hours"
        ),
        workloads=entries,
        reports=local(str(data.get("validation", {}).get("reports", "var/reports"))),
        data_docs_keep_runs=_positive_int(
            source,
            data.get("validation", {}).get("data_docs_keep_runs", 48),
            "[validation] data_docs_keep_runs",
        ),
        spark_server=server,
    )


def _workload_entries(
    source: Path, data: dict[str, Any], local: Any, table: Any
) -> tuple[WorkloadEntry, ...]:
    """``[[workloads]]`` (file, scenario, events), or the single ``workload``, ``scenario`` and ``[tables]
    events`` of the older shape. Names must be distinct and safe: they become DAG ids and SQL text."""
    from jobs.schema import SCENARIOS  # (no Spark import: the DAG files load this at parse time)

    listed = data.get("workloads")
    if listed is None:
        for key in ("workload", "scenario"):
            if key not in data:
                raise PipelineError(f"{source}: {key} is missing (or list the workloads as [[workloads]])")
        if "events" not in data.get("tables", {}):
            raise PipelineError(f"{source}: [tables] events is missing")
        listed = [
            {"file": data["workload"], "scenario": data["scenario"], "events": data["tables"]["events"]}
        ]
    if not isinstance(listed, list) or not listed or not all(isinstance(e, dict) for e in listed):
        raise PipelineError(
            f"{source}: [[workloads]] must list at least one workload (file, scenario, events)"
        )
    entries: list[WorkloadEntry] = []
    for number, item in enumerate(listed, 1):
        missing = [key for key in ("file", "scenario", "events") if not isinstance(item.get(key), str)]
        if missing:
            raise PipelineError(
                f"{source}: workload {number} of [[workloads]] lacks {', '.join(missing)} (text)"
            )
        if item["scenario"] not in SCENARIOS:
            raise PipelineError(f"{source}: workload {number} of [[workloads]]: unknown scenario "
                                f"{clipped(item['scenario'])!r}; known: {', '.join(SCENARIOS)}")  # fmt: skip
        events = item["events"] if "://" in item["events"] else str(local(item["events"]))
        entry = WorkloadEntry(local(item["file"]), item["scenario"], events)
        try:
            checked_name(entry.name)
        except PipelineError as e:
            raise PipelineError(f"{source}: workload {number} of [[workloads]]: {e}") from None
        if entry.name in {e.name for e in entries}:
            raise PipelineError(f"{source}: two workloads of [[workloads]] are named {entry.name}: "
                                "each gets its own DAG and rows, so names must differ")  # fmt: skip
        entries.append(entry)
    return tuple(entries)


def _positive_int(source: Path, value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PipelineError(f"{source}: {what} must be a positive integer, not {value!r}")
    return value


def resolve(path: str | os.PathLike[str]) -> Path:
    """A file named relative to the working directory or, failing that, to the repo root (Airflow tasks
    run wherever the worker does; the ad hoc DAG's workload Param is relative to the repo)."""
    candidate = Path(path)
    if candidate.is_absolute() or candidate.exists() or not (ROOT / candidate).exists():
        return candidate  # a missing file is reported as the user named it
    return ROOT / candidate


def shown_path(path: str | Path) -> str:
    """A path as users write it: relative to the repo root when inside it (URIs as they are)."""
    if "://" in str(path):
        return str(path)
    local = Path(path)
    return str(local.relative_to(ROOT)) if local.is_relative_to(ROOT) else str(local)


def workload_name(path: str | os.PathLike[str]) -> str:
    """The name a workload's rows carry in trend_aggregates: its file's stem (``hamlet aggregate``'s default)."""
    return Path(path).stem


def instant(value: str | datetime, what: str = "time") -> datetime:
    """An ISO-8601 time (or a datetime, as Airflow passes them) in UTC; naive means UTC. A PipelineError
    naming ``what`` when the text is not one."""
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise PipelineError(f"{what} {clipped(str(value))!r} is not an ISO-8601 time such as "
                            "2026-01-05T08:00:00+00:00") from None  # fmt: skip
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def clipped(text: str, limit: int = 80) -> str:
    """User input as quoted in an error message: never more than ``limit`` characters of it."""
    return text if len(text) <= limit else text[:limit] + "..."


def checked_name(name: str, what: str = "workload name") -> str:
    """``name`` when it is safe in SQL text and as a folder name (letters, digits, '_', '.', '-')."""
    if not NAME.fullmatch(name):
        raise PipelineError(f"{what} {clipped(name)!r}: use letters, digits, '_', '.', '-'")
    return name


def workload_choices(config: PipelineConfig) -> list[str]:
    """The workloads a DAG may run, as users write them: the files of conf/workloads/ and the configured
    workloads (the settings are the operator's choice)."""
    found = sorted(shown_path(p) for p in WORKLOADS.glob("*.hamlet"))
    configured = [shown_path(e.workload) for e in config.workloads] or [shown_path(config.workload)]
    return [c for c in dict.fromkeys(configured) if c not in found] + found


def allowed_workload(value: str, choices: list[str]) -> Path:
    """The file of the workload ``value`` when it is one of ``choices``; else a PipelineError that names the
    choices and quotes nothing of any file. Checked before the file is opened."""
    if value not in choices:
        raise PipelineError(
            f"workload {clipped(value)!r} is not one of the workloads offered: {', '.join(choices)}"
        )
    path = Path(value)
    return path if path.is_absolute() else ROOT / path


@dataclass(frozen=True)
class Request:
    """What an ad hoc run was asked to do, checked: an offered workload over [start, end)."""

    workload: Path
    start: datetime
    end: datetime


def check_request(config: PipelineConfig, workload: str, start: str, end: str) -> Request:
    """The ad hoc DAG's Params, checked before any task touches a file or a table: the workload is one of
    ``workload_choices``, start and end are ISO-8601 times with an offset, start < end, and the range is at
    most ``max_range_hours`` long."""
    path = allowed_workload(workload, workload_choices(config))
    first, last = _offset_time(start, "start"), _offset_time(end, "end")
    problem = interval_problem(first, last, ("start", "end"))
    if problem:
        raise PipelineError(problem)
    if last - first > timedelta(hours=config.max_range_hours):
        raise PipelineError(f"[{first.isoformat()}, {last.isoformat()}) is longer than {config.max_range_hours} "
                            f"hours ([adhoc] max_range_hours in {config.source}): split it into several runs")  # fmt: skip
    return Request(path, first, last)


def _offset_time(text: str, what: str) -> datetime:
    if not re.fullmatch(ISO_WITH_OFFSET, str(text)):
        raise PipelineError(f"{what} {clipped(str(text))!r} is not an ISO-8601 time with an offset such as "
                            "2026-01-05T08:00:00+00:00")  # fmt: skip
    return instant(text, what)


def hours(start: datetime, end: datetime) -> list[datetime]:
    """The starts of the hours that overlap [start, end)."""
    first = start.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return [first + timedelta(hours=i) for i in range(max(0, -(-(end - first) // timedelta(hours=1))))]


def input_ready(events_table: str, start: str | datetime, end: str | datetime) -> bool:
    """True when every hour of [start, end) is complete in the events table: it has a partition for the hour
    or for a later one (a producer that moved on has finished the hour, even one without events). Reads
    only the Delta log (the ``deltalake`` package)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        partitions = DeltaTable(events_table).partitions()
    except TableNotFoundError:
        return False
    present = {datetime.fromisoformat(p["event_date"]).replace(hour=int(p["event_hour"]), tzinfo=UTC)
               for p in partitions if p.get("event_date") and p.get("event_hour") is not None}  # fmt: skip
    needed = hours(instant(start), instant(end))
    return bool(present) and max(present) >= needed[-1]


def commit_metadata(run_id: str, workload: str, start: datetime, end: datetime) -> str:
    """What the aggregation job records as the ``userMetadata`` of its Delta commit."""
    return json.dumps({"run_id": run_id, "workload": workload, "start": start.isoformat(), "end": end.isoformat()},
                      sort_keys=True)  # fmt: skip


def verify_commit(output_table: str, run_id: str, workload: str, start: str | datetime, end: str | datetime,
                  stats_table: str | None = None) -> dict[str, Any]:  # fmt: skip
    """The Delta commit of the aggregation run ``run_id`` for exactly [start, end): its version and row
    count. A PipelineError when it is not in the table's history: spark-submit has been known to exit 0
    for a job that failed, so success is read from the table, not from the exit status. A run with no row
    to write into an interval that held none makes no commit (Delta commits nothing for a write that adds
    and removes nothing): ``stats_table``'s rows of the run, all committed with 0 rows written and no
    output version, say that it finished (version None, 0 rows)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    wanted = json.loads(commit_metadata(run_id, workload, instant(start), instant(end)))
    try:
        history = DeltaTable(output_table).history()
    except TableNotFoundError:
        history = []
    for commit in history:
        try:
            metadata = json.loads(commit.get("userMetadata") or "null")
        except json.JSONDecodeError:
            continue
        if metadata == wanted and commit.get("operation") == "WRITE":
            rows = int(commit.get("operationMetrics", {}).get("numOutputRows", 0))
            return {"version": commit["version"], "rows": rows, "timestamp": commit["timestamp"]}
    if stats_table is not None and _finished_without_rows(stats_table, run_id, workload, wanted):
        return {"version": None, "rows": 0, "timestamp": None}
    raise PipelineError(
        f"{output_table} has no commit of run {run_id} for workload {workload} and "
        f"[{wanted['start']}, {wanted['end']}): the Spark job did not write its result"
    )


def _finished_without_rows(stats_table: str, run_id: str, workload: str, wanted: dict[str, str]) -> bool:
    """Whether ``run_stats`` holds rows of the run for exactly the interval, every one committed with no
    row written and no output version (the job writes them so only after its write returned)."""
    from deltalake.exceptions import TableNotFoundError

    from jobs.tables import read_arrow  # (a short task process: Arrow's own filesystem, see jobs/tables.py)

    columns = ["run_id", "workload", "range_start", "range_end", "status", "rows_written", "output_version"]
    try:
        rows = read_arrow(stats_table, columns=columns).to_pylist()
    except TableNotFoundError:
        return False
    start, end = instant(wanted["start"]), instant(wanted["end"])
    mine = [r for r in rows if r["run_id"] == run_id and r["workload"] == workload]
    return bool(mine) and all(
        (r["range_start"], r["range_end"], r["status"], r["rows_written"], r["output_version"])
        == (start, end, "committed", 0, None) for r in mine
    )  # fmt: skip
