"""Per-event cost of the GRETA strategy on SEQ(A, B+), with and without an edge predicate.

    .venv/bin/python bench/greta_cost.py [--sizes 10000 50000] [--scan-sizes 2000 5000] [--repeat 3]

One tumbling window holds all events (so "events per window" = stream length); 1 event in 10 is an A,
B.x is a uniform random int. Paths: running totals (no predicate), the ordered index (B.x < NEXT(B).x),
and the plain scan (GRETA's O(n) predecessor scan, for reference at smaller sizes). Reports the best of
``--repeat`` runs in microseconds per event and the size of the final count, which drives the cost of
Python's exact integers.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from functools import partial

from hamlet import Event, parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.greta import run_greta

QUERIES = {
    "no edge predicate": "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000000",
    "B.x < NEXT(B).x": "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < NEXT(B).x WITHIN 1000000",
}


def stream(n: int, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    return [Event("A" if rng.random() < 0.1 else "B", t, {"x": rng.randrange(1000)}) for t in range(n)]


def measure(query: str, n: int, repeat: int, plain_scan: bool) -> tuple[float, int]:
    workload, events = parse_workload(query), stream(n)
    executor = partial(run_greta, plain_scan=plain_scan)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        rows = evaluate_with(workload, events, executor)
        best = min(best, time.perf_counter() - started)
    return best / n * 1e6, rows[0].value.bit_length()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--scan-sizes", type=int, nargs="*", default=[2_000, 5_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# GRETA per-event cost — {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    print("| query | path | events/window | µs/event | bits of COUNT(*) |")
    print("|---|---|---|---|---|")
    for label, query in QUERIES.items():
        path = "running totals" if "NEXT" not in query else "ordered index (Fenwick)"
        for n in args.sizes:
            us, bits = measure(query, n, args.repeat, plain_scan=False)
            print(f"| {label} | {path} | {n} | {us:.2f} | {bits} |", flush=True)
        for n in args.scan_sizes:
            us, bits = measure(query, n, 1, plain_scan=True)
            print(f"| {label} | plain scan | {n} | {us:.2f} | {bits} |", flush=True)


if __name__ == "__main__":
    main()
