"""Throughput of greta / static / hamlet on the HAMLET authors' synthetic shape, in one run.

    .venv/bin/python bench/hamlet_throughput.py --queries 50 --events 20000 --burst 30

Workload: ``--queries`` flat sequences SEQ(E<a>, E2+, E<b>) of distinct types around the shared E2+
(a, b drawn from E1, E3..E13), COUNT(*), one tumbling window holding the whole stream. Stream: periods
of 13 types × 5 events (five rounds of E1..E13) followed by a burst of ``--burst`` E2 events, one event
per time unit, ``--events`` events in all. Every strategy must give identical counts; the ratios are
measured in the same process, one strategy after the other, best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from hamlet import Event, evaluate, parse_workload
from hamlet.stats import EvaluationStats


def workload(queries: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    others = [f"E{i}" for i in range(1, 14) if i != 2]
    lines = []
    for i in range(queries):
        a, b = rng.sample(others, 2)
        lines.append(f"q{i}: RETURN COUNT(*) PATTERN SEQ({a}, E2+, {b}) WITHIN 10000000")
    return "\n".join(lines)


def stream(events: int, burst: int) -> list[Event]:
    out: list[Event] = []
    while len(out) < events:
        for _ in range(5):
            for i in range(1, 14):
                out.append(Event(f"E{i}", len(out)))
        start = len(out)
        out.extend(Event("E2", start + j) for j in range(burst))
    return out[:events]


def measure(text: str, events: list[Event], strategy: str, repeat: int) -> tuple[float, list, EvaluationStats]:
    parsed = parse_workload(text)
    best, rows, stats = float("inf"), [], EvaluationStats()
    for _ in range(repeat):
        stats = EvaluationStats()
        started = time.perf_counter()
        rows = evaluate(parsed, events, strategy, stats)
        best = min(best, time.perf_counter() - started)
    return best, rows, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, nargs="+", default=[50])
    parser.add_argument("--events", type=int, nargs="+", default=[20_000])
    parser.add_argument("--burst", type=int, nargs="+", default=[30])
    parser.add_argument("--strategies", nargs="+", default=["greta", "static", "hamlet"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", help="append one JSON line per measurement to this file")
    args = parser.parse_args()
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    print("| queries | events | burst K | strategy | seconds | events/s | × greta | shared bursts | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for q in args.queries:
        for n in args.events:
            for k in args.burst:
                text, events = workload(q), stream(n, k)
                results = {s: measure(text, events, s, args.repeat) for s in args.strategies}
                reference = results[args.strategies[0]][1]
                base = results.get("greta", results[args.strategies[0]])[0]
                for s, (seconds, rows, stats) in results.items():
                    same = rows == reference
                    print(f"| {q} | {n} | {k} | {s} | {seconds:.3f} | {n / seconds:,.0f} | {base / seconds:.1f} "
                          f"| {stats.shared_bursts}/{stats.bursts} | {same} |", flush=True)  # fmt: skip
                    if args.json:
                        with open(args.json, "a") as f:
                            f.write(json.dumps({"queries": q, "events": n, "burst": k, "strategy": s,
                                                "seconds": seconds, "identical": same,
                                                "stats": stats.as_dict()}) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
