"""hamlet-trends: exact trend aggregation over event streams (GRETA, and HAMLET's shared execution)."""

from hamlet.analysis.workload import Workload, parse_workload
from hamlet.api import STRATEGIES, evaluate, evaluate_table, finalize_table
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
    "evaluate",
    "evaluate_table",
    "finalize_table",
    "parse_workload",
]
