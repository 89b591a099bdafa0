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

A NOT between two parts guards the pairs of positions across it (``_Glushkov.follow``), anywhere in the
pattern. Where one parse crosses it and another stays inside a part (``SEQ(A+, NOT C, A)``), the set of
positions a trend may be at next depends on whether the NOT matched between the two events, so the subset
construction runs over (type, outcomes of the NOTs crossed): ``Guard``. A NOT first or last in an operand of
OR / AND decides the same way which state a trend starts at, and which operands it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hamlet.analysis.split import MAX_GUARD_NOTS, Fail
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
MAX_CROSSED_NOTS = 12  # (before the NOTs that decide nothing there are left out: 2^12 outcomes tried)
# The operands of OR / AND: the kernel keeps the operands a trend ends as a 64-bit set (``graph.rs``).
MAX_OPERANDS = 64


@dataclass(frozen=True)
class Guard:
    """The NOTs between two parts that a transition crosses in some parse (their numbers among the query's
    negations), and the outcomes that take it: bit j of an outcome is set when a match of ``negations[j]``
    lies strictly between the two events (an x → y edge with x.time < L of that NOT)."""

    negations: tuple[int, ...]
    outcomes: frozenset[int]

    def admits(self, matched: Sequence[bool]) -> bool:
        """Whether an edge is taken when ``matched[j]`` says that NOT j had a match between its events."""
        return sum(1 << j for j, m in enumerate(matched) if m) in self.outcomes

    @property
    def bits(self) -> int:
        """The outcomes as one bit set (bit m: outcome m takes the edge), as the kernel reads them."""
        return sum(1 << m for m in self.outcomes)


@dataclass(frozen=True)
class StateTemplate:
    """A deterministic template over states named ``Type#n``: what the trend graph of such a query runs."""

    template: Template  # its states as the "types" (names), transitions between states
    state_type: dict[str, str]  # state → the event type its events have
    states_of: dict[str, tuple[str, ...]]  # event type → its states, in order
    accepts: dict[str, frozenset[int]]  # end state → the operands (0, 1, ...) whose trends end there
    operands: int  # 1, or the number of operands of OR / AND
    # (source, target) → the outcomes of the NOTs between two parts that take the transition (none: all)
    guards: dict[tuple[str, str], Guard] = field(default_factory=dict)
    # start state → the outcomes of the operands' leading NOTs (in [window start, event)) that start there
    start_guards: dict[str, Guard] = field(default_factory=dict)
    # per operand of OR / AND: the numbers of its trailing NOTs (empty: no operand has one)
    trailing: tuple[tuple[int, ...], ...] = ()

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


@dataclass
class _Glushkov:
    """Positions, and for a sub-pattern its first and last positions, nullability and the follow pairs, each
    with the NOTs it crosses (``guarded``: a NOT item → its number; NOTs not in it are not visited)."""

    types: list[str]  # position → its event type
    operand: list[int]  # position → the operand of OR / AND it belongs to
    follow: dict[tuple[int, int], set[frozenset[int]]]  # (x, y) → the sets of NOTs it crosses, one per way
    too_many: Callable[[], QueryError]  # the error past MAX_POSITIONS
    guarded: Mapping[int, int]  # id of a NOT between two parts → its number

    def visit(self, p: Pattern, operand: int) -> tuple[frozenset[int], dict[int, frozenset[int]], bool]:
        """First positions, last positions (each with the NOTs passed since it), nullable."""
        if isinstance(p, EventTypePattern):
            if len(self.types) >= MAX_POSITIONS:
                raise self.too_many()
            self.types.append(p.type_name)
            self.operand.append(operand)
            position = len(self.types) - 1
            return frozenset({position}), {position: frozenset()}, False
        if isinstance(p, MinimalLengthPattern):  # §12: P{n,} unrolls to SEQ(P, ..., P, P+) with n items
            unrolled = (p.inner,) * (p.minimum - 1) + (KleenePattern(p.line, p.column, p.inner),)
            return self.visit(SeqPattern(p.line, p.column, unrolled), operand)
        if isinstance(p, (KleenePattern, StarPattern, OptionalPattern)):
            first, last, empty = self.visit(p.inner, operand)
            if not isinstance(p, OptionalPattern):  # the loop of P+ and P*: each end to each start
                self._link(last, first)
            return first, last, empty or not isinstance(p, KleenePattern)
        if isinstance(p, ChoicePattern):  # (only at the top: ``build_states``)
            raise TypeError("OR / AND inside a pattern (the parser allows them only at the top)")
        first, last, empty = frozenset[int](), dict[int, frozenset[int]](), True
        for item in p.items:
            if isinstance(item, NegationPattern):
                if id(item) in self.guarded:  # (a leading or trailing NOT guards no pair)
                    last = {x: crossed | {self.guarded[id(item)]} for x, crossed in last.items()}
                continue
            f, l, e = self.visit(item, operand)
            self._link(last, f)
            first = first | f if empty else first
            last = {**last, **l} if e else l
            empty = empty and e
        return first, last, empty

    def _link(self, last: Mapping[int, frozenset[int]], first: frozenset[int]) -> None:
        for x, crossed in last.items():
            for y in first:
                self.follow.setdefault((x, y), set()).add(crossed)


def build_states(pattern: Pattern, fail: Fail, guarded: Mapping[int, int] | None = None,
                 leading: Sequence[tuple[int, ...]] = (), trailing: Sequence[tuple[int, ...]] = ()) -> StateTemplate:  # fmt: skip
    """The deterministic position template of ``pattern`` (a ``ChoicePattern`` or any pattern), with its
    NOTs between two parts in place: ``guarded`` numbers them (by the id of their node). ``leading`` and
    ``trailing``: per operand of OR / AND, the numbers of the NOTs first or last in it (side by side).

    A NOT between two parts of a parse guards the follow pairs across it, so whether a trend may go from
    one set of positions to the next depends on which of the NOTs crossed had a match between the two
    events. The subset construction runs over (event type, those outcomes): a transition from a state to
    another is taken for some outcomes (``Guard``), and a trend still runs along exactly one path. Where
    operands lead with NOTs of their own, so does the state a trend starts at: the first positions of the
    operands whose NOTs have no match in [window start, first event) (``start_guards``); a trend ends an
    operand only where its trailing NOTs have no match in (last event, window end) (``trailing``, read at the
    window's end)."""
    operands = pattern.operands if isinstance(pattern, ChoicePattern) else (pattern,)
    if isinstance(pattern, ChoicePattern) and len(operands) > MAX_OPERANDS:
        raise fail(operands[MAX_OPERANDS], f"the pattern has {len(operands)} operands of {pattern.op} (at most "
                   f"{MAX_OPERANDS}): split the query into several")  # fmt: skip
    too_many = (
        f"the pattern has more than {MAX_POSITIONS} places (each event type as often as it is written, "
        "P{n,} n times P, each operand of OR / AND)"
    )
    positions = _Glushkov([], [], {}, lambda: fail(pattern, too_many), guarded or {})
    first: set[int] = set()
    last: set[int] = set()
    for index, operand in enumerate(operands):
        f, l, _ = positions.visit(operand, index)
        assert not any(l.values())  # (a NOT before an empty rest is refused: ``split``)
        first |= f
        last |= set(l)
    types, follow = positions.types, positions.follow
    successors: dict[int, list[tuple[int, set[frozenset[int]]]]] = {p: [] for p in range(len(types))}
    for (x, y), crossings in sorted(follow.items()):
        successors[x].append((y, crossings))

    def by_type(found: set[int]) -> dict[str, frozenset[int]]:
        out: dict[str, set[int]] = {}
        for p in sorted(found):
            out.setdefault(types[p], set()).add(p)
        return {t: frozenset(ps) for t, ps in out.items()}

    # Subset construction: a state is the set of positions (all of one type) a trend may be at.
    def too_many_guards() -> QueryError:
        return fail(pattern, _too_many_guards)

    # (a start position "crosses" its operand's leading NOTs, from the window's start to the event)
    leads = [frozenset(leading[o]) if leading else frozenset[int]() for o in positions.operand]
    start_guards: dict[frozenset[int], Guard | None] = {}
    for found in by_type(first).values():
        start_guards.update(_guarded_sets([(y, {leads[y]}) for y in sorted(found)], too_many_guards))
    starts = list(start_guards)
    edges: dict[frozenset[int], dict[frozenset[int], Guard | None]] = {}
    todo = list(starts)
    while todo:
        state = todo.pop()
        if state in edges:
            continue
        if len(edges) >= MAX_STATES:
            raise fail(
                pattern, f"the pattern's template needs more than {MAX_STATES} states; write a shorter one"
            )
        edges[state] = _targets(state, successors, types, too_many_guards)
        todo.extend(edges[state])
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
    guards = {
        (names[s], names[t]): guard
        for s in ordered
        for t, guard in edges[s].items()
        if t in live and guard is not None
    }
    ends = tuple(names[s] for s in ordered if s & last)
    guarded_starts = {names[s]: g for s, g in start_guards.items() if s in live and g is not None}
    template = Template(tuple(names[s] for s in ordered), tuple(names[s] for s in starts if s in live), ends,
                        transitions)  # fmt: skip
    state_type = {names[s]: types[min(s)] for s in ordered}
    states_of: dict[str, tuple[str, ...]] = {}
    for name, t in state_type.items():
        states_of[t] = states_of.get(t, ()) + (name,)
    accepts = {names[s]: frozenset(positions.operand[p] for p in s & last) for s in ordered if s & last}
    return StateTemplate(template, state_type, states_of, accepts, len(operands), guards, guarded_starts,
                         tuple(trailing))  # fmt: skip


_too_many_guards = (
    f"more than {MAX_GUARD_NOTS} NOTs lie between one type and the next in different parses of the pattern; "
    "write fewer NOTs there"
)


def _targets(state: frozenset[int], successors: Mapping[int, list[tuple[int, set[frozenset[int]]]]],
             types: list[str], too_many: Callable[[], QueryError]) -> dict[frozenset[int], Guard | None]:  # fmt: skip
    """The states a trend at ``state`` goes to on an event of each type, and for which outcomes of the NOTs
    crossed (None: for all of them)."""
    out: dict[frozenset[int], Guard | None] = {}
    by_type: dict[str, list[tuple[int, set[frozenset[int]]]]] = {}
    for x in sorted(state):
        for y, crossings in successors[x]:
            by_type.setdefault(types[y], []).append((y, crossings))
    for pairs in by_type.values():
        out.update(_guarded_sets(pairs, too_many))
    return out


def _guarded_sets(candidates: Sequence[tuple[int, set[frozenset[int]]]], too_many: Callable[[], QueryError]
                  ) -> dict[frozenset[int], Guard | None]:  # fmt: skip
    """Per outcome of the NOTs that ``candidates`` (position, the sets of NOTs it is reached across, one
    per way) cross, the set of positions reached where none of the NOTs of one way matched; each set with
    the outcomes that give it, over the NOTs whose outcome changes what is reached (None: all)."""
    crossed = sorted({k for _, crossings in candidates for c in crossings for k in c})
    if len(crossed) > MAX_CROSSED_NOTS:
        raise too_many()

    def reached(mask: int) -> frozenset[int]:
        matched = {k for j, k in enumerate(crossed) if mask >> j & 1}
        return frozenset(y for y, crossings in candidates if any(not (c & matched) for c in crossings))

    every = [reached(m) for m in range(1 << len(crossed))]
    deciding = [j for j in range(len(crossed)) if any(r != every[m ^ 1 << j] for m, r in enumerate(every))]
    if len(deciding) > MAX_GUARD_NOTS:
        raise too_many()
    outcomes: dict[frozenset[int], set[int]] = {}
    for m, r in enumerate(every):
        if r:  # (the outcome over the deciding NOTs only)
            outcomes.setdefault(r, set()).add(sum(1 << i for i, j in enumerate(deciding) if m >> j & 1))
    negations, whole = tuple(crossed[j] for j in deciding), 1 << len(deciding)
    return {s: None if len(o) == whole else Guard(negations, frozenset(o)) for s, o in outcomes.items()}


def place_template(pattern: Pattern, fail: Fail, suffix: str, guarded: Mapping[int, int]
                   ) -> tuple[Template, dict[str, str], dict[tuple[str, str], tuple[int, ...]]]:  # fmt: skip
    """The template of a NOT's pattern with a type at several places or ``P{n,}`` (``NOT SEQ(C, C)``,
    ``NOT C{2,}``): its position automaton as it is, one state per place named ``Type`` + ``suffix`` +
    its number, the type of each, and per pair of places the NOTs between two parts it crosses (``guarded``
    numbers them by the id of their node). Not made deterministic: a NOT's graph keeps only the latest start
    of a match (a maximum), which counts nothing twice however many ways a match parses."""
    too_many = f"the negated pattern has more than {MAX_POSITIONS} places (P{{n,}} is n times P)"
    positions = _Glushkov([], [], {}, lambda: fail(pattern, too_many), guarded)
    first, last, _ = positions.visit(pattern, 0)
    names = [f"{t}{suffix}{p + 1}" for p, t in enumerate(positions.types)]
    transitions, guards = [], {}
    for (x, y), crossings in sorted(positions.follow.items()):
        if len(crossings) > 1:  # (NOTs stand between single types, so one pair is crossed one way)
            raise fail(pattern, "two places follow each other across different NOTs in this negated pattern")
        transitions.append(Transition(names[x], names[y], "+" if x == y else "SEQ"))
        (crossed,) = crossings
        if crossed:
            guards[(names[x], names[y])] = tuple(sorted(crossed))
    starts = tuple(names[p] for p in sorted(first))
    template = Template(tuple(names), starts, tuple(names[p] for p in sorted(last)), tuple(transitions))
    return template, dict(zip(names, positions.types)), guards
