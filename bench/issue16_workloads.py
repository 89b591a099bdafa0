"""The two workloads of issue 16, greta / static / hamlet in one run (strategies interleaved, best CPU s).

    .venv/bin/python bench/issue16_workloads.py [--machines 200] [--periods 300] [--repeat 3] [--table] [--windows] [--cents]

``machines``: 200 machines, each an hour of two cycles ``Start``, a burst of 40 ``Load`` readings, then
``End`` or ``Alert``; 30 queries ``SEQ(Start, Load+, End)`` / ``SEQ(Start, Load+, Alert)``, all partitioned
by machine ``[m]``, twenty of them with a threshold ``L.v > t`` (t from 0 to 90), COUNT(*) and SUM/COUNT of
the load in a one-hour tumbling window. Counts stay far inside 128 bits.

``prices``: 20 queries ``SEQ(S_k, P+) WHERE P.price < NEXT(P).price AND P.v > t_k`` (rising prices), one
stream of 300 periods: an ``S_k`` for every k, then a burst of 20 ``P`` whose prices rise; in calm periods
every P passes every threshold, in turbulent ones their ``v`` scatter. Every strategy runs it compiled; the
edge predicate P → P reads the earlier Ps of lower price (the kernel's ordered index). No graphlet takes
these bursts (each P meets the predicate on its own), but the twenty queries have one shape: static and
hamlet run them as one joint graph (``native/src/joint.rs``), each P ranked and stepped once for all.

Each row: CPU seconds, the ratio to greta, bursts shared / bursts; identical results are checked.
"""

from __future__ import annotations

import argparse
import random

from timing import load, machine, measure_all, ratio_rows

from hamlet import Event, parse_workload


def machines_workload() -> str:
    queries = []
    for i in range(30):
        end = "End" if i % 2 == 0 else "Alert"
        threshold = f" AND L.v > {(i % 10) * 10}" if i >= 10 else ""
        returns = "COUNT(*)" if i % 3 else "COUNT(*), SUM(L.v), COUNT(L)"
        queries.append(f"q{i}: RETURN {returns} PATTERN SEQ(Start, Load L+, {end}) WHERE [m]{threshold} "
                       f"WITHIN 1 hour")  # fmt: skip
    return "\n".join(queries)


def machines_stream(machines: int) -> list[Event]:
    rng = random.Random(7)
    events = []
    for m in range(machines):
        t = rng.randrange(60)
        for cycle in range(2):
            events.append(Event("Start", t, {"m": m}))
            for _ in range(40):
                t += 1 + rng.randrange(3)
                events.append(Event("Load", t, {"m": m, "v": rng.randrange(100)}))
            t += 5
            events.append(Event(rng.choice(["End", "Alert"]), t, {"m": m}))
            t += 600 + rng.randrange(600)
    return sorted(events, key=lambda e: e.time)


def prices_workload(windows: tuple[str, ...] = ("100000000",), returns: str = "COUNT(*)") -> str:
    """The twenty queries, query k in the window ``windows[k % len(windows)]``."""
    return "\n".join(
        f"q{k}: RETURN {returns} PATTERN SEQ(S{k}, P+) WHERE P.price < NEXT(P).price AND P.v > {k * 5} "
        f"WITHIN {windows[k % len(windows)]}"
        for k in range(20)
    )


# ``--windows``: the prices queries spread over windows of their own (a joint graph steps the classes of all
# of them: ``joint::merge_windows`` keeps a tumbling and a sliding window's queries apart)
WINDOW_MIXES = {
    "3 tumbling": ("100000000", "50000000", "20000000"),
    "2000/1000, 3000/1000": ("2000 SLIDE 1000", "3000 SLIDE 1000"),
    "1000, 600/60": ("1000", "600 SLIDE 60"),
}


def prices_stream(periods: int, cents: bool = False) -> list[Event]:
    """``cents``: each price a double in currency units (price / 100), as a stock feed gives them."""
    rng = random.Random(11)
    events, t = [], 0
    for period in range(periods):
        for k in range(20):
            events.append(Event(f"S{k}", t))
            t += 1
        price = rng.randrange(100)
        calm = period % 2 == 0
        for _ in range(20):
            price += rng.randrange(1, 4) if rng.random() < 0.8 else -rng.randrange(1, 6)
            v = 100 + rng.randrange(50) if calm else rng.randrange(120)
            events.append(Event("P", t, {"price": price / 100 if cents else price, "v": v}))
            t += 1
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--machines", type=int, default=200)
    parser.add_argument("--periods", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--table", action="store_true", help="Arrow in, partial states out (hamlet.evaluate_table)"
    )
    parser.add_argument(
        "--windows", action="store_true", help="also prices with its queries in mixed windows"
    )
    parser.add_argument(
        "--cents", action="store_true", help="also prices with float prices (price / 100) and their average"
    )
    args = parser.parse_args()
    print(f"# {machine()}; {load()} at the start")
    print(
        "| workload | events | strategy | CPU s | × greta | shared bursts | identical |\n|---|---|---|---|---|---|---|"
    )
    runs = [
        ("machines", machines_workload(), machines_stream(args.machines)),
        ("prices", prices_workload(), prices_stream(args.periods)),
    ]
    if args.windows:
        runs += [
            (f"prices, {mix}", prices_workload(w), prices_stream(args.periods))
            for mix, w in WINDOW_MIXES.items()
        ]
    if args.cents:
        runs.append(("prices, float prices, AVG(P.price)", prices_workload(returns="COUNT(*), AVG(P.price)"),
                     prices_stream(args.periods, cents=True)))  # fmt: skip
    for name, text, events in runs:
        results = measure_all(
            parse_workload(text), events, ["greta", "static", "hamlet"], args.repeat, args.table
        )
        print("\n".join(ratio_rows(results, name, len(events))), flush=True)
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
