"""What the tests use to prove a result came from the compiled kernel, not from the Python graph that stays
as its reference (``hamlet/runtime/graph.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

from hamlet import STRATEGIES
from hamlet.api import prepare
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.graph import TrendGraph
from hamlet.stats import EvaluationStats


def compiled_queries(workload: Any, stream: list, strategy: str) -> set[str]:
    """The queries whose graphs ``strategy``'s runners put on the compiled kernel (``PartitionRunner.compiled``)."""
    names: set[str] = set()
    for query_set in prepare(workload).sets:
        queries = list(query_set.queries)
        algebras = {q.name: algebra_for(q, stream) for q in queries}
        names |= STRATEGIES[strategy](queries, algebras, EvaluationStats()).compiled
    return names


def position_queries_of(workload: Any) -> set[str]:
    """The queries on position templates (dissertation §12: a type at several places, P{n,}, OR, AND)."""
    return {q.name for s in prepare(workload).sets for q in s.queries if q.states is not None}


@contextmanager
def python_graph_refuses_position_templates() -> Iterator[None]:
    """Inside, building a Python trend graph for a position template fails: whatever a query on one
    returns came from the kernel."""
    build = TrendGraph.__init__

    def refusing(self: TrendGraph, query: Any, *args: Any, **kwargs: Any) -> None:
        assert query.states is None, f"{query.name}: its position template runs on the Python graph"
        build(self, query, *args, **kwargs)

    with patch.object(TrendGraph, "__init__", refusing):
        yield


@contextmanager
def python_graphs_refused() -> Iterator[None]:
    """Inside, building any Python trend graph fails: whatever a query returns came from the kernel."""

    def refusing(self: TrendGraph, query: Any, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"{query.name}: a partition runs on the Python graph")

    with patch.object(TrendGraph, "__init__", refusing):
        yield
