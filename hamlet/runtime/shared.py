"""Strategies ``static`` and ``hamlet``: shared trend aggregation over bursts (HAMLET §3.3, §4).

The partition's stream is cut into bursts (Definition 4.1): maximal runs of timestamps that hold only
events of one type E, within one pane (so every event of a burst falls into the same windows). A burst
reaches each query q that reads E as one graphlet-level snapshot x(q, w) per window (Definition 3.9: the
sum of q's predecessor aggregates, plus one if E starts q's trends), and the trends it creates follow
from one factor. With Kleene E+ every event extends all trends ending at earlier events of the burst, and
events of one timestamp never extend each other, so the events of timestamp group g each end
x·Π_{h<g}(1 + m_h) trends and the burst adds (Φ − 1)·x with Φ = Π_g (1 + m_g); without E+ it adds Φ·x with
Φ = Σ_g m_g. m_g counts the events of group g that q matches.

Sharing (HAMLET's shared graphlet): the queries that match the same events have the same Φ, computed once
for all of them; per query only x and the commit are left, O(1) per window instead of O(b). A query that
rejects some events of the burst (local predicates) has a different Φ: each rejected event is an
event-level snapshot (Definition 3.11) that corrects the shared factor for that query. ``static`` shares
every burst of a sharable Kleene sub-pattern E+ among all queries containing it; ``hamlet`` decides per
burst with the benefit model and the pruning principles (``hamlet.optimizer``). A query that shares a
burst after processing the previous one alone has merged back (§4.2); the reverse is a split.

Queries whose bursts cannot be applied at once (``TrendGraph.closed_form``: edge predicates reaching the
burst's events, aggregates other than COUNT(*), a trailing NOT on them) process those events one by one,
exactly as GRETA does, in every strategy.
"""

from __future__ import annotations

import re
import time as clock
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from math import floor, prod
from typing import Any, Literal

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import pane_size
from hamlet.events import Event
from hamlet.optimizer.benefit import CostModel
from hamlet.optimizer.choice import Candidate, choose_sharing
from hamlet.runtime.aggregates import Algebra
from hamlet.runtime.greta import QueryRun
from hamlet.runtime.partition import matched_events
from hamlet.stats import EvaluationStats

Sharing = Literal["static", "hamlet"]
_SINGLE_TYPE_KLEENE = re.compile(r"^(\w+)\+$")


def run_shared(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], events: list[Event],
               stats: EvaluationStats, sharing: Sharing = "hamlet",
               trace: list[dict[str, Any]] | None = None) -> Iterator[tuple[str, int, Any]]:  # fmt: skip
    """Run a sharable query set on one partition; ``trace`` (if given) receives every shared burst's
    graphlet-level snapshot values, for inspection and tests."""
    yield from _SharedRun(queries, algebras, events, stats, sharing, trace).run()


class _SharedRun:
    def __init__(self, queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], events: list[Event],
                 stats: EvaluationStats, sharing: Sharing, trace: list[dict[str, Any]] | None) -> None:  # fmt: skip
        self.queries, self.events, self.stats, self.sharing, self.trace = queries, events, stats, sharing, trace
        self.model = CostModel.calibrated()
        self.runs: dict[str, QueryRun] = {}
        self.matched: dict[str, set[int]] = {}
        for q in queries:
            mine = matched_events(q, events)
            self.matched[q.name] = set(map(id, mine))
            self.runs[q.name] = QueryRun(q, algebras[q.name], mine)
        stats.events += len(set().union(*self.matched.values())) if queries else 0
        self.pane = pane_size([d for q in queries for d in (q.window.within, q.window.slide)])
        # E of every Kleene sub-pattern E+ that two or more queries of the set contain: its bursts share.
        kleene: dict[str, list[str]] = {}
        for q in queries:
            for sub in q.kleene_subpatterns:
                if m := _SINGLE_TYPE_KLEENE.match(sub):
                    kleene.setdefault(m.group(1), []).append(q.name)
        self.sharers = {t: set(names) for t, names in kleene.items() if len(names) > 1}
        all_types = {t for q in queries for t in q.types}
        self.readers = {t: [q for q in queries if t in q.types] for t in all_types}
        self.filtered = {(q.name, t): bool(q.local_predicates_of(t)) for q in queries for t in q.types}
        self.closed = {(q.name, t): self.runs[q.name].root.closed_form(t) for q in queries for t in q.types}
        self.previously_shared: dict[str, set[str]] = {}

    def run(self) -> Iterator[tuple[str, int, Any]]:
        batches = [(t, list(b)) for t, b in groupby(self.events, key=lambda e: e.time)]
        i = 0
        while i < len(batches):
            time, batch = batches[i]
            event_type = batch[0].type
            if all(e.type == event_type for e in batch):
                pane = self._pane(time)
                j = i + 1
                while j < len(batches) and self._pane(batches[j][0]) == pane and all(
                    e.type == event_type for e in batches[j][1]
                ):
                    j += 1
                yield from self._burst(event_type, batches[i:j])
                i = j
            else:
                for q in self.queries:
                    yield from self._one_by_one(q, [(time, batch)])
                i += 1
        for q in self.queries:
            for k, final in self.runs[q.name].finish():
                yield q.name, k, final

    def _pane(self, time: Any) -> int:
        return floor(time / self.pane) if self.pane.denominator != 1 or type(time) is not int else time // int(self.pane)

    def _one_by_one(self, q: AnalyzedQuery, batches: Sequence[tuple[Any, list[Event]]]) -> Iterator[tuple[str, int, Any]]:
        run, matched = self.runs[q.name], self.matched[q.name]
        for time, batch in batches:
            mine = [e for e in batch if id(e) in matched]
            if mine:
                for k, final in run.advance(time):
                    yield q.name, k, final
                run.step(mine)

    def _burst(self, event_type: str, batches: Sequence[tuple[Any, list[Event]]]) -> Iterator[tuple[str, int, Any]]:
        sizes = self._sizes = [len(batch) for _, batch in batches]
        self._vectors: dict[tuple, Any] = {}
        closed: dict[str, list[int]] = {}  # query → events it matches per timestamp group
        for q in self.readers.get(event_type, ()):
            if not self.closed[(q.name, event_type)]:
                yield from self._one_by_one(q, batches)
                continue
            if self.filtered[(q.name, event_type)]:
                matched = self.matched[q.name]
                counts = [sum(1 for e in batch if id(e) in matched) for _, batch in batches]
            else:
                counts = sizes
            if any(counts):
                closed[q.name] = counts
        shared = self._choose(event_type, closed, sizes, batches)
        kleene_factor = prod(1 + m for m in sizes) if shared else 0
        for name, counts in closed.items():
            run = self.runs[name]
            kleene = run.root.is_kleene(event_type)
            if name in shared and counts is sizes:
                factor = kleene_factor
            elif name in shared:
                # Event-level snapshots: correct the shared factor on the groups where this query differs.
                differ = [(m, c) for m, c in zip(sizes, counts) if m != c]
                factor = kleene_factor // prod(1 + m for m, _ in differ) * prod(1 + c for _, c in differ)
            elif kleene:
                factor = prod(1 + c for c in counts)
            else:
                factor = sum(counts)
            yield from self._apply(name, event_type, batches, counts, factor - 1 if kleene else factor, kleene)

    def _choose(self, event_type: str, closed: dict[str, list[int]], sizes: list[int],
                batches: Sequence[tuple[Any, list[Event]]]) -> set[str]:  # fmt: skip
        sharers = self.sharers.get(event_type)
        if sharers is None:
            return set()
        started = clock.perf_counter()
        b, groups = sum(sizes), len(sizes)
        candidates = [
            Candidate(name, self.filtered[(name, event_type)], b - sum(counts),
                      len(self.runs[name].query.window.indexes(batches[0][0])))
            for name, counts in closed.items() if name in sharers
        ]  # fmt: skip
        if self.sharing == "static":
            shared = {c.name for c in candidates} if len(candidates) > 1 else set()
        else:
            shared = choose_sharing(candidates, b, groups, self.model)
        stats = self.stats
        stats.decision_seconds += clock.perf_counter() - started
        stats.bursts += 1
        if shared:
            stats.shared_bursts += 1
            stats.graphlet_snapshots += 1
            rejected = [c for c in candidates if c.name in shared and c.rejected]
            if rejected:
                stats.event_snapshots += sum(
                    1 for _, batch in batches for e in batch
                    if any(id(e) not in self.matched[c.name] for c in rejected)
                )  # fmt: skip
        # One split when queries leave the shared graphlet, one merge when queries (re)join it (§4.2).
        before = self.previously_shared.get(event_type, set())
        stats.splits += bool(before - shared)
        stats.merges += bool(shared - before)
        self.previously_shared[event_type] = shared
        if shared and self.trace is not None:
            self.trace.append({"type": event_type, "queries": sorted(shared), "snapshot": {}})
        return shared

    def _apply(self, name: str, event_type: str, batches: Sequence[tuple[Any, list[Event]]], counts: list[int],
               multiplier: int, kleene: bool) -> Iterator[tuple[str, int, Any]]:  # fmt: skip
        """Commit a burst to one query: each window's running total (and final, at an END type) grows by
        ``multiplier`` times the graphlet-level snapshot x, plus what the burst's own values add."""
        run = self.runs[name]
        first = next(i for i, c in enumerate(counts) if c)
        time, batch = batches[first]
        event = next(e for e in batch if id(e) in self.matched[name])
        for k, final in run.advance(time):
            yield name, k, final
        windows = run.root.windows(time)  # window classes (graph.py): one state per class of windows
        x = run.root.snapshot(event, windows)
        if self.trace is not None and self.trace and self.trace[-1]["type"] == event_type and name in self.trace[-1]["queries"]:
            self.trace[-1]["snapshot"][name] = dict(zip(windows, x))
        algebra = run.root.algebra
        if counts is self._sizes:
            # Queries that match every event and aggregate alike share the burst's vector too.
            fields = tuple(getattr(algebra, "fields", ()))
            key = (type(algebra), fields, frozenset(getattr(algebra, "scaled", ())), kleene)
            if key not in self._vectors:
                self._vectors[key] = algebra.burst_vector([b for _, b in batches], kleene)  # type: ignore[union-attr]
            vector = self._vectors[key]
        else:
            matched = self.matched[name]
            groups = [[e for e in batch if id(e) in matched] for _, batch in batches]
            vector = algebra.burst_vector(groups, kleene)  # type: ignore[union-attr]
        totals = {}
        for k, xk in zip(windows, x):
            if algebra.count(xk):
                totals[k] = algebra.burst_total(xk, multiplier, vector)  # type: ignore[union-attr]
        run.root.commit(event, totals)
