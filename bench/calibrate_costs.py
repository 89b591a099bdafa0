"""Measure the constants of HAMLET's cost model on this machine and write hamlet/optimizer/calibration.json.

    .venv/bin/python bench/calibrate_costs.py [--write]

Each constant is seconds per operation of the executor as built (see hamlet/optimizer/benefit.py):
``evaluate`` a local predicate on one event, ``factor`` one timestamp group folded into a burst's factor,
``apply`` one burst committed to one window of one query (snapshot x, advance, commit; one slot of a
shape group for the COUNT(*) queries of ``hamlet/runtime/shapes.py``), ``snapshot`` one
rejected event folded into a query's own factor. Measured through the real code paths, best of 5.

``burst_break_even`` and ``partition_setup`` are counted in GRETA steps (one event through one query's
graph), measured on ``SEQ(A<i>, B+, C)`` queries (COUNT(*) in shape columns, COUNT(*) and SUM on their own
graphs) in sliding windows: the shared path (every partition shared) against GRETA, bursts of b = 1..10 B
events. On one long partition, where the set-up does not count, the b at which the two cost the same is
``burst_break_even``; on many trips of one burst each (partitions as the Spark job sees them), it is
``burst_break_even + partition_setup`` (every query reads B). Each b is where the least-squares line of
the cost differences crosses zero, so that one noisy size does not move it much.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import timeit
from functools import partial
from math import prod

from hamlet import Event, parse_workload
from hamlet.api import evaluate, evaluate_with
from hamlet.optimizer.benefit import CALIBRATION, CostModel
from hamlet.runtime.greta import run_greta
from hamlet.runtime.shared import run_shared
from hamlet.stats import EvaluationStats


def per_op(statement, number: int) -> float:
    return min(timeit.repeat(statement, number=1, repeat=5)) / number


def cpu(statement) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        statement()
        best = min(best, time.process_time() - started)
    return best


def stream(burst: int, trips: int, one_partition: bool) -> list[Event]:
    """``trips`` times A0 A1 A2, ``burst`` B events one second apart, C; each trip its own partition or not."""
    events, t = [], 0
    for trip in range(trips):
        key = {"trip": 0 if one_partition else trip}
        events.extend(Event(f"A{j}", t + j, key) for j in range(3))
        events.extend(Event("B", t + 10 + j, {**key, "x": j}) for j in range(burst))
        events.append(Event("C", t + 50, key))
        t += 120
    return events


def crossing(one_partition: bool, trips: int) -> float:
    """The burst size at which the shared path costs what GRETA does (see the module docstring)."""
    workload = parse_workload("\n".join(
        f"q{i}: RETURN {'COUNT(*)' if i % 2 else 'COUNT(*), SUM(B.x)'} PATTERN SEQ(A{i % 3}, B+, C) WHERE [trip] "
        "WITHIN 30 min SLIDE 1 min"
        for i in range(10)
    ))  # fmt: skip
    shared_path = partial(run_shared, sharing="hamlet", model=CostModel(partition_setup=-math.inf))
    extra = []  # (b, CPU seconds of the shared path minus GRETA's)
    for b in range(1, 11):
        events = stream(b, trips, one_partition)
        greta = cpu(lambda: evaluate_with(workload, events, run_greta))  # noqa: B023
        shared = cpu(lambda: evaluate_with(workload, events, shared_path))  # noqa: B023
        extra.append((b, shared - greta))
        print(f"# {'one partition' if one_partition else 'trips'}, bursts of {b}: greta {greta:.3f} s, "
              f"shared path {shared:.3f} s")  # fmt: skip
    # The least-squares line through the differences: one noisy size does not move the crossing much.
    n = len(extra)
    mean_b, mean_d = sum(b for b, _ in extra) / n, sum(d for _, d in extra) / n
    slope = sum((b - mean_b) * (d - mean_d) for b, d in extra) / sum((b - mean_b) ** 2 for b, _ in extra)
    if slope >= 0:
        return float(extra[-1][0])  # the shared path never catches up in this range
    return max(1.0, mean_b - mean_d / slope)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help=f"write {CALIBRATION}")
    args = parser.parse_args()
    query = parse_workload("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < 5 WITHIN 100").queries[0]
    test = query.local_predicates[0].test
    events = [Event("B", t, {"x": t % 10}) for t in range(10_000)]
    evaluate_cost = per_op(lambda: [test(e) for e in events], len(events))
    sizes = [1] * 10_000
    factor_cost = per_op(lambda: prod(1 + m for m in sizes), len(sizes))
    # apply: a workload whose every event is its own burst for 20 queries, minus the per-event share.
    n, k = 4_000, 20
    text = "\n".join(f"q{i}: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100000" for i in range(k))
    stream = [Event("A" if t % 2 else "B", t) for t in range(n)]
    apply_cost = per_op(lambda: evaluate(text, stream, "static", EvaluationStats()), n * k)
    rejected = [(2, 1)] * 10_000
    snapshot_cost = per_op(
        lambda: prod(1 + m for m, _ in rejected) * prod(1 + c for _, c in rejected), len(rejected)
    )
    burst_break_even = crossing(one_partition=True, trips=1500)
    partition_setup = max(0.0, crossing(one_partition=False, trips=400) - burst_break_even)
    constants = {"evaluate": evaluate_cost, "factor": factor_cost, "apply": apply_cost, "snapshot": snapshot_cost,
                 "burst_break_even": burst_break_even, "partition_setup": partition_setup}  # fmt: skip
    print(json.dumps(constants, indent=2))
    if args.write:
        CALIBRATION.write_text(json.dumps(constants, indent=2) + "\n")


if __name__ == "__main__":
    main()
