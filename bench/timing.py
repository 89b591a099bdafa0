"""Fair timing of several strategies in one process: interleaved repeats, garbage collected before each.

Run one after the other, a strategy that follows another pays for its garbage (the GRETA graphs of 50
queries are large) and for whatever else the machine does at that moment; interleaving the repeats and
keeping the best of each spreads both evenly. Times are CPU seconds of this process
(``time.process_time``): the other worktrees share this 2-core machine, and at a load average of 5–9 the
wall clock of one run swings by ±30 % while its CPU time moves by a few percent. The machine's load average
goes into every results file.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from hamlet import evaluate, evaluate_table, finalize_table
from hamlet.analysis.workload import Workload
from hamlet.api import prepare
from hamlet.events import Event
from hamlet.stats import EvaluationStats


def measure_all(workload: Workload, events: list[Any], strategies: list[str],
                repeat: int, table: bool = False) -> dict[str, tuple[float, list, EvaluationStats]]:  # fmt: skip
    """Best CPU seconds, result rows and stats per strategy; repeat r runs the strategies rotated by r.
    With ``table``, the events go in as an Arrow table (made before timing) and the timed call is
    ``evaluate_table`` (Arrow in, partial states out, as the Spark job calls the engine). The workload is
    prepared once, before timing, as the Spark job prepares it (``hamlet.api.prepare``): what is timed is
    the engine, which compiles the workload on its first call and reuses that plan after it."""
    source = arrow_table(events) if table else events
    prepared = prepare(workload)
    best: dict[str, tuple[float, Any, EvaluationStats]] = {}
    for r in range(repeat):
        for s in strategies[r % len(strategies) :] + strategies[: r % len(strategies)]:
            gc.collect()
            stats = EvaluationStats()
            started = time.process_time()
            rows = (
                evaluate_table(prepared, source, s, stats) if table else evaluate(prepared, source, s, stats)
            )
            seconds = time.process_time() - started
            if s not in best or seconds < best[s][0]:
                best[s] = (seconds, rows, stats)
    if table:
        return {s: (best[s][0], finalize_table(prepared, best[s][1]), best[s][2]) for s in strategies}
    return {s: best[s] for s in strategies}


def ratio_rows(results: dict[str, tuple[float, list, EvaluationStats]], *leading: object) -> list[str]:
    """``measure_all``'s results as Markdown rows, one per strategy: the ``leading`` cells, then CPU s, the
    ratio to greta, bursts shared / bursts, and whether the rows are greta's."""
    reference, base = results["greta"][1], results["greta"][0]
    cells = "".join(f"| {cell} " for cell in leading)
    return [
        f"{cells}| {strategy} | {seconds:.3f} | {base / seconds:.2f} | {stats.shared_bursts}/{stats.bursts} "
        f"| {rows == reference} |"
        for strategy, (seconds, rows, stats) in results.items()
    ]


def arrow_table(events: list[Event]) -> pa.Table:
    """Events as a table: type, time in seconds (as ``hamlet.evaluate`` takes them), attributes."""
    names = sorted({a for e in events for a in e.attributes})
    columns = {
        "event_type": pa.array([e.type for e in events], pa.string()),
        "event_time": pa.array([e.time for e in events]),
    }
    for name in names:
        columns[name] = pa.array([e.attributes.get(name) for e in events])
    return pa.table(columns)


def machine() -> str:
    cpus = os.cpu_count()
    return f"{platform.machine()}, {cpus} cores, Python {platform.python_version()}"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def one_stream_arguments(description: str, repeat: str = "--repeat", window: tuple[int, int] | None = None,
                         more: tuple[tuple[str, int], ...] = ()) -> argparse.Namespace:  # fmt: skip
    """``--events`` (20,000), ``repeat`` (3) and ``--output`` (a results file the report is appended to), as
    the benchmarks of one generated stream take them; with ``window``, ``--within`` and ``--slide`` in
    seconds (its two numbers the defaults); ``more``: int options of the benchmark's own, with defaults."""
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument(repeat, type=int, default=3)
    parser.add_argument("--output", type=Path)
    for option, default in more:
        parser.add_argument(option, type=int, default=default)
    if window is not None:
        parser.add_argument("--within", type=int, default=window[0])
        parser.add_argument("--slide", type=int, default=window[1])
    return parser.parse_args()


def append_report(lines: list[str], output: Path | None) -> None:
    """The report's lines at the end of ``output`` (None: printed only, as they came)."""
    if output:
        with output.open("a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
