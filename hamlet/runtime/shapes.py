"""Queries of one shape, run together in columns (the per-query half of HAMLET's shared execution).

A shared burst costs one factor Φ for all its queries (``shared.py``); what is left per query is the
graphlet-level snapshot x and the commit. Run query by query (one ``TrendGraph`` each), that commit is a
handful of method calls and dict look-ups per (burst, query), and it dominates as soon as queries are many.

Queries whose templates are equal up to the names of their types — the same transitions between the same
positions, the same start and end position, the same window — have the same *shape*; the HAMLET
authors' workloads are mostly of one shape (``SEQ(X, E+, Y)`` for many X, Y). A ``ShapeGroup`` holds, per
open window, one column per template position (the running COUNT(*) total of that position's events, one
entry per query) plus a column of finals. An event of type E touches, per position p at which some queries
of the group read E, exactly those queries' entries: x = Σ of the columns of p's predecessor positions
(+ 1 at the start position), then x·μ is added to column p (and to the finals at the end position).
One burst is one pass over a list instead of one object graph per query.

μ is what the burst's matched events make of x, from ``shared.py``: Φ − 1 with Φ = Π_g (1 + m_g) at a
Kleene position, Σ_g m_g elsewhere (events of one timestamp never extend each other). It is the same for
every query that matches the same events.

Only COUNT(*) queries without negation and without edge predicates have a shape here: their every burst
applies at once (``AnalyzedQuery.burst_obstacle``) and their aggregate is a plain int. The others keep
their own ``QueryRun``. Local predicates are fine: they only change a query's μ.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import Window
from hamlet.runtime.aggregates import Algebra, CountAlgebra

Shape = tuple[int, int, int, tuple[tuple[int, int], ...], Window]


def shape_of(query: AnalyzedQuery, algebra: Algebra) -> Shape | None:
    """Positions, start, end, transitions between positions and window; None when the query needs its own
    ``QueryRun`` (negation, edge predicates, aggregates other than COUNT(*))."""
    if query.pattern.negations or query.edge_predicates or not isinstance(algebra, CountAlgebra):
        return None
    template = query.pattern.template
    position = {t: i for i, t in enumerate(template.types)}
    transitions = tuple(sorted((position[t.source], position[t.target]) for t in template.transitions))
    return len(template.types), position[template.start], position[template.end], transitions, query.window


class ShapeGroup:
    """The queries of one shape, their COUNT(*) state in columns per window (see the module docstring)."""

    def __init__(self, shape: Shape, queries: Sequence[AnalyzedQuery]) -> None:
        positions, self.start, self.end, transitions, self.window = shape
        self.names = [q.name for q in queries]
        self.positions = positions
        self.incoming = [tuple(s for s, t in transitions if t == p) for p in range(positions)]
        self.kleene = [p in self.incoming[p] for p in range(positions)]
        # Only positions with outgoing transitions need their running column.
        self.kept = [any(s == p for s, _ in transitions) for p in range(positions)]
        self.members: dict[str, dict[int, list[int]]] = {}  # event type → position → members reading it there
        for i, q in enumerate(queries):
            for p, t in enumerate(q.pattern.template.types):
                self.members.setdefault(t, {}).setdefault(p, []).append(i)
        self.columns: dict[int, list[list[int]]] = {}  # window → one column per position, then the finals
        self.open: list[int] = []  # ascending
        self.next_close: Any = None

    def advance(self, time: Any) -> Iterator[tuple[str, int, int]]:
        """Close the windows that end at or before ``time`` (their finals out), open those of ``time``."""
        window = self.window
        if self.next_close is not None and time >= self.next_close:
            closing = 0
            while closing < len(self.open) and window.end(self.open[closing]) <= time:
                closing += 1
            for k in self.open[:closing]:
                yield from self._finals(k)
            del self.open[:closing]
            self.next_close = window.end(self.open[0]) if self.open else None
        width = len(self.names)
        for k in window.indexes(time):
            if not self.open or k > self.open[-1]:
                self.open.append(k)
                self.columns[k] = [[0] * width for _ in range(self.positions + 1)]
        if self.next_close is None and self.open:
            self.next_close = window.end(self.open[0])

    def finish(self) -> Iterator[tuple[str, int, int]]:
        for k in self.open:
            yield from self._finals(k)
        self.open.clear()

    def _finals(self, k: int) -> Iterator[tuple[str, int, int]]:
        finals = self.columns.pop(k)[self.positions]
        for name, final in zip(self.names, finals):
            if final:  # a row only where a trend matched
                yield name, k, final

    def snapshots(self, time: Any, position: int, members: Sequence[int]) -> dict[int, list[int]]:
        """The graphlet-level snapshot x per window for ``members`` (for traces and tests)."""
        out = {}
        for k in self.window.indexes(time):
            columns = self.columns[k]
            start = int(position == self.start)
            out[k] = [sum(columns[s][i] for s in self.incoming[position]) + start for i in members]
        return out

    def apply(self, time: Any, position: int, members: Sequence[int], multipliers: int | Sequence[int]) -> None:
        """Commit a burst read at ``position`` by ``members`` (``advance``d to its first time): each
        member's x grows its column by x·μ; ``multipliers`` is one μ for all or one per member."""
        incoming, start = self.incoming[position], int(position == self.start)
        kept, end = self.kept[position], position == self.end
        if not kept and not end:
            return
        finals_index = self.positions
        for k in self.window.indexes(time):
            columns = self.columns[k]
            sources = [columns[s] for s in incoming]
            column, finals = columns[position], columns[finals_index]
            if isinstance(multipliers, int):
                deltas = _deltas(sources, start, members, multipliers)
            else:
                deltas = _deltas_each(sources, start, members, multipliers)
            if kept:
                for i, d in zip(members, deltas):
                    column[i] += d
            if end:
                for i, d in zip(members, deltas):
                    finals[i] += d

    def step(self, time: Any, reads: Sequence[tuple[int, Sequence[int], Sequence[int]]]) -> None:
        """Events of several types at one timestamp: every (position, members, matched counts) is computed
        from the state before the timestamp, then all are committed (equal times are never adjacent)."""
        pending = []
        for k in self.window.indexes(time):
            columns = self.columns[k]
            for position, members, counts in reads:
                sources = [columns[s] for s in self.incoming[position]]
                deltas = _deltas_each(sources, int(position == self.start), members, counts)
                pending.append((columns, position, members, deltas))
        for columns, position, members, deltas in pending:
            for target in (position if self.kept[position] else None, self.positions if position == self.end else None):
                if target is not None:
                    column = columns[target]
                    for i, d in zip(members, deltas):
                        column[i] += d


def _deltas(sources: list[list[int]], start: int, members: Sequence[int], mu: int) -> list[int]:
    """x·μ per member, x the sum of the predecessor columns (+ 1 at the start position)."""
    if not sources:
        return [start * mu] * len(members)
    if len(sources) == 1:
        a = sources[0]
        return [(a[i] + start) * mu for i in members]
    if len(sources) == 2:
        a, b = sources
        return [(a[i] + b[i] + start) * mu for i in members]
    return [(sum(s[i] for s in sources) + start) * mu for i in members]


def _deltas_each(sources: list[list[int]], start: int, members: Sequence[int], mus: Sequence[int]) -> list[int]:
    if not sources:
        return [start * mu for mu in mus]
    if len(sources) == 1:
        a = sources[0]
        return [(a[i] + start) * mu for i, mu in zip(members, mus)]
    if len(sources) == 2:
        a, b = sources
        return [(a[i] + b[i] + start) * mu for i, mu in zip(members, mus)]
    return [(sum(s[i] for s in sources) + start) * mu for i, mu in zip(members, mus)]
