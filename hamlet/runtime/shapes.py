"""Queries of one shape, run together in columns (the per-query half of HAMLET's shared execution).

A shared burst costs one factor Φ for all its queries (``shared.py``); what is left per query is the
graphlet-level snapshot x and the commit. Run query by query (one ``TrendGraph`` each), that commit is a
handful of method calls and dict look-ups per (burst, query), and it dominates as soon as queries are many.

Queries whose templates are equal up to the names of their types — the same transitions between the same
positions, the same start and end position, the same window — have the same *shape*; the HAMLET
authors' workloads are mostly of one shape (``SEQ(X, E+, Y)`` for many X, Y). A ``ShapeGroup`` holds, per
open window, one column per template position (running COUNT(*) totals of that position's events) plus a
column of finals. An event of type E touches, per position p at which some queries of the group read E,
their entries: x = Σ of the entries of p's predecessor positions (+ 1 at the start position), then x·μ is
added to the entry at p (and to the final at the end position). One burst is one pass over a list instead
of one object graph per query.

An entry at position p is a *slot*: queries whose sub-patterns up to p are equal — the same types and local
predicates at every position that leads to p — have the same running total there, and share one slot
(MUSE/Sharon-style prefix sharing). In ``SEQ(X, E+, Y)`` the totals of X and E+ depend only on X: 50 queries
over 12 X types keep 12 slots for E+, and an E burst updates 12 entries, not 50.

μ is what the burst's matched events make of x, from ``shared.py``: Φ − 1 with Φ = Π_g (1 + m_g) at a
Kleene position, Σ_g m_g elsewhere (events of one timestamp never extend each other). It is the same for
every query that matches the same events.

Only COUNT(*) queries without negation and without edge predicates have a shape here: their every burst
applies at once (``AnalyzedQuery.burst_obstacle``) and their aggregate is a plain int. The others keep
their own ``QueryRun``. Local predicates are fine: they only change a query's μ.
"""

from __future__ import annotations

import copy
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
    if query.states is not None:  # (its type template over-approximates it: never run in columns)
        return None
    template = query.pattern.template
    position = {t: i for i, t in enumerate(template.types)}
    transitions = tuple(sorted((position[t.source], position[t.target]) for t in template.transitions))
    return len(template.types), position[template.start], position[template.end], transitions, query.window


class ShapeGroup:
    """The queries of one shape, their COUNT(*) state in columns of slots per window (module docstring)."""

    def __init__(self, shape: Shape, queries: Sequence[AnalyzedQuery]) -> None:
        positions, self.start, self.end, transitions, self.window = shape
        self.names = [q.name for q in queries]
        self.positions = positions
        self.incoming = [tuple(s for s, t in transitions if t == p) for p in range(positions)]
        self.kleene = [p in self.incoming[p] for p in range(positions)]
        # Only positions with outgoing transitions need their running column.
        self.kept = [any(s == p for s, _ in transitions) for p in range(positions)]
        upstream = [_upstream(p, self.incoming) for p in range(positions)]
        # Slots: members with the same types and local predicates at every position leading to p share one.
        self.slot_of: list[list[int]] = []  # position → member → slot
        self.slot_members: list[list[list[int]]] = []  # position → slot → members
        for p in range(positions):
            keys: dict[tuple, int] = {}
            slot_of = []
            for q in queries:
                types = q.pattern.template.types
                key = tuple(
                    (types[u], tuple(x.text for x in q.local_predicates_of(types[u]))) for u in upstream[p]
                )
                slot_of.append(keys.setdefault(key, len(keys)))
            self.slot_of.append(slot_of)
            self.slot_members.append([[] for _ in keys])
            for i, slot in enumerate(slot_of):
                self.slot_members[p][slot].append(i)
        # Per position and predecessor position: the predecessor's slot of each slot (upstream ⊆ upstream).
        self.sources = [
            [(s, [self.slot_of[s][members[0]] for members in self.slot_members[p]]) for s in self.incoming[p]]
            for p in range(positions)
        ]  # fmt: skip
        self.slots: dict[str, dict[int, list[int]]] = {}  # event type → position → slots reading it there
        for i, q in enumerate(queries):
            for p, t in enumerate(q.pattern.template.types):
                slots = self.slots.setdefault(t, {}).setdefault(p, [])
                if self.slot_of[p][i] not in slots:
                    slots.append(self.slot_of[p][i])
        self.width = [len(self.slot_members[p]) for p in range(positions)] + [
            len(self.slot_members[self.end])
        ]
        self.columns: dict[int, list[list[int]]] = {}  # window → one column per position, then the finals
        self.open: list[int] = []  # ascending
        self.next_close: Any = None

    def fresh(self) -> ShapeGroup:
        """The same queries and slots with no window open: the layout is computed once per query set, the
        columns are per stream partition."""
        group = copy.copy(self)
        group.columns, group.open, group.next_close = {}, [], None
        return group

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
        for k in window.indexes(time):
            if not self.open or k > self.open[-1]:
                self.open.append(k)
                self.columns[k] = [[0] * w for w in self.width]
        if self.next_close is None and self.open:
            self.next_close = window.end(self.open[0])

    def finish(self) -> Iterator[tuple[str, int, int]]:
        for k in self.open:
            yield from self._finals(k)
        self.open.clear()

    def _finals(self, k: int) -> Iterator[tuple[str, int, int]]:
        finals = self.columns.pop(k)[self.positions]
        names, members = self.names, self.slot_members[self.end]
        for slot, final in enumerate(finals):
            if final:  # a row only where a trend matched
                for i in members[slot]:
                    yield names[i], k, final

    def snapshots(self, time: Any, position: int, slots: Sequence[int]) -> dict[int, list[int]]:
        """The graphlet-level snapshot x per window for ``slots`` (for traces and tests)."""
        out = {}
        for k in self.window.indexes(time):
            sources = [(self.columns[k][s], mapping) for s, mapping in self.sources[position]]
            out[k] = _deltas(sources, int(position == self.start), slots, 1)
        return out

    def apply(self, time: Any, position: int, slots: Sequence[int], multiplier: int) -> None:
        """Commit a burst read at ``position`` by ``slots`` (``advance``d to its first time): each slot's x
        grows its entry by x·μ, ``multiplier`` the μ of them all (they match the same events)."""
        kept, end = self.kept[position], position == self.end
        if not kept and not end:
            return
        start, finals_index = int(position == self.start), self.positions
        for k in self.window.indexes(time):
            columns = self.columns[k]
            deltas = _deltas([(columns[s], mapping) for s, mapping in self.sources[position]], start, slots,
                             multiplier)  # fmt: skip
            if kept:
                column = columns[position]
                for j, d in zip(slots, deltas):
                    column[j] += d
            if end:
                finals = columns[finals_index]
                for j, d in zip(slots, deltas):
                    finals[j] += d

    def step(self, time: Any, reads: Sequence[tuple[int, Sequence[int], Sequence[int]]]) -> None:
        """Events of several types at one timestamp: every (position, slots, matched counts) is computed from
        the state before the timestamp, then all are committed (equal times are never adjacent)."""
        pending = []
        for k in self.window.indexes(time):
            columns = self.columns[k]
            for position, slots, counts in reads:
                x = _deltas([(columns[s], mapping) for s, mapping in self.sources[position]],
                            int(position == self.start), slots, 1)  # fmt: skip
                pending.append((columns, position, slots, [xj * c for xj, c in zip(x, counts)]))
        for columns, position, slots, deltas in pending:
            for target in (
                position if self.kept[position] else None,
                self.positions if position == self.end else None,
            ):
                if target is not None:
                    column = columns[target]
                    for j, d in zip(slots, deltas):
                        column[j] += d


def _upstream(position: int, incoming: list[tuple[int, ...]]) -> list[int]:
    """The positions from which ``position`` can be reached (itself included), ascending."""
    seen, todo = {position}, [position]
    while todo:
        for s in incoming[todo.pop()]:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return sorted(seen)


def _deltas(
    sources: list[tuple[list[int], list[int]]], start: int, slots: Sequence[int], mu: int
) -> list[int]:
    """x·μ per slot, x the sum of the predecessor positions' entries (+ 1 at the start position)."""
    if not sources:
        return [start * mu] * len(slots)
    if len(sources) == 1:
        ((a, ma),) = sources
        return [(a[ma[j]] + start) * mu for j in slots]
    if len(sources) == 2:
        (a, ma), (b, mb) = sources
        return [(a[ma[j]] + b[mb[j]] + start) * mu for j in slots]
    return [(sum(s[m[j]] for s, m in sources) + start) * mu for j in slots]
