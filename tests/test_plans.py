"""The engine compiles a workload once (issue 16): a prepared workload keeps each sharable query set's
compiled plan (its graph groups, graph kernels and set kernel: ``greta.Plans``) between evaluations. Held
here: every later evaluation, whatever its events, strategy, float columns or path, gives what a fresh
compilation gives (hence the oracle's results, which the other property tests hold fresh compilations to);
a plan is built once per kind; threads evaluating one prepared workload at once never share a kernel."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
from hypothesis import given, note
from hypothesis import strategies as st
from workloads import bursty_events, events, multi_query_workloads, sharing_workloads, table_of, types_of

from hamlet import Event, evaluate, evaluate_table, finalize_table, parse_workload, prepare
from hamlet.runtime import greta

STRATEGIES = ("greta", "static", "hamlet")
# HAMLET Figure 4: 132 trends of q1 and 72 of q2 (SEMANTICS.md's first worked example)
FIGURE_4 = """q1: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(A, B+) WITHIN 100
q2: RETURN COUNT(*), SUM(B.v) PATTERN SEQ(C, B+) WITHIN 100"""
FIGURE_4_STREAM = [Event(t, time) for time, t in enumerate("AACBBBBAACCCBB", start=1)]


def values(workload: object, table: pa.Table, strategy: str) -> list:
    return [r.value for r in finalize_table(workload, evaluate_table(workload, table, strategy))]  # type: ignore[arg-type]


@given(st.one_of(multi_query_workloads(), sharing_workloads()), st.data())
def test_a_prepared_workload_evaluated_again_and_again_equals_a_fresh_compilation(text, data):
    """One prepared workload over a stream, a second one, then the first again, every strategy interleaved,
    through the Arrow and the Event paths: each result is the fresh compilation's. The x column may hold
    ints in one stream and floats in the other, so the plans' kinds (which sums are scaled) change from call
    to call; the last pass finds its plans idle, used by other calls in between."""
    note(text)
    workload = parse_workload(text)  # (each call on it prepares and compiles it afresh)
    prepared = prepare(workload)
    types = types_of(text, every=2)
    streams = [data.draw(st.one_of(events(types, max_events=9), bursty_events(types, max_events=9)))
               for _ in range(2)]  # fmt: skip
    tables = [table_of(stream) for stream in streams]
    fresh = {(i, s): (values(workload, tables[i], s), evaluate(workload, streams[i], s))
             for i in (0, 1) for s in STRATEGIES}  # fmt: skip
    for i in (0, 1, 0):
        note(repr(streams[i]))
        for strategy in STRATEGIES:
            got = (values(prepared, tables[i], strategy), evaluate(prepared, streams[i], strategy))
            assert got == fresh[i, strategy], strategy


def test_a_plan_is_built_once_per_kind_and_the_counts_stay_the_worked_examples(monkeypatch):
    """Figure 4 over one prepared workload, ten times per strategy: one plan built per kind, 132 and 72
    trends and their sums of B.v every time. With v = 1 the sum counts the B events of every trend: a1 and a2
    start a trend with each non-empty subset of the six Bs (6·2^5 B events each), a8 and a9 with each of
    {b13, b14} (2·2^1 each): 2·192 + 2·4 = 392; c3 with the six Bs, c10–c12 with the last two: 192 + 3·4 = 204.
    A table whose v is a float column needs plans of another kind (the sum scaled), each built once too."""
    built: list[tuple] = []
    build = greta.greta_plan
    monkeypatch.setattr(greta, "greta_plan", lambda *args: built.append(args[2:]) or build(*args))
    prepared = prepare(FIGURE_4)
    for v in (pa.array([1] * 14), pa.array([1.0] * 14)):
        table = table_of(FIGURE_4_STREAM).append_column("v", v)
        for _ in range(10):
            for strategy in STRATEGIES:
                assert values(prepared, table, strategy) == [132, 392, 72, 204], strategy
    # per column type: greta's kind (a graph per query) and the shared graphs of static and hamlet
    assert sorted(built) == sorted([(False, True), (True, True)] * 2)


def test_threads_evaluating_one_prepared_workload_at_once_get_their_own_plans():
    """Four threads, each evaluating the same prepared workload twenty times: a plan lent out is in no other
    thread's hands, so every result is Figure 4's."""
    prepared = prepare(FIGURE_4)
    table = table_of(FIGURE_4_STREAM).append_column("v", pa.array([1] * 14))

    def runs(strategy: str) -> list:
        return [values(prepared, table, strategy) for _ in range(20)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(runs, ["hamlet", "greta", "static", "hamlet"]))
    assert outcomes == [[[132, 392, 72, 204]] * 20] * 4


def test_a_pickled_prepared_workload_compiles_anew_where_it_is_unpickled():
    """A prepared workload that has compiled its plans pickles without them (a kernel is not data: Spark
    ships workloads as text, but a user may pickle one) and evaluates exactly after."""
    prepared = prepare(FIGURE_4)
    table = table_of(FIGURE_4_STREAM).append_column("v", pa.array([1] * 14))
    assert values(prepared, table, "hamlet") == [132, 392, 72, 204]
    for strategy in STRATEGIES:
        assert values(pickle.loads(pickle.dumps(prepared)), table, strategy) == [132, 392, 72, 204]
