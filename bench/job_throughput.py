"""End-to-end throughput of the Spark aggregation job (jobs/aggregate.py) on local[2].

    .venv/bin/python bench/job_throughput.py [--rates 100000 300000 1000000] [--workload conf/workloads/rideshare50.hamlet]
                                             [--strategy hamlet] [--buckets N] [--master local[2]] [--dir var/bench]

For each rate R it generates two hours of rideshare events (the measured hour holds R events; the hour
before it is read too, for the windows that reach back into it), then times one job run over the measured
hour, split the way jobs/aggregate.py materialises it: read (Delta scan, pruning, filters, cached), shuffle
(per sharable query set: its events hashed by GROUP-BY ∪ equivalence attributes), engine (the applyInArrow
stage: Arrow to events, ``evaluate_partials``, encoding), combine (merging partials across calls) and
write (Delta replaceWhere + run_stats). "in engine" is the time spent inside ``evaluate_partials``, summed
over the tasks (CPU seconds on all cores); its share is of the job's wall time times the cores. events/s =
R / wall time of the job (session start and data generation excluded).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobs.aggregate import build_parser, make_plan, run
from jobs.generate import generate
from jobs.session import build_session

HOUR = datetime(2026, 1, 5, 9, tzinfo=UTC)


def machine() -> str:
    cores = os.cpu_count()
    memory = ""
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        kib = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cores} cores{memory}, {platform.machine()}, {platform.system()}, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--workload", default=str(ROOT / "conf/workloads/rideshare50.hamlet"))
    parser.add_argument("--strategy", default="hamlet")
    parser.add_argument("--buckets", type=int, help="engine calls per query set (default: the job's)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--dir", default=str(ROOT / "var/bench"))
    parser.add_argument("--keep", action="store_true", help="keep the generated tables")
    args = parser.parse_args()

    spark = build_session("hamlet-bench", master=args.master, conf={"spark.sql.shuffle.partitions": "8"})
    cores = spark.sparkContext.defaultParallelism
    spark.sparkContext.setLogLevel("ERROR")
    print(f"# Spark job throughput — {machine()}; master {args.master}; strategy {args.strategy}")
    print(f"# workload {Path(args.workload).name}; {datetime.now(UTC):%Y-%m-%d}")
    header = ("| events in the hour | events read | rows out | read s | shuffle s | engine s | in engine (CPU s) "
              "| combine s | write s | total s | events/s | engine share |")  # fmt: skip
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for rate in args.rates:
        base = Path(args.dir) / f"r{rate}"
        shutil.rmtree(base, ignore_errors=True)
        events = str(base / "events")
        started = time.perf_counter()
        generate(spark, "rideshare", HOUR - timedelta(hours=1), 2, rate, events, seed=1)
        generated = time.perf_counter() - started
        argv = ["--workload", args.workload, "--start", HOUR.isoformat(), "--end", (HOUR + timedelta(hours=1)).isoformat(),
                "--events-table", events, "--output-table", str(base / "trend_aggregates"), "--strategy", args.strategy]  # fmt: skip
        if args.buckets is not None:
            argv += ["--buckets", str(args.buckets)]
        plan = make_plan(build_parser().parse_args(argv))
        result = run(spark, plan)
        shuffle = sum(g.shuffle_seconds for g in result.groups)
        engine = sum(g.engine_seconds for g in result.groups)
        inside = sum(s.summary["engine_seconds"] for s in result.sets)
        combine = sum(g.combine_seconds for g in result.groups)
        total = result.seconds["total"]
        print(f"| {rate:,} | {result.events_read:,} | {result.rows_written:,} | {result.seconds['read']:.1f} "
              f"| {shuffle:.1f} | {engine:.1f} | {inside:.1f} | {combine:.1f} | {result.seconds['write']:.1f} "
              f"| {total:.1f} | {rate / total:,.0f} | {inside / (total * cores):.0%} |", flush=True)  # fmt: skip
        convert = sum(s.summary["convert_seconds"] for s in result.sets)
        encode = sum(s.summary["encode_seconds"] for s in result.sets)
        print(f"<!-- generation of 2 h x {rate:,} events: {generated:.1f}s; in the tasks besides the engine: "
              f"Arrow to events {convert:.1f} CPU s, encoding partials {encode:.1f} CPU s; sets: "
              + "; ".join(f"{len(s.plan.queries)} queries, {s.summary['partitions']:,} partitions, "
                          f"{s.summary['calls']} calls" for s in result.sets)
              + f"; {len(result.groups)} shuffles -->", flush=True)  # fmt: skip
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
