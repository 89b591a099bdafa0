"""What runs inside the Spark tasks: Arrow batches of events in, the engine, exact partial aggregates out.

No Spark import here (pyarrow and ``hamlet`` only), so all of it is unit-tested without a JVM.

Stage 1 (``run_partitions``): the events of whole stream partitions (GROUP-BY ∪ equivalence values) of one
sharable query set arrive as one Arrow table and go to the engine as it is (``hamlet.evaluate_table``: the
compiled kernel reads the columns and writes the partial states, no Python object per event or result),
with the workload analysed once per worker process and its windows restricted to those that end in
(start, end] (the engine skips the others: the read-ahead half hour only feeds windows that end after the
start). Out come the partial aggregates of those windows, their states as text (``AggregateState.to_text``:
counts exceed every fixed-width type), and one row of statistics for the call.

Stage 1 over a hot stream partition (``run_sets`` with a segment, issue 19): the partition cut by time, each call one
time segment (``hamlet.evaluate_segment``): the partial rows of the windows final in it, and records of the
others (``kind`` = segment). Stage 1b (``compose``) gets every segment's records of whole partitions and
composes them in time order into their partial rows (``hamlet.compose_segments``), which join the others.

Stage 2 (``combine``): partial rows of the same (query, window, group, aggregate) from different calls
are merged with ``merged_text_states`` (counts and sums add, MIN/MAX keep the extreme, AVG divides at the
very end) and finalised: ``value`` as a double (null beyond double range or for text), ``value_exact`` as
text with every digit.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hamlet.analysis.workload import parse_workload
from hamlet.api import PreparedWorkload, compose_segments, evaluate_segment, evaluate_table, prepare
from hamlet.events import MICROS
from hamlet.partials import merged_text_states
from hamlet.runtime import columnar, vertical
from hamlet.runtime.columnar import ID, TIME, TYPE, micros_of, sorted_events
from hamlet.stats import EvaluationStats

# Python 3.11 refuses str(int) beyond 4300 digits by default; trend counts have many more (PITFALLS).
sys.set_int_max_str_digits(0)

PARTIAL = "partial"
STATS = "stats"
SEGMENT = "segment"  # a time segment's record of one stream partition (``hamlet.evaluate_segment``)

# A partial row of ``hamlet.evaluate_table``, or (``kind`` = stats) a call's statistics as JSON in ``state``, or
# (``kind`` = segment) a time segment's record: ``record_rows`` says which column holds what.
PARTIAL_SCHEMA = pa.schema([("kind", pa.string()), *columnar.PARTIAL_SCHEMA])

RESULT_SCHEMA = pa.schema([
    ("query", pa.string()),
    ("window_start_us", pa.int64()),
    ("window_end_us", pa.int64()),
    ("group", pa.map_(pa.string(), pa.string())),
    ("group_key", pa.string()),
    ("aggregate", pa.string()),
    ("value", pa.float64()),
    ("value_exact", pa.string()),
])  # fmt: skip


def spark_ddl(schema: pa.Schema) -> str:
    """The Spark DDL of an Arrow schema of the types used here, for ``applyInArrow``'s return type."""

    def ddl(t: pa.DataType) -> str:
        if pa.types.is_map(t):
            return f"MAP<{ddl(t.key_type)}, {ddl(t.item_type)}>"
        return {pa.string(): "STRING", pa.int64(): "BIGINT", pa.float64(): "DOUBLE"}[t]

    return ", ".join(f"`{f.name}` {ddl(f.type)}" for f in schema)


# The two stages' output schemas, declared once (Arrow) and handed to Spark as DDL.
PARTIAL_DDL = spark_ddl(PARTIAL_SCHEMA)
RESULT_DDL = spark_ddl(RESULT_SCHEMA)


@dataclass(frozen=True)
class SetTask:
    """What a stage-1 call needs to know of one sharable query set; small and picklable (the workload
    travels as text). Calls get the events of several sets (``run_sets``): each keeps its own."""

    workload_text: str  # the queries of one sharable query set
    strategy: str
    attributes: tuple[str, ...]  # attribute columns handed to the engine
    partition_attributes: tuple[str, ...]
    range_start_us: int  # keep windows whose end lies in (range_start, range_end]
    range_end_us: int
    types: tuple[str, ...] = ()  # the set's event types (empty: every type of the call)
    read_start_us: int | None = None  # the set's events start here (range start - its longest WITHIN)
    index: int = 0  # the set's number in the workload, for its statistics row

    def reads(self, table: pa.Table) -> pa.Table:
        """The set's rows among a call's: its types, from its read start, its columns (the engine leaves out
        rows with a null partition attribute: no query of the set can match those)."""
        keep = None
        if self.read_start_us is not None:
            keep = pc.greater_equal(micros_of(table), self.read_start_us)
        if self.types:
            of_types = pc.is_in(table.column(TYPE), value_set=pa.array(self.types, pa.string()))
            keep = of_types if keep is None else pc.and_(keep, of_types)
        columns = (
            [TYPE, TIME]
            + [ID] * (ID in table.column_names)
            + [a for a in self.attributes if a in table.column_names]
        )
        table = table.select(list(dict.fromkeys(columns)))
        return table if keep is None else table.filter(keep)


@lru_cache(maxsize=16)
def prepared_workload(text: str, range_start_us: int, range_end_us: int) -> PreparedWorkload:
    """The set's workload analysed once per Python worker (Spark reuses workers across tasks), its windows
    restricted to those that end in (range_start, range_end]: the engine skips the others."""
    window_ends = (Fraction(range_start_us, MICROS), Fraction(range_end_us, MICROS))
    # No windows-per-event bound here: the driver checked the workload (with its own --max-windows-per-event).
    return prepare(parse_workload(text, max_windows_per_event=None)).clipped(window_ends)  # type: ignore[arg-type]


def text_of(value: Any) -> str | None:
    """A value with every digit: ints in full, floats as their shortest round-trip repr."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return str(value) if isinstance(value, int) else repr(value)


def run_partitions(task: SetTask, table: pa.Table) -> pa.Table:
    """Stage 1 over one group of the shuffle (whole stream partitions of one sharable query set)."""
    return run_sets([task], table)


def run_sets(
    tasks: Sequence[SetTask], table: pa.Table, segment_us: tuple[int, int] | None = None
) -> pa.Table:
    """Stage 1 over one group of a shuffle shared by several sharable query sets (whole stream partitions
    of each): the rows sorted once, then each set runs on its own. One statistics row per set; the sort's
    seconds are on the first set's. With ``segment_us``, the group is one time segment [t0, t1) of hot
    stream partitions (``hamlet.evaluate_segment``): the partial rows of the windows final in it, and the
    records of the others (``kind`` = segment), which ``compose`` turns into partial rows once every
    segment has run."""
    started = time.perf_counter()
    table = sorted_events(table)
    convert = time.perf_counter() - started
    parts = []
    for task in tasks:
        parts.append(_run_set(task, table, convert, segment_us))
        convert = 0.0
    return pa.concat_tables(parts)


def record_rows(records: pa.Table, query_set: int) -> pa.Table:
    """``vertical.RECORD_SCHEMA`` rows of a set's own workload as stage-1 rows: the set's number in the job's
    workload in ``query``, the stream partition's key in ``group_key``, the segment's start in
    ``window_start_us``, the record in ``state``."""
    n = records.num_rows
    return pa.table({
        "kind": pa.array([SEGMENT] * n, pa.string()),
        "query": pa.array([str(query_set)] * n, pa.string()),
        "window_start_us": records.column("segment_start_us"),
        "window_end_us": pa.nulls(n, pa.int64()),
        "group_key": records.column("partition_key"),
        "aggregate": pa.nulls(n, pa.string()),
        "state": records.column("record"),
    }, schema=PARTIAL_SCHEMA)  # fmt: skip


def compose(tasks: Sequence[SetTask], floating: Sequence[str], rows: pa.Table) -> pa.Table:
    """Stage 1b: the records of whole stream partitions (every segment of each) composed in time order into
    their partial rows (``hamlet.compose_segments``)."""
    parts = []
    for task in tasks:
        rows_of_set = rows.filter(pc.equal(rows.column("query"), str(task.index)))
        mine = pa.table({
            "query_set": pa.array([0] * rows_of_set.num_rows, pa.int64()),  # (the set's own workload: one set)
            "partition_key": rows_of_set.column("group_key"),
            "segment_start_us": rows_of_set.column("window_start_us"),
            "record": rows_of_set.column("state"),
        }, schema=vertical.RECORD_SCHEMA)  # fmt: skip
        if mine.num_rows:
            workload = prepared_workload(task.workload_text, task.range_start_us, task.range_end_us)
            ends = (task.range_start_us, task.range_end_us)
            partials = compose_segments(workload, mine, floating, task.strategy, ends)
            kinds = pa.array([PARTIAL] * partials.num_rows, pa.string())
            parts.append(partials.add_column(0, "kind", kinds).cast(PARTIAL_SCHEMA))
    return pa.concat_tables(parts) if parts else PARTIAL_SCHEMA.empty_table()


def _run_set(task: SetTask, call_table: pa.Table, convert_seconds: float,
             segment_us: tuple[int, int] | None = None) -> pa.Table:  # fmt: skip
    started = time.perf_counter()
    table = task.reads(call_table)
    converted = time.perf_counter()
    stats = EvaluationStats()
    workload = prepared_workload(task.workload_text, task.range_start_us, task.range_end_us)
    ends = (task.range_start_us, task.range_end_us)
    records = None
    if segment_us is None:
        partials = evaluate_table(workload, table, task.strategy, stats, ends)
    else:
        partials, records = evaluate_segment(workload, table, segment_us, task.strategy, stats, ends)
    engine_done = time.perf_counter()
    summary = {
        "query_set": task.index,
        "events": table.num_rows,
        "partitions": stats.partitions,
        "calls": 1
        if table.num_rows
        else 0,  # (a call of the shared shuffle may hold none of the set's events)
        "segments": int(segment_us is not None and table.num_rows > 0),
        "convert_seconds": convert_seconds + (converted - started),
        "engine_seconds": engine_done - converted,
        "encode_seconds": 0.0,  # (the kernel writes the states: ``hamlet.evaluate_table``)
        "engine": {k: v for k, v in stats.as_dict().items() if k != "strategy"},
    }
    kinds = pa.array([PARTIAL] * partials.num_rows, pa.string())
    stats_row = pa.Table.from_pylist([{"kind": STATS, "state": json.dumps(summary)}], schema=PARTIAL_SCHEMA)
    out = [partials.add_column(0, "kind", kinds).cast(PARTIAL_SCHEMA), stats_row]
    if records is not None:
        out.append(record_rows(records, task.index))
    return pa.concat_tables(out)


def add_summaries(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The statistics rows of all stage-1 calls of one query set, added up; and the skew of the calls: the
    events of the set per call that held some (min, median, max), since one hot stream partition keeps one
    call, one task and one core busy while the others wait."""
    total: dict[str, Any] = {"events": 0, "partitions": 0, "calls": 0, "segments": 0, "convert_seconds": 0.0,
                             "engine_seconds": 0.0, "encode_seconds": 0.0}  # fmt: skip
    engine = EvaluationStats()
    for s in summaries:
        for key in total:
            total[key] += s.get(key, 0)
        engine.add(EvaluationStats(**s["engine"]))
    total["engine"] = {k: v for k, v in engine.as_dict().items() if k != "strategy"}
    per_call = sorted(s["events"] for s in summaries if s["calls"])
    total["call_events"] = {
        "min": per_call[0] if per_call else 0,
        "median": statistics.median_low(per_call) if per_call else 0,
        "max": per_call[-1] if per_call else 0,
    }
    return total


def _double(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        return None
    try:
        return float(value)
    except OverflowError:  # beyond double range: value_exact has it
        return None


def combine(table: pa.Table) -> pa.Table:
    """Stage 2: merge the partial rows of one shuffle group by (query, window, group, aggregate)."""
    texts: dict[tuple, list[str]] = {}
    rows = zip(*(table.column(n).to_pylist() for n in ("query", "window_start_us", "window_end_us",
                                                       "group_key", "aggregate", "state")))  # fmt: skip
    for query, start, end, key, aggregate, state in rows:
        texts.setdefault((query, start, end, key, aggregate), []).append(state)
    columns: dict[str, list] = {name: [] for name in RESULT_SCHEMA.names}
    for (query, start, end, key, aggregate), states in texts.items():
        state = merged_text_states(states)
        value = state.value()
        columns["query"].append(query)
        columns["window_start_us"].append(start)
        columns["window_end_us"].append(end)
        columns["group"].append([(k, text_of(v)) for k, v in json.loads(key).items()])
        columns["group_key"].append(key)
        columns["aggregate"].append(aggregate)
        columns["value"].append(_double(value))
        columns["value_exact"].append(state.exact_text())
    return pa.Table.from_pydict(columns, schema=RESULT_SCHEMA)
