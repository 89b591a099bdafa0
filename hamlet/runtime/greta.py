"""Strategy ``greta``: every query on its own (GRETA), one trend graph per query and stream partition."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra
from hamlet.runtime.graph import TrendGraph
from hamlet.runtime.partition import matched_events
from hamlet.stats import EvaluationStats


class QueryRun:
    """One query's trend graphs over one partition, driven one timestamp at a time.

    All events of one timestamp are computed before any is committed: equal timestamps are never adjacent
    (GRETA's per-timestamp transactions, §7). Windows close when time reaches their end.
    """

    def __init__(
        self, query: AnalyzedQuery, algebra: Algebra, events: Sequence[Event], plain_scan: bool = False
    ):
        self.query = query
        self.root = TrendGraph(query, query.pattern, algebra, events, windowed=True, plain_scan=plain_scan)
        self.graphs_by_type: dict[str, list[TrendGraph]] = {}
        for graph in self.root.graphs():
            for t in graph.template.types:
                self.graphs_by_type.setdefault(t, []).append(graph)
        self.open_windows: list[int] = []  # ascending
        self.next_close: Any = None  # end of the oldest open window

    def advance(self, time: Any) -> Iterator[tuple[int, Any]]:
        """Close the windows that end at or before ``time`` (yielding their finals), open those of ``time``."""
        window = self.query.window
        if self.next_close is not None and time >= self.next_close:
            closing = 0
            while closing < len(self.open_windows) and window.end(self.open_windows[closing]) <= time:
                closing += 1
            for k in self.open_windows[:closing]:
                final = self.root.close(k)
                if final is not None:
                    yield k, final
            del self.open_windows[:closing]
            self.next_close = window.end(self.open_windows[0]) if self.open_windows else None
        every = window.indexes(time)
        first = every.start if not self.open_windows else max(every.start, self.open_windows[-1] + 1)
        if first < every.stop:
            self.open_windows.extend(range(first, every.stop))
        if self.next_close is None and self.open_windows:
            self.next_close = window.end(self.open_windows[0])

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

    def finish(self) -> Iterator[tuple[int, Any]]:
        for k in self.open_windows:
            final = self.root.close(k)
            if final is not None:
                yield k, final
        self.open_windows.clear()


def run_partition(query: AnalyzedQuery, algebra: Algebra, events: Sequence[Event],
                  plain_scan: bool = False) -> Iterator[tuple[int, Any]]:  # fmt: skip
    """(window k, final aggregate) for every window of the query in which a trend matched; ``events``
    sorted by time."""
    run = QueryRun(query, algebra, events, plain_scan)
    for time, batch in groupby(events, key=lambda e: e.time):
        yield from run.advance(time)
        run.step(list(batch))
    yield from run.finish()


def run_greta(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], events: list[Event],
              stats: EvaluationStats, plain_scan: bool = False) -> Iterator[tuple[str, int, Any]]:  # fmt: skip
    """Strategy ``greta``: each query of the set on its own graph over its matched events."""
    read: set[int] = set()
    present = {e.type for e in events}
    for query in queries:
        # Patterns have no optional parts: every trend holds an event of each positive type, so a partition
        # that lacks one (before or after the local predicates) has no trend; its graph is not even built.
        positive = query.pattern.template.types
        if not present.issuperset(positive) and len(read) == len(events):
            continue  # (``read`` counts the events the queries match: once it holds all, matching can stop)
        mine = matched_events(query, events)
        read.update(map(id, mine))
        if not {e.type for e in mine}.issuperset(positive):
            continue
        for k, agg in run_partition(query, algebras[query.name], mine, plain_scan):
            yield query.name, k, agg
    stats.events += len(read)
