"""Predicates over timestamp, date and bool attributes against the same predicates over int attributes, through
``evaluate_table``, in one run.

    .venv/bin/python bench/temporal_predicates.py --events 100000 --repeat 3

Stream: ``--events`` events over four hours, types Start / Reading ×6 / Stop, 50 machines. Each Reading carries
``seen`` (a timestamp[us, UTC], as Spark writes one), ``day`` (a date), ``late`` (a bool) and the same values as
ints (``seen_us``, ``day_n``, ``late_n``): the "temporal" workload compares the first three, the "ints"
workload the others, so both match the same trends. Until the kernel read such columns (session 20) a
predicate over them sent every stream partition to the Python graph; run this file from an older checkout
(``PYTHONPATH=<checkout> .venv/bin/python bench/temporal_predicates.py``) to measure that. CPU seconds per
workload and strategy, best of ``--repeat``; the rows of the two workloads must be equal.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
import pyarrow as pa
from timing import load, machine

from hamlet import evaluate_table, finalize_table
from hamlet.api import prepare
from hamlet.stats import EvaluationStats

SHAPE = """
rising: RETURN COUNT(*), SUM(R.power) PATTERN SEQ(Start S, Reading R+, Stop E)
    WHERE [machine] AND R.{seen} < NEXT(R).{seen} WITHIN 30 min SLIDE 10 min
sameday: RETURN COUNT(*) PATTERN SEQ(Start S, Reading R+) WHERE [machine] AND R.{day} = NEXT(R).{day}
    AND R.{late} = NEXT(R).{late} WITHIN 10 min
"""
WORKLOADS = {
    "temporal": SHAPE.format(seen="seen", day="day", late="late"),
    "ints": SHAPE.format(seen="seen_us", day="day_n", late="late_n"),
}


def table(events: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    times = np.sort(rng.integers(0, 4 * 3600 * 10**6, events)) + 1_767_571_200 * 10**6  # (2026-01-05)
    kinds = rng.choice(["Start", "Reading", "Stop"], events, p=[0.1, 0.8, 0.1])
    # (a reading's own clock: near the event time, out of order now and then, so the edge predicate prunes)
    seen = times + rng.integers(-5, 60, events) * 10**6
    days = seen // (86_400 * 10**6)
    late = rng.random(events) < 0.3
    return pa.table({
        "event_type": kinds,
        "event_time": pa.array(times, pa.int64()).cast(pa.timestamp("us", "UTC")),
        "machine": rng.integers(0, 50, events),
        "power": rng.integers(0, 100, events),
        "seen": pa.array(seen, pa.int64()).cast(pa.timestamp("us", "UTC")),
        "day": pa.array(days.astype(np.int32)).cast(pa.date32()),
        "late": pa.array(late),
        "seen_us": seen,
        "day_n": days,
        "late_n": late.astype(np.int64),
    })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--strategies", nargs="+", default=["greta", "hamlet"])
    args = parser.parse_args()
    events = table(args.events)
    print(f"# {machine()}; {load()} at the start; {args.events:,} events")
    print("| workload | strategy | CPU s | Python partitions | rows |\n|---|---|---|---|---|")
    rows: dict[str, list] = {}
    for name, text in WORKLOADS.items():
        prepared = prepare(text)
        for strategy in args.strategies:
            best, stats = float("inf"), EvaluationStats()
            for _ in range(args.repeat):
                gc.collect()
                stats = EvaluationStats()
                started = time.process_time()
                partials = evaluate_table(prepared, events, strategy, stats)
                best = min(best, time.process_time() - started)
            found = finalize_table(prepared, partials)
            rows.setdefault(strategy, []).append([(r.query, r.window_start, r.group, r.value) for r in found])
            print(
                f"| {name} | {strategy} | {best:.3f} | {stats.python_partitions} | {len(found)} |", flush=True
            )
    assert all(len({repr(r) for r in found}) == 1 for found in rows.values()), "the two workloads differ"
    print(f"# both workloads give the same rows; {load()} at the end")


if __name__ == "__main__":
    main()
