"""Bursty synthetic event streams for demos, tests and benchmarks, written to a Delta events table.

    hamlet generate --scenario rideshare|stock --start ISO --hours H --events-per-hour R --table PATH [--seed S]
    spark-submit jobs/generate.py (same arguments)

Every hour holds exactly R events, made in chunks of at most ``CHUNK`` events; chunk c of hour h depends
only on (scenario, seed, h, c), so the output is the same whatever the cluster, partitioning or order.
Rerunning replaces the generated hours (replaceWhere on their partitions), it never duplicates them.

rideshare: trips. A Request, a burst of Travel events of the driver towards the rider, then a Pickup
(followed by a second Travel burst and a Dropoff), a Cancel, or nothing. All events of a trip share
``driver``, ``rider`` (unique per trip), ``district``; Request has ``request_type`` (Pool or Single), Travel
``speed`` (mph, 10 % of trips crawl below 10 mph) and ``duration`` (seconds). Events of a trip are
5-60 s apart; a trip that would run past its hour is cut there.

stock: transactions (event type Stock) of 40 companies in 8 sectors: ``price`` follows a random walk per
company with bursts of falling prices, ``volume`` is a whole number of shares.

sensor: machines on production lines, the shape where HAMLET's sharing pays: each machine runs production
cycles, a ``Start`` (with ``product``) followed by a long burst of ``Reading`` events (``temperature``
warming up over the cycle, ``vibration``, ``power`` in watts) every few seconds, then a ``Stop``; now and
then an ``Alarm`` interrupts a cycle or a ``Service`` comes between two. All events carry ``machine`` and
its ``line``. A machine reports about 250 events per hour (so 2,000 events per hour are 8 machines):
bursts of dozens of readings per machine and 10 minutes.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit jobs/generate.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jobs.schema import EVENT_TIME_RANGE, SCENARIOS, hour_partition_filter, scenario_schema, table_location
from jobs.summary import Summary

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

CHUNK = 50_000
# The events of one run: its plan holds a row per CHUNK of them (200,000 rows), built in the driver.
MAX_EVENTS = 10**10
DISTRICTS = ("Downtown", "Midtown", "Uptown", "Harbor", "Airport", "Campus", "Riverside", "Oldtown",
             "Eastside", "Westside")  # fmt: skip
SECTORS = ("Tech", "Energy", "Finance", "Health", "Retail", "Transport", "Media", "Materials")


def chunk_sizes(events_per_hour: int) -> list[int]:
    chunks = max(1, math.ceil(events_per_hour / CHUNK))
    base, extra = divmod(events_per_hour, chunks)
    return [base + (1 if c < extra else 0) for c in range(chunks)]


def _rng(scenario: str, seed: int, hour: int, chunk: int) -> random.Random:
    return random.Random(f"{scenario}/{seed}/{hour}/{chunk}")


def rideshare_chunk(seed: int, hour: int, chunk: int, size: int) -> list[tuple]:
    """``size`` events of hour ``hour`` (hours since the epoch) as tuples in column order: event_id,
    event_type, event_time (seconds), driver, rider, district, request_type, speed, duration."""
    rng = _rng("rideshare", seed, hour, chunk)
    start, end = hour * 3600, (hour + 1) * 3600
    drivers = max(1, size // 40)
    rows: list[tuple] = []
    trip = 0
    while len(rows) < size:
        trip += 1
        driver = f"d{chunk}-{rng.randrange(drivers)}"
        rider = f"r{hour}-{chunk}-{trip}"
        district = DISTRICTS[min(int(rng.paretovariate(1.2)) - 1, len(DISTRICTS) - 1)]
        crawl = rng.random() < 0.1
        t = rng.randrange(start, end)
        trip_rows: list[tuple[str, int, Any, Any, Any]] = [
            ("Request", t, rng.choice(("Pool", "Single")), None, None)
        ]

        t = _burst(rng, t, crawl, trip_rows)
        outcome = rng.random()
        if outcome < 0.6:
            t += rng.randrange(5, 61)
            trip_rows.append(("Pickup", t, None, None, None))
            t = _burst(rng, t, crawl, trip_rows)
            trip_rows.append(("Dropoff", t + rng.randrange(5, 61), None, None, None))
        elif outcome < 0.85:
            trip_rows.append(("Cancel", t + rng.randrange(5, 61), None, None, None))
        for event_type, moment, request_type, speed, duration in trip_rows:
            if moment >= end or len(rows) == size:
                break
            rows.append((f"{seed}-{hour}-{chunk}-{len(rows)}", event_type, moment, driver, rider, district,
                         request_type, speed, duration))  # fmt: skip
    return rows


def _burst(rng: random.Random, t: int, crawl: bool, trip_rows: list) -> int:
    """Append a burst of Travel events after time ``t``; returns the time of the last one."""
    for _ in range(1 + min(int(rng.expovariate(1 / 3)), 11)):
        t += rng.randrange(5, 61)
        speed = round(rng.uniform(2, 9.9) if crawl else rng.uniform(5, 45), 1)
        trip_rows.append(("Travel", t, None, speed, rng.randrange(5, 61)))
    return t


def stock_chunk(seed: int, hour: int, chunk: int, size: int) -> list[tuple]:
    """``size`` Stock transactions of hour ``hour``: event_id, event_type, event_time (seconds), company,
    sector, price, volume. Times are spread evenly over the hour (several per second at high rates)."""
    rng = _rng("stock", seed, hour, chunk)
    companies = [(f"C{i:02d}", SECTORS[i % len(SECTORS)]) for i in range(40)]
    price = {name: rng.uniform(20, 500) for name, _ in companies}
    falling = {name: 0 for name, _ in companies}
    start = hour * 3600
    times = sorted(start + rng.randrange(3600) for _ in range(size))
    rows = []
    for i, t in enumerate(times):
        name, sector = companies[rng.randrange(len(companies))]
        if falling[name] == 0 and rng.random() < 0.05:
            falling[name] = rng.randrange(3, 15)  # a burst of falling prices
        drift = -abs(rng.gauss(0, 0.004)) if falling[name] else rng.gauss(0, 0.004)
        falling[name] = max(0, falling[name] - 1)
        price[name] = max(1.0, price[name] * (1 + drift))
        rows.append((f"{seed}-{hour}-{chunk}-{i}", "Stock", t, name, sector, round(price[name], 2),
                     rng.randrange(1, 100) * 100))  # fmt: skip
    return rows


LINES = ("L1", "L2", "L3")
PRODUCTS = ("gear", "shaft", "valve")
SENSOR_EVENTS_PER_MACHINE = 250  # per hour: a reading every ~14 s, ~40 readings per machine and 10 minutes


def sensor_chunk(seed: int, hour: int, chunk: int, size: int) -> list[tuple]:
    """``size`` sensor events of hour ``hour``: event_id, event_type, event_time (seconds), machine, line,
    product, temperature, vibration, power. Every machine's events have distinct times (a burst is a run of
    distinct timestamps), so a machine reports at most 3,600 events per hour."""
    rng = _rng("sensor", seed, hour, chunk)
    machines = max(1, -(-size // SENSOR_EVENTS_PER_MACHINE))
    start = hour * 3600
    rows: list[tuple] = []
    for m in range(machines):
        count = size // machines + (1 if m < size % machines else 0)
        machine, line = f"m{chunk}-{m:02d}", LINES[m % len(LINES)]
        temperature = rng.uniform(25, 35)
        left = 0  # readings left in the current cycle; 0: the next event starts one (or is a Service)
        product = None
        for t in sorted(rng.sample(range(start, start + 3600), count)):
            attributes: tuple[Any, Any, Any] = (None, None, None)
            if left == 0:
                if rng.random() < 0.1:
                    event_type = "Service"
                else:
                    event_type, product = "Start", rng.choice(PRODUCTS)
                    left = rng.randrange(30, 120)
                    temperature = rng.uniform(25, 35)
            elif left == 1:
                event_type, left = "Stop", 0
            elif rng.random() < 0.02:
                event_type = "Alarm"
            else:
                left -= 1
                temperature = min(95.0, temperature + rng.uniform(-0.5, 1.5))
                event_type = "Reading"
                attributes = (
                    round(temperature, 1),
                    round(rng.gammavariate(2, 0.8), 2),
                    rng.randrange(800, 2400),
                )
            rows.append(
                (f"{seed}-{hour}-{chunk}-{len(rows)}", event_type, t, machine, line, product, *attributes)
            )
    rows.sort(key=lambda r: r[2])
    return rows


MAKERS = {"rideshare": rideshare_chunk, "stock": stock_chunk, "sensor": sensor_chunk}


def chunk_table(scenario: str, seed: int, hour: int, chunk: int, size: int) -> pa.Table:
    """One chunk as an Arrow table with the events table's columns (partition columns included)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = MAKERS[scenario](seed, hour, chunk, size)
    attributes = SCENARIOS[scenario]
    columns: list[Any] = list(zip(*rows)) if rows else [() for _ in range(3 + len(attributes))]
    arrow_types = {"string": pa.string(), "double": pa.float64(), "bigint": pa.int64()}
    seconds = pa.array(columns[2], pa.int64())
    moment = pc.multiply(seconds, 1_000_000).cast(pa.timestamp("us", tz="UTC"))
    day = datetime.fromtimestamp(hour * 3600, UTC)
    arrays = {
        "event_id": pa.array(columns[0], pa.string()),
        "event_type": pa.array(columns[1], pa.string()),
        "event_time": moment,
    }
    for i, (name, kind) in enumerate(attributes.items()):
        arrays[name] = pa.array(columns[3 + i], arrow_types[kind])
    arrays["event_date"] = pa.array([day.date()] * len(rows), pa.date32())
    arrays["event_hour"] = pa.array([day.hour] * len(rows), pa.int32())
    return pa.table(arrays)


def parse_instant(text: str) -> datetime:
    """An ISO-8601 instant; a naive one means UTC."""
    moment = datetime.fromisoformat(text.strip())
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def generated_frame(spark: SparkSession, scenario: str, start: datetime, hours: int, events_per_hour: int,
                    seed: int = 1) -> DataFrame:  # fmt: skip
    """The generated events as a DataFrame (chunks made in parallel on the executors)."""
    if scenario not in MAKERS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(MAKERS)}")
    if start.minute or start.second or start.microsecond:
        raise ValueError(f"--start must be on the hour, found {start.isoformat()}")
    first = int(start.timestamp()) // 3600
    tasks = [
        (first + h, c, size) for h in range(hours) for c, size in enumerate(chunk_sizes(events_per_hour))
    ]
    schema = scenario_schema(scenario)
    plan = spark.createDataFrame(tasks, "hour long, chunk int, size int").repartition(max(1, len(tasks)))

    def make(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for hour, chunk, size in zip(*(batch.column(i).to_pylist() for i in range(3))):
                yield from chunk_table(scenario, seed, hour, chunk, size).to_batches()

    return plan.mapInArrow(make, schema)


def generate(spark: SparkSession, scenario: str, start: datetime, hours: int, events_per_hour: int, table: str,
             seed: int = 1) -> int:  # fmt: skip
    """Write the generated hours into the Delta table at ``table``; returns the number of events."""
    if hours < 1 or events_per_hour < 0 or hours * events_per_hour > MAX_EVENTS:
        raise ValueError(f"--hours must be at least 1, --events-per-hour at least 0, and {MAX_EVENTS:,} events "
                         "at most in all")  # fmt: skip
    frame = generated_frame(spark, scenario, start, hours, events_per_hour, seed)
    (
        frame.write.format("delta")
        .mode("overwrite")
        .option("replaceWhere", hour_partition_filter(start, start + timedelta(hours=hours)))
        .partitionBy("event_date", "event_hour")
        .save(table)
    )
    return hours * events_per_hour


def build_parser(prog: str = "hamlet generate") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Write bursty synthetic events into a Delta events "
                                     "table (deterministic for a seed; rerunning replaces those hours).")  # fmt: skip
    parser.add_argument("--scenario", required=True, choices=sorted(MAKERS))
    parser.add_argument("--start", required=True, help="first hour, ISO-8601 on the hour (naive means UTC)")
    parser.add_argument("--hours", type=int, default=1, help="number of hours (default 1)")
    parser.add_argument("--events-per-hour", type=int, required=True)
    parser.add_argument("--table", required=True, help="Delta events table (path or URI)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--master", help="Spark master URL (default: conf/spark/$HAMLET_ENV.toml, local[*])")
    return parser


def main(argv: list[str] | None = None, prog: str = "hamlet generate") -> int:
    from jobs.session import reexec_without_submit_jvm

    started = time.perf_counter()
    reexec_without_submit_jvm()
    args = build_parser(prog).parse_args(argv)
    try:
        start = parse_instant(args.start)
    except ValueError:
        print(f"error: --start {args.start!r} is not an ISO-8601 time", file=sys.stderr)
        return 1
    first, end = EVENT_TIME_RANGE
    if args.hours >= 1 and not (first <= start <= end and args.hours <= (end - start) // timedelta(hours=1)):
        print(f"error: the hours from --start {start.isoformat()} must lie in {first.isoformat()} to "
              f"{end.isoformat()} (readable by deltalake and pandas)", file=sys.stderr)  # fmt: skip
        return 1
    if start.minute or start.second or start.microsecond or args.hours < 1 or args.events_per_hour < 0:
        print(
            "error: --start must be on the hour, --hours at least 1, --events-per-hour at least 0",
            file=sys.stderr,
        )
        return 1
    if args.hours * args.events_per_hour > MAX_EVENTS:
        print(f"error: --hours × --events-per-hour is {args.hours * args.events_per_hour:,} events, more than "
              f"{MAX_EVENTS:,} in one run: generate them in several", file=sys.stderr)  # fmt: skip
        return 1
    from jobs.session import command_session

    try:
        with command_session("hamlet-generate", args.master) as spark:
            table = table_location(args.table)
            count = generate(spark, args.scenario, start, args.hours, args.events_per_hour, table, args.seed)
        end = start + timedelta(hours=args.hours)
        print(Summary("generate", args.scenario, start, end, time.perf_counter() - started, rows_out=count,
                      note=f"written to {args.table}").line())  # fmt: skip
        return 0
    except Exception as e:  # noqa: BLE001 (any failure: report it, exit 1)
        print(f"error: generation failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(prog="spark-submit jobs/generate.py"))
