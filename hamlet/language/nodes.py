"""The syntax tree of a workload: what the text says, before names are resolved.

Every node carries the position of its first token (``line``, ``column``) so that the analysis can report
errors at the right spot. Nodes are frozen: the analysis derives new structures instead of mutating them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

UNIT_SECONDS: dict[str, Fraction] = {
    "ms": Fraction(1, 1000),
    "s": Fraction(1), "sec": Fraction(1), "secs": Fraction(1), "second": Fraction(1), "seconds": Fraction(1),
    "min": Fraction(60), "mins": Fraction(60), "minute": Fraction(60), "minutes": Fraction(60),
    "h": Fraction(3600), "hour": Fraction(3600), "hours": Fraction(3600),
    "d": Fraction(86400), "day": Fraction(86400), "days": Fraction(86400),
}  # fmt: skip


@dataclass(frozen=True)
class Node:
    line: int
    column: int


# ---- patterns ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventTypePattern(Node):
    """``Travel`` or ``Travel T``: matches one event of the type."""

    type_name: str
    alias: str | None = None


@dataclass(frozen=True)
class KleenePattern(Node):
    """``P+``: one or more matches of P one after another."""

    inner: Pattern


@dataclass(frozen=True)
class OptionalPattern(Node):
    """``P?``: a match of P or nothing (dissertation §12: SEQ(P?, Q) = SEQ(P, Q) ∨ Q)."""

    inner: Pattern


@dataclass(frozen=True)
class StarPattern(Node):
    """``P*``: zero or more matches of P one after another (§12: SEQ(P*, Q) = SEQ(P+, Q) ∨ Q)."""

    inner: Pattern


@dataclass(frozen=True)
class MinimalLengthPattern(Node):
    """``P{n,}``: n or more matches of P one after another, a constraint on the minimal trend length
    (dissertation §12: ``A{3,}`` is ``SEQ(A, A, A+)``, the unrolling the analysis builds)."""

    inner: Pattern
    minimum: int


@dataclass(frozen=True)
class SeqPattern(Node):
    """``SEQ(P1, P2, ...)``; items may be negations."""

    items: tuple[Pattern | NegationPattern, ...]


@dataclass(frozen=True)
class NegationPattern(Node):
    """``NOT P``; only valid as an item of a SEQ (checked by the analysis, which knows the context)."""

    inner: Pattern


@dataclass(frozen=True)
class ChoicePattern(Node):
    """``P OR Q ...`` (disjunction: a trend any operand matches) or ``P AND Q`` (conjunction: a pair of
    distinct trends, one matched by P and one by Q), dissertation §12. Only the whole PATTERN is one."""

    op: str  # OR | AND
    operands: tuple[Pattern, ...]


Pattern = (
    EventTypePattern
    | KleenePattern
    | SeqPattern
    | OptionalPattern
    | StarPattern
    | MinimalLengthPattern
    | ChoicePattern
)


# ---- expressions ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal(Node):
    value: int | float | str


@dataclass(frozen=True)
class AttributeRef(Node):
    """``T.speed`` (``next`` False) or ``NEXT(T).speed`` (``next`` True); ``name`` is a type or an alias."""

    name: str
    attribute: str
    next: bool = False


@dataclass(frozen=True)
class UnaryMinus(Node):
    operand: Expression


@dataclass(frozen=True)
class Arithmetic(Node):
    op: str  # + - * / %
    left: Expression
    right: Expression


@dataclass(frozen=True)
class Comparison(Node):
    op: str  # = != < <= > >=
    left: Expression
    right: Expression


@dataclass(frozen=True)
class BooleanOp(Node):
    op: str  # AND | OR
    operands: tuple[Expression, ...]


@dataclass(frozen=True)
class EquivalenceList(Node):
    """``[driver, rider]``: every event of a trend (and of its negative sub-patterns) shares these values."""

    attributes: tuple[str, ...]
    positions: tuple[tuple[int, int], ...] = field(default=(), compare=False)  # (line, column) of each


Expression = Literal | AttributeRef | UnaryMinus | Arithmetic | Comparison | BooleanOp | EquivalenceList


# ---- queries -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttributeName(Node):
    """A grouping attribute, ``district`` or ``T.district`` (``qualifier`` is then ``T``)."""

    qualifier: str | None
    attribute: str

    def text(self) -> str:
        return f"{self.qualifier}.{self.attribute}" if self.qualifier else self.attribute


@dataclass(frozen=True)
class AggregateCall(Node):
    """``COUNT(*)``, ``COUNT(E)``, ``SUM(E.a)``, ``MIN(E.a)``, ``MAX(E.a)``, ``AVG(E.a)``."""

    function: str  # upper case
    target: str | None  # type or alias; None for COUNT(*)
    attribute: str | None
    target_at: tuple[int, int] | None = field(default=None, compare=False)  # (line, column) of Type.attribute

    def text(self) -> str:
        if self.target is None:
            return f"{self.function}(*)"
        if self.attribute is None:
            return f"{self.function}({self.target})"
        return f"{self.function}({self.target}.{self.attribute})"


@dataclass(frozen=True)
class Duration(Node):
    seconds: Fraction
    text: str


# Event matching semantics (dissertation §2.4): the names a SEMANTICS clause may use, by their short form.
SEMANTICS_NAMES: dict[str, str] = {
    "ANY": "ANY", "SKIP-TILL-ANY-MATCH": "ANY",
    "NEXT": "NEXT", "SKIP-TILL-NEXT-MATCH": "NEXT",
    "CONT": "CONT", "CONTIGUOUS": "CONT",
}  # fmt: skip


@dataclass(frozen=True)
class SemanticsClause(Node):
    """``SEMANTICS skip-till-next-match`` (or ``NEXT``): ``kind`` is the short form ANY, NEXT or CONT."""

    kind: str
    text: str


@dataclass(frozen=True)
class Query(Node):
    name: str
    returns: tuple[AttributeName | AggregateCall, ...]
    pattern: Pattern
    where: Expression | None
    group_by: tuple[AttributeName, ...]
    within: Duration
    slide: Duration | None
    semantics: SemanticsClause | None = None  # None: skip-till-any-match, the default
    text: str = field(compare=False, default="")


@dataclass(frozen=True)
class WorkloadSyntax:
    queries: tuple[Query, ...]
    source: str = field(compare=False, default="")


def expression_text(expr: Expression) -> str:
    """The expression written back as query text (used in explanations and messages)."""
    if isinstance(expr, Literal):
        return f"'{expr.value}'" if isinstance(expr.value, str) else repr(expr.value)
    if isinstance(expr, AttributeRef):
        return f"NEXT({expr.name}).{expr.attribute}" if expr.next else f"{expr.name}.{expr.attribute}"
    if isinstance(expr, UnaryMinus):
        return f"-{expression_text(expr.operand)}"
    if isinstance(expr, (Arithmetic, Comparison)):
        left, right = expression_text(expr.left), expression_text(expr.right)
        if isinstance(expr, Arithmetic):
            return f"({left} {expr.op} {right})"
        return f"{left} {expr.op} {right}"
    if isinstance(expr, BooleanOp):
        return "(" + f" {expr.op} ".join(expression_text(o) for o in expr.operands) + ")"
    return "[" + ", ".join(expr.attributes) + "]"
