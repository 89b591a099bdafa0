"""The GRETA graph of one sub-pattern in one stream partition (GRETA §4.2, §5.2, §6).

Events are vertices; edges are never stored: when an event arrives, its predecessor sources hand over
the combined aggregates of its predecessor events, per window, and the event's own aggregate follows
(``Algebra.extend``). The graph of the query's positive pattern keeps one aggregate per window an event
falls into (windows share one graph, GRETA §6) and a final aggregate per window from its END events. The
graph of a negative sub-pattern needs no windows: it tracks the latest start of its matches, which its
parent reads as a threshold:

* middle ``SEQ(P1, NOT N, P2)``: an end(P1) event x may precede a start(P2) event only if x.time ≥ L;
* leading ``SEQ(NOT N, P)``: a START event starts a trend in window w only if L < w.start;
* trailing ``SEQ(P, NOT N)``: an END event counts in window w only if its time ≥ L at the window's end,

where L is the latest start of an N match completed before the time in question.

Windows that hold the same events of the partition share their state (one aggregate per event and source
for all of them): window k holds the events with time in [start(k), end(k)), and an event's aggregate in k
depends only on its predecessors in k, i.e. on the events at or after start(k) — so on the class
c(k) = #{events with time < start(k)}, not on k. A partition of a few events in windows of 30 min sliding
every minute has a handful of classes among the 30 windows of an event. A class is keyed by c itself, which
does not depend on WITHIN or SLIDE: queries that differ only in their windows (and aggregates) share one
graph (``partition.graph_key``), each closing its own windows on the classes they fall into. What reads a
window's start (a leading NOT: L < start(k)) reads it from c, since L is the time of one of the events and
no event lies between the (c−1)-th event and start(k). The finals of a class grow as its windows close one
after the other, and the class is dropped once no query has a window of it open. Trailing negation and
window ends read a window's end: they are applied at close.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from functools import partial
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.split import SubPattern
from hamlet.analysis.windows import Window
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra, ConjunctionAlgebra, LatestStartAlgebra
from hamlet.runtime.dominance import LongerTrends, SplitAlgebra, dominance_applies
from hamlet.runtime.reaches import Reaches
from hamlet.runtime.sources import (
    Admits,
    IndexedSource,
    QueueSource,
    RunningSource,
    ScanSource,
    Source,
    Threshold,
    index_keys,
)

GLOBAL_WINDOW = (0,)


class TrendGraph:
    def __init__(self, query: AnalyzedQuery, part: SubPattern, algebra: Algebra, events: Sequence[Event],
                 windowed: bool, plain_scan: bool = False, classes: Sequence[WindowClasses] = (),
                 horizon: Any = None) -> None:  # fmt: skip
        """``plain_scan`` makes every transition use the general scan (GRETA's own algorithm): the other
        sources are optimisations, and tests hold them to the scan's results. ``classes``: the window
        classes, over the times of (a superset of) ``events``, of the windows of every query the graph
        serves (default: ``query``'s); ``horizon``: their longest WITHIN (default: ``query``'s)."""
        self.query = query
        self.plain_scan = plain_scan
        # A position template (automaton.py) replaces the root's type template: its events come ``placed``.
        self.template = query.states.template if windowed and query.states is not None else part.template
        self.algebra = algebra
        self.windowed = windowed
        self.children = [
            (
                negation,
                TrendGraph(
                    query, negation.part, LatestStartAlgebra(), events, False, plain_scan, (), horizon
                ),
            )
            for negation in part.negations
        ]
        self.latest_match_start: Any = None  # for a negative sub-pattern: L, the latest start of a match
        # (a NOT first or last in an operand of OR / AND holds at that operand's start or end states only:
        # ``StateTemplate.start_guards``, ``StateTemplate.trailing``)
        states = query.states if windowed else None
        apart = states is not None and states.operands > 1
        self.leading = [g for n, g in self.children if n.previous is None and not apart]
        self.trailing = [g for n, g in self.children if n.following is None and not apart]
        self.trailing_limit = _latest_of(self.trailing)
        self.start_guards = {
            state: (guard, [self.children[k][1] for k in guard.negations])
            for state, guard in (states.start_guards.items() if states is not None else ())
        }
        self.operand_trailing = [
            _latest_of(self.children[k][1] for k in ks)
            for ks in (states.trailing if states is not None else ())
        ]
        # The matching semantics apply to the trends of the query's pattern, not to the matches of its
        # negative sub-patterns (Definition 2.2 negates matches_any(N, I)).
        self.semantics = query.semantics if windowed else "ANY"
        exact_scan = (
            plain_scan or self.semantics != "ANY"
        )  # NEXT and CONT choose among the predecessor events
        self.incoming: dict[str, list[Source]] = {t: [] for t in self.template.types}
        self.outgoing: dict[str, list[Source]] = {t: [] for t in self.template.types}
        horizon = query.window.within if horizon is None else horizon
        running: dict[str, RunningSource] = {}  # plain transitions from one type share its running totals
        for transition in self.template.transitions:
            source, target = transition.source, transition.target
            threshold, admits = self._guard(part, source, target)
            src = _choose_source(
                query, source, target, algebra, events, threshold, admits, exact_scan, horizon
            )
            if src is None:
                if source not in running:
                    running[source] = RunningSource(source, algebra)
                    self.outgoing[source].append(running[source])
                src = running[source]
            else:
                self.outgoing[source].append(src)
            self.incoming[target].append(src)
        self.sources = [s for ss in self.outgoing.values() for s in ss]
        # Final aggregates per window class; with a trailing NOT, END contributions wait for the window's end.
        self.finals: dict[int, Any] = {}
        # Per end type, the finals its events add to: all the same unless ``ends_apart``.
        self.finals_of: dict[str, dict[int, Any]] = dict.fromkeys(self.template.ends, self.finals)
        self.pending_ends: dict[int, list[tuple[Any, str, Any]]] = {}  # class → (time, end state, aggregate)
        self.trailing_results: dict[int, tuple[int, Any, Any]] = {}  # class → (ends seen, limits, result)
        if windowed and not classes:
            classes = (WindowClasses(query.window, [e.time for e in events]),)
        self.classes = tuple(classes) if windowed else ()
        self.times = self.classes[0].times if self.classes else ()
        self.live: deque[int] = deque()  # the classes in use, ascending
        # What the finals add: the algebra's aggregates (under NEXT on a position template, each node's are
        # split by the states a longer trend may stand at: dominance.py, and only some parts are final).
        self.final_algebra = algebra
        self.edges: SemanticsEdges | LongerTrends | None = None
        if self.semantics == "NEXT" and dominance_applies(query.states):
            assert query.states is not None
            self.algebra = SplitAlgebra(algebra)  # type: ignore[assignment]
            self.edges = LongerTrends(self.incoming, query.states, algebra, horizon)
        elif self.semantics != "ANY":
            self.edges = SemanticsEdges(self.semantics, self.incoming, self.times, horizon)
        # ``hamlet trends`` (trends.py) keeps the edges of the root graph to walk its trends; None: not kept.
        self.recorder: Any = None

    def _guard(self, part: SubPattern, source: str, target: str) -> tuple[Threshold | None, Admits | None]:
        """What the NOTs between two parts make of a transition: the latest match start a predecessor must
        be at or after, where only the absence of their matches takes it; else a test of a predecessor's
        time against each NOT's (a position template's ``automaton.Guard``)."""
        if part.places:  # (a NOT's graph over places: the NOTs its pairs of places cross)
            return _latest_of(self.children[k][1] for k in part.guards.get((source, target), ())), None
        states = self.query.states
        if states is None or self.template is part.template:  # GRETA's: the NOTs between its two types
            return _latest_of(
                g for n, g in self.children if (n.previous, n.following) == (source, target)
            ), None
        guard = states.guards.get((source, target))
        if guard is None:
            return None, None
        graphs = [self.children[k][1] for k in guard.negations]
        if guard.outcomes == {0}:
            return _latest_of(graphs), None

        def admits(time: Any) -> bool:
            latest = (g.latest_match_start for g in graphs)
            return guard.admits([limit is not None and time < limit for limit in latest])

        return None, admits

    def ends_apart(self) -> None:
        """Each end type's finals on their own: on a merged template (``greta.GraphGroup.template``) each
        query reads only the trends that end at its own end type."""
        self.finals_of = {t: {} for t in self.template.ends}

    def graphs(self) -> Iterator[TrendGraph]:
        yield self
        for _, child in self.children:
            yield from child.graphs()

    def windows(self, time: Any) -> Sequence[int]:
        """The classes of the windows (of every query served) that contain ``time``, ascending."""
        classes = self.classes
        if not classes:
            return GLOBAL_WINDOW
        if len(classes) == 1:
            labels = classes[0].labels(time)
        else:
            labels = sorted({c for windows in classes for c in windows.labels(time)})
        # A class not yet in use is the newest (c = #events before ``time``): appending keeps ``live`` sorted.
        live = self.live
        if labels and (not live or labels[-1] > live[-1]):
            live.extend(label for label in labels if not live or label > live[-1])
        return labels

    def predecessors(self, event: Event, windows: Sequence[int]) -> list[Any]:
        """The combined aggregate of the event's predecessor events, per window."""
        if self.edges is not None or self.recorder is not None:
            if self.edges is not None:
                chosen = self.edges.choose(event)
            else:  # (the recorder asks for the plain scan: every source is a ScanSource)
                chosen = [found for src in self.incoming[event.type] for found in src.matching(event)]  # type: ignore[union-attr]
            if self.recorder is not None:
                self.recorder.keep(event, chosen)
                if isinstance(self.edges, LongerTrends):
                    self.recorder.moves[id(event)] = self.edges.moves
            return _summed(chosen, windows, self.algebra)
        sources = self.incoming[event.type]
        if len(sources) == 1:
            return sources[0].collect(event, windows)
        algebra = self.algebra
        accs = [algebra.zero] * len(windows)
        for src in sources:
            accs = [algebra.add(a, b) for a, b in zip(accs, src.collect(event, windows))]
        return accs

    def compute(self, event: Event) -> dict[int, Any]:
        """The aggregates of ``event`` per window, from what is committed (all earlier timestamps)."""
        windows = self.windows(event.time)
        if not windows:
            return {}
        extend = self.algebra.extend
        out: dict[int, Any] = {}
        for k, acc in zip(windows, self.predecessors(event, windows)):
            agg = extend(acc, event, self._starts(event.type, k))
            if agg is not None:
                out[k] = agg
        if self.recorder is not None:
            self.recorder.starts[id(event)] = {k: self._starts(event.type, k) for k in windows}
            if event.type in self.template.ends:
                self.recorder.finals[id(event)] = out
        return out

    # ---- bursts (HAMLET): a run of same-type events applied at once -------------------------------------

    def closed_form(self, event_type: str) -> bool:
        """Whether a burst of ``event_type`` events can be applied at once (``AnalyzedQuery.burst_obstacle``);
        the plain-scan test mode never does."""
        return self.windowed and not self.plain_scan and self.query.burst_obstacle(event_type) is None

    def is_kleene(self, event_type: str) -> bool:
        return self.template.transition(event_type, event_type) is not None

    def snapshot(self, event: Event, windows: Sequence[int]) -> list[Any]:
        """The graphlet-level snapshot x of a burst (HAMLET Definition 3.9) per window: what one event of
        the burst gets from outside it — its predecessors before the burst, and one if it starts trends."""
        started = self.algebra.started  # type: ignore[union-attr]
        return [started(acc) if self._starts(event.type, k) else acc
                for k, acc in zip(windows, self.predecessors(event, windows))]  # fmt: skip

    def _starts(self, state: str, c: int) -> bool:
        """Whether an event at ``state`` starts trends in the windows of class c: a start state, where no
        leading NOT has a match in them, and where the operands' own leading NOTs start at this state."""
        if state not in self.template.starts or any(self._matched_since(g, c) for g in self.leading):
            return False
        guarded = self.start_guards.get(state)
        if guarded is None:
            return True
        guard, graphs = guarded
        return guard.admits([self._matched_since(g, c) for g in graphs])

    def _matched_since(self, negation: TrendGraph, c: int) -> bool:
        """Whether a match of a negative sub-pattern started in the windows of class c, before now:
        L ≥ start(k) ⇔ L > the (c−1)-th event's time (L is an event's time, none lies in between)."""
        latest = negation.latest_match_start
        if latest is None:
            return False
        if not self.classes:  # a negative sub-pattern's graph has one global window, starting at 0
            return latest >= 0
        return not c or latest > self.times[c - 1]

    def commit(self, event: Event, aggregates: dict[int, Any]) -> None:
        edges = self.edges
        if edges is not None:
            edges.commit(event, bool(aggregates))
        if not aggregates:
            return
        onward = aggregates
        if edges is not None and edges.crowded(event):
            # Contiguous: an event that shares its time with another event of the sub-stream can only be the
            # first (or last) of a trend, never in its middle (Definition 2.4): what it hands on is the trend
            # it starts, alone.
            extend = self.algebra.extend
            zero: Any = self.algebra.zero
            onward = {}
            for k in aggregates:
                if self._starts(event.type, k):
                    single = extend(zero, event, True)
                    if single is not None:
                        onward[k] = single
        if onward:
            for src in self.outgoing[event.type]:
                src.insert(event, onward)
        if event.type not in self.template.ends:
            return
        if not self.windowed:
            self.latest_match_start = self.algebra.add(self.latest_match_start, aggregates[0])
            return
        if isinstance(edges, LongerTrends) and not self.waits_for_ends():
            aggregates = {
                k: kept
                for k, parts in aggregates.items()
                if (kept := edges.kept(parts, event.type)) is not None
            }
        if self.waits_for_ends():  # (under NEXT the parts, split by R: ``_trailing_final``)
            for k, agg in aggregates.items():
                self.pending_ends.setdefault(k, []).append((event.time, event.type, agg))
            return
        add = self.final_algebra.add
        finals = self.finals_of[event.type]
        for k, agg in aggregates.items():
            current = finals.get(k)
            finals[k] = agg if current is None else add(current, agg)

    def close_runs(self, first: int, last: int, classes: WindowClasses,
                   end: str | None = None) -> Iterator[tuple[range, Any]]:  # fmt: skip
        """Close windows first..last of one query (``classes``: of its windows; they close in ascending
        order, all at the current time): (windows, final aggregate) per class among them whose final is not
        None (a trend matched). ``end``: the query's end type where the ends are apart (``ends_apart``).
        ``release`` drops the classes afterwards."""
        finals = self.finals if end is None else self.finals_of[end]
        k = first
        while k <= last:
            label, through = classes.class_of(k)
            through = min(last, through)
            final = (
                self._trailing_final(label) if self.trailing or self.operand_trailing else finals.get(label)
            )
            if final is not None:
                yield range(k, through + 1), final
            k = through + 1

    def release(self, before: float) -> None:
        """Drop the classes below ``before``: no query served has a window of them open (and none will open
        one: a window that opens later starts after every event so far)."""
        live = self.live
        while live and live[0] < before:
            dead = live.popleft()
            for src in self.sources:
                src.close(dead)
            for finals in self.finals_of.values():
                finals.pop(dead, None)
            self.pending_ends.pop(dead, None)
            self.trailing_results.pop(dead, None)

    def _trailing_final(self, label: int) -> Any:
        """The END contributions of the class that no negative match follows before now (a window's end):
        of a trailing NOT, or for a trend of OR / AND, of the one last in each operand it ends."""
        pending = self.pending_ends.get(label, ())
        limits = self.end_limits()
        cached = self.trailing_results.get(label)
        if cached is not None and cached[0] == len(pending) and cached[1] == limits:
            return cached[2]
        result = None
        add = self.final_algebra.add
        longer = self.edges if isinstance(self.edges, LongerTrends) else None
        for time, state, agg in pending:
            if longer is not None:  # (whether a longer trend drops it depends on its operand's NOT too)
                agg = longer.kept(agg, state, partial(self.ends_of, time, limits=limits))
            else:
                operands = self.ends_of(time, state, limits)
                if operands and isinstance(self.final_algebra, ConjunctionAlgebra):
                    agg = self.final_algebra.restricted(agg, operands)
                agg = agg if operands else None
            if agg is not None:
                result = agg if result is None else add(result, agg)
        self.trailing_results[label] = (len(pending), limits, result)
        return result

    def waits_for_ends(self) -> bool:
        """END contributions wait for the window's end: a trailing NOT, the pattern's or an operand's."""
        return bool(self.trailing or self.operand_trailing)

    def end_limits(self) -> tuple[Any, tuple[Any, ...]]:
        """The latest starts of the trailing NOTs' matches so far: the pattern's, and each operand's."""
        limit = self.trailing_limit() if self.trailing_limit is not None else None
        return limit, tuple(None if latest is None else latest() for latest in self.operand_trailing)

    def ends_of(self, time: Any, state: str, limits: tuple[Any, tuple[Any, ...]]) -> frozenset[int]:
        """The operands (0 for a pattern without OR / AND) a trend ending at ``state`` (an end state, or on a
        position template any) at ``time`` ends with no match of a trailing NOT after it, by ``limits``
        (``end_limits`` at a window's end)."""
        limit, by_operand = limits
        if limit is not None and time < limit:
            return frozenset()
        states = self.query.states
        ends = states.accepts.get(state, frozenset()) if states is not None else frozenset({0})
        if not by_operand:
            return ends
        return frozenset(o for o in ends if by_operand[o] is None or time >= by_operand[o])


class NodeAttributes(dict[str, Any]):
    """The attributes of an event that ``placed`` made nodes of: one object per event, shared by its nodes
    (what tells them apart from another event's nodes under NEXT, ``dominance.LongerTrends``), and what
    tells a placed event from a stream event of the same type."""


def placed(query: AnalyzedQuery, events: Iterable[Event]) -> list[Event]:
    """The events the graphs of ``query`` run: where a graph's states are places (a position template,
    dissertation §12; a NOT's over a pattern with a type at several places), each event once per place of
    its type, as an event whose type is the place (it may start a trend at one place and extend trends at
    another; all copies share its time, so none precedes another), and once as itself where another graph
    of the query reads its type (``AnalyzedQuery.placement``). Other events, and an event placed already
    (its type a place, or its attributes the ``NodeAttributes`` placing gives them), stay as they are, so
    a caller may place events itself."""
    placement = query.placement
    if not placement:
        return events if isinstance(events, list) else list(events)
    out: list[Event] = []
    for e in events:  # (a stream event's type is never a place: place names hold a '#')
        names = placement.get(e.type)
        if names is None or isinstance(e.attributes, NodeAttributes):
            out.append(e)
        else:
            attributes = NodeAttributes(e.attributes)
            out.extend(Event(n, e.time, attributes) for n in names)
    return out


class SemanticsEdges:
    """Which of GRETA's edges a trend may use under skip-till-next-match (NEXT) or contiguous (CONT)
    semantics (dissertation §2.4), so that the graph's paths are exactly the trends Definitions 2.3 and 2.4
    keep.

    GRETA's graph G has an edge u → v when u may immediately precede v in a trend (types, times, edge
    predicates, negation between them); its START-to-END paths are the skip-till-any-match trends. Its
    edges do not depend on the window: whatever a path from u to v passes lies between them in time.

    * NEXT keeps a trend unless a longer trend has the same first and last events and a superset of its
      middle events (Definition 2.3). Such a longer trend goes through every event of the shorter one (in
      time order), so it replaces some edge u → v of it by a path of two or more edges of G, and
      conversely. The NEXT trends are therefore the paths of the edges no longer path bypasses: G's
      transitive reduction. Kept per event: the events with a path of one or more edges to it (``reach``);
      u → v is bypassed iff u reaches one of v's other predecessors.
    * CONT keeps a NEXT trend unless an event of the partition's sub-stream I (``times``: every event of
      the partition, of any type) that is not in the trend lies strictly between its first and last times
      (Definition 2.4). So u → v is usable only when no event of I lies strictly between them (such an edge
      no path can bypass either), and an event that shares its time with another event of I is never in a
      trend's middle (``crowded``; ``TrendGraph.commit`` hands on only the trend it starts).

    The cost is that of an event-grained graph (COGRA §16.1): every predecessor event is looked at, and a
    reach is a set of up to every event in the horizon. The strategies run these semantics on the compiled
    kernel (``native/src/graph.rs``: off positions and times where every transition is plain;
    ``native/src/reach.rs``: this same event-grained choice, reach as bitsets, with edge predicates or a NOT
    between two types). This class is the reference the tests hold the kernel to, what runs a partition the
    kernel declines (a value only Python computes exactly), and what ``hamlet trends`` walks.
    """

    def __init__(
        self, kind: str, incoming: dict[str, list[Source]], times: Sequence[Any], horizon: Any
    ) -> None:
        self.kind = kind
        self.incoming = incoming
        self.times = times  # every event time of the partition's sub-stream, sorted (CONT)
        self.reaches = Reaches(horizon)  # keyed by id(event)
        self.pending: dict[int, frozenset[int]] = {}  # id(event) → its reach, computed, not yet committed

    def choose(self, event: Event) -> list[tuple[Event, dict[int, Any]]]:
        """The predecessor events ``event`` keeps an edge from, with their aggregates per window class."""
        if self.kind == "CONT":
            times = self.times
            i = bisect_left(times, event.time)
            if not i:
                return []
            before = times[i - 1]  # the sub-stream's last time before the event's: no event lies between
            return [found for src in self.incoming[event.type]
                    for found in src.matching(event, before)]  # type: ignore[union-attr]  # fmt: skip
        candidates = [found for src in self.incoming[event.type] for found in src.matching(event)]  # type: ignore[union-attr]
        # NEXT: keep the predecessors that reach none of the others (no longer path bypasses their edge).
        numbers = [self.reaches.number[id(previous)] for previous, _ in candidates]
        reach = self.reaches.reach
        bypassed: set[int] = set()  # events with a path of two or more edges to ``event``
        for n in numbers:
            bypassed.update(reach[n])
        chosen = [c for c, n in zip(candidates, numbers) if n not in bypassed]
        bypassed.update(numbers)
        self.pending[id(event)] = frozenset(bypassed)
        return chosen

    def commit(self, event: Event, stored: bool) -> None:
        """``event``'s aggregates are final (``stored``: it has one in some window and may precede others)."""
        reach = self.pending.pop(id(event), None)
        if self.kind == "NEXT" and stored:
            self.reaches.add(id(event), event, event.time, reach)

    def crowded(self, event: Event) -> bool:
        """CONT: whether another event of the sub-stream has ``event``'s time."""
        if self.kind != "CONT":
            return False
        times = self.times
        i = bisect_left(times, event.time)
        return i + 1 < len(times) and times[i + 1] == event.time


def _summed(
    chosen: Sequence[tuple[Event, dict[int, Any]]], windows: Sequence[int], algebra: Algebra
) -> list[Any]:
    """The combined aggregate of the ``chosen`` predecessor events, per window."""
    add, zero = algebra.add, algebra.zero
    totals: dict[int, Any] = {}
    for _, aggregates in chosen:
        for k, agg in aggregates.items():
            current = totals.get(k)
            totals[k] = agg if current is None else add(current, agg)
    return [totals.get(k, zero) for k in windows]


class WindowClasses:
    """The classes of the windows of one WITHIN/SLIDE over the sorted event times of one partition (see the
    module docstring): windows whose starts have the same events at or after them, keyed by c, the number
    of events before their start. Times may be those of more events than a graph reads (a finer partition
    into classes is as exact); every query with these windows in a partition shares one instance, and its
    classes per time."""

    MEMO_LIMIT = 4096  # remember the labels of every time only in small partitions (memory)

    def __init__(self, window: Window, times: Sequence[Any]) -> None:
        self.window, self.times = window, times
        self.slide_int = int(window.slide) if window.slide.denominator == 1 else None
        self.memo: dict[Any, list[int]] | None = {} if len(times) <= self.MEMO_LIMIT else None
        self.last_time: Any = None
        self.last_labels: list[int] = []

    def last_start_at(self, time: Any) -> int:
        """The last window index whose start is at or before ``time``."""
        s = self.slide_int
        if s is not None and type(time) is int:
            return time // s
        return math.floor(Fraction(time) / self.window.slide)

    def class_of(self, k: int) -> tuple[int, int]:
        """(class, last window index of the class) of window k: the last window of the class starts at or
        before the first event at or after k's start (the windows after every event form one class)."""
        times = self.times
        c = bisect_left(times, self.window.start(k))
        return c, (self.last_start_at(times[c]) if c < len(times) else 1 << 62)

    def labels(self, time: Any) -> list[int]:
        """The classes of the windows that contain ``time``, ascending."""
        if time == self.last_time:
            return self.last_labels
        memo = self.memo
        if memo is not None:
            found = memo.get(time)
            if found is not None:
                self.last_time, self.last_labels = time, found
                return found
        window = self.window
        every = window.indexes(time)
        times, start = self.times, window.start
        labels = []
        k = every.start
        while k < every.stop:
            c = bisect_left(times, start(k))
            labels.append(c)
            if c >= len(times):
                break
            k = self.last_start_at(times[c]) + 1  # the first window of the next class
        if memo is not None:
            memo[time] = labels
        self.last_time, self.last_labels = time, labels
        return labels


class PartitionClasses:
    """The window classes of one partition per WITHIN/SLIDE, made when first asked for: every graph of the
    partition shares them (they are all over the same times, which ``TrendGraph._may_start`` relies on)."""

    def __init__(self, times: Sequence[Any]) -> None:
        self.times = times
        self.by_window: dict[Window, WindowClasses] = {}

    def of(self, window: Window) -> WindowClasses:
        classes = self.by_window.get(window)
        if classes is None:
            classes = self.by_window[window] = WindowClasses(window, self.times)
        return classes


def _choose_source(query: AnalyzedQuery, source: str, target: str, algebra: Algebra, events: Sequence[Event],
                   threshold: Threshold | None, admits: Admits | None, plain_scan: bool, horizon: Any
                   ) -> Source | None:  # fmt: skip
    """The cheapest source that answers the transition exactly; None for a shared running total."""
    predicates = query.edge_predicates_of(source, target)
    if admits is not None:
        return ScanSource(source, algebra, [p.test for p in predicates], None, horizon, admits)
    if (
        plain_scan
        or len(predicates) > 1
        or (predicates and (threshold is not None or predicates[0].key_op is None))
    ):
        return ScanSource(source, algebra, [p.test for p in predicates], threshold, horizon)
    if threshold is not None:
        return QueueSource(source, algebra, threshold)
    if not predicates:
        return None
    p = predicates[0]
    assert p.key_op is not None and p.source_key is not None and p.target_key is not None
    keys = index_keys([p.source_key(e) for e in events if e.type == source])
    if keys is None:
        return ScanSource(source, algebra, [p.test], None, horizon)
    return IndexedSource(source, algebra, p.key_op, p.source_key, p.target_key, keys)


def _latest_of(graphs: Iterable[TrendGraph]) -> Threshold | None:
    graphs = tuple(graphs)
    if not graphs:
        return None
    if len(graphs) == 1:
        only = graphs[0]
        return lambda: only.latest_match_start

    def latest() -> Any:
        starts = [g.latest_match_start for g in graphs if g.latest_match_start is not None]
        return max(starts) if starts else None

    return latest
