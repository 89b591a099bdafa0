"""Malformed workloads: one QueryError naming the query, the line, the column and what is wrong."""

from __future__ import annotations

import pytest

from hamlet import QueryError, parse_workload

OK_TAIL = "WITHIN 10 min"

# (text, query, line, column, fragment of the message)
MALFORMED = [
    # OR, AND and P{n,} (dissertation §12): where they may stand, what they may be combined with.
    ("q1: RETURN COUNT(*) PATTERN SEQ(A, B OR C) WITHIN 1", "q1", 1, 38, "OR joins whole patterns only"),
    ("q1: RETURN COUNT(*) PATTERN (A OR B)+ WITHIN 1", "q1", 1, 32, "OR joins whole patterns only"),
    ("q1: RETURN COUNT(*) PATTERN A AND B AND C WITHIN 1", "q1", 1, 37, "AND joins two patterns"),
    ("q1: RETURN COUNT(*) PATTERN A OR B AND C WITHIN 1", "q1", 1, 36, "OR and AND cannot be mixed"),
    ("q1: RETURN COUNT(*) PATTERN A AND WITHIN 1", "q1", 1, 35, "expected an event type, SEQ(...) or '('"),
    (
        "q1: RETURN COUNT(*) PATTERN A? OR B WITHIN 1",
        "q1",
        1,
        29,
        "the pattern A? OR B matches the empty sequence",
    ),
    (
        "q1: RETURN COUNT(A) PATTERN SEQ(A, B) AND SEQ(A, C) WITHIN 1",
        "q1",
        1,
        12,
        "COUNT(A) is not defined for P AND Q",
    ),
    (
        "q1: RETURN COUNT(*), SUM(B.x) PATTERN A AND B WITHIN 1",
        "q1",
        1,
        22,
        "SUM(B.x) is not defined for P AND Q",
    ),
    ("q1: RETURN MIN(B.x) PATTERN A AND B+ WITHIN 1", "q1", 1, 12, "MIN(B.x) is not defined for P AND Q"),
    ("q1: RETURN COUNT(*) PATTERN A{3} WITHIN 1", "q1", 1, 30, "P{3} (exactly n matches) is not defined"),
    (
        "q1: RETURN COUNT(*) PATTERN A{2,5} WITHIN 1",
        "q1",
        1,
        30,
        "P{n,m} (a maximal trend length) is not defined",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A{0,} WITHIN 1",
        "q1",
        1,
        31,
        "a minimal trend length must be 1 to 32, found 0",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A{40,} WITHIN 1",
        "q1",
        1,
        31,
        "a minimal trend length must be 1 to 32, found 40",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A{x,} WITHIN 1",
        "q1",
        1,
        31,
        "expected a whole number n in P{n,}, found 'x'",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A{2.5,} WITHIN 1",
        "q1",
        1,
        31,
        "expected a whole number n in P{n,}, found '2.5'",
    ),
    ("q1: RETURN COUNT(*) PATTERN A{3, WITHIN 1", "q1", 1, 34, "expected '}' closing P{n,}, found 'WITHIN'"),
    ("q1: RETURN COUNT(*) PATTERN A{ WITHIN 1", "q1", 1, 32, "expected a whole number n in P{n,}"),
    ("q1: RETURN COUNT(*) PATTERN A} WITHIN 1", "q1", 1, 30, "expected SEMANTICS, WHERE, GROUP-BY or WITHIN"),
    # A type at several places: one alias, a NOT first or last only in the top-level SEQ of a pattern without
    # OR / AND, over types that appear once, under every semantics.
    ("q1: RETURN COUNT(*) PATTERN SEQ(A x, B, A y) WITHIN 1", "q1", 1, 41, "A already has the alias x"),
    (
        (
            "q1: RETURN COUNT(*) PATTERN SEQ(A, NOT B, C) OR SEQ(A, NOT D, C) OR SEQ(A, NOT E, C) OR SEQ(A, NOT F, C)"
            " OR SEQ(A, NOT G, C) OR SEQ(A, NOT H, C) OR SEQ(A, NOT I, C) WITHIN 1"
        ),
        "q1",
        1,
        29,
        "more than 6 NOTs lie between one type and the next in different parses of the pattern",
    ),
    (
        # (the kernel keeps the operands a trend ends as a 64-bit set: the 65th is refused where it starts)
        f"q1: RETURN COUNT(*) PATTERN {' OR '.join(f'SEQ(A, B{i})' for i in range(65))} WITHIN 1",
        "q1",
        1,
        29 + sum(len(f"SEQ(A, B{i}) OR ") for i in range(64)),
        "the pattern has 65 operands of OR (at most 64): split the query into several",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(NOT D, C, C), B) WITHIN 1",
        "q1",
        1,
        44,
        "NOT may be first only in the top-level SEQ of a query's pattern",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(NOT C, A?, A{2,}) WITHIN 1",
        "q1",
        1,
        33,
        "NOT needs one event type right after it; the pattern after it may be empty",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A{32,}, A{32,}, A)\n  SEMANTICS NEXT WITHIN 1",
        "q1",
        2,
        3,
        "SEMANTICS NEXT on a pattern whose type A has 65 states in its deterministic template (at most 64)",
    ),
    # P? and P* (dissertation §12): never the whole pattern empty, never next to a NOT.
    ("q1: RETURN COUNT(*) PATTERN A? WITHIN 1", "q1", 1, 29, "the pattern A? matches the empty sequence"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A*, B?) WITHIN 1",
        "q1",
        1,
        29,
        "the pattern SEQ(A*, B?) matches the empty",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B?, NOT C, D) WITHIN 1",
        "q1",
        1,
        40,
        "NOT needs one event type right before it; the pattern before it may be empty",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, NOT C, SEQ(B?, D)) WITHIN 1",
        "q1",
        1,
        36,
        "NOT needs one event type right after it; the pattern after it may start with B or D",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, NOT C?, D) WITHIN 1",
        "q1",
        1,
        36,
        "NOT of a pattern that matches the empty sequence",
    ),
    ("q1: RETURN COUNT(*) PATTERN SEQ(A, B)?? WITHIN 1", "q1", 1, 29, "matches the empty sequence"),
    # SEMANTICS (dissertation §2.4): right after PATTERN, one of the three names or their short forms.
    (
        "q1: RETURN COUNT(*) PATTERN A+ SEMANTICS WITHIN 1",
        "q1",
        1,
        42,
        (
            "SEMANTICS needs a name: expected skip-till-any-match, skip-till-next-match or contiguous (or ANY, NEXT, "
            "CONT), found 'WITHIN'"
        ),
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ SEMANTICS skip-till-last-match WITHIN 1",
        "q1",
        1,
        42,
        "unknown event matching semantics 'skip-till-last-match'",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ SEMANTICS skip - till-next-match WITHIN 1",
        "q1",
        1,
        42,
        "unknown event matching semantics 'skip'",
    ),
    ("q1: RETURN COUNT(*) PATTERN A+ SEMANTICS 3 WITHIN 1", "q1", 1, 42, "SEMANTICS needs a name"),
    (
        "q1: RETURN COUNT(*) PATTERN A+ SEMANTICS NEXT CONT WITHIN 1",
        "q1",
        1,
        47,
        "expected WHERE, GROUP-BY or WITHIN, found 'CONT'",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ SEMANTICS NEXT SEMANTICS CONT WITHIN 1",
        "q1",
        1,
        47,
        "SEMANTICS is given twice",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WHERE A.x > 1 SEMANTICS NEXT WITHIN 1",
        "q1",
        1,
        46,
        "SEMANTICS must come right after the pattern",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ GROUP-BY g SEMANTICS CONT WITHIN 1",
        "q1",
        1,
        43,
        "SEMANTICS must come right after the pattern",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ B WITHIN 1",
        "q1",
        1,
        32,
        "expected SEMANTICS, WHERE, GROUP-BY or WITHIN",
    ),
    (
        "q1 RETURN COUNT(*) PATTERN A+ WITHIN 1",
        "q1",
        1,
        4,
        "expected ':' after the query name, found 'RETURN'",
    ),
    ("q1: RETURN COUNT(*) SEQ(A, B+) WITHIN 1", "q1", 1, 21, "expected ',' or PATTERN, found 'SEQ'"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+ WITHIN 1",
        "q1",
        1,
        39,
        "expected ',' or ')' in SEQ(...), found 'WITHIN'",
    ),
    ("q1: RETURN COUNT(*) PATTERN NOT A WITHIN 1", "q1", 1, 29, "NOT may only stand inside SEQ(...)"),
    (
        "q1: RETURN COUNT(*)\n  PATTERN SEQ(A, SEQ(NOT C, B))\n  WITHIN 1",
        "q1",
        2,
        22,
        "NOT may be first only in the top-level SEQ",
    ),
    ("q1: RETURN SUM(X.a) PATTERN SEQ(A, B+) WITHIN 1", "q1", 1, 12, "SUM(X.a) refers to 'X'"),
    ("q1: RETURN COUNT(C) PATTERN SEQ(A, NOT C, B+) WITHIN 1", "q1", 1, 12, "only appears under NOT"),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WITHIN 0 min",
        "q1",
        1,
        39,
        "a window length must be positive, found 0 min",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WITHIN 5 min SLIDE -1 min",
        "q1",
        1,
        51,
        "must be positive, found -1 min",
    ),
    ("q1: RETURN COUNT(*) PATTERN A+ WITHIN 5 weeks", "q1", 1, 41, "unknown time unit 'weeks'"),
    (
        "q1: RETURN COUNT(*) PATTERN A+\n  WHERE A.x < __import__('os').system('ls')\n  WITHIN 1",
        "q1",
        2,
        15,
        "'__import__(' is not allowed here",
    ),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE A.name = 'Pool WITHIN 1", "q1", 1, 47, "unterminated string"),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE A.x $ 3 WITHIN 1", "q1", 1, 42, "unexpected character '$'"),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE 1 < A.x < 3 WITHIN 1", "q1", 1, 46, "comparisons do not chain"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x < NEXT(C).x WITHIN 1",
        "q1",
        1,
        48,
        "no A event is ever immediately followed by a C event",
    ),
    ("q1: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x < B.y WITHIN 1", "q1", 1, 45, "mixes event types A, B"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x < 1 OR [k] WITHIN 1",
        "q1",
        1,
        56,
        "an equivalence list [..] must be a top-level conjunct",
    ),
    (
        "q1: RETURN A.d, COUNT(*) PATTERN SEQ(A, B) WITHIN 1",
        "q1",
        1,
        12,
        "RETURN attribute 'A.d' is not in GROUP-BY",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WITHIN 1\nq1: RETURN COUNT(*) PATTERN B+ WITHIN 1",
        "q1",
        2,
        1,
        "query name 'q1' is used twice (first at line 1)",
    ),
    ("-- only a comment\n", None, 1, 1, "the workload holds no query"),
    ("q1: RETURN SUM(*) PATTERN A+ WITHIN 1", "q1", 1, 16, "SUM(*) is not defined"),
    ("q1: RETURN COUNT(A.x) PATTERN A+ WITHIN 1", "q1", 1, 21, "COUNT takes '*' or an event type"),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE Pool = A.kind WITHIN 1", "q1", 1, 38, "found bare word 'Pool'"),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE NEXT(A).x > 3 WITHIN 1", "q1", 1, 38, "reads only NEXT(...)"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(NOT A) WITHIN 1",
        "q1",
        1,
        29,
        "needs at least one positive sub-pattern",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(Travel T, Request T) WITHIN 1",
        "q1",
        1,
        43,
        "alias T is already the alias of Travel",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WITHIN 1\n\nq2: RETURN COUNT(*)\n    PATTERN (SEQ(A, B)+\n    WITHIN 1",
        "q2",
        5,
        5,
        "expected ')' closing the parenthesised pattern, found 'WITHIN'",
    ),
    (
        "q1: RETURN COUNT(*) PATTERN A+ WHERE A.x < 1 WITHIN 1 SLIDE 1 min extra",
        "q1",
        1,
        67,
        "expected the next query 'name:'",
    ),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE A.x + 1 WITHIN 1", "q1", 1, 38, "'(A.x + 1)' is not a condition"),
    (
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE 1 < 2 WITHIN 1",
        "q1",
        1,
        45,
        "references no event attribute",
    ),
    ("q1: RETURN COUNT(*) PATTERN (NOT A)+ WITHIN 1", "q1", 1, 30, "(NOT P) and (NOT P)+ are not patterns"),
    ("q1: RETURN COUNT(*) PATTERN A+ WHERE A.x < 12abc WITHIN 1", "q1", 1, 44, "malformed number '12a'"),
    (
        "q1: RETURN COUNT(*), SUM(X.v),\n  count(*) PATTERN A X+ WITHIN 1",
        "q1",
        2,
        3,
        "COUNT(*) asks again for COUNT(*); RETURN each aggregate once",
    ),
]


@pytest.mark.parametrize("text, query, line, column, fragment", MALFORMED, ids=[m[4][:40] for m in MALFORMED])
def test_malformed_workload(text, query, line, column, fragment):
    with pytest.raises(QueryError) as caught:
        parse_workload(text)
    error = caught.value
    assert fragment in error.message
    assert (error.query, error.line, error.column) == (query, line, column)


def test_error_excerpt_points_at_the_column():
    with pytest.raises(QueryError) as caught:
        parse_workload("q1: RETURN COUNT(*)\n  PATTERN SEQ(A, B+)\n  WHERE B.speed <> eval(1)\n  WITHIN 1")
    assert caught.value.excerpt() == "    WHERE B.speed <> eval(1)\n" + " " * 21 + "^"
    assert str(caught.value).startswith("query 'q1', line 3, column 20: 'eval(' is not allowed here")


@pytest.mark.parametrize(
    "predicate",
    [
        "exec('import os')",
        "A.x.__class__ = 1",
        "lambda: 1",
        "A.x if 1 else 2",
        "[x for x in A] = 1",
        "A.x == 1;",
    ],
)
def test_python_code_in_a_predicate_is_rejected(predicate):
    with pytest.raises(QueryError):
        parse_workload(f"q: RETURN COUNT(*) PATTERN A+ WHERE {predicate} WITHIN 1")


def test_keywords_are_case_insensitive_and_group_by_has_two_spellings():
    a = parse_workload(
        "q: return count(*) pattern seq(A a, b B+) where [k] group-by a.g within 1 MIN slide 30 s"
    )
    b = parse_workload(
        "q: RETURN COUNT(*) PATTERN SEQ(A a, b B+) WHERE [k] GROUP BY a.g WITHIN 1 min SLIDE 30 sec"
    )
    for w in (a, b):
        q = w.queries[0]
        assert (q.group_by, q.equivalence, q.window.within, q.window.slide) == (("g",), ("k",), 60, 30)


def test_a_position_template_beyond_its_bound_is_an_error_at_the_pattern(monkeypatch):
    """The subset construction may grow exponentially (automaton.py): beyond MAX_STATES states the pattern
    is refused where it starts, not run."""
    from hamlet.analysis import automaton

    monkeypatch.setattr(automaton, "MAX_STATES", 3)
    parse_workload("q1: RETURN COUNT(*) PATTERN A{3,} WITHIN 1")  # 3 states: A#1 A#2 A#3
    with pytest.raises(QueryError) as caught:
        parse_workload("q1: RETURN COUNT(*)\n  PATTERN A{4,} WITHIN 1")
    error = caught.value
    assert (error.query, error.line, error.column) == ("q1", 2, 11)
    assert error.message == "the pattern's template needs more than 3 states; write a shorter one"


def excerpt_of(text: str) -> tuple[int, int, str, str]:
    with pytest.raises(QueryError) as caught:
        parse_workload(text)
    error = caught.value
    return error.line, error.column, error.message, error.excerpt()


UNIT_X = "unknown time unit 'x'; use ms, s|sec|second(s), min|minute(s), h|hour(s) or d|day(s)"


@pytest.mark.parametrize(
    "text, line",
    [
        ("q: RETURN COUNT(*)\rPATTERN SEQ(A, B+)\rWITHIN 10 x", 3),
        ("q: RETURN COUNT(*)\r\n\rPATTERN SEQ(A, B+)\n\r\nWITHIN 10 x", 5),  # CRLF, CR, LF, CRLF
        ("q: RETURN COUNT(*) -- a comment to the CR\rPATTERN SEQ(A, B+)\r\rWITHIN 10 x\r\n", 4),
    ],
    ids=["cr", "mixed", "comment"],
)
def test_lines_end_at_cr_lf_and_crlf_in_the_position_and_the_excerpt(text, line):
    assert excerpt_of(text) == (line, 11, UNIT_X, "  WITHIN 10 x\n" + " " * 12 + "^")


@pytest.mark.parametrize(
    "separator, shown",
    [("\f", "\\x0c"), ("\v", "\\x0b"), ("\x85", "\\x85"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")],
    ids=["ff", "vt", "nel", "u2028", "u2029"],
)
def test_other_separators_are_white_space_inside_a_line_shown_escaped(separator, shown):
    line, column, message, excerpt = excerpt_of(
        f"q: RETURN COUNT(*){separator}PATTERN A{separator}WITHIN 10 x"
    )
    assert (line, column, message) == (1, 40, UNIT_X)
    assert (
        excerpt
        == f"  q: RETURN COUNT(*){shown}PATTERN A{shown}WITHIN 10 x\n" + " " * (39 + 2 * len(shown)) + "^"
    )


def test_control_and_bidi_characters_are_shown_escaped_with_the_caret_under_the_column():
    assert excerpt_of("q: RETURN COUNT(*) PATTERN SEQ(A,\x00 B+) WITHIN 10 s") == (
        1, 34, "unexpected character '\\x00'",
        "  q: RETURN COUNT(*) PATTERN SEQ(A,\\x00 B+) WITHIN 10 s\n" + " " * 35 + "^",
    )  # fmt: skip
    assert excerpt_of("q: RETURN COUNT(*) PATTERN SEQ(\u202eA, B+) WITHIN 10 s") == (
        1, 32, "unexpected character '\\u202e'",
        "  q: RETURN COUNT(*) PATTERN SEQ(\\u202eA, B+) WITHIN 10 s\n" + " " * 33 + "^",
    )  # fmt: skip
    # Escapes before the column move the caret by their width; a string's characters are escaped in the
    # message too.
    line, column, _, excerpt = excerpt_of(
        "q: RETURN COUNT(*) PATTERN A WHERE A.x = '\x00\u202e\t' WITHIN 1 x"
    )
    assert (line, column) == (1, 57)
    assert (
        excerpt == "  q: RETURN COUNT(*) PATTERN A WHERE A.x = '\\x00\\u202e ' WITHIN 1 x\n" + " " * 66 + "^"
    )
    assert excerpt_of("q: RETURN COUNT(*) PATTERN A WITHIN '\u202e\x1b'")[2] == (
        "expected a duration such as '30 min', found string '\\u202e\\x1b'"
    )


def test_a_long_line_of_escapes_is_cut_between_whole_escapes():
    # 855 characters shown: the 100 around the caret would start inside an escape, so 97 from the next one.
    line, column, _, excerpt = excerpt_of(
        "q: RETURN COUNT(*) PATTERN A WHERE A.x = '" + "\x00" * 200 + "' WITHIN 1 zz"
    )
    assert (line, column) == (1, 254)
    assert excerpt == "  ..." + "\\x00" * 21 + "' WITHIN 1 zz\n" + " " * 100 + "^"


def zero_divisor(what: str, divisor: str, value: str) -> str:
    return f"{what} by zero: the divisor {divisor} makes every {value} null, so no comparison with it holds"


@pytest.mark.parametrize(
    "where, line, column, message",
    [
        ("A.x / 0 > 1", 1, 43, zero_divisor("division", "0", "quotient")),
        ("A.x % 0 = 1", 1, 43, zero_divisor("modulo", "0", "remainder")),
        ("A.x / 0.0 > 1", 1, 43, zero_divisor("division", "0.0", "quotient")),
        ("A.x * 2 % -0.0 != 1", 1, 47, zero_divisor("modulo", "-0.0", "remainder")),
        ("1 < A.x / (0)", 1, 48, zero_divisor("division", "0", "quotient")),
        ("A.x / 1e-400 > 1", 1, 43, zero_divisor("division", "0.0", "quotient")),  # (as a double)
        ("A.y = 1 OR\n  A.x / 0 > 1", 2, 9, zero_divisor("division", "0", "quotient")),
        ("A.x / 0 < NEXT(A).x", 1, 43, zero_divisor("division", "0", "quotient")),  # edge predicates
        ("A.x < NEXT(A).x % 0.0", 1, 55, zero_divisor("modulo", "0.0", "remainder")),
    ],
    ids=["div", "mod", "div-0.0", "mod-neg", "parens", "underflow", "line-2", "edge-left", "edge-next"],
)
def test_a_literal_zero_divisor_is_an_error_at_the_divisor(where, line, column, message):
    """Division or modulo by a literal zero is null for every event and matches nothing: always a mistake."""
    with pytest.raises(QueryError) as caught:
        parse_workload(f"q: RETURN COUNT(*) PATTERN A+ WHERE {where} WITHIN 1")
    error = caught.value
    assert (error.query, error.line, error.column, error.message) == ("q", line, column, message)
    assert error.expected == "a divisor other than 0"


BIG = "1" + "0" * 400  # 10^400, past the largest double


@pytest.mark.parametrize(
    "divisor, what, value",
    [(f"(1 / ({BIG} * 1.0))", "division", "quotient"), (f"(1.5 / ({BIG} / 3))", "modulo", "remainder")],
    ids=["inverse", "int-quotient"],
)
def test_a_constant_divisor_past_the_largest_double_is_an_infinity_and_its_inverse_a_zero(
    divisor, what, value
):
    """An int past the largest double taken for a double is an infinity, as the engine computes it (before, such
    a divisor was set aside, and the engine raised OverflowError): 10^400 * 1.0 and 10^400 / 3 divide every
    value to a number and stay; 1 over them is 0 as a double and is refused."""
    op = "/" if what == "division" else "%"
    parse_workload(
        f"q: RETURN COUNT(*) PATTERN A+ WHERE A.x {op} {divisor[divisor.index('(', 1) : -1]} = 0 WITHIN 1"
    )
    with pytest.raises(QueryError) as caught:
        parse_workload(f"q: RETURN COUNT(*) PATTERN A+ WHERE A.x {op} {divisor} = 0 WITHIN 1")
    error = caught.value
    written = divisor[:40] + "... (= 0.0)"
    assert (error.query, error.line, error.column, error.message) == (
        "q",
        1,
        44,
        zero_divisor(what, written, value),
    )


def test_a_divisor_that_is_zero_at_run_time_stays_null_and_matches_nothing():
    from hamlet import evaluate

    workload = parse_workload(
        "q: RETURN COUNT(*) PATTERN A+ WHERE A.x / A.y >= 0 AND A.x % 0.5 = 0 WITHIN 10"
    )
    events = [{"event_type": "A", "event_time": t, "x": 1, "y": y} for t, y in ((1, 0), (2, 1), (3, 2))]
    assert [row.value for row in evaluate(workload, events)] == [3]  # a2, a3, a2 a3: a1's quotient is null


def test_check_refuses_a_zero_divisor_with_file_line_and_column(tmp_path, capsys):
    from hamlet.cli import main

    path = tmp_path / "w.hamlet"
    path.write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+)\n  WHERE A.x % 0 = 1 WITHIN 1\n")
    assert main(["check", str(path)]) == 1
    assert capsys.readouterr() == ("", (
        f"error: {path}:2:15: query 'q': modulo by zero: the divisor 0 makes every remainder null, so no "
        "comparison with it holds\n"
        "    WHERE A.x % 0 = 1 WITHIN 1\n"
        "                ^\n"
    ))  # fmt: skip


@pytest.mark.parametrize(
    "where, line, column, message",
    [
        ("A.x / (1 - 1) > 1", 1, 44, zero_divisor("division", "(1 - 1) (= 0)", "quotient")),
        ("A.x % (2 * 0) = 1", 1, 44, zero_divisor("modulo", "(2 * 0) (= 0)", "remainder")),
        ("A.x / -(3 % 3) > 1", 1, 43, zero_divisor("division", "-(3 % 3) (= 0)", "quotient")),
        ("A.x / ((1 + 1) * (3 - 3)) > 1", 1, 45, zero_divisor("division", "((1 + 1) * (3 - 3)) (= 0)", "quotient")),
        ("A.x / (1 -\n  1) > 1", 1, 44, zero_divisor("division", "(1 - 1) (= 0)", "quotient")),
        ("A.x / (0.5 - 0.25 - 0.25) > 1", 1, 44, zero_divisor("division", "((0.5 - 0.25) - 0.25) (= 0.0)", "quotient")),
        ("A.x / (1e16 + 1 - 1e16) > 1", 1, 44, zero_divisor("division", "((1e+16 + 1) - 1e+16) (= 0.0)", "quotient")),
        ("A.x / (1e-200 * 1e-200) > 1", 1, 44, zero_divisor("division", "(1e-200 * 1e-200) (= 0.0)", "quotient")),
        ("A.x < NEXT(A).x % (4 - 2 * 2)", 1, 56, zero_divisor("modulo", "(4 - (2 * 2)) (= 0)", "remainder")),
        ("A.x / (" + " + ".join(["1"] * 20) + " - 20) > 1", 1, 44,
         zero_divisor("division", "(" * 20 + "1 + 1) + 1) + 1) + 1... (= 0)", "quotient")),
    ],
    ids=["sub", "mul", "neg-mod", "nested", "two-lines", "doubles", "rounded", "underflow", "edge", "long"],
)  # fmt: skip
def test_a_constant_divisor_that_is_zero_is_an_error_at_the_divisor(where, line, column, message):
    """An expression without attributes is the same for every event: one that is 0 (ints exact, floats as
    doubles, as the engine computes it) nulls every quotient as a literal 0 does."""
    with pytest.raises(QueryError) as caught:
        parse_workload(f"q: RETURN COUNT(*) PATTERN A+ WHERE {where} WITHIN 1")
    error = caught.value
    assert (error.query, error.line, error.column, error.message) == ("q", line, column, message)
    assert error.expected == "a divisor other than 0"


@pytest.mark.parametrize("strategy", ["greta", "static", "hamlet"])
def test_the_engine_computes_a_refused_constant_divisor_as_0_and_an_accepted_one_as_it_did(strategy):
    """What the analysis refuses the engine computes as 0 (so ``A.x * d = 0`` holds for every event); what it
    accepts keeps its meaning: 0.1 + 0.2 - 0.3 is no 0 as doubles, 10^16 + 1 - 10^16 is 1 as ints (0 as
    doubles), a string's product is null and matches nothing, and an attribute is 0 only at run time."""
    from hamlet import evaluate

    events = [{"event_type": "A", "event_time": t, "x": 1, "y": y} for t, y in ((1, 1), (2, 2))]

    def trends(where: str) -> int:
        rows = evaluate(f"q: RETURN COUNT(*) PATTERN A+ WHERE {where} WITHIN 10", events, strategy)
        return rows[0].value if rows else 0

    for divisor in (
        "(1 - 1)",
        "(2 * 0)",
        "-(3 % 3)",
        "(0.5 - 0.25 - 0.25)",
        "(1e16 + 1 - 1e16)",
        "(1e-200 * 1e-200)",
    ):
        assert trends(f"A.x * {divisor} = 0") == 3  # a1, a2, a1 a2
    assert trends("A.x / (0.1 + 0.2 - 0.3) > 1e16") == 3  # 1 / 5.55e-17
    assert trends("A.x / (10000000000000001 - 10000000000000000) = 1") == 3
    assert trends("A.x / ('a' * 0) > 0 OR A.x / ('a' * 0) <= 0") == 0
    assert trends("A.x / (A.y - 1) > 0") == 1  # a2 only: a1's divisor is 0, its quotient null


@pytest.mark.parametrize(
    "ch, shown",
    [("\t", " "), ("\x00", "\\x00"), ("\x85", "\\x85"), ("\u202e", "\\u202e"), ("\U000e0001", "\\U000e0001"),
     ("\udcff", "\\udcff"), ("é", "é"), ("€", "€")],
    ids=["tab", "nul", "nel", "rlo", "tag", "surrogate", "e-acute", "euro"],
)  # fmt: skip
def test_shown_char_is_a_character_as_an_excerpt_shows_it(ch, shown):
    from hamlet.errors import shown_char

    assert shown_char(ch) == shown
