"""Mixed workloads: one drawn workload holds several queries of every family the language allows — nested
Kleene and SEQ with NOT leading, between and trailing; optional and star parts; a type at several places,
``P{n,}``, OR and AND; NOT around position templates — each under a semantics it takes, with aliases,
local, edge and equivalence predicates, GROUP-BY (over strings, ints and floats, ``-0.0`` next to ``0``),
every aggregate and tumbling, sliding, gapped or millisecond windows. Events tie in time within and across
types, values are nulls, missing, negative, fractional, huge.

Every strategy equals the brute-force oracle through every path: ``hamlet.evaluate``, the Arrow path
(``evaluate_table`` + ``finalize_table``), time segments where they compose (``evaluate_segment`` +
``compose_segments``), the command line (``hamlet evaluate`` on a CSV and on Parquet) and the trends
``hamlet trends`` lists. Where the analysis refuses a drawn construct, it is a ``QueryError`` naming line
and column, never another exception."""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from contextlib import redirect_stderr, redirect_stdout

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from test_differential import (
    check_against_python_graphs,
    exactly,
    query_text,
    wide_edge,
    wide_local,
    wide_returns,
    wide_windows,
)
from test_property import negated_somewhere
from test_trends import expected, listed
from test_vertical import pane_multiple, segment_cuts, segment_workloads, segmented
from workloads import (
    TYPES,
    conditions,
    multi_query_workloads,
    negation_patterns,
    optional_patterns,
    pattern_around,
    patterns,
    position_patterns,
    position_patterns_with_ends,
    sharing_workloads,
    typed,
    with_semantics,
)

from hamlet import (
    STRATEGIES,
    Event,
    evaluate,
    evaluate_table,
    finalize_table,
    parse_workload,
    segment_obstacle,
)
from hamlet.cli import main
from hamlet.errors import QueryError
from hamlet.io import open_csv, read_events_csv
from hamlet.runtime.columnar import events_of, sorted_events

ATTRIBUTES = ["x", "y", "s", "g", "k"]
# Besides small ints and floats of both signs: doubles whose sums overflow, the smallest subnormal and 0.1
# (exact sums in units of 2^-1074), ints beyond 64 bits, at the edges of 64 bits (arithmetic in predicates
# overflows) and past 2^53 (no double holds them).
VALUES = [-3, -1, 0, 1, 2, 4, -0.0, 0.0, -1.5, 0.5, 2.5, -0.25, 1e308, -1e308, 2**70, -(2**65), 5e-324, 0.1,
          2**63 - 1, -(2**63), 2**62, 2**53 + 1, 9007199254740992.0]  # fmt: skip


def mixed_local(t: str) -> list[str]:
    """``wide_local`` and more: modulo and division of negatives and by zero, strings against numbers,
    int against float literals."""
    return wide_local(t) + [f"{t}.y % 2 = 1", f"{t}.x / {t}.y > 0", f"{t}.s < 1", f"{t}.x = 1.0",
                            f"-{t}.x <= {t}.y", f"{t}.g != 2", f"{t}.x % -2 < 0.5"]  # fmt: skip


def mixed_edge(x: str, y: str) -> list[str]:
    return wide_edge(x, y) + [f"{x}.x / NEXT({y}).y < 1", f"{x}.s = NEXT({y}).s", f"{x}.y % 3 != NEXT({y}).y"]


SEMANTICS = ["", "", " SEMANTICS ANY", " SEMANTICS NEXT", " SEMANTICS CONT", " SEMANTICS contiguous",
             " SEMANTICS skip-till-next-match"]  # fmt: skip

# Besides ``wide_windows``: long windows, many windows per event, fractional slides, a slide that does not
# divide the window, a window shorter than its slide.
WINDOWS = ["WITHIN 25", "WITHIN 20 SLIDE 7", "WITHIN 1 min", "WITHIN 30 SLIDE 1", "WITHIN 10 SLIDE 500 ms",
           "WITHIN 1500 ms SLIDE 1 s", "WITHIN 2 SLIDE 1500 ms", "WITHIN 1 min SLIDE 1 s", "WITHIN 3 SLIDE 7"]  # fmt: skip

FAMILIES = ["nested", "nested", "negation", "optional", "position", "position", "ends", "around", "shapes"]

# What the other families seldom draw: NOT over Kleene sequences and optional parts, options of Kleene
# parts, Kleene plus over options and over Kleene plus, P{n,} of sequences, types at several places next to
# optional parts.
SHAPES = [
    "SEQ(A, NOT (SEQ(C, D))+, B)", "SEQ(A, NOT SEQ(C, D?), B+)", "SEQ(A, NOT SEQ(C*, D), B)", "SEQ(A, (B?)+)",
    "SEQ(A, B?*)", "SEQ(A, B+?, C)", "SEQ(A, B){2,}", "(SEQ(A, B?))+", "(SEQ(A*, B))+",
    "SEQ(NOT C, (SEQ(A, B))+, NOT D)", "(SEQ(A, NOT C, B))+", "SEQ(A+, NOT SEQ(C, NOT D, E+), B)",
    "SEQ(NOT SEQ(C, D), A, B+, NOT SEQ(E, F))", "(A+)+", "((SEQ(A, B+))+)+", "SEQ(A?, B, A)", "SEQ(A*, A)",
    "SEQ(A, A?, A)", "SEQ(A+, B*, A)", "SEQ(A, B) OR SEQ(A, B)", "A OR A+", "SEQ(A, B+) AND SEQ(A, B+)",
    "A AND A", "SEQ(A{2,}, B?) OR (SEQ(B, A))+", "SEQ(NOT C+, A{2,}, B, NOT D)", "SEQ(A, NOT C, B?, D)",
    "SEQ(A, B*, NOT C, D)", "SEQ((SEQ(A, B?))+, NOT C, D+)", "SEQ(A+, NOT C, (SEQ(B, D*))+)",
]  # fmt: skip


@st.composite
def mixed_pattern(draw) -> str:
    family = draw(st.sampled_from(FAMILIES))
    if family == "nested":
        return draw(patterns(list(draw(st.permutations(TYPES)))))
    if family == "negation":
        return draw(negation_patterns())
    if family == "optional":
        return draw(negated_somewhere(optional_patterns()))
    if family == "position":
        return draw(position_patterns())
    if family == "ends":
        return draw(position_patterns_with_ends())
    if family == "shapes":
        shape = draw(st.sampled_from(SHAPES))
        renaming = dict(zip("ABCDEF", draw(st.permutations(TYPES))))
        return re.sub(r"\b[A-F]\b", lambda m: renaming[m.group()], shape)
    core = draw(st.sampled_from(["B+", "B+", "(SEQ(B, C))+", "B{2,}", "B*"]))
    return draw(pattern_around(core, list(draw(st.permutations("ADEF")))))


def parses(text: str) -> bool:
    """Whether the analysis takes ``text``; a refusal must be a QueryError with its line and column."""
    try:
        parse_workload(text)
    except QueryError as error:
        assert error.line is not None and error.column is not None, error
        return False
    return True


@st.composite
def mixed_query(draw, name: str) -> str:
    pattern = draw(mixed_pattern())
    head = f"{name}: RETURN COUNT(*) PATTERN {pattern}"
    assume(parses(head + " WITHIN 1"))
    semantics = draw(st.sampled_from(SEMANTICS))
    if semantics and not parses(head + semantics + " WITHIN 1"):
        semantics = ""
    query = parse_workload(head + " WITHIN 1").queries[0]
    positive = sorted(query.pattern.template.types)
    every = sorted(query.types)
    returns = draw(wide_returns(positive, conjunction=query.choice == "AND"))
    # Partitions by strings, ints (g: 2 next to 2.0) and floats (y: 0, 0.0 and -0.0 are one value).
    equivalence = draw(st.sampled_from([[]] * 4 + [["k"], ["g"], ["s"], ["y"], ["k", "g"]]))
    grouped = draw(st.sampled_from([[]] * 4 + [["g"], ["k"], ["y"], ["s", "g"]]))
    where = [f"[{', '.join(equivalence)}]"] if equivalence else []
    if draw(st.booleans()):
        where += draw(conditions(pattern, local=mixed_local, edge=mixed_edge))
    text = query_text(name, grouped + returns, pattern + semantics, where, grouped)
    text += " " + draw(st.one_of(wide_windows(), st.sampled_from(WINDOWS)))
    # Aliases: a type (positive or negated) named by an alias in the pattern, which predicates and
    # aggregates then use (or the type itself).
    if draw(st.integers(0, 3)) == 0:
        t = draw(st.sampled_from(every))
        alias = f"{t.lower()}{t.lower()}"
        body, tail = text.split(" PATTERN ", 1)
        pat_end = re.search(r" (SEMANTICS|WHERE|GROUP-BY|WITHIN) ", tail)
        assert pat_end is not None
        pat, rest = tail[: pat_end.start()], tail[pat_end.start() :]
        pat = re.sub(rf"\b{t}\b(?![.(])", f"{t} {alias}", pat, count=1)
        body = re.sub(rf"\(({t})([.)])", rf"({alias}\2", body)
        rest = re.sub(rf"\b{t}\.", f"{alias}.", rest)
        rest = rest.replace(f"NEXT({t})", f"NEXT({alias})")
        aliased = f"{body} PATTERN {pat}{rest}"
        if parses(aliased):
            text = aliased
    assume(parses(text))
    return text


@st.composite
def mixed_workloads(draw) -> str:
    """1-4 ``mixed_query`` queries, or queries that share a Kleene sub-pattern (``sharing_workloads``,
    ``multi_query_workloads``: the shared paths of static and hamlet) under mixed semantics next to 0-2 of
    them."""
    if draw(st.booleans()):
        lines = [draw(mixed_query(f"q{i}")) for i in range(draw(st.integers(1, 4)))]
        # Siblings: a query again with another window (and semantics): graphs shared across windows
        # (greta's, hamlet's non-shared plan), or queries apart under other semantics.
        for i in range(draw(st.integers(0, 2))):
            line = draw(st.sampled_from(lines))
            head, _ = line.split(" WITHIN ", 1)
            head = re.sub(r"^\w+:", f"s{i}:", head)
            if draw(st.integers(0, 3)) == 0:
                head = re.sub(r" SEMANTICS [\w-]+", "", head)
                head = head.replace(" WHERE ", draw(st.sampled_from(SEMANTICS)) + " WHERE ", 1)
            sibling = (
                head + " " + draw(st.sampled_from(["WITHIN 25", "WITHIN 20 SLIDE 7", "WITHIN 6 SLIDE 2"]))
            )
            if parses("\n".join([*lines, sibling])):
                lines.append(sibling)
        return "\n".join(lines)
    shared = draw(st.one_of(sharing_workloads(), multi_query_workloads()))
    if draw(st.booleans()):
        # Windows of milliseconds: the kernel's microseconds take them over times in quarter seconds, and
        # over times in tenths (floats between two microseconds) as the microsecond below each.
        unit = draw(st.sampled_from([250, 300, 100]))
        shared = re.sub(
            r"(WITHIN|SLIDE) (\d+)", lambda m: f"{m.group(1)} {int(m.group(2)) * unit} ms", shared
        )
    lines = draw(with_semantics(shared, weight_any=3)).splitlines()
    lines += [draw(mixed_query(f"m{i}")) for i in range(draw(st.integers(0, 2)))]
    text = "\n".join(lines)
    assume(parses(text))
    return text


@st.composite
def mixed_attributes(draw) -> dict:
    out: dict = {}
    if draw(st.integers(0, 7)):
        out["x"] = draw(st.sampled_from([*VALUES, None]))
    if draw(st.integers(0, 9)):
        out["y"] = draw(st.sampled_from([-2, -1, 0, 1, 2, 3, 0.0, -0.0, 1.0, None]))
    out["s"] = draw(st.sampled_from(["u", "v", "u"]))
    if draw(st.integers(0, 7)):
        out["g"] = draw(st.sampled_from([1, 2, 2, 2.0, None]))
    out["k"] = draw(st.sampled_from(["p", "q"]))
    return out


@st.composite
def mixed_events(draw, types: str, max_events: int = 12, whole: bool = False) -> list[Event]:
    """Times from -6 to 14 in quarter seconds (whole seconds if ``whole``), many ties within and across
    types."""
    n = draw(st.integers(0, max_events))
    if whole:
        shift = draw(st.sampled_from([0, 0, 0, 1767600000]))
        times = sorted(shift + t for t in draw(st.lists(st.integers(-6, 14), min_size=n, max_size=n)))
    elif draw(st.integers(0, 3)):
        quarters = sorted(draw(st.lists(st.sampled_from(range(-24, 57)), min_size=n, max_size=n)))
        times = [q // 4 if q % 4 == 0 else q / 4 for q in quarters]
    else:
        # Today's times in seconds, stepped by tenths in floats: doubles just off their decimals, next to
        # millisecond window bounds.
        t: float = draw(st.sampled_from([1767600000.0, 1767600000.25, -1.05]))
        times = []
        for _ in range(n):
            t += draw(st.sampled_from([0, 0.1, 0.05, 0.25, 0.3, 1]))
            times.append(t)
    return [Event(draw(st.sampled_from(types)), t, draw(mixed_attributes())) for t in times]


@st.composite
def mixed_bursts(draw, types: str, max_events: int = 13, whole: bool = False) -> list[Event]:
    """Runs of one type (bursts: what static and hamlet share), at increasing times that sometimes repeat,
    in fractions of a second unless ``whole``."""
    out: list[Event] = []
    t: float = draw(st.sampled_from([0, -3, 1767600000]))
    steps = [0, 1, 1, 2] if whole else [0, 1, 0.5, 0.25, 0.1]
    while len(out) < max_events and draw(st.integers(0, 5)):
        event_type = draw(st.sampled_from(types))
        for _ in range(draw(st.integers(1, 5))):
            t += draw(st.sampled_from(steps))
            out.append(Event(event_type, t, draw(mixed_attributes())))
    return out[:max_events]


def stream_types(text: str) -> str:
    workload = parse_workload(text)
    positive = "".join(t for q in workload.queries for t in sorted(q.pattern.template.types))
    return positive * 3 + "".join(t for q in workload.queries for t in sorted(q.types)) * 2 + "Z"


MIXED_EXAMPLES = (
    settings(max_examples=int(os.environ["MIXED_EXAMPLES"]))
    if os.environ.get("MIXED_EXAMPLES")
    else lambda f: f
)


def csv_cell(value) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def csv_text(stream: list[Event]) -> str:
    lines = ["event_type,event_time," + ",".join(ATTRIBUTES)]
    for e in stream:
        lines.append(
            ",".join([e.type, csv_cell(e.time), *(csv_cell(e.attributes.get(a)) for a in ATTRIBUTES)])
        )
    return "\n".join(lines) + "\n"


def jsonl_rows(rows) -> list[dict]:
    out = []
    for row in rows:
        value = row.value
        out.append({"query": row.query, "window_start": row.window_start, "window_end": row.window_end,
                    "group": row.group, "aggregate": row.aggregate, "value": value,
                    "kind": exactly([row])[0][1]})  # fmt: skip
    return out


def cli_rows(tmp: str, text: str, events_path: str, strategy: str) -> list[dict]:
    workload_path, out_path = os.path.join(tmp, "w.hamlet"), os.path.join(tmp, "out.jsonl")
    with open(workload_path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        code = main(["evaluate", "--workload", workload_path, "--events", events_path, "--strategy", strategy,
                     "--output", out_path])  # fmt: skip
    assert code == 0
    with open(out_path, encoding="utf-8") as f:
        found = [json.loads(line) for line in f]
    for row in found:
        if row["value"] in ("inf", "-inf") and row["aggregate"].startswith(("SUM", "AVG")):
            row["value"] = float(row["value"])  # (a sum beyond double range, as the CLI writes it: README)
        value = row["value"]
        kind = "zero" if value == 0 and row["aggregate"].startswith(("MIN", "MAX")) else type(value).__name__
        row["kind"] = kind
    return found


def check_mixed(text: str, stream: list[Event], tmp: str | None = None) -> None:
    note(text)
    note(repr(stream))
    workload = parse_workload(text)
    reference = evaluate_bruteforce(workload, stream)
    shuffled = stream[::-1]  # (the API sorts the events, stably: equal times keep their order)
    shuffled = sorted(shuffled, key=lambda e: -e.time)
    for strategy in STRATEGIES:
        assert exactly(evaluate(workload, stream, strategy)) == exactly(reference), strategy
        assert evaluate(workload, shuffled, strategy) == reference, f"{strategy}, events out of order"
    table = table_of(stream)
    read = events_of(sorted_events(table), ATTRIBUTES)
    table_reference = reference
    if [typed(e) for e in read] != [typed(e) for e in stream]:
        table_reference = evaluate_bruteforce(workload, read)
    for strategy in STRATEGIES:
        found = finalize_table(workload, evaluate_table(workload, table, strategy))
        assert exactly(found) == exactly(table_reference), f"{strategy}, table"
    for query in workload.queries:
        if query.choice != "AND":
            found_trends = listed(workload, query.name, stream)
            assert found_trends == expected(query, stream), f"trends of {query.name}"
    if tmp is not None:
        csv_path = os.path.join(tmp, "e.csv")
        with open(csv_path, "w", encoding="utf-8") as f:
            f.write(csv_text(stream))
        # The CSV's times are its decimal texts, read exactly (``io.parse_time``): the float -1.05 + 0.25 is
        # written "-0.8" but lies below -0.8, so the window [-1.2, -0.8) holds it and not the CSV's -0.8.
        with open_csv(csv_path) as f:
            from_csv = read_events_csv(f, csv_path).events
        csv_reference = reference if from_csv == stream else evaluate_bruteforce(workload, from_csv)
        for strategy in STRATEGIES:
            assert normal(cli_rows(tmp, text, csv_path, strategy)) == normal(jsonl_rows(csv_reference)), (
                f"{strategy}, CLI csv"
            )
        parquet_path = os.path.join(tmp, "e.parquet")
        pq.write_table(table, parquet_path)
        assert normal(cli_rows(tmp, text, parquet_path, "hamlet")) == normal(jsonl_rows(table_reference)), (
            "CLI parquet"
        )


def normal(rows: list[dict]) -> list[tuple]:
    """JSON rows as comparable tuples: the value with its kind (an int is not a float), the group by Python
    equality (a group of 2 and one of 2.0 are one group: whichever value the first event had)."""
    return [(r["query"], r["window_start"], r["window_end"], sorted(r["group"].items()), r["aggregate"],
             r["value"], r["kind"]) for r in rows]  # fmt: skip


def table_of(stream: list[Event]) -> pa.Table:
    """As ``workloads.table_of``; a column of ints beyond 64 bits, or of ints and floats, is a column of
    floats (Python's float(int), the nearest double)."""
    columns = {
        "event_type": pa.array([e.type for e in stream], pa.string()),
        "event_time": pa.array([round(e.time * 1_000_000) for e in stream], pa.int64()).cast(
            pa.timestamp("us", "UTC")
        ),
    }
    for name in ATTRIBUTES:
        values = [e.attributes.get(name) for e in stream]
        numbers = [v for v in values if isinstance(v, (int, float))]
        if any(isinstance(v, int) and not -(2**63) <= v < 2**63 for v in numbers) or (
            any(isinstance(v, float) for v in numbers) and any(isinstance(v, int) for v in numbers)
        ):
            values = [float(v) if isinstance(v, int) else v for v in values]
        columns[name] = pa.array(values)
    return pa.table(columns)


@MIXED_EXAMPLES
@given(mixed_workloads(), st.data())
def test_mixed_workloads_equal_bruteforce_on_every_path(text, data):
    types = stream_types(text)
    stream = data.draw(st.one_of(mixed_events(types), mixed_bursts(types)))
    if data.draw(st.integers(0, 3)):
        check_mixed(text, stream)
        return
    with tempfile.TemporaryDirectory() as tmp:
        check_mixed(text, stream, tmp)


@MIXED_EXAMPLES
@given(st.one_of(mixed_workloads(), segment_workloads()), st.data())
def test_mixed_workloads_cut_into_time_segments_equal_bruteforce(text, data):
    if data.draw(st.booleans()):  # (queries whose segments compose, next to a mixed one)
        text += "\n" + data.draw(mixed_query("m"))
    workload = parse_workload(text)
    assume(segment_obstacle(workload) is None)
    types = stream_types(text)
    stream = data.draw(st.one_of(mixed_events(types, 13, whole=True), mixed_bursts(types, 14, whole=True)))
    note(text)
    note(repr(stream))
    table = table_of(stream)
    reference = evaluate_bruteforce(workload, events_of(sorted_events(table), ATTRIBUTES))
    pane = pane_multiple(workload)
    cuts = segment_cuts(data, [e.time for e in stream] or [0], pane, min_inner=0)
    for strategy in STRATEGIES:
        assert segmented(workload, table, cuts, strategy) == reference, strategy


@st.composite
def long_mixed_bursts(draw, types: str) -> list[Event]:
    """Long runs of one type (up to 40 events of a type the workload shares, B, mostly), a few other events
    between, times increasing by 0-2 s: bursts that hamlet's benefit model finds worth sharing."""
    out: list[Event] = []
    t = draw(st.sampled_from([0, -20, 1767600000]))
    for _ in range(draw(st.integers(2, 6))):
        event_type = draw(st.sampled_from("BBB" + types))
        for _ in range(draw(st.integers(1, 40)) if event_type == "B" else draw(st.integers(1, 3))):
            t += draw(st.sampled_from([0, 1, 1, 1, 2]))
            attributes = draw(mixed_attributes())
            if draw(st.integers(0, 3)):  # (mostly one stream partition: long bursts in it)
                attributes.update(k="p", g=1)
            out.append(Event(event_type, t, attributes))
    return out


@MIXED_EXAMPLES
@given(
    st.one_of(mixed_workloads(), sharing_workloads(), sharing_workloads(), multi_query_workloads()), st.data()
)
def test_long_bursts_equal_greta_on_python_graphs(text, data):
    """Past the oracle's reach (bursts of up to 40 events): every strategy, through the API and the table,
    equals GRETA on Python's graphs (held to the oracle on small streams above), windows stretched so that
    bursts fit in them."""
    text = re.sub(r"(WITHIN|SLIDE) (\d+)", lambda m: f"{m.group(1)} {int(m.group(2)) * 8}", text)
    stream = data.draw(long_mixed_bursts(stream_types(text)))
    check_against_python_graphs(text, stream, ATTRIBUTES, table_of)
