"""A brute-force, two-step oracle for trend aggregation: construct every trend, then aggregate.

This module is what the engine (``hamlet.runtime``) is checked against, so it is written to be obviously
correct rather than fast, and it shares nothing with the engine's algorithm (no graph, no propagation, no
running sums). It reads only the analysed query (predicates, window, aggregates) and the pattern *as written*
(``AnalyzedQuery.syntax.pattern``, with its ``NOT`` items in place). Exponential time: meant for small
inputs (about 14 events per partition and window).

The semantics, from /work/shared/SEMANTICS.md (and GRETA §2 and §5), step by step:

1. **Relevant events.** A query reads the event types of its pattern, positive and negated. Events of other
   types, events that fail a local predicate of their type, and events with a null (or missing, or NaN) value
   in a GROUP-BY or equivalence attribute are dropped.
2. **Partitions.** The remaining events are partitioned by their values of the GROUP-BY ∪ equivalence
   attributes, values of one kind that are equal (numbers, texts, bools: True and 1 are two partitions, 1
   and 1.0 one; a datetime with a zone is no naive one, and equal to another as an instant: 02:30 CEST and
   02:30 CET an hour later, which Python's == has equal, are two). A trend, and every match of a negative sub-pattern that may invalidate it, is made of the
   events of one partition.
3. **Windows.** Window k is ``[k*SLIDE, k*SLIDE + WITHIN)``. A trend belongs to window k when all its events
   lie in it. Every window holding at least one event of the partition is considered.
4. **Trends.** A trend of a positive pattern is a sequence of events with *strictly increasing* times
   (so events with equal times are never in the same trend) that the pattern matches: ``E`` one event of
   type E, ``SEQ(P1, ..., Pn)`` a match of each Pi one after another, ``P+`` one or more matches of P one
   after another. Any event may be skipped, so the oracle simply tries every subsequence of the window's
   events (:func:`_subsequences`) and keeps those the pattern matches (:func:`_ends`). A trend is a
   *sequence of events*: when a pattern can parse one sequence in several ways (``(A+)+``, ``SEQ(A+, A+)``),
   it is still one trend. A type may stand at several places of a pattern (``SEQ(A+, B, A)``): an event of
   it may match any of them. ``P{n,}``: n or more matches of P one after another (the dissertation's
   minimal trend length, §12). ``P1 OR P2 ...`` (disjunction, §12): a trend any operand matches — the set
   union of the operands' trends, so a trend several operands match is one trend.
5. **Edge predicates.** ``X.a op NEXT(Y).b`` must hold for every pair of consecutive events (x, y) of a trend
   with x of type X and y of type Y. Consecutive means adjacent in the trend, also across a ``NOT``
   (``SEQ(A, NOT C, B)``: a and b are adjacent). The same rule holds for the matches of negative
   sub-patterns (each type appears once in a pattern, so predicates never mix the two).
6. **Negation.** For ``SEQ(..., P1, NOT N, P2, ...)`` no match of N may lie strictly between the last event
   of the P1 part and the first event of the P2 part (start time > last(P1).time and end time <
   first(P2).time). A leading ``NOT N`` (first item of the top-level SEQ): no match of N in
   ``[window start, first event of the trend)``. A trailing ``NOT N``: no match of N in
   ``(last event of the trend, window end)``. A match of N is a trend of N by the same rules (its own
   nested NOTs, predicates and partition); a match that crosses a window bound does not count. Inside a
   Kleene plus, each iteration's P1 → P2 boundary is checked. NOTs side by side (``SEQ(A, NOT C, NOT D, B)``)
   each hold on the same interval. A pattern that parses a trend in several ways
   (a type at several places, ``P{n,}``) matches it when one parse passes every NOT.
7. **Event matching semantics** (dissertation §2.4), applied to the trends of step 6 in one window and
   partition. ``ANY`` (Definition 2.2): all of them. ``NEXT`` (Definition 2.3): a trend tr is kept unless
   another trend tr' has the same first and the same last event and a strict superset of tr's middle
   events. ``CONT`` (Definition 2.4): a NEXT trend is kept unless some event of the partition's sub-stream
   I that is not in the trend lies strictly between the trend's first and last times; I is every event of
   the partition (its GROUP-BY and equivalence values non-null), of any type, whatever the local predicates
   say (Example 2.7: the c5 the pattern does not mention breaks contiguity).
8. **Aggregates** per (query, window, group), where the group is the GROUP-BY values (several partitions
   that differ only in equivalence attributes pool their trends), each shown as the group's first event
   (in time order, at equal times in input order) among the events of the query's types, positive and
   negated, or of any type under CONT, holds it (1 or 1.0; the engine reads the types of the query's
   sharable set, which for a query alone are these). A row is reported only when at least one
   trend matched. ``COUNT(*)``: number of trends; ``COUNT(E)``: number of E events summed over all trends;
   ``SUM(E.a)``, ``MIN(E.a)``, ``MAX(E.a)``, ``AVG(E.a)``: over every occurrence of an E event in every
   trend (an event in 3 trends counts 3 times) whose ``a`` is not null; ``None`` when there is none. SUM is
   exact: an int when every contributing value is an int, else the float nearest to the exact sum; AVG is
   the float nearest to the exact sum divided by the number of contributing occurrences. An occurrence
   they cannot compute with is an ``EvaluationError`` (README, "Semantics worth knowing"): under SUM or
   AVG a value that is no number (a text, a bool), a NaN or an infinity; under MIN or MAX a NaN, or values
   of two kinds (numbers, texts, bools), which MIN and MAX of one kind order among themselves. ``P AND Q``
   (conjunction, §12) matches a *pair* of distinct trends, one a trend of P and the other a trend of Q (the
   trends of steps 1-7 of each operand, per window and group); its only aggregate, ``COUNT(*)``, is the
   number of such unordered pairs, counted here by listing them. Its row is reported when P or Q has a
   trend there (the count may be 0).
9. **Output** rows ``ResultRow(query, window_start, window_end, group, aggregate, value)``, one per aggregate
   in RETURN order, sorted by (query position in the workload, window start, group, aggregate position).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from hamlet.analysis.query import AggregateSpec, AnalyzedQuery
from hamlet.analysis.windows import as_number
from hamlet.analysis.workload import Workload
from hamlet.errors import EvaluationError
from hamlet.events import Event
from hamlet.language.nodes import (
    ChoicePattern,
    EventTypePattern,
    KleenePattern,
    MinimalLengthPattern,
    NegationPattern,
    OptionalPattern,
    Pattern,
    SeqPattern,
    StarPattern,
)
from hamlet.results import ResultRow, group_key

Trend = tuple[Event, ...]

__all__ = ["Group", "evaluate_bruteforce", "evaluate_query", "pooled_trends", "trends_in_window"]


@dataclass(frozen=True)
class Group:
    """A group of a query: its GROUP-BY values by kind (what makes two groups one: True is not 1, 1 is 1.0),
    and those values as its first event holds them (what a row shows)."""

    by_kind: tuple[tuple[str, Any], ...]
    values: tuple[Any, ...] = field(compare=False)


# ---- entry points --------------------------------------------------------------------------------------


def evaluate_bruteforce(workload: Workload, events: list[Event]) -> list[ResultRow]:
    """Every result row of every query of ``workload`` over ``events`` (in any order), sorted."""
    rows: list[tuple[tuple[Any, ...], ResultRow]] = []
    for query_index, query in enumerate(workload.queries):
        for row_key, row in evaluate_query(query, events):
            rows.append(((query_index,) + row_key, row))
    rows.sort(key=lambda item: item[0])
    return [row for _, row in rows]


def evaluate_query(query: AnalyzedQuery, events: Sequence[Event]) -> list[tuple[tuple[Any, ...], ResultRow]]:
    """The rows of one query, each with its sort key (window start, group key, aggregate position)."""
    assert query.syntax is not None
    pattern = query.syntax.pattern
    if isinstance(pattern, ChoicePattern) and pattern.op == "AND":
        return _conjunction_rows(query, pattern, events)
    pooled = pooled_trends(query, events)
    window = query.window

    # Steps 8 and 9: aggregate.
    out: list[tuple[tuple[Any, ...], ResultRow]] = []
    for (k, group_), trends in pooled.items():
        group = dict(zip(query.group_by, group_.values))
        for position, spec in enumerate(query.aggregates):
            row = ResultRow(
                query=query.name,
                window_start=as_number(window.start(k)),
                window_end=as_number(window.end(k)),
                group=group,
                aggregate=spec.text,
                value=aggregate(spec, trends),
            )
            out.append(((window.start(k), group_key(group), position), row))
    return out


def _conjunction_rows(
    query: AnalyzedQuery, pattern: ChoicePattern, events: Sequence[Event]
) -> list[tuple[tuple[Any, ...], ResultRow]]:
    """``P AND Q``: per window and group, the unordered pairs {t, u} of distinct trends with t a trend of P
    and u a trend of Q, listed one by one."""
    first, second = (pooled_trends(query, events, operand) for operand in pattern.operands)
    out: list[tuple[tuple[Any, ...], ResultRow]] = []
    for k, group_ in sorted(set(first) | set(second), key=repr):
        pairs = {
            frozenset({tuple(map(id, t)), tuple(map(id, u))})
            for t in first.get((k, group_), [])
            for u in second.get((k, group_), [])
            if tuple(map(id, t)) != tuple(map(id, u))
        }
        group = dict(zip(query.group_by, group_.values))
        row = ResultRow(query.name, as_number(query.window.start(k)), as_number(query.window.end(k)), group,
                        query.aggregates[0].text, len(pairs))  # fmt: skip
        out.append(((query.window.start(k), group_key(group), 0), row))
    return out


def pooled_trends(
    query: AnalyzedQuery, events: Sequence[Event], pattern: Pattern | None = None
) -> dict[tuple[int, Group], list[Trend]]:
    """Steps 1 to 7: the trends of the query per (window index, group), in no particular order
    (``pattern``: one operand of the query's AND instead of its whole pattern)."""
    assert query.syntax is not None, "the oracle reads the pattern as written (AnalyzedQuery.syntax)"
    pattern = query.syntax.pattern if pattern is None else pattern
    window = query.window

    # Steps 1 and 2: relevant events, partitioned (and every event of each partition: the sub-stream I of
    # step 7).
    types = _all_types(pattern)
    shown = _all_types(query.syntax.pattern)  # (of P AND Q, the types of both: each operand's groups alike)
    partitions: dict[tuple[Any, ...], list[Event]] = {}
    substreams: dict[tuple[Any, ...], list[Event]] = {}
    groups: dict[tuple[tuple[str, Any], ...], Group] = {}  # each group as its first event shows it
    grouped = [query.partition_attributes.index(a) for a in query.group_by]
    for event in sorted(events, key=lambda e: e.time):  # (stable: equal times in input order)
        values = tuple(event.attributes.get(a) for a in query.partition_attributes)
        if any(
            v is None or (isinstance(v, float) and math.isnan(v)) for v in values
        ):  # (NaN counts as a null)
            continue
        by_kind = tuple((_kind(v), _instant(v)) for v in values)
        substreams.setdefault(by_kind, []).append(event)
        if event.type in shown or query.semantics == "CONT":
            group = Group(tuple(by_kind[i] for i in grouped), tuple(values[i] for i in grouped))
            groups.setdefault(group.by_kind, group)
        if event.type not in types:
            continue
        if not all(p.test(event) for p in query.local_predicates if p.event_type == event.type):
            continue
        partitions.setdefault(by_kind, []).append(event)

    # Steps 3 to 6: the trends of every partition in every window, pooled by (window, group).
    pooled: dict[tuple[int, Group], list[Trend]] = {}
    for by_kind, partition in partitions.items():
        group = groups[tuple(by_kind[i] for i in grouped)]
        windows = sorted({k for e in partition for k in window.indexes(e.time)})
        for k in windows:
            start, end = window.start(k), window.end(k)
            in_window = [e for e in partition if start <= e.time < end]
            found = trends_in_window(query, pattern, in_window, substreams[by_kind])
            if found:
                pooled.setdefault((k, group), []).extend(found)

    return pooled


def trends_in_window(query: AnalyzedQuery, pattern: Pattern, events: Sequence[Event],
                     substream: Sequence[Event] = ()) -> list[Trend]:  # fmt: skip
    """Every trend of ``pattern`` made of ``events`` under the query's semantics: all the query's events
    of one partition in one window, in time order (negation looks for its matches among them too);
    ``substream``: every event of the partition, of any type (what breaks contiguity)."""
    context = _Context(query, tuple(events))
    positive = _positive_types(pattern)
    candidates = [e for e in events if e.type in positive]
    trends = [trend for trend in _subsequences(candidates, context) if _matches(pattern, trend, context)]
    if query.semantics == "ANY":
        return trends
    trends = _next_matches(trends)
    if query.semantics == "NEXT":
        return trends
    return [trend for trend in trends if _contiguous(trend, substream)]


def _next_matches(trends: list[Trend]) -> list[Trend]:
    """Definition 2.3: the trends no other trend with the same START and END events extends by middle
    events (a strict superset of its MID events)."""
    by_ends: dict[tuple[int, int], list[frozenset[int]]] = {}
    for trend in trends:
        by_ends.setdefault((id(trend[0]), id(trend[-1])), []).append(frozenset(map(id, trend[1:-1])))
    kept = []
    for trend in trends:
        mid = frozenset(map(id, trend[1:-1]))
        if not any(mid < other for other in by_ends[(id(trend[0]), id(trend[-1]))]):
            kept.append(trend)
    return kept


def _contiguous(trend: Trend, substream: Sequence[Event]) -> bool:
    """Definition 2.4 (for a NEXT trend): no event of the sub-stream outside the trend lies strictly between
    its first and last times."""
    first, last = trend[0].time, trend[-1].time
    inside = set(map(id, trend))
    return not any(first < e.time < last and id(e) not in inside for e in substream)


# ---- trends --------------------------------------------------------------------------------------------


@dataclass
class _Context:
    """What matching needs besides the candidate sequence: the query (edge predicates) and every event of
    the partition in the window (where negative sub-patterns look for matches)."""

    query: AnalyzedQuery
    events: tuple[Event, ...]
    negation_cache: dict[tuple[int, Any, Any], bool] = field(default_factory=dict)

    def edge_ok(self, x: Event, y: Event) -> bool:
        return all(
            p.test(x, y) for p in self.query.edge_predicates if p.source == x.type and p.target == y.type
        )


def _subsequences(events: Sequence[Event], context: _Context) -> Iterator[Trend]:
    """Every non-empty subsequence of ``events`` (sorted by time) with strictly increasing times whose
    consecutive pairs satisfy the edge predicates.

    Extending a sequence keeps its consecutive pairs, so a prefix with a failing pair is not extended.
    """

    def extend(prefix: Trend, first: int) -> Iterator[Trend]:
        for index in range(first, len(events)):
            event = events[index]
            if prefix and (event.time <= prefix[-1].time or not context.edge_ok(prefix[-1], event)):
                continue
            trend = prefix + (event,)
            yield trend
            yield from extend(trend, index + 1)

    return extend((), 0)


def _matches(pattern: Pattern, trend: Trend, context: _Context) -> bool:
    """Whether ``pattern`` matches the whole of ``trend``, negations included."""
    memo: dict[tuple[int, int], frozenset[int]] = {}
    return len(trend) in _ends(pattern, trend, 0, context, memo)


def _ends(
    pattern: Pattern, trend: Trend, i: int, context: _Context, memo: dict[tuple[int, int], frozenset[int]]
) -> frozenset[int]:
    """Every j such that ``pattern`` matches ``trend[i:j]`` (a recogniser, like a regular expression's;
    times already increase strictly along ``trend``)."""
    key = (id(pattern), i)
    if key in memo:
        return memo[key]
    result: set[int] = set()
    if isinstance(pattern, EventTypePattern):
        if i < len(trend) and trend[i].type == pattern.type_name:
            result.add(i + 1)
    elif isinstance(pattern, OptionalPattern):
        # P?: nothing, or one match of P.
        result = {i} | _ends(pattern.inner, trend, i, context, memo)
    elif isinstance(pattern, ChoicePattern):
        # OR: a match of any operand (AND never reaches here: its operands are matched one by one).
        for operand in pattern.operands:
            result |= _ends(operand, trend, i, context, memo)
    elif isinstance(pattern, MinimalLengthPattern):
        # P{n,}: n matches of P one after another, then any number more.
        reached = {i}
        for _ in range(pattern.minimum):
            reached = {j for r in reached for j in _ends(pattern.inner, trend, r, context, memo)}
        todo = list(reached)
        while todo:
            j = todo.pop()
            if j not in result:
                result.add(j)
                todo.extend(_ends(pattern.inner, trend, j, context, memo))
    elif isinstance(pattern, (KleenePattern, StarPattern)):
        # One (P+) or zero (P*) or more matches of the inner pattern, one after another.
        if isinstance(pattern, StarPattern):
            result.add(i)
        todo = list(_ends(pattern.inner, trend, i, context, memo))
        while todo:
            j = todo.pop()
            if j not in result:
                result.add(j)
                todo.extend(_ends(pattern.inner, trend, j, context, memo))
    elif isinstance(pattern, SeqPattern):
        positions = {i}  # where the match of the items seen so far may end
        seen_positive = False
        pending: list[NegationPattern] = []  # the NOTs waiting for the positive item after them
        for item in pattern.items:
            if isinstance(item, NegationPattern):
                pending.append(item)
                continue
            following: set[int] = set()
            for j in positions:
                if pending:
                    # Middle NOT: strictly between trend[j-1] (end of the previous part) and trend[j].
                    # Leading NOT (nothing positive before it): from the window start to trend[j].
                    lower = trend[j - 1].time if seen_positive else None
                    if j >= len(trend) or any(
                        _negation_matched(n.inner, lower, trend[j].time, context) for n in pending
                    ):
                        continue
                following |= _ends(item, trend, j, context, memo)
            positions = following
            seen_positive = True
            pending = []
        if pending:
            # Trailing NOT: from the last event of the trend to the window end.
            positions = {j for j in positions
                         if not any(_negation_matched(n.inner, trend[j - 1].time, None, context) for n in pending)}  # fmt: skip
        result = positions
    else:  # pragma: no cover - the analysis rejects anything else
        raise TypeError(f"unexpected pattern node {pattern!r}")
    frozen = frozenset(result)
    memo[key] = frozen
    return frozen


def _negation_matched(negated: Pattern, after: Any, before: Any, context: _Context) -> bool:
    """Whether some match of ``negated`` lies strictly inside (after, before) — ``None`` standing for the
    window bound (the context's events are exactly the partition's events in the window)."""
    key = (id(negated), after, before)
    if key not in context.negation_cache:
        positive = _positive_types(negated)
        candidates = [
            e
            for e in context.events
            if e.type in positive
            and (after is None or e.time > after)
            and (before is None or e.time < before)
        ]
        context.negation_cache[key] = any(
            _matches(negated, match, context) for match in _subsequences(candidates, context)
        )
    return context.negation_cache[key]


def _positive_types(pattern: Pattern | NegationPattern) -> set[str]:
    """The event types a trend of ``pattern`` is made of (not those under a NOT)."""
    if isinstance(pattern, NegationPattern):
        return set()
    if isinstance(pattern, EventTypePattern):
        return {pattern.type_name}
    if isinstance(pattern, (KleenePattern, OptionalPattern, StarPattern, MinimalLengthPattern)):
        return _positive_types(pattern.inner)
    parts = pattern.operands if isinstance(pattern, ChoicePattern) else pattern.items
    return set().union(*(_positive_types(item) for item in parts))


def _all_types(pattern: Pattern | NegationPattern) -> set[str]:
    """Every event type in ``pattern``, positive or negated."""
    if isinstance(pattern, EventTypePattern):
        return {pattern.type_name}
    if isinstance(
        pattern, (KleenePattern, NegationPattern, OptionalPattern, StarPattern, MinimalLengthPattern)
    ):
        return _all_types(pattern.inner)
    parts = pattern.operands if isinstance(pattern, ChoicePattern) else pattern.items
    return set().union(*(_all_types(item) for item in parts))


# ---- aggregates ----------------------------------------------------------------------------------------


def _form(value: Any) -> tuple[Any, int]:
    if isinstance(value, float) and value == 0 and math.copysign(1.0, value) < 0:
        return value, 0
    return _instant(value), 2 if isinstance(value, float) else 1  # (a zoned datetime by its instant)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rounded(exact: Fraction) -> float:
    """IEEE round-to-nearest: an exact value past the largest double (plus half its last unit) is infinite."""
    largest = Fraction(sys.float_info.max)
    half_unit = Fraction(2) ** (sys.float_info.max_exp - sys.float_info.mant_dig - 1)
    if abs(exact) >= largest + half_unit:
        return math.inf if exact > 0 else -math.inf
    return float(exact)


def _kind(value: Any) -> str:
    if _is_number(value):
        return "number"
    return type(value).__name__ + (" with zone" if getattr(value, "tzinfo", None) is not None else "")


def _instant(value: Any) -> Any:
    return value.astimezone(UTC) if isinstance(value, datetime) and value.tzinfo is not None else value


def _refuse_values(spec: AggregateSpec, read: list[tuple[Event, Any]]) -> None:
    """The README's rule for what an aggregate cannot compute from its occurrences: SUM and AVG stop at a
    value that is no number (a text, a bool) and at a NaN or an infinity (an exact sum has no room for them);
    MIN and MAX at a NaN (it orders with nothing) and where two kinds meet (numbers, texts, bools)."""
    where = f"{spec.function}({spec.event_type}.{spec.attribute})"
    for event, value in read:
        if spec.function in ("SUM", "AVG"):
            if not _is_number(value):
                raise EvaluationError(
                    f"{where}: {event.type} at {event.time} has non-numeric value {value!r}"
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise EvaluationError(f"{where}: {event.type} at {event.time} has non-finite value {value!r}")
        elif isinstance(value, float) and math.isnan(value):
            raise EvaluationError(f"{where}: {event.type} at {event.time} has NaN")
    if spec.function in ("MIN", "MAX") and len({_kind(v) for _, v in read}) > 1:
        raise EvaluationError(f"{where}: values of several kinds ({sorted({_kind(v) for _, v in read})})")


def aggregate(spec: AggregateSpec, trends: list[Trend]) -> int | float | None:
    """One aggregate over a non-empty list of trends, computed from the trends themselves."""
    if spec.function == "COUNT" and spec.event_type is None:
        return len(trends)
    occurrences = [e for trend in trends for e in trend if e.type == spec.event_type]
    if spec.function == "COUNT":
        return len(occurrences)
    assert spec.attribute is not None
    read = [(e, e.attributes.get(spec.attribute)) for e in occurrences]
    values: list[Any] = [v for _, v in read if v is not None]
    _refuse_values(spec, [(e, v) for e, v in read if v is not None])
    if not values:
        return None
    # Among equal values, the form is fixed whatever the order of the trends: -0.0 before an int before any
    # other float (MIN takes the first of them, MAX the last).
    if spec.function == "MIN":
        return min(values, key=_form)
    if spec.function == "MAX":
        return max(values, key=_form)
    exact = sum((Fraction(v) for v in values), Fraction(0))  # Fraction(float) is the float's exact value
    if spec.function == "SUM":
        if any(isinstance(v, float) for v in values):
            return _rounded(exact)
        return sum(values)  # ints only: exact
    if spec.function == "AVG":
        return _rounded(exact / len(values))
    raise ValueError(f"unknown aggregate function {spec.function}")  # pragma: no cover
