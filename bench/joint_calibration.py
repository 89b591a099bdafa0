"""The constants of the joint graphs' benefit model (``native/src/joint.rs``: ``EVENT_COST``, ``ZERO_HALVES``),
fitted on workloads of issue 16's ``prices`` shape, and where hamlet's decision lands against both fixed plans.

    .venv/bin/python bench/joint_calibration.py [--repeat 5] [--periods 150]

Workloads: m queries ``SEQ(S<k>, P+) WHERE P.price < NEXT(P).price AND P.v >= lo_k AND P.v < lo_k + 1000·f``
(a band of P.v of width f at a random offset per query), m in 2, 5, 10, 20 and f from 5 % to all; a stream
of periods, each an S<k> for every k and a burst of 20 rising-and-falling prices with v uniform in 0..999;
one window holding the stream (counts of thousands of digits) and 60-second tumbling windows (counts of a
few). A P matches m·f queries on average: where that is about one, a joint graph only adds blocks of zeros;
where it is many, it saves their steps.

For each workload: greta (every graph on its own, as hamlet runs a group it declines), static (always one
joint graph) and hamlet, in CPU seconds (``timing.measure_all``, table path). Then, for each candidate pair
(E: an event's step in field additions; Z: a field of zeros in fields), the time the decision
``N_joint(E, Z) < N_alone(E)`` would lose against the better fixed plan, summed over the workloads: the
pairs with the least loss are the model's constants. Last, hamlet as built against the better fixed plan.
"""

from __future__ import annotations

import argparse
import random

from timing import load, machine, measure_all

from hamlet import Event, parse_workload

QUERIES = (2, 5, 10, 20)
FRACTIONS = (0.05, 0.1, 0.2, 0.35, 0.5, 1.0)
WINDOWS = ("100000000", "60")
EVENT_COSTS = (2, 4, 8, 12, 16, 24, 32)
ZERO_COSTS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)


def bands(m: int, f: float, seed: int = 3) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    width = int(1000 * f)
    return [(lo, lo + width) for lo in (rng.randrange(0, 1000 - width + 1) for _ in range(m))]


def workload(m: int, f: float, within: str) -> str:
    return "\n".join(
        f"q{k}: RETURN COUNT(*) PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price AND P.v >= {lo} "
        f"AND P.v < {hi} WITHIN {within}"
        for k, (lo, hi) in enumerate(bands(m, f))
    )


def stream(m: int, periods: int, burst: int = 20) -> list[Event]:
    rng = random.Random(11)
    events, t = [], 0
    for _ in range(periods):
        for k in range(m):
            events.append(Event(f"S{k}", t))
            t += 1
        price = rng.randrange(100)
        for _ in range(burst):
            price += rng.randrange(1, 4) if rng.random() < 0.8 else -rng.randrange(1, 6)
            events.append(Event("P", t, {"price": price, "v": rng.randrange(1000)}))
            t += 1
    return events


def model_pays(m: int, f: float, events: list[Event], event_cost: float, zero: float) -> bool:
    """``joint::pays`` with the constants given, for COUNT(*) queries (one field each): the S events add to
    their own block either way; a P steps once with its queries' blocks and the others' zeros, against
    once per query that matches it."""
    matches = [sum(lo <= e.attributes["v"] < hi for lo, hi in bands(m, f)) for e in events if e.type == "P"]
    alone = sum(n * (event_cost + 1) for n in matches)
    together = sum(event_cost + n + zero * (m - n) for n in matches if n)
    return together < alone


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--periods", type=int, default=150)
    args = parser.parse_args()
    print(f"# {machine()}; {load()} at the start")
    print("| window | queries | band | matches per P | greta | static | hamlet | hamlet / best fixed |")
    print("|---|---|---|---|---|---|---|---|")
    runs = []
    for within in WINDOWS:
        for m in QUERIES:
            for f in FRACTIONS:
                events = stream(m, args.periods)
                results = measure_all(parse_workload(workload(m, f, within)), events, ["greta", "static", "hamlet"],
                                      args.repeat, table=True)  # fmt: skip
                seconds = {s: results[s][0] for s in results}
                assert results["static"][1] == results["greta"][1] == results["hamlet"][1]
                ps = [e for e in events if e.type == "P"]
                per_p = sum(lo <= e.attributes["v"] < hi for e in ps for lo, hi in bands(m, f)) / len(ps)
                best = min(seconds["greta"], seconds["static"])
                print(f"| {'one' if within != '60' else '60 s'} | {m} | {f:.0%} | {per_p:.2f} | {seconds['greta']:.4f} "
                      f"| {seconds['static']:.4f} | {seconds['hamlet']:.4f} | {seconds['hamlet'] / best:.2f} |",
                      flush=True)  # fmt: skip
                runs.append((m, f, events, seconds))
    print(
        "\n| E | Z | time lost against the better fixed plan | workloads more than 5 % off |\n|---|---|---|---|"
    )
    for event_cost in EVENT_COSTS:
        for zero in ZERO_COSTS:
            lost, off = 0.0, 0
            for m, f, events, seconds in runs:
                chosen = seconds["static"] if model_pays(m, f, events, event_cost, zero) else seconds["greta"]
                ratio = chosen / min(seconds["greta"], seconds["static"])
                lost += ratio - 1
                off += ratio > 1.05
            print(f"| {event_cost} | {zero} | {lost:.2f} | {off} |")
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
