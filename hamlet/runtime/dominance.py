"""Skip-till-next-match on a position template (dissertation §2.4, Definition 2.3, on §12's templates).

NEXT keeps a trend unless a longer trend has the same first and last events and a strict superset of its
middle events. On GRETA's template (one state per type) such a longer trend replaces an edge of the
shorter one by a path, so the NEXT trends are the paths of the transitive reduction
(``graph.SemanticsEdges``). On a position template (``hamlet/analysis/automaton.py``) an event stands at
several states and a longer trend through the same events may run along other states than the shorter
one: over ``a1 b2 a3``, ``SEQ(A, A) OR SEQ(A, B, A)`` has (a1, a3) along A#1 A#2 and (a1, b2, a3) along
A#1 B A#3, which drops it; no edge of (a1, a3) is bypassed by a path to the same node.

What decides is, per partial trend T ending at node (v, t) of the graph (an event at a state), the set R
of states at which a longer trend T' ⊋ T with the same first event (at least one event more so far) may
stand at v. T' holds every event of T in order and may insert events between two of them. With
(u, s) → (v, t) the last edge of T and R_u the set at u:

    R_v = { t' : (u, s') has a path of one edge or more to (v, t') for some s' in R_u,
                 or (u, s) has a path of two edges or more to (v, t') }

R is empty at T's first event (T' starts there too). T is a NEXT trend iff R at its last event holds no end
state; a partial trend whose R holds one may still become a NEXT trend later (T' must go on along its own
states). So each node's aggregate is split by R (``SplitAlgebra``): the finals take the parts whose R holds
no end state, every part goes on. The kernel computes the same (``native/src/dominance.rs``); this is the
reference the tests hold it to, what runs a partition the kernel declines and what ``hamlet trends`` walks.

Paths are those of GRETA's graph (types, times, edge predicates), so every node a path from (u, s') passes
is reached from T's first event too: the reach of a node, as in ``SemanticsEdges``, is the set of stored
nodes with a path of one edge or more to it, and the union of its predecessors' reaches holds those with a
path of two or more. Cost per event: every predecessor node of each of its states, and per predecessor
and part, a test per pair of states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hamlet.analysis.automaton import StateTemplate
from hamlet.events import Event
from hamlet.runtime.aggregates import Algebra, ConjunctionAlgebra
from hamlet.runtime.reaches import Reaches
from hamlet.runtime.sources import Source

Split = dict[frozenset[str], Any]  # R → the aggregate of the partial trends with that R
# Per state of an event's type, its node's (predecessor nodes with their aggregates, reach, reach of two
# edges or more)
Nodes = dict[str, tuple[list[tuple[Event, dict[int, Any]]], frozenset[int], frozenset[int]]]


def dominance_applies(query_states: StateTemplate | None) -> bool:
    """Whether NEXT needs the states longer trends may stand at: some type has several states."""
    return query_states is not None and any(len(s) > 1 for s in query_states.states_of.values())


class SplitAlgebra:
    """An algebra's aggregates split by R (the states a longer trend may stand at): added part by part,
    extended part by part; a trend starting at an event has R empty."""

    def __init__(self, base: Algebra) -> None:
        self.base = base
        self.zero: Split = {}

    def add(self, a: Split, b: Split) -> Split:
        out = dict(a)
        add = self.base.add
        for r, x in b.items():
            y = out.get(r)
            out[r] = x if y is None else add(y, x)
        return out

    def extend(self, acc: Split, event: Event, start: bool) -> Split | None:
        extend = self.base.extend
        out: Split = {}
        for r, x in acc.items():
            y = extend(x, event, start and not r)
            if y is not None:
                out[r] = y
        if start and frozenset() not in acc:
            y = extend(self.base.zero, event, True)  # type: ignore[arg-type]
            if y is not None:
                out[frozenset()] = y
        return out or None


class LongerTrends:
    """NEXT's edges on a position template: every edge of GRETA's graph, each predecessor's parts moved to
    their R at the new event (module doc); ``kept`` gives what a node adds to the finals. The interface of
    ``graph.SemanticsEdges``."""

    kind = "NEXT"

    def __init__(self, incoming: dict[str, list[Source]], states: StateTemplate, algebra: Algebra,
                 horizon: Any) -> None:  # fmt: skip
        self.incoming = incoming
        self.states = states
        self.algebra = algebra  # the base one (a part's aggregate)
        # keyed by (id of the node's attributes: its event, state): what finds the other nodes of an event
        self.reaches = Reaches(horizon)
        self.pending: dict[int, frozenset[int]] = {}  # id(node) → its reach, computed, not yet committed
        # Per event of the current time, by the id of its attributes (``graph.placed`` gives each event one
        # object that all its nodes share): its ``Nodes``
        self.siblings: dict[int, Nodes] = {}
        self.time: Any = None
        # Of the last event chosen for, per predecessor node: its aggregates and R → the R they moved to
        # (what ``hamlet trends`` walks back along).
        self.moves: list[tuple[Event, dict[int, Split], dict[frozenset[str], frozenset[str]]]] = []

    def _nodes_of(self, event: Event) -> Nodes:
        """Per state of the event's type: its node's predecessors, reach and reach of two edges or more."""
        if event.time != self.time:
            self.siblings.clear()
            self.time = event.time
        key = id(event.attributes)
        found = self.siblings.get(key)
        if found is None:
            found = {}
            for state in self.states.states_of[self.states.state_type[event.type]]:
                node = Event(state, event.time, event.attributes)
                candidates = [c for src in self.incoming[state] for c in src.matching(node)]  # type: ignore[union-attr]
                numbers = [self.reaches.number[_key(previous)] for previous, _ in candidates]
                longer: set[int] = set()
                for n in numbers:
                    longer.update(self.reaches.reach[n])
                found[state] = (candidates, frozenset(longer.union(numbers)), frozenset(longer))
            self.siblings[key] = found
        return found

    def choose(self, event: Event) -> list[tuple[Event, dict[int, Any]]]:
        """Every predecessor node of ``event`` with its aggregates per window class, each part moved to its
        R at ``event``."""
        nodes = self._nodes_of(event)
        candidates, reach, _ = nodes[event.type]
        self.pending[id(event)] = reach
        add = self.algebra.add
        chosen = []
        self.moves = []
        for previous, aggregates in candidates:
            moved: dict[frozenset[str], frozenset[str]] = {}
            out: dict[int, Split] = {}
            for k, parts in aggregates.items():
                split: Split = {}
                for r, x in parts.items():
                    if r not in moved:
                        moved[r] = self._moved(previous, r, nodes)
                    y = split.get(moved[r])
                    split[moved[r]] = x if y is None else add(y, x)
                out[k] = split
            chosen.append((previous, out))
            self.moves.append((previous, aggregates, moved))
        return chosen

    def _moved(self, previous: Event, r: frozenset[str], nodes: Nodes) -> frozenset[str]:
        """R at the new event's nodes (``nodes``) of a part with R = ``r`` at ``previous``: the states that a
        node of ``previous``'s event at a state of r reaches, or ``previous`` itself by two edges or more."""
        number = self.reaches.number
        own = number[_key(previous)]
        at = [n for s in r if (n := number.get((id(previous.attributes), s))) is not None]
        return frozenset(t for t, (_, one, two) in nodes.items() if own in two or any(n in one for n in at))

    def kept(self, parts: Split, state: str, ends: Callable[[str], frozenset[int]] | None = None) -> Any:
        """What a node at ``state`` adds to the finals: the parts whose R holds no state a trend ends at
        (None: nothing). ``ends(s)``: the operands a trend ending at state s of this event ends (default:
        those s ends; with a NOT last in an operand, those whose NOT has no match after the event before the
        window's end: ``TrendGraph.ends_of``, so a longer trend of an operand whose NOT matched drops
        nothing). For P AND Q, whose trends are pairs of a trend of P and one of Q, each under the semantics
        on its own (SEMANTICS.md), a part's trends are P's where ``state`` ends P and no state of R does,
        and Q's alike: its class (``ConjunctionAlgebra``) follows from both."""
        ends = ends or (lambda s: self.states.accepts.get(s, frozenset()))
        add = self.algebra.add
        total = None
        conjunction = isinstance(self.algebra, ConjunctionAlgebra)
        for r, x in parts.items():
            longer = frozenset().union(*map(ends, r))
            if conjunction:
                x = ConjunctionAlgebra.restricted(x, ends(state) - longer)
                if x is None:
                    continue
            elif longer or not ends(state):
                continue
            total = x if total is None else add(total, x)
        return total

    def commit(self, event: Event, stored: bool) -> None:
        """``event``'s aggregates are final (``stored``: it has one in some window and may precede others)."""
        reach = self.pending.pop(id(event), None)
        if stored:
            self.reaches.add(_key(event), event, event.time, reach)

    def crowded(self, event: Event) -> bool:
        return False


def _key(node: Event) -> tuple[int, str]:
    """A node by its event (``graph.placed`` gives each event one attributes object) and its state."""
    return id(node.attributes), node.type
