"""Analysis: GRETA templates, the pattern split for negation, predicates, panes, sharing (HAMLET §3.1)."""

from __future__ import annotations

from fractions import Fraction

from hamlet import parse_workload
from hamlet.analysis.template import Transition
from hamlet.analysis.windows import Window, pane_size


def query(text: str):
    return parse_workload(f"q: RETURN COUNT(*) PATTERN {text} WITHIN 10").queries[0]


def test_template_of_nested_kleene_greta_figure_5():
    t = query("(SEQ(A+, B))+").pattern.template
    assert (t.types, t.start, t.end) == (("A", "B"), "A", "B")
    assert set(t.transitions) == {
        Transition("A", "A", "+"),
        Transition("A", "B", "SEQ"),
        Transition("B", "A", "+"),
    }
    assert t.predecessor_types("A") == ("A", "B") and t.predecessor_types("B") == ("A",)


def test_template_of_flat_sequence_hamlet_figure_3():
    t = query("SEQ(A, B+)").pattern.template
    assert (t.start, t.end, set(t.transitions)) == (
        "A",
        "B",
        {Transition("B", "B", "+"), Transition("A", "B", "SEQ")},
    )
    assert query("(A+)+").pattern.template.transitions == (Transition("A", "A", "+"),)


def test_pattern_split_greta_example_2():
    part = query("(SEQ(A+, NOT SEQ(C, NOT E, D), B))+").pattern
    assert part.template.types == ("A", "B")
    [negation] = part.negations
    assert (negation.previous, negation.following, negation.text) == ("A", "B", "NOT SEQ(C, NOT E, D)")
    assert negation.part.template.types == ("C", "D")
    [nested] = negation.part.negations
    assert (nested.previous, nested.following, nested.part.template.types) == ("C", "D", ("E",))
    assert [p.template.types for p in part.walk()] == [("A", "B"), ("C", "D"), ("E",)]


def test_leading_and_trailing_negation_have_no_previous_or_following():
    part = query("SEQ(NOT E, A+, NOT SEQ(C, D))").pattern
    assert [(n.previous, n.following) for n in part.negations] == [(None, "A"), ("A", None)]
    assert part.template.types == ("A",)


def test_predicates_are_classified():
    q = parse_workload(
        "q: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) "
        "WHERE [driver, T.rider] AND T.speed < 10 AND (R.kind = Pool OR R.kind = 'Shared') "
        "AND T.speed * 1.05 > NEXT(T).speed AND R.t + NEXT(T).d > 2 GROUP-BY T.district WITHIN 30 min SLIDE 1 min"
    ).queries[0]
    assert q.equivalence == ("driver", "rider") and q.group_by == ("district",)
    assert q.partition_attributes == ("district", "driver", "rider")
    assert [(p.event_type, p.text) for p in q.local_predicates] == [
        ("Travel", "T.speed < 10"), ("Request", "(R.kind = 'Pool' OR R.kind = 'Shared')")]  # fmt: skip
    edges = [(e.source, e.target, e.key_op) for e in q.edge_predicates]
    assert edges == [("Travel", "Travel", ">"), ("Request", "Travel", None)]
    assert q.window == Window(Fraction(1800), Fraction(60))


def test_a_query_named_like_a_time_unit_after_a_bare_window_is_the_next_query():
    """A bare number is in seconds, so a unit word after it followed by ':' names the next query."""
    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN A+ WITHIN 10\n"
        "h: RETURN COUNT(*) PATTERN B+ WITHIN 10 SLIDE 5\n"
        "min: RETURN COUNT(*) PATTERN B+ WITHIN 2 h\n"
        "s: RETURN COUNT(*) PATTERN B+ WITHIN 3 min SLIDE 1\n"
        "d: RETURN COUNT(*) PATTERN A+ WITHIN 1 d"
    )
    assert [(q.name, q.window.within, q.window.slide) for q in workload.queries] == [
        ("q1", 10, 10), ("h", 10, 5), ("min", 7200, 7200), ("s", 180, 1), ("d", 86400, 86400)]  # fmt: skip


def test_windows_of_an_event():
    w = Window(Fraction(10), Fraction(3))
    assert list(w.indexes(9)) == [0, 1, 2, 3]  # [0,10) [3,13) [6,16) [9,19)
    assert list(w.indexes(9.5)) == [0, 1, 2, 3]
    assert list(Window(Fraction(1, 2), Fraction(1, 4)).indexes(0.25)) == [0, 1]
    assert list(Window(Fraction(2), Fraction(5)).indexes(3)) == []  # in the gap between hopping windows


def test_pane_is_the_gcd_of_windows_and_slides():
    assert pane_size([Fraction(600), Fraction(300), Fraction(900), Fraction(300)]) == 300  # HAMLET §3.1
    assert pane_size([Fraction(1, 2), Fraction(1, 3)]) == Fraction(1, 6)


RIDES = """
q1: RETURN COUNT(*) PATTERN SEQ(Request, Travel+) WHERE [driver] WITHIN 10 min
q2: RETURN COUNT(*), SUM(Travel.d) PATTERN SEQ(Pickup, Travel+, Dropoff) WHERE [driver] WITHIN 15 min SLIDE 5 min
q3: RETURN COUNT(*) PATTERN SEQ(Cancel, Travel+) WITHIN 10 min
q4: RETURN MIN(Travel.d) PATTERN SEQ(Accept, Travel+) WHERE [driver] WITHIN 10 min
q5: RETURN COUNT(*) PATTERN SEQ(Accept, Dropoff+) WHERE [driver] WITHIN 10 min
"""


def test_merged_template_and_sharable_query_sets():
    w = parse_workload(RIDES)
    merged = w.merged_template()
    labels = {(t.source, t.target, t.label): t.queries for t in merged.transitions}
    assert labels[("Travel", "Travel", "+")] == ("q1", "q2", "q3", "q4")
    assert labels[("Travel", "Dropoff", "SEQ")] == ("q2",)
    assert merged.start["Accept"] == ("q4", "q5") and merged.end["Travel"] == ("q1", "q3", "q4")
    assert w.sharable_kleene_subpatterns() == {"Travel+": ("q1", "q2", "q3", "q4")}
    # q3 partitions differently, q4 asks MIN, q5 shares no Kleene sub-pattern: each is alone.
    sets = {s.queries: s for s in w.sharable_query_sets()}
    assert set(sets) == {("q1", "q2"), ("q3",), ("q4",), ("q5",)}
    assert sets[("q1", "q2")].kleene_subpatterns == {"Travel+": ("q1", "q2")}
    assert sets[("q1", "q2")].pane == 300 and w.pane == 300


def test_sets_join_through_any_shared_sub_pattern_and_thousands_of_queries_form_them_in_one_pass(monkeypatch):
    """Definition 3.2 transitively: q0 and q2 share nothing but both share with q1 (B+ and C+), so the three
    are one set; q3 partitions by [m], so it is alone. Then 2,000 queries SEQ(A_i, B+): one set (formed
    through the first query of each signature and sub-pattern; every pair was 2 million), and past
    ``MAX_SET_CELLS`` (graphs × types) each graph runs on its own kernel with the same rows."""
    from hamlet import STRATEGIES, Event, evaluate
    from hamlet.runtime import native
    from hamlet.stats import EvaluationStats

    w = parse_workload("""
        q0: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10
        q1: RETURN COUNT(*) PATTERN SEQ(B+, C+) WITHIN 10
        q2: RETURN COUNT(*) PATTERN SEQ(C+, D) WITHIN 10
        q3: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [m] WITHIN 10
    """)
    sets = {s.queries: s.kleene_subpatterns for s in w.sharable_query_sets()}
    assert sets == {("q0", "q1", "q2"): {"B+": ("q0", "q1"), "C+": ("q1", "q2")}, ("q3",): {}}
    text = "\n".join(f"q{i}: RETURN COUNT(*) PATTERN SEQ(A{i}, B+) WITHIN 10" for i in range(2000))
    many = parse_workload(text)
    assert [len(s.queries) for s in many.sharable_query_sets()] == [2000]
    stream = [Event("A0", 1), Event("B", 2), Event("B", 3), Event("A7", 4), Event("B", 5)]
    # (q0: a0 then one or more of b2 b3 b5, 7 trends; q7: a7 b5, 1)
    expected = {("q0", 7), ("q7", 1)}
    for cells, shared in ((native.MAX_SET_CELLS, 1), (100, 0)):  # (b2 b3 shared only on the set kernel)
        monkeypatch.setattr(native, "MAX_SET_CELLS", cells)
        for strategy in STRATEGIES:
            stats = EvaluationStats()
            assert {(r.query, r.value) for r in evaluate(text, stream, strategy, stats)} == expected, strategy
            if strategy == "hamlet":
                assert stats.shared_bursts == shared, cells


def test_attribute_versus_literal_predicates_equal_the_general_form():
    # compile_local takes a shortcut for `T.a op literal`, either way round, a negated number too; it must
    # give what the general closures give for every value an attribute can hold (null, ints, floats, bools,
    # strings) and every literal.
    from hamlet.analysis.predicates import attribute_versus_literal, compile_expression, compile_local
    from hamlet.events import Event

    values = [None, -1, 0, 2, 2.0, 2.5, -2.5, True, False, "Pool", "pool", ""]
    for op in ("<", "<=", ">", ">=", "=", "!="):
        for literal in ("2", "2.5", "-1", "-2.5", "'Pool'"):
            for where in (f"A.x {op} {literal}", f"{literal} {op} A.x"):
                q = parse_workload(f"q: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE {where} WITHIN 10").queries[0]
                (predicate,) = q.local_predicates
                expr = parse_workload_expression(q.text)
                assert attribute_versus_literal(expr) is not None, where  # (the shortcut is taken)
                general, direct = compile_expression(expr), compile_local(expr)
                for value in values:
                    event = Event("A", 1, {"x": value})
                    outcomes = [
                        outcome(direct, event),
                        outcome(general, event, event),
                        outcome(predicate.test, event),
                    ]
                    assert outcomes[0] == outcomes[1] == outcomes[2], (where, value)
    assert attribute_versus_literal(parse_workload_expression(
        "q: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x < A.y WITHIN 10")) is None  # fmt: skip


def outcome(fn, *args):
    """True/False, or the type of the error (a bool ordered against a string fails alike in every form)."""
    try:
        return bool(fn(*args))
    except TypeError as error:
        return type(error)


def parse_workload_expression(text: str):
    """The WHERE expression of a one-query workload, as the parser builds it."""
    from hamlet.language.parser import parse_workload_text

    return parse_workload_text(text).queries[0].where


def test_semantics_clause_and_sharing():
    # Four queries with B+ as written; only the two skip-till-any-match ones form a sharable set
    # (``sharing_obstacle``): the NEXT and CONT queries are sets of their own, and ``explain`` says why.
    from hamlet.explain import explain

    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) SEMANTICS skip-till-any-match WITHIN 10\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) SEMANTICS Next WITHIN 10\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(A, B+) SEMANTICS contiguous WHERE B.x < NEXT(B).x WITHIN 10\n"
    )
    assert [q.semantics for q in workload.queries] == ["ANY", "ANY", "NEXT", "CONT"]
    assert [q.whole_substream for q in workload.queries] == [False, False, False, True]
    assert [s.queries for s in workload.sharable_query_sets()] == [("q1", "q2"), ("q3",), ("q4",)]
    text = explain(workload)
    assert text.count("shares nothing: SEMANTICS") == 2
    assert "  semantics: skip-till-next-match (" in text and "  semantics: contiguous (" in text
    assert "trend graph: compiled (native/); its NEXT edges read off positions and times, local" in text  # q3
    assert (  # q4
        "trend graph: compiled (native/); its CONT edges from the previous time's events, each tested (edge "
        "predicates or a NOT between two types), local predicates too" in text
    )
    assert text.count("trend graph: compiled (native/)") == 4


def test_explain_says_how_next_runs_on_a_position_template():
    from hamlet.explain import explain

    text = explain(
        parse_workload("q: RETURN COUNT(*) PATTERN SEQ(A, A) OR SEQ(A, B, A) SEMANTICS NEXT WITHIN 10")
    )
    assert (
        "trend graph: compiled (native/) on its states, each event at every state of its type; its NEXT trends "
        "kept by the states a longer trend may stand at (each event's aggregate split by them, every predecessor "
        "event tested), local predicates too" in text
    )


def test_explain_names_the_joint_graphs_the_kernel_forms():
    """Queries of one shape under one edge predicate: one joint graph (native/src/joint.rs), across windows
    where one graph steps less than one per window: two tumbling windows join; a window sliding through ten
    classes stays apart from them. Queries without an edge predicate share their bursts in graphlets."""
    from hamlet.explain import explain

    def joint_line(windows: list[str]) -> str:
        rising = [
            f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price WITHIN {window}"
            for k, window in enumerate(windows)
        ]
        plain = [f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WITHIN 100" for k in (8, 9)]
        text = "\n".join(rising + plain)
        (line,) = [
            line for line in explain(parse_workload(text)).splitlines() if "joint graphs (static" in line
        ]
        return line.split(": joint graphs (static; hamlet where they pay): ")[1]

    assert joint_line(["100", "100", "100"]) == "{q0, q1, q2}"
    assert joint_line(["100", "600", "100", "600"]) == "{q0, q1, q2, q3}"
    assert joint_line(["100", "600 SLIDE 60", "100", "600 SLIDE 60"]) == "{q0, q2}; {q1, q3}"
    assert joint_line(["100"]) == "none"  # (one query of that shape: nothing to join)


def test_explain_gives_each_reason_a_burst_is_stepped_once_with_the_queries_it_holds_for():
    from hamlet.explain import explain

    rising = [
        f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price WITHIN 100"
        for k in range(3)
    ]
    plain = [f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WITHIN 100" for k in (3, 4)]
    (line,) = [
        line for line in explain(parse_workload("\n".join(rising + plain))).splitlines() if "P+: " in line
    ]
    assert line == (
        "    P+: graphlets shared by {q3, q4}; {q0, q1, q2} one event at a time (edge predicate on P -> P: each P "
        "event meets it on its own)"
    )
