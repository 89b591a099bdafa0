"""The trend-aggregation query language: text → tokens → syntax tree."""

from hamlet.language.parser import parse_workload_text

__all__ = ["parse_workload_text"]
