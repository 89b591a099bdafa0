"""The reach of every stored node of a graph under skip-till-next-match (``graph.SemanticsEdges``,
``dominance.LongerTrends``): each node numbered in commit order, with the numbers of the nodes that have a
path of one edge or more to it; nodes out of the window horizon are dropped (``native/src/reach.rs`` keeps
the same as bitsets)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any

from hamlet.analysis.windows import before


class Reaches:
    def __init__(self, horizon: Any) -> None:
        self.horizon = horizon
        self.number: dict[Hashable, int] = {}  # key of a stored node → its number, while in the horizon
        self.reach: dict[int, frozenset[int]] = {}  # number → numbers of the nodes with a path to it
        # (time, number, key, node) in order, for pruning; holding the node keeps the ids in its key unique
        self.committed: deque[tuple[Any, int, Hashable, Any]] = deque()
        self.next_number = 0

    def add(self, key: Hashable, node: Any, time: Any, reach: frozenset[int] | None) -> None:
        """Number a stored node (``key`` names it) with its reach, after dropping the nodes that share no
        window with a node at ``time``."""
        oldest = before(time, self.horizon)
        committed = self.committed
        while committed and committed[0][0] <= oldest:
            _, n, old, _ = committed.popleft()
            del self.reach[n]
            del self.number[old]
        n = self.next_number
        self.next_number += 1
        self.number[key] = n
        self.reach[n] = reach if reach is not None else frozenset()
        committed.append((time, n, key, node))
