"""Property: on random small workloads and streams, every strategy equals the brute-force oracle exactly.

Workloads nest Kleene plus and SEQ, put NOT first, between and last (and nested inside NOT), and mix local,
equivalence and edge predicates (indexed and scanned), several windows, groups, nulls, floats and equal
timestamps. Both GRETA paths — the optimised sources and the plain scan — are held to the oracle, and so
are the graphs that queries differing only in windows or aggregates share (``hamlet``'s non-shared plan).
Workloads of 2–5 queries that share a Kleene sub-pattern run every strategy's multi-query paths: sharable
sets, shared bursts, shared graphs, the compiled set kernel (and each strategy without it).
"""

from __future__ import annotations

import math
from functools import partial

from hypothesis import assume, given, note
from hypothesis import strategies as st
from kernel_checks import compiled_queries, position_queries_of, python_graphs_refused
from oracle import evaluate_bruteforce
from test_trends import expected as expected_trends
from test_trends import listed
from workloads import (
    POSITION_AROUND_B,
    POSITION_SEMANTICS,
    analyses,
    bursty_events,
    events,
    graph_sharing_workloads,
    joint_workloads,
    multi_query_workloads,
    negating_its_own_types,
    optional_patterns,
    position_patterns,
    position_queries,
    position_queries_with_ends,
    probe,
    queries,
    several_ends_nots,
    sharing_workloads,
    split_items,
    table_of,
    typed,
    types_of,
    with_nots_inside,
    with_semantics,
    workloads,
)

from hamlet import STRATEGIES, parse_workload
from hamlet.api import evaluate_table, evaluate_with, finalize_table
from hamlet.errors import QueryError
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.columnar import events_of, sorted_events
from hamlet.runtime.greta import run_greta
from hamlet.runtime.native import kernel_obstacle
from hamlet.runtime.shared import run_shared

# hamlet runs a partition whose bursts are too small to pay on GRETA's graphs (``SharingPlan.weigh``, ``CostModel.pays``);
# with a set-up cost of −∞ every partition takes the shared path, which is held to the oracle as well.
HAMLET_SHARED_PATH = partial(run_shared, sharing="hamlet", model=CostModel(partition_setup=-math.inf))
# With no set-up cost, every partition whose segments save a step takes the shared path and the others run on
# GRETA's graphs: both kinds of partition in one evaluation, their finals summed into the same windows.
HAMLET_EITHER_PATH = partial(run_shared, sharing="hamlet", model=CostModel(partition_setup=0.0))


@given(workloads(), st.data())
def test_greta_equals_bruteforce(text, data):
    check(text, data.draw(events(types_of(text))))


@given(workloads(max_queries=1, negation=True), st.data())
def test_greta_equals_bruteforce_under_negation(text, data):
    check(text, data.draw(events(types_of(text), max_events=13)))


@given(graph_sharing_workloads(), st.data())
def test_queries_sharing_a_graph_across_windows_and_aggregates_equal_bruteforce(text, data):
    check(text, data.draw(events(types_of(text), max_events=13)))


@given(workloads(), st.data())
def test_semantics_mixed_equal_bruteforce(text, data):
    """Queries under skip-till-any-match, skip-till-next-match and contiguous semantics (Definitions 2.2–2.4),
    edge and local predicates, groups, windows, equal timestamps, and a type (Z) no pattern reads: it
    breaks contiguity."""
    text = data.draw(with_semantics(text))
    check(text, data.draw(events(types_of(text))))


@given(workloads(max_queries=1, negation=True), st.data())
def test_semantics_under_negation_equal_bruteforce(text, data):
    text = data.draw(with_semantics(text))
    check(text, data.draw(events(types_of(text), max_events=13)))


@given(sharing_workloads(), st.data())
def test_semantics_in_sharable_workloads_equal_bruteforce(text, data):
    """Queries that share B+ as written, some under NEXT or CONT: those run alone (``sharing_obstacle``),
    the others still share."""
    text = data.draw(with_semantics(text, weight_any=2))
    check(text, data.draw(bursty_events()))


@given(st.data())
def test_optional_and_star_equal_bruteforce(data):
    """``P?`` and ``P*`` (dissertation §12) anywhere in a pattern, with local and edge predicates, groups,
    windows, every semantics and a NOT where one may stand, on every strategy (on the compiled kernel,
    which takes several start and end types, alone)."""
    text = "\n".join(data.draw(queries(f"q{i}", pattern=data.draw(negated_somewhere(optional_patterns()))))
                     for i in range(data.draw(st.integers(1, 2))))  # fmt: skip
    text = data.draw(with_semantics(text))
    stream = data.draw(events(types_of(text), max_events=12))
    check(text, stream)
    workload = parse_workload(text)
    taken = {q.name for q in workload.queries if kernel_obstacle(q) is None}
    for strategy in STRATEGIES:
        assert taken <= compiled_queries(workload, stream, strategy), strategy


@given(st.data())
def test_a_type_both_matched_and_negated_equals_bruteforce(data):
    """A NOT over types the positive pattern holds too, or one type under two NOTs (``SEQ(A, NOT A, B)``:
    only the last A before a B; ``SEQ(A+, B, A, NOT B)``): each event of such a type is a node of the
    pattern's graph and a match of the NOT's. 1-2 queries (on GRETA's and on position templates) with
    predicates, groups, windows and every semantics, next to a query that shares B+ with one of them: every
    strategy equals the oracle, in Python and compiled (the kernel takes every one of them), through the
    API and the Arrow path; and ``hamlet trends`` lists the oracle's trends."""
    lines = [data.draw(queries(f"q{i}", pattern=data.draw(negating_its_own_types())))
             for i in range(data.draw(st.integers(1, 2)))]  # fmt: skip
    text = data.draw(with_semantics("\n".join(lines), weight_any=2))
    if data.draw(st.booleans()):
        text += "\nsharer: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 5"
    workload = parse_workload(text)
    stream = data.draw(events(types_of(text, every=2), max_events=12))
    check(text, stream)
    for query in workload.queries:
        if query.choice != "AND":
            assert listed(workload, query.name, stream) == expected_trends(query, stream), query.name
    names = {q.name for q in workload.queries if kernel_obstacle(q) is None}
    assert {q.name for q in workload.queries if q.semantics != "CONT" or not q.edge_predicates} <= names, text
    for strategy in STRATEGIES:
        assert names <= compiled_queries(workload, stream, strategy), strategy


@given(st.data())
def test_nots_with_several_start_or_end_types_run_compiled_and_equal_bruteforce(data):
    """``NOT N`` where optional parts give N several start or end types (``NOT SEQ(C?, D)``, ``NOT SEQ(C, D*)``,
    ``NOT (SEQ(C?, D))+``, one with a NOT of its own), leading, trailing, between two types, nested: 2-3 queries
    a workload, with local and edge predicates (on the negated transitions too), groups, windows and mostly
    skip-till-any-match (some NEXT or CONT). The kernel takes every one of them (``kernel_obstacle`` is None),
    each strategy runs them on it, and all equal the oracle (``check``: in Python too, and through the Arrow
    path)."""
    lines = [data.draw(queries(f"q{i}", pattern=data.draw(several_ends_nots().filter(analyses))))
             for i in range(data.draw(st.integers(2, 3)))]  # fmt: skip
    text = data.draw(with_semantics("\n".join(lines), weight_any=3))
    workload = parse_workload(text)
    assert all(kernel_obstacle(q) is None for q in workload.queries), text
    stream = data.draw(events(types_of(text, every=2), max_events=12))
    check(text, stream)
    names = {q.name for q in workload.queries}
    for strategy in STRATEGIES:
        assert names <= compiled_queries(workload, stream, strategy), strategy


@st.composite
def negated_somewhere(draw, patterns):
    """A ``SEQ(...)`` of ``patterns`` with ``NOT N`` (a type of its own) inserted before, between or after its
    items, where the analysis allows one (next to a single type that is not optional), or as it is."""
    pattern = draw(patterns)
    items = split_items(pattern[len("SEQ(") : -1])
    slot = draw(st.integers(0, len(items)))
    negated = "SEQ(" + ", ".join(items[:slot] + ["NOT N"] + items[slot:]) + ")"
    try:
        probe(negated)
    except QueryError:
        return pattern
    return draw(st.sampled_from([pattern, negated]))


@given(st.data())
def test_position_templates_equal_bruteforce(data):
    """A type at several places, ``P{n,}``, ``P OR Q`` and ``P AND Q`` (dissertation §12), with local and edge
    predicates, groups and windows, under every semantics, next to 0-2 ordinary
    queries under any semantics: every query equals
    the oracle in every strategy, through the API and the Arrow path."""
    lines = [data.draw(position_queries(f"p{i}", kernel=False)) for i in range(data.draw(st.integers(1, 2)))]
    others = data.draw(st.integers(0, 2))
    if others:
        lines.append(data.draw(with_semantics(data.draw(workloads(max_queries=others)))))
    text = "\n".join(lines)
    stream = data.draw(events(types_of(text), max_events=10, min_events=4))
    check(text, stream)
    check_positions_compiled(text, stream)


@given(st.data())
def test_leading_and_trailing_not_on_position_templates_equal_bruteforce(data):
    """A leading NOT, a trailing NOT or both around a type at several places or ``P{n,}`` (``SEQ(NOT D, A+, B,
    A)``, ``SEQ(A{2,}, B, NOT E)``), with local and edge predicates, groups and windows, under every semantics, next
    to 0-2 ordinary queries under any semantics: every query equals the oracle in every strategy, in Python
    and compiled, through the API and the Arrow path."""
    lines = [data.draw(position_queries_with_ends(f"p{i}")) for i in range(data.draw(st.integers(1, 2)))]
    others = data.draw(st.integers(0, 2))
    if others:
        lines.append(data.draw(with_semantics(data.draw(workloads(max_queries=others)))))
    text = "\n".join(lines)
    stream = data.draw(events(types_of(text, every=2), max_events=10, min_events=4))
    check(text, stream)
    check_positions_compiled(text, stream)


@given(sharing_workloads(), st.data())
def test_position_templates_next_to_sharing_queries_equal_bruteforce(text, data):
    """Queries that share B+ (graphlets, shared graphs) next to a query on a position template over B: it
    shares nothing, and nobody's counts move."""
    pattern = data.draw(st.sampled_from(POSITION_AROUND_B))
    partition = data.draw(st.sampled_from([((), ()), (("k",), ()), ((), ("g",))]))
    text += "\n" + data.draw(queries("p", pattern=pattern, partition=partition))
    stream = data.draw(bursty_events(max_events=11))
    check(text, stream)
    check_positions_compiled(text, stream)


@given(st.data())
def test_nots_between_two_parts_of_a_position_template_equal_bruteforce(data):
    """One or two NOTs between two items of any SEQ of a position template: at the top level, inside a
    Kleene part or P{n,}, in an operand of OR or AND (``SEQ(A+, NOT F, A)``, ``(SEQ(A, NOT F, B)){2,}``,
    ``SEQ(A, NOT F, B) OR B+``), where the types around a NOT may also follow each other inside a part,
    with local and edge predicates, groups and windows, under every semantics: every strategy equals the
    oracle, in Python and compiled, through the API and the Arrow path."""
    pattern = data.draw(with_nots_inside(data.draw(position_patterns())))
    assume("NOT " in pattern)
    partition = data.draw(st.sampled_from([((), ())] * 3 + [(("k",), ()), ((), ("g",))]))
    window = data.draw(st.sampled_from([(15, 15), (16, 8), (10, 5)]))
    text = data.draw(queries("p0", pattern=pattern, partition=partition, window=window,
                             predicates=[] if data.draw(st.booleans()) else None))  # fmt: skip
    text = data.draw(with_semantics(text, clauses=POSITION_SEMANTICS))
    stream = data.draw(events(types_of(text, every=2), max_events=10, min_events=4))
    check(text, stream)
    check_positions_compiled(text, stream)


def check_positions_compiled(text, stream):
    """Every strategy runs the workload's position templates on the compiled kernel (what ``check`` held to
    the oracle came from there, but for the paths it asks for in Python), under contiguous semantics with
    an edge predicate too (event by event: native/src/reach.rs)."""
    workload = parse_workload(text)
    positions = position_queries_of(workload)  # (a drawn pattern may need none: ``A``, ``SEQ(A, B+)``)
    assert all(kernel_obstacle(q) is None for q in workload.queries if q.name in positions)
    for strategy in STRATEGIES:
        assert positions <= compiled_queries(workload, stream, strategy), strategy


def check(text, stream):
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    assert evaluate_with(workload, stream, run_greta) == expected
    assert evaluate_with(workload, stream, partial(run_greta, plain_scan=True)) == expected
    assert evaluate_with(workload, stream, partial(run_greta, share_graphs=True)) == expected, "shared graphs"
    # The same graphs all in Python (the strategies run those the compiled kernel takes on it).
    assert evaluate_with(workload, stream, partial(run_greta, native=False)) == expected, "greta in Python"
    python_graphs = partial(run_greta, share_graphs=True, native=False)
    assert evaluate_with(workload, stream, python_graphs) == expected, "shared graphs in Python"
    for strategy in ("static", "hamlet"):
        assert evaluate_with(workload, stream, STRATEGIES[strategy]) == expected, strategy
        in_python = partial(run_shared, sharing=strategy, native=False)
        assert evaluate_with(workload, stream, in_python) == expected, f"{strategy} in Python"
    assert evaluate_with(workload, stream, HAMLET_SHARED_PATH) == expected, "hamlet, shared path"
    assert evaluate_with(workload, stream, HAMLET_EITHER_PATH) == expected, "hamlet, partitions either way"
    check_table(workload, stream, expected)


def check_table(workload, stream, expected):
    """Every strategy on the stream as an Arrow table (``evaluate_table``: the kernel reads the columns and
    writes the states). A column of ints and floats is a float column in Arrow: where the table changed a
    value's type, the oracle counts the table's events."""
    table = table_of(stream)
    read = events_of(sorted_events(table), table.column_names[2:])
    if [typed(e) for e in read] != [typed(e) for e in stream]:
        expected = evaluate_bruteforce(workload, read)
    for strategy in STRATEGIES:
        assert finalize_table(workload, evaluate_table(workload, table, strategy)) == expected, (
            f"{strategy}, table"
        )


@given(sharing_workloads(), bursty_events())
def test_shared_strategies_equal_bruteforce(text, stream):
    """Queries sharing B+ with differing predecessors, predicates, windows and negation over bursty streams."""
    check(text, stream)


@given(multi_query_workloads(), st.data())
def test_multi_query_workloads_equal_bruteforce(text, data):
    """2–5 queries sharing a Kleene sub-pattern, NOT in every position, every predicate, aggregate, grouping
    and window mixed, over bursts of the shared type or scattered events (issue 16: a graph shared by
    queries whose NOTs stand apart counted one query's trends for the other)."""
    types = types_of(text, every=2)  # negated types as often as positive ones: NOTs that cut trends
    scattered = events(types, max_events=13, min_events=6)
    check(text, data.draw(st.one_of(scattered, bursty_events(types, max_events=14, min_runs=3))))


@given(joint_workloads(), st.data())
def test_queries_of_one_shape_under_one_edge_predicate_equal_bruteforce(text, data):
    """Queries that share B+ under one edge predicate, each with its own types around it, local predicates
    and aggregates: static and hamlet run them as one joint graph (``native/src/joint.rs``), whose blocks of
    zeros must keep each query's trends its own. The stream's types are the workload's, B the most; x is a
    float (0.5 or 2.25) about one time in three, so sums over floats run there too, each graph's in the joint
    graph's unit."""
    stream = bursty_events(types_of(text), max_events=14, min_runs=3)
    check(text, data.draw(stream))


def rising_prices(starts: int, value=lambda period, i: (i * 3 + period * 5) % 11) -> list:
    """Two periods of S0 .. S<starts - 1>, then six Ps whose prices rise and fall, one event a second; a P's v
    is ``value(period, i)`` (the joint graphs' tests' stream)."""
    from hamlet import Event

    stream, t = [], 0
    for period, prices in enumerate([[3, 5, 4, 6, 8, 7], [2, 9, 10, 1, 11, 12]]):
        for k in range(starts):
            stream.append(Event(f"S{k}", t))
            t += 1
        for i, price in enumerate(prices):
            stream.append(Event("P", t, {"price": price, "v": value(period, i)}))
            t += 1
    return stream


def shared_bursts(workload, stream, expected, table: bool = True) -> dict[str, tuple[int, int]]:
    """Per strategy, the bursts it counted and those it shared; each strategy's rows are ``expected``, on the
    Events path and (``table``) on the table path."""
    from hamlet import evaluate
    from hamlet.stats import EvaluationStats

    shared = {}
    for strategy in STRATEGIES:
        stats = EvaluationStats()
        assert evaluate(workload, stream, strategy, stats) == expected, strategy
        shared[strategy] = (stats.bursts, stats.shared_bursts)
    if table:
        check_table(workload, stream, expected)
    return shared


def test_queries_of_one_shape_under_one_edge_predicate_share_every_burst_in_one_joint_graph():
    """Issue 16's rising prices, small: five queries SEQ(S_k, P+) under P.price < NEXT(P).price, each with its
    own threshold on P.v. No graphlet can take a P burst (each P meets the edge predicate on its own), so
    static and hamlet run the five graphs as one joint graph: both P bursts shared, the oracle's rows."""
    text = "\n".join(
        f"q{k}: RETURN COUNT(*), SUM(P.v) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price AND P.v > {k * 2} "
        "WITHIN 1000"
        for k in range(5)
    )
    stream = rising_prices(5)
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    # (q4's by hand: its Ps are 6 and 12, so S4, 6 / S4, 6, 12 / S4, 12, and the second S4, 12)
    assert [r.value for r in expected if r.aggregate == "COUNT(*)"] == [174, 126, 54, 10, 4]
    shared = shared_bursts(workload, stream, expected)
    # (hamlet weighs it by `joint::pays`, in halves of a field: the five graphs alone take 40 events of 8 + 4
    # each, 960; jointly the ten S events add to their own block, 10 · 2 · (8 + 4), and the ten Ps that any
    # graph matches (30 matches in all) step once with the others' blocks as zeros, Σ 2 · (8 + 4m) + (20 - 4m)
    # = 480: 720, so it shares both bursts too)
    assert shared == {"greta": (0, 0), "static": (2, 2), "hamlet": (2, 2)}
    # Twenty periods, every P above every threshold: hamlet shares every burst too, with greta's rows.
    from hamlet import Event, evaluate

    long = [Event(e.type, e.time + 11 * n, {**e.attributes, "v": 9} if e.type == "P" else {})
            for n in range(0, 20, 2) for e in stream]  # fmt: skip
    shared = shared_bursts(workload, long, evaluate(workload, long, "greta"), table=False)
    assert shared == {"greta": (0, 0), "static": (20, 20), "hamlet": (20, 20)}


def test_a_joint_graph_sums_floats_in_each_graphs_own_units():
    """The rising prices with floats for v: r / 8 below 9 (eighths), r / 2 from 9 on (halves), r as in the
    test above, so each query matches the same Ps. q4 matches only the Ps at prices 6 and 12, of v 4.5 each,
    the joint graph all of them: its unit (2^-3) is finer than q4's own events need (2^-1). Each sum comes
    out as the oracle's, exactly, and both bursts are still shared in one joint graph, on the kernel."""
    text = "\n".join(
        f"q{k}: RETURN COUNT(*), SUM(P.v), AVG(P.v) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price "
        f"AND P.v > {k * 2 / 8} WITHIN 1000"
        for k in range(5)
    )
    stream = rising_prices(5, lambda period, i: (r := (i * 3 + period * 5) % 11) / (2 if r >= 9 else 8))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    assert [r.value for r in expected if r.aggregate == "COUNT(*)"] == [174, 126, 54, 10, 4]
    # (q4's trends by hand, as in the test above: S4 6, S4 6 12, S4 12 twice)
    q4 = [r.value for r in expected if r.query == "q4" and r.aggregate == "SUM(P.v)"]
    assert q4 == [4.5 + 9 + 4.5 + 4.5]
    with python_graphs_refused():
        shared = shared_bursts(workload, stream, expected)
    assert shared == {"greta": (0, 0), "static": (2, 2), "hamlet": (2, 2)}


def test_queries_of_one_shape_in_windows_of_their_own_run_as_one_joint_graph():
    """Three queries SEQ(S_k, P+) under one edge predicate, each in its own window (8 s and 12 s sliding by 4,
    16 s tumbling): one joint graph over the union of their window classes steps less than three graphs
    (`joint::merge_windows`: per event 3 classes of 8 + 6 fields against 2 · (8 + 4), 3 · (8 + 1) and 8 + 1),
    and a block's value in a class does not depend on whose window made it one: every strategy gives the
    oracle's rows in each query's own windows."""
    text = (
        "q0: RETURN COUNT(*), SUM(P.v) PATTERN SEQ(S0, P+) WHERE P.price < NEXT(P).price WITHIN 8 SLIDE 4\n"
        "q1: RETURN COUNT(*) PATTERN SEQ(S1, P+) WHERE P.price < NEXT(P).price AND P.v > 2 WITHIN 12 SLIDE 4\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(S2, P+) WHERE P.price < NEXT(P).price AND P.v > 4 WITHIN 16\n"
    )
    stream = rising_prices(3)
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    # (by hand: q0 in [-4, 4) is S0 at 0 and the P at 3, whose v is 0; q2 in [0, 16) has Ps of prices 4, 6,
    # 2, 9: from the first S2 the rising runs 4 / 6 / 2 / 9 / 4 6 / 4 9 / 6 9 / 2 9 / 4 6 9, from the second
    # 2 / 9 / 2 9: 12)
    assert [(r.query, int(r.window_start), r.value) for r in expected] == [
        ("q0", -4, 1), ("q0", -4, 0), ("q0", 0, 23), ("q0", 0, 192), ("q0", 8, 8), ("q0", 8, 55),
        ("q1", -4, 5), ("q1", 0, 11), ("q1", 4, 4), ("q1", 8, 19), ("q2", 0, 12),
    ]  # fmt: skip
    shared = shared_bursts(workload, stream, expected)
    # (the Ps in 4-second panes, gcd of the windows: 5 bursts. hamlet weighs each step by the window classes
    # an event falls into: jointly 3, the windows that hold time 0 starting at 0, -4 and -8 s; alone 2, 3 and
    # 1. In halves of a field 447 · 3 = 1341 against 2 · (14 · 2 · 12 + 11 · 3 · 9 + 8 · 1 · 9) = 1410: shared)
    assert shared == {"greta": (0, 0), "static": (5, 5), "hamlet": (5, 5)}


def test_queries_of_one_shape_that_match_disjoint_events_are_not_joined_by_hamlet():
    """Three queries SEQ(S_k, P+) under one edge predicate whose bands of P.v never overlap: every P is one
    query's, so a joint graph would step each P with two blocks of zeros and save no step. static joins
    them anyway; hamlet weighs it (`joint::pays`, in halves of a field: per P 2 · (8 + 1) + 2 zeros against
    2 · (8 + 1) alone, the S events alike) and runs the three graphs on their own. Both give the oracle's
    rows."""
    text = "\n".join(
        f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price AND P.v >= {10 * k} "
        f"AND P.v < {10 * k + 10} WITHIN 1000"
        for k in range(3)
    )
    stream = rising_prices(3, lambda period, i: 10 * (i % 3) + i)
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    # (by hand: q0's Ps have prices 3, 6 | 2, 1: from the first S0 the rising runs 3 / 6 / 3 6 / 2 / 1, from
    # the second 2 / 1, so 7; q1's 5, 8 | 9, 11 and q2's 4, 7 | 10, 12 rise throughout: 15 + 3 each)
    assert [r.value for r in expected] == [7, 18, 18]
    shared = shared_bursts(workload, stream, expected)
    assert shared == {"greta": (0, 0), "static": (2, 2), "hamlet": (0, 0)}


def test_a_joint_graph_reads_no_attribute_of_another_members_end_type():
    """Found by the deep run of ``test_multi_query_workloads_equal_bruteforce``: two queries of one shape whose
    trends end in D+ and G+ run as one joint graph, whose end place carries q1's AVG(G.x). A D event, of which
    no query reads an attribute, was read for that update too: the kernel panicked (index out of bounds) on
    the Events path. Each B set of (SEQ(B+, C))+ ({B1}, {B2}, {B1, B2}: 3 >= 2) before C3, then D+ (D4, D6, both)
    or G+ (G5, G7, both): 9 trends each; q1's G values summed over them 3 · (4 + 6 + 10) = 60 of 12 Gs."""
    workload = parse_workload(
        "q0: RETURN COUNT(*) PATTERN SEQ((SEQ(B+, C))+, D+) WHERE B.x >= NEXT(B).x WITHIN 100\n"
        "q1: RETURN COUNT(*), AVG(G.x) PATTERN SEQ((SEQ(B+, C))+, G+) WHERE B.x >= NEXT(B).x WITHIN 100"
    )
    from hamlet import Event

    stream = [Event("B", 1, {"x": 3}), Event("B", 2, {"x": 2}), Event("C", 3, {}), Event("D", 4, {}),
              Event("G", 5, {"x": 4}), Event("D", 6, {}), Event("G", 7, {"x": 6})]  # fmt: skip
    expected = evaluate_bruteforce(workload, stream)
    assert [(r.query, r.aggregate, r.value) for r in expected] == [
        ("q0", "COUNT(*)", 9), ("q1", "COUNT(*)", 9), ("q1", "AVG(G.x)", 5.0)
    ]  # fmt: skip
    # (static and hamlet alike run the two as one joint graph: one of the two bursts shared)
    assert shared_bursts(workload, stream, expected) == {"greta": (0, 0), "static": (2, 1), "hamlet": (2, 1)}
