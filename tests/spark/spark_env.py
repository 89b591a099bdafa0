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
            seconds = int(moment.timestamp()) if moment.microsecond == 0 else moment.timestamp()
            writer.writerow([cell(seconds if c == "event_time" else row[c]) for c in columns])
    return target


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
