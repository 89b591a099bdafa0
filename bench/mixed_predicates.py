"""greta / static / hamlet on a mixed-predicate workload where sharing pays in some bursts and not others.

    .venv/bin/python bench/mixed_predicates.py [--queries 20] [--periods 600]

Queries SEQ(A<i mod 5>, B+), every other one with the local predicate B.x < 5. Periods: one event of each
of A0..A4, then a burst of 30 B events; in even periods every B has x < 5 (all queries match every event:
sharing costs nothing), in odd periods most B have x ≥ 5 (the filtered queries reject most events: each
rejected event is an event-level snapshot if they share). Identical results are checked.
"""

from __future__ import annotations

import argparse
import platform
import random
import time

from hamlet import Event, evaluate, parse_workload
from hamlet.stats import EvaluationStats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--periods", type=int, default=600)
    args = parser.parse_args()
    rng = random.Random(3)
    text = "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN SEQ(A{i % 5}, B+){' WHERE B.x < 5' if i % 2 else ''} WITHIN 100000000"
        for i in range(args.queries)
    )
    events, t = [], 0
    for period in range(args.periods):
        for j in range(5):
            events.append(Event(f"A{j}", t))
            t += 1
        for _ in range(30):
            x = rng.randrange(5) if period % 2 == 0 else rng.randrange(3, 10)
            events.append(Event("B", t, {"x": x}))
            t += 1
    workload = parse_workload(text)
    print(f"# {platform.machine()}, Python {platform.python_version()}, {len(events)} events, {args.queries} queries")
    print("| strategy | seconds | shared bursts | event-level snapshots | splits | merges |")
    print("|---|---|---|---|---|---|")
    results = {}
    for strategy in ("greta", "static", "hamlet"):
        stats = EvaluationStats()
        started = time.perf_counter()
        results[strategy] = evaluate(workload, events, strategy, stats)
        seconds = time.perf_counter() - started
        print(f"| {strategy} | {seconds:.3f} | {stats.shared_bursts}/{stats.bursts} | {stats.event_snapshots} "
              f"| {stats.splits} | {stats.merges} |")  # fmt: skip
    print(f"identical: {results['greta'] == results['static'] == results['hamlet']}")


if __name__ == "__main__":
    main()
