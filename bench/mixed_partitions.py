"""greta / static / hamlet where neither fixed plan is best: the job's 50 ridesharing queries over sparse
and dense trips.

    .venv/bin/python bench/mixed_partitions.py [--sparse 20000] [--dense 40] [--repeat 3]

The workload is the Spark job benchmark's (conf/workloads/rideshare50.hamlet: local predicates on speed and
request type in some queries, negation in others, COUNT/SUM/AVG/MIN/MAX, windows of 10-30 minutes), its
stream partitioned by driver and rider (and district): one partition per trip. ``--sparse`` events are
the generator's trips (``jobs.generate.rideshare_chunk``: a few Travel events tens of seconds apart, so
Travel bursts of one to three events); ``--dense`` trips report their position every second (a Request,
30 Travel pings, a Pickup, 30 pings, a Dropoff: Travel bursts of up to 30 events in a pane). Sharing
costs on the sparse trips (a shared graphlet set up for bursts of one or two events: greta is faster than
static) and pays on the dense ones (static far faster than greta); ``hamlet`` decides per partition
(``CostModel.sharing_pays``) and per burst. The defaults make greta and static take about as long, so
that the dynamic plan has to beat both. Identical results are checked; strategies are interleaved, best
of ``--repeat`` CPU seconds (``timing.py``).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from timing import load, machine, measure_all

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hamlet import Event, parse_workload
from jobs.generate import rideshare_chunk

HOUR = 493_425  # hours since the epoch: 2026-04-15 09:00 UTC
COLUMNS = ("driver", "rider", "district", "request_type", "speed", "duration")


def sparse_trips(size: int) -> list[Event]:
    rows = rideshare_chunk(1, HOUR, 0, size)
    return [Event(row[1], row[2], {k: v for k, v in zip(COLUMNS, row[3:]) if v is not None}) for row in rows]


def dense_trips(count: int, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    events = []
    for trip in range(count):
        keys = {
            "driver": f"dense-d{trip}",
            "rider": f"dense-r{trip}",
            "district": rng.choice(["Midtown", "Harlem"]),
        }
        t = HOUR * 3600 + rng.randrange(3000)
        events.append(Event("Request", t, {**keys, "request_type": rng.choice(("Pool", "Single"))}))
        for leg, end in (("towards the rider", "Pickup"), ("with the rider", "Dropoff")):
            for _ in range(30):
                t += 1
                events.append(
                    Event("Travel", t, {**keys, "speed": round(rng.uniform(5, 45), 1), "duration": 1})
                )
            t += 10
            events.append(Event(end, t, keys))
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sparse", type=int, default=20_000, help="events of the generator's trips")
    parser.add_argument("--dense", type=int, default=40, help="trips with a Travel ping every second")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    events = sparse_trips(args.sparse) + dense_trips(args.dense)
    workload = parse_workload((ROOT / "conf/workloads/rideshare50.hamlet").read_text())
    results = measure_all(workload, events, ["greta", "static", "hamlet"], args.repeat)
    print(f"# {machine()}; {load()}; rideshare50.hamlet over {len(events)} events ({args.sparse} in sparse "
          f"trips, {args.dense} dense trips)")  # fmt: skip
    print("| strategy | CPU s | × greta | × static | shared bursts | splits | merges |")
    print("|---|---|---|---|---|---|---|")
    greta, static = results["greta"][0], results["static"][0]
    for strategy, (seconds, _, stats) in results.items():
        print(f"| {strategy} | {seconds:.3f} | {greta / seconds:.2f} | {static / seconds:.2f} "
              f"| {stats.shared_bursts}/{stats.bursts} | {stats.splits} | {stats.merges} |")  # fmt: skip
    rows = [r for _, r, _ in results.values()]
    print(f"identical: {all(r == rows[0] for r in rows)}")


if __name__ == "__main__":
    main()
