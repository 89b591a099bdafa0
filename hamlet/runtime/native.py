"""The one door to the compiled engine (``native/``, the ``hamlet_native`` extension): every strategy runs there.

``NativeGraph`` is the GRETA graph of one ``GraphGroup`` (queries that build equal graphs, or that share
every position but the end on one merged template, each member reading its own end's finals); ``NativeSet``
takes a stream partition's events whole for all graphs of a sharable query set, local predicates included,
and runs them, sharing the bursts of the Kleene types its queries share in HAMLET's graphlets where the
strategy says so (``sharing``: "none" for greta, "static", "hamlet"; ``native/src/burst.rs``,
``graphlet.rs``). Given the numbers of a partition's groups, it sums their windows' finals itself
(``native/src/sums.rs``) and hands the sums over once per call (``NativeSet.summed``), so most runs never
become Python objects. Callers cannot tell its runs from ``greta.run_partition``'s (tests/test_native.py
holds it to them and to the brute-force enumerator).

The graphs it takes, decided once per graph group (``kernel_obstacle`` says why not, ``hamlet explain``
shows it):

* any pattern whose types appear once, with NOT leading, trailing or guarding a transition, over any
  sub-pattern, nested (``native/src/negation.rs``; a type a NOT reads may be matched too, or read by
  another NOT: each of its events then has a role in each graph, ``Graph::roles``); optional parts (``P?``, ``P*``) give the positive pattern
  and its negative sub-patterns several start and end types (``SEQ(A?, B+)``, ``NOT SEQ(C?, D)``,
  ``NOT SEQ(C, D*)``), which the kernel's graphs take;
* position templates (dissertation §12, ``automaton.py``: a type at several places, ``P{n,}``, ``P OR Q``,
  ``P AND Q``, optional parts among them): the kernel takes each event at every state of its type, all at
  the event's time, so none is another's predecessor (``native/src/graph.rs``, ``Graph::events``); for
  ``P AND Q`` it keeps the conjunction's classes (``ConjunctionAlgebra``: trends ending in a state of P
  only, Q only, both) and Python combines them into the number of pairs (``AggregateState.value``);
* any local predicate, and edge predicates (``native/src/edges.rs``: a scan, or an ordered index for one
  comparison f(x) op g(y)), whose int literals are within 127 bits (local predicates too): their arithmetic
  on ints is exact in 128 bits;
* every event matching semantics (dissertation §2.4): skip-till-next-match and contiguous keep only some of
  each event's edges (``graph.SemanticsEdges``). Where every transition is plain, the kernel reads which off
  positions and times (``native/src/graph.rs``, ``NextState``); with edge predicates or a NOT between two
  types it chooses the predecessor events one by one, under NEXT by each event's reach, a bitset of the
  events with a path to it (``native/src/reach.rs``);
* COUNT(*), COUNT(E), SUM, AVG, MIN and MAX;
* windows of whole microseconds (the kernel's times: a timestamp's microseconds, seconds that are ints,
  or floats, each as the microsecond it lies in: ``columnar.kernel_micros``).

Counts and sums are exact at any size (``native/src/num.rs``: i128, promoted to a big integer on
overflow). A sum over floats, which Python keeps as a whole number of 2^-1074 (``aggregates.py``), is kept
in units of 2^-E, E the finest unit a value of the partition needs, and shifted to Python's units on the
way out. MIN and MAX order ints and floats together, by their numbers (``values.rs``, ``order_key``). Per
partition, a graph hands back to Python (``run`` returns None) only what it cannot compute exactly: two
different float times within one microsecond, a value that is neither an int in [-2^63, 2^64) nor a finite
float, int arithmetic in a predicate that overflows 128 bits (or divides ints beyond 2^53). Without the
extension ``hamlet`` does not import (never a silently slower engine).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from hamlet.analysis.automaton import StateTemplate
from hamlet.analysis.predicates import EdgePredicate, attribute_versus_literal, index_sides
from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.split import Negation, SubPattern
from hamlet.analysis.template import Template
from hamlet.analysis.windows import Window
from hamlet.events import MICROS, TIME_RANGE, TYPE_SPACE, Event
from hamlet.language.nodes import (
    Arithmetic,
    AttributeRef,
    BooleanOp,
    Comparison,
    Expression,
    Literal,
    UnaryMinus,
)
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.aggregates import Algebra, ConjunctionAlgebra, CountAlgebra, Projection, VectorAlgebra
from hamlet.runtime.clipping import ClippedWindow
from hamlet.runtime.partition import Summed
from hamlet.stats import EvaluationStats

try:
    import hamlet_native
except ImportError as missing:  # never a silently slower engine: say what to build, and how
    raise ImportError(
        "hamlet's compiled engine (the extension hamlet_native, built from native/) is not installed in this "
        f"Python ({sys.executable}): run scripts/bootstrap, which builds it with cargo, or pip install ./native"
    ) from missing

UNBOUNDED = 1 << 62  # window indexes of an unclipped window: every k
TIME_LIMIT = 1 << 60  # the kernel's times and windows are whole microseconds below it (native/src/events.rs)


def plain_events(events: list[Any]) -> bool:
    """Whether ``events`` are already what the engine reads (``hamlet.api.to_events`` passes them on as they
    are): exactly ``Event``s with a plain type (a str, not empty, no space around it, no NUL), an int time or a
    float one within ``TIME_RANGE`` (which ``hamlet.api.event_time`` takes as it is) and a dict of attributes
    without a Decimal. Checked in one compiled pass (``native/src/events.rs``)."""
    return bool(hamlet_native.plain_events(events, Event, TYPE_SPACE, Decimal, TIME_RANGE))


def floor_micros(seconds: np.ndarray) -> np.ndarray | None:
    """floor(t · 10^6) of each double t, exactly (``native/src/events.rs``: in integers, from the double's own
    mantissa and exponent, since t · 10^6 as a double rounds and may round up onto the next microsecond);
    None where one is not finite or lies beyond the kernel's ``TIME_LIMIT`` µs."""
    micros = hamlet_native.floor_micros_column(words(seconds, np.float64))
    return None if micros is None else np.frombuffer(micros, np.int64)


def clashing_partitions(
    seconds: np.ndarray, micros: np.ndarray, partitions: np.ndarray, count: int
) -> list[int]:
    """The stream partitions (``partitions``: each row's number, below ``count``; rows in time order) in which
    two different ``seconds`` (doubles) fall into one of their ``micros`` (``floor_micros``)."""
    return list(
        hamlet_native.clashing_partitions(words(seconds, np.float64), words(micros), words(partitions), count)
    )


def words(values: np.ndarray, kind: type = np.int64) -> memoryview:
    """An array of 8-byte values as the kernel borrows it (``columns.rs``: bytes, no copy where it is
    contiguous and of ``kind`` already)."""
    return np.ascontiguousarray(values, dtype=kind).data.cast("b")


class NativeGraph:
    """The compiled graph of one ``GraphGroup``; ``run`` answers like ``greta.run_partition``."""

    def __init__(self, kernel: Any, names: Sequence[str], projections: Sequence[Projection | None],
                 contiguous: bool = False) -> None:  # fmt: skip
        self.kernel, self.names, self.projections = kernel, tuple(names), tuple(projections)
        self.contiguous = contiguous  # CONT: ``run`` needs the partition's sub-stream

    def run(
        self, events: list[Event], substream: Sequence[Event] | None = None
    ) -> list[tuple[str, range, Any]] | None:
        """(query, windows, final) for every run of windows with a final, or None: run it in Python.
        ``substream``: every event of the partition, of any type, sorted by time (what breaks contiguity);
        a contiguous graph without it, or with a time the kernel does not read, is Python's."""
        if self.contiguous:
            if substream is None:
                return None
            runs = self.kernel.run(events, [e.time for e in substream])
        else:
            runs = self.kernel.run(events)
        return None if runs is None else [self.answer(*run) for run in runs]

    def answer(self, member: int, first: int, last: int, final: Any) -> tuple[str, range, Any]:
        """A run as ``run_partition`` yields it: the query's name, its windows, its own aggregate."""
        project = self.projections[member]
        return self.names[member], range(first, last + 1), final if project is None else project(final)


@dataclass(frozen=True)
class SetAnswer:
    """A partition on the set kernel: the runs of every graph it computed (those it did not sum), the
    indexes of the groups it leaves to Python, how many events some group's predicates match, and what
    sharing did: (bursts, shared bursts, graphlets, graphlet-level snapshots, splits, merges)."""

    runs: list[tuple[str, range, Any]]
    declined: list[int]
    matched: int
    decisions: tuple[int, int, int, int, int, int]

    def count(self, stats: EvaluationStats) -> None:
        count(stats, self.matched, self.decisions)


def count(stats: EvaluationStats, matched: int, decisions: tuple[int, int, int, int, int, int]) -> None:
    """What the kernel reports of a call: events its graphs matched, and (bursts, shared bursts,
    graphlets, graphlet-level snapshots, splits, merges)."""
    stats.events += matched
    bursts, shared, graphlets, snapshots, splits, merges = decisions
    stats.bursts += bursts
    stats.shared_bursts += shared
    stats.graphlets += graphlets
    stats.graphlet_snapshots += snapshots
    stats.splits += splits
    stats.merges += merges


class NativeSet:
    """The compiled graphs of a set's ``GraphGroup``s with their local predicates (``set_kernel_for``)."""

    def __init__(self, kernel: Any, graphs: Sequence[NativeGraph]) -> None:
        self.kernel, self.graphs = kernel, tuple(graphs)

    def run(self, events: list[Event], groups: Sequence[int] | None = None, whole: bool = False,
            sharing: str = "none") -> SetAnswer | None:  # fmt: skip
        """What the kernel computed of a partition (``SetAnswer``), or None: the whole partition is
        Python's. With ``groups`` (``PartitionRunner``), the kernel sums the runs itself but for those it
        cannot. With ``whole``, None unless the kernel computes every group (and then it has summed
        nothing). ``sharing``: "none" (GRETA), "static" or "hamlet": bursts of a Kleene type that queries
        share applied in shared graphlets, always or where the benefit model says so (``burst.rs``)."""
        answer = self.kernel.run(events, None if groups is None else list(groups), whole, sharing)
        if answer is None:
            return None
        found, declined, matched, decisions = answer
        graphs = self.graphs
        return SetAnswer([graphs[g].answer(*run) for g, *run in found], declined, matched, decisions)

    def summed(self) -> Iterator[Summed]:
        """What ``run`` summed, each query's own aggregate (``NativeGraph.answer``'s projection)."""
        for g, member, group, diffs, entries in self.kernel.summed():
            graph = self.graphs[g]
            project = graph.projections[member]
            if project is not None:
                entries = [(k, project(agg)) for k, agg in entries]
            yield Summed(graph.names[member], group, diffs, entries)


@dataclass(frozen=True)
class CompiledSet:
    """A whole sharable query set on the compiled kernel: its graphs' groups (in the kernel's order) and how
    it shares bursts; ``columnar.run_table`` hands it a table's columns."""

    native: NativeSet
    groups: tuple[GraphGroupLike, ...]
    sharing: str


# The set kernel keeps per graph a slot for every type of the set (``SetKernel::roles``): 6,000 queries
# SEQ(A_i, B+) hold 36 million (2.4 GB); past this many a set's graphs run each on its own kernel.
MAX_SET_CELLS = 10_000_000


def set_kernel_for(
    groups: Sequence[GraphGroupLike], grouping: Mapping[tuple[str, ...], int]
) -> NativeSet | None:
    """One kernel for all ``groups`` of a set (each compiled, ``kernel_for``), or None unless every group
    has a compiled graph and local predicates the kernel evaluates. ``grouping``: the number of each
    GROUP-BY (``partition.groupings``), by which ``run`` gets a partition's groups."""
    if hamlet_native is None or not groups or any(g.native is None for g in groups):
        return None
    if any(g.native.contiguous for g in groups if g.native is not None):
        return None  # (a contiguous graph reads its partition's sub-stream: ``NativeGraph.run``)
    types = {t for g in groups for q in g.queries for t in q.types}
    if len(groups) * len(types) > MAX_SET_CELLS:
        return None  # (each graph on its own compiled kernel, in memory of its own types alone)
    keys: dict[tuple, tuple[int, dict[str, list]]] = {}
    key_of = []
    for group in groups:
        if group.key not in keys:
            if any(predicates_obstacle(q) is not None for q in group.queries):
                return None
            keys[group.key] = (len(keys), _tests_program(group.queries))
        key_of.append(keys[group.key][0])
    graphs = [g.native for g in groups if g.native is not None]
    grouping_of = [[grouping[q.group_by] for q in g.queries] for g in groups]
    kernel = hamlet_native.SetKernel(
        [g.kernel for g in graphs], [t for _, t in keys.values()], key_of, grouping_of
    )
    return NativeSet(kernel, graphs)


def segment_costs_for(readers: Mapping[str, tuple[int, int, int, int]], sharers: Iterable[str], pane: Fraction,
                      model: CostModel) -> Any | None:  # fmt: skip
    """``SharingPlan.segment_readers`` weighed by ``model`` (``CostModel.saved_steps``), compiled for one
    ``Layout``: ``readers`` per type (queries that apply its bursts at once, members and windows of shape
    groups, readers on compiled graphs), the Kleene types queries share, the pane in seconds (a whole number
    of the kernel's microseconds, as every window is: ``_member``). None without the extension."""
    pane_us = pane * MICROS
    assert pane_us.denominator == 1 and pane_us < TIME_LIMIT
    if hamlet_native is None:
        return None
    return hamlet_native.SegmentCosts(
        dict(readers), list(sharers), int(pane_us), model.burst_break_even, model.group_event
    )


class GraphGroupLike(Protocol):  # ``greta.GraphGroup`` (which imports this module)
    @property
    def queries(self) -> tuple[AnalyzedQuery, ...]: ...

    @property
    def algebra(self) -> Algebra: ...

    @property
    def key(self) -> tuple: ...

    @property
    def native(self) -> NativeGraph | None: ...


def _tests_program(queries: Sequence[AnalyzedQuery]) -> dict[str, list]:
    """Per type a graph of ``queries`` reads, its local predicates as the kernel's programs
    (``predicates.rs``), those of the first query that reads it (``partition.merged_tests``)."""
    tests: dict[str, list] = {}
    for query in queries:
        mine: dict[str, list] = {t: [] for t in query.types if t not in tests}
        for predicate in query.local_predicates:
            if predicate.event_type in mine:
                assert predicate.expression is not None  # (predicates_obstacle is None)
                mine[predicate.event_type].append(_program(predicate.expression))
        tests.update(mine)
    return tests


def _program(expr: Expression) -> tuple | None:
    """``T.a op literal`` (``predicates.attribute_versus_literal``), AND and OR of them, any other condition as
    an expression (``_expression``); None where a literal is an int beyond 127 bits (``wide``)."""
    if isinstance(expr, BooleanOp):
        parts = [_program(o) for o in expr.operands]
        return None if None in parts else (expr.op.lower(), parts)
    found = attribute_versus_literal(expr)
    if found is None:
        general = _expression(expr)
        return None if general is None else ("expr", general)
    attribute, op, literal = found
    return None if wide(literal) else ("compare", op, attribute, literal)


def kernel_obstacle(query: AnalyzedQuery) -> str | None:
    """Why the compiled kernel does not run the query's graph, or None: it does (``hamlet explain``)."""
    if hamlet_native is None:
        return "the extension hamlet_native is not installed (scripts/bootstrap builds it)"
    template = query.pattern.template
    for predicate in query.edge_predicates:
        if predicate.expression is None or _expression(predicate.expression) is None:
            return f"edge predicate {predicate.text} (a literal int beyond 127 bits)"
    if query.states is None and len(set(template.types)) != len(template.types):
        return "a type at two places of the pattern"
    return None


def event_grained(query: AnalyzedQuery) -> bool:
    """Whether the kernel chooses the query's NEXT or CONT edges event by event (``native/src/reach.rs``): an
    edge predicate or a NOT between two types on a transition of its pattern (else it reads them off
    positions and times, ``NextState`` in native/src/graph.rs)."""
    if query.semantics == "ANY":
        return False
    template = query.pattern.template if query.states is None else query.states.template
    if any(query.edge_predicates_of(t.source, t.target) for t in template.transitions):
        return True
    return any(n.previous is not None and n.following is not None for n in query.pattern.negations)


def graphlet_obstacle(query: AnalyzedQuery, event_type: str) -> str | None:
    """Why the compiled graph of ``query`` steps the events of a burst of ``event_type`` one by one instead of
    taking the burst in a graphlet (``Graph::burst_position`` in native/src/graph.rs), or None: it takes it."""
    pattern = query.pattern
    template = pattern.template
    if event_type not in template.types:
        return f"{event_type} is negated"
    if event_type in query.negated_types:
        return f"{event_type} is also negated: each {event_type} event may be a NOT's match"
    if not _in_kleene(template, event_type):
        return f"{event_type} is in no Kleene sub-pattern"
    for t in template.transitions:
        if event_type in (t.source, t.target) and query.edge_predicates_of(t.source, t.target):
            return f"edge predicate on {t.source} -> {t.target}: each {event_type} event meets it on its own"
    for n in pattern.negations:
        # (a NOT before E is no obstacle: its L cannot change inside a burst of E)
        if n.previous == event_type and n.following is not None:
            return f"{n.text} between {n.previous} and {n.following}: each {event_type} event meets it on its own"
        if n.following is None and event_type == template.end:
            return f"the trailing {n.text} waits for each {event_type} event's time"
        if n.previous is None and event_type == template.start:
            return f"the leading {n.text} decides per window where each {event_type} event starts trends"
    return None


def _in_kleene(template: Template, event_type: str) -> bool:
    """Whether transitions lead from ``event_type`` back to it (``Graph::in_kleene``): E+, or a Kleene
    sub-pattern over several types such as (SEQ(A+, B))+, whose bursts of B are shared too (MUSE)."""
    seen: set[str] = set()
    frontier = {event_type}
    while frontier:
        reached = {t.target for t in template.transitions if t.source in frontier}
        if event_type in reached:
            return True
        frontier = reached - seen
        seen |= reached
    return False


def predicates_obstacle(query: AnalyzedQuery) -> str | None:
    """A local predicate the set kernel does not evaluate (they all run in Python then), or None."""
    for predicate in query.local_predicates:
        if predicate.expression is None or _program(predicate.expression) is None:
            return predicate.text
    return None


def kernel_for(queries: Sequence[AnalyzedQuery], algebra: Algebra, projections: Sequence[Projection | None],
               merged: Template | None = None) -> NativeGraph | None:  # fmt: skip
    """The compiled graph of queries that share one (``partition.graph_key``; or, with ``merged``, their merged
    template: ``partition.merged_groups``), or None where it does not apply (``kernel_obstacle``) or the
    extension is not installed."""
    if hamlet_native is None or any(kernel_obstacle(q) is not None for q in queries):
        return None
    query = queries[0]  # (the group's queries have the same pattern and predicates: ``partition.graph_key``)
    # A position template (``query.states``) runs its states; every state of a type reads that type's fields.
    if merged is not None:  # (merging refuses NOTs and position templates: ``partition.merged_groups``)
        part = SubPattern(query.pattern.pattern, merged, ())
    elif query.states is None:
        part = query.pattern
    else:
        part = _on_states(query.pattern, query.states)
    template = part.template
    position = {t: i for i, t in enumerate(template.types)}
    type_of = (lambda t: t) if query.states is None else query.states.state_type.__getitem__
    places: dict[str, list[int]] = {}
    for state, i in position.items():
        places.setdefault(type_of(state), []).append(i)
    fields = _fields(algebra, position, places)
    if fields is None:
        return None
    members = [_member(q.window) for q in queries]
    negations: list[tuple] = []
    plain, edges = _transitions(query, part, negations, 0)
    # (on a merged template, the types of the shared positions: each member's end is its own)
    every = frozenset.intersection(*(frozenset(q.required_types) for q in queries))
    required = [places[t][0] for t in query.required_types if t in every]
    ends = None if merged is None else [position[q.pattern.template.end] for q in queries]
    operands = None
    if query.states is not None and query.states.operands > 1:
        states = query.states
        top = [k for k, spec in enumerate(negations, 1) if spec[5] == 0]  # (the pattern's own NOTs, in order)
        operands = (
            [sum(1 << o for o in states.accepts.get(t, ())) for t in template.types],
            [[top[i] for i in ks] for ks in states.trailing],
            [(position[s], [top[i] for i in g.negations], g.bits) for s, g in states.start_guards.items()],
        )
    kernel = hamlet_native.GraphKernel(
        [type_of(t) for t in template.types], [position[t] for t in template.starts],
        [position[t] for t in template.ends], plain, negations, fields, isinstance(algebra, CountAlgebra),
        members, edges, SEMANTICS_CODES[query.semantics], required, ends, operands,
    )  # fmt: skip
    return NativeGraph(kernel, [q.name for q in queries], projections, query.semantics == "CONT")


def _on_states(pattern: SubPattern, states: StateTemplate) -> SubPattern:
    """A pattern's position template with its NOTs anchored to states: a leading or trailing NOT to a start
    or an end state (it applies at every one, so the anchor only tells leading from trailing), a NOT between
    two parts to the first states of its types (the transitions it guards are ``StateTemplate.guards``)."""
    template = states.template

    def anchored(n: Negation) -> Negation:
        if n.previous is None or n.following is None:
            return replace(
                n, previous=n.previous and template.ends[0], following=n.following and template.starts[0]
            )
        return replace(
            n, previous=states.states_of[n.previous][0], following=states.states_of[n.following][0]
        )

    return SubPattern(pattern.pattern, template, tuple(map(anchored, pattern.negations)))


def _fields(algebra: Algebra, position: Mapping[str, int], places: Mapping[str, list[int]]
            ) -> list[tuple[str, list[int], str | None, bool]] | None:  # fmt: skip
    """The algebra's aggregate vector as ``GraphKernel`` takes it: (kind, the positions whose events update
    the field, attribute, scaled) per field; None for an algebra the kernel lacks or a type not in the
    template. ``position``: of each state (type), ``places``: the positions of each event type."""
    if isinstance(algebra, CountAlgebra):
        return [("trends", [], None, False)]
    if isinstance(algebra, VectorAlgebra):
        if any(t is not None and t not in places for _, t, _ in algebra.fields):
            return None
        return [(kind, [] if t is None else places[t], a, (t, a) in algebra.scaled)
                for kind, t, a in algebra.fields]  # fmt: skip
    if isinstance(algebra, ConjunctionAlgebra):
        # (trends, P only, Q only, both) as ``ConjunctionAlgebra`` orders them: each class set by the states
        # that accept it, whatever the predecessors were
        classes = algebra.classes.items()
        return [("trends", [], None, False)] + [
            ("ends", [position[s] for s, flags in classes if flags[flag]], None, False) for flag in range(3)
        ]
    return None


SEMANTICS_CODES = {"ANY": 0, "NEXT": 1, "CONT": 2}  # as native/src/graph.rs numbers them


def _transitions(query: AnalyzedQuery, part: SubPattern, negations: list[tuple], number: int
                 ) -> tuple[list[tuple[int, int]], list[tuple]]:  # fmt: skip
    """The transitions of ``part`` (negation ``number`` of the query, 0: its positive pattern) as the kernel
    reads them: plain (source, target) positions, and edges (source, target, predicates, index, guard) for
    those with edge predicates or guarded by a NOT between them. Its negations are appended to
    ``negations`` (numbered from 1, parents before their own negations), as ``GraphKernel`` takes them."""
    position = {t: i for i, t in enumerate(part.template.types)}
    # (where the states are places, a NOT's neighbour type stands at one of them: which one only tells the
    # kernel the NOT is between two parts; ``part.guards`` says which transitions it guards)
    anchor = {**{part.places[t]: i for t, i in reversed(position.items()) if t in part.places}, **position}
    numbers: list[int] = []  # of ``part.negations``, as the kernel numbers them
    for negation in part.negations:
        negations.append(())
        k = len(negations)
        numbers.append(k)
        inner = negation.part.template
        inner_position = {t: i for i, t in enumerate(inner.types)}
        inner_plain, inner_edges = _transitions(query, negation.part, negations, k)
        around = (None if negation.previous is None else anchor[negation.previous],
                  None if negation.following is None else anchor[negation.following])  # fmt: skip
        # (optional parts give a negative sub-pattern several start and end types: ``NOT SEQ(C?, D)``)
        negations[k - 1] = ([negation.part.places.get(t, t) for t in inner.types], [inner_position[t] for t in inner.starts],
                            [inner_position[t] for t in inner.ends], inner_plain, inner_edges, number, *around)  # fmt: skip
    # A guard: the negations a transition crosses and, as a bit set, the outcomes that take it (bit m of
    # ``outcomes`` for outcome m, whose bit j says that negation j had a match between the two events).
    guards: dict[tuple[str, str], tuple[list[int], int]] = {}
    if number == 0 and query.states is not None:
        for pair, crossed in query.states.guards.items():
            guards[pair] = ([numbers[i] for i in crossed.negations], crossed.bits)
    elif part.places:
        for pair, ks in part.guards.items():
            guards[pair] = ([numbers[i] for i in ks], 1)
    else:
        for k, negation in zip(numbers, part.negations):
            if negation.previous is not None and negation.following is not None:
                # (several NOTs between the same two types: only no match of any takes the transition)
                guards.setdefault((negation.previous, negation.following), ([], 1))[0].append(k)
    plain: list[tuple[int, int]] = []
    edges: list[tuple] = []
    for t in part.template.transitions:
        predicates = query.edge_predicates_of(t.source, t.target)
        guard = guards.get((t.source, t.target))
        if predicates or guard:
            programs, index = _edge_programs(predicates) if predicates else ([], None)
            edges.append((position[t.source], position[t.target], programs, index, guard))
        else:
            plain.append((position[t.source], position[t.target]))
    return plain, edges


def _edge_programs(predicates: Sequence[EdgePredicate]) -> tuple[list[tuple], tuple | None]:
    """A transition's edge predicates as the kernel's expressions (``edges.rs``), and (op, f, g) of the
    ordered index when they are one comparison f(x) op g(y) (``predicates.index_sides``)."""
    programs = [_expression(p.expression) for p in predicates if p.expression is not None]
    index = None
    if len(predicates) == 1 and predicates[0].expression is not None:
        sides = index_sides(predicates[0].expression)
        if sides is not None:
            op, f, g = sides
            index = (op, _expression(f), _expression(g))
    return programs, index  # type: ignore[return-value]


def _expression(expr: Expression) -> tuple | None:
    """An expression as the kernel reads it: ("lit", v), ("attr", a, next), ("neg", e), ("arith", op, l, r),
    ("cmp", op, l, r), ("and" | "or", [e]); None where a literal is an int beyond 127 bits (``wide``)."""
    if isinstance(expr, Literal):
        return None if wide(expr.value) else ("lit", expr.value)
    if isinstance(expr, AttributeRef):
        return ("attr", expr.attribute, expr.next)
    if isinstance(expr, UnaryMinus):
        inner = _expression(expr.operand)
        return None if inner is None else ("neg", inner)
    if isinstance(expr, (Arithmetic, Comparison)):
        left, right = _expression(expr.left), _expression(expr.right)
        kind = "arith" if isinstance(expr, Arithmetic) else "cmp"
        return None if left is None or right is None else (kind, expr.op, left, right)
    if isinstance(expr, BooleanOp):
        parts = [_expression(o) for o in expr.operands]
        return None if None in parts else (expr.op.lower(), parts)
    return None


def wide(literal: object) -> bool:
    """Whether a predicate's literal is an int the kernel's predicates do not hold, one beyond i128: they are
    exact in 128 bits (``native/src/edges.rs``; attributes are ints within 64 bits, so no sum, difference or
    product of two of them overflows there). A literal is written without its sign (``-5`` is a minus before
    5): within 127 bits."""
    return isinstance(literal, int) and not -(1 << 127) <= literal < 1 << 127


def _member(window: Window) -> tuple[int, int, int, int]:
    """(within, slide, first, last) of windows in the kernel's whole microseconds: every window is (the
    analysis refuses others, and any longer than 100 years, far below ``TIME_LIMIT``)."""
    assert window.micros is not None and max(window.micros) < TIME_LIMIT
    within, slide = window.micros
    first, last = -UNBOUNDED, UNBOUNDED
    if isinstance(window, ClippedWindow):
        first, last = max(window.first, -UNBOUNDED), min(window.last, UNBOUNDED)
    return within, slide, first, last
