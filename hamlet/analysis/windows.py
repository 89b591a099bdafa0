"""Windows ``[k*SLIDE, k*SLIDE + WITHIN)`` for every integer k, aligned to time 0, and panes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from hamlet.events import MICROS, Number, Time


@dataclass(frozen=True)
class Window:
    within: Fraction
    slide: Fraction
    # (WITHIN, SLIDE) in whole microseconds, the compiled engine's times; None when they are not whole
    micros: tuple[int, int] | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Whole-second windows (the common case) use int arithmetic: Fractions are slow on the hot path.
        integral = self.within.denominator == 1 and self.slide.denominator == 1
        object.__setattr__(self, "_ints", (int(self.within), int(self.slide)) if integral else None)
        object.__setattr__(self, "_hash", hash((self.within, self.slide)))
        within, slide = self.within * MICROS, self.slide * MICROS
        whole = within.denominator == 1 and slide.denominator == 1
        object.__setattr__(self, "micros", (int(within), int(slide)) if whole else None)

    def __hash__(self) -> int:
        # Windows key the per-partition window classes: hashing two Fractions on every lookup is slow.
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def indexes(self, time: Time) -> range:
        """The k of every window that contains ``time`` (WITHIN/SLIDE of them, rounded up, or none)."""
        ints = self._ints  # type: ignore[attr-defined]
        if ints is not None and type(time) is int:
            w, s = ints
            return range((time - w) // s + 1, time // s + 1)
        t = Fraction(time)
        return range(math.floor((t - self.within) / self.slide) + 1, math.floor(t / self.slide) + 1)

    def last_ending_by(self, time: Time) -> int:
        """The last window index whose end is at or before ``time``."""
        ints = self._ints  # type: ignore[attr-defined]
        if ints is not None and type(time) is int:
            return (time - ints[0]) // ints[1]
        return math.floor((Fraction(time) - self.within) / self.slide)

    def per_event(self) -> int:
        """How many windows an event falls into: WITHIN/SLIDE, rounded up."""
        return math.ceil(self.within / self.slide)

    def start(self, k: int) -> Fraction | int:
        ints = self._ints  # type: ignore[attr-defined]
        return k * ints[1] if ints is not None else k * self.slide

    def end(self, k: int) -> Fraction | int:
        ints = self._ints  # type: ignore[attr-defined]
        return k * ints[1] + ints[0] if ints is not None else k * self.slide + self.within

    def describe(self) -> str:
        if self.slide == self.within:
            return f"WITHIN {seconds_text(self.within)} (tumbling)"
        return f"WITHIN {seconds_text(self.within)} SLIDE {seconds_text(self.slide)}"


def as_number(value: Fraction | Number) -> Number:
    """A window bound (or an event time) as users see it: an int when whole, else a float."""
    if isinstance(value, (int, float)):
        return value
    return int(value) if value.denominator == 1 else float(value)


def before(time: Time, span: Fraction | Number) -> Fraction | Number:
    """``time - span`` exactly: an event at or before it shares no window of length ``span`` with one at
    ``time``. A float time minus a Fraction would be taken in floats and rounded (1767600000.55 - 0.3 is
    1767600000.25 in floats, but the double written 1767600000.55 lies below .55: the events are less than
    0.3 s apart); comparisons of floats with Fractions are exact."""
    return Fraction(time) - span if type(time) is float else time - span


def seconds_text(value: Fraction) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if value >= size and (value / size).denominator == 1:
            return f"{value / size} {unit}"
    return f"{as_number(value)} s"


def pane_size(durations: list[Fraction]) -> Fraction:
    """The gcd of all window lengths and slides (HAMLET §3.1): the largest pane every window is made of."""
    result = Fraction(0)
    for d in durations:
        numerator = math.gcd(result.numerator * d.denominator, d.numerator * result.denominator)
        result = Fraction(numerator, result.denominator * d.denominator)
    return result
