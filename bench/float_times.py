"""Event times as float seconds against the same times as a timestamp column, through ``evaluate_table``.

    .venv/bin/python bench/float_times.py --events 100000 --repeat 3 [--objects]

Stream: ``--events`` events over four hours (``--seconds``), times uniform at random as doubles (almost none a whole number
of microseconds), types Start / Reading ×6 / Stop / Alarm, 50 machines; the factory-like workload below
(an equivalence per machine, sliding windows, a NOT, an edge predicate). The float table and the timestamp
table (each double's microsecond, ``native.floor_micros``) give the same rows where no two times of a stream
partition share a microsecond; every strategy must give greta's rows on each table. CPU seconds per
strategy, best of ``--repeat`` (``timing.py``: in one process, strategies interleaved).
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

import numpy as np
import pyarrow as pa
from timing import load, machine

from hamlet import Event, evaluate, evaluate_table, finalize_table, parse_workload
from hamlet.api import prepare
from hamlet.runtime.columnar import clashing_rows, kernel_micros
from hamlet.runtime.native import floor_micros

WORKLOAD = """
warm: RETURN COUNT(*), SUM(R.power), AVG(R.temperature) PATTERN SEQ(Start S, Reading R+, Stop E)
    WHERE [machine] AND R.temperature > 40 WITHIN 30 min SLIDE 1 min
hot: RETURN COUNT(*), MAX(R.power) PATTERN SEQ(Start S, Reading R+) WHERE [machine] AND R.temperature > 60
    WITHIN 30 min SLIDE 10 min
alarm: RETURN COUNT(*) PATTERN SEQ(Alarm A, Reading R+, NOT Stop E) WHERE [machine] WITHIN 1 h
rising: RETURN COUNT(*) PATTERN SEQ(Start S, Reading R+) WHERE [machine] AND R.power < NEXT(R).power WITHIN 10 min
"""


def tables(events: int, span: float, seed: int = 1) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    kinds = np.array(
        ["Start", "Reading", "Reading", "Reading", "Reading", "Reading", "Reading", "Stop", "Alarm"]
    )
    seconds = np.sort(rng.uniform(1_767_600_000, 1_767_600_000 + span, events))
    columns = {
        "event_type": pa.array(kinds[rng.integers(0, len(kinds), events)]),
        "event_time": pa.array(seconds),
        "temperature": pa.array(rng.normal(50, 15, events).round(2)),
        "power": pa.array(rng.integers(0, 100, events)),
        "machine": pa.array(rng.integers(0, 50, events)),
    }
    floats = pa.table(columns)
    stamps = pa.array(floor_micros(seconds)).cast(pa.timestamp("us", "UTC"))
    return floats, floats.set_column(1, "event_time", stamps)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4 * 3600, help="the stream's span (default 4 h)")
    parser.add_argument("--strategies", nargs="+", default=["greta", "static", "hamlet"])
    parser.add_argument("--objects", action="store_true",
                        help="also the float seconds as a list of Event objects through hamlet.evaluate")  # fmt: skip
    args = parser.parse_args()
    print(f"# {machine()}; {load()} at the start")
    workload = prepare(parse_workload(WORKLOAD))
    floats, stamps = tables(args.events, args.seconds)
    clashing = len(clashing_rows(floats, kernel_micros(floats), ["machine"]))
    print(f"# {args.events} events in {args.seconds:g} s; rows of stream partitions where two times share a "
          f"microsecond (Python's; the timestamps make those times equal): {clashing}")  # fmt: skip
    reference = "greta" if "greta" in args.strategies else args.strategies[0]
    print(f"| event_time | events | strategy | CPU s | events/s | rows identical to {reference}'s |")
    print("|---|---|---|---|---|---|")
    inputs: list[tuple[str, Any]] = [("float seconds", floats), ("timestamp", stamps)]
    if args.objects:
        attributes = [name for name in floats.column_names if name not in ("event_type", "event_time")]
        events = [
            Event(r["event_type"], r["event_time"], {a: r[a] for a in attributes}) for r in floats.to_pylist()
        ]
        inputs.append(("float seconds, Event objects", events))
    best: dict[tuple[str, str], float] = {}
    rows: dict[tuple[str, str], list] = {}
    for r in range(args.repeat):
        for name, source in inputs:
            for strategy in (
                args.strategies[r % len(args.strategies) :] + args.strategies[: r % len(args.strategies)]
            ):
                gc.collect()
                started = time.process_time()
                # (the list through the whole API, results final; a table through the engine's call, partial
                # states out, as before: finalize_table after the clock)
                if isinstance(source, list):
                    rows[name, strategy] = evaluate(workload, source, strategy)
                    seconds = time.process_time() - started
                else:
                    partials = evaluate_table(workload, source, strategy)
                    seconds = time.process_time() - started
                    rows[name, strategy] = finalize_table(workload, partials)
                best[name, strategy] = min(best.get((name, strategy), seconds), seconds)
    for (name, strategy), seconds in best.items():
        same = rows[name, strategy] == rows[name, reference]
        print(
            f"| {name} | {args.events} | {strategy} | {seconds:.3f} | {args.events / seconds:,.0f} | {same} |"
        )
    print(f"# {load()} at the end")


if __name__ == "__main__":
    main()
