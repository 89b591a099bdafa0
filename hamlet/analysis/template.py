"""GRETA templates (GRETA §4.1, Algorithm 1): the automaton a positive pattern is matched with.

States are the event types of the pattern; a transition X → Y says that an X event may be immediately
followed by a Y event in a trend. It is labelled ``SEQ`` when it comes from a sequence and ``+`` when it
comes from a Kleene plus (or star). Each pattern has one start type and one end type (GRETA Theorem 4.1),
unless optional parts (``P?``, ``P*``) give it several.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

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

Label = Literal["SEQ", "+"]


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    label: Label


@dataclass(frozen=True)
class Template:
    types: tuple[str, ...]  # in pattern order
    starts: tuple[str, ...]  # the types a trend may start with (one, unless an optional part comes first)
    ends: tuple[str, ...]  # the types a trend may end with
    transitions: tuple[Transition, ...]
    # The transitions keyed by (source, target), the first of a pair winning: ``build_template`` hands over
    # the dict it builds them in; other makers leave it to ``__post_init__``. (Derived: not compared.)
    by_pair: dict[tuple[str, str], Transition] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.by_pair and self.transitions:
            index: dict[tuple[str, str], Transition] = {}
            for t in self.transitions:
                index.setdefault((t.source, t.target), t)
            object.__setattr__(self, "by_pair", index)  # (frozen: set once, here)

    @property
    def start(self) -> str:
        """The start type of a pattern with one (GRETA Theorem 4.1; ``P?`` and ``P*`` may give several)."""
        if len(self.starts) != 1:
            raise ValueError(f"the pattern has {len(self.starts)} start types: {', '.join(self.starts)}")
        return self.starts[0]

    @property
    def end(self) -> str:
        if len(self.ends) != 1:
            raise ValueError(f"the pattern has {len(self.ends)} end types: {', '.join(self.ends)}")
        return self.ends[0]

    def predecessor_types(self, event_type: str) -> tuple[str, ...]:
        """pt(E): the types whose events may immediately precede an event of ``event_type``."""
        return tuple(t.source for t in self.transitions if t.target == event_type)

    def transition(self, source: str, target: str) -> Transition | None:
        return self.by_pair.get((source, target))

    def describe(self) -> str:
        arrows = ", ".join(f"{t.source} -{t.label}-> {t.target}" for t in self.transitions) or "none"
        return f"start {' | '.join(self.starts)}, end {' | '.join(self.ends)}; transitions: {arrows}"


def merge_ends(templates: Sequence[Template]) -> Template:
    """HAMLET's merged template (§2, Figure 3(b)) of templates that are equal but for their end types
    (``partition.prefix_key``): the shared positions once, then each template's end, with every transition
    of each. A trend of the merged template ending at one template's end is a trend of that template."""
    first = templates[0]
    ends = tuple(t.end for t in templates)
    types = tuple(t for t in first.types if t != first.end) + ends
    transitions = tuple(dict.fromkeys(tr for t in templates for tr in t.transitions))
    return Template(types, first.starts, ends, transitions)


# Start types, end types and emptiness of a pattern (its Glushkov automaton: each type appears once, so a state
# per type). ``P?`` and ``P*`` match the empty sequence; a SEQ starts with any of its items up to the first
# that cannot be empty, and ends likewise.


def nullable(pattern: Pattern) -> bool:
    """Whether ``pattern`` matches the empty sequence (only through ``P?`` or ``P*``)."""
    if isinstance(pattern, EventTypePattern):
        return False
    if isinstance(pattern, (OptionalPattern, StarPattern)):
        return True
    if isinstance(pattern, (KleenePattern, MinimalLengthPattern)):
        return nullable(pattern.inner)
    if isinstance(pattern, ChoicePattern):
        return any(nullable(operand) for operand in pattern.operands)
    return all(nullable(item) for item in _positive_items(pattern))


def first_types(pattern: Pattern) -> tuple[str, ...]:
    if isinstance(pattern, EventTypePattern):
        return (pattern.type_name,)
    if isinstance(pattern, (KleenePattern, OptionalPattern, StarPattern, MinimalLengthPattern)):
        return first_types(pattern.inner)
    if isinstance(pattern, ChoicePattern):
        return tuple(dict.fromkeys(t for operand in pattern.operands for t in first_types(operand)))
    out: list[str] = []
    for item in _positive_items(pattern):
        out.extend(first_types(item))
        if not nullable(item):
            break
    return tuple(dict.fromkeys(out))


def last_types(pattern: Pattern) -> tuple[str, ...]:
    if isinstance(pattern, EventTypePattern):
        return (pattern.type_name,)
    if isinstance(pattern, (KleenePattern, OptionalPattern, StarPattern, MinimalLengthPattern)):
        return last_types(pattern.inner)
    if isinstance(pattern, ChoicePattern):
        return tuple(dict.fromkeys(t for operand in pattern.operands for t in last_types(operand)))
    out: list[str] = []
    for item in reversed(_positive_items(pattern)):
        out.extend(last_types(item))
        if not nullable(item):
            break
    return tuple(dict.fromkeys(out))


def required_types(pattern: Pattern) -> tuple[str, ...]:
    """The types every trend of ``pattern`` holds (all of them unless parts are optional)."""
    if isinstance(pattern, EventTypePattern):
        return (pattern.type_name,)
    if isinstance(pattern, (OptionalPattern, StarPattern)):
        return ()
    if isinstance(pattern, (KleenePattern, MinimalLengthPattern)):
        return required_types(pattern.inner)
    if isinstance(pattern, ChoicePattern):
        # Only what every operand needs: a trend of any operand counts (and pairs of AND trends may come
        # from different partitions of one group, so none may be skipped for lacking one operand's types).
        needed = [set(required_types(operand)) for operand in pattern.operands]
        return tuple(t for t in required_types(pattern.operands[0]) if all(t in n for n in needed))
    return tuple(t for item in _positive_items(pattern) for t in required_types(item))


def has_optional(pattern: Pattern | NegationPattern) -> bool:
    """Whether the positive part of ``pattern`` holds a ``P?`` or ``P*`` (several start or end types, trends
    without some of its types). A NOT's optional parts do not count: a NOT only hands its parent L, the
    latest start of a match, whatever the match's first and last types (``native/src/negation.rs``)."""
    if isinstance(pattern, (OptionalPattern, StarPattern)):
        return True
    if isinstance(pattern, (EventTypePattern, NegationPattern)):
        return False
    if isinstance(pattern, (KleenePattern, MinimalLengthPattern)):
        return has_optional(pattern.inner)
    if isinstance(pattern, ChoicePattern):
        return any(has_optional(operand) for operand in pattern.operands)
    return any(has_optional(item) for item in pattern.items)


def start_type(pattern: Pattern) -> str:
    """The start type of a pattern that has one (callers check ``first_types`` first where it may not)."""
    return first_types(pattern)[0]


def end_type(pattern: Pattern) -> str:
    return last_types(pattern)[-1]


def _positive_items(seq: SeqPattern) -> list[Pattern]:
    return [item for item in seq.items if not isinstance(item, NegationPattern)]


def build_template(pattern: Pattern) -> Template:
    """Algorithm 1 of GRETA on a positive pattern (negations already split off, see ``split``), extended to
    ``P?`` and ``P*`` (dissertation §12) as a Glushkov automaton: SEQ links each item's end types to the
    start types of every later item that only optional items separate from it; ``P*`` loops like ``P+``."""
    types: list[str] = []
    # One transition per pair of types, in the order first implied: (A+)+ yields A -+-> A twice,
    # (SEQ(E?, D?))+ E -SEQ-> D and E -+-> D (an edge of the graph counts once, whatever operators imply it).
    # Keyed by (source, target) so that a SEQ of n optional items (n^2 transitions) builds in O(n^2).
    transitions: dict[tuple[str, str], Transition] = {}

    def add(source: str, target: str, label: Label) -> None:
        transitions.setdefault((source, target), Transition(source, target, label))

    def visit(p: Pattern) -> None:
        if isinstance(p, EventTypePattern):
            types.append(p.type_name)
        elif isinstance(p, (KleenePattern, StarPattern)):
            visit(p.inner)
            heads = first_types(p.inner)
            for x in last_types(p.inner):
                for y in heads:
                    add(x, y, "+")
        elif isinstance(p, OptionalPattern):
            visit(p.inner)
        elif isinstance(p, (MinimalLengthPattern, ChoicePattern)):
            raise TypeError("P{n,}, OR and AND have position templates (automaton.py), not type templates")
        else:
            items = _positive_items(p)
            for item in items:
                visit(item)
            firsts = [first_types(item) for item in items]
            lasts = [last_types(item) for item in items]
            empty = [nullable(item) for item in items]
            for i in range(len(items)):
                for j in range(i + 1, len(items)):
                    for x in lasts[i]:
                        for y in firsts[j]:
                            add(x, y, "SEQ")
                    if not empty[j]:
                        break

    visit(pattern)
    # (the dict goes along: it holds each pair's first transition, the one ``transition`` answers)
    return Template(
        tuple(types), first_types(pattern), last_types(pattern), tuple(transitions.values()), transitions
    )


def canonical(pattern: Pattern | NegationPattern) -> str:
    """The pattern's text without aliases: equal sub-patterns of different queries compare equal."""
    if isinstance(pattern, EventTypePattern):
        return pattern.type_name
    if isinstance(pattern, KleenePattern):
        inner = canonical(pattern.inner)
        return f"{inner}+" if isinstance(pattern.inner, EventTypePattern) else f"({inner})+"
    if isinstance(pattern, (OptionalPattern, StarPattern)):
        inner = canonical(pattern.inner)
        mark = "?" if isinstance(pattern, OptionalPattern) else "*"
        return f"{inner}{mark}" if isinstance(pattern.inner, EventTypePattern) else f"({inner}){mark}"
    if isinstance(pattern, MinimalLengthPattern):
        inner = canonical(pattern.inner)
        inner = inner if isinstance(pattern.inner, EventTypePattern) else f"({inner})"
        return f"{inner}{{{pattern.minimum},}}"
    if isinstance(pattern, ChoicePattern):
        return f" {pattern.op} ".join(canonical(operand) for operand in pattern.operands)
    if isinstance(pattern, NegationPattern):
        return f"NOT {canonical(pattern.inner)}"
    return "SEQ(" + ", ".join(canonical(item) for item in pattern.items) + ")"


def needs_positions(pattern: Pattern) -> bool:
    """Whether the pattern's template needs position states: a type at two places, a minimal length, OR
    or AND. Other patterns keep one state per type (GRETA's template). A NOT's pattern is a graph of its own
    (``split.py``, with a template of its own places where it needs them): ``SEQ(A, NOT A, B)`` and
    ``SEQ(A, NOT SEQ(C, C), B)`` keep GRETA's template."""

    def visit(p: Pattern | NegationPattern, seen: set[str]) -> bool:
        if isinstance(p, (MinimalLengthPattern, ChoicePattern)):
            return True
        if isinstance(p, EventTypePattern):
            if p.type_name in seen:
                return True
            seen.add(p.type_name)
            return False
        if isinstance(p, NegationPattern):
            return False
        if isinstance(p, (KleenePattern, OptionalPattern, StarPattern)):
            return visit(p.inner, seen)
        return any(visit(item, seen) for item in p.items)

    return visit(pattern, set())
