"""Events: a type, a time in seconds, and attributes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

Number = int | float
# Microseconds per second: a Spark timestamp's unit, and the compiled engine's unit of time.
MICROS = 1_000_000
# A timestamp with a fraction of a second is the exact Fraction of its microseconds: as a float it would
# be the double nearest it (10:00:00.1 just before 10:00:00.1), and fall into the window that ends there.
Time = int | float | Fraction

# Seconds from 0001-01-01 to 9999-12-31T23:59:59 UTC: the times a datetime can show. Beyond them windows are
# not times any more (and ISO-8601 output fails), so such an event_time is an error that names its input.
TIME_RANGE = (-62_135_596_800, 253_402_300_799)

# What surrounds an event type and is no part of it, on every input path (``hamlet.api.event_type`` for
# CSV cells, DataFrames, mappings and Events; ``columnar.checked`` for Arrow and Parquet): the whitespace
# Python's ``str.strip()`` removes (every character whose ``isspace()`` is true), as the loader of the events
# table (``jobs/load_events.py``) strips it before it writes a type. " A" is the type A. (Inside a type, a NUL
# byte is an error on every path, as the loader rejects it.)
TYPE_SPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def decimal_number(value: Decimal) -> int | float:
    """A ``Decimal`` as the number of the language it holds. Python's Decimal is no number of the language
    (``predicates.is_number``), but it is how pandas, delta-rs and Arrow's ``to_pylist`` give a value of
    Spark's ``decimal(p,s)``, which is one; the events path reads it so (``hamlet.api.to_events``), as the
    table path reads a decimal column (``columnar._decimals_as_numbers``): whole as written (no places after
    the point, as a ``decimal(p,0)`` value) an exact int, else the double nearest it. Decimal("1.50") is 1.5,
    Decimal(1) is 1, and both are one group with 1 and 1.0 (a table's ``decimal(p,0)`` column too, of any
    width: ``columnar._whole_numbers``). A decimal has no
    negative zero (Arrow's and Spark's hold none): Decimal("-0.00") is 0.0. NaN stays NaN, a null where it
    partitions the stream, as a float NaN is."""
    if value.is_nan():  # (float() refuses a signalling NaN)
        return math.nan
    exponent = value.as_tuple().exponent  # (a letter for NaN and the infinities)
    if isinstance(exponent, int) and exponent >= 0:
        return int(value)
    return float(value) + 0.0  # (-0.0 + 0.0 is 0.0)


@dataclass(frozen=True, slots=True)
class Event:
    """One event. ``time`` is seconds since the epoch (or any origin the user picks): an int, a float, or
    the exact Fraction of a timestamp's microseconds."""

    type: str
    time: Time
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def get(self, attribute: str) -> Any:
        return self.attributes.get(attribute)
