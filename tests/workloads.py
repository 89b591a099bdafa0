"""Hypothesis strategies for random small workloads and streams (property tests of every strategy)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pyarrow as pa
from hypothesis import settings
from hypothesis import strategies as st

from hamlet import Event, parse_workload
from hamlet.analysis.query import AnalyzedQuery
from hamlet.errors import QueryError

TYPES = "ABCDEF"


@st.composite
def patterns(draw, pool: list[str], depth: int = 0, top: bool = True, nots: bool = True) -> str:
    """A valid pattern over distinct types from ``pool`` (consumed): nesting, Kleene, NOT in every place
    (none unless ``nots``)."""
    kind = draw(
        st.sampled_from(["type", "kleene", "seq"] if depth < 2 and len(pool) >= 3 else ["type", "kleene"])
    )
    if kind == "type":
        return pool.pop()
    if kind == "kleene":
        inner = draw(patterns(pool, depth + 1, False, nots)) if depth < 1 and len(pool) >= 3 and draw(
            st.booleans()) else pool.pop()  # fmt: skip
        return f"{inner}+" if len(inner) == 1 else f"({inner})+"
    items = [draw(patterns(pool, depth + 1, False, nots))]
    while len(pool) >= 1 and len(items) < 3 and (len(items) < 2 or draw(st.booleans())):
        items.append(draw(patterns(pool, depth + 1, False, nots)))
    if len(items) == 1:
        return items[0]
    parts = []
    for i, item in enumerate(items):
        if nots and i and pool and draw(st.integers(0, 3)) == 0:
            parts.extend(draw(side_by_side(pool)))
        parts.append(item)
    if nots and top and pool and draw(st.integers(0, 3)) == 0:
        parts[:0] = draw(side_by_side(pool))
    if nots and top and pool and draw(st.integers(0, 3)) == 0:
        parts.extend(draw(side_by_side(pool)))
    return "SEQ(" + ", ".join(parts) + ")"


@st.composite
def side_by_side(draw, pool: list[str]) -> list[str]:
    """One NOT, or now and then two side by side (``SEQ(A, NOT C, NOT D, B)``: both hold between A and B)."""
    nots = ["NOT " + draw(negated(pool))]
    if pool and draw(st.integers(0, 3)) == 0:
        nots.append("NOT " + draw(negated(pool)))
    return nots


@st.composite
def negated(draw, pool: list[str]) -> str:
    """What follows a NOT: a type, a Kleene type, a sequence, or a sequence with a nested NOT."""
    if len(pool) >= 3 and draw(st.integers(0, 3)) == 0:
        c, e, d = pool.pop(), pool.pop(), pool.pop()
        return f"SEQ({c}, NOT {e}, {d})"
    if len(pool) >= 2 and draw(st.booleans()):
        c, d = pool.pop(), pool.pop()
        return f"SEQ({c}, {d}+)" if draw(st.booleans()) else f"SEQ({c}, {d})"
    t = pool.pop()
    return f"{t}+" if draw(st.booleans()) else t


NEGATION_SHAPES = [
    "SEQ(A+, NOT E)", "SEQ(NOT E, A+)", "SEQ(NOT E, A, B+, NOT C)", "(SEQ(A+, NOT SEQ(C, NOT E, D), B))+",
    "SEQ(A, NOT C, B+)", "SEQ(A+, NOT SEQ(C, D+), B)", "(SEQ(A, NOT C, B))+", "SEQ(A, NOT C+, B, NOT D, E+)",
    "SEQ(NOT SEQ(C, D), A+)", "SEQ((SEQ(A, B))+, NOT SEQ(C, NOT E, D))", "SEQ(A+, NOT SEQ(C?, D), B)",
    "SEQ(NOT SEQ(C, D*), A+, NOT SEQ(E?, B))", "SEQ(A, NOT A, B+)", "SEQ(A+, NOT C, B, NOT C, D)",
    "SEQ(NOT B, A+, B, NOT A)", "(SEQ(A, NOT B, B))+", "SEQ(A, NOT SEQ(C, C), B+)", "SEQ(A+, NOT C{2,})",
    "SEQ(NOT SEQ(B, A+, B), A+, B)", "SEQ(A, NOT SEQ(C, NOT B, C), B+)", "SEQ(A, NOT C, NOT D, B+)",
    "SEQ(NOT C, NOT SEQ(D, E), A+)", "SEQ(A+, B, NOT C, NOT D+)", "(SEQ(A, NOT C, NOT SEQ(D, NOT E, D), B))+",
    "SEQ(A+, NOT A, NOT C, B)",
]  # fmt: skip


@st.composite
def negation_patterns(draw) -> str:
    """A shape with NOT in it, its letters renamed at random."""
    shape = draw(st.sampled_from(NEGATION_SHAPES))
    renaming = dict(zip("ABCDE", draw(st.permutations(TYPES))))
    return re.sub(r"\b[A-E]\b", lambda m: renaming[m.group()], shape)


@st.composite
def kernel_patterns(draw) -> str:
    """Patterns of the graphs the compiled kernel takes (hamlet.runtime.native): NOT only at the end, of
    one type."""
    pool = list(draw(st.permutations(TYPES)))
    pattern = draw(patterns(pool, nots=False))
    if pool and draw(st.booleans()):
        pattern = f"SEQ({pattern}, NOT {pool.pop()})"
    return pattern


# How a query partitions the stream: (its equivalence attributes, its GROUP-BY attributes).
Partitioning = tuple[tuple[str, ...], tuple[str, ...]]


@st.composite
def queries(draw, name: str, negation: bool = False, kernel: bool = False, pattern: str | None = None,
            partition: Partitioning | None = None, extreme: str | None = None,
            window: tuple[int, int] | None = None, predicates: list[str] | None = None) -> str:  # fmt: skip
    """``kernel``: a query the compiled kernel takes (``kernel_patterns``, no edge predicates). The others
    fix what is otherwise drawn: ``pattern``; ``partition``; ``extreme``, the query's only MIN/MAX
    aggregate ("" for none: queries share only when they ask the same, ``Workload.sharable``); ``window``
    (WITHIN, SLIDE); ``predicates``, the conjuncts of WHERE besides the equivalence list. A pattern
    ``P AND Q`` returns COUNT(*) only (the one aggregate a conjunction defines)."""
    if pattern is not None:
        pass
    elif kernel:
        pattern = draw(kernel_patterns())
    else:
        pattern = (
            draw(negation_patterns()) if negation else draw(patterns(list(draw(st.permutations(TYPES)))))
        )
    positive = list(probe(pattern).pattern.template.types)
    returns = ["COUNT(*)"]
    for _ in range(draw(st.integers(0, 3)) if " AND " not in pattern else 0):
        t = draw(st.sampled_from(positive))
        functions = [f"COUNT({t})", f"SUM({t}.x)", f"AVG({t}.x)"]
        if extreme is None:
            functions += [f"MIN({t}.x)", f"MAX({t}.x)"]
        returns.append(draw(st.sampled_from(functions)))
    if extreme:
        returns.append(extreme)
    returns = list(dict.fromkeys(returns))
    if partition is None:
        partition = (("k",) if draw(st.booleans()) else (), ("g",) if draw(st.booleans()) else ())
    equivalence, grouped = partition
    where = [f"[{', '.join(equivalence)}]"] if equivalence else []
    where += draw(conditions(pattern, edges=not kernel)) if predicates is None else predicates
    group = ""
    if grouped:
        group = f" GROUP-BY {', '.join(grouped)}"
        returns[:0] = grouped
    within, slide = draw(windows()) if window is None else window
    return (f"{name}: RETURN {', '.join(returns)} PATTERN {pattern}"
            + (f" WHERE {' AND '.join(where)}" if where else "") + f"{group} WITHIN {within} SLIDE {slide}")  # fmt: skip


def probe(pattern: str) -> AnalyzedQuery:
    """The pattern analysed (its types, templates and negations)."""
    return parse_workload(f"q: RETURN COUNT(*) PATTERN {pattern} WITHIN 1").queries[0]


def local_menu(t: str) -> list[str]:
    """Local predicates on type ``t``."""
    return [f"{t}.x < 3", f"({t}.x % 2 = 0 OR {t}.y > 1)", f"{t}.s = u", f"{t}.x + 1 >= {t}.y"]


def edge_menu(x: str, y: str) -> list[str]:
    """Edge predicates on the transition from ``x`` to ``y``."""
    return [
        f"{x}.x < NEXT({y}).x", f"{x}.x >= NEXT({y}).x", f"NEXT({y}).y = {x}.y", f"{x}.x + NEXT({y}).y > 3",
        f"{x}.x * 2 <= NEXT({y}).x + 1", f"{x}.x > NEXT({y}).y", f"NEXT({y}).x < {x}.y", f"{x}.x != NEXT({y}).x",
    ]  # fmt: skip


@st.composite
def conditions(draw, pattern: str, edges: bool = True, local: Callable[[str], list[str]] = local_menu,
               edge: Callable[[str, str], list[str]] = edge_menu) -> list[str]:  # fmt: skip
    """Up to two local predicates on any type of ``pattern`` (negated ones too) and, with ``edges``, up to
    two edge predicates on any transition, of its negative sub-patterns too (drawn from ``local`` and
    ``edge``)."""
    query = probe(pattern)
    out = []
    for _ in range(draw(st.integers(0, 2))):
        out.append(draw(st.sampled_from(local(draw(st.sampled_from(query.types))))))
    transitions = [(part.places.get(tr.source, tr.source), part.places.get(tr.target, tr.target))
                   for part in query.pattern.walk() for tr in part.template.transitions]  # fmt: skip
    for _ in range(draw(st.integers(0, 2)) if transitions and edges else 0):
        source, target = draw(st.sampled_from(transitions))
        out.append(draw(st.sampled_from(edge(source, target))))
    return out


@st.composite
def windows(draw) -> tuple[int, int]:
    """(WITHIN, SLIDE): tumbling, sliding, or with gaps between windows."""
    within = draw(st.integers(3, 16))
    slides = [within, within, max(1, within // 2), max(1, within // 3), within + 2]
    return within, draw(st.sampled_from(slides))


@st.composite
def workloads(draw, max_queries: int = 3, negation: bool = False, kernel: bool = False) -> str:
    count = draw(st.integers(1, max_queries))
    return "\n".join(draw(queries(f"q{i}", negation, kernel)) for i in range(count))


@st.composite
def events(draw, types: str = TYPES + "Z", max_events: int = 12, min_events: int = 0) -> list[Event]:
    """Times in 0..14 with repeats; x, y small ints (sometimes null, sometimes float); g, k two values.

    ``types`` is a pool to draw from: repeat a type to make it more frequent."""
    n = draw(st.integers(min_events, max_events))
    times = sorted(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
    return [Event(draw(st.sampled_from(types)), t, draw(attributes())) for t in times]


@st.composite
def attributes(draw, floats: bool = True) -> dict:
    """x, y small ints (x sometimes null, with ``floats`` sometimes float); s two strings; g, k two values (g
    seldom null)."""
    value = st.one_of(st.integers(0, 4), st.none(), *([st.sampled_from([0.5, 2.25])] if floats else []))
    return {
        "x": draw(value), "y": draw(st.integers(0, 3)), "s": draw(st.sampled_from(["u", "v"])),
        "g": draw(st.sampled_from([1, 2, None])) if draw(st.integers(0, 5)) == 0 else draw(st.sampled_from([1, 2])),
        "k": draw(st.sampled_from(["p", "q"])),
    }  # fmt: skip


def table_of(stream: list[Event]) -> pa.Table:
    """A stream as the Spark job hands it to the engine: type, a timestamp (seconds), attribute columns (the
    generators' x, y, s, g, k, then any other the stream's events hold)."""
    names = ["x", "y", "s", "g", "k"]
    names += sorted({a for e in stream for a in e.attributes} - set(names))
    columns = {
        "event_type": pa.array([e.type for e in stream], pa.string()),
        "event_time": pa.array([round(e.time * 1_000_000) for e in stream], pa.int64()).cast(
            pa.timestamp("us", "UTC")
        ),
    }
    for name in names:
        columns[name] = pa.array([e.attributes.get(name) for e in stream])
    return pa.table(columns)


def typed(event: Event) -> tuple:
    return event.type, event.time, sorted((k, type(v).__name__, v) for k, v in event.attributes.items())


def types_of(text: str, every: int = 1) -> str:
    """The workload's types, positive ones three times over and all ``every`` times more, plus a type no
    query reads."""
    workload = parse_workload(text)
    positive = "".join(t for q in workload.queries for t in q.pattern.template.types)
    return positive * 3 + "".join(t for q in workload.queries for t in q.types) * every + "Z"


@st.composite
def graph_sharing_workloads(draw) -> str:
    """A random query (negation included) and 1–3 siblings with the same pattern and WHERE clause but other
    windows and aggregates: they share one trend graph per partition (``hamlet.runtime.partition.graph_key``)."""
    first = draw(queries("q0", negation=draw(st.booleans())))
    m = re.fullmatch(
        r"q0: RETURN (.*?) PATTERN (.*?)((?: WHERE .*?)?(?: GROUP-BY g)?) WITHIN \d+ SLIDE \d+", first
    )
    assert m is not None, first
    pattern, clauses = m.group(2), m.group(3)
    positive = list(parse_workload(first).queries[0].pattern.template.types)
    out = [first]
    for i in range(1, draw(st.integers(2, 4))):
        t = draw(st.sampled_from(positive))
        returns = draw(
            st.sampled_from(
                ["COUNT(*)", f"COUNT(*), COUNT({t})", f"SUM({t}.x), MAX({t}.x)", f"AVG({t}.x)", f"MIN({t}.y)"]
            )
        )
        if "GROUP-BY" in clauses:
            returns = "g, " + returns
        within = draw(st.integers(2, 16))
        slide = draw(st.sampled_from([within, max(1, within // 2), max(1, within // 4), within + 1]))
        out.append(f"q{i}: RETURN {returns} PATTERN {pattern}{clauses} WITHIN {within} SLIDE {slide}")
    return "\n".join(out)


SHARED_SHAPES = [
    "SEQ(P, B+)", "SEQ(P, B+, Q)", "SEQ(B+, P)", "SEQ(NOT N, P, B+)", "SEQ(P, B+, NOT N)", "SEQ(P, NOT N, B+)",
    "B+", "(SEQ(P, B+))+", "SEQ(P+, B+)",
]  # fmt: skip


@st.composite
def sharing_workloads(draw) -> str:
    """2–4 queries around a shared B+ with differing other types, local predicates on B, windows and
    negation; all partitioned alike (sometimes by k, sometimes grouped by g), mostly COUNT(*)."""
    partition = draw(st.sampled_from(["", " WHERE [k]", " GROUP-BY g", " WHERE [k] GROUP-BY g"]))
    queries = []
    for i in range(draw(st.integers(2, 4))):
        shape = draw(st.sampled_from(SHARED_SHAPES))
        p, q, n = draw(st.permutations("ACDEF"))[:3]
        names = {"P": p, "Q": q, "N": n}
        pattern = re.sub(r"\b[PQN]\b", lambda m, names=names: names[m.group()], shape)
        predicates = []
        if draw(st.integers(0, 2)) == 0:
            predicates.append(draw(st.sampled_from(["B.x < 3", "B.x % 2 = 0", "B.y > 0", "B.x >= 1"])))
        if draw(st.integers(0, 4)) == 0:
            edges = ["B.x < NEXT(B).x"] + (
                [f"{p}.x <= NEXT(B).y"] if shape not in ("B+", "SEQ(B+, P)") else []
            )
            predicates.append(draw(st.sampled_from(edges)))
        where = " WHERE [k]" if "WHERE" in partition else ""
        group = " GROUP-BY g" if "GROUP-BY" in partition else ""
        if predicates:
            where = (where + " AND " if where else " WHERE ") + " AND ".join(predicates)
        returns = ("g, " if group else "") + draw(st.sampled_from(["COUNT(*)"] * 4 + ["COUNT(*), SUM(B.x)"]))
        within = draw(st.sampled_from([4, 6, 8, 15]))
        slide = draw(st.sampled_from([within, within // 2]))
        queries.append(
            f"q{i}: RETURN {returns} PATTERN {pattern}{where}{group} WITHIN {within} SLIDE {slide}"
        )
    return "\n".join(queries)


@st.composite
def bursty_events(draw, types: str = "ABCDEF", max_runs: int = 7, max_events: int | None = None,
                  min_runs: int = 0, values: st.SearchStrategy[dict] | None = None) -> list[Event]:  # fmt: skip
    """Runs of one type (bursts), mostly B, at increasing times, sometimes sharing a timestamp; at most
    ``max_events`` (the oracle is exponential in the events of a partition and window); each event's
    attributes drawn from ``values`` (default ``attributes()``)."""
    values = attributes() if values is None else values
    out: list[Event] = []
    t = 0
    for _ in range(draw(st.integers(min_runs, max_runs))):
        event_type = draw(st.sampled_from("BBB" + types))
        for _ in range(draw(st.integers(1, 4))):
            if max_events is not None and len(out) == max_events:
                return out
            t += draw(st.sampled_from([0, 1, 1, 1, 2]))
            out.append(Event(event_type, t, draw(values)))
    return out


def examples(ci: int) -> settings:
    """A costly property's examples: ``ci`` under CI's profile, where 500 would take too long; the profile's
    own count elsewhere, so a developer's quick loop stays quick and a bug hunt (``deep``) draws its 3,000."""
    return settings(max_examples=ci) if settings.get_current_profile_name() == "ci" else settings()


# Kleene sub-patterns that the queries of a multi-query workload share (over B, C, D; B+ most often, as its
# bursts are what the shared strategies share).
SHARED_CORES = ["B+"] * 5 + ["(SEQ(B, C))+", "(SEQ(B+, C))+", "(SEQ(B, NOT D, C))+"]
PARTITION_ATTRIBUTES = [(), ("k",), ("g",), ("g", "k")]


@st.composite
def partitionings(draw, attributes: tuple[str, ...]) -> Partitioning:
    """A query partitioned by ``attributes``: some grouped by, the others (and sometimes a grouping one too)
    in its equivalence list, in any order. Queries partitioned alike share (``Workload.sharable``) whatever
    they group by; each sums its partitions into its own groups."""
    grouped = tuple(draw(st.permutations([a for a in attributes if draw(st.booleans())])))
    equivalence = [a for a in attributes if a not in grouped or draw(st.integers(0, 3)) == 0]
    return tuple(draw(st.permutations(equivalence))), grouped


@st.composite
def sequences_around(draw, core: str, pool: list[str]) -> list[str]:
    """The positive items of a pattern around ``core``: an item from ``pool`` (consumed) before it, after it,
    both or neither. An item is mostly a type or a Kleene type, sometimes a pattern (``patterns``, nested,
    with its own NOTs): a query of four types or more seldom has a trend in a dozen events."""
    sides = draw(st.sampled_from(["", "before", "after", "before", "after", "both"]))
    items = [core]
    if pool and sides in ("before", "both"):
        items.insert(0, draw(context_item(pool)))
    if pool and sides in ("after", "both"):
        items.append(draw(context_item(pool)))
    return items


@st.composite
def context_item(draw, pool: list[str]) -> str:
    if draw(st.integers(0, 3)) == 0:
        return draw(patterns(pool, 1, False))
    t = pool.pop()
    return f"{t}+" if draw(st.booleans()) else t


def with_negation(items: list[str], negation: str | None, slot: int, kleene: bool) -> str:
    """``items`` in a SEQ with ``NOT negation`` before item ``slot`` (after the last for ``len(items)``):
    leading, middle or trailing. ``kleene``: the positive items under a Kleene plus, any NOT around it."""
    inner = list(items)
    if negation is not None and 0 < slot < len(items) and kleene:
        inner.insert(slot, f"NOT {negation}")
        negation = None  # in the middle, a NOT may stand inside the Kleene plus
    parts = [f"(SEQ({', '.join(inner)}))+"] if kleene and len(inner) > 1 else inner
    if negation is not None:
        position = 0 if slot == 0 else len(parts) if slot >= len(items) else slot
        parts.insert(position, f"NOT {negation}")
    return parts[0] if len(parts) == 1 else f"SEQ({', '.join(parts)})"


@st.composite
def pattern_around(draw, core: str, pool: list[str]) -> str:
    """A valid pattern that holds ``core`` (over types not in ``pool``) as a sub-pattern, with NOT leading,
    in the middle or trailing, and nested (``negated``), or none."""
    items = draw(sequences_around(core, pool))
    negation = draw(negated(pool)) if pool and draw(st.integers(0, 2)) else None
    slot = draw(st.integers(0, len(items)))
    return with_negation(items, negation, slot, len(items) > 1 and draw(st.integers(0, 4)) == 0)


@st.composite
def negation_siblings(draw, core: str, others: list[str], count: int) -> list[str]:
    """``count`` patterns with one positive part around ``core`` and one negated sub-pattern that stands
    first, between two items or last, as drawn for each: equal types, equal positive patterns."""
    pool = list(draw(st.permutations(others)))
    kept = [pool.pop()]  # a type for the NOT whatever the positive items take
    items = draw(sequences_around(core, pool))
    negation = draw(negated(kept + pool))
    kleene = len(items) > 1 and draw(st.integers(0, 4)) == 0
    slots = draw(st.lists(st.integers(0, len(items)), min_size=count, max_size=count))
    return [with_negation(items, negation, slot, kleene) for slot in slots]


@st.composite
def multi_query_workloads(draw) -> str:
    """2–5 queries that share a Kleene sub-pattern (``SHARED_CORES``), with NOT in every position, local and
    edge predicates, every aggregate, GROUP-BY and equivalence attributes, each its own window.

    Most workloads partition alike and ask one MIN/MAX (or none), so that their queries form one sharable
    set and the shared paths run; the others may fall into several sets. In half of them the queries are
    ``negation_siblings``, often with one set of predicates: they then read the same events, and only where
    the NOT stands tells their trend graphs apart (issue 16)."""
    core = draw(st.sampled_from(SHARED_CORES))
    core_types = set(parse_workload(f"q: RETURN COUNT(*) PATTERN {core} WITHIN 1").queries[0].types)
    # The types around the core come from a few for the whole workload: queries then read the same events
    # (a stream of a dozen events holds trends of most of them) and share more than the core.
    others = draw(st.permutations([t for t in TYPES + "GH" if t not in core_types]))
    others = others[: draw(st.integers(2, 4))]
    alike = draw(st.integers(0, 3)) > 0
    attributes = draw(st.sampled_from(PARTITION_ATTRIBUTES))
    extreme = draw(st.sampled_from(["", "", "MIN(B.x)", "MAX(B.y)"])) if alike else None
    count = draw(st.integers(2, 5))
    siblings = draw(st.booleans())
    if siblings:
        found = draw(negation_siblings(core, others, count))
    else:
        found = [draw(pattern_around(core, list(draw(st.permutations(others))))) for _ in range(count)]
    # Siblings of one WHERE read the same events: their graphs, shared but for the NOT, differ in nothing
    # else (each may still group by other attributes than the others, ``partitionings``).
    predicates = draw(conditions(found[0])) if siblings and draw(st.booleans()) else None
    partition = None
    # A few windows for the whole workload: queries of one window keep their COUNT(*) in one shape group's
    # columns (``shapes.py``), those of several share a graph (``partition.graph_key``).
    menu = draw(st.lists(windows(), min_size=1, max_size=3))
    out = []
    for i, pattern in enumerate(found):
        if alike:
            partition = draw(partitionings(attributes))
        window = draw(st.sampled_from(menu))
        out.append(draw(queries(f"q{i}", pattern=pattern, partition=partition, extreme=extreme, window=window,
                                predicates=predicates)))  # fmt: skip
    return "\n".join(out)


SEMANTICS_CLAUSES = ["", " SEMANTICS ANY", " SEMANTICS NEXT", " SEMANTICS CONT", " SEMANTICS skip-till-any-match",
                     " SEMANTICS skip-till-next-match", " SEMANTICS contiguous"]  # fmt: skip


@st.composite
def with_semantics(draw, text: str, weight_any: int = 1, clauses: list[str] = SEMANTICS_CLAUSES) -> str:
    """``text`` with a SEMANTICS clause (or none: skip-till-any-match) drawn for each query, written right
    after its pattern: workloads that mix the three semantics (dissertation §2.4). ``weight_any``: how much
    more often a query keeps skip-till-any-match (shared paths still run for those); ``clauses``: those to
    draw from, the first two skip-till-any-match. A pattern whose deterministic template gives a type more
    states than SEMANTICS NEXT allows (refused: tests/test_language_errors.py) keeps skip-till-any-match."""
    out = []
    for line in text.splitlines():
        clause = draw(st.sampled_from(clauses[:2] * weight_any + clauses[2:]))
        m = re.search(r" (WHERE|GROUP-BY|WITHIN) ", line)
        assert m is not None, line
        written = line[: m.start()] + clause + line[m.start() :]
        out.append(line if "NEXT" in clause.upper() and refuses_next(written) else written)
    return "\n".join(out)


def refuses_next(query: str) -> bool:
    """Whether the language refuses ``query`` for its SEMANTICS NEXT on too many template states."""
    try:
        parse_workload(query)
    except QueryError as error:
        return "SEMANTICS NEXT on a pattern whose type" in str(error)
    return False


@st.composite
def optional_patterns(draw) -> str:
    """A SEQ of 2-3 items (types, Kleene types, nested sequences, Kleene sequences) over distinct types, some
    items made optional with ``?`` or ``*`` (dissertation §12), at least one top-level item not: the pattern
    never matches the empty sequence."""
    pool = list(draw(st.permutations(TYPES)))

    def item(depth: int) -> str:
        kinds = ["type", "kleene", "seq"] if depth < 1 and len(pool) >= 4 else ["type", "kleene"]
        kind = draw(st.sampled_from(kinds))
        if kind == "type":
            text = pool.pop()
        elif kind == "kleene":
            text = pool.pop() + "+"
        else:
            text = f"SEQ({item(depth + 1)}, {item(depth + 1)})"
            if draw(st.booleans()):
                text = f"({text})+"
        return text + draw(st.sampled_from(["", "", "?", "*"]))

    items = [item(0) for _ in range(draw(st.integers(2, 3)))]
    keep = draw(st.integers(0, len(items) - 1))
    items[keep] = items[keep].rstrip("?*")  # one item that cannot be empty
    if items[keep].endswith(")") and not items[keep].endswith("+)"):
        pass
    pattern = "SEQ(" + ", ".join(items) + ")"
    from hamlet.analysis.template import nullable

    if nullable(probe_pattern(pattern)):  # (a nested SEQ of optional items can still be empty)
        items[keep] = pool.pop() if pool else "F"
        pattern = "SEQ(" + ", ".join(items) + ")"
    return pattern


def probe_pattern(pattern: str):
    """The pattern as parsed (before the analysis, which refuses an empty-matching one)."""
    from hamlet.language.parser import parse_workload_text

    return parse_workload_text(f"q: RETURN COUNT(*) PATTERN {pattern} WITHIN 1").queries[0].pattern


@st.composite
def position_patterns(draw) -> str:
    """Patterns on position templates (dissertation §12): types drawn from a pool of 2-3, so that a type
    stands at several places (``SEQ(A+, B, A)``, ``SEQ(A+, A+)``), minimal lengths ``P{n,}``, optional
    parts, and the disjunction (2-3 operands) or conjunction of such patterns; never empty."""
    pool = list(draw(st.permutations("ABC")))[: draw(st.integers(2, 3))]

    def item(depth: int) -> str:
        kind = draw(st.sampled_from(["type", "kleene", "minimal"] + (["seq"] if depth < 1 else [])))
        if kind == "seq":
            text = f"SEQ({item(depth + 1)}, {item(depth + 1)})"
            text = draw(st.sampled_from([text, f"({text})+", f"({text}){{2,}}"]))
        else:
            text = draw(st.sampled_from(pool))
            if kind == "kleene":
                text += "+"
            elif kind == "minimal":
                text += f"{{{draw(st.integers(1, 3))},}}"
        return text + draw(st.sampled_from(["", "", "", "?", "*"]))

    def operand() -> str:
        items = [item(0) for _ in range(draw(st.integers(1, 3)))]
        keep = draw(st.integers(0, len(items) - 1))
        items[keep] = items[keep].rstrip("?*")  # one item that cannot be empty
        text = items[0] if len(items) == 1 else "SEQ(" + ", ".join(items) + ")"
        from hamlet.analysis.template import nullable

        return text if not nullable(probe_pattern(text)) else draw(st.sampled_from(pool))

    op = draw(st.sampled_from(["", "", " OR ", " AND "]))
    if not op:
        return operand()
    count = 2 if op == " AND " else draw(st.integers(2, 3))
    return op.join(operand() for _ in range(count))


@st.composite
def position_queries(draw, name: str, kernel: bool = True) -> str:
    """A query on a ``position_patterns`` pattern, mostly over the whole stream in long windows and without
    predicates, so that trends are many (repeated types and P{n,} need several events of one type), under
    every semantics; ``kernel``: only queries the compiled kernel takes (no
    contiguous semantics with an edge predicate: ``native.kernel_obstacle``)."""
    partition = draw(st.sampled_from([((), ())] * 3 + [(("k",), ()), ((), ("g",)), (("k",), ("g",))]))
    window = draw(st.sampled_from([(15, 15), (16, 8), (10, 5), (6, 6)]))
    predicates = [] if draw(st.booleans()) else None
    text = draw(queries(name, pattern=draw(position_patterns()), partition=partition, window=window,
                        predicates=predicates))  # fmt: skip
    return text if kernel and "NEXT(" in text else position_semantics(draw, text)


def position_semantics(draw, text: str) -> str:
    """The query under one of ``POSITION_SEMANTICS``; under ANY where NEXT would give one type more than 64
    states (a refusal test_language_errors holds)."""
    chosen = draw(with_semantics(text, clauses=POSITION_SEMANTICS))
    return chosen if parses(chosen) else text


# Position templates run under every semantics (NEXT: dominance.py).
POSITION_SEMANTICS = [
    "",
    " SEMANTICS ANY",
    " SEMANTICS CONT",
    " SEMANTICS NEXT",
    " SEMANTICS skip-till-next-match",
]


@st.composite
def family_pattern(draw, family: str, types: str) -> str:
    """A pattern of one family of the language: ``nested`` Kleene and SEQ over a permutation of ``types``,
    ``negation``, ``optional`` parts, or ``position`` templates (a type at several places)."""
    if family == "nested":
        return draw(patterns(list(draw(st.permutations(types)))))
    families = {"negation": negation_patterns, "optional": optional_patterns, "position": position_patterns}
    return draw(families[family]())


@st.composite
def position_patterns_with_ends(draw) -> str:
    """A ``position_patterns`` pattern with NOTs: a leading NOT, a trailing NOT or both (now and then two side
    by side), over types the positive part lacks (D, E), each a type, a Kleene type or a sequence,
    first or last in the top-level SEQ, or in one or two operands of OR / AND (the grammar allows them only
    as the whole pattern); and NOT F or NOT F+ between two items of any SEQ in it (``with_nots_inside``)."""
    core = draw(position_patterns())
    if draw(st.booleans()):
        core = draw(with_nots_inside(core, ["NOT F", "NOT F+"], 1))
    # (and two NOTs side by side: "D, NOT F" leads with NOT D, NOT F)
    lead, trail = draw(st.sampled_from([("D", ""), ("", "E"), ("D", "E"), ("D+", "E"), ("SEQ(D, E)", ""),
                                        ("", "SEQ(E, D+)"), ("E", "D+"), ("", ""), ("D, NOT F", "E"),
                                        ("", "E, NOT F+")]))  # fmt: skip
    op = next((o for o in (" OR ", " AND ") if o in core), None)
    if op is None:
        return _with_ends(core, lead, trail)
    operands = core.split(op)
    if lead and trail and draw(st.booleans()):  # (the two NOTs in two operands)
        first, second = draw(st.permutations(range(len(operands))))[:2]
        operands[first], operands[second] = (
            _with_ends(operands[first], lead, ""),
            _with_ends(operands[second], "", trail),
        )
    else:
        one = draw(st.integers(0, len(operands) - 1))
        operands[one] = _with_ends(operands[one], lead, trail)
    return op.join(operands)


def _with_ends(pattern: str, lead: str, trail: str) -> str:
    """``pattern`` as the positive part of a SEQ that NOT ``lead`` starts and NOT ``trail`` ends (either may be
    empty): its own items where it is one SEQ."""
    if not lead and not trail:
        return pattern
    flat = pattern.startswith("SEQ(") and split_items(pattern[3:])[0] == pattern[3:]  # (one SEQ: its items)
    items = split_items(pattern[4:-1]) if flat else [pattern]
    items = ([f"NOT {lead}"] if lead else []) + items + ([f"NOT {trail}"] if trail else [])
    return "SEQ(" + ", ".join(items) + ")"


@st.composite
def with_nots_inside(draw, pattern: str, negations: list[str] | None = None, most: int = 2) -> str:
    """``pattern`` with up to ``most`` NOTs from ``negations`` (default: over D, E, F, which position
    patterns lack) between two items of any SEQ in it, nested in a Kleene part or P{n,} or in an operand of
    OR / AND too, at slots the analysis takes (none next to an optional part); as it is where there is none."""
    pool = negations or ["NOT F", "NOT F+", "NOT SEQ(D, F)"]
    drawn = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=most))
    drawn = [n.replace("F", "E") if i else n for i, n in enumerate(drawn)]  # (a negated type appears once)
    for negation in drawn:
        slots = [i for i in range(len(pattern)) if pattern.startswith(", ", i)]
        for slot in draw(st.permutations(slots)):
            inserted = f"{pattern[:slot]}, {negation}{pattern[slot:]}"
            if analyses(inserted):
                pattern = inserted
                break
    return pattern


def split_items(text: str) -> list[str]:
    """The top-level comma-separated items of ``text``."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "({"
        depth -= c in ")}"
        if c == "," and not depth:
            items.append(text[start:i].strip())
            start = i + 1
    return items + [text[start:].strip()]


def parses(text: str) -> bool:
    """Whether the analysis takes the workload (it refuses, say, a NOT next to an optional part)."""
    try:
        parse_workload(text)
    except QueryError:
        return False
    return True


def analyses(pattern: str) -> bool:
    """Whether the analysis takes the pattern (``probe``'s query over it)."""
    return parses(f"q: RETURN COUNT(*) PATTERN {pattern} WITHIN 1")


# What a NOT may negate that has several start or end types (optional parts ``P?``, ``P*``): the kernel's
# negative sub-patterns take them (``native/src/negation.rs``); some hold a NOT of their own, with several too.
SEVERAL_ENDS = [
    "SEQ(C?, D)", "SEQ(C*, D)", "SEQ(C, D?)", "SEQ(C, D*)", "(SEQ(C?, D))+", "(SEQ(C, D?))+", "SEQ(C?, D+, E?)",
    "SEQ(C, D?, E)", "SEQ(C*, D, E*)", "SEQ(C?, D, NOT E, F)", "SEQ(C, NOT SEQ(E?, F), D)",
    "SEQ(C, NOT SEQ(E, F*), D)",
]  # fmt: skip


@st.composite
def several_ends_negated(draw, pool: list[str]) -> str:
    """A ``SEVERAL_ENDS`` shape over types from ``pool`` (consumed), one that fits in what is left."""
    letters = {shape: sorted(set(re.findall(r"\b[C-F]\b", shape))) for shape in SEVERAL_ENDS}
    shape = draw(st.sampled_from([s for s in SEVERAL_ENDS if len(letters[s]) <= len(pool)]))
    renaming = {letter: pool.pop() for letter in letters[shape]}
    return re.sub(r"\b[C-F]\b", lambda m: renaming[m.group()], shape)


@st.composite
def several_ends_nots(draw) -> str:
    """A top-level SEQ of 1-2 positive items (a type, a Kleene type, a Kleene sequence) with one or two NOTs
    over ``SEVERAL_ENDS`` shapes: leading, between the items, trailing (one of them in each place, or two)."""
    pool = list(draw(st.permutations(TYPES)))
    items = []
    for _ in range(draw(st.integers(1, 2))):
        kinds = ["type", "kleene", "kleene", "sequence"] if not items else ["type", "kleene"]
        kind = draw(st.sampled_from(kinds))
        if kind == "sequence":
            x, y = pool.pop(), pool.pop()
            items.append(f"(SEQ({x}, {y}{draw(st.sampled_from(['', '+']))}))+")
        else:
            items.append(pool.pop() + ("+" if kind == "kleene" else ""))
    slots = draw(st.lists(st.integers(0, len(items)), min_size=1, max_size=2, unique=True))
    nots = {slot: f"NOT {draw(several_ends_negated(pool))}" for slot in sorted(slots) if len(pool) >= 2}
    parts = [p for i, item in enumerate(items) for p in ([nots[i]] if i in nots else []) + [item]]
    if len(items) in nots:
        parts.append(nots[len(items)])
    return "SEQ(" + ", ".join(parts) + ")"


@st.composite
def position_queries_with_ends(draw, name: str) -> str:
    """``position_queries(kernel=False)`` on ``position_patterns_with_ends``."""
    pattern = draw(position_patterns_with_ends().filter(analyses))
    partition = draw(st.sampled_from([((), ())] * 3 + [(("k",), ()), ((), ("g",)), (("k",), ("g",))]))
    window = draw(st.sampled_from([(15, 15), (16, 8), (10, 5), (6, 6)]))
    predicates = [] if draw(st.booleans()) else None
    text = draw(queries(name, pattern=pattern, partition=partition, window=window, predicates=predicates))
    return position_semantics(draw, text)


# Around the B+ that ``sharing_workloads`` share: queries on position templates that must share nothing.
POSITION_AROUND_B = [
    "SEQ(A, B+) OR SEQ(C, B+)", "SEQ(A, B+) AND SEQ(C, B+)", "SEQ(A, B+) OR SEQ(A+, B)", "SEQ(A, B+, A)",
    "SEQ(B+, A, B)", "B{2,}", "SEQ(A, B{2,})", "SEQ(B+, C) AND B+", "B+ OR SEQ(A, B+, C)",
]  # fmt: skip


@st.composite
def negating_its_own_types(draw) -> str:
    """A pattern with 1-2 NOTs over types its positive part holds too, or one type under both NOTs
    (``SEQ(A, NOT A, B)``: the last A before a B; ``SEQ(A, NOT C, B, NOT C, D)``), or over a pattern with a
    type at several places or P{n,} (``NOT SEQ(C, C)``, ``NOT C{2,}``, ``NOT SEQ(B, A+, B)``, with a NOT of its
    own: ``NOT SEQ(A, NOT E, A)``): leading, trailing or
    between two items of any SEQ in it, over GRETA's templates (``patterns``) and position templates
    (``position_patterns``) alike, at slots the analysis takes."""
    if draw(st.booleans()):
        core = draw(patterns(list(draw(st.permutations("ABCD"))), nots=False))
    else:
        core = draw(position_patterns())
    own = sorted(set(re.findall(r"\b[A-F]\b", core)))
    menu = [f"NOT {t}" for t in own] + [f"NOT {t}+" for t in own] + ["NOT E", "NOT SEQ(E, E)", "NOT E{2,}"]
    menu += [f"NOT SEQ({t}, {t})" for t in own] + [
        f"NOT {own[0]}{{2,}}",
        f"NOT SEQ({own[0]}, NOT E, {own[0]})",
    ]
    menu += [f"NOT SEQ(E+, NOT {own[-1]}, E)", f"NOT (SEQ({own[0]}, NOT {own[-1]}, {own[0]}))+"]
    if len(own) > 1:
        menu += [f"NOT SEQ({own[0]}, {own[1]})", f"NOT SEQ({own[1]}, {own[0]}+, {own[1]})"]
    drawn = draw(st.lists(st.sampled_from(menu), min_size=1, max_size=2))
    pattern = core
    for negation in drawn:
        negated = negation[len("NOT ") :]
        choices = [_with_ends(pattern, negated, ""), _with_ends(pattern, "", negated)]
        choices += [f"{pattern[:i]}, {negation}{pattern[i:]}" for i in range(len(pattern))
                    if pattern.startswith(", ", i)]  # fmt: skip
        for choice in draw(st.permutations(choices)):
            if analyses(choice):
                pattern = choice
                break
    return pattern


JOINT_SHAPES = ["SEQ(P, B+)", "SEQ(P, B+, Q)", "SEQ(B+, Q)", "B+", "SEQ(P+, B+)", "SEQ(P, B+, Q+)"]
JOINT_EDGES = [
    "B.x < NEXT(B).x",
    "B.x >= NEXT(B).y",
    "B.x + NEXT(B).y > 3",
    "NEXT(B).y = B.y",
    "B.x != NEXT(B).x",
]


@st.composite
def joint_workloads(draw) -> str:
    """2–5 queries of one shape around B+ under one edge predicate (``native/src/joint.rs``: they run as one
    joint graph), each with its own types around B, local predicates, aggregates; mostly one window for
    all, sometimes one of its own (a joint graph steps the union of their window classes)."""
    shape = draw(st.sampled_from(JOINT_SHAPES))
    edge = draw(st.sampled_from(JOINT_EDGES))
    window = draw(windows())
    partition = draw(st.sampled_from(["", " AND [k]"]))
    group = draw(st.sampled_from(["", " GROUP-BY g"]))
    extreme = draw(st.sampled_from(["MIN(B.x)", "MAX(B.y)", "COUNT(B)"]))
    out = []
    for i in range(draw(st.integers(2, 5))):
        p, q = draw(st.sampled_from("AC")), draw(st.sampled_from("DE"))  # (few: graphs meet in a partition)
        pattern = re.sub(r"\b[PQ]\b", lambda m, names={"P": p, "Q": q}: names[m.group()], shape)
        local = draw(
            st.sampled_from(["", "", " AND B.x < 3", " AND B.y > 0", " AND B.x % 2 = 0", f" AND {p}.y > 1"])
        )
        if "P" not in shape and p in local:
            local = ""
        # (one MIN or MAX for the whole workload at most: queries that ask others form sets of their own)
        returns = draw(st.sampled_from(["COUNT(*)", "COUNT(*), SUM(B.x)", "AVG(B.y)", "COUNT(B), SUM(B.y)",
                                        f"COUNT(*), {extreme}"]))  # fmt: skip
        within, slide = window if draw(st.integers(0, 4)) < 4 else draw(windows())
        out.append(f"q{i}: RETURN {'g, ' if group else ''}{returns} PATTERN {pattern} WHERE {edge}{partition}{local}"
                   f"{group} WITHIN {within} SLIDE {slide}")  # fmt: skip
    return "\n".join(out)
