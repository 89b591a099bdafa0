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
from pathlib import Path

from hamlet.analysis.query import AnalyzedQuery, analyze_query
from hamlet.analysis.template import Label
from hamlet.analysis.windows import pane_size
from hamlet.errors import HamletError, QueryError
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
        for q in self.queries:
            if q.name == name:
                return q
        raise KeyError(name)

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
            start.setdefault(template.start, []).append(q.name)
            end.setdefault(template.end, []).append(q.name)
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
        """Definition 3.2."""
        common = set(a.kleene_subpatterns) & set(b.kleene_subpatterns)
        return (
            bool(common)
            and _extremes(a) == _extremes(b)
            and set(a.partition_attributes) == set(b.partition_attributes)
        )

    def sharable_query_sets(self) -> tuple[SharableQuerySet, ...]:
        parent = {q.name: q.name for q in self.queries}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for i, a in enumerate(self.queries):
            for b in self.queries[i + 1 :]:
                if self.sharable(a, b):
                    parent[find(b.name)] = find(a.name)
        members: dict[str, list[AnalyzedQuery]] = {}
        for q in self.queries:
            members.setdefault(find(q.name), []).append(q)
        sets = []
        for qs in members.values():
            names = {q.name for q in qs}
            shared = {
                k: tuple(n for n in v if n in names) for k, v in self.sharable_kleene_subpatterns().items()
            }
            sets.append(
                SharableQuerySet(
                    queries=tuple(q.name for q in qs),
                    kleene_subpatterns={k: v for k, v in shared.items() if len(v) > 1},
                    partition_attributes=qs[0].partition_attributes,
                    pane=pane_size([d for q in qs for d in (q.window.within, q.window.slide)]),
                )
            )
        return tuple(sets)


def _extremes(q: AnalyzedQuery) -> frozenset[tuple[str, str | None, str | None]]:
    return frozenset(
        (a.function, a.event_type, a.attribute) for a in q.aggregates if a.function in ("MIN", "MAX")
    )


def parse_workload(text: str) -> Workload:
    """Parse and analyse a workload; raises QueryError (with query, line and column) on any problem."""
    syntax = parse_workload_text(text)
    return Workload(tuple(analyze_query(q, text) for q in syntax.queries), text)


def load_workload_file(path: str) -> Workload:
    """``parse_workload`` on a file; any problem is a HamletError that names ``path:line:column``, the
    query and what is wrong, with the offending line and a caret under the column."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise HamletError(f"cannot read workload {path}: {e.strerror}") from None
    try:
        return parse_workload(text)
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
