"""Partial aggregates merge exactly: evaluating disjoint partitions apart and merging equals one evaluation."""

from __future__ import annotations

import sys
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st
from workloads import events, types_of, workloads

from hamlet import parse_workload
from hamlet.api import evaluate, evaluate_partials, finalize
from hamlet.partials import AggregateState, int_from_text, int_text


@given(workloads(), st.data())
def test_partials_of_split_partitions_merge_into_the_whole(text, data):
    workload = parse_workload(text)
    stream = data.draw(events(types_of(text)))
    # Split the stream by the value of k (an equivalence attribute in some queries, not in others) only for
    # queries that partition by k; for the rest the split is by a key all their events share.
    parts = [p for p in workload.sharable_query_sets() if "k" in p.partition_attributes]
    if not parts:
        return
    names = {n for p in parts for n in p.queries}
    sub = parse_workload("\n".join(q.text for q in workload.queries if q.name in names))
    halves = [[e for e in stream if e.get("k") == v] for v in ("p", "q")]
    merged = finalize([row for half in halves for row in evaluate_partials(sub, half)])
    whole = evaluate(sub, stream)
    key = lambda r: (r.query, r.window_start, repr(r.group), r.aggregate)
    assert sorted(merged, key=key) == sorted(whole, key=key)


def test_aggregate_state_merge_and_value():
    a = AggregateState("SUM", count=2, total=Fraction(7), floats=0)
    b = AggregateState("SUM", count=1, total=Fraction(1, 2), floats=1)
    assert a.merge(b) == AggregateState("SUM", count=3, total=Fraction(15, 2), floats=1)
    assert (a.value(), a.merge(b).value(), a.merge(b).exact_text()) == (7, 7.5, "7.5")
    assert AggregateState("AVG", count=3, total=Fraction(15, 2)).value() == 2.5
    assert AggregateState("SUM").value() is None  # no non-null occurrence
    lo, none = AggregateState("MIN", extreme=3), AggregateState("MIN")
    assert lo.merge(none) == none.merge(lo) == lo
    assert lo.merge(AggregateState("MIN", extreme=-1)).value() == -1
    huge = AggregateState("COUNT", count=2**200)
    assert huge.merge(huge).exact_text() == str(2**201)


def test_aggregate_state_text_round_trip_keeps_every_digit_under_the_default_limit():
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)  # the interpreter's default, whatever other modules set
    try:
        count = 3**20000  # ~9,500 digits
        states = [AggregateState("COUNT", count=count), AggregateState("COUNT", count=-count),
                  AggregateState("SUM", count=3, total=Fraction(2**-1074) + 7, floats=1),
                  AggregateState("AVG", count=4, total=Fraction(-10, 3)), AggregateState("MIN", extreme="Dé"),
                  AggregateState("MAX", extreme=2**62 + 1), AggregateState("MAX"),
                  AggregateState("MIN", extreme=-0.5), AggregateState("MAX", extreme=True)]  # fmt: skip
        for state in states:
            text = state.to_text()
            assert "\n" not in text
            back = AggregateState.from_text(text)
            assert back == state and type(back.extreme) is type(state.extreme)
        for value in (0, -1, 10**3999, 10**4000, -(7**9000), 2**30000 + 1):
            assert int_from_text(int_text(value)) == value
    finally:
        sys.set_int_max_str_digits(previous)
