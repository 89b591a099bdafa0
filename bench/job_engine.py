"""The job's engine stage without Spark: the same engine calls as jobs/aggregate.py, timed (and profiled).

    .venv/bin/python bench/job_engine.py [--rate 100000] [--buckets 32] [--calls N] [--profile] [--strategy greta]
                                         [--without-kernel]

Generates the rideshare hour before and the measured hour (``jobs.generate.chunk_table``, seed 1), keeps per
sharable query set what ``read_events`` / ``run_set`` keep (its types, events from the set's longest WITHIN
before the hour, non-null partition attributes), hashes the stream partitions into ``--buckets`` groups
and runs ``jobs.engine.run_partitions`` on each group, as the ``applyInArrow`` stage does. Prints the CPU
seconds per set (conversion, engine, encoding) and, with ``--profile``, a cProfile of one call per set.
``--calls N`` runs only the first N groups of each set (a quick look; seconds are then for those calls).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
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

from hamlet.partials import AggregateState
from hamlet.runtime import native
from jobs.aggregate import _micros, load_workload, plan_sets
from jobs.engine import SetTask, run_partitions
from jobs.generate import chunk_sizes, chunk_table

HOUR = datetime(2026, 1, 5, 9, tzinfo=UTC)


def events(rate: int) -> pa.Table:
    first = int((HOUR - timedelta(hours=1)).timestamp()) // 3600
    tables = [chunk_table("rideshare", 1, first + h, c, size)
              for h in range(2) for c, size in enumerate(chunk_sizes(rate))]  # fmt: skip
    return pa.concat_tables(tables)


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
    parser.add_argument("--buckets", type=int, default=32)
    parser.add_argument("--calls", type=int, help="only the first N groups of each set")
    parser.add_argument("--profile", action="store_true", help="cProfile the first call of each set")
    parser.add_argument("--without-kernel", action="store_true",
                        help="every graph in Python, as if the compiled kernel (native/) were not installed")
    args = parser.parse_args()
    if args.without_kernel:
        native.hamlet_native = None

    table = events(args.rate)
    workload = load_workload(args.workload)
    sets = plan_sets(workload, table.column_names)
    start, end = HOUR, HOUR + timedelta(hours=1)
    total = 0.0
    kernel = "without" if native.hamlet_native is None else "with"
    print(f"# {args.rate:,} events/hour, {args.buckets} buckets, strategy {args.strategy}, {kernel} the compiled kernel")
    for s in sets:
        set_start = start - timedelta(microseconds=s.within_us)
        keep = pc.and_(pc.is_in(table.column("event_type"), pa.array(s.types)),
                       pc.and_(pc.greater_equal(table.column("event_time"), pa.scalar(set_start, pa.timestamp("us", "UTC"))),
                               pc.less(table.column("event_time"), pa.scalar(end, pa.timestamp("us", "UTC")))))  # fmt: skip
        for a in s.partition_attributes:
            keep = pc.and_(keep, pc.is_valid(table.column(a)))
        mine = table.filter(keep).select(["event_id", "event_type", "event_time", *s.attributes])
        task = SetTask(s.workload_text, args.strategy, s.attributes, s.partition_attributes,
                       _micros(start), _micros(end))  # fmt: skip
        parts = groups(mine, s.partition_attributes, args.buckets)[: args.calls]
        convert = engine = encode = 0.0
        rows = 0
        digest = hashlib.sha256()
        cpu = 0.0  # process time of the run_partitions calls (the digest below is not counted)
        for i, part in enumerate(parts):
            if args.profile and i == 0:
                profiler = cProfile.Profile()
                profiler.enable()
                out = run_partitions(task, part)
                profiler.disable()
                pstats.Stats(profiler).sort_stats(*__import__("os").environ.get("SORT","tottime").split(",")).print_stats(int(__import__("os").environ.get("TOP","25")))
            else:
                started = time.process_time()
                out = run_partitions(task, part)
                cpu += time.process_time() - started
            summary = json.loads(out.column("state")[-1].as_py())
            convert += summary["convert_seconds"]
            engine += summary["engine_seconds"]
            encode += summary["encode_seconds"]
            rows += out.num_rows - 1
            names = ("query", "window_end_us", "group_key", "aggregate", "state")
            for row in sorted(
                r for r in zip(*(out.column(n).to_pylist() for n in names)) if r[0] is not None
            ):
                state = AggregateState.from_text(row[4])
                digest.update(repr((*row[:4], state.function, state.count, state.total, state.floats,
                                    state.extreme)).encode())  # fmt: skip
        total += cpu
        print(f"set {s.index} ({len(s.queries)} queries): {mine.num_rows:,} events in {len(parts)} calls, "
              f"{rows:,} partial rows (digest {digest.hexdigest()[:12]}); convert {convert:.2f}s engine {engine:.2f}s encode {encode:.2f}s "
              f"(CPU {cpu:.2f}s)", flush=True)  # fmt: skip
    print(f"total CPU {total:.2f}s")


if __name__ == "__main__":
    main()
