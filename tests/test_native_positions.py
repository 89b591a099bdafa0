"""Position templates (dissertation §12: a type at several places, ``P{n,}``, ``P OR Q``, ``P AND Q``) on the
compiled kernel (``native/src/graph.rs``: each event at every state of its type; AND's classes), in every
strategy, through the API and the Arrow path, against the brute-force enumerator — with the Python graph
refusing them, so every number here is the kernel's."""

from __future__ import annotations

from functools import partial

import hamlet_native
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from kernel_checks import (
    compiled_queries,
    position_queries_of,
    python_graph_refuses_position_templates,
)
from oracle import evaluate_bruteforce
from workloads import events, position_queries, table_of, types_of, workloads

from hamlet import STRATEGIES, Event, evaluate, parse_workload
from hamlet.api import evaluate_table, evaluate_with, finalize_table
from hamlet.runtime.greta import run_greta
from hamlet.runtime.native import kernel_obstacle


@given(st.data())
def test_position_templates_on_the_kernel_equal_bruteforce(data):
    """1-3 queries on position templates (repeated types, P{n,}, OR of 2-3 operands, AND, optional parts
    inside them; every aggregate the language allows on each; local and edge predicates, GROUP-BY and
    equivalence, windows) next to 0-2 ordinary queries, every strategy."""
    lines = [data.draw(position_queries(f"p{i}")) for i in range(data.draw(st.integers(1, 3)))]
    others = data.draw(st.integers(0, 2))
    if others:
        lines.append(data.draw(workloads(max_queries=others)))
    text = "\n".join(lines)
    # (ints for floats: a sum over floats and ints under one MIN are exact on the kernel too, but a MIN over
    # both is Python's by design, which the refusing graph below would take for a failure)
    stream = data.draw(events(types_of(text), max_events=12, min_events=4))
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    positions = position_queries_of(workload)
    table = table_of(stream)
    with python_graph_refuses_position_templates():
        for strategy, executor in STRATEGIES.items():
            assert positions <= compiled_queries(workload, stream, strategy), strategy
            assert evaluate_with(workload, stream, executor) == expected, strategy
            assert finalize_table(workload, evaluate_table(workload, table, strategy)) == expected, strategy


N = 130  # A events before the b: counts of 2^130 and more, beyond the kernel's 128-bit fast path

BIG = """
qo: RETURN COUNT(*), COUNT(A), SUM(A.x), MIN(A.x), MAX(A.x), AVG(A.x)
    PATTERN SEQ(A+, B) OR SEQ(A, B+) WITHIN 1000 SLIDE 1000
qa: RETURN COUNT(*) PATTERN SEQ(A+, B) AND SEQ(A, B+) WITHIN 1000 SLIDE 1000
qr: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN SEQ(A+, B, A) WITHIN 1000 SLIDE 1000
qm: RETURN COUNT(*) PATTERN A{2,} WITHIN 1000 SLIDE 1000
"""


def big_stream() -> list[Event]:
    """a1 ... a130 (x = its time), b131, a132 (x = 132): one window."""
    stream = [Event("A", t, {"x": t}) for t in range(1, N + 1)]
    return stream + [Event("B", N + 1, {}), Event("A", N + 2, {"x": N + 2})]


def big_expected() -> dict[tuple[str, str], object]:
    """By hand. SEQ(A+, B): a non-empty subset of the first N a's, then b (2^N - 1 trends); SEQ(A, B+): one a
    and b, N trends, all also SEQ(A+, B)'s. So OR has 2^N - 1 trends, each a counted in half of them
    (N·2^(N-1) A events, x summing to 2^(N-1)·N(N+1)/2); AND pairs C_i = 2^N - 1 - N trends of P only with
    the C_ij = N of both, and those N among themselves. SEQ(A+, B, A) ends at a132: 2^N - 1 trends holding
    N·2^(N-1) + 2^N - 1 a's. A{2,} takes every subset of two or more of the N + 1 a's."""
    trends, a_events = 2**N - 1, N * 2 ** (N - 1)
    p_only, both = 2**N - 1 - N, N
    sum_x = 2 ** (N - 1) * N * (N + 1) // 2
    return {
        ("qo", "COUNT(*)"): trends,
        ("qo", "COUNT(A)"): a_events,
        ("qo", "SUM(A.x)"): sum_x,
        ("qo", "MIN(A.x)"): 1,
        ("qo", "MAX(A.x)"): N,
        ("qo", "AVG(A.x)"): (N + 1) / 2,
        ("qa", "COUNT(*)"): p_only * both + both * (both - 1) // 2,
        ("qr", "COUNT(*)"): trends,
        ("qr", "COUNT(A)"): a_events + trends,
        ("qr", "SUM(A.x)"): sum_x + (N + 2) * trends,
        ("qm", "COUNT(*)"): 2 ** (N + 1) - 1 - (N + 1),
    }


def test_counts_beyond_128_bits_on_position_templates_are_exact_in_every_strategy():
    stream, expected = big_stream(), big_expected()
    assert expected[("qm", "COUNT(*)")] > 1 << 128
    workload = parse_workload(BIG)
    assert position_queries_of(workload) == {"qo", "qa", "qr", "qm"}
    table = table_of(stream)
    with python_graph_refuses_position_templates():
        for strategy in STRATEGIES:
            assert compiled_queries(workload, stream, strategy) == {"qo", "qa", "qr", "qm"}, strategy
            rows = evaluate(BIG, stream, strategy)
            assert {(r.query, r.aggregate): r.value for r in rows} == expected, strategy
            assert all((r.window_start, r.window_end) == (0, 1000) for r in rows)
            from_table = finalize_table(workload, evaluate_table(workload, table, strategy))
            assert from_table == rows, f"{strategy}, table"


def test_position_templates_of_the_worked_example_run_compiled():
    """README's worked example (Figure 12.1's a1 b2 a3 a4 b7, x: a1=5 a3=6 a4=4) on the kernel: OR 9 trends,
    COUNT(A) 14, SUM 70, AVG 5.0; AND 30 pairs; SEQ(A+, B, A) 2; SEQ(A+, A+) 4 (one trend per sequence)."""
    text = """
    qo: RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x) PATTERN SEQ(A+, B) OR SEQ(A, B+) WITHIN 100 SLIDE 100
    qa: RETURN COUNT(*) PATTERN SEQ(A+, B) AND SEQ(A, B+) WITHIN 100 SLIDE 100
    qr: RETURN COUNT(*) PATTERN SEQ(A+, B, A) WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A+, A+) WITHIN 100 SLIDE 100
    """
    x = {1: 5, 3: 6, 4: 4}
    stream = [Event(t, time, {"x": x[time]} if t == "A" else {}) for t, time in
              [("A", 1), ("B", 2), ("A", 3), ("A", 4), ("B", 7)]]  # fmt: skip
    expected = {("qo", "COUNT(*)"): 9, ("qo", "COUNT(A)"): 14, ("qo", "SUM(A.x)"): 70, ("qo", "AVG(A.x)"): 5.0,
                ("qa", "COUNT(*)"): 30, ("qr", "COUNT(*)"): 2, ("qt", "COUNT(*)"): 4}  # fmt: skip
    workload = parse_workload(text)
    assert evaluate_bruteforce(workload, stream) == evaluate(text, stream, "greta")
    with python_graph_refuses_position_templates():
        for strategy in STRATEGIES:
            rows = evaluate(text, stream, strategy)
            assert {(r.query, r.aggregate): r.value for r in rows} == expected, strategy


def test_optional_parts_run_compiled_under_a_not_too():
    """``P?`` and ``P*`` give a pattern several start and end types, which the kernel's graph takes, and so does
    a NOT over such a pattern (``native/src/negation.rs``). Over a1 c2 b3 d4 b5 c6 b7 (x = time), counted by
    hand below."""
    text = """
    qo: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A?, B+, C?) WITHIN 100 SLIDE 100
    qs: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B*, C) WITHIN 100 SLIDE 100
    qn: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C?, D), B+) WITHIN 100 SLIDE 100
    """
    stream = [Event(t, time, {"x": time}) for time, t in enumerate("ACBDBCB", 1)]
    workload = parse_workload(text)
    assert [kernel_obstacle(q) for q in workload.queries] == [None, None, None]
    expected = evaluate_bruteforce(workload, stream)
    values = {(r.query, r.aggregate): r.value for r in expected}
    # qo: 7 subsets of b3 b5 b7, alone or after a1 (x2), with or without c6 where the last b is before it
    # (b3, b5, b3 b5: 3 subsets, x2 = 6 more): 14 + 6 = 20; COUNT(B): 12·2 + 4·2 = 32 (subsets hold 12 b's,
    # those before c6 4). qs: (a1,c2), (a1,c6), (a1,b3,c6), (a1,b5,c6), (a1,b3,b5,c6): 5, B.x 3 + 5 + 8 = 16.
    # qn: d4 (and c2 d4) match SEQ(C?, D) after a1, so a1's first b is b3, which any of b5, b7 may follow: 4.
    assert values == {("qo", "COUNT(*)"): 20, ("qo", "COUNT(B)"): 32, ("qs", "COUNT(*)"): 5,
                      ("qs", "SUM(B.x)"): 16, ("qn", "COUNT(*)"): 4}  # fmt: skip
    for strategy in STRATEGIES:
        assert compiled_queries(workload, stream, strategy) == {"qo", "qs", "qn"}, strategy
        assert evaluate(text, stream, strategy) == expected, strategy


def test_the_graph_kernel_names_a_position_outside_its_template():
    def kernel(starts, ends, fields):
        return hamlet_native.GraphKernel(["A", "B", "A"], starts, ends, [(0, 1), (1, 2)], [], fields, False,
                                         [(10, 10, 0, 100)], [])  # fmt: skip

    trends = ("trends", [], None, False)
    assert kernel([0], [2], [trends, ("ends", [2], None, False)]) is not None
    with pytest.raises(ValueError, match=r"^ends: position 3 outside the template's 3$"):
        kernel([0], [3], [trends])
    with pytest.raises(ValueError, match=r"^field 1 \(count\): position 5 outside the template's 3$"):
        kernel([0], [2], [trends, ("count", [0, 5], None, False)])
    with pytest.raises(ValueError, match=r"^a template needs a start and an end position$"):
        kernel([], [2], [trends])


def test_leading_and_trailing_not_around_position_templates_by_hand():
    """Over a1 c2 a3 b4 a5 c6 a7 (x = time), counted by hand, in every strategy, compiled and in Python.

    * ``SEQ(NOT C, A+, B, A)`` in [0, 100): c2 lies before any first event but a1, so trends start at a1:
      (a1) or (a1, a3), then b4, then a5 or a7 — 4 trends, 2 + 2 + 3 + 3 = 10 A events, A.x summing to
      6 + 8 + 9 + 11 = 34.
    * ``SEQ(A+, B, A, NOT C)``: c6 follows a5, so the last a is a7: 3 non-empty subsets of {a1, a3}, b4, a7.
    * ``SEQ(A{2,}, NOT C)``: two or more a's ending at a7 (c6 follows a5 and every earlier a): the 7
      non-empty subsets of {a1, a3, a5}, then a7.
    * ``SEQ(NOT C, A{2,})`` in tumbling windows of 4: [0, 4) holds (a1, a3) (nothing before a1);
      [4, 8) holds (a5, a7) only (c6 lies before a7 and after the window's start)."""
    text = """
    qr: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN SEQ(NOT C, A+, B, A) WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A+, B, A, NOT C) WITHIN 100 SLIDE 100
    qm: RETURN COUNT(*) PATTERN SEQ(A{2,}, NOT C) WITHIN 100 SLIDE 100
    ql: RETURN COUNT(*) PATTERN SEQ(NOT C, A{2,}) WITHIN 4 SLIDE 4
    """
    stream = [Event(t, time, {"x": time}) for time, t in enumerate("ACABACA", 1)]
    expected = [("qr", 0, "COUNT(*)", 4), ("qr", 0, "COUNT(A)", 10), ("qr", 0, "SUM(A.x)", 34),
                ("qt", 0, "COUNT(*)", 3), ("qm", 0, "COUNT(*)", 7), ("ql", 0, "COUNT(*)", 1),
                ("ql", 4, "COUNT(*)", 1)]  # fmt: skip
    workload = parse_workload(text)
    assert position_queries_of(workload) == {"qr", "qt", "qm", "ql"}
    rows = evaluate_bruteforce(workload, stream)
    assert [(r.query, r.window_start, r.aggregate, r.value) for r in rows] == expected
    assert evaluate_with(workload, stream, partial(run_greta, native=False)) == rows, "Python's graph"
    table = table_of(stream)
    with python_graph_refuses_position_templates():
        for strategy in STRATEGIES:
            assert compiled_queries(workload, stream, strategy) == {"qr", "qt", "qm", "ql"}, strategy
            assert evaluate(text, stream, strategy) == rows, strategy
            assert finalize_table(workload, evaluate_table(workload, table, strategy)) == rows, strategy


def test_an_or_of_64_operands_ends_trends_of_each_by_hand():
    """``SEQ(A, B0) OR ... OR SEQ(A, B62) OR SEQ(A, B63, NOT C)`` over a1 b0 a3 b63 c5 b9 b63 (x = time): the
    operands a trend ends are a 64-bit set in the kernel, the last operand's trailing NOT its highest bit.
    (a1, b0); (a1 | a3, b63 at 4) each followed by c5, so none; (a1 | a3, b9); (a1 | a3, b63 at 7): 5 trends.
    More operands are refused at the 65th (``test_language_errors.py``)."""
    operands = [f"SEQ(A, B{i})" for i in range(63)] + ["SEQ(A, B63, NOT C)"]
    text = f"q: RETURN COUNT(*) PATTERN {' OR '.join(operands)} WITHIN 100"
    stream = [Event(t, time) for time, t in enumerate(["A", "B0", "A", "B63", "C", "B9", "B63"], 1)]
    workload = parse_workload(text)
    rows = evaluate_bruteforce(workload, stream)
    assert [(r.query, r.window_start, r.value) for r in rows] == [("q", 0, 5)]
    table = table_of(stream)
    with python_graph_refuses_position_templates():
        for strategy in STRATEGIES:
            assert compiled_queries(workload, stream, strategy) == {"q"}, strategy
            assert evaluate(text, stream, strategy) == rows, strategy
            assert finalize_table(workload, evaluate_table(workload, table, strategy)) == rows, strategy


def test_contiguous_semantics_on_position_templates_by_hand():
    """``SEMANTICS CONT`` (Definition 2.4) on position templates over a1 b2 a3 c4 a5 a6 b7 a8 (one window),
    counted by hand: a trend is a run of consecutive events of the stream (c4, which no pattern but the
    NOTs names, breaks every run across it).

    * ``SEQ(A+, B, A)``: (a1, b2, a3), (a5, a6, b7, a8), (a6, b7, a8) — 3;
    * ``A{2,}``: (a5, a6) — 1;
    * ``SEQ(A, A) OR SEQ(A, B, A)``: (a1, b2, a3), (a5, a6), (a6, b7, a8) — 3;
    * ``SEQ(NOT C, A+, B, A)``: only (a1, b2, a3) starts before c4 — 1;
    * ``SEQ(A+, B, A, NOT C)``: (a5, a6, b7, a8) and (a6, b7, a8) end after c4 — 2."""
    text = """
    qr: RETURN COUNT(*) PATTERN SEQ(A+, B, A) SEMANTICS CONT WITHIN 100 SLIDE 100
    qm: RETURN COUNT(*) PATTERN A{2,} SEMANTICS contiguous WITHIN 100 SLIDE 100
    qo: RETURN COUNT(*) PATTERN SEQ(A, A) OR SEQ(A, B, A) SEMANTICS CONT WITHIN 100 SLIDE 100
    ql: RETURN COUNT(*) PATTERN SEQ(NOT C, A+, B, A) SEMANTICS CONT WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A+, B, A, NOT C) SEMANTICS CONT WITHIN 100 SLIDE 100
    """
    stream = [Event(t, time, {}) for time, t in enumerate("ABACAABA", 1)]
    expected = {"qr": 3, "qm": 1, "qo": 3, "ql": 1, "qt": 2}
    counted_by_hand(text, stream, expected)


def test_next_semantics_on_position_templates_by_hand():
    """``SEMANTICS NEXT`` (Definition 2.3) on position templates over a1 b2 a3 c4 a5 a6 b7 a8 (one window),
    counted by hand: a trend is dropped for a longer one with the same first and last events, even one that
    runs along other states (``hamlet/runtime/dominance.py``).

    * ``SEQ(A, A) OR SEQ(A, B, A)``: the 8 triples (a, b, a) stay; of the 10 pairs of a's only those with no
      b between them, (a3, a5), (a3, a6), (a5, a6) — 11;
    * ``SEQ(A+, B, A)``: with b2, (a1, b2, a) for each later a — 4; with b7, one trend per first a, holding
      every a up to b7, then a8 — 4; together 8;
    * ``A{2,}``: one per first and last a, holding every a between — 10;
    * ``SEQ(NOT C, A+, B, A)``: those of ``SEQ(A+, B, A)`` that start before c4 — 6;
    * ``SEQ(A+, B, A, NOT C)``: those that end after c4 — 7."""
    text = """
    qo: RETURN COUNT(*) PATTERN SEQ(A, A) OR SEQ(A, B, A) SEMANTICS NEXT WITHIN 100 SLIDE 100
    qr: RETURN COUNT(*) PATTERN SEQ(A+, B, A) SEMANTICS NEXT WITHIN 100 SLIDE 100
    qm: RETURN COUNT(*) PATTERN A{2,} SEMANTICS skip-till-next-match WITHIN 100 SLIDE 100
    ql: RETURN COUNT(*) PATTERN SEQ(NOT C, A+, B, A) SEMANTICS NEXT WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A+, B, A, NOT C) SEMANTICS NEXT WITHIN 100 SLIDE 100
    """
    stream = [Event(t, time, {}) for time, t in enumerate("ABACAABA", 1)]
    expected = {"qo": 11, "qr": 8, "qm": 10, "ql": 6, "qt": 7}
    counted_by_hand(text, stream, expected)


def test_next_semantics_on_a_conjunction_hold_per_operand():
    """``P AND Q`` pairs a trend of P with one of Q, each under the query's semantics on its own: over a0 a0'
    a1 a2 (one window) under NEXT, P = ``SEQ(A, A, A)`` has (a0, a1, a2) and (a0', a1, a2), Q = ``SEQ(A,
    A)`` all 5 pairs (a trend of Q holds two events, so no longer one drops it, although (a0, a1, a2) runs
    from a0 to a2 too); no trend is both, so 2 × 5 = 10 pairs."""
    text = "qa: RETURN COUNT(*) PATTERN SEQ(A, A, A) AND SEQ(A, A) SEMANTICS NEXT WITHIN 100 SLIDE 100"
    stream = [Event("A", time, {}) for time in (0, 0, 1, 2)]
    counted_by_hand(text, stream, {"qa": 10})


def test_nots_on_position_templates_by_hand():
    """NOTs on position templates over a1 c2 a3 b4 a5 c6 a7 (one window), counted by hand: between two parts
    where the types around a NOT also follow each other inside a part, in a Kleene part, in an operand of OR
    and AND (``automaton.Guard``):

    * ``SEQ(A+, NOT C, A)``: the last two a's with no c between them: only a3, a5, after a1 or not — 2;
    * ``SEQ(A, NOT C, B) OR SEQ(B, A+)``: (a3, b4) (c2 cuts a1 off), and b4 before a5, a7 or both — 4;
    * ``SEQ(A, (SEQ(B, NOT C, A))+)``: a1 or a3, then b4 and a5 (c6 cuts a7 off) — 2;
    * ``SEQ(A, NOT C, A) AND A+``: one pair of a's with no c between them, (a3, a5), paired with each of
      the other 14 of the 15 trends of A+ — 14;

    and NOTs first or last in an operand of OR and AND, at its own starts and ends only:

    * ``SEQ(NOT C, A+) OR SEQ(B, A)``: the a's after a1 (c2 precedes them) and (b4, a5), (b4, a7) — 8 + 2;
    * ``SEQ(A+, NOT C) OR SEQ(B, A+)``: the a's up to a7 (c6 follows the others) and b4 before a5, a7 or
      both — 8 + 3;
    * ``SEQ(A, A, NOT C) AND A+``: P's (a1, a7), (a3, a7), (a5, a7) are trends of A+ too, whose other 12
      are not P's: 12·3 + 3·2/2 = 39 pairs;
    * ``SEQ(A, B, A, NOT C) OR SEQ(A, A)`` under NEXT: (a1, b4, a7), (a3, b4, a7) (c6 follows a5); of the 6
      pairs of a's, (a1, a7) and (a3, a7) are dropped for those, while (a1, a5) and (a3, a5) stay, since
      (a1, b4, a5) and (a3, b4, a5) are no trends — 2 + 4."""
    text = """
    qk: RETURN COUNT(*) PATTERN SEQ(A+, NOT C, A) WITHIN 100 SLIDE 100
    qo: RETURN COUNT(*) PATTERN SEQ(A, NOT C, B) OR SEQ(B, A+) WITHIN 100 SLIDE 100
    qp: RETURN COUNT(*) PATTERN SEQ(A, (SEQ(B, NOT C, A))+) WITHIN 100 SLIDE 100
    qa: RETURN COUNT(*) PATTERN SEQ(A, NOT C, A) AND A+ WITHIN 100 SLIDE 100
    ql: RETURN COUNT(*) PATTERN SEQ(NOT C, A+) OR SEQ(B, A) WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A+, NOT C) OR SEQ(B, A+) WITHIN 100 SLIDE 100
    qe: RETURN COUNT(*) PATTERN SEQ(A, A, NOT C) AND A+ WITHIN 100 SLIDE 100
    qn: RETURN COUNT(*) PATTERN SEQ(A, B, A, NOT C) OR SEQ(A, A) SEMANTICS NEXT WITHIN 100 SLIDE 100
    """
    stream = [Event(t, time, {}) for time, t in enumerate("ACABACA", 1)]
    expected = {"qk": 2, "qo": 4, "qp": 2, "qa": 14, "ql": 10, "qt": 11, "qe": 39, "qn": 6}
    counted_by_hand(text, stream, expected)


def counted_by_hand(text: str, stream: list[Event], expected: dict[str, int]) -> None:
    """The oracle counts what the docstring counted by hand (one window), and so do Python's graph and the
    kernel in every strategy, through the API and the Arrow path."""
    workload = parse_workload(text)
    rows = evaluate_bruteforce(workload, stream)
    assert {r.query: r.value for r in rows} == expected
    assert evaluate_with(workload, stream, partial(run_greta, native=False)) == rows, "Python's graph"
    table = table_of(stream)
    with python_graph_refuses_position_templates():
        for strategy in STRATEGIES:
            assert compiled_queries(workload, stream, strategy) == set(expected), strategy
            assert evaluate(text, stream, strategy) == rows, strategy
            assert finalize_table(workload, evaluate_table(workload, table, strategy)) == rows, strategy


def test_a_type_both_matched_and_negated_and_nots_over_places_by_hand():
    """A NOT over a type the pattern matches too, or one type under two NOTs, over a1 b2 a3 c4 a5 a6 b7 b8
    c9 a10 b11 (one window), counted by hand; each such event is a node of the pattern's graph and a match
    of the NOT's:

    * ``SEQ(A, NOT A, B)``: the last a before each b — (a1, b2), (a6, b7), (a6, b8), (a10, b11): 4;
    * ``SEQ(A+, NOT A, B)``: A+ ends at that a, with any earlier a's: 1 + 8 + 8 + 16 = 33;
    * ``SEQ(NOT B, A+, B)``: no b before the first a, so A+ starts at a1: 1 + 8 + 8 + 16 = 33;
    * ``SEQ(A, B, NOT A)``: no a after the b, so the b is b11: 5;
    * ``SEQ(A, NOT C, B, NOT C, A)``: c4 and c9 cut every pair across them: only (a1, b2, a3): 1;
    * ``SEQ(B, A, B, NOT A)`` (a position template): the last b is b11, after b2 (a3, a5, a6 or a10 between),
      b7 or b8 (a10): 4 + 1 + 1 = 6;

    and NOTs of patterns with a type at several places or ``P{n,}`` (their graphs run over places):

    * ``SEQ(A, NOT SEQ(C, C), B)``: of the 14 pairs of an a and a later b, only (a1, b11) and (a3, b11)
      have two c's between them: 12;
    * ``SEQ(A+, NOT C{2,}, B)``: 1 + 15 + 15 for b2, b7, b8, and for b11 the 31 A+ trends of a1 ... a10 but
      the 3 that end at a1 or a3: 59;
    * ``SEQ(A, NOT SEQ(A, A), A)``: two a's with at most one a between them: 4 + 3 = 7;
    * ``SEQ(A, NOT SEQ(C, NOT B, C), B)``: c4 and c9 have b7 and b8 between them, so nothing matches the
      NOT: all 14 pairs."""
    text = """
    qa: RETURN COUNT(*) PATTERN SEQ(A, NOT A, B) WITHIN 100 SLIDE 100
    qk: RETURN COUNT(*) PATTERN SEQ(A+, NOT A, B) WITHIN 100 SLIDE 100
    ql: RETURN COUNT(*) PATTERN SEQ(NOT B, A+, B) WITHIN 100 SLIDE 100
    qt: RETURN COUNT(*) PATTERN SEQ(A, B, NOT A) WITHIN 100 SLIDE 100
    qc: RETURN COUNT(*) PATTERN SEQ(A, NOT C, B, NOT C, A) WITHIN 100 SLIDE 100
    qp: RETURN COUNT(*) PATTERN SEQ(B, A, B, NOT A) WITHIN 100 SLIDE 100
    qs: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, C), B) WITHIN 100 SLIDE 100
    qm: RETURN COUNT(*) PATTERN SEQ(A+, NOT C{2,}, B) WITHIN 100 SLIDE 100
    qr: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(A, A), A) WITHIN 100 SLIDE 100
    qn: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT B, C), B) WITHIN 100 SLIDE 100
    """
    stream = [Event(t, time, {}) for time, t in enumerate("ABACAABBCAB", 1)]
    expected = {"qa": 4, "qk": 33, "ql": 33, "qt": 5, "qc": 1, "qp": 6, "qs": 12, "qm": 59, "qr": 7, "qn": 14}
    counted_by_hand(text, stream, expected)
