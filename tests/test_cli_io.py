"""The command line and the events CSV: formats, exit codes, and errors that name the line."""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import contextmanager
from fractions import Fraction

import hamlet_native
import pytest

from hamlet import EventError, evaluate_table
from hamlet.cli import main
from hamlet.io import read_events_csv
from hamlet.partials import int_text

WORKLOAD = "q1: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WHERE [k] WITHIN 10\n"


def read(text: str):
    return read_events_csv(io.StringIO(text), "e.csv")


def test_csv_values_times_and_nulls():
    parsed = read("event_type,event_time,v,s,k\nA,1,7,x,\nB,2.5,1e3,,1\nB,2026-01-05T08:00:00,-3,12ab,2\n")
    assert parsed.iso_times
    a, b1, b2 = parsed.events
    assert (a.type, a.time, dict(a.attributes)) == ("A", 1, {"v": 7, "s": "x", "k": None})
    assert (b1.time, b1.get("v"), b1.get("s")) == (2.5, 1000.0, None)
    assert (b2.time, b2.get("v"), b2.get("s")) == (1767600000, -3, "12ab")
    assert not read("event_type,event_time\nA,1\n").iso_times


def test_iso_times_finer_than_a_microsecond_round_as_decimal_seconds_do():
    """Python's ISO parser cut the digits past the microsecond, where decimal seconds round half to even: the
    same instant written both ways fell into two windows (9.9999999 in [10, 20), its ISO text in [0, 10))."""
    written = [("9.9999999", "00:00:09.9999999Z"), ("19.9999995", "00:00:19,9999995+00:00"),
               ("29.9999985", "00:00:29.9999985"), ("3.1234564999", "00:00:03.1234564999Z")]  # fmt: skip
    rows = "".join(f'A,{decimal}\nB,"1970-01-01T{iso}"\n' for decimal, iso in written)  # (quoted: a comma)
    times = [e.time for e in read("event_type,event_time\n" + rows).events]
    assert times == [10, 10, 20, 20, Fraction(29_999_998, 10**6), Fraction(29_999_998, 10**6),
                     Fraction(3_123_456, 10**6), Fraction(3_123_456, 10**6)]  # fmt: skip


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("", "e.csv", "the file is empty"),
        (
            "type,event_time\nA,1\n",
            "e.csv:1",
            "the header has no event_type column (found: type, event_time)",
        ),
        # (a header's control characters escaped: its bytes reached the terminal, which cleared the screen; and
        # at most 20 names of 20,000 listed)
        (
            "type,time\x1b[2J,x\nA,1,2\n",
            "e.csv:1",
            "the header has no event_type column (found: type, time\\x1b[2J, x)",
        ),
        (
            ",".join(f"c{i}" for i in range(20_000)) + "\n",
            "e.csv:1",
            (
                "the header has no event_type column (found: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, "
                "c13, c14, c15, c16, c17, c18, c19 and 19980 more)"
            ),
        ),
        ("event_type,event_time,v,v\nA,1,2,3\n", "e.csv:1", "more than one column named v"),
        ("event_type,event_time, ,v\nA,1,2,3\n", "e.csv:1", "column 3 of the header has no name"),
        ("event_type,event_time,v\nA,1,2\nB,2\n", "e.csv:3", "2 fields, but the header has 3"),
        ("event_type,event_time\nA,1\n,2\n", "e.csv:3", "event_type is empty"),
        # (the loader of the events table rejects the row: the engine took "B\x00" for a type no query names)
        ("event_type,event_time\nA,1\nB\x00,2\n", "e.csv:3", "event_type 'B\\x00' holds a NUL byte"),
        # (and an attribute's: the loader quarantines the row, so the engine must not count it either)
        (
            "event_type,event_time,driver\nA,1,d1\nB,2,d\x001\n",
            "e.csv:3, column 3",
            "driver holds a NUL byte",
        ),
        ("event_type,event_time\nA,1\nB,\n", "e.csv:3, column 2", "event_time is empty"),
        # (an ISO time's offset can take it out of the years the engine takes: it passed, with a window before
        # the year 1)
        (
            "event_type,event_time\nA,0001-01-01T00:00:00+01:00\n",
            "e.csv:2, column 2",
            (
                "event_time 0001-01-01T00:00:00+01:00 lies outside the times the engine takes, "
                "0001-01-01T00:00:00+00:00 to 9999-12-31T23:59:59+00:00"
            ),
        ),
        (
            "event_type,event_time\nA,1\nB,yesterday\n",
            "e.csv:3, column 2",
            "'yesterday' is neither a number of seconds",
        ),
        # A quote left open took every later line into one field of a record with the header's width: the
        # events after it were lost without a word.
        (
            'event_type,event_time,v\nA,1,2\nA,5,"oops\nB,7,2\nA,8,1\n',
            "e.csv:3",
            "a quoted field starts here and is never closed (its closing quote is missing)",
        ),
        ('event_type,event_time,v\nA,1,"2"3\n', "e.csv:2", "not CSV: ',' expected after '\"'"),
    ],
)
def test_bad_csv_names_the_line(text, where, message):
    with pytest.raises(EventError) as caught:
        read(text)
    assert caught.value.where == where
    assert message in caught.value.message


def test_check_and_explain(tmp_path, capsys):
    path = tmp_path / "w.hamlet"
    path.write_text(WORKLOAD + "q2: RETURN COUNT(*) PATTERN SEQ(C, NOT D, B+) WHERE [k] WITHIN 10 SLIDE 5\n")
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 2 queries OK (q1, q2)\n"
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    for line in [
        "    negative sub-pattern NOT D (previous: C, following: B): D",
        "  pane (gcd of all windows and slides): 5 s",
        "    B -+-> B   {q1, q2}",
        "    B+   {q1, q2}",
        "    {q1, q2}: shares B+ by {q1, q2}; partitioned by k; pane 5 s",
        # NOT D guards C -> B, before the B events: both graphs take B's bursts at once.
        "    B+: graphlets shared by {q1, q2}",
        "    {q1, q2}: one graph for queries that differ only in windows or aggregates: none",
    ]:
        assert line in out.splitlines()
    # Both graphs, q2's NOT included, run on the compiled kernel.
    assert out.splitlines().count("  trend graph: compiled (native/), local predicates too") == 2
    path.write_text(WORKLOAD + "q2: RETURN AVG(B.v) PATTERN SEQ(A, B+) WHERE [k] WITHIN 20 SLIDE 5\n")
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "    {q1, q2}: one graph for queries that differ only in windows or aggregates: {q1, q2}"
        in out.splitlines()
    )


def test_explain_lists_a_query_by_the_lexers_lines_with_separators_escaped(tmp_path, capsys):
    """Only CR, LF and CRLF end a line (as the lexer and error excerpts count them); a form feed, RS, NEL or
    U+2028 in a comment or a string stays in its line, shown escaped as an excerpt shows it."""
    path = tmp_path / "w.hamlet"
    path.write_bytes(
        "q: RETURN COUNT(*) -- form\ffeed, RS\x1e, NEL\x85\r\n  PATTERN A+ WHERE A.s = 'line\u2028sep'\rWITHIN 1 s\n"
        .encode()
    )  # fmt: skip
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out.split("\n")
    assert out[:5] == [
        "Query q",
        "  | q: RETURN COUNT(*) -- form\\x0cfeed, RS\\x1e, NEL\\x85",
        "  |   PATTERN A+ WHERE A.s = 'line\\u2028sep'",
        "  | WITHIN 1 s",
        "  pattern: A+",
    ]
    assert "  local predicate on A: A.s = 'line\\u2028sep'" in out


def test_explain_position_templates_run_alone(tmp_path, capsys):
    """OR, AND and a type at several places (dissertation §12): explain prints the states, says the graph is
    compiled (each event at every state of its type) and shared with nobody, not even with an equal query of
    other windows, and that its segments are not cut."""
    path = tmp_path / "w.hamlet"
    path.write_text(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+) OR SEQ(C, B+) WITHIN 10\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) OR SEQ(C, B+) WITHIN 20 SLIDE 10\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(A+, B) AND A{2,} WITHIN 10\n"
    )
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 4 queries OK (q1, q2, q3, q4)\n"
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    for line in [
        "    states: A#1 (A events), B#1 (B events), C#1 (C events), B#2 (B events)",
        "    start A#1 | C#1, end B#1 (operands 1) | B#2 (operands 2)",
        # a1 starts both; after two a's A{2,} has matched and SEQ(A+, B) waits for its b
        "    states: A#1 (A events), A#2 (A events), B#1 (B events)",
        "    start A#1, end A#2 (operands 2) | B#1 (operands 1)",
        "  shares nothing: position states (a type at several places, P{n,}, OR or AND): its graph is its own",
        "    {q2}: shares nothing; partitioned by none; pane 10 s",
        "    {q3}: shares nothing; partitioned by none; pane 10 s",
    ]:
        assert line in out, line
    on_states = "  trend graph: compiled (native/) on its states, each event at every state of its type"
    assert out.count(on_states + ", local predicates too") == 2  # (q2, q3)
    assert (on_states + "; it sums C_i, C_j, C_ij per window and group, the pairs are counted from them at the "
            "end, local predicates too") in out  # fmt: skip  # (q4)
    assert not any("in Python" in line for line in out)
    assert out.count("    {q4}: evaluated sequentially: position states (a type at several places, P{n,}, OR or AND: "
                     "dissertation §12)") == 1  # fmt: skip
    assert "  trend graph: compiled (native/), local predicates too" in out  # (q1)
    path.write_text("q1: RETURN COUNT(*), AVG(B.x)\n  PATTERN SEQ(A, B+) AND SEQ(C, B+) WITHIN 10\n")
    assert main(["check", str(path)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error: {path}:1:22: query 'q1': AVG(B.x) is not defined for P AND Q: a conjunction matches pairs of "
        "trends, and the dissertation (§12) defines only their number, COUNT(*)"
    )


def test_check_reports_file_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.hamlet"
    path.write_text("q1: RETURN COUNT(*)\n  PATTERN SEQ(A, B+\n  WITHIN 10\n")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"error: {path}:3:3: query 'q1': expected ',' or ')' in SEQ(...), found 'WITHIN'",
        "    WITHIN 10",
        "    ^",
    ]


def test_evaluate_errors_exit_1_with_a_message(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_text("event_type,event_time,v,k\nA,1,2,1\nB,x,3,1\n")
    assert (
        main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]) == 1
    )
    assert capsys.readouterr().err == f"error: {tmp_path / 'e.csv'}:3, column 2: event_time 'x' is neither a number of " \
        "seconds nor an ISO-8601 time\n"  # fmt: skip
    assert main(["evaluate", "--workload", str(tmp_path / "missing.hamlet"), "--events", "e.csv"]) == 1
    assert "cannot read workload" in capsys.readouterr().err


def test_values_min_cannot_order_are_an_error_not_a_traceback(tmp_path, capsys):
    """A text in partition k=1 and a number in k=2 first meet when the group's partials merge."""
    (tmp_path / "w.hamlet").write_text("q: RETURN MIN(B.x) PATTERN B+ WHERE [k] WITHIN 10\n")
    (tmp_path / "e.csv").write_text("event_type,event_time,k,x\nB,1,1,a\nB,2,2,3\n")
    assert (
        main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]) == 1
    )
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'e.csv'}: MIN/MAX: 'a' and 3 are not comparable (numbers, texts and bools do not "
        "mix)\n"
    )


def test_jsonl_writes_a_sum_past_the_largest_double_as_the_string_inf(tmp_path):
    """a1 a2 a3 (x = 1.5e308, -1.5e308, 1.5e308): seven trends, each event in four: SUM = 6e308 rounds to
    inf, AVG = 6e308 / 12 = 5e307. Python's json wrote Infinity, which is no JSON (jq read it as 1.797e308)."""
    (tmp_path / "w.hamlet").write_text("q: RETURN SUM(A.x), AVG(A.x) PATTERN A+ WITHIN 10\n")
    (tmp_path / "e.csv").write_text("event_type,event_time,x\nA,1,1.5e308\nA,2,-1.5e308\nA,3,1.5e308\n")
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main([*args, "--output", str(tmp_path / "o.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(r["aggregate"], r["value"]) for r in rows] == [("SUM(A.x)", "inf"), ("AVG(A.x)", 5e307)]


def test_table_shortens_huge_counts_but_jsonl_keeps_every_digit(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN A+ WITHIN 1000\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\n" + "".join(f"A,{t}\n" for t in range(100)))
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[2].endswith("COUNT(*)   126765…(31 digits)")
    assert main([*args, "--output", str(tmp_path / "o.jsonl")]) == 0
    assert (tmp_path / "o.jsonl").read_text() == (
        '{"query": "q", "window_start": 0, "window_end": 1000, "group": {}, "aggregate": "COUNT(*)", '
        f'"value": {2**100 - 1}}}\n'
    )


def test_counts_beyond_4300_digits_are_written_in_full(tmp_path, capsys):
    # Python's str(int) refuses more than 4300 digits; 2^15000 - 1 has 4516.
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN A+ WITHIN 100000\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\n" + "".join(f"A,{t}\n" for t in range(15000)))
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main([*args, "--output", str(tmp_path / "o.jsonl")]) == 0
    line = (tmp_path / "o.jsonl").read_text()
    digits = line[line.index('"value": ') + 9 : -2]
    with unlimited_int_digits():
        assert digits == str(2**15000 - 1) and len(digits) == 4516
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[2].endswith("(4516 digits)")


def test_int_text_matches_str_within_and_beyond_the_limit():
    values = [0, -7, 10**4299, 3**20000, -(7**9000), 10**12000 - 1, 10**12000, 2**60000 + 12345]
    with unlimited_int_digits():
        expected = [str(v) for v in values]
    assert [int_text(v) for v in values] == expected


@contextmanager
def unlimited_int_digits():
    """The reference str(int), with the interpreter's 4300-digit limit lifted for the test only."""
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(previous)


def test_evaluate_reads_parquet_and_arrow_files_on_the_columnar_path(tmp_path, capsys):
    """The same rows as from the CSV of the same events, printed with ISO times when event_time is a
    timestamp."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import feather

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 10\n")
    (tmp_path / "e.csv").write_text("event_type,event_time,x\nA,1,\nB,2,5\nB,3,7\n")
    table = pa.table({"event_type": ["A", "B", "B"], "event_time": [1, 2, 3], "x": [None, 5, 7]})
    pq.write_table(table, tmp_path / "e.parquet")
    feather.write_feather(table, tmp_path / "e.arrow")
    printed = []
    for name in ("e.csv", "e.parquet", "e.arrow"):
        assert (
            main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / name)])
            == 0
        )
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] == printed[2]
    assert printed[0].splitlines()[2:] == [  # A B2, A B3, A B2 B3: 3 trends, their B.x summing to 5 + 7 + 12
        "q      [0, 10)  -      COUNT(*)   3",
        "q      [0, 10)  -      SUM(B.x)   24",
    ]
    stamped = table.set_column(1, "event_time", pa.array([1, 2, 3], pa.timestamp("s", "UTC")))
    pq.write_table(stamped, tmp_path / "t.parquet")
    assert (
        main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "t.parquet")])
        == 0
    )
    assert "1970-01-01T00:00:00" in capsys.readouterr().out


def test_an_attribute_no_column_of_the_events_file_has_is_an_error_at_its_line_and_column(tmp_path, capsys):
    """``SUM(T.duraton)`` over a file without that column was null on every event, exit 0 (a misspelled
    GROUP-BY attribute: "no trend matched"). Each use is named at its line and column, with the columns the
    file has, for CSV and Parquet alike, by evaluate and trends. (Their types are read cell by cell, so only
    names are checked; an empty column is a column.)"""
    import pyarrow as pa
    import pyarrow.parquet as pq

    workload = tmp_path / "w.hamlet"
    workload.write_text(
        "q: RETURN T.district, SUM(T.duraton)\n  PATTERN SEQ(A, T+) GROUP-BY T.district WITHIN 10\n"
    )
    (tmp_path / "e.csv").write_text("event_type,event_time,district,duration\nA,1,d1,\nT,2,d1,\n")
    pq.write_table(pa.table({"event_type": ["A", "T"], "event_time": [1, 2], "district": ["d1", "d1"],
                             "duration": pa.array([None, None], pa.int64())}), tmp_path / "e.parquet")  # fmt: skip
    for name in ("e.csv", "e.parquet"):
        path = tmp_path / name
        for command in (["evaluate"], ["trends", "--query", "q"]):
            assert main([*command, "--workload", str(workload), "--events", str(path)]) == 1
            assert capsys.readouterr().err == (
                f"error: {workload}:1:27: query 'q': T.duraton: the events file {path} has no attribute duraton "
                "(did you mean duration?); its attributes: district, duration\n"
                "  q: RETURN T.district, SUM(T.duraton)\n"
                "                            ^\n"
            )
    workload.write_text(
        "q: RETURN T.district, SUM(T.duration)\n  PATTERN SEQ(A, T+) GROUP-BY T.district WITHIN 10\n"
    )
    assert main(["evaluate", "--workload", str(workload), "--events", str(tmp_path / "e.csv")]) == 0
    assert capsys.readouterr().out.splitlines()[2:] == ["q      [0, 10)  district=d1  SUM(T.duration)  null"]
    for name in ("e.csv", "e.parquet"):  # (trends reads what evaluate reads)
        assert (
            main(["trends", "--query", "q", "--workload", str(workload), "--events", str(tmp_path / name)])
            == 0
        )
        assert (
            capsys.readouterr().out
            == "window [0, 10) group district='d1': 1 trend\n  A@1 {district='d1'}, T@2 {district='d1'}\n"
        )


def test_a_columnar_file_that_cannot_be_read_is_an_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 10\n")
    (tmp_path / "bad.parquet").write_text("not parquet")
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events"]
    assert main([*args, str(tmp_path / "bad.parquet")]) == 1
    assert capsys.readouterr().err.startswith(f"error: cannot read events {tmp_path / 'bad.parquet'}: ")
    assert main([*args, str(tmp_path / "missing.arrow")]) == 1
    assert "cannot read events" in capsys.readouterr().err
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"event_type": ["A"]}), tmp_path / "no_time.parquet")
    assert main([*args, str(tmp_path / "no_time.parquet")]) == 1
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'no_time.parquet'}: the table has no event_time column (found: event_type)\n"
    )
    # (two columns of one name: which one a query reads would be a guess; Parquet's reader and Arrow's each
    # stumbled on it in words of their own)
    from pyarrow import feather

    twice = pa.Table.from_arrays([pa.array(["A"]), pa.array([1]), pa.array([2]), pa.array(["g"]), pa.array([3])],
                                 names=["event_type", "event_time", "x", "g", "x"])  # fmt: skip
    pq.write_table(twice, tmp_path / "twice.parquet")
    feather.write_feather(twice, tmp_path / "twice.arrow")
    for name in ("twice.parquet", "twice.arrow"):
        assert main([*args, str(tmp_path / name)]) == 1
        assert capsys.readouterr().err == f"error: {tmp_path / name}: more than one column named x\n"
    with pytest.raises(EventError, match="the events table: more than one column named x"):
        evaluate_table("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10", twice)
    # An IPC file whose string offsets point outside their data (a byte-flipped file) crashed the process in
    # the first compute function that followed them (exit 139, no message): validated as it is read.
    import numpy as np

    offsets = pa.py_buffer(np.array([0, -2_000_000_000, 2], np.int32).tobytes())
    types = pa.StringArray.from_buffers(2, offsets, pa.py_buffer(b"AA"))
    feather.write_feather(pa.table({"event_type": types, "event_time": [1, 2]}), tmp_path / "flipped.arrow",
                          compression="uncompressed")  # fmt: skip
    pq.write_table(pa.table({"event_type": ["A", "A"], "event_time": [2, 1], "event_id": [[1], [2]]}),
                   tmp_path / "listed.parquet")  # fmt: skip
    assert main([*args, str(tmp_path / "listed.parquet")]) == 1  # (it was exit 70: Arrow sorts no list)
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'listed.parquet'}: event_id is list<element: int64>, not a value such as a text or a "
        "number\n"
    )
    assert main([*args, str(tmp_path / "flipped.arrow")]) == 1
    assert capsys.readouterr().err == (
        f"error: cannot read events {tmp_path / 'flipped.arrow'}: Column 0: In chunk 0: Invalid: Offset invariant "
        "failure: non-monotonic offset at slot 1: -2000000000 < 0\n"
    )


@pytest.mark.parametrize("suffix", ["parquet", "arrow"])
@pytest.mark.parametrize(
    "columns, message",
    [
        ({"event_type": ["A", "B", None], "event_time": [1, 2, 3]}, "row 3: event_type is empty"),
        ({"event_type": ["A", " ", "B"], "event_time": [1, 2, 3]}, "row 2: event_type is empty"),
        (
            {"event_type": ["A", " B\x00 ", "B"], "event_time": [1, 2, 3]},
            "row 2: event_type 'B\\x00' holds a NUL byte",
        ),
        (
            {"event_type": ["A", "B"], "event_time": [1, 2], "driver": ["d1", "d\x001"]},
            "row 2: driver holds a NUL byte",
        ),
        ({"event_type": ["A", "B"], "event_time": [1.0, float("nan")]}, "row 2: event_time is empty"),
        (
            {"event_type": ["A", "B"], "event_time": [10**12, 2]},
            "row 1: event_time 1000000000000 lies outside the years 1 to 9999 (-62135596800 to 253402300799 s)",
        ),
    ],
    ids=["null-type", "blank-type", "nul-type", "nul-attribute", "nan-time", "far-time"],
)
def test_a_bad_row_of_a_columnar_file_names_the_file_and_its_row_from_1(
    tmp_path, capsys, suffix, columns, message
):
    """As the CSV reader names file:line: the file, then its row counted from 1 (not the table's index)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import feather

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n")
    path = tmp_path / f"e.{suffix}"
    table = pa.table(columns)
    if suffix == "parquet":
        pq.write_table(table, path)
    else:
        feather.write_feather(table, path)
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
    assert capsys.readouterr() == ("", f"error: {path}, {message}\n")


def test_every_input_path_names_a_bad_row_from_1_and_its_file_when_there_is_one(tmp_path, capsys):
    """The second event's time is empty: each path names it as the second of its input (a CSV by its line,
    after the header), as the columnar reader does; a DataFrame's row by position, not by index label."""
    import math

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet import Event, evaluate, evaluate_table

    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
    columns = {"event_type": ["A", "B", "B"], "event_time": [1.0, None, 3.0]}
    dicts = [{"event_type": t, "event_time": s} for t, s in zip(columns["event_type"], columns["event_time"])]

    def error(events) -> str:
        with pytest.raises(EventError) as caught:
            evaluate(workload, events)
        return str(caught.value)

    assert error(pd.DataFrame(columns, index=[10, 20, 30])) == "the DataFrame, row 2: event_time is empty"
    assert error(dicts) == "event 2: event_time is empty"
    assert error([Event("A", 1), Event("B", math.nan), Event("B", 3)]) == "event 2: event_time is empty"
    assert (
        error([{"event_type": "A", "event_time": 1}, 5])
        == "event 2: expected an Event or a mapping, found int"
    )
    assert error([{"event_type": "A", "event_time": 1}, {"event_time": 2}]) == "event 2: missing event_type"
    with pytest.raises(EventError) as caught:
        evaluate_table(workload, pa.table(columns))
    assert str(caught.value) == "the events table, row 2: event_time is empty"
    (tmp_path / "w.hamlet").write_text(workload)
    pq.write_table(pa.table(columns), tmp_path / "e.parquet")
    (tmp_path / "e.csv").write_text("event_type,event_time\nA,1\nB,\nB,3\n")
    for name, where in (("e.parquet", ", row 2"), ("e.csv", ":3, column 2")):
        path = tmp_path / name
        assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
        assert capsys.readouterr() == ("", f"error: {path}{where}: event_time is empty\n")


@pytest.mark.parametrize("missing", ["event_type", "event_time"])
def test_every_input_path_names_a_missing_event_type_or_event_time_column_as_a_column(
    tmp_path, capsys, missing
):
    """A DataFrame without the column said "the DataFrame, row 1: missing event_type" (and with no rows
    gave no error at all); it now names the column as the CSV reader and the Arrow path do, and the file
    when there is one (``source``, a Parquet or Arrow file, a CSV by its header line)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import feather

    from hamlet import evaluate, evaluate_table

    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
    columns = {"event_type": ["A", "B"], "event_time": [1, 2], "v": [1, 2]}
    columns["kind" if missing == "event_type" else "time"] = columns.pop(missing)
    found = ", ".join(columns)
    frame = pd.DataFrame(columns)

    def error(call, events, **source) -> str:
        with pytest.raises(EventError) as caught:
            call(workload, events, **source)
        return str(caught.value)

    assert error(evaluate, frame) == f"the DataFrame: no {missing} column (found: {found})"
    assert error(evaluate, frame[:0]) == f"the DataFrame: no {missing} column (found: {found})"
    assert error(evaluate, frame, source="e.csv") == f"e.csv: no {missing} column (found: {found})"
    assert error(evaluate, pd.DataFrame()) == "the DataFrame: no event_type column (found: none)"
    assert error(evaluate_table, pa.table(columns)) == (
        f"the events table: the table has no {missing} column (found: {found})"
    )
    assert error(evaluate_table, pa.table(columns), source="e.parquet") == (
        f"e.parquet: the table has no {missing} column (found: {found})"
    )
    (tmp_path / "w.hamlet").write_text(workload)
    pq.write_table(pa.table(columns), tmp_path / "e.parquet")
    feather.write_feather(pa.table(columns), tmp_path / "e.arrow")
    frame.to_csv(tmp_path / "e.csv", index=False)
    for name, message in (
        ("e.parquet", f": the table has no {missing} column (found: {found})"),
        ("e.arrow", f": the table has no {missing} column (found: {found})"),
        ("e.csv", f":1: the header has no {missing} column (found: {found})"),
    ):
        path = tmp_path / name
        assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
        assert capsys.readouterr() == ("", f"error: {path}{message}\n")


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "event_type is empty"),
        (float("nan"), "event_type is empty"),
        ("", "event_type is empty"),
        (" \t", "event_type is empty"),
        (1, "event_type is int, not text"),
        (1.5, "event_type is float, not text"),
        ("B\x00", "event_type 'B\\x00' holds a NUL byte"),
        ("\x00", "event_type '\\x00' holds a NUL byte"),
    ],
    ids=["none", "nan", "empty", "blank", "int", "float", "nul", "only-nul"],
)
def test_every_input_path_refuses_an_event_type_that_is_not_text_or_is_blank(value, message):
    """The second event's type is bad: a DataFrame, dicts and Event objects refuse it as the Arrow path does
    (its null and blank rows by the same words, a number as no text), where they took None or NaN for the
    type "nan" and a blank one for a type. A NUL byte in it, which the loader of the events table rejects,
    every path took for a type (one no query can name: the counts of a contiguous query, whose stream holds
    every type, differed from those of the tools that refuse it)."""
    import pandas as pd
    import pyarrow as pa

    from hamlet import Event, evaluate, evaluate_table

    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"

    def error(events) -> str:
        with pytest.raises(EventError) as caught:
            evaluate(workload, events)
        return str(caught.value)

    types = ["A", value, "B"]
    assert (
        error(pd.DataFrame({"event_type": types, "event_time": [1, 2, 3]}))
        == f"the DataFrame, row 2: {message}"
    )
    assert (
        error([{"event_type": t, "event_time": s} for t, s in zip(types, [1, 2, 3])]) == f"event 2: {message}"
    )
    assert error([Event(t, s) for t, s in zip(types, [1, 2, 3])]) == f"event 2: {message}"  # type: ignore[arg-type]
    if isinstance(value, str) or value is None:  # (an Arrow column of text holds no number: see below)
        with pytest.raises(EventError) as caught:
            evaluate_table(workload, pa.table({"event_type": types, "event_time": [1, 2, 3]}))
        assert str(caught.value) == f"the events table, row 2: {message}"


def test_every_input_path_takes_an_event_type_without_the_whitespace_around_it(tmp_path, capsys):
    """ " A" is the type A on every path, as the loader of the events table writes it (it strips the cell):
    the CSV reader stripped it, while Parquet and Arrow files, Arrow tables, DataFrames, mappings and Events
    kept " A", a type no pattern names (CSV: 1 trend; the others: no rows)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import feather

    from hamlet import Event, evaluate, evaluate_table, finalize_table
    from hamlet.events import TYPE_SPACE
    from jobs.load_events import parse_csv

    workload = "q: RETURN COUNT(*), COUNT(B) PATTERN SEQ(A, B+) WITHIN 10\n"
    # one space, a tab, a no-break space, an ideographic space and a line separator around the types
    types, times = [" A", "B\t", "\xa0B\u3000", "\u2028B"], [1, 2, 3, 4]
    columns = {"event_type": types, "event_time": times}
    expected = [("COUNT(*)", 7), ("COUNT(B)", 12)]

    def values(rows) -> list:
        return [(r.aggregate, r.value) for r in rows]

    assert values(evaluate(workload, pd.DataFrame(columns))) == expected
    assert (
        values(evaluate(workload, [{"event_type": t, "event_time": s} for t, s in zip(types, times)]))
        == expected
    )
    assert (
        values(evaluate(workload, [Event(t, s) for t, s in zip(types, times)])) == expected
    )  # (Events as they are)
    assert values(evaluate(workload, [Event(t, float(s)) for t, s in zip(types, times)])) == expected
    assert values(finalize_table(workload, evaluate_table(workload, pa.table(columns)))) == expected
    dictionary = pa.table({"event_type": pa.array(types).dictionary_encode(), "event_time": times})
    assert values(finalize_table(workload, evaluate_table(workload, dictionary))) == expected
    (tmp_path / "w.hamlet").write_text(workload)
    pq.write_table(pa.table(columns), tmp_path / "e.parquet")
    feather.write_feather(pa.table(columns), tmp_path / "e.arrow")
    (tmp_path / "e.csv").write_text(
        "event_type,event_time\n" + "".join(f"{t},{s}\n" for t, s in zip(types, times))
    )
    for name in ("e.csv", "e.parquet", "e.arrow"):
        args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / name)]
        assert main([*args, "--output", str(tmp_path / "o.jsonl")]) == 0
        rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
        assert [(r["aggregate"], r["value"]) for r in rows] == expected, name
    with open(tmp_path / "e.csv", newline="") as f:  # the loader writes the same types into the events table
        assert [r["event_type"] for r in parse_csv(f, "e.csv", {}).rows] == ["A", "B", "B", "B"]
    # the characters stripped are exactly those str.strip() strips, inside a type none is
    assert TYPE_SPACE == "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    inner = [Event("A B", 1), Event("C", 2)]
    assert values(evaluate("q: RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 10\n", inner)) == []


def test_a_null_event_type_in_a_dataframe_is_no_type_named_nan():
    """pandas holds a missing text as NaN, which became the type "nan" and matched the pattern nan+."""
    import numpy as np
    import pandas as pd

    from hamlet import evaluate

    frame = pd.DataFrame({"event_type": ["nan", np.nan], "event_time": [1, 2]})
    with pytest.raises(EventError) as caught:
        evaluate("q: RETURN COUNT(*) PATTERN nan+ WITHIN 10\n", frame)
    assert str(caught.value) == "the DataFrame, row 2: event_type is empty"
    assert [r.value for r in evaluate("q: RETURN COUNT(*) PATTERN nan+ WITHIN 10\n", frame[:1])] == [1]


def test_a_number_for_event_type_is_refused_by_every_path_that_can_hold_one():
    """As the Arrow path refuses a column of numbers (a CSV's cells are all text)."""
    import pandas as pd
    import pyarrow as pa

    from hamlet import evaluate, evaluate_table

    workload = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
    for events, message in (
        (
            pd.DataFrame({"event_type": [7, 8], "event_time": [1, 2]}),
            "the DataFrame, row 1: event_type is int, not text",
        ),
        (
            pd.DataFrame({"event_type": [True], "event_time": [1]}),
            "the DataFrame, row 1: event_type is bool, not text",
        ),
        ([{"event_type": b"A", "event_time": 1}], "event 1: event_type is bytes, not text"),
    ):
        with pytest.raises(EventError) as caught:
            evaluate(workload, events)
        assert str(caught.value) == message
    for column, kind in (([7, 8], "int64"), ([1.5, 2.5], "double"), ([True, False], "bool")):
        with pytest.raises(EventError) as caught:
            evaluate_table(workload, pa.table({"event_type": column, "event_time": [1, 2]}))
        assert str(caught.value) == f"the events table: event_type is {kind}, not text"


@pytest.mark.parametrize(
    "query",
    [
        "q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) GROUP-BY g WITHIN 10\n",
        "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g] WITHIN 10\n",
    ],
    ids=["group-by", "equivalence"],
)
def test_a_partition_column_of_lists_in_a_columnar_file_is_an_error_naming_the_file(tmp_path, capsys, query):
    """The kernel's partition codes refuse the column (not a row: every value in it is a list), naming the
    file as ``checked`` does; a table passed in memory is still "the events table"."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet import evaluate_table

    table = pa.table({"event_type": ["A", "B"], "event_time": [1, 2], "g": [[1], [1]]})
    (tmp_path / "w.hamlet").write_text(query)
    pq.write_table(table, tmp_path / "e.parquet")
    path = tmp_path / "e.parquet"
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
    assert capsys.readouterr() == ("", (  # (Parquet names a list's values "element", Arrow "item")
        f"error: {path}: g is a list<element: int64> column: GROUP-BY and equivalence attributes take single "
        "values (numbers, text, times)\n"
    ))  # fmt: skip
    with pytest.raises(EventError) as caught:
        evaluate_table(query, table)
    assert str(caught.value) == (
        "the events table: g is a list<item: int64> column: GROUP-BY and equivalence attributes take single "
        "values (numbers, text, times)"
    )


@pytest.mark.parametrize(
    "aggregate, message",
    [
        ("SUM(B.v)", "SUM/AVG over B.v: the B event at time 2 has non-numeric value 'x'"),
        ("AVG(B.v)", "SUM/AVG over B.v: the B event at time 2 has non-numeric value 'x'"),
        ("MAX(B.v)", "MIN/MAX over B.v: the B event at time 3 has 2, not comparable with 'x'"),
    ],
    ids=["sum", "avg", "max"],
)
def test_a_value_an_aggregate_cannot_take_names_the_file_and_the_event(tmp_path, capsys, aggregate, message):
    """The event by type and time (the engine reads events in time order, not in the file's), after the file
    it was read from, as a bad row names its file; an event list in memory names none."""
    from hamlet import EvaluationError, evaluate
    from hamlet.io import read_events_csv

    workload = f"q: RETURN COUNT(*), {aggregate} PATTERN SEQ(A, B+) WITHIN 10\n"
    (tmp_path / "w.hamlet").write_text(workload)
    path = tmp_path / "e.csv"
    path.write_text("event_type,event_time,v\nB,3,2\nA,1,1\nB,2,x\n")
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
    assert capsys.readouterr() == ("", f"error: {path}: {message}\n")
    with open(path) as f:
        events = read_events_csv(f, str(path)).events
    with pytest.raises(EvaluationError) as caught:
        evaluate(workload, events)
    assert str(caught.value) == message


@pytest.mark.parametrize("suffix", ["parquet", "arrow"])
def test_a_value_the_kernel_leaves_to_python_names_the_columnar_file_and_the_event(tmp_path, capsys, suffix):
    """A text under SUM and a NaN under MIN: the kernel leaves their partitions to the Python engine, whose
    errors now name the file as ``checked``'s do; a table in memory names none."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import feather

    from hamlet import EvaluationError, evaluate_table

    path = tmp_path / f"e.{suffix}"
    for column, aggregate, message in (
        (["1", "x", "2"], "SUM(B.v)", "SUM/AVG over B.v: the B event at time 2 has non-numeric value 'x'"),
        ([1.0, float("nan"), 2.0], "MIN(B.v)", "MIN/MAX over B.v: the B event at time 2 has NaN"),
    ):
        table = pa.table({"event_type": ["A", "B", "B"], "event_time": [1, 2, 3], "v": column})
        if suffix == "parquet":
            pq.write_table(table, path)
        else:
            feather.write_feather(table, path)
        workload = f"q: RETURN COUNT(*), {aggregate} PATTERN SEQ(A, B+) WITHIN 10\n"
        (tmp_path / "w.hamlet").write_text(workload)
        assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
        assert capsys.readouterr() == ("", f"error: {path}: {message}\n")
        with pytest.raises(EvaluationError) as caught:
            evaluate_table(workload, table)
        assert str(caught.value) == message


def test_a_list_for_group_by_on_the_python_engine_names_the_file_and_the_event(tmp_path, capsys):
    """A query the kernel does not take (an edge predicate's literal beyond 127 bits) keeps the whole table on
    the Python engine, whose partitioning finds the list (``columnar.codes`` finds it where the kernel runs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet import evaluate, evaluate_table

    workload = (
        f"q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE B.v < NEXT(B).v + {2**130} GROUP-BY g WITHIN 10\n"
    )
    table = pa.table({"event_type": ["B", "A"], "event_time": [0.2, 0.1], "g": [[1], [1]], "v": [1, 2]})
    (tmp_path / "w.hamlet").write_text(workload)
    path = tmp_path / "e.parquet"
    pq.write_table(table, path)
    message = (
        "the A event at time 0.1: g = ([1],): GROUP-BY and equivalence attributes take single values (numbers, "
        "text, times)"
    )
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(path)]) == 1
    assert capsys.readouterr() == ("", f"error: {path}, {message}\n")
    with pytest.raises(EventError) as caught:
        evaluate_table(workload, table, source="t.parquet")
    assert str(caught.value) == f"t.parquet, {message}"
    with pytest.raises(EventError) as caught:
        evaluate(workload, table.to_pylist(), source="t.jsonl")
    assert str(caught.value) == f"t.jsonl, {message}"
    with pytest.raises(EventError) as caught:
        evaluate_table(workload, table)
    assert str(caught.value) == message


def test_output_and_event_paths_that_cannot_be_used_are_errors_not_tracebacks(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\nA,1\nB,2\n")
    (tmp_path / "folder.parquet").mkdir()
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events"]
    assert main([*args, str(tmp_path / "e.csv"), "--output", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"error: cannot write output {tmp_path}: Is a directory\n"
    assert main([*args, str(tmp_path / "e.csv"), "--output", str(tmp_path / "no" / "o.jsonl")]) == 1
    assert (
        capsys.readouterr().err
        == f"error: cannot write output {tmp_path / 'no' / 'o.jsonl'}: No such file or directory\n"
    )
    assert main([*args, str(tmp_path / "missing.parquet")]) == 1
    assert (
        capsys.readouterr().err
        == f"error: cannot read events {tmp_path / 'missing.parquet'}: No such file or directory\n"
    )
    assert main([*args, str(tmp_path / "folder.parquet")]) == 1
    assert capsys.readouterr().err == (
        f"error: cannot read events {tmp_path / 'folder.parquet'}: is a directory\n"
    )


def test_devices_fifos_and_huge_workloads_are_refused_before_any_read(tmp_path, capsys):
    """/dev/zero never ends and a FIFO blocks until someone writes: neither may make a command hang."""
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_text("event_type,event_time,v,k\nA,1,2,1\n")
    os.mkfifo(tmp_path / "fifo")
    special = "not a regular file (a device, a FIFO or a socket)"
    for path in ("/dev/zero", str(tmp_path / "fifo")):
        assert main(["check", path]) == 1
        assert capsys.readouterr().err == f"error: cannot read workload {path}: {special}\n"
        for events in (path, path + ".parquet") if path == "/dev/zero" else (path,):
            argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", events]
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert (
                err
                == f"error: cannot read events {events}: "
                + (special if events == path else "No such file or directory")
                + "\n"
            )
        assert (
            main(["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", path, "--query", "q1"]) == 1
        )
        assert capsys.readouterr().err == f"error: cannot read events {path}: {special}\n"
    (tmp_path / "huge.hamlet").write_text(WORKLOAD + " " * (1 << 20))
    assert main(["check", str(tmp_path / "huge.hamlet")]) == 1
    assert capsys.readouterr().err == (
        f"error: cannot read workload {tmp_path / 'huge.hamlet'}: larger than 1 MiB (a workload is queries, a few "
        "hundred bytes each)\n"
    )


def test_check_against_what_is_no_events_table_is_an_error_not_a_traceback(tmp_path, capsys):
    import pyarrow as pa
    from deltalake import write_deltalake

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\nA,1\n")
    write_deltalake(str(tmp_path / "other"), pa.table({"x": [1]}))
    check = ["check", str(tmp_path / "w.hamlet"), "--events-table"]
    assert main([*check, str(tmp_path / "e.csv")]) == 1
    assert capsys.readouterr().err.startswith(f"error: cannot read a Delta table at {tmp_path / 'e.csv'}: ")
    assert main([*check, str(tmp_path / "other")]) == 1
    assert capsys.readouterr().err == (
        f"error: the Delta table at {tmp_path / 'other'} is no events table: it has no event_type and no "
        "event_time column\n"
    )
    # (event_time as seconds: `check` passed it, and the job failed in Spark on its first hour's filter)
    write_deltalake(str(tmp_path / "seconds"), pa.table({"event_type": ["A"], "event_time": [1]}))
    assert main([*check, str(tmp_path / "seconds")]) == 1
    assert capsys.readouterr().err == (
        f"error: the Delta table at {tmp_path / 'seconds'} has an event_time of type long: events tables hold "
        "timestamps, as `hamlet load-events` and `hamlet generate` write them\n"
    )


def test_a_bound_raised_past_what_the_machine_holds_is_an_error_not_a_traceback(tmp_path):
    """WITHIN 1 d SLIDE 1 ms puts each event in 86,400,000 windows: refused unless --max-windows-per-event is
    raised, and then the memory runs out (here capped at 700 MB, as a container's limit would)."""
    import resource
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 d SLIDE 1 ms\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\nA,1\nB,2\n")
    command = [str(Path(sys.executable).parent / "hamlet"), "evaluate", "--workload", str(tmp_path / "w.hamlet"),
               "--events", str(tmp_path / "e.csv"), "--max-windows-per-event", "999999999999"]  # fmt: skip

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))

    done = subprocess.run(
        command, check=False, capture_output=True, text=True, timeout=120, preexec_fn=capped
    )
    assert (done.returncode, done.stderr) == (1, "error: out of memory\n")


@pytest.mark.parametrize(
    ("bug", "said"),
    [
        (
            hamlet_native.PanicException("index out of bounds: the len is 0 but the index is 0"),
            "PanicException: index out of bounds: the len is 0 but the index is 0",
        ),
        (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ],
    ids=["kernel panic", "python bug"],
)
def test_a_bug_of_ours_is_a_one_line_internal_error_not_a_traceback(tmp_path, capsys, monkeypatch, bug, said):
    """No input is known to reach one (each found was fixed, with its regression test): this is the net for the
    next. A kernel panic arrives as PyO3's PanicException, a BaseException that ``except Exception`` misses."""
    import hamlet.cli

    def evaluate(*args, **kwargs):
        raise bug

    monkeypatch.setattr(hamlet.cli, "evaluate", evaluate)
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_text("event_type,event_time,v,k\nA,1,2,1\nB,2,3,1\n")
    args = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main(args) == 70
    assert capsys.readouterr().err == (
        f"error: internal error in hamlet ({said}); please report it with the command, the workload and the "
        "events\n"
    )


def test_a_minimum_of_timestamps_or_bytes_is_its_text_in_json_lines(tmp_path, capsys):
    """JSON has no timestamp or bytes: such a MIN or MAX is written as its text, as a group's key is (the
    writer stopped with Python's TypeError)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*), MAX(B.at), MIN(B.tag) PATTERN B+ WITHIN 10\n")
    at = pa.array([2, 1], pa.int64()).cast(pa.timestamp("s", "UTC"))
    pq.write_table(pa.table({"event_type": ["B", "B"], "event_time": [1, 2], "at": at, "tag": [b"b", b"a"]}),
                   tmp_path / "e.parquet")  # fmt: skip
    argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.parquet")]
    assert main([*argv, "--output", str(tmp_path / "o.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["value"] for r in rows] == [3, "1970-01-01 00:00:02+00:00", "b'a'"]


def test_a_scenario_reads_a_csv_as_the_pipeline_types_its_columns(tmp_path, capsys):
    """Cell by cell, 007 and 7 are one driver, 1e3, 1000 and 1000.0 another: 2 groups where the pipeline's
    events table (driver a string column) keeps 5. With --scenario the CSV is read as the loader reads it: 5
    groups of one trend each; a number column's cell that is none is an error at its line and column."""
    (tmp_path / "w.hamlet").write_text(
        "q: RETURN T.driver, COUNT(*), SUM(T.speed) PATTERN Travel T+ GROUP-BY T.driver WITHIN 1 h\n"
    )
    header = "event_type,event_time,driver,rider,district,request_type,speed,duration\n"
    drivers = ["007", "7", "1e3", "1000", "1000.0"]
    rows = "".join(f"Travel,2026-01-05T00:00:0{i}Z,{d},r,n,Pool,2,1\n" for i, d in enumerate(drivers, 1))
    (tmp_path / "e.csv").write_text(header + rows)
    args = [
        "evaluate",
        "--workload",
        str(tmp_path / "w.hamlet"),
        "--events",
        str(tmp_path / "e.csv"),
        "--output",
    ]
    assert main([*args, str(tmp_path / "cells.jsonl")]) == 0
    assert main([*args, str(tmp_path / "typed.jsonl"), "--scenario", "rideshare"]) == 0
    capsys.readouterr()

    def groups(name: str) -> dict:
        lines = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        return {line["group"]["driver"]: line["value"] for line in lines if line["aggregate"] == "COUNT(*)"}

    assert groups("cells.jsonl") == {7: 3, 1000.0: 7}
    assert groups("typed.jsonl") == dict.fromkeys(drivers, 1)
    # (speed is a double of the scenario: 2 reads as 2.0, as the events table holds it)
    sums = [json.loads(line)["value"] for line in (tmp_path / "typed.jsonl").read_text().splitlines()][1::2]
    assert sums == [2.0] * 5 and all(isinstance(s, float) for s in sums)
    (tmp_path / "bad.csv").write_text(header + "Travel,2026-01-05T00:00:01Z,d1,r,n,Pool,fast,1\n")
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "bad.csv"),
                 "--scenario", "rideshare"]) == 1  # fmt: skip
    assert (
        capsys.readouterr().err
        == f"error: {tmp_path / 'bad.csv'}:2, column 7: speed 'fast' is not a number\n"
    )
    assert main(["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv"),
                 "--scenario", "nope"]) == 1  # fmt: skip
    assert capsys.readouterr().err.startswith("error: unknown scenario 'nope'; known: rideshare")
