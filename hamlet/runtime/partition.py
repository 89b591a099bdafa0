"""Stream partitioning per query (GRETA §6): local predicates filter, GROUP-BY ∪ equivalence partition."""

from __future__ import annotations

from collections.abc import Iterable

from hamlet.analysis.query import AnalyzedQuery
from hamlet.events import Event

PartitionKey = tuple


def partition_events(query: AnalyzedQuery, events: Iterable[Event]) -> dict[PartitionKey, list[Event]]:
    """The query's events by partition, in input order; events failing a local predicate or with a null in a
    partition attribute are not matched by the query and left out."""
    types = set(query.types)
    tests: dict[str, list] = {t: [] for t in types}
    for predicate in query.local_predicates:
        tests[predicate.event_type].append(predicate.test)
    attributes = query.partition_attributes
    partitions: dict[PartitionKey, list[Event]] = {}
    for event in events:
        if event.type not in types:
            continue
        if not all(test(event) for test in tests[event.type]):
            continue
        key = tuple(event.attributes.get(a) for a in attributes)
        if None in key:
            continue
        partitions.setdefault(key, []).append(event)
    return partitions


def group_of(query: AnalyzedQuery, key: PartitionKey) -> dict:
    values = dict(zip(query.partition_attributes, key))
    return {a: values[a] for a in query.group_by}
