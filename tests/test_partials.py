"""Partial aggregates merge exactly: evaluating disjoint partitions apart and merging equals one evaluation."""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from hypothesis import assume, given
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from workloads import events, position_patterns, queries, types_of, workloads

from hamlet import parse_workload
from hamlet.api import evaluate, evaluate_partials, finalize
from hamlet.partials import AggregateState, int_from_text, int_text, merged_text_states, state_int_text


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


@given(st.data())
def test_position_template_partials_of_split_partitions_merge_into_the_whole(data):
    """OR, AND and repeated types over a stream partitioned by k: each half apart, merged, equals the whole
    and the oracle. For AND a pair may join trends of two partitions of one group: the halves' C_i, C_j, C_ij
    add, and the pairs are counted only at the end (``AggregateState`` PAIRS)."""
    pattern = data.draw(position_patterns())
    grouped = data.draw(st.booleans())
    text = data.draw(
        queries("p", pattern=pattern, partition=(("k",), ("g",) if grouped else ()), predicates=[])
    )
    workload = parse_workload(text)
    stream = data.draw(events(types_of(text), max_events=10, min_events=4))
    halves = [[e for e in stream if e.get("k") == v] for v in ("p", "q")]
    merged = finalize([row for half in halves for row in evaluate_partials(workload, half)])
    key = lambda r: (r.query, r.window_start, repr(r.group), r.aggregate)
    assert sorted(merged, key=key) == sorted(evaluate(workload, stream), key=key)
    assert sorted(merged, key=key) == sorted(evaluate_bruteforce(workload, stream), key=key)


def test_conjunction_pairs_state():
    """C_i, C_j, C_ij of P AND Q add across partitions; the pairs come from the sums (dissertation §12)."""
    a = AggregateState("PAIRS", pairs=(4, 0, 3))
    b = AggregateState("PAIRS", pairs=(0, 1, 1))
    assert a.merge(b) == AggregateState("PAIRS", pairs=(4, 1, 4))
    # 4·1 + 4·4 + 1·4 + C(4, 2): the worked example of README (SEQ(A+, B) AND SEQ(A, B+) over a1 b2 a3 a4 b7).
    assert a.merge(b).value() == 30
    assert (a.value(), b.value()) == (4 * 3 + 3, 1)  # (pairs of a's halves alone: not additive)
    assert AggregateState("PAIRS", pairs=(5, 0, 0)).value() == 0  # trends of P only: no pair
    assert AggregateState("PAIRS", pairs=(0, 0, 1)).value() == 0  # one trend pairs with no other
    big = AggregateState("PAIRS", pairs=(2**300, 3**200, 2**100))
    assert AggregateState.from_text(big.to_text()) == big
    assert big.exact_text() == str(
        2**300 * 3**200 + 2**300 * 2**100 + 3**200 * 2**100 + 2**100 * (2**100 - 1) // 2
    )


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


def states_of(function: str):
    """States of ``function`` as partials carry them: huge and negative counts, exact sums with fractions of
    any denominator, float counts, extremes of ints, floats (-0.0 next to 0), strings, or none yet."""
    ints = st.one_of(st.integers(-(10**6), 10**6), st.integers(-(2**400), 2**400))
    if function in ("MIN", "MAX"):
        extremes = st.one_of(st.none(), st.integers(-5, 5), st.sampled_from([0.0, -0.0, 2.5, -1.5]),
                             st.sampled_from(["a", "b", "Dé"]))  # fmt: skip
        return extremes.map(lambda e: AggregateState(function, extreme=e))
    if function == "PAIRS":
        return st.tuples(ints, ints, ints).map(lambda p: AggregateState(function, pairs=p))
    totals = st.builds(Fraction, ints, st.sampled_from([1, 1, 1, 2, 3, 2**80]))
    return st.builds(lambda c, t, f: AggregateState(function, count=c, total=t, floats=f),
                     ints, totals, st.integers(0, 3))  # fmt: skip


@given(st.sampled_from(["COUNT", "SUM", "AVG", "MIN", "MAX", "PAIRS"]).flatmap(
    lambda f: st.lists(states_of(f), min_size=1, max_size=8)))  # fmt: skip
def test_merged_text_states_equal_the_states_merged_one_by_one_in_any_order(states):
    """Stage 2 of the job reads a window's partial states in one pass (``merged_text_states``): the state,
    its value and its type are those of ``AggregateState.merge`` folded over them (MIN/MAX over strings
    too), and the same in any order — Spark hands a window's rows over in none: among equal extremes the
    form is fixed (MIN: -0.0 before 0 before 0.0; MAX the other way)."""
    # (a job never meets strings next to numbers under one MIN: an attribute's column has one type)
    assume(not any(isinstance(s.extreme, str) for s in states) or all(isinstance(s.extreme, (str, type(None)))
                                                                      for s in states))  # fmt: skip
    folded = states[0]
    for state in states[1:]:
        folded = folded.merge(state)
    merged = merged_text_states([s.to_text() for s in states])
    backwards = merged_text_states([s.to_text() for s in reversed(states)])
    assert merged == folded == backwards
    for other in (folded, backwards):
        assert type(merged.extreme) is type(other.extreme) and repr(merged.value()) == repr(other.value())


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


def test_a_float_count_past_json_readers_limit_round_trips_and_merges():
    """A SUM over floats counts its float values per trend: over a long burst that count passes the 4,300
    digits Python reads from a JSON number. States write it as text (hexadecimal past 128 bits) and still read
    the JSON numbers earlier versions wrote."""
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)
    try:
        many = 3**20000  # ~9,500 digits
        state = AggregateState("SUM", count=many, total=Fraction(1, 2) * many, floats=many)
        text = state.to_text()
        assert json.loads(text)[4] == hex(many)
        assert AggregateState.from_text(text) == state
        assert merged_text_states([text, text]) == state.merge(state)
        assert AggregateState.from_text('["SUM", "3", "3", "2", 3, null]') == AggregateState(
            "SUM", count=3, total=Fraction(3, 2), floats=3
        )
        assert merged_text_states(
            ['["SUM", "3", "3", "2", 3, null]', AggregateState("SUM", count=1, total=1).to_text()]
        ) == (AggregateState("SUM", count=4, total=Fraction(5, 2), floats=3))
        assert [state_int_text(v) for v in (0, -1, 2**127 - 1, -(2**127), 2**127, -(2**127) - 1)] == [
            "0",
            "-1",
            str(2**127 - 1),
            str(-(2**127)),
            "0x8" + "0" * 31,
            "-0x8" + "0" * 30 + "1",
        ]
    finally:
        sys.set_int_max_str_digits(previous)


def test_the_jobs_merge_counts_conjunction_pairs_across_tasks():
    """The Spark job's stage 2 (``jobs.engine.combine``) merges the states of two tasks' Arrow partials: a
    conjunction's pairs join trends of both tasks (k = p and k = q, one group), a disjunction adds."""
    import pyarrow as pa
    from workloads import table_of

    from hamlet import Event
    from hamlet.api import evaluate_table
    from jobs.engine import combine

    workload = parse_workload(
        "qa: RETURN COUNT(*) PATTERN SEQ(A+, B) AND SEQ(A, B+) WHERE [k] WITHIN 100\n"
        "qo: RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A+, B) OR SEQ(A, B+) WHERE [k] WITHIN 100\n"
    )
    # k = p: a1 b2 a3 a4 b7 (x: 5, 6, 4), README's example: 8 + 5 − 4 = 9 trends, C_i 4, C_j 1, C_ij 4.
    # k = q: a10 b11: one trend both match. Together C_i 4, C_j 1, C_ij 5: 4 + 20 + 5 + 10 = 39 pairs.
    times = {
        "p": [("A", 1, 5), ("B", 2, 0), ("A", 3, 6), ("A", 4, 4), ("B", 7, 0)],
        "q": [("A", 10, 1), ("B", 11, 0)],
    }
    tasks = [
        evaluate_table(workload, table_of([Event(t, time, {"x": x, "k": k}) for t, time, x in rows]), "greta")
        for k, rows in times.items()
    ]
    merged = combine(pa.concat_tables(tasks))
    got = sorted(zip(*(merged.column(n).to_pylist() for n in ("query", "aggregate", "value_exact"))))
    assert got == [("qa", "COUNT(*)", "39"), ("qo", "COUNT(*)", "10"), ("qo", "SUM(A.x)", "71")]
    whole = [Event(t, time, {"x": x, "k": k}) for k, rows in times.items() for t, time, x in rows]
    assert [r.value for r in evaluate(workload, whole)] == [39, 10, 71]
    assert [r.value for r in evaluate_bruteforce(workload, whole)] == [39, 10, 71]
