"""A table of events on the compiled engine, column by column: Arrow in, Arrow out.

The Spark job hands the engine its ``applyInArrow`` batches; turning each row into an ``Event`` and each
result into an ``AggregateState`` cost more than the engine itself. Here Arrow compute prepares what the
kernel reads (per row: its type's number, its time in microseconds, its stream partition's number, its
group's number in each GROUP-BY) and the kernel (``native/src/columns.rs``) reads the attribute columns'
buffers directly, runs every partition, sums the windows of each group and writes their partial states as
Arrow buffers (``native/src/partials.rs``). Python touches one object per group and per query, never per
event or per result row.

Partitions the kernel cannot compute exactly (``native.py``: a value only Python computes exactly) are
evaluated as ``hamlet.evaluate`` would, on ``Event``s of their rows only, and their partial rows appended:
rows of one (query, window, group, aggregate) merge (``AggregateState.merge``), so a caller that merges
partials (the job's second stage, ``merge_partials``) sees the same results either way. A set the kernel
does not take (``native.kernel_obstacle``) runs entirely on that path, and so does a stream partition in
which two different float times fall into one microsecond (``clashing_rows``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hamlet.analysis.predicates import group_values
from hamlet.errors import EventError, shown_names
from hamlet.events import MICROS, TIME_RANGE, TYPE_SPACE, Event, decimal_number
from hamlet.partials import PartialRow
from hamlet.results import group_identity
from hamlet.runtime import native, vertical
from hamlet.runtime.aggregates import ConjunctionAlgebra, CountAlgebra, FloatColumns, algebra_for
from hamlet.stats import EvaluationStats

TYPE, TIME, ID = "event_type", "event_time", "event_id"

PARTIAL_SCHEMA = pa.schema([
    ("query", pa.string()),
    ("window_start_us", pa.int64()),
    ("window_end_us", pa.int64()),
    ("group_key", pa.string()),
    ("aggregate", pa.string()),
    ("state", pa.string()),
])  # fmt: skip


def group_text(group: dict[str, Any]) -> str:
    """The canonical key of a group: JSON of {attribute: value} in GROUP-BY order ("{}" without GROUP-BY).
    -0.0 is 0.0 (``group_values``): a call whose group held only -0.0 wrote another key than one that held
    0.0 first, and the Spark job, which merges calls by key, wrote the group twice."""
    group = dict(zip(group, group_values(tuple(group.values()))))
    # A value JSON has no type for (a time, bytes) is keyed by its text.
    return json.dumps(group, ensure_ascii=False, separators=(",", ":"), default=str)


def partition_text(values: Sequence[Any]) -> str:
    """A stream partition's key as text, equal for equal values (-0.0 is 0.0, as ``codes`` folds them)."""
    values = [0.0 if isinstance(v, float) and v == 0 else v for v in values]
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"), default=str)


def sorted_events(table: pa.Table) -> pa.Table:
    """Rows by (time, event id): the engine's result does not depend on the order of equal times, and this
    makes every run see the same order whatever the shuffle did (strings in UTF-8 byte order, which is code
    point order as in Python)."""
    by_id = ID in table.column_names
    if _ascending(table.column(TIME), strictly=by_id):
        return table  # (the common case: a stream comes in time order; a stable sort would not move a row)
    keys = [(TIME, "ascending")] + ([(ID, "ascending")] if by_id else [])
    return table.take(pc.sort_indices(table, sort_keys=keys))


def _ascending(column: pa.ChunkedArray, strictly: bool) -> bool:
    """Whether the values never decrease (with ``strictly``, always increase): one comparison per row,
    against a sort and a copy of every column."""
    n = len(column)
    if n < 2:
        return True
    compare = pc.less if strictly else pc.less_equal
    return bool(pc.all(compare(column.slice(0, n - 1), column.slice(1))).as_py())


def micros_of(table: pa.Table) -> pa.Array:
    """Event times as int64 microseconds (``checked``: a timestamp column of any unit, or whole seconds)."""
    column = table.column(TIME)
    if pa.types.is_timestamp(column.type):
        return column.cast(pa.timestamp("us", column.type.tz)).cast(pa.int64())
    return pc.multiply_checked(column.cast(pa.int64()), MICROS)


UNNAMED_TABLE = "the events table"  # what errors call a table that was read from no file


def checked(table: pa.Table, source: str | None = None) -> pa.Table:
    """The table as the engine reads it, or an ``EventError`` naming what is wrong and where: an
    ``event_type`` (text) and an ``event_time`` (a timestamp, or seconds as numbers, as ``hamlet.evaluate``
    takes them) in every row. Seconds that are not all whole go to the ``Event`` path as they are.
    ``source`` names the table in errors (the path of the file it was read from; None: "the events
    table"), and a bad row is ``source, row N`` with rows numbered from 1, as a CSV's lines are."""
    where = source or UNNAMED_TABLE
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise EventError(f"expected a pyarrow Table of events, found {type(table).__name__}", where=where)
    for name in (TYPE, TIME):
        if name not in table.column_names:
            raise EventError(f"the table has no {name} column (found: {shown_names(table.column_names)})",
                             where=where)  # fmt: skip
    refuse_duplicate_columns(table.column_names, where)
    if ID in table.column_names and pa.types.is_nested(table.schema.field(ID).type):
        # (rows of one time are ordered by their ids: Arrow sorts no list, struct or map)
        raise EventError(f"event_id is {table.schema.field(ID).type}, not a value such as a text or a number",
                         where=where)  # fmt: skip
    table = _halves_as_doubles(_views_as_strings(table))
    ids = table.column(ID) if ID in table.column_names else None
    kind = table.column(TYPE).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise EventError(f"event_type is {kind}, not text", where=where)
    table = table.set_column(table.column_names.index(TYPE), TYPE, table.column(TYPE).cast(pa.string()))
    time = table.column(TIME)
    if not (
        pa.types.is_timestamp(time.type) or pa.types.is_integer(time.type) or pa.types.is_floating(time.type)
    ):
        raise EventError(f"event_time is {time.type}, neither a timestamp nor a number of seconds",
                         where=where)  # fmt: skip
    for name in (TYPE, TIME):
        column = table.column(name)
        if not column.null_count and not pa.types.is_floating(column.type):
            continue  # (no null, and no NaN in a column of another type: no pass over it)
        nulls = pc.is_null(column, nan_is_null=True)
        if pc.any(nulls).as_py():
            raise EventError(f"{name} is empty", where=_row(where, pc.index(nulls, True).as_py(), ids))
    table = table.set_column(table.column_names.index(TYPE), TYPE, _types(table.column(TYPE), where, ids))
    table = _decimals_as_numbers(table)
    if pa.types.is_timestamp(time.type):
        _check_timestamps(time, where, ids)
        return table
    # Seconds as numbers, within the years 1 to 9999: the least and the greatest compared in Python (exact for
    # every integer type and for doubles), the row looked for only where one lies outside.
    least, greatest = pc.min_max(time).values()
    if least.is_valid and (least.as_py() < TIME_RANGE[0] or greatest.as_py() > TIME_RANGE[1]):
        if pa.types.is_uint64(time.type):  # (the one integer type whose values an int64 bound cannot meet)
            outside = pc.greater(time, pa.scalar(TIME_RANGE[1], pa.uint64()))
        else:
            low, high = (pa.scalar(float(b)) if pa.types.is_floating(time.type) else b for b in TIME_RANGE)
            outside = pc.invert(pc.and_(pc.greater_equal(time, low), pc.less_equal(time, high)))
        row = pc.index(outside, True).as_py()
        raise EventError(f"event_time {time[row].as_py()} lies outside the years 1 to 9999 ({TIME_RANGE[0]} to "
                         f"{TIME_RANGE[1]} s)", where=_row(where, row, ids))  # fmt: skip
    if not pa.types.is_floating(time.type) or pc.all(pc.equal(pc.floor(time), time)).as_py():
        table = table.set_column(table.column_names.index(TIME), TIME, time.cast(pa.int64()))
    return table


def refuse_duplicate_columns(names: Sequence[str], where: str) -> None:
    """An ``EventError`` where two columns have one name (of a table, a CSV header or a DataFrame): a column
    is read by its name, and which of two would be a guess."""
    twice = sorted(name for name, count in Counter(names).items() if count > 1)
    if twice:
        raise EventError(f"more than one column named {shown_names(twice)}", where=where)


def _types(column: pa.ChunkedArray, where: str, ids: pa.ChunkedArray | None) -> pa.ChunkedArray:
    """Types without the whitespace around them, none empty, none with a NUL byte (``hamlet.api.event_type``'s
    rule), or an ``EventError`` naming the first row that breaks it; dictionary-encoded. Tested on the
    distinct types (a stream has a few): the column is trimmed, and its rows searched, only where one of them
    needs it. Encoded once here, the column is hashed once per call: ``set_rows`` tests each distinct type,
    and the kernel reads the types by their numbers (each pass over 20,000 strings costs about 0.2 ms)."""
    encoded = pc.dictionary_encode(column.combine_chunks())
    distinct = encoded.dictionary.to_pylist()
    if len(distinct) <= 4096 and all(t and t.strip(TYPE_SPACE) == t and "\x00" not in t for t in distinct):
        return pa.chunked_array([encoded])
    types = pc.utf8_trim(column, characters=TYPE_SPACE)
    blank = pc.equal(types, "")
    if pc.any(blank).as_py():
        raise EventError(f"{TYPE} is empty", where=_row(where, pc.index(blank, True).as_py(), ids))
    row = first_nul_row(types)
    if row is not None:
        raise EventError(f"{TYPE} {types[row].as_py()!r} holds a NUL byte", where=_row(where, row, ids))
    return pa.chunked_array([pc.dictionary_encode(types.combine_chunks())])


def first_nul_row(column: pa.ChunkedArray) -> int | None:
    """The 0-based index of a text column's first value that holds a NUL byte, or None."""
    row: int = pc.index(pc.match_substring(column, "\x00"), True).as_py()
    return row if row >= 0 else None


def _row(where: str, index: int, ids: pa.ChunkedArray | None = None) -> str:
    """A row by its 0-based ``index`` as errors name it: from 1, as people count rows and a CSV its lines, and
    by its ``event_id`` where the table has one (the Spark job's batches are no file: their rows' numbers
    alone would point at nothing)."""
    if ids is None or not ids[index].is_valid:
        return f"{where}, row {index + 1}"
    return f"{where}, row {index + 1} (event_id {shown_names([str(ids[index].as_py())])})"


def _views_as_strings(table: pa.Table) -> pa.Table:
    """Text columns in Arrow's view layout (``string_view``, as polars and DuckDB export text) as plain
    strings, the layout the kernel reads (``columns.rs``) and Arrow's compute functions all take."""
    for index, field in enumerate(table.schema):
        if pa.types.is_string_view(field.type):
            table = table.set_column(index, field.name, table.column(index).cast(pa.string()))
        elif pa.types.is_dictionary(field.type) and pa.types.is_string_view(field.type.value_type):
            # (Arrow has no cast of such a dictionary yet: its values are cast, its indices kept)
            chunks = [pa.DictionaryArray.from_arrays(c.indices, c.dictionary.cast(pa.string()))
                      for c in table.column(index).chunks]  # fmt: skip
            kind = pa.dictionary(field.type.index_type, pa.string())
            table = table.set_column(index, field.name, pa.chunked_array(chunks, kind))
    return table


def _halves_as_doubles(table: pa.Table) -> pa.Table:
    """Half-precision float columns (numpy's ``float16``) as doubles, which hold each of their values exactly
    and which Arrow's compute functions take (they have no kernels for halves)."""
    for index, field in enumerate(table.schema):
        if pa.types.is_float16(field.type):
            table = table.set_column(index, field.name, table.column(index).cast(pa.float64()))
    return table


def _decimals_as_numbers(table: pa.Table) -> pa.Table:
    """Decimal attribute columns (Spark's ``decimal(p,s)``, which ``hamlet check`` takes for numbers) as the
    numbers they hold: whole ones as exact ints, the others as their nearest doubles. Python's ``Decimal`` is
    no number of the language, so left as it is a column would match no comparison and stop SUM with an
    error. (The events path reads a Decimal value by the same rule, as far as a value without its column
    tells it: ``events.decimal_number``.)"""
    for index, field in enumerate(table.schema):
        if field.name in (TYPE, TIME, ID) or not pa.types.is_decimal(field.type):
            continue
        column = table.column(index)
        if vertical.decimal_as_double(field.type):
            # Through the decimal's text: Arrow's decimal-to-double cast is not correctly rounded (1.005 gave
            # 1.0050000000000001), its parse of a number's text is, as Python's float(Decimal) is.
            numbers = column.cast(pa.string()).cast(pa.float64())
        else:
            numbers = _whole_numbers(column)
        table = table.set_column(index, field.name, numbers)
    return table


def _whole_numbers(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A whole decimal column (Spark's ``decimal(p,0)``, p up to 38) as exact ints: int64 or uint64 where one
    holds every value, else the column as it is, which the kernel leaves to Python (``column_spec``: "other")
    and Python reads exactly (``python_values``). Never doubles: two ids of 20 digits would be one double."""
    for kind in (pa.int64(), pa.uint64()):
        try:
            return column.cast(kind)
        except pa.ArrowInvalid:  # (a value beyond it)
            continue
    return column


def python_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column's values as Python reads them: a decimal's as the number it holds (``events.decimal_number``,
    the events path's rule), the others as ``to_pylist`` gives them."""
    values = column.to_pylist()
    if pa.types.is_decimal(column.type):
        return [None if v is None else decimal_number(v) for v in values]
    return values


# Per timestamp unit: its ticks per second.
_TICKS = {"s": 1, "ms": 1_000, "us": MICROS, "ns": 1_000_000_000}


def _check_timestamps(time: pa.ChunkedArray, where: str, ids: pa.ChunkedArray | None) -> None:
    """Timestamps the engine's microseconds hold exactly, within the years 1 to 9999 (``where``: the table
    as errors name it)."""
    ticks = _TICKS[time.type.unit]
    raw = time.cast(pa.int64())
    if ticks > MICROS:
        finer = pc.not_equal(pc.multiply(pc.divide(raw, ticks // MICROS), ticks // MICROS), raw)
        if pc.any(finer).as_py():
            row = pc.index(finer, True).as_py()
            raise EventError(f"event_time {time[row]} has a fraction of a microsecond, finer than the engine's "
                             "microseconds", where=_row(where, row, ids))  # fmt: skip
        return  # (nanoseconds in 64 bits span the years 1677 to 2262)
    outside = pc.or_(pc.less(raw, TIME_RANGE[0] * ticks), pc.greater(raw, TIME_RANGE[1] * ticks))
    if pc.any(outside).as_py():
        row = pc.index(outside, True).as_py()
        raise EventError(f"event_time of {raw[row].as_py()} {time.type.unit} since the epoch lies outside the years "
                         "1 to 9999", where=_row(where, row, ids))  # fmt: skip


def kernel_micros(table: pa.Table) -> pa.Array | None:
    """Event times as the kernel's int64 microseconds (``native/src/events.rs``), or None beyond its range
    (or NaN). Timestamps (``checked``) and integers are whole microseconds. Seconds as floats become
    ``native.floor_micros``: all the kernel asks of a time is its order among the others and its side of each
    window, pane and segment bound, which are whole microseconds, and a time t with T <= t·10^6 < T + 1
    lies on the same side of each as T. Two different times in one microsecond would read as equal, and
    equal times are never adjacent in a trend: ``clashing_rows`` finds the stream partitions where they meet."""
    if not pa.types.is_floating(table.column(TIME).type):
        return micros_of(table)
    micros = native.floor_micros(_float_seconds(table))
    return None if micros is None else pa.array(micros, pa.int64())


def clashing_rows(table: pa.Table, micros: pa.Array, attributes: Sequence[str],
                  source: str | None = None) -> np.ndarray:  # fmt: skip
    """The numbers (ascending) of the rows of every stream partition (by ``attributes``) in which two
    different float times fall into one microsecond of ``micros`` (``kernel_micros``; ``table`` sorted by
    time): those partitions are Python's. Empty for timestamps and ints, and in most streams of floats."""
    none = np.zeros(0, np.int64)
    if not pa.types.is_floating(table.column(TIME).type) or table.num_rows < 2:
        return none
    seconds, at = _float_seconds(table), micros.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    # (the rows of a microsecond are adjacent in time order, so a partition's clash is one of the whole
    # table's: the partitions are numbered only where the table has one, seldom)
    if not native.clashing_partitions(seconds, at, np.zeros(len(at), np.int64), 1):
        return none
    partition, count = codes(table, attributes, source)
    clashing = native.clashing_partitions(seconds, at, partition, count)
    return np.flatnonzero(np.isin(partition, clashing)) if clashing else none


def _float_seconds(table: pa.Table) -> np.ndarray:
    return table.column(TIME).to_numpy().astype(np.float64, copy=False)


def whole_seconds(table: pa.Table) -> bool:
    """Every time a whole second (``events_of`` makes them ints)."""
    kind = table.column(TIME).type
    if pa.types.is_floating(kind):
        return False
    if pa.types.is_integer(kind):
        return True  # (seconds as integers: whole by their type, no pass over the column)
    micros = micros_of(table)
    return bool(pc.all(pc.equal(pc.multiply(pc.divide(micros, MICROS), MICROS), micros)).as_py())


def seconds(micros: int) -> int | Fraction:
    """A timestamp as ``Event.time``: whole seconds as an int (the fast path), else the exact Fraction."""
    whole, rest = divmod(micros, MICROS)
    return whole if rest == 0 else Fraction(micros, MICROS)


def to_micros(value: float | Fraction) -> int:
    if isinstance(value, int):
        return value * MICROS
    return round(Fraction(value) * MICROS)  # window bounds are whole microseconds; floats only approach them


def events_of(table: pa.Table, attributes: Sequence[str]) -> list[Event]:
    """The rows of a table sorted by time as ``Event``s (int64 stays an exact Python int, a time becomes
    whole seconds when it is whole): the path for what the kernel leaves to Python."""
    if table.num_rows == 0:
        return []
    if pa.types.is_floating(table.column(TIME).type):  # seconds with fractions, exactly as given
        times = table.column(TIME).to_pylist()
    elif whole_seconds(table):
        times = pc.divide(micros_of(table), MICROS).to_pylist()  # ints: the exact, fast path
    else:
        times = [seconds(t) for t in micros_of(table).to_pylist()]
    types = table.column(TYPE).to_pylist()
    names = [a for a in attributes if a in table.column_names]
    try:
        columns = [python_values(table.column(name)) for name in names]
    except (OverflowError, ValueError) as e:  # (a zoned timestamp of the year 1, a duration past timedelta's)
        raise EventError(f"an attribute holds a value Python's dates and times cannot hold ({e})",
                         where=UNNAMED_TABLE) from None  # fmt: skip
    return [Event(t, moment, dict(zip(names, values))) for t, moment, *values in zip(types, times, *columns)]


class TableFloats(FloatColumns):
    """``aggregates.FloatColumns`` of a table: which (event type, attribute) hold a float in some row."""

    def __init__(self, table: pa.Table) -> None:  # (not FloatColumns': no events here)
        self.table = table
        self.known: dict[tuple[str | None, str | None], bool] = {}

    def __contains__(self, key: tuple[str | None, str | None]) -> bool:
        found = self.known.get(key)
        if found is None:
            event_type, attribute = key
            column = self.table.column(attribute) if attribute in self.table.column_names else None
            found = (
                column is not None
                and pa.types.is_floating(column.type)
                and bool(
                    pc.any(
                        pc.and_(pc.equal(self.table.column(TYPE), event_type), pc.is_valid(column))
                    ).as_py()
                )
            )
            self.known[key] = found
        return found


def codes(table: pa.Table, attributes: Sequence[str], source: str | None = None) -> tuple[np.ndarray, int]:
    """Per row, the number of its combination of values in the columns ``attributes`` (dense, from 0; none
    null), and how many there are. ``source`` names the table in errors, as ``checked``'s does."""
    code: pa.Array | None = None
    count = 1
    rows = table.num_rows
    for attribute in attributes:
        column = table.column(attribute).combine_chunks()
        if pa.types.is_dictionary(column.type):  # (its dictionary may hold values no row here has: not dense)
            column = column.dictionary_decode()
        if pa.types.is_floating(column.type):
            column = pc.add(column, 0.0)  # -0.0 + 0.0 is 0.0: one key, as in Python, where 0.0 == -0.0
        if pa.types.is_time(column.type):
            column = _micro_times(column)  # (Python's times: 1001 and 1999 ns are one)
        if pa.types.is_nested(column.type):
            raise EventError(f"{attribute} is a {column.type} column: GROUP-BY and equivalence attributes take "
                             "single values (numbers, text, times)", where=source or UNNAMED_TABLE)  # fmt: skip
        encoded = pc.dictionary_encode(column)
        indices, n = encoded.indices.cast(pa.int64()), len(encoded.dictionary)
        if code is not None:
            indices = pc.add(pc.multiply(code, n), indices)
            encoded = pc.dictionary_encode(indices)
            indices, n = encoded.indices.cast(pa.int64()), len(encoded.dictionary)
        code, count = indices, n
    if code is None:
        return np.zeros(rows, dtype=np.int64), 1 if rows else 0
    return code.to_numpy(zero_copy_only=False).astype(np.int64, copy=False), count


def column_spec(column: pa.ChunkedArray) -> tuple:
    """An attribute column as the kernel reads it (``columns.rs``): (kind, offset, validity, values, data)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.dictionary_decode(), array.type.value_type
    if pa.types.is_null(kind):
        return ("null", 0, None, None, None)
    if pa.types.is_uint64(kind):  # (read as it is: values beyond int64 stay exact, ``columns.rs``)
        name = "uint"
    elif pa.types.is_integer(kind):
        array, name = array.cast(pa.int64()), "int"
    elif pa.types.is_floating(kind):
        array, name = array.cast(pa.float64()), "float"
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        array, name = array.cast(pa.large_string()), "str"
    elif pa.types.is_boolean(kind):
        name = "bool"
    elif (temporal := _temporal(array)) is not None:
        array, name = temporal[0], f"temporal:{temporal[1]}"
    else:  # decimals beyond 64 bits, bytes, lists...: Python reads them (the kernel leaves what needs them)
        return ("other", array.offset, array.buffers()[0], None, None)
    buffers = array.buffers()
    return (name, array.offset, buffers[0], buffers[1], buffers[2] if name == "str" else None)


def _temporal(array: pa.Array) -> tuple[pa.Array, str] | None:
    """A date, time, timestamp or duration column as the kernel compares it (``values::Temporal``): int64 in
    the unit that orders the values Python reads from it (``python_values``) as Python orders them, and the
    kind ``predicates.kind`` gives those values. None where the kernel leaves the column to Python: a date64
    (Python's date is its milliseconds floored to a day), values Python's dates and datetimes cannot hold
    (the years 1 to 9999, a day inside them for a zone's offset), a unit that would overflow."""
    kind = array.type
    try:
        if pa.types.is_date32(kind):
            values, name, bounds = array.cast(pa.int32()).cast(pa.int64()), "date", _DAYS
        elif pa.types.is_timestamp(kind):
            zone = "" if kind.tz is None else " with zone"
            if kind.unit == "ns":  # (pandas' Timestamp, whose range is int64's)
                return array.cast(pa.int64()), "Timestamp" + zone
            values, name = array.cast(pa.timestamp("us", kind.tz)).cast(pa.int64()), "datetime" + zone
            bounds = _MICROS
        elif pa.types.is_time(kind):
            return _micro_times(array).cast(pa.int64()), "time"
        elif pa.types.is_duration(kind):
            if kind.unit == "ns":
                return array.cast(pa.int64()), "Timedelta"
            return array.cast(pa.duration("us")).cast(pa.int64()), "timedelta"
        else:
            return None
    except pa.ArrowInvalid:  # (a unit finer than the column's overflows int64)
        return None
    least, greatest = pc.min_max(values).values()
    if least.is_valid and not bounds[0] <= least.as_py() <= greatest.as_py() <= bounds[1]:
        return None
    return values, name


def _micro_times(array: Any) -> Any:
    """Times of day in microseconds, as Python's ``time`` holds them: nanoseconds are cut, as Python cuts them."""
    return array.cast(pa.time64("us"), safe=False)


_DAYS = (-719_162 + 1, 2_932_896 - 1)  # date(1, 1, 1) and date(9999, 12, 31) from the epoch, a day inside
_MICROS = ((TIME_RANGE[0] + 86_400) * MICROS, (TIME_RANGE[1] - 86_400) * MICROS)


def _int64(buffer: bytes, n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(buffer)])


def _text(buffers: tuple[bytes, bytes], n: int) -> pa.Array:
    """A string column as the kernel writes it: (offsets as int32, bytes)."""
    offsets, data = buffers
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def member_specs(compiled: Any, queries: Sequence[Any]) -> tuple[list, list[str], list[str]]:
    """Per graph, per member: (query code, [(aggregate code, function, fields)]) for ``run_columns``; the
    query names and the aggregate texts the codes stand for."""
    number = {q.name: i for i, q in enumerate(queries)}
    names = [q.name for q in queries]
    aggregates: list[str] = []
    specs = []
    for group in compiled.groups:
        algebra = group.algebra
        members = []
        for q in group.queries:
            states = []
            for spec in q.aggregates:
                # (P AND Q's COUNT(*) is the pairs its classes make: ``ConjunctionAlgebra.states``)
                function = "PAIRS" if isinstance(algebra, ConjunctionAlgebra) else spec.function
                states.append((len(aggregates), function, _fields(algebra, spec)))
                aggregates.append(spec.text)
            members.append((number[q.name], states))
        specs.append(members)
    return specs, names, aggregates


def _fields(algebra: Any, spec: Any) -> list[int]:
    """The graph's fields a RETURN aggregate reads (``VectorAlgebra.states``, ``ConjunctionAlgebra.states``)."""
    if isinstance(algebra, ConjunctionAlgebra):
        return [1, 2, 3]
    if isinstance(algebra, CountAlgebra) or (spec.function == "COUNT" and spec.event_type is None):
        return [0]
    if spec.function == "COUNT":
        return [algebra.index[("count", spec.event_type, None)]]
    if spec.function in ("MIN", "MAX"):
        return [algebra.index[(spec.function.lower(), spec.event_type, spec.attribute)]]
    key = (spec.event_type, spec.attribute)
    return [algebra.index[("sum", *key)], algebra.index[("nonnull", *key)], algebra.index[("floats", *key)]]


def partial_rows_table(rows: Sequence[PartialRow], window_ends_us: tuple[int, int] | None) -> pa.Table:
    """``PartialRow``s (the Python path's) as a table of ``PARTIAL_SCHEMA``, windows ending in the range."""
    columns: dict[str, list] = {name: [] for name in PARTIAL_SCHEMA.names}
    keys: dict[tuple, str] = {}  # a group's key, once per group (not per row)
    for p in rows:
        end = to_micros(p.window_end)
        if window_ends_us is not None and not window_ends_us[0] < end <= window_ends_us[1]:
            continue
        columns["query"].append(p.query)
        columns["window_start_us"].append(to_micros(p.window_start))
        columns["window_end_us"].append(end)
        values = group_identity(p.group)
        key = keys.get(values)
        if key is None:
            key = keys[values] = group_text(p.group)
        columns["group_key"].append(key)
        columns["aggregate"].append(p.aggregate)
        columns["state"].append(p.state.to_text())
    return pa.Table.from_pydict(columns, schema=PARTIAL_SCHEMA)


def set_rows(table: pa.Table, types: frozenset[str] | None, attributes: Sequence[str]) -> pa.Table:
    """A set's rows (``table`` as ``checked`` makes it): its types (None: every type), none null in its
    partition attributes (no query of the set matches those)."""
    mask = None  # (None: every row so far)
    if types is not None:
        # (``checked``'s column is dictionary-encoded: each distinct type tested once, not each row's text;
        # the rows are looked at only where some type is not the set's)
        encoded = table.column(TYPE).combine_chunks()
        wanted = pc.is_in(encoded.dictionary, value_set=pa.array(sorted(types), pa.string()))
        if not pc.all(wanted).as_py():
            mask = pc.take(wanted, encoded.indices)
    for a in attributes:
        if a not in table.column_names:
            return table.slice(0, 0)
        valid = pc.invert(pc.is_null(table.column(a), nan_is_null=True))  # (NaN: a null here)
        mask = valid if mask is None else pc.and_(mask, valid)
    if mask is None or pc.all(mask).as_py():
        return table  # (every row: no copy of the columns)
    return table.filter(mask)


def group_keys(
    table: pa.Table, by: Sequence[tuple[str, ...]]
) -> tuple[list[np.ndarray], list[int], list[str]]:
    """Per GROUP-BY: per row its group's number; the offset of each GROUP-BY's numbers in the keys; and the
    keys (``group_text``), one per group, computed from each group's first row."""
    numbers: list[np.ndarray] = []
    offsets: list[int] = []
    keys: list[str] = []
    for attributes in by:
        code, _ = codes(table, attributes)
        offsets.append(len(keys))
        numbers.append(code)
        if not attributes:
            keys.append("{}")
            continue
        _, first = np.unique(code, return_index=True)
        values = [python_values(table.column(a).take(pa.array(first))) for a in attributes]
        keys.extend(group_text(dict(zip(attributes, row))) for row in zip(*values))
    return numbers, offsets, keys


def run_compiled(compiled: Any, queries: Sequence[Any], table: pa.Table, micros: pa.Array,
                 attributes: Sequence[str], by: Sequence[tuple[str, ...]],
                 window_ends_us: tuple[int, int] | None, stats: EvaluationStats,
                 segment: tuple[int, int] | None = None,
                 source: str | None = None) -> tuple[pa.Table, np.ndarray, list]:  # fmt: skip
    """``table`` (a set's rows, sorted by time; ``micros``: their times, ``kernel_micros``) on the set kernel:
    its partial rows, the numbers of the rows whose partitions the kernel left to Python, and with
    ``segment`` (a time segment [t0, t1) in microseconds: ``vertical.py``) the records of its partitions for composition, as (partition key,
    ``vertical.Record``). ``source``: the table's name in errors (``checked``)."""
    types = pc.dictionary_encode(table.column(TYPE).combine_chunks())
    partition, count = codes(table, attributes, source)
    groups, offsets, keys = group_keys(table, by)
    specs, names, aggregates = member_specs(compiled, queries)
    columns = [
        (name, column_spec(table.column(name))) for name in table.column_names if name not in (TYPE, TIME)
    ]
    times = micros.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    ends = window_ends_us if window_ends_us is not None else (-(1 << 63), (1 << 63) - 1)
    n, query, group, start, end, aggregate, state, fallback, matched, decisions, raw_records = (
        compiled.native.kernel.run_columns(
            types.dictionary.to_pylist(), native.words(types.indices.cast(pa.int64()).to_numpy()),
            native.words(times), native.words(partition), count, [native.words(g) for g in groups], offsets,
            columns, specs, (names, keys, aggregates), ends, compiled.sharing, segment,
        )
    )  # fmt: skip
    records = []
    if raw_records and segment is not None:
        first = np.unique(partition, return_index=True)[1]
        key_values = [python_values(table.column(a).take(pa.array(first))) for a in attributes]
        partition_keys = [partition_text(row) for row in zip(*key_values)]
        if not attributes:
            partition_keys = ["[]"] * count

        def groups_of(p: int) -> list[str]:
            return [keys[offsets[i] + int(groups[i][first[p]])] for i in range(len(groups))]

        records = [
            (partition_keys[p], r) for p, r in vertical.decode_records(raw_records, segment[1], groups_of)
        ]
    native.count(stats, matched, decisions)
    stats.partitions += count - len(fallback)
    out = pa.Table.from_arrays([_text(query, n), _int64(start, n), _int64(end, n), _text(group, n),
                                _text(aggregate, n), _text(state, n)], schema=PARTIAL_SCHEMA)  # fmt: skip
    left = (
        np.flatnonzero(np.isin(partition, np.asarray(fallback, dtype=np.int64)))
        if fallback
        else np.zeros(0, np.int64)
    )
    return out, left, records


def algebras_of(queries: Sequence[Any], table: pa.Table) -> dict[str, Any]:
    floats = TableFloats(table)
    return {q.name: algebra_for(q, floats) for q in queries}  # type: ignore[arg-type]
