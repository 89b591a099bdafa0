"""Input that used to end in a traceback (issue 20, item 9) is an error naming the file, the line and the
column: deep nesting, huge literals, windows of 10^30 s, bytes that are not UTF-8, huge or infinite CSV
values, far-away event times. A byte order mark is read."""

from __future__ import annotations

import pytest

from hamlet import QueryError, parse_workload
from hamlet.cli import main

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
    ("q: RETURN COUNT(*) PATTERN " + " OR ".join(["SEQ(A, B+)"] * 3000) + TAIL, 1, 28,
     TOO_MANY_PLACES),
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
