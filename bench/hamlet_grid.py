"""The benchmark grid of issue 3: greta / static / hamlet while varying events per window, the number of
queries and the burst size, on the authors' synthetic shape and on a ridesharing-like stream with
predicates, plus the mixed-predicate workload. One JSON line per measurement for ``plot_hamlet.py``.

    .venv/bin/python bench/hamlet_grid.py --json bench/results/hamlet_grid.jsonl [--repeat 2] [--quick]
    .venv/bin/python bench/hamlet_grid.py --strategies static hamlet --repeat 7   # the 5 % criterion

Ridesharing-like (the paper's Figures 8–10 workload: queries with different patterns around a shared
Travel+, the same window, grouping and predicates): 20 event types; periods of 20 events of the 19 other
types (random, each with a price) in one of 3 districts, then a burst of ``K`` Travel events (speed, 10 %
of them crawling). Queries ``RETURN district, COUNT(*) PATTERN SEQ(X, Travel T+, Y) WHERE T.speed < 40
[AND X.price > 5] GROUP-BY district WITHIN N SLIDE N/2``: every window holds N events ("events per window"),
the stream 1.5·N. One event per time unit.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from hamlet_throughput import HEADER, report, stream, workload
from mixed_predicates import mixed_stream, mixed_workload
from timing import load, machine, measure_all

from hamlet import Event, parse_workload

TYPES = ["Request", "Pickup", "Dropoff", "Cancel", "Accept", "Arrive", "Wait", "Reroute", "Rate", "Pay", "Tip",
         "Surge", "Idle", "Refuel", "Login", "Logout", "Message", "Call", "Review"]  # fmt: skip
DISTRICTS = ["Downtown", "Midtown", "Airport"]


def rideshare_workload(queries: int, window: int, seed: int = 8) -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(queries):
        x, y = rng.sample(TYPES, 2)
        where = "T.speed < 40" + (f" AND {x}.price > 5" if i % 3 == 0 else "")
        lines.append(f"q{i}: RETURN district, COUNT(*) PATTERN SEQ({x}, Travel T+, {y}) WHERE {where} "
                     f"GROUP-BY district WITHIN {window} SLIDE {window // 2}")  # fmt: skip
    return "\n".join(lines)


def rideshare_stream(events: int, burst: int, seed: int = 8) -> list[Event]:
    rng = random.Random(seed)
    out: list[Event] = []
    while len(out) < events:
        district = rng.choice(DISTRICTS)
        for _ in range(20):
            out.append(
                Event(rng.choice(TYPES), len(out), {"district": district, "price": rng.randint(1, 40)})
            )
        crawl = rng.random() < 0.1
        for _ in range(burst):
            speed = rng.randint(2, 9) if crawl else rng.randint(5, 45)
            out.append(Event("Travel", len(out), {"district": district, "speed": speed}))
    return out[:events]


def run(name: str, q: int, n: int, k: int, args: argparse.Namespace) -> None:
    if name == "authors":
        text, events = workload(q), stream(n, k)
    elif name == "rideshare":
        text, events = rideshare_workload(q, n), rideshare_stream(n * 3 // 2, k)
    else:
        text, events = mixed_workload(q), mixed_stream(n // 35, k)
    results = measure_all(parse_workload(text), events, args.strategies, args.repeat)
    report(name, q, n, k, results, args.json, len(events))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", help="write one JSON line per measurement to this file (replaced)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a small grid, to try the script")
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=["greta", "static", "hamlet"],
        help="e.g. static hamlet: more repeats for the close comparison, without greta's minutes",
    )
    args = parser.parse_args()
    if args.json:
        Path(args.json).write_text("")
    events = [10_000, 20_000] if args.quick else [10_000, 20_000, 50_000, 100_000]
    queries = [5, 25] if args.quick else [5, 25, 50, 100]
    bursts = [5, 30] if args.quick else [5, 10, 20, 30]
    print(f"# {machine()}; {load()} at the start")
    print(HEADER)
    for name in ("authors", "rideshare"):
        for n in events:  # Figure 8: events per window
            run(name, 50, n, 30 if name == "authors" else 20, args)
        for q in queries:  # Figure 10: queries
            if q != 50:
                run(name, q, 20_000, 30 if name == "authors" else 20, args)
        for k in bursts:  # Figure 11: burst size
            if k != (30 if name == "authors" else 20):
                run(name, 50, 20_000, k, args)
    for q in (10, 20, 40):  # mixed predicates: where neither fixed plan is best
        run("mixed", q, 21_000, 30, args)
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
