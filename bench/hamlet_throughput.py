"""Throughput of greta / static / hamlet on the HAMLET authors' synthetic shape, in one run.

    .venv/bin/python bench/hamlet_throughput.py --queries 50 --events 20000 --burst 30

Workload: ``--queries`` flat sequences SEQ(E<a>, E2+, E<b>) of distinct types around the shared E2+
(a, b drawn from E1, E3..E13), COUNT(*), one tumbling window holding the whole stream. Stream: periods
of 13 types × 5 events (five rounds of E1..E13) followed by a burst of ``--burst`` E2 events, one event
per time unit, ``--events`` events in all. Every strategy must give identical counts; the ratios are
measured in the same process, strategies interleaved, best of ``--repeat`` (``timing.py``). With
``--alone`` each strategy runs in a process of its own (best of ``--repeat`` there): no other strategy's run
between two of its calls, as a job that runs one strategy sees its caches; the rows are compared by digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
from typing import Any

from timing import load, machine, measure_all

from hamlet import Event, parse_workload
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


HEADER = ("| workload | queries | events | burst K | strategy | CPU s | events/s | × greta | shared bursts "
          "| identical |\n|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip


def report(name: str, q: int, n: int, k: int, results: dict, json_path: str | None,
           stream_events: int | None = None) -> None:  # fmt: skip
    """One table row per strategy (and one JSON line, for the plots) — identical to the first strategy?
    ``n``: events per window; ``stream_events`` (default n): events in the stream, for events/s."""
    total = stream_events or n
    strategies = list(results)
    reference = results[strategies[0]][1]
    base = results.get("greta", results[strategies[0]])[0]
    for s, (seconds, rows, stats) in results.items():
        same = rows == reference
        print(f"| {name} | {q} | {n} | {k} | {s} | {seconds:.3f} | {total / seconds:,.0f} | {base / seconds:.1f} "
              f"| {stats.shared_bursts}/{stats.bursts} | {same} |", flush=True)  # fmt: skip
        if json_path:
            with open(json_path, "a") as f:
                f.write(json.dumps({"workload": name, "queries": q, "events": n, "burst": k, "strategy": s, "stream_events": total,
                                    "seconds": seconds, "identical": same, "load": load(),
                                    "stats": stats.as_dict()}) + "\n")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, nargs="+", default=[50])
    parser.add_argument("--events", type=int, nargs="+", default=[20_000])
    parser.add_argument("--burst", type=int, nargs="+", default=[30])
    parser.add_argument("--strategies", nargs="+", default=["greta", "static", "hamlet"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="append one JSON line per measurement to this file")
    parser.add_argument(
        "--table", action="store_true", help="Arrow in, partial states out (hamlet.evaluate_table)"
    )
    parser.add_argument("--alone", action="store_true", help="each strategy in a process of its own")
    parser.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)  # (--alone's child: one line)
    args = parser.parse_args()
    if args.emit:
        (strategy,) = args.strategies
        ((seconds, rows, stats),) = measure_all(parse_workload(workload(args.queries[0])),
                                                stream(args.events[0], args.burst[0]), [strategy], args.repeat,
                                                args.table).values()  # fmt: skip
        digest = hashlib.sha256(repr(rows).encode()).hexdigest()
        print(json.dumps({"seconds": seconds, "digest": digest, "stats": stats.as_dict()}))
        return
    print(
        f"# {machine()}; {load()} at the start"
        + ("; each strategy in a process of its own" if args.alone else "")
    )
    print(HEADER)
    for q in args.queries:
        for n in args.events:
            for k in args.burst:
                results: dict[str, tuple[float, Any, EvaluationStats]]
                if args.alone:
                    results = {s: alone(q, n, k, s, args.repeat, args.table) for s in args.strategies}
                else:
                    results = measure_all(parse_workload(workload(q)), stream(n, k), args.strategies, args.repeat,
                                          args.table)  # fmt: skip
                report("authors", q, n, k, results, args.json)
    print(f"# {load()} at the end")


def alone(queries: int, events: int, burst: int, strategy: str, repeat: int,
          table: bool) -> tuple[float, str, EvaluationStats]:  # fmt: skip
    """``measure_all``'s best for one strategy, measured in a process of its own; its rows as a digest."""
    argv = [sys.executable, __file__, "--queries", str(queries), "--events", str(events), "--burst", str(burst),
            "--strategies", strategy, "--repeat", str(repeat), "--emit"] + (["--table"] if table else [])  # fmt: skip
    line = json.loads(
        subprocess.run(argv, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
    )
    return line["seconds"], line["digest"], EvaluationStats(**line["stats"])


if __name__ == "__main__":
    main()
