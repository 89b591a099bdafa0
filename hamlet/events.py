"""Events: a type, a time in seconds, and attributes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Number = int | float

# Seconds from 0001-01-01 to 9999-12-31T23:59:59 UTC: the times a datetime can show. Beyond them windows are
# not times any more (and ISO-8601 output fails), so such an event_time is an error that names its input.
TIME_RANGE = (-62_135_596_800, 253_402_300_799)


@dataclass(frozen=True, slots=True)
class Event:
    """One event. ``time`` is seconds since the epoch (or any origin the user picks), int or float."""

    type: str
    time: Number
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def get(self, attribute: str) -> Any:
        return self.attributes.get(attribute)
