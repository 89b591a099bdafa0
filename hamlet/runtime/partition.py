"""Stream partitioning (GRETA §6, HAMLET §3.1): GROUP-BY ∪ equivalence values split the stream; local
predicates filter each query's events."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from math import isnan
from operator import itemgetter
from typing import Any

from hamlet.analysis.predicates import ONE_KIND, group_values, kinded, unkinded
from hamlet.analysis.query import AnalyzedQuery
from hamlet.errors import EventError
from hamlet.events import Event

PartitionKey = tuple
# (query, window k, final aggregate), or (query, range of windows, final) for a run of consecutive windows
# that share one final: what a runner finds in a partition.
Run = tuple[str, int | range, Any]


@dataclass(frozen=True)
class Summed:
    """Finals a runner summed itself over the partitions of one group (the compiled kernel does):
    ``entries`` are (k, change of the sum at window k) for a linear algebra (``diffs``; ``WindowSums``
    prefix-sums them), else (k, the sum of window k)."""

    query: str
    group: int  # the group's number in the query's grouping (``groupings``), as the caller numbered it
    diffs: bool
    entries: list[tuple[int, Any]]


@dataclass(frozen=True)
class PartitionRunner:
    """What a strategy makes of a sharable query set (``hamlet.api.Executor``): ``runner(events)`` gives the
    runs of a stream partition. ``runner(events, groups)``, ``groups`` numbering the partition's group in
    each of the set's ``groupings``, may sum some runs itself instead of giving them; ``summed()`` then
    hands those sums over, once, after the last partition. ``compiled``: the queries whose graphs run on the
    compiled kernel (the sharing decision weighs their steps as such); ``whole(events, groups)``: the runs
    of the partition with each of those graphs computed there, or None where the kernel leaves one of them
    to Python. ``shares``: the runner shares bursts itself (the compiled set kernel). ``compiled_set``: the
    set on the compiled kernel, where the whole set is there: it also takes a table's columns at once
    (``columnar.py``)."""

    run: Callable[[list[Event], Sequence[int] | None], Iterable[Run]]
    summed: Callable[[], Iterable[Summed]] = tuple
    compiled: frozenset[str] = frozenset()
    whole: Callable[[list[Event], Sequence[int] | None], Iterable[Run] | None] = lambda events, groups: None
    shares: bool = False  # the whole set runs on the compiled kernel, which shares bursts itself
    compiled_set: Any = None  # ``native.CompiledSet``
    release: Callable[[], None] = lambda: None  # after the last partition: the plan back to its ``Plans``

    def __call__(self, events: list[Event], groups: Sequence[int] | None = None) -> Iterable[Run]:
        return self.run(events, groups)


def groupings(queries: Sequence[AnalyzedQuery]) -> list[tuple[str, ...]]:
    """The distinct GROUP-BYs of a set's queries, in order: a partition's group in each is numbered once
    for all the queries that group alike."""
    return list(dict.fromkeys(q.group_by for q in queries))


def partition_stream(
    attributes: Sequence[str], types: set[str] | None, events: Iterable[Event], source: str | None = None
) -> dict[PartitionKey, list[Event]]:
    """Events of ``types`` (None: of every type) by their values of ``attributes``, in input order. An
    event with a null in one of them is matched by no query partitioned by it, and left out. Values are one
    partition when they compare equal (``predicates.kinded``: True and 1 are two, 1 and 1.0 one); the key
    of a partition is ``kinded`` values of its first event (``unkinded`` gives them back). ``source``:
    the file the events were read from, for errors to name before the event."""
    wanted: Container[str] = _Everything() if types is None else types
    if not attributes:  # the whole stream is one partition
        mine = [e for e in events if e.type in wanted]
        return {(): mine} if mine else {}
    if len(attributes) == 1:
        return _by_one_attribute(attributes[0], wanted, events, source)
    partitions: dict[PartitionKey, list[Event]] = {}
    pick = itemgetter(*attributes)  # one C call where the attributes hold every one (a table's events do)
    for event in events:
        if event.type not in wanted:
            continue
        try:
            key = pick(event.attributes)
        except KeyError:
            key = tuple(map(event.attributes.get, attributes))
        if None in key or any(type(v) is float and isnan(v) for v in key):  # (NaN: a null, as in pandas)
            continue
        key = kinded(key)
        try:
            found = partitions.get(key)
        except TypeError:  # a list or a mapping: no value two events can share
            raise _not_single(attributes, key, event, source) from None
        if found is None:
            partitions[key] = [event]
        else:
            found.append(event)
    return partitions


def _by_one_attribute(attribute: str, wanted: Container[str], events: Iterable[Event],
                      source: str | None) -> dict[PartitionKey, list[Event]]:  # fmt: skip
    """``partition_stream`` by one attribute (most workloads: ``[driver]``, ``[m]``), keyed by the value itself
    while it runs and by the 1-tuple only at the end: no tuple, no scan for NaN per event."""
    by_value: dict[Any, list[Event]] = {}
    for event in events:
        if event.type not in wanted:
            continue
        value = event.attributes.get(attribute)
        if value is None or (type(value) is float and isnan(value)):  # (NaN: a null, as in pandas)
            continue
        if type(value) not in ONE_KIND:
            (value,) = kinded((value,))
        try:
            found = by_value.get(value)
        except TypeError:  # a list or a mapping: no value two events can share
            raise _not_single((attribute,), (value,), event, source) from None
        if found is None:
            by_value[value] = [event]
        else:
            found.append(event)
    return {(value,): found for value, found in by_value.items()}


def _not_single(attributes: Sequence[str], key: tuple, event: Event, source: str | None) -> EventError:
    """The error for an event whose partition values (its ``kinded`` ``key``) are no values to partition by."""
    at = f"the {event.type} event at time {event.time}"
    return EventError(
        f"{', '.join(attributes)} = {unkinded(key)!r}: GROUP-BY and equivalence attributes take single values "
        "(numbers, text, times)",
        where=f"{source}, {at}" if source else at,
    )


def match_key(query: AnalyzedQuery) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Queries with equal keys match the same events of any partition: the same types, the same local
    predicates (queries that differ only in windows, aggregates or edge predicates). Runners match the
    events of a partition once per key, not once per query."""
    return frozenset(query.types), frozenset((p.event_type, p.text) for p in query.local_predicates)


def graph_key(query: AnalyzedQuery) -> tuple:
    """Queries with equal keys build equal trend graphs on any partition: the same pattern (up to aliases,
    its NOTs in place: ``SubPattern.key``), the same local and edge predicates. They may differ in windows,
    aggregates and GROUP-BY (a set's queries partition alike), which the graph does not depend on
    (graph.py: classes keyed by c)."""
    edges = frozenset((p.source, p.target, p.text) for p in query.edge_predicates)
    # A position template (OR, AND, a type at several places) is never shared, even with an equal one:
    # ``workload.sharing_obstacle`` (and AND's algebra is no other query's).
    alone = query.name if query.states is not None else None
    return query.pattern.key(), match_key(query), edges, query.semantics, alone


def merge_obstacle(query: AnalyzedQuery) -> str | None:
    """Why the query's graph is never merged with others that share every position but the end (None: it
    may be). A merged template gives each member its own end position and shares everything before it, so
    the end must be a single type that nothing follows, and nothing may make the shared positions differ
    per query or read the end's position in a way the merge does not keep apart."""
    if query.states is not None:
        return "position states (a type at several places, P{n,}, OR or AND: dissertation §12)"
    if query.optional:
        return "an optional part (P? or P*): several start or end types"
    if query.pattern.negations:
        return "a NOT (its place in the pattern is per query)"
    if query.edge_predicates:
        return "an edge predicate"
    if query.semantics != "ANY":
        return f"SEMANTICS {query.semantics} (edges depend on every position of the pattern)"
    template = query.pattern.template
    end = template.end
    if end in template.starts:
        return "the pattern is one type: no position before its end"
    if any(t.source == end for t in template.transitions):
        return f"the end type {end} is under a Kleene plus (its events lead on to others)"
    return None


def prefix_key(query: AnalyzedQuery) -> tuple | None:
    """Queries with equal keys share every position but the end: the same types, transitions (those into
    the end by their sources) and local predicates before it. Their graph groups (``graph_key``) with
    distinct ends share one graph of their merged template (``merged_groups``); None: ``merge_obstacle``."""
    if merge_obstacle(query) is not None:
        return None
    template = query.pattern.template
    end = template.end
    transitions = frozenset(
        (t.source, None if t.target == end else t.target, t.label) for t in template.transitions
    )
    predicates = frozenset((p.event_type, p.text) for p in query.local_predicates if p.event_type != end)
    return tuple(t for t in template.types if t != end), template.starts, transitions, predicates


def merged_groups(groups: Sequence[Sequence[AnalyzedQuery]]) -> list[list[Sequence[AnalyzedQuery]]]:
    """Graph groups (queries of one ``graph_key`` each) by the graph they run on: groups with equal
    ``prefix_key``s and distinct end types on one merged template (an end type twice, e.g. under two
    predicates, would be two positions of one type: the later group starts another), the others alone."""
    out: list[list[Sequence[AnalyzedQuery]]] = []
    merged: dict[tuple, list[int]] = {}  # prefix key → the indexes in ``out`` of its merged graphs
    for members in groups:
        key = prefix_key(members[0])
        if key is None:
            out.append([members])
            continue
        end = members[0].pattern.template.end
        places = merged.setdefault(key, [])
        place = next((i for i in places if all(g[0].pattern.template.end != end for g in out[i])), None)
        if place is None:
            places.append(len(out))
            out.append([members])
        else:
            out[place].append(members)
    return out


def match_key_of(queries: Sequence[AnalyzedQuery]) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The ``match_key`` of the events a graph of ``queries`` reads (on a merged template, the union of
    theirs: they agree on the shared positions, and each end type is one query's)."""
    keys = [match_key(q) for q in queries]
    return frozenset().union(*(k[0] for k in keys)), frozenset().union(*(k[1] for k in keys))


LocalTests = dict[str, tuple[Callable[[Event], Any], ...]]


def merged_tests(queries: Sequence[AnalyzedQuery]) -> LocalTests:
    """``local_tests`` of the events a graph of ``queries`` reads: per type, those of the first query that
    reads it (``match_key_of``: the others that read it test it alike)."""
    tests: LocalTests = {}
    for query in queries:
        for t, found in local_tests(query).items():
            tests.setdefault(t, found)
    return tests


def local_tests(query: AnalyzedQuery) -> LocalTests:
    """Per type the query reads, the tests of its local predicates (what ``matched_events`` applies)."""
    tests: dict[str, list] = {t: [] for t in query.types}
    for predicate in query.local_predicates:
        tests[predicate.event_type].append(predicate.test)
    return {t: tuple(ts) for t, ts in tests.items()}


class _Everything(Container[str]):
    """The set of every event type."""

    def __contains__(self, item: object) -> bool:
        return True


def matched_events(
    query: AnalyzedQuery, events: Iterable[Event], tests: LocalTests | None = None
) -> list[Event]:
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
    """The GROUP-BY values of a partition of ``partition_stream`` (its ``key``)."""
    values = dict(zip(attributes, group_values(key)))
    return {a: values[a] for a in query.group_by}
