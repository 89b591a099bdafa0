"""Vertical partitioning by time (issue 19): a stream cut into time segments, each evaluated on its own with
what flows in from earlier segments as variables, then composed in time order, equals the unsplit run and
the brute-force oracle exactly, for every strategy, every split, and every construct the composition claims;
the others are refused with the reason (``hamlet.segment_obstacle``)."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from itertools import pairwise

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import assume, event, given, note
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from workloads import (
    TYPES,
    bursty_events,
    events,
    patterns,
    queries,
    table_of,
    types_of,
)

from hamlet import (
    STRATEGIES,
    Event,
    HamletError,
    compose_segments,
    evaluate_segment,
    evaluate_table,
    finalize_table,
    parse_workload,
    segment_obstacle,
)
from hamlet.api import segment_pane
from hamlet.errors import EventError
from hamlet.runtime.columnar import clashing_rows, events_of, kernel_micros, sorted_events
from hamlet.runtime.native import floor_micros
from hamlet.runtime.vertical import floating_columns

MICROS = 1_000_000


def segmented(workload, table: pa.Table, cuts: list[Fraction], strategy: str):
    """``table`` cut at ``cuts`` (seconds, on the pane), each segment evaluated on its own, the records
    composed: the results as ``finalize_table`` gives them."""
    times = table.column("event_time")
    micros = (
        pa.array(floor_micros(times.to_numpy()))
        if pa.types.is_floating(times.type)
        else times.cast(pa.int64())
    )
    parts, records = [], []
    for t0, t1 in pairwise(int(cut * MICROS) for cut in cuts):
        rows = table.filter(pc.and_(pc.greater_equal(micros, t0), pc.less(micros, t1)))
        partials, found = evaluate_segment(workload, rows, (t0, t1), strategy)
        parts.append(partials)
        records.append(found)
    composed = compose_segments(workload, pa.concat_tables(records), floating_columns(table.schema), strategy)
    return finalize_table(workload, pa.concat_tables([*parts, composed]))


def segment_cuts(data, times: list, pane: Fraction, min_inner: int = 1) -> list[Fraction]:
    """Where to cut a stream of event ``times`` into segments: multiples of ``pane`` from the one before the
    first event to the one after the last, at least ``min_inner`` drawn between them where there is room."""
    first, last = math.floor(times[0] / pane), math.floor(times[-1] / pane) + 1
    inner = data.draw(st.lists(st.integers(first + 1, last - 1), min_size=min_inner, unique=True) if last - first > 1
                      else st.just([]))  # fmt: skip
    cuts = [k * pane for k in sorted({first, last, *inner})]
    note(f"cuts {cuts}")
    return cuts


def pane_multiple(workload) -> Fraction:
    """A length every segment bound may be a multiple of: on every set's pane (milliseconds too)."""
    return segment_pane(workload)


@st.composite
def segment_queries(draw, name: str, core: str | None = None, pane: int = 1) -> str:
    """Queries whose segments compose: every aggregate, local predicates only, NOTs of one type before the
    start or after the end; around a shared Kleene ``core`` when given."""
    pool = [t for t in draw(st.permutations(TYPES)) if core is None or t not in core]
    items = [draw(patterns(pool, nots=False))] if core is None else [core]
    if core is not None and draw(st.booleans()):
        items.insert(0, pool.pop())
    if core is not None and draw(st.booleans()):
        items.append(pool.pop())
    if pool and draw(st.booleans()):
        items.insert(0, f"NOT {pool.pop()}")
    if pool and draw(st.booleans()):
        items.append(f"NOT {pool.pop()}")
    pattern = items[0] if len(items) == 1 else f"SEQ({', '.join(items)})"
    within = pane * draw(st.integers(2, 6))
    window = (within, pane * draw(st.integers(1, within // pane + 1)))
    return draw(queries(name, pattern=pattern, window=window, predicates=draw(local_predicates(pattern))))


@st.composite
def local_predicates(draw, pattern: str) -> list[str]:
    types = sorted(set(re.findall(r"\b[A-Z]\b", pattern)))
    return [draw(st.sampled_from([f"{t}.x < 3", f"{t}.y > 0", f"{t}.s = u"])) for t in
            draw(st.lists(st.sampled_from(types), max_size=2))]  # fmt: skip


@st.composite
def segment_workloads(draw) -> str:
    """1–4 queries, most around a shared Kleene type (its bursts are what hamlet shares), with windows on one
    pane of 1–3 s (so that a dozen seconds of events cut into several segments)."""
    core = draw(st.sampled_from([None, "B+", "B+", "(SEQ(B, C))+"]))
    count = draw(st.integers(1, 4))
    pane = draw(st.integers(1, 3))
    return "\n".join(draw(segment_queries(f"q{i}", core, pane)) for i in range(count))


def check_split(text: str, stream, data, float_times: bool = False) -> None:
    """With ``float_times``, the table's times are the stream's as doubles (seconds), not timestamps."""
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    reason = segment_obstacle(workload)
    assume(reason is None)
    table = table_of(stream)
    if float_times:
        table = table.set_column(1, "event_time", pa.array([float(e.time) for e in stream]))
        ordered = sorted_events(table)
        assume(
            not len(clashing_rows(ordered, kernel_micros(ordered), ()))
        )  # (no two times in one microsecond)
    expected = evaluate_bruteforce(workload, events_of(sorted_events(table), ["x", "y", "s", "g", "k"]))
    pane = pane_multiple(workload)
    cuts = segment_cuts(data, [e.time for e in stream] or [0], pane)
    event(f"{min(len(cuts) - 1, 3)}+ segments, {'some' if expected else 'no'} rows")
    for strategy in STRATEGIES:
        assert segmented(workload, table, cuts, strategy) == expected, strategy


@given(segment_workloads(), st.data())
def test_every_split_composes_to_the_unsplit_result(text, data):
    types = types_of(text, every=2)
    stream = data.draw(
        st.one_of(events(types, max_events=14, min_events=4), bursty_events(types, max_events=16))
    )
    check_split(text, stream, data)


# A whole second plus a fraction no double holds exactly (or one it does).
FRACTIONS = [0.0, 0.5, 0.1, 1 / 3, 0.7, 0.999999, 1e-7]


@given(segment_workloads(), st.data())
def test_float_times_between_microseconds_split_and_compose_to_the_oracle(text, data):
    """The kernel reads such a time as the microsecond below it, in a segment as in the whole stream."""
    stream = [
        Event(e.type, e.time + data.draw(st.sampled_from(FRACTIONS)), e.attributes)
        for e in data.draw(events(types_of(text, every=2), max_events=14, min_events=4))
    ]
    check_split(text, sorted(stream, key=lambda e: e.time), data, float_times=True)


def timed_table(rows: list[tuple]) -> pa.Table:
    """(type, time in seconds, v) rows as the job's table: times as UTC timestamps, v a double column."""
    return pa.table({
        "event_type": [r[0] for r in rows],
        "event_time": pa.array([r[1] * MICROS for r in rows], pa.int64()).cast(pa.timestamp("us", "UTC")),
        "v": pa.array([r[2] for r in rows], pa.float64()),
    })  # fmt: skip


def test_a_count_beyond_every_fixed_width_flows_through_four_segments_exactly():
    """One A, then 200 B's over four segments: 2^200 − 1 trends, COUNT(B) = 200·2^199, a float SUM exact."""
    text = "q: RETURN COUNT(*), COUNT(B), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 1000 sec SLIDE 50 sec"
    table = timed_table([("A", 0, 0.0)] + [("B", 1 + i, 0.1) for i in range(200)])
    for strategy in STRATEGIES:
        rows_out = segmented(text, table, [0, 50, 100, 150, 1000], strategy)
        assert rows_out == finalize_table(text, evaluate_table(text, table, strategy))
        values = {r.aggregate: r.value for r in rows_out if r.window_start == 0}
        assert values["COUNT(*)"] == 2**200 - 1
        assert values["COUNT(B)"] == 200 * 2**199


def test_a_window_spanning_segments_keeps_the_trends_that_a_trailing_not_leaves():
    """SEQ(R, T+, NOT P): a P in the second segment voids what ended before it, not what passes through."""
    text = "q: RETURN COUNT(*) PATTERN SEQ(R, T+, NOT P) WITHIN 20 sec SLIDE 10 sec"
    rows = [("R", 1), ("T", 2), ("T", 3), ("P", 11), ("T", 12)]
    table = pa.table({
        "event_type": [r[0] for r in rows],
        "event_time": pa.array([r[1] * MICROS for r in rows], pa.int64()).cast(pa.timestamp("us", "UTC")),
    })  # fmt: skip
    # [-10, 10): R1 T2, R1 T3, R1 T2 T3. [0, 20): only the trends ending at T12, after the P: R1 T12,
    # R1 T2 T12, R1 T3 T12, R1 T2 T3 T12. [10, 30): no R.
    for strategy in STRATEGIES:
        rows_out = segmented(text, table, [0, 10, 20], strategy)
        assert [(r.window_start, r.value) for r in rows_out] == [(-10, 3), (0, 4)]


def test_negative_zeros_under_sums_and_predicates_cross_segments():
    """-0.0 is 0.0 to SUM, AVG and every comparison; the kernel left partitions holding one to Python, which a
    segment cannot do (every such hot partition of the job failed). A0 B1(-0.0) B2(-0.5) B6(-0.0):
    [-5, 5) holds 3 trends, each B in 2 (SUM -1.0 over 4 B's); [0, 10) 7 trends, each B in 4 (SUM -2.0 over 12).
    Under MAX the sign of a zero shows: -0.0 is the greatest of both windows, and the kernel's order key keeps
    it (MAX would prefer 0.0 to it, MIN -0.0 to 0.0: ``partials._extreme_key``)."""
    text = (
        "q: RETURN COUNT(*), SUM(B.v), AVG(B.v) PATTERN SEQ(A, B+) WHERE B.v <= 0 WITHIN 10 sec SLIDE 5 sec"
    )
    table = timed_table([("A", 0, 1.0), ("B", 1, -0.0), ("B", 2, -0.5), ("B", 6, -0.0)])
    for strategy in STRATEGIES:
        assert [(r.window_start, r.value) for r in segmented(text, table, [0, 5, 10], strategy)] == [
            (-5, 3), (-5, -1.0), (-5, -0.25), (0, 7), (0, -2.0), (0, -2.0 / 12)]  # fmt: skip
    greatest = text.replace("AVG(B.v)", "MAX(B.v)")
    for strategy in STRATEGIES:
        found = segmented(greatest, table, [0, 5, 10], strategy)
        assert found == finalize_table(greatest, evaluate_table(greatest, table, strategy))
        maxima = [r.value for r in found if r.aggregate == "MAX(B.v)"]
        assert [(m, math.copysign(1.0, m)) for m in maxima] == [(0.0, -1.0), (0.0, -1.0)], strategy


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("q: RETURN MAX(G.v) PATTERN SEQ(A, B, C, D, E, F, G+) WITHIN 10 sec", "more than 4 source states"),
        ("q: RETURN COUNT(*) PATTERN SEQ(R, T+) WHERE T.v < NEXT(T).v WITHIN 10 sec", "q"),
        ("q: RETURN COUNT(*) PATTERN SEQ(R, T+) SEMANTICS NEXT WITHIN 10 sec", "semantics"),
        ("q: RETURN COUNT(*) PATTERN SEQ(R, NOT P, T+) WITHIN 10 sec", "q"),
    ],
)
def test_what_does_not_compose_is_refused_with_the_reason(text, reason):
    assert reason in segment_obstacle(text)
    table = pa.table({"event_type": ["R"], "event_time": pa.array([0], pa.int64()).cast(pa.timestamp("us", "UTC")),
                      "v": [1]})  # fmt: skip
    with pytest.raises(HamletError, match="cannot be cut into time segments"):
        evaluate_segment(text, table, (0, 10 * MICROS))


def test_segment_bounds_and_rows_are_checked():
    text = "q: RETURN COUNT(*) PATTERN SEQ(R, T+) WITHIN 10 sec SLIDE 5 sec"
    table = pa.table({"event_type": ["R"], "event_time": pa.array([7 * MICROS], pa.int64()).cast(
        pa.timestamp("us", "UTC"))})  # fmt: skip
    with pytest.raises(HamletError, match="not on a pane boundary"):
        evaluate_segment(text, table, (0, 7 * MICROS))
    with pytest.raises(EventError, match="outside the segment"):
        evaluate_segment(text, table, (0, 5 * MICROS))
    with pytest.raises(HamletError, match="its start must lie before its end"):
        evaluate_segment(text, table, (5 * MICROS, 5 * MICROS))


@pytest.mark.parametrize("source, where", [(None, "the events table"), ("seg.parquet", "seg.parquet")])
def test_a_segment_names_a_bad_row_or_column_as_evaluate_table_does(source, where):
    text = "q: RETURN g, COUNT(*) PATTERN SEQ(R, T+) GROUP-BY g WITHIN 10 sec SLIDE 5 sec"
    times = pa.array([1 * MICROS, 2 * MICROS, 3 * MICROS], pa.int64()).cast(pa.timestamp("us", "UTC"))
    blank = pa.table({"event_type": ["R", " ", "T"], "event_time": times, "g": [1, 1, 1]})
    nul = pa.table({"event_type": ["R", "T", "T\x00"], "event_time": times, "g": [1, 1, 1]})
    lists = pa.table({"event_type": ["R", "T", "T"], "event_time": times, "g": [[1], [1], [1]]})
    listed = "g is a list<item: int64> column: GROUP-BY and equivalence attributes take single values"
    for table, message in (
        (blank, f"{where}, row 2: event_type is empty"),
        (nul, f"{where}, row 3: event_type 'T\\x00' holds a NUL byte"),
        (lists, f"{where}: {listed} (numbers, text, times)"),
    ):
        with pytest.raises(EventError) as whole:
            evaluate_table(text, table, source=source)
        with pytest.raises(EventError) as segment:
            evaluate_segment(text, table, (0, 10 * MICROS), source=source)
        assert str(whole.value) == str(segment.value) == message


@pytest.mark.parametrize("source, where", [(None, ""), ("seg.parquet", "seg.parquet, ")])
def test_a_segment_the_kernel_cannot_compute_names_its_file_and_event(source, where):
    """A NaN under MIN: only the Python engine computes it, and a segment runs on the kernel only."""
    text = "q: RETURN COUNT(*), MIN(T.v) PATTERN SEQ(R, T+) WITHIN 10 sec SLIDE 5 sec"
    times = pa.array([1 * MICROS, 2 * MICROS, 3 * MICROS], pa.int64()).cast(pa.timestamp("us", "UTC"))
    table = pa.table({"event_type": ["R", "T", "T"], "event_time": times, "v": [1.0, float("nan"), 2.0]})
    with pytest.raises(EventError) as caught:
        evaluate_segment(text, table, (0, 10 * MICROS), source=source)
    assert str(caught.value) == (
        f"{where}the stream partition of the event at 1970-01-01 00:00:01+00:00: a value only the Python engine "
        "computes exactly (an integer below -2^63 or from 2^64 on, NaN or an infinity): "
        "evaluate this stream without time segments"
    )


def test_explain_says_which_sets_compose_and_why_the_others_run_whole(tmp_path, capsys):
    from hamlet.cli import main

    path = tmp_path / "w.hamlet"
    path.write_text("a: RETURN COUNT(*) PATTERN SEQ(R, T+, NOT P) WITHIN 10 sec\n"
                    "b: RETURN COUNT(*), MAX(X.v) PATTERN SEQ(S, X+) WHERE X.v < NEXT(X).v WITHIN 10 sec\n")  # fmt: skip
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.split("  time segments")[1].splitlines()[2:] == [
        "    {a}: composes",
        "    {b}: evaluated sequentially: edge predicates or a NOT between two types",
    ]


def test_records_that_are_not_this_workloads_are_errors_that_say_so():
    """(formerly KeyError, IndexError and JSONDecodeError tracebacks)"""
    text = "q: RETURN COUNT(*) PATTERN SEQ(R, T+) WITHIN 10 sec SLIDE 5 sec"
    table = pa.table({"event_type": ["R", "T"], "event_time": pa.array([1 * MICROS, 6 * MICROS], pa.int64()).cast(
        pa.timestamp("us", "UTC"))})  # fmt: skip
    _, records = evaluate_segment(text, table, (0, 10 * MICROS))
    assert finalize_table(text, compose_segments(text, records, [])) == finalize_table(
        text, evaluate_table(text, table)
    )
    wrong = [
        (pa.table({"a": [1]}), "records must be a table of evaluate_segment's records, with the columns query_set"),
        (records.set_column(0, "query_set", pa.array([7], pa.int64())), "a record names query set 7; this workload has 1"),
        (records.set_column(3, "record", pa.array(["{"])), "a record of partition [] is not one evaluate_segment wrote"),
    ]  # fmt: skip
    for bad, message in wrong:
        with pytest.raises(HamletError, match=re.escape(message)):
            compose_segments(text, bad, [])
    with pytest.raises(
        HamletError, match="floating must name the events table's floating-point columns, not None"
    ):
        compose_segments(text, records, None)  # type: ignore[arg-type]


def test_an_aggregate_over_text_is_an_obstacle_given_the_schema():
    """A segment's records hold numbers: MIN, MAX or SUM over text, bools or dates only Python aggregates.
    ``segment_obstacle`` says so given the table's schema (the Spark job then runs the partition whole), and
    ``evaluate_segment`` refuses before running (each segment stopped with a message about integers beyond
    64 bits, NaN or infinities, none of which the stream held)."""
    text = "q: RETURN COUNT(*), MAX(B.s) PATTERN B+ WITHIN 10"
    table = pa.table({"event_type": ["B", "B"], "event_time": pa.array([1 * MICROS, 2 * MICROS]).cast(
        pa.timestamp("us", "UTC")), "s": ["a", "b"]})  # fmt: skip
    assert segment_obstacle(text) is None
    assert (
        segment_obstacle(text, schema=table.schema)
        == "q: MAX(B.s) of q reads s, a string column, which only Python aggregates"
    )
    numbers = table.set_column(2, "s", pa.array([1.5, None]))
    assert segment_obstacle(text, schema=numbers.schema) is None
    with pytest.raises(
        HamletError, match=re.escape("the stream cannot be cut into time segments: q: MAX(B.s) of q")
    ):
        evaluate_segment(text, table, (0, 10 * MICROS))


def test_segments_that_type_a_summed_column_differently_are_an_error_not_a_sum():
    """x is int64 in the first segment's table and double in the second's: each segment's records hold its
    sums over x as its type has them (ints, or floats scaled), and composed under either ``floating`` one
    half was read as the other (SUM 14.0 and AVG 1e-323, or inf, where 26.0 is right)."""
    text = "q: RETURN COUNT(*), SUM(B.x), AVG(B.x) PATTERN SEQ(A, B+) WITHIN 20 sec SLIDE 10 sec"

    def segment(rows, kind, bounds):
        times = pa.array([t * MICROS for _, t, _ in rows], pa.int64()).cast(pa.timestamp("us", "UTC"))
        table = pa.table({"event_type": [r[0] for r in rows], "event_time": times,
                          "x": pa.array([r[2] for r in rows], kind)})  # fmt: skip
        return evaluate_segment(text, table, (bounds[0] * MICROS, bounds[1] * MICROS))[1]

    records = pa.concat_tables([segment([("A", 1, 1), ("B", 2, 3)], pa.int64(), (0, 10)),
                                segment([("B", 12, 1.5), ("B", 13, 2)], pa.float64(), (10, 20))])  # fmt: skip
    for floating, first in ((["x"], "no column"), ([], "x")):
        start = 0 if floating else 10_000_000
        message = (f"the segment that starts at {start} µs kept the sums over {first} as floats (its table's "
                   f"floating-point columns), floating those over {'x' if floating else 'no column'}")  # fmt: skip
        with pytest.raises(HamletError, match=re.escape(message)):
            compose_segments(text, records, floating)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_decimal_columns_read_as_doubles_compose_as_doubles(strategy):
    """A decimal column the engine reads as doubles (scale > 0) is a floating column to ``floating_columns``:
    ``evaluate_segment`` scaled its sums, and ``compose_segments`` given the table's own schema took them for
    ints, so SUM(F.x) of one 1 composed to inf. A whole one of any width is read as exact ints (int64, or
    uint64 beyond it), in segments too; one beyond 64 bits only Python computes, so no segment does."""
    from decimal import Decimal

    workload = parse_workload("q: RETURN COUNT(*), SUM(F.x), AVG(F.x), MAX(F.x) PATTERN F+ WITHIN 4 SLIDE 2")
    for kind, values in [
        (pa.decimal128(38, 0), [Decimal(1), Decimal(2**63 + 5)]),
        (pa.decimal128(38, 3), [Decimal("1.5"), Decimal("-2.125")]),
        (pa.decimal128(18, 0), [Decimal(1), Decimal(10**17)]),
    ]:
        table = pa.table({
            "event_type": ["F", "F"],
            "event_time": pa.array([1 * MICROS, 3 * MICROS], pa.int64()).cast(pa.timestamp("us", "UTC")),
            "x": pa.array(values, kind),
        })  # fmt: skip
        expected = finalize_table(workload, evaluate_table(workload, table, strategy))
        assert segmented(workload, table, [Fraction(0), Fraction(2), Fraction(4)], strategy) == expected, kind
        assert {r.value for r in expected if r.aggregate == "SUM(F.x)" and r.window_start == 0} == {
            2 * sum(float(v) if kind.scale > 0 else int(v) for v in values)  # (each F in 2 of 3 trends)
        }, kind
    wide = table.set_column(2, "x", pa.array([Decimal(1), Decimal(10**30)], pa.decimal128(38, 0)))
    with pytest.raises(EventError, match="evaluate this stream without time segments"):
        segmented(workload, wide, [Fraction(0), Fraction(2), Fraction(4)], strategy)
