"""Windows restricted to those that end in a range (lo, hi]: the Spark job emits only those, so the engine
need not compute the others (the read-ahead before a run's start holds events of windows that end before
it). A window's aggregate depends only on the events inside it, so dropping other windows changes nothing
for the kept ones."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from hamlet.analysis.windows import Window
from hamlet.errors import HamletError
from hamlet.events import Number, Time

WindowEnds = tuple[Number, Number]  # (lo, hi]: keep windows whose end e satisfies lo < e <= hi


@dataclass(frozen=True)
class ClippedWindow(Window):
    """A ``Window`` whose ``indexes`` return only the k in [first, last] (the kept windows)."""

    first: int = 0
    last: int = -1

    __hash__ = Window.__hash__  # (a dataclass would make its own, over every field)

    def indexes(self, time: Time) -> range:
        ints = self._ints  # type: ignore[attr-defined]
        if ints is not None and type(time) is int:  # the hot path, inlined: one call per event and query
            w, s = ints
            return range(max((time - w) // s + 1, self.first), min(time // s + 1, self.last + 1))
        every = super().indexes(time)
        return range(max(every.start, self.first), min(every.stop, self.last + 1))


def checked_window_ends(value: object) -> WindowEnds:
    """``value`` as (lo, hi], or a ``HamletError`` that says what it is instead: two finite numbers of
    seconds (not bools, NaN or infinities, which no window end can be compared with exactly)."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_finite(v) for v in value):
        return value[0], value[1]
    raise HamletError(f"window_ends must be a pair (lo, hi) of finite numbers of seconds, not {value!r}")


def _finite(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def clip_window(window: Window, lo: Number, hi: Number) -> ClippedWindow:
    """The windows k with lo < end(k) = k·SLIDE + WITHIN <= hi, exactly (Fractions: floats are exact there)."""
    low, high = Fraction(lo), Fraction(hi)
    first = math.floor((low - window.within) / window.slide) + 1
    last = math.floor((high - window.within) / window.slide)
    if isinstance(window, ClippedWindow):
        first, last = max(first, window.first), min(last, window.last)
    return ClippedWindow(window.within, window.slide, first, last)
