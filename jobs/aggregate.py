"""The aggregation job: events (Delta) in, exact per-window trend aggregates (Delta) out.

    hamlet aggregate --workload W --start ISO --end ISO --events-table PATH --output-table PATH
                     [--stats-table PATH] [--strategy hamlet] [--master URL] [--run-id ID] [--buckets N]
    spark-submit jobs/aggregate.py (same arguments)

A run for [start, end) reads the events in [start - longest WITHIN, end), pruning the Delta partitions
(event_date, event_hour) outside it, and emits exactly the windows whose end lies in (start, end]: every
event of such a window lies in what was read, so the union of hourly runs equals one run over the whole
range. Sharable query sets whose partition attributes (GROUP-BY ∪ equivalence) have some in common share
one shuffle (``shuffle_groups``): it keeps only their event types and the columns their queries name, drops
events with a null in the common attributes (no query can match them), and hashes the common attributes:
``bucket = pmod(xxhash64(attributes), N)``, so one engine call gets whole stream partitions of every set
(many of them: a call per partition costs more than the engine on small partitions; with ``--buckets 0``
every partition of the common attributes is its own group). In the call the events become ``Event``s once,
and each set runs on its own types, read start and partitions (``engine.run_sets``). ``applyInArrow``
keeps int64 exact (``applyInPandas`` would turn a nullable long into a float64). Partials of the same group
from different calls are merged in a second shuffle by (query, window, group, aggregate), with exact
arithmetic in Python.

Output: ``trend_aggregates`` written with replaceWhere on exactly (workload, window_end in (start, end]) —
a rerun replaces its rows and never duplicates them, other runs' rows are not touched — and one
``run_stats`` row per sharable query set (appended; the stage seconds of sets that shared a shuffle are
those of the shared stages). A workload error is reported before Spark starts; any failure exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit jobs/aggregate.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hamlet import STRATEGIES, segment_obstacle
from hamlet.analysis.attributes import check_attributes
from hamlet.analysis.workload import MAX_WINDOWS_PER_EVENT, Workload, load_workload_file
from hamlet.api import segment_pane
from hamlet.cli import add_window_bound
from hamlet.errors import HamletError
from hamlet.language.lexer import Kind, tokenize
from jobs.commits import retried
from jobs.engine import MICROS, SetTask
from jobs.logs import error_line
from jobs.pipeline import NAME, PipelineError, allowed_workload, commit_metadata, resolve
from jobs.schema import (
    FINGERPRINT,
    delta_sql,
    event_type_as_read,
    hour_partition_filter,
    interval_problem,
    row_fingerprint,
    sql_string,
    table_attributes,
    table_location,
    timestamp_sql,
)
from jobs.session import is_remote
from jobs.summary import Summary

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


# A stream partition of more events than this runs in time segments (``--segment-events``), each of about as
# many: at 1M events a task of the heavier query (SUM, AVG, MAX, a trailing NOT) peaked at 6.4 GB whole,
# 1.3 GB in segments of 200,000 and 644 MB in segments of 100,000 (bench/results/vertical.md).
SEGMENT_EVENTS = 100_000
MAX_SEGMENTS = 64
HOT_SAMPLE = 1000  # sampled rows expected per --segment-events events, to find the hot stream partitions


# The job's own columns next to the events' attributes: names no attribute can have (an attribute is a word
# of the language, letters, digits and '_'), so none is overwritten. An events table with a column _bucket
# got its GROUP-BY values replaced by the hash buckets of the shuffle; GROUP-BY T.count met Spark's own
# "count" of the hot stream partitions (AMBIGUOUS_REFERENCE). (The row fingerprint: schema.FINGERPRINT.)
BUCKET, SEGMENT_COLUMN, HOT, EVENTS = "#bucket", "#segment", "#hot", "#events"


class JobError(Exception):
    """A problem with the job's input, reported as ``error: ...`` with exit status 1."""


@dataclass(frozen=True)
class QuerySetPlan:
    index: int
    queries: tuple[str, ...]
    partition_attributes: tuple[str, ...]
    types: tuple[str, ...]
    attributes: tuple[str, ...]  # attribute columns the engine gets (partition attributes first)
    within_us: int  # the longest WITHIN of the set
    workload_text: str

    def task(self, strategy: str, start_us: int, end_us: int) -> SetTask:
        """What an engine call needs of the set in a run over [start, end)."""
        return SetTask(self.workload_text, strategy, self.attributes, self.partition_attributes, start_us, end_us,
                       self.types, start_us - self.within_us, self.index)  # fmt: skip


def engine_columns(sets: list[QuerySetPlan]) -> list[str]:
    """The columns an engine call of these sets gets (those of every set, once)."""
    return ["event_id", "event_type", "event_time", *dict.fromkeys(a for s in sets for a in s.attributes)]


@dataclass
class Plan:
    workload_name: str
    strategy: str
    start: datetime
    end: datetime
    events_table: str
    output_table: str
    stats_table: str
    run_id: str
    buckets: int | None
    sets: list[QuerySetPlan] = field(default_factory=list)
    quarantine_table: str | None = None  # rows quarantined by validation (jobs/validate.py) are left out
    segment_events: int = 0  # a stream partition with more events runs in time segments (0: never)

    @property
    def start_us(self) -> int:
        return _micros(self.start)

    @property
    def end_us(self) -> int:
        return _micros(self.end)

    @property
    def read_start(self) -> datetime:
        longest = max((s.within_us for s in self.sets), default=0)
        return self.start - timedelta(microseconds=longest)

    def columns(self) -> list[str]:
        names = dict.fromkeys(["event_id", "event_type", "event_time"])
        for s in self.sets:
            names.update(dict.fromkeys(s.attributes))
        return list(names)


def _micros(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * MICROS + delta.microseconds


def parse_instant(text: str, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise JobError(f"{what} {text!r} is not an ISO-8601 time such as 2026-01-05T08:00:00Z") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def load_workload(path: str, allowed: list[str] | None = None,
                  max_windows_per_event: int = MAX_WINDOWS_PER_EVENT) -> Workload:  # fmt: skip
    """The workload file's queries; with ``allowed`` (the Airflow tasks pass the DAG's choices), a file not
    among them is refused before it is opened, so no message can quote it."""
    try:
        source = allowed_workload(path, allowed) if allowed else resolve(path)
        return load_workload_file(str(source), max_windows_per_event)
    except (HamletError, PipelineError) as e:
        raise JobError(str(e)) from None


def _words(text: str) -> set[str]:
    """The identifiers of a query's text as the language reads them (``größe`` and ``Straße_2`` too: a
    pattern of ASCII words left a non-ASCII attribute out of the engine's columns, null on every event)."""
    return {t.text for t in tokenize(text) if t.kind is Kind.IDENT}


def plan_sets(workload: Workload, columns: list[str]) -> list[QuerySetPlan]:
    """Per sharable query set: its event types, partition attributes, the attribute columns its queries
    name (a word of a query's text that is a column of the table) and its longest WITHIN."""
    fixed = {"event_id", "event_type", "event_time", "event_date", "event_hour"}
    attribute_columns = [c for c in columns if c not in fixed]
    plans = []
    for index, query_set in enumerate(workload.sharable_query_sets()):
        queries = [workload.query(name) for name in query_set.queries]
        missing = [a for a in query_set.partition_attributes if a not in attribute_columns]
        if missing:
            names = ", ".join(query_set.queries)
            raise JobError(f"queries {names} partition the stream by {', '.join(missing)}, which the events table "
                           f"lacks (its attribute columns: {', '.join(attribute_columns) or 'none'})")  # fmt: skip
        words = {w for q in queries for w in _words(q.text)}
        named = [c for c in attribute_columns if c in words and c not in query_set.partition_attributes]
        within = max(q.window.within for q in queries)
        plans.append(
            QuerySetPlan(
                index=index,
                queries=tuple(query_set.queries),
                partition_attributes=tuple(query_set.partition_attributes),
                # (): every type — a contiguous query's sub-stream holds every event of its partition
                types=()
                if any(q.whole_substream for q in queries)
                else tuple(sorted({t for q in queries for t in q.types})),
                attributes=tuple(query_set.partition_attributes) + tuple(named),
                within_us=math.ceil(within * MICROS),
                workload_text="\n".join(q.text for q in queries),
            )
        )
    return plans


def make_plan(args: argparse.Namespace) -> Plan:
    """Everything that can be checked without Spark: workload, strategy, times, tables, names."""
    workload = load_workload(args.workload, args.allowed_workload, args.max_windows_per_event)
    if args.strategy not in STRATEGIES:
        raise JobError(f"unknown strategy {args.strategy!r}; choose one of: {', '.join(STRATEGIES)}")
    start, end = parse_instant(args.start, "--start"), parse_instant(args.end, "--end")
    problem = interval_problem(start, end)
    if problem:
        raise JobError(problem)
    name = args.workload_name or Path(args.workload).stem
    if not NAME.fullmatch(name):
        raise JobError(f"workload name {name!r}: use letters, digits, '_', '.', '-' (see --workload-name)")
    if args.buckets is not None and args.buckets < 0:
        raise JobError("--buckets must be 0 (one engine call per stream partition) or more")
    if args.segment_events < 0:
        raise JobError("--segment-events must be 0 (never cut a stream partition by time) or more")
    output = table_location(args.output_table.rstrip("/"))
    stats = table_location(args.stats_table) if args.stats_table else output.rsplit("/", 1)[0] + "/run_stats"
    run_id = args.run_id or f"{start:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:12]}"
    events = table_location(args.events_table)
    if events.rstrip("/") in (output, stats):  # (Delta refused the write after the whole run: another schema)
        raise JobError(f"the output tables must not be the events table {args.events_table}")
    try:
        attributes = table_attributes(events, partitioned=True)
        # Before any Spark work: a misspelled attribute would be null on every event, a string compared with
        # a number false on every event; both would run and write plausible-looking rows.
        check_attributes(workload, args.workload, attributes, f"the events table {args.events_table}")
    except HamletError as e:
        raise JobError(str(e)) from None
    plan = Plan(name, args.strategy, start, end, events, output, stats, run_id, args.buckets)
    plan.sets = plan_sets(workload, list(attributes))
    plan.quarantine_table = table_location(args.quarantine_table) if args.quarantine_table else None
    plan.segment_events = args.segment_events
    return plan


@dataclass
class SetResult:
    """One sharable query set's part of a run; the seconds are those of the stages it ran in, which the
    sets of one shuffle group share (``shuffle_groups``)."""

    plan: QuerySetPlan
    summary: dict[str, Any]
    shuffle_seconds: float
    engine_seconds: float
    combine_seconds: float
    rows: int


@dataclass
class GroupResult:
    """The sets that shared one shuffle (by ``keys``), their results (cached) and the stages' seconds."""

    keys: tuple[str, ...]
    sets: list[SetResult]
    results: DataFrame
    shuffle_seconds: float
    engine_seconds: float
    combine_seconds: float
    segmenting: Segmenting | None = None
    compose_seconds: float = 0.0


@dataclass(frozen=True)
class Segmenting:
    """How the hot stream partitions of a shuffle are cut by time (dissertation §28.1, ``hamlet.evaluate_segment``):
    segment s holds [origin + s·length, origin + (s+1)·length) µs, its bounds on every set's pane."""

    origin_us: int
    length_us: int
    count: int
    partitions: int  # hot stream partitions (of the shuffle's keys) cut so

    def bounds(self, s: int) -> tuple[int, int]:
        start = self.origin_us + s * self.length_us
        return start, start + self.length_us


def plan_segments(spark: SparkSession, plan: Plan, sets: list[QuerySetPlan], keys: tuple[str, ...],
                  mine: DataFrame) -> tuple[DataFrame, Segmenting | None, DataFrame | None]:  # fmt: skip
    """``mine`` with a column ``_segment`` (−1 for rows of partitions that run whole) where some stream
    partition has more than ``plan.segment_events`` events and every set composes (``hamlet.segment_obstacle``).
    Segments are sized from the volume: the hottest partition in at least 2 per core, at most
    ``plan.segment_events`` events each on average. The third value: the hot partitions, cached until the
    engine stage has read them (the caller unpersists them: a long-lived Spark Connect server kept every
    run's)."""
    from pyspark.sql import functions as F

    if plan.segment_events <= 0 or any(segment_obstacle(s.workload_text, plan.strategy) for s in sets):
        return mine, None, None
    # (every window, so every pane, is a whole number of microseconds: the kernel's times, where segments are cut)
    pane_us = math.lcm(*(int(segment_pane(s.workload_text) * MICROS) for s in sets))
    hot = None
    if keys:
        hot = _hot_partitions(mine, keys, plan.segment_events)
        if hot is None:
            return mine, None, None
        hot = hot.persist()
        found = hot.select(EVENTS).collect()
        hottest, partitions = max((r[EVENTS] for r in found), default=0), len(found)
    else:
        hottest = mine.count()
        partitions = int(hottest > plan.segment_events)
    if not partitions:
        if hot is not None:
            hot.unpersist()
        return mine, None, None
    cores = 2 if is_remote(spark) else spark.sparkContext.defaultParallelism
    wanted = min(MAX_SEGMENTS, max(2 * cores, math.ceil(hottest / plan.segment_events)))
    origin = _micros(plan.read_start) // pane_us * pane_us
    span = plan.end_us - origin
    length = math.ceil(span / wanted / pane_us) * pane_us
    segmenting = Segmenting(origin, length, math.ceil(span / length), partitions)
    segment = F.floor((F.unix_micros("event_time") - F.lit(origin)) / F.lit(length)).cast("long")
    if hot is not None:  # (keys: only the hot partitions are cut)
        flagged = mine.join(F.broadcast(hot.select(*keys, F.lit(True).alias(HOT))), list(keys), "left")
        mine = flagged.withColumn(SEGMENT_COLUMN, F.when(F.col(HOT), segment).otherwise(F.lit(-1))).drop(HOT)
    else:
        mine = mine.withColumn(SEGMENT_COLUMN, segment)
    return mine, segmenting, hot


def _hot_partitions(mine: DataFrame, keys: tuple[str, ...], threshold: int) -> DataFrame | None:
    """The stream partitions of ``mine`` (by ``keys``) of more than ``threshold`` events, with their exact
    number (column ``EVENTS``); None when a sample finds no candidate. Counting every partition would
    aggregate one row per partition (a trip each: hundreds of thousands) only to find none or a few; a
    sample of about ``HOT_SAMPLE`` rows per ``threshold`` events finds the candidates (a partition at the
    threshold has ~HOT_SAMPLE sampled rows; fewer than half of that has a probability below 1e-50), and only
    they are counted exactly."""
    from pyspark.sql import functions as F

    counted = F.count(F.lit(1)).alias(EVENTS)
    fraction = HOT_SAMPLE / threshold
    if fraction >= 1:
        return mine.groupBy(*keys).agg(counted).where(F.col(EVENTS) > threshold)
    sampled = mine.sample(fraction=fraction, seed=0).groupBy(*keys).agg(counted)
    candidates = sampled.where(F.col(EVENTS) >= HOT_SAMPLE // 2).select(*keys)
    if not candidates.take(1):  # (the common case: no exact pass at all)
        return None
    exact = mine.join(F.broadcast(candidates), list(keys), "left_semi").groupBy(*keys).agg(counted)
    return exact.where(F.col(EVENTS) > threshold)


@dataclass
class RunResult:
    plan: Plan
    events_read: int
    rows_written: int
    seconds: dict[str, float]
    groups: list[GroupResult]
    stats_rows: list[dict[str, Any]]
    quarantined: int = 0  # events of the range left out because the input validation quarantined them

    @property
    def sets(self) -> list[SetResult]:
        return _sets(self.groups)

    @property
    def shared_bursts(self) -> int:
        return sum(int(s.summary["engine"]["shared_bursts"]) for s in self.sets)

    @property
    def python_partitions(self) -> int:
        return sum(int(s.summary["engine"].get("python_partitions", 0)) for s in self.sets)


def _sets(groups: list[GroupResult]) -> list[SetResult]:
    """The sets of a run in workload order, whatever shuffle each ran in."""
    return sorted((s for g in groups for s in g.sets), key=lambda s: s.plan.index)


def _lap(clock: list[float]) -> float:
    now = time.perf_counter()
    elapsed = now - clock[0]
    clock[0] = now
    return elapsed


def read_events(spark: SparkSession, plan: Plan) -> DataFrame:
    """The events of [start - longest WITHIN, end) of the workload's types, only the needed columns; the
    (event_date, event_hour) predicate prunes Delta partitions before any file is opened. Rows that the
    input validation quarantined for this workload are left out. Each type is read as the engine reads it,
    without the whitespace around it (``jobs.schema.event_type_as_read``): another tool's events table may
    hold " Travel", which compared as stored was no type of the workload, here and in the engine calls' own
    filter (``SetTask.reads``), and the job counted fewer trends than ``hamlet.evaluate`` over the same rows.
    (Our loader strips the types it writes.)"""
    from pyspark.sql import functions as F

    ranged = events_of_range(spark, plan)
    ranged = ranged.withColumn("event_type", event_type_as_read())
    if any(not s.types for s in plan.sets):  # a set reads every type (``QuerySetPlan.types``)
        return ranged.select(*plan.columns())
    types = sorted({t for s in plan.sets for t in s.types})
    return ranged.where(F.col("event_type").isin(types)).select(*plan.columns())


def events_of_range(spark: SparkSession, plan: Plan) -> DataFrame:
    """Every event of [start - longest WITHIN, end), of any type, but those the input validation
    quarantined for this workload."""
    from pyspark.sql import functions as F

    table = _hours_read(spark, plan)
    quarantined = _quarantined(spark, plan)
    if quarantined is not None:
        table = table.withColumn(FINGERPRINT, row_fingerprint(table.columns)).join(
            F.broadcast(quarantined), FINGERPRINT, "left_anti"
        )
    return _in_range(table, plan)


def quarantined_events(spark: SparkSession, plan: Plan) -> int:
    """How many events of the range (of any type) ``read_events`` left out as quarantined (no Spark job when
    the quarantine holds none for these hours)."""
    from pyspark.sql import functions as F

    quarantined = _quarantined(spark, plan)
    if quarantined is None:
        return 0
    table = _hours_read(spark, plan)
    marked = table.withColumn(FINGERPRINT, row_fingerprint(table.columns))
    return _in_range(marked.join(F.broadcast(quarantined), FINGERPRINT, "left_semi"), plan).count()


def _hours_read(spark: SparkSession, plan: Plan) -> DataFrame:
    partitions = hour_partition_filter(plan.read_start, plan.end)
    return spark.read.format("delta").load(plan.events_table).where(partitions)


def _in_range(table: DataFrame, plan: Plan) -> DataFrame:
    from pyspark.sql import functions as F

    return table.where(F.col("event_time") >= F.lit(plan.read_start)).where(
        F.col("event_time") < F.lit(plan.end)
    )


def _quarantined(spark: SparkSession, plan: Plan) -> DataFrame | None:
    """Fingerprints of the quarantined event rows of the hours read, or None when there are none."""
    from pyspark.sql import functions as F

    if not plan.quarantine_table or not _is_delta_table(plan.quarantine_table):
        return None
    first = plan.read_start.replace(minute=0, second=0, microsecond=0)
    rows = (
        spark.read.format("delta")
        .load(plan.quarantine_table)
        .where((F.col("stage") == "events") & (F.col("workload") == plan.workload_name))
        .where((F.col("partition_start") >= F.lit(first)) & (F.col("partition_start") < F.lit(plan.end)))
        .select(F.col("row_fingerprint").alias(FINGERPRINT))
        .distinct()
    )
    return rows if rows.take(1) else None


def _is_delta_table(path: str) -> bool:
    from deltalake import DeltaTable

    return DeltaTable.is_deltatable(path)


def shuffle_groups(sets: list[QuerySetPlan]) -> list[tuple[tuple[str, ...], list[QuerySetPlan]]]:
    """Sets that can share one shuffle, and the attributes it hashes: the partition attributes they all
    have. Hashing by fewer attributes still sends each set's stream partitions whole to one engine call, so
    the events are shuffled, sent to Python and made ``Event``s once for all of them, not once per set. A
    set without partition attributes (the whole stream is one partition) keeps a shuffle of its own."""
    groups: list[tuple[tuple[str, ...], list[QuerySetPlan]]] = []
    for query_set in sets:
        for i, (common, members) in enumerate(groups):
            shared = tuple(a for a in common if a in query_set.partition_attributes)
            if shared:
                groups[i] = (shared, [*members, query_set])
                break
        else:
            groups.append((query_set.partition_attributes, [query_set]))
    return groups


def run_group(
    spark: SparkSession,
    plan: Plan,
    keys: tuple[str, ...],
    sets: list[QuerySetPlan],
    events: DataFrame,
    buckets: int,
    may_segment: bool = True,
) -> GroupResult:
    """Shuffle, engine and combine for sets that share a shuffle (``shuffle_groups``); each stage is
    materialised (cached) so that its time can be told apart, and the results come back cached. With
    ``may_segment``, hot stream partitions run in time segments (``plan_segments``)."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    from hamlet.runtime.vertical import floating_columns
    from jobs.engine import (
        PARTIAL,
        PARTIAL_DDL,
        RESULT_DDL,
        SEGMENT,
        STATS,
        add_summaries,
        combine,
        compose,
        run_sets,
    )

    clock = [time.perf_counter()]
    width = int(spark.conf.get("spark.sql.shuffle.partitions") or 8)
    read_start = plan.start - timedelta(microseconds=max(s.within_us for s in sets))
    types = sorted({t for s in sets for t in s.types})
    keep = F.col("event_time") >= F.lit(read_start)
    if all(s.types for s in sets):  # (a set with no types reads every type: ``QuerySetPlan.types``)
        keep = F.col("event_type").isin(types) & keep
    for attribute in keys:
        keep = keep & F.col(attribute).isNotNull()
    columns = engine_columns(sets)
    mine = events.where(keep).select(*columns)
    # (the columns the engine reads as doubles, by its own rule on the Arrow batches it gets: floats, and
    # decimals with a scale; Spark's type names alone left the decimals out of the segments' composition)
    floating = floating_columns(to_arrow_schema(mine.schema, timezone="UTC"))
    mine, segmenting, hot = (
        plan_segments(spark, plan, sets, keys, mine) if may_segment else (mine, None, None)
    )
    if keys and buckets:  # many stream partitions per engine call
        mine = mine.withColumn(BUCKET, F.pmod(F.xxhash64(*keys), F.lit(buckets)))
        group_columns = [BUCKET]
    elif keys:  # one engine call per stream partition (of the attributes the sets share)
        group_columns = list(keys)
    else:  # no GROUP-BY, no equivalence: the whole stream is one partition
        mine = mine.withColumn(BUCKET, F.lit(0))
        group_columns, width = [BUCKET], 1
    if segmenting is not None:  # a hot partition's segments are calls of their own, spread over the cores
        group_columns.append(SEGMENT_COLUMN)
        width = max(width, segmenting.count)
    # The exchange runs inside the engine stage: caching its output first would copy every event once more
    # and hold both cores at a stage barrier for nothing (bench/results/job_throughput.md). What the shuffle
    # stage times is the planning before it (the hot stream partitions).
    shuffled = mine.repartition(width, *group_columns)
    shuffle_seconds = _lap(clock)

    tasks = [s.task(plan.strategy, plan.start_us, plan.end_us) for s in sets]

    def engine(table):  # type: ignore[no-untyped-def]
        segment = table.column(SEGMENT_COLUMN)[0].as_py() if segmenting is not None and table.num_rows else -1
        return run_sets(tasks, table.select(columns), None if segment < 0 else segmenting.bounds(segment))

    partials = shuffled.groupBy(*group_columns).applyInArrow(engine, PARTIAL_DDL).persist()
    summaries: dict[int, list[dict[str, Any]]] = {s.index: [] for s in sets}
    # (reading the calls' statistics computes and caches every partial: no pass of its own for that)
    for row in partials.where(F.col("kind") == STATS).select("state").collect():
        summary = json.loads(row.state)
        summaries[summary["query_set"]].append(summary)
    if hot is not None:  # (the engine stage has read them: the partials are cached)
        hot.unpersist()
    engine_seconds = _lap(clock)

    compose_seconds, finished, composed = 0.0, partials.where(F.col("kind") == PARTIAL).drop("kind"), None
    if segmenting is not None:  # every segment of a partition's records in one call, composed in time order
        composed = (
            partials.where(F.col("kind") == SEGMENT)
            .groupBy("query", "group_key")
            .applyInArrow(lambda table: compose(tasks, floating, table), PARTIAL_DDL)
            .persist()
        )
        composed.count()
        compose_seconds = _lap(clock)
        finished = finished.unionByName(composed.drop("kind"))

    slot = F.pmod(F.xxhash64("query", "window_end_us", "group_key", "aggregate"), F.lit(width))
    results = (
        finished.withColumn("_slot", slot)
        .groupBy("_slot")
        .applyInArrow(lambda table: combine(table), RESULT_DDL)
        .persist()
    )
    rows = {r["query"]: r["count"] for r in results.groupBy("query").count().collect()}
    combine_seconds = _lap(clock)
    partials.unpersist()
    if composed is not None:
        composed.unpersist()
    set_results = []
    for s in sets:
        summary = add_summaries(summaries[s.index])
        summary["segmented_partitions"] = 0 if segmenting is None else segmenting.partitions
        summary["compose_seconds"] = compose_seconds
        set_results.append(SetResult(s, summary, shuffle_seconds, engine_seconds, combine_seconds,
                                     sum(rows.get(q, 0) for q in s.queries)))  # fmt: skip
    return GroupResult(keys, set_results, results, shuffle_seconds, engine_seconds, combine_seconds, segmenting,
                       compose_seconds)  # fmt: skip


def default_buckets(spark: SparkSession) -> int:
    """Enough engine calls to spread the work evenly over the cores, few enough that the fixed cost of a
    call stays small next to the events: the engine's set-up, and above all its partial rows, about one per
    (query, window, group, aggregate) whatever the call's size when GROUP-BY is coarser than the stream
    partitions, each encoded, shuffled and merged. 8 per core was the fastest on the 1M-event benchmark
    (bench/results/job_throughput.md: 39.6 s against 43.9 s with 4 per core and 50.4 s with 16)."""
    if is_remote(
        spark
    ):  # no SparkContext over Spark Connect: the server states its parallelism (spark_server)
        return 8 * int(spark.conf.get("spark.default.parallelism") or 2)
    return 8 * spark.sparkContext.defaultParallelism


def create_tables(spark: SparkSession, plan: Plan) -> None:
    """Create ``trend_aggregates`` and ``run_stats`` with their schemas if they do not exist yet."""
    from jobs.schema import OUTPUT_PARTITIONS, RUN_STATS_DDL, TREND_AGGREGATES_DDL, create_table

    create_table(spark, plan.output_table, TREND_AGGREGATES_DDL, OUTPUT_PARTITIONS)
    create_table(spark, plan.stats_table, RUN_STATS_DDL)


def replace_where(plan: Plan) -> str:
    return replace_where_sql(plan.workload_name, plan.start, plan.end)


def replace_where_sql(workload_name: str, start: datetime, end: datetime) -> str:
    """Exactly the windows of one run: its workload, window ends in (start, end]."""
    first, last = start.date().isoformat(), end.date().isoformat()
    return (
        f"workload = '{workload_name}'"
        f" AND window_end_date >= DATE'{first}' AND window_end_date <= DATE'{last}'"  # no BETWEEN: see schema.py
        f" AND window_end > {timestamp_sql(start)} AND window_end <= {timestamp_sql(end)}"
    )


def run(spark: SparkSession, plan: Plan) -> RunResult:
    """Run the planned job on ``spark``: read, per set shuffle / engine / combine, write both tables."""
    from functools import reduce

    from pyspark.sql import functions as F

    clock = [time.perf_counter()]
    started = clock[0]
    computed_at = datetime.now(UTC).replace(microsecond=0)
    create_tables(spark, plan)
    shuffles = shuffle_groups(plan.sets)
    events = read_events(spark, plan)
    if len(shuffles) > 1:  # each shuffle reads the events; one reads them once, with no cached copy to build
        events = events.persist()
        events.count()  # (cached in the read stage)
    # Every event of the range, whatever its type: an hour holding only types no query reads was read, and
    # matched nothing (each set's ``set_events``); counting the workload's types alone said it was empty.
    events_read = events_of_range(spark, plan).count()
    quarantined = quarantined_events(spark, plan)
    read_seconds = _lap(clock)
    buckets = default_buckets(spark) if plan.buckets is None else plan.buckets
    # (no stream partition can exceed --segment-events if the whole read does not: no need to count them)
    may_segment = events_read > plan.segment_events > 0
    groups = [run_group(spark, plan, keys, sets, events, buckets, may_segment) for keys, sets in shuffles]
    events.unpersist()
    _lap(clock)

    if groups:
        results = reduce(lambda a, b: a.unionByName(b), [g.results for g in groups])
    else:
        from jobs.engine import RESULT_DDL

        results = spark.createDataFrame([], RESULT_DDL)
    window_end = F.timestamp_micros("window_end_us")
    output = results.select(
        F.lit(plan.workload_name).alias("workload"),
        "query",
        F.timestamp_micros("window_start_us").alias("window_start"),
        window_end.alias("window_end"),
        "group",
        "group_key",
        "aggregate",
        "value",
        "value_exact",
        F.lit(plan.strategy).alias("strategy"),
        F.lit(plan.run_id).alias("run_id"),
        F.lit(computed_at).alias("computed_at"),
        F.to_date(window_end).alias("window_end_date"),
    )
    rows_written = sum(s.rows for s in _sets(groups))
    seconds = {"read": read_seconds, "write": 0.0, "total": time.perf_counter() - started}
    stats_rows = [_stats_row(plan, s, events_read, seconds, computed_at) for s in _sets(groups)]
    # Stats first, as pending: a run killed right after its output commit still leaves its statistics.
    _pending_stats(spark, plan, stats_rows)
    # userMetadata lets the pipeline check that this very run committed (jobs.pipeline.verify_commit).
    metadata = commit_metadata(plan.run_id, plan.workload_name, plan.start, plan.end)
    writer = output.write.format("delta").mode("overwrite").option("replaceWhere", replace_where(plan))
    # Hours of one day share the window_end_date partition: a concurrent run's commit may win the race.
    retried(
        lambda: writer.option("userMetadata", metadata).save(plan.output_table),
        f"writing {plan.output_table}",
    )
    write_seconds = _lap(clock)
    for g in groups:
        g.results.unpersist()
    seconds = {"read": read_seconds, "write": write_seconds, "total": time.perf_counter() - started}
    version = _output_version(spark, plan, metadata)
    _complete_stats(spark, plan, seconds, version)
    for row in stats_rows:
        row.update(write_seconds=write_seconds, total_seconds=seconds["total"], status="committed",
                   output_version=version)  # fmt: skip
    return RunResult(plan, events_read, rows_written, seconds, groups, stats_rows, quarantined)


def _pending_stats(spark: SparkSession, plan: Plan, rows: list[dict[str, Any]]) -> None:
    """This run's stats rows, as pending, in one commit (before the output's). It replaces whatever rows of this
    run and workload the table holds: a retried task (the same run id) leaves its attempt's rows only. An
    overwrite with ``replaceWhere``, not a MERGE: no join to plan and run on the JVM's first write (0.2–1 s,
    bench/results/startup.md), and one code path in a classic and a Spark Connect session.
    ``mergeSchema``: a run_stats table made before status and output_version existed gains them."""
    if not rows:
        return
    from pyspark.sql.types import StructType

    from jobs.schema import RUN_STATS_DDL

    schema = StructType.fromDDL(RUN_STATS_DDL)
    assert isinstance(schema, StructType)
    this_run = f"run_id = {sql_string(plan.run_id)} AND workload = {sql_string(plan.workload_name)}"
    writer = (
        spark.createDataFrame(rows, schema)  # type: ignore[call-overload]
        .write.format("delta")
        .mode("overwrite")
        .option("replaceWhere", this_run)
        .option("mergeSchema", "true")
    )
    retried(lambda: writer.save(plan.stats_table), f"writing {plan.stats_table}")


def _output_version(spark: SparkSession, plan: Plan, metadata: str) -> int | None:
    """The version of the output table this run committed (its userMetadata is unique to the run); None
    when there was nothing to commit (Delta makes no commit for a write that adds and removes nothing)."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    for recent in (20, None):  # concurrent runs may have committed since: then the whole history
        if is_remote(spark):
            limit = f" LIMIT {recent}" if recent else ""
            history = spark.sql(f"DESCRIBE HISTORY {delta_sql(plan.output_table)}{limit}")
        else:
            history = DeltaTable.forPath(spark, plan.output_table).history(recent)
        row = history.where(F.col("userMetadata") == metadata).agg(F.max("version")).first()
        if row is not None and row[0] is not None:
            return int(row[0])
    return None


def _complete_stats(spark: SparkSession, plan: Plan, seconds: dict[str, float], version: int | None) -> None:
    """Mark this run's pending stats rows committed, with the write and total seconds."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    mine = (
        (F.col("run_id") == plan.run_id)
        & (F.col("workload") == plan.workload_name)
        & (F.col("status") == "pending")
    )
    done: dict[str, Any] = {
        "status": F.lit("committed"), "output_version": F.lit(version).cast("bigint"),
        "write_seconds": F.lit(seconds["write"]), "total_seconds": F.lit(seconds["total"]),
    }  # fmt: skip
    # Concurrent runs append their pending rows meanwhile: Delta then fails this update, which is retried.
    if is_remote(spark):
        # Values as literals: Delta's UPDATE leaves SQL parameters unbound (run id and workload: any text).
        statement = (f"UPDATE {delta_sql(plan.stats_table)} SET status = 'committed', output_version = CAST("
                     f"{'NULL' if version is None else int(version)} AS BIGINT), write_seconds = "
                     f"{float(seconds['write'])!r}D, total_seconds = {float(seconds['total'])!r}D "
                     f"WHERE run_id = {sql_string(plan.run_id)} AND workload = {sql_string(plan.workload_name)} "
                     "AND status = 'pending'")  # fmt: skip
        retried(lambda: spark.sql(statement), f"updating {plan.stats_table}")
        return
    retried(
        lambda: DeltaTable.forPath(spark, plan.stats_table).update(mine, done), f"updating {plan.stats_table}"
    )


def _stats_row(plan: Plan, s: SetResult, events_read: int, seconds: dict[str, float],
               computed_at: datetime) -> dict[str, Any]:  # fmt: skip
    return {
        "run_id": plan.run_id,
        "workload": plan.workload_name,
        "strategy": plan.strategy,
        "range_start": plan.start,
        "range_end": plan.end,
        "read_start": plan.read_start,
        "query_set": s.plan.index,
        "queries": list(s.plan.queries),
        "partition_attributes": list(s.plan.partition_attributes),
        "events_read": events_read,
        "set_events": s.summary["events"],
        "partitions": s.summary["partitions"],
        "engine_calls": s.summary["calls"],
        "rows_written": s.rows,
        # What the engine did, and the skew of its calls (events per call: call_events_min/median/max).
        # Hot partitions cut by time: the segment calls, the partitions cut, the composition stage's seconds.
        "engine_stats": {k: float(v) for k, v in s.summary["engine"].items()}
        | {f"call_events_{k}": float(v) for k, v in s.summary.get("call_events", {}).items()}
        | {k: float(s.summary.get(k, 0)) for k in ("segments", "segmented_partitions", "compose_seconds")},
        "read_seconds": seconds["read"],
        "shuffle_seconds": s.shuffle_seconds,
        "engine_seconds": s.engine_seconds,
        "engine_cpu_seconds": s.summary["engine_seconds"],
        "combine_seconds": s.combine_seconds,
        "write_seconds": seconds["write"],
        "total_seconds": seconds["total"],
        "computed_at": computed_at,
        "status": "pending",
        "output_version": None,
    }


def build_parser(prog: str = "hamlet aggregate") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Per-window trend aggregates of a workload over a "
                                     "Delta events table, written to a Delta table (exactly the windows that "
                                     "end in (start, end]).")  # fmt: skip
    parser.add_argument("--workload", required=True, help="workload file (queries)")
    parser.add_argument("--start", required=True, help="ISO-8601 start of the range (naive means UTC)")
    parser.add_argument("--end", required=True, help="ISO-8601 end of the range, exclusive")
    parser.add_argument("--events-table", required=True, help="Delta table of events (path or URI)")
    parser.add_argument("--output-table", required=True, help="Delta table trend_aggregates (path or URI)")
    parser.add_argument("--stats-table", help="Delta table run_stats (default: run_stats beside the output)")
    parser.add_argument("--strategy", default="hamlet", help=f"engine strategy: {', '.join(STRATEGIES)}")
    parser.add_argument("--master", help="Spark master URL (default: conf/spark/$HAMLET_ENV.toml, local[*])")
    parser.add_argument("--workload-name", help="name stored in the output (default: the file name's stem)")
    parser.add_argument("--run-id", help="identifier of this run (default: start time and a random suffix)")
    parser.add_argument("--allowed-workload", action="append", metavar="PATH", help="refuse any --workload but "
                        "these (repeatable; the Airflow tasks pass the workloads their DAG offers)")  # fmt: skip
    parser.add_argument("--quarantine-table", help="Delta table of rows quarantined by `hamlet validate events`: "
                        "they are left out")  # fmt: skip
    add_window_bound(parser)
    parser.add_argument("--buckets", type=int, help="engine calls per shuffle (stream partitions are hashed "
                        "into this many groups; 0: one call per partition; default 8 per core)")  # fmt: skip
    parser.add_argument("--segment-events", type=int, default=SEGMENT_EVENTS, metavar="N",
                        help="cut a stream partition of more than N events into time segments that run in "
                        f"parallel and are composed after (0: never; default {SEGMENT_EVENTS})")  # fmt: skip
    return parser


def report(result: RunResult) -> str:
    head = (f"run {result.plan.run_id}: {result.events_read} events read, {result.rows_written} rows written to "
            f"{result.plan.output_table} (windows ending in ({result.plan.start.isoformat()}, "
            f"{result.plan.end.isoformat()}])")  # fmt: skip
    lines = [head]
    for g in result.groups:
        lines.append(f"  shuffle by {', '.join(g.keys) or '(nothing: one partition)'}: shuffle "
                     f"{g.shuffle_seconds:.2f}s engine {g.engine_seconds:.2f}s combine {g.combine_seconds:.2f}s")  # fmt: skip
        for s in g.sets:
            segments = ""
            if s.summary.get("segments"):
                segments = (f" ({s.summary['segmented_partitions']} hot partitions in {s.summary['segments']} "
                            f"time segments, composed in {s.summary['compose_seconds']:.2f}s)")  # fmt: skip
            lines.append(
                f"    set {s.plan.index} ({', '.join(s.plan.queries)}): {s.summary['events']} events, "
                f"{s.summary['partitions']} partitions, {s.summary['calls']} engine calls{segments}, {s.rows} rows; "
                f"in the engine {s.summary['engine_seconds']:.2f}s"
            )
    lines.append(f"  read {result.seconds['read']:.2f}s write {result.seconds['write']:.2f}s "
                 f"total {result.seconds['total']:.2f}s")  # fmt: skip
    return "\n".join(lines)


def summary(result: RunResult, seconds: float) -> Summary:
    """The job's last line: rows of the range before quarantine, those left out, rows written (and the stream
    partitions that ran on the Python engine, where any did: a user wondering why an hour was slow)."""
    plan = result.plan
    python = result.python_partitions
    return Summary("aggregate", plan.workload_name, plan.start, plan.end, seconds,
                   rows_in=result.events_read + result.quarantined, quarantined=result.quarantined,
                   rows_out=result.rows_written, shared_bursts=result.shared_bursts,
                   note=f"{python} stream partition{'s' * (python > 1)} on the Python engine" if python else "")  # fmt: skip


def main(argv: list[str] | None = None, prog: str = "hamlet aggregate") -> int:
    from jobs.session import reexec_without_submit_jvm

    started = time.perf_counter()
    reexec_without_submit_jvm()
    args = build_parser(prog).parse_args(argv)
    try:
        plan = make_plan(args)  # before Spark: a bad workload or range never starts a JVM
    except (JobError, HamletError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    from jobs.session import command_session

    try:
        with command_session("hamlet-aggregate", args.master) as spark:
            result = run(spark, plan)
            print(report(result))
        print(summary(result, time.perf_counter() - started).line())  # after the session stopped
        return 0
    except Exception as e:  # noqa: BLE001 (Spark, Delta, the engine: report, exit non-zero)
        print(f"error: aggregation failed: {error_line(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(prog="spark-submit jobs/aggregate.py"))
