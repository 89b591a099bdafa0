"""Differential property over the whole language and a wide value domain: several queries per workload, each
drawn from every pattern family (nested Kleene and SEQ with NOT leading, between and trailing and over
sub-patterns; optional and star parts; types at several places, ``P{n,}``, OR, AND), every semantics where
the construct takes it, local predicates with negative and fractional constants and arithmetic, edge
predicates, equivalence and GROUP-BY (with nulls and missing attributes), windows in seconds or
milliseconds. Values are ints and floats of both signs, ``-0.0`` next to ``0``, ties, doubles whose sums
overflow; times are negative or fractional, repeat, and fall on window bounds; some events are of types no
query reads.

Every strategy equals the brute-force oracle through ``hamlet.evaluate`` and through ``evaluate_table``
(Arrow in, partial states out), cut into time segments at random pane bounds where the workload's segments
compose (``evaluate_segment``, ``compose_segments``), and in the trends ``hamlet trends`` lists. Past the
oracle's reach, on bursts whose counts exceed 128 bits, every path equals GRETA on Python's graphs."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import pyarrow as pa
from hypothesis import given, note
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from test_trends import expected, listed
from test_vertical import check_split, segment_workloads
from workloads import (
    conditions,
    examples,
    family_pattern,
    multi_query_workloads,
    probe,
    sharing_workloads,
    table_of,
    typed,
    types_of,
)

from hamlet import STRATEGIES, Event, evaluate, evaluate_table, finalize_table, parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.columnar import events_of, sorted_events
from hamlet.runtime.greta import run_greta

# Ties, both zeros, both signs, fractions, and doubles whose sums leave the double range (±inf): what MIN,
# MAX, SUM and AVG must agree on digit for digit.
VALUES = [-3, -1, 0, 1, 2, 4, -0.0, 0.0, -1.5, 0.5, 2.5, -0.25, 1e308, -1e308]


@st.composite
def wide_attributes(draw) -> dict:
    """x from ``VALUES`` (or null, or missing); y a small int of either sign; s a string; g, k partition
    values, g sometimes null or missing."""
    out: dict = {}
    if draw(st.integers(0, 7)):
        out["x"] = draw(st.sampled_from([*VALUES, None]))
    out["y"] = draw(st.integers(-2, 3))
    out["s"] = draw(st.sampled_from(["u", "v"]))
    if draw(st.integers(0, 7)):
        out["g"] = draw(st.sampled_from([1, 2, 2, None]))
    out["k"] = draw(st.sampled_from(["p", "q"]))
    return out


@st.composite
def wide_events(draw, types: str, max_events: int = 12) -> list[Event]:
    """Times from -6 to 14 in quarter seconds (so they fall on window bounds of second and millisecond
    windows, and before the epoch), with repeats."""
    n = draw(st.integers(0, max_events))
    quarters = sorted(draw(st.lists(st.integers(-24, 56), min_size=n, max_size=n)))
    return [
        Event(draw(st.sampled_from(types)), q // 4 if q % 4 == 0 else q / 4, draw(wide_attributes()))
        for q in quarters
    ]


def wide_local(t: str) -> list[str]:
    """Local predicates with negative and fractional constants."""
    return [f"{t}.x < 1", f"{t}.x >= -1", f"{t}.x = 0", f"{t}.x != -0.0", f"{t}.x * -1 > {t}.y",
            f"({t}.x <= -0.5 OR {t}.s = v)", f"{t}.y % 2 = 0", f"{t}.x - {t}.y < 0.5"]  # fmt: skip


def wide_edge(x: str, y: str) -> list[str]:
    return [f"{x}.x < NEXT({y}).x", f"{x}.x >= NEXT({y}).x", f"NEXT({y}).y = {x}.y", f"{x}.x + NEXT({y}).y > 0",
            f"{x}.y <= NEXT({y}).y"]  # fmt: skip


@st.composite
def wide_returns(draw, positive: list[str], conjunction: bool) -> list[str]:
    """The aggregates of a query over ``positive`` types: COUNT(*) and up to four of the others, or (a
    conjunction's pairs define only the count) COUNT(*) alone."""
    returns = ["COUNT(*)"]
    if conjunction:
        return returns
    for _ in range(draw(st.integers(0, 4))):
        t = draw(st.sampled_from(positive))
        a = draw(st.sampled_from(["x", "x", "y"]))
        returns.append(draw(st.sampled_from([f"COUNT({t})", f"SUM({t}.{a})", f"AVG({t}.{a})",
                                             f"MIN({t}.{a})", f"MAX({t}.{a})"])))  # fmt: skip
    returns = list(dict.fromkeys(returns))
    if draw(st.integers(0, 4)) == 0:
        returns.remove("COUNT(*)")
        returns = returns or [f"COUNT({positive[0]})"]
    return returns


@st.composite
def wide_windows(draw) -> str:
    """WITHIN/SLIDE in seconds (tumbling, sliding, with gaps) or in milliseconds: quarter seconds, whose bounds
    fall on the events' quarter-second times, or tenths, whose bounds no double holds exactly (0.3 s)."""
    if draw(st.integers(0, 3)) == 0:
        unit = draw(st.sampled_from([250, 100, 300]))
        within = unit * draw(st.integers(max(2, 1000 // unit), 6000 // unit))
        slide = draw(st.sampled_from([within, within // 2, unit, within + 2 * unit]))
        return f"WITHIN {within} ms SLIDE {slide} ms"
    within = draw(st.integers(2, 16))
    slide = draw(st.sampled_from([within, max(1, within // 2), max(1, within // 3), within + 2]))
    return f"WITHIN {within} SLIDE {slide}" if draw(st.integers(0, 3)) else f"WITHIN {within} s"


SEMANTICS = ["", "", " SEMANTICS ANY", " SEMANTICS NEXT", " SEMANTICS CONT"]


@st.composite
def wide_query(draw, name: str) -> str:
    family = draw(st.sampled_from(["nested", "nested", "negation", "optional", "position"]))
    pattern = draw(family_pattern(family, "ABCDEF"))
    # §12's position templates take neither NOT nor NEXT/CONT (they never have NOT here).
    semantics = draw(st.sampled_from(SEMANTICS)) if family != "position" else ""
    positive = list(probe(pattern).pattern.template.types)
    returns = draw(wide_returns(positive, conjunction=" AND " in pattern))
    equivalence = draw(st.sampled_from([[], [], ["k"], ["g"], ["k", "g"]]))
    grouped = draw(st.sampled_from([[], [], ["g"], ["k"]]))
    where = [f"[{', '.join(equivalence)}]"] if equivalence else []
    where += draw(conditions(pattern, local=wide_local, edge=wide_edge))
    return (
        query_text(name, grouped + returns, pattern + semantics, where, grouped) + " " + draw(wide_windows())
    )


def query_text(name: str, returns: list[str], pattern: str, where: list[str], grouped: list[str]) -> str:
    """A query up to its window: ``where`` joined by AND."""
    text = f"{name}: RETURN {', '.join(returns)} PATTERN {pattern}"
    if where:
        text += " WHERE " + " AND ".join(where)
    if grouped:
        text += " GROUP-BY " + ", ".join(grouped)
    return text


@st.composite
def wide_workloads(draw) -> str:
    return "\n".join(draw(wide_query(f"q{i}")) for i in range(draw(st.integers(1, 4))))


def stream_types(text: str) -> str:
    """The workload's types, positive ones more often, and a type (Z) no query reads."""
    workload = parse_workload(text)
    positive = "".join(t for q in workload.queries for t in q.pattern.template.types)
    return positive * 3 + "".join(t for q in workload.queries for t in q.types) + "Z"


WIDE_EXAMPLES = examples(ci=300)


@WIDE_EXAMPLES
@given(wide_workloads(), st.data())
def test_wide_workloads_equal_bruteforce(text, data):
    stream = data.draw(wide_events(stream_types(text)))
    check_wide(text, stream)


def check_wide(text: str, stream: list[Event]) -> None:
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    for strategy in STRATEGIES:
        assert exactly(evaluate(workload, stream, strategy)) == exactly(expected), strategy
    table = table_of(stream)
    read = events_of(sorted_events(table), ["x", "y", "s", "g", "k"])
    if [typed(e) for e in read] != [typed(e) for e in stream]:
        # Arrow holds one type per column (ints next to floats become floats, a missing value a null).
        expected = evaluate_bruteforce(workload, read)
    for strategy in STRATEGIES:
        found = finalize_table(workload, evaluate_table(workload, table, strategy))
        assert exactly(found) == exactly(expected), f"{strategy}, table"


def exactly(rows: list) -> list:
    """Rows with each value's kind: an int SUM is not a float that happens to be equal. MIN and MAX of a
    zero may be ``0``, ``0.0`` or ``-0.0`` (equal values of the stream, any of which is the extreme)."""

    def kind(row) -> str:
        if row.value == 0 and row.aggregate.startswith(("MIN", "MAX")):
            return "zero"
        return type(row.value).__name__

    return [(row, kind(row)) for row in rows]


@WIDE_EXAMPLES
@given(segment_workloads(), st.data())
def test_wide_values_cut_into_time_segments_equal_bruteforce(text, data):
    """Segments over the wide values (whole-second times: a segment's events need them)."""
    stream = [
        Event(e.type, int(e.time), e.attributes) for e in data.draw(wide_events(types_of(text, every=2), 14))
    ]
    check_split(text, stream, data)  # (-0.0 under MIN/MAX too: the kernel's order keys keep its sign)


@WIDE_EXAMPLES
@given(wide_workloads(), st.data())
def test_listed_trends_over_wide_workloads_are_the_oracles(text, data):
    """``hamlet trends`` (every query but a conjunction, which pairs trends) lists the oracle's trends, with
    the engine's totals, over fractional times and millisecond windows too."""
    stream = data.draw(wide_events(stream_types(text), 11))
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    for query in workload.queries:
        if query.choice != "AND":
            found = listed(workload, query.name, stream)
            assert found == expected(query, stream)
            assert all(total == sum(trends.values()) for total, trends in found.values())


@st.composite
def long_bursts(draw, types: str = "ACDEFGH") -> list[Event]:
    """A few runs of one type, mostly long bursts of B (up to 160 events: 2^160 trends of B+), at increasing
    times that sometimes repeat, in one stream partition mostly (k constant, g seldom 2)."""
    out: list[Event] = []
    t = 0
    for _ in range(draw(st.integers(2, 6))):
        event_type = draw(st.sampled_from("BBBB" + types))
        for _ in range(draw(st.integers(1, 160)) if event_type == "B" else draw(st.integers(1, 3))):
            t += draw(st.sampled_from([0, 1, 1, 1, 2]))
            out.append(Event(event_type, t, {"x": draw(st.sampled_from([1, 2, 3, -1, 0.5])), "y": draw(st.integers(0, 3)),
                                             "s": "u", "g": draw(st.sampled_from([1, 1, 1, 2])), "k": "p"}))  # fmt: skip
    return out


@WIDE_EXAMPLES
@given(st.one_of(sharing_workloads(), multi_query_workloads()), st.sampled_from([40, 100]), long_bursts())
def test_counts_beyond_128_bits_agree_on_every_path(text, factor, stream):
    """Past the oracle's reach (counts of 2^160): every strategy, through the API and the table, equals GRETA
    on Python's graphs (arbitrary-precision ints, no kernel), windows stretched so that bursts fit in them."""
    text = re.sub(r"(WITHIN|SLIDE) (\d+)", lambda m: f"{m.group(1)} {int(m.group(2)) * factor}", text)
    check_against_python_graphs(text, stream, ["x", "y", "s", "g", "k"])


def check_against_python_graphs(text: str, stream: list[Event], attributes: list[str],
                                make_table: Callable[[list[Event]], pa.Table] = table_of) -> None:  # fmt: skip
    """Every strategy, through the API and the table (``make_table`` of the stream), equals GRETA on Python's
    graphs (arbitrary-precision ints, no kernel)."""
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    on_python_graphs = partial(run_greta, native=False)
    reference = exactly(evaluate_with(workload, stream, on_python_graphs))
    table = make_table(stream)
    # (Arrow holds x, ints next to floats, as floats: the table's reference reads the table's events)
    table_reference = exactly(
        evaluate_with(workload, events_of(sorted_events(table), attributes), on_python_graphs)
    )
    for strategy in STRATEGIES:
        assert exactly(evaluate(workload, stream, strategy)) == reference, strategy
        found = finalize_table(workload, evaluate_table(workload, table, strategy))
        assert exactly(found) == table_reference, f"{strategy}, table"
