"""``hamlet trends``: the matched trends of one query themselves, listed one at a time.

The number of trends is exponential in the number of events, so they are never collected: each partition's
GRETA graph is built once with its edges kept (``TrendRecorder``: per event, the predecessor events a trend
may come from — under NEXT and CONT only the edges those semantics keep, ``graph.SemanticsEdges``), then a
depth-first walk from every END event back to START events yields one trend at a time, holding only the
current path. The walk follows only edges from events that have a trend in the window's class, so every
branch it takes ends in at least one trend: the first N trends cost O(N × trend length), whatever the total.

The total per window and group is the count the engine computes (``hamlet.evaluate`` with COUNT(*)).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import groupby
from operator import attrgetter
from typing import Any

from hamlet.analysis.query import AggregateSpec, AnalyzedQuery
from hamlet.analysis.windows import as_number
from hamlet.analysis.workload import Workload
from hamlet.errors import HamletError
from hamlet.events import Event
from hamlet.results import group_identity, group_key
from hamlet.runtime.aggregates import CountAlgebra
from hamlet.runtime.dominance import LongerTrends
from hamlet.runtime.graph import PartitionClasses, TrendGraph, placed
from hamlet.runtime.greta import QueryRun, run_greta
from hamlet.runtime.partition import group_of, matched_events, partition_stream

Trend = tuple[Event, ...]
MAX_EDGES = 5_000_000  # per stream partition: about 400 MB and 5 s of recording
COUNT_ALL = AggregateSpec("COUNT", None, None, "COUNT(*)")


@dataclass
class TrendRecorder:
    """What a trend graph keeps for listing its trends (``TrendGraph.recorder``), per event by ``id``:
    ``edges`` the predecessor events it was connected to, each with its aggregates per window class (it
    may precede the event in the windows of those classes); ``starts`` per window class whether it may
    start a trend there (START type, no leading NOT match); ``finals`` for END events their own
    aggregates per class (a trend ends at them there)."""

    query: str  # (named when the edges outgrow ``MAX_EDGES``)
    edges: dict[int, list[tuple[Event, dict[int, Any]]]] = field(default_factory=dict)
    kept: int = 0  # edges in all
    starts: dict[int, dict[int, bool]] = field(default_factory=dict)
    finals: dict[int, dict[int, Any]] = field(default_factory=dict)
    # NEXT on a position template (``dominance.LongerTrends.moves``): per event, per predecessor, its
    # aggregates split by R and where each R moved to at the event
    moves: dict[int, list[tuple[Event, dict[int, Any], dict[frozenset[str], frozenset[str]]]]] = field(
        default_factory=dict
    )

    def keep(self, event: Event, chosen: list[tuple[Event, dict[int, Any]]]) -> None:
        """``event``'s predecessor events, or a ``HamletError`` once a partition's edges pass ``MAX_EDGES``:
        under ``SEQ(A, B+)`` every B follows every earlier B, so n events hold n²/2 edges (12,000 Bs took
        5 GB), and the walk cannot start before they are all kept."""
        self.kept += len(chosen)
        if self.kept > MAX_EDGES:
            raise HamletError(f"listing the trends of {self.query} keeps the edges between its events, more than "
                              f"{MAX_EDGES:,} in one stream partition here: list one window (--window START) of "
                              "fewer events; `hamlet evaluate` counts them all")  # fmt: skip
        self.edges[id(event)] = chosen


@dataclass(frozen=True)
class WindowTrends:
    """The trends of one window and group: ``total`` the engine's count, ``trends`` an iterator over them."""

    window_start: Any
    window_end: Any
    group: dict[str, Any]
    total: int
    trends: Iterator[Trend]


@dataclass
class _Recorded:
    """One partition's graph, built with its edges kept."""

    root: TrendGraph
    recorder: TrendRecorder
    matched: list[Event]  # as the graph runs them (``graph.placed``: once per state on a position template)
    original: dict[int, Event]  # id of a placed event → the event of the stream
    classes: Any  # the query's WindowClasses over the partition
    limits: list[
        tuple[Any, tuple[Any, tuple[Any, ...]]]
    ]  # (time, ``TrendGraph.end_limits`` after its events)


def count_only(query: AnalyzedQuery) -> AnalyzedQuery:
    """The query asking COUNT(*) alone (what ``trends`` reports as the total)."""
    return replace(query, aggregates=(COUNT_ALL,))


def list_trends(
    workload: Workload, name: str, events: Sequence[Event], window_start: Any = None
) -> Iterator[WindowTrends]:
    """Per window (ascending start; only the one starting at ``window_start`` if given) and group, the
    trends of query ``name`` over ``events``, with the total the engine counts."""
    try:
        query = workload.query(name)
    except KeyError:
        known = ", ".join(q.name for q in workload.queries)
        raise HamletError(f"no query {name!r} in the workload (queries: {known})") from None
    if query.choice == "AND":
        raise HamletError(f"query {name!r} is a conjunction P AND Q: it matches pairs of trends, not trends; list "
                          "the trends of P and of Q with a query each")  # fmt: skip
    if window_start is not None and window_start % query.window.slide:
        raise HamletError(f"no window of {name} starts at {as_number(window_start)}: its windows start every "
                          f"{as_number(query.window.slide)} s from the epoch")  # fmt: skip
    stream = sorted(events, key=attrgetter("time"))
    if window_start is not None:  # (a window's trends are of its own events alone, NOTs and CONT included)
        stream = [e for e in stream if window_start <= e.time < window_start + query.window.within]
    totals = _totals(query, stream)
    types = None if query.whole_substream else set(query.types)
    pooled: dict[tuple[int, tuple], list[_Recorded]] = {}
    groups: dict[tuple, dict[str, Any]] = {}
    attributes = query.partition_attributes
    for key, partition in partition_stream(attributes, types, stream).items():
        recorded = _record(query, partition)
        if recorded is None:
            continue
        group = group_of(query, attributes, key)
        gk = group_identity(group)  # (True and 1: two groups; 1 and 1.0: one)
        groups.setdefault(gk, group)  # (shown as its first partition has it)
        ks = sorted({k for e in recorded.matched for k in query.window.indexes(e.time)})
        for k in ks:
            if window_start is not None and query.window.start(k) != window_start:
                continue
            pooled.setdefault((k, gk), []).append(recorded)
    window = query.window
    for k, gk in sorted(pooled, key=lambda item: (item[0], group_key(groups[item[1]]))):
        # (rows hold window bounds as users see them: 0.3, not the Fraction 3/10 that never equals it)
        total = totals.get((as_number(window.start(k)), gk))
        if total is None:
            continue  # no trend in this window and group
        parts = pooled[(k, gk)]
        trends = (trend for recorded in parts for trend in _window_trends(query, recorded, k))
        yield WindowTrends(window.start(k), window.end(k), groups[gk], total, trends)


def _totals(query: AnalyzedQuery, stream: list[Event]) -> dict[tuple[Any, Any], int]:
    """(window start, group key) → COUNT(*), as the engine computes it (strategy greta)."""
    from hamlet.api import evaluate_with

    only = count_only(query)
    rows = evaluate_with(Workload((only,), query.text), stream, run_greta)
    return {(row.window_start, group_identity(row.group)): int(row.value) for row in rows}  # type: ignore[arg-type,misc]


def _record(query: AnalyzedQuery, partition: list[Event]) -> _Recorded | None:
    """The partition's graph on every predecessor event (the plain scan), its edges kept."""
    stream = matched_events(query, partition)
    if not stream:
        return None
    matched = placed(query, stream)  # (the graph takes placed events as they are: ``graph.placed``)
    original = {id(p): e for p, e in zip(matched, _placings(query, stream))}
    classes = PartitionClasses([e.time for e in partition])
    run = QueryRun([query], CountAlgebra(), matched, plain_scan=True, classes=classes)
    recorder = TrendRecorder(query.name)
    run.root.recorder = recorder
    limits: list[tuple[Any, Any]] = []
    for time, batch in groupby(matched, key=attrgetter("time")):
        for _ in run.advance_runs(time):
            pass
        run.step(list(batch))
        if run.root.trailing or run.root.operand_trailing:
            limits.append((time, run.root.end_limits()))
    for _ in run.finish_runs():
        pass
    return _Recorded(run.root, recorder, matched, original, classes.of(query.window), limits)


def _placings(query: AnalyzedQuery, stream: list[Event]) -> Iterator[Event]:
    """Each event of ``stream`` as often as ``placed`` places it, in the same order."""
    placement = query.placement
    for event in stream:
        for _ in placement.get(event.type, (event.type,)):
            yield event


_DONE = object()


def _window_trends(query: AnalyzedQuery, recorded: _Recorded, k: int) -> Iterator[Trend]:
    """The trends of window k in one partition: from each END event whose trends count in k, every path
    back to a START event, depth first, one path held at a time."""
    window = query.window
    start, end = window.start(k), window.end(k)
    c = recorded.classes.class_of(k)[0]
    root, recorder = recorded.root, recorded.recorder
    limits = _end_limits(recorded.limits, end)
    edges, starts = recorder.edges, recorder.starts
    crowded = root.edges.crowded if root.edges is not None else None

    def options(event: Event, last: bool) -> Iterator[tuple[Event, bool] | None]:
        # None: the trend starts at ``event``; an event: it continues back to that predecessor. Under CONT an
        # event sharing its time with another event of the sub-stream never stands in a trend's middle.
        if starts.get(id(event), {}).get(c):
            yield None
        if last or crowded is None or not crowded(event):
            for previous, aggregates in edges.get(id(event), ()):
                if c in aggregates:
                    yield previous, False

    if isinstance(root.edges, LongerTrends):
        yield from _longer_trends(recorded, c, start, end, limits)
        return
    for event in recorded.matched:
        if not (start <= event.time < end) or c not in recorder.finals.get(id(event), {}):
            continue
        if not root.ends_of(event.time, event.type, limits):
            continue  # a trailing NOT matched after it before the window's end
        yield from _walk((event, True), options, recorded.original)


def _walk(last: tuple[Event, Any], options: Callable[[Event, Any], Iterator[tuple[Event, Any] | None]],
          original: dict[int, Event]) -> Iterator[Trend]:  # fmt: skip
    """Every trend back from ``last`` (an END node and what ``options`` needs of it), depth first, holding
    one path: ``options(node, key)`` yields None where a trend starts at the node, else a predecessor node
    and its key."""
    path = [last[0]]
    stack = [options(*last)]
    while stack:
        found = next(stack[-1], _DONE)
        if found is _DONE:
            stack.pop()
            path.pop()
        elif found is None:
            yield tuple(original[id(e)] for e in reversed(path))
        else:
            step: tuple[Event, Any] = found  # type: ignore[assignment]
            path.append(step[0])
            stack.append(options(*step))


def _longer_trends(recorded: _Recorded, c: int, start: Any, end: Any, limits: tuple[Any, tuple[Any, ...]]
                   ) -> Iterator[Trend]:  # fmt: skip
    """``_window_trends`` under NEXT on a position template: a path back from an END node holds, per node,
    the set R of its partial trend (``dominance.py``); it starts at the parts no longer trend dominates
    and steps back to the predecessor parts whose R moved to the one it holds."""
    recorder = recorded.recorder
    starts, moves = recorder.starts, recorder.moves

    def options(node: Event, r: frozenset[str]) -> Iterator[tuple[Event, frozenset[str]] | None]:
        if not r and starts.get(id(node), {}).get(c):
            yield None
        for previous, aggregates, moved in moves.get(id(node), ()):
            for earlier in aggregates.get(c, {}):
                if moved[earlier] == r:
                    yield previous, earlier

    for event in recorded.matched:
        parts = recorder.finals.get(id(event), {}).get(c)
        ending = partial(
            recorded.root.ends_of, event.time, limits=limits
        )  # (its trailing NOTs at the window's end)
        if not (start <= event.time < end) or not parts or not ending(event.type):
            continue
        for r in parts:
            if not any(
                map(ending, r)
            ):  # (else a longer trend with the same first and last events holds these)
                yield from _walk((event, r), options, recorded.original)


def _end_limits(
    limits: list[tuple[Any, tuple[Any, tuple[Any, ...]]]], end: Any
) -> tuple[Any, tuple[Any, ...]]:
    """``TrendGraph.end_limits`` as they were before ``end`` (no trailing NOT, or no match yet: none)."""
    i = bisect_left([t for t, _ in limits], end)
    return limits[i - 1][1] if i else (None, ())


def trend_text(trend: Trend) -> str:
    """``A@1 {x=5}, B@2`` — each event's type, time and attributes."""
    parts = []
    for e in trend:
        attributes = ", ".join(f"{k}={v!r}" for k, v in e.attributes.items() if v is not None)
        parts.append(f"{e.type}@{_number(e.time)}" + (f" {{{attributes}}}" if attributes else ""))
    return ", ".join(parts)


def _number(value: Any) -> str:
    return str(as_number(value))
