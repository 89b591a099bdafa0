"""``hamlet trends``: the listed trends are exactly the oracle's, window by window and group by group, in
every semantics, with negation and predicates; the total is the engine's count; the listing is streamed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, note
from hypothesis import strategies as st
from oracle import pooled_trends
from streams import stream
from workloads import (
    events,
    optional_patterns,
    position_queries,
    position_queries_with_ends,
    queries,
    types_of,
    with_semantics,
    workloads,
)

from hamlet import parse_workload
from hamlet.cli import main
from hamlet.results import group_key
from hamlet.trends import list_trends, trend_text

FIGURE_2_3 = "a1 b2 a3 a4 c5 b6 a7 b8"
FIGURE_2_3_WORKLOAD = """
qa: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 SLIDE 100
qn: RETURN COUNT(A) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WITHIN 100 SLIDE 100
qc: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WITHIN 100 SLIDE 100
"""


def listed(workload, name, stream_, start=None):
    """(window start, group key) → (engine total, Counter of the listed trends as event identities)."""
    out = {}
    for found in list_trends(workload, name, stream_, start):
        key = (found.window_start, group_key(found.group))
        assert key not in out, key
        out[key] = (found.total, Counter(tuple(map(id, trend)) for trend in found.trends))
    return out


def expected(query, stream_):
    out = {}
    for (k, group_), trends in pooled_trends(query, stream_).items():
        group = dict(zip(query.group_by, group_.values))
        key = (query.window.start(k), group_key(group))
        out[key] = (len(trends), Counter(tuple(map(id, trend)) for trend in trends))
    return out


def texts(workload, name, events_):
    return [[trend_text(t) for t in found.trends] for found in list_trends(workload, name, events_)]


def test_figure_2_3_under_each_semantics():
    workload = parse_workload(FIGURE_2_3_WORKLOAD)
    events_ = stream(FIGURE_2_3)
    # CONT: (a1,b2) and (a7,b8) (Example 2.7). NEXT: one trend per START a and END b (Example 16.1).
    assert texts(workload, "qc", events_) == [["A@1, B@2", "A@7, B@8"]]
    assert sorted(texts(workload, "qn", events_)[0]) == sorted([
        "A@1, B@2", "A@1, B@2, A@3, A@4, B@6", "A@1, B@2, A@3, A@4, B@6, A@7, B@8", "A@3, A@4, B@6",
        "A@3, A@4, B@6, A@7, B@8", "A@4, B@6", "A@4, B@6, A@7, B@8", "A@7, B@8",
    ])  # fmt: skip
    (found,) = list_trends(workload, "qa", events_)
    assert (found.window_start, found.window_end, found.group, found.total) == (0, 100, {}, 43)
    trends = list(found.trends)
    assert len(trends) == len({tuple(map(id, t)) for t in trends}) == 43
    for query in workload.queries:
        assert listed(workload, query.name, events_) == expected(query, events_)


def test_negation_predicates_groups_and_windows_like_the_oracle():
    workload = parse_workload("""
        q1: RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 100 SLIDE 100
        q2: RETURN g, COUNT(*) PATTERN SEQ(NOT E, A+, B) WHERE A.x < NEXT(A).x GROUP-BY g WITHIN 6 SLIDE 2
        q3: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) SEMANTICS NEXT WHERE [g] WITHIN 8 SLIDE 4
    """)
    events_ = stream("a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9", x={"a1": 1, "a3": 3, "a4": 2, "a8": 5},
                     g={"a1": 1, "b2": 1, "c2": 1, "a3": 1, "e3": 2, "a4": 1, "c5": 1, "d6": 1, "b7": 1,
                        "a8": 2, "b9": 2})  # fmt: skip
    assert sum(total for total, _ in listed(workload, "q1", events_).values()) == 13  # GRETA Figure 6d
    for query in workload.queries:
        assert listed(workload, query.name, events_) == expected(query, events_)
    # One window only: the one starting at 2.
    only = listed(workload, "q2", events_, 2)
    assert {start for start, _ in only} == {2}
    assert only == {
        key: value for key, value in expected(workload.query("q2"), events_).items() if key[0] == 2
    }


@given(workloads(), st.data())
def test_listed_trends_are_the_oracles(text, data):
    text = data.draw(with_semantics(text))
    stream_ = data.draw(events(types_of(text), max_events=11))
    note(text)
    note(repr(stream_))
    workload = parse_workload(text)
    for query in workload.queries:
        got = listed(workload, query.name, stream_)
        want = expected(query, stream_)
        assert got == want
        assert all(total == sum(trends.values()) for total, trends in got.values())


@given(workloads(max_queries=1, negation=True), st.data())
def test_listed_trends_are_the_oracles_under_negation(text, data):
    text = data.draw(with_semantics(text))
    stream_ = data.draw(events(types_of(text), max_events=11))
    note(text)
    note(repr(stream_))
    workload = parse_workload(text)
    query = workload.queries[0]
    assert listed(workload, query.name, stream_) == expected(query, stream_)


@given(st.data())
def test_listed_trends_are_the_oracles_with_optional_parts(data):
    text = data.draw(with_semantics(data.draw(queries("q", pattern=data.draw(optional_patterns())))))
    stream_ = data.draw(events(types_of(text), max_events=11))
    note(text)
    note(repr(stream_))
    workload = parse_workload(text)
    assert listed(workload, "q", stream_) == expected(workload.queries[0], stream_)


@given(st.data())
def test_listed_trends_are_the_oracles_on_position_templates(data):
    """A type at several places, P{n,} and P OR Q (dissertation §12), with or without a leading or trailing
    NOT, under every semantics: the graph runs each event at every state of its
    type, and the listing gives each trend once, as the stream's events."""
    drawn = st.one_of(position_queries("q"), position_queries_with_ends("q"))
    text = data.draw(drawn.filter(lambda q: " AND " not in q.split(" WHERE ")[0]))
    stream_ = data.draw(events(types_of(text), max_events=10, min_events=4))
    note(text)
    note(repr(stream_))
    workload = parse_workload(text)
    got = listed(workload, "q", stream_)
    assert got == expected(workload.queries[0], stream_)
    assert all(total == sum(trends.values()) == len(trends) for total, trends in got.values())


def test_position_template_trends_and_a_conjunction_refused(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text("qo: RETURN COUNT(*) PATTERN SEQ(A+, B, A) OR SEQ(A, B+) WITHIN 100\n"
                                       "qa: RETURN COUNT(*) PATTERN A AND B WITHIN 100\n")  # fmt: skip
    (tmp_path / "e.csv").write_text("event_type,event_time\nA,1\nB,2\nA,3\nA,4\nB,5\n")
    base = ["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main([*base, "--query", "qo"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "window [0, 100) group -: 7 trends", "  A@1, B@2", "  A@1, B@2, A@3", "  A@1, B@2, A@4", "  A@1, B@5",
        "  A@3, B@5", "  A@4, B@5", "  A@1, B@2, B@5",
    ]  # fmt: skip
    assert main([*base, "--query", "qa"]) == 1
    assert capsys.readouterr().err == (
        "error: query 'qa' is a conjunction P AND Q: it matches pairs of trends, not trends; list the trends of P "
        "and of Q with a query each\n"
    )


def test_limit_on_2_to_the_40_trends_lists_the_first_and_counts_the_rest(tmp_path, capsys):
    # SEQ(A+, B) over a1..a40 b41: every non-empty subset of the a's, then b41: 2^40 - 1 trends.
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A+, B) WITHIN 100 SLIDE 100\n")
    rows = ["event_type,event_time,x"] + [f"A,{t},{t}" for t in range(1, 41)] + ["B,41,"]
    (tmp_path / "e.csv").write_text("\n".join(rows) + "\n")
    # (three of 2^40 listed: the walk never enumerates the rest; no wall clock is asserted in a unit test)
    code = main(["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv"),
                 "--query", "q", "--limit", "3"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    total = 2**40 - 1
    assert out == [
        f"window [0, 100) group -: {total} trends",
        "  A@1 {x=1}, B@41",
        "  A@2 {x=2}, B@41",
        "  A@1 {x=1}, A@2 {x=2}, B@41",
        f"  ... {total - 3} more (--limit 3)",
    ]


def test_without_a_limit_a_thousand_trends_are_listed(tmp_path, capsys):
    """60 events printed 588,000 lines in 10 s and would have gone on for 2^60 trends (a CLI audit): without
    --limit the listing stops at 1,000 and counts the rest. A+ over a1..a11: 2^11 - 1 = 2047 trends."""
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN A+ WITHIN 100\n")
    (tmp_path / "e.csv").write_text("event_type,event_time\n" + "".join(f"A,{t}\n" for t in range(1, 12)))
    code = main(["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv"),
                 "--query", "q"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert (code, len(out), out[0], out[-1]) == (
        0, 1 + 1000 + 1, "window [0, 100) group -: 2047 trends", "  ... 1047 more (--limit 1000)"
    )  # fmt: skip


def test_edges_past_the_bound_are_an_error_and_one_window_is_listed_from_its_own_events(tmp_path, capsys,
                                                                                        monkeypatch):  # fmt: skip
    """The walk needs every edge of a partition kept before its first trend (under SEQ(A, B+), n Bs hold
    n²/2 edges): past ``MAX_EDGES`` the command says so instead of filling the memory. One window's trends are
    of its own events, so --window records those alone: a0 b1..b9 of [0, 10) (45 edges) where the stream's
    three such windows hold 135."""
    monkeypatch.setattr("hamlet.trends.MAX_EDGES", 100)
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 10\n")
    rows = ["event_type,event_time"] + [f"{'A' if t % 10 == 0 else 'B'},{t}" for t in range(30)]
    (tmp_path / "e.csv").write_text("\n".join(rows) + "\n")
    base = ["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv"), "--query",
            "q", "--limit", "2"]  # fmt: skip
    assert main(base) == 1
    assert capsys.readouterr().err == (
        "error: listing the trends of q keeps the edges between its events, more than 100 in one stream "
        "partition here: list one window (--window START) of fewer events; `hamlet evaluate` counts them all\n"
    )
    assert main([*base, "--window", "0"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"window [0, 10) group -: {2**9 - 1} trends",  # (every non-empty subset of b1..b9 after a0)
        "  A@0, B@1",
        "  A@0, B@1, B@2",
        f"  ... {2**9 - 3} more (--limit 2)",
    ]


def test_command_line_errors(tmp_path, capsys):
    (tmp_path / "w.hamlet").write_text(FIGURE_2_3_WORKLOAD)
    (tmp_path / "e.csv").write_text("event_type,event_time\n" + "\n".join(
        f"{e.type},{e.time}" for e in stream(FIGURE_2_3)) + "\n")  # fmt: skip
    base = ["trends", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    assert main([*base, "--query", "nope"]) == 1
    assert capsys.readouterr().err == "error: no query 'nope' in the workload (queries: qa, qn, qc)\n"
    assert main([*base, "--query", "qc", "--window", "soon"]) == 1
    assert "--window 'soon' is not a number" in capsys.readouterr().err
    # (Fraction would have built 10^99999999 first: the command ran without end)
    for start, why in (("1e-99999999", "is finer than a microsecond: no window starts there"),
                       ("1e99999999", "lies outside the years 1 to 9999 (-62135596800 to 253402300799 s)"),
                       ("nan", "is not a finite number: give the window's start in seconds")):  # fmt: skip
        assert main([*base, "--query", "qc", "--window", start]) == 1
        assert capsys.readouterr().err == f"error: --window {start!r} {why}\n"
    assert main([*base, "--query", "qc", "--window", "100"]) == 0
    assert capsys.readouterr().out == "no trend of qc matched in the window starting at 100\n"
    # (a start where no window starts said "no trend matched"; 1_0 was taken for 10, as no reader of events takes it)
    assert main([*base, "--query", "qc", "--window", "50"]) == 1
    assert (
        capsys.readouterr().err
        == "error: no window of qc starts at 50: its windows start every 100 s from the epoch\n"
    )
    assert main([*base, "--query", "qc", "--window", "1_00"]) == 1
    assert "--window '1_00' is not a number" in capsys.readouterr().err
    assert main([*base, "--query", "qc"]) == 0
    assert capsys.readouterr().out == "window [0, 100) group -: 2 trends\n  A@1, B@2\n  A@7, B@8\n"


def test_times_with_fractions_of_a_second_are_listed(tmp_path, capsys):
    """Times and windows in fractions of a second: every time printed used to fail (AttributeError: 'float'
    object has no attribute 'denominator'), and every window not starting at a whole second was dropped (its
    start, the Fraction 3/10, never found the engine's total, kept under 0.3). Over 300 ms windows, a0.1 b0.25
    b0.3 a0.4 b0.5: [0, 0.3) holds a0.1 b0.25, and [0.3, 0.6) a0.4 b0.5; b0.3 lies on the bound, so it is in
    [0.3, 0.6), after every A there (read as a double, 0.3 was just below 3/10, and b0.3 ended a trend of
    [0, 0.3))."""
    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 300 ms\n")
    (tmp_path / "e.csv").write_text("event_type,event_time,x\nA,0.1,-0.5\nB,0.25,\nB,0.3,\nA,0.4,\nB,0.5,2\n")
    base = [
        "trends",
        "--workload",
        str(tmp_path / "w.hamlet"),
        "--events",
        str(tmp_path / "e.csv"),
        "--query",
        "q",
    ]
    assert main(base) == 0
    assert capsys.readouterr().out == (
        "window [0, 0.3) group -: 1 trend\n  A@0.1 {x=-0.5}, B@0.25\n"
        "window [0.3, 0.6) group -: 1 trend\n  A@0.4, B@0.5 {x=2}\n"
    )
    assert main([*base, "--window", "0.3"]) == 0
    assert capsys.readouterr().out == "window [0.3, 0.6) group -: 1 trend\n  A@0.4, B@0.5 {x=2}\n"


def test_ctrl_c_ends_a_listing_with_the_status_of_sigint_and_no_traceback(tmp_path):
    """2^40 trends: the listing is still going when SIGINT comes."""
    import signal
    import subprocess
    import sys

    (tmp_path / "w.hamlet").write_text("q: RETURN COUNT(*) PATTERN SEQ(A+, B) WITHIN 100\n")
    rows = "".join(f"A,{t}\n" for t in range(1, 41))
    (tmp_path / "e.csv").write_text(f"event_type,event_time\n{rows}B,41\n")
    command = [str(Path(sys.executable).parent / "hamlet"), "trends", "--workload", str(tmp_path / "w.hamlet"),
               "--events", str(tmp_path / "e.csv"), "--query", "q"]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stdout.readline().startswith(b"window [0, 100)")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, b"interrupted\n")
