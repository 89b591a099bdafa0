"""Events: a type, a time in seconds, and attributes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Number = int | float


@dataclass(frozen=True, slots=True)
class Event:
    """One event. ``time`` is seconds since the epoch (or any origin the user picks), int or float."""

    type: str
    time: Number
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def get(self, attribute: str) -> Any:
        return self.attributes.get(attribute)
