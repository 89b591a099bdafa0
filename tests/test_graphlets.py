"""HAMLET's shared graphlets on the compiled kernel (native/src/graphlet.rs, burst.rs), held to the oracle.

The queries share a Kleene type B+ and ask for every aggregate the kernel propagates through a graphlet's
coefficients (COUNT(*), COUNT(B), SUM over ints and floats, MIN, MAX, AVG) over sliding windows, with local
predicates that make some queries match other events of a burst than the rest (their own graphlet), and
NOT in every place: guarding the way into B+ (no obstacle: its L is the same for the whole burst), leading,
trailing or guarding the way out of B+ (whose queries step those events one by one). ``static`` shares every burst, ``hamlet``
those the benefit model picks; both must equal the brute-force enumerator, and the plan must be what the
kernel says it did (the exact decisions of one burst are in test_hamlet.py and test_worked_examples.py).
"""

from __future__ import annotations

from functools import partial

from hypothesis import given
from hypothesis import strategies as st
from oracle import evaluate_bruteforce
from streams import stream
from test_hamlet import FIGURE_4

from hamlet import Event, evaluate, parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.greta import run_greta
from hamlet.stats import EvaluationStats

SHAPES = [
    "SEQ({p}, B+)", "SEQ({p}, B+, {q})", "SEQ(B+, {q})", "B+", "SEQ({p}+, B+)", "SEQ({p}, B+, NOT {n})",
    "SEQ({p}, NOT {n}, B+)", "SEQ(NOT {n}, {p}, B+)", "SEQ(NOT {n}, B+, {q})", "SEQ({p}, B+, NOT {n}, {q})",
    # Kleene sub-patterns over several types (MUSE): B's events do not precede one another, yet a burst of them
    # is shared (C = b); (SEQ(P+, B))+ shares P+ bursts as well.
    "(SEQ({p}, B))+", "(SEQ({p}+, B))+", "SEQ({q}, (SEQ(B, {p}))+)", "(SEQ({p}, NOT {n}, B))+",
]  # fmt: skip
AGGREGATES = ["COUNT(*)", "COUNT(B)", "SUM(B.x)", "SUM(B.f)", "MIN(B.x)", "MAX(B.f)", "AVG(B.f)", "MIN(P.x)"]


@st.composite
def graphlet_workloads(draw) -> str:
    queries = []
    for i in range(draw(st.integers(2, 4))):
        shape = draw(st.sampled_from(SHAPES))
        p, q, n = draw(st.permutations("ACD"))
        pattern = shape.format(p=p, q=q, n=n)
        returns = ", ".join(draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True)))
        if "{p}" not in shape:
            returns = (
                returns.replace(", MIN(P.x)", "").replace("MIN(P.x), ", "").replace("MIN(P.x)", "COUNT(*)")
            )
        returns = returns.replace("P.", f"{p}.")
        where = draw(st.sampled_from(["", " WHERE B.x < 3", " WHERE B.x >= 1", " WHERE B.f > 0.2"]))
        within = draw(st.sampled_from([6, 10, 20]))
        slide = draw(st.sampled_from([within, within // 2]))
        queries.append(f"q{i}: RETURN {returns} PATTERN {pattern}{where} WITHIN {within} SLIDE {slide}")
    return "\n".join(queries)


@st.composite
def burst_streams(draw) -> list[Event]:
    """Runs of B (bursts, sometimes several events at one time) between single A, C, D events."""
    out: list[Event] = []
    t = 0
    for _ in range(draw(st.integers(1, 5))):
        run_type = draw(st.sampled_from("BBBACD"))
        for _ in range(draw(st.integers(1, 4)) if run_type == "B" else 1):
            t += draw(st.sampled_from([0, 1, 1, 2]))
            x, f = draw(st.integers(0, 4)), draw(st.sampled_from([0.1, 0.25, 1.5, -2.0]))
            out.append(Event(run_type, t, {"x": x, "f": f}))
    return out


@given(graphlet_workloads(), burst_streams())
def test_compiled_graphlets_equal_bruteforce(text, stream):
    workload = parse_workload(text)
    expected = evaluate_bruteforce(workload, stream)
    for strategy in ("static", "hamlet", "greta"):
        stats = EvaluationStats()
        assert evaluate(workload, stream, strategy, stats) == expected, strategy
        assert stats.shared_bursts <= stats.bursts and stats.graphlets >= stats.shared_bursts


def test_bursts_of_a_type_in_a_kleene_sub_pattern_over_several_types_are_shared():
    """(SEQ(A, B))+ over a1 b2 b3 b4 b5 a6 b7 b8 (x = 1..6): an A starts a trend and extends those of the Bs
    before it (a1 1, a6 1 + 4), a B ends the As' (b2-b5 1 each, b7 and b8 6 each): 16 trends. COUNT(B) counts
    each trend's Bs: b7's trends a1 b7, a6 b7 and a1 bX a6 b7 (four) hold 10, b8's as many: 4 + 10 + 10 = 24;
    SUM(B.x) = (1 + 2 + 3 + 4) + (6·5 + 10) + (6·6 + 10) = 96. No B precedes another, so a burst of them is
    one graphlet of C = b; A is in the sub-pattern too (its bursts are single events here)."""
    text = (
        "q1: RETURN COUNT(*), SUM(B.x), MIN(B.x) PATTERN (SEQ(A, B))+ WITHIN 100\n"
        "q2: RETURN COUNT(*), COUNT(B), MIN(B.x) PATTERN (SEQ(A, B))+ WITHIN 50"
    )
    stream = [Event("A", 1), *(Event("B", t, {"x": t - 1}) for t in range(2, 6)), Event("A", 6),
              Event("B", 7, {"x": 5}), Event("B", 8, {"x": 6})]  # fmt: skip
    expected = [("q1", "COUNT(*)", 16), ("q1", "SUM(B.x)", 96), ("q1", "MIN(B.x)", 1),
                ("q2", "COUNT(*)", 16), ("q2", "COUNT(B)", 24), ("q2", "MIN(B.x)", 1)]  # fmt: skip
    assert [
        (r.query, r.aggregate, r.value) for r in evaluate_bruteforce(parse_workload(text), stream)
    ] == expected
    for strategy in ("greta", "static", "hamlet"):
        stats = EvaluationStats()
        assert [(r.query, r.aggregate, r.value) for r in evaluate(text, stream, strategy, stats)] == expected
        # Two bursts of B and two single As. The queries differ only in windows and aggregates, so one graph
        # reads them (f = 4 fields of B): Eq. 7 shares b Bs where b + 1·(1 + 2) + b·4 < b·1·(1 + 1 + 4), b > 3.
        assert (stats.bursts, stats.shared_bursts) == {"greta": (0, 0), "static": (4, 4), "hamlet": (4, 1)}[
            strategy
        ]


def test_a_burst_too_large_for_any_fixed_width_is_shared_exactly():
    # 200 Bs after one A and one C: 2^200 − 1 trends per query, SUM(B.x) = Σ x · 2^199 (each B lies in
    # half the subsets), so AVG(B.x) is the mean of the xs; shared in one graphlet by both queries.
    text = (
        "q1: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q2: RETURN COUNT(*), AVG(B.x) PATTERN SEQ(C, B+) WITHIN 1000"
    )
    stream = [Event("A", 1), Event("C", 2)] + [Event("B", t, {"x": t % 7}) for t in range(3, 203)]
    xs = sum(t % 7 for t in range(3, 203))
    for strategy in ("greta", "static", "hamlet"):
        stats = EvaluationStats()
        rows = [(r.query, r.aggregate, r.value) for r in evaluate(text, stream, strategy, stats)]
        assert rows == [("q1", "COUNT(*)", 2**200 - 1), ("q1", "SUM(B.x)", xs * 2**199),
                        ("q2", "COUNT(*)", 2**200 - 1), ("q2", "AVG(B.x)", xs / 200)]  # fmt: skip
        shared = (0, 0) if strategy == "greta" else (1, 1)
        assert (stats.shared_bursts, stats.graphlets) == shared


def test_a_graph_left_to_python_leaves_the_others_sharing_their_bursts():
    """Figure 4's stream (q1 132, q2 72 trends) with a third query over the same Bs that sums B.x, one of whose
    values is 2^70: the kernel reads no int beyond 64 bits, so q3's graph runs on the Python engine, and the
    kernel decides the bursts again for q1's and q2's graphs alone, which share both bursts of B."""
    text = FIGURE_4 + "\nq3: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, C, B+) WITHIN 100"
    xs = {b: 2**70 if b == "b5" else 1 for b in ("b4", "b5", "b6", "b7", "b13", "b14")}
    events = stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13 b14", x=xs)
    expected = evaluate_bruteforce(parse_workload(text), events)
    assert [(r.query, r.value) for r in expected][:2] == [("q1", 132), ("q2", 72)]
    # Both bursts pay under Eq. 7 (one window class, t = 2, held as one event): b4..b7, 4 + 2·5 = 14 < 2·4·4
    # = 32; b13 b14, 2 + 2·5 = 12 < 2·2·4 = 16. So hamlet shares what static shares; greta shares nothing.
    decisions = {"greta": (0, 0, 0), "static": (2, 2, 2), "hamlet": (2, 2, 2)}
    for strategy, expected_decisions in decisions.items():
        stats = EvaluationStats()
        assert evaluate(text, events, strategy, stats) == expected, strategy
        assert stats.python_partitions == 1
        assert (stats.bursts, stats.shared_bursts, stats.graphlets) == expected_decisions, strategy


@given(
    st.sampled_from([1, 70, 130]),
    st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=4), min_size=1, max_size=6),
)
def test_a_snapshot_beyond_128_bits_is_scaled_by_the_graphlet_exactly(head, burst):
    """A shared burst whose snapshot x counts ~2^head trends (the Bs before it, cut off by a C): the kernel
    scales x by the graphlet's C in place (``Num::mul_assign``: a big value times one word) and adds x·U for
    the linear fields; every strategy equals the Python engine's ints. ``burst``: the x values of each of
    its timestamps (several events at one time: C = Π(1 + m_g) − 1)."""
    text = (
        "q1: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q2: RETURN COUNT(*), AVG(B.x) PATTERN SEQ(C, B+) WITHIN 1000"
    )
    stream = [Event("A", 0), Event("C", 1)] + [Event("B", 2 + i, {"x": i % 3 - 1}) for i in range(head)]
    t = 2 + head
    stream.append(Event("C", t))
    for xs in burst:
        t += 1
        stream.extend(Event("B", t, {"x": x}) for x in xs)
    workload = parse_workload(text)
    expected = evaluate_with(workload, stream, partial(run_greta, native=False))
    assert expected[0].value >= 2**head - 1
    for strategy in ("static", "hamlet", "greta"):
        stats = EvaluationStats()
        assert evaluate(workload, stream, strategy, stats) == expected, strategy
        if strategy == "static":
            assert stats.shared_bursts == 2  # (the head and the burst after the C)
