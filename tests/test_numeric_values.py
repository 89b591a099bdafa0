"""Property: numeric edge values give every strategy exactly the oracle's rows, on both paths.

Attribute values are NaN, ±inf, ±0.0, the smallest subnormal and the largest double, ints at and around
±2^53, 2^63, 2^64, 2^127, 2^128 and far beyond (400 digits), bools, texts and nulls, ints and floats mixed
in one attribute. Several queries per workload read them in local predicates (every comparison against
such literals, arithmetic with them), in edge predicates ``X.a op NEXT(Y).b`` (one comparison: the ordered
index; general ones: the scan) and in SUM, MIN, MAX, AVG and COUNT. Every strategy runs through
``hamlet.evaluate`` (events, on the compiled kernel and on Python's graphs) and through ``evaluate_table``
and ``finalize_table`` (Arrow: one type per column, so the table test types each partition's column as
int64, uint64, float64, decimal, bool or string and evaluates one table per partition, their partial
states finalized together), and such a table cut into time segments (``evaluate_segment``,
``compose_segments``). Where the oracle refuses an aggregate (README: a NaN or an infinity under SUM
or AVG, a text under SUM, a NaN or two kinds under MIN or MAX), every path must raise ``EvaluationError``.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from functools import partial
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import assume, event, given, note
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from test_vertical import segment_cuts, segment_workloads, segmented
from workloads import (
    conditions,
    family_pattern,
    parses,
    probe,
    with_semantics,
)

from hamlet import STRATEGIES, Event, evaluate, evaluate_table, finalize_table, parse_workload
from hamlet.analysis.predicates import kind
from hamlet.api import evaluate_with, segment_obstacle, segment_pane
from hamlet.errors import EvaluationError, HamletError
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.columnar import checked, events_of, sorted_events
from hamlet.runtime.greta import run_greta
from hamlet.runtime.shared import run_shared

NAN, INF = math.nan, math.inf
MAX_DOUBLE = 1.7976931348623157e308

# Ints at and around the bounds where the kernel's representations change (a double's 53 bits, i64, u64,
# i128/u128) and far beyond any of them.
INTS = [
    0, 1, -1, 3, 7, 2**53 - 1, 2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 2**63 - 1, 2**63, 2**63 + 1,
    -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 2**64 + 1, 2**127 - 1, 2**127, -(2**127), -(2**127) - 1,
    2**128, -(2**128), 10**400, -(10**400),
]  # fmt: skip
# Floats: the non-finite ones, both zeros, the extremes of the doubles, and doubles equal to the ints above.
FLOATS = [
    NAN, INF, -INF, -0.0, 0.0, 5e-324, -5e-324, MAX_DOUBLE, -MAX_DOUBLE, 1.5, -2.5, 1.0, 3.0, 2.0**53,
    2.0**53 + 2, -(2.0**53), 2.0**63, -(2.0**63), 2.0**64, 2.0**127, 2.0**128, 1e300,
]  # fmt: skip
OTHERS = [True, False, "u", "1", None]

# Literals of predicates, as written: the same bounds, and constant expressions that are an infinity.
LITERALS = [
    "0", "-0.0", "1", "3", "1.5", "5e-324", "1.7976931348623157e308", "1e308 * 10", "-1e308 * 10",
    str(2**53), str(2**53 + 1), str(-(2**53) - 1), str(2**63 - 1), str(2**63), str(-(2**63)), str(-(2**63) - 1),
    str(2**64 - 1), str(2**64), str(2**127), str(-(2**127)), str(2**128), str(10**400), "9007199254740992.0",
    "u", "'1'",
]  # fmt: skip
OPS = ["=", "!=", "<", "<=", ">", ">="]


# What the compiled kernel reads itself (``values.rs``: ints in [-2^63, 2^64), finite floats but -0.0): a
# partition holding anything else runs on Python's graphs, so some streams hold only these.
KERNEL_INTS = [v for v in INTS if -(2**63) <= v < 2**64]
KERNEL_FLOATS = [v for v in FLOATS if math.isfinite(v) and not (v == 0 and math.copysign(1.0, v) < 0)]


def value(kinds: str = "ifo") -> st.SearchStrategy:
    """An attribute value: mostly ints and floats of ``INTS`` and ``FLOATS``, sometimes an ``OTHERS``;
    ``kinds`` "k": only what the kernel reads (``KERNEL_INTS``, ``KERNEL_FLOATS``, null)."""
    if kinds == "k":
        return st.one_of(st.sampled_from(KERNEL_INTS), st.sampled_from(KERNEL_FLOATS), st.none())
    choices = []
    if "i" in kinds:
        choices += [st.sampled_from(INTS)] * 3
    if "f" in kinds:
        choices += [st.sampled_from(FLOATS)] * 3
    if "o" in kinds:
        choices.append(st.sampled_from(OTHERS))
    return st.one_of(choices)


@st.composite
def numeric_attributes(draw, kinds: str = "ifo") -> dict:
    """x and y from ``value`` (either sometimes missing); g, k partition values."""
    out: dict = {}
    for name in ("x", "y"):
        if draw(st.integers(0, 7)):
            out[name] = draw(value(kinds))
    special = kinds != "k" and draw(st.integers(0, 3)) == 0
    out["g"] = draw(st.sampled_from(GROUPS)) if special else draw(st.sampled_from([1, 2]))
    out["k"] = draw(st.sampled_from(["p", "q"]))
    return out


# GROUP-BY and equivalence values: equal numbers of two forms (1 and 1.0, 0.0 and -0.0, 2^64 and its double),
# ints a double cannot tell apart, NaN (never matched, as null), infinities, a bool and a text.
GROUPS = [
    1,
    1.0,
    2,
    -0.0,
    0.0,
    0,
    2**53,
    2**53 + 1,
    2.0**53,
    2**64,
    2.0**64,
    10**400,
    NAN,
    INF,
    -INF,
    True,
    "1",
    None,
]


@st.composite
def numeric_events(draw, types: str, max_events: int = 10) -> list[Event]:
    n = draw(st.integers(0, max_events))
    times = sorted(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
    kinds = draw(st.sampled_from(["ifo", "ifo", "if", "i", "k", "k"]))
    return [Event(draw(st.sampled_from(types)), t, draw(numeric_attributes(kinds))) for t in times]


def numeric_local(t: str) -> list[str]:
    """Local predicates on ``t``: an attribute against every literal by every comparison (the kernel's fast
    path), and arithmetic between attributes and with such values (the general closures)."""
    out = [f"{t}.{a} {op} {lit}" for a in "xy" for op in OPS for lit in LITERALS]
    out += [f"{lit} {op} {t}.x" for op in OPS for lit in LITERALS[:12]]
    out += [
        f"{t}.x + {t}.y > {t}.x", f"{t}.x * {t}.y >= 0", f"{t}.x - 1 < {t}.x", f"{t}.x / {t}.y <= 1",
        f"{t}.x % {t}.y = 0", f"{t}.x % -7 > -3", f"{t}.x % 2.5 < 1", f"{t}.x % {2**63 + 1} > {2**62}", f"{t}.x * 1.5 > 1e300", f"{t}.x / 3 < 0", f"{t}.x % 1.5 != {t}.x % 1.5",
        f"-{t}.x < {t}.y", f"{t}.x = {t}.y", f"{t}.x != {t}.y", f"{t}.x < {t}.y", f"{t}.x >= {t}.y",
        f"{t}.x + {2**53 + 1} > {2**64}", f"{t}.x * {2**64} <= {t}.y", f"{t}.x - {t}.y = 0",
        f"{t}.x * 0.5 = {t}.x / 2", f"{t}.x % 2 = 1", f"{t}.x / {t}.y > {2**63}", f"({t}.x < 0 OR {t}.y > 0)",
        f"{t}.x * {t}.x > {2**127}", f"{t}.x + 1e308 > 1e308", f"{t}.x - 5e-324 < {t}.x",
    ]  # fmt: skip
    return out


def numeric_edge(x: str, y: str) -> list[str]:
    """Edge predicates on ``x`` → ``y``: one comparison of an expression of x with one of y (the ordered
    index) and general ones (the scan)."""
    out = [f"{x}.{a} {op} NEXT({y}).{b}" for a in "xy" for b in "xy" for op in OPS]
    out += [
        f"{x}.x * 1.5 {op} NEXT({y}).x" for op in OPS
    ] + [f"{x}.x + {2**53 + 1} {op} NEXT({y}).x - 1" for op in OPS] + [
        f"{x}.x % 7 = NEXT({y}).x % 7", f"{x}.x % -3 < NEXT({y}).x % 1.5", f"{x}.x % NEXT({y}).y >= 1",
        f"{x}.x % {2**64} > NEXT({y}).x", f"{x}.x * {2**64} < NEXT({y}).x", f"{x}.x / 3 >= NEXT({y}).y / 3",
        f"-{x}.x > NEXT({y}).x", f"{x}.x - {2**127} <= NEXT({y}).x", f"{x}.x + 1e308 < NEXT({y}).x + 1e308",
        f"{x}.x / NEXT({y}).y > 1", f"{x}.x - NEXT({y}).x >= 0", f"{x}.x * NEXT({y}).y < {x}.y",
        f"{x}.x + NEXT({y}).x != {x}.y", f"NEXT({y}).x % {x}.y = 0", f"{x}.x = NEXT({y}).x * 1.0",
    ]  # fmt: skip
    return out


@st.composite
def numeric_query(draw, name: str, partition: bool = False) -> str:
    """A query over small patterns (nested Kleene and SEQ, NOT), every semantics, numeric predicates and
    every aggregate over x and y; ``partition``: equivalence over k (or GROUP-BY k) always."""
    family = draw(st.sampled_from(["nested", "nested", "nested", "negation", "optional", "position"]))
    pattern = draw(family_pattern(family, "ABCD"))
    positive = list(probe(pattern).pattern.template.types)
    returns = ["COUNT(*)"] if draw(st.integers(0, 3)) or " AND " in pattern else []
    for _ in range(draw(st.integers(1, 4)) if " AND " not in pattern else 0):
        t, a = draw(st.sampled_from(positive)), draw(st.sampled_from("xxy"))
        returns.append(draw(st.sampled_from([f"SUM({t}.{a})", f"AVG({t}.{a})", f"MIN({t}.{a})",
                                             f"MAX({t}.{a})", f"COUNT({t})"])))  # fmt: skip
    returns = list(dict.fromkeys(returns))
    equivalence = draw(st.sampled_from([[], ["k"], ["g"], ["k", "g"]]))
    grouped = draw(st.sampled_from([[], [], ["g"]]))
    if partition and "k" not in equivalence:
        equivalence = ["k", *equivalence]
    where = [f"[{', '.join(equivalence)}]"] if equivalence else []
    where += draw(conditions(pattern, local=numeric_local, edge=numeric_edge))
    text = f"{name}: RETURN {', '.join(grouped + returns)} PATTERN {pattern}"
    if where:
        text += " WHERE " + " AND ".join(where)
    if grouped:
        text += " GROUP-BY " + ", ".join(grouped)
    within = draw(st.integers(4, 16))
    slide = draw(st.sampled_from([within, max(1, within // 2)]))
    text += f" WITHIN {within} SLIDE {slide}"
    chosen = draw(with_semantics(text, weight_any=2))
    return chosen if parses(chosen) else text  # (NEXT over a position template may need too many states)


@st.composite
def numeric_workloads(draw, partition: bool = False) -> str:
    return "\n".join(draw(numeric_query(f"q{i}", partition)) for i in range(draw(st.integers(2, 3))))


def stream_types(text: str) -> str:
    workload = parse_workload(text)
    positive = "".join(t for q in workload.queries for t in q.pattern.template.types)
    return positive * 3 + "".join(t for q in workload.queries for t in q.types) + "Z"


# ---- comparing rows --------------------------------------------------------------------------------------


def form(value: Any) -> Any:
    """A value with its kind: an int SUM is not an equal float, -0.0 not 0.0, NaN equals NaN."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("float", "nan")
        return ("float", value, math.copysign(1.0, value))
    return (type(value).__name__, value)


def exactly(rows: list) -> list:
    """Rows with each value's form. Group values with their kind (True is no 1: two groups), compared as
    values: which form of equal numbers (1 and 1.0, 0.0 and -0.0) names a group is the first event's of the
    stream partition the query's sharable set reads (README), and the oracle knows no sets."""
    return [(r.query, r.window_start, r.window_end, sorted((a, kind(v), v) for a, v in r.group.items()),
             r.aggregate, form(r.value)) for r in rows]  # fmt: skip


def outcome(run, *args: Any) -> Any:
    """The rows ``run(*args)`` gives, exactly, or that it raised an ``EvaluationError``."""
    try:
        return exactly(run(*args))
    except EvaluationError:
        return "EvaluationError"


def described(expected: Any) -> str:
    """What an example came to (Hypothesis' statistics): an error, no row, or rows with values or not."""
    if isinstance(expected, str):
        return expected
    if not expected:
        return "no row"
    valued = [r for r in expected if r[4] != "COUNT(*)" and r[5][0] != "NoneType"]
    return "rows with aggregate values" if valued else "rows, no aggregate value"


HAMLET_SHARED_PATH = partial(run_shared, sharing="hamlet", model=CostModel(partition_setup=-math.inf))
EVENT_PATHS = {
    "greta, plain scan": partial(run_greta, plain_scan=True),
    "greta in Python": partial(run_greta, native=False),
    "shared graphs in Python": partial(run_greta, share_graphs=True, native=False),
    "static in Python": partial(run_shared, sharing="static", native=False),
    "hamlet in Python": partial(run_shared, sharing="hamlet", native=False),
    "hamlet, shared path": HAMLET_SHARED_PATH,
}


def check_events(text: str, stream: list[Event]) -> None:
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    expected = outcome(evaluate_bruteforce, workload, stream)
    note(f"oracle: {expected!r}")
    event(described(expected))
    for strategy in STRATEGIES:
        assert outcome(evaluate, workload, stream, strategy) == expected, strategy
    for name, executor in EVENT_PATHS.items():
        assert outcome(evaluate_with, workload, stream, executor) == expected, name


@given(numeric_workloads(), st.data())
def test_numeric_edge_values_on_events_equal_bruteforce(text, data):
    check_events(text, data.draw(numeric_events(stream_types(text))))


# ---- tables: one Arrow type per column -------------------------------------------------------------------

# What a column of each Arrow type can hold exactly, as Python values.
COLUMN_KINDS: dict[str, tuple[pa.DataType, list[Any]]] = {
    "int64": (pa.int64(), [v for v in INTS if -(2**63) <= v < 2**63]),
    "uint64": (pa.uint64(), [v for v in INTS if 0 <= v < 2**64]),
    "float64": (pa.float64(), FLOATS),
    "decimal0": (pa.decimal128(38, 0), [Decimal(v) for v in INTS if abs(v) < 10**38]),
    "decimal18": (pa.decimal128(18, 0), [Decimal(v) for v in INTS if abs(v) < 10**18]),
    "decimal3": (pa.decimal128(38, 3), [Decimal(s) for s in ["0", "-0.000", "1.5", "-2.125", "12345678901234567.891",
                                                                 "99999999999999999999999999999999999.999"]]),
    "bool": (pa.bool_(), [True, False]),
    "string": (pa.string(), ["u", "1", "-0.0", "nan"]),
}  # fmt: skip
TABLE_KINDS = ["int64", "int64", "uint64", "float64", "float64", "float64", "decimal0", "decimal18", "decimal3",
               "bool", "string"]  # fmt: skip


@st.composite
def typed_tables(draw, types: str) -> list[pa.Table]:
    """One table per partition (k), each attribute a column of one Arrow type drawn per table: a stream whose
    attribute mixes kinds across partitions, as separate Spark tasks may hand them over."""
    tables = []
    for k in ("p", "q"):
        n = draw(st.integers(0, 7))
        times = sorted(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
        columns: dict[str, pa.Array] = {
            "event_type": pa.array([draw(st.sampled_from(types)) for _ in times], pa.string()),
            "event_time": pa.array([t * 1_000_000 for t in times], pa.int64()).cast(
                pa.timestamp("us", "UTC")
            ),
            "g": typed_group(draw, len(times)),
            "k": pa.array([k] * n, pa.string()),
        }
        for name in ("x", "y"):
            arrow_type, pool = COLUMN_KINDS[draw(st.sampled_from(TABLE_KINDS))]
            values = [draw(st.sampled_from(pool)) if draw(st.integers(0, 7)) else None for _ in times]
            columns[name] = pa.array(values, arrow_type)
        tables.append(pa.table(columns))
    return tables


# GROUP-BY values as a column holds them: equal numbers of two forms, NaN (a null to the partitions), ±inf,
# bools (another table's 1 and 0 are other groups).
GROUP_COLUMNS = [
    (pa.int64(), [1, 2]), (pa.int64(), [1, 2]), (pa.float64(), [1.0, -0.0, 0.0, NAN, INF, -INF, 2.0**64]),
    (pa.uint64(), [2**64 - 1, 1, 0]), (pa.string(), ["1", "nan"]), (pa.decimal128(38, 0), [Decimal(1), Decimal(2**64)]),
    (pa.bool_(), [True, False]),
]  # fmt: skip


def typed_group(draw, n: int) -> pa.Array:
    """A g column of one Arrow type (``GROUP_COLUMNS``), sometimes null."""
    arrow_type, pool = draw(st.sampled_from(GROUP_COLUMNS))
    return pa.array(
        [draw(st.sampled_from(pool)) if draw(st.integers(0, 7)) else None for _ in range(n)], arrow_type
    )


def check_tables(text: str, tables: list[pa.Table]) -> None:
    note(text)
    for t in tables:
        note(repr(t.to_pydict()))
    workload = parse_workload(text)
    stream = [e for t in tables for e in events_of(sorted_events(checked(t)), ["x", "y", "g", "k"])]
    stream.sort(key=lambda e: e.time)
    note(repr(stream))
    expected = outcome(evaluate_bruteforce, workload, stream)
    note(f"oracle: {expected!r}")
    event(described(expected))
    for strategy in STRATEGIES:
        assert outcome(evaluate, workload, stream, strategy) == expected, strategy

        def on_tables(strategy=strategy):
            partials = [evaluate_table(workload, t, strategy) for t in tables]
            return finalize_table(workload, pa.concat_tables(partials))

        assert outcome(on_tables) == expected, f"{strategy}, tables"


@given(numeric_workloads(partition=True), st.data())
def test_numeric_edge_values_in_typed_columns_equal_bruteforce(text, data):
    check_tables(text, data.draw(typed_tables(stream_types(text))))


@given(segment_workloads(), st.data())
def test_numeric_edge_values_cut_into_time_segments_equal_bruteforce(text, data):
    """A typed table cut into time segments at random pane bounds (``evaluate_segment``, ``compose_segments``
    given ``floating_columns`` of the table's own schema) gives the oracle's rows; a segment may refuse a
    partition holding a value only Python computes exactly (README), with an ``EventError``, and refuses an
    aggregate over a column of no number type (bools here) before it runs."""
    workload = parse_workload(text)
    assume(segment_obstacle(workload) is None)
    table = data.draw(typed_tables(stream_types(text)))[0]
    note(text)
    note(repr(table.to_pydict()))
    stream = events_of(sorted_events(checked(table)), ["x", "y", "g", "k"])
    expected = outcome(evaluate_bruteforce, workload, stream)
    pane = segment_pane(workload)
    cuts = segment_cuts(data, [e.time for e in stream] or [0], pane)
    for strategy in STRATEGIES:
        try:
            found = outcome(segmented, workload, table, cuts, strategy)
        except HamletError as error:  # (EventError is one)
            event("a segment refused a value only Python computes exactly")
            assert "Python" in str(error) or "-0.0" in str(error), error
            continue
        assert found == expected, strategy


# ---- GROUP-BY and equivalence values of two kinds --------------------------------------------------------

KINDS_WORKLOAD = """g: RETURN x, COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) GROUP-BY x WITHIN 100
m: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [x] WITHIN 100
"""


def kinds_stream(one: Any, other: Any) -> list[Event]:
    """x of True, False and equal numbers in two forms (``one`` first, then ``other``): Python's dict keys
    merge True with 1 and 1.0 and False with 0 and 0.0, the language has True = 1 false."""
    xs = [(True, 1), (one, 2), (True, 3), (other, 4), (one, 5), (other, 6), (False, 7), (0, 8), (0.0, 9)]
    types = "ABBABBABB"
    return [Event(t, s, {"x": x, "v": s}) for t, (x, s) in zip(types, xs)] + [
        Event("A", 10, {"x": other, "v": 10}),
        Event("B", 11, {"x": other, "v": 11}),
    ]


def shown(rows: list) -> list:
    """Rows with the group's values as JSON writes them (1 is not 1.0, true is not 1)."""
    import json

    return [(r.query, json.dumps(r.group), r.aggregate, r.value) for r in rows]


def test_group_by_and_equivalence_values_of_two_kinds_are_two_groups_on_every_path():
    """True and 1 (False and 0) fell into one stream partition and one group on every strategy, and the
    oracle merged them too: g reported {x: true} with 39 trends (every a and b but a7, b8, b9), {x: false}
    with 3 (a7 with b8, b9) and m 42, where the language has True = 1 false. Now True is one group (a1, b3: 1 trend), the numbers 1 and 1.0 another, shown as the
    group's first event holds it (b2: 1; or 1.0 when the first is 1.0): a4 and a10 with b5, b6, b11 — 8
    trends; False (a7) and 0 (b8, b9) have none. The oracle, the Python graphs and ``hamlet trends`` agree."""
    from hamlet.trends import list_trends

    workload = parse_workload(KINDS_WORKLOAD)
    for one, other in ((1, 1.0), (1.0, 1)):
        stream = kinds_stream(one, other)
        number = "1" if one == 1 and type(one) is int else "1.0"
        expected = [
            ("g", f'{{"x": {number}}}', "COUNT(*)", 8),
            ("g", f'{{"x": {number}}}', "SUM(B.v)", 4 * (5 + 6 + 11) + 11),  # (each b in 4 of a4's 7 trends)
            ("g", '{"x": true}', "COUNT(*)", 1),
            ("g", '{"x": true}', "SUM(B.v)", 3),
            ("m", "{}", "COUNT(*)", 9),
        ]
        assert shown(evaluate_bruteforce(workload, stream)) == expected, (one, other)
        for strategy in STRATEGIES:
            assert shown(evaluate(workload, stream, strategy)) == expected, (strategy, one, other)
        for name, executor in EVENT_PATHS.items():
            assert shown(evaluate_with(workload, stream, executor)) == expected, (name, one, other)
        totals = [
            (found.group, type(found.group["x"]), found.total) for found in list_trends(workload, "g", stream)
        ]
        assert totals == [({"x": one}, type(one), 8), ({"x": True}, bool, 1)]


def test_tables_of_a_bool_and_of_a_number_column_finalize_into_two_groups():
    """A column holds one kind, but the partials of several tables (Spark tasks, files) finalize together:
    {"x":true} and {"x":1} merged into one group of 5 trends shown as the last table's 1.0, and m summed all
    5 rows' trends; now True is its own group (1 trend), and 1 and 1.0 one group of 4, shown as the first
    table that has it (1), on every strategy."""
    workload = parse_workload(KINDS_WORKLOAD)
    tables = [
        pa.table({"event_type": list("ABA"), "event_time": [1, 3, 7], "x": [True, True, False], "v": [1, 3, 7]}),
        pa.table({"event_type": list("BABBBB"), "event_time": [2, 4, 5, 6, 8, 9], "x": [1, 1, 1, 1, 0, 0],
                  "v": [2, 4, 5, 6, 8, 9]}),
        pa.table({"event_type": list("AB"), "event_time": [10, 11], "x": [1.0, 1.0], "v": [10, 11]}),
    ]  # fmt: skip
    expected = [
        ("g", '{"x": 1}', "COUNT(*)", 4),
        ("g", '{"x": 1}', "SUM(B.v)", 2 * (5 + 6) + 11),
        ("g", '{"x": true}', "COUNT(*)", 1),
        ("g", '{"x": true}', "SUM(B.v)", 3),
        ("m", "{}", "COUNT(*)", 5),
    ]
    for strategy in STRATEGIES:
        partials = pa.concat_tables([evaluate_table(workload, t, strategy) for t in tables])
        assert sorted(set(partials.column("group_key").to_pylist())) == [
            '{"x":1.0}',
            '{"x":1}',
            '{"x":true}',
            "{}",
        ]
        assert shown(finalize_table(workload, partials)) == expected, strategy


def test_decimal_values_are_the_numbers_they_hold_on_every_path():
    """A Decimal (how pandas, delta-rs and Arrow's ``to_pylist`` give a value of Spark's ``decimal(p,s)``) was
    no number on the events path, where a table's decimal column is one (``columnar._decimals_as_numbers``):
    over ``kinds_stream`` with Decimal(1) and 1.0, GROUP-BY x reported {x: 1.0} with 4 trends and {x:
    Decimal('1')} apart, and ``[x]`` split the stream alike. Now a Decimal is read as the number it holds
    (``events.decimal_number``: Decimal(1) is 1, Decimal("1.0") is 1.0): one group and one stream partition
    with 1 and 1.0, shown as the group's first event holds it, the oracle's rows over those numbers, on
    Events, mappings and DataFrames alike."""
    import pandas as pd

    workload = parse_workload(KINDS_WORKLOAD)
    read = {"1": 1, "1.0": 1.0, "1.00": 1.0}  # (what each Decimal is read as, by its text: 1 == 1.0 as keys)
    cases = ((Decimal(1), 1.0, "1"), (Decimal("1.0"), Decimal(1), "1.0"), (1, Decimal("1.00"), "1"))
    for one, other, number in cases:
        stream = kinds_stream(one, other)
        expected = [
            ("g", f'{{"x": {number}}}', "COUNT(*)", 8),
            ("g", f'{{"x": {number}}}', "SUM(B.v)", 4 * (5 + 6 + 11) + 11),
            ("g", '{"x": true}', "COUNT(*)", 1),
            ("g", '{"x": true}', "SUM(B.v)", 3),
            ("m", "{}", "COUNT(*)", 9),
        ]
        as_read = [Event(e.type, e.time, {"x": read[str(x)] if isinstance(x := e.get("x"), Decimal) else x,
                                          "v": e.get("v")}) for e in stream]  # fmt: skip
        assert shown(evaluate_bruteforce(workload, as_read)) == expected, (one, other)
        mappings = [{"event_type": e.type, "event_time": e.time, **e.attributes} for e in stream]
        for strategy in STRATEGIES:
            assert shown(evaluate(workload, stream, strategy)) == expected, (strategy, one, other)
            assert shown(evaluate(workload, mappings, strategy)) == expected, (strategy, one, other)
            frame = pd.DataFrame(mappings).astype({"x": object})
            assert shown(evaluate(workload, frame, strategy)) == expected, (strategy, one, other)
        for name, executor in EVENT_PATHS.items():
            assert shown(evaluate_with(workload, stream, executor)) == expected, (name, one, other)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_decimal_values_of_events_give_the_rows_of_decimal_columns(strategy):
    """The same events as Decimals (events path) and in decimal128 columns (``evaluate_table``): one group
    of Decimal(1), 1 and Decimal("1.0") (shown as the first table's, 1), SUM and the comparison over
    Decimal("1.50") and Decimal("2.50") as over 1.5 and 2.5 (``test_columnar``'s decimal test)."""
    workload = parse_workload(
        "q: RETURN x, COUNT(*), SUM(A.d), MIN(A.d) PATTERN SEQ(A+, B) WHERE A.d > 2 OR A.d < 2 GROUP-BY x WITHIN 10\n"
        "r: RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE A.d > 2 AND [x] WITHIN 10"
    )
    tables = [
        pa.table({"event_type": ["A", "A"], "event_time": [1, 2], "x": pa.array([Decimal(1)] * 2, pa.decimal128(18, 0)),
                  "d": pa.array([Decimal("1.50"), Decimal("2.50")], pa.decimal128(10, 2))}),
        pa.table({"event_type": ["B"], "event_time": [3], "x": pa.array([Decimal("1.0")], pa.decimal128(10, 1)),
                  "d": pa.array([None], pa.decimal128(10, 2))}),
    ]  # fmt: skip
    # (one stream partition in two tables finalizes as two: the tables' own trends are none, so evaluate
    # the union as one table too)
    whole = pa.table({"event_type": ["A", "A", "B"], "event_time": [1, 2, 3],
                      "x": pa.array([Decimal(1), Decimal(1), Decimal(1)], pa.decimal128(18, 0)),
                      "d": pa.array([Decimal("1.50"), Decimal("2.50"), None], pa.decimal128(10, 2))})  # fmt: skip
    expected = [
        ("q", '{"x": 1}', "COUNT(*)", 3), ("q", '{"x": 1}', "SUM(A.d)", 8.0), ("q", '{"x": 1}', "MIN(A.d)", 1.5),
        ("r", "{}", "COUNT(*)", 1),
    ]  # fmt: skip
    assert shown(finalize_table(workload, evaluate_table(workload, whole, strategy))) == expected
    events = [Event(t, s, {"x": x, "d": d}) for table in tables for t, s, x, d in
              zip(*(table.column(c).to_pylist() for c in ("event_type", "event_time", "x", "d")))]  # fmt: skip
    assert [e.get("x") for e in events] == [Decimal(1), Decimal(1), Decimal("1.0")]
    assert shown(evaluate(workload, events, strategy)) == expected


def test_a_decimal_column_with_places_reads_each_value_as_its_nearest_double():
    """A ``decimal(p,s)`` value with places after the point is the double nearest it on the table path, as
    ``float(Decimal)`` gives it on the events path: Arrow's decimal-to-double cast is not correctly rounded
    (1.005 came out as 1.0050000000000001, one ulp off), so both paths must read it through its text."""
    import random

    rng = random.Random(5)
    values = [Decimal("1.005"), Decimal("0.1"), Decimal("-2.675"), Decimal("9007199254740993.5")]
    values += [
        Decimal(f"{rng.randrange(-(10**19), 10**19)}.{rng.randrange(10**18):018d}") for _ in range(200)
    ]
    workload = parse_workload("q: RETURN MIN(A.d) PATTERN SEQ(A, B) WITHIN 2 SLIDE 2")
    table = pa.table({
        "event_type": ["A", "B"] * len(values),
        "event_time": list(range(2 * len(values))),
        "d": pa.array([v for v in values for v in (v, None)], pa.decimal128(38, 18)),
    })  # fmt: skip
    expected = [float(v) for v in values]
    assert [r.value for r in finalize_table(workload, evaluate_table(workload, table))] == expected
    events = [
        Event(t, s, {"d": d}) for t, s, d in zip(*(table.column(c).to_pylist() for c in table.column_names))
    ]
    assert [r.value for r in evaluate(workload, events)] == expected


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_whole_decimal_column_wider_than_18_digits_reads_exact_ints(strategy):
    """Spark's ``decimal(20,0)`` ids and ``decimal(38,0)`` sums: the table path read a whole decimal column of
    more than 18 digits as doubles, so the ids 2^53 and 2^53 + 1 were one double, one ``[id]`` partition and one
    group, and their SUM was rounded, where the same Decimals on the events path are exact ints. Now the column
    is int64 where it fits, uint64 where that does, else Python reads its values exactly: every path gives the
    oracle's rows over the ints."""
    workload = parse_workload(
        "q: RETURN id, COUNT(*), SUM(A.n), MAX(A.n) PATTERN SEQ(A+, B) WHERE [id] GROUP-BY id WITHIN 100\n"
        "r: RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE A.n > 9007199254740993 WITHIN 100"
    )
    types, times = ["A", "A", "A", "A", "B", "B"], [1, 2, 3, 4, 5, 6]
    for base in (2**53, 2**63, 2**64 + 7, -(2**70)):  # int64, uint64, beyond both (Python's), negative beyond
        ids = [base, base + 1, base, base + 1, base, base + 1]
        ns = [base + 1, base + 3, base + 5, base + 9, None, None]
        oracle = [
            Event(t, s, {"id": i, **({} if n is None else {"n": n})})
            for t, s, i, n in zip(types, times, ids, ns)
        ]
        expected = shown(evaluate_bruteforce(workload, oracle))
        assert [r for r in expected if r[0] == "q" and r[2] == "COUNT(*)"] == [
            ("q", json.dumps({"id": base}), "COUNT(*)", 3),
            ("q", json.dumps({"id": base + 1}), "COUNT(*)", 3),
        ]  # (two ids, two groups: A+ of one id's two A, then its B)
        table = pa.table({"event_type": types, "event_time": times,
                          "id": pa.array([Decimal(i) for i in ids], pa.decimal128(38, 0)),
                          "n": pa.array([None if n is None else Decimal(n) for n in ns], pa.decimal128(38, 0))})  # fmt: skip
        assert shown(finalize_table(workload, evaluate_table(workload, table, strategy))) == expected, base
        events = [Event(t, s, {"id": Decimal(i), **({} if n is None else {"n": Decimal(n)})})
                  for t, s, i, n in zip(types, times, ids, ns)]  # fmt: skip
        assert shown(evaluate(workload, events, strategy)) == expected, base
