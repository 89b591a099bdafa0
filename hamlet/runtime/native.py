"""GRETA's trend graph of one stream partition, compiled (``native/``, the ``hamlet_native`` extension).

``greta.run_partition`` in Python costs tens of microseconds per graph and partition before the first
event: objects for the graph, its sources and window classes, one generator per timestamp. On a stream of
short partitions (the Spark job's trips of ~7 events, 32 graphs each) that overhead is the engine's time.
The kernel runs the same computation over the partition's matched events and returns the same runs of
windows with their finals, so callers cannot tell the two apart (tests/test_native.py holds it to
``run_partition`` and to the brute-force enumerator).

It takes the graphs most workloads build and leaves the rest to Python, decided once per graph group:

* a pattern with at most one negation, a trailing ``NOT`` of one event type (``SEQ(A, B+, NOT C)``);
* no edge predicates (local predicates are applied before, by ``partition.matched_events``);
* COUNT(*), COUNT(E), SUM, AVG, MIN and MAX;
* windows of whole seconds.

Counts and sums are 128-bit ints there. A sum over floats, which Python keeps as a whole number of
2^-1074 (``aggregates.py``), is kept in units of 2^-E, E the finest unit a value of the partition needs
(a float with one decimal needs about 2^-48), and shifted to Python's units on the way out. Per partition,
the kernel hands back to Python (``run`` returns None) whatever it cannot compute exactly: a time that is not
an int, a value that is neither an int within 64 bits nor a finite float, ints and floats under one MIN or
MAX, a count or sum beyond 128 bits. The engine stays pure Python without the extension (``kernel_for``
then returns None).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import Window
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra, CountAlgebra, Projection, VectorAlgebra
from hamlet.runtime.clipping import ClippedWindow

try:
    import hamlet_native
except ImportError:  # the pure-Python engine (``scripts/bootstrap`` builds the extension)
    hamlet_native = None  # type: ignore[assignment]

UNBOUNDED = 1 << 62  # window indexes of an unclipped window: every k (times are seconds since 1970)


class NativeGraph:
    """The compiled graph of one ``GraphGroup``; ``run`` answers like ``greta.run_partition``."""

    def __init__(self, kernel: Any, names: Sequence[str], projections: Sequence[Projection | None]) -> None:
        self.kernel, self.names, self.projections = kernel, tuple(names), tuple(projections)

    def run(self, events: list[Event]) -> list[tuple[str, range, Any]] | None:
        """(query, windows, final) for every run of windows with a final, or None: run it in Python."""
        runs = self.kernel.run(events)
        if runs is None:
            return None
        names, projections = self.names, self.projections
        out = []
        for member, first, last, final in runs:
            project = projections[member]
            out.append((names[member], range(first, last + 1), final if project is None else project(final)))
        return out


def kernel_for(queries: Sequence[AnalyzedQuery], algebra: Algebra,
               projections: Sequence[Projection | None]) -> NativeGraph | None:  # fmt: skip
    """The compiled graph of queries that share one (``partition.graph_key``), or None where it does not
    apply (module docstring) or the extension is not installed."""
    if hamlet_native is None:
        return None
    query = queries[0]
    pattern, template = query.pattern, query.pattern.template
    if query.edge_predicates or len(set(template.types)) != len(template.types):
        return None
    negated = None
    if pattern.negations:
        if len(pattern.negations) > 1:
            return None
        negation = pattern.negations[0]
        part = negation.part
        if (negation.following is not None or part.negations or len(part.template.types) != 1
                or part.template.types[0] in template.types):  # fmt: skip
            return None
        negated = part.template.types[0]
    position = {t: i for i, t in enumerate(template.types)}
    if isinstance(algebra, CountAlgebra):
        fields: list[tuple[str, int | None, str | None, bool]] = [("trends", None, None, False)]
    elif isinstance(algebra, VectorAlgebra):
        if any(t is not None and t not in position for _, t, _ in algebra.fields):
            return None
        fields = [(kind, None if t is None else position[t], a, (t, a) in algebra.scaled)
                  for kind, t, a in algebra.fields]  # fmt: skip
    else:
        return None
    members = []
    for q in queries:
        member = _member(q.window)
        if member is None:
            return None
        members.append(member)
    kernel = hamlet_native.GraphKernel(
        list(template.types), position[template.start], position[template.end],
        [(position[t.source], position[t.target]) for t in template.transitions],
        negated, fields, isinstance(algebra, CountAlgebra), members,
    )  # fmt: skip
    return NativeGraph(kernel, [q.name for q in queries], projections)


def _member(window: Window) -> tuple[int, int, int, int] | None:
    """(within, slide, first, last) of windows of whole seconds; None for others."""
    if window.within.denominator != 1 or window.slide.denominator != 1:
        return None
    first, last = -UNBOUNDED, UNBOUNDED
    if isinstance(window, ClippedWindow):
        first, last = max(window.first, -UNBOUNDED), min(window.last, UNBOUNDED)
    return int(window.within), int(window.slide), first, last
