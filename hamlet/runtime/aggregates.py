"""The aggregate algebra propagated along trend graphs (GRETA Theorem 9.1).

Every event of a graph carries, per window, the aggregate of the trends that end at it: the number of
those trends (COUNT(*)) and, for the query's RETURN clause, COUNT(E), SUM(E.a), MIN(E.a), MAX(E.a).
When event e arrives, the aggregates of its predecessor events are combined (``add``) and then extended by
e itself (``extend``): e starts one new trend if it is of the start type, and e's attribute values enter
every trend that now ends at e. Counts and sums add; MIN and MAX take the extreme. AVG is SUM / COUNT and is
derived only when results are read.

Exactness: counts are Python ints (they reach 2^n). SUM over an attribute that holds floats is kept as an
integer number of 2^-1074 (every double is a whole multiple of it), so sums are exact whatever the order of
additions and every strategy reports the same double.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from itertools import pairwise
from math import prod
from typing import Any

from hamlet.analysis.predicates import is_number
from hamlet.analysis.query import AggregateSpec, AnalyzedQuery
from hamlet.errors import EvaluationError
from hamlet.events import Event
from hamlet.partials import AggregateState, Unorderable, greatest, least

FLOAT_SCALE_BITS = 1074  # 2^-1074 is the smallest positive double: every double is a multiple of it

Field = tuple[str, str | None, str | None]  # (kind, event type, attribute) of a VectorAlgebra slot
Projection = Callable[[Any], Any]


class CountAlgebra:
    """COUNT(*) only: the aggregate is the trend count itself, a plain int."""

    zero: Any = 0
    add = staticmethod(operator.add)
    sub = staticmethod(operator.sub)

    @staticmethod
    def extend(acc: int, event: Event, start: bool) -> int | None:
        count = acc + 1 if start else acc
        return count or None

    @staticmethod
    def count(agg: int) -> int:
        return agg

    @staticmethod
    def started(acc: int) -> int:
        """The aggregate with one more trend starting here (a START event's own trend)."""
        return acc + 1

    @staticmethod
    def burst_vector(groups: Sequence[Sequence[Event]], kleene: bool) -> None:
        return None

    @staticmethod
    def burst_total(x: int, multiplier: int, vector: None) -> int:
        return multiplier * x

    def states(self, agg: int, aggregates: Sequence[AggregateSpec]) -> list[AggregateState]:
        return [AggregateState("COUNT", count=agg) for _ in aggregates]


class VectorAlgebra:
    """COUNT(*) plus per-type fields, as a tuple: slot 0 is the trend count.

    Field kinds: ``count`` (E events in the trends), ``sum`` (of E.a, exact), ``nonnull`` (E occurrences
    with a non-null a: the divisor of AVG and what makes SUM null), ``floats`` (occurrences with a float a:
    the SUM is reported as a float when there are any), ``min`` and ``max``.
    """

    def __init__(self, fields: Sequence[Field], scaled: set[tuple[str | None, str | None]]) -> None:
        """``fields``: ("trends", None, None) first; ``scaled``: the (type, attribute) of the sums kept in
        units of 2^-1074 (their attribute holds floats)."""
        self.fields = list(fields)
        self.index = {f: i for i, f in enumerate(fields)}
        self.scaled = scaled
        self.zero = tuple(None if kind in ("min", "max") else 0 for kind, _, _ in fields)
        ops = [
            operator.add if kind not in ("min", "max") else (least if kind == "min" else greatest)
            for kind, _, _ in fields
        ]
        linear = all(op is operator.add for op in ops)
        self.add: Callable[[tuple, tuple], tuple]
        # Linear aggregates also subtract (WindowSums adds a run of windows at its two ends); MIN/MAX don't.
        self.sub: Callable[[tuple, tuple], tuple] | None
        if linear:
            self.add = lambda a, b: tuple(map(operator.add, a, b))
            self.sub = lambda a, b: tuple(map(operator.sub, a, b))
        else:
            self.add = lambda a, b: tuple(map(operator.call, ops, a, b))  # (op(a, b) per field, in C)
            self.sub = None
        # Per event type, the fields its events update: (index, kind, attribute, scaled).
        self.updates: dict[str, list[tuple[int, str, str | None, bool]]] = {}
        for i, (kind, event_type, attribute) in enumerate(fields):
            if event_type is not None:
                self.updates.setdefault(event_type, []).append(
                    (i, kind, attribute, (event_type, attribute) in self.scaled)
                )

    def extend(self, acc: tuple, event: Event, start: bool) -> tuple | None:
        count = acc[0] + 1 if start else acc[0]
        if not count:
            return None
        updates = self.updates.get(event.type)
        if not updates:
            return (count,) + acc[1:]
        out = list(acc)
        out[0] = count
        for i, kind, attribute, scaled in updates:
            if kind == "count":
                out[i] += count
                continue
            value = event.attributes.get(attribute)  # type: ignore[arg-type]
            if value is None:
                continue
            if kind == "sum":
                out[i] += _summand(value, scaled, event, attribute) * count
            elif kind == "nonnull":
                out[i] += count
            elif kind == "floats":
                if isinstance(value, float):
                    out[i] += count
            elif kind == "min":
                out[i] = _extreme(least, out[i], value, event, attribute)
            else:
                out[i] = _extreme(greatest, out[i], value, event, attribute)
        return tuple(out)

    @classmethod
    def of(cls, query: AnalyzedQuery, events: Iterable[Event] | FloatColumns) -> VectorAlgebra:
        """The fields of the query's RETURN clause; a sum is scaled when its attribute holds floats."""
        # (each field once, in order: a dict, since a RETURN may hold thousands of aggregates)
        fields = list(
            dict.fromkeys([("trends", None, None), *(f for spec in query.aggregates for f in _fields(spec))])
        )
        floats = events if isinstance(events, FloatColumns) else FloatColumns(events)
        return cls(fields, {(f[1], f[2]) for f in fields if f[0] == "sum" and (f[1], f[2]) in floats})

    @staticmethod
    def count(agg: tuple) -> int:
        return agg[0]

    @staticmethod
    def started(acc: tuple) -> tuple:
        return (acc[0] + 1,) + acc[1:]

    # A burst of events of one type, applied at once (HAMLET's shared graphlets; see runtime/shared.py).
    # Each event maps its input I to I + I.count·d, d holding what one trend gains from the event (1 for
    # COUNT(E), its value for SUM, ...). With X the graphlet-level snapshot, m_g the events of timestamp
    # group g and P = Π_g (1 + m_g), a Kleene burst adds (P − 1)·X + X.count·V with
    # V = Σ_g D_g·P/(1 + m_g), D_g the sum of d over group g; a burst without E → E adds m·X + X.count·V,
    # V = Σ d. MIN/MAX: every event of the burst ends some trend exactly when X.count > 0, so the burst's
    # extreme is the extreme of X and of the burst's own values (the shared local extreme).

    def burst_vector(self, groups: Sequence[Sequence[Event]], kleene: bool) -> list[Any]:
        vector: list[Any] = [None if kind in ("min", "max") else 0 for kind, _, _ in self.fields]
        product = prod(1 + len(g) for g in groups) if kleene else 1
        for group in groups:
            weight = product // (1 + len(group)) if kleene else 1
            for event in group:
                for i, kind, attribute, scaled in self.updates.get(event.type, ()):
                    value = None if kind == "count" else event.attributes.get(attribute)  # type: ignore[arg-type]
                    if kind == "count":
                        vector[i] += weight
                    elif value is None:
                        continue
                    elif kind == "sum":
                        vector[i] += _summand(value, scaled, event, attribute) * weight
                    elif kind == "nonnull":
                        vector[i] += weight
                    elif kind == "floats":
                        vector[i] += weight if isinstance(value, float) else 0
                    else:
                        vector[i] = _extreme(
                            least if kind == "min" else greatest, vector[i], value, event, attribute
                        )
        return vector

    def burst_total(self, x: tuple, multiplier: int, vector: list[Any]) -> tuple:
        count = x[0]
        out = []
        for (kind, _, _), xi, vi in zip(self.fields, x, vector):
            if kind == "min":
                out.append(least(xi, vi))
            elif kind == "max":
                out.append(greatest(xi, vi))
            else:
                out.append(multiplier * xi + count * vi)
        return tuple(out)

    def states(self, agg: tuple, aggregates: Sequence[AggregateSpec]) -> list[AggregateState]:
        out = []
        for spec in aggregates:
            if spec.function == "COUNT":
                count = (
                    agg[0] if spec.event_type is None else agg[self.index[("count", spec.event_type, None)]]
                )
                out.append(AggregateState("COUNT", count=count))
            elif spec.function in ("MIN", "MAX"):
                extreme = agg[self.index[(spec.function.lower(), spec.event_type, spec.attribute)]]
                if isinstance(extreme, Unorderable):
                    raise EvaluationError(extreme.error[1])
                out.append(AggregateState(spec.function, extreme=extreme))
            else:
                key = (spec.event_type, spec.attribute)
                total = agg[self.index[("sum", *key)]]
                if isinstance(total, Unreadable):
                    if total.bad:
                        raise EvaluationError(total.error[1])
                    total = total.total
                exact = Fraction(total, 1 << FLOAT_SCALE_BITS) if key in self.scaled else Fraction(total)
                out.append(AggregateState(spec.function, count=agg[self.index[("nonnull", *key)]], total=exact,
                                          floats=agg[self.index[("floats", *key)]]))  # fmt: skip
        return out


def _fields(spec: AggregateSpec) -> list[Field]:
    if spec.function == "COUNT":
        return [] if spec.event_type is None else [("count", spec.event_type, None)]
    if spec.function in ("MIN", "MAX"):
        return [(spec.function.lower(), spec.event_type, spec.attribute)]
    key = (spec.event_type, spec.attribute)
    return [("sum", *key), ("nonnull", *key), ("floats", *key)]


class Unreadable:
    """A SUM or AVG field that met occurrences it cannot add (README: a text, a bool, a NaN, an infinity):
    ``bad`` of them, weighted by the trends through them like the sum itself (so windows add and subtract it
    as they do sums), beside the exact ``total`` of the others; ``error`` (time, message) of the earliest
    such event. The error is raised only where a reported row reads the field (``VectorAlgebra.states``): a
    value in no trend of a window stops nothing, whichever path met it first (the oracle's rule)."""

    __slots__ = ("bad", "error", "total")

    def __init__(self, total: Any, bad: int, error: tuple[Any, str]) -> None:
        self.total, self.bad, self.error = total, bad, error

    def __add__(self, other: Any) -> Unreadable:
        if isinstance(other, Unreadable):
            return Unreadable(self.total + other.total, self.bad + other.bad, min(self.error, other.error))
        return Unreadable(self.total + other, self.bad, self.error)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Unreadable:
        if isinstance(other, Unreadable):
            return Unreadable(self.total - other.total, self.bad - other.bad, min(self.error, other.error))
        return Unreadable(self.total - other, self.bad, self.error)

    def __rsub__(self, other: Any) -> Unreadable:
        return Unreadable(other - self.total, -self.bad, self.error)

    def __mul__(self, factor: int) -> Unreadable:
        return Unreadable(self.total * factor, self.bad * factor, self.error)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"Unreadable({self.total!r}, {self.bad!r}, {self.error[1]!r})"


def _summand(value: Any, scaled: bool, event: Event, attribute: str | None) -> Any:
    if not is_number(value):
        return Unreadable(0, 1, _error(event, "SUM/AVG", attribute, f"non-numeric value {value!r}"))
    if not scaled:
        return value  # an int: sums of ints stay exact ints
    if isinstance(value, float) and not math.isfinite(value):  # (an int has no infinity, however long)
        # An exact sum has no room for an infinity or a NaN (the events CSV refuses them for that reason).
        return Unreadable(0, 1, _error(event, "SUM/AVG", attribute, f"non-finite value {value!r}"))
    numerator, denominator = value.as_integer_ratio()
    return numerator * ((1 << FLOAT_SCALE_BITS) // denominator)


def _extreme(
    op: Callable[[Any, Any], Any], current: Any, value: Any, event: Event, attribute: str | None
) -> Any:
    """``op`` (least, greatest) of the two, or an ``Unorderable`` (raised where a reported row reads it)."""
    if isinstance(value, float) and math.isnan(value):
        # NaN compares false with everything, so which extreme survives would depend on the order of events.
        return op(current, Unorderable(_error(event, "MIN/MAX", attribute, "NaN")))
    found = op(current, value)
    if isinstance(found, Unorderable) and not isinstance(current, Unorderable):  # (two kinds: name the event)
        return Unorderable(_error(event, "MIN/MAX", attribute, f"{value!r}, not comparable with {current!r}"))
    return found


def _error(event: Event, functions: str, attribute: str | None, what: str) -> tuple[Any, str]:
    """(time, message) of an event an aggregate cannot compute with."""
    where = f"{functions} over {event.type}.{attribute}"
    return event.time, f"{where}: the {event.type} event at time {event.time} has {what}"


class LatestStartAlgebra:
    """For negative sub-patterns: the latest start time of the matches ending at an event (None: none).

    A negation only asks whether some match lies in an interval; with the latest start L of all matches
    completed before time t, "a match lies strictly between x and t" is exactly "x.time < L".
    """

    zero: Any = None

    @staticmethod
    def add(a: Any, b: Any) -> Any:
        return b if a is None else a if b is None else (max(a, b))

    @staticmethod
    def extend(acc: Any, event: Event, start: bool) -> Any:
        if start and (acc is None or event.time > acc):
            return event.time
        return acc

    @staticmethod
    def count(agg: Any) -> int:
        return 0 if agg is None else 1


Algebra = CountAlgebra | VectorAlgebra | LatestStartAlgebra


class WindowSums:
    """Final aggregates per (group, window k), summed over the stream partitions of one query.

    A partition's final is often the same for a run of consecutive windows (every window that holds all
    of a short partition's events; the graph hands out one object for them), and adding it to each window
    would cost O(windows) per partition. Consecutive windows that receive the same object form a run; a
    linear algebra adds a run once at its first window and subtracts it after its last (a difference array,
    prefix-summed at the end: exact, all ints), MIN/MAX add it to each window of the run. A window is
    reported when some partition gave it a final: then its trend count is positive.
    """

    def __init__(self, algebra: CountAlgebra | VectorAlgebra) -> None:
        self.algebra = algebra
        self.sub = algebra.sub
        self.diffs: dict[int, dict[int, Any]] = {}  # group (its number) → k → change of the sum at window k
        self.sums: dict[tuple[int, int], Any] = {}  # (group, k) → sum (MIN/MAX algebras)
        self.run: list[Any] | None = None  # [group, first k, last k, aggregate]

    def add(self, group: int, windows: int | range, agg: Any) -> None:
        """Add ``agg`` to window ``windows`` of ``group``, or to each window of the range ``windows``."""
        first, last = (windows, windows) if type(windows) is int else (windows[0], windows[-1])  # type: ignore[index]
        run = self.run
        if run is not None and agg is run[3] and first == run[2] + 1 and group == run[0]:
            run[2] = last
            return
        if run is not None:
            self._flush(run)
        self.run = [group, first, last, agg]

    def _flush(self, run: list[Any]) -> None:
        group, first, last, agg = run
        add = self.algebra.add
        if self.sub is not None:
            diff = self.diffs.setdefault(group, {})
            current = diff.get(first)
            diff[first] = agg if current is None else add(current, agg)
            after = diff.get(last + 1)
            diff[last + 1] = self.sub(self.algebra.zero if after is None else after, agg)
            return
        sums = self.sums
        for k in range(first, last + 1):
            current = sums.get((group, k))
            sums[(group, k)] = agg if current is None else add(current, agg)

    def merge(self, group: int, diffs: bool, entries: Iterable[tuple[int, Any]]) -> None:
        """Add what a runner summed itself (``partition.Summed``): changes of the sum at windows k of a
        linear algebra, which join this one's, or the sums of windows k."""
        if not diffs:
            for k, agg in entries:
                self.add(group, k, agg)
            return
        add = self.algebra.add
        diff = self.diffs.setdefault(group, {})
        for k, change in entries:
            current = diff.get(k)
            diff[k] = change if current is None else add(current, change)

    def items(self) -> Iterator[tuple[tuple[int, int], Any]]:
        """((group, k), sum) of every window that received a final."""
        if self.run is not None:
            self._flush(self.run)
            self.run = None
        yield from self.sums.items()
        add = self.algebra.add
        count: Callable[[Any], int] = self.algebra.count
        for group, diff in self.diffs.items():
            ks = sorted(diff)
            running = self.algebra.zero
            for k, following in pairwise(ks):
                running = add(running, diff[k])
                if count(running):
                    for window in range(k, following):
                        yield (group, window), running


class FloatColumns:
    """Which (event type, attribute) of a stream hold a float in some event: each looked up once, however
    many queries sum over it."""

    def __init__(self, events: Iterable[Event]) -> None:
        self.events = events if isinstance(events, Sequence) else list(events)
        self.known: dict[tuple[str | None, str | None], bool] = {}

    def __contains__(self, key: tuple[str | None, str | None]) -> bool:
        found = self.known.get(key)
        if found is None:
            event_type, attribute = key
            found = self.known[key] = any(
                e.type == event_type and isinstance(e.get(attribute or ""), float) for e in self.events
            )
        return found


class ConjunctionAlgebra:
    """COUNT(*) of ``P AND Q`` (dissertation §12). On a position template (automaton.py) a trend ends in one
    state, which tells whether P only, Q only or both match it (``StateTemplate.accepts``). The aggregate is
    (trends, P only, Q only, both) of the trends that end at an event; the last three are set by the event's
    own state (a trend's class is that of its last state), so ``extend`` recomputes them from the count and
    never reads its predecessors' classes. The final's classes are the conjunction formula's C_i, C_j, C_ij.
    """

    zero: Any = (0, 0, 0, 0)
    add = staticmethod(lambda a, b: tuple(map(operator.add, a, b)))
    sub = staticmethod(lambda a, b: tuple(map(operator.sub, a, b)))

    def __init__(self, accepts: dict[str, frozenset[int]]) -> None:
        # state → (P only, Q only, both) as 0/1 flags; states that end no trend are in no class
        self.classes = {state: (ops == {0}, ops == {1}, ops == {0, 1}) for state, ops in accepts.items()}

    def extend(self, acc: tuple, event: Event, start: bool) -> tuple | None:
        count = acc[0] + 1 if start else acc[0]
        if not count:
            return None
        p_only, q_only, both = self.classes.get(event.type, (False, False, False))
        return count, count * p_only, count * q_only, count * both

    @staticmethod
    def count(agg: tuple) -> int:
        return agg[0]

    @staticmethod
    def restricted(agg: tuple, operands: frozenset[int]) -> tuple | None:
        """``agg`` as trends of ``operands`` only (NEXT drops a trend of one operand for a longer one, a NOT
        last in one operand drops its trends): a trend of both stays in the class of what is left of it;
        None where nothing is."""
        _, p_only, q_only, both = agg
        p_only, q_only = p_only * (0 in operands), q_only * (1 in operands)
        if operands != {0, 1}:
            p_only, q_only, both = p_only + both * (0 in operands), q_only + both * (1 in operands), 0
        count = p_only + q_only + both
        return (count, p_only, q_only, both) if count else None

    def states(self, agg: tuple, aggregates: Sequence[AggregateSpec]) -> list[AggregateState]:
        return [AggregateState("PAIRS", pairs=(agg[1], agg[2], agg[3])) for _ in aggregates]


def algebra_for(query: AnalyzedQuery, events: Iterable[Event] | FloatColumns) -> CountAlgebra | VectorAlgebra:
    """``events``: the stream, or its ``FloatColumns`` (to share them among the queries of a set). On a
    position template (``query.states``) the graph's events carry a state as their type (``graph.placed``):
    each state updates the fields of its type."""
    if query.choice == "AND":
        assert query.states is not None
        return ConjunctionAlgebra(query.states.accepts)  # type: ignore[return-value]
    if all(spec.function == "COUNT" and spec.event_type is None for spec in query.aggregates):
        return CountAlgebra()
    algebra = VectorAlgebra.of(query, events)
    if query.states is not None:
        for state, event_type in query.states.state_type.items():
            if event_type in algebra.updates:
                algebra.updates[state] = algebra.updates[event_type]
    return algebra


def shared_algebra(
    algebras: Sequence[CountAlgebra | VectorAlgebra],
) -> tuple[CountAlgebra | VectorAlgebra, list[Projection | None]]:
    """One algebra for queries that share a graph, and per query the projection of its aggregates onto
    the query's own algebra (None: the same). Every field of a vector is updated from the trend count and
    its own values only, so the union of the queries' fields carries each query's aggregate unchanged."""
    first = algebras[0]
    if all(_same(a, first) for a in algebras):
        return first, [None] * len(algebras)
    fields: list[Field] = [("trends", None, None)]
    scaled: set[tuple[str | None, str | None]] = set()
    for a in algebras:
        if isinstance(a, VectorAlgebra):
            fields.extend(f for f in a.fields if f not in fields)
            scaled |= a.scaled
    union = VectorAlgebra(fields, scaled)
    return union, [_projection(union, a) for a in algebras]


def _same(a: CountAlgebra | VectorAlgebra, b: CountAlgebra | VectorAlgebra) -> bool:
    if isinstance(a, VectorAlgebra) and isinstance(b, VectorAlgebra):
        return a.fields == b.fields and a.scaled == b.scaled
    return type(a) is type(b)


def _projection(union: VectorAlgebra, algebra: CountAlgebra | VectorAlgebra) -> Projection | None:
    if isinstance(algebra, CountAlgebra):
        return operator.itemgetter(0)
    if algebra.fields == union.fields:
        return None
    slots = [union.index[f] for f in algebra.fields]
    pick = operator.itemgetter(*slots)
    return pick if len(slots) > 1 else lambda agg: (agg[slots[0]],)
