"""The compiled graph kernel (native/, hamlet.runtime.native) against the Python graph it replaces, and
against hand counts and the brute-force enumerator; what it leaves to Python, and that Python then answers."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import partial
from types import MappingProxyType

import hamlet_native  # noqa: F401  (the kernel is part of the installed project: scripts/bootstrap builds it)
import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st
from kernel_checks import compiled_queries, python_graphs_refused
from oracle import evaluate_bruteforce
from streams import stream
from workloads import (
    TYPES,
    edge_menu,
    events,
    graph_sharing_workloads,
    local_menu,
    probe,
    queries,
    table_of,
    types_of,
    workloads,
)

from hamlet import STRATEGIES, Event, evaluate, parse_workload
from hamlet.api import evaluate_table, evaluate_with, finalize_table, prepare, to_events
from hamlet.errors import EventError
from hamlet.events import TIME_RANGE
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.graph import PartitionClasses
from hamlet.runtime.greta import GraphGroup, graph_groups, run_greta, run_partition
from hamlet.runtime.native import (
    event_grained,
    kernel_obstacle,
    plain_events,
    predicates_obstacle,
    set_kernel_for,
)
from hamlet.runtime.partition import groupings, matched_events, partition_stream
from hamlet.stats import EvaluationStats

RIDES = """
q1: RETURN COUNT(*), SUM(T.d) PATTERN SEQ(R, T+, NOT P) WITHIN 10 SLIDE 5
q2: RETURN COUNT(*), AVG(T.d), COUNT(T) PATTERN SEQ(R, T+, NOT P) WITHIN 4
q3: RETURN COUNT(*), MIN(T.d), MAX(T.d) PATTERN SEQ(R, T+, D) WITHIN 6 SLIDE 1
"""


def groups_of(text: str, stream_events: list[Event]) -> list[tuple[GraphGroup, list[list[Event]]]]:
    """Each graph group of the workload (compiled where the kernel applies) with its partitions' events."""
    out = []
    for query_set in prepare(text).sets:
        queries = list(query_set.queries)
        types = None if query_set.types is None else set(query_set.types)  # (None: CONT reads every type)
        partitions = partition_stream(query_set.attributes, types, stream_events)
        everything = [e for p in partitions.values() for e in p]
        algebras = {q.name: algebra_for(q, everything) for q in queries}
        for group in graph_groups(queries, algebras, share=True, native=True):
            out.append((group, [matched_events(group.queries[0], p) for p in partitions.values()]))
    return out


def per_window(runs) -> dict[tuple[str, int], object]:
    return {(name, k): final for name, ks, final in runs for k in ks}


def python_runs(group: GraphGroup, events: list[Event]):
    classes = PartitionClasses([e.time for e in events])
    return run_partition(group.queries, group.algebra, events, False, classes, group.projections)


def differential(text: str, stream_events: list[Event]) -> None:
    """Every partition the kernel takes: the same finals per window as the Python graph."""
    note(text)
    note(repr(stream_events))
    taken = 0  # partitions on the kernel with a final
    for group, partitions in groups_of(text, sorted(stream_events, key=lambda e: e.time)):
        for events_ in partitions:
            runs = group.native.run(events_) if group.native is not None else None
            if runs is not None:
                taken += bool(runs)
                assert per_window(runs) == per_window(python_runs(group, events_)), group.queries[0].name
    event("finals from the kernel: " + ("none" if not taken else "some"))  # --hypothesis-show-statistics


@given(st.one_of(workloads(kernel=True), workloads(negation=True)), st.data())
def test_kernel_equals_the_python_graph(text, data):
    drawn = data.draw(events(types_of(text), max_events=14))
    differential(text, drawn)
    differential(text, drawn)


@given(graph_sharing_workloads(), st.data())
def test_kernel_equals_the_python_graph_when_queries_share_it(text, data):
    differential(text, data.draw(events(types_of(text), max_events=14)))


@given(workloads(kernel=True), st.data())
def test_strategies_on_the_kernel_equal_bruteforce(text, data):
    stream_events = data.draw(events(types_of(text), max_events=12))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream_events)
    assert evaluate_with(workload, stream_events, partial(run_greta, share_graphs=True)) == expected
    assert evaluate_with(workload, stream_events, run_greta) == expected


@given(workloads(kernel=True), st.data())
def test_next_on_the_kernel_equals_the_python_graph_and_bruteforce(text, data):
    """Skip-till-next-match on the kernel (native/src/graph.rs ``NextState``: reachability off positions and
    times) against the Python graph (its transitive reduction) and the oracle (Definition 2.3)."""
    text = "\n".join(re.sub(r" (WHERE|GROUP-BY|WITHIN) ", r" SEMANTICS NEXT \1 ", line, count=1)
                     for line in text.splitlines())  # fmt: skip
    workload = parse_workload(text)
    assert all(q.semantics == "NEXT" and kernel_obstacle(q) is None for q in workload.queries), text
    stream_events = data.draw(events(types_of(text), max_events=12))
    differential(text, stream_events)
    expected = evaluate_bruteforce(workload, stream_events)
    assert evaluate_with(workload, stream_events, run_greta) == expected


def test_next_on_the_kernel_over_a_long_stream_equals_the_python_graph():
    # 3000 events of 4 types at times 0..1499 (two per time: equal times), windows of 40 sliding by 10: the
    # kernel's NEXT (O(positions²) per event) against the Python graph's (every predecessor event).
    import random

    rng = random.Random(7)
    stream_events = [Event(rng.choice("ABCZ"), t // 2, {"x": rng.randint(0, 3)}) for t in range(3000)]
    text = """
        n1: RETURN COUNT(*), SUM(A.x), MIN(B.x) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WITHIN 40 SLIDE 10
        n2: RETURN COUNT(*), COUNT(C) PATTERN SEQ(NOT Z, A, B+, C) SEMANTICS NEXT WHERE B.x > 0 WITHIN 30 SLIDE 10
        n3: RETURN COUNT(*) PATTERN SEQ(A+, C, NOT B) SEMANTICS NEXT WITHIN 20
    """
    workload = parse_workload(text)
    assert [kernel_obstacle(q) for q in workload.queries] == [None, None, None]
    for group, partitions in groups_of(text, stream_events):
        (events_,) = partitions
        runs = group.native.run(events_)  # the kernel takes it (None: left to Python)
        assert runs is not None and per_window(runs) == per_window(python_runs(group, events_))
    compiled = evaluate_with(workload, stream_events, run_greta)
    assert compiled == evaluate_with(workload, stream_events, partial(run_greta, native=False))
    assert len(compiled) == 664  # rows (query, window, aggregate): the windows with a trend, both sides


@given(workloads(kernel=True), st.data())
def test_contiguous_on_the_kernel_equals_bruteforce(text, data):
    """Contiguous semantics on the kernel (native/src/graph.rs: the events at the sub-stream's previous time,
    crowded events hand on only what they start) against the oracle (Definition 2.4), the Python graph, and
    through the table path; Z events, which no pattern reads, break contiguity."""
    text = "\n".join(re.sub(r" (WHERE|GROUP-BY|WITHIN) ", r" SEMANTICS CONT \1 ", line, count=1)
                     for line in text.splitlines())  # fmt: skip
    workload = parse_workload(text)
    assert all(q.semantics == "CONT" and kernel_obstacle(q) is None for q in workload.queries), text
    stream_events = data.draw(events(types_of(text), max_events=12))
    expected = evaluate_bruteforce(workload, stream_events)
    assert evaluate_with(workload, stream_events, run_greta) == expected
    assert evaluate_with(workload, stream_events, partial(run_greta, native=False)) == expected


def test_contiguous_runs_on_the_kernel_and_reads_every_event_of_the_partition():
    # SEQ(A, B+) over a1 b2 z3 b4 a5 b6 b7: CONT trends (a1,b2), (a5,b6), (a5,b6,b7): z3, a type the pattern
    # does not name, cuts (a1,b2,...,b4). The kernel computes it from the partition's times.
    workload = parse_workload("q: RETURN COUNT(*) PATTERN SEQ(A, B+) SEMANTICS CONT WITHIN 100 SLIDE 100")
    (query,) = workload.queries
    stream_events = stream("a1 b2 z3 b4 a5 b6 b7")
    algebras = {"q": algebra_for(query, stream_events)}
    (group,) = graph_groups([query], algebras, share=True, native=True)
    assert group.native is not None and group.native.contiguous
    mine = matched_events(query, stream_events)
    assert group.native.run(mine) is None  # without the sub-stream: Python's
    assert per_window(group.native.run(mine, stream_events)) == {("q", 0): 3}
    assert [r.value for r in evaluate(workload, stream_events, strategy="greta")] == [3]
    assert [r.value for r in evaluate(workload, stream_events, strategy="hamlet")] == [3]


@pytest.mark.parametrize(
    ("order", "expected"),
    [("a0 e0 a1", 2), ("e0 a0 a1", 2), ("a0 e0 a0 a1", 4)],
)
def test_a_not_at_the_time_of_a_contiguous_start_does_not_precede_it(order, expected):
    # SEQ(NOT E, A+) under CONT: an E at time 0 lies not before a trend starting at 0 (no E in [start, first
    # event)), whatever the order of equal times: a0 e0 a1 has (a0) and (a0, a1); a1 cannot start (e0 before
    # it). With two A at 0 each starts its own trend and each goes on to a1: 4. Found by the property test;
    # the kernel and the Python graph both decided a start after committing the E of the same time.
    workload = parse_workload("q: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) SEMANTICS CONT WITHIN 3")
    events_in_order = [Event(token[0].upper(), int(token[1:]), {}) for token in order.split()]
    assert [r.value for r in evaluate_bruteforce(workload, events_in_order)] == [expected]
    for executor in (run_greta, partial(run_greta, native=False)):
        assert [r.value for r in evaluate_with(workload, events_in_order, executor)] == [expected]
    for strategy in ("greta", "static", "hamlet"):
        assert [r.value for r in evaluate(workload, events_in_order, strategy=strategy)] == [expected]


def test_contiguous_on_the_kernel_over_a_long_stream_equals_the_python_graph():
    import random

    rng = random.Random(11)
    stream_events = [Event(rng.choice("ABCZ"), t // 2, {"x": rng.randint(0, 3)}) for t in range(3000)]
    text = """
        c1: RETURN COUNT(*), SUM(A.x), MIN(B.x) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WITHIN 40 SLIDE 10
        c2: RETURN COUNT(*), COUNT(C) PATTERN SEQ(NOT Z, A, B+, C) SEMANTICS CONT WHERE B.x > 0 WITHIN 30 SLIDE 10
        c3: RETURN COUNT(*) PATTERN SEQ(A+, C, NOT B) SEMANTICS CONT WITHIN 20
    """
    workload = parse_workload(text)
    assert [kernel_obstacle(q) for q in workload.queries] == [None, None, None]
    compiled = evaluate_with(workload, stream_events, run_greta)
    assert compiled == evaluate_with(workload, stream_events, partial(run_greta, native=False))
    assert len(compiled) == 480  # rows (query, window, aggregate): the windows with a trend, both sides


# Event-grained NEXT and CONT (native/src/reach.rs): edge predicates, Kleene self-edges among them, and NOTs
# between two types decide which events follow which, so the kernel chooses each event's predecessor events.
EVENT_GRAINED_SHAPES = [
    "A+", "SEQ(A+, B)", "SEQ(A, B+)", "(SEQ(A+, B))+", "SEQ(A, B, C+)", "SEQ(A+, B+, NOT C)",
    "SEQ(A+, NOT C, B)", "SEQ(A, NOT C, B+)", "(SEQ(A, NOT C, B))+", "SEQ(A+, NOT SEQ(C, D), B)",
    "SEQ(NOT E, A+, NOT C, B)", "SEQ(A, NOT C+, B+, NOT D)", "(SEQ(A+, NOT SEQ(C, NOT E, D), B))+",
]  # fmt: skip


@st.composite
def event_grained_queries(draw, name: str, renaming: dict[str, str]) -> str:
    """A query under NEXT or CONT whose kernel graph is event-grained: one or two edge predicates on the
    pattern's transitions (self-edges of a Kleene type among them), or a NOT between two types, or both;
    maybe a local predicate and an edge predicate inside a NOT. ``renaming``: the shapes' letters to
    types (one for a workload: its queries read the same events)."""
    shape = draw(st.sampled_from(EVENT_GRAINED_SHAPES))
    pattern = re.sub(r"\b[A-E]\b", lambda m: renaming[m.group()], shape)
    query = probe(pattern)
    middle = any(n.previous is not None and n.following is not None for n in query.pattern.negations)
    transitions = list(query.pattern.template.transitions)
    predicates = []
    for t in draw(st.lists(st.sampled_from(transitions), min_size=0 if middle else 1, max_size=2)):
        predicates.append(draw(st.sampled_from(edge_menu(t.source, t.target))))
    inner = [t for part in query.pattern.walk()[1:] for t in part.template.transitions]
    if inner and draw(st.integers(0, 3)) == 0:
        t = draw(st.sampled_from(inner))
        predicates.append(draw(st.sampled_from(edge_menu(t.source, t.target))))
    if draw(st.booleans()):
        predicates.append(draw(st.sampled_from(local_menu(draw(st.sampled_from(query.types))))))
    text = draw(queries(name, pattern=pattern, predicates=predicates))
    semantics = draw(st.sampled_from([" SEMANTICS NEXT", " SEMANTICS CONT"]))
    return re.sub(r" (WHERE|GROUP-BY|WITHIN) ", semantics + r" \1 ", text, count=1)


@given(st.data())
def test_next_and_cont_with_edges_on_the_kernel_equal_bruteforce(data):
    """NEXT and CONT with edge predicates and NOTs between two types, 2-3 queries per workload, on the
    compiled kernel in every strategy (no Python graph is built), through events and through the table,
    against the oracle (Definitions 2.3, 2.4) and the Python graph (``SemanticsEdges``)."""
    renaming = dict(zip("ABCDE", data.draw(st.permutations(TYPES))))
    count = data.draw(st.integers(2, 3))
    text = "\n".join(data.draw(event_grained_queries(f"q{i}", renaming)) for i in range(count))
    note(text)
    workload = parse_workload(text)
    assert all(kernel_obstacle(q) is None and event_grained(q) for q in workload.queries), text
    stream_events = data.draw(events(types_of(text), max_events=13, min_events=6))
    note(repr(stream_events))
    expected = evaluate_bruteforce(workload, stream_events)
    event(f"queries with a trend: {len({r.query for r in expected})} of {len(workload.queries)}")
    assert evaluate_with(workload, stream_events, partial(run_greta, native=False)) == expected
    table = table_of(stream_events)
    with python_graphs_refused():
        for strategy, executor in STRATEGIES.items():
            assert evaluate_with(workload, stream_events, executor) == expected, strategy
            assert finalize_table(workload, evaluate_table(workload, table, strategy)) == expected, strategy


WORKED = "a1 a2 a3 b4 a5 c6 a7 b8"  # x: a1=1 a2=5 a3=3 a5=2 a7=4 (b, c: 0)


@pytest.mark.parametrize(
    ("pattern", "semantics", "where", "expected"),
    [
        # Edges a→a where x rises: a1→a2, a1→a3, a1→a5, a1→a7, a3→a7, a5→a7; its transitive reduction drops
        # a1→a7 (a1 a3 a7, a1 a5 a7) and, into b4, a1→b4; into b8 it keeps a2 and a7 only. Ending at b4:
        # (a2), (a1 a2), (a3), (a1 a3) then b4; at b8: (a2), (a1 a2), (a7), (a3 a7), (a1 a3 a7), (a5 a7),
        # (a1 a5 a7) then b8.
        ("SEQ(A+, B)", "NEXT", "A.x < NEXT(A).x", 11),
        ("SEQ(A+, B)", "CONT", "A.x < NEXT(A).x", 2),  # (a3, b4), (a7, b8): a2 → a3 falls, c6 breaks
        ("A+", "NEXT", "A.x < NEXT(A).x", 12),  # the reduced graph's paths: 5 alone, 5 edges, 2 of two
        ("A+", "CONT", "A.x < NEXT(A).x", 6),  # each a alone and (a1, a2): b4 and c6 break the others
        # c6 cuts every a before it from b8; NEXT chains the a's (a1 a2 a3 a5 a7): 3 trends end with a3 b4,
        # 5 with a7 b8
        ("SEQ(A+, NOT C, B)", "NEXT", "", 8),
        ("SEQ(A+, NOT C, B)", "CONT", "", 4),  # (a3 b4), (a2 a3 b4), (a1 a2 a3 b4), (a7 b8)
    ],
)
def test_event_grained_semantics_on_a_worked_stream(pattern, semantics, where, expected):
    x = {"a1": 1, "a2": 5, "a3": 3, "a5": 2, "a7": 4}
    stream_events = [Event(t[0].upper(), int(t[1:]), {"x": x.get(t, 0)}) for t in WORKED.split()]
    text = (f"q: RETURN COUNT(*) PATTERN {pattern} SEMANTICS {semantics}"
            + (f" WHERE {where}" if where else "") + " WITHIN 100 SLIDE 100")  # fmt: skip
    workload = parse_workload(text)
    assert kernel_obstacle(workload.queries[0]) is None
    assert [r.value for r in evaluate_bruteforce(workload, stream_events)] == [expected]
    with python_graphs_refused():
        for strategy in STRATEGIES:
            rows = evaluate(workload, stream_events, strategy=strategy)
            assert [r.value for r in rows] == [expected], strategy


def test_event_grained_next_and_cont_over_a_long_stream_equal_the_python_graph():
    # 3000 events of 4 types at times 0..1499 (two per time), windows of 40 sliding by 10: the kernel's
    # event-grained NEXT (reach bitsets) and CONT against the Python graph's (frozensets, every predecessor).
    import random

    rng = random.Random(5)
    stream_events = [Event(rng.choice("ABCZ"), t // 2, {"x": rng.randint(0, 9)}) for t in range(3000)]
    text = """
        n1: RETURN COUNT(*), SUM(A.x), MIN(B.x) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WHERE A.x < NEXT(A).x
            WITHIN 40 SLIDE 10
        n2: RETURN COUNT(*), COUNT(C) PATTERN SEQ(A, B+, C) SEMANTICS NEXT WHERE B.x >= NEXT(B).x AND
            A.x + NEXT(B).x > 4 WITHIN 30 SLIDE 10
        n3: RETURN COUNT(*), MAX(A.x) PATTERN SEQ(A+, NOT C, B) SEMANTICS NEXT WITHIN 20
        c1: RETURN COUNT(*), SUM(A.x) PATTERN A+ SEMANTICS CONT WHERE A.x < NEXT(A).x WITHIN 40 SLIDE 10
        c2: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WHERE A.x != NEXT(B).x WITHIN 30 SLIDE 10
        c3: RETURN COUNT(*), COUNT(A) PATTERN SEQ(A+, NOT Z, B) SEMANTICS CONT WITHIN 20
    """
    workload = parse_workload(text)
    assert [kernel_obstacle(q) for q in workload.queries] == [None] * 6
    assert all(event_grained(q) for q in workload.queries)
    with python_graphs_refused():
        compiled = evaluate_with(workload, stream_events, run_greta)
    assert compiled == evaluate_with(workload, stream_events, partial(run_greta, native=False))
    assert len(compiled) == 1518  # rows (query, window, aggregate): the windows with a trend, both sides


def test_the_kernel_takes_the_ride_patterns_and_counts_them_exactly():
    # r1 t2 t3 p4 t5 d6 t7, attribute d = the time. q1 in [0, 10): an R, then a non-empty subsequence of the
    # Ts, not followed by p4: trends ending at t2 or t3 are cut, those ending at t5 (4: any subset of
    # {t2, t3} before it) or t7 (8) count, 12 in all. SUM(T.d): t2 and t3 lie in 6 of them, t5 and t7 in 8:
    # 6·2 + 6·3 + 8·5 + 8·7 = 126 over 28 T occurrences. q2 in [0, 4): (r1 t2), (r1 t3), (r1 t2 t3), p4
    # lies outside the window: 3 trends, 4 Ts, d summing to 10. q3: (r1 T+ d6) with T+ from {t2, t3, t5},
    # 7 trends, T.d from 2 to 5, in the one window [1, 7) that holds r1..d6.
    ride = [Event(t, time, {"d": time}) for t, time in
            [("R", 1), ("T", 2), ("T", 3), ("P", 4), ("T", 5), ("D", 6), ("T", 7)]]  # fmt: skip
    groups = groups_of(RIDES, ride)
    assert [sorted(q.name for q in g.queries) for g, _ in groups] == [["q1", "q2"], ["q3"]]
    assert all(g.native is not None for g, _ in groups)
    (shared, [trip]), (alone, [trip3]) = groups
    runs = per_window(shared.native.run(trip))
    assert runs == per_window(python_runs(shared, trip))
    # Each query's own fields, projected from the graph's union vector: trends, SUM(T.d) (or AVG's sum) with
    # its non-null and float counts, then q2's COUNT(T).
    assert (runs[("q1", 0)], runs[("q2", 0)]) == ((12, 126, 28, 0), (3, 10, 4, 0, 4))
    assert per_window(alone.native.run(trip3)) == {("q3", 1): (7, 2, 5)}
    got = {(r.query, r.window_start, r.aggregate): r.value for r in evaluate(RIDES, ride)}
    assert (got[("q1", 0, "COUNT(*)")], got[("q1", 0, "SUM(T.d)")], got[("q2", 0, "COUNT(*)")]) == (
        12,
        126,
        3,
    )
    assert evaluate(RIDES, ride) == evaluate_bruteforce(parse_workload(RIDES), ride)


def test_sums_over_floats_are_exact_on_the_kernel():
    # A then a non-empty subset of {b2, b3, b4}: 7 trends, each B in 4 of them. The sum is exact (units of
    # 2^-E on the kernel, 2^-1074 in Python), 4·(0.1 + 0.2 + 0.001) in the doubles' own values, and reported
    # as the double nearest to it; in float arithmetic the order of additions would show.
    text = "q: RETURN COUNT(*), SUM(B.x), MIN(B.x), MAX(B.x) PATTERN SEQ(A, B+) WITHIN 1000"
    stream_events = [Event("A", 1, {"x": 7}), Event("B", 2, {"x": 0.1}), Event("B", 3, {"x": 0.2}),
                     Event("B", 4, {"x": 0.001})]  # fmt: skip
    ((group, [partition]),) = groups_of(text, stream_events)
    runs = group.native.run(partition)
    assert runs is not None and per_window(runs) == per_window(python_runs(group, partition))
    got = {r.aggregate: r.value for r in evaluate(text, stream_events) if r.window_start == 0}
    exact = 4 * (Fraction(0.1) + Fraction(0.2) + Fraction(0.001))
    assert got == {"COUNT(*)": 7, "SUM(B.x)": float(exact), "MIN(B.x)": 0.001, "MAX(B.x)": 0.2}
    assert evaluate(text, stream_events) == evaluate_bruteforce(parse_workload(text), stream_events)


def test_what_the_kernel_leaves_to_python_is_still_exact():
    # Ints and floats under one MAX: the kernel orders them by their numbers, as Python does (its order keys
    # hold both: values.rs), and the results are the enumerator's. A Kleene run whose count needs more than
    # 128 bits stays in the kernel.
    text = "q: RETURN MAX(B.x) PATTERN SEQ(A, B+) WITHIN 1000"
    mixed = [Event("A", 1, {"x": 1}), Event("B", 2, {"x": 0.5}), Event("B", 3, {"x": 2})]
    ((group, [partition]),) = groups_of(text, mixed)
    ((_, _, (count, greatest)),) = group.native.run(partition)
    assert (count, greatest, type(greatest)) == (3, 2, int)
    assert evaluate(text, mixed) == evaluate_bruteforce(parse_workload(text), mixed)

    # Attributes in another Mapping than a dict, times beyond 2^60 µs (36,000 years): Python's too.
    proxied = [Event(e.type, e.time, MappingProxyType(dict(e.attributes))) for e in mixed]
    far = [Event(e.type, e.time + 2**53, e.attributes) for e in mixed]
    text = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 10"
    for stream_events in (proxied, far):
        ((group, [partition]),) = groups_of(text, stream_events)
        assert group.native.run(partition) is None
        # (a1 b2), (a1 b3), (a1 b2 b3), one tumbling window holding all three events: x sums to 5.0.
        assert [(r.aggregate, r.value) for r in evaluate(text, stream_events)] == [
            ("COUNT(*)", 3),
            ("SUM(B.x)", 5.0),
        ]

    text = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 1000"
    long_run = [Event("A", 0, {"x": 1})] + [Event("B", t, {"x": 1}) for t in range(1, 131)]
    ((group, [partition]),) = groups_of(text, long_run)
    # (trends, SUM(B.x), its non-null occurrences, its float occurrences) of the one window [0, 1000).
    assert group.native.run(partition) == [("q", range(1), (2**130 - 1, 130 * 2**129, 130 * 2**129, 0))]
    rows = {r.aggregate: r.value for r in evaluate(text, long_run) if r.window_start == 0}
    assert rows["COUNT(*)"] == 2**130 - 1  # every non-empty subset of the 130 Bs after the A
    assert rows["SUM(B.x)"] == 130 * 2**129  # each B lies in half of them


# Times and windows below a second, in the kernel's microseconds. Epoch-scale times in eighths of a second
# are doubles of whole microseconds (every multiple of 1/64 s is); A at .125 and Bs at .25, .375, .625:
# * q1 (WITHIN 500 ms SLIDE 250 ms): window [0, .5) holds (a, b.25), (a, b.375), (a, b.25, b.375): 3 trends
#   whose B.x sum to 2 + 3 + (2 + 3) = 10; the windows from .25 hold no A;
# * q2 (WITHIN 1 s SLIDE 500 ms): [-.5, .5) holds q1's 3; [0, 1) holds the 7 trends over a and three Bs, but
#   c.5 voids those ending before it (a trailing NOT): the 4 that reach b.625;
# * q3 (CONT, WITHIN 1 s): z.5 breaks contiguity: (a, b.25), (a, b.25, b.375): 2.
SUB_SECOND = (
    "q1: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 500 ms SLIDE 250 ms\n"
    "q2: RETURN COUNT(*) PATTERN SEQ(A, B+, NOT C) WITHIN 1 s SLIDE 500 ms\n"
    "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) SEMANTICS CONT WITHIN 1 s"
)
EPOCH = 1767600000


def sub_second_stream() -> list[Event]:
    steps = [("A", 1, 1), ("B", 2, 2), ("B", 3, 3), ("C", 4, 0), ("Z", 4, 0), ("B", 5, 4)]
    return [Event(t, EPOCH + eighths / 8, {"x": x}) for t, eighths, x in steps]


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_times_and_windows_below_a_second_run_on_the_kernel_exactly(strategy):
    stream_events = sub_second_stream()
    for group, partitions in groups_of(SUB_SECOND, stream_events):
        assert group.native is not None, kernel_obstacle(group.queries[0])
        substream = stream_events if group.native.contiguous else None
        assert all(group.native.run(p, substream) is not None for p in partitions)
    rows = {
        (r.query, r.window_start, r.aggregate): r.value for r in evaluate(SUB_SECOND, stream_events, strategy)
    }
    assert rows == {
        ("q1", EPOCH, "COUNT(*)"): 3, ("q1", EPOCH, "SUM(B.x)"): 10,
        ("q2", EPOCH - 0.5, "COUNT(*)"): 3, ("q2", EPOCH, "COUNT(*)"): 4, ("q3", EPOCH, "COUNT(*)"): 2,
    }  # fmt: skip
    assert evaluate(SUB_SECOND, stream_events, strategy) == evaluate_bruteforce(
        parse_workload(SUB_SECOND), stream_events
    )


def test_float_times_run_as_the_microsecond_below_them_unless_two_share_one():
    # 0.1 as a double is 0.1000000000000000055…, past the window [0, 0.1); 0.1 − 2^-56 lies inside it. The
    # kernel reads them as 100,000 and 99,999 µs, on the same sides of the bound.
    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 ms"
    stream_events = [Event("A", 0.0, {}), Event("B", 0.1 - 2**-56, {}), Event("B", 0.1, {})]
    ((group, [partition]),) = groups_of(text, stream_events)
    assert group.native.run(partition) == [("q", range(1), 1)]
    assert [r.value for r in evaluate(text, stream_events)] == [1]
    # 0.05 and the double after it share a microsecond but are no equal times: the kernel declines, and
    # Python counts (a, b), (a, b'), (a, b, b'), as the oracle does
    close = [Event("A", 0.0, {}), Event("B", 0.05, {}), Event("B", 0.05 + 2**-57, {})]
    ((group, [partition]),) = groups_of(text, close)
    assert group.native.run(partition) is None
    assert (
        [r.value for r in evaluate(text, close)]
        == [3]
        == [r.value for r in evaluate_bruteforce(parse_workload(text), close)]
    )


def test_a_nots_optional_parts_do_not_keep_its_query_from_sharing():
    # A NOT only hands its parent L, whatever its match's first and last types: two queries around B+ with
    # NOT SEQ(C?, D) share the B bursts (b2-b4, b6 b7, b10-b12, b14 b15) like queries with any other NOT.
    text = ("q1: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C?, D), B+) WITHIN 100\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(E, NOT SEQ(C?, D), B+) WITHIN 100")  # fmt: skip
    stream_events = stream("a1 e1 b2 b3 b4 d5 b6 b7 a8 c9 b10 b11 b12 e13 b14 b15")
    reference = evaluate_bruteforce(parse_workload(text), stream_events)
    assert [(r.query, r.value) for r in reference] == [("q1", 927), ("q2", 899)]
    for strategy in ("greta", "static", "hamlet"):
        stats = EvaluationStats()
        assert evaluate(text, stream_events, strategy, stats) == reference, strategy
        if strategy == "static":  # (static shares every burst of a type its queries share)
            assert (stats.bursts, stats.shared_bursts) == (4, 4)
    assert all(q.burst_obstacle("B") is None for q in parse_workload(text).queries)


def test_graphs_outside_the_kernel_run_in_python():
    declined = {
        f"q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x < NEXT(B).x + {2**127} WITHIN 10": (
            f"edge predicate A.x < (NEXT(B).x + {2**127}) (a literal int beyond 127 bits)"
        ),
    }  # fmt: skip
    for text, reason in declined.items():
        ((group, _),) = groups_of(text, stream("a1 b2"))
        assert group.native is None and kernel_obstacle(group.queries[0]) == reason, text


NEGATIONS = {  # SEMANTICS.md's worked examples on a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9, and NOT in every place:
    # (COUNT(*), COUNT(A)), the brute-force enumerator's
    "SEQ(A+, NOT E)": (14, 31),
    "SEQ(NOT E, A+)": (12, 28),
    "(SEQ(A+, NOT SEQ(C, NOT E, D), B))+": (13, 33),
    "SEQ(A+, NOT C, B)": (9, 21),
    "SEQ(NOT SEQ(C, D+), A+, NOT E)": (13, 30),
}


@pytest.mark.parametrize("pattern, counts", NEGATIONS.items())
def test_negation_runs_compiled_and_exact(pattern, counts):
    text = f"q: RETURN COUNT(*), COUNT(A) PATTERN {pattern} WITHIN 100"
    stream_events = stream("a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9")
    ((group, [partition]),) = groups_of(text, stream_events)
    assert group.native is not None, kernel_obstacle(group.queries[0])
    compiled = group.native.run(partition)
    assert compiled is not None
    assert per_window(compiled) == per_window(python_runs(group, partition))
    rows = evaluate(text, stream_events)
    assert rows == evaluate_bruteforce(parse_workload(text), stream_events)
    assert (rows[0].value, rows[1].value) == counts


# NOT over a pattern with several start or end types (optional parts), in every place a NOT may stand, over
# SEVERAL_ENDS_STREAM: (COUNT(*), COUNT(A), SUM(A.x)) in [0, 100), the brute-force enumerator's. Each differs
# from the same query with the NOT's optional parts made required (C? as C, D* as D+: a start or an end type
# the kernel missed) and from the query without that NOT (or, with the edge predicate, without the predicate).
SEVERAL_ENDS_STREAM = "a1 d2 a3 c4 a5 b6 a7 d8 c9 f10 e11 d12 b13 e14 a15 c16 b17"
SEVERAL_ENDS_X = {"a1": 1, "d2": 3, "a3": 2, "c4": 1, "a5": 3, "a7": 1, "d8": 0, "c9": 5, "e11": 1, "d12": 4,
                  "e14": 2, "a15": 2, "c16": 1}  # fmt: skip
SEVERAL_ENDS = {  # pattern, WHERE: counts
    ("SEQ(NOT SEQ(C?, D), A+, B)", ""): (28, 76, 126),  # leading, two start types
    ("SEQ(NOT SEQ(C, D*), A+, B)", ""): (42, 107, 189),  # leading, two end types
    ("SEQ(A+, B, NOT SEQ(C, D?))", ""): (31, 80, 144),  # trailing, two end types
    ("SEQ(A+, B, NOT SEQ(C*, E))", ""): (31, 80, 144),  # trailing, two start types
    ("SEQ(A+, NOT SEQ(C?, D), B)", ""): (22, 59, 111),  # guarding A -> B
    ("(SEQ(A+, NOT SEQ(C, D?), B))+", ""): (4, 8, 18),  # guarding A -> B inside a Kleene plus
    ("SEQ(A+, NOT (SEQ(C?, D))+, B)", ""): (22, 59, 111),  # a Kleene plus of two start types
    ("SEQ(A+, NOT SEQ(C?, D, E), B)", "D.x > NEXT(E).x"): (37, 91, 167),  # an edge predicate inside
    ("SEQ(A+, NOT SEQ(C?, D, NOT E, F), B)", ""): (23, 60, 112),  # a NOT nested in one of two starts
    ("(SEQ(A+, NOT SEQ(C, NOT SEQ(E?, F), D), B))+", ""): (94, 265, 476),  # nested, two start types
    ("SEQ(NOT SEQ(C*, D), A+, B, NOT SEQ(E, F?))", ""): (16, 48, 80),  # leading and trailing at once
}


@pytest.mark.parametrize("pattern, where", SEVERAL_ENDS)
def test_nots_with_several_start_or_end_types_run_compiled_and_exact(pattern, where):
    text = f"q: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN {pattern}{' WHERE ' + where if where else ''} WITHIN 100"
    stream_events = stream(SEVERAL_ENDS_STREAM, x=SEVERAL_ENDS_X)
    ((group, [partition]),) = groups_of(text, stream_events)
    assert kernel_obstacle(group.queries[0]) is None and group.native is not None
    compiled = group.native.run(partition)
    assert compiled is not None
    assert per_window(compiled) == per_window(python_runs(group, partition))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream_events)
    assert tuple(r.value for r in expected) == SEVERAL_ENDS[pattern, where]
    for strategy in STRATEGIES:
        assert compiled_queries(workload, stream_events, strategy) == {"q"}, strategy
        assert evaluate(text, stream_events, strategy) == expected, strategy


EDGES = [
    "B.x < NEXT(B).x",  # one comparison: the ordered index
    "B.x >= NEXT(B).y",
    "B.x = NEXT(B).y",
    "B.x * 2 - 1 <= NEXT(B).y / 2",
    "B.x % 3 != NEXT(B).y",  # != : the scan
    "B.x < NEXT(B).y OR B.y = NEXT(B).x",
    "B.s = NEXT(B).s",  # strings: the scan
    "-B.x < NEXT(B).f",
]


@pytest.mark.parametrize("edge", EDGES)
def test_edge_predicates_run_compiled_and_exact(edge):
    # Ints, floats, nulls and strings on a B+ run with equal times: the compiled graph's runs are the
    # Python graph's, and the results the enumerator's.
    text = f"q: RETURN COUNT(*), SUM(B.x), MAX(B.f) PATTERN SEQ(A, B+) WHERE {edge} WITHIN 12 SLIDE 4"
    values = [(1, 2, 0.5, "p"), (3, None, 2.5, "q"), (2, 2, -1.0, "p"), (0, 1, 7.25, None), (5, 0, 0.0, "q")]
    stream_events = [Event("A", 0, {"x": 1})]
    for t, (x, y, f, s) in enumerate(values * 2):
        stream_events.append(Event("B", 1 + t - t % 3 // 2, {"x": x, "y": y, "f": f, "s": s}))
    ((group, [partition]),) = groups_of(text, stream_events)
    assert group.native is not None, kernel_obstacle(group.queries[0])
    compiled = group.native.run(partition)
    assert compiled is not None
    assert per_window(compiled) == per_window(python_runs(group, partition))
    assert evaluate(text, stream_events) == evaluate_bruteforce(parse_workload(text), stream_events)


def test_an_edge_predicate_python_alone_computes_leaves_the_partition_to_python():
    # 2^62 · 2^66 overflows 128 bits: only Python's ints compare it; the results are still the enumerator's.
    text = f"q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x * {2**66} < NEXT(B).x WITHIN 100"
    stream_events = [Event("A", 0), Event("B", 1, {"x": 2**62}), Event("B", 2, {"x": 5})]
    ((group, [partition]),) = groups_of(text, stream_events)
    assert group.native is not None and group.native.run(partition) is None
    assert evaluate(text, stream_events) == evaluate_bruteforce(parse_workload(text), stream_events)


# Edge predicates whose int arithmetic leaves 64 bits, over ints at the edges of 64 bits (and floats at 2^63,
# 2^64, 10^30): (COUNT(*), SUM(B.x)) of SEQ(A, B+), the enumerator's. Within 128 bits the kernel computes them
# (``native/src/edges.rs``: in 64 bits, in 128 where a value leaves them); beyond, or dividing an int beyond
# 2^53, it hands the partition to Python (None), whose ints give the same.
M = 2**63
WIDE_X = [M - 1, -M, -1, 0, 1, 2**62, 3]
WIDE_F = [float(M), float(2**64), 1e30, -1e30, 0.5, float(2**64), None]
WIDE_STREAM = [e for i, x in enumerate(WIDE_X) for e in (
    Event("A", 2 * i, {"x": x}), Event("B", 2 * i + 1, {"x": WIDE_X[(3 * i + 1) % 7], "f": WIDE_F[i]}))]  # fmt: skip
WIDE = {  # predicate: (counts, computed by the kernel)
    f"A.x + NEXT(B).x > {M - 1}": ((54, 424275113695319687226), True),  # sums past 2^63 - 1
    f"A.x - NEXT(B).x < -{M}": ((53, 419663427676892299322), True),  # differences below -2^63
    f"A.x * NEXT(B).x >= {(M - 1) ** 2}": ((16, 184467440737095516160), True),  # products up to 2^126
    "-A.x > NEXT(B).x": ((139, 322818021289917153412), True),  # -(-2^63)
    f"A.x < NEXT(B).x + {M}": ((181, 1171368248680556527784), True),  # a literal of 2^63
    f"A.x * {2**64} > NEXT(B).x * {2**64}": ((117, 124515522497539473530), True),  # literals of 2^64
    "A.x * 4 + 1 > NEXT(B).f": ((144, 184467440737095516330), True),  # 2^64 + 1 > 2.0^64, exactly
    f"(A.x * 4) % {2**64 + 13} > NEXT(B).x % 7": ((229, 982289121925033623768), True),
    f"A.x + {2**127 - 1} > NEXT(B).x": ((247, 1028405982109307502822), False),  # overflows 128 bits
    "A.x * A.x * NEXT(B).x > 0": ((134, 1060687784238299218056), False),  # (2^63 - 1)^2 · 2^62 likewise
    "A.x * NEXT(B).x / 3 > 0": ((64, 451945229805884014656), False),  # an int beyond 2^53 divided
}


@pytest.mark.parametrize("predicate", WIDE)
def test_edge_predicates_beyond_64_bits_run_compiled_and_exact(predicate):
    text = f"q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WHERE {predicate} WITHIN 100"
    counts, compiled = WIDE[predicate]
    ((group, [partition]),) = groups_of(text, WIDE_STREAM)
    assert kernel_obstacle(group.queries[0]) is None and group.native is not None
    runs = group.native.run(partition)
    assert (runs is not None) == compiled
    if runs is not None:
        assert per_window(runs) == per_window(python_runs(group, partition))
    expected = evaluate_bruteforce(parse_workload(text), WIDE_STREAM)
    assert tuple(r.value for r in expected) == counts
    for strategy in STRATEGIES:
        assert evaluate(text, WIDE_STREAM, strategy) == expected, strategy


def set_kernel(text: str, stream_events: list[Event]):
    """The set kernel of a one-set workload, its groups, and the set's one partition."""
    (query_set,) = prepare(text).sets
    queries = list(query_set.queries)
    algebras = {q.name: algebra_for(q, stream_events) for q in queries}
    groups = graph_groups(queries, algebras, share=True, native=True)
    return set_kernel_for(groups, {g: i for i, g in enumerate(groupings(queries))}), groups


PLAIN = [
    None,
    -1,
    0,
    2,
    2.0,
    2.5,
    float("nan"),
    float("inf"),
    "Pool",
    "pool",
    "",
    2**60,
    2**60 + 1,
    2**53 + 1,
    float(2**60),
    -(2**63),
    2**63 - 1,
    float(2**63),
    float(2**64),
    -0.5,
]  # (ints beyond 2^53 against floats: exactly, as Python)


def test_the_set_kernel_matches_local_predicates_as_python_does():
    # Every comparison against ints, floats and strings, for nulls, ints, floats (NaN and infinity too) and
    # strings: the kernel matches exactly the events Python's predicates match, and counts the same trends.
    for op in ("<", "<=", ">", ">=", "=", "!="):
        for literal in (
            "2",
            "2.5",
            "-1",
            "-0.5",
            "'Pool'",
            str(2**60),
            "1152921504606846976.0",
            "9007199254740992.0",
            str(2**63),  # ints beyond 64 bits (within 127)
            str(-(2**63) - 1),
            str(2**64 - 2),
            str(2**127 - 1),
            "18446744073709551616.0",
        ):
            for where in (
                f"A.x {op} {literal}",
                f"{literal} {op} A.x",
                f"(A.x {op} {literal} OR A.y = 1) AND A.y < 9",
                f"A.x * 2 {op} {literal}",  # (an expression: 2^64 - 2 from 2^63 - 1, in 128 bits)
            ):
                text = f"q: RETURN COUNT(*), SUM(B.y) PATTERN SEQ(A, B+) WHERE {where} WITHIN 100"
                stream_events = [e for t, x in enumerate(PLAIN) for e in
                                 (Event("A", 2 * t, {"x": x, "y": t % 3}), Event("B", 2 * t + 1, {"y": t}))]  # fmt: skip
                whole, groups = set_kernel(text, stream_events)
                assert whole is not None, text
                answer = whole.run(stream_events)
                runs, declined, matched = answer.runs, answer.declined, answer.matched
                (group,) = groups
                mine = matched_events(group.queries[0], stream_events)
                assert (matched, declined) == (len(mine), []), text
                assert per_window(runs) == per_window(python_runs(group, mine)), text


def test_the_set_kernel_leaves_to_python_what_it_cannot_compare_exactly():
    # An int attribute beyond 64 bits: the whole partition is Python's, and the results are the enumerator's.
    # A bool is of no kind a number is (``predicates.kind``): the kernel compares it (True < 2.5 is false).
    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x < 2.5 WITHIN 100"
    for odd in (True, 2**70):
        stream_events = [Event("A", 1, {"x": 1}), Event("A", 2, {"x": odd}), Event("B", 3, {"x": 0})]
        whole, _ = set_kernel(text, stream_events)
        assert (whole.run(stream_events) is None) == (odd == 2**70), odd
        assert evaluate(text, stream_events) == evaluate_bruteforce(parse_workload(text), stream_events)
        assert [r.value for r in evaluate(text, stream_events)] == [1]  # (a1 b3)
    # Predicates beyond `attribute op literal` run on the set kernel as expressions, with int literals within
    # 127 bits; one with an int literal beyond does not (each graph's own kernel still runs, over the events
    # Python matched).
    whole, (group,) = set_kernel(
        "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x + 1 < 3 AND B.y > B.x * 2 WITHIN 100", []
    )
    assert whole is not None and predicates_obstacle(group.queries[0]) is None
    whole, (group,) = set_kernel(
        f"q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x + 1 < {2**127 - 1} AND B.x != {-(2**127 - 1)} WITHIN 100",
        [],
    )
    assert whole is not None and predicates_obstacle(group.queries[0]) is None
    whole, (group,) = set_kernel(
        f"q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x + 1 < {2**127} WITHIN 100", []
    )
    assert whole is None and group.native is not None


@given(workloads(kernel=True), st.data())
def test_the_set_kernel_equals_the_python_graphs(text, data):
    # All graphs of a set from one call, local predicates applied natively, against the Python graphs
    # partition by partition; graphs it leaves to Python (declined) come from Python in both.
    stream_events = sorted(data.draw(events(types_of(text), max_events=14)), key=lambda e: e.time)
    note(text)
    for query_set in prepare(text).sets:
        queries = list(query_set.queries)
        types = None if query_set.types is None else set(query_set.types)  # (None: CONT reads every type)
        partitions = partition_stream(query_set.attributes, types, stream_events)
        everything = [e for p in partitions.values() for e in p]
        algebras = {q.name: algebra_for(q, everything) for q in queries}
        stats, python_stats = EvaluationStats(), EvaluationStats()
        native_run = run_greta(queries, algebras, stats, share_graphs=True)
        python_run = run_greta(queries, algebras, python_stats, share_graphs=True, native=False)
        for partition in partitions.values():
            assert per_window(native_run(partition)) == per_window(python_run(partition))
        assert stats.events == python_stats.events


def grouped_runner(text: str, stream_events: list[Event]):
    """The non-shared plan's runner of a one-set workload (compiled) and the set's partitions with each
    one's group numbers, numbered as ``hamlet.api`` numbers them (per grouping, in order of appearance)."""
    (query_set,) = prepare(text).sets
    queries = list(query_set.queries)
    partitions = partition_stream(query_set.attributes, set(query_set.types), stream_events)
    algebras = {q.name: algebra_for(q, [e for p in partitions.values() for e in p]) for q in queries}
    numbers: list[dict] = [{} for _ in groupings(queries)]
    numbered = []
    for key, events_ in partitions.items():
        values = [tuple(key[query_set.attributes.index(a)] for a in by) for by in groupings(queries)]
        numbered.append((events_, [n.setdefault(v, len(n)) for v, n in zip(values, numbers)]))
    return run_greta(queries, algebras, EvaluationStats(), share_graphs=True), numbered


def test_the_set_kernel_sums_each_groups_windows_itself():
    # Windows [5k, 5k + 10). Group g=1: partition k=1 (a6 b7 b8, x = 1, 2) has 3 trends, B.x summing to
    # 1 + 2 + 3 = 6 over 4 Bs, in windows 0 and 1; partition k=2 (a11 b12, x = 10) has 1 trend, sum 10, in
    # windows 1 and 2. Group g=2 (a6 b7, x = 5): 1 trend, sum 5, windows 0 and 1. The kernel hands back no
    # run: it sums them, as changes at the first window of a run and after its last (the algebra is linear).
    text = "q: RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WHERE [k] GROUP-BY g WITHIN 10 SLIDE 5"
    stream_events = sorted([Event("A", 6, {"g": 1, "k": 1}), Event("B", 7, {"g": 1, "k": 1, "x": 1}),
                            Event("B", 8, {"g": 1, "k": 1, "x": 2}), Event("A", 11, {"g": 1, "k": 2}),
                            Event("B", 12, {"g": 1, "k": 2, "x": 10}), Event("A", 6, {"g": 2, "k": 1}),
                            Event("B", 7, {"g": 2, "k": 1, "x": 5})], key=lambda e: e.time)  # fmt: skip
    run, partitions = grouped_runner(text, stream_events)
    assert [groups for _, groups in partitions] == [[0], [1], [0]]  # g=1, g=2, g=1 (by first event)
    assert [list(run(events_, groups)) for events_, groups in partitions] == [[], [], []]
    summed = {(s.query, s.group, s.diffs): sorted(s.entries) for s in run.summed()}
    assert summed == {
        ("q", 0, True): [(0, (3, 6, 4, 0)), (1, (1, 10, 1, 0)), (2, (-3, -6, -4, 0)), (3, (-1, -10, -1, 0))],
        ("q", 1, True): [(0, (1, 5, 1, 0)), (2, (-1, -5, -1, 0))],
    }
    assert list(run.summed()) == []  # handed over once
    rows = [(r.group["g"], r.window_start, r.aggregate, r.value) for r in evaluate(text, stream_events)]
    assert rows == [(1, 0, "COUNT(*)", 3), (1, 0, "SUM(B.x)", 6), (2, 0, "COUNT(*)", 1), (2, 0, "SUM(B.x)", 5),
                    (1, 5, "COUNT(*)", 4), (1, 5, "SUM(B.x)", 16), (2, 5, "COUNT(*)", 1), (2, 5, "SUM(B.x)", 5),
                    (1, 10, "COUNT(*)", 1), (1, 10, "SUM(B.x)", 10)]  # fmt: skip
    assert evaluate(text, stream_events) == evaluate_bruteforce(parse_workload(text), stream_events)


def test_what_the_kernels_sums_cannot_hold_goes_to_python():
    # Partitions of one group (equivalence k, no GROUP-BY), one trend (a b) each. The kernel declines to sum
    # a partition, and hands back its runs, when the sums could not hold it exactly; sums of any size and
    # unit it holds, and ints and floats under one MIN. The results are exact.
    def partition(k: int, x) -> list[Event]:
        return [Event("A", 1, {"k": k}), Event("B", 2, {"k": k, "x": x})]

    def summed_or_not(text: str, *xs) -> list[bool]:
        run, partitions = grouped_runner(text, [e for k, x in enumerate(xs) for e in partition(k, x)])
        return [not list(run(events_, groups)) for events_, groups in partitions]

    total = "q: RETURN SUM(B.x) PATTERN SEQ(A, B) WHERE [k] WITHIN 10"
    # 0.5 in units of 2^-1, then 0.001 needs 2^-62: the sum is rescaled; 2^60 then 2^-70 needs 2^130.
    assert summed_or_not(total, 0.5, 0.001) == [True, True]
    assert summed_or_not(total, 2.0**60, 2.0**-70) == [True, True]
    for xs in ((0.5, 0.001), (2.0**60, 2.0**-70), (2.0**60, 2.0**-70, -(2.0**60))):
        stream_events = [e for k, x in enumerate(xs) for e in partition(k, x)]
        (row,) = evaluate(total, stream_events)
        assert row.value == float(sum(map(Fraction, xs)))
        assert [row] == evaluate_bruteforce(parse_workload(total), stream_events)
    # Ints, then floats, under one MIN: ordered by their numbers, an int before an equal float.
    least = "q: RETURN MIN(B.x) PATTERN SEQ(A, B) WHERE [k] WITHIN 10"
    assert summed_or_not(least, 3, 2.5, 2) == [True, True, True]
    rows = evaluate(least, [e for k, x in enumerate((2.0, 2)) for e in partition(k, x)])
    assert [(r.value, type(r.value)) for r in rows] == [(2, int)]
    assert [
        r.value for r in evaluate(least, [e for k, x in enumerate((3, 2.5, 2)) for e in partition(k, x)])
    ] == [2]
    # A count beyond 128 bits over three partitions of 2^126 - 1 trends each (A then a subset of 126 Bs).
    count = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [k] WITHIN 1000"
    stream_events = [Event("A", 0, {"k": k}) for k in range(3)]
    stream_events += [Event("B", t, {"k": k}) for t in range(1, 127) for k in range(3)]
    run, partitions = grouped_runner(count, stream_events)
    assert [not list(run(events_, groups)) for events_, groups in partitions] == [True, True, True]
    assert [r.value for r in evaluate(count, stream_events) if r.window_start == 0] == [3 * (2**126 - 1)]


def test_without_the_compiled_engine_import_fails_with_what_to_do():
    blocker = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'hamlet_native':\n"
        "            raise ImportError('not installed')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import hamlet\n"
    )
    done = subprocess.run([sys.executable, "-c", blocker], check=False, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "ImportError: hamlet's compiled engine (the extension hamlet_native, built from native/) is not installed "
        f"in this Python ({sys.executable}): run scripts/bootstrap, which builds it with cargo, or pip install "
        "./native"
    )


# Ends that only close trends wait and go into the finals n at a time (`Partition::settle_ends`); a Kleene event
# that only feeds running totals doubles its own in place (`Partition::add_to_kleene`). Both run on events alone
# at their time: the streams below keep most times distinct, with long runs of ends between Kleene events.
LONE_EVENT_QUERIES = [
    "RETURN COUNT(*) PATTERN SEQ(A, B+, C)",
    "RETURN COUNT(*), COUNT(C) PATTERN SEQ(B+, C)",
    "RETURN COUNT(*), MIN(B.v), MAX(B.v), SUM(B.v) PATTERN SEQ(A, B+, C)",
    "RETURN COUNT(*) PATTERN SEQ(NOT N, B+, C)",
    "RETURN COUNT(*) PATTERN SEQ(A, NOT N, B+, C)",
    "RETURN COUNT(*), AVG(A.v) PATTERN SEQ(A+, B+, C)",
    "RETURN COUNT(*) PATTERN SEQ(A, B+, C, NOT N)",
]


@st.composite
def lone_event_streams(draw) -> list[Event]:
    """Runs of one type (ends, Kleene events) at mostly distinct times, sometimes two events at one time; at
    most 14 events, whose trends the oracle enumerates one by one (24 under ``WITHIN 1000`` took it 114 s)."""
    out, time = [], 0
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from("AABBBCCCN"))
        for _ in range(min(draw(st.integers(1, 4)), 14 - len(out))):
            time += draw(st.sampled_from([0, 1, 1, 1, 2]))
            out.append(Event(kind, time, {"v": draw(st.integers(-3, 3))}))
    return out


@given(st.lists(st.sampled_from(LONE_EVENT_QUERIES), min_size=1, max_size=3),
       st.sampled_from(["WITHIN 1000", "WITHIN 6", "WITHIN 6 SLIDE 2", "WITHIN 3 SLIDE 1"]),
       lone_event_streams())  # fmt: skip
def test_lone_ends_and_kleene_events_on_the_kernel_equal_bruteforce(returns, window, stream_events):
    text = "\n".join(f"q{i}: {q} {window}" for i, q in enumerate(returns))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream_events)
    with python_graphs_refused():
        for strategy in STRATEGIES:
            assert evaluate(workload, stream_events, strategy) == expected, strategy


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_lone_ends_and_kleene_events_count_past_128_bits_exactly(strategy):
    # a0, then blocks of b events and c events, each at a time of its own. A C closes every trend
    # (a0, a non-empty subset of the Bs before it, itself): 2^n - 1 of them where n Bs precede it. Blocks of
    # 70, 90 and 110 Bs, each followed by 3, 5 and 1 Cs: the counts pass 2^128 and the Cs of a block all see
    # the same Bs, so they reach the finals together.
    events, time, n, expected = [Event("A", 0)], 0, 0, 0
    for bs, cs in [(70, 3), (90, 5), (110, 1)]:
        for _ in range(bs):
            time += 1
            events.append(Event("B", time))
        n += bs
        for _ in range(cs):
            time += 1
            events.append(Event("C", time))
        expected += cs * (2**n - 1)
    text = "q: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 100000"
    with python_graphs_refused():
        (row,) = evaluate(text, events, strategy)
    assert row.value == expected and expected.bit_length() == 271


class _Kind(str):
    pass


class _Attributes(dict):
    pass


class _Amount(Decimal):
    pass


@dataclass(frozen=True, slots=True)
class _OtherEvent:
    type: str
    time: int
    attributes: dict


ENGINE_READY = [Event("A", 1, {"v": 1, "w": 2.5, "s": "x", "n": None, "b": True}), Event("B", 1.25, {})]


def test_times_at_either_end_of_the_years_1_to_9999_are_plain():
    """The first and the last second ``event_time`` takes, as ints and as floats, pass as they are, and so does
    an int time beyond them (an ``Event``'s origin is the user's)."""
    ends = [Event("A", t, {}) for t in (*TIME_RANGE, *map(float, TIME_RANGE), 0.1, 2**70)]
    assert plain_events(ends) is True
    assert to_events(ends) is ends


@pytest.mark.parametrize(
    ("departure", "event", "read_as"),
    [
        ("a subclass of str as the type", Event(_Kind("A"), 2, {"v": 1}), Event("A", 2, {"v": 1})),
        ("a space before the type", Event(" A", 2, {"v": 1}), Event("A", 2, {"v": 1})),
        ("a tab after the type", Event("A\t", 2, {"v": 1}), Event("A", 2, {"v": 1})),
        ("a Decimal value", Event("A", 2, {"v": 1, "d": Decimal("1.5")}), Event("A", 2, {"v": 1, "d": 1.5})),
        ("a subclass of Decimal as a value", Event("A", 2, {"d": _Amount(2)}), Event("A", 2, {"d": 2})),
        # (read as they are: the kernel hands such a partition to Python, which reads any mapping)
        ("attributes in a subclass of dict", Event("A", 2, _Attributes(v=1)), None),
        ("attributes in a read-only mapping", Event("A", 2, MappingProxyType({"v": 1})), None),
        ("a lone surrogate in the type", Event("A\ud800", 2, {"v": 1}), None),
        ("an empty type", Event("", 2, {"v": 1}), "event 3: event_type is empty"),
        ("a NUL in the type", Event("A\x00B", 2, {"v": 1}), "event 3: event_type 'A\\x00B' holds a NUL byte"),
        ("a bool time", Event("A", True, {"v": 1}),
         "event 3: event_time True is neither a number of seconds nor a datetime"),
        # (a float time is plain where ``event_time`` takes it as it is; an int one of any size, whose origin is
        # the user's, is: the kernel leaves times beyond its 2^60 µs to Python)
        ("a float time after the year 9999", Event("A", 253402300800.0, {"v": 1}),
         "event 3: event_time 253402300800.0 lies outside the years 1 to 9999 (-62135596800 to 253402300799 s)"),
        ("an infinite time", Event("A", math.inf, {"v": 1}), "event 3: event_time inf is not a finite number"),
        ("a NaN time", Event("A", math.nan, {"v": 1}), "event 3: event_time is empty"),
        ("another class with the same fields", _OtherEvent("A", 2, {"v": 1}),
         "event 3: expected an Event or a mapping, found _OtherEvent"),
    ],
)  # fmt: skip
def test_only_plain_events_pass_to_the_engine_as_they_are(departure, event, read_as):
    """``to_events`` passes a list of plain ``Event``s on as the very list (the compiled check,
    ``native/src/events.rs``'s ``plain_events``). One event that departs from what the engine reads, first
    or last, takes the path that reads each event: as the event it stands for (``read_as``; None: as it is),
    or refused with the event named."""
    assert plain_events(ENGINE_READY) is True
    assert to_events(ENGINE_READY) is ENGINE_READY
    assert plain_events([event, *ENGINE_READY]) is False, departure
    assert plain_events([*ENGINE_READY, event]) is False, departure
    if isinstance(read_as, str):
        with pytest.raises(EventError) as refused:
            to_events([*ENGINE_READY, event])
        assert str(refused.value) == read_as
        return
    read = to_events([*ENGINE_READY, event])
    assert read[:2] == ENGINE_READY
    if read_as is None:
        assert read[2] is event
    else:
        assert (read[2], type(read[2].type), type(read[2].attributes)) == (read_as, str, dict)
        assert [type(v) for v in read[2].attributes.values()] == [
            type(v) for v in read_as.attributes.values()
        ]
