"""Hypothesis strategies for random small workloads and streams (property tests of every strategy)."""

from __future__ import annotations

import re

from hypothesis import strategies as st

from hamlet import Event, parse_workload

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
            parts.append("NOT " + draw(negated(pool)))
        parts.append(item)
    if nots and top and pool and draw(st.integers(0, 3)) == 0:
        parts.insert(0, "NOT " + draw(negated(pool)))
    if nots and top and pool and draw(st.integers(0, 3)) == 0:
        parts.append("NOT " + draw(negated(pool)))
    return "SEQ(" + ", ".join(parts) + ")"


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
    "SEQ(NOT SEQ(C, D), A+)", "SEQ((SEQ(A, B))+, NOT SEQ(C, NOT E, D))",
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


@st.composite
def queries(draw, name: str, negation: bool = False, kernel: bool = False) -> str:
    """``kernel``: a query the compiled kernel takes (``kernel_patterns``, no edge predicates)."""
    if kernel:
        pattern = draw(kernel_patterns())
    else:
        pattern = (
            draw(negation_patterns()) if negation else draw(patterns(list(draw(st.permutations(TYPES)))))
        )
    probe = parse_workload(f"q: RETURN COUNT(*) PATTERN {pattern} WITHIN 1").queries[0]
    positive = list(probe.pattern.template.types)
    all_types = list(probe.types)
    returns = ["COUNT(*)"]
    for _ in range(draw(st.integers(0, 3))):
        t = draw(st.sampled_from(positive))
        returns.append(
            draw(st.sampled_from([f"COUNT({t})", f"SUM({t}.x)", f"MIN({t}.x)", f"MAX({t}.x)", f"AVG({t}.x)"]))
        )
    returns = list(dict.fromkeys(returns))
    where = []
    if draw(st.booleans()):
        where.append("[k]")
    for _ in range(draw(st.integers(0, 2))):
        t = draw(st.sampled_from(all_types))
        where.append(
            draw(
                st.sampled_from(
                    [f"{t}.x < 3", f"({t}.x % 2 = 0 OR {t}.y > 1)", f"{t}.s = u", f"{t}.x + 1 >= {t}.y"]
                )
            )
        )
    transitions = [tr for part in probe.pattern.walk() for tr in part.template.transitions]
    for _ in range(draw(st.integers(0, 2)) if transitions and not kernel else 0):
        tr = draw(st.sampled_from(transitions))
        x, y = tr.source, tr.target
        where.append(draw(st.sampled_from([
            f"{x}.x < NEXT({y}).x", f"{x}.x >= NEXT({y}).x", f"NEXT({y}).y = {x}.y", f"{x}.x + NEXT({y}).y > 3",
            f"{x}.x * 2 <= NEXT({y}).x + 1", f"{x}.x > NEXT({y}).y", f"NEXT({y}).x < {x}.y", f"{x}.x != NEXT({y}).x",
        ])))  # fmt: skip
    group = ""
    if draw(st.booleans()):
        group = " GROUP-BY g"
        returns.insert(0, "g")
    within = draw(st.integers(3, 16))
    slide = draw(st.sampled_from([within, within, max(1, within // 2), max(1, within // 3), within + 2]))
    return (f"{name}: RETURN {', '.join(returns)} PATTERN {pattern}"
            + (f" WHERE {' AND '.join(where)}" if where else "") + f"{group} WITHIN {within} SLIDE {slide}")  # fmt: skip


@st.composite
def workloads(draw, max_queries: int = 3, negation: bool = False, kernel: bool = False) -> str:
    count = draw(st.integers(1, max_queries))
    return "\n".join(draw(queries(f"q{i}", negation, kernel)) for i in range(count))


@st.composite
def events(draw, types: str = TYPES + "Z", max_events: int = 12) -> list[Event]:
    """Times in 0..14 with repeats; x, y small ints (sometimes null, sometimes float); g, k two values.

    ``types`` is a pool to draw from: repeat a type to make it more frequent."""
    n = draw(st.integers(0, max_events))
    times = sorted(draw(st.lists(st.integers(0, 14), min_size=n, max_size=n)))
    out = []
    value = st.one_of(st.integers(0, 4), st.none(), st.sampled_from([0.5, 2.25]))
    for t in times:
        out.append(Event(draw(st.sampled_from(types)), t, {
            "x": draw(value), "y": draw(st.integers(0, 3)), "s": draw(st.sampled_from(["u", "v"])),
            "g": draw(st.sampled_from([1, 2, None])) if draw(st.integers(0, 5)) == 0 else draw(st.sampled_from([1, 2])),
            "k": draw(st.sampled_from(["p", "q"])),
        }))  # fmt: skip
    return out


def types_of(text: str) -> str:
    """The workload's types, positive ones three times over, plus a type no query reads."""
    workload = parse_workload(text)
    positive = "".join(t for q in workload.queries for t in q.pattern.template.types)
    return positive * 3 + "".join(t for q in workload.queries for t in q.types) + "Z"


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
def bursty_events(draw, types: str = "ABCDEF", max_runs: int = 7) -> list[Event]:
    """Runs of one type (bursts), mostly B, at increasing times, sometimes sharing a timestamp."""
    out: list[Event] = []
    t = 0
    for _ in range(draw(st.integers(0, max_runs))):
        event_type = draw(st.sampled_from("BBB" + types))
        for _ in range(draw(st.integers(1, 4))):
            t += draw(st.sampled_from([0, 1, 1, 1, 2]))
            out.append(Event(event_type, t, {
                "x": draw(st.integers(0, 4)), "y": draw(st.integers(0, 2)),
                "g": draw(st.sampled_from([1, 2])), "k": draw(st.sampled_from(["p", "q"])),
            }))  # fmt: skip
    return out
