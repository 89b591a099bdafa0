"""Exact regressions for what the mixed differential hunt (``test_mixed.py``) found: each a minimal workload
and stream with the count worked by hand (and the oracle's), on every strategy."""

from __future__ import annotations

from fractions import Fraction

import pytest
from oracle import evaluate_bruteforce

from hamlet import STRATEGIES, Event, evaluate, parse_workload


def values(rows) -> list[tuple]:
    return [(r.window_start, r.window_end, r.aggregate, r.value) for r in rows]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_float_times_fall_into_their_exact_pane(strategy):
    """Times of today in seconds with fractions are doubles next to their decimal: a1 = 1767600001.3 is
    stored as 1767600001.29999995..., a2 as 1767600001.39999985..., inside [1.3, 1.5) and not in [1.4, 1.6).
    The shared strategies cut bursts by pane (100 ms here) with ``time / pane`` in floats, which rounded
    a1 / 0.1 up into a2's pane: a1 and a2 made one burst, read in a1's windows, and (a2, b) was lost from
    [1.3, 1.5)."""
    a1, a2, b = 1767600001.3, 1767600001.3999999, 1767600001.4499998
    assert Fraction(a1) < Fraction("1767600001.3") < Fraction(a2) < Fraction("1767600001.4") < Fraction(b)
    stream = [Event("A", a1, {}), Event("A", a2, {}), Event("B", b, {})]
    workload = parse_workload("q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 200 ms SLIDE 100 ms")
    # b lies in [1.3, 1.5) and [1.4, 1.6); only a2 precedes it in the first, none in the second.
    expected = [(1767600001.3, 1767600001.5, "COUNT(*)", 1)]
    assert values(evaluate_bruteforce(workload, stream)) == expected
    assert values(evaluate(workload, stream, strategy)) == expected


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "condition", [" SEMANTICS NEXT", " SEMANTICS CONT", " WHERE A.x + 1 >= NEXT(B).x OR A.x != NEXT(B).x"]
)
def test_an_event_within_the_window_of_another_is_not_pruned_by_a_rounded_horizon(strategy, condition):
    """b = 1767600000.55 is stored just below .55, so a (at .25) and b both lie in [.25, .55). The scanned
    predecessors (NEXT, CONT, an edge predicate no index answers) were dropped once ``b.time - WITHIN`` was
    at or past them, a difference taken in floats: 1767600000.55 - 0.3 rounds to exactly a's .25."""
    a, b = 1767600000.25, 1767600000.55
    assert Fraction(b) - Fraction(a) < Fraction(3, 10)
    stream = [Event("A", a, {"x": 1}), Event("B", b, {"x": 2})]
    workload = parse_workload(f"q: RETURN COUNT(*) PATTERN SEQ(A, B){condition} WITHIN 300 ms SLIDE 250 ms")
    expected = [(1767600000.25, 1767600000.55, "COUNT(*)", 1)]
    assert values(evaluate_bruteforce(workload, stream)) == expected
    assert values(evaluate(workload, stream, strategy)) == expected
