"""The job's engine stage without Spark: the same engine calls as jobs/aggregate.py, timed (and profiled).

    .venv/bin/python bench/job_engine.py [--rate 100000] [--buckets 16] [--calls N] [--profile] [--strategy greta]
                                         [--without-kernel] [--milliseconds]

Generates the rideshare hour before and the measured hour (``jobs.generate.chunk_table``, seed 1), keeps per
shuffle group (``jobs.aggregate.shuffle_groups``: sets whose partition attributes have some in common) what
``run_group`` keeps (its types, events from its longest WITHIN before the hour, non-null common attributes),
hashes the stream partitions into ``--buckets`` groups and runs ``jobs.engine.run_sets`` on each group, as
the ``applyInArrow`` stage does. Prints the CPU seconds per shuffle and per set (conversion, engine,
encoding), a digest of each set's merged results (``jobs.engine.combine``: the same whatever the bucketing,
strategy or kernel) and, with ``--profile``, a cProfile of one call per shuffle (``SORT``, ``TOP``: its
order and length). ``--calls N`` runs only the first N groups of each shuffle (a quick look).
``--milliseconds`` moves every event by 0 to 999 ms (by its row number): timestamps as real feeds have them.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import sys
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hamlet.runtime import native
from jobs.aggregate import _micros, engine_columns, load_workload, plan_sets, shuffle_groups
from jobs.engine import STATS, add_summaries, combine, run_sets
from jobs.generate import chunk_sizes, chunk_table

HOUR = datetime(2026, 1, 5, 9, tzinfo=UTC)


def events(rate: int) -> pa.Table:
    first = int((HOUR - timedelta(hours=1)).timestamp()) // 3600
    tables = [chunk_table("rideshare", 1, first + h, c, size)
              for h in range(2) for c, size in enumerate(chunk_sizes(rate))]  # fmt: skip
    return pa.concat_tables(tables)


def with_milliseconds(table: pa.Table) -> pa.Table:
    """Every event moved by (row · 7919) mod 1000 milliseconds, the same for every run."""
    offsets = pa.array([(i * 7919) % 1000 * 1000 for i in range(table.num_rows)], pa.int64())
    micros = pc.add(table.column("event_time").cast(pa.int64()), offsets)
    moved = micros.cast(pa.timestamp("us", "UTC"))
    return table.set_column(table.column_names.index("event_time"), "event_time", moved)


def groups(table: pa.Table, keys: tuple[str, ...], buckets: int) -> list[pa.Table]:
    """The stream partitions of ``table`` hashed into ``buckets`` groups (a stand-in for Spark's xxhash64)."""
    columns = [table.column(k).to_pylist() for k in keys]
    slots = [zlib.crc32(repr(key).encode()) % buckets for key in zip(*columns)]
    slot = pa.array(slots, pa.int64())
    return [table.filter(pc.equal(slot, b)) for b in range(buckets)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=int, default=100_000)
    parser.add_argument("--workload", default=str(ROOT / "conf/workloads/rideshare50.hamlet"))
    parser.add_argument("--strategy", default="greta")
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--calls", type=int, help="only the first N groups of each set")
    parser.add_argument("--profile", action="store_true", help="cProfile the first call of each set")
    parser.add_argument(
        "--without-kernel",
        action="store_true",
        help="every graph in Python, as if the compiled kernel (native/) were not installed",
    )
    parser.add_argument(
        "--milliseconds", action="store_true", help="times with milliseconds, not whole seconds"
    )
    args = parser.parse_args()
    if args.without_kernel:
        native.hamlet_native = None

    table = events(args.rate)
    if args.milliseconds:
        table = with_milliseconds(table)
    workload = load_workload(args.workload)
    sets = plan_sets(workload, table.column_names)
    start, end = HOUR, HOUR + timedelta(hours=1)
    total = 0.0
    kernel = "without" if native.hamlet_native is None else "with"
    print(
        f"# {args.rate:,} events/hour, {args.buckets} buckets, strategy {args.strategy}, {kernel} the compiled kernel"
    )
    for keys, members in shuffle_groups(sets):
        read_start = start - timedelta(microseconds=max(s.within_us for s in members))
        types = sorted({t for s in members for t in s.types})
        keep = pc.and_(pc.is_in(table.column("event_type"), pa.array(types)),
                       pc.and_(pc.greater_equal(table.column("event_time"), pa.scalar(read_start, pa.timestamp("us", "UTC"))),
                               pc.less(table.column("event_time"), pa.scalar(end, pa.timestamp("us", "UTC")))))  # fmt: skip
        for a in keys:
            keep = pc.and_(keep, pc.is_valid(table.column(a)))
        columns = engine_columns(members)
        mine = table.filter(keep).select(columns)
        tasks = [s.task(args.strategy, _micros(start), _micros(end)) for s in members]
        parts = groups(mine, keys, args.buckets)[: args.calls]
        outputs = []
        cpu = 0.0  # process time of the run_sets calls (the digest below is not counted)
        for i, part in enumerate(parts):
            if args.profile and i == 0:
                profiler = cProfile.Profile()
                profiler.enable()
                outputs.append(run_sets(tasks, part))
                profiler.disable()
                pstats.Stats(profiler).sort_stats(*os.environ.get("SORT", "tottime").split(",")).print_stats(
                    int(os.environ.get("TOP", "25")))  # fmt: skip
            else:
                started = time.process_time()
                outputs.append(run_sets(tasks, part))
                cpu += time.process_time() - started
        total += cpu
        print(
            f"shuffle by {', '.join(keys)}: {mine.num_rows:,} events in {len(parts)} calls (CPU {cpu:.2f}s)"
        )
        out = pa.concat_tables(outputs)
        summaries = [json.loads(t) for k, t in zip(out.column("kind").to_pylist(), out.column("state").to_pylist())
                     if k == STATS]  # fmt: skip
        results = combine(out.filter(pc.not_equal(out.column("kind"), STATS)).drop(["kind"]))
        for s in members:
            summary = add_summaries([x for x in summaries if x["query_set"] == s.index])
            mine_rows = results.filter(pc.is_in(results.column("query"), pa.array(s.queries)))
            names = ("query", "window_start_us", "window_end_us", "group_key", "aggregate", "value_exact")
            digest = hashlib.sha256(
                repr(sorted(zip(*(mine_rows.column(n).to_pylist() for n in names)))).encode()
            )
            print(f"  set {s.index} ({len(s.queries)} queries): {summary['events']:,} events, {mine_rows.num_rows:,} "
                  f"result rows (digest {digest.hexdigest()[:12]}); convert {summary['convert_seconds']:.2f}s "
                  f"engine {summary['engine_seconds']:.2f}s encode {summary['encode_seconds']:.2f}s", flush=True)  # fmt: skip
    print(f"total CPU {total:.2f}s")


if __name__ == "__main__":
    main()
