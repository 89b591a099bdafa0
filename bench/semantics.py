"""Per-event cost of the three event matching semantics (skip-till-any-match, skip-till-next-match,
contiguous) on one stream, on the compiled kernel and on the Python graph.

    .venv/bin/python bench/semantics.py [--events 20000] [--repeats 3] [--output bench/results/semantics.md]

The stream: ``--events`` events of types A, B, C and Z (Z read by no pattern: it only breaks contiguity),
two per second, 8 partitions (attribute ``k``), x in 0..3, seed 2021. Each query runs alone (strategy
``greta``) in a sliding window of 60 s every 10 s; ``compiled`` is the kernel (native/), ``python`` the
Python graph (``run_greta(native=False)``, every predecessor event scanned). Queries under NEXT or CONT
share nothing with others (``workload.sharing_obstacle``), so there is no sharing to measure among them.
The best of ``--repeats`` wall times is reported in microseconds per event, with the machine's load.
"""

from __future__ import annotations

import os
import platform
import random
import time
from functools import partial

from timing import append_report, one_stream_arguments

from hamlet import Event, parse_workload
from hamlet.api import evaluate_with
from hamlet.runtime.greta import run_greta

PATTERNS = {
    "kleene (SEQ(A+, B))+": "(SEQ(A+, B))+",
    "sequence SEQ(A, B+, C)": "SEQ(A, B+, C)",
}
SEMANTICS = ("ANY", "NEXT", "CONT")


def stream(n: int) -> list[Event]:
    rng = random.Random(2021)
    return [
        Event(rng.choice("ABCZ"), i // 2, {"k": rng.randrange(8), "x": rng.randrange(4)}) for i in range(n)
    ]


def best(workload, events, executor, repeats: int) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeats):
        began = time.perf_counter()
        rows = len(evaluate_with(workload, events, executor))
        times.append(time.perf_counter() - began)
    return min(times), rows


def main() -> None:
    args = one_stream_arguments(__doc__, "--repeats")
    events = stream(args.events)
    lines = [
        f"## Semantics: {args.events} events, WITHIN 60 SLIDE 10, 8 partitions (`bench/semantics.py`)",
        "",
        (
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load before "
            f"{os.getloadavg()[0]:.2f}"
        ),
        "",
        "| pattern | semantics | compiled µs/event | python µs/event | rows |",
        "|---|---|---|---|---|",
    ]
    for label, pattern in PATTERNS.items():
        for semantics in SEMANTICS:
            text = (f"q: RETURN COUNT(*), SUM(A.x) PATTERN {pattern} SEMANTICS {semantics} WHERE [k] "
                    "WITHIN 60 SLIDE 10")  # fmt: skip
            workload = parse_workload(text)
            compiled, rows = best(workload, events, run_greta, args.repeats)
            python, python_rows = best(workload, events, partial(run_greta, native=False), args.repeats)
            assert rows == python_rows
            per = 1e6 / len(events)
            lines.append(f"| {label} | {semantics} | {compiled * per:.2f} | {python * per:.2f} | {rows} |")
            print(lines[-1], flush=True)
    lines += ["", f"load after {os.getloadavg()[0]:.2f}", ""]
    append_report(lines, args.output)


if __name__ == "__main__":
    main()
