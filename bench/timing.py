"""Fair timing of several strategies in one process: interleaved repeats, garbage collected before each.

Run one after the other, a strategy that follows another pays for its garbage (the GRETA graphs of 50
queries are large) and for whatever else the machine does at that moment; interleaving the repeats and
keeping the best of each spreads both evenly. Times are CPU seconds of this process
(``time.process_time``): the other worktrees share this 2-core machine, and at a load average of 5–9 the
wall clock of one run swings by ±30 % while its CPU time moves by a few percent. The machine's load average
goes into every results file.
"""

from __future__ import annotations

import gc
import os
import platform
import time
from typing import Any

from hamlet import evaluate
from hamlet.analysis.workload import Workload
from hamlet.stats import EvaluationStats


def measure_all(workload: Workload, events: list[Any], strategies: list[str],
                repeat: int) -> dict[str, tuple[float, list, EvaluationStats]]:  # fmt: skip
    """Best CPU seconds, result rows and stats per strategy; repeat r runs the strategies rotated by r."""
    best: dict[str, tuple[float, list, EvaluationStats]] = {}
    for r in range(repeat):
        for s in strategies[r % len(strategies) :] + strategies[: r % len(strategies)]:
            gc.collect()
            stats = EvaluationStats()
            started = time.process_time()
            rows = evaluate(workload, events, s, stats)
            seconds = time.process_time() - started
            if s not in best or seconds < best[s][0]:
                best[s] = (seconds, rows, stats)
    return {s: best[s] for s in strategies}


def machine() -> str:
    cpus = os.cpu_count()
    return f"{platform.machine()}, {cpus} cores, Python {platform.python_version()}"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
