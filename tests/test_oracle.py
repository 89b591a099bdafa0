"""The brute-force oracle against numbers computed by hand (SEMANTICS.md worked examples and small cases).

Every expected number here is derived in a comment from the definition, not from running any code.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hamlet.analysis.workload import parse_workload
from hamlet.events import Event
from hamlet.language.nodes import ChoicePattern

try:
    from tests.oracle import evaluate_bruteforce, pooled_trends
    from tests.workloads import events, position_patterns, types_of
except ImportError:  # pytest's rootdir-less "prepend" import mode puts tests/ itself on sys.path
    from oracle import evaluate_bruteforce, pooled_trends  # type: ignore[no-redef]
    from workloads import events, position_patterns, types_of  # type: ignore[no-redef]


def stream(text: str, **attributes: dict[str, object]) -> list[Event]:
    """``"a1 b2 c2"`` → events A@1, B@2, C@2; ``a1={"x": 5}`` gives the event a1 attributes."""
    out = []
    for token in text.split():
        out.append(Event(token[0].upper(), int(token[1:]), attributes.get(token, {})))
    return out


def run(workload: str, events: list[Event]) -> list[tuple]:
    """Rows as (query, window_start, window_end, group, aggregate, value)."""
    rows = evaluate_bruteforce(parse_workload(workload), events)
    return [(r.query, r.window_start, r.window_end, r.group, r.aggregate, r.value) for r in rows]


def values(workload: str, events: list[Event]) -> dict[tuple[str, str], object]:
    """For single-window, ungrouped workloads: (query, aggregate) → value."""
    rows = run(workload, events)
    assert len({(q, ws, we) for q, ws, we, *_ in rows}) == len({q for q, *_ in rows}), rows
    return {(q, agg): v for q, _ws, _we, group, agg, v in rows}


def count(
    pattern: str, events: list[Event], where: str = "", window: str = "WITHIN 100 SLIDE 100"
) -> int | None:
    """COUNT(*) of one query over one window (None when no trend matched)."""
    rows = run(f"q: RETURN COUNT(*) PATTERN {pattern} {where} {window}", events)
    assert len(rows) <= 1, rows
    return rows[0][-1] if rows else None


GRETA_STREAM = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"


# ---- the worked examples of SEMANTICS.md ---------------------------------------------------------------


def test_hamlet_figure_4():
    # SEQ(A, B+): each a, times the non-empty subsets of the later b's. a1, a2 see 6 b's (63 each), a8, a9
    # see b13, b14 (3 each): 126 + 6 = 132. SEQ(C, B+): c3 63, c10..c12 3 each: 72.
    events = stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13 b14")
    workload = """
        q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 SLIDE 100
        q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 SLIDE 100
    """
    assert run(workload, events) == [
        ("q1", 0, 100, {}, "COUNT(*)", 132),
        ("q2", 0, 100, {}, "COUNT(*)", 72),
    ]


def test_greta_figure_12_aggregates():
    events = stream("a1 b2 a3 a4 b7", a1={"x": 5}, a3={"x": 6}, a4={"x": 4})
    workload = ("q: RETURN COUNT(*), COUNT(A), MIN(A.x), MAX(A.x), SUM(A.x), AVG(A.x) "
                "PATTERN (SEQ(A+, B))+ WITHIN 100 SLIDE 100")  # fmt: skip
    rows = run(workload, events)
    assert [(agg, v) for *_, agg, v in rows] == [
        ("COUNT(*)", 11),
        ("COUNT(A)", 20),
        ("MIN(A.x)", 4),
        ("MAX(A.x)", 6),
        ("SUM(A.x)", 100),
        ("AVG(A.x)", 5.0),
    ]
    assert isinstance(rows[4][-1], int) and isinstance(rows[5][-1], float)


def test_greta_figure_6c():
    assert count("(SEQ(A+, B))+", stream(GRETA_STREAM)) == 43


def test_greta_figure_6d_nested_negation():
    # (c2, d6) is no match of SEQ(C, NOT E, D) because of e3; (c5, d6) is, and cuts a1, a3, a4 from b7, b9.
    assert count("(SEQ(A+, NOT SEQ(C, NOT E, D), B))+", stream(GRETA_STREAM)) == 13


def test_trailing_negation_worked_example():
    assert count("SEQ(A+, NOT E)", stream(GRETA_STREAM)) == 14


def test_leading_negation_worked_example():
    assert count("SEQ(NOT E, A+)", stream(GRETA_STREAM)) == 12


# ---- small cases counted by hand -----------------------------------------------------------------------


def test_equal_timestamps_are_never_adjacent():
    # SEQ(A, B) over a1 a2 b2 b3: (a1,b2) (a1,b3) (a2,b3); not (a2,b2).
    assert count("SEQ(A, B)", stream("a1 a2 b2 b3")) == 3
    # A+ over A@1, A@1, A@2: three singletons, and each A@1 with A@2; never both A@1: 5, not 7.
    assert count("A+", [Event("A", 1), Event("A", 1), Event("A", 2)]) == 5


def test_sliding_window():
    # Windows [5k, 5k+10). SEQ(A, B+) over a1 b4 a7 b8 b12:
    #   [-5, 5):  a1 b4          -> (a1 b4)                                 COUNT 1, COUNT(B) 1
    #   [0, 10):  a1 b4 a7 b8    -> (a1 b4) (a1 b8) (a1 b4 b8) (a7 b8)       COUNT 4, COUNT(B) 5
    #   [5, 15):  a7 b8 b12      -> (a7 b8) (a7 b12) (a7 b8 b12)             COUNT 3, COUNT(B) 4
    #   [10, 20): b12            -> no trend, no row
    rows = run("q: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 5", stream("a1 b4 a7 b8 b12"))
    assert rows == [
        ("q", -5, 5, {}, "COUNT(*)", 1),
        ("q", -5, 5, {}, "COUNT(B)", 1),
        ("q", 0, 10, {}, "COUNT(*)", 4),
        ("q", 0, 10, {}, "COUNT(B)", 5),
        ("q", 5, 15, {}, "COUNT(*)", 3),
        ("q", 5, 15, {}, "COUNT(B)", 4),
    ]


def test_edge_predicate_within_kleene():
    # A+ with x strictly increasing along the trend, x = 1, 3, 2, 4 at times 1..4:
    # 4 singletons; pairs (1,3) (1,2) (1,4) (3,4) (2,4); triples (1,3,4) (1,2,4): 11.
    xs = {"a1": {"x": 1}, "a2": {"x": 3}, "a3": {"x": 2}, "a4": {"x": 4}}
    assert count("A+", stream("a1 a2 a3 a4", **xs), "WHERE A.x < NEXT(A).x") == 11


def test_edge_predicate_between_types_applies_to_adjacent_pair_only():
    # SEQ(A+, B) with A.x < NEXT(B).x, a1.x=1 a2.x=5 b3.x=3: (a1 b3) yes; (a2 b3) no; (a1 a2 b3) no (a2 is
    # adjacent to b3); a1 -> a2 is not an A -> B pair, so it is unconstrained.
    events = stream("a1 a2 b3", a1={"x": 1}, a2={"x": 5}, b3={"x": 3})
    assert count("SEQ(A+, B)", events, "WHERE A.x < NEXT(B).x") == 1


def test_edge_predicate_across_a_negation():
    # In SEQ(A, NOT C, B), a and b are adjacent. a1.x=1 a2.x=9 b3.y=5, predicate A.x < NEXT(B).y: (a1 b3).
    events = stream("a1 a2 b3", a1={"x": 1}, a2={"x": 9}, b3={"y": 5})
    assert count("SEQ(A, NOT C, B)", events, "WHERE A.x < NEXT(B).y") == 1


def test_local_predicate():
    # Only a2 passes A.x > 2: (a2 b3) (a2 b4).
    events = stream("a1 a2 b3 b4", a1={"x": 1}, a2={"x": 3})
    assert count("SEQ(A, B)", events, "WHERE A.x > 2") == 2


def test_local_predicate_on_negated_type():
    # c2 fails C.v = 1, so it negates nothing: (a1 b3) counts; (a1 b5) has c4 (v=1) between: cut.
    events = stream("a1 c2 b3 c4 b5", c2={"v": 0}, c4={"v": 1})
    assert count("SEQ(A, NOT C, B)", events, "WHERE C.v = 1") == 1
    assert count("SEQ(A, NOT C, B)", events) is None  # without the predicate both are cut: no row


def test_group_by_two_groups():
    # g=1: a1 a3 b4 -> (a1 b4) (a3 b4), SUM 10+30. g=2: a2 b5 -> (a2 b5), SUM 20. a1 with b5: other group.
    events = stream(
        "a1 a2 a3 b4 b5",
        a1={"g": 1, "x": 10}, a2={"g": 2, "x": 20}, a3={"g": 1, "x": 30}, b4={"g": 1}, b5={"g": 2},
    )  # fmt: skip
    rows = run("q: RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, B) GROUP-BY g WITHIN 100 SLIDE 100", events)
    assert rows == [
        ("q", 0, 100, {"g": 1}, "COUNT(*)", 2),
        ("q", 0, 100, {"g": 1}, "SUM(A.x)", 40),
        ("q", 0, 100, {"g": 2}, "COUNT(*)", 1),
        ("q", 0, 100, {"g": 2}, "SUM(A.x)", 20),
    ]


def test_equivalence_attribute():
    # [k] partitions: k=1 (a1 b3), k=2 (a2 b4), k=3 only b5. Pooled into the one group {}: 2 (6 without [k]).
    events = stream("a1 a2 b3 b4 b5", a1={"k": 1}, a2={"k": 2}, b3={"k": 1}, b4={"k": 2}, b5={"k": 3})
    assert count("SEQ(A, B)", events, "WHERE [k]") == 2
    assert count("SEQ(A, B)", events) == 6
    # A negative match must come from the trend's partition: c2 (k=2) does not cut (a1 b3) (k=1).
    assert (
        count("SEQ(A, NOT C, B)", stream("a1 c2 b3", a1={"k": 1}, c2={"k": 2}, b3={"k": 1}), "WHERE [k]") == 1
    )


def test_equivalence_partitions_pool_into_their_group():
    # GROUP-BY g with [k]: g=1 has partitions k=1 (a1 b3) and k=2 (a2 b4): 2 trends (4 without [k]).
    # g=2: (a5 b6).
    events = stream(
        "a1 a2 b3 b4 a5 b6",
        a1={"g": 1, "k": 1}, a2={"g": 1, "k": 2}, b3={"g": 1, "k": 1}, b4={"g": 1, "k": 2},
        a5={"g": 2, "k": 1}, b6={"g": 2, "k": 1},
    )  # fmt: skip
    rows = run("q: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [k] GROUP-BY g WITHIN 100 SLIDE 100", events)
    assert rows == [("q", 0, 100, {"g": 1}, "COUNT(*)", 2), ("q", 0, 100, {"g": 2}, "COUNT(*)", 1)]


def test_null_in_grouping_attribute_drops_the_event():
    # a2 (g null) and a3 (g missing) and b5 (g null) are not matched: only (a1 b4).
    events = stream("a1 a2 a3 b4 b5", a1={"g": 1}, a2={"g": None}, b4={"g": 1}, b5={"g": None})
    rows = run("q: RETURN COUNT(*) PATTERN SEQ(A, B) GROUP-BY g WITHIN 100 SLIDE 100", events)
    assert rows == [("q", 0, 100, {"g": 1}, "COUNT(*)", 1)]


def test_null_in_equivalence_attribute_drops_negated_event_too():
    # c2 has no k: it is not matched by the query, so it cuts nothing.
    events = stream("a1 c2 b3", a1={"k": 1}, b3={"k": 1})
    assert count("SEQ(A, NOT C, B)", events, "WHERE [k]") == 1


def test_trailing_negation_crossing_the_window_end_does_not_count():
    # Tumbling [0, 10): a1 c5; the match (c5, d12) of SEQ(C, D) ends after the window: (a1) counts.
    # [10, 20): d12 only, no trend.
    events = stream("a1 c5 d12")
    assert run("q: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D)) WITHIN 10", events) == [
        ("q", 0, 10, {}, "COUNT(*)", 1)
    ]
    # With d8 the match lies in the window: (a1) is cut, no row at all.
    assert run("q: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D)) WITHIN 10", stream("a1 c5 d8")) == []
    # Sliding [10k, 10k+20): [-10, 10) holds a1 c5 (match cut by the window end): 1; [0, 20) holds the whole
    # match: (a1) cut; [10, 30): no A.
    assert run("q: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D)) WITHIN 20 SLIDE 10", events) == [
        ("q", -10, 10, {}, "COUNT(*)", 1)
    ]


def test_leading_negation_before_the_window_start_does_not_count():
    # Windows [5k, 5k+10). SEQ(NOT E, A) over e3 a8: [0, 10) holds e3 a8: cut. [5, 15) holds a8 only: 1.
    rows = run("q: RETURN COUNT(*) PATTERN SEQ(NOT E, A) WITHIN 10 SLIDE 5", stream("e3 a8"))
    assert rows == [("q", 5, 15, {}, "COUNT(*)", 1)]


def test_negation_at_equal_time_is_not_between():
    # SEQ(A, NOT C, B) over a1 c1 b2 c2 b3: c1 and c2 are not strictly between a1 and b2; c2 is between a1
    # and b3. (a1 b2) counts, (a1 b3) is cut.
    assert count("SEQ(A, NOT C, B)", stream("a1 c1 b2 c2 b3")) == 1


def test_negation_inside_kleene_checks_every_iteration():
    # (SEQ(A, NOT C, B))+ over a1 b2 a3 c4 b5: iterations (a1 b2), (a1 b5)x, (a3 b5)x; trends: (a1 b2) only.
    # (a1 b2 a3 b5) is cut at a3 -> b5. Total 1.
    assert count("(SEQ(A, NOT C, B))+", stream("a1 b2 a3 c4 b5")) == 1
    # Without c4: (a1 b2) (a1 b5) (a3 b5) (a1 b2 a3 b5) = 4.
    assert count("(SEQ(A, NOT C, B))+", stream("a1 b2 a3 b5")) == 4


def test_nested_kleene_counts_each_event_sequence_once():
    # (A+)+ and A+ both match every non-empty increasing subsequence: 2^4 - 1.
    events = stream("a1 a2 a3 a4")
    assert count("(A+)+", events) == count("A+", events) == 15


def test_sum_min_max_avg_with_nulls_and_floats():
    # SEQ(A, B+) over a1 a2 b3 b4: a1 and a2 each in 3 trends (6 trends). a1.x=1.5, a2.x missing.
    # SUM = 3*1.5 = 4.5 (float), AVG over the 3 non-null occurrences = 1.5, COUNT(A) = 6, MIN = MAX = 1.5.
    events = stream("a1 a2 b3 b4", a1={"x": 1.5})
    got = values(
        "q: RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x), MIN(A.x), MAX(A.x), SUM(B.y) PATTERN SEQ(A, B+) "
        "WITHIN 100 SLIDE 100",
        events,
    )
    assert got == {
        ("q", "COUNT(*)"): 6,
        ("q", "COUNT(A)"): 6,
        ("q", "SUM(A.x)"): 4.5,
        ("q", "AVG(A.x)"): 1.5,
        ("q", "MIN(A.x)"): 1.5,
        ("q", "MAX(A.x)"): 1.5,
        ("q", "SUM(B.y)"): None,
    }
    assert isinstance(got[("q", "SUM(A.x)")], float)


def test_counts_are_exact_and_big():
    # A+ over 14 events: 2^14 - 1 trends; SUM(A.x) with x = 2^62 each: every event is in 2^13 trends.
    events = [Event("A", t, {"x": 2**62}) for t in range(14)]
    got = values("q: RETURN COUNT(*), SUM(A.x) PATTERN A+ WITHIN 100 SLIDE 100", events)
    assert got == {("q", "COUNT(*)"): 2**14 - 1, ("q", "SUM(A.x)"): 14 * 2**13 * 2**62}


def test_rows_sorted_by_query_window_group_aggregate():
    events = stream("a1 b2 a12 b13", a1={"g": "y"}, b2={"g": "y"}, a12={"g": "x"}, b13={"g": "x"})
    events += [Event("A", 3, {"g": 5}), Event("B", 4, {"g": 5})]
    workload = """
        second: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10
        first: RETURN COUNT(*), COUNT(A) PATTERN SEQ(A, B) GROUP-BY g WITHIN 10
    """
    rows = run(workload, list(reversed(events)))
    assert [(q, ws, g, agg) for q, ws, _we, g, agg, _v in rows] == [
        ("second", 0, {}, "COUNT(*)"),
        ("second", 10, {}, "COUNT(*)"),
        ("first", 0, {"g": 5}, "COUNT(*)"),  # numbers before strings
        ("first", 0, {"g": 5}, "COUNT(A)"),
        ("first", 0, {"g": "y"}, "COUNT(*)"),
        ("first", 0, {"g": "y"}, "COUNT(A)"),
        ("first", 10, {"g": "x"}, "COUNT(*)"),
        ("first", 10, {"g": "x"}, "COUNT(A)"),
    ]
    # second, window [0, 10): a1 a3 b2 b4 -> (a1 b2) (a1 b4) (a3 b4) = 3.
    assert rows[0][-1] == 3


def test_seq_and_middle_negation_on_greta_stream():
    events = stream(GRETA_STREAM)
    # SEQ(A, B): a1 -> b2 b7 b9 (3), a3 -> b7 b9 (2), a4 -> b7 b9 (2), a8 -> b9 (1): 8.
    assert count("SEQ(A, B)", events) == 8
    # SEQ(A, NOT C, B): c2 (time 2) is not strictly before b2, so (a1 b2) stays; c2 or c5 lies between every
    # other a and b7/b9; (a8 b9) has no c between: 2.
    assert count("SEQ(A, NOT C, B)", events) == 2


# ---- event matching semantics (dissertation §2.4, Definitions 2.2-2.4, Figure 2.3) ---------------------

FIGURE_2_3 = "a1 b2 a3 a4 c5 b6 a7 b8"


def test_figure_2_3_any_next_cont():
    # ANY: 43 (Example 2.5). NEXT (Definition 2.3): one trend per (START a, END b) pair that has a trend, the
    # one holding every a and b between them (a trend of (SEQ(A+, B))+ can take all of them): (a1,b2),
    # (a1,b6), (a1,b8), (a3,b6), (a3,b8), (a4,b6), (a4,b8), (a7,b8): 8 (Example 16.1). CONT (Definition
    # 2.4): of those, only the ones with no other event between first and last: (a1,b2), (a7,b8) — c5 cuts
    # every other (Example 2.7): 2.
    events = stream(FIGURE_2_3)
    for semantics, expected in (("", 43), ("SEMANTICS ANY", 43), ("SEMANTICS skip-till-any-match", 43),
                                ("SEMANTICS NEXT", 8), ("SEMANTICS skip-till-next-match", 8),
                                ("SEMANTICS CONT", 2), ("SEMANTICS contiguous", 2)):  # fmt: skip
        assert count(f"(SEQ(A+, B))+ {semantics}", events) == expected, semantics


def test_figure_2_3_count_a_under_next_and_cont():
    # COUNT(A) over the 8 NEXT trends above: 1 + 3 + 4 + 2 + 3 + 1 + 2 + 1 = 17; over the 2 CONT ones: 2.
    events = stream(FIGURE_2_3)
    assert values("q: RETURN COUNT(A) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WITHIN 100 SLIDE 100", events) == {
        ("q", "COUNT(A)"): 17
    }
    assert values("q: RETURN COUNT(A) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WITHIN 100 SLIDE 100", events) == {
        ("q", "COUNT(A)"): 2
    }


def test_next_keeps_a_trend_that_skips_a_relevant_event_no_trend_can_hold():
    # (SEQ(A+, B))+ over a1 b2 b3: trends (a1,b2), (a1,b3); (a1,b2,b3) is none (B never follows B). Each is
    # the only trend of its (START, END) pair, so both are NEXT trends (2), though (a1,b3) skips b2. CONT:
    # b2 lies between a1 and b3: 1. (COGRA's "only the last matched event" shortcut would find 1 for NEXT.)
    events = stream("a1 b2 b3")
    assert count("(SEQ(A+, B))+ SEMANTICS NEXT", events) == 2
    assert count("(SEQ(A+, B))+ SEMANTICS CONT", events) == 1


def test_next_sequence_without_kleene_keeps_every_start():
    # SEQ(A, B) over a1 a2 b3: (a1,b3), (a2,b3), each alone for its pair: NEXT 2; CONT: a2 lies between a1
    # and b3: 1.
    events = stream("a1 a2 b3")
    assert count("SEQ(A, B) SEMANTICS NEXT", events) == 2
    assert count("SEQ(A, B) SEMANTICS CONT", events) == 1


def test_next_with_an_edge_predicate_keeps_two_maximal_trends_of_one_pair():
    # SEQ(A+, B), A.x < NEXT(A).x, over a1(x=1) a2(5) a3(3) b4. Trends from a1 to b4: (a1,b4), (a1,a2,b4),
    # (a1,a3,b4); (a1,a2,a3,b4) fails 5 < 3. Maximal: {a2} and {a3}, both kept. From a2: (a2,b4); from a3:
    # (a3,b4). NEXT: 4.
    events = stream("a1 a2 a3 b4", a1={"x": 1}, a2={"x": 5}, a3={"x": 3})
    assert count("SEQ(A+, B) SEMANTICS NEXT", events, "WHERE A.x < NEXT(A).x") == 4


def test_cont_counts_events_the_pattern_does_not_mention_and_events_local_predicates_drop():
    # (SEQ(A+, B))+ over a1 b2 c2 a3 b4. NEXT: (a1,b2), (a1,b2,a3,b4), (a3,b4): 3. CONT: c2 (time 2, not
    # in the trend) lies strictly between 1 and 4 in the second: 2. Without c2: 3.
    assert count("(SEQ(A+, B))+ SEMANTICS NEXT", stream("a1 b2 c2 a3 b4")) == 3
    assert count("(SEQ(A+, B))+ SEMANTICS CONT", stream("a1 b2 c2 a3 b4")) == 2
    assert count("(SEQ(A+, B))+ SEMANTICS CONT", stream("a1 b2 a3 b4")) == 3
    # An a the local predicate drops is still in the sub-stream: a2 (x=0) between a1 and b3 breaks
    # (a1,b3) under CONT, not under NEXT (where (a1,b3) is the only trend).
    events = stream("a1 a2 b3", a1={"x": 1}, a2={"x": 0})
    assert count("SEQ(A, B) SEMANTICS NEXT", events, "WHERE A.x > 0") == 1
    assert count("SEQ(A, B) SEMANTICS CONT", events, "WHERE A.x > 0") is None


# ---- optional sub-patterns and Kleene star (dissertation §12) ------------------------------------------


def test_optional_and_star_by_hand():
    # a1 b2 b3 c4: SEQ(A, B?, C): (a1,c4), (a1,b2,c4), (a1,b3,c4): 3. SEQ(A, B*, C): those and (a1,b2,b3,c4):
    # 4, with COUNT(B) 0 + 1 + 1 + 2 = 4.
    events = stream("a1 b2 b3 c4")
    assert count("SEQ(A, B?, C)", events) == 3
    assert values("q: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B*, C) WITHIN 100 SLIDE 100", events) == {
        ("q", "COUNT(*)"): 4,
        ("q", "COUNT(B)"): 4,
    }


def test_star_and_optional_reduce_as_the_dissertation_says():
    # §12: SEQ(P*, Q) = SEQ(P+, Q) ∨ Q and SEQ(P?, Q) = SEQ(P, Q) ∨ Q, the two sides disjoint (a trend of the
    # first holds a P event, one of the second none). Over a1 b2 a3 b4 a5 b6: SEQ(A+, B) has 1 + 3 + 7 = 11
    # trends (a non-empty subset of the a's before each b), B 3, SEQ(A, B) 1 + 2 + 3 = 6.
    events = stream("a1 b2 a3 b4 a5 b6")
    assert count("SEQ(A+, B)", events) == 11 and count("B", events) == 3 and count("SEQ(A, B)", events) == 6
    assert count("SEQ(A*, B)", events) == 11 + 3
    assert count("SEQ(A?, B)", events) == 6 + 3


def test_optional_parts_under_next_and_cont():
    # SEQ(A, B?, C) over a1 b2 c3: ANY (a1,c3), (a1,b2,c3); NEXT keeps only the longer one for the pair
    # (a1, c3) (Definition 2.3); CONT the same (nothing outside it between a1 and c3).
    events = stream("a1 b2 c3")
    assert count("SEQ(A, B?, C)", events) == 2
    assert count("SEQ(A, B?, C) SEMANTICS NEXT", events) == 1
    assert count("SEQ(A, B?, C) SEMANTICS CONT", events) == 1


# ---- dissertation §12: a type at several places, P{n,}, OR, AND ---------------------------------------------


def test_a_type_at_several_places_counts_each_trend_once():
    # SEQ(A+, B, A) over a1 a2 b3 a4 a5: a non-empty subset of {a1, a2} (3), b3, then a4 or a5 (2): 6.
    assert count("SEQ(A+, B, A)", stream("a1 a2 b3 a4 a5")) == 6
    # SEQ(A, B, A+) over a1 b2 a3 a4: a1 b2, then a non-empty subset of {a3, a4}: 3.
    assert count("SEQ(A, B, A+)", stream("a1 b2 a3 a4")) == 3
    # SEQ(A+, A+) over a1 a2 a3: any 2 or 3 of the a's, 3 + 1 = 4 (a1 a2 a3 parses two ways, one trend).
    assert count("SEQ(A+, A+)", stream("a1 a2 a3")) == 4
    # A{2,} (= SEQ(A, A+)) is the same set of trends: 4; A{3,} only a1 a2 a3: 1; A{4,}: none.
    assert count("A{2,}", stream("a1 a2 a3")) == 4
    assert count("A{3,}", stream("a1 a2 a3")) == 1
    assert count("A{4,}", stream("a1 a2 a3")) is None


def test_disjunction_and_conjunction_by_hand():
    events = stream("a1 b2 b3")
    # SEQ(A, B): x = (a1,b2), y = (a1,b3). SEQ(A, B+): x, y and z = (a1,b2,b3). OR: {x, y, z} = 3 (not 5).
    assert count("SEQ(A, B) OR SEQ(A, B+)", events) == 3
    # AND: unordered pairs of distinct trends, one of each: {x, y}, {x, z}, {y, z} = 3 ({x, x} is no pair).
    # C_i = 0, C_j = 1 (z), C_ij = 2: 0·1 + 0·2 + 1·2 + C(2, 2) = 3.
    assert count("SEQ(A, B) AND SEQ(A, B+)", events) == 3
    # One trend in all (x alone): OR 1, AND 0 pairs, reported since a trend matched.
    assert count("SEQ(A, B) AND SEQ(A, B+)", stream("a1 b2")) == 0
    # OR's aggregates over the union: COUNT(B) 1 + 1 + 2 = 4.
    assert values("q: RETURN COUNT(B) PATTERN SEQ(A, B) OR SEQ(A, B+) WITHIN 100 SLIDE 100", events) == {
        ("q", "COUNT(B)"): 4
    }


# ---- dissertation §12: the oracle's OR and AND, listed trend by trend, against the chapter's formulas --------


@given(st.data())
def test_disjunction_and_conjunction_follow_the_formulas_of_chapter_12(data):
    """The oracle lists the union of the operands' trends (OR) and the pairs of distinct trends (AND); on
    every drawn stream these equal C_P + C_Q − C_PQ and C_i·C_j + C_i·C_ij + C_j·C_ij + C(C_ij, 2), with
    C_PQ the trends both operands list."""
    first, second = (data.draw(position_patterns().filter(lambda p: " OR " not in p and " AND " not in p))
                     for _ in range(2))  # fmt: skip
    text = f"qo: RETURN COUNT(*) PATTERN {first} OR {second} WITHIN 100 SLIDE 100\n"
    text += f"qa: RETURN COUNT(*) PATTERN {first} AND {second} WITHIN 100 SLIDE 100"
    workload = parse_workload(text)
    stream = data.draw(events(types_of(text), max_events=9))
    query = workload.queries[0]
    assert query.syntax is not None and isinstance(query.syntax.pattern, ChoicePattern)
    p, q = (
        {tuple(map(id, t)) for ts in pooled_trends(query, stream, operand).values() for t in ts}
        for operand in query.syntax.pattern.operands
    )
    rows = {r.query: r.value for r in evaluate_bruteforce(workload, stream)}
    both = len(p & q)
    assert rows.get("qo", 0) == len(p) + len(q) - both
    only_p, only_q = len(p) - both, len(q) - both
    if p or q:
        assert rows["qa"] == only_p * only_q + only_p * both + only_q * both + both * (both - 1) // 2
    else:
        assert "qa" not in rows
