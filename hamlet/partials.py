"""Mergeable partial aggregates: what a partition contributes to a (query, window, group) result.

Trends never cross partitions (GROUP-BY ∪ equivalence values), so partitions that share a group combine
exactly: counts and sums add, MIN/MAX take the extreme, AVG is SUM / non-null count at the very end. The
Spark job merges partials from many engine calls this way; ``hamlet.evaluate`` merges them in memory.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from hamlet.analysis.predicates import instant
from hamlet.errors import EvaluationError
from hamlet.results import group_identity

_SAFE_DIGITS = 4000  # Python refuses str(int) past 4300 digits unless the process lifts the limit


def int_text(value: int) -> str:
    """Every digit of ``value``, however long: counts reach 2^n and Python's ``str`` stops at 4300 digits
    (a process-wide setting that a library should not change), so long numbers are cut in halves."""
    if value.bit_length() < _SAFE_DIGITS * 3:  # 3 bits per digit is a safe underestimate of 3.32
        return str(value)
    if value < 0:
        return "-" + int_text(-value)
    half = value.bit_length() * 3 // 20  # about half of the digits
    high, low = divmod(value, 10**half)
    return int_text(high) + int_text(low).zfill(half)


_I128 = 1 << 127


def state_int_text(value: int) -> str:
    """An integer as a partial state writes it (the kernel's ``Num::to_text`` too): decimal within 128 bits,
    beyond them hexadecimal (``0x…``, ``-0x…``). Hexadecimal is linear to write and to read back, where the
    decimal digits of a count of thousands of them are quadratic both ways; the decimal digits a user reads
    are written once, for the final value (``int_text``)."""
    return str(value) if -_I128 <= value < _I128 else hex(value)


def int_from_text(text: str) -> int:
    """The inverse of ``int_text`` and ``state_int_text``: any number of digits, without lifting the
    interpreter's limit (which does not apply to hexadecimal)."""
    if "x" in text[:3]:
        return int(text, 16)
    if len(text) < _SAFE_DIGITS:
        return int(text)
    if text.startswith("-"):
        return -int_from_text(text[1:])
    half = len(text) // 2
    return int_from_text(text[:-half]) * 10**half + int_from_text(text[-half:])


def _extreme_key(value: Any) -> tuple[Any, int]:
    """What MIN and MAX order values by: the value, then among equal values its form, -0.0 before an int
    before any other float. Equal values of different forms (1 and 1.0, 0.0 and -0.0) meet when partitions,
    engine calls or Spark tasks are merged, in an order nobody fixes: the form must not depend on it."""
    if isinstance(value, float):
        return value, 0 if value == 0 and math.copysign(1.0, value) < 0 else 2
    return instant(value), 1  # (a zoned datetime by its instant, as ``compare`` orders it)


def _ordered(a: Any, b: Any) -> bool:
    """``a`` before ``b`` (or equal) in MIN's order. Numbers order with numbers, texts with texts, bools with
    bools; two kinds are an error wherever they meet (one event after another, or two partitions of a group
    merged). Python would order a bool with a number (True is 1): MIN over {True, 3} would be True."""
    if isinstance(a, bool) == isinstance(b, bool):
        try:
            return _extreme_key(a) <= _extreme_key(b)
        except TypeError:
            pass
    raise EvaluationError(
        f"MIN/MAX: {a!r} and {b!r} are not comparable (numbers, texts and bools do not mix)"
    )


@dataclass(frozen=True)
class Unorderable:
    """A MIN or MAX that met a NaN or two kinds of values in one partition's trends: no extreme, and an error
    (``error``: time and message of the earliest such event) where a reported row reads it
    (``aggregates.VectorAlgebra.states``), not where the engine first met the value."""

    error: tuple[Any, str]


def _unorderable(a: Any, b: Any) -> Unorderable | None:
    if isinstance(a, Unorderable) or isinstance(b, Unorderable):
        found = [v for v in (a, b) if isinstance(v, Unorderable)]
        return min(found, key=lambda u: u.error)
    return None


def least(a: Any, b: Any) -> Any:
    """MIN of two values, None for none (``_extreme_key``: the same whatever order they come in); two kinds
    or an ``Unorderable`` give an ``Unorderable``."""
    if a is None or b is None:
        return b if a is None else a
    if (found := _unorderable(a, b)) is not None:
        return found
    try:
        return a if _ordered(a, b) else b
    except EvaluationError as error:
        return Unorderable((math.inf, str(error)))


def greatest(a: Any, b: Any) -> Any:
    """MAX of two values, None for none (``_extreme_key``)."""
    if a is None or b is None:
        return b if a is None else a
    if (found := _unorderable(a, b)) is not None:
        return found
    try:
        return a if _ordered(b, a) else b
    except EvaluationError as error:
        return Unorderable((math.inf, str(error)))


def nearest_float(exact: Fraction) -> float:
    """The double nearest to ``exact``, by IEEE rounding: past the largest double that is an infinity (Python's
    ``float`` raises instead, and a SUM of a few values near 1e308 gets there)."""
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


@dataclass(frozen=True)
class AggregateState:
    """One RETURN aggregate, not yet finalised.

    ``count``: COUNT's value; for SUM and AVG the number of non-null occurrences. ``total``: the exact sum
    (SUM, AVG). ``floats``: occurrences with a float value (a SUM is reported as a float when > 0).
    ``extreme``: MIN's or MAX's value so far (None: no non-null value yet). ``pairs``: for COUNT(*) of
    ``P AND Q`` (function ``PAIRS``), the numbers of trends P only, Q only and both match (C_i, C_j, C_ij of
    dissertation §12): they add across partitions, and the number of pairs is computed from them at the end.
    """

    function: str
    count: int = 0
    total: Fraction = Fraction(0)
    floats: int = 0
    extreme: Any = None
    pairs: tuple[int, int, int] = (0, 0, 0)

    def merge(self, other: AggregateState) -> AggregateState:
        if self.function != other.function:
            raise ValueError(f"cannot merge {self.function} with {other.function}")
        if self.function in ("MIN", "MAX"):  # (least and greatest keep the one that is not None)
            pick = least if self.function == "MIN" else greatest
            return replace(self, extreme=pick(self.extreme, other.extreme))
        if self.function == "PAIRS":
            return replace(self, pairs=(self.pairs[0] + other.pairs[0], self.pairs[1] + other.pairs[1],
                                        self.pairs[2] + other.pairs[2]))  # fmt: skip
        return replace(self, count=self.count + other.count, total=self.total + other.total,
                       floats=self.floats + other.floats)  # fmt: skip

    def value(self) -> int | float | str | None:
        if self.function == "COUNT":
            return self.count
        if self.function == "PAIRS":
            # §12: each trend of P only pairs with each of Q only and of both; each of both with each of Q
            # only and with each other one of both.
            p_only, q_only, both = self.pairs
            return p_only * q_only + p_only * both + q_only * both + both * (both - 1) // 2
        if self.function in ("MIN", "MAX"):
            if isinstance(self.extreme, Unorderable):
                raise EvaluationError(self.extreme.error[1])
            return self.extreme
        if not self.count:
            return None
        if self.function == "AVG":
            return nearest_float(self.total / self.count)
        return nearest_float(self.total) if self.floats else int(self.total)

    def exact_text(self) -> str | None:
        """The value as text with every digit: integers in full (counts exceed any fixed-width type), floats
        as their shortest round-trip repr, strings as they are."""
        value = self.value()
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return str(value)
        return int_text(value) if isinstance(value, int) else repr(value)

    def to_text(self) -> str:
        """The state as one line of JSON with every digit (``from_text`` reads it back equal): the Spark job
        carries partial states between its stages as text, since counts exceed every fixed-width type.
        Integers are written as strings (``state_int_text``), so no JSON reader meets a number it cannot hold."""
        if isinstance(self.extreme, Unorderable):
            raise EvaluationError(self.extreme.error[1])
        total = self.total
        fields = [self.function, state_int_text(self.count), state_int_text(total.numerator),
                  state_int_text(total.denominator), state_int_text(self.floats),
                  *_extreme_fields(self.extreme)]  # fmt: skip
        if self.function == "PAIRS":
            fields.append([state_int_text(n) for n in self.pairs])
        return json.dumps(fields, ensure_ascii=False)

    @classmethod
    def from_text(cls, text: str) -> AggregateState:
        function, count, numerator, denominator, floats, *rest = json.loads(text)
        total = Fraction(int_from_text(numerator), int_from_text(denominator))
        if function == "PAIRS":
            extreme, pairs = None, tuple(int_from_text(n) for n in rest[1])
        else:
            extreme, pairs = _extreme_of(rest), (0, 0, 0)
        return cls(function, int_from_text(count), total, _floats(floats), extreme, pairs)  # type: ignore[arg-type]


def _extreme_fields(value: Any) -> list[Any]:
    """A MIN or MAX state's extreme as its last fields: ``[value]`` where JSON holds it, else ``[text, kind]``
    for the orderable values it has no form for (a date, timestamp, time of day or duration column's, bytes),
    exact to the nanosecond where pandas holds one (``pd.Timestamp``, ``pd.Timedelta``: Arrow's ``ns`` units)."""
    if isinstance(value, dt.datetime):
        # (pandas writes and reads its Timestamp's nanoseconds; the offset is kept, a zone's name not)
        return [value.isoformat(), "timestamp_ns" if hasattr(value, "nanosecond") else "datetime"]
    if isinstance(value, dt.timedelta):
        if hasattr(value, "nanoseconds"):  # (pd.Timedelta)
            return [str(value.value), "timedelta_ns"]  # type: ignore[attr-defined]
        return [[value.days, value.seconds, value.microseconds], "timedelta"]
    if isinstance(value, dt.date):
        return [value.isoformat(), "date"]
    if isinstance(value, dt.time):
        return [value.isoformat(), "time"]
    if isinstance(value, bytes):
        return [value.hex(), "bytes"]
    return [value]


def _timestamp_ns(text: str) -> Any:
    import pandas as pd

    return pd.Timestamp(text)


def _timedelta_ns(text: str) -> Any:
    import pandas as pd

    return pd.Timedelta(int(text))


_EXTREME_KINDS: dict[str, Callable[[Any], Any]] = {
    "datetime": dt.datetime.fromisoformat,
    "timestamp_ns": _timestamp_ns,
    "timedelta": lambda parts: dt.timedelta(*parts),
    "timedelta_ns": _timedelta_ns,
    "date": dt.date.fromisoformat,
    "time": dt.time.fromisoformat,
    "bytes": bytes.fromhex,
}


def _extreme_of(fields: list[Any]) -> Any:
    """The inverse of ``_extreme_fields``."""
    return _EXTREME_KINDS[fields[1]](fields[0]) if len(fields) > 1 else fields[0]


def _floats(field: int | str) -> int:
    """A state's count of float values: text (as ``to_text`` writes it: as a JSON number it could exceed what
    JSON readers take, 4,300 digits in Python), or a number (as earlier versions wrote it)."""
    return int_from_text(field) if isinstance(field, str) else field


def merged_text_states(texts: Sequence[str]) -> AggregateState:
    """The merge of the states ``texts`` hold (``AggregateState.to_text``, one function), read and added in
    one pass: what the Spark job's second stage does for each window and group (~16 partial rows each).
    Sums stay ints while every denominator is 1, so no Fraction is built for them."""
    if len(texts) == 1:
        return AggregateState.from_text(texts[0])
    first = json.loads(texts[0])
    function = first[0]
    if function in ("MIN", "MAX"):
        pick = least if function == "MIN" else greatest
        extreme = None
        for text in texts:
            extreme = pick(extreme, _extreme_of(json.loads(text)[5:]))
        return AggregateState(function, extreme=extreme)
    if function == "PAIRS":
        pairs = [0, 0, 0]
        for text in texts:
            for i, n in enumerate(json.loads(text)[6]):
                pairs[i] += int_from_text(n)
        return AggregateState(function, pairs=(pairs[0], pairs[1], pairs[2]))
    count, whole, fraction, floats = 0, 0, Fraction(0), 0
    for fields in [first, *map(json.loads, texts[1:])]:
        if fields[0] != function:
            raise ValueError(f"cannot merge {function} with {fields[0]}")
        count += int_from_text(fields[1])
        if fields[3] == "1":
            whole += int_from_text(fields[2])
        else:
            fraction += Fraction(int_from_text(fields[2]), int_from_text(fields[3]))
        floats += _floats(fields[4])
    return AggregateState(function, count, fraction + whole, floats)


@dataclass(frozen=True)
class PartialRow:
    query: str
    window_start: Any
    window_end: Any
    group: dict[str, Any]
    aggregate: str  # as written in RETURN
    state: AggregateState

    def key(self) -> tuple:
        """What rows of one result share: partials with it merge (``hamlet.api.finalize``)."""
        return (self.query, self.window_start, self.window_end, group_identity(self.group), self.aggregate)
