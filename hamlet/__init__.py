"""hamlet-trends: exact trend aggregation over event streams (GRETA, and HAMLET's shared execution)."""

from hamlet.analysis.workload import Workload, parse_workload
from hamlet.api import (
    STRATEGIES,
    compose_segments,
    evaluate,
    evaluate_segment,
    evaluate_table,
    finalize_table,
    prepare,
    segment_obstacle,
)
from hamlet.errors import EvaluationError, EventError, HamletError, QueryError
from hamlet.events import Event
from hamlet.results import ResultRow

__all__ = [
    "STRATEGIES",
    "EvaluationError",
    "Event",
    "EventError",
    "HamletError",
    "QueryError",
    "ResultRow",
    "Workload",
    "compose_segments",
    "evaluate",
    "evaluate_segment",
    "evaluate_table",
    "finalize_table",
    "parse_workload",
    "prepare",
    "segment_obstacle",
]
