"""Stream partitioning (GRETA §6, HAMLET §3.1): GROUP-BY ∪ equivalence values split the stream; local
predicates filter each query's events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.template import canonical
from hamlet.events import Event

PartitionKey = tuple
# What a strategy makes of a sharable query set: the runner of its stream partitions, events in, (query,
# window k, final aggregate) out, or (query, range of windows, final) for a run of consecutive windows that
# share one final (``hamlet.api.Executor``).
PartitionRunner = Callable[[list[Event]], Iterator[tuple[str, int | range, Any]]]


def partition_stream(attributes: Sequence[str], types: set[str], events: Iterable[Event]) -> dict[PartitionKey, list[Event]]:
    """Events of ``types`` by their values of ``attributes``, in input order. An event with a null in one
    of them is matched by no query partitioned by it, and left out."""
    partitions: dict[PartitionKey, list[Event]] = {}
    for event in events:
        if event.type not in types:
            continue
        key = tuple(event.attributes.get(a) for a in attributes)
        if None in key:
            continue
        partitions.setdefault(key, []).append(event)
    return partitions


def match_key(query: AnalyzedQuery) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Queries with equal keys match the same events of any partition: the same types, the same local
    predicates (queries that differ only in windows, aggregates or edge predicates). Runners match the
    events of a partition once per key, not once per query."""
    return frozenset(query.types), frozenset((p.event_type, p.text) for p in query.local_predicates)


def graph_key(query: AnalyzedQuery) -> tuple:
    """Queries with equal keys build equal trend graphs on any partition: the same pattern (up to aliases),
    the same local and edge predicates. They may differ in windows, aggregates and GROUP-BY (a set's
    queries partition alike), which the graph does not depend on (graph.py: classes keyed by c)."""
    edges = frozenset((p.source, p.target, p.text) for p in query.edge_predicates)
    return canonical(query.pattern.pattern), match_key(query), edges


LocalTests = dict[str, tuple[Callable[[Event], Any], ...]]


def local_tests(query: AnalyzedQuery) -> LocalTests:
    """Per type the query reads, the tests of its local predicates (what ``matched_events`` applies)."""
    tests: dict[str, list] = {t: [] for t in query.types}
    for predicate in query.local_predicates:
        tests[predicate.event_type].append(predicate.test)
    return {t: tuple(ts) for t, ts in tests.items()}


def matched_events(query: AnalyzedQuery, events: Iterable[Event], tests: LocalTests | None = None) -> list[Event]:
    """The events of the query's types that pass its local predicates (``tests``: its ``local_tests``, to
    make them once for many partitions)."""
    tests = local_tests(query) if tests is None else tests
    out = []
    for event in events:  # (a loop, not all() over a generator: this runs for every event and query key)
        checks = tests.get(event.type)
        if checks is None:
            continue
        for test in checks:
            if not test(event):
                break
        else:
            out.append(event)
    return out


def group_of(query: AnalyzedQuery, attributes: Sequence[str], key: PartitionKey) -> dict:
    values = dict(zip(attributes, key))
    return {a: values[a] for a in query.group_by}
