"""The public API: parse a workload, evaluate it over events with a strategy."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import as_number
from hamlet.analysis.workload import Workload, parse_workload
from hamlet.errors import EventError, HamletError
from hamlet.events import Event, Number
from hamlet.results import ResultRow, group_key
from hamlet.runtime.aggregates import Algebra, algebra_for
from hamlet.runtime.greta import run_partition
from hamlet.runtime.partition import group_of, partition_events

Executor = Callable[[AnalyzedQuery, Algebra, list[Event]], Iterable[tuple[int, Any]]]

STRATEGIES: dict[str, Executor] = {"greta": run_partition}


def evaluate(workload: Workload | str, events: Any, strategy: str = "greta") -> list[ResultRow]:
    """Evaluate every query of ``workload`` over ``events``.

    ``events``: Event objects, dicts with ``event_type``, ``event_time`` and attributes, or a pandas
    DataFrame with those columns. Times are seconds (int or float) or datetimes (naive means UTC).
    Rows come sorted by query (workload order), window start, group and aggregate (RETURN order).
    """
    if isinstance(workload, str):
        workload = parse_workload(workload)
    if strategy not in STRATEGIES:
        known = ", ".join(sorted(STRATEGIES))
        raise HamletError(f"unknown strategy {strategy!r}; known strategies: {known}")
    return evaluate_with(workload, events, STRATEGIES[strategy])


def evaluate_with(workload: Workload, events: Any, executor: Executor) -> list[ResultRow]:
    """``evaluate`` with an explicit executor (tests use it to force one predecessor-source path)."""
    stream = sorted(to_events(events), key=lambda e: e.time)  # stable: equal times keep input order
    rows: list[ResultRow] = []
    for query in workload.queries:
        rows.extend(_evaluate_query(query, stream, executor))
    return rows


def _evaluate_query(query: AnalyzedQuery, stream: list[Event], executor: Executor) -> list[ResultRow]:
    partitions = partition_events(query, stream)
    algebra = algebra_for(query, (e for events in partitions.values() for e in events))
    finals: dict[tuple[int, tuple], tuple[dict, Any]] = {}
    for key, events in partitions.items():
        group = group_of(query, key)
        gkey = tuple(group.items())
        for k, agg in executor(query, algebra, events):
            # Partitions that differ only in equivalence attributes form one group: their trends add up.
            previous = finals.get((k, gkey))
            finals[(k, gkey)] = (group, agg if previous is None else algebra.add(previous[1], agg))
    rows = []
    for (k, _), (group, agg) in sorted(finals.items(), key=lambda item: (item[0][0], group_key(item[1][0]))):
        start, end = as_number(query.window.start(k)), as_number(query.window.end(k))
        for spec, value in zip(query.aggregates, algebra.results(agg, query.aggregates)):
            rows.append(ResultRow(query.name, start, end, group, spec.text, value))
    return rows


def to_events(events: Any) -> list[Event]:
    """Events from Event objects, mappings or a pandas DataFrame (duck-typed: no pandas import here)."""
    if hasattr(events, "to_dict") and hasattr(events, "columns"):
        records = events.to_dict(orient="records")
        return [_from_mapping(r, f"row {i}", dataframe=True) for i, r in enumerate(records)]
    out = []
    for i, item in enumerate(events):
        if isinstance(item, Event):
            out.append(Event(item.type, event_time(item.time, f"event {i}"), item.attributes))
        elif isinstance(item, Mapping):
            out.append(_from_mapping(item, f"event {i}"))
        else:
            raise EventError(f"expected an Event or a mapping, found {type(item).__name__}", where=f"event {i}")
    return out


def _from_mapping(record: Mapping[str, Any], where: str, dataframe: bool = False) -> Event:
    if "event_type" not in record or record["event_type"] is None:
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
    return Event(str(record["event_type"]), event_time(record["event_time"], where), attributes)


def _plain(value: Any) -> Any:
    """numpy scalars, NaN, NA and NaT (pandas' nulls) as plain Python values."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def event_time(value: Any, where: str) -> Number:
    """Seconds since the epoch from a number, a datetime (naive means UTC) or a pandas Timestamp."""
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value - datetime(1970, 1, 1, tzinfo=UTC)
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        return micros // 1_000_000 if micros % 1_000_000 == 0 else micros / 1_000_000
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventError(f"event_time {value!r} is neither a number of seconds nor a datetime", where=where)
    if isinstance(value, float) and not math.isfinite(value):
        raise EventError(f"event_time {value!r} is not a finite number", where=where)
    return value
