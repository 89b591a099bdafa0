"""Strategy ``greta`` (GRETA, each query on its own: one trend graph per stream partition and query), and the
graphs of ``static``'s and ``hamlet``'s non-shared plan: one per stream partition and ``graph_key``, shared by
queries that differ only in windows or aggregates, and one per merged template of queries that share every
position but the end (``partition.merged_groups``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import groupby
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.split import SubPattern
from hamlet.analysis.template import Template, merge_ends
from hamlet.analysis.windows import Window
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra, Projection, shared_algebra
from hamlet.runtime.graph import PartitionClasses, TrendGraph, WindowClasses, placed
from hamlet.runtime.native import CompiledSet, NativeGraph, NativeSet, SetAnswer, kernel_for, set_kernel_for
from hamlet.runtime.partition import (
    LocalTests,
    PartitionRunner,
    graph_key,
    groupings,
    match_key_of,
    matched_events,
    merged_groups,
    merged_tests,
)
from hamlet.stats import EvaluationStats

WindowRun = tuple[str, range, Any]  # (query, a run of its windows, their final aggregate)


class _Windows:
    """One query's windows over a graph it may share with queries of other windows: the open ones, kept
    as disjoint ascending runs [first, last] of consecutive indexes."""

    __slots__ = ("classes", "end", "name", "next_close", "open", "project", "window")

    def __init__(self, query: AnalyzedQuery, classes: WindowClasses, project: Projection | None,
                 end: str | None = None) -> None:  # fmt: skip
        self.name, self.window, self.classes, self.project = query.name, query.window, classes, project
        self.end = end  # the end type whose finals it reads, on a merged template (else None: the graph's)
        self.open: list[list[int]] = []
        self.next_close: Any = None  # end of the oldest open window

    def frontier(self) -> float:
        """The class of the oldest open window (classes below it are closed for this query)."""
        return self.classes.class_of(self.open[0][0])[0] if self.open else math.inf


class QueryRun:
    """The trend graph of one partition for queries that build equal graphs (``graph_key``: one pattern, the
    same predicates; windows and aggregates may differ), driven one timestamp at a time.

    All events of one timestamp are computed before any is committed: equal timestamps are never adjacent
    (GRETA's per-timestamp transactions, §7). Windows close when time reaches their end. Each query's open
    windows close by runs of one window class (graph.py): a short partition in windows sliding every
    minute costs O(classes), not O(windows). ``classes``: the partition's, shared by its runs (default:
    over ``events``); ``projections`` turn the graph's aggregate into each query's own where the graph
    aggregates more (``aggregates.shared_algebra``). ``template``: a merged template of queries that share
    every position but the end (``GraphGroup.template``): each query reads the finals of its own end.
    """

    def __init__(self, queries: Sequence[AnalyzedQuery], algebra: Algebra, events: Sequence[Event],
                 plain_scan: bool = False, classes: PartitionClasses | None = None,
                 projections: Sequence[Projection | None] = (), template: Template | None = None) -> None:  # fmt: skip
        classes = PartitionClasses([e.time for e in events]) if classes is None else classes
        projections = projections or [None] * len(queries)
        ends = [None if template is None else q.pattern.template.end for q in queries]
        self.members = [
            _Windows(q, classes.of(q.window), p, end) for q, p, end in zip(queries, projections, ends)
        ]
        query = queries[0]
        self.query = query
        events = placed(query, events)
        served = tuple({m.classes: None for m in self.members})
        horizon = query.window.within if len(queries) == 1 else max(q.window.within for q in queries)
        part = query.pattern if template is None else SubPattern(query.pattern.pattern, template, ())
        self.root = TrendGraph(query, part, algebra, events, True, plain_scan, served, horizon)
        if template is not None:
            self.root.ends_apart()
        self.graphs_by_type: dict[str, list[TrendGraph]] = {}
        for graph in self.root.graphs():
            for t in graph.template.types:
                self.graphs_by_type.setdefault(t, []).append(graph)

    def advance_runs(self, time: Any) -> Iterator[WindowRun]:
        """Close the windows that end at or before ``time`` (yielding (query, windows, final) for runs of
        windows with the same final), open those of ``time``."""
        closed = False
        for member in self.members:
            if member.next_close is not None and time >= member.next_close:
                yield from self._close(member, member.window.last_ending_by(time))
                closed = True
        if closed:
            self.root.release(min(m.frontier() for m in self.members))
        for member in self.members:
            runs, window = member.open, member.window
            every = window.indexes(time)
            first, stop = every.start, every.stop
            if runs:
                first = max(first, runs[-1][1] + 1)
            if first < stop:
                if runs and runs[-1][1] + 1 == first:
                    runs[-1][1] = stop - 1
                else:
                    runs.append([first, stop - 1])
            if member.next_close is None and runs:
                member.next_close = window.end(runs[0][0])

    def _close(self, member: _Windows, last_closing: int) -> Iterator[WindowRun]:
        runs, name, project = member.open, member.name, member.project
        while runs and runs[0][0] <= last_closing:
            first, last = runs[0]
            through = min(last, last_closing)
            for ks, final in self.root.close_runs(first, through, member.classes, member.end):
                yield name, ks, final if project is None else project(final)
            if through == last:
                del runs[0]
            else:
                runs[0][0] = through + 1
        member.next_close = member.window.end(runs[0][0]) if runs else None

    def advance(self, time: Any) -> Iterator[tuple[str, int, Any]]:
        """``advance_runs`` one window at a time."""
        for name, ks, final in self.advance_runs(time):
            for k in ks:
                yield name, k, final

    def step(self, batch: Sequence[Event]) -> None:
        """Process the events of one timestamp (already ``advance``d to it)."""
        batch = placed(self.query, batch)
        if len(batch) == 1:
            graphs = self.graphs_by_type.get(batch[0].type, ())
            if len(graphs) == 1:  # one event, one graph: nothing else to compute before the commit
                graphs[0].commit(batch[0], graphs[0].compute(batch[0]))
                return
        computed = [(g, e, g.compute(e)) for e in batch for g in self.graphs_by_type.get(e.type, ())]
        # The pattern's graph commits before its negative sub-patterns' (not ``windowed``): a NOT matched at
        # this very time does not precede the trends this time's events start (CONT decides them at commit).
        computed.sort(key=lambda item: not item[0].windowed)
        for graph, event, aggregates in computed:
            graph.commit(event, aggregates)

    def finish_runs(self) -> Iterator[WindowRun]:
        for member in self.members:
            if member.open:
                yield from self._close(member, member.open[-1][1])

    def finish(self) -> Iterator[tuple[str, int, Any]]:
        for name, ks, final in self.finish_runs():
            for k in ks:
                yield name, k, final


def run_partition(queries: Sequence[AnalyzedQuery], algebra: Algebra, events: Sequence[Event],
                  plain_scan: bool = False, classes: PartitionClasses | None = None,
                  projections: Sequence[Projection | None] = (),
                  template: Template | None = None) -> Iterator[WindowRun]:  # fmt: skip
    """(query, windows, final aggregate) for every run of windows of the queries (of one ``graph_key``, or
    of one merged ``template``) with the same final, in which a trend matched; ``events`` sorted by time."""
    run = QueryRun(queries, algebra, events, plain_scan, classes, projections, template)
    for time, batch in groupby(events, key=lambda e: e.time):
        yield from run.advance_runs(time)
        run.step(list(batch))
    yield from run.finish_runs()


@dataclass(frozen=True)
class GraphGroup:
    """Queries of a set that build equal graphs on any partition (``graph_key``), and their shared algebra;
    or those of several such groups that share every position but the end, on one merged ``template``
    (``partition.merged_groups``)."""

    queries: tuple[AnalyzedQuery, ...]
    algebra: Algebra
    projections: tuple[Projection | None, ...]
    key: tuple  # their ``match_key``: the events they read
    native: NativeGraph | None = None  # their graph compiled, where it applies (native.py)
    template: Template | None = None  # their merged template (None: the queries' own, all equal)

    @cached_property
    def positive(self) -> frozenset[str]:
        """The types every trend of the group holds (``AnalyzedQuery.required_types``; on a merged template,
        those every member's trends hold: a partition may end trends of one member and not another's)."""
        return frozenset.intersection(*(frozenset(q.required_types) for q in self.queries))

    @cached_property
    def tests(self) -> LocalTests:
        """The local predicates' tests of the events the group reads (``partition.matched_events``)."""
        return merged_tests(self.queries)

    @cached_property
    def windows(self) -> tuple[Window, ...]:
        return tuple(dict.fromkeys(q.window for q in self.queries))

    def has_windows(self, first: Any, last: Any) -> bool:
        """Whether a window of some query contains a time in [first, last] (``ClippedWindow``s keep only
        some windows: a trip in the Spark job's read-ahead may lie before all of them)."""
        return any(w.indexes(first).start < w.indexes(last).stop for w in self.windows)


def graph_groups(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], share: bool = True,
                 native: bool = False, merge: bool = False) -> list[GraphGroup]:  # fmt: skip
    """The queries by ``graph_key`` (one query per group unless ``share``), with ``merge`` the groups that
    share every position but the end on one merged template (``partition.merged_groups``), compiled where
    ``native`` asks for it and the kernel applies."""
    by_key: dict[Any, list[AnalyzedQuery]] = {}
    for q in queries:
        by_key.setdefault(graph_key(q) if share else q.name, []).append(q)
    parts = merged_groups(list(by_key.values())) if merge else [[members] for members in by_key.values()]
    groups = []
    for part in parts:
        members = [q for equal in part for q in equal]
        template = merge_ends([equal[0].pattern.template for equal in part]) if len(part) > 1 else None
        algebra, projections = shared_algebra([algebras[q.name] for q in members])  # type: ignore[misc]
        kernel = kernel_for(members, algebra, projections, template) if native else None
        key = match_key_of(members)
        groups.append(GraphGroup(tuple(members), algebra, tuple(projections), key, kernel, template))
    return groups


@dataclass
class GretaPlan:
    """What ``run_greta`` makes of a query set that no event changes: its graph groups, compiled where the
    kernel takes them, and the set kernel over them. An evaluation runs one plan at a time (the set kernel
    keeps the sums of the call that runs it): ``Plans`` lends it out and takes it back."""

    groups: list[GraphGroup]
    compiled_set: NativeSet | None


class Plans:
    """The compiled plans of one sharable query set, kept across evaluations (``hamlet.api.PreparedSet``):
    the engine compiles a workload once, not on every call. Besides the queries, a plan depends on how it
    runs (``run_greta``'s flags) and on which sums hold floats (``algebra_kind``). ``lend`` gives an idle
    plan of that kind or builds one; ``take_back`` keeps it for the next evaluation. A plan lent out is in
    no other evaluation's hands (two threads never share one), and one whose evaluation failed is never
    taken back, so no half-summed kernel is reused."""

    KINDS = 16  # idle plans kept at most (a new kind evicts the oldest)

    def __init__(self) -> None:
        self._idle: dict[Hashable, GretaPlan] = {}

    def __getstate__(self) -> dict:
        return {}  # (a compiled plan stays in its process: a pickled or copied workload compiles anew)

    def __setstate__(self, state: dict) -> None:
        self._idle = {}

    def lend(self, kind: Hashable, build: Callable[[], GretaPlan]) -> GretaPlan:
        plan = self._idle.pop(kind, None)  # (one call under the GIL: a plan goes to one caller)
        return plan if plan is not None else build()

    def take_back(self, kind: Hashable, plan: GretaPlan) -> None:
        while len(self._idle) >= self.KINDS:
            self._idle.pop(next(iter(self._idle)), None)
        self._idle[kind] = plan


def algebra_kind(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra]) -> tuple:
    """What a call's events decide of the queries' algebras: the sums kept scaled (their attribute holds
    floats). The rest follows from the queries."""
    return tuple(tuple(sorted(map(repr, getattr(algebras[q.name], "scaled", ())))) for q in queries)


def greta_plan(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], share_graphs: bool,
               native: bool) -> GretaPlan:  # fmt: skip
    groups = graph_groups(queries, algebras, share_graphs, native, merge=share_graphs)
    grouping = {g: i for i, g in enumerate(groupings(queries))}
    return GretaPlan(groups, set_kernel_for(groups, grouping) if native else None)


def run_greta(queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], stats: EvaluationStats,
              plain_scan: bool = False, share_graphs: bool = False, native: bool = True,
              sharing: str = "none", plans: Plans | None = None) -> PartitionRunner:  # fmt: skip
    """Strategy ``greta``: the runner of a query set over its stream partitions, one graph per partition
    and query over the events it matches (GRETA shares a graph among a query's windows, §6); finals by runs
    of windows (see ``hamlet.api.Executor``). With ``share_graphs`` (``hamlet``'s non-shared plan), one
    graph per ``graph_key``: queries that differ only in windows or aggregates share it as windows do, and
    queries that share every position but the end share one graph of their merged template (HAMLET's
    merged template, Figure 3(b), over a shared prefix: ``partition.merged_groups``); GRETA proper keeps
    one graph per query.
    ``native``: run the graphs the compiled kernel takes on it (``native.py``; never in ``plain_scan``, the
    reference mode), the others in Python; the compiled set sums a partition's finals itself when the caller
    numbers its groups (``PartitionRunner``). ``sharing`` ("static", "hamlet"): the compiled set shares
    bursts of the Kleene types its queries share in graphlets (``native.NativeSet.run``); the runner's
    ``shares`` then says that the whole set runs there (partitions the kernel leaves to Python do not
    share). ``plans``: where the set's plans are kept between evaluations (the runner's ``release`` gives
    this one back)."""

    on_kernel = native and not plain_scan
    kind = (share_graphs, on_kernel, algebra_kind(queries, algebras))
    build = partial(greta_plan, queries, algebras, share_graphs, on_kernel)
    plan = build() if plans is None else plans.lend(kind, build)
    groups, compiled_set = plan.groups, plan.compiled_set
    stats.merged_graphs += sum(g.template is not None for g in groups)

    def run(events: list[Event], partition_groups: Sequence[int] | None) -> Iterable[WindowRun]:
        if compiled_set is not None:
            answer = compiled_set.run(events, partition_groups, sharing=sharing)
            if answer is not None:
                return _with_declined(groups, events, answer, stats)
        runs = _greta_partition(groups, events, stats, plain_scan)
        assert runs is not None  # (only a ``whole`` partition can be refused)
        return runs

    def whole(events: list[Event], partition_groups: Sequence[int] | None) -> Iterable[WindowRun] | None:
        if compiled_set is None:  # graphs compiled one by one, if any (predicates the set kernel lacks)
            return _greta_partition(groups, events, stats, plain_scan, whole=True) if compiled else None
        answer = compiled_set.run(events, partition_groups, whole=True, sharing=sharing)
        return None if answer is None else _with_declined(groups, events, answer, stats)  # (none declined)

    compiled = frozenset(q.name for g in groups if g.native is not None for q in g.queries)
    summed = tuple if compiled_set is None else compiled_set.summed
    return PartitionRunner(
        run,
        summed,
        compiled,
        whole,
        shares=compiled_set is not None and sharing != "none",
        compiled_set=None if compiled_set is None else CompiledSet(compiled_set, tuple(groups), sharing),
        release=(lambda: None) if plans is None else partial(plans.take_back, kind, plan),
    )


def _with_declined(
    groups: Sequence[GraphGroup],
    events: list[Event],
    answer: SetAnswer,
    stats: EvaluationStats,
) -> Iterator[WindowRun]:
    """The set kernel's runs, then those of the groups it left to Python."""
    answer.count(stats)
    runs, declined = answer.runs, answer.declined
    in_python = [(groups[i], matched_events(groups[i].queries[0], events, groups[i].tests)) for i in declined]
    stats.python_partitions += bool(in_python)
    return _then_in_python(runs, in_python, events, False)


def _greta_partition(groups: Sequence[GraphGroup], events: list[Event], stats: EvaluationStats,
                     plain_scan: bool, whole: bool = False) -> Iterator[WindowRun] | None:  # fmt: skip
    """The partition on every group's graph: on its compiled graph where it has one and the kernel takes
    the partition, else in Python; with ``whole``, None where the kernel leaves a compiled graph to Python
    (``PartitionRunner.whole``)."""
    read: set[int] = set()
    matched: dict[tuple, tuple[list[Event], set[str]]] = {}  # per ``match_key``: the events, their types
    present = {e.type for e in events}
    compiled: list[WindowRun] = []
    in_python: list[tuple[GraphGroup, list[Event]]] = []
    for group in groups:
        # Every trend holds an event of each required type (all positive types but those under P? or P*), so a
        # partition that lacks one (before or after the local predicates) has no trend; its graph is not built.
        positive = group.positive
        if not present.issuperset(positive) and len(read) == len(events):
            continue  # (``read`` counts the events the queries match: once it holds all, matching can stop)
        found = matched.get(group.key)
        if found is None:
            mine = matched_events(group.queries[0], events, group.tests)
            found = matched[group.key] = (mine, {e.type for e in mine})
            read.update(map(id, mine))
        mine, types = found
        if not mine or not types.issuperset(positive) or not group.has_windows(mine[0].time, mine[-1].time):
            continue
        if group.native is not None:
            runs = group.native.run(mine, events)  # (None: a partition the kernel leaves to Python)
            if runs is not None:
                compiled.extend(runs)
                continue
            if whole:
                return None
        in_python.append((group, mine))
    stats.events += len(read)
    stats.python_partitions += bool(in_python)
    return _then_in_python(compiled, in_python, events, plain_scan)


def _then_in_python(
    runs: list[WindowRun],
    in_python: Sequence[tuple[GraphGroup, list[Event]]],
    events: list[Event],
    plain_scan: bool,
) -> Iterator[WindowRun]:
    """``runs`` (the kernel's), then those of the groups on Python's graphs, each over the events it matches
    (``in_python``), with the partition's window classes."""
    yield from runs
    classes = PartitionClasses([e.time for e in events]) if in_python else None
    for group, mine in in_python:
        yield from run_partition(
            group.queries, group.algebra, mine, plain_scan, classes, group.projections, group.template
        )
