"""GRETA templates (GRETA §4.1, Algorithm 1): the automaton a positive pattern is matched with.

States are the event types of the pattern; a transition X → Y says that an X event may be immediately
followed by a Y event in a trend. It is labelled ``SEQ`` when it comes from a sequence and ``+`` when it
comes from a Kleene plus. Each pattern has one start type and one end type (GRETA Theorem 4.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from hamlet.language.nodes import EventTypePattern, KleenePattern, NegationPattern, Pattern, SeqPattern

Label = Literal["SEQ", "+"]


@dataclass(frozen=True)
class Transition:
    source: str
    target: str
    label: Label


@dataclass(frozen=True)
class Template:
    types: tuple[str, ...]  # in pattern order
    start: str
    end: str
    transitions: tuple[Transition, ...]

    def predecessor_types(self, event_type: str) -> tuple[str, ...]:
        """pt(E): the types whose events may immediately precede an event of ``event_type``."""
        return tuple(t.source for t in self.transitions if t.target == event_type)

    def transition(self, source: str, target: str) -> Transition | None:
        for t in self.transitions:
            if t.source == source and t.target == target:
                return t
        return None

    def describe(self) -> str:
        arrows = ", ".join(f"{t.source} -{t.label}-> {t.target}" for t in self.transitions) or "none"
        return f"start {self.start}, end {self.end}; transitions: {arrows}"


def start_type(pattern: Pattern) -> str:
    if isinstance(pattern, EventTypePattern):
        return pattern.type_name
    if isinstance(pattern, KleenePattern):
        return start_type(pattern.inner)
    return start_type(_positive_items(pattern)[0])


def end_type(pattern: Pattern) -> str:
    if isinstance(pattern, EventTypePattern):
        return pattern.type_name
    if isinstance(pattern, KleenePattern):
        return end_type(pattern.inner)
    return end_type(_positive_items(pattern)[-1])


def _positive_items(seq: SeqPattern) -> list[Pattern]:
    return [item for item in seq.items if not isinstance(item, NegationPattern)]


def build_template(pattern: Pattern) -> Template:
    """Algorithm 1 of GRETA on a positive pattern (negations already split off, see ``split``)."""
    types: list[str] = []
    transitions: list[Transition] = []

    def visit(p: Pattern) -> None:
        if isinstance(p, EventTypePattern):
            types.append(p.type_name)
        elif isinstance(p, KleenePattern):
            visit(p.inner)
            _add(transitions, Transition(end_type(p.inner), start_type(p.inner), "+"))
        else:
            items = _positive_items(p)
            for item in items:
                visit(item)
            for left, right in pairwise(items):
                _add(transitions, Transition(end_type(left), start_type(right), "SEQ"))

    visit(pattern)
    return Template(tuple(types), start_type(pattern), end_type(pattern), tuple(transitions))


def _add(transitions: list[Transition], transition: Transition) -> None:
    # (A+)+ yields A -+-> A twice; one transition says it.
    if transition not in transitions:
        transitions.append(transition)


def canonical(pattern: Pattern | NegationPattern) -> str:
    """The pattern's text without aliases: equal sub-patterns of different queries compare equal."""
    if isinstance(pattern, EventTypePattern):
        return pattern.type_name
    if isinstance(pattern, KleenePattern):
        inner = canonical(pattern.inner)
        return f"{inner}+" if isinstance(pattern.inner, EventTypePattern) else f"({inner})+"
    if isinstance(pattern, NegationPattern):
        return f"NOT {canonical(pattern.inner)}"
    return "SEQ(" + ", ".join(canonical(item) for item in pattern.items) + ")"
