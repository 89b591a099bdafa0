"""greta / static / hamlet on a mixed-predicate workload where sharing pays in some bursts and not others.

    .venv/bin/python bench/mixed_predicates.py [--queries 20] [--periods 600] [--repeat 3]

Queries SEQ(A<i mod 5>, B+), every other one with the local predicate B.x < 5. Periods: one event of each
of A0..A4, then a burst of 30 B events; in even periods every B has x < 5 (all queries match every event:
sharing costs nothing), in odd periods most B have x ≥ 5 (the filtered queries reject most events: each
rejected event is an event-level snapshot if they share). Identical results are checked; strategies are
interleaved, best of ``--repeat`` (``timing.py``).
"""

from __future__ import annotations

import argparse
import random

from timing import load, machine, measure_all

from hamlet import Event, parse_workload


def mixed_workload(queries: int) -> str:
    return "\n".join(
        f"q{i}: RETURN COUNT(*) PATTERN SEQ(A{i % 5}, B+){' WHERE B.x < 5' if i % 2 else ''} WITHIN 100000000"
        for i in range(queries)
    )


def mixed_stream(periods: int, burst: int = 30) -> list[Event]:
    rng = random.Random(3)
    events, t = [], 0
    for period in range(periods):
        for j in range(5):
            events.append(Event(f"A{j}", t))
            t += 1
        for _ in range(burst):
            x = rng.randrange(5) if period % 2 == 0 else rng.randrange(3, 10)
            events.append(Event("B", t, {"x": x}))
            t += 1
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--periods", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    events = mixed_stream(args.periods)
    results = measure_all(parse_workload(mixed_workload(args.queries)), events, ["greta", "static", "hamlet"],
                          args.repeat)  # fmt: skip
    print(f"# {machine()}; {load()}; {len(events)} events, {args.queries} queries")
    print("| strategy | CPU s | shared bursts | event-level snapshots | splits | merges |")
    print("|---|---|---|---|---|---|")
    for strategy, (seconds, _, stats) in results.items():
        print(f"| {strategy} | {seconds:.3f} | {stats.shared_bursts}/{stats.bursts} | {stats.event_snapshots} "
              f"| {stats.splits} | {stats.merges} |")  # fmt: skip
    rows = [r for _, r, _ in results.values()]
    print(f"identical: {all(r == rows[0] for r in rows)}")


if __name__ == "__main__":
    main()
