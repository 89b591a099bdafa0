"""Queries that share every position but the end run on one graph of their merged template (HAMLET §2,
Figure 3(b), over a shared prefix) under ``static`` and ``hamlet``: each query reads the finals of its own
end. Every strategy equals the brute-force oracle, on the compiled kernel and on the Python graph, through
``hamlet.evaluate`` and ``hamlet.evaluate_table``; the merge happens where it may and nowhere else (a NOT,
an edge predicate or another predicate on a shared position keeps a query's own graph)."""

from __future__ import annotations

from functools import partial

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from test_property import check
from test_vertical import check_split
from workloads import attributes, bursty_events, events, table_of

from hamlet import STRATEGIES, Event, evaluate, parse_workload
from hamlet.api import evaluate_table, evaluate_with, finalize_table, prepare
from hamlet.explain import explain
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.greta import graph_groups
from hamlet.runtime.partition import merge_obstacle
from hamlet.runtime.shared import run_shared
from hamlet.stats import EvaluationStats

# The positions every query of a workload shares before its end (the bursts are of B), and the type before
# the end.
PREFIXES = [("A, B+", "B"), ("A+, B+", "B"), ("(SEQ(A, B))+", "B"), ("A, B+, G", "G"), ("G, A, B+", "B")]
ENDS = ["C", "D", "E"]
PARTITIONS = [("", ""), ("", ""), (" WHERE [k]", ""), ("", "g"), (" WHERE [k]", "g")]
# Queries that never share a graph with the others: (pattern with {p} the prefix and {e} the end,
# predicates, whether they merge at all: another predicate on a shared position may merge with its like).
APART = [
    ("SEQ({p}, NOT F, {e})", [], False),
    ("SEQ(NOT F, {p}, {e})", [], False),
    ("SEQ({p}, {e})", ["{last}.x < NEXT({e}).x"], False),
    ("SEQ({p}, {e})", ["A.x < 3"], True),
]


@st.composite
def prefix_workloads(draw, short_slides: bool = False) -> tuple[str, list[str], list[str]]:
    """2–3 queries over one prefix with distinct ends (they must share one graph), and 0–2 that must not
    (``APART``), all partitioned alike; returns the text, the names that must merge, and those that merge
    with nobody. ``short_slides``: slides of 1–2 s (a pane that cuts a dozen seconds into segments)."""
    prefix, last = draw(st.sampled_from(PREFIXES))
    where, group = draw(st.sampled_from(PARTITIONS))
    ends = draw(st.permutations(ENDS))[: draw(st.integers(2, 3))]
    lines, merged, alone = [], [], []

    def query(name: str, pattern: str, predicates: list[str], end: str) -> str:
        returns = draw(
            st.sampled_from(["COUNT(*)", "COUNT(*), COUNT(B)", f"SUM({end}.x)", "AVG(A.x), COUNT(*)"])
        )
        conditions = ([where[len(" WHERE ") :]] if where else []) + predicates
        within = draw(st.sampled_from([8, 16, 30]))
        slide = draw(st.sampled_from([1, 2] if short_slides else [within, max(1, within // 2)]))
        return (f"{name}: RETURN {'g, ' if group else ''}{returns} PATTERN {pattern}"
                + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
                + (f" GROUP-BY {group}" if group else "") + f" WITHIN {within} SLIDE {slide}")  # fmt: skip

    for i, end in enumerate(ends):
        lines.append(query(f"m{i}", f"SEQ({prefix}, {end})", [], end))
        merged.append(f"m{i}")
    for i in range(draw(st.integers(0, 2))):
        shape, predicates, merges = draw(st.sampled_from(APART))
        end = draw(st.sampled_from(ENDS))
        pattern = shape.format(p=prefix, e=end)
        lines.append(query(f"n{i}", pattern, [p.format(e=end, last=last) for p in predicates], end))
        if not merges:
            alone.append(f"n{i}")
    return "\n".join(lines), merged, alone


@st.composite
def rounds(draw, max_events: int = 13) -> list[Event]:
    """Rounds of G, A, a burst of B, G and each end, in the prefixes' order, sometimes a negated F among
    them: most streams hold trends of several ends."""
    out: list[Event] = []
    t = 0
    runs = [("G", 1, 1), ("A", 1, 2), ("B", 1, 4), ("F", 0, 1), ("G", 1, 1), ("E", 0, 1), ("C", 1, 2),
            ("D", 0, 2)]  # fmt: skip
    for _ in range(draw(st.integers(1, 2))):
        # (one partition per round, mostly: trends run within a partition)
        partition = {"k": draw(st.sampled_from("pq")), "g": draw(st.sampled_from([1, 2]))}
        for event_type, least, most in runs:
            for _ in range(draw(st.integers(least, most))):
                if len(out) == max_events:
                    return out
                t += draw(st.sampled_from([1, 1, 0]))
                values = draw(attributes())
                if draw(st.integers(0, 5)):
                    values.update(partition)
                out.append(Event(event_type, t, values))
    return out


def merged_names(text: str, stream: list[Event]) -> list[set[str]]:
    """The queries of each graph on a merged template, as ``static`` and ``hamlet`` build them."""
    out = []
    for query_set in prepare(parse_workload(text)).sets:
        queries = list(query_set.queries)
        algebras = {q.name: algebra_for(q, stream) for q in queries}
        for group in graph_groups(queries, algebras, share=True, native=True, merge=True):
            if group.template is not None:
                out.append({q.name for q in group.queries})
    return out


@given(prefix_workloads(), st.data())
def test_queries_sharing_a_prefix_equal_bruteforce_on_one_merged_graph(drawn, data):
    text, merged, alone = drawn
    scattered = events("AAABBBBCDEFG", max_events=12, min_events=5)
    bursty = bursty_events("AAACDEFG", max_events=12, min_runs=4)
    stream = data.draw(st.one_of(rounds(), rounds(), rounds(), scattered, bursty))
    check(text, stream)  # every strategy and path, ``evaluate`` and ``evaluate_table``
    graphs = merged_names(text, stream)
    ours = [names for names in graphs if set(merged) & names]
    assert ours == [set(merged)], graphs
    assert not any(set(alone) & names for names in graphs), graphs
    for strategy in STRATEGIES:
        stats = EvaluationStats()
        rows = evaluate(text, stream, strategy, stats=stats)
        event(f"{len({r.query for r in rows if r.query in merged})} merged queries with a trend")
        assert stats.merged_graphs == (0 if strategy == "greta" else len(graphs)), strategy


@given(prefix_workloads(short_slides=True), st.data())
def test_merged_graphs_compose_across_time_segments(drawn, data):
    """A merged graph's segments (``native/src/vertical.rs``) compose exactly: what flows in are running
    totals of the shared positions, and each member's windows close on its own end's finals."""
    text, merged, _ = drawn
    stream = data.draw(rounds())
    assert any(set(merged) <= names for names in merged_names(text, stream))
    check_split(text, stream, data)


def test_merged_graph_counts_beyond_128_bits():
    """SEQ(A, B+, C) and SEQ(A, B+, D) on one graph: two A, 68 B, a C, 71 B, a C and a D. A trend picks an A
    and a non-empty subset of the B before its end: C's trends 2·(2^68 − 1) + 2·(2^139 − 1), D's
    2·(2^139 − 1), far beyond 128 bits; the C in the middle of the burst ends q1's trends only."""
    text = "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 1000\nq2: RETURN COUNT(*) PATTERN SEQ(A, B+, D) WITHIN 1000"
    types = ["A", "A"] + ["B"] * 68 + ["C"] + ["B"] * 71 + ["C", "D"]
    stream = [Event(t, i, {"x": 1}) for i, t in enumerate(types)]
    expected = [2 * (2**68 - 1) + 2 * (2**139 - 1), 2 * (2**139 - 1)]
    assert expected[1] > 1 << 128
    assert merged_names(text, stream) == [{"q1", "q2"}]
    workload = parse_workload(text)
    for strategy in STRATEGIES:
        assert [r.value for r in evaluate(workload, stream, strategy)] == expected, strategy
        rows = finalize_table(workload, evaluate_table(workload, table_of(stream), strategy))
        assert [r.value for r in rows] == expected, f"{strategy}, table"


def test_ends_waiting_alike_settle_once_for_the_whole_merged_graph():
    """The ends of one merged graph read one running total (B's), so where each end waits m times in a window
    class, m times that total is added once for all of them (native/src/ends.rs), the rest per end: here each
    waits once in class 0, and in the last pane C three times and D and E twice (m = 2, C's third on its own);
    E is missing before A10, and C, D and E share a time at 3 and 9. Every strategy, through ``evaluate`` and
    ``evaluate_table``, equals the oracle, and the counts are those by hand: [0, 8) holds A1, B2, B4 and C3, C5, C7 (1 + 3 + 3 trends of
    q1), [16, 24) A17, B18 before C20, C22, C23, D20, D22 and E21, E23."""
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 8 SLIDE 4\n"
        "q2: RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B+, D) WITHIN 8 SLIDE 4\n"
        "q3: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+, E) WITHIN 8 SLIDE 4"
    )
    spec = "A1 B2 C3 D3 E3 B4 C5 D6 E6 C7 B8 C9 D9 A10 B11 E12 C13 D14 B15 C16 D16 A17 B18 C20 D20 E21 C22 D22 E23 C23"
    stream = [Event(token[0], int(token[1:]), {"x": i % 3}) for i, token in enumerate(spec.split())]
    assert merged_names(text, stream) == [{"q1", "q2", "q3"}]
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    for strategy in STRATEGIES:
        assert evaluate(workload, stream, strategy) == expected, strategy
        found = finalize_table(workload, evaluate_table(workload, table_of(stream), strategy))
        assert found == expected, f"{strategy}, table"
    counts = {(r.query, r.window_start): r.value for r in expected if r.aggregate == "COUNT(*)"}
    assert [counts[q, 0] for q in ("q1", "q2", "q3")] == [7, 4, 4]
    assert [counts[q, 16] for q in ("q1", "q2", "q3")] == [3, 2, 2]


def test_explain_names_the_merged_graphs_and_why_others_stay_apart():
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 10\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+, D) WITHIN 20 SLIDE 10\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+, NOT E, D) WITHIN 10\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 10\n"
    )
    lines = explain(parse_workload(text)).splitlines()
    for line in [
        "      {q1, q2}: start A, end C | D; transitions: B -+-> B, A -SEQ-> B, B -SEQ-> C, B -SEQ-> D",
        "      q3 not merged: a NOT (its place in the pattern is per query)",
        "      q4 not merged: the end type B is under a Kleene plus (its events lead on to others)",
    ]:
        assert line in lines


def test_merged_graph_reads_each_end_on_its_own_under_predicates_on_the_end():
    """Ends with their own local predicates (distinct types: one graph), and a third query with the same end
    type as one of them under another predicate: a second merged graph, never two positions of one type."""
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE C.x > 1 WITHIN 50\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+, D) WHERE D.x < 2 WITHIN 50\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 50\n"
    )
    rng_types = "ABBCBDBBCDCB"
    stream = [Event(t, i, {"x": i % 4}) for i, t in enumerate(rng_types)]
    assert merged_names(text, stream) == [{"q1", "q2"}]
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    assert [r.value for r in expected] == [34, 38, 65]  # (C3: 3, C10: 31; D5: 7, D9: 31; C3, C8, C10)
    for strategy in STRATEGIES:
        assert evaluate(workload, stream, strategy) == expected, strategy
        in_python = partial(run_shared, sharing=strategy, native=False) if strategy != "greta" else None
        if in_python is not None:
            assert evaluate_with(workload, stream, in_python) == expected, f"{strategy} in Python"


@pytest.mark.parametrize(
    ("pattern", "where", "reason"),
    [
        ("SEQ(A, B+, NOT F, {e})", "", "a NOT"),
        ("SEQ(A, B+, {e})", " WHERE B.x < NEXT({e}).x", "an edge predicate"),
        ("SEQ(A, B+, {e}) SEMANTICS NEXT", "", "SEMANTICS NEXT"),
        ("SEQ(A, B+, {e}?)", "", "an optional part"),
        ("SEQ(A, B+, {e}) OR SEQ(G, B+, {e})", "", "position states"),
        ("SEQ(A, B+, {e}+)", "", "under a Kleene plus"),
    ],
)
def test_what_never_merges_keeps_its_own_graph_with_the_reason(pattern, where, reason):
    """Two queries alike but for their ends, each with what a merged template does not keep apart."""
    text = "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN {pattern.format(e=end)}{where.format(e=end)} WITHIN 10"
        for i, end in enumerate("CD")
    )
    workload = parse_workload(text)
    assert all(reason in (merge_obstacle(q) or "") for q in workload.queries)
    assert merged_names(text, []) == []
