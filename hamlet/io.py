"""Reading events from CSV and writing result rows as JSON lines or a readable table."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from hamlet.api import event_time
from hamlet.errors import EventError
from hamlet.events import Event
from hamlet.partials import int_text
from hamlet.results import ResultRow

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def parse_value(text: str) -> int | float | str | None:
    """A CSV cell: empty is null, integers and decimals are numbers, anything else a string."""
    if text == "":
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def parse_time(text: str, where: str) -> int | float:
    value = parse_value(text.strip())
    if isinstance(value, (int, float)):
        return event_time(value, where)
    if value is None:
        raise EventError("event_time is empty", where=where)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise EventError(
            f"event_time {text!r} is neither a number of seconds nor an ISO-8601 time", where=where
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return event_time(moment, where)


@dataclass(frozen=True)
class EventsFile:
    events: list[Event]
    iso_times: bool  # some event_time was written as an ISO-8601 time (show windows that way too)


def read_events_csv(stream: IO[str], name: str) -> EventsFile:
    """Events from CSV with columns ``event_type``, ``event_time`` and attributes; errors name the line."""
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        raise EventError(
            "the file is empty; expected a header with event_type and event_time", where=name
        ) from None
    header = [h.strip() for h in header]
    for required in ("event_type", "event_time"):
        if required not in header:
            raise EventError(
                f"the header has no {required} column (found: {', '.join(header)})", where=f"{name}:1"
            )
    duplicates = {h for h in header if header.count(h) > 1}
    if duplicates:
        raise EventError(f"duplicate column(s) {', '.join(sorted(duplicates))}", where=f"{name}:1")
    type_at, time_at = header.index("event_type"), header.index("event_time")
    events = []
    iso_times = False
    for row in reader:
        where = f"{name}:{reader.line_num}"
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != len(header):
            raise EventError(f"{len(row)} fields, but the header has {len(header)}", where=where)
        event_type = row[type_at].strip()
        if not event_type:
            raise EventError("event_type is empty", where=where)
        attributes = {
            h: parse_value(v) for i, (h, v) in enumerate(zip(header, row)) if i not in (type_at, time_at)
        }
        iso_times = iso_times or not isinstance(parse_value(row[time_at].strip()), (int, float))
        events.append(Event(event_type, parse_time(row[time_at], where), attributes))
    return EventsFile(events, iso_times)


def write_jsonl(rows: Iterable[ResultRow], out: IO[str]) -> None:
    for row in rows:
        fields = row.as_dict()
        value = fields.pop("value")
        if isinstance(value, int) and not isinstance(value, bool):
            # json.dumps goes through str(int), which stops at 4300 digits; counts have many more.
            out.write(json.dumps(fields, ensure_ascii=False)[:-1] + f', "value": {int_text(value)}}}\n')
        else:
            out.write(json.dumps({**fields, "value": value}, ensure_ascii=False) + "\n")


def _cell(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        digits = int_text(value)
        if len(digits) > 24:
            return f"{digits[:6]}…({len(digits)} digits)"
        return digits
    if value is None:
        return "null"
    return str(value)


def _moment(seconds: float, iso: bool) -> str:
    if not iso:
        return str(seconds)
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")


def format_table(rows: list[ResultRow], iso_times: bool = False) -> str:
    header = ("query", "window", "group", "aggregate", "value")
    body = [
        (
            r.query,
            f"[{_moment(r.window_start, iso_times)}, {_moment(r.window_end, iso_times)})",
            ", ".join(f"{k}={v}" for k, v in r.group.items()) or "-",
            r.aggregate,
            _cell(r.value),
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
