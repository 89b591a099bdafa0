"""``window_ends=(lo, hi)``: exactly the rows of the unrestricted evaluation whose window ends in (lo, hi],
for every strategy, on random workloads and streams (the strategies of tests/workloads.py)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from workloads import (
    bursty_events,
    events,
    multi_query_workloads,
    sharing_workloads,
    types_of,
    workloads,
)

from hamlet import STRATEGIES, Event, HamletError, parse_workload
from hamlet.api import evaluate, evaluate_partials, evaluate_table, finalize, prepare
from hamlet.runtime.clipping import clip_window

bounds = st.one_of(st.integers(-5, 30), st.sampled_from([Fraction(7, 2), 2.5, 11.25]))


def check(text, stream, lo, hi):
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    for strategy in STRATEGIES:
        everything = evaluate(workload, stream, strategy)
        expected = [r for r in everything if lo < r.window_end <= hi]
        assert evaluate(workload, stream, strategy, window_ends=(lo, hi)) == expected, strategy
        prepared = prepare(workload).clipped((lo, hi))
        assert finalize(evaluate_partials(prepared, stream, strategy)) == expected, strategy


@given(workloads(), st.data(), bounds, bounds)
def test_window_ends_keep_exactly_the_windows_in_range(text, data, lo, hi):
    check(text, data.draw(events(types_of(text))), lo, hi)


@given(workloads(max_queries=1, negation=True), st.data(), bounds, bounds)
def test_window_ends_under_negation(text, data, lo, hi):
    check(text, data.draw(events(types_of(text), max_events=13)), lo, hi)


@given(sharing_workloads(), bursty_events(), bounds, bounds)
def test_window_ends_with_shared_bursts(text, stream, lo, hi):
    check(text, stream, lo, hi)


@given(multi_query_workloads(), st.data(), bounds, bounds)
def test_window_ends_of_multi_query_workloads(text, data, lo, hi):
    # Clipped windows differ per query, yet queries of one pattern still share a graph (graph.py's classes).
    types = types_of(text, every=2)
    check(
        text, data.draw(st.one_of(events(types, max_events=13), bursty_events(types, max_events=14))), lo, hi
    )


def test_clipped_window_indexes():
    window = parse_workload("q: RETURN COUNT(*) PATTERN A+ WITHIN 10 SLIDE 3").queries[0].window
    clipped = clip_window(window, 12, 22)  # ends 3k + 10 in (12, 22]: k = 1..4
    assert (clipped.first, clipped.last) == (1, 4)
    assert list(window.indexes(13)) == [2, 3, 4] and list(clipped.indexes(13)) == [2, 3, 4]
    assert list(window.indexes(5)) == [-1, 0, 1] and list(clipped.indexes(5)) == [1]
    assert list(clipped.indexes(40)) == []
    assert (clip_window(clipped, 15, 100).first, clip_window(clipped, 15, 100).last) == (2, 4)


TEXT = "q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10"
EVENTS = [Event("A", 1), Event("B", 2)]
TABLE = pa.table({"event_type": ["A", "B"], "event_time": [1, 2]})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: evaluate(TEXT, EVENTS, window_ends=(0, math.inf)), "of finite numbers of seconds, not (0, inf)"),
        (lambda: evaluate(TEXT, EVENTS, window_ends=(math.nan, 10)), "of finite numbers of seconds, not (nan, 10)"),
        (lambda: evaluate(TEXT, EVENTS, window_ends=(True, 10)), "of finite numbers of seconds, not (True, 10)"),
        (lambda: evaluate_table(TEXT, TABLE, window_ends_us=(0, 2**70)),
         "window_ends_us must be a pair (lo, hi) of whole microseconds in 64 bits, not (0, 1180591620717411303424)"),
    ],
)  # fmt: skip
def test_window_ends_no_window_end_compares_with_are_errors_that_say_so(call, message):
    # (formerly Python's OverflowError and ValueError; True passed for 1)
    with pytest.raises(HamletError, match=re.escape(message)):
        call()
