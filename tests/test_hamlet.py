"""HAMLET: the paper's snapshot example, the benefit model's numbers, and split/merge decisions."""

from __future__ import annotations

import math
from functools import partial
from itertools import groupby

import pytest
from hypothesis import given
from streams import stream
from workloads import bursty_events, sharing_workloads

from hamlet import Event, parse_workload
from hamlet.api import evaluate, evaluate_with
from hamlet.optimizer.benefit import CostModel, paper_benefit, paper_nonshared_cost, paper_shared_cost
from hamlet.optimizer.choice import Candidate, choose_sharing
from hamlet.runtime.aggregates import CountAlgebra
from hamlet.runtime.greta import graph_groups, run_greta
from hamlet.runtime.native import set_kernel_for
from hamlet.runtime.shared import run_shared
from hamlet.stats import EvaluationStats

FIGURE_4 = (
    "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100\nq2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100"
)


@pytest.mark.parametrize("sharing", ["static", "hamlet"])
def test_snapshots_of_figure_4_and_table_4(sharing):
    trace: list = []
    # The paper's example on the shared path even where this machine's costs would not share bursts so short.
    executor = partial(run_shared, sharing=sharing, trace=trace, model=CostModel(partition_setup=-math.inf))
    rows = evaluate_with(
        parse_workload(FIGURE_4), stream("a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13 b14"), executor
    )
    assert [(r.query, r.value) for r in rows] == [("q1", 132), ("q2", 72)]
    # Burst b4..b7 shares snapshot x, burst b13 b14 snapshot y (values per query, window [0, 100)).
    assert trace == [
        {"type": "B", "queries": ["q1", "q2"], "snapshot": {"q1": {0: 2}, "q2": {0: 1}}},
        {"type": "B", "queries": ["q1", "q2"], "snapshot": {"q1": {0: 34}, "q2": {0: 19}}},
    ]


@pytest.mark.parametrize(
    "b, n, s_p, s_c, k, g, t, shared, nonshared",
    [
        (4, 7, 1, 1, 2, 4, 2, 44, 56),  # Eq. 8: share B3
        (4, 11, 2, 1, 2, 8, 2, 120, 88),  # Eq. 9: split B3
        (4, 15, 1, 1, 2, 4, 2, 76, 120),  # Eq. 10: merge into B6
    ],
)
def test_paper_benefit_model(b, n, s_p, s_c, k, g, t, shared, nonshared):
    assert paper_shared_cost(b, n, s_p, s_c, k, g, t) == shared
    assert paper_nonshared_cost(k, b, n) == nonshared
    assert paper_benefit(b, n, s_p, s_c, k, g, t) == nonshared - shared


def test_query_set_choice_follows_the_pruning_principles():
    model = CostModel(evaluate=1.0, factor=1.0, apply=1.0, snapshot=1.0)
    candidates = [
        Candidate("q1", filtered=False, rejected=0, windows=1),  # no snapshot: always shared (Thm 4.3)
        Candidate("q2", filtered=True, rejected=0, windows=1),  # no snapshot either
        Candidate("q3", filtered=True, rejected=3, windows=1),  # 3 snapshots < 10 groups: beneficial
        Candidate("q4", filtered=True, rejected=12, windows=1),  # 12 snapshots > 10 groups: not (Thm 4.5)
    ]
    assert choose_sharing(candidates, b=20, groups=10, model=model) == {"q1", "q2", "q3"}
    assert choose_sharing(candidates[3:], b=20, groups=10, model=model) == set()  # one query shares nothing


def _burst(start: int, xs: list[int]) -> list[Event]:
    return [Event("B", start + i, {"x": x}) for i, x in enumerate(xs)]


def test_hamlet_splits_when_a_query_matches_too_few_events_of_a_burst_and_merges_after():
    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WHERE B.x < 5 WITHIN 1000"
    )
    events = (
        [Event("A", 1), Event("C", 2)] + _burst(10, [1, 1, 1, 1])  # q2 matches every b: one graphlet
        + [Event("A", 20)] + _burst(30, [9, 9, 1, 9, 9, 9, 9, 9])  # q2 matches 1 of 8: split
        + [Event("C", 40)] + _burst(50, [2, 2, 2])  # all matched again: merged
    )  # fmt: skip
    # The compiled kernel's decisions (native/src/burst.rs), one window class, B with 2 predecessor types,
    # each graph holding a burst it shares as one event: burst 1, both queries on 4 events: Shared
    # 4 + 2·(4 + 1) = 14 < NonShared 2·4·(3 + 1) = 32. Burst 2: q1 alone on its 8 events, 8 + 4 + 1 = 13 <
    # 32, shares; q2 on its one, 1 + 4 + 1 = 6 is not < 1·4 = 4: it splits off and steps its event. Burst 3,
    # both on 3 events: 3 + 2·5 = 13 < 24, q2 merges back. ``static`` shares every burst, in 4 graphlets
    # (burst 2 has two sets of matched events); one snapshot per query each.
    expected = {
        "greta": (0, 0, 0, 0, 0, 0),
        "static": (3, 3, 4, 6, 0, 0),
        "hamlet": (3, 3, 3, 5, 1, 1),
    }
    results = {}
    for strategy, decisions in expected.items():
        stats = EvaluationStats()
        results[strategy] = evaluate(workload, events, strategy, stats)
        assert (stats.bursts, stats.shared_bursts, stats.graphlets, stats.graphlet_snapshots, stats.splits,
                stats.merges) == decisions  # fmt: skip
    assert results["greta"] == results["static"] == results["hamlet"]
    assert [r.value for r in results["greta"]] == [
        # q1: a1 starts 2^15 - 1 trends over the 15 b's; a20 2^11 - 1 over the 11 after it.
        (2**15 - 1) + (2**11 - 1),
        # q2 matches 4 + 1 + 3 = 8 b's: c2 reaches all 8, c40 the last 3.
        (2**8 - 1) + (2**3 - 1),
    ]


def test_hamlet_runs_a_partition_of_small_bursts_without_sharing():
    """A partition whose bursts are below the break-even size runs every query on its own graph (GRETA's
    plan, no shared state built); one with a long burst takes the shared path. Results are the same."""
    workload = parse_workload(
        "q1: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WHERE [trip] WITHIN 1000\n"
        "q2: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(C, B+) WHERE [trip] WITHIN 1000"
    )
    # Trip 1: B bursts of 1, 2 and 1 events (A and C between them); trip 2: one burst of 6.
    small = [Event(t, s, {"trip": 1, "x": 1}) for t, s in
             [("A", 1), ("C", 2), ("B", 10), ("A", 100), ("B", 200), ("B", 201), ("C", 300), ("B", 400)]]  # fmt: skip
    large = [Event("A", 1, {"trip": 2}), Event("C", 2, {"trip": 2})] + [
        Event("B", 10 + i, {"trip": 2, "x": 1}) for i in range(6)
    ]  # fmt: skip
    rows = evaluate_with(workload, small + large, run_greta)
    assert [(r.query, r.aggregate, r.value) for r in rows] == [
        # q1, trip 1: a1 reaches the 4 b's (2^4 − 1 trends, each b in 2^3: SUM 32), a100 the last 3 (7, 12);
        # trip 2: 2^6 − 1 = 63 trends, SUM 6·2^5 = 192. q2: c2 as a1 (15, 32), c300 only b400 (1, 1).
        ("q1", "COUNT(*)", 15 + 7 + 63), ("q1", "SUM(B.x)", 32 + 12 + 192),
        ("q2", "COUNT(*)", 15 + 1 + 63), ("q2", "SUM(B.x)", 32 + 1 + 192),
    ]  # fmt: skip
    # Sharing pays when the bursts save more than 2 GRETA steps per query (4 here): a burst of b ≥ 2 events
    # saves each of its 2 readers b − 1.5.
    hamlet = partial(run_shared, sharing="hamlet", model=CostModel(burst_break_even=1.5, partition_setup=2.0))
    stats = EvaluationStats()
    assert evaluate_with(workload, small, hamlet, stats=stats) == evaluate_with(workload, small, run_greta)
    assert (stats.bursts, stats.shared_bursts) == (3, 0)  # saves 2·(2 − 1.5) = 1 < 4: alone
    stats = EvaluationStats()
    assert evaluate_with(workload, large, hamlet, stats=stats) == evaluate_with(workload, large, run_greta)
    assert (stats.bursts, stats.shared_bursts, stats.graphlet_snapshots) == (
        1,
        1,
        1,
    )  # saves 2·(6 − 1.5) = 9 > 4: shared
    assert evaluate_with(workload, small + large, hamlet) == rows
    assert evaluate_with(workload, small + large, partial(run_shared, sharing="static")) == rows


def test_hamlet_shares_a_partition_of_single_events_when_shape_columns_pay():
    """COUNT(*) queries of one shape take every event in one pass over their columns (``shapes.py``), so a
    partition pays for the shared path without a single burst of two events when the columns save more
    than the set-up; at a higher cost per column read it runs on GRETA's graphs. Results are the same."""
    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x > 0 WITHIN 1000\n"
        "q4: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x > 0 WITHIN 1000"
    )
    events = [Event("A" if t % 2 else "B", t, {"x": 1}) for t in range(1, 7)]  # a1 b2 a3 b4 a5 b6
    # a1 starts 2^3 − 1 trends over b2 b4 b6, a3 2^2 − 1, a5 one: 11 per query.
    expected = [(q, 11) for q in ("q1", "q2", "q3", "q4")]
    for executor in (run_greta, partial(run_shared, sharing="static")):
        assert [(r.query, r.value) for r in evaluate_with(workload, events, executor)] == expected
    # Six segments, each read by the 4 members at one position: 6·(4 − group_event) against 2·4 of set-up.
    for group_event, shared_bursts in ((2.0, 3), (3.5, 0)):  # saves 12 > 8: shared; saves 3 < 8: alone
        stats = EvaluationStats()
        model = CostModel(burst_break_even=1.5, group_event=group_event, partition_setup=2.0)
        rows = evaluate_with(
            workload, events, partial(run_shared, sharing="hamlet", model=model), stats=stats
        )
        assert [(r.query, r.value) for r in rows] == expected
        assert (stats.bursts, stats.shared_bursts) == (3, shared_bursts)


def reference_segments(events, pane_of):
    """Definition 4.1 as first written here: timestamp groups first, then maximal runs of groups of one
    type within one pane; a group of several types is a segment of its own (type None)."""
    batches = [(t, list(b)) for t, b in groupby(events, key=lambda e: e.time)]
    i = 0
    while i < len(batches):
        time, batch = batches[i]
        event_type = batch[0].type
        if len(batch) > 1 and any(e.type != event_type for e in batch):
            yield None, [(time, batch)]
            i += 1
            continue
        pane = pane_of(time)
        j = i + 1
        while (
            j < len(batches)
            and pane_of(batches[j][0]) == pane
            and all(e.type == event_type for e in batches[j][1])
        ):
            j += 1
        yield event_type, batches[i:j]
        i = j


def test_the_python_shared_path_weighs_compiled_graphs_at_any_count():
    """Against compiled graphs the Python shared path's burst does not pay (``CostModel.compiled_step``): the
    partition runs on the kernel, whose integers have no width, so a count beyond 128 bits stays there too
    (it was handed back to Python, and weighed again, before). Results are the same either way."""
    workload = parse_workload(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 1000"
    )
    # A burst of b Bs read by the two readers of B+ on their own graphs saves 2·(b − 1.5) against Python; a
    # compiled step costs nothing here, so against the kernel it costs 2·b more than that: never worth it.
    model = CostModel(burst_break_even=1.5, group_event=2.0, partition_setup=2.0, compiled_step=0.0)
    hamlet = partial(run_shared, sharing="hamlet", model=model)
    for b, shared_bursts in ((100, 0), (130, 0)):  # 2^100 − 1 trends fit 128 bits, 2^130 − 1 does not
        events = [Event("A", 1), Event("C", 2)] + [Event("B", t) for t in range(3, 3 + b)]
        stats = EvaluationStats()
        rows = evaluate_with(workload, events, hamlet, stats=stats)
        expected = [("q1", 2**b - 1), ("q2", 2**b - 1)]
        assert [(r.query, r.value) for r in rows] == expected
        assert (stats.bursts, stats.shared_bursts) == (1, shared_bursts)
        for strategy in ("greta", "static"):  # the fixed plans count the same trends, kernel or not
            assert [(r.query, r.value) for r in evaluate(workload, events, strategy)] == expected


def test_graphs_compiled_one_by_one_are_weighed_as_compiled():
    """A literal beyond 127 bits keeps ``B.x >= B.y`` out of the set kernel, so each graph is compiled on its
    own (its events matched in Python first). Those graphs count as compiled too: a partition they take
    whole stays on them, at any count."""
    big = 2**127
    workload = parse_workload(
        f"q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x + {big} >= B.y + {big} WITHIN 1000\n"
        f"q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WHERE B.x + {big} >= B.y + {big} WITHIN 1000"
    )
    model = CostModel(burst_break_even=1.5, group_event=2.0, partition_setup=2.0, compiled_step=0.0)
    hamlet = partial(run_shared, sharing="hamlet", model=model)
    algebras = {q.name: CountAlgebra() for q in workload.queries}
    assert run_greta(workload.queries, algebras, EvaluationStats(), share_graphs=True).compiled == {
        "q1",
        "q2",
    }
    assert set_kernel_for(graph_groups(workload.queries, algebras, native=True), {(): 0}) is None
    for b, shared_bursts in ((100, 0), (130, 0)):
        # b matching Bs, every tenth followed by one that fails the predicate (x < y).
        bs = [Event("B", 3 + 2 * i, {"x": 1, "y": 0}) for i in range(b)]
        bs += [Event("B", 4 + 2 * i, {"x": 0, "y": 1}) for i in range(0, b, 10)]
        events = [Event("A", 1), Event("C", 2), *sorted(bs, key=lambda e: e.time)]
        stats = EvaluationStats()
        rows = evaluate_with(workload, events, hamlet, stats=stats)
        expected = [("q1", 2**b - 1), ("q2", 2**b - 1)]
        assert [(r.query, r.value) for r in rows] == expected
        assert (stats.bursts, stats.shared_bursts) == (1, shared_bursts)
        for strategy in ("greta", "static"):  # the fixed plans count the same trends, kernel or not
            assert [(r.query, r.value) for r in evaluate(workload, events, strategy)] == expected


@given(sharing_workloads(), bursty_events())
def test_the_sharing_decision_weighs_exactly_the_segments_of_the_partition(text, stream_events):
    # The segments come from one index scan (shared._spans), for the shared path (_segments) and for the
    # decision (SharingPlan.segment_readers, which never builds them); both must be Definition 4.1's. The
    # compiled decision (Layout.segment_costs) must weigh them to the same float, summed in the same order,
    # whichever queries run on compiled graphs.
    from hamlet.api import prepare
    from hamlet.runtime.aggregates import algebra_for
    from hamlet.runtime.partition import partition_stream
    from hamlet.runtime.shared import SharingPlan, _segments

    stream_events = sorted(stream_events, key=lambda e: e.time)
    models = (CostModel(), CostModel.calibrated(), CostModel(burst_break_even=2.7, compiled_step=0.13))
    for query_set in prepare(text).sets:
        queries = list(query_set.queries)
        algebras = {q.name: algebra_for(q, stream_events) for q in queries}
        some = frozenset(q.name for q in queries[::2])
        plans = [SharingPlan(queries, algebras, "hamlet", CostModel())]
        plans += [SharingPlan(queries, algebras, "hamlet", model, True, some) for model in models]
        for partition in partition_stream(query_set.attributes, set(query_set.types), stream_events).values():
            segments = list(reference_segments(partition, plans[0].pane_of))
            assert list(_segments(partition, plans[0].pane_of)) == segments
            bursts = sum(1 for event_type, _ in segments if event_type in plans[0].layout(partition).sharers)
            for plan in plans:
                layout = plan.layout(partition)
                expected = []
                for event_type, batches in segments:
                    if event_type is None:
                        expected += [(1, 0, layout.types[e.type].group_members, layout.types[e.type].group_windows,
                                      layout.types[e.type].compiled)
                                     for e in batches[0][1] if e.type in layout.types]  # fmt: skip
                    elif event_type in layout.types:
                        r = layout.types[event_type]
                        expected.append((sum(len(b) for _, b in batches), len(r.closed_runs), r.group_members,
                                         r.group_windows, r.compiled))  # fmt: skip
                assert plan.segment_readers(layout, partition) == (expected, bursts)
                weighed = (
                    sum(map(plan.model.saved_steps, expected)),
                    sum(b * c for b, *_, c in expected),
                    bursts,
                )
                assert plan.model.weigh(expected) == weighed[:2]
                assert plan.weigh(layout, partition) == weighed
                costs = layout.segment_costs
                # (a pane that is not a whole number of the kernel's microseconds: Python weighs it)
                assert (costs is None) == (not plan.native or (plan.pane * 1_000_000).denominator != 1)
                if costs is not None:
                    assert costs.saved(partition) == weighed
