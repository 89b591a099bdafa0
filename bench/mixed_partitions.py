"""greta / static / hamlet where neither fixed plan is best: ridesharing queries over sparse and dense trips.

    .venv/bin/python bench/mixed_partitions.py [--sparse 10000] [--dense 300] [--repeat 3] [--with-negation]
                                               [--predicates-in-python]

The workload is the Spark job benchmark's (conf/workloads/rideshare50.hamlet: local predicates on speed and
request type, COUNT/SUM/AVG/MIN/MAX, windows of 10-30 minutes sliding by 1-10), its stream partitioned by
driver and rider (and district): one partition per trip. By default without its 10 queries
``SEQ(Request, Travel+, NOT Pickup)``: a trailing NOT makes every strategy process each Travel event one by
one for them (``AnalyzedQuery.burst_obstacle``), the same work in all three, which only dilutes the
comparison (``--with-negation`` keeps them). ``--sparse`` events are the generator's trips
(``jobs.generate.rideshare_chunk``: a few Travel events tens of seconds apart, Travel bursts of one to three
events); ``--dense`` trips report their position every second (a Request, 30 Travel pings, a Pickup, 30
pings, a Dropoff: Travel bursts of up to 30 events in a one-minute pane). Sharing costs on the sparse trips
(a shared graphlet set up for bursts of one or two events: greta is faster than static) and pays on the
dense ones (static far faster than greta); ``hamlet`` decides per partition (``CostModel.sharing_pays``)
and per burst. The defaults make the sparse trips' GRETA time about the dense trips' static time, so that
the dynamic plan has to beat both fixed plans on the whole. Each part is also measured alone. Identical
results are checked; strategies are interleaved, best of ``--repeat`` CPU seconds (``timing.py``).
``--predicates-in-python`` writes the speed predicates so that the set kernel cannot evaluate them (the same
results): each graph is then compiled on its own over the events Python matched for it.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

from timing import load, machine, measure_all

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hamlet import Event, parse_workload
from hamlet.analysis.workload import Workload
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


def workload(with_negation: bool, predicates_in_python: bool = False) -> Workload:
    text = (ROOT / "conf/workloads/rideshare50.hamlet").read_text()
    if predicates_in_python:  # the same predicates, in a form the set kernel does not compile
        text = re.sub(r"(\w+)\.speed ([<>]=?)", r"\1.speed + 0 \2", text)
    if not with_negation:
        blocks = re.split(r"\n(?=-- q\d+:)", text)
        text = "\n".join(b for b in blocks if "NOT" not in b)
    return parse_workload(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sparse", type=int, default=10_000, help="events of the generator's trips")
    parser.add_argument("--dense", type=int, default=300, help="trips with a Travel ping every second")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--table", action="store_true", help="Arrow in, partial states out (hamlet.evaluate_table)"
    )
    parser.add_argument("--with-negation", action="store_true", help="keep the SEQ(..., NOT Pickup) queries")
    parser.add_argument(
        "--predicates-in-python",
        action="store_true",
        help="write T.speed < N as T.speed + 0 < N: the set kernel does not evaluate it, the graphs are compiled one by one",
    )
    args = parser.parse_args()
    w = workload(args.with_negation, args.predicates_in_python)
    sparse, dense = sparse_trips(args.sparse), dense_trips(args.dense)
    print(f"# {machine()}; {load()}; {len(w.queries)} queries of rideshare50.hamlet")
    print(
        "| stream | events | strategy | CPU s | × greta | × static | shared bursts | splits | merges | identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, events in (("sparse trips", sparse), ("dense trips", dense), ("both", sparse + dense)):
        results = measure_all(w, events, ["greta", "static", "hamlet"], args.repeat, args.table)
        greta, static = results["greta"][0], results["static"][0]
        first = results["greta"][1]
        for strategy, (seconds, rows, stats) in results.items():
            print(f"| {name} | {len(events)} | {strategy} | {seconds:.3f} | {greta / seconds:.2f} "
                  f"| {static / seconds:.2f} | {stats.shared_bursts}/{stats.bursts} | {stats.splits} "
                  f"| {stats.merges} | {rows == first} |")  # fmt: skip
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
