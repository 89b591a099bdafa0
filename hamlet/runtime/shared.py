"""Strategies ``static`` and ``hamlet``: shared trend aggregation over bursts (HAMLET §3.3, §4).

The partition's stream is cut into bursts (Definition 4.1): maximal runs of timestamps that hold only
events of one type E, within one pane (so every event of a burst falls into the same windows). A burst
reaches each query q that reads E as one graphlet-level snapshot x(q, w) per window (Definition 3.9: the
sum of q's predecessor aggregates, plus one if E starts q's trends), and the trends it creates follow
from one factor. With Kleene E+ every event extends all trends ending at earlier events of the burst, and
events of one timestamp never extend each other, so the events of timestamp group g each end
x·Π_{h<g}(1 + m_h) trends and the burst adds (Φ − 1)·x with Φ = Π_g (1 + m_g); without E+ it adds Φ·x with
Φ = Σ_g m_g. m_g counts the events of group g that q matches.

Sharing (HAMLET's shared graphlet): the queries that match the same events — the same local predicates on
E, a *class* — have the same Φ, computed once for all of them; per query only x and the commit are left,
O(1) per window instead of O(b). The shared graphlet holds the events of one class (the unfiltered one if
any); a class that matches other events has a different Φ: each event it matches differently is an
event-level snapshot (Definition 3.11) that corrects the shared factor for that class. ``static`` shares
every burst of a sharable Kleene sub-pattern E+ among all queries containing it; ``hamlet`` decides per
burst and class with the benefit model and the pruning principles (``hamlet.optimizer``). A query that
shares a burst after processing the previous one alone has merged back (§4.2); the reverse is a split.

Per query, a burst is then one snapshot and one commit. Queries of one shape (``shapes.py``: COUNT(*),
no negation, no edge predicates, templates equal up to type names, one window) keep their state in
columns of slots — one slot for all queries with equal sub-patterns up to a position — and take each
burst in one pass over a list; the others keep a ``QueryRun`` each.

What does not depend on the events — shapes, predicates per type, the pane, who shares which Kleene type,
per set of queries a partition can match — is a ``SharingPlan``, built once per evaluation of the set. Per
stream partition ``hamlet`` first weighs what its segments save (bursts applied at once, events taken by
the columns of shape groups) against the shared path's set-up (``CostModel.sharing_pays``): a partition
of short bursts and no shape group to speak of — a trip of a few events in the Spark job — runs on GRETA's
graphs (nothing set up; one graph for queries that differ only in windows or aggregates), and inside a shared partition a burst of
one event that no shape group reads steps through the queries' own graphs. ``static`` shares every
partition.

Queries whose bursts cannot be applied at once (``TrendGraph.closed_form``: edge predicates reaching the
burst's events, aggregates other than COUNT(*), a trailing NOT on them) process those events one by one,
exactly as GRETA does, in every strategy.
"""

from __future__ import annotations

import re
import time as clock
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import groupby
from math import floor, prod
from operator import attrgetter
from typing import Any, Literal

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import pane_size
from hamlet.analysis.workload import sharing_obstacle
from hamlet.events import Event
from hamlet.optimizer.benefit import CostModel, SegmentReaders
from hamlet.optimizer.choice import Candidate, choose_sharing
from hamlet.runtime.aggregates import Algebra
from hamlet.runtime.graph import PartitionClasses
from hamlet.runtime.greta import Plans, QueryRun, run_greta
from hamlet.runtime.native import segment_costs_for
from hamlet.runtime.partition import PartitionRunner, Run, match_key, matched_events
from hamlet.runtime.shapes import Shape, ShapeGroup, shape_of
from hamlet.stats import EvaluationStats

Sharing = Literal["static", "hamlet"]
FilterKey = tuple[str, ...]  # the texts of a query's local predicates on one type: () for none
_SINGLE_TYPE_KLEENE = re.compile(r"^(\w+)\+$")
_type_of = attrgetter("type")


# A burst (event type, its timestamp groups) or, type None, one timestamp with events of several types.
Segment = tuple[str | None, list[tuple[Any, list[Event]]]]


def _spans(events: list[Event], pane_of: Callable[[Any], int]) -> Iterator[tuple[str | None, int, int]]:
    """The partition cut into segments, as (type, i, j) for events[i:j]: bursts (Definition 4.1: maximal
    runs of timestamps holding only events of one type, within one pane) and, type None, timestamps with
    events of several types. Indexes only: the sharing decision reads every partition's segments, and most
    partitions (trips) never pay for building them."""
    burst_type: str | None = None  # the burst being read: events[start:i] in pane ``burst_pane``
    burst_pane, start = 0, 0
    i, n = 0, len(events)
    while i < n:
        time, event_type = events[i].time, events[i].type
        j, mixed = i + 1, False
        while j < n and events[j].time == time:
            mixed = mixed or events[j].type != event_type
            j += 1
        if mixed:
            if burst_type is not None:
                yield burst_type, start, i
                burst_type = None
            yield None, i, j
        else:
            pane = pane_of(time)
            if burst_type != event_type or pane != burst_pane:
                if burst_type is not None:
                    yield burst_type, start, i
                burst_type, burst_pane, start = event_type, pane, i
        i = j
    if burst_type is not None:
        yield burst_type, start, n


def _segments(events: list[Event], pane_of: Callable[[Any], int]) -> Iterator[Segment]:
    """The partition's segments (``_spans``) with their events by timestamp."""
    for event_type, i, j in _spans(events, pane_of):
        yield event_type, [(t, list(b)) for t, b in groupby(events[i:j], key=lambda e: e.time)]


def run_shared(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], stats: EvaluationStats,
               sharing: Sharing = "hamlet", trace: list[dict[str, Any]] | None = None,
               model: CostModel | None = None, native: bool = True,
               plans: Plans | None = None) -> PartitionRunner:  # fmt: skip
    """The runner of a sharable query set over its stream partitions; ``trace`` (if given) receives every
    shared burst's graphlet-level snapshot values, for inspection and tests; ``model``: the costs the
    optimizer decides by (default: this machine's, ``CostModel.calibrated``); ``native``: the non-shared
    plan's graphs on the compiled kernel where it applies (``greta.run_greta``); ``plans``: where its
    compiled plan is kept between evaluations (``greta.Plans``)."""
    # The non-shared plan still shares a graph among queries that differ only in windows or aggregates.
    # Where the compiled kernel takes the whole set, it shares the bursts itself (native/src/burst.rs), unless
    # the caller asks for this module's path (a trace of its snapshots, or its cost model).
    kernel_shares = sharing if trace is None and model is None else "none"
    alone = run_greta(
        queries, algebras, stats, share_graphs=True, native=native, sharing=kernel_shares, plans=plans
    )
    if alone.shares or any(sharing_obstacle(q) is not None for q in queries):
        return alone  # (a query that shares with none, e.g. under NEXT or CONT, is a set of its own)
    plan = SharingPlan(queries, algebras, sharing, model or CostModel.calibrated(), native, alone.compiled)

    def run(events: list[Event], groups: Sequence[int] | None) -> Iterable[Run]:
        layout = plan.layout(events)
        if not layout.queries:  # every query lacks one of its types here: no trend (``layout``)
            return ()
        if sharing == "hamlet":
            saved, compiled_steps, bursts = plan.weigh(layout, events)
            queries = len(layout.queries)
            if not plan.model.pays(saved, compiled_steps, queries):
                # No burst here is worth a shared graphlet against GRETA's graphs as they run: the non-shared
                # plan, on the kernel if it takes the whole partition, else weighed again against Python's.
                runs = alone.whole(events, groups) if compiled_steps else None
                if runs is not None or not plan.model.pays(saved, 0, queries):
                    stats.bursts += bursts
                    return runs if runs is not None else alone(events, groups)
        stats.python_partitions += 1  # (this module's shared graphlets are Python's)
        return _SharedRun(plan, layout, events, stats, trace).run(list(_segments(events, plan.pane_of)))

    return PartitionRunner(run, alone.summed, alone.compiled, release=alone.release)


class SharingPlan:
    """What the shared execution of a query set needs and the events do not change: shapes, local
    predicates per type, the pane, the Kleene types that queries share, which bursts apply at once — and,
    per set of queries a partition can match, who reads each type (``Layout``). Built once per evaluation
    of the set, used by every partition."""

    def __init__(self, queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], sharing: Sharing,
                 model: CostModel, native: bool = False, compiled: frozenset[str] = frozenset()) -> None:  # fmt: skip
        self.queries, self.algebras, self.sharing, self.model = queries, algebras, sharing, model
        self.native = native  # weigh partitions on the compiled kernel (``Layout.segment_costs``)
        self.compiled = compiled  # queries whose graphs the non-shared plan runs compiled
        self.shape = {q.name: shape_of(q, algebras[q.name]) for q in queries}
        # (the types every trend holds: not those of an optional part or of only one operand of OR / AND)
        self.positive = [(q, frozenset(q.required_types)) for q in queries]
        # Local predicates per (query, type); queries with the same ones match the same events.
        self.tests = {
            (q.name, t): tuple(p.test for p in q.local_predicates_of(t)) for q in queries for t in q.types
        }
        self.filter_key = {
            (q.name, t): tuple(p.text for p in q.local_predicates_of(t)) for q in queries for t in q.types
        }  # fmt: skip
        self.closed_form = {(q.name, t): q.burst_obstacle(t) is None for q in queries for t in q.types}
        self.match_key = {q.name: match_key(q) for q in queries}
        self.pane = pane_size([d for q in queries for d in (q.window.within, q.window.slide)])
        self.whole_pane = int(self.pane) if self.pane.denominator == 1 else 0  # int arithmetic on int times
        self.layouts: dict[frozenset[str], Layout] = {}  # by the names of the queries that can match
        self.layout_of_types: dict[frozenset[str], Layout] = {}  # by the types a partition holds

    def pane_of(self, time: Any) -> int:
        whole = self.whole_pane
        if whole and type(time) is int:
            return time // whole
        # Exactly (a float time over a Fraction pane would be divided in floats and may round into the next
        # pane: then a burst spans two panes' windows).
        return floor(Fraction(time) / self.pane)

    def segment_readers(self, layout: Layout, events: list[Event]) -> tuple[list[SegmentReaders], int]:
        """What ``CostModel.sharing_pays`` weighs, per segment of the partition (``_spans``, in order): a
        burst's events and readers, or one reader entry per event of a timestamp with several types; and
        how many bursts are of a type queries share."""
        types, sharers = layout.types, layout.sharers
        out: list[SegmentReaders] = []
        bursts = 0
        for event_type, i, j in _spans(events, self.pane_of):
            if event_type is None:  # one timestamp, several types: each event on its own
                for e in events[i:j]:
                    if (r := types.get(e.type)) is not None:
                        out.append((1, 0, r.group_members, r.group_windows, r.compiled))
                continue
            bursts += event_type in sharers
            if (r := types.get(event_type)) is not None:
                out.append((j - i, len(r.closed_runs), r.group_members, r.group_windows, r.compiled))
        return out, bursts

    def weigh(self, layout: Layout, events: list[Event]) -> tuple[float, int, int]:
        """What ``CostModel.pays`` weighs of a partition: the GRETA steps its segments save the shared path
        (``CostModel.saved_steps``, summed in order), their steps on compiled graphs, and how many bursts are
        of a type queries share; on the kernel where it takes the partition (``native.segment_costs_for``),
        the same sums in the same order."""
        weighed = layout.segment_costs.saved(events) if layout.segment_costs is not None else None
        if weighed is not None:
            return weighed
        readers, bursts = self.segment_readers(layout, events)
        return (*self.model.weigh(readers), bursts)

    def layout(self, events: list[Event]) -> Layout:
        """The layout of the queries that can match in a partition of ``events``: patterns have no optional
        parts, so a query one of whose positive types is missing has no trend there and is left out."""
        present = frozenset(map(_type_of, events))
        found = self.layout_of_types.get(present)
        if found is None:
            active = [q for q, positive in self.positive if positive <= present]
            key = frozenset(q.name for q in active)
            found = self.layouts.get(key)
            if found is None:
                found = self.layouts[key] = Layout(self, active)
            self.layout_of_types[present] = found
        return found


class Layout:
    """A set of queries of a ``SharingPlan``: shape groups, queries on their own, readers per type."""

    def __init__(self, plan: SharingPlan, queries: Sequence[AnalyzedQuery]) -> None:
        self.queries = queries
        by_shape: dict[Shape, list[AnalyzedQuery]] = {}
        self.alone: list[AnalyzedQuery] = []
        for q in queries:
            shape = plan.shape[q.name]
            (self.alone if shape is None else by_shape.setdefault(shape, [])).append(q)
        self.groups = [ShapeGroup(shape, members) for shape, members in by_shape.items()]  # no window open
        # E of every Kleene sub-pattern E+ that two or more queries of the set contain: its bursts share.
        kleene: dict[str, list[str]] = {}
        for q in queries:
            for sub in q.kleene_subpatterns:
                if m := _SINGLE_TYPE_KLEENE.match(sub):
                    kleene.setdefault(m.group(1), []).append(q.name)
        self.sharers = {t: set(names) for t, names in kleene.items() if len(names) > 1}
        self.types = {t: _TypeReaders(t, queries, plan, self) for t in {t for q in queries for t in q.types}}
        readers = {
            t: (len(r.closed_runs), r.group_members, r.group_windows, r.compiled)
            for t, r in self.types.items()
        }
        self.segment_costs = (
            segment_costs_for(readers, self.sharers, plan.pane, plan.model) if plan.native else None
        )


class _SharedRun:
    def __init__(self, plan: SharingPlan, layout: Layout, events: list[Event], stats: EvaluationStats,
                 trace: list[dict[str, Any]] | None) -> None:  # fmt: skip
        self.model, self.tests, self.types = plan.model, plan.tests, layout.types
        if any(e.type not in self.types for e in events):  # read only by queries that cannot match here
            events = [e for e in events if e.type in self.types]
        self.events, self.stats, self.sharing, self.trace = events, stats, plan.sharing, trace
        # Queries of one shape run together in columns (``shapes.py``); the others each keep a QueryRun.
        self.groups = [group.fresh() for group in layout.groups]
        self.runs: dict[str, QueryRun] = {}
        self.matched: dict[str, set[int]] = {}
        classes = PartitionClasses([e.time for e in events])
        by_key: dict[tuple, tuple[list[Event], set[int]]] = {}  # queries with one match_key match alike
        for q in layout.alone:
            key = plan.match_key[q.name]
            if key not in by_key:
                mine = matched_events(q, events)
                by_key[key] = mine, set(map(id, mine))
            mine, self.matched[q.name] = by_key[key]
            self.runs[q.name] = QueryRun([q], plan.algebras[q.name], mine, classes=classes)
        stats.events += self._events_read()
        self.previously_shared: dict[str, set[str]] = {}

    def _events_read(self) -> int:
        """Events that at least one query's graph reads (passes its local predicates)."""
        read = 0
        for e in self.events:
            readers = self.types[e.type]
            read += readers.any_unfiltered or any(
                all(test(e) for test in tests) for tests in readers.all_filters
            )
        return read

    def run(self, segments: Sequence[Segment]) -> Iterator[tuple[str, int, Any]]:
        for event_type, batches in segments:
            if event_type is None:
                time, batch = batches[0]
                yield from self._mixed(time, batch)
            elif event_type in self.types:
                yield from self._burst(event_type, batches)
        for run in self.runs.values():
            yield from run.finish()
        for group in self.groups:
            yield from group.finish()

    def _one_by_one(
        self, name: str, batches: Sequence[tuple[Any, list[Event]]]
    ) -> Iterator[tuple[str, int, Any]]:
        run, matched = self.runs[name], self.matched[name]
        for time, batch in batches:
            mine = [e for e in batch if id(e) in matched]
            if mine:
                yield from run.advance(time)
                run.step(mine)

    def _mixed(self, time: Any, batch: list[Event]) -> Iterator[tuple[str, int, Any]]:
        """A timestamp with events of several types: no burst, every query steps on its own."""
        for name in self.runs:
            yield from self._one_by_one(name, [(time, batch)])
        by_type: dict[str, list[Event]] = {}
        for e in batch:
            by_type.setdefault(e.type, []).append(e)
        for group in self.groups:
            reads = []
            for event_type, events in by_type.items():
                for position, slots in group.slots.get(event_type, {}).items():
                    members = group.slot_members[position]
                    counts = [
                        self._matches(group.names[members[j][0]], event_type, [events])[0] for j in slots
                    ]
                    reads.append((position, slots, counts))
            if reads:
                yield from group.advance(time)
                group.step(time, reads)

    def _matches(self, name: str, event_type: str, groups: Sequence[list[Event]]) -> list[int]:
        tests = self.tests[(name, event_type)]
        if not tests:
            return [len(g) for g in groups]
        return [sum(1 for e in g if all(test(e) for test in tests)) for g in groups]

    def _burst(
        self, event_type: str, batches: Sequence[tuple[Any, list[Event]]]
    ) -> Iterator[tuple[str, int, Any]]:
        readers = self.types[event_type]
        for name in readers.sequential:
            yield from self._one_by_one(name, batches)
        if not readers.closed:
            return
        if (
            self.sharing == "hamlet"
            and not readers.group_reads
            and len(batches) == 1
            and len(batches[0][1]) == 1
        ):
            # A burst of one event read by no shape group: nothing to share, and a query's own step is
            # cheaper than a commit. The shared graphlet (if any) goes on with the next burst: neither a
            # split nor a merge.
            self.stats.bursts += bool(readers.sharer_classes)
            for name, _ in readers.closed_runs:
                yield from self._one_by_one(name, batches)
            return
        groups = [batch for _, batch in batches]
        sizes = [len(batch) for batch in groups]
        self._vectors: dict[tuple, Any] = {}
        # Matched events per timestamp group, once per class of queries with the same local predicates.
        flags = {key: [[all(test(e) for test in tests) for e in g] for g in groups]
                 for key, tests in readers.filters.items()}  # fmt: skip
        counts: dict[FilterKey, list[int]] = {key: [sum(f) for f in fs] for key, fs in flags.items()}
        counts[()] = sizes
        shared, base = self._choose(event_type, readers, counts, flags)
        factors: dict[FilterKey, int] = {}

        def multiplier(key: FilterKey, kleene: bool, share: bool) -> int:
            """μ of a class (module docstring): the same for every query that matches the same events."""
            mine = counts[key]
            if not kleene:
                return sum(mine)
            if key not in factors:
                factors[key] = prod(1 + c for c in mine)
            if not share or key == base:
                return factors[key] - 1
            # Event-level snapshots: correct the shared factor on the groups where this class differs.
            if base not in factors:
                factors[base] = prod(1 + m for m in counts[base])
            differ = [(m, c) for m, c in zip(counts[base], mine) if m != c]
            return factors[base] // prod(1 + m for m, _ in differ) * prod(1 + c for _, c in differ) - 1

        for name, key in readers.closed_runs:
            if any(counts[key]):
                kleene = self.runs[name].root.is_kleene(event_type)
                mu = multiplier(key, kleene, key in shared and name in readers.sharers)
                yield from self._apply(name, event_type, batches, counts[key], mu, kleene, key)
        time = batches[0][0]
        for g, position, classes in readers.group_reads:
            group = self.groups[g]
            yield from group.advance(time)
            kleene = group.kleene[position]
            for key, sharing, slots in classes:
                if not any(counts[key]):
                    continue
                if self.trace is not None and sharing and key in shared:
                    self._trace(event_type, group, position, slots, time)
                group.apply(time, position, slots, multiplier(key, kleene, sharing and key in shared))

    def _trace(self, event_type: str, group: ShapeGroup, position: int, slots: list[int], time: Any) -> None:
        assert self.trace is not None
        if not (self.trace and self.trace[-1]["type"] == event_type):
            return
        snapshots = group.snapshots(time, position, slots)
        for j, slot in enumerate(slots):
            for i in group.slot_members[position][slot]:
                self.trace[-1]["snapshot"][group.names[i]] = {k: xs[j] for k, xs in snapshots.items()}

    def _choose(self, event_type: str, readers: _TypeReaders, counts: dict[FilterKey, list[int]],
                flags: dict[FilterKey, list[list[bool]]]) -> tuple[set[FilterKey], FilterKey]:  # fmt: skip
        """The classes of queries (same local predicates on the burst's type) that share this burst, and
        the class whose matched events the shared graphlet holds (the others differ by event-level
        snapshots). Queries of one class match the same events: the pruning principles classify them alike."""
        if not readers.sharer_classes:
            return set(), ()
        started = clock.perf_counter()
        base = readers.base
        sizes = counts[()]
        b, groups = sum(sizes), len(sizes)
        base_counts = counts[base]
        candidates = []
        for key, names in readers.sharer_classes.items():
            mine = counts[key]
            if not any(mine):
                continue
            # Events this class matches differently from the shared graphlet: its event-level snapshots.
            differ = sum(abs(m - c) for m, c in zip(base_counts, mine)) if key != base else 0
            candidates.append(Candidate(key, bool(key), differ, 1, len(names)))
        if self.sharing == "static" or all(c.rejected == 0 for c in candidates):
            # Static shares always; with no snapshot to introduce, so does hamlet (Theorem 4.3), model unasked.
            shared = {c.name for c in candidates} if sum(c.queries for c in candidates) > 1 else set()
        else:
            shared = choose_sharing(candidates, b, groups, self.model)
        stats = self.stats
        stats.decision_seconds += clock.perf_counter() - started
        stats.bursts += 1
        shared_queries = {name for key in shared for name in readers.sharer_classes[key]}
        if shared:
            stats.shared_bursts += 1
            stats.graphlet_snapshots += 1
            differing = [key for key in shared if key != base]
            if differing:
                base_flags = flags.get(base)
                stats.event_snapshots += sum(
                    1 for g, size in enumerate(sizes) for j in range(size)
                    if any(flags[key][g][j] != (base_flags[g][j] if base_flags else True) for key in differing)
                )  # fmt: skip
        # One split when queries leave the shared graphlet, one merge when queries (re)join it (§4.2).
        before = self.previously_shared.get(event_type, set())
        stats.splits += bool(before - shared_queries)
        stats.merges += bool(shared_queries - before)
        self.previously_shared[event_type] = shared_queries
        if shared and self.trace is not None:
            self.trace.append({"type": event_type, "queries": sorted(shared_queries), "snapshot": {}})
        return shared, base

    def _apply(self, name: str, event_type: str, batches: Sequence[tuple[Any, list[Event]]], counts: list[int],
               multiplier: int, kleene: bool, filter_key: FilterKey) -> Iterator[tuple[str, int, Any]]:  # fmt: skip
        """Commit a burst to one query: each window's running total (and final, at an END type) grows by
        ``multiplier`` times the graphlet-level snapshot x, plus what the burst's own values add."""
        run = self.runs[name]
        first = next(i for i, c in enumerate(counts) if c)
        time, batch = batches[first]
        event = next(e for e in batch if id(e) in self.matched[name])
        yield from run.advance(time)
        windows = run.root.windows(time)  # window classes (graph.py): one state per class of windows
        x = run.root.snapshot(event, windows)
        if (
            self.trace is not None
            and self.trace
            and self.trace[-1]["type"] == event_type
            and name in self.trace[-1]["queries"]
        ):
            self.trace[-1]["snapshot"][name] = dict(zip(windows, x))
        algebra = run.root.algebra
        # Queries that match the same events (one class) and aggregate alike share the burst's vector too.
        fields = tuple(getattr(algebra, "fields", ()))
        key = (type(algebra), fields, frozenset(getattr(algebra, "scaled", ())), kleene, filter_key)
        if key not in self._vectors:
            if not filter_key:
                groups = [b for _, b in batches]
            else:
                matched = self.matched[name]
                groups = [[e for e in batch if id(e) in matched] for _, batch in batches]
            self._vectors[key] = algebra.burst_vector(groups, kleene)  # type: ignore[union-attr]
        vector = self._vectors[key]
        totals = {}
        for k, xk in zip(windows, x):
            if algebra.count(xk):
                totals[k] = algebra.burst_total(xk, multiplier, vector)  # type: ignore[union-attr]
        run.root.commit(event, totals)


class _TypeReaders:
    """Who reads events of one type, and how (once per type and ``Layout``, used by every burst of it).
    Shape groups are referred to by their index in the layout."""

    def __init__(
        self, event_type: str, queries: Sequence[AnalyzedQuery], plan: SharingPlan, layout: Layout
    ) -> None:
        readers = [q for q in queries if event_type in q.types]
        keys = {q.name: plan.filter_key[(q.name, event_type)] for q in readers}
        self.any_unfiltered = any(not key for key in keys.values())
        self.all_filters = list(
            {keys[q.name]: plan.tests[(q.name, event_type)] for q in readers if keys[q.name]}.values()
        )
        in_group = {name for g in layout.groups for name in g.names}
        alone = [q.name for q in readers if q.name not in in_group]
        self.sequential = [name for name in alone if not plan.closed_form[(name, event_type)]]
        self.closed_runs = [(name, keys[name]) for name in alone if plan.closed_form[(name, event_type)]]
        closed = {name for name, _ in self.closed_runs} | (in_group & set(keys))
        self.closed = bool(closed)
        self.filters = {keys[name]: plan.tests[(name, event_type)] for name in closed if keys[name]}
        self.sharers = layout.sharers.get(event_type, set()) & closed
        # Sharers by class (same local predicates on this type); the shared graphlet holds the events of
        # the unfiltered class if there is one, else of the largest class.
        self.sharer_classes: dict[FilterKey, list[str]] = {}
        for name in sorted(self.sharers):
            self.sharer_classes.setdefault(keys[name], []).append(name)
        self.base: FilterKey = max(self.sharer_classes, key=lambda k: (k == (), len(self.sharer_classes[k])),
                                   default=())  # fmt: skip
        # Per shape group (index) and position: its slots by (class, sharers or not), each class one pass.
        self.group_reads: list[tuple[int, int, list[tuple[FilterKey, bool, list[int]]]]] = []
        for g, group in enumerate(layout.groups):
            for position, slots in group.slots.get(event_type, {}).items():
                classes: dict[tuple[FilterKey, bool], list[int]] = {}
                for slot in slots:
                    slot_names = [group.names[i] for i in group.slot_members[position][slot]]
                    classes.setdefault(
                        (keys[slot_names[0]], all(n in self.sharers for n in slot_names)), []
                    ).append(slot)
                self.group_reads.append((g, position, [(k, s, m) for (k, s), m in classes.items()]))
        # For the set-up decision: members of shape groups that read this type, over all (group, position)
        # reads, and the windows per event those reads update (a group keeps columns per window).
        self.group_members = sum(len(layout.groups[g].slot_members[p][slot])
                                 for g, p, classes in self.group_reads for _, _, slots in classes for slot in slots)  # fmt: skip
        self.group_windows = sum(layout.groups[g].window.per_event() for g, _, _ in self.group_reads)
        self.compiled = sum(q.name in plan.compiled for q in readers)  # readers whose own graphs run compiled
