"""Per-event cost of the three event matching semantics (skip-till-any-match, skip-till-next-match,
contiguous) on one stream, on the compiled kernel and on the Python graph.

    .venv/bin/python bench/semantics.py [--events 20000] [--repeats 3] [--partitions 8|1] [--within 60]
        [--only plain|edges|positions] [--output bench/results/semantics.md]

The stream: ``--events`` events of types A, B, C and Z (Z read by no pattern: it only breaks contiguity),
two per second, 8 partitions (attribute ``k``), x in 0..3, a price p in 0..99 (its own seed), seed 2021.
Each query runs alone (strategy ``greta``) in a sliding window of 60 s every 10 s; ``compiled`` is the
kernel (native/), ``python`` the Python graph (``run_greta(native=False)``, every predecessor event
scanned). Queries under NEXT or CONT share nothing with others (``workload.sharing_obstacle``), so there is
no sharing to measure among them. The best of ``--repeats`` wall times is reported in microseconds per
event, with the machine's load; both sides' results are asserted equal, value for value.

The second table: NEXT and CONT with an edge predicate or a NOT between two types, which the kernel runs
event by event (``native/src/reach.rs``); before it took them, every strategy ran them on the Python graph,
the ``python`` column. ``--partitions 1`` puts the whole stream in one partition (no ``[k]``): eight times
the events in a horizon; ``--within`` lengthens the windows (and the horizon).

The third table: position templates (dissertation §12: a type at several places, P{n,}, OR), which run
each event at every state of its type; under NEXT each event's aggregate is split by the states a longer
trend may stand at (``native/src/dominance.rs``). ``--only`` runs one table (``--edges-only``: the second).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from functools import partial
from pathlib import Path

from timing import append_report

from hamlet import Event, parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.greta import run_greta

PATTERNS = {
    "kleene (SEQ(A+, B))+": "(SEQ(A+, B))+",
    "sequence SEQ(A, B+, C)": "SEQ(A, B+, C)",
}
SEMANTICS = ("ANY", "NEXT", "CONT")


# NEXT and CONT with edges (native/src/reach.rs): (label, pattern, WHERE besides [k])
EDGES = [
    ("rising A+ (A.p < NEXT(A).p)", "A+", "A.p < NEXT(A).p"),
    ("rising (SEQ(A+, B))+", "(SEQ(A+, B))+", "A.p < NEXT(A).p"),
    ("falling SEQ(A, B+, C)", "SEQ(A, B+, C)", "B.p >= NEXT(B).p AND A.p < NEXT(B).p"),
    ("SEQ(A+, NOT C, B)", "SEQ(A+, NOT C, B)", ""),
]


# Position templates (native/src/dominance.rs under NEXT)
POSITIONS = ["SEQ(A+, B, A)", "A{2,}", "SEQ(A, A) OR SEQ(A, B, A)"]


def stream(n: int) -> list[Event]:
    rng, prices = random.Random(2021), random.Random(2022)
    out = []
    for i in range(n):
        kind, attributes = rng.choice("ABCZ"), {"k": rng.randrange(8), "x": rng.randrange(4)}
        out.append(Event(kind, i // 2, {**attributes, "p": prices.randrange(100)}))
    return out


def best(workload, events, executor, repeats: int) -> tuple[float, list]:
    times, rows = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        rows = evaluate_with(workload, events, executor)
        times.append(time.perf_counter() - began)
    return min(times), rows


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", type=int, choices=(1, 8), default=8)
    parser.add_argument("--within", type=int, default=60, help="WITHIN in seconds (SLIDE 10)")
    parser.add_argument("--only", choices=("plain", "edges", "positions"), help="one table")
    parser.add_argument("--edges-only", action="store_const", dest="only", const="edges", help="--only edges")
    parser.add_argument("--output", type=Path)
    return parser.parse_args()


def main() -> None:
    args = arguments()
    events = stream(args.events)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    partitioned = "[k] AND " if args.partitions == 8 else ""
    partitions = "8 partitions" if partitioned else "one partition"
    lines = [
        f"## Semantics: {args.events} events, WITHIN {args.within} SLIDE 10, {partitions} (`bench/semantics.py`)",
        "",
        (
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load (1, 5, 15 min) before "
            f"{load}; `{' '.join(['python', *sys.argv])}`"
        ),
    ]
    per = 1e6 / len(events)

    def measure(label: str, text: str, semantics: str) -> None:
        workload = parse_workload(text)
        compiled, rows = best(workload, events, run_greta, args.repeats)
        python, python_rows = best(workload, events, partial(run_greta, native=False), args.repeats)
        assert rows == python_rows, label
        lines.append(f"| {label} | {semantics} | {compiled * per:.2f} | {python * per:.2f} | {len(rows)} |")
        print(lines[-1], flush=True)

    edges_heading = (
        "NEXT and CONT with edges (event by event on the kernel, `native/src/reach.rs`; the python column is "
        "what every strategy ran before):"
    )
    positions_heading = (
        "Position templates (each event at every state of its type; NEXT: `native/src/dominance.rs`):"
    )
    tables = [
        ("plain", None, "pattern", "COUNT(*), SUM(A.x)", [(label, p, "") for label, p in PATTERNS.items()]),
        ("edges", edges_heading, "query", "COUNT(*), SUM(A.x), MAX(A.p)", EDGES),
        ("positions", positions_heading, "pattern", "COUNT(*), SUM(A.x)", [(p, p, "") for p in POSITIONS]),
    ]
    for name, heading, column, returns, queries in tables:
        if args.only not in (None, name):
            continue
        header = f"| {column} | semantics | compiled µs/event | python µs/event | rows |"
        lines += ["", *([heading, ""] if heading else []), header, "|---|---|---|---|---|"]
        for label, pattern, where in queries:
            clause = (partitioned + where) if where else partitioned.removesuffix(" AND ")
            for semantics in SEMANTICS:
                text = (f"q: RETURN {returns} PATTERN {pattern} SEMANTICS {semantics}"
                        + (f" WHERE {clause}" if clause else "") + f" WITHIN {args.within} SLIDE 10")  # fmt: skip
                measure(label, text, semantics)
    lines += ["", f"load after {' '.join(f'{v:.2f}' for v in os.getloadavg())}", ""]
    append_report(lines, args.output)


if __name__ == "__main__":
    main()
