"""A workload checked against the attributes of its events: every attribute a query names exists, and each
is used as its type allows.

Without this check a misspelled attribute is simply null on every event (``SUM(T.duraton)`` gives all-null
rows), and a string compared with a number is false on every event (``T.district < 10`` matches nothing):
valid queries by the language's value semantics (``predicates.py``), wrong by any user's intent.

The schema is ``attribute name → type name``, as the events table stores it (Delta/Spark names such as
``string``, ``long``, ``double``, ``decimal(10,2)``, or the scenario types of ``jobs/schema.py``). Types fall
into kinds; what is checked:

- every attribute named in RETURN, GROUP-BY, equivalence lists and predicates is in the schema;
- SUM, AVG, MIN and MAX take a number attribute;
- arithmetic (``+ - * / %``, unary ``-``) takes numbers;
- the two sides of a comparison are of the same kind (a bare word or a quoted text is a string).

What cannot be checked here: whether the events of a type ever carry a value for an attribute (one table
holds the attributes of all types; a Request has no ``speed``), so an aggregate can still be null when every
event it reads has a null there. Each problem is a ``QueryError`` at the attribute or the comparison.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping

from hamlet.analysis.predicates import conjuncts
from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.workload import Workload, located
from hamlet.errors import HamletError, QueryError
from hamlet.language import nodes
from hamlet.language.nodes import (
    AggregateCall,
    Arithmetic,
    AttributeName,
    AttributeRef,
    BooleanOp,
    Comparison,
    EquivalenceList,
    Literal,
    UnaryMinus,
    expression_text,
)

NUMBER, STRING, BOOLEAN, OTHER = "number", "string", "boolean", "other"
# A column of an events file: its name is checked, its kind fits everything (a CSV's cells are each read as
# a number or a text; a Parquet column's values are checked as the engine reads them, event by event).
UNKNOWN = "unknown"
_KINDS = {
    NUMBER: ("byte", "tinyint", "short", "smallint", "integer", "int", "long", "bigint", "float", "real",
             "double", "decimal"),
    STRING: ("string", "varchar", "char"),
    BOOLEAN: ("boolean", "bool"),
    # (three kinds: a date is no datetime, and a zoned one (Spark's timestamp) no naive one: ``predicates.kind``)
    "date": ("date",),
    "timestamp": ("timestamp",),
    "timestamp without a zone": ("timestamp_ntz",),
    UNKNOWN: (UNKNOWN,),
}  # fmt: skip
WILDCARDS = (OTHER, UNKNOWN)
NESTED = ("struct", "array", "map")  # (Spark's and Delta's names of types that hold several values)
NUMERIC_AGGREGATES = ("SUM", "AVG", "MIN", "MAX")


def kind(type_name: str) -> str:
    """The kind of a Spark/Delta type name: ``decimal(10,2)`` → number, ``varchar(8)`` → string."""
    base = type_name.strip().lower().split("(", 1)[0]
    return next((k for k, names in _KINDS.items() if base in names), OTHER)


def attribute_errors(workload: Workload, schema: Mapping[str, str], where: str = "the events table") -> list[QueryError]:  # fmt: skip
    """Every problem of the workload against ``schema``, in query order (empty: it fits). ``where`` names
    the schema's source in the messages (a table path, a scenario)."""
    kinds = {name: kind(t) for name, t in schema.items()}
    return [e for q in workload.queries
            for e in sorted(_Checker(q, workload.source, schema, kinds, where).errors(), key=_position)]  # fmt: skip


def _position(error: QueryError) -> tuple[int, int]:
    return error.line, error.column


def check_attributes(workload: Workload, path: str, schema: Mapping[str, str], where: str) -> None:
    """``attribute_errors`` as one HamletError naming ``path:line:column`` of every problem (none: returns)."""
    errors = attribute_errors(workload, schema, where)
    if errors:
        raise HamletError("\n".join(located(path, e) for e in errors))


class _Checker:
    def __init__(self, query: AnalyzedQuery, source: str, schema: Mapping[str, str], kinds: dict[str, str],
                 where: str) -> None:  # fmt: skip
        assert query.syntax is not None
        self.syntax = query.syntax
        self.source = source
        self.schema = schema
        self.kinds = kinds
        self.where = where

    def fail(self, at: tuple[int, int], message: str) -> QueryError:
        return QueryError(message, line=at[0], column=at[1], query=self.syntax.name, source=self.source)

    def errors(self) -> Iterator[QueryError]:
        q = self.syntax
        for item in q.returns:
            yield from self._return_item(item)
        for name in q.group_by:
            yield from self._groups(name.text(), name.attribute, (name.line, name.column))
        if q.where is not None:
            for conjunct in conjuncts(q.where):
                yield from self._condition(conjunct)

    def _exists(self, shown: str, attribute: str, at: tuple[int, int]) -> Iterator[QueryError]:
        if attribute in self.schema:
            return
        close = difflib.get_close_matches(attribute, list(self.schema), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        known = ", ".join(self.schema) or "none"
        yield self.fail(
            at, f"{shown}: {self.where} has no attribute {attribute}{hint}; its attributes: {known}"
        )

    def _groups(self, shown: str, attribute: str, at: tuple[int, int]) -> Iterator[QueryError]:
        """An attribute that partitions the stream (GROUP-BY, an equivalence list): it exists, and holds values
        (the engine refuses a struct, a list or a map there, event by event)."""
        missing = list(self._exists(shown, attribute, at))
        yield from missing
        type_name = self.schema.get(attribute, "").strip().lower()
        if not missing and type_name.startswith(NESTED):
            yield self.fail(at, f"{shown}: {attribute} is {self.schema[attribute]} in {self.where}; GROUP-BY and "
                            "equivalence lists take an attribute of single values (a number, a text, a bool, a "
                            "date or a time)")  # fmt: skip

    def _return_item(self, item: AttributeName | AggregateCall) -> Iterator[QueryError]:
        if isinstance(item, AttributeName):
            yield from self._exists(item.text(), item.attribute, (item.line, item.column))
            return
        if item.attribute is None:  # COUNT(*), COUNT(E)
            return
        at = item.target_at or (item.line, item.column)
        shown = f"{item.target}.{item.attribute}"
        missing = list(self._exists(shown, item.attribute, at))
        if missing:
            yield from missing
        elif item.function in NUMERIC_AGGREGATES and self.kinds[item.attribute] not in (NUMBER, UNKNOWN):
            yield self.fail(at, f"{item.text()}: {item.function} takes a number attribute; {item.attribute} "
                            f"is {self.schema[item.attribute]} in {self.where}")  # fmt: skip

    def _condition(self, expr: nodes.Expression) -> Iterator[QueryError]:
        if isinstance(expr, EquivalenceList):
            positions = expr.positions or ((expr.line, expr.column),) * len(expr.attributes)
            for attribute, at in zip(expr.attributes, positions):
                yield from self._groups(attribute, attribute, at)
            return
        errors: list[QueryError] = []
        self._kind(expr, errors)
        yield from errors

    def _kind(self, expr: nodes.Expression, errors: list[QueryError]) -> str | None:
        """The kind of ``expr``'s value (None: unknown, an error was recorded); records every problem."""
        if isinstance(expr, Literal):
            return STRING if isinstance(expr.value, str) else NUMBER
        if isinstance(expr, AttributeRef):
            problems = list(self._exists(expression_text(expr), expr.attribute, (expr.line, expr.column)))
            errors.extend(problems)
            return None if problems else self.kinds[expr.attribute]
        if isinstance(expr, UnaryMinus):
            self._number(expr.operand, "-", errors)
            return NUMBER
        if isinstance(expr, Arithmetic):
            self._number(expr.left, expr.op, errors)
            self._number(expr.right, expr.op, errors)
            return NUMBER
        if isinstance(expr, Comparison):
            left, right = self._kind(expr.left, errors), self._kind(expr.right, errors)
            if left is not None and right is not None and left != right and not {left, right} & {*WILDCARDS}:
                errors.append(self.fail((expr.line, expr.column), f"the condition {expression_text(expr)} compares "
                                        f"{self._described(expr.left, left)} with {self._described(expr.right, right)}: "
                                        "it is false for every event"))  # fmt: skip
            return BOOLEAN
        if isinstance(expr, BooleanOp):
            for operand in expr.operands:
                self._kind(operand, errors)
            return BOOLEAN
        return None  # an equivalence list nested in a condition: the analysis refused it already

    def _number(self, operand: nodes.Expression, op: str, errors: list[QueryError]) -> None:
        found = self._kind(operand, errors)
        if found is not None and found not in (NUMBER, *WILDCARDS):
            errors.append(self.fail((operand.line, operand.column), f"'{op}' takes numbers; "
                                    f"{self._described(operand, found)} is not one: the result is null"))  # fmt: skip

    def _described(self, expr: nodes.Expression, found: str) -> str:
        if isinstance(expr, AttributeRef):
            return f"{expression_text(expr)} ({self.schema[expr.attribute]})"
        if isinstance(expr, Literal):
            return f"the {found} {expression_text(expr)}"
        return f"a {found} ({expression_text(expr)})"
