"""Measure the constants of HAMLET's cost model on this machine and write hamlet/optimizer/calibration.json.

    .venv/bin/python bench/calibrate_costs.py [--write [NAME ...]]

``--write`` writes every constant measured; ``--write compiled_step`` only that one, the others kept.

Each constant is seconds per operation of the executor as built (see hamlet/optimizer/benefit.py):
``evaluate`` a local predicate on one event, ``factor`` one timestamp group folded into a burst's factor,
``apply`` one burst committed to one window of one query (snapshot x, advance, commit; one slot of a
shape group for the COUNT(*) queries of ``hamlet/runtime/shapes.py``), ``snapshot`` one
rejected event folded into a query's own factor. Measured through the real code paths, best of 5.

``burst_break_even``, ``group_event`` and ``partition_setup`` are counted in GRETA steps: one event through
one query's graph in Python (``native=False``), its seconds the slope of GRETA's time over its steps across
the burst sizes below (a trip also costs GRETA a fixed part, which the shared path pays as well).
``compiled_step`` is a step of the compiled graphs (``runtime/native.py``) in those steps: how GRETA's time
on the kernel grows with its time in Python, over trips with longer and longer bursts (a partition's fixed
costs drop out: the decision weighs the steps the shared path takes away from the compiled graphs). Timings
are medians over rounds that run every variant once (``rounds``). The step constants decide
whether a stream partition takes the shared path, which matters for small partitions, so they are
measured on 400 trips, each its own partition, of A0 A1 A2, a burst of b = 1..10 B events, C; queries
``SEQ(A<i>, B+, C)`` in sliding windows, half of them ``WHERE B.x < 3`` (the B events of a burst carry
x = 0, 1, 2, ..., so longer bursts hold event-level snapshots); the shared path (every partition shared)
against GRETA:

* 10 COUNT(*), SUM queries, each on its own graph: a trip with a burst of one event saves nothing (the
  event steps through the queries' graphs), so what the shared path costs more is the set-up:
  ``partition_setup`` per query. From the b at which the least-squares line of the extra costs over
  b = 2..10 crosses zero, 10·(b − ``burst_break_even``) = 10·``partition_setup``.
* 10 COUNT(*) queries, one shape group: GRETA takes 20 + 10·b steps per trip, the shared path the set-up and
  ``group_event`` per segment the group reads (A0, A1, A2, the burst, C) and window it falls into (30);
  the median over b.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import timeit
from collections.abc import Callable
from functools import partial
from math import prod
from statistics import median
from typing import Any

from hamlet import Event, parse_workload
from hamlet.analysis.workload import Workload
from hamlet.api import evaluate, evaluate_with
from hamlet.optimizer.benefit import CALIBRATION, CostModel
from hamlet.runtime.greta import run_greta
from hamlet.runtime.shared import run_shared
from hamlet.stats import EvaluationStats


def per_op(statement, number: int) -> float:
    return min(timeit.repeat(statement, number=1, repeat=5)) / number


def cpu(statement) -> float:
    started = time.process_time()
    statement()
    return time.process_time() - started


def rounds(
    pairs: dict[int, tuple[Callable[[], Any], Callable[[], Any]]], repeat: int = 9
) -> dict[int, tuple[float, float, float]]:
    """Per key: the median CPU seconds of its two statements and the median of second/first, over
    ``repeat`` rounds that each run every pair once, back to back. This VM's CPU speed drifts by up to
    ±40 % over tens of seconds: a round takes a few, and a pair a fraction of one, so medians over rounds
    and ratios within pairs hold where separate bests per statement did not."""
    seen: dict[int, list[tuple[float, float]]] = {key: [] for key in pairs}
    for _ in range(repeat):
        for key, (first, second) in pairs.items():
            seen[key].append((cpu(first), cpu(second)))
    return {key: (median(a for a, _ in xs), median(b for _, b in xs), median(b / a for a, b in xs))
            for key, xs in seen.items()}  # fmt: skip


def stream(burst: int, trips: int) -> list[Event]:
    """``trips`` times A0 A1 A2, ``burst`` B events one second apart, C; each trip its own partition."""
    events, t = [], 0
    for trip in range(trips):
        key = {"trip": trip}
        events.extend(Event(f"A{j}", t + j, key) for j in range(3))
        events.extend(Event("B", t + 10 + j, {**key, "x": j}) for j in range(burst))
        events.append(Event("C", t + 50, key))
        t += 120
    return events


def workload(aggregates: Callable[[int], str]) -> Workload:
    return parse_workload("\n".join(
        f"q{i}: RETURN {aggregates(i)} PATTERN SEQ(A{i % 3}, B+, C) WHERE [trip]{' AND B.x < 3' if i % 4 > 1 else ''} "
        "WITHIN 30 min SLIDE 1 min"
        for i in range(10)
    ))  # fmt: skip


PYTHON_GRETA = partial(run_greta, native=False)  # the unit: a step of GRETA's graphs in Python


def compare(w: Workload, trips: int) -> list[tuple[int, float]]:
    """Per burst size b: (b, what the shared path costs beyond GRETA per trip, in GRETA steps)."""
    shared_path = partial(
        run_shared, sharing="hamlet", model=CostModel(partition_setup=-math.inf), native=False
    )
    streams = {b: stream(b, trips) for b in range(1, 11)}
    steps = {
        b: sum(1 for e in events for q in w.queries if e.type in q.types) for b, events in streams.items()
    }
    measured = rounds({b: (partial(evaluate_with, w, events, PYTHON_GRETA), partial(evaluate_with, w, events, shared_path))
                       for b, events in streams.items()})  # fmt: skip
    # A step is GRETA's marginal one: a trip costs it a fixed part besides, which the shared path pays too.
    step = slope([(steps[b], greta) for b, (greta, _, _) in measured.items()])
    out = []
    for b, (greta, shared, ratio) in measured.items():
        out.append((b, greta * (ratio - 1) / step / trips))
        print(f"# {trips} trips, bursts of {b}: greta {greta:.3f} s, shared path {shared:.3f} s, "
              f"ratio {ratio:.3f}, {out[-1][1]:+.2f} steps per trip")  # fmt: skip
    print(f"# a GRETA step: {step * 1e6:.2f} µs")
    return out


def compiled_step(trips: int = 100) -> float:
    """A GRETA step on the compiled graphs, in steps of Python's: the slope of the kernel's time over
    Python's on trips with bursts of 20, 40, ..., 100 B events (least squares; what a partition costs besides
    its steps drops out). 2^100 trends still fit the kernel's 128 bits: no partition falls back to Python."""
    w = workload(lambda i: "COUNT(*), SUM(B.x)")
    streams = {burst: stream(burst, trips) for burst in range(20, 101, 20)}
    measured = rounds({burst: (partial(evaluate_with, w, events, PYTHON_GRETA),
                               partial(evaluate_with, w, events, partial(run_greta, native=True)))
                       for burst, events in streams.items()})  # fmt: skip
    for burst, (python, compiled, _) in measured.items():
        print(f"# {trips} trips, bursts of {burst}: greta {python:.3f} s, greta compiled {compiled:.3f} s")
    return slope([(python, compiled) for python, compiled, _ in measured.values()])


def slope(points: list[tuple[float, float]]) -> float:
    """The least-squares slope of y over x."""
    n = len(points)
    mean_x, mean_y = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)


def crossing(extra: list[tuple[int, float]]) -> float:
    """The b at which the least-squares line through the extra costs crosses zero."""
    n = len(extra)
    mean_b, mean_d = sum(b for b, _ in extra) / n, sum(d for _, d in extra) / n
    rate = slope([(float(b), d) for b, d in extra])
    if rate >= 0:
        return float(extra[-1][0])  # the shared path never catches up in this range
    return mean_b - mean_d / rate


def step_constants(trips: int = 400) -> dict[str, float]:
    alone = compare(workload(lambda i: "COUNT(*), SUM(B.x)"), trips)
    # A burst of one event saves nothing (it steps through the queries' own graphs): the extra is the set-up.
    partition_setup = max(0.0, alone[0][1] / 10)
    # From b* on, a trip's burst pays for the set-up: 10·(b* − burst_break_even) = 10·partition_setup.
    burst_break_even = max(0.0, crossing(alone[1:]) - partition_setup)
    grouped = compare(workload(lambda i: "COUNT(*)"), trips)
    # GRETA: 20 + 10·b steps per trip; the shared path: the set-up and five segments read by the group, each
    # in 30 windows (WITHIN 30 min SLIDE 1 min).
    group_event = median((extra + 20 + 10 * b - 10 * partition_setup) / (5 * 30) for b, extra in grouped)
    return {"burst_break_even": burst_break_even, "group_event": group_event, "partition_setup": partition_setup,
            "compiled_step": compiled_step()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", nargs="*", metavar="NAME",
                        help=f"write {CALIBRATION}: every constant, or only those named")  # fmt: skip
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
    constants = {"evaluate": evaluate_cost, "factor": factor_cost, "apply": apply_cost, "snapshot": snapshot_cost,
                 **step_constants()}  # fmt: skip
    print(json.dumps(constants, indent=2))
    if args.write is not None:
        unknown = set(args.write) - set(constants)
        if unknown:
            parser.error(
                f"--write: no constant {', '.join(sorted(unknown))}; measured: {', '.join(constants)}"
            )
        kept = json.loads(CALIBRATION.read_text()) if args.write and CALIBRATION.exists() else {}
        chosen = {k: v for k, v in constants.items() if not args.write or k in args.write}
        CALIBRATION.write_text(json.dumps({**kept, **chosen}, indent=2) + "\n")


if __name__ == "__main__":
    main()
