"""A workload: its analysed queries, the merged HAMLET template and the sharable query sets (HAMLET §3.1).

* Sharable Kleene sub-pattern (Definition 3.1): a Kleene sub-pattern that appears in more than one query.
* Sharable queries (Definition 3.2): their patterns contain a common sharable Kleene sub-pattern, their
  aggregates can be shared, their windows overlap, and they partition the stream alike. Windows here are
  periodic and aligned to time 0, so any two overlap. Aggregates: COUNT(*), COUNT(E), SUM and AVG propagate
  linearly and share freely; MIN and MAX do not, so queries share only when they ask the same MIN/MAX.
  Grouping: the executor shares a graph per stream partition, so queries must partition alike (the same
  GROUP-BY ∪ equivalence attributes).
* Sharable query sets: the connected components of "sharable"; a query sharable with none is alone.
* Merged template: each event type once, each transition labelled with the queries it holds for.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from hamlet.analysis.query import AnalyzedQuery, analyze_query
from hamlet.analysis.template import Label
from hamlet.analysis.windows import pane_size
from hamlet.errors import LINE_BREAK, HamletError, QueryError, not_utf8_by_its_bom, regular_file
from hamlet.language.parser import parse_workload_text


@dataclass(frozen=True)
class MergedTransition:
    source: str
    target: str
    label: Label
    queries: tuple[str, ...]


@dataclass(frozen=True)
class MergedTemplate:
    types: tuple[str, ...]
    transitions: tuple[MergedTransition, ...]
    start: dict[str, tuple[str, ...]]  # type → queries it starts
    end: dict[str, tuple[str, ...]]  # type → queries it ends


@dataclass(frozen=True)
class SharableQuerySet:
    queries: tuple[str, ...]
    kleene_subpatterns: dict[str, tuple[str, ...]]  # sharable Kleene sub-pattern → its queries in this set
    partition_attributes: tuple[str, ...]
    pane: Fraction


@dataclass(frozen=True)
class Workload:
    queries: tuple[AnalyzedQuery, ...]
    source: str

    def query(self, name: str) -> AnalyzedQuery:
        return self._by_name[name]  # (KeyError for a name not in the workload)

    @cached_property
    def _by_name(self) -> dict[str, AnalyzedQuery]:
        return {q.name: q for q in self.queries}

    @property
    def pane(self) -> Fraction:
        return pane_size([d for q in self.queries for d in (q.window.within, q.window.slide)])

    def merged_template(self) -> MergedTemplate:
        types: dict[str, None] = {}
        labels: dict[tuple[str, str, str], list[str]] = {}
        start: dict[str, list[str]] = {}
        end: dict[str, list[str]] = {}
        for q in self.queries:
            template = q.pattern.template
            types.update(dict.fromkeys(template.types))
            for t in template.transitions:
                labels.setdefault((t.source, t.target, t.label), []).append(q.name)
            for name in template.starts:
                start.setdefault(name, []).append(q.name)
            for name in template.ends:
                end.setdefault(name, []).append(q.name)
        transitions = tuple(MergedTransition(s, t, label, tuple(qs)) for (s, t, label), qs in labels.items())  # type: ignore[arg-type]
        return MergedTemplate(
            tuple(types),
            transitions,
            {k: tuple(v) for k, v in start.items()},
            {k: tuple(v) for k, v in end.items()},
        )

    def sharable_kleene_subpatterns(self) -> dict[str, tuple[str, ...]]:
        """Definition 3.1: Kleene sub-pattern → the queries containing it, for those in two or more."""
        found: dict[str, list[str]] = {}
        for q in self.queries:
            for k in q.kleene_subpatterns:
                found.setdefault(k, []).append(q.name)
        return {k: tuple(qs) for k, qs in found.items() if len(qs) > 1}

    def sharable(self, a: AnalyzedQuery, b: AnalyzedQuery) -> bool:
        """Definition 3.2 (skip-till-any-match queries only: ``sharing_obstacle``)."""
        if sharing_obstacle(a) is not None or sharing_obstacle(b) is not None:
            return False
        return _sharing_signature(a) == _sharing_signature(b) and bool(
            set(a.kleene_subpatterns) & set(b.kleene_subpatterns)
        )

    def sharable_query_sets(self) -> tuple[SharableQuerySet, ...]:
        """The workload's sharable query sets (Definition 3.2, transitively), computed once: the workload is
        immutable, and every evaluation of it asks."""
        return self._sharable_query_sets

    @cached_property
    def _sharable_query_sets(self) -> tuple[SharableQuerySet, ...]:
        parent = {q.name: q.name for q in self.queries}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        # Two queries share when ``sharable`` says so: joined through the first query seen with each
        # (signature, Kleene sub-pattern), in one pass (over every pair, 6,000 queries held 18M pairs).
        first: dict[tuple, str] = {}
        for q in self.queries:
            if sharing_obstacle(q) is not None:
                continue
            signature = _sharing_signature(q)
            for k in dict.fromkeys(q.kleene_subpatterns):
                other = first.setdefault((signature, k), q.name)
                if other != q.name:
                    parent[find(q.name)] = find(other)
        members: dict[str, list[AnalyzedQuery]] = {}
        for q in self.queries:
            members.setdefault(find(q.name), []).append(q)
        # Per set, its queries of each sharable Kleene sub-pattern (in one pass over them all).
        shared: dict[str, dict[str, list[str]]] = {}
        for k, names in self.sharable_kleene_subpatterns().items():
            for name in names:
                shared.setdefault(find(name), {}).setdefault(k, []).append(name)
        return tuple(
            SharableQuerySet(
                queries=tuple(q.name for q in qs),
                kleene_subpatterns={k: tuple(v) for k, v in shared.get(root, {}).items() if len(v) > 1},
                partition_attributes=qs[0].partition_attributes,
                pane=pane_size([d for q in qs for d in (q.window.within, q.window.slide)]),
            )
            for root, qs in members.items()
        )


def sharing_obstacle(q: AnalyzedQuery) -> str | None:
    """Why ``q`` shares no Kleene sub-pattern with any query, or None. HAMLET's graphlets (Definition 3.2)
    sum every predecessor event of a shared type; under skip-till-next-match or contiguous semantics a
    query keeps only some of those edges (the ones no longer path of its own graph bypasses, or those
    with no event between), and which ones depends on the whole pattern and sub-stream of that query: no
    analysis here proves two such queries keep the same edges, so they run alone."""
    if q.semantics != "ANY":
        long = {"NEXT": "skip-till-next-match", "CONT": "contiguous"}[q.semantics]
        return f"SEMANTICS {long}: its edges depend on the query's whole pattern (only skip-till-any-match queries share)"
    if q.states is not None:
        # (a graphlet sums a shared type's events; here one event stands at several states, and which trends
        # a state ends depends on the whole pattern, so no analysis proves two queries' graphs equal)
        return "position states (a type at several places, P{n,}, OR or AND): its graph is its own"
    if q.optional:
        # (the shared executors assume one start and one end type per pattern, GRETA Theorem 4.1, and that
        # every trend holds each type of the pattern)
        return "an optional part (P? or P*): the shared executors take patterns without one"
    return None


def _sharing_signature(q: AnalyzedQuery) -> tuple[frozenset, frozenset[str]]:
    """What two sharable queries have in common besides a Kleene sub-pattern: their MIN/MAX aggregates and
    their partition attributes (computed once per query: the test runs for every pair)."""
    extremes = frozenset(
        (a.function, a.event_type, a.attribute) for a in q.aggregates if a.function in ("MIN", "MAX")
    )
    return extremes, frozenset(q.partition_attributes)


# Every event belongs to ceil(WITHIN / SLIDE) windows, and the engine keeps state per window an event is in:
# WITHIN 1000000 h SLIDE 1 s would put each event in 3.6e9 windows. A workload asking for more than this
# many per event is refused where its SLIDE is written (parse_workload's max_windows_per_event, the
# commands' --max-windows-per-event). 10,000 admits e.g. WITHIN 1 d SLIDE 10 s or WITHIN 1 h SLIDE 1 s.
MAX_WINDOWS_PER_EVENT = 10_000
MAX_WORKLOAD_BYTES = 1 << 20  # a workload file is read whole: bounded, so /dev/zero cannot fill memory


def parse_workload(text: str, max_windows_per_event: int | None = MAX_WINDOWS_PER_EVENT) -> Workload:
    """Parse and analyse a workload; raises QueryError (with query, line and column) on any problem,
    including a query whose windows hold an event more than ``max_windows_per_event`` times (None: no
    bound, for code that evaluates a workload checked already)."""
    if not isinstance(text, str):
        raise HamletError(f"a workload is text (str), not {type(text).__name__}")
    syntax = parse_workload_text(text)
    queries = tuple(analyze_query(q, text) for q in syntax.queries)
    if max_windows_per_event is not None:
        for query in queries:
            _check_windows_per_event(query, max_windows_per_event, text)
    return Workload(queries, text)


def _check_windows_per_event(query: AnalyzedQuery, limit: int, source: str) -> None:
    count = query.window.per_event()
    if count <= limit or query.syntax is None:
        return
    where = query.syntax.slide or query.syntax.within
    window = query.syntax.within.text + (f" SLIDE {query.syntax.slide.text}" if query.syntax.slide else "")
    raise QueryError(
        f"WITHIN {window} puts every event in {count} windows; at most {limit} (--max-windows-per-event)",
        line=where.line, column=where.column, query=query.name, expected=f"at most {limit} windows per event",
        source=source,
    )  # fmt: skip


def load_workload_file(path: str, max_windows_per_event: int | None = MAX_WINDOWS_PER_EVENT) -> Workload:
    """``parse_workload`` on a file; any problem is a HamletError that names ``path:line:column``, the
    query and what is wrong, with the offending line and a caret under the column."""
    regular_file(path, "workload")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_WORKLOAD_BYTES + 1)
    except OSError as e:
        raise HamletError(f"cannot read workload {path}: {e.strerror}") from None
    if len(data) > MAX_WORKLOAD_BYTES:
        raise HamletError(f"cannot read workload {path}: larger than {MAX_WORKLOAD_BYTES >> 20} MiB (a workload is "
                          "queries, a few hundred bytes each)")  # fmt: skip
    try:
        text = data.decode("utf-8-sig")  # a byte order mark is not part of the text
    except UnicodeDecodeError as e:
        # Line and column as the lexer counts them: lines end at CR, LF or CRLF, columns are characters of
        # the decoded text. (e.object is the data after a byte order mark, e.start the bad byte in it; what
        # comes before it decodes.)
        foreign = not_utf8_by_its_bom(data)
        if foreign:
            raise HamletError(f"{path}:1:1: {foreign}") from None
        lines = LINE_BREAK.split(e.object[: e.start].decode("utf-8"))
        line, column = len(lines), len(lines[-1]) + 1
        raise HamletError(f"{path}:{line}:{column}: byte 0x{e.object[e.start]:02x} is not UTF-8 (workloads are "
                          "UTF-8 text)") from None  # fmt: skip
    try:
        return parse_workload(text, max_windows_per_event)
    except QueryError as e:
        raise HamletError(located(path, e)) from None


def located(path: str, error: QueryError) -> str:
    """``path:line:column: query 'q': message``, then the offending line with a caret under the column."""
    query = f"query {error.query!r}: " if error.query else ""
    excerpt = error.excerpt()
    return f"{path}:{error.line}:{error.column}: {query}{error.message}" + (f"\n{excerpt}" if excerpt else "")


__all__ = [
    "MergedTemplate",
    "QueryError",
    "SharableQuerySet",
    "Workload",
    "load_workload_file",
    "located",
    "parse_workload",
]
