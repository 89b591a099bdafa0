"""GRETA on hand-counted cases: window and negation boundaries, equal timestamps, exactness."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from fractions import Fraction

import pandas as pd
import pyarrow as pa
import pytest
from streams import stream

from hamlet import STRATEGIES, EvaluationError, Event, evaluate, parse_workload
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.greta import graph_groups


def counts(workload: str, events, strategy: str = "hamlet") -> dict[tuple, object]:
    rows = evaluate(workload, events, strategy)
    return {(r.query, r.window_start, r.window_end, r.aggregate): r.value for r in rows}


def test_leading_not_at_the_window_start_invalidates_trends_of_that_window():
    # e5 is in [5, 15) at its very start: a6, a7 may not start trends there. [0, 10): only trends from a1.
    got = counts("q: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 10 SLIDE 5", stream("a1 e5 a6 a7"))
    assert got == {("q", -5, 5, "COUNT(*)"): 1, ("q", 0, 10, "COUNT(*)"): 4}


def test_trailing_not_counts_only_matches_strictly_after_the_trend():
    # e2 follows a1 (cuts trends ending at a1) but not a2 (same time); trends ending at a2 and a3 stay: 2 + 4.
    assert counts("q: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 10", stream("a1 a2 e2 a3")) == {
        ("q", 0, 10, "COUNT(*)"): 6
    }


def test_trailing_not_after_the_window_end_does_not_cut():
    got = counts("q: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 10 SLIDE 5", stream("a1 a6 e11"))
    # [0, 10): (a1), (a6), (a1, a6); e11 lies beyond it. [5, 15): (a6) is cut by e11. [-5, 5): (a1).
    assert got == {("q", -5, 5, "COUNT(*)"): 1, ("q", 0, 10, "COUNT(*)"): 3}


@pytest.mark.parametrize("text, expected", [("a1 c1 b2", 1), ("a1 c2 b2", 1), ("a1 c2 b3", None)])
def test_middle_not_must_lie_strictly_between(text, expected):
    got = counts("q: RETURN COUNT(*) PATTERN SEQ(A, NOT C, B) WITHIN 10", stream(text))
    assert got.get(("q", 0, 10, "COUNT(*)")) == expected


def test_equal_timestamps_are_never_adjacent():
    assert counts("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10", stream("a1 b1 b2 b2 a3")) == {
        ("q", 0, 10, "COUNT(*)"): 2  # (a1, b2) and (a1, b2'); never (a1, b1) nor (a1, b2, b2')
    }


def test_sliding_windows_share_one_graph():
    got = counts("q: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 5", stream("a1 b4 b6 b12"))
    assert got == {
        ("q", -5, 5, "COUNT(*)"): 1, ("q", -5, 5, "COUNT(B)"): 1,
        ("q", 0, 10, "COUNT(*)"): 3, ("q", 0, 10, "COUNT(B)"): 4,
    }  # fmt: skip


def test_queries_differing_only_in_windows_and_aggregates_share_one_graph():
    text = ("q1: RETURN COUNT(*) PATTERN SEQ(A, B+, NOT C) WITHIN 10 SLIDE 5\n"
            "q2: RETURN SUM(B.x), MAX(B.x) PATTERN SEQ(A, B+, NOT C) WITHIN 4")  # fmt: skip
    queries = parse_workload(text).queries
    (group,) = graph_groups(queries, {q.name: algebra_for(q, []) for q in queries})
    assert [q.name for q in group.queries] == ["q1", "q2"]
    events = stream("a1 b2 b3 c4 b6 b12", x={"b2": 1, "b3": 2, "b6": 4, "b12": 8})
    for strategy in STRATEGIES:
        assert counts(text, events, strategy) == {
            # [0, 10): the 4 trends a1 (b2)? (b3)? b6; those ending before c4 are cut; [-5, 5) keeps none
            ("q1", 0, 10, "COUNT(*)"): 4,
            # [0, 4): (a1 b2), (a1 b3), (a1 b2 b3), no C inside: 1 + 2 + (1 + 2)
            ("q2", 0, 4, "SUM(B.x)"): 6, ("q2", 0, 4, "MAX(B.x)"): 2,
        }, strategy  # fmt: skip


def test_queries_whose_nots_stand_apart_never_share_a_graph():
    # Equal positive patterns (A+ in the first two, SEQ(A, B) in the others) over the same types, the NOTs
    # elsewhere: each builds its own graph. Only those equal up to aliases and windows share one.
    text = ("lead: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100\n"
            "trail: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100\n"
            "mid: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E, D), B) WITHIN 100\n"
            "two: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D), B, NOT E) WITHIN 100\n"
            "other: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E, D), B) WITHIN 50\n"
            "alias: RETURN COUNT(*) PATTERN SEQ(A x, NOT SEQ(C, NOT E y, D), B) WITHIN 100")  # fmt: skip
    queries = parse_workload(text).queries
    groups = graph_groups(queries, {q.name: algebra_for(q, []) for q in queries})
    assert [[q.name for q in g.queries] for g in groups] == [
        ["lead"],
        ["trail"],
        ["mid", "other", "alias"],
        ["two"],
    ]


def test_counts_are_exact_integers_of_any_size():
    events = [Event("A", t, {"x": 3}) for t in range(300)]
    got = counts("q: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN A+ WITHIN 1000", events)
    trends = 2**300 - 1
    occurrences = 300 * 2**299  # each event is in half of the 2^300 subsets
    assert got == {("q", 0, 1000, "COUNT(*)"): trends, ("q", 0, 1000, "COUNT(A)"): occurrences,
                   ("q", 0, 1000, "SUM(A.x)"): 3 * occurrences}  # fmt: skip


def test_float_sums_are_exact_then_rounded_once():
    events = [Event("A", t, {"x": 0.1}) for t in range(60)]
    got = counts("q: RETURN SUM(A.x), AVG(A.x) PATTERN A+ WITHIN 100", events)
    exact = Fraction(0.1) * 60 * 2**59
    assert got == {("q", 0, 100, "SUM(A.x)"): float(exact), ("q", 0, 100, "AVG(A.x)"): 0.1}


def test_nulls_are_skipped_by_sum_min_max_avg():
    events = [Event("A", 1, {"x": None}), Event("A", 2, {"x": 4})]
    got = counts("q: RETURN COUNT(*), SUM(A.x), MIN(A.x), AVG(A.x) PATTERN A+ WITHIN 10", events)
    # Trends (a1), (a2), (a1, a2): x=4 occurs twice, the null twice.
    assert got == {("q", 0, 10, "COUNT(*)"): 3, ("q", 0, 10, "SUM(A.x)"): 8, ("q", 0, 10, "MIN(A.x)"): 4,
                   ("q", 0, 10, "AVG(A.x)"): 4.0}  # fmt: skip
    only_nulls = counts("q: RETURN COUNT(*), SUM(A.x), MAX(A.x) PATTERN A+ WITHIN 10", events[:1])
    assert only_nulls == {
        ("q", 0, 10, "COUNT(*)"): 1,
        ("q", 0, 10, "SUM(A.x)"): None,
        ("q", 0, 10, "MAX(A.x)"): None,
    }


def test_groups_and_equivalence_partition_the_stream():
    events = [
        Event("A", 1, {"d": "n", "k": 1}), Event("A", 2, {"d": "n", "k": 2}), Event("B", 3, {"d": "n", "k": 1}),
        Event("B", 4, {"d": "n", "k": 2}), Event("B", 5, {"d": "s", "k": 1}), Event("A", 6, {"d": None, "k": 1}),
    ]  # fmt: skip
    rows = evaluate("q: RETURN d, COUNT(*) PATTERN SEQ(A, B) WHERE [k] GROUP-BY d WITHIN 10", events)
    # Group n pools partitions k=1 (a1,b3) and k=2 (a2,b4); group s has a B but no A; a6 has a null d.
    assert [(r.group, r.value) for r in rows] == [({"d": "n"}, 2)]


def test_sum_of_a_string_is_an_error_naming_the_event():
    with pytest.raises(EvaluationError, match=r"A\.x: the A event at time 1 has non-numeric value 'x'"):
        evaluate("q: RETURN SUM(A.x) PATTERN A+ WITHIN 10", [Event("A", 1, {"x": "x"})])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_min_and_max_order_values_of_one_kind_and_refuse_to_mix_kinds(strategy):
    """Texts with texts and bools with bools (False < True); a bool next to a number is no 1 or 0 (Python's
    ``True < 3``), and two kinds that meet only when two partitions of one group merge ([k] pools k=1 and
    k=2) are the same error as two events of one partition."""
    workload = "q: RETURN COUNT(*), MIN(B.x), MAX(B.x) PATTERN B+ WHERE [k] WITHIN 10"

    def run(x1, x2, k2=1):
        return list(counts(workload, [Event("B", 1, {"k": 1, "x": x1}), Event("B", 2, {"k": k2, "x": x2})],
                           strategy).values())  # fmt: skip

    assert run(True, False) == [3, False, True]
    assert run("b", "a") == [3, "a", "b"]
    assert run(True, False, k2=2) == [2, False, True]
    with pytest.raises(EvaluationError, match=r"B\.x: the B event at time 2 has 3, not comparable with True"):
        run(True, 3)
    for x1, x2 in ((True, 3), ("a", 3), (1.5, False)):
        with pytest.raises(EvaluationError, match="not comparable"):
            run(x1, x2, k2=2)


def test_datetimes_become_seconds_and_windows_are_aligned_to_the_epoch():
    events = [{"event_type": "A", "event_time": datetime(2026, 1, 5, 8, 0, 5)},
              {"event_type": "B", "event_time": datetime(2026, 1, 5, 8, 0, 7, 500000, tzinfo=UTC)}]  # fmt: skip
    rows = evaluate("q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 min", events)
    start = int(datetime(2026, 1, 5, 8, 0, tzinfo=UTC).timestamp())
    assert [(r.window_start, r.window_end, r.value) for r in rows] == [(start, start + 60, 1)]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_float_sums_past_the_largest_double_round_to_infinity_and_their_average_stays_finite(strategy):
    """a1(x=1e308) a2(-1e308) a3(1e308) b4: 7 trends, each A in 4 of them: SUM = 4e308, past the largest
    double (IEEE rounding: +inf; Python's float() raised OverflowError); AVG = 4e308 / 12."""
    events = [Event("A", 1, {"x": 1e308}), Event("A", 2, {"x": -1e308}), Event("A", 3, {"x": 1e308}),
              Event("B", 4, {})]  # fmt: skip
    workload = "q: RETURN COUNT(*), SUM(A.x), AVG(A.x) PATTERN SEQ(A+, B) WITHIN 10"
    assert list(counts(workload, events, strategy).values()) == [
        7,
        math.inf,
        float(Fraction(4 * 10**308, 12)),
    ]
    negated = [Event(e.type, e.time, {"x": -e.get("x")}) for e in events[:3]] + [events[3]]
    assert list(counts(workload, negated, strategy).values()) == [
        7,
        -math.inf,
        float(Fraction(-4 * 10**308, 12)),
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_nan_and_infinity_under_sum_and_nan_under_min_are_errors_naming_the_event(strategy):
    # An exact sum has no infinity or NaN, and NaN under MIN depends on the order events arrive in.
    a1 = Event("A", 1, {"x": math.nan})
    with pytest.raises(
        EvaluationError, match=r"SUM/AVG over A\.x: the A event at time 1 has non-finite value nan"
    ):
        evaluate("q: RETURN SUM(A.x) PATTERN A+ WITHIN 10", [a1], strategy)
    with pytest.raises(
        EvaluationError, match=r"AVG over A\.x: the A event at time 1 has non-finite value -inf"
    ):
        evaluate("q: RETURN AVG(A.x) PATTERN A+ WITHIN 10", [Event("A", 1, {"x": -math.inf})], strategy)
    with pytest.raises(EvaluationError, match=r"MIN/MAX over A\.x: the A event at time 1 has NaN"):
        evaluate("q: RETURN MIN(A.x) PATTERN A+ WITHIN 10", [a1, Event("A", 2, {"x": 1.0})], strategy)
    # An infinity has a place among the extremes.
    inf = [Event("A", 1, {"x": math.inf}), Event("A", 2, {"x": 1.0})]
    assert [r.value for r in evaluate("q: RETURN MIN(A.x), MAX(A.x) PATTERN A+ WITHIN 10", inf, strategy)] == [
        1.0, math.inf]  # fmt: skip


@pytest.mark.parametrize(
    ("workload", "events", "message"),
    [
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", None, "the events: expected Event objects, mappings or a DataFrame, found NoneType"),
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", 5, "found int"),
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", pa.table({"event_type": ["A"], "event_time": [1]}),
         "found Table; an Arrow table goes to evaluate_table (and its partial rows to finalize_table)"),
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", {"event_type": "A"}, "found dict"),
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", [Event("A", 1, [1])], "event 1: attributes are a list, not a mapping"),
        (b"q: RETURN COUNT(*) PATTERN A WITHIN 1", [], "found bytes"),
        (5, [], "expected a workload (its text, parse_workload's Workload or prepare's), found int"),
        ("q: RETURN g, COUNT(*) PATTERN A GROUP-BY g WITHIN 1", [Event("A", 1, {"g": [1]})],
         "the A event at time 1: g = ([1],): GROUP-BY and equivalence attributes take single values"),
        # (a NaT passed for a datetime and ended in a ValueError; pandas dropped a duplicate column silently)
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", pd.DataFrame({"event_type": ["A", "A"], "event_time": pd.to_datetime(
            ["2026-01-05 08:00:00", None])}), "the DataFrame, row 2: event_time is empty"),
        ("q: RETURN COUNT(*) PATTERN A WITHIN 1", pd.DataFrame([["A", 1, 2, 3]], columns=["event_type", "event_time", "x", "x"]),
         "the DataFrame: more than one column named x"),
    ],
)  # fmt: skip
def test_arguments_of_the_wrong_kind_are_errors_that_say_what_they_are(workload, events, message):
    from hamlet import HamletError

    with pytest.raises(HamletError, match=re.escape(message)):
        evaluate(workload, events)
    with pytest.raises(HamletError, match=re.escape("a workload is text (str), not bytes")):
        parse_workload(b"q: RETURN COUNT(*) PATTERN A WITHIN 1")  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_nan_in_a_partition_attribute_is_a_null_on_every_path(strategy):
    """NaN was a group of its own on the table path (Arrow encodes all NaNs alike) and no partition at all on
    the event path (two NaNs are unequal). Now it is a null: a1 b2 b5 with g = NaN are not matched; a3 b4 with
    g = 1.0 make the one trend."""
    from hamlet import evaluate_table, finalize_table

    workload = "q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) GROUP-BY g WITHIN 10\nr: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN 10"
    events = [Event("A", 1, {"g": math.nan}), Event("B", 2, {"g": math.nan}), Event("A", 3, {"g": 1.0}),
              Event("B", 4, {"g": 1.0}), Event("B", 5, {"g": math.nan})]  # fmt: skip
    table = pa.table({"event_type": [e.type for e in events], "event_time": [e.time for e in events],
                      "g": [e.get("g") for e in events]})  # fmt: skip
    expected = [("q", {"g": 1.0}, 1), ("r", {}, 1)]
    assert [(r.query, r.group, r.value) for r in evaluate(workload, events, strategy)] == expected
    assert [
        (r.query, r.group, r.value)
        for r in finalize_table(workload, evaluate_table(workload, table, strategy))
    ] == expected
