"""Tokens of the query language.

Keywords are case-insensitive; ``--`` starts a comment to the end of the line. Every token remembers its
line and column so that the parser and the analysis can point at it, and its offset in the source.

Lines end at ``\r\n``, ``\r`` or ``\n`` (``errors.LINE_BREAK``, which error excerpts split lines by too);
other separators (form feed, vertical tab, NEL, U+2028, U+2029) are white space inside a line.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from hamlet.errors import QueryError, shown_char
from hamlet.language.nodes import UNIT_SECONDS


class Kind(enum.Enum):
    IDENT = "identifier"
    KEYWORD = "keyword"
    NUMBER = "number"
    STRING = "string"
    SYMBOL = "symbol"
    END = "end of input"


KEYWORDS = frozenset(
    {
        "RETURN",
        "PATTERN",
        "SEMANTICS",
        "WHERE",
        "GROUP-BY",
        "WITHIN",
        "SLIDE",
        "SEQ",
        "NOT",
        "AND",
        "OR",
        "NEXT",
    }
)

# Longest first, so that "<=" wins over "<".
SYMBOLS = (
    "<=",
    ">=",
    "!=",
    "<>",
    "(",
    ")",
    "[",
    "]",
    ",",
    ".",
    ":",
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "<",
    ">",
    "?",
    "{",
    "}",
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str  # keywords upper-cased; strings without quotes; everything else as written
    line: int
    column: int
    value: int | float | str | None = None  # numbers parsed, strings unquoted
    offset: int = field(default=0, compare=False)  # of the first character in the source

    def is_keyword(self, word: str) -> bool:
        return self.kind is Kind.KEYWORD and self.text == word

    def is_symbol(self, symbol: str) -> bool:
        return self.kind is Kind.SYMBOL and self.text == symbol

    def describe(self) -> str:
        if self.kind is Kind.END:
            return "end of input"
        if self.kind is Kind.STRING:  # control and bidi characters escaped, as in the excerpt
            return "string '" + "".join(shown_char(ch) for ch in self.text) + "'"
        return f"'{self.text}'"


def tokenize(source: str) -> Iterator[Token]:
    """The tokens of ``source``, ending with one END token; raises QueryError on a stray character."""
    line, line_start, i, n = 1, 0, 0, len(source)
    while i < n:
        ch = source[i]
        column = i - line_start + 1
        if ch in "\r\n":
            i += 2 if source.startswith("\r\n", i) else 1
            line, line_start = line + 1, i
        elif ch.isspace():
            i += 1
        elif source.startswith("--", i):
            while i < n and source[i] not in "\r\n":
                i += 1
        elif ch.isalpha() or ch == "_":
            j = i
            while j < n and (source[j].isalnum() or source[j] == "_"):
                j += 1
            word = source[i:j]
            upper = word.upper()
            if upper == "GROUP":
                # GROUP-BY (the papers' spelling) and GROUP BY are the same keyword.
                k = j
                while k < n and source[k] in " \t":
                    k += 1
                if k < n and source[k] == "-":
                    k += 1
                    while k < n and source[k] in " \t":
                        k += 1
                if source[k : k + 2].upper() == "BY" and not (
                    k + 2 < n and (source[k + 2].isalnum() or source[k + 2] == "_")
                ):
                    yield Token(Kind.KEYWORD, "GROUP-BY", line, column, offset=i)
                    i = k + 2
                    continue
            if upper in KEYWORDS:
                yield Token(Kind.KEYWORD, upper, line, column, offset=i)
            else:
                yield Token(Kind.IDENT, word, line, column, offset=i)
            i = j
        elif _digit(ch) or (ch == "." and i + 1 < n and _digit(source[i + 1])):
            j = i
            while j < n and _digit(source[j]):
                j += 1
            is_float = False
            if j < n and source[j] == "." and j + 1 < n and _digit(source[j + 1]):
                is_float = True
                j += 1
                while j < n and _digit(source[j]):
                    j += 1
            if j < n and source[j] in "eE":
                k = j + 1
                if k < n and source[k] in "+-":
                    k += 1
                if k < n and _digit(source[k]):
                    is_float = True
                    j = k
                    while j < n and _digit(source[j]):
                        j += 1
            text = source[i:j]
            if j < n and (source[j].isalpha() or source[j] == "_") and not _starts_unit(source, j):
                raise QueryError(
                    f"malformed number '{text}{source[j]}'", line=line, column=column, source=source
                )
            yield Token(Kind.NUMBER, text, line, column, _number(text, is_float, line, column, source), i)
            i = j
        elif ch in "'\"":
            j = i + 1
            while j < n and source[j] != ch and source[j] not in "\r\n":
                j += 1
            if j >= n or source[j] != ch:
                raise QueryError(
                    "unterminated string", line=line, column=column, expected=f"closing {ch}", source=source
                )
            text = source[i + 1 : j]
            yield Token(Kind.STRING, text, line, column, text, i)
            i = j + 1
        else:
            for symbol in SYMBOLS:
                if source.startswith(symbol, i):
                    yield Token(Kind.SYMBOL, "!=" if symbol == "<>" else symbol, line, column, offset=i)
                    i += len(symbol)
                    break
            else:
                raise QueryError(f"unexpected character {ch!r}", line=line, column=column, source=source)
    yield Token(Kind.END, "", line, n - line_start + 1, offset=n)


MAX_DIGITS = 4300  # Python's int/str conversion limit: a longer literal is an error, not a traceback


def _digit(ch: str) -> bool:
    """ASCII digits only: '²' or '١' are digits to str.isdigit, and int() refuses the first."""
    return "0" <= ch <= "9"


MAX_EXPONENT = 400  # beyond it a decimal is infinite or 0 as a double, and exact (Fraction) maths explodes


def _number(text: str, is_float: bool, line: int, column: int, source: str) -> int | float:
    """The value of a number literal; a QueryError for one no value can hold exactly and cheaply."""

    def refuse(why: str) -> QueryError:
        return QueryError(f"number {_clipped(text)} {why}", line=line, column=column, source=source)

    if len(text) > MAX_DIGITS:
        raise refuse(f"has {len(text)} characters (at most {MAX_DIGITS})")
    if not is_float:
        return int(text)
    exponent = text.lower().partition("e")[2]
    if exponent and (len(exponent.lstrip("+-")) > 3 or abs(int(exponent)) > MAX_EXPONENT):
        raise refuse(f"has an exponent beyond ±{MAX_EXPONENT}")
    value = float(text)
    if math.isinf(value):
        raise refuse("is beyond the range of a double")
    return value


def _clipped(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _starts_unit(source: str, j: int) -> bool:
    """A number may be glued to its time unit: ``30min``, ``500ms``."""
    k = j
    while k < len(source) and source[k].isalpha():
        k += 1
    return source[j:k].lower() in UNIT_SECONDS
