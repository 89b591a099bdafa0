"""Analysis of one query: names resolved, pattern split, predicates classified and compiled, validated.

Everything the executors need about a query is here, checked once; errors point at the offending token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

from hamlet.analysis.automaton import StateTemplate, build_states
from hamlet.analysis.predicates import (
    EdgePredicate,
    LocalFn,
    compile_expression,
    compile_local,
    conjuncts,
    contains_equivalence,
    index_key,
    is_boolean,
    references,
    zero_divisor,
)
from hamlet.analysis.split import Negation, SubPattern, split_pattern, split_positions
from hamlet.analysis.template import canonical, has_optional, needs_positions, nullable, required_types
from hamlet.analysis.windows import Window
from hamlet.errors import QueryError
from hamlet.events import MICROS
from hamlet.language import nodes
from hamlet.language.nodes import (
    AggregateCall,
    AttributeName,
    ChoicePattern,
    EquivalenceList,
    EventTypePattern,
    KleenePattern,
    MinimalLengthPattern,
    NegationPattern,
    Node,
    OptionalPattern,
    Pattern,
    StarPattern,
    expression_text,
)

# The longest WITHIN or SLIDE: 100 years (of 365.25 days). Longer windows mean nothing for event streams and
# take window ends beyond the times datetimes and Spark's timestamps can hold.
MAX_DURATION = Fraction(36525 * 86400)
MAX_DURATION_TEXT = "100 years (3155760000 s)"
# States of one type in a NEXT query's deterministic template (dominance.rs: a set of them is one u64).
MAX_NEXT_STATES = 64


@dataclass(frozen=True)
class AggregateSpec:
    """One RETURN aggregate, its event type resolved (None for COUNT(*))."""

    function: str  # COUNT | SUM | MIN | MAX | AVG
    event_type: str | None
    attribute: str | None
    text: str  # as written, e.g. SUM(T.duration)


@dataclass(frozen=True)
class LocalPredicate:
    event_type: str
    test: LocalFn
    text: str
    expression: nodes.Expression | None = field(
        default=None, compare=False
    )  # what ``test`` was compiled from


@dataclass(frozen=True)
class AnalyzedQuery:
    name: str
    text: str
    pattern: SubPattern
    aggregates: tuple[AggregateSpec, ...]
    group_by: tuple[str, ...]
    equivalence: tuple[str, ...]
    local_predicates: tuple[LocalPredicate, ...]
    edge_predicates: tuple[EdgePredicate, ...]
    window: Window
    kleene_subpatterns: tuple[str, ...]  # canonical texts of the positive Kleene sub-patterns
    aliases: dict[str, str] = field(compare=False, default_factory=dict)  # alias or type → type
    # Event matching semantics (dissertation §2.4, Definitions 2.2-2.4): ANY, NEXT or CONT.
    semantics: str = "ANY"
    # The positive pattern holds P? or P* (dissertation §12): several start or end types, types not in every
    # trend (optional parts under a NOT do not count: ``template.has_optional``).
    optional: bool = False
    # A type at several places, P{n,}, OR or AND (dissertation §12): the graph's states are positions
    # (automaton.py); ``pattern`` then holds the pattern as written and the template projected on types.
    states: StateTemplate | None = None
    choice: str | None = None  # "OR" or "AND" between the pattern's operands, else None

    @cached_property
    def required_types(self) -> tuple[str, ...]:
        """The positive types every trend holds: a partition without one of them has no trend (once per
        query: an evaluation's setup asks for each graph and partition)."""
        return required_types(self.pattern.pattern)

    syntax: nodes.Query | None = field(compare=False, default=None)  # the query as written

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        """GROUP-BY ∪ equivalence attributes: events are partitioned by their values (GRETA §6)."""
        return tuple(dict.fromkeys(self.group_by + self.equivalence))

    @property
    def whole_substream(self) -> bool:
        """Whether the query reads every event of its partition, of any type: under the contiguous semantics
        an event the pattern does not mention still breaks contiguity (dissertation Example 2.7's c5)."""
        return self.semantics == "CONT"

    @cached_property
    def types(self) -> tuple[str, ...]:
        """Every event type the query reads, positive and negated (once per query)."""
        return tuple(dict.fromkeys(self.pattern.all_types()))

    @cached_property
    def place_type(self) -> dict[str, str]:
        """Each state of the query's graphs that is a place rather than a type (a position template's, a
        NOT's over a pattern with a type at several places) → the event type of its events."""
        out = dict(self.states.state_type) if self.states is not None else {}
        for part in self.pattern.walk():
            out.update(part.places)
        return out

    @cached_property
    def placement(self) -> dict[str, tuple[str, ...]]:
        """Per event type that some graph of the query reads at places, the nodes each of its events is:
        its states and places, and the type itself where another graph reads it as a type (``graph.placed``)."""
        names: dict[str, dict[str, None]] = {}
        for part in self.pattern.walk():
            if part is self.pattern and self.states is not None:
                states = [s for of in self.states.states_of.values() for s in of]
            else:
                states = list(part.template.types)
            for s in states:
                names.setdefault(self.place_type.get(s, s), {})[s] = None
        return {t: tuple(of) for t, of in names.items() if tuple(of) != (t,)}

    @cached_property
    def negated_types(self) -> frozenset[str]:
        """The types some NOT of the query reads (a type may also be positive, or under two NOTs:
        ``SEQ(A, NOT A, B)``, the last A before a B)."""
        return frozenset(t for n in self.pattern.negations for t in n.part.all_types())

    def local_predicates_of(self, event_type: str) -> tuple[LocalPredicate, ...]:
        return tuple(p for p in self.local_predicates if p.event_type == event_type)

    def edge_predicates_of(self, source: str, target: str) -> tuple[EdgePredicate, ...]:
        """The edge predicates from ``source`` to ``target`` (types, or states of ``states``: a predicate
        X.a op NEXT(Y).b holds between every place of X and every place of Y)."""
        source = self.place_type.get(source, source)
        target = self.place_type.get(target, target)
        return tuple(p for p in self.edge_predicates if p.source == source and p.target == target)

    def burst_obstacle(self, event_type: str) -> str | None:
        """Why a burst of ``event_type`` events cannot be applied to this query at once (None: it can).

        At once means: one graphlet-level snapshot per window and one factor for the whole burst, so
        nothing the burst's events meet may depend on the event itself.
        """
        root = self.pattern
        if event_type not in root.template.types:
            return f"{event_type} is negated"
        if event_type in self.negated_types:
            return f"{event_type} is also negated: each {event_type} event may be a NOT's match"
        if self.semantics != "ANY":
            return f"SEMANTICS {self.semantics}: each {event_type} event keeps only some of its edges"
        if self.states is not None:
            return (
                "position states (a type at several places, P{n,}, OR or AND): each event runs at every place"
            )
        if self.optional:
            return "an optional part (P? or P*): bursts are taken at once only in patterns without one"
        guarded = {(n.previous, n.following) for n in root.negations}
        for t in root.template.transitions:
            if t.target == event_type and self.edge_predicates_of(t.source, t.target):
                return f"edge predicate on {t.source} -> {t.target}"
            if t.source == event_type and (
                self.edge_predicates_of(t.source, t.target) or (t.source, t.target) in guarded
            ):
                return f"{t.source} -> {t.target} needs each {event_type} event on its own"
        if event_type == root.template.end and any(n.following is None for n in root.negations):
            return f"a trailing NOT waits for each {event_type} event's time"
        return None


def analyze_query(query: nodes.Query, source: str) -> AnalyzedQuery:
    return _Analyzer(query, source).run()


class _Analyzer:
    def __init__(self, query: nodes.Query, source: str) -> None:
        self.query = query
        self.source = source
        self.aliases: dict[str, str] = {}  # alias or type name → type
        self.positive: set[str] = set()

    def fail(self, node: Node, message: str, expected: str | None = None) -> QueryError:
        return QueryError(message, line=node.line, column=node.column, query=self.query.name, expected=expected,
                          source=self.source)  # fmt: skip

    def run(self) -> AnalyzedQuery:
        q = self.query
        self._collect_types(q.pattern, negated=False)
        if needs_positions(q.pattern):
            states, negations = self._positions(q)
            pattern = SubPattern(q.pattern, states.type_template(), negations)
        else:
            states = None
            # (the split's errors about NOT first: SEQ(NOT A) is empty too, but its NOT is what is wrong)
            pattern = split_pattern(q.pattern, self.fail)
            self._not_empty(q.pattern)
        self.positive = set(pattern.template.types)
        calls = [item for item in q.returns if isinstance(item, AggregateCall)]
        aggregates = tuple(self._aggregate(item) for item in calls)
        seen: dict[tuple[str, str | None, str | None], str] = {}
        for call, spec in zip(calls, aggregates):
            key = (spec.function, spec.event_type, spec.attribute)
            if key in seen:
                # Output rows are keyed by the aggregate: a second one would be merged into the first.
                raise self.fail(call, f"{spec.text} asks again for {seen[key]}; RETURN each aggregate once")
            seen[key] = spec.text
        if not aggregates:
            raise self.fail(q, "RETURN holds no aggregate; add COUNT(*), COUNT(E), SUM, MIN, MAX or AVG")
        group_by = tuple(self._group_attribute(a) for a in q.group_by)
        for item in q.returns:
            if isinstance(item, AttributeName):
                self._group_attribute(item)
                if item.attribute not in group_by:
                    raise self.fail(item, f"RETURN attribute '{item.text()}' is not in GROUP-BY; only grouping "
                                    "attributes may be returned besides aggregates")  # fmt: skip
        equivalence: dict[str, None] = {}  # (in order, once each)
        local: list[LocalPredicate] = []
        edge: list[EdgePredicate] = []
        if q.where is not None:
            for conjunct in conjuncts(q.where):
                if isinstance(conjunct, EquivalenceList):
                    equivalence.update(dict.fromkeys(conjunct.attributes))
                    continue
                nested = contains_equivalence(conjunct)
                if nested is not None:
                    raise self.fail(nested, "an equivalence list [..] must be a top-level conjunct of WHERE "
                                    "(joined by AND), not inside OR or a comparison")  # fmt: skip
                if not is_boolean(conjunct):
                    raise self.fail(conjunct, f"'{expression_text(conjunct)}' is not a condition",
                                    expected="a comparison such as T.speed < 10")  # fmt: skip
                self._classify(conjunct, pattern, local, edge)
        for duration in (q.within, q.slide):
            if duration is not None and duration.seconds > MAX_DURATION:
                raise self.fail(duration, f"{duration.text} is longer than {MAX_DURATION_TEXT}, the longest window "
                                "or slide", expected="a duration of at most 100 years")  # fmt: skip
            if duration is not None and (duration.seconds * MICROS).denominator != 1:
                # (the tables the engine writes hold window bounds in microseconds, as Spark's timestamps do)
                raise self.fail(duration, f"{duration.text} is not a whole number of microseconds, the finest time "
                                "of a window's bounds", expected="a duration of whole microseconds")  # fmt: skip
        window = Window(q.within.seconds, q.slide.seconds if q.slide else q.within.seconds)
        return AnalyzedQuery(
            name=q.name,
            text=q.text,
            pattern=pattern,
            aggregates=aggregates,
            group_by=group_by,
            equivalence=tuple(equivalence),
            local_predicates=tuple(local),
            edge_predicates=tuple(edge),
            window=window,
            kleene_subpatterns=tuple(dict.fromkeys(_kleene_subpatterns(q.pattern))),
            aliases=dict(self.aliases),
            semantics=q.semantics.kind if q.semantics is not None else "ANY",
            optional=has_optional(q.pattern),
            states=states,
            choice=q.pattern.op if isinstance(q.pattern, ChoicePattern) else None,
            syntax=q,
        )

    def _not_empty(self, pattern: Pattern) -> None:
        if nullable(pattern):
            raise self.fail(pattern, f"the pattern {canonical(pattern)} matches the empty sequence: every part "
                            "of it is optional (P? or P*); a trend needs at least one event")  # fmt: skip

    def _positions(self, q: nodes.Query) -> tuple[StateTemplate, tuple[Negation, ...]]:
        """The position template of a pattern that needs one, and its NOTs; what it cannot be combined with
        is refused here, where it is written.

        A leading NOT reads only the trend's first time and the window's start, a trailing one only its last
        time and the window's end (SEMANTICS.md): which states a trend passes does not matter, so they hold
        at every start and end state. A NOT between two parts, anywhere in the pattern, guards the follow
        pairs of positions across it, and the deterministic template's transitions with the outcomes that
        take them (``automaton.build_states``): exact for every parse."""
        self._not_empty(q.pattern)
        split = split_positions(q.pattern, self.fail)
        if isinstance(q.pattern, ChoicePattern) and q.pattern.op == "AND":
            for item in q.returns:
                if isinstance(item, AggregateCall) and item.target is not None:
                    raise self.fail(item, f"{item.text()} is not defined for P AND Q: a conjunction matches pairs "
                                    "of trends, and the dissertation (§12) defines only their number, COUNT(*)")  # fmt: skip
        states = build_states(q.pattern, self.fail, split.middle, split.leading, split.trailing)
        if q.semantics is not None and q.semantics.kind == "NEXT":
            # (the kernel keeps the states a longer trend may stand at as one 64-bit set per event: dominance.rs)
            crowded = [t for t, of in states.states_of.items() if len(of) > MAX_NEXT_STATES]
            if crowded:
                raise self.fail(q.semantics, f"SEMANTICS NEXT on a pattern whose type {crowded[0]} has "
                                f"{len(states.states_of[crowded[0]])} states in its deterministic template (at most "
                                f"{MAX_NEXT_STATES}): rewrite the pattern with fewer places of that type")  # fmt: skip
        return states, split.negations

    def _collect_types(self, p: Pattern | NegationPattern, negated: bool) -> None:
        """Types and aliases. A type may stand at several places (dissertation §12); predicates and
        aggregates name a type and hold at all its places, so a type takes at most one alias."""
        if isinstance(p, EventTypePattern):
            known = self.aliases.get(p.type_name)
            if known is not None and known != p.type_name:
                raise self.fail(p, f"{p.type_name} is already an alias of {known}")
            self.aliases[p.type_name] = p.type_name
            if p.alias is not None:
                other = self.aliases.get(p.alias)
                if other is not None and other != p.type_name or p.alias == p.type_name:
                    what = "an event type" if other == p.alias else f"the alias of {other}"
                    raise self.fail(p, f"alias {p.alias} is already {what}")
                named = [
                    a for a, t in self.aliases.items() if t == p.type_name and a not in (p.type_name, p.alias)
                ]
                if named:
                    raise self.fail(p, f"{p.type_name} already has the alias {named[0]}; a type at several places "
                                    "takes one alias (predicates and aggregates hold at all its places)")  # fmt: skip
                self.aliases[p.alias] = p.type_name
        elif isinstance(
            p, (KleenePattern, NegationPattern, OptionalPattern, StarPattern, MinimalLengthPattern)
        ):
            self._collect_types(p.inner, negated or isinstance(p, NegationPattern))
        elif isinstance(p, ChoicePattern):
            for operand in p.operands:
                self._collect_types(operand, negated)
        else:
            for item in p.items:
                self._collect_types(item, negated)

    def _resolve(self, node: Node, name: str, what: str) -> str:
        if name not in self.aliases:
            known = ", ".join(sorted(self.aliases)) or "none"
            raise self.fail(node, f"{what} refers to '{name}', which is neither an event type nor an alias "
                            f"in the pattern (known: {known})")  # fmt: skip
        return self.aliases[name]

    def _aggregate(self, call: AggregateCall) -> AggregateSpec:
        if call.target is None:
            return AggregateSpec("COUNT", None, None, call.text())
        event_type = self._resolve(call, call.target, call.text())
        if event_type not in self.positive:
            raise self.fail(call, f"{call.text()} aggregates {event_type}, which only appears under NOT; "
                            "negated events belong to no trend")  # fmt: skip
        return AggregateSpec(call.function, event_type, call.attribute, call.text())

    def _group_attribute(self, name: AttributeName) -> str:
        if name.qualifier is not None:
            self._resolve(name, name.qualifier, f"grouping attribute {name.text()}")
        return name.attribute

    def _classify(self, expr: nodes.Expression, pattern: SubPattern, local: list[LocalPredicate],
                  edge: list[EdgePredicate]) -> None:  # fmt: skip
        text = expression_text(expr)
        if (found := zero_divisor(expr)) is not None:
            division, value = found
            written = expression_text(division.right)
            worked = "" if written == repr(value) else f" (= {value!r})"
            written = written if len(written) <= 40 else written[:40] + "..."
            what, result = ("division", "quotient") if division.op == "/" else ("modulo", "remainder")
            raise self.fail(division.right, f"{what} by zero: the divisor {written}{worked} makes every {result} "
                            "null, so no comparison with it holds", expected="a divisor other than 0")  # fmt: skip
        refs = references(expr)
        if not refs:
            raise self.fail(expr, f"condition '{text}' references no event attribute")
        previous = {self._resolve(r, r.name, "the predicate") for r in refs if not r.next}
        following = {self._resolve(r, r.name, "the predicate") for r in refs if r.next}
        if not following:
            if len(previous) > 1:
                raise self.fail(expr, f"condition '{text}' mixes event types {', '.join(sorted(previous))}; a "
                                "local predicate reads one type, an edge predicate X.a op NEXT(Y).b two adjacent ones")  # fmt: skip
            local.append(LocalPredicate(previous.pop(), compile_local(expr), text, expr))
            return
        if not previous:
            raise self.fail(expr, f"edge predicate '{text}' reads only NEXT(...); it must compare the previous "
                            "event too, e.g. S.price > NEXT(S).price")  # fmt: skip
        if len(previous) > 1 or len(following) > 1:
            raise self.fail(expr, f"edge predicate '{text}' must read one previous type X and one NEXT(Y)")
        source, target = previous.pop(), following.pop()
        if not any(part.follows(source, target) for part in pattern.walk()):
            raise self.fail(expr, f"edge predicate '{text}': no {source} event is ever immediately followed "
                            f"by a {target} event in this pattern")  # fmt: skip
        key = index_key(expr)
        key_op, source_key, target_key = key if key is not None else (None, None, None)
        edge.append(
            EdgePredicate(
                source, target, compile_expression(expr), text, key_op, source_key, target_key, expr
            )
        )


def _kleene_subpatterns(p: Pattern | NegationPattern) -> list[str]:
    if isinstance(p, (EventTypePattern, NegationPattern, MinimalLengthPattern, ChoicePattern)):
        # (position templates share nothing: ``workload.sharing_obstacle``)
        return []
    if isinstance(p, KleenePattern):
        return [canonical(p)] + _kleene_subpatterns(p.inner)
    if isinstance(p, (OptionalPattern, StarPattern)):
        return _kleene_subpatterns(p.inner)
    return [k for item in p.items for k in _kleene_subpatterns(item)]
