"""The dynamic sharing benefit (HAMLET Definition 4.2, Eq. 7) — the paper's, and ours re-derived.

The paper's cost terms assume GRETA's O(n) predecessor scan: a shared burst costs b·n·s_p (every event
scans n predecessors, carrying s_p snapshots) plus s_c·k·g·t (each new snapshot's value is summed per
query over the g events of t predecessor graphlets); not sharing costs k·b·n.

Our executor does not scan. A burst of b events of type E in G timestamp groups reaches a query as one
graphlet-level snapshot x per window (the sum of its predecessors, from running totals: O(1)), and the
burst's trends follow from one factor Φ = Π_g (1 + events matched in group g) (Kleene E+) or Σ_g matched
(plain E), the same for every query that matches the same events. So, per burst:

* not shared, query q: ``b·evaluate`` (its local predicates on E, if any) + ``G·factor`` + ``w·apply``;
* shared by S: ``G·factor`` once, and per query ``w·apply``, plus for a query with local predicates on E
  ``b·evaluate`` and, per event it rejects (an event-level snapshot, Definition 3.11), ``snapshot``.

Per stream partition, before any burst: the shared path has a set-up (its state per query, the columns of
shape groups), which a partition of a few events does not earn back. Counted in GRETA steps (one event
through one query's graph): a burst of b ≥ 2 events applied at once saves each query that reads it on its
own graph b − ``burst_break_even`` steps; a segment (burst or single event) read by the COUNT(*) columns of
a shape group (``runtime/shapes.py``) costs ``group_event`` steps per position it is read at and window it
falls into (a group keeps its columns per window) instead of b steps per member that reads it; the set-up
costs ``partition_setup`` steps per query. A partition whose segments save less runs on GRETA's graphs
(``sharing_pays``). Those graphs may run compiled (``runtime/native.py``) while the shared path runs in
Python: a step there costs ``compiled_step`` steps, so every step the shared path takes from a compiled
graph costs it 1 − ``compiled_step`` steps more than it would save in Python. Where the kernel leaves a
partition to Python after all (its counts would pass 128 bits), the partition is weighed again without
that term (``shared.run_shared``).

``apply`` cancels out of the benefit (shared or not, every query commits the burst); it is kept so that
the costs themselves stay comparable. The constants are seconds per operation, measured by
``bench/calibrate_costs.py`` on this machine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CALIBRATION = Path(__file__).with_name("calibration.json")
# A segment of a partition as the set-up decision sees it: (events b, queries that apply it at once on their
# own graph, members of shape groups that read it, Σ over the (group, position) pairs that read it of the
# windows the segment falls into, queries that read it on a compiled graph in the non-shared plan).
SegmentReaders = tuple[int, int, int, int, int]


def paper_shared_cost(b: int, n: int, s_p: int, s_c: int, k: int, g: int, t: int) -> int:
    """Shared(G_E, Q_E) = b·n·s_p + s_c·k·g·t (Eq. 7)."""
    return b * n * s_p + s_c * k * g * t


def paper_nonshared_cost(k: int, b: int, n: int) -> int:
    """NonShared(G_E^i, Q_E) = k·b·n (Eq. 7)."""
    return k * b * n


def paper_benefit(b: int, n: int, s_p: int, s_c: int, k: int, g: int, t: int) -> int:
    return paper_nonshared_cost(k, b, n) - paper_shared_cost(b, n, s_p, s_c, k, g, t)


@dataclass(frozen=True)
class CostModel:
    """Seconds per operation of our executor (see the module docstring)."""

    evaluate: float = 4e-7  # a local predicate on one event
    factor: float = 1e-7  # one timestamp group folded into Φ
    apply: float = 6e-7  # Φ applied to one window of one query, committed
    snapshot: float = 3e-7  # an event-level snapshot folded into one query's own factor
    # In GRETA steps (one event through one query's graph), see the module docstring. ``sharing_pays``
    # weighs them (``SharingPlan`` runs a partition whose segments do not pay for the set-up on GRETA's
    # graphs, the non-shared plan).
    burst_break_even: float = 1.5
    group_event: float = 2.0
    partition_setup: float = 2.0
    compiled_step: float = 1.0  # a step of a compiled graph (1: as if none were compiled)

    def saved_steps(self, segment: SegmentReaders) -> float:
        """GRETA steps the shared path saves on one segment against GRETA's graphs in Python (negative: it
        costs more)."""
        b, alone, group_members, group_windows, _ = segment
        saved = group_members * b - self.group_event * group_windows
        return saved + alone * (b - self.burst_break_even) if b > 1 else saved

    def weigh(self, segments: Sequence[SegmentReaders]) -> tuple[float, int]:
        """What a partition's segments save the shared path (``saved_steps`` summed in order), and their steps
        on compiled graphs."""
        return sum(map(self.saved_steps, segments)), sum(b * readers for b, *_, readers in segments)

    def sharing_pays(self, segments: Sequence[SegmentReaders], queries: int) -> bool:
        """Whether the partition's segments save more GRETA steps than the set-up of ``queries``, against the
        graphs as they run (a segment's readers on compiled graphs: its last number)."""
        return self.pays(*self.weigh(segments), queries)

    def pays(self, saved: float, compiled_steps: int, queries: int) -> bool:
        """Whether ``saved`` GRETA steps (``saved_steps`` summed over a partition's segments, in order; the
        compiled kernel sums them too), less what the ``compiled_steps`` it takes from compiled graphs cost it
        more, pay for the set-up of ``queries``."""
        return saved - (1 - self.compiled_step) * compiled_steps > self.partition_setup * queries

    @classmethod
    def calibrated(cls) -> CostModel:
        if CALIBRATION.exists():
            return cls(**json.loads(CALIBRATION.read_text()))
        return cls()

    def nonshared(self, b: int, groups: int, windows: int, filtered: bool) -> float:
        return (b * self.evaluate if filtered else 0.0) + groups * self.factor + windows * self.apply

    def shared_extra(self, b: int, windows: int, filtered: bool, rejected: int) -> float:
        """What one more query adds to a shared burst (the shared factor is paid once for the group)."""
        return (b * self.evaluate if filtered else 0.0) + rejected * self.snapshot + windows * self.apply

    def benefit(self, b: int, groups: int, windows: int, filtered: bool, rejected: int) -> float:
        """> 0 when sharing the burst with this query is cheaper than processing it alone."""
        return self.nonshared(b, groups, windows, filtered) - self.shared_extra(
            b, windows, filtered, rejected
        )
