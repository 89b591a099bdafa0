"""Strategy ``greta``: every query on its own (GRETA), one trend graph per query and stream partition."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import groupby
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import Window
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra
from hamlet.runtime.graph import TrendGraph, WindowClasses
from hamlet.runtime.partition import PartitionRunner, match_key, matched_events
from hamlet.stats import EvaluationStats


class QueryRun:
    """One query's trend graphs over one partition, driven one timestamp at a time.

    All events of one timestamp are computed before any is committed: equal timestamps are never adjacent
    (GRETA's per-timestamp transactions, §7). Windows close when time reaches their end. Open windows are
    kept as runs of consecutive indexes and close by runs of one window class (graph.py): a short partition
    in windows sliding every minute costs O(classes), not O(windows).
    """

    def __init__(self, query: AnalyzedQuery, algebra: Algebra, events: Sequence[Event], plain_scan: bool = False,
                 classes: WindowClasses | None = None) -> None:  # fmt: skip
        self.query = query
        self.root = TrendGraph(query, query.pattern, algebra, events, True, plain_scan, classes)
        self.graphs_by_type: dict[str, list[TrendGraph]] = {}
        for graph in self.root.graphs():
            for t in graph.template.types:
                self.graphs_by_type.setdefault(t, []).append(graph)
        self.open: list[list[int]] = []  # disjoint ascending runs [first, last] of open windows
        self.next_close: Any = None  # end of the oldest open window
        window = query.window
        self.ints = (int(window.within), int(window.slide)) if window.within.denominator == 1 and (
            window.slide.denominator == 1) else None  # fmt: skip

    def _last_ending_by(self, time: Any) -> int:
        """The last window index whose end is at or before ``time``."""
        ints = self.ints
        if ints is not None and type(time) is int:
            return (time - ints[0]) // ints[1]
        window = self.query.window
        return math.floor((Fraction(time) - window.within) / window.slide)

    def advance_runs(self, time: Any) -> Iterator[tuple[range, Any]]:
        """Close the windows that end at or before ``time`` (yielding (windows, final) for runs of windows
        with the same final), open those of ``time``."""
        window = self.query.window
        runs = self.open
        if self.next_close is not None and time >= self.next_close:
            last_closing = self._last_ending_by(time)
            while runs and runs[0][0] <= last_closing:
                first, last = runs[0]
                through = min(last, last_closing)
                yield from self.root.close_runs(first, through)
                if through == last:
                    del runs[0]
                else:
                    runs[0][0] = through + 1
            self.next_close = window.end(runs[0][0]) if runs else None
        every = window.indexes(time)
        first, stop = every.start, every.stop
        if runs:
            first = max(first, runs[-1][1] + 1)
        if first < stop:
            if runs and runs[-1][1] + 1 == first:
                runs[-1][1] = stop - 1
            else:
                runs.append([first, stop - 1])
        if self.next_close is None and runs:
            self.next_close = window.end(runs[0][0])

    def advance(self, time: Any) -> Iterator[tuple[int, Any]]:
        """``advance_runs`` one window at a time."""
        for ks, final in self.advance_runs(time):
            for k in ks:
                yield k, final

    def step(self, batch: Sequence[Event]) -> None:
        """Process the events of one timestamp (already ``advance``d to it)."""
        if len(batch) == 1:
            graphs = self.graphs_by_type.get(batch[0].type, ())
            if len(graphs) == 1:  # one event, one graph: nothing else to compute before the commit
                graphs[0].commit(batch[0], graphs[0].compute(batch[0]))
                return
        computed = [(g, e, g.compute(e)) for e in batch for g in self.graphs_by_type.get(e.type, ())]
        for graph, event, aggregates in computed:
            graph.commit(event, aggregates)

    def finish_runs(self) -> Iterator[tuple[range, Any]]:
        for first, last in self.open:
            yield from self.root.close_runs(first, last)
        self.open.clear()

    def finish(self) -> Iterator[tuple[int, Any]]:
        for ks, final in self.finish_runs():
            for k in ks:
                yield k, final


def run_partition(query: AnalyzedQuery, algebra: Algebra, events: Sequence[Event], plain_scan: bool = False,
                  classes: WindowClasses | None = None) -> Iterator[tuple[range, Any]]:  # fmt: skip
    """(windows, final aggregate) for every run of windows of the query with the same final, in which a
    trend matched; ``events`` sorted by time."""
    run = QueryRun(query, algebra, events, plain_scan, classes)
    for time, batch in groupby(events, key=lambda e: e.time):
        yield from run.advance_runs(time)
        run.step(list(batch))
    yield from run.finish_runs()


def run_greta(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], stats: EvaluationStats,
              plain_scan: bool = False) -> PartitionRunner:  # fmt: skip
    """Strategy ``greta``: the runner of a query set over its stream partitions, each query on its own graph
    over its matched events (finals by runs of windows: see ``hamlet.api.Executor``)."""

    keys = [match_key(q) for q in queries]

    def run(events: list[Event]) -> Iterator[tuple[str, range, Any]]:
        return _greta_partition(queries, keys, algebras, events, stats, plain_scan)

    return run


def _greta_partition(queries: Sequence[AnalyzedQuery], keys: Sequence[tuple], algebras: Mapping[str, Algebra],
                     events: list[Event], stats: EvaluationStats, plain_scan: bool) -> Iterator[tuple[str, range, Any]]:  # fmt: skip
    read: set[int] = set()
    matched: dict[tuple, list[Event]] = {}  # per ``match_key``
    present = {e.type for e in events}
    times = [e.time for e in events]
    classes: dict[Window, WindowClasses] = {}  # queries with the same windows share their classes
    for query, key in zip(queries, keys):
        # Patterns have no optional parts: every trend holds an event of each positive type, so a partition
        # that lacks one (before or after the local predicates) has no trend; its graph is not even built.
        positive = query.pattern.template.types
        if not present.issuperset(positive) and len(read) == len(events):
            continue  # (``read`` counts the events the queries match: once it holds all, matching can stop)
        mine = matched.get(key)
        if mine is None:
            mine = matched[key] = matched_events(query, events)
            read.update(map(id, mine))
        if not {e.type for e in mine}.issuperset(positive):
            continue
        window = query.window
        shared = classes.get(window)
        if shared is None:
            shared = classes[window] = WindowClasses(window, times)
        for ks, agg in run_partition(query, algebras[query.name], mine, plain_scan, shared):
            yield query.name, ks, agg
    stats.events += len(read)
