"""Helpers of the Spark job tests, importable by name (``conftest`` is not: every test folder has one)."""

from __future__ import annotations

import csv
import json
import socket
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = datetime(2026, 1, 5, 6, tzinfo=UTC)  # the generated table holds 06:00-10:00


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def maps_class_archive(pid: int) -> bool:
    """Whether the JVM of ``pid`` has the setup's class archive mapped (``jobs/jvm_archive.py``): the JVM
    validates it against its build and class path before it maps it."""
    from jobs import jvm_archive

    return f" {jvm_archive.archive_path()}\n" in Path(f"/proc/{pid}/maps").read_text()


def cell(value) -> str:
    """A CSV cell that ``hamlet evaluate`` reads back as the same value (floats keep their '.')."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def export_csv(table_path: str, target: Path) -> Path:
    """The events table as an events CSV for ``hamlet evaluate``, read with the deltalake package."""
    from jobs.tables import read_arrow

    table = read_arrow(table_path)
    columns = [c for c in table.column_names if c not in ("event_id", "event_date", "event_hour")]
    rows = table.sort_by([("event_time", "ascending"), ("event_id", "ascending")]).select(columns).to_pylist()
    with target.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            moment = row["event_time"]
            # (a fraction of a second as ISO-8601 text: read back exactly, where a float would be rounded)
            seconds = int(moment.timestamp()) if moment.microsecond == 0 else moment.isoformat()
            writer.writerow([cell(seconds if c == "event_time" else row[c]) for c in columns])
    return target


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def pipeline_conf(path: Path, events_table: str, workload: Path, tables: Path, server: bool = False) -> Path:
    """Pipeline settings (jobs.pipeline) of one workload over ``events_table``, the other tables under
    ``tables``; ``server``: ``[spark] server``."""
    path.write_text(
        f"""workload = "{workload}"
scenario = "rideshare"
strategy = "hamlet"
start_date = "2026-01-05T00:00:00+00:00"
[tables]
events = "{events_table}"
trend_aggregates = "{tables / "trend_aggregates"}"
run_stats = "{tables / "run_stats"}"
quarantine = "{tables / "quarantine"}"
[validation]
expectations = "expectations"
data_docs = "{tables / "data_docs"}"
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
server = {str(server).lower()}
""",
        encoding="utf-8",
    )
    return path
