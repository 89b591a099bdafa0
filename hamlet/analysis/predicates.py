"""WHERE clauses: classified (GRETA §6) and compiled into closures — never ``eval``-ed.

* equivalence lists ``[a, b]`` partition the stream;
* local (vertex) predicates reference one event type and filter its events;
* edge predicates reference ``X.a`` and ``NEXT(Y).b`` and restrict which X event may be immediately
  followed by which Y event; they belong to the template transition X → Y.

Value semantics, the same for every strategy and for the brute-force oracle: a missing attribute is null;
arithmetic on null or on a string gives null, division or modulo by zero gives null (by a divisor with an
attribute that is 0; one without attributes that is 0 by these rules, such as ``0`` or ``(1 - 1)``, is
refused by the analysis, as no comparison with it could hold: ``zero_divisor``); a comparison with a null is false; ``=`` and
``!=`` between two kinds (numbers, strings, bools) are false and true, ordering between them is false. Ints are exact and
compare exactly with floats; arithmetic that mixes an int with a float takes the int as its nearest double,
and a quotient of ints is the double nearest it: past the largest double that is an infinity of its sign, as
a float result past it is (``1e308 * 10``; IEEE rounding, the kernel's and ``partials.nearest_float``'s), so
``A.x / (10**400 * 1.0)`` is 0.0 and ``10**400 % 1.5`` NaN.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from hamlet.events import Event
from hamlet.language.nodes import (
    Arithmetic,
    AttributeRef,
    BooleanOp,
    Comparison,
    EquivalenceList,
    Expression,
    Literal,
    UnaryMinus,
)

LocalFn = Callable[[Event], Any]
EdgeFn = Callable[[Event, Event], Any]

_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul}
MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def kind(value: Any) -> str:
    """What a value compares with: numbers with numbers, texts with texts, bools with bools, dates with dates;
    a datetime (or time) with a zone only with another that has one (Python orders no naive one with it)."""
    if type(value) is str:
        return "str"
    if is_number(value):
        return "number"
    if isinstance(value, bool):
        return "bool"
    zone = " with zone" if getattr(value, "tzinfo", None) is not None else ""
    return type(value).__name__ + zone


def instant(value: Any) -> Any:
    """What a value compares as: a datetime with a zone as its instant in UTC, anything else as it is. Python
    compares two datetimes that share a tzinfo by their wall clocks (Arrow gives every value of a zoned column
    the same one), so 02:30 CEST equalled 02:30 CET an hour later, where the kernel compares instants."""
    if type(value) in ONE_KIND or getattr(value, "tzinfo", None) is None or not hasattr(value, "astimezone"):
        return value
    return value.astimezone(UTC)


# Types whose equal values are always of one kind: a text equals no number, and an int equals a float only as
# numbers. (Python also has True == 1 == 1.0: values of two kinds, never equal here. A reader makes a Decimal
# the int or float it holds, ``events.decimal_number``.)
ONE_KIND = frozenset({str, int, float})


class Kinded:
    """A value in a key (``kinded``): equal to another exactly when ``compare`` has them equal — of one kind
    and equal (True is not 1; 1 is 1.0)."""

    __slots__ = ("kind", "value")

    def __init__(self, value: Any) -> None:
        self.kind = kind(value)
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Kinded
            and self.kind == other.kind
            and bool(instant(self.value) == instant(other.value))
        )

    def __hash__(self) -> int:
        return hash((self.kind, instant(self.value)))

    def __repr__(self) -> str:
        return f"Kinded({self.value!r})"


def kinded(values: tuple) -> tuple:
    """``values`` as a key — of a stream partition or a group — under which two tuples are one exactly when
    their values are pairwise equal by ``compare`` (where Python's == and hash would merge True with 1 and
    1.0, and False with 0). A tuple of texts and numbers is its own key (no copy); ``unkinded`` undoes it."""
    if ONE_KIND.issuperset(map(type, values)):
        return values
    return tuple(v if type(v) in ONE_KIND or is_number(v) else Kinded(v) for v in values)


def unkinded(key: tuple) -> tuple:
    """The values of a ``kinded`` key."""
    return tuple(v.value if type(v) is Kinded else v for v in key)


def group_values(key: tuple) -> tuple:
    """A group's values as results show them: a ``kinded`` key's, -0.0 as 0.0 (one value, which every path and
    every call of the Spark job must write alike, whichever of the two a group's first event held)."""
    return tuple(0.0 if type(v) is float and v == 0 else v for v in unkinded(key))


def compare(op: str, left: Any, right: Any) -> bool:
    if left is None or right is None:
        return False
    if kind(left) != kind(right):  # (Python would order True with 1 and raise for "u" < True)
        return op == "!="
    left, right = instant(left), instant(right)
    if op == "=":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    return bool(_ORDER[op](left, right))


def arithmetic(op: str, left: Any, right: Any) -> Any:
    if not (is_number(left) and is_number(right)):
        return None
    try:
        if op in _ARITH:
            return _ARITH[op](left, right)
        if right == 0:
            return None
        return left / right if op == "/" else left % right
    except OverflowError:  # (Python raises where IEEE rounding gives an infinity: see the module docstring)
        if isinstance(left, int) and isinstance(right, int):  # (a quotient of ints, correctly rounded)
            return math.inf if (left < 0) == (right < 0) else -math.inf
        return arithmetic(op, _double(left), _double(right))


def _double(value: float) -> float:
    """The double nearest ``value``: past the largest double, an infinity (IEEE rounding; ``float`` raises)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


@dataclass(frozen=True)
class EdgePredicate:
    """``expression`` over (x, y): x of type ``source``, y of type ``target`` immediately after it."""

    source: str
    target: str
    test: EdgeFn
    text: str
    # Set when the predicate is one comparison ``f(x) op g(y)``: an ordered index over f(x) answers it.
    key_op: str | None = None
    source_key: LocalFn | None = None
    target_key: LocalFn | None = None
    expression: Expression | None = field(default=None, compare=False)  # what ``test`` was compiled from


def compile_expression(expr: Expression) -> EdgeFn:
    """A closure over (x, y): ``NEXT(Y).b`` reads y, every other attribute reads x.

    Local predicates and index keys reference no NEXT, so they are called as ``fn(e, e)``.
    """
    if isinstance(expr, Literal):
        value = expr.value
        return lambda x, y: value
    if isinstance(expr, AttributeRef):
        attribute = expr.attribute
        if expr.next:
            return lambda x, y: y.attributes.get(attribute)
        return lambda x, y: x.attributes.get(attribute)
    if isinstance(expr, UnaryMinus):
        inner = compile_expression(expr.operand)
        return lambda x, y: -v if is_number(v := inner(x, y)) else None
    if isinstance(expr, Arithmetic):
        left, right, op = compile_expression(expr.left), compile_expression(expr.right), expr.op
        return lambda x, y: arithmetic(op, left(x, y), right(x, y))
    if isinstance(expr, Comparison):
        left, right, op = compile_expression(expr.left), compile_expression(expr.right), expr.op
        return lambda x, y: compare(op, left(x, y), right(x, y))
    if isinstance(expr, BooleanOp):
        parts = [compile_expression(o) for o in expr.operands]
        if expr.op == "AND":
            return lambda x, y: all(p(x, y) for p in parts)
        return lambda x, y: any(p(x, y) for p in parts)
    raise TypeError(f"cannot compile {type(expr).__name__}")  # EquivalenceList: classified before


def compile_local(expr: Expression) -> LocalFn:
    found = attribute_versus_literal(expr)
    if found is not None:
        return _attribute_test(*found)
    fn = compile_expression(expr)
    return lambda e: fn(e, e)


def attribute_versus_literal(expr: Expression) -> tuple[str, str, int | float | str] | None:
    """``T.a op literal`` (either way round; a negated number is a literal too) as (attribute, op, literal)
    with the attribute on the left, else None. The most common local predicate: it filters every event of
    its type, so the engine evaluates it without the general closures (``compile_local``, the compiled
    kernel's predicates)."""
    if not isinstance(expr, Comparison):
        return None
    left, right, op = expr.left, expr.right, expr.op
    if isinstance(right, AttributeRef):
        left, right, op = right, left, MIRROR[op]
    if not isinstance(left, AttributeRef):
        return None
    if isinstance(right, Literal):
        return left.attribute, op, right.value
    if isinstance(right, UnaryMinus) and isinstance(right.operand, Literal):
        value = right.operand.value
        if isinstance(value, (int, float)) and is_number(value):
            return left.attribute, op, -value
    return None


def _attribute_test(attribute: str, op: str, value: float | str) -> LocalFn:
    """One closure, the same values as ``compare`` (the general form costs three calls more per event)."""
    if is_number(value) and op in _ORDER:
        order = _ORDER[op]
        return lambda e: is_number(v := e.attributes.get(attribute)) and order(v, value)  # type: ignore[arg-type]
    if isinstance(value, str) and op == "=":  # (a number or a null never equals a string)
        return lambda e: e.attributes.get(attribute) == value
    return lambda e: compare(op, e.attributes.get(attribute), value)


def references(expr: Expression) -> list[AttributeRef]:
    if isinstance(expr, AttributeRef):
        return [expr]
    if isinstance(expr, UnaryMinus):
        return references(expr.operand)
    if isinstance(expr, (Arithmetic, Comparison)):
        return references(expr.left) + references(expr.right)
    if isinstance(expr, BooleanOp):
        return [r for o in expr.operands for r in references(o)]
    return []


def zero_divisor(expr: Expression) -> tuple[Arithmetic, int | float] | None:
    """A division or modulo in ``expr`` whose divisor reads no attribute and is 0 by these rules (``0``,
    ``(1 - 1)``, ``1e-400``), with that 0: its value is null for every event, so no comparison with it ever
    holds, which is always a mistake. (A divisor that is 0 for some events only, ``A.y - 1``, is none.)"""
    if isinstance(expr, Arithmetic):
        if expr.op in ("/", "%") and not references(expr.right):
            nothing = Event("", 0)  # (the divisor reads no attribute of either event)
            divisor = compile_expression(expr.right)(nothing, nothing)
            if is_number(divisor) and divisor == 0:
                return expr, divisor
        return zero_divisor(expr.left) or zero_divisor(expr.right)
    if isinstance(expr, UnaryMinus):
        return zero_divisor(expr.operand)
    if isinstance(expr, Comparison):
        return zero_divisor(expr.left) or zero_divisor(expr.right)
    if isinstance(expr, BooleanOp):
        return next((found for o in expr.operands if (found := zero_divisor(o)) is not None), None)
    return None


def conjuncts(expr: Expression) -> list[Expression]:
    """Top-level AND operands, flattened through nested ANDs."""
    if isinstance(expr, BooleanOp) and expr.op == "AND":
        return [c for o in expr.operands for c in conjuncts(o)]
    return [expr]


def contains_equivalence(expr: Expression) -> EquivalenceList | None:
    if isinstance(expr, EquivalenceList):
        return expr
    if isinstance(expr, BooleanOp):
        for o in expr.operands:
            found = contains_equivalence(o)
            if found:
                return found
    if isinstance(expr, (Arithmetic, Comparison)):
        return contains_equivalence(expr.left) or contains_equivalence(expr.right)
    return None


def is_boolean(expr: Expression) -> bool:
    if isinstance(expr, Comparison):
        return True
    if isinstance(expr, BooleanOp):
        return all(is_boolean(o) for o in expr.operands)
    return False


def index_key(expr: Expression) -> tuple[str, LocalFn, LocalFn] | None:
    """For ``f(x) op g(y)`` (one side only x, the other only NEXT(y)): (op as x-side op, f, g); else None."""
    sides = index_sides(expr)
    if sides is None:
        return None
    op, x_side, y_side = sides
    return op, compile_local(x_side), compile_local(y_side)


def index_sides(expr: Expression) -> tuple[str, Expression, Expression] | None:
    """``index_key``'s parts as expressions: (op as x-side op, f over x, g over y with its NEXT dropped)."""
    if not isinstance(expr, Comparison) or expr.op == "!=":
        return None
    left_refs, right_refs = references(expr.left), references(expr.right)
    if not left_refs or not right_refs:
        return None
    left_next = {r.next for r in left_refs}
    right_next = {r.next for r in right_refs}
    if left_next == {False} and right_next == {True}:
        x_side, y_side, op = expr.left, expr.right, expr.op
    elif left_next == {True} and right_next == {False}:
        x_side, y_side, op = expr.right, expr.left, MIRROR[expr.op]
    else:
        return None
    # The y side reads only NEXT attributes; compiled as a local expression it must read its own event.
    return op, x_side, _drop_next(y_side)


def _drop_next(expr: Expression) -> Expression:
    if isinstance(expr, AttributeRef):
        return AttributeRef(expr.line, expr.column, expr.name, expr.attribute, next=False)
    if isinstance(expr, UnaryMinus):
        return UnaryMinus(expr.line, expr.column, _drop_next(expr.operand))
    if isinstance(expr, Arithmetic):
        return Arithmetic(expr.line, expr.column, expr.op, _drop_next(expr.left), _drop_next(expr.right))
    return expr
