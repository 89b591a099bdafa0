"""The pattern split for negation (GRETA §5.1, Algorithm 3).

A pattern with ``NOT`` is split into its positive sub-pattern and negative sub-patterns, recursively (a
negative sub-pattern may hold negations of its own). Each negative sub-pattern remembers its *previous*
type (the end type of the positive pattern before the NOT) and its *following* type (the start type after
it); a leading NOT has no previous type and a trailing NOT no following type.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

from hamlet.analysis.template import (
    Template,
    build_template,
    canonical,
    end_type,
    first_types,
    last_types,
    needs_positions,
    nullable,
    start_type,
)
from hamlet.errors import QueryError
from hamlet.language.nodes import (
    ChoicePattern,
    EventTypePattern,
    KleenePattern,
    MinimalLengthPattern,
    NegationPattern,
    Node,
    OptionalPattern,
    Pattern,
    SeqPattern,
    StarPattern,
)

Fail = Callable[[Node, str], QueryError]

# The NOTs one transition crosses: its outcomes are a 64-bit set in the kernel (``edges.rs``).
MAX_GUARD_NOTS = 6


@dataclass(frozen=True)
class Negation:
    """``NOT part`` between ``previous`` and ``following`` (either is None for a leading/trailing NOT)."""

    part: SubPattern
    previous: str | None
    following: str | None
    text: str
    node: NegationPattern | None = field(default=None, compare=False)  # the NOT as written


@dataclass(frozen=True)
class SubPattern:
    """A positive pattern, its GRETA template, and the negations attached to its transitions."""

    pattern: Pattern
    template: Template
    negations: tuple[Negation, ...]
    # A NOT's pattern with a type at several places or P{n,}: its template's states are places, each of
    # the type given here (``automaton.place_template``); empty: the template's states are types.
    places: dict[str, str] = field(default_factory=dict, compare=False)
    # With places: per pair of places, the NOTs between two parts its transition crosses (their numbers in
    # ``negations``): a predecessor is taken only where none of them matched between the two events.
    guards: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict, compare=False)

    def all_types(self) -> tuple[str, ...]:
        """The event types of this sub-pattern and of every negative sub-pattern below it."""
        out = [self.places.get(t, t) for t in self.template.types]
        for negation in self.negations:
            out.extend(negation.part.all_types())
        return tuple(out)

    def follows(self, source: str, target: str) -> bool:
        """Whether a ``target`` event may come right after a ``source`` event in a match (types, even where
        the template's states are places)."""
        return any(
            (self.places.get(t.source, t.source), self.places.get(t.target, t.target)) == (source, target)
            for t in self.template.transitions
        )

    def key(self) -> tuple:
        """Equal for sub-patterns that are equal up to aliases, NOTs included and in place. ``pattern`` alone
        is the positive part: ``SEQ(NOT E, A+)`` and ``SEQ(A+, NOT E)`` both hold ``A+`` there, yet no trend
        graph, shared state or cached result of one answers for the other."""
        return canonical(self.pattern), tuple((n.previous, n.following, n.part.key()) for n in self.negations)

    def walk(self) -> list[SubPattern]:
        """This sub-pattern and every negative one below it, parents first."""
        out = [self]
        for negation in self.negations:
            out.extend(negation.part.walk())
        return out


def split_pattern(pattern: Pattern, fail: Fail) -> SubPattern:
    return _split(pattern, fail, top_level=True)


@dataclass(frozen=True)
class PositionNegations:
    """The negations of a pattern on a position template (automaton.py), as written, and where each stands:
    ``middle``: the number among them of each NOT between two parts, by the id of its node (what
    ``build_states`` guards the transitions across); ``leading``, ``trailing``: per operand of OR / AND, the
    numbers of the NOTs first or last in it (several side by side; none: empty), all empty without OR / AND
    (a leading or trailing NOT of the top-level SEQ then holds at every start or end state, anchored to
    types as GRETA's)."""

    negations: tuple[Negation, ...]
    middle: dict[int, int]
    leading: tuple[tuple[int, ...], ...]
    trailing: tuple[tuple[int, ...], ...]


def split_positions(pattern: Pattern, fail: Fail) -> PositionNegations:
    """``PositionNegations`` of ``pattern``; the template is the caller's, since GRETA's Algorithm 1 cannot
    build it."""
    operands = pattern.operands if isinstance(pattern, ChoicePattern) else (pattern,)
    negations: list[Negation] = []
    leading: list[tuple[int, ...]] = []
    trailing: list[tuple[int, ...]] = []
    for operand in operands:
        own = _split(operand, fail, top_level=True, typed=False).negations
        leading.append(tuple(len(negations) + i for i, n in enumerate(own) if n.previous is None))
        trailing.append(tuple(len(negations) + i for i, n in enumerate(own) if n.following is None))
        negations.extend(own)
    middle = {
        id(n.node): i for i, n in enumerate(negations) if n.previous is not None and n.following is not None
    }
    choice = isinstance(pattern, ChoicePattern)
    return PositionNegations(tuple(negations), middle, tuple(leading) if choice else (),
                             tuple(trailing) if choice and any(trailing) else ())  # fmt: skip


def _split(pattern: Pattern, fail: Fail, top_level: bool, typed: bool = True) -> SubPattern:
    negations: list[Negation] = []

    def strip(p: Pattern, is_root: bool) -> Pattern:
        if isinstance(p, EventTypePattern):
            return p
        if isinstance(p, MinimalLengthPattern):  # (on a position template only: ``split_positions``)
            return MinimalLengthPattern(p.line, p.column, strip(p.inner, False), p.minimum)
        if isinstance(p, (KleenePattern, OptionalPattern, StarPattern)):
            return type(p)(p.line, p.column, strip(p.inner, False))
        if not isinstance(p, SeqPattern):
            raise TypeError("P{n,}, OR and AND are never split: they hold no NOT (query.py refuses it)")
        items = p.items
        positives: list[Pattern] = []
        kept = [(i, item) for i, item in enumerate(items) if not isinstance(item, NegationPattern)]
        places = [i for i, _ in kept]
        for index, item in enumerate(items):
            if not isinstance(item, NegationPattern):
                positives.append(strip(item, False))
                continue
            # (NOTs side by side, SEQ(A, NOT C, NOT D, B), each hold between the same two positive parts)
            k = bisect_left(places, index)
            before = kept[k - 1][1] if k > 0 else None
            after = kept[k][1] if k < len(kept) else None
            if before is not None and after is not None and index - places[k - 1] > MAX_GUARD_NOTS:
                raise fail(item, f"more than {MAX_GUARD_NOTS} NOTs side by side between two parts (the engine "
                           "decides each step across them by which of them matched)")  # fmt: skip
            if (before is None or after is None) and not (is_root and top_level):
                where = "first" if before is None else "last"
                raise fail(item, f"NOT may be {where} only in the top-level SEQ of a query's pattern; "
                           "inside, it must stand between two positive sub-patterns")  # fmt: skip
            # A NOT is anchored to one end type before it and one start type after it (GRETA §5): an optional
            # neighbour would leave the NOT between several types, or none.
            for side, neighbour in (("before", before), ("after", after)):
                if neighbour is None:
                    continue
                ends = last_types(neighbour) if side == "before" else first_types(neighbour)
                if nullable(neighbour) or len(ends) != 1:
                    raise fail(item, f"NOT needs one event type right {side} it; the pattern {side} it may "
                               f"{'be empty' if nullable(neighbour) else 'end with ' + ' or '.join(ends) if side == 'before' else 'start with ' + ' or '.join(ends)}"
                               " (an optional part P? or P* there is not supported next to a NOT)")  # fmt: skip
            if nullable(item.inner):
                raise fail(
                    item, "NOT of a pattern that matches the empty sequence (P? or P* alone) negates nothing"
                )
            part = (
                _placed(item, fail)
                if needs_positions(item.inner)
                else _split(item.inner, fail, top_level=False)
            )
            negations.append(
                Negation(
                    part,
                    previous=end_type(before) if before is not None else None,
                    following=start_type(after) if after is not None else None,
                    text=canonical(item),
                    node=item,
                )
            )
        if not positives:
            raise fail(p, "SEQ(...) needs at least one positive sub-pattern besides its NOTs")
        if len(positives) == 1:
            return positives[0]
        return SeqPattern(p.line, p.column, tuple(positives))

    positive = strip(pattern, True)
    template = build_template(positive) if typed else Template((), (), (), ())
    return SubPattern(positive, template, tuple(negations))


def _placed(negation: NegationPattern, fail: Fail) -> SubPattern:
    """``NOT N`` where N has a type at several places or ``P{n,}``: N's graph over its places, N's own NOTs
    between two parts guarding the pairs of places across them (``SubPattern.guards``)."""
    from hamlet.analysis.automaton import place_template  # (automaton.py builds on this module)

    inner = _split(negation.inner, fail, top_level=False, typed=False)  # (its NOTs, anchored and checked)
    guarded = {id(n.node): k for k, n in enumerate(inner.negations)}
    template, places, guards = place_template(
        negation.inner, fail, f"@{negation.line}:{negation.column}#", guarded
    )
    return SubPattern(negation.inner, template, inner.negations, places, guards)
