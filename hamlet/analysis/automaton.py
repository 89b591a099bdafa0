"""Templates whose states are positions, not types (dissertation §12): for a pattern in which an event type
appears more than once (``SEQ(A+, B, A)``), a minimal trend length (``A{3,}`` = ``SEQ(A, A, A+)``) and the
disjunction and conjunction of patterns (``P OR Q``, ``P AND Q``).

§12 gives each occurrence of a type its own state (``SEQ(A1+, B2, A3)``) and inserts an event into every
sub-graph of its type. Counting paths of that graph counts a trend once per way the pattern parses it:
``SEQ(A+, A+)`` parses a1 a2 a3 as (a1)(a2 a3) and as (a1 a2)(a3), and ``P OR Q`` parses a trend both
match once per operand. A trend is a sequence of events (SEMANTICS.md), so each must be counted once: the
position automaton (Glushkov's: one state per occurrence) is made deterministic by the subset construction
over event types. Every state of the result is a set of positions of one type; a trend then runs along
exactly one path, and GRETA's propagation over these states counts each trend once. For ``P OR Q`` this is
exactly the dissertation's C_P + C_Q − C_PQ (a trend both match ends in a state holding an end position of
each); for ``P AND Q`` a trend's last state tells whether P, Q or both match it, which gives the three
counts of the conjunction formula (``accepts``).

The graph runs an event at every state of its type (``states_of``), as §12's modification (3) says: an
event may start a trend at one state and extend trends at another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hamlet.analysis.split import Fail
from hamlet.analysis.template import Template, Transition
from hamlet.errors import QueryError
from hamlet.language.nodes import (
    ChoicePattern,
    EventTypePattern,
    KleenePattern,
    MinimalLengthPattern,
    NegationPattern,
    OptionalPattern,
    Pattern,
    SeqPattern,
    StarPattern,
)

MAX_STATES = 256  # subset construction may grow exponentially; real patterns stay far below
# Places before the subset construction: P{n,} unrolls n copies of P, so ((A{32,}){32,}){32,} would have 32^3.
MAX_POSITIONS = 1024


@dataclass(frozen=True)
class StateTemplate:
    """A deterministic template over states named ``Type#n``: what the trend graph of such a query runs."""

    template: Template  # its states as the "types" (names), transitions between states
    state_type: dict[str, str]  # state → the event type its events have
    states_of: dict[str, tuple[str, ...]]  # event type → its states, in order
    accepts: dict[str, frozenset[int]]  # end state → the operands (0, 1, ...) whose trends end there
    operands: int  # 1, or the number of operands of OR / AND

    def type_template(self) -> Template:
        """The template projected on event types: which types follow which (what the analysis of
        predicates, ``hamlet explain`` and the type-level code read)."""
        types = tuple(dict.fromkeys(self.state_type[s] for s in self.template.types))
        project = self.state_type.__getitem__
        transitions: dict[tuple[str, str], Transition] = {}
        for t in self.template.transitions:
            pair = (project(t.source), project(t.target))
            transitions.setdefault(pair, Transition(pair[0], pair[1], "+" if pair[0] == pair[1] else "SEQ"))
        return Template(types, tuple(dict.fromkeys(map(project, self.template.starts))),
                        tuple(dict.fromkeys(map(project, self.template.ends))), tuple(transitions.values()))  # fmt: skip


def needs_positions(pattern: Pattern) -> bool:
    """Whether the pattern's template needs position states: a type at two places, a minimal length, OR
    or AND. Other patterns keep one state per type (GRETA's template)."""
    seen: list[str] = []

    def visit(p: Pattern | NegationPattern) -> bool:
        if isinstance(p, (MinimalLengthPattern, ChoicePattern)):
            return True
        if isinstance(p, EventTypePattern):
            if p.type_name in seen:
                return True
            seen.append(p.type_name)
            return False
        if isinstance(p, (KleenePattern, OptionalPattern, StarPattern, NegationPattern)):
            return visit(p.inner)
        return any(visit(item) for item in p.items)

    return visit(pattern)


@dataclass
class _Glushkov:
    """Positions, and for a sub-pattern its first and last positions, nullability and the follow pairs."""

    types: list[str]  # position → its event type
    operand: list[int]  # position → the operand of OR / AND it belongs to
    follow: set[tuple[int, int]]
    too_many: Callable[[], QueryError]  # the error past MAX_POSITIONS

    def visit(self, p: Pattern, operand: int) -> tuple[frozenset[int], frozenset[int], bool]:
        if isinstance(p, EventTypePattern):
            if len(self.types) >= MAX_POSITIONS:
                raise self.too_many()
            self.types.append(p.type_name)
            self.operand.append(operand)
            position = frozenset({len(self.types) - 1})
            return position, position, False
        if isinstance(p, MinimalLengthPattern):  # §12: P{n,} unrolls to SEQ(P, ..., P, P+) with n items
            unrolled = (p.inner,) * (p.minimum - 1) + (KleenePattern(p.line, p.column, p.inner),)
            return self.visit(SeqPattern(p.line, p.column, unrolled), operand)
        if isinstance(p, (KleenePattern, StarPattern, OptionalPattern)):
            first, last, empty = self.visit(p.inner, operand)
            if not isinstance(p, OptionalPattern):  # the loop of P+ and P*: each end to each start
                self.follow.update((x, y) for x in last for y in first)
            return first, last, empty or not isinstance(p, KleenePattern)
        if isinstance(p, ChoicePattern):  # (only at the top: ``build_states``)
            raise TypeError("OR / AND inside a pattern (the parser allows them only at the top)")
        first, last, empty = frozenset(), frozenset(), True
        for item in p.items:
            assert not isinstance(item, NegationPattern)  # (the analysis refuses NOT here)
            f, l, e = self.visit(item, operand)
            self.follow.update((x, y) for x in last for y in f)
            first = first | f if empty else first
            last = l | last if e else l
            empty = empty and e
        return first, last, empty


def inexact_guard(positive: SeqPattern, boundaries: Mapping[int, str]) -> str | None:
    """Whether a NOT between two items of the top-level SEQ guards exactly the transitions of its position
    template: ``boundaries`` maps the index of the item right after each such NOT (in ``positive``, the
    NOTs taken out) to the NOT's text; returns the text of the first NOT that does not, None if all do.

    A NOT is anchored to one type X before it and one Y after it (``split``), and the graph guards every
    transition from a state of X to a state of Y. That is exact iff every pair of places of X and Y that
    follow each other crosses this NOT: then every parse of a trend meets the NOT at the same steps
    (``SEQ(A+, NOT C, B, A)``). Where X is followed by Y elsewhere too (``SEQ(A+, NOT C, A)``: A → A inside
    A+ and across the NOT), one deterministic transition would hold both and no guard on it is exact."""
    positions = _Glushkov(
        [], [], set(), lambda: QueryError("more places than build_states takes", line=0, column=0)
    )
    crossing: dict[int, set[tuple[int, int]]] = {}
    last: frozenset[int] = frozenset()
    for i, item in enumerate(positive.items):
        assert not isinstance(item, NegationPattern)  # (the NOTs are taken out)
        f, l, e = positions.visit(item, 0)
        pairs = {(x, y) for x in last for y in f}
        positions.follow.update(pairs)
        if i in boundaries:
            crossing[i] = pairs
        last = l | last if e else l
    types = positions.types
    for i, pairs in crossing.items():
        guarded = {(types[x], types[y]) for x, y in pairs}
        if any((types[x], types[y]) in guarded for x, y in positions.follow - pairs):
            return boundaries[i]
    return None


def build_states(pattern: Pattern, fail: Fail) -> StateTemplate:
    """The deterministic position template of ``pattern`` (a ``ChoicePattern`` or any positive pattern)."""
    operands = pattern.operands if isinstance(pattern, ChoicePattern) else (pattern,)
    too_many = (
        f"the pattern has more than {MAX_POSITIONS} places (each event type as often as it is written, "
        "P{n,} n times P, each operand of OR / AND)"
    )
    positions = _Glushkov([], [], set(), lambda: fail(pattern, too_many))
    first: set[int] = set()
    last: set[int] = set()
    for index, operand in enumerate(operands):
        f, l, _ = positions.visit(operand, index)
        first |= f
        last |= l
    types, follow = positions.types, positions.follow
    successors: dict[int, set[int]] = {p: set() for p in range(len(types))}
    for x, y in follow:
        successors[x].add(y)

    def by_type(found: set[int]) -> dict[str, frozenset[int]]:
        out: dict[str, set[int]] = {}
        for p in sorted(found):
            out.setdefault(types[p], set()).add(p)
        return {t: frozenset(ps) for t, ps in out.items()}

    # Subset construction: a state is the set of positions (all of one type) a trend may be at.
    starts = list(by_type(first).values())
    edges: dict[frozenset[int], list[frozenset[int]]] = {}
    todo = list(starts)
    while todo:
        state = todo.pop()
        if state in edges:
            continue
        if len(edges) >= MAX_STATES:
            raise fail(
                pattern, f"the pattern's template needs more than {MAX_STATES} states; write a shorter one"
            )
        targets = list(by_type({y for x in state for y in successors[x]}).values())
        edges[state] = targets
        todo.extend(targets)
    # Keep the states from which a trend can still end (trimmed: a dead state only costs).
    live = {s for s in edges if s & last}
    grew = True
    while grew:
        grew = False
        for s, targets in edges.items():
            if s not in live and any(t in live for t in targets):
                live.add(s)
                grew = True
    ordered = sorted(live, key=lambda s: (min(s), sorted(s)))  # pattern order: the first position first
    names: dict[frozenset[int], str] = {}
    count: dict[str, int] = {}
    for s in ordered:
        t = types[min(s)]
        count[t] = count.get(t, 0) + 1
        names[s] = f"{t}#{count[t]}"
    transitions = tuple(
        Transition(names[s], names[t], "+" if s == t else "SEQ")
        for s in ordered
        for t in edges[s]
        if t in live
    )
    ends = tuple(names[s] for s in ordered if s & last)
    template = Template(tuple(names[s] for s in ordered), tuple(names[s] for s in starts if s in live), ends,
                        transitions)  # fmt: skip
    state_type = {names[s]: types[min(s)] for s in ordered}
    states_of: dict[str, tuple[str, ...]] = {}
    for name, t in state_type.items():
        states_of[t] = states_of.get(t, ()) + (name,)
    accepts = {names[s]: frozenset(positions.operand[p] for p in s & last) for s in ordered if s & last}
    return StateTemplate(template, state_type, states_of, accepts, len(operands))
