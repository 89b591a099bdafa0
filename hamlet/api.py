"""The public API: parse a workload, evaluate it over events with a strategy."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from functools import partial
from operator import attrgetter
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hamlet.analysis.predicates import group_values
from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import Window, as_number, pane_size
from hamlet.analysis.workload import Workload, parse_workload
from hamlet.errors import EvaluationError, EventError, HamletError, shown_names
from hamlet.events import MICROS, TIME_RANGE, TYPE_SPACE, Event, Number, Time, decimal_number
from hamlet.partials import AggregateState, PartialRow
from hamlet.results import ResultRow, group_key
from hamlet.runtime import vertical
from hamlet.runtime.aggregates import Algebra, FloatColumns, WindowSums, algebra_for
from hamlet.runtime.clipping import WindowEnds, checked_window_ends, clip_window
from hamlet.runtime.columnar import (
    PARTIAL_SCHEMA,
    TIME,
    TYPE,
    algebras_of,
    checked,
    clashing_rows,
    events_of,
    kernel_micros,
    partial_rows_table,
    refuse_duplicate_columns,
    run_compiled,
    seconds,
    set_rows,
    sorted_events,
)
from hamlet.runtime.greta import Plans, run_greta
from hamlet.runtime.native import kernel_obstacle, plain_events, predicates_obstacle
from hamlet.runtime.partition import PartitionRunner, groupings, partition_stream
from hamlet.runtime.shared import run_shared
from hamlet.stats import EvaluationStats


class Executor(Protocol):
    """A strategy: for a sharable query set (its algebras, the stats to fill), the runner of its stream
    partitions (``PartitionRunner``); what does not depend on the events is done once, and with ``plans``
    (``greta.Plans``) once for every evaluation of the set."""

    def __call__(self, queries: Sequence[AnalyzedQuery], algebras: Mapping[str, Algebra], stats: EvaluationStats,
                 *, plans: Plans | None = None) -> PartitionRunner: ...  # fmt: skip


STRATEGIES: dict[str, Executor] = {
    "greta": run_greta,
    "static": partial(run_shared, sharing="static"),
    "hamlet": partial(run_shared, sharing="hamlet"),
}


def evaluate(workload: Workload | PreparedWorkload | str, events: Any, strategy: str = "hamlet",
             stats: EvaluationStats | None = None, window_ends: WindowEnds | None = None,
             source: str | None = None) -> list[ResultRow]:  # fmt: skip
    """Evaluate every query of ``workload`` over ``events``.

    ``events``: Event objects, dicts with ``event_type``, ``event_time`` and attributes, or a pandas
    DataFrame with those columns. Times are seconds (int or float) or datetimes (naive means UTC).
    ``window_ends=(lo, hi)`` keeps only the windows whose end lies in (lo, hi] (and skips the work of the
    others); their rows are exactly those of the unrestricted evaluation. ``source``: the file the events
    were read from, for errors about an event's values to name (as ``evaluate_table``'s).
    Rows come sorted by query (workload order), window start, group and aggregate (RETURN order).
    """
    return finalize(evaluate_partials(workload, events, strategy, stats, window_ends, source))


def _executor(strategy: str) -> Executor:
    if strategy not in STRATEGIES:
        known = ", ".join(sorted(STRATEGIES))
        raise HamletError(f"unknown strategy {strategy!r}; known strategies: {known}")
    return STRATEGIES[strategy]


def evaluate_with(workload: Workload, events: Any, executor: Executor, window_ends: WindowEnds | None = None,
                  stats: EvaluationStats | None = None) -> list[ResultRow]:  # fmt: skip
    """``evaluate`` with an explicit executor (tests use it to force one predecessor-source path)."""
    return finalize(partials_with(workload, events, executor, stats, window_ends))


def evaluate_partials(workload: Workload | PreparedWorkload | str, events: Any, strategy: str = "hamlet",
                      stats: EvaluationStats | None = None, window_ends: WindowEnds | None = None,
                      source: str | None = None) -> list[PartialRow]:  # fmt: skip
    """Like ``evaluate`` but each row holds a mergeable ``AggregateState``: results of several calls over
    disjoint partitions (GROUP-BY ∪ equivalence values) merge into the result over their union. Pass an
    ``EvaluationStats`` to have it filled with what the strategy did. A caller that evaluates one workload
    many times (the Spark job: once per group of stream partitions) passes ``prepare(workload)`` once."""
    stats = stats if stats is not None else EvaluationStats()
    stats.strategy = strategy
    return partials_with(workload, events, _executor(strategy), stats, window_ends, source)


def evaluate_table(workload: Workload | PreparedWorkload | str, table: pa.Table, strategy: str = "hamlet",
                   stats: EvaluationStats | None = None, window_ends_us: tuple[int, int] | None = None,
                   source: str | None = None) -> pa.Table:  # fmt: skip
    """``evaluate_partials`` over an Arrow table of events (``event_type``, ``event_time`` as a timestamp or
    seconds, optionally ``event_id``, attribute columns), with partial states as Arrow
    (``columnar.PARTIAL_SCHEMA``: windows in microseconds, groups as JSON keys, states as
    ``AggregateState.to_text``). The compiled kernel reads the columns and writes the states; no Python
    object is made per event or per result (``hamlet/runtime/columnar.py``). ``window_ends_us=(lo, hi)``:
    only windows that end in (lo, hi] microseconds. ``source``: the path of the file the table was read
    from, for errors to name ("the events table" without one); they number rows from 1."""
    stats = stats if stats is not None else EvaluationStats()
    stats.strategy = strategy
    executor = _executor(strategy)
    prepared = _clipped_us(workload, window_ends_us)
    table = sorted_events(checked(table, source))
    parts = [_table_set(s, table, executor, stats, window_ends_us, source) for s in prepared.sets]
    return pa.concat_tables(parts) if parts else PARTIAL_SCHEMA.empty_table()


def _clipped_us(workload: Workload | PreparedWorkload | str,
                window_ends_us: tuple[int, int] | None) -> PreparedWorkload:  # fmt: skip
    """The workload prepared, its windows those that end in (lo, hi] µs (all of them without a range)."""
    if window_ends_us is not None:
        window_ends_us = vertical.microsecond_pair(window_ends_us, "window_ends_us")
    window_ends = None if window_ends_us is None else (Fraction(window_ends_us[0], MICROS),
                                                       Fraction(window_ends_us[1], MICROS))  # fmt: skip
    return prepare(workload).clipped(window_ends)  # type: ignore[arg-type]


def _table_set(query_set: PreparedSet, table: pa.Table, executor: Executor, stats: EvaluationStats,
               window_ends_us: tuple[int, int] | None, source: str | None) -> pa.Table:  # fmt: skip
    rows = set_rows(table, query_set.types, query_set.attributes)
    if rows.num_rows == 0:
        return PARTIAL_SCHEMA.empty_table()
    queries = list(query_set.queries)
    runner = executor(queries, algebras_of(queries, rows), stats, plans=query_set.plans)
    parts, left = [], rows
    micros = kernel_micros(rows) if runner.compiled_set is not None else None
    if micros is not None:
        kernel, kept = None, rows
        clashing = clashing_rows(rows, micros, query_set.attributes, source)
        if len(clashing):  # (partitions where two float times share a microsecond: Python's; seldom any)
            kernel = np.setdiff1d(np.arange(rows.num_rows), clashing, assume_unique=True)
            kept, micros = rows.take(kernel), micros.take(kernel)
        done, fallback, _ = run_compiled(runner.compiled_set, queries, kept, micros, query_set.attributes,
                                         groupings(queries), window_ends_us, stats, source=source)  # fmt: skip
        parts.append(done)
        # (in time order, as the Python path reads them)
        left = rows.take(fallback if kernel is None else np.union1d(clashing, kernel[fallback]))
    runner.release()
    if left.num_rows:  # what the kernel cannot compute exactly, as ``evaluate_partials`` computes it
        attributes = [name for name in left.column_names if name not in (TYPE, TIME)]
        by_query = _evaluate_set(query_set, events_of(left, attributes), executor, stats, source)
        parts.append(partial_rows_table([row for q in queries for row in by_query[q.name]], window_ends_us))
    return pa.concat_tables(parts)


def segment_obstacle(workload: Workload | PreparedWorkload | str, strategy: str = "hamlet",
                     schema: pa.Schema | None = None) -> str | None:  # fmt: skip
    """Why the workload's stream partitions cannot be cut into time segments that compose exactly
    (``evaluate_segment``), naming the queries concerned; None: they can. With the events table's
    ``schema``, its columns' types too (an aggregate over a column of no number type)."""
    reasons = [
        f"{', '.join(names)}: {why}" for names, why in segment_obstacles(workload, strategy, schema) if why
    ]
    return reasons[0] if reasons else None


def segment_obstacles(workload: Workload | PreparedWorkload | str, strategy: str = "hamlet",
                      schema: pa.Schema | None = None) -> list[tuple[tuple[str, ...], str | None]]:  # fmt: skip
    """Per sharable query set, its queries and why its segments would not compose (None: they do)."""
    executor = _executor(strategy)
    out: list[tuple[tuple[str, ...], str | None]] = []
    for query_set in prepare(workload).sets:
        queries = list(query_set.queries)
        runner = executor(queries, vertical.segment_algebras(queries, ()), EvaluationStats())
        why = _set_segment_obstacle(query_set, runner)
        if why is None and schema is not None:
            why = _column_obstacle(queries, schema)
        out.append((tuple(q.name for q in queries), why))
    return out


def _column_obstacle(queries: Sequence[AnalyzedQuery], schema: pa.Schema) -> str | None:
    """An aggregate over a column of no number type, whose values only the Python engine aggregates (a
    segment's records hold numbers), or None."""
    for q in queries:
        for spec in q.aggregates:
            if spec.attribute is None or spec.attribute not in schema.names:
                continue
            kind = schema.field(spec.attribute).type
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
                    or pa.types.is_null(kind)):  # fmt: skip
                return f"{spec.text} of {q.name} reads {spec.attribute}, a {kind} column, which only Python aggregates"
    return None


def _set_segment_obstacle(query_set: PreparedSet, runner: PartitionRunner) -> str | None:
    """Why one set's segments would not compose, on its runner (None: they do)."""
    if query_set.types is None:
        return "contiguous semantics"
    if runner.compiled_set is None:
        queries = query_set.queries
        why = next((f"{q.name}: {w}" for q in queries if (w := kernel_obstacle(q) or predicates_obstacle(q))),
                   "a graph it does not take")  # fmt: skip
        return f"not on the compiled set kernel ({why})"
    reason: str | None = runner.compiled_set.native.kernel.segment_obstacle()
    return reason


def evaluate_segment(workload: Workload | PreparedWorkload | str, table: pa.Table, segment_us: tuple[int, int],
                     strategy: str = "hamlet", stats: EvaluationStats | None = None,
                     window_ends_us: tuple[int, int] | None = None,
                     source: str | None = None) -> tuple[pa.Table, pa.Table]:  # fmt: skip
    """One time segment [t0, t1) (µs, on every set's pane) of a stream cut by time (dissertation §28.1:
    ``hamlet/runtime/vertical.py``): ``table`` holds every event of the segment. Returns the partial rows
    of the windows that are final in the segment (as ``evaluate_table``'s) and the records of the others,
    one per stream partition and graph (``vertical.RECORD_SCHEMA``), which ``compose_segments`` turns
    into the rest of the partial rows once every segment has run. The partials of all segments and the
    composed ones merge into exactly ``evaluate_table``'s over the whole stream. ``source``: as
    ``evaluate_table``'s, the file the segment was read from, for errors to name."""
    stats = stats if stats is not None else EvaluationStats()
    stats.strategy = strategy
    executor = _executor(strategy)
    prepared = _clipped_us(workload, window_ends_us)
    table = sorted_events(checked(table, source))
    floating = vertical.floating_columns(table.schema)
    runners, float_sums = [], []
    for query_set in prepared.sets:
        queries = list(query_set.queries)
        algebras = vertical.segment_algebras(queries, floating)
        runner = executor(queries, algebras, stats)
        reason = _set_segment_obstacle(query_set, runner) or _column_obstacle(queries, table.schema)
        if reason is not None:
            names = ", ".join(q.name for q in queries)
            raise HamletError(f"the stream cannot be cut into time segments: {names}: {reason}")
        runners.append(runner)
        float_sums.append(vertical.float_sums(algebras))
    t0, t1 = vertical.check_segment(segment_us, [_set_pane(s) for s in prepared.sets])
    if table.num_rows:
        micros = kernel_micros(table)
        if micros is None or len(clashing_rows(table, micros, ())):
            raise EventError("two different times lie in one microsecond, which a time segment's events may not "
                             "(seconds as floats: give a timestamp column)", where="event_time")  # fmt: skip
        first, last = pc.min(micros).as_py(), pc.max(micros).as_py()
        if not (segment_us[0] <= first and last < segment_us[1]):
            outside = first if first < segment_us[0] else last
            raise EventError(f"{outside} µs lies outside the segment [{segment_us[0]}, {segment_us[1]}) µs",
                             where="event_time")  # fmt: skip
    parts: list[pa.Table] = []
    records: list[dict[str, Any]] = []
    for number, (query_set, runner) in enumerate(zip(prepared.sets, runners)):
        rows = set_rows(table, query_set.types, query_set.attributes)
        if rows.num_rows == 0:
            continue
        queries = list(query_set.queries)
        done, fallback, found = run_compiled(runner.compiled_set, queries, rows, kernel_micros(rows),
                                             query_set.attributes, groupings(queries), window_ends_us, stats,
                                             (t0, t1), source)  # fmt: skip
        if len(fallback):
            at = f"the stream partition of the event at {rows.column(TIME)[int(fallback[0])]}"
            raise EventError("a value only the Python engine computes exactly (an integer below -2^63 or from 2^64 "
                             "on, NaN or an infinity): evaluate this stream without time "
                             "segments", where=f"{source}, {at}" if source else at)  # fmt: skip
        parts.append(done)
        for key, record in found:
            record.float_sums = float_sums[number]
            records.append({"query_set": number, "partition_key": key, "segment_start_us": segment_us[0],
                            "record": record.to_json()})  # fmt: skip
    partials = pa.concat_tables(parts) if parts else PARTIAL_SCHEMA.empty_table()
    return partials, pa.Table.from_pylist(records, schema=vertical.RECORD_SCHEMA)


def compose_segments(workload: Workload | PreparedWorkload | str, records: pa.Table, floating: Sequence[str],
                     strategy: str = "hamlet",
                     window_ends_us: tuple[int, int] | None = None) -> pa.Table:  # fmt: skip
    """The partial rows that ``evaluate_segment``'s records of every segment hold, composed per stream
    partition in time order. ``floating``: the event table's columns of a floating type (every segment's
    algebra scales the sums over those)."""
    executor = _executor(strategy)
    prepared = _clipped_us(workload, window_ends_us)
    if not (isinstance(records, pa.Table) and set(vertical.RECORD_SCHEMA.names) <= set(records.column_names)):
        raise HamletError(f"records must be a table of evaluate_segment's records, with the columns "
                          f"{', '.join(vertical.RECORD_SCHEMA.names)}")  # fmt: skip
    if isinstance(floating, str) or not isinstance(floating, Iterable):
        raise HamletError(f"floating must name the events table's floating-point columns, not {floating!r}")
    by_partition: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for number, key, start, text in zip(
        *(records.column(n).to_pylist() for n in vertical.RECORD_SCHEMA.names)
    ):
        if not (isinstance(number, int) and 0 <= number < len(prepared.sets)):
            raise HamletError(f"a record names query set {number!r}; this workload has {len(prepared.sets)}: "
                              "compose the records of the workload that evaluated the segments")  # fmt: skip
        by_partition.setdefault((number, key), []).append((start, text))
    rows: list[PartialRow] = []
    runners: dict[int, tuple] = {}
    for (number, _), found in by_partition.items():
        if number not in runners:
            queries = list(prepared.sets[number].queries)
            algebras = vertical.segment_algebras(queries, floating)
            runner = executor(queries, algebras, EvaluationStats())
            by = groupings(queries)
            runners[number] = (
                runner.compiled_set.groups,
                algebras,
                {q.name: by.index(q.group_by) for q in queries},
            )
        groups, algebras, grouping_of = runners[number]
        try:
            ordered = sorted(found, key=lambda item: item[0])
            decoded = [vertical.Record.from_json(text) for _, text in ordered]
        except (ValueError, TypeError) as e:  # (json's errors are ValueErrors)
            raise HamletError(f"a record of partition {key} is not one evaluate_segment wrote: {e}") from None
        expected = vertical.float_sums(algebras)
        for (start, _), record in zip(ordered, decoded):
            if record.float_sums is not None and record.float_sums != expected:
                raise HamletError(
                    f"the segment that starts at {start} µs kept the sums over {_columns(record.float_sums)} as "
                    f"floats (its table's floating-point columns), floating those over {_columns(expected)}: each "
                    "column must have one type in every segment's table, and floating must name those columns"
                )
        rows.extend(vertical.partial_rows(groups, decoded, algebras, grouping_of))
    return partial_rows_table(rows, window_ends_us)


def _columns(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "no column"


def segment_pane(workload: Workload | PreparedWorkload | str) -> Fraction:
    """The shortest length every time segment bound of the workload must be a multiple of: on every set's
    pane (``evaluate_segment``)."""
    panes = [_set_pane(s) for s in prepare(workload).sets]
    return Fraction(math.lcm(*(p.numerator for p in panes)), math.gcd(*(p.denominator for p in panes)))


def _set_pane(query_set: PreparedSet) -> Fraction:
    return pane_size([d for q in query_set.queries for d in (q.window.within, q.window.slide)])


def finalize_table(workload: Workload | PreparedWorkload | str, partials: pa.Table) -> list[ResultRow]:
    """The results of ``evaluate_table``'s partial rows, ordered as ``evaluate`` orders its rows."""
    queries = prepare(workload).workload.queries
    order = {q.name: (i, {a.text: j for j, a in enumerate(q.aggregates)}) for i, q in enumerate(queries)}
    rows = []
    for query, start, end, key, aggregate, state in zip(
        *(partials.column(n).to_pylist() for n in PARTIAL_SCHEMA.names)
    ):
        group = json.loads(key)
        rows.append(PartialRow(query, as_number(Fraction(start, MICROS)), as_number(Fraction(end, MICROS)), group,
                               aggregate, AggregateState.from_text(state)))  # fmt: skip

    def position(row: PartialRow) -> tuple:
        number, aggregates = order[row.query]
        return number, row.window_start, group_key(row.group), aggregates[row.aggregate]

    return finalize(sorted(rows, key=position))


def finalize(partials: Iterable[PartialRow]) -> list[ResultRow]:
    """Merge partials with the same (query, window, group, aggregate) and compute their values; a merged row
    keeps its first partial's group (1 or 1.0: ``PartialRow.key`` has them one group)."""
    merged: dict[tuple, PartialRow] = {}
    for p in partials:
        key = p.key()
        previous = merged.get(key)
        merged[key] = p if previous is None else replace(previous, state=previous.state.merge(p.state))
    return [ResultRow(p.query, p.window_start, p.window_end, p.group, p.aggregate, p.state.value())
            for p in merged.values()]  # fmt: skip


@dataclass(frozen=True)
class PreparedSet:
    """One sharable query set, analysed: its queries, partition attributes and event types."""

    queries: tuple[AnalyzedQuery, ...]
    attributes: tuple[str, ...]
    types: frozenset[str] | None  # None: every type (a contiguous query's sub-stream)
    # Its compiled plans, made by the first evaluation and reused by the next (not an init field: a set with
    # other queries, as ``clipped`` makes, starts with none).
    plans: Plans = field(default_factory=Plans, init=False, repr=False, compare=False)


@dataclass(frozen=True)
class PreparedWorkload:
    """What every evaluation of a workload needs and does not depend on the events: the sharable query
    sets (an O(queries²) analysis). Build it once with ``prepare`` and evaluate it many times."""

    workload: Workload
    sets: tuple[PreparedSet, ...]

    def clipped(self, window_ends: WindowEnds | None) -> PreparedWorkload:
        """The same workload whose queries open only the windows that end in (lo, hi]."""
        if window_ends is None:
            return self
        return _clipped(self, *checked_window_ends(window_ends))


def prepare(workload: Workload | PreparedWorkload | str) -> PreparedWorkload:
    if isinstance(workload, PreparedWorkload):
        return workload
    if isinstance(workload, str):
        workload = parse_workload(workload)
    if not isinstance(workload, Workload):
        raise HamletError(f"expected a workload (its text, parse_workload's Workload or prepare's), found "
                          f"{type(workload).__name__}")  # fmt: skip
    sets = []
    for query_set in workload.sharable_query_sets():
        queries = tuple(workload.query(name) for name in query_set.queries)
        # A contiguous query reads every event of its partition, of any type (None: every type).
        types = (
            None
            if any(q.whole_substream for q in queries)
            else frozenset(t for q in queries for t in q.types)
        )
        sets.append(PreparedSet(queries, tuple(query_set.partition_attributes), types))
    return PreparedWorkload(workload, tuple(sets))


def _clipped(prepared: PreparedWorkload, lo: Number, hi: Number) -> PreparedWorkload:
    windows: dict[Window, Window] = {}  # equal windows as one object: lookups by window then hit at once

    def clipped(query: AnalyzedQuery) -> AnalyzedQuery:
        window = clip_window(query.window, lo, hi)
        return replace(query, window=windows.setdefault(window, window))

    sets = tuple(replace(s, queries=tuple(clipped(q) for q in s.queries)) for s in prepared.sets)
    return PreparedWorkload(prepared.workload, sets)


def partials_with(workload: Workload | PreparedWorkload | str, events: Any, executor: Executor,
                  stats: EvaluationStats | None = None, window_ends: WindowEnds | None = None,
                  source: str | None = None) -> list[PartialRow]:  # fmt: skip
    """Every sharable query set runs on its own partitions of the stream (its queries partition alike).
    ``source``: as ``evaluate``'s."""
    prepared = prepare(workload).clipped(window_ends)
    stream = sorted(to_events(events, source), key=attrgetter("time"))  # stable: equal times keep input order
    stats = stats if stats is not None else EvaluationStats()
    by_query: dict[str, list[PartialRow]] = {}
    for query_set in prepared.sets:
        by_query.update(_evaluate_set(query_set, stream, executor, stats, source))
    return [row for q in prepared.workload.queries for row in by_query[q.name]]


def _evaluate_set(query_set: PreparedSet, stream: list[Event], executor: Executor, stats: EvaluationStats,
                  source: str | None = None) -> dict[str, list[PartialRow]]:  # fmt: skip
    """One set's rows over a stream of ``Event``s; ``source``: the file ``stream`` was read from, named by
    errors about an event's values, which name the event by type and time (its row is lost: the stream is
    sorted by time)."""
    try:
        return _set_rows(query_set, stream, executor, stats, source)
    except EvaluationError as e:
        if source is None:
            raise
        # (the algebras raise it deep in every strategy's runner, and are shared among queries and unioned
        # into new ones: the file is added here, where it is known, not carried by each algebra)
        raise EvaluationError(f"{source}: {e}") from None


def _set_rows(query_set: PreparedSet, stream: list[Event], executor: Executor, stats: EvaluationStats,
              source: str | None) -> dict[str, list[PartialRow]]:  # fmt: skip
    queries, attributes = list(query_set.queries), query_set.attributes
    partitions = partition_stream(
        attributes, None if query_set.types is None else set(query_set.types), stream, source
    )
    stats.partitions += len(partitions)
    everything = [e for events in partitions.values() for e in events]
    floats = FloatColumns(everything)
    algebras = {q.name: algebra_for(q, floats) for q in queries}
    by_name = {q.name: q for q in queries}
    # Partitions that differ only in equivalence attributes form one group: their trends add up.
    finals = {q.name: WindowSums(algebras[q.name]) for q in queries}
    run = executor(queries, algebras, stats, plans=query_set.plans)
    # A partition's group in each distinct GROUP-BY, numbered: the runner may sum finals by these numbers.
    by = groupings(queries)
    grouping = {q.name: by.index(q.group_by) for q in queries}
    slots = [tuple(attributes.index(a) for a in group_by) for group_by in by]
    # Per grouping: group values (``kinded``: True is not 1) → their number.
    numbers: list[dict[tuple, int]] = [{} for _ in by]
    for key, events in partitions.items():
        ids = [number.setdefault(tuple(key[i] for i in positions), len(number))
               for positions, number in zip(slots, numbers)]  # fmt: skip
        for name, k, agg in run(events, ids):
            finals[name].add(ids[grouping[name]], k, agg)
    for summed in run.summed():
        finals[summed.query].merge(summed.group, summed.diffs, summed.entries)
    run.release()
    # A group's values as its first partition holds them: a number as the group's first event writes it
    # (1 or 1.0; -0.0 as 0.0: ``group_values``), in every window, whichever of its partitions has trends there.
    values_of = [[group_values(values) for values in number] for number in numbers]
    out: dict[str, list[PartialRow]] = {}
    for name, sums in finals.items():
        query = by_name[name]
        algebra = algebras[name]
        rows: list[PartialRow] = []
        entries = list(sums.items())
        groups: dict[int, tuple[dict, tuple]] = {}  # group number → the group, its sort key
        for (number, _), _ in entries:
            if number not in groups:
                group = dict(zip(query.group_by, values_of[grouping[name]][number]))
                groups[number] = (group, group_key(group))
        windows = sorted(entries, key=lambda item: (item[0][1], groups[item[0][0]][1]))
        for (number, k), agg in windows:
            group = groups[number][0]
            start, end = as_number(query.window.start(k)), as_number(query.window.end(k))
            for spec, state in zip(query.aggregates, algebra.states(agg, query.aggregates)):
                rows.append(PartialRow(name, start, end, group, spec.text, state))
        out[name] = rows
    return out


def to_events(events: Any, source: str | None = None) -> list[Event]:
    """Events from Event objects, mappings or a pandas DataFrame (duck-typed: no pandas import here). A bad
    one is named as the other readers name theirs, counted from 1: "the DataFrame, row 2" (by position, not
    by index label), "event 2"; a DataFrame without an event_type or event_time column as the Arrow path
    names a table without one. ``source``: the file the events were read from, named first
    ("e.csv, row 2", "e.csv, event 2"). An attribute that is a Decimal is read as the number it holds
    (``events.decimal_number``), as ``evaluate_table`` reads a decimal column: Decimal(1) is 1, one group
    and one stream partition with 1 and 1.0."""
    if hasattr(events, "to_dict") and hasattr(events, "columns"):
        frame = source or "the DataFrame"
        names = [str(c) for c in events.columns]
        refuse_duplicate_columns(names, frame)
        # A column missing is the DataFrame's error, as a table's (not "row 1: missing event_type"; and no
        # error at all without rows).
        for required in ("event_type", "event_time"):
            if required not in names:
                raise EventError(f"no {required} column (found: {shown_names(names)})",
                                 where=frame)  # fmt: skip
        records = events.to_dict(orient="records")
        return [_from_mapping(r, f"{frame}, row {i}", dataframe=True) for i, r in enumerate(records, 1)]
    if isinstance(events, list) and plain_events(events):
        return events  # already what the engine reads (the Spark job's events): one compiled pass, no copies
    if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Iterable):
        hint = ""
        if isinstance(events, (pa.Table, pa.RecordBatch)):
            hint = "; an Arrow table goes to evaluate_table (and its partial rows to finalize_table)"
        raise EventError(f"expected Event objects, mappings or a DataFrame, found {type(events).__name__}{hint}",
                         where=source or "the events")  # fmt: skip
    out = []
    for i, item in enumerate(events, 1):
        where = f"{source}, event {i}" if source else f"event {i}"
        if isinstance(item, Event):
            if not isinstance(item.attributes, Mapping):
                raise EventError(f"attributes are a {type(item.attributes).__name__}, not a mapping of names to "
                                 "values", where=where)  # fmt: skip
            kind = event_type(item.type, where)
            attributes = _numbers(item.attributes)
            if type(item.time) is int and kind == item.type and type(item.type) is str:
                out.append(item if attributes is item.attributes else Event(kind, item.time, attributes))
            else:
                out.append(Event(kind, event_time(item.time, where), attributes))
        elif isinstance(item, Mapping):
            out.append(_from_mapping(item, where))
        else:
            raise EventError(f"expected an Event or a mapping, found {type(item).__name__}", where=where)
    return out


def _from_mapping(record: Mapping[str, Any], where: str, dataframe: bool = False) -> Event:
    if "event_type" not in record:
        raise EventError("missing event_type", where=where)
    if "event_time" not in record:
        raise EventError("missing event_time", where=where)
    attributes = {}
    for name, value in record.items():
        if name in ("event_type", "event_time"):
            continue
        if dataframe:
            value = _plain(value)
        attributes[name] = value
    return Event(event_type(record["event_type"], where), event_time(record["event_time"], where),
                 _numbers(attributes))  # fmt: skip


def _numbers(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attributes`` with each Decimal as the number it holds (``events.decimal_number``, the rule of the
    table path's decimal columns): the mapping itself when it holds none."""
    if not any(isinstance(v, Decimal) for v in attributes.values()):
        return attributes
    return {n: decimal_number(v) if isinstance(v, Decimal) else v for n, v in attributes.items()}


def event_type(value: Any, where: str) -> str:
    """An event type as every reader takes one (the CSV reader through this; the Arrow path's
    ``columnar.checked`` by the same rule), or the error they give: text, without the whitespace around it
    (``TYPE_SPACE``: " A" is A, as the loader of the events table writes it), not empty, without a NUL byte
    (the loader rejects such a row: a type no query can name, it would still break a contiguous query's
    stream, and every tool must count alike). A null (None, NaN, pandas' NA) is empty, as a null of an Arrow
    column is, never the type "nan"; a number is no type, as an int64 column is none ("event_type is int,
    not text")."""
    if _plain(value) is None:
        raise EventError("event_type is empty", where=where)
    if not isinstance(value, str):
        raise EventError(f"event_type is {type(_plain(value)).__name__}, not text", where=where)
    text = str(value).strip(TYPE_SPACE)  # (a subclass such as numpy.str_ as the plain text every path gives)
    if not text:
        raise EventError("event_type is empty", where=where)
    if "\x00" in text:
        raise EventError(f"event_type {text!r} holds a NUL byte", where=where)
    return text


def _plain(value: Any) -> Any:
    """numpy scalars, NaN, NA and NaT (pandas' nulls) as plain Python values."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def event_time(value: Any, where: str) -> Time:
    """Seconds since the epoch from a number, a datetime (naive means UTC) or a pandas Timestamp."""
    if _plain(value) is None:  # (None, NaN, or pandas' NaT, which passes for a datetime)
        raise EventError("event_time is empty", where=where)
    if hasattr(value, "to_pydatetime"):
        # (pandas would drop the nanoseconds with a warning; the table path refuses them)
        if getattr(value, "nanosecond", 0):
            raise EventError(f"event_time {value} has a fraction of a microsecond, finer than the engine's "
                             "microseconds", where=where)  # fmt: skip
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value - datetime(1970, 1, 1, tzinfo=UTC)
        moment = seconds((delta.days * 86400 + delta.seconds) * MICROS + delta.microseconds)
        # (an offset may take it out of them: 0001-01-01T00:00+01:00)
        if not TIME_RANGE[0] <= moment <= TIME_RANGE[1]:
            raise EventError(f"event_time {value.isoformat()} lies outside the times the engine takes, "
                             "0001-01-01T00:00:00+00:00 to 9999-12-31T23:59:59+00:00", where=where)  # fmt: skip
        return moment
    value = _plain(value)
    if isinstance(value, Fraction):  # (a timestamp's exact seconds, as the readers make them)
        value = int(value) if value.denominator == 1 else value
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventError(f"event_time {value!r} is neither a number of seconds nor a datetime", where=where)
    if isinstance(value, float) and not math.isfinite(value):
        raise EventError(f"event_time {value!r} is not a finite number", where=where)
    if not TIME_RANGE[0] <= value <= TIME_RANGE[1]:
        # (a Fraction as the decimal seconds it was read from: its denominator divides 10^6)
        shown = (
            format(Decimal(value.numerator) / value.denominator, "f")
            if isinstance(value, Fraction)
            else repr(value)
        )
        raise EventError(f"event_time {shown} lies outside the years 1 to 9999 ({TIME_RANGE[0]} to "
                         f"{TIME_RANGE[1]} s)", where=where)  # fmt: skip
    return value
