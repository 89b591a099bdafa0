"""Result rows: one per query, window, group and aggregate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hamlet.analysis.predicates import is_number, kinded
from hamlet.events import Number


@dataclass(frozen=True)
class ResultRow:
    query: str
    window_start: Number
    window_end: Number
    group: dict[str, Any]  # GROUP-BY attribute → value ({} without GROUP-BY)
    aggregate: str  # as written in RETURN, e.g. "SUM(T.duration)"
    value: int | float | str | None  # counts and integer sums are exact ints of any size

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "window_start": self.window_start,
            "window_end": self.window_end,
            "group": self.group,
            "aggregate": self.aggregate,
            "value": self.value,
        }


def group_key(group: dict[str, Any]) -> tuple[tuple[int, Any], ...]:
    """A total order on groups whatever their value types: nulls, then numbers, then bools (False, True: not
    among the numbers as 0 and 1, which they are not equal to), then the others by their text."""
    return tuple(
        (0, 0) if v is None else (1, v) if is_number(v) else (2, v) if isinstance(v, bool) else (3, str(v))
        for v in group.values()
    )


def group_identity(group: dict[str, Any]) -> tuple:
    """What makes two groups one: their attributes and values equal by the language's rule
    (``predicates.kinded``: {x: True} and {x: 1} are two groups, {x: 1} and {x: 1.0} one)."""
    return tuple(group), kinded(tuple(group.values()))
