"""Reading events from CSV and writing result rows as JSON lines or a readable table."""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from typing import IO, Any

import pyarrow as pa

from hamlet.api import event_time, event_type
from hamlet.errors import EventError, HamletError, not_utf8_by_its_bom, regular_file, shown_names
from hamlet.events import MICROS, TIME_RANGE, Event, Time
from hamlet.partials import int_text
from hamlet.results import ResultRow
from hamlet.runtime.columnar import first_nul_row, refuse_duplicate_columns

# What a number is in an events CSV, for the engine's reader and the loader of the events table
# (jobs/load_events.py) alike: ASCII digits with an optional sign, fraction and exponent, surrounding spaces
# ignored. Not Python's int()/float(), which also take '1_000', '١٢٣', 'nan' and 'inf'.
_INT = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")
_MICROSECOND = Decimal("0.000001")
_FINER_THAN_MICROSECONDS = re.compile(r"T?\d\d:?\d\d:?\d\d[.,](\d{7,})")  # an ISO time's seconds' fraction
MAX_DIGITS = 4300  # Python's int/str conversion limit: longer integers are refused, not a traceback


def parse_number(text: str) -> int | float | None:
    """The number ``text`` writes (an int, or a float for a decimal), None when it writes none; ValueError
    when no value can hold it (an integer of more than MAX_DIGITS digits, a decimal beyond double range),
    its message a predicate of the text: "is beyond the range of a double"."""
    text = text.strip()
    if _INT.fullmatch(text):
        digits = len(text.lstrip("+-"))
        if digits > MAX_DIGITS:
            raise ValueError(f"has {digits} digits (an integer may have at most {MAX_DIGITS})")
        return int(text)
    if _DECIMAL.fullmatch(text):
        value = float(text)
        if not math.isfinite(value):
            raise ValueError("is beyond the range of a double")
        return value
    return None


def shown(text: str, limit: int = 40) -> str:
    """A cell quoted in an error message, at most ``limit`` characters of it."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_value(text: str) -> int | float | str | None:
    """A CSV cell: empty is null, numbers (``parse_number``) are numbers, anything else a string."""
    if text == "":
        return None
    number = parse_number(text)
    return text if number is None else number


def parse_time(text: str, where: str) -> Time:
    """Seconds since the epoch from a number or an ISO-8601 time. Decimal seconds count from the text, to the
    microsecond (half to even below one), as the loader of the events table stores them: the double nearest
    1700000000.001 lies below it, and would put the event in the millisecond window before its own."""
    stripped = text.strip()
    try:
        value = parse_value(stripped)
    except ValueError as e:
        raise EventError(f"event_time {shown(stripped)} {e}", where=where) from None
    if isinstance(value, float) and TIME_RANGE[0] <= value <= TIME_RANGE[1]:  # (else event_time says so)
        micros = int(Decimal(stripped).quantize(_MICROSECOND, ROUND_HALF_EVEN).scaleb(6))
        return event_time(micros // MICROS if micros % MICROS == 0 else Fraction(micros, MICROS), where)
    if isinstance(value, (int, float)):
        return event_time(value, where)
    if value is None:
        raise EventError("event_time is empty", where=where)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise EventError(
            f"event_time {shown(text)} is neither a number of seconds nor an ISO-8601 time", where=where
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    finer = _FINER_THAN_MICROSECONDS.search(value)
    if finer:  # (Python cuts digits past the microsecond: rounded as decimal seconds are, half to even)
        fraction = Decimal("0." + finer.group(1)).quantize(_MICROSECOND, ROUND_HALF_EVEN)
        moment = moment.replace(microsecond=0) + timedelta(microseconds=int(fraction.scaleb(6)))
    return event_time(moment, where)


@dataclass(frozen=True)
class EventsFile:
    events: list[Event]
    iso_times: bool  # some event_time was written as an ISO-8601 time (show windows that way too)
    columns: tuple[str, ...] = ()  # the header's, whether or not a row has a value there


def open_csv(path: str) -> IO[str]:
    """An events CSV for ``csv_records``: UTF-8 with or without a byte order mark; a byte that is not UTF-8
    is kept (as a surrogate) for ``csv_records`` to report with its line and column instead of stopping the
    whole file."""
    regular_file(path, "events")
    return open(path, encoding="utf-8-sig", errors="surrogateescape", newline="")


_UNDECODED = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True)
class Record:
    """One CSV record: the line it starts on, and its cells, or why it cannot be read."""

    line: int
    cells: list[str]
    problem: str | None = None
    column: int | None = None  # the field the problem is in, when it is one field's
    text: str | None = None  # the lines of a record whose cells cannot be read, as they were written

    def where(self, name: str) -> str:
        return f"{name}:{self.line}" + (f", column {self.column}" if self.column else "")


class _Taken:
    """The stream's lines as the csv reader takes them (it reads no further than its record), kept until the
    next record starts: what a record the reader refused was, so that its reject keeps it."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines = iter(stream)
        self.taken: list[str] = []

    def __iter__(self) -> _Taken:
        return self

    def __next__(self) -> str:
        line = next(self.lines)
        self.taken.append(line)
        return line

    def since_last(self) -> str:
        text, self.taken = "".join(self.taken), []
        return text


def csv_records(stream: IO[str]) -> Iterator[Record]:
    """The records of ``stream`` (the header first), blank lines skipped. A record that cannot be read — a
    byte that is not UTF-8, a field over the csv module's size limit — comes with its ``problem`` and
    reading goes on at the next line. A stream that starts with the byte order mark of UTF-16 or UTF-32 is
    one record, the first, that says so (``errors.not_utf8_by_its_bom``): none of its lines is UTF-8."""
    # strict: a quote left open would otherwise take every line after it into one field, and those events
    # would be lost without a word (the record still has as many fields as the header).
    lines = _Taken(stream)
    reader = csv.reader(lines, strict=True)
    done = 0  # the last line read so far
    while True:
        try:
            lines.since_last()
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            problem = (
                "a quoted field starts here and is never closed (its closing quote is missing)"
                if str(e) == "unexpected end of data"
                else f"not CSV: {e}"
            )
            yield Record(done + 1, [], problem, text=lines.since_last())
            done = reader.line_num
            continue
        except UnicodeDecodeError as e:  # a stream opened strictly: nothing after the bad byte is readable
            foreign = not_utf8_by_its_bom(e.object[:4]) if done == 0 else None
            yield Record(done + 1, [], foreign or f"byte 0x{e.object[e.start]:02x} is not UTF-8")
            return
        line, done = done + 1, reader.line_num
        if line == 1 and lines.taken:
            # (the bytes ``open_csv`` kept as surrogates, as they were in the file)
            foreign = not_utf8_by_its_bom(lines.taken[0][:4].encode("utf-8", "surrogateescape"))
            if foreign:
                yield Record(1, [], foreign)
                return
        if line == 1 and cells and cells[0].startswith("\ufeff"):
            cells[0] = cells[0][1:]  # a byte order mark the stream did not remove
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        for column, cell in enumerate(cells, 1):
            found = _UNDECODED.search(cell)
            if found:
                yield Record(line, cells, f"byte 0x{ord(found.group()) - 0xDC00:02x} is not UTF-8", column)
                break
        else:
            yield Record(line, cells)


# A typed cell reader: (column, text) → its value, ValueError naming what does not fit (``jobs.load_events``).
Cell = Callable[[str, str], Any]


def read_events_csv(stream: IO[str], name: str, cell: Cell | None = None) -> EventsFile:
    """Events from CSV with columns ``event_type``, ``event_time`` and attributes; errors name the line
    and, for a value, its column. A cell is a number where it reads as one, else a text (``parse_value``),
    unless ``cell`` reads the columns by a schema's types, as the loader of the events table does."""
    records = csv_records(stream)
    header_record = next(records, None)
    if header_record is None:
        raise EventError("the file is empty; expected a header with event_type and event_time", where=name)
    if header_record.problem:
        raise EventError(header_record.problem, where=header_record.where(name))
    header = [h.strip() for h in header_record.cells]
    for required in ("event_type", "event_time"):
        if required not in header:
            raise EventError(
                f"the header has no {required} column (found: {shown_names(header)})", where=f"{name}:1"
            )
    if "" in header:  # (its values would become an attribute no query can name)
        raise EventError(f"column {header.index('') + 1} of the header has no name", where=f"{name}:1")
    refuse_duplicate_columns(header, f"{name}:1")
    type_at, time_at = header.index("event_type"), header.index("event_time")
    events = []
    iso_times = False
    for record in records:
        where, row = f"{name}:{record.line}", record.cells
        if record.problem:
            raise EventError(record.problem, where=record.where(name))
        if len(row) != len(header):
            raise EventError(f"{len(row)} fields, but the header has {len(header)}", where=where)
        kind = event_type(row[type_at], where)
        attributes = {h: _attribute(v, i, h, where, cell) for i, (h, v) in enumerate(zip(header, row))
                      if i not in (type_at, time_at)}  # fmt: skip
        time = parse_time(row[time_at], f"{where}, column {time_at + 1}")
        iso_times = (
            iso_times
            or not _INT.fullmatch(row[time_at].strip())
            and not _DECIMAL.fullmatch(row[time_at].strip())
        )
        events.append(Event(kind, time, attributes))
    return EventsFile(events, iso_times, tuple(header))


ARROW_SUFFIXES = (".parquet", ".arrow", ".feather", ".ipc")


def read_events_arrow(path: str) -> pa.Table:
    """A Parquet or Arrow IPC file of events, read whole (``hamlet.evaluate_table`` checks its columns)."""
    import pyarrow.parquet as pq
    from pyarrow import feather

    regular_file(path, "events")  # (pyarrow would read a folder as an empty Parquet dataset)
    parquet = path.lower().endswith(".parquet")
    try:
        if parquet:  # (its reader refuses two columns of one name with words of its own: named first here)
            refuse_duplicate_columns(pq.read_schema(path).names, path)
        table = pq.read_table(path) if parquet else feather.read_table(path)
        # (an IPC file's buffers are read as they are: offsets pointing outside their data crashed the
        # process in the first compute function that followed them)
        table.validate(full=True)
    except OSError as e:
        raise HamletError(f"cannot read events {path}: {e.strerror or e}") from None
    except (pa.ArrowException, ValueError) as e:
        raise HamletError(f"cannot read events {path}: {str(e).splitlines()[0]}") from None
    refuse_duplicate_columns(table.column_names, path)
    _refuse_nul_bytes(table, path)
    return table


def _refuse_nul_bytes(table: pa.Table, path: str) -> None:
    """An ``EventError`` naming the first row of a text attribute that holds a NUL byte, as the CSV reader
    names its line and the loader of the events table quarantines such a row (``jobs/load_events.py``): the
    same file gives the same rows by every path. (``event_type`` is ``checked``'s, with its own message.)"""
    for field in table.schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if field.name == "event_type" or not (
            pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)
        ):
            continue
        row = first_nul_row(table.column(field.name).cast(pa.large_string()))
        if row is not None:
            raise EventError(f"{field.name} holds a NUL byte", where=f"{path}, row {row + 1}")


def _attribute(text: str, index: int, name: str, where: str, cell: Cell | None) -> Any:
    if "\x00" in text:  # (the loader of the events table quarantines such a row: `_refuse_nul_bytes`)
        raise EventError(f"{name} holds a NUL byte", where=f"{where}, column {index + 1}")
    try:
        if cell is not None:
            return cell(name, text)
        return parse_value(text)
    except ValueError as e:
        message = str(e) if cell is not None else f"{name} {shown(text.strip())} {e}"
        raise EventError(message, where=f"{where}, column {index + 1}") from None


def write_jsonl(rows: Iterable[ResultRow], out: IO[str]) -> None:
    for row in rows:
        fields = row.as_dict()
        value = fields.pop("value")
        if isinstance(value, int) and not isinstance(value, bool):
            # json.dumps goes through str(int), which stops at 4300 digits; counts have many more.
            out.write(json.dumps(fields, ensure_ascii=False)[:-1] + f', "value": {int_text(value)}}}\n')
        else:
            if isinstance(value, float) and math.isinf(value):
                value = repr(
                    value
                )  # (JSON has no infinity: Python's "Infinity" is no JSON, and jq reads it as 1.8e308)
            # (a value JSON has no type for, a MIN or MAX of times or bytes, is its text, as a group's key)
            out.write(
                json.dumps({**fields, "value": value}, ensure_ascii=False, allow_nan=False, default=str)
                + "\n"
            )


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
    try:
        return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):  # a window that ends beyond year 9999: its seconds
        return str(seconds)


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
