"""Input that used to end in a traceback (issue 20, item 9) is an error naming the file, the line and the
column: deep nesting, huge literals, windows of 10^30 s, bytes that are not UTF-8, huge or infinite CSV
values, far-away event times. A byte order mark is read."""

from __future__ import annotations

import math

import pytest

from hamlet import QueryError, parse_workload
from hamlet.analysis.template import Template, Transition, build_template
from hamlet.cli import main
from hamlet.explain import explain
from hamlet.language.parser import parse_workload_text
from hamlet.runtime.aggregates import VectorAlgebra

TAIL = " WITHIN 1 s"


def deep_condition(depth: int) -> str:
    return "q: RETURN COUNT(*) PATTERN A WHERE " + "(" * depth + "A.x < 1" + ")" * depth + TAIL


def deep_pattern(depth: int) -> str:
    return "q: RETURN COUNT(*) PATTERN " + "SEQ(" * depth + "A" + ")" * depth + TAIL


TOO_MANY_PLACES = (
    "the pattern has more than 1024 places (each event type as often as it is written, P{n,} n times P, each "
    "operand of OR / AND)"
)
# (text, line, column, message): all formerly RecursionError, ValueError or OverflowError
HOSTILE = [
    (deep_condition(150), 1, 100, "nested more than 64 levels deep"),
    (deep_pattern(5000), 1, 284, "nested more than 64 levels deep"),
    ("q: RETURN COUNT(*) PATTERN A" + "+" * 5000 + TAIL, 1, 28, "nested more than 64 levels deep"),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < 1" + " + 1" * 5000 + TAIL, 1, 19794,
     "nested more than 64 levels deep"),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < " + "- " * 5000 + "1" + TAIL, 1, 168,
     "nested more than 64 levels deep"),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < " + "9" * 100_000 + TAIL, 1, 42,
     "number 9999999999999999999999999999999999999999... has 100000 characters (at most 4300)"),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < 1e400" + TAIL, 1, 42, "number 1e400 is beyond the range of a double"),
    # P{n,} unrolls n copies of P (32^3 places here), OR takes each operand: bounded before any state is built.
    ("q: RETURN COUNT(*) PATTERN " + " OR ".join(["SEQ(A{20,}, B+)"] * 60) + TAIL, 1, 28,
     TOO_MANY_PLACES),
    ("q: RETURN COUNT(*) PATTERN " + " OR ".join(["SEQ(A, B+)"] * 3000) + TAIL, 1, 28 + 64 * len("SEQ(A, B+) OR "),
     "the pattern has 3000 operands of OR (at most 64): split the query into several"),
    ("q: RETURN COUNT(*) PATTERN SEQ(B, ((A{32,}){32,}){32,})" + TAIL, 1, 28,
     TOO_MANY_PLACES),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < 1e-999999999" + TAIL, 1, 42,
     "number 1e-999999999 has an exponent beyond ±400"),
    ("q: RETURN COUNT(*) PATTERN A WHERE A.x < ²" + TAIL, 1, 42, "unexpected character '²'"),
    ("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN " + "1" + "0" * 30 + " s", 1, 46,
     f"1{'0' * 30} s is longer than 100 years (3155760000 s), the longest window or slide"),
    ("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 s SLIDE 101 years", 1, 60,
     "unknown time unit 'years'; use ms, s|sec|second(s), min|minute(s), h|hour(s) or d|day(s)"),
    ("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 s SLIDE 36526 d", 1, 56,
     "36526 d is longer than 100 years (3155760000 s), the longest window or slide"),
    # (a table's window bounds are microseconds: evaluate_table gave [0, 1.000001) for this window)
    ("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1.0000005", 1, 46,
     "1.0000005 is not a whole number of microseconds, the finest time of a window's bounds"),
    ("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1.5 ms SLIDE 0.0005 ms", 1, 59,
     "0.0005 ms is not a whole number of microseconds, the finest time of a window's bounds"),
    # (the kernel decides a step across NOTs by their outcomes, a 64-bit set: 2^6)
    ("q: RETURN COUNT(*) PATTERN SEQ(A, " + ", ".join(f"NOT N{i}" for i in range(7)) + ", B)" + TAIL, 1, 83,
     ("more than 6 NOTs side by side between two parts (the engine decides each step across them by which of "
      "them matched)")),
]  # fmt: skip


@pytest.mark.parametrize(
    "text, line, column, message", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))]
)
def test_hostile_workloads_are_query_errors_with_a_position(text, line, column, message):
    with pytest.raises(QueryError) as caught:
        parse_workload(text)
    assert (caught.value.line, caught.value.column, caught.value.message) == (line, column, message)


def test_the_deepest_accepted_nesting_still_parses_and_analyses():
    parse_workload(deep_condition(62))
    parse_workload(deep_pattern(63))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_workload_that_is_not_utf8_is_an_error_at_its_byte_and_a_bom_is_read(tmp_path, capsys):
    path = tmp_path / "w.hamlet"
    path.write_bytes(b"q: RETURN COUNT(*)\n  PATTERN A \xff+ WITHIN 1 s\n")
    assert run(capsys, "check", str(path)) == (1, "", (f"error: {path}:2:13: byte 0xff is not UTF-8 (workloads are "
                                                      "UTF-8 text)\n"))  # fmt: skip
    path.write_bytes(b"\xef\xbb\xbfq: RETURN COUNT(*) PATTERN A+ WITHIN 1 s\n")
    assert run(capsys, "check", str(path)) == (0, f"{path}: 1 queries OK (q)\n", "")


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["", "bom"])
@pytest.mark.parametrize("newline", [b"\n", b"\r", b"\r\n"], ids=["lf", "cr", "crlf"])
def test_a_byte_that_is_not_utf8_is_at_the_line_and_column_the_lexer_counts(tmp_path, capsys, newline, bom):
    """Lines end at CR, LF or CRLF and columns count characters (é is 2 bytes, € 3), as the lexer's do: the
    same position as the lexer gives a character where the byte is."""
    lines = [
        b"q: RETURN COUNT(*) -- \xc3\xa9",
        b"  PATTERN A WHERE A.s = '\xc3\xa9\xe2\x82\xac' \xff+ WITHIN 1 s",
        b"",
    ]
    path = tmp_path / "w.hamlet"
    path.write_bytes(bom + newline.join(lines))
    assert run(capsys, "check", str(path)) == (1, "", (f"error: {path}:2:30: byte 0xff is not UTF-8 (workloads are "
                                                      "UTF-8 text)\n"))  # fmt: skip
    path.write_bytes(bom + newline.join(lines).replace(b"\xff", b"$"))
    assert run(capsys, "check", str(path)) == (1, "", (
        f"error: {path}:2:30: query 'q': unexpected character '$'\n"
        "    PATTERN A WHERE A.s = 'é€' $+ WITHIN 1 s\n"
        f"  {' ' * 29}^\n"
    ))  # fmt: skip


def test_a_huge_line_is_shown_around_the_column_only(tmp_path, capsys):
    path = tmp_path / "w.hamlet"
    path.write_text("q: RETURN COUNT(*) PATTERN A WHERE A.x < " + "9" * 100_000 + TAIL)
    status, _, err = run(capsys, "check", str(path))
    assert status == 1 and len(err) < 400
    assert err.splitlines()[1:] == [
        "  q: RETURN COUNT(*) PATTERN A WHERE A.x < 99999999999999999999999999999999999999999999999999999999999...",
        " " * 43 + "^",
    ]


WORKLOAD = "q: RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B+) WITHIN 1 d SLIDE 1 d\n"


@pytest.mark.parametrize(
    "data, message",
    [
        (b"A,1,\xff\nB,2,1\n", "e.csv:2, column 3: byte 0xff is not UTF-8"),
        (b"A,1,1e400\nB,2,1\n", "e.csv:2, column 3: x '1e400' is beyond the range of a double"),
        (b"A,1," + b"9" * 5000 + b"\nB,2,1\n",
         ("e.csv:2, column 3: x '9999999999999999999999999999999999999999...' has 5000 digits (an integer may have "
         "at most 4300)")),
        (b"A,1e300,1\nB,2,1\n", ("e.csv:2, column 2: event_time 1e+300 lies outside the years 1 to 9999 "
         "(-62135596800 to 253402300799 s)")),
        (b"A,1,\"" + b"x" * 200_000 + b"\"\nB,2,1\n", "e.csv:2: not CSV: field larger than field limit (131072)"),
    ],
    ids=["byte", "1e400", "digits", "time", "field"],
)  # fmt: skip
def test_bad_csv_values_are_errors_naming_line_and_column(tmp_path, capsys, data, message):
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_bytes(b"event_type,event_time,x\n" + data)
    argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert run(capsys, *argv) == (1, "", f"error: {tmp_path / message}\n")


def test_a_csv_with_a_bom_and_windows_beyond_year_9999_evaluate(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_bytes(b"\xef\xbb\xbfevent_type,event_time,x\nA,9999-12-31T00:00:00Z,1\n"
                                     b"B,9999-12-31T00:00:01Z,2\n")  # fmt: skip
    argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    status, out, err = run(capsys, *argv)
    assert (status, err) == (0, "")
    assert out.splitlines()[2:] == [  # the window ends in year 10000: shown in seconds
        "q      [9999-12-31T00:00:00Z, 253402300800)  -      COUNT(*)   1",
        "q      [9999-12-31T00:00:00Z, 253402300800)  -      SUM(A.x)   1",
    ]


@pytest.mark.parametrize(
    "bom, codec, encoding",
    [
        (b"\xff\xfe", "utf-16-le", "UTF-16"),
        (b"\xfe\xff", "utf-16-be", "UTF-16"),
        (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32"),
        (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"],
)
def test_a_utf16_or_utf32_file_with_its_bom_is_named_so_not_a_byte_at_column_1(
    tmp_path, capsys, bom, codec, encoding
):
    """A CSV saved as "Unicode text" (UTF-16 with its byte order mark) was "e.csv:1, column 1: byte 0xff is
    not UTF-8" (UTF-16 BE: 0xfe); it is named for what it is, by evaluate, trends, the loader of the events
    table and a stream opened strictly, and so is such a workload. A UTF-8 byte order mark is read."""
    import io

    from hamlet import EventError
    from hamlet.io import read_events_csv
    from jobs.load_events import LoadError, open_csv, parse_csv

    text = "event_type,event_time,x\nA,1,1\nB,2,2\n"
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    path = tmp_path / "e.csv"
    path.write_bytes(bom + text.encode(codec))
    message = f"the file is {encoding} (it starts with a {encoding} byte order mark); it must be UTF-8"
    for argv in (["evaluate"], ["trends", "--query", "q"]):
        assert run(capsys, *argv, "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)) == (
            1,
            "",
            f"error: {path}:1: {message}\n",
        )
    with pytest.raises(LoadError) as caught, open_csv(str(path)) as f:
        parse_csv(f, str(path), {"x": "double"})
    assert str(caught.value) == f"{path}:1: the header cannot be read: {message}"
    with pytest.raises(EventError) as error:
        read_events_csv(
            io.TextIOWrapper(io.BytesIO(path.read_bytes()), encoding="utf-8", newline=""), "e.csv"
        )
    assert str(error.value) == f"e.csv:1: {message}"
    workload = tmp_path / "u.hamlet"
    workload.write_bytes(bom + WORKLOAD.encode(codec))
    assert run(capsys, "check", str(workload)) == (1, "", f"error: {workload}:1:1: {message}\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # UTF-8 with its byte order mark: read
    argv = ["--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]
    table = (
        "query  window      group  aggregate  value\n"
        "-----  ----------  -----  ---------  -----\n"
        "q      [0, 86400)  -      COUNT(*)   1\n"
        "q      [0, 86400)  -      SUM(A.x)   1\n"
    )
    assert run(capsys, "evaluate", *argv) == (0, table, "")
    listing = "window [0, 86400) group -: 1 trend\n  A@1 {x=1}, B@2 {x=2}\n"
    assert run(capsys, "trends", "--query", "q", *argv) == (0, listing, "")


def test_a_seq_of_200_optional_types_has_each_transition_once_in_pattern_order():
    """SEQ(Z, T0?, ..., T199?, Y) links each item to every later one (n^2 transitions): built keyed by
    (source, target), in the order the pattern implies them (explain and the golden files show that order)."""
    optional = [f"T{i}" for i in range(200)]
    workload = parse_workload(
        f"q: RETURN COUNT(*) PATTERN SEQ(Z, {', '.join(t + '?' for t in optional)}, Y) WITHIN 10"
    )
    template = workload.queries[0].pattern.template
    expected = [("Z", t) for t in [*optional, "Y"]]
    expected += [(s, t) for i, s in enumerate(optional) for t in [*optional[i + 1 :], "Y"]]
    assert len(expected) == 20301
    assert [(t.source, t.target, t.label) for t in template.transitions] == [
        (s, t, "SEQ") for s, t in expected
    ]
    assert (template.starts, template.ends) == (("Z",), ("Y",))
    assert template.transition("T3", "T150") == template.transitions[expected.index(("T3", "T150"))]
    assert template.transition("T150", "T3") is None


@pytest.mark.parametrize(
    "pattern, transitions",
    [
        ("(SEQ(E?, D?))+", "E -SEQ-> D, D -+-> E, D -+-> D, E -+-> E"),  # E -+-> D: E -SEQ-> D already
        ("(A+)+", "A -+-> A"),
        (
            "SEQ(A, (SEQ(B, C?))*, D)",
            "B -SEQ-> C, C -+-> B, B -+-> B, A -SEQ-> B, A -SEQ-> D, C -SEQ-> D, B -SEQ-> D",
        ),
    ],
)
def test_a_pair_of_types_implied_twice_keeps_its_first_transition(pattern, transitions):
    template = build_template(
        parse_workload_text(f"q: RETURN COUNT(*) PATTERN {pattern} WITHIN 1").queries[0].pattern
    )
    assert template.describe().partition("transitions: ")[2] == transitions


def test_the_template_keeps_its_transitions_by_pair_and_the_first_of_a_pair_wins():
    """build_template hands over the dict it builds the transitions in; a template made from transitions
    alone (merged, position templates) indexes them itself, the first transition of a pair winning."""
    template = build_template(
        parse_workload_text("q: RETURN COUNT(*) PATTERN (SEQ(E?, D?))+ WITHIN 1").queries[0].pattern
    )
    assert list(template.by_pair.items()) == [((t.source, t.target), t) for t in template.transitions]
    assert template.transition("E", "D") == Transition("E", "D", "SEQ")  # (E -+-> D is implied after it)
    made = Template(("A", "B"), ("A",), ("B",), (Transition("A", "B", "SEQ"), Transition("A", "B", "+")))
    assert made.by_pair == {("A", "B"): Transition("A", "B", "SEQ")}
    assert (made.transition("A", "B"), made.transition("B", "A")) == (Transition("A", "B", "SEQ"), None)
    # The index is derived: equal templates are equal (and hash alike) whoever built it.
    again = Template(template.types, template.starts, template.ends, template.transitions)
    assert again == template and hash(again) == hash(template) and again.by_pair == template.by_pair


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"], ids=["lf", "cr", "crlf"])
def test_positions_and_query_texts_are_exact_after_100k_blank_lines(newline):
    queries = [
        f"q{i}: RETURN COUNT(*){newline}  PATTERN SEQ(A, B+) WITHIN {i + 1} s{newline}" for i in range(1000)
    ]
    text = newline * 100_000 + "".join(queries)
    syntax = parse_workload_text(text)
    assert len(syntax.queries) == 1000
    last = syntax.queries[-1]
    assert (last.name, last.line, last.column) == ("q999", 101_999, 1)
    assert last.text == f"q999: RETURN COUNT(*){newline}  PATTERN SEQ(A, B+) WITHIN 1000 s"
    with pytest.raises(QueryError) as caught:
        parse_workload(text + "bad: RETURN COUNT(*) PATTERN A WITHIN 1 zz")
    error = caught.value
    assert (error.query, error.line, error.column) == ("bad", 102_001, 41)
    assert error.excerpt() == "  bad: RETURN COUNT(*) PATTERN A WITHIN 1 zz\n" + " " * 42 + "^"


def test_a_nul_or_an_rtl_override_in_a_workload_file_is_shown_escaped(tmp_path, capsys):
    path = tmp_path / "w.hamlet"
    path.write_text(
        "q: RETURN COUNT(*)\rPATTERN SEQ(\u202eA,\x00 B+) WITHIN 10 s\n", encoding="utf-8", newline=""
    )
    assert run(capsys, "check", str(path)) == (1, "", (
        f"error: {path}:2:13: query 'q': unexpected character '\\u202e'\n"
        "  PATTERN SEQ(\\u202eA,\\x00 B+) WITHIN 10 s\n"
        "              ^\n"
    ))  # fmt: skip


BIG = "1" + "0" * 400  # 10^400: past the largest double (about 1.8 * 10^308), within a CSV's 4300 digits
BIG_EVENTS = f"event_type,event_time,x\nA,1,5\nA,2,-7\nA,3,{BIG}\nA,4,-{BIG}\nB,5,0\n"
# (predicate, trends of SEQ(A+, B) over a1..a4 then b5): an int past the largest double where arithmetic
# takes it for a double is an infinity of its sign, as a float result past it is (1e308 * 10).
BEYOND_DOUBLES = [
    (f"A.x / ({BIG} * 1.0) = 0", 3),  # a1 a2: 5 / inf, -7 / inf are 0.0 and -0.0; ±10^400 / inf is NaN
    (f"A.x * 1.5 > {BIG}", 1),  # a3: inf > 10^400, compared exactly as an int and a float are
    ("A.x + 1e308 * 10 > 0", 7),  # a1 a2 a3: x + inf; -10^400 + inf is -inf + inf, NaN
    ("A.x / 3 < 0", 3),  # a2 a4: -7 / 3, and -10^400 / 3, an int quotient past the largest double: -inf
    ("A.x % 1.5 != A.x % 1.5", 3),  # a3 a4: ±inf % 1.5 is NaN, unequal to itself
    ("A.x * 1.0 < NEXT(A).x", 6),  # 4 alone, a1 a3, a2 a3 (5.0 < 10^400; inf, -inf against ±10^400)
    ("A.x % 1.5 <= NEXT(A).x % 1.5", 5),  # 4 alone, a1 a2 (0.5 <= 0.5): a NaN key is no rank in the index
    (f"A.x - {BIG} * 1.0 < NEXT(A).x", 11),  # 4 alone, 5 pairs (none from a3: NaN), a1 a2 a3, a1 a2 a4
]


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
@pytest.mark.parametrize(
    "where, trends", BEYOND_DOUBLES, ids=[f"beyond{i}" for i in range(len(BEYOND_DOUBLES))]
)
def test_an_int_past_the_largest_double_in_float_arithmetic_evaluates_without_a_traceback(
    tmp_path, capsys, strategy, where, trends
):
    """``hamlet evaluate`` raised OverflowError ("int too large to convert to float") from the Python engine,
    which evaluates what the kernel declines: a literal beyond 127 bits, an attribute beyond 64."""
    (tmp_path / "w.hamlet").write_text(f"q: RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE {where} WITHIN 10\n")
    (tmp_path / "e.csv").write_text(BIG_EVENTS)
    argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert run(capsys, *argv, "--strategy", strategy) == (0, (
        "query  window   group  aggregate  value\n"
        "-----  -------  -----  ---------  -----\n"
        f"q      [0, 10)  -      COUNT(*)   {trends}\n"
    ), "")  # fmt: skip


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_an_int_past_the_largest_double_counts_alike_in_process_and_from_arrow(tmp_path, strategy):
    """The same counts through ``hamlet.evaluate``; and with the big int only in the workload, over a Parquet
    file, whose int64 attributes the kernel reads (it leaves the query to Python for its literal)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet import evaluate, evaluate_table, finalize_table
    from hamlet.io import read_events_csv

    events = read_events_csv(io.StringIO(BIG_EVENTS), "e.csv").events
    for where, trends in BEYOND_DOUBLES:
        rows = evaluate(f"q: RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE {where} WITHIN 10", events, strategy)
        assert [r.value for r in rows] == [trends], where
    path = str(tmp_path / "e.parquet")
    pq.write_table(pa.table({"event_type": list("AAB"), "event_time": [1, 2, 3], "x": [5, -7, 0]}), path)
    for where, trends in (
        (f"A.x / ({BIG} * 1.0) = 0", [3]),
        (f"A.x * 1.5 > -{BIG} * 1.0", [3]),
        (f"A.x * 1.5 > {BIG}", []),
        (f"A.x / 3 > -{BIG} / 3", [3]),
    ):
        workload = f"q: RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE {where} WITHIN 10"
        table = pq.read_table(path)
        assert [r.value for r in evaluate(workload, table.to_pylist(), strategy)] == trends, where
        partials = evaluate_table(workload, table, strategy, source=path)
        assert [r.value for r in finalize_table(workload, partials)] == trends, where


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_bools_compare_with_bools_only_in_the_index_and_the_scan_alike(strategy):
    """Bools are a kind of their own (as MIN and MAX have them): ``=`` between two bools holds where they are
    equal, between a bool and a text or a number never (``!=`` always), ordering across kinds never. The
    ordered edge index ranked no bool (the scan matched True = True: 0 trends or 1 by the path), and an
    ordering of a text with a bool ended in a TypeError ("'<' not supported") in the scan and the oracle."""
    from functools import partial

    from oracle import evaluate_bruteforce

    from hamlet import Event, evaluate
    from hamlet.api import evaluate_with
    from hamlet.runtime.greta import run_greta

    stream = [Event("D", 1, {"x": True, "s": "u"}), Event("C", 2, {"y": True}), Event("C", 3, {"y": 1})]
    for where, trends in [
        ("D.x = NEXT(C).y", 1),  # (d1, c2): True = True; True is no 1
        ("D.x != NEXT(C).y", 1),  # (d1, c3)
        ("D.x <= NEXT(C).y", 1),  # (d1, c2)
        ("D.s < NEXT(C).y", 0),  # a text orders with no bool
        ("D.s != NEXT(C).y", 2),
        ("D.x * 1 = NEXT(C).y", 0),  # arithmetic on a bool is null
    ]:
        workload = parse_workload(f"q: RETURN COUNT(*) PATTERN SEQ(D, C) WHERE {where} WITHIN 10")
        expected = [trends] if trends else []
        assert [r.value for r in evaluate_bruteforce(workload, stream)] == expected, where
        assert [r.value for r in evaluate(workload, stream, strategy)] == expected, where
        scan = partial(run_greta, plain_scan=True)
        assert [r.value for r in evaluate_with(workload, stream, scan)] == expected, where


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_a_sum_of_floats_and_an_int_past_the_largest_double_is_an_infinity_not_a_traceback(strategy):
    """SUM and AVG over an attribute that holds floats keep the exact sum of every value and round it once:
    an int of 400 digits beside 1.5 sums to the float nearest 10^400 + 3, inf (and -inf for -10^400). The
    check for an infinity took the int for a double: OverflowError ("int too large to convert to float")."""
    from oracle import evaluate_bruteforce

    from hamlet import Event, evaluate

    workload = parse_workload("q: RETURN SUM(D.x), AVG(D.x), MAX(D.x) PATTERN D+ WITHIN 10")
    for big in (10**400, -(10**400)):
        stream = [Event("D", 1, {"x": big}), Event("D", 2, {"x": 1.5})]
        expected = [math.inf if big > 0 else -math.inf] * 2 + [max(big, 1.5)]
        assert [r.value for r in evaluate_bruteforce(workload, stream)] == expected
        assert [r.value for r in evaluate(workload, stream, strategy)] == expected


NAN = float("nan")
# (query, events, its rows' values): a value SUM, AVG, MIN or MAX cannot compute with (a NaN, an infinity,
# a text, two kinds) in an event of no trend that a row reports: its rows are the others' (each strategy
# used to stop at it with an EvaluationError, where it first met the value: in a trend not yet ended).
NOT_IN_A_TREND = [
    ("SUM(D.x) PATTERN SEQ(D, C)", [("D", 1, 1), ("C", 3, None), ("D", 5, NAN)], [1, 1]),
    ("AVG(D.x) PATTERN SEQ(D, C)", [("D", 1, 2), ("C", 3, None), ("D", 3, math.inf)], [1, 2.0]),
    ("MIN(A.x) PATTERN SEQ(A+, B)", [("A", 1, 1), ("B", 2, None), ("A", 3, "u")], [1, 1]),
    ("AVG(A.x) PATTERN SEQ(A+, B)", [("A", 1, 1), ("B", 2, None), ("A", 3, "u")], [1, 1.0]),
    ("MAX(A.x) PATTERN SEQ(A+, B)", [("A", 1, 1), ("B", 2, None), ("A", 3, NAN)], [1, 1]),
]


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
@pytest.mark.parametrize("query, events, values", NOT_IN_A_TREND, ids=[f"unread{i}" for i in range(5)])
def test_a_value_an_aggregate_cannot_read_stops_only_the_rows_that_read_it(strategy, query, events, values):
    """README: a NaN or an infinity under SUM or AVG, a NaN under MIN or MAX (and a text, two kinds) is an
    error naming the event, where a reported row reads it, as the oracle has it; an event of no trend of the
    window stops nothing, on every path (the kernel, Python's graphs, the shared path). With one more event
    that makes a trend of it, the same query is the error."""
    from functools import partial

    from oracle import evaluate_bruteforce

    from hamlet import EvaluationError, Event, evaluate
    from hamlet.api import evaluate_with
    from hamlet.runtime.greta import run_greta
    from hamlet.runtime.shared import run_shared

    workload = parse_workload(f"q: RETURN COUNT(*), {query} WITHIN 10")
    stream = [Event(t, time, {} if x is None else {"x": x}) for t, time, x in events]
    paths = [partial(evaluate, strategy=strategy), partial(evaluate_with, executor=partial(run_greta, native=False)),
             partial(evaluate_with, executor=partial(run_shared, sharing=strategy, native=False)), evaluate_bruteforce]  # fmt: skip
    for path in paths:
        assert [r.value for r in path(workload, stream)] == values, path
    ended = [*stream, Event(events[1][0], 9, {})]  # (the last event now in a trend)
    for path in paths:
        with pytest.raises(EvaluationError):
            path(workload, ended)


def test_wide_workloads_analyse_and_explain_in_one_pass():
    """A SEQ of 10,000 types, an equivalence list of 10,000 attributes, 5,000 NOTs each between two parts, a
    RETURN of 4,000 sums: each used to cost a search of a list per item (parsing, the template, the kernel's
    type numbers and Kleene positions, the aggregate fields), minutes at the 1 MiB a workload file may hold."""
    types = [f"A{i}" for i in range(10_000)]
    wide = parse_workload(
        f"long: RETURN COUNT(*) PATTERN SEQ({', '.join(types)}, B+) WITHIN 1 s\n"
        f"keyed: RETURN COUNT(*) PATTERN B+ WHERE [{', '.join(f'a{i}' for i in range(10_000))}, a7] WITHIN 1 s\n"
        f"negated: RETURN COUNT(*) PATTERN SEQ({', '.join(f'A{i}, NOT N{i}' for i in range(5_000))}, B) WITHIN 1 s\n"
        f"summed: RETURN {', '.join(f'SUM(B.x{i}), AVG(B.x{i})' for i in range(2_000))} PATTERN SEQ(A0, B+) WITHIN 1 s"
    )
    seq, equivalence, nots, sums = wide.queries
    assert seq.pattern.template.types == (*types, "B")
    pairs = {(t.source, t.target) for t in seq.pattern.template.transitions}
    assert pairs == {*zip(types, [*types[1:], "B"]), ("B", "B")}
    assert equivalence.equivalence == tuple(f"a{i}" for i in range(10_000))
    assert [(n.previous, n.following) for n in nots.pattern.negations] == [
        (f"A{i}", f"A{i + 1}" if i < 4_999 else "B") for i in range(5_000)
    ]
    assert len(sums.aggregates) == 4_000
    # (a SUM and an AVG of one attribute share its fields: the sum, the non-null count, the floats' count)
    assert len(VectorAlgebra.of(sums, []).fields) == 1 + 3 * 2_000
    text = explain(wide)
    assert (
        "Kleene sub-patterns: B+" in text
        and "negative sub-pattern NOT N4999 (previous: A4999, following: B)" in text
    )
