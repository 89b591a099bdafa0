"""greta / static / hamlet on trips whose graphs the kernel compiles as one set, or one by one.

    .venv/bin/python bench/compiled_graphs.py [--trips 400] [--burst 40] [--repeat 5]

Trips (each its own partition) of A0 A1 A2, a burst of ``--burst`` B events one second apart, C; 10 COUNT(*)
queries ``SEQ(A<i mod 3>, B+, C)`` in sliding windows (one shape group, ``runtime/shapes.py``), once with
``B.x >= 0`` (the set kernel evaluates it: one call per partition for all graphs, ``native.NativeSet``) and
once with ``B.x + 1 >= B.y`` (it does not: each graph is compiled on its own over the events Python matched
for it). Every B matches both. Against Python's graphs the shared columns pay for bursts this long; against
compiled ones they do not, however the graphs are compiled, and ``hamlet`` has to see that in both cases.
Identical results are checked; strategies are interleaved, best of ``--repeat`` CPU seconds (``timing.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timing import load, machine, measure_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hamlet import Event, parse_workload

PREDICATES = {"set kernel": "B.x >= 0", "one by one": "B.x + 1 >= B.y"}


def trips(count: int, burst: int) -> list[Event]:
    events, t = [], 0
    for trip in range(count):
        key = {"trip": trip}
        events.extend(Event(f"A{j}", t + j, key) for j in range(3))
        events.extend(Event("B", t + 10 + j, {**key, "x": j, "y": j % 3}) for j in range(burst))
        events.append(Event("C", t + 50 + burst, key))
        t += 120 + burst
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trips", type=int, default=400)
    parser.add_argument("--burst", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    events = trips(args.trips, args.burst)
    print(f"# {machine()}; {load()}; {args.trips} trips, bursts of {args.burst}")
    print("| graphs compiled | strategy | CPU s | × greta | × static | shared bursts | identical |")
    print("|---|---|---|---|---|---|---|")
    for compiled, predicate in PREDICATES.items():
        workload = parse_workload(
            "\n".join(
                f"q{i}: RETURN COUNT(*) PATTERN SEQ(A{i % 3}, B+, C) WHERE [trip] AND {predicate} "
                "WITHIN 30 min SLIDE 1 min"
                for i in range(10)
            )
        )
        results = measure_all(workload, events, ["greta", "static", "hamlet"], args.repeat)
        greta, static, first = results["greta"][0], results["static"][0], results["greta"][1]
        for strategy, (seconds, rows, stats) in results.items():
            print(
                f"| {compiled} | {strategy} | {seconds:.3f} | {greta / seconds:.2f} | {static / seconds:.2f} "
                f"| {stats.shared_bursts}/{stats.bursts} | {rows == first} |"
            )
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
