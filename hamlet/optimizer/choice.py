"""The choice of the query set that shares a burst (HAMLET §4.3), linear in the number of queries.

* Snapshot-driven pruning (Theorem 4.3): a query that introduces no snapshot for this burst — it matches
  every event of the burst — is always shared.
* Benefit-driven pruning (Theorem 4.5): every other query is shared exactly when sharing it is beneficial
  on its own (its benefit does not depend on which other queries share, by the theorem), so each query is
  classified once: no plan below level 2 of the search space is ever visited.

A "shared" set of fewer than two queries shares nothing: those queries run alone.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from hamlet.optimizer.benefit import CostModel


@dataclass(frozen=True)
class Candidate:
    name: str
    filtered: bool  # has local predicates on the burst's type: its matches must be checked per event
    rejected: int  # events of the burst it does not match: event-level snapshots if shared
    windows: int


def choose_sharing(candidates: Sequence[Candidate], b: int, groups: int, model: CostModel,
                   always: Collection[str] = ()) -> set[str]:  # fmt: skip
    """``always``: queries known to match every event of the burst (no candidate needed for them)."""
    shared = set(always) | {c.name for c in candidates if c.rejected == 0}
    for c in candidates:
        if c.rejected and model.benefit(b, groups, c.windows, c.filtered, c.rejected) > 0:
            shared.add(c.name)
    return shared if len(shared) > 1 else set()
