"""Arrow in, Arrow out (``hamlet.evaluate_table``, hamlet/runtime/columnar.py, native/src/columns.rs and
partials.rs): the kernel reads a table's columns and writes each window's partial states itself. Exact
values where the numbers are known (2^200 − 1 trends, float sums to the last bit, groups with any text, uint64
values beyond int64), and the partitions the kernel leaves to Python (-0.0 under MAX, sub-second times) computed on
``Event``s of their rows only, merged with the kernel's into the same results as ``hamlet.evaluate``. Random
workloads through this path are held to the oracle in test_property.py (``check_table``)."""

from __future__ import annotations

import io
import json
import math
import re
from contextlib import nullcontext
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any
from unittest.mock import patch

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_checks import python_graphs_refused
from oracle import evaluate_bruteforce
from workloads import events, workloads

from hamlet import Event, EventError, HamletError, evaluate, parse_workload
from hamlet.api import evaluate_table, finalize_table
from hamlet.io import read_events_csv
from hamlet.partials import AggregateState
from hamlet.runtime.columnar import (
    PARTIAL_SCHEMA,
    checked,
    clashing_rows,
    events_of,
    kernel_micros,
    run_compiled,
    set_rows,
    sorted_events,
)
from hamlet.runtime.native import floor_micros
from hamlet.stats import EvaluationStats

STRATEGIES = ("greta", "static", "hamlet")


def table(rows: list[tuple], columns: dict[str, pa.DataType]) -> pa.Table:
    """(type, time in microseconds, *attributes) rows."""
    names = ["event_type", "event_time", *columns]
    data = {name: [row[i] for row in rows] for i, name in enumerate(names)}
    types = {"event_type": pa.string(), "event_time": pa.timestamp("us", "UTC"), **columns}
    return pa.table({name: pa.array(values, types[name]) for name, values in data.items()})


def results(workload: str, events: pa.Table, strategy: str, stats: EvaluationStats | None = None) -> list:
    return finalize_table(workload, evaluate_table(workload, events, strategy, stats))


def as_events(events: pa.Table) -> list:
    return events_of(
        sorted_events(events), [c for c in events.column_names if c not in ("event_type", "event_time")]
    )


def test_a_sets_rows_are_its_types_without_nulls_in_its_partition_attributes():
    rows = [("A", 1, 1.0), ("B", 2, None), ("C", 3, 2.0), ("A", 4, float("nan")), ("B", 5, 3.0)]
    events = checked(table(rows, {"m": pa.float64()}))
    # (every type the set's and no attribute: the table itself, no copy)
    assert set_rows(events, frozenset("ABC"), []) is events
    assert set_rows(events, None, []) is events
    assert set_rows(events, frozenset("AB"), []).column("event_time").to_pylist() == [
        datetime(1970, 1, 1, 0, 0, 0, t, tzinfo=UTC) for t in (1, 2, 4, 5)
    ]
    # (a null and a NaN in the partition attribute: no query of the set matches those rows)
    assert set_rows(events, frozenset("ABC"), ["m"]).column("m").to_pylist() == [1.0, 2.0, 3.0]
    assert set_rows(events, frozenset("AB"), ["m"]).column("m").to_pylist() == [1.0, 3.0]
    assert set_rows(events, frozenset("AB"), ["absent"]).num_rows == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_counts_of_two_hundred_digits_and_more_stay_exact(strategy):
    workload = "q: RETURN COUNT(*), COUNT(B), MAX(B.n) PATTERN B+ WITHIN 1000 SLIDE 1000"
    events = table([("B", t * 1_000_000, t) for t in range(200)], {"n": pa.int64()})
    out = evaluate_table(workload, events, strategy)
    states = {a: AggregateState.from_text(s) for a, s in zip(out.column("aggregate").to_pylist(),
                                                               out.column("state").to_pylist())}  # fmt: skip
    assert states["COUNT(*)"].value() == 2**200 - 1
    assert states["COUNT(B)"].value() == 200 * 2**199  # each B is in half of the 2^200 subsets
    assert states["MAX(B.n)"].value() == 199
    assert out.schema == PARTIAL_SCHEMA
    assert out.column("window_start_us").to_pylist() == [0, 0, 0]
    assert out.column("window_end_us").to_pylist() == [1_000_000_000] * 3


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_float_sums_are_exact_to_the_last_bit(strategy):
    """SUM(B.x) over a Kleene B+ of 0.1, 0.2, 2^-40: each value in 2^(n-1) of the 2^n - 1 trends, summed
    exactly (the state is a reduced fraction of a power of two) and rounded once."""
    values = [0.1, 0.2, 2.0**-40]
    workload = "q: RETURN SUM(B.x), AVG(B.x), MIN(B.x) PATTERN B+ WITHIN 100 SLIDE 100"
    events = table([("B", (t + 1) * 1_000_000, v) for t, v in enumerate(values)], {"x": pa.float64()})
    exact = sum(Fraction(v) for v in values) * 4
    rows = {r.aggregate: r.value for r in results(workload, events, strategy)}
    assert rows == {"SUM(B.x)": float(exact), "AVG(B.x)": float(exact / 12), "MIN(B.x)": 2.0**-40}
    state = evaluate_table(workload, events, strategy).column("state").to_pylist()[0]
    function, count, numerator, denominator, floats, _ = json.loads(state)
    assert (function, count, floats) == ("SUM", "12", "12")
    assert Fraction(int(numerator), int(denominator)) == exact


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_groups_keep_their_values_and_any_text(strategy):
    workload = "q: RETURN g, n, COUNT(*) PATTERN SEQ(A, B+) WHERE [g, n] GROUP-BY g, n WITHIN 10 SLIDE 10"
    names = ['quo"te', "naïve\\", "line\nbreak", "plain"]
    rows = [(t, i * 1_000_000, g, n) for g in names for n in (1, -(2**63)) for i, t in enumerate("ABB")]
    rows.append(("A", 0, None, 1))  # a null partition attribute: no query of the set reads it
    events = table(rows, {"g": pa.string(), "n": pa.int64()})
    out = results(workload, events, strategy)
    assert [(r.group, r.value) for r in out] == [
        ({"g": g, "n": n}, 3) for g in sorted(names) for n in (-(2**63), 1)
    ]
    assert out == evaluate(workload, as_events(events), strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_partitions_the_kernel_leaves_to_python_merge_with_its_own(strategy):
    """An int beyond 64 bits (a decimal(38, 0) column's 10^30) is Python's to compute: that partition (and only
    that one) runs on Events; the others on the kernel. Their rows merge into one result per group."""
    workload = """
        q: RETURN g, COUNT(*), MAX(B.x) PATTERN SEQ(A, B+) WHERE [k] GROUP-BY g WITHIN 10 SLIDE 10
        r: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [k] GROUP-BY g WITHIN 10 SLIDE 10
    """
    rows = []
    for k, g, x in [("p", 1, 2), ("q", 1, 4), ("s", 2, 10**30), ("t", 2, 1)]:
        rows += [("A", 1_000_000, k, g, 0), ("B", 2_000_000, k, g, x), ("B", 3_000_000, k, g, 3)]
    events = table(rows, {"k": pa.string(), "g": pa.int64(), "x": pa.decimal128(38, 0)})
    stats = EvaluationStats()
    out = results(workload, events, strategy, stats)
    by = {(r.query, r.group.get("g"), r.aggregate): r.value for r in out}
    assert by[("q", 1, "COUNT(*)")] == 6 and by[("q", 1, "MAX(B.x)")] == 4
    assert (
        by[("q", 2, "COUNT(*)")] == 6 and by[("r", 2, "COUNT(*)")] == 6 and by[("q", 2, "MAX(B.x)")] == 10**30
    )
    on_events = EvaluationStats()
    expected = evaluate(workload, as_events(events), strategy, on_events)
    assert out == expected
    assert (stats.partitions, stats.events) == (on_events.partitions, on_events.events) == (8, 24)  # 2 sets
    assert stats.python_partitions == 1  # (s, of the set of q; r reads no x)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_uint64_values_beyond_int64_run_on_the_kernel(strategy):
    """A uint64 column's values beyond int64 (2^63 to 2^64 - 1) are read exactly by the kernel (``columns.rs``,
    ``Raw::UInt``), and so are Python ints there on the event path: SUM, MIN, MAX, AVG, local and edge
    predicates over them (their arithmetic in 128 bits), none of it on the Python graph, all of it the
    enumerator's. Over A(2^64 - 1) B(2^64 - 2) B(2^63) B(9) B(2^63 + 5) B(null) at seconds 1..6:
    q's B events are those beyond int64: the 7 non-empty subsets of three, each B in 4 of them."""
    workload = f"""
    q: RETURN COUNT(*), SUM(B.u), MIN(B.u), MAX(B.u), AVG(B.u) PATTERN SEQ(A, B+) WHERE B.u > {2**63 - 1} WITHIN 10
    r: RETURN COUNT(*), SUM(B.u) PATTERN SEQ(A, B+) WHERE B.u < NEXT(B).u + 1 AND A.u - 1 > NEXT(B).u WITHIN 10 SLIDE 5
    """
    values = [2**64 - 1, 2**64 - 2, 2**63, 9, 2**63 + 5, None]
    events = table([("AB"[i > 0], (i + 1) * 1_000_000, u) for i, u in enumerate(values)], {"u": pa.uint64()})
    with python_graphs_refused():
        out = results(workload, events, strategy)
        assert out == evaluate(workload, as_events(events), strategy)
    assert out == evaluate_bruteforce(parse_workload(workload), as_events(events))
    big = [2**64 - 2, 2**63, 2**63 + 5]
    assert [r.value for r in out if r.query == "q"] == [7, 4 * sum(big), 2**63, 2**64 - 2, sum(big) / 3]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_times_that_are_not_whole_seconds_take_the_python_path(strategy):
    workload = "q: RETURN COUNT(*), SUM(B.u) PATTERN SEQ(A, B+) WHERE B.u > 5 WITHIN 1 SLIDE 1"
    rows = [("A", 100_000, 2**64 - 1), ("B", 200_000, 2**64 - 2), ("B", 700_000, 9)]
    events = table(rows, {"u": pa.uint64()})
    out = results(workload, events, strategy)
    assert [r.value for r in out] == [3, 2 * (2**64 - 2) + 2 * 9]
    whole = table([(t, s * 1_000_000, u) for t, s, u in [("A", 1, 2**64 - 1), ("B", 2, 2**64 - 2)]],
                  {"u": pa.uint64()})  # fmt: skip
    assert [r.value for r in results(workload.replace("1 SLIDE 1", "10 SLIDE 10"), whole, strategy)] == [
        1, 2**64 - 2]  # fmt: skip


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_millisecond_timestamps_and_windows_run_on_the_kernel(strategy):
    """A Spark table's timestamps below a second: the kernel reads their microseconds. A at .125 s, Bs at
    .25, .375 and .625: in [0, .5) 3 trends whose B.x sum to 10, in [.5, 1) none (no A)."""
    workload = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 500 ms SLIDE 500 ms"
    events = table([("A", 125_000, 1), ("B", 250_000, 2), ("B", 375_000, 3), ("B", 625_000, 4)],
                   {"x": pa.int64()})  # fmt: skip
    assert kernel_micros(events).to_pylist() == [125_000, 250_000, 375_000, 625_000]
    out = evaluate_table(workload, events, strategy)
    assert sorted(zip(out.column("window_start_us").to_pylist(), out.column("window_end_us").to_pylist(),
                      out.column("aggregate").to_pylist())) == [(0, 500_000, "COUNT(*)"), (0, 500_000, "SUM(B.x)")]  # fmt: skip
    assert [(r.window_start, r.value) for r in finalize_table(workload, out)] == [(0, 3), (0, 10)]


def test_float_seconds_reach_the_kernel_as_the_microsecond_they_lie_in():
    """A double is a whole number of microseconds iff it is one of 1/64 s; any other lies strictly inside
    one, and the kernel takes the microsecond below it: 0.1 is 0.1000000000000000055…, so 100,000 µs; -0.1
    is -100,001 µs; 1767600000.1 is 1767600000.0999999046…. Two different doubles in one microsecond would
    read as equal: ``clashing_rows`` names them (NaN: no times at all)."""

    def micros(times: list[float]) -> tuple[list[int], list[int]] | None:
        table = pa.table({"event_type": ["A"] * len(times), "event_time": pa.array(times)})
        out = kernel_micros(table)
        return None if out is None else (out.to_pylist(), clashing_rows(table, out, ()).tolist())

    assert micros([-0.015625, 1767600000.125]) == ([-15_625, 1_767_600_000_125_000], [])
    assert micros([-0.1, 0.1, 0.1, 0.5, 1767600000.1]) == (
        [-100_001, 100_000, 100_000, 500_000, 1_767_600_000_099_999],
        [],
    )
    assert micros([0.1, 0.1000000001]) == ([100_000, 100_000], [0, 1])
    # (a whole microsecond and a double just past it)
    assert micros([0.5, 1.0, 1.0000000001, 2.0]) == ([500_000, 1_000_000, 1_000_000, 2_000_000], [0, 1, 2, 3])
    assert micros([float("nan")]) is None


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_only_the_partitions_where_two_times_share_a_microsecond_are_pythons(strategy):
    """Machine p's two B's lie in one microsecond (0.1 and the double after it); machine q's times are
    apart. The kernel runs q's rows alone; Python p's. Each: (a, b), (a, b'), (a, b, b') = 3 trends."""
    workload = "q: RETURN k, COUNT(*) PATTERN SEQ(A, B+) WHERE [k] GROUP-BY k WITHIN 1"
    rows = [("A", 0.05, "p"), ("A", 0.05, "q"), ("B", 0.1, "p"), ("B", 0.1 + 2**-56, "p"), ("B", 0.1, "q"),
            ("B", 0.2, "q")]  # fmt: skip
    events_table = pa.table({"event_type": [r[0] for r in rows], "event_time": [r[1] for r in rows],
                             "k": [r[2] for r in rows]})  # fmt: skip
    seen = []

    def kernel(compiled, queries, table, *args, **kwargs):
        seen.append(table.column("k").to_pylist())
        return run_compiled(compiled, queries, table, *args, **kwargs)

    stats = EvaluationStats()
    with patch("hamlet.api.run_compiled", kernel):
        out = finalize_table(workload, evaluate_table(workload, events_table, strategy, stats))
    assert seen == [["q", "q", "q"]]
    assert (stats.partitions, stats.python_partitions) == (2, 1)
    assert [(r.group["k"], r.value) for r in out] == [("p", 3), ("q", 3)]
    assert out == evaluate_bruteforce(parse_workload(workload), as_events(events_table))


@settings(max_examples=300)
@given(st.lists(st.floats(min_value=-(2.0**40) + 1, max_value=2.0**40 - 1), max_size=20))
def test_the_microsecond_below_a_double_is_exact(seconds):
    assert floor_micros(np.array(seconds, np.float64)).tolist() == [
        math.floor(Fraction(t) * 10**6) for t in seconds
    ]


def test_a_time_the_kernel_cannot_hold_leaves_the_column_to_python():
    """Not finite, or from the whole second below 2^60 µs (36,000 years) on: no microseconds for the column."""
    last = 2**60 // 10**6  # (seconds)
    for bad in (math.nan, math.inf, -math.inf, float(last), -float(last)):
        assert floor_micros(np.array([0.5, bad])) is None, bad
    assert floor_micros(np.array([last - 0.5, 0.5 - last])).tolist() == [
        last * 10**6 - 500_000,
        500_000 - last * 10**6,
    ]


# Times a whole second plus a fraction no double holds exactly (or does: 0, 1/2), some within a microsecond of
# another (where the table stays Python's), on every pattern family the kernel takes.
FRACTIONS = [0.0, 0.5, 0.1, 1 / 3, 0.7, 0.999999, 0.9999995, 1e-7, 2e-7]


@given(workloads(kernel=True), st.data())
def test_float_times_between_microseconds_run_on_the_kernel_and_equal_bruteforce(text, data):
    """As a column (``kernel_micros``) and as ``Event``s (``native/src/events.rs``): on the kernel wherever no
    two times share a microsecond, on Python's graphs where two do, and the oracle's counts either way."""
    stream = [Event(e.type, e.time + data.draw(st.sampled_from(FRACTIONS)), e.attributes)
              for e in data.draw(events(min_events=1))]  # fmt: skip
    if data.draw(st.booleans()):  # windows of milliseconds: bounds at fractions of a second too
        text = re.sub(
            r"WITHIN (\d+) SLIDE (\d+)",
            lambda m: f"WITHIN {int(m[1]) * 700} ms SLIDE {int(m[2]) * 300} ms",
            text,
        )
    workload = parse_workload(text)
    events_table = pa.table({"event_type": [e.type for e in stream], "event_time": pa.array([float(e.time) for e in stream]),
                             **{a: [e.attributes.get(a) for e in stream] for a in "xysgk"}})  # fmt: skip
    read = events_of(sorted_events(events_table), list("xysgk"))
    expected = evaluate_bruteforce(workload, read)
    ordered = sorted_events(events_table)
    compiled = not len(clashing_rows(ordered, kernel_micros(ordered), ()))
    for strategy in STRATEGIES:
        with python_graphs_refused() if compiled else nullcontext():
            assert finalize_table(workload, evaluate_table(workload, events_table, strategy)) == expected, (
                strategy
            )
            assert evaluate(workload, read, strategy) == expected, f"{strategy}, Events"


def test_a_timestamps_fraction_of_a_second_is_exact_on_every_path():
    """B at 08:00:00.1 lies exactly on the bound of the 100 ms windows: in [.1, .2), not in [0, .1) with A.
    As a float (1767600000.1 is the double 1767600000.0999999…) it fell into [0, .1) and made a trend; the
    API's datetimes, the table's timestamps and the CSV's ISO-8601 text and decimal seconds now all read it
    exactly (the CSV's decimal seconds were read as that double until 2026-11-27)."""
    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 100 ms"
    a, b = datetime(2026, 1, 5, 8, tzinfo=UTC), datetime(2026, 1, 5, 8, 0, 0, 100_000, tzinfo=UTC)
    as_dicts = [{"event_type": "A", "event_time": a}, {"event_type": "B", "event_time": b}]
    decimal_csv = read_events_csv(
        io.StringIO("event_type,event_time\nA,1767600000.000\nB,1767600000.1\n"), "e.csv"
    )
    assert [e.time for e in decimal_csv.events] == [1767600000, Fraction(17676000001, 10)]
    for strategy in STRATEGIES:
        assert evaluate(workload, as_dicts, strategy) == []
        assert evaluate(workload, decimal_csv.events, strategy) == []
        assert (
            results(workload, table([("A", 1767600000_000000), ("B", 1767600000_100000)], {}), strategy) == []
        )
    wider = workload.replace("100 ms", "200 ms")
    assert [(r.window_start, r.value) for r in evaluate(wider, as_dicts)] == [(1767600000, 1)]


def test_only_windows_ending_in_the_range_are_kept():
    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 5"
    events = table([("A" if t % 4 == 0 else "B", t * 1_000_000) for t in range(40)], {})
    out = evaluate_table(workload, events, "hamlet", window_ends_us=(10_000_000, 25_000_000))
    assert sorted(set(zip(out.column("window_start_us").to_pylist(), out.column("window_end_us").to_pylist()))) == [
        (5_000_000, 15_000_000), (10_000_000, 20_000_000), (15_000_000, 25_000_000)]  # fmt: skip


def test_times_in_seconds_as_numbers_are_read_as_hamlet_evaluate_reads_them():
    """In window [1, 3): A1 B2 B2.5 make 3 trends whose B.n sum to 2 + 3 + 5; A1 B2 (B3 is out) make 1."""
    workload = "q: RETURN COUNT(*), SUM(B.n) PATTERN SEQ(A, B+) WITHIN 2 SLIDE 1"
    for times, first in (([1, 2, 2.5], [3, 10]), ([1.0, 2.0, 3.0], [1, 2]), ([1, 2, 3], [1, 2])):
        events = pa.table({"event_type": ["A", "B", "B"], "event_time": times, "n": [1, 2, 3]})
        out = results(workload, events, "hamlet")
        assert [(r.window_start, r.value) for r in out[:2]] == [(1, first[0]), (1, first[1])]
        as_dicts = [{"event_type": t, "event_time": s, "n": n} for t, s, n in zip("ABB", times, [1, 2, 3])]
        assert out == evaluate(workload, as_dicts, "hamlet")


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"event_type": ["A"]}, "the events table: the table has no event_time column (found: event_type)"),
        ({"event_type": [1], "event_time": [1]}, "the events table: event_type is int64, not text"),
        (
            {"event_type": ["A"], "event_time": ["x"]},
            "event_time is string, neither a timestamp nor a number",
        ),
        ({"event_type": ["A", None], "event_time": [1, 2]}, "the events table, row 2: event_type is empty"),
        (
            {"event_type": ["A", "B", " "], "event_time": [1, 2, 3]},
            "the events table, row 3: event_type is empty",
        ),
        (
            {"event_type": ["A", "B"], "event_time": [1.0, float("nan")]},
            "the events table, row 2: event_time is empty",
        ),
        (
            {"event_type": ["A"], "event_time": [10**12]},
            "the events table, row 1: event_time 1000000000000 lies outside the years",
        ),
    ],
)
def test_a_table_the_engine_cannot_read_is_an_error_that_says_where(columns, message):
    from hamlet import EventError

    with pytest.raises(EventError) as error:
        evaluate_table("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 2 SLIDE 1", pa.table(columns))
    assert message in str(error.value)


ARROW_TYPES = [pa.int8(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64(), pa.float32(), pa.float64(),
               pa.string(), pa.large_string(), pa.string_view(), pa.dictionary(pa.int32(), pa.string()), pa.bool_(),
               pa.null()]  # fmt: skip
VALUES = {
    "int": st.one_of(st.integers(-3, 3), st.integers(0, 1), st.none()),
    "uint": st.one_of(st.integers(0, 3), st.none(), st.just(2**63 + 5)),
    "float": st.one_of(st.sampled_from([0.5, -1.25, 0.0, 2.0]), st.none(), st.sampled_from([-0.0, 1e300])),
    "str": st.one_of(st.sampled_from(["u", "v"]), st.none(), st.sampled_from(["ü", ""])),
    "bool": st.one_of(st.booleans(), st.none()),
    "null": st.none(),
}


def kind_of(arrow_type: pa.DataType) -> str:
    if (
        pa.types.is_dictionary(arrow_type)
        or pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
        or pa.types.is_string_view(arrow_type)
    ):
        return "str"
    if pa.types.is_unsigned_integer(arrow_type):
        return "uint" if arrow_type == pa.uint64() else "int"
    for name, test in (
        ("int", pa.types.is_integer),
        ("float", pa.types.is_floating),
        ("bool", pa.types.is_boolean),
    ):
        if test(arrow_type):
            return name
    return "null"


@st.composite
def typed_tables(draw) -> pa.Table:
    """Events of A, B, C at seconds 0..9 with attributes x, g of any Arrow type the job may meet."""
    n = draw(st.integers(3, 12))
    columns = {
        "event_type": pa.array(
            ["A", *draw(st.lists(st.sampled_from("ABBBC"), min_size=n - 1, max_size=n - 1))]
        ),
        "event_time": pa.array(sorted(draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))), pa.int64()),
    }
    for name in ("x", "g"):
        arrow_type = draw(st.sampled_from(ARROW_TYPES))
        values = draw(st.lists(VALUES[kind_of(arrow_type)], min_size=n, max_size=n))
        if kind_of(arrow_type) == "int" and pa.types.is_unsigned_integer(arrow_type):
            values = [None if v is None else abs(v) for v in values]
        if arrow_type == pa.float32():
            values = [v if v is None or abs(v) < 1e30 else 1.5 for v in values]
        columns[name] = pa.array(values, arrow_type)
    return pa.table(columns)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_dictionary_column_whose_dictionary_holds_values_of_other_rows_groups_exactly(strategy):
    """GROUP-BY g over a dictionary column whose dictionary holds "ü", the value of a C event only: the set
    reads A and B, and grouping once numbered its rows by the whole dictionary (ArrowIndexError). Group u:
    A0 A0 B1 make 2 trends in each window that holds both times, [-5, 5) and [0, 10)."""
    g = pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, None, 1], pa.int32()), pa.array(["ü", "u"]))
    events = pa.table(
        {"event_type": ["C", "A", "A", "A", "B"], "event_time": pa.array([0, 0, 0, 0, 1]), "g": g}
    )
    workload = "q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 10 SLIDE 5"
    out = results(workload, events, strategy)
    assert [(r.window_start, r.group, r.value) for r in out] == [(-5, {"g": "u"}, 2), (0, {"g": "u"}, 2)]
    assert out == evaluate(workload, as_events(events), strategy)


TYPED_WORKLOADS = [
    "q: RETURN g, COUNT(*), SUM(B.x), MIN(B.x), MAX(B.x) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 10 SLIDE 5",
    "q: RETURN COUNT(*), AVG(B.x) PATTERN SEQ(A, B+) WHERE B.x > 0 WITHIN 10 SLIDE 10\n"
    + "r: RETURN COUNT(B), MAX(A.g) PATTERN SEQ(A, B+, C) WHERE B.g = 'u' WITHIN 10 SLIDE 5",
]


@settings(max_examples=200, deadline=None)
@given(typed_tables(), st.sampled_from(TYPED_WORKLOADS), st.sampled_from(STRATEGIES))
def test_every_arrow_type_reads_as_the_event_path_reads_it(events, workload, strategy):
    """Whatever the column types (narrow ints, uint64 beyond int64, float32, strings of any layout, bools,
    all-null), the table path gives what ``hamlet.evaluate`` gives on the same rows as ``Event``s, or the
    same error."""
    expected: Any
    try:
        expected = repr(evaluate(workload, as_events(events), strategy))
    except HamletError as e:
        expected = str(e)
    try:
        got = repr(results(workload, events, strategy))
    except HamletError as e:
        got = str(e)
    assert got == expected


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (
            pa.array([float("inf"), 2.0, 3.0]),
            "the events table, row 1: event_time inf lies outside the years 1 to 9999",
        ),
        (
            pa.array([2**64 - 1, 2, 3], pa.uint64()),
            "the events table, row 1: event_time 18446744073709551615 lies outside the years",
        ),
        (
            pa.array([1_000_000_001, 2, 3], pa.int64()).cast(pa.timestamp("ns")),
            "the events table, row 1: event_time 1970-01-01 00:00:01.000000001 has a fraction of a microsecond",
        ),
        (
            pa.array([253402300800, 2, 3], pa.int64()).cast(pa.timestamp("s")),
            "the events table, row 1: event_time of 253402300800 s since the epoch lies outside the years 1 to 9999",
        ),
    ],
)
def test_event_times_no_microsecond_of_the_years_1_to_9999_holds_are_errors_naming_the_row(column, message):
    # (formerly ArrowInvalid tracebacks from a cast deep inside the table path)
    from hamlet import EventError

    events = pa.table({"event_type": ["A", "B", "B"], "event_time": column})
    with pytest.raises(EventError) as error:
        evaluate_table("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 2 SLIDE 1", events)
    assert message in str(error.value)


def test_a_dataframes_nanoseconds_are_the_same_error_as_the_tables():
    """pandas dropped them with a warning, so a1 and b1.0000005 became equal times and their trend was lost."""
    import pandas as pd

    from hamlet import EventError

    frame = pd.DataFrame({"event_type": ["A", "B"],
                          "event_time": pd.to_datetime([1_000_000_000, 1_000_000_500], unit="ns", utc=True)})  # fmt: skip
    message = "row 2: event_time 1970-01-01 00:00:01.000000500+00:00 has a fraction of a microsecond"
    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10"
    for run in (
        lambda: evaluate(workload, frame),
        lambda: evaluate_table(workload, pa.Table.from_pandas(frame)),
    ):
        with pytest.raises(EventError, match=re.escape(message)):
            run()


def test_what_is_not_a_table_is_an_error_and_a_record_batch_is_read_as_one():
    from hamlet import EventError

    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10"
    with pytest.raises(EventError, match="expected a pyarrow Table of events, found list"):
        evaluate_table(workload, [("A", 1)])  # type: ignore[arg-type]
    batch = pa.record_batch({"event_type": ["A", "B", "B"], "event_time": [1, 2, 3]})
    assert [r.value for r in results(workload, batch, "hamlet")] == [3]  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_decimal_columns_are_the_numbers_they_hold(strategy):
    """Spark's decimal(p, s) is a number to ``hamlet check``; it was a value no comparison held for and SUM
    refused. Over a1(x=1.25) a2(x=2.50) b3: 3 trends (a1 b3, a2 b3, a1 a2 b3), A.x summed over them 7.5; only
    a2 passes A.x > 2 (1 trend); whole decimals stay exact ints."""
    workload = "q: RETURN COUNT(*), SUM(A.x), MIN(A.x) PATTERN SEQ(A+, B) WITHIN 10\n" + (
        "r: RETURN COUNT(*), SUM(A.n) PATTERN SEQ(A+, B) WHERE A.x > 2 WITHIN 10"
    )
    events = pa.table({
        "event_type": ["A", "A", "B"],
        "event_time": [1, 2, 3],
        "x": pa.array([Decimal("1.25"), Decimal("2.50"), None], pa.decimal128(10, 2)),
        "n": pa.array([10**17, 10**17, None], pa.decimal128(18, 0)),
    })  # fmt: skip
    out = results(workload, events, strategy)
    assert [(r.query, r.aggregate, r.value) for r in out] == [
        ("q", "COUNT(*)", 3), ("q", "SUM(A.x)", 7.5), ("q", "MIN(A.x)", 1.25),
        ("r", "COUNT(*)", 1), ("r", "SUM(A.n)", 10**17),
    ]  # fmt: skip
    assert type(out[-1].value) is int


def test_a_nested_column_cannot_partition_the_stream_and_says_so():
    from hamlet import EventError

    events = pa.table({"event_type": ["A", "B"], "event_time": [1, 2], "g": [[1], [1]]})
    with pytest.raises(EventError, match=r"g is a list<item: int64> column: GROUP-BY and equivalence"):
        evaluate_table("q: RETURN g, COUNT(*) PATTERN SEQ(A, B) GROUP-BY g WITHIN 10", events)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_groups_by_a_timestamp_column_have_a_text_key(strategy):
    day = pa.array([1_767_571_200_000_000] * 3, pa.int64()).cast(pa.timestamp("us", "UTC"))
    events = pa.table({"event_type": ["A", "B", "B"], "event_time": [1, 2, 3], "day": day})
    out = evaluate_table(
        "q: RETURN day, COUNT(*) PATTERN SEQ(A, B+) GROUP-BY day WITHIN 10", events, strategy
    )
    assert out.column("group_key").to_pylist() == ['{"day":"2026-01-05 00:00:00+00:00"}']
    assert out.column("state").to_pylist() == [AggregateState("COUNT", count=3).to_text()]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_text_in_arrows_view_layout_reads_as_text(strategy):
    """``string_view`` columns (polars and DuckDB export text so), plain and dictionary-encoded, as the
    event type, a partition attribute and a group: HAMLET Figure 4's q1 per group, the same rows as with
    plain strings. Group x holds a1 a2 c3 b4..b7 a8 c10..c12 (a1 and a2 with each non-empty subset of b4..b7:
    2·15 trends), group y a9 b13 b14 (a9 with those two: 3)."""
    workload = "q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [g] GROUP-BY g WITHIN 100"
    types = list("AACBBBBAACCCBB")
    groups = ["x"] * 8 + ["y"] + ["x"] * 3 + ["y"] * 2
    expected = [({"g": "x"}, 30), ({"g": "y"}, 3)]
    for encode in (False, True):
        columns = {"event_type": pa.array(types, pa.string_view()), "g": pa.array(groups, pa.string_view())}
        if encode:  # (pa.array cannot build a dictionary of views: encode the views)
            columns = {name: column.dictionary_encode() for name, column in columns.items()}
        events = pa.table({**columns, "event_time": pa.array(range(1, 15), pa.int64())})
        assert [(r.group, r.value) for r in results(workload, events, strategy)] == expected, encode


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_states_carry_integers_past_128_bits_in_hexadecimal_and_read_back_exactly(strategy):
    """SEQ(A, B+) over one A and 200 Bs: 2^200 - 1 trends (each non-empty subset of the Bs), and a SUM of
    x = 2^-1074 per B in each: 200 · 2^199 · 2^-1074 = 25 · 2^-872. Past 128 bits a state's integers are
    hexadecimal (linear to write and read, where 60 decimal digits are not yet a cost but 6,000 are), the
    kernel's exactly as Python's ``AggregateState.to_text``; the final values are exact."""
    tiny = 5e-324  # 2^-1074
    n = 200
    events = pa.table({"event_type": ["A"] + ["B"] * n, "event_time": list(range(n + 1)),
                       "x": [0.0] + [tiny] * n})  # fmt: skip
    workload = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 1000"
    out = evaluate_table(workload, events, strategy)
    count = AggregateState("COUNT", count=2**n - 1)
    total = AggregateState("SUM", count=n * 2 ** (n - 1), total=Fraction(25, 2**872), floats=n * 2 ** (n - 1))
    assert out.column("state").to_pylist() == [count.to_text(), total.to_text()]
    assert count.to_text() == f'["COUNT", "0x{"f" * 50}", "0", "1", "0", null]'
    assert total.to_text() == f'["SUM", "0x64{"0" * 50}", "25", "0x1{"0" * 218}", "0x64{"0" * 50}", null]'
    assert [AggregateState.from_text(s) for s in out.column("state").to_pylist()] == [count, total]
    assert [r.value for r in finalize_table(workload, out)] == [2**n - 1, 25 * 2.0**-872]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sums_of_one_attribute_over_ints_of_one_type_and_floats_of_another_run_on_the_kernel(strategy):
    """F.x holds ints (or nothing), B.x floats: Python sums F's in ints and B's in units of 2^-1074 (its
    algebras ask per type), and so does the kernel, per update. F1 F2 B3 B4 B5 in one window: 2·7 = 14
    trends SEQ(F, B+); each F in 7, each B in 2·4 = 8. MIN and MAX order F's ints and B's floats alike."""
    workload = (
        "q: RETURN COUNT(*), SUM(F.x), AVG(F.x), SUM(B.x), AVG(B.x) PATTERN SEQ(F, B+) WITHIN 10\n"
        "r: RETURN MIN(B.x), MAX(F.x), MIN(F.x) PATTERN SEQ(F, B+) WITHIN 10"
    )
    for f1, f2 in ((1, 2), (None, 3), (None, None)):
        stream = [Event("F", 1, {"x": f1}), Event("F", 2, {"x": f2})]
        stream += [Event("B", t, {"x": x}) for t, x in ((3, 0.1), (4, 0.25), (5, -2.5))]
        expected = evaluate_bruteforce(parse_workload(workload), stream)
        values = {(r.query, r.aggregate): r.value for r in expected}
        assert values[("q", "COUNT(*)")] == 14
        assert values[("r", "MIN(B.x)")] == -2.5
        assert values[("q", "SUM(B.x)")] == 8 * (0.1 + 0.25 - 2.5)
        assert values[("q", "SUM(F.x)")] == (
            7 * (f1 + f2) if f1 is not None else 7 * f2 if f2 is not None else None
        )
        events_table = pa.table({"event_type": [e.type for e in stream], "event_time": [e.time for e in stream],
                                 "x": pa.array([e.attributes["x"] for e in stream], pa.float64())})  # fmt: skip
        table_expected = evaluate_bruteforce(parse_workload(workload), as_events(events_table))
        with python_graphs_refused():
            assert evaluate(workload, stream, strategy) == expected
            assert (
                finalize_table(workload, evaluate_table(workload, events_table, strategy)) == table_expected
            )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_min_and_max_over_whole_and_fractional_numbers_of_one_column_run_on_the_kernel(strategy, tmp_path):
    """A CSV's prices 100, 100.5, 99, 101.25 and 100.0 are ints and floats of one attribute: MIN and MAX order
    them by their numbers, an int before an equal float (``partials._extreme_key``): MIN 99, MAX 101.25; over
    100 and 100.0 alone, MIN the int 100 and MAX the float 100.0, whichever comes first."""
    from hamlet.cli import main

    workload = "q: RETURN COUNT(*), MIN(S.price), MAX(S.price) PATTERN S+ WHERE [company] WITHIN 100"
    prices = [("a", 100), ("a", 100.5), ("a", 99), ("a", 101.25), ("a", 100.0), ("b", 100.0), ("b", 100)]
    stream = [Event("S", t + 1, {"company": c, "price": p}) for t, (c, p) in enumerate(prices)]
    expected = evaluate_bruteforce(parse_workload(workload), stream)
    # (no GROUP-BY: company a's 2^5 - 1 trends and company b's 3 add up in the one group)
    assert [(r.aggregate, r.value, type(r.value)) for r in expected] == [
        ("COUNT(*)", 34, int), ("MIN(S.price)", 99, int), ("MAX(S.price)", 101.25, float),
    ]  # fmt: skip
    stats = EvaluationStats()
    with python_graphs_refused():
        assert evaluate(workload, stream, strategy, stats) == expected
    assert stats.python_partitions == 0
    alone = [e for e in stream if e.attributes["company"] == "b"]
    rows = evaluate(workload, alone, strategy)
    assert [(r.value, type(r.value)) for r in rows] == [(3, int), (100, int), (100.0, float)]
    (tmp_path / "w.hamlet").write_text(workload)
    (tmp_path / "e.csv").write_text("event_type,event_time,company,price\n"
                                    + "".join(f"S,{t + 1},{c},{p}\n" for t, (c, p) in enumerate(prices)))  # fmt: skip
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv"),
                 "--strategy", strategy, "--output", str(tmp_path / "o.jsonl")]) == 0  # fmt: skip
    lines = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(line["aggregate"], line["value"]) for line in lines] == [
        (r.aggregate, r.value) for r in expected
    ]


# Attribute values of kinds the kernel leaves to Python and JSON has no form for: low, high, middle.
OTHER_KINDS = {
    "date": pa.array([1, 3, 2], pa.int32()).cast(pa.date32()),
    "timestamp[us, UTC]": pa.array([1, 3, 2], pa.int64()).cast(pa.timestamp("us", "UTC")),
    "timestamp[ns]": pa.array([1, 3, 2], pa.int64()).cast(pa.timestamp("ns")),
    "time of day": pa.array([1, 3, 2], pa.time64("us")),
    "duration[ns]": pa.array([1, 3, 2], pa.duration("ns")),
    "duration[s]": pa.array([1, 3, 2], pa.duration("s")),
    "bytes": pa.array([b"a", b"c", b"b"]),
}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", OTHER_KINDS)
def test_dates_times_durations_and_bytes_order_edges_and_extremes_on_every_path(strategy, kind):
    """Three Bs at times 1, 2, 3 whose x is low, high, middle. Under ``B.x < NEXT(B).x`` a trend's adjacent
    events rise: b1, b2, b3, (b1 b2), (b1 b3): 5 trends; under ``>``: b1, b2, b3, (b2 b3): 4. MIN and MAX over
    their Bs: low and high. The ordered index of the Python graphs took only numbers, texts and bools and
    dropped these values (4 and 3 trends); MIN and MAX of them stopped the table path (no JSON for a date)."""
    x = OTHER_KINDS[kind]
    low, high, _ = x.to_pylist()
    table = pa.table({"event_type": ["B"] * 3, "event_time": [1, 2, 3], "x": x})
    for op, count in (("<", 5), (">", 4)):
        workload = f"q: RETURN COUNT(*), MIN(B.x), MAX(B.x) PATTERN B+ WHERE B.x {op} NEXT(B).x WITHIN 10"
        oracle = evaluate_bruteforce(parse_workload(workload), as_events(table))
        for rows in (
            oracle,
            results(workload, table, strategy),
            evaluate(workload, as_events(table), strategy),
        ):
            assert [r.value for r in rows] == [count, low, high], op
            assert [type(r.value) for r in rows[1:]] == [type(low), type(high)]


# Columns the kernel compares as Python compares their values (``columnar._temporal``), three values each
# from low to high as int64 in the column's unit: equal neighbours where a unit's cut makes them so.
COMPARED_KINDS = {
    "bool": pa.array([False, False, True]),
    "date32": pa.array([-3, 0, 19_000], pa.int32()).cast(pa.date32()),
    "timestamp[s]": pa.array([-5, 0, 1_700_000_000]).cast(pa.timestamp("s")),
    "timestamp[ms, Europe/Paris]": pa.array([-5, 0, 1_700_000_000_000]).cast(
        pa.timestamp("ms", "Europe/Paris")
    ),
    "timestamp[us, UTC]": pa.array([-5, 0, 7]).cast(pa.timestamp("us", "UTC")),
    "timestamp[us]": pa.array([-5, 0, 7]).cast(pa.timestamp("us")),
    "timestamp[ns]": pa.array([-5, 0, 7]).cast(pa.timestamp("ns")),
    "timestamp[ns, UTC]": pa.array([-5, 0, 7]).cast(pa.timestamp("ns", "UTC")),
    "time32[s]": pa.array([0, 1, 86_399], pa.int32()).cast(pa.time32("s")),
    "time64[ns]": pa.array([1_001, 1_999, 2_000]).cast(pa.time64("ns")),  # (Python's times: 1, 1 and 2 µs)
    "duration[s]": pa.array([-2, 0, 5]).cast(pa.duration("s")),
    "duration[us]": pa.array([-2, 0, 5]).cast(pa.duration("us")),
    "duration[ns]": pa.array([-2, 0, 5]).cast(pa.duration("ns")),
}


@pytest.mark.parametrize("seed", range(4))
def test_bools_dates_times_and_durations_compare_on_the_kernel_as_python_compares_them(seed):
    """Random streams over two columns of these kinds (nulls among them) under local and edge predicates of
    every operator, between values of one kind and of two: every strategy on the table equals the oracle over
    the values Python reads from it, and runs on the kernel (such a predicate sent the partition to Python).
    A naive and a zoned timestamp are two kinds (Python raised ``TypeError`` ordering them), so only unequal."""
    rng = np.random.default_rng(seed)
    kinds = list(COMPARED_KINDS)
    for _ in range(6):
        x, y = (kinds[i] for i in rng.choice(len(kinds), 2))
        n = int(rng.integers(6, 10))
        picks = {a: rng.integers(0, 4, n) for a in ("x", "y")}  # (3: a null)
        columns = {
            a: pa.concat_arrays([COMPARED_KINDS[k], pa.nulls(1, COMPARED_KINDS[k].type)]).take(pa.array(picks[a]))
            for a, k in (("x", x), ("y", y))
        }  # fmt: skip
        events_table = pa.table({"event_type": [str(t) for t in rng.choice(["A", "B"], n, p=[0.3, 0.7])],
                                 "event_time": np.arange(1, n + 1), **columns})  # fmt: skip
        ops = [str(op) for op in rng.choice(["<", "<=", ">", ">=", "=", "!="], 4)]
        workload = "\n".join([
            f"e: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x {ops[0]} NEXT(B).x WITHIN 20",
            f"f: RETURN COUNT(*), COUNT(B) PATTERN B+ WHERE B.x {ops[1]} NEXT(B).y WITHIN 20",
            f"g: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.y {ops[2]} NEXT(B).x WITHIN 20",
            f"l: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x {ops[3]} B.y AND A.x != 'abc' WITHIN 20",
        ])  # fmt: skip
        expected = evaluate_bruteforce(parse_workload(workload), as_events(events_table))
        for strategy in STRATEGIES:
            stats = EvaluationStats()
            with python_graphs_refused():
                assert results(workload, events_table, strategy, stats) == expected, (x, y, workload)
            assert stats.python_partitions == 0


def test_a_naive_and_a_zoned_timestamp_are_two_kinds_on_every_path():
    """Python raised ``TypeError`` ordering them ("can't compare offset-naive and offset-aware datetimes"), out
    of ``evaluate_table`` and ``evaluate``: now they are two kinds, only unequal. a1 b2 b3 a4 b5, each event
    at its own hour: SEQ(A, B+) has 8 trends (a1 with the 7 non-empty subsets of b2 b3 b5, a4 with b5), each
    A's hour before its next B's. Between the kinds ``!=`` holds for all 8 and ``<`` for none; within the naive
    kind ``<`` holds for all 8 and ``=`` for none."""
    hours = [datetime(2026, 1, 5, h) for h in (1, 2, 3, 4, 5)]
    events_table = pa.table({"event_type": ["A", "B", "B", "A", "B"], "event_time": [1, 2, 3, 4, 5],
                             "naive": pa.array(hours, pa.timestamp("us")),
                             "zoned": pa.array([h.replace(tzinfo=UTC) for h in hours], pa.timestamp("us", "UTC"))})  # fmt: skip
    for op, column, count in (
        ("!=", "zoned", 8),
        ("<", "zoned", None),
        ("=", "naive", None),
        ("<", "naive", 8),
    ):
        workload = f"q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.naive {op} NEXT(B).{column} WITHIN 10"
        expected = [] if count is None else [count]
        for strategy in STRATEGIES:
            assert [r.value for r in results(workload, events_table, strategy)] == expected, (op, column)
            assert [r.value for r in evaluate(workload, as_events(events_table), strategy)] == expected


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_half_precision_floats_read_as_the_doubles_they_hold(strategy):
    """numpy's float16 as times and values (Arrow has no compute kernels for them: the first call stopped
    with Arrow's own error). Group h = 1.5: a1 with each non-empty subset of b2.5 and b3, 3 trends, their Bs'
    h summing to 1.5 · (1 + 1 + 2) = 6; group h = 0.25 holds one B and no trend."""
    halves = np.array([1, 2.5, 3, 4], np.float16)
    table = pa.table({"event_type": ["A", "B", "B", "B"], "event_time": pa.array(halves),
                      "h": pa.array(np.array([1.5, 1.5, 1.5, 0.25], np.float16))})  # fmt: skip
    workload = "q: RETURN h, COUNT(*), SUM(B.h) PATTERN SEQ(A, B+) WHERE [h] GROUP-BY h WITHIN 10"
    assert [(r.group, r.value) for r in results(workload, table, strategy)] == [
        ({"h": 1.5}, 3),
        ({"h": 1.5}, 6.0),
    ]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_group_of_negative_zero_has_the_key_of_zero_in_every_call(strategy):
    """Two calls, as the Spark job makes them, one whose group z holds only -0.0 and one with 0.0: one key,
    so the job merges them into one row (the first wrote '{"z":-0.0}', a second row for the same group)."""
    workload = "q: RETURN z, COUNT(*) PATTERN SEQ(A, B+) GROUP-BY z WITHIN 10"
    keys = []
    for zero in (-0.0, 0.0):
        table = pa.table({"event_type": ["A", "B"], "event_time": [1, 2], "z": [zero, zero]})
        keys.append(evaluate_table(workload, table, strategy).column("group_key").to_pylist())
    assert keys == [['{"z":0.0}'], ['{"z":0.0}']]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_values_an_index_cannot_rank_are_compared_one_by_one(strategy):
    """Lists (unhashable: no index ranks them) in an edge predicate: the graphs compare them one by one, as the
    oracle does. [1], [2], [1, 5] at times 1, 2, 3 under ``<=``: b1, b2, b3,
    (b1 b2), (b1 b3): 5 trends ([2] <= [1, 5] is false)."""
    workload = "q: RETURN COUNT(*) PATTERN B+ WHERE B.d <= NEXT(B).d WITHIN 10"
    stream_events = [Event("B", t, {"d": d}) for t, d in ((1, [1]), (2, [2]), (3, [1, 5]))]
    assert [r.value for r in evaluate(workload, stream_events, strategy)] == [5]
    assert [r.value for r in evaluate_bruteforce(parse_workload(workload), stream_events)] == [5]


def test_a_bad_rows_error_names_its_event_id_where_the_table_has_one():
    """The Spark job's engine call reads a batch, no file: "row 6" of it pointed at nothing in the table (a
    CLI audit); its event_id does (control characters escaped)."""
    ids = pa.array(["e1", "e\x1b2", None])
    for column, value, message in (
        ("event_type", ["A", " ", "A"], "the events table, row 2 (event_id e\\x1b2): event_type is empty"),
        ("event_time", [1, 2, None], "the events table, row 3: event_time is empty"),
        ("event_time", [1, 2, 10**12], "the events table, row 3: event_time 1000000000000 lies outside"),
    ):
        events_table = pa.table({"event_type": ["A"] * 3, "event_time": [1, 2, 3], "event_id": ids})
        events_table = events_table.set_column(
            events_table.column_names.index(column), column, pa.array(value)
        )
        with pytest.raises(EventError, match=re.escape(message)):
            evaluate_table("q: RETURN COUNT(*) PATTERN A WITHIN 10", events_table)


def test_zoned_timestamps_compare_and_partition_as_instants_on_every_path():
    """Arrow gives every value of a zoned column one tzinfo, and Python compares two datetimes that share one by
    their wall clocks: 02:30 CEST and 02:30 CET an hour later (the night the clocks go back) were equal to the
    Python graphs and the oracle, and an hour apart to the kernel (a fuzz of this session). All compare them as
    instants now (``predicates.instant``): ``=`` holds for neither pair, ``<`` for a1 b2, and ``[a]`` parts them."""
    paris = pa.array([1_698_539_400, 1_698_543_000]).cast(pa.timestamp("s", "Europe/Paris"))
    events_table = pa.table({"event_type": ["A", "B"], "event_time": [1, 2], "a": paris})
    events = as_events(events_table)
    assert events[0].attributes["a"].replace(tzinfo=None) == events[1].attributes["a"].replace(tzinfo=None)
    for condition, count in (("A.a = NEXT(B).a", None), ("A.a < NEXT(B).a", 1), ("[a]", None)):
        workload = f"q: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE {condition} WITHIN 10"
        expected = [] if count is None else [count]
        assert [r.value for r in evaluate_bruteforce(parse_workload(workload), events)] == expected
        for strategy in STRATEGIES:
            assert [r.value for r in results(workload, events_table, strategy)] == expected, condition
            assert [r.value for r in evaluate(workload, events, strategy)] == expected, condition
    # MIN and MAX by instant too: the CEST 02:30 (b2 here) is the earlier, whichever comes first
    workload = "q: RETURN MIN(B.a), MAX(B.a) PATTERN B+ WITHIN 10"
    backwards = events_table.set_column(0, "event_type", pa.array(["B", "B"])).set_column(
        2, "a", paris.take([1, 0])
    )
    oracle = evaluate_bruteforce(parse_workload(workload), as_events(backwards))
    assert [str(r.value) for r in oracle] == ["2023-10-29 02:30:00+02:00", "2023-10-29 02:30:00+01:00"]
    for strategy in STRATEGIES:
        assert [str(r.value) for r in results(workload, backwards, strategy)] == [
            str(r.value) for r in oracle
        ]


def test_times_of_day_one_microsecond_apart_in_nanoseconds_are_one_partition():
    """Python's time of day holds microseconds: 1,001 and 1,999 ns are both 00:00:00.000001, one partition
    and one group, where the table path keyed them by their nanoseconds (two partitions, no trend). And a value
    Python cannot hold (a zoned timestamp of the year 1) is an error that says so, not an OverflowError."""
    events_table = pa.table({"event_type": ["A", "B"], "event_time": [1, 2],
                             "a": pa.array([1_001, 1_999]).cast(pa.time64("ns"))})  # fmt: skip
    for workload in ("q: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [a] WITHIN 10",
                     "q: RETURN a, COUNT(*) PATTERN SEQ(A, B) GROUP-BY a WITHIN 10"):  # fmt: skip
        for strategy in STRATEGIES:
            assert [r.value for r in results(workload, events_table, strategy)] == [1]
    year_one = pa.array([-62_135_596_800]).cast(pa.timestamp("s", "America/New_York"))
    with pytest.raises(EventError, match="an attribute holds a value Python's dates and times cannot hold"):
        evaluate_table("q: RETURN COUNT(*) PATTERN A WHERE A.a = A.a WITHIN 10",
                       pa.table({"event_type": ["A"], "event_time": [1], "a": year_one}))  # fmt: skip
