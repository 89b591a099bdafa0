"""Bursts of a type inside a Kleene sub-pattern over several types (MUSE's sharing), greta / static / hamlet.

    .venv/bin/python bench/muse_sharing.py [--periods 150] [--burst 15] [--repeat 5]

Workload: 20 queries ``SEQ(S<k>, (SEQ(A, B))+)`` (COUNT(*), and SUM(B.v) in every other one), one window
over the stream. Stream: ``--periods`` periods of S0..S19, then four rounds of one A followed by a burst of
``--burst`` B readings. No B precedes another B, so a burst of them is one graphlet of C = b for every query
(``native/src/graphlet.rs``); before, each query stepped every B. Strategies interleaved, best CPU s of
``--repeat`` (``timing.py``), identical rows checked.
"""

from __future__ import annotations

import argparse
import random

from timing import load, machine, measure_all, ratio_rows

from hamlet import Event, parse_workload


def workload() -> str:
    return "\n".join(
        f"q{k}: RETURN COUNT(*){', SUM(B.v)' if k % 2 else ''} PATTERN SEQ(S{k}, (SEQ(A, B))+) WITHIN 100000000"
        for k in range(20)
    )


def stream(periods: int, burst: int) -> list[Event]:
    rng = random.Random(5)
    events: list[Event] = []
    for _ in range(periods):
        events.extend(Event(f"S{k}", len(events)) for k in range(20))
        for _ in range(4):
            events.append(Event("A", len(events)))
            events.extend(Event("B", len(events), {"v": rng.randrange(100)}) for _ in range(burst))
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--periods", type=int, default=150)
    parser.add_argument("--burst", type=int, nargs="+", default=[5, 15])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"# {machine()}; {load()} at the start")
    print(
        "| burst | events | strategy | CPU s | × greta | shared bursts | identical |\n|---|---|---|---|---|---|---|"
    )
    for burst in args.burst:
        events = stream(args.periods, burst)
        results = measure_all(parse_workload(workload()), events, ["greta", "static", "hamlet"], args.repeat)
        print("\n".join(ratio_rows(results, burst, len(events))), flush=True)
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
