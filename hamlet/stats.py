"""What an evaluation did: per strategy counters that the CLI prints and the Spark job stores."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass
class EvaluationStats:
    """Counters of one evaluation (all queries, all partitions).

        ``events``: events read by at least one query's graph; ``partitions``: the stream partitions of the
        sharable query sets (GROUP-BY ∪ equivalence values) that hold some event of their set. The burst counters are HAMLET's: ``bursts`` of
        a sharable Kleene type (Definition 4.1), how many were ``shared_bursts`` (in how many shared ``graphlets``:
    one per burst and set of events its sharers match), graphlet ``splits`` and
        ``merges`` (§4.2), snapshots created at graphlet level (Definition 3.9) and at event level
        (Definition 3.11), and the time the optimizer spent deciding. GRETA fills only ``events``.
        ``merged_graphs``: graphs ``static`` and ``hamlet`` built on a merged template, for queries that share
        every position but the end (``partition.merged_groups``), per sharable query set evaluated.
        ``python_partitions``: stream partitions (per sharable query set) some of whose graphs ran on the
        Python engine, which computes what the compiled kernel cannot exactly (``native.py``: a NaN, an int beyond
        64 bits, two float times in one microsecond, a query the kernel does not take): 0 where everything ran
        compiled.
    """

    strategy: str = ""
    events: int = 0
    partitions: int = 0
    bursts: int = 0
    shared_bursts: int = 0
    graphlets: int = 0
    splits: int = 0
    merges: int = 0
    graphlet_snapshots: int = 0
    event_snapshots: int = 0
    decision_seconds: float = 0.0
    merged_graphs: int = 0
    python_partitions: int = 0

    def add(self, other: EvaluationStats) -> None:
        for f in fields(self):
            if f.name != "strategy":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
