"""Where hamlet's speed-up over greta comes from: columns (shape groups) vs bursts (shared factors).

    .venv/bin/python bench/hamlet_ablation.py [--queries 50] [--events 20000] [--burst 30] [--repeat 3]

Three runs of the same workload (``hamlet_throughput.py``'s authors' shape), identical counts checked:
* ``greta``: every query on its own graph, every event one by one;
* ``columns, no bursts``: the hamlet executor with every timestamp its own burst (``_SharedRun._pane``
  patched to a unique value per time): queries of one shape in columns of slots (shared prefixes), but
  each event applied on its own to every slot that reads it — what a GRETA in columns would do;
* ``hamlet``: bursts of E2 applied at once, their factor Φ computed once for all queries.
The first ratio is the column layout with its shared prefixes, the second the sharing of bursts. CPU
seconds, best of ``--repeat`` (``timing.py``).
"""

from __future__ import annotations

import argparse
import gc
import time

from hamlet_throughput import stream, workload
from timing import load, machine

from hamlet import evaluate, parse_workload
from hamlet.runtime import shared


def run(text: str, events: list, strategy: str, repeat: int, no_bursts: bool) -> tuple[float, list]:
    original = shared._SharedRun._pane
    if no_bursts:
        shared._SharedRun._pane = lambda self, time: time  # type: ignore[method-assign]
    try:
        best, rows = float("inf"), []
        for _ in range(repeat):
            gc.collect()
            started = time.process_time()
            rows = evaluate(parse_workload(text), events, strategy)
            best = min(best, time.process_time() - started)
        return best, rows
    finally:
        shared._SharedRun._pane = original  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--burst", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text, events = workload(args.queries), stream(args.events, args.burst)
    greta, reference = run(text, events, "greta", args.repeat, False)
    columns, rows_columns = run(text, events, "hamlet", args.repeat, True)
    hamlet, rows_hamlet = run(text, events, "hamlet", args.repeat, False)
    print(f"# {machine()}; {load()}; {args.queries} queries, {args.events} events, burst {args.burst}")
    print("| run | CPU s | × previous | × greta | identical |\n|---|---|---|---|---|")
    print(f"| greta | {greta:.3f} | 1.0 | 1.0 | True |")
    print(f"| columns, no bursts | {columns:.3f} | {greta / columns:.1f} | {greta / columns:.1f} "
          f"| {rows_columns == reference} |")  # fmt: skip
    print(
        f"| hamlet | {hamlet:.3f} | {columns / hamlet:.1f} | {greta / hamlet:.1f} | {rows_hamlet == reference} |"
    )


if __name__ == "__main__":
    main()
