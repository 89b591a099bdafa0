"""The choice of the query set that shares a burst (HAMLET §4.3), linear in the number of queries.

* Snapshot-driven pruning (Theorem 4.3): a query that introduces no snapshot for this burst — it matches
  the same events as the shared graphlet — is always shared.
* Benefit-driven pruning (Theorem 4.5): every other query is shared exactly when sharing it is beneficial
  on its own (its benefit does not depend on which other queries share, by the theorem), so each query is
  classified once: no plan below level 2 of the search space is ever visited.

A "shared" set of fewer than two queries shares nothing: those queries run alone. Queries with the same
local predicates on the burst's type match the same events: they are one candidate (``queries`` > 1).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from hamlet.optimizer.benefit import CostModel

Name = TypeVar("Name", bound=Hashable)


@dataclass(frozen=True)
class Candidate(Generic[Name]):
    """A query — or a class of queries that match the same events of the burst, which the pruning
    principles classify alike (same snapshots, same benefit): ``queries`` of them."""

    name: Name
    filtered: bool  # has local predicates on the burst's type: its matches must be checked per event
    rejected: (
        int  # events of the burst it matches differently from the shared graphlet: event-level snapshots
    )
    windows: int
    queries: int = 1


def choose_sharing(candidates: Sequence[Candidate[Name]], b: int, groups: int, model: CostModel) -> set[Name]:
    shared = [
        c for c in candidates
        if c.rejected == 0 or model.benefit(b, groups, c.windows, c.filtered, c.rejected) > 0
    ]  # fmt: skip
    return {c.name for c in shared} if sum(c.queries for c in shared) > 1 else set()
