"""One hot stream partition across the cores (issue 19): the Spark job on a one-key workload, the partition
run whole in one task (``--segment-events 0``) against cut into time segments (the job's default).

    .venv/bin/python bench/vertical.py [--rates 1000000 3000000] [--master local[2]] [--repeat 1] [--dir var/bench]
                                       [--workload count|heavy] [--segment-events N]

For each rate R it generates two hours of rideshare events (the measured hour holds R events; the hour
before feeds the windows that reach back into it) and runs the job over the measured hour with each mode,
interleaved, ``--repeat`` times. It reports the job's wall time, the engine stage (and the composition
stage) wall time, the engine's CPU seconds summed over its tasks, the engine calls, and the peak resident
memory of one Python worker (sampled every 0.1 s over the processes Spark starts for Python), and checks
that both modes wrote the same rows, digit for digit.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Self

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.job_throughput import HOUR, machine
from jobs.aggregate import build_parser, make_plan, run
from jobs.generate import generate
from jobs.session import build_session

# The query, and its heavier variant (one worker at 804 MB for 200,000 events before segments).
WORKLOADS = {
    "count": "q: RETURN COUNT(*) PATTERN SEQ(Request R, Travel T+) WITHIN 30 min SLIDE 5 min\n",
    "heavy": "q: RETURN COUNT(*), SUM(T.duration), AVG(T.speed), MAX(T.duration) "
    "PATTERN SEQ(Request R, Travel T+, NOT Pickup P) WITHIN 30 min SLIDE 5 min\n",
}


class PeakWorker:
    """The largest resident set of one Python worker process while it runs (pyspark's daemon and workers)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.1):
            for p in psutil.process_iter(["name", "cmdline", "memory_info"]):
                cmdline = " ".join(p.info["cmdline"] or ())
                python = (p.info["name"] or "").startswith(
                    "python"
                )  # (not the JVM: its class path says pyspark)
                if (
                    python
                    and ("pyspark.daemon" in cmdline or "pyspark.worker" in cmdline)
                    and p.info["memory_info"]
                ):
                    self.peak = max(self.peak, p.info["memory_info"].rss)


def digest(spark, path: str) -> str:
    rows = spark.read.format("delta").load(path).select("query", "window_end", "group_key", "aggregate",
                                                        "value_exact").collect()  # fmt: skip
    text = "\n".join(sorted("|".join(map(str, r)) for r in rows))
    return f"{len(rows)} rows, sha256 {hashlib.sha256(text.encode()).hexdigest()[:12]}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", type=int, nargs="+", default=[1_000_000, 3_000_000])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dir", default=str(ROOT / "var/bench"))
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="count")
    parser.add_argument("--segment-events", help="the segments mode's --segment-events (default: the job's)")
    args = parser.parse_args()
    text = WORKLOADS[args.workload]

    spark = build_session("hamlet-bench", master=args.master, conf={"spark.sql.shuffle.partitions": "8"})
    spark.sparkContext.setLogLevel("ERROR")
    print(f"# One hot partition: whole vs time segments — {machine()}; master {args.master}; "
          f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load {psutil.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"# workload: {text.strip()}")
    header = ("| events in the hour | mode | engine calls | job s | engine stage s | compose s | engine CPU s "
              "| peak worker MiB | rows |")  # fmt: skip
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    workload = Path(args.dir) / "hot.hamlet"
    workload.parent.mkdir(parents=True, exist_ok=True)
    workload.write_text(text, encoding="utf-8")
    for rate in args.rates:
        base = Path(args.dir) / f"hot{rate}"
        shutil.rmtree(base, ignore_errors=True)
        events = str(base / "events")
        generate(spark, "rideshare", HOUR - timedelta(hours=1), 2, rate, events, seed=1)
        for round_ in range(args.repeat):
            # Segments first: Spark reuses its Python workers, and what the whole partition's task left in one
            # would count as the segments' peak.
            for mode, threshold in (("segments", args.segment_events), ("whole", "0")):
                out = str(base / f"out_{mode}_{round_}")
                argv = ["--workload", str(workload), "--start", HOUR.isoformat(),
                        "--end", (HOUR + timedelta(hours=1)).isoformat(), "--events-table", events,
                        "--output-table", out]  # fmt: skip
                if threshold is not None:
                    argv += ["--segment-events", threshold]
                plan = make_plan(build_parser().parse_args(argv))
                with PeakWorker() as peak:
                    result = run(spark, plan)
                s = result.sets[0].summary
                print(f"| {rate:,} | {mode} | {s['calls']} | {result.seconds['total']:.1f} "
                      f"| {sum(g.engine_seconds for g in result.groups):.1f} "
                      f"| {sum(g.compose_seconds for g in result.groups):.1f} | {s['engine_seconds']:.1f} "
                      f"| {peak.peak / 2**20:,.0f} | {digest(spark, out)} |", flush=True)  # fmt: skip
        print(f"<!-- load after {rate:,}: {psutil.getloadavg()[0]:.1f} -->", flush=True)
        shutil.rmtree(base, ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
