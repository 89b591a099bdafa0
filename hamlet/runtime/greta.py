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


def run_greta(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], events: list[Event],
              stats: EvaluationStats, plain_scan: bool = False) -> Iterator[tuple[str, int, Any]]:  # fmt: skip
    """Strategy ``greta``: each query of the set on its own graph over its matched events."""
    read: set[int] = set()
    for query in queries:
        mine = matched_events(query, events)
        read.update(map(id, mine))
        for k, agg in run_partition(query, algebras[query.name], mine, plain_scan):
            yield query.name, k, agg
    stats.events += len(read)


def run_partition(query: AnalyzedQuery, algebra: Algebra, events: Sequence[Event],
                  plain_scan: bool = False) -> Iterator[tuple[int, Any]]:  # fmt: skip
    """(window k, final aggregate) for every window of the query in which a trend matched.

    ``events`` must be sorted by time. All events of one timestamp are computed before any is committed:
    equal timestamps are never adjacent (GRETA's per-timestamp transactions, §7).
    """
    root = TrendGraph(query, query.pattern, algebra, events, windowed=True, plain_scan=plain_scan)
    graphs_by_type: dict[str, list[TrendGraph]] = {}
    for graph in root.graphs():
        for t in graph.template.types:
            graphs_by_type.setdefault(t, []).append(graph)
    window = query.window
    open_windows: list[int] = []  # ascending
    next_close: Any = None  # end of the oldest open window
    for time, batch in groupby(events, key=lambda e: e.time):
        if next_close is not None and time >= next_close:
            closing = 0
            while closing < len(open_windows) and window.end(open_windows[closing]) <= time:
                closing += 1
            for k in open_windows[:closing]:
                final = root.close(k)
                if final is not None:
                    yield k, final
            del open_windows[:closing]
            next_close = window.end(open_windows[0]) if open_windows else None
        for k in window.indexes(time):
            if not open_windows or k > open_windows[-1]:
                open_windows.append(k)
        if next_close is None and open_windows:
            next_close = window.end(open_windows[0])
        computed = [(graph, event, graph.compute(event)) for event in batch for graph in graphs_by_type[event.type]]
        for graph, event, aggregates in computed:
            graph.commit(event, aggregates)
    for k in open_windows:
        final = root.close(k)
        if final is not None:
            yield k, final
