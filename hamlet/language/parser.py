"""Recursive-descent parser: tokens → syntax tree (``nodes``).

The grammar (keywords case-insensitive)::

    workload   := query*
    query      := NAME ':' RETURN item (',' item)* PATTERN choice [SEMANTICS semantics] [WHERE condition]
                  [GROUP-BY attribute (',' attribute)*] WITHIN duration [SLIDE duration]
    item       := FUNC '(' ('*' | NAME ['.' NAME]) ')' | attribute
    choice     := pattern (OR pattern)* | pattern AND pattern
    pattern    := primary ('+' | '*' | '?' | '{' NUMBER ',' '}')*
    primary    := SEQ '(' seqitem (',' seqitem)* ')' | '(' pattern ')' | TYPE [ALIAS]
    seqitem    := NOT pattern | pattern
    condition  := or;  or := and (OR and)*;  and := cmp (AND cmp)*
    cmp        := sum [op sum];  sum := prod (('+'|'-') prod)*;  prod := unary (('*'|'/'|'%') unary)*
    unary      := '-' unary | atom
    atom       := NUMBER | STRING | NAME '.' NAME | NEXT '(' NAME ')' '.' NAME | '[' names ']' | '(' or ')'
                  | NAME   (a bare word: a string, only on the right of a comparison)
    duration   := NUMBER [unit]
    semantics  := skip-till-any-match | skip-till-next-match | contiguous | ANY | NEXT | CONT

Nothing here is evaluated: predicates become nodes that the analysis compiles into closures.

Nesting is bounded (``MAX_DEPTH``): parentheses, SEQ, NOT and unary minus as the parser descends, and the
depth of the finished tree (``a + b + c ...`` and ``P+++`` nest without parentheses), so that neither this
recursive parser nor the analysis's recursion over the tree can exhaust Python's stack.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction

from hamlet.errors import QueryError
from hamlet.language.lexer import Kind, Token, tokenize
from hamlet.language.nodes import (
    SEMANTICS_NAMES,
    UNIT_SECONDS,
    AggregateCall,
    Arithmetic,
    AttributeName,
    AttributeRef,
    BooleanOp,
    ChoicePattern,
    Comparison,
    Duration,
    EquivalenceList,
    EventTypePattern,
    Expression,
    KleenePattern,
    Literal,
    MinimalLengthPattern,
    NegationPattern,
    Node,
    OptionalPattern,
    Pattern,
    Query,
    SemanticsClause,
    SeqPattern,
    StarPattern,
    UnaryMinus,
    WorkloadSyntax,
)

MAX_DEPTH = 64  # levels of nesting in a pattern or a condition: far beyond any real query
AGGREGATE_FUNCTIONS = ("COUNT", "SUM", "MIN", "MAX", "AVG")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
CLAUSES = ("PATTERN", "SEMANTICS", "WHERE", "GROUP-BY", "WITHIN", "SLIDE")
SEMANTICS_EXPECTED = "skip-till-any-match, skip-till-next-match or contiguous (or ANY, NEXT, CONT)"


def parse_workload_text(source: str) -> WorkloadSyntax:
    """Parse a whole workload; raises QueryError with line and column on the first problem."""
    return _Parser(source).workload()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        # Tokens are read lazily so that a lexical error knows which query it is in.
        self.pending = tokenize(source)
        self.tokens: list[Token] = []
        self.i = 0
        self.query_name: str | None = None
        self.depth = 0  # nesting levels the parser is inside now

    # ---- token helpers ---------------------------------------------------------------------------------

    def _fill(self, index: int) -> Token:
        while len(self.tokens) <= index and not (self.tokens and self.tokens[-1].kind is Kind.END):
            try:
                self.tokens.append(next(self.pending))
            except QueryError as e:
                raise QueryError(e.message, line=e.line, column=e.column, query=self.query_name,
                                 expected=e.expected, source=self.source) from None  # fmt: skip
        return self.tokens[min(index, len(self.tokens) - 1)]

    @property
    def tok(self) -> Token:
        return self._fill(self.i)

    def peek(self, offset: int = 1) -> Token:
        return self._fill(self.i + offset)

    def advance(self) -> Token:
        token = self._fill(self.i)
        if token.kind is not Kind.END:
            self.i += 1
        return token

    def error(self, expected: str, token: Token | None = None, message: str | None = None) -> QueryError:
        token = token or self.tok
        return QueryError(
            message or f"expected {expected}, found {token.describe()}",
            line=token.line,
            column=token.column,
            query=self.query_name,
            expected=expected,
            source=self.source,
        )

    @contextmanager
    def deeper(self) -> Iterator[None]:
        """One level of nesting more, refused beyond MAX_DEPTH at the token that would open it."""
        if self.depth >= MAX_DEPTH:
            raise self.error("a shallower expression", message=f"nested more than {MAX_DEPTH} levels deep")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def check_depth(self, root: Node) -> None:
        """The finished tree is at most MAX_DEPTH deep (walked without recursion); else a QueryError at the
        first node below that depth."""
        stack = [(root, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise QueryError(f"nested more than {MAX_DEPTH} levels deep", line=node.line, column=node.column,
                                 query=self.query_name, source=self.source)  # fmt: skip
            for child in _children(node):
                stack.append((child, depth + 1))

    def expect_symbol(self, symbol: str, expected: str | None = None) -> Token:
        if not self.tok.is_symbol(symbol):
            raise self.error(expected or f"'{symbol}'")
        return self.advance()

    def expect_keyword(self, word: str) -> Token:
        if not self.tok.is_keyword(word):
            raise self.error(word)
        return self.advance()

    def expect_name(self, what: str) -> Token:
        if self.tok.kind is not Kind.IDENT:
            if self.tok.kind is Kind.KEYWORD:
                raise self.error(what, message=f"expected {what}, found keyword {self.tok.text} (reserved)")
            raise self.error(what)
        return self.advance()

    # ---- workload and query ----------------------------------------------------------------------------

    def workload(self) -> WorkloadSyntax:
        queries: list[Query] = []
        seen: dict[str, Query] = {}
        while self.tok.kind is not Kind.END:
            query = self.query()
            if query.name in seen:
                first = seen[query.name]
                raise QueryError(
                    f"query name {query.name!r} is used twice (first at line {first.line})",
                    line=query.line, column=query.column, query=query.name, source=self.source,
                )  # fmt: skip
            seen[query.name] = query
            queries.append(query)
        if not queries:
            raise QueryError("the workload holds no query", line=1, column=1, expected="a query 'name: RETURN ...'",
                             source=self.source)  # fmt: skip
        return WorkloadSyntax(tuple(queries), self.source)

    def query(self) -> Query:
        self.query_name = None
        name = self.expect_name("a query name followed by ':'")
        self.query_name = name.text
        self.expect_symbol(":", "':' after the query name")
        start_offset = name.offset
        self.expect_keyword("RETURN")
        returns = [self.return_item()]
        while self.tok.is_symbol(","):
            self.advance()
            returns.append(self.return_item())
        if not self.tok.is_keyword("PATTERN"):
            raise self.error("',' or PATTERN")
        self.advance()
        pattern = self.choice()
        self.check_depth(pattern)
        semantics = None
        if self.tok.is_keyword("SEMANTICS"):
            semantics = self.semantics()
        where = None
        if self.tok.is_keyword("WHERE"):
            self.advance()
            where = self.condition()
            self.check_depth(where)
        group_by: list[AttributeName] = []
        if self.tok.is_keyword("GROUP-BY"):
            self.advance()
            group_by.append(self.attribute_name("a grouping attribute"))
            while self.tok.is_symbol(","):
                self.advance()
                group_by.append(self.attribute_name("a grouping attribute"))
        if self.tok.is_keyword("SEMANTICS"):
            message = ("SEMANTICS is given twice" if semantics is not None else
                       "SEMANTICS must come right after the pattern (PATTERN ... SEMANTICS ... WHERE ...)")  # fmt: skip
            raise self.error("WITHIN", message=message)
        if not self.tok.is_keyword("WITHIN"):
            expected = {0: "WHERE, GROUP-BY or WITHIN", 1: "GROUP-BY or WITHIN", 2: "WITHIN",
                        3: "SEMANTICS, WHERE, GROUP-BY or WITHIN"}  # fmt: skip
            stage = 2 if group_by else (1 if where is not None else (0 if semantics is not None else 3))
            raise self.error(expected[stage])
        self.advance()
        within = self.duration()
        slide = None
        if self.tok.is_keyword("SLIDE"):
            self.advance()
            slide = self.duration()
        end = self.tok.offset
        if self.tok.kind is not Kind.END and not (self.tok.kind is Kind.IDENT and self.peek().is_symbol(":")):
            raise self.error("SLIDE or the next query 'name:'" if slide is None else "the next query 'name:'")
        return Query(
            name.line, name.column, name.text, tuple(returns), pattern, where, tuple(group_by), within, slide,
            semantics, text=self.source[start_offset:end].strip(),
        )  # fmt: skip

    def semantics(self) -> SemanticsClause:
        """``SEMANTICS`` then one name; the long names are words joined by '-' with no space between
        (``skip-till-next-match``), read token by token since '-' is also minus."""
        keyword = self.advance()
        first = self.tok
        if (
            first.kind not in (Kind.IDENT, Kind.KEYWORD)
            or first.kind is Kind.KEYWORD
            and first.text != "NEXT"
        ):
            raise self.error(SEMANTICS_EXPECTED, message=f"SEMANTICS needs a name: expected {SEMANTICS_EXPECTED}, "
                             f"found {first.describe()}")  # fmt: skip
        words = [self.advance()]
        while (
            self.tok.is_symbol("-")
            and self._touches(words[-1], self.tok)
            and self._touches(self.tok, self.peek())
        ):
            self.advance()
            words.append(self.advance())
        text = "-".join(w.text for w in words)
        kind = SEMANTICS_NAMES.get(text.upper())
        if kind is None:
            raise QueryError(f"unknown event matching semantics '{text}'", line=first.line, column=first.column,
                             query=self.query_name, expected=SEMANTICS_EXPECTED, source=self.source)  # fmt: skip
        return SemanticsClause(keyword.line, keyword.column, kind, text)

    @staticmethod
    def _touches(a: Token, b: Token) -> bool:
        """Whether token b starts right where a ends (same line, no space between)."""
        return a.line == b.line and b.column == a.column + len(a.text)

    def return_item(self) -> AttributeName | AggregateCall:
        tok = self.tok
        if tok.kind is Kind.IDENT and tok.text.upper() in AGGREGATE_FUNCTIONS and self.peek().is_symbol("("):
            function = tok.text.upper()
            self.advance()
            self.advance()
            if self.tok.is_symbol("*"):
                if function != "COUNT":
                    raise self.error(f"an event type in {function}(...)", message=f"{function}(*) is not defined; "
                                     f"write {function}(Type.attribute)")  # fmt: skip
                self.advance()
                target, attribute, target_at = None, None, None
            else:
                target_token = self.expect_name(
                    "'*' or an event type" if function == "COUNT" else "Type.attribute"
                )
                target, target_at = target_token.text, (target_token.line, target_token.column)
                attribute = None
                if self.tok.is_symbol("."):
                    self.advance()
                    attribute = self.expect_name("an attribute name").text
                if function == "COUNT" and attribute is not None:
                    raise self.error("')'", message=f"COUNT takes '*' or an event type, not an attribute "
                                     f"(COUNT({target}) counts the {target} events of all trends)")  # fmt: skip
                if function != "COUNT" and attribute is None:
                    raise self.error("'.' and an attribute", message=f"{function} needs Type.attribute, "
                                     f"found {function}({target})")  # fmt: skip
            self.expect_symbol(")", "')' closing the aggregate")
            return AggregateCall(tok.line, tok.column, function, target, attribute, target_at)
        if tok.kind is Kind.IDENT:
            return self.attribute_name("an aggregate or a grouping attribute")
        raise self.error("an aggregate (COUNT, SUM, MIN, MAX, AVG) or a grouping attribute")

    def attribute_name(self, what: str) -> AttributeName:
        first = self.expect_name(what)
        if self.tok.is_symbol("."):
            self.advance()
            attribute = self.expect_name("an attribute name")
            return AttributeName(first.line, first.column, first.text, attribute.text)
        return AttributeName(first.line, first.column, None, first.text)

    def duration(self) -> Duration:
        tok = self.tok
        negative = False
        if tok.is_symbol("-"):
            negative = True
            self.advance()
        if self.tok.kind is not Kind.NUMBER:
            raise self.error("a duration such as '30 min'", token=self.tok)
        number = self.advance()
        seconds = Fraction(number.text) if isinstance(number.value, float) else Fraction(number.value or 0)
        text = number.text
        # (a unit word followed by ':' names the next query: `WITHIN 10` then `h: RETURN ...`)
        named = self.peek().is_symbol(":")
        if self.tok.kind is Kind.IDENT and self.tok.text.lower() in UNIT_SECONDS and not named:
            unit = self.advance()
            seconds *= UNIT_SECONDS[unit.text.lower()]
            text += f" {unit.text}"
        elif self.tok.kind is Kind.IDENT and not named:
            raise self.error("a time unit (ms, s, min, h, d)", message=f"unknown time unit '{self.tok.text}'; "
                             "use ms, s|sec|second(s), min|minute(s), h|hour(s) or d|day(s)")  # fmt: skip
        if negative:
            seconds, text = -seconds, "-" + text
        if seconds <= 0:
            raise QueryError(f"a window length must be positive, found {text}", line=tok.line, column=tok.column,
                             query=self.query_name, expected="a positive duration", source=self.source)  # fmt: skip
        return Duration(tok.line, tok.column, seconds, text)

    # ---- patterns --------------------------------------------------------------------------------------

    def choice(self) -> Pattern:
        """The whole PATTERN: one pattern, a disjunction ``P OR Q OR ...`` or a conjunction ``P AND Q``
        (dissertation §12; they join whole patterns only, so they are not in ``pattern``)."""
        first = self.pattern()
        if not (self.tok.is_keyword("OR") or self.tok.is_keyword("AND")):
            return first
        op = self.tok.text.upper()
        operands = [first]
        while self.tok.is_keyword("OR") or self.tok.is_keyword("AND"):
            if self.tok.text.upper() != op:
                raise self.error("SEMANTICS, WHERE, GROUP-BY or WITHIN", message="OR and AND cannot be mixed "
                                 "between patterns; write one query per operator")  # fmt: skip
            if op == "AND" and len(operands) == 2:
                raise self.error("SEMANTICS, WHERE, GROUP-BY or WITHIN", message="AND joins two patterns: a "
                                 "conjunction matches a pair of trends (dissertation §12), so P AND Q AND R is "
                                 "not defined")  # fmt: skip
            self.advance()
            operands.append(self.pattern())
        return ChoicePattern(first.line, first.column, op, tuple(operands))

    def pattern(self) -> Pattern:
        with self.deeper():
            found = self._pattern()
        if (self.tok.is_keyword("OR") or self.tok.is_keyword("AND")) and self.depth > 0:
            raise self.error("',' or ')'", message=f"{self.tok.text.upper()} joins whole patterns only "
                                 "(PATTERN P OR Q), not the parts of a SEQ(...) or of parentheses")  # fmt: skip
        return found

    def _pattern(self) -> Pattern:
        result = self.primary()
        while True:
            if self.tok.is_symbol("+"):
                result = KleenePattern(result.line, result.column, result)
            elif self.tok.is_symbol("*"):
                result = StarPattern(result.line, result.column, result)
            elif self.tok.is_symbol("?"):
                result = OptionalPattern(result.line, result.column, result)
            elif self.tok.is_symbol("{"):
                result = self.minimal_length(result)
                continue
            else:
                return result
            self.advance()

    MAX_MINIMAL_LENGTH = 32  # each of the n matches is its own template state: keep templates small

    def minimal_length(self, inner: Pattern) -> Pattern:
        """``P{n,}``: n or more matches of P (dissertation §12's minimal trend length). ``P{n}`` and
        ``P{n,m}`` are not in the dissertation: a clear error, not a guess at what they mean."""
        brace = self.advance()
        number = self.tok
        if number.kind is not Kind.NUMBER or not isinstance(number.value, int):
            raise self.error("a whole number n in P{n,}", message=f"expected a whole number n in P{{n,}}, found "
                             f"{number.describe()}")  # fmt: skip
        self.advance()
        if not self.tok.is_symbol(","):
            raise QueryError(f"P{{{number.text}}} (exactly n matches) is not defined; the dissertation defines "
                             f"only a minimal trend length P{{n,}} (§12): write P{{{number.text},}} for at least "
                             f"{number.text}, or SEQ(P, ..., P) for exactly {number.text}",
                             line=brace.line, column=brace.column, query=self.query_name,
                             expected="',' after the minimal length", source=self.source)  # fmt: skip
        self.advance()
        if not self.tok.is_symbol("}") and self.tok.kind is not Kind.NUMBER:
            raise self.error("'}' closing P{n,}")
        if not self.tok.is_symbol("}"):
            raise QueryError("P{n,m} (a maximal trend length) is not defined; the dissertation defines only a "
                             "minimal trend length P{n,} (§12)", line=brace.line, column=brace.column,
                             query=self.query_name, expected="'}' closing P{n,}", source=self.source)  # fmt: skip
        self.advance()
        minimum = int(number.value)
        if not 1 <= minimum <= self.MAX_MINIMAL_LENGTH:
            raise QueryError(f"a minimal trend length must be 1 to {self.MAX_MINIMAL_LENGTH}, found {number.text}"
                             + (" (P{0,} is P*)" if minimum == 0 else ""), line=number.line,
                             column=number.column, query=self.query_name,
                             expected=f"1 to {self.MAX_MINIMAL_LENGTH}", source=self.source)  # fmt: skip
        return MinimalLengthPattern(inner.line, inner.column, inner, minimum)

    def primary(self) -> Pattern:
        tok = self.tok
        if tok.is_keyword("SEQ"):
            self.advance()
            self.expect_symbol("(", "'(' after SEQ")
            items: list[Pattern | NegationPattern] = [self.seq_item()]
            while self.tok.is_symbol(","):
                self.advance()
                items.append(self.seq_item())
            self.expect_symbol(")", "',' or ')' in SEQ(...)")
            return SeqPattern(tok.line, tok.column, tuple(items))
        if tok.is_symbol("("):
            self.advance()
            if self.tok.is_keyword("NOT"):
                raise self.error("a pattern", message="NOT may only stand inside SEQ(...), between or around "
                                 "positive sub-patterns; (NOT P) and (NOT P)+ are not patterns")  # fmt: skip
            inner = self.pattern()
            self.expect_symbol(")", "')' closing the parenthesised pattern")
            return inner
        if tok.is_keyword("NOT"):
            raise self.error("a pattern", message="NOT may only stand inside SEQ(...), never as the outermost "
                             "operator")  # fmt: skip
        type_token = self.expect_name("an event type, SEQ(...) or '('")
        alias = None
        if self.tok.kind is Kind.IDENT:
            alias = self.advance().text
        return EventTypePattern(tok.line, tok.column, type_token.text, alias)

    def seq_item(self) -> Pattern | NegationPattern:
        if self.tok.is_keyword("NOT"):
            tok = self.advance()
            if self.tok.is_keyword("NOT"):
                raise self.error("a pattern after NOT", message="NOT NOT is not a pattern")
            return NegationPattern(tok.line, tok.column, self.pattern())
        return self.pattern()

    # ---- conditions ------------------------------------------------------------------------------------

    def condition(self) -> Expression:
        return self.or_expr()

    def or_expr(self) -> Expression:
        with self.deeper():
            return self._or_expr()

    def _or_expr(self) -> Expression:
        first = self.and_expr()
        operands = [first]
        while self.tok.is_keyword("OR"):
            self.advance()
            operands.append(self.and_expr())
        return first if len(operands) == 1 else BooleanOp(first.line, first.column, "OR", tuple(operands))

    def and_expr(self) -> Expression:
        first = self.comparison()
        operands = [first]
        while self.tok.is_keyword("AND"):
            self.advance()
            operands.append(self.comparison())
        return first if len(operands) == 1 else BooleanOp(first.line, first.column, "AND", tuple(operands))

    def comparison(self) -> Expression:
        left = self.additive(bare_word_ok=False)
        if self.tok.kind is Kind.SYMBOL and self.tok.text in COMPARISONS:
            op = self.advance()
            right = self.additive(bare_word_ok=True)
            if self.tok.kind is Kind.SYMBOL and self.tok.text in COMPARISONS:
                raise self.error("AND, OR or the next clause", message="comparisons do not chain; "
                                 "write 'a < b AND b < c'")  # fmt: skip
            return Comparison(left.line, left.column, op.text, left, right)
        return left

    def additive(self, bare_word_ok: bool) -> Expression:
        left = self.multiplicative(bare_word_ok)
        while self.tok.kind is Kind.SYMBOL and self.tok.text in ("+", "-"):
            op = self.advance()
            left = Arithmetic(left.line, left.column, op.text, left, self.multiplicative(bare_word_ok))
        return left

    def multiplicative(self, bare_word_ok: bool) -> Expression:
        left = self.unary(bare_word_ok)
        while self.tok.kind is Kind.SYMBOL and self.tok.text in ("*", "/", "%"):
            op = self.advance()
            left = Arithmetic(left.line, left.column, op.text, left, self.unary(bare_word_ok))
        return left

    def unary(self, bare_word_ok: bool) -> Expression:
        if self.tok.is_symbol("-"):
            with self.deeper():
                op = self.advance()
                return UnaryMinus(op.line, op.column, self.unary(bare_word_ok))
        return self.atom(bare_word_ok)

    def atom(self, bare_word_ok: bool) -> Expression:
        tok = self.tok
        if tok.kind is Kind.NUMBER:
            self.advance()
            assert tok.value is not None
            return Literal(tok.line, tok.column, tok.value)
        if tok.kind is Kind.STRING:
            self.advance()
            return Literal(tok.line, tok.column, tok.text)
        if tok.is_keyword("NEXT"):
            self.advance()
            self.expect_symbol("(", "'(' after NEXT")
            name = self.expect_name("an event type or alias in NEXT(...)")
            self.expect_symbol(")", "')' after NEXT(Type")
            self.expect_symbol(".", "'.' and an attribute after NEXT(...)")
            attribute = self.expect_name("an attribute name")
            return AttributeRef(tok.line, tok.column, name.text, attribute.text, next=True)
        if tok.is_symbol("["):
            self.advance()
            positions = [(self.tok.line, self.tok.column)]
            names = [self._equivalence_attribute()]
            while self.tok.is_symbol(","):
                self.advance()
                positions.append((self.tok.line, self.tok.column))
                names.append(self._equivalence_attribute())
            self.expect_symbol("]", "',' or ']' in the equivalence list")
            return EquivalenceList(tok.line, tok.column, tuple(names), tuple(positions))
        if tok.is_symbol("("):
            self.advance()
            inner = self.or_expr()
            self.expect_symbol(")", "')' closing the parenthesised condition")
            return inner
        if tok.kind is Kind.IDENT:
            self.advance()
            if self.tok.is_symbol("."):
                self.advance()
                attribute = self.expect_name("an attribute name after '.'")
                return AttributeRef(tok.line, tok.column, tok.text, attribute.text)
            if self.tok.is_symbol("("):
                raise self.error("Type.attribute", token=tok, message=f"'{tok.text}(' is not allowed here: "
                                 "predicates hold attributes, numbers, strings and operators, no function calls")  # fmt: skip
            if bare_word_ok:
                return Literal(tok.line, tok.column, tok.text)
            raise self.error("Type.attribute", token=tok, message=f"expected Type.attribute, found bare word "
                             f"'{tok.text}' (a bare word is a string only on the right of a comparison)")  # fmt: skip
        raise self.error("Type.attribute, a number, a string, NEXT(Type).attribute or '['")

    def _equivalence_attribute(self) -> str:
        first = self.expect_name("an attribute name")
        if self.tok.is_symbol("."):
            self.advance()
            return self.expect_name("an attribute name").text
        return first.text


def _children(node: Node) -> Iterator[Node]:
    """The nodes directly below ``node`` (fields holding a node or a tuple of nodes)."""
    for item in dataclasses.fields(node):
        value = getattr(node, item.name)
        for child in value if isinstance(value, tuple) else (value,):
            if isinstance(child, Node):
                yield child
