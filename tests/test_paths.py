"""Differential test of GRETA's predecessor sources on streams too long for the oracle.

Running totals, the two-stack queue (negation), the ordered index (one comparison edge predicate) and the
hash index (equality) must give exactly what the plain scan gives — GRETA's own O(n) predecessor scan.
"""

from __future__ import annotations

from functools import partial

from hypothesis import given, note
from hypothesis import strategies as st
from workloads import events, examples, types_of

from hamlet import parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.graph import TrendGraph
from hamlet.runtime.greta import run_greta
from hamlet.runtime.sources import IndexedSource, QueueSource, RunningSource, ScanSource

SHAPES = [
    # (query, the source kind the optimised path must pick for its transitions)
    ("RETURN COUNT(*), SUM(B.x), MAX(B.x) PATTERN SEQ(A, B+) WITHIN 20 SLIDE 5", RunningSource),
    ("RETURN COUNT(*), MIN(A.x) PATTERN SEQ(A+, NOT C, B) WITHIN 20 SLIDE 10", QueueSource),
    ("RETURN COUNT(*), AVG(B.x) PATTERN SEQ(A, B+) WHERE B.x < NEXT(B).x WITHIN 20", IndexedSource),
    ("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x >= NEXT(B).x WITHIN 20 SLIDE 4", IndexedSource),
    ("RETURN COUNT(*), COUNT(A) PATTERN (SEQ(A+, B))+ WHERE A.x * 2 > NEXT(B).x WITHIN 20", IndexedSource),
    ("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE NEXT(B).y <= B.y WITHIN 20", IndexedSource),
    ("RETURN COUNT(*), SUM(B.y) PATTERN SEQ(A, B+) WHERE B.y = NEXT(B).y WITHIN 20 SLIDE 5", IndexedSource),
    ("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x + NEXT(B).y > 3 WITHIN 20", ScanSource),
    (
        "RETURN COUNT(*) PATTERN SEQ(A+, NOT SEQ(C, D+), B) WHERE D.x < NEXT(D).x WITHIN 20 SLIDE 10",
        QueueSource,
    ),
]


@examples(ci=60)
@given(st.sampled_from(SHAPES), st.data())
def test_optimised_sources_equal_the_plain_scan(shape, data):
    text, kind = shape
    workload = parse_workload(f"q: {text}")
    query = workload.queries[0]
    stream = data.draw(events(types_of(f"q: {text}"), max_events=150))
    note(text)
    kinds = {type(s) for s in TrendGraph(query, query.pattern, _algebra(query, stream), stream, True).sources}
    assert kind in kinds
    expected = evaluate_with(workload, stream, partial(run_greta, plain_scan=True))
    assert evaluate_with(workload, stream, run_greta) == expected


def _algebra(query, stream):
    from hamlet.runtime.aggregates import algebra_for

    return algebra_for(query, stream)
