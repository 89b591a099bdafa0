"""Queries of one shape run in columns (hamlet.runtime.shapes): grouping, and exact results."""

from __future__ import annotations

import math
from functools import partial

import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from streams import stream
from workloads import examples

from hamlet import Event, parse_workload
from hamlet.api import evaluate, evaluate_with
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.shapes import shape_of
from hamlet.runtime.shared import run_shared


def _shapes(text: str) -> dict[str, object]:
    workload = parse_workload(text)
    return {q.name: shape_of(q, algebra_for(q, [])) for q in workload.queries}


def test_queries_equal_up_to_type_names_have_one_shape():
    shapes = _shapes(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 10\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(D, B+, E) WHERE B.x < 3 WITHIN 10\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 20\n"  # another window
        "q4: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"  # another template
        "q5: RETURN COUNT(*) PATTERN SEQ(A, B+, NOT F, C) WITHIN 10\n"  # negation: own QueryRun
        "q6: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE B.x < NEXT(B).x WITHIN 10\n"  # edge predicate
        "q7: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+, C) WITHIN 10"  # not COUNT(*) only
    )
    assert shapes["q1"] == shapes["q2"]
    assert len({shapes[q] for q in ("q1", "q3", "q4")}) == 3
    assert shapes["q5"] is None and shapes["q6"] is None and shapes["q7"] is None


def test_figure_4_in_one_shape_group():
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100\nq2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100"
    )
    events = stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13 b14")
    for strategy in ("static", "hamlet"):
        assert [(r.query, r.value) for r in evaluate(text, events, strategy)] == [("q1", 132), ("q2", 72)]


WORKLOAD = """
q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 6 SLIDE 3
q2: RETURN COUNT(*) PATTERN SEQ(C, B+, A) WHERE B.x < 2 WITHIN 6 SLIDE 3
q3: RETURN COUNT(*) PATTERN SEQ(D, B+, C) WHERE B.x >= 1 AND D.x = 0 WITHIN 6 SLIDE 3
q4: RETURN COUNT(*) PATTERN (SEQ(A, B+))+ WITHIN 6 SLIDE 3
q5: RETURN COUNT(*) PATTERN (SEQ(C, B+))+ WHERE B.x < 2 WITHIN 6 SLIDE 3
q6: RETURN COUNT(*) PATTERN SEQ(A, B+, NOT D, C) WITHIN 6 SLIDE 3
"""


@pytest.mark.parametrize("strategy", ["static", "hamlet"])
def test_shape_groups_with_predicates_sliding_windows_and_equal_timestamps(strategy):
    # Bursts of B with equal timestamps inside, and timestamps holding several types (a3 c3, b9 d9).
    xs = {"b2": 0, "b4": 1, "b5": 2, "b7": 0, "b8": 1, "b9": 3, "b11": 1, "d1": 0, "d9": 0}
    events = stream("d1 b2 a3 c3 b4 b4 b5 a6 b7 b8 b8 b9 d9 c10 a10 b11 c12 a13", x=xs)
    workload = parse_workload(WORKLOAD)
    expected = evaluate_bruteforce(workload, events)
    assert evaluate(workload, events, "greta") == expected
    assert evaluate(workload, events, strategy) == expected
    assert sum(r.value for r in expected if r.query in ("q1", "q2", "q3")) > 0  # the groups have work


def test_shape_group_rows_only_where_a_trend_matched():
    events = [Event("A", 1), Event("B", 2), Event("A", 20), Event("C", 21)]
    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\nq2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 10"
    )
    rows = evaluate(text, events, "hamlet")
    assert [(r.query, r.window_start, r.value) for r in rows] == [("q1", 0, 1)]


def test_queries_with_the_same_predicates_share_without_event_level_snapshots():
    from hamlet.stats import EvaluationStats

    text = (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < 5 WITHIN 1000\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WHERE B.x < 5 WITHIN 1000"
    )
    events = [Event("A", 1), Event("C", 2)] + [
        Event("B", 10 + i, {"x": x}) for i, x in enumerate([9, 1, 9, 2, 9])
    ]
    for sharing in ("static", "hamlet"):
        stats = EvaluationStats()
        # The shared path, even where this machine's costs would not share a partition so short.
        executor = partial(run_shared, sharing=sharing, model=CostModel(partition_setup=-math.inf))
        rows = evaluate_with(parse_workload(text), events, executor, stats=stats)
        assert [(r.query, r.value) for r in rows] == [("q1", 3), ("q2", 3)]  # b11, b13 and both
        assert (stats.bursts, stats.shared_bursts, stats.event_snapshots) == (1, 1, 0)


def test_queries_with_equal_prefixes_share_slots():
    from hamlet.runtime.shapes import ShapeGroup

    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 10\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+, D) WITHIN 10\n"  # same prefix SEQ(A, B+) as q1
        "q3: RETURN COUNT(*) PATTERN SEQ(E, B+, C) WITHIN 10\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE B.x < 3 WITHIN 10"  # other predicates on B
    )
    queries = list(workload.queries)
    shape = shape_of(queries[0], algebra_for(queries[0], []))
    assert shape is not None
    group = ShapeGroup(shape, queries)
    # Slots per position (A/E, B+, C/D) and finals: q1 and q2 share A and B+, q4 only A.
    assert group.width == [2, 3, 4, 4]
    events = stream("a1 e2 b3 b4 c5 d6", x={"b3": 1, "b4": 5})
    assert [(r.query, r.value) for r in evaluate(workload, events, "hamlet")] == [
        ("q1", 3), ("q2", 3), ("q3", 3), ("q4", 1)
    ]  # fmt: skip


SHAPES = ["SEQ(_1, B+, _2)", "SEQ(_1, B+)", "(SEQ(_1, B+))+", "SEQ(_1+, B+)", "SEQ(B+, _1)"]


@st.composite
def one_shape_workloads(draw) -> str:
    """3–6 queries of one shape and window around B+, differing types and local predicates: shape groups
    with shared and private slots."""
    shape = draw(st.sampled_from(SHAPES))
    within = draw(st.sampled_from([5, 8, 12]))
    slide = draw(st.sampled_from([within, within // 2 or 1]))
    lines = []
    for i in range(draw(st.integers(3, 6))):
        p, q = draw(st.permutations("ACD"))[:2]
        pattern = shape.replace("_1", p).replace("_2", q)
        where = draw(st.sampled_from(["", " WHERE B.x < 3", " WHERE B.x < 3", f" WHERE {p}.x >= 1"]))
        lines.append(f"q{i}: RETURN COUNT(*) PATTERN {pattern}{where} WITHIN {within} SLIDE {slide}")
    return "\n".join(lines)


@st.composite
def periods(draw) -> list[Event]:
    """2–5 periods: 1–2 events of A, C or D, then a burst of 1–4 B events; times step by 0–2 (equal
    timestamps inside bursts and across types), x in 0..4."""
    out: list[Event] = []
    t = 0
    for _ in range(draw(st.integers(2, 5))):
        runs = [(draw(st.sampled_from("ACD")), draw(st.integers(1, 2))), ("B", draw(st.integers(1, 4)))]
        for event_type, size in runs:
            for _ in range(size):
                t += draw(st.sampled_from([0, 1, 1, 2]))
                out.append(Event(event_type, t, {"x": draw(st.integers(0, 4))}))
    return out


@examples(ci=100)
@given(one_shape_workloads(), periods())
def test_shape_groups_equal_bruteforce(text, events):
    note(text)
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, events)
    for strategy in ("static", "hamlet"):
        assert evaluate(workload, events, strategy) == expected, strategy
