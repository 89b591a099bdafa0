"""Fuzzing (issue 20): random bytes and random token sequences into the parser, random rows into both CSV
readers. Each input gives a result or the error meant for users with a position (a workload's line and
column, a CSV's line), never another exception."""

from __future__ import annotations

import io
import re

from hypothesis import given
from hypothesis import strategies as st

from hamlet import QueryError, parse_workload
from hamlet.analysis.workload import load_workload_file
from hamlet.errors import EventError, HamletError, source_lines
from hamlet.io import open_csv, read_events_csv
from jobs.load_events import LoadError, parse_csv

TOKENS = [
    "q:", "r:", "RETURN", "PATTERN", "WHERE", "GROUP-BY", "GROUP BY", "WITHIN", "SLIDE", "SEQ", "NOT", "AND",
    "OR", "NEXT", "COUNT(*)", "COUNT", "SUM", "MIN", "MAX", "AVG", "A", "B", "T", "A.x", "T.speed", "NEXT(A).x",
    "x", "(", ")", "[", "]", ",", ".", ":", "+", "-", "*", "/", "%", "=", "!=", "<>", "<", "<=", ">", ">=",
    "0", "1", "10", "0.5", "1e3", "1e400", "1e-999", "9" * 5000, "ms", "s", "sec", "min", "h", "d", "years",
    "'Pool'", "\"x\"", "'open", "--", "\n", "\t", "²", "١", "\x00", "é", "💥",
]  # fmt: skip
PREFIXES = ["", "q: RETURN COUNT(*) PATTERN ", "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE "]


def assert_positioned(error: QueryError, text: str) -> None:
    assert error.line >= 1 and error.column >= 1
    assert (
        error.line <= len(source_lines(text)) + 2
    )  # a line of the text (CR, LF, CRLF), or just past its end
    assert error.message


@given(st.sampled_from(PREFIXES), st.lists(st.sampled_from(TOKENS), max_size=40))
def test_random_token_sequences_parse_or_fail_with_a_position(prefix, tokens):
    text = prefix + " ".join(tokens)
    try:
        workload = parse_workload(text)
    except QueryError as error:
        assert_positioned(error, text)
    else:
        assert workload.queries


@given(st.text(max_size=300))
def test_random_text_parses_or_fails_with_a_position(text):
    try:
        parse_workload(text)
    except QueryError as error:
        assert_positioned(error, text)


POSITION = re.compile(r"^.+:\d+:\d+: ")  # path:line:column: ...


@given(st.binary(max_size=300))
def test_random_bytes_as_a_workload_file_load_or_fail_with_a_position(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "w.hamlet"
    path.write_bytes(data)
    try:
        load_workload_file(str(path))
    except HamletError as error:
        assert POSITION.match(str(error)), str(error)


CELLS = st.one_of(
    st.sampled_from(["", "A", "B", "1", "-2", "+7", "1.5", "1e400", "nan", "inf", "1_000", "١٢٣", "9" * 5000,
                     "2026-01-05T08:00:00Z", "0001-01-01T00:00:00Z", "1e300", " 7 ", "x\x00y", "\"", "a,b", "\n",
                     "\r\n", "\ufeff"]),
    st.text(max_size=12),
)  # fmt: skip
HEADERS = st.lists(st.sampled_from(["event_type", "event_time", "event_id", "speed", "driver", "duration", "x"]),
                   min_size=1, max_size=6)  # fmt: skip


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    import csv

    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


@given(HEADERS, st.lists(st.lists(CELLS, max_size=7), max_size=8))
def test_random_rows_read_by_the_engine_give_events_or_an_error_at_a_line(header, rows):
    text = csv_text(header, rows)
    try:
        read_events_csv(io.StringIO(text, newline=""), "e.csv")
    except EventError as error:
        assert re.match(r"^e\.csv(:\d+(, column \d+)?)?$", error.where), error.where


@given(HEADERS, st.lists(st.lists(CELLS, max_size=7), max_size=8))
def test_random_rows_read_by_the_loader_are_loaded_or_rejected_at_a_line(header, rows):
    text = csv_text(header, rows)
    attributes = {"speed": "double", "driver": "string", "duration": "bigint", "x": "boolean"}
    try:
        parsed = parse_csv(io.StringIO(text, newline=""), "e.csv", attributes)
    except LoadError as error:
        assert re.match(r"^e\.csv(:\d+(, column \d+)?)?: ", str(error)), str(error)
    else:
        assert all(r.line >= 2 and r.reason for r in parsed.rejected)
        assert len(parsed.rows) + len(parsed.rejected) <= len(rows)


@given(st.binary(max_size=400))
def test_random_bytes_as_a_csv_file_give_events_or_an_error_at_a_line(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "e.csv"
    path.write_bytes(b"event_type,event_time,x\n" + data)
    try:
        with open_csv(str(path)) as f:
            read_events_csv(f, "e.csv")
    except EventError as error:
        assert re.match(r"^e\.csv(:\d+(, column \d+)?)?$", error.where), error.where
    with open_csv(str(path)) as f:
        parsed = parse_csv(f, "e.csv", {"x": "double"})
    assert all(r.line >= 2 and r.reason for r in parsed.rejected)
